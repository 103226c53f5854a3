"""The SM90 epilogue (issue 31): ``[epilogue]`` subtiles, stmatrix into one subtile's smem (``[copy.C]``) and
the ``SM90_TMA_STORE`` of ``[tma.C]``: CUTLASS 3's epilogue proved, each pitfall refuted, bad tables errors."""
import pathlib

import pytest

from config_checks import one_line_error, results
from symlayout.algebra.notation import parse
from symlayout.config.epilogue import whole_tile

ROOT = pathlib.Path(__file__).resolve().parents[1] / "proofs" / "kernel"
EPI = ROOT / "cutlass3_sm90_epilogue_128x128_f16_tma_store.toml"


def test_cutlass3_epilogue_proved_over_the_whole_tile():
    rs, rep = results(EPI, via=True)
    assert rep.ok and all(r.status == "proved" for r in rs.values())
    assert rs[("coverage", "C", "")].checked == 2 * 128 * 128        # the whole C tile, not one subtile
    assert rs[("tma", "C", "tma")].detail.startswith("box (32, 128) swizzle 64B")
    assert rs[("coverage", "C", "tma")].checked == 128 * 32


def test_whole_tile_puts_each_subtile_in_a_buffer_of_its_own():
    sub = parse("Sw<2,3,3> o ((8,16),(32,1)):((32,256),(1,0))")
    full = whole_tile(sub, (1, 4))
    for m, n in ((0, 0), (5, 7), (127, 31), (64, 3)):
        for j in range(4):
            assert full(m, n + 32 * j) == sub(m, n) + 4096 * j


def test_unswizzled_subtile_refutes_the_stmatrix_banks():
    rs, rep = results(ROOT / "pitfalls" / "epilogue_unswizzled_subtile.toml", via=True)
    cex = rs[("bank_conflicts", "C", "")].counterexample
    assert cex.extra["degree"] == 4 and rep.ok


def test_hand_swizzle_refutes_the_store():
    rs, rep = results(ROOT / "pitfalls" / "epilogue_tma_swizzle_by_hand.toml", via=True)
    r = rs[("tma", "C", "tma")]
    assert r.status == "refuted" and r.counterexample.extra == {"tma_swizzle": "128B", "smem_swizzle": "64B"}


def test_store_box_not_the_subtile_is_refuted():
    rs, rep = results(ROOT / "pitfalls" / "epilogue_store_box_not_the_subtile.toml", via=True)
    r = rs[("tma", "C", "tma")]
    assert r.status == "refuted" and r.counterexample.extra == {"box": [64, 32], "tile": [128, 32]} and rep.ok


TEXT = EPI.read_text()


@pytest.mark.parametrize("old, new, msg", [
    ('[epilogue]\ntile = "(128,32)"\n', "", "needs an [epilogue] table"),
    ('tile = "(128,32)"', 'tile = "(64,32)"', "must be [epilogue] tile (64, 32)"),
    ('tile = "(128,32)"', 'tile = "(128,32)"\ncta_tile = "(128,48)"', "not a whole number of subtiles along N"),
    ('box = "(128,32)"', 'box = "(128,32)"\natom = "SM90_TMA_LOAD"', "the epilogue's store is SM90_TMA_STORE"),
    ('tile = "(128,32)"', 'tile = "(128,32)"\nstride = 1', "unknown key 'stride'"),
    ('smem = "Sw<2,3,3> o ((8,16),(32,1)):((32,256),(1,0))"', 'smem = "(128,32):(N,1)"', "a parametric subtile"),
])
def test_bad_epilogues_are_one_line_errors(old, new, msg):
    assert old in TEXT
    one_line_error(TEXT.replace(old, new), msg, "x.toml")
