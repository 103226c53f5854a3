"""Contract Version 3, block-scaled formats (issue 29): ``[sf.A]`` / ``[sf.B]`` and the properties ``sf`` and
``sf_kind``; the configurations of ``proofs/blackwell/blockscaled`` (their factor layouts are CuTe's, checked in C++),
a refutation of every kind for each property, and bad input as one-line errors."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from config_checks import check_block_scaled_proof, check_pitfall, one_line_error, verdicts
from sm100_cpp import compiler
from symlayout.config import load_config, loads_config
from symlayout.errors import ConfigError
from symlayout.prove.verdict.result import REFUTED

REPO = Path(__file__).resolve().parents[1]
PROOFS = REPO / "proofs" / "blackwell" / "blockscaled"
GOOD = sorted(PROOFS.glob("*.toml"))
PITFALLS = sorted((PROOFS / "pitfalls").glob("*.toml"))
NVFP4 = (PROOFS / "nvfp4_1sm_128x256x256.toml").read_text()
MXFP8 = (PROOFS / "mxfp8_1sm_128x256x128.toml").read_text()


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.stem)
def test_block_scaled_gemms_prove(path):
    check_block_scaled_proof(path)


@pytest.mark.parametrize("path", PITFALLS, ids=lambda p: p.stem)
def test_pitfalls_are_refuted_as_expected(path):
    check_pitfall(path)


def _prove(text):
    return verdicts(loads_config(text, "t.toml"))


def _swap(text, table, key, new):
    pat = re.compile(rf"(\[{re.escape(table)}\][^\[]*?{key} = )(\"[^\"]*\"|\d+)", re.S)
    out, n = pat.subn(lambda m: m.group(1) + new, text)
    assert n == 1
    return out


def test_sf_refutations_name_the_row_and_k_block():
    # a stage stride of half the stage: stage 1 of row 0, K-block 0 lands on stage 0's K-block 2... (duplicate)
    text = _swap(NVFP4, "sf.A", "smem", '"((((_32,_4),_1),(_16,_4)),_1,(_1,_4),_5):((((_16,_4),_512),(_0,_1)),_0,'
                                        '(_4,_512),_1024)"')
    r = _prove(text)[("sf", "sf.A")]
    assert r.status == REFUTED and "needs its own factor" in r.counterexample.message
    # K-blocks 16 elements apart read different bytes within a block: the vec mode has a stride
    text = _swap(NVFP4, "sf.A", "smem", '"((((_32,_4),_1),(_16,_4)),_1,(_1,_4),_5):((((_16,_4),_512),(_1,_1)),_0,'
                                        '(_4,_512),_2048)"')
    r = _prove(text)[("sf", "sf.A")]
    assert r.status == REFUTED and "a block is scaled by one factor" in r.counterexample.message
    # rows 32 apart swapped with K-blocks: in bounds, once each, but not where UTCCP reads
    text = _swap(NVFP4, "sf.A", "smem", '"((((_32,_4),_1),(_16,_4)),_1,(_1,_4),_5):((((_16,_1),_512),(_0,_4)),_0,'
                                        '(_4,_512),_2048)"')
    r = _prove(text)[("sf", "sf.A")]
    cex = r.counterexample
    assert r.status == REFUTED and cex.message.startswith("(row 32, K-block 0, stage 0) of A: [sf.A] smem keeps its "
                                                             "factor at byte 1, but the kernel's tcgen05.cp")
    assert cex.extra["expected_address_bytes"] == 4 and cex.element == (32, 0, 0)


def test_sf_kind_refutes_a_factor_the_kind_does_not_take():
    # CuTe compiles MXF8F6F4 with ue4m3 factors (its traits do not check sf_type); kind::mxf8f6f4 reads ue8m0
    text = MXFP8.replace("float_ue8m0_t", "float_ue4m3_t")
    r = _prove(text)[("sf_kind", "sf.A")]
    assert r.status == REFUTED and "kind::mxf8f6f4 takes float_ue8m0_t/32" in r.counterexample.message


@pytest.mark.parametrize("edit,msg", [
    (lambda t: MXFP8.replace("SM100_MMA_MXF8F6F4_SS<float_e4m3_t,float_e4m3_t,float,float_ue8m0_t,",
                             "SM100_MMA_F8F6F4_SS<float_e4m3_t,float_e4m3_t,float,"),
     "scale factors need a block-scaled SM100 atom"),
    (lambda t: t.replace('[sf.B]\ntype = "float_ue4m3_t"', '[sf.B]\ntype = "half_t"'), "is not a scale-factor type"),
    (lambda t: t.replace("[sf.B]", "[sf.C]"), "unknown operand 'C'"),
    (lambda t: t.replace("[sf.B]\n", "[sf.B]\nvecs = 3\n"), "unknown key 'vecs'"),
    (lambda t: t.replace('[sf.B]\ntype = "float_ue4m3_t"\nvec = 16', '[sf.B]\ntype = "float_ue4m3_t"\nvec = 0'),
     "vec"),
    (lambda t: _swap(t, "sf.A", "smem", '"Sw<1,2,3> o (4,4):(1,4)"'), "must be a layout 'shape:stride' (no swizzle)"),
    (lambda t: t.replace("[sf.A]\n", '[sf.A]\nplacement = "registers"\n'), "reads its scale factors from Tensor Memory"),
])
def test_bad_input_is_one_line(edit, msg):
    one_line_error(edit(NVFP4), msg)


def _cute_program(cfgs):
    out = ["using namespace cutlass::detail;", "template <class A> void staged(A a, int s_) {}",
           "int main() {"]
    for cfg in cfgs:
        from symlayout.atoms.blockscaled import parse_blockscaled_name
        from symlayout.prove.blackwell.obligations import cta_tile
        op = parse_blockscaled_name(cfg.mma.atom)
        m = cta_tile(cfg.smem["A"])[0] * op.cta_group
        n = cta_tile(cfg.smem["B"])[0] * op.cta_group
        k, stages = cta_tile(cfg.smem["A"])[1:]
        traits = "MMA_Traits<" + cfg.mma.atom + ">"
        out += ["  {", f"    auto mma = make_tiled_mma({traits}{{}});",
                f"    auto t = Shape<Int<{m}>,Int<{n}>,Int<{k}>>{{}};"]
        for x in ("A", "B"):
            out += [f"    {{ auto a = Sm1xxBlockScaledConfig<{op.vec}>::deduce_smem_layout{'SF' + x}(mma, t);",
                    f"      auto s = make_layout(append(shape(a), Int<{stages}>{{}}), append(stride(a), "
                    "size(filter_zeros(a))));", "      print(s); printf(\"\\n\"); }"]
        out.append("  }")
    return "#include <cutlass/detail/sm100_blockscaled_layout.hpp>\n" + "\n".join(out) + "\n}\n"


def test_proof_layouts_are_cutes():
    c = compiler()
    if c is None:
        pytest.skip("CuTe headers / g++ not available")
    cfgs = [load_config(str(p)) for p in GOOD]
    got = c.run(_cute_program(cfgs)).splitlines()
    want = [cfg.sf[x].raw_smem.replace("_", "") for cfg in cfgs for x in ("A", "B")]
    assert [g.replace("_", "") for g in got] == want


def _tmem_program(cfgs):
    out = ["using namespace cutlass::detail;", "template <class Tr, int VS, int M, int N, int K> void go() {",
           "  auto mma = make_tiled_mma(Tr{}); using TM = decltype(mma); auto t = Shape<Int<M>,Int<N>,Int<K>>{};",
           "  auto ta = make_tensor<typename TM::FrgTypeSFA>(shape(Sm1xxBlockScaledConfig<VS>::deduce_smem_layoutSFA(mma, t)));",
           "  auto tb = make_tensor<typename TM::FrgTypeSFB>(shape(Sm1xxBlockScaledConfig<VS>::deduce_smem_layoutSFB(mma, t)));",
           "  printf(\"%d %d\\n\", int(find_tmem_tensor_col_offset(ta)), int(find_tmem_tensor_col_offset(tb)));", "}",
           "int main() {"]
    for cfg, (op, tile) in cfgs:
        out.append(f"  go<MMA_Traits<{cfg.mma.atom}>, {op.vec}, {tile[0]}, {tile[1]}, {tile[2]}>();")
    return ("#include <cutlass/detail/sm100_blockscaled_layout.hpp>\n#include <cutlass/detail/sm100_tmem_helper.hpp>\n"
            + "\n".join(out) + "\n}\n")


def test_tmem_sf_columns_are_cutes():
    """The TMEM columns tmem_sf_frg takes (CUTLASS's find_tmem_tensor_col_offset): the hook for tmem_alloc."""
    from symlayout.atoms.blockscaled import deduce_smem_layout_sf, parse_blockscaled_name, tmem_sf_columns
    from symlayout.prove.blackwell.obligations import cta_tile
    c = compiler()
    if c is None:
        pytest.skip("CuTe headers / g++ not available")
    cfgs = []
    for p in GOOD:
        cfg = load_config(str(p))
        op = parse_blockscaled_name(cfg.mma.atom)
        tile = (cta_tile(cfg.smem["A"])[0] * op.cta_group, cta_tile(cfg.smem["B"])[0] * op.cta_group,
                cta_tile(cfg.smem["A"])[1])
        cfgs.append((cfg, (op, tile)))
    got = [tuple(int(v) for v in ln.split()) for ln in c.run(_tmem_program(cfgs)).splitlines()]
    ours = []
    for _cfg, (op, tile) in cfgs:
        dup = op.cta_group == 2 and op.m == 128
        ours.append(tuple(tmem_sf_columns(deduce_smem_layout_sf(x, op.vec, op.k, tile, op.cta_group), op.cta_group, x,
                                          dup) for x in ("A", "B")))
    assert got == ours


def test_gmem_of_a_problem_not_a_multiple_of_the_blocks():
    """CUTLASS passes M/N/K at run time: tile_atom_to_shape_SFA pads them to whole 128x4 blocks (M = 1000,
    K = 2000 here); a linear buffer is refuted at row 1, not an internal error."""
    text = _swap(NVFP4, "sf.A", "gmem", '"(1000,(16,125),1):(125,(0,1),125000)"')
    r = _prove(text)[("sf", "sf.A")]
    assert r.status == REFUTED and r.counterexample.message.startswith(
        "(row 1, K-block 0) of A: [sf.A] gmem keeps its factor at byte 125, but the kernel's TMA load reads it from "
        "byte 16")


def test_smem_of_another_form_is_an_input_error():
    with pytest.raises(ConfigError, match=re.escape("[sf.A] smem must be MMA-partitioned")):
        loads_config(_swap(NVFP4, "sf.A", "smem", '"(128,16):(16,1)"'), "t.toml")


def test_tmem_alloc_hook_lists_the_factor_columns():
    from symlayout.prove.blackwell.obligations import cta_tile
    from symlayout.prove.blackwell.sf import sf_tmem_blocks
    assert sf_tmem_blocks(loads_config(NVFP4, "t.toml"), cta_tile) == [("sf.A", 16), ("sf.B", 32)]


# --- the separable decision (issue 29 item 3): a plain layout is a sum over its modes, so the factor bytes are
# a[r] + b[k] + c[s] and never built whole; it must decide exactly what the whole array decides ---------------

SEP_SMEM = ["((((_32,_4),_1),(_16,_4)),_1,(_1,_4),_5):((((_16,_4),_512),(_0,_1)),_0,(_4,_512),_2048)",   # CUTLASS's
            "((((_32,_4),_1),(_16,_4)),_1,(_1,_4),_5):((((_16,_4),_512),(_0,_1)),_0,(_4,_512),_1024)",   # duplicate
            "((((_32,_4),_1),(_16,_4)),_1,(_1,_4),_5):((((_16,_4),_512),(_1,_1)),_0,(_4,_512),_2048)",   # split
            "((((_32,_4),_1),(_16,_4)),_1,(_1,_4),_5):((((_16,_1),_512),(_0,_4)),_0,(_4,_512),_2048)",   # elsewhere
            "((((_32,_4),_1),(_16,_4)),_1,(_1,_2),_5):((((_16,_4),_512),(_0,_1)),_0,(_4,_512),_2048)"]   # no slot
SEP_GMEM = ["(((_32,_4),_8),((_16,_4),_32),(_1,_1)):(((_16,_4),_16384),((_0,_1),_512),(_0,_0))",          # CUTLASS's
            "(((_32,_4),_8),((_16,_4),_32),(_1,_1)):(((_16,_4),_16384),((_1,_16),_512),(_0,_0))",          # MN-major chunk
            "((_1024),(_16,_128),(_1)):((_128),(_0,_1),(_0))"]                                             # linear


@pytest.mark.parametrize("text", SEP_SMEM + SEP_GMEM)
def test_separable_offsets_decide_what_the_whole_array_decides(text):
    from symlayout.algebra.notation import parse
    from symlayout.prove.blackwell.sf import _decide, _gmem_offsets, _smem_offsets
    L = parse(text)
    if text in SEP_SMEM:
        args, ref = (128, 256, 5), _smem_offsets(parse(SEP_SMEM[0]), 128, 256, 5, separable=False)
        sep, dense = _smem_offsets(L, *args), _smem_offsets(L, *args, separable=False)
    else:
        args, ref = (1024, 2048, 1), _gmem_offsets(parse(SEP_GMEM[0]), 1024, 2048, 1, separable=False)
        sep, dense = _gmem_offsets(L, *args), _gmem_offsets(L, *args, separable=False)
    assert sep.sep is not None and dense.sep is None
    assert (sep.at_k(slice(None)) == dense.at_k(slice(None))).all()
    assert sep.first_split(16) == dense.first_split(16)
    at = lambda o: lambda p: int(o.at_k(slice(p[1], p[1] + 1))[p[0], 0, p[2]])     # noqa: E731
    got = [_decide("A", 16, o, ref, ("row", "stage"), "buf", "reader", "where", at(o), at(ref)) for o in (sep, dense)]
    assert got[0][1] == got[1][1] and str(got[0][0]) == str(got[1][0])


#: the proofs whose stage count is CUTLASS's builder's, and the element pair / alignment / tile / schedule it is built
#: with (OpClassBlockScaledTensorOp and KernelScheduleAuto; the MXF8F6F4 pitfall's 8-bit slots as mx_float8_t)
BUILT = {"nvfp4_1sm_128x256x256": ("cutlass::nv_float4_t<cutlass::float_e2m1_t>", 32, (128, 256, 256)),
         "mxfp8_1sm_128x256x128": ("cutlass::mx_float8_t<cutlass::float_e4m3_t>", 16, (128, 256, 128)),
         "pitfalls/mxf8f6f4_packed_fp4_type": ("cutlass::mx_float8_t<cutlass::float_e4m3_t>", 16, (128, 128, 256))}
BUILT_OVER = {"pitfalls/nvfp4_128x256x256_5_stages_over_227k": "nvfp4_1sm_128x256x256",
              "pitfalls/mxfp8_128x256x128_6_stages_over_227k": "mxfp8_1sm_128x256x128"}


@pytest.mark.slow
def test_stage_counts_are_the_builders():
    """Each file of :data:`BUILT` has the stages ``CollectiveBuilder<Sm100, OpClassBlockScaledTensorOp, ...,
    StageCountAuto, KernelScheduleAuto>`` of its tile picks (nvcc, host code; about 3 minutes), and each over-capacity
    pitfall more (its stages refuted by the capacity check: tests/test_sm100_prove.py)."""
    from sm100_cpp import builder_run
    from symlayout.prove.blackwell.obligations import cta_tile
    body = ["namespace gc = cutlass::gemm::collective;", "int main() {"]
    for n, (pair, align, (m, nn, k)) in enumerate(BUILT.values()):
        body.append(f'  printf("{n} %d\\n", int(gc::CollectiveBuilder<cutlass::arch::Sm100, '
                    f"cutlass::arch::OpClassBlockScaledTensorOp, {pair}, cutlass::layout::RowMajor, {align}, {pair}, "
                    f"cutlass::layout::ColumnMajor, {align}, float, Shape<_{m},_{nn},_{k}>, Shape<_1,_1,_1>, "
                    "gc::StageCountAuto, gc::KernelScheduleAuto>::CollectiveOp::DispatchPolicy::Stages));")
    out = builder_run("\n".join(body + ["}"]) + "\n")
    if out is None:
        pytest.skip("needs nvcc and the CUTLASS headers (SYMLAYOUT_CUTE_SITE)")
    got = dict(line.split() for line in out.splitlines())
    stages = {name: int(got[str(n)]) for n, name in enumerate(BUILT)}
    for name, n in stages.items():
        assert cta_tile(load_config(PROOFS / f"{name}.toml").smem["A"])[2] == n, (name, n)
    for name, proof in BUILT_OVER.items():
        assert cta_tile(load_config(PROOFS / f"{name}.toml").smem["A"])[2] > stages[proof], name
