"""Copy-only kernels (issue 31): ``[g2r.X]`` / ``[r2g.X]`` TiledCopies between global memory and registers,
no ``[mma]``: QuACK's RMSNorm proved, each pitfall refuted with its element, bad tables one-line errors."""
import pathlib

import pytest

from config_checks import one_line_error, results
from symlayout.config import load_config, loads_config
from symlayout.errors import ConfigError
from symlayout.prove.engine import prove_config
from symlayout.prove.kernel.copyonly import register_layout

ROOT = pathlib.Path(__file__).resolve().parents[1] / "proofs" / "kernel"


def test_a_configuration_without_mma_is_a_copy_only_kernel():
    cfg = loads_config('[g2r.x]\natom = "UniversalCopy<uint128_t>"\ntype = "half_t"\nthr = "(32,1)"\n'
                       'val = "(1,8)"\ngmem = "(32,8):(8,1)"\ngmem_align = 16\n', "x.toml")
    assert cfg.kind == "copies" and cfg.mma is None
    rep = prove_config(cfg)
    got = {(r.property, r.operand): r.status for r in rep.results}
    assert got == {(p, "g2r.x"): "proved" for p in ("coverage", "alignment", "exactly_once", "in_bounds",
                                                    "coalescing")}
    assert all(r.checked > 0 for r in rep.results)


def test_quack_rmsnorm_proved_for_every_row_stride_and_residue():
    rs, rep = results(ROOT / "quack_rmsnorm_bf16_n4096.toml")
    assert rep.ok and len(rs) == len(rep.results) == 10
    assert all(r.status == "proved" and r.checked > 0 for r in rs.values())
    assert "N in {8..4096}" in rs[("in_bounds", "g2r.x")].detail


def test_register_layout_is_each_threads_compact_fragment():
    cfg = load_config(ROOT / "quack_rmsnorm_bf16_n4096.toml")
    R = register_layout(cfg.regcopies["g2r.x"])
    # thread 0 holds x(0, 0..7) in registers 0..7 and x(0, 512..519) in registers 8..15; thread 1 x(0, 8..15)
    assert [R(0, n) for n in range(8)] == list(range(8))
    assert [R(0, 512 + n) for n in range(8)] == list(range(8, 16))
    assert R(0, 8) == 64 and R(1, 0) == 64 * 64


def test_missing_columns_refute_coverage_and_exactly_once():
    rs, rep = results(ROOT / "pitfalls" / "quack_rmsnorm_half_the_columns.toml")
    r = rs[("coverage", "g2r.x")]
    assert r.status == "refuted" and tuple(r.counterexample.element) == (0, 2048)
    assert "is never read" in r.counterexample.message and rep.ok


def test_row_stride_not_a_vector_refutes_alignment_with_the_stride():
    rs, rep = results(ROOT / "pitfalls" / "quack_rmsnorm_row_stride_not_vector.toml")
    cex = rs[("alignment", "g2r.x")].counterexample
    assert (cex.thread, tuple(cex.element), cex.params) == (64, (1, 0), {"ld": 4100}) and rep.ok


def test_lanes_down_a_column_refute_coalescing():
    rs, rep = results(ROOT / "pitfalls" / "elementwise_threads_down_columns.toml")
    cex = rs[("coalescing", "g2r.a")].counterexample
    assert cex.extra == {"sectors": 32, "minimum": 16, "bytes": 512} and rep.ok


def test_vector_across_the_residue_refutes_in_bounds():
    rs, rep = results(ROOT / "pitfalls" / "quack_rmsnorm_n_not_multiple_of_vector.toml")
    r = rs[("in_bounds", "g2r.x")]
    assert r.status == "refuted" and "x(0,4088)" in r.counterexample.message and rep.ok


G2R = '[g2r.x]\natom = "UniversalCopy<uint128_t>"\ntype = "half_t"\nthr = "(32,1)"\nval = "(1,8)"\n' \
      'gmem = "(32,8):(8,1)"\n'


@pytest.mark.parametrize("text, msg", [
    (G2R.replace("UniversalCopy<uint128_t>", "SM75_U32x4_LDSM_N"), "moves shared memory"),
    (G2R + 'residue = ["K"]\n', "residue must name the tile's modes"),
    (G2R.replace("[g2r.x]", "[g2r.1x]"), "must be an identifier"),
    (G2R.replace('gmem = "(32,8):(8,1)"\n', ""), "missing required key 'gmem'"),
    (G2R + 'smem = "(32,8):(8,1)"\n', "unknown key 'smem'"),
    (G2R + '[threadmap]\nkind = "offset"\nthreads = 4\noffset = "t"\nextent = 4\n', "not both"),
])
def test_bad_register_copies_are_one_line_errors(text, msg):
    one_line_error(text, msg, "x.toml")


def test_copy_only_staging_through_smem_is_proved_with_its_banks():
    rs, rep = results(ROOT / "transpose_smem_padded.toml")
    assert rep.ok and {r.status for r in rs.values()} == {"proved"}
    assert ("bank_conflicts", "s2g.x") in rs and ("bank_conflicts", "g2s.x") in rs


def test_unpadded_transpose_refutes_the_column_reads():
    rs, rep = results(ROOT / "pitfalls" / "transpose_smem_unpadded.toml")
    cex = rs[("bank_conflicts", "s2g.x")].counterexample
    assert cex.extra["degree"] == 32 and rep.ok


def test_copy_only_global_copies_name_tensors_and_need_their_smem():
    text = (ROOT / "transpose_smem_padded.toml").read_text()
    with pytest.raises(ConfigError, match="must be an identifier"):
        loads_config(text.replace("[g2s.x]", "[g2s.1x]"), "x.toml")
    with pytest.raises(ConfigError, match="missing required key 'smem'"):
        loads_config(text.replace('smem = "(32,32):(33,1)"\ngmem_align = 128\n\n[s2g.x]', 'gmem_align = 128\n\n[s2g.x]'),
                     "x.toml")
