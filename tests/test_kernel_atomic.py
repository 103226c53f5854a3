"""Atomic accumulation (issue 31): ``[r2g.X] reduce = "add"``: every address receives every contribution once
(one add per contributing CTA), a missing or duplicated contribution refuted with the element and its adders."""
import pathlib

import pytest

from config_checks import one_line_error, results
from symlayout.config import loads_config
from symlayout.prove.engine import prove_config

ROOT = pathlib.Path(__file__).resolve().parents[1] / "proofs" / "kernel"


def test_fa2_dq_accumulation_proved_for_every_stride_and_block_count():
    rs, rep = results(ROOT / "fa2_bwd_hd64_dq_atomic.toml")
    r = rs[("contributions", "r2g.dQaccum")]
    assert rep.ok and r.status == "proved" and r.checked > 0 and "nblk" in r.detail
    assert ("exactly_once", "r2g.dQaccum") not in rs          # replaced by contributions


def test_overlapping_rows_give_a_duplicated_contribution():
    rs, rep = results(ROOT / "pitfalls" / "fa2_dq_atomic_row_stride_d.toml")
    cex = rs[("contributions", "r2g.dQaccum")].counterexample
    assert cex.extra["contributions_per_cta"] == 2 and tuple(cex.element) == (1, 0)
    assert cex.extra["adders"] == [[0, 16, 0], [16, 0, 0]] and "2 x 4 in all instead of 4" in cex.message
    assert rep.ok


def test_half_the_columns_gives_a_missing_contribution():
    rs, rep = results(ROOT / "pitfalls" / "atomic_half_the_columns.toml")
    cex = rs[("contributions", "r2g.acc")].counterexample
    assert cex.extra["contributions_per_cta"] == 0 and tuple(cex.element) == (0, 32) and rep.ok


def test_fragment_size_mismatch_does_not_compile():
    rs, rep = results(ROOT / "pitfalls" / "fa2_dq_atomic_128_threads.toml")
    r = rs[("contributions", "r2g.dQaccum")]
    assert r.method == "cute" and "size(acc) == size(partition)" in r.counterexample.message and rep.ok


R2G = '[r2g.x]\natom = "UniversalCopy<float>"\ntype = "float"\nthr = "(32,1)"\nval = "(1,1)"\ngmem = "(32,1):(1,1)"\n'


@pytest.mark.parametrize("text, msg", [
    (R2G.replace("[r2g.x]", "[g2r.x]") + 'reduce = "add"\n', "an atomic accumulation is a store"),
    (R2G + 'contributors = 2\n', 'needs reduce = "add"'),
    (R2G + 'reduce = "max"\n', "reduce"),
    (R2G + 'reduce = "add"\ncontributors = "nb"\n', "is not a [params] symbol"),
    (R2G + 'reduce = "add"\nfragment = "C"\n', "needs an [mma] table"),
])
def test_bad_accumulations_are_one_line_errors(text, msg):
    one_line_error(text, msg, "x.toml")


def test_contributions_is_a_property_name():
    cfg = loads_config(R2G + 'reduce = "add"\n[expect]\nrefuted = ["contributions[r2g.x]"]\n', "x.toml")
    rep = prove_config(cfg)
    r = next(r for r in rep.results if r.property == "contributions")
    assert r.status == "proved" and r.expected == "refuted" and not rep.ok
