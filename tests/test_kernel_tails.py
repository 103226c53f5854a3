"""Predicated tails (issue 31): ``residue`` on ``[tma.X]`` (TMA's bounds check: loads fill zeros, stores drop),
and ``predicate`` on a hand-predicated copy (the modes its predicate tests)."""
import pathlib

import pytest

from config_checks import one_line_error, results
from symlayout.config import loads_config
from symlayout.errors import ConfigError
from symlayout.prove.engine import prove_config

ROOT = pathlib.Path(__file__).resolve().parents[1] / "proofs" / "kernel"
EPI = ROOT / "cutlass3_sm90_epilogue_128x128_f16_tma_store.toml"


def test_tma_tails_proved_for_every_problem_size():
    rs, rep = results(EPI, via=True)
    assert rep.ok
    a, b, c = (rs[("in_bounds", f"tma.{op}", "tma")] for op in "ABC")
    assert (a.status, b.status, c.status) == ("proved",) * 3
    assert a.checked == 128 + 8 and c.checked == 128 + 4          # residue classes: M mod 128, K mod 64 (K % 8 == 0)
    assert "zero-filled" in a.detail and "dropped" in c.detail


def test_store_over_the_padded_allocation_is_refuted_at_the_least_problem():
    rs, rep = results(ROOT / "pitfalls" / "epilogue_tma_store_over_padded_rows.toml", via=True)
    cex = rs[("in_bounds", "tma.C", "tma")].counterexample
    assert cex.params == {"M": 1} and cex.extra == {"residue": {"M": 1}, "map_extent": 128, "problem_extent": 1}
    assert "C(m=1)" in cex.message and rep.ok


def test_predicate_that_misses_the_columns_is_refuted_with_residue_and_element():
    rs, rep = results(ROOT / "pitfalls" / "quack_rmsnorm_predicate_misses_columns.toml", via=True)
    r = rs[("in_bounds", "g2r.x", "")]
    assert r.status == "refuted" and r.counterexample.extra["residue"] == {"N": 8}
    assert tuple(r.counterexample.element) == (0, 519) and rep.ok


def test_predicate_on_every_residue_mode_is_the_default():
    text = (ROOT / "pitfalls" / "quack_rmsnorm_predicate_misses_columns.toml").read_text()
    rep = prove_config(loads_config(text.replace('predicate = ["M"]', 'predicate = ["M", "N"]'), "x.toml"))
    r = next(r for r in rep.results if r.property == "in_bounds")
    assert r.status == "proved" and r.checked > 0


TEXT = EPI.read_text()


@pytest.mark.parametrize("old, new, msg", [
    ('residue = ["M", "N"]                     # stores', 'residue = ["M", "K"]                     # stores',
     "residue must name modes of the C tile"),
    ('M = { min = 1, max = 65536 }\n', '', "needs a [params] symbol M"),
])
def test_bad_tma_residues_are_one_line_errors(old, new, msg):
    text = TEXT if "stores" in old else (ROOT / "pitfalls" / "epilogue_tma_store_over_padded_rows.toml").read_text()
    assert old in text
    one_line_error(text.replace(old, new), msg, "x.toml")


G2R = '[g2r.x]\natom = "UniversalCopy<uint128_t>"\ntype = "half_t"\nthr = "(32,1)"\nval = "(1,8)"\n' \
      'gmem = "(32,8):(8,1)"\n'


@pytest.mark.parametrize("extra, msg", [
    ('predicate = ["M"]\n', "predicate without residue"),
    ('residue = ["M"]\npredicate = ["K"]\n', "predicate must name modes"),
])
def test_bad_predicates_are_one_line_errors(extra, msg):
    with pytest.raises(ConfigError) as e:
        loads_config(G2R + extra, "x.toml")
    assert msg in str(e.value)
