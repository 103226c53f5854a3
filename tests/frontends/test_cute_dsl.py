"""The CuTe DSL front end on the tiling of two public CUTLASS CuTe DSL examples (skipped without the DSL).

The setup code of ``examples/python/CuTeDSL/cute/ampere/kernel/dense_gemm/tensorop_gemm.py``
(``TensorOpGemm``: CTA tile 128x128x32 for 16-bit types, 4 stages, atom layout 2x2x1,
permutation (32, 32 or 16*2, 16)) and of ``.../ampere/kernel/attention/flash_attention_v2.py``
(``FlashAttentionForwardAmpere``) is reconstructed here -- the same DSL calls with the same
formulas -- traced with ``@cute.jit`` on the CPU, converted by :class:`symlayout.cute_dsl.DslConfig`,
compared with what the example's formulas give, and proved; broken variants must be refuted in
the DSL's own words.
"""
from __future__ import annotations

import math
import time
import tomllib

import pytest

from frontend_expect import same_layout
from symlayout.algebra.layout import Layout, tile_to_shape
from symlayout.algebra.composed import ComposedLayout, Swizzle

pytestmark = pytest.mark.usefixtures("cute")


# ---------------------------------------------------------------- tensorop_gemm.py, reconstructed


def gemm_objects(cute, ab, acc, c_dtype, a_row_major=True, b_row_major=True, atom_layout=(2, 2, 1),
                 break_swizzle=False, break_transpose=False):
    """The TiledMma, copies and smem layouts ``TensorOpGemm.__call__``/``kernel`` build (C row-major)."""
    import cutlass
    from cutlass.cute.nvgpu import cpasync, warp
    bM, bN, bK, stages, copy_bits = 128, 128, 32, 4, 128
    nthr = math.prod(atom_layout) * 32

    def smem_ab(dtype, row_major, rows):
        major = bK if row_major else rows
        major = min(major, 128 * 8 // dtype.width)
        sw = cute.make_swizzle(min(int(math.log2(major * dtype.width // copy_bits)), 3),
                               int(math.log2(copy_bits // 8)), int(math.log2(copy_bits // dtype.width)))
        outer = (cute.make_layout((8, major), stride=(major, 1)) if row_major
                 else cute.make_layout((major, 8), stride=(1, major)))
        return cute.tile_to_shape(outer, (rows, bK, stages), (0, 1, 2)), sw

    def smem_c(dtype):
        major = bN
        sw = cute.make_swizzle(min(int(math.log2(major * dtype.width // copy_bits)), 3), 3, 4)
        atom = cute.make_composed_layout(sw, 0, cute.make_layout((8, major), stride=(major, 1)))
        return cute.tile_to_shape(atom, (bM, bN), (0, 1))

    def gmem_copy(atom, dtype, row_major, rows, cols):
        elems = copy_bits // dtype.width
        if row_major:
            d1 = cols // elems
            thr = cute.make_layout((nthr // d1, d1), stride=(d1, 1))
        else:
            d0 = rows // elems
            thr = cute.make_layout((d0, nthr // d0), stride=(1, d0))
        val = cute.make_layout((1, elems)) if row_major else cute.make_layout((elems, 1))
        return cute.make_tiled_copy_tv(atom, thr, val)

    sA, swA = smem_ab(ab, a_row_major, bM)
    sB, swB = smem_ab(ab, b_row_major, bN)
    sC = smem_c(c_dtype)
    g2s_atom = cute.make_copy_atom(cpasync.CopyG2SOp(cache_mode=cpasync.LoadCacheMode.GLOBAL), ab,
                                   num_bits_per_copy=copy_bits)
    tA = gmem_copy(g2s_atom, ab, a_row_major, bM, bK)
    tB = gmem_copy(g2s_atom, ab, b_row_major, bN, bK)
    tC = gmem_copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), c_dtype, num_bits_per_copy=copy_bits),
                   c_dtype, True, bM, bN)
    mma_shape = (16, 8, 16)
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(ab, acc, mma_shape), cute.make_layout(atom_layout),
                              permutation_mnk=(atom_layout[0] * mma_shape[0], atom_layout[1] * mma_shape[1] * 2,
                                               atom_layout[2] * mma_shape[2]))
    s2rA = cute.make_tiled_copy_A(cute.make_copy_atom(
        warp.LdMatrix8x8x16bOp((not a_row_major) != break_transpose, 4), ab), mma)
    s2rB = cute.make_tiled_copy_B(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(not b_row_major, 4), ab), mma)
    return dict(mma=mma, sA=sA, swA=None if break_swizzle else swA, sB=sB, swB=swB, sC=sC,
                tA=tA, tB=tB, tC=tC, s2rA=s2rA, s2rB=s2rB)


def gemm_config(cute, o, c_dtype, ld_multiple_of=16):
    """``ld_multiple_of``: the example needs leading dimensions in 16-byte vectors (8 elements); its
    copies touch the fewest 32-byte sectors when they are multiples of 16 elements."""
    from symlayout.cute_dsl import DslConfig
    c = DslConfig(o["mma"], label="tiled_mma")
    c.copy("A", o["s2rA"], o["sA"], swizzle=o["swA"], label="tiled_copy_s2r_A", smem_label="sA_layout")
    c.copy("B", o["s2rB"], o["sB"], swizzle=o["swB"], label="tiled_copy_s2r_B", smem_label="sB_layout")
    c.copy("C", "AutoVectorizingCopy", o["sC"], dtype=c_dtype, label="autovec_copy(tCrD, tCsC)", smem_label="sC_layout")
    c.g2s("A", o["tA"], label="tiled_copy_A", ld_multiple_of=ld_multiple_of)
    c.g2s("B", o["tB"], label="tiled_copy_B", ld_multiple_of=ld_multiple_of)
    c.s2g(o["tC"], label="tiled_copy_C", ld_multiple_of=ld_multiple_of)
    return c


GEMM_CASES = {
    "f16_f32_kmajor": dict(ab="Float16", acc="Float32", c="Float16"),
    "bf16_f32_kmajor": dict(ab="BFloat16", acc="Float32", c="BFloat16"),
    "f16_f16_kmajor": dict(ab="Float16", acc="Float16", c="Float16"),
    "f16_f32_a_mmajor": dict(ab="Float16", acc="Float32", c="Float16", a_row_major=False),
    "broken_unswizzled_A": dict(ab="Float16", acc="Float32", c="Float16", break_swizzle=True),
    "broken_transposed_ldmatrix_A": dict(ab="Float16", acc="Float32", c="Float16", break_transpose=True),
}


@pytest.fixture(scope="module")
def gemm(cute):
    """Every case traced in one @cute.jit call (one trace, a few seconds); the trace time is printed."""
    import cutlass
    out = {}

    @cute.jit
    def trace():
        for name, kw in GEMM_CASES.items():
            kw = dict(kw)
            ab, acc, c = (getattr(cutlass, kw.pop(k)) for k in ("ab", "acc", "c"))
            o = gemm_objects(cute, ab, acc, c, **kw)
            out[name] = gemm_config(cute, o, c)
        # the copies' own requirement only: 8-element leading dimensions (no `if` in a @cute.jit body:
        # the DSL rewrites it)
        o = gemm_objects(cute, cutlass.Float16, cutlass.Float32, cutlass.Float16)
        out["ld_multiple_of_8"] = gemm_config(cute, o, cutlass.Float16, ld_multiple_of=None)

    t0 = time.perf_counter()
    trace()
    print(f"tensorop_gemm: {len(GEMM_CASES)} configurations traced in {time.perf_counter() - t0:.2f} s")
    return out


def swizzled(b, m, s, inner):
    return ComposedLayout(Swizzle(b, m, s), 0, inner)


@pytest.mark.parametrize("case,typ", [("f16_f32_kmajor", "half_t"), ("bf16_f32_kmajor", "bfloat16_t"),
                                      ("f16_f16_kmajor", "half_t")])
def test_tensorop_gemm_kmajor_matches_the_example(gemm, case, typ):
    d = gemm[case].to_dict()
    acc = "F16" if case == "f16_f16_kmajor" else "F32"
    ab = "BF16BF16" if typ == "bfloat16_t" else "F16F16"
    assert d["mma"] == {"atom": f"SM80_16x8x16_{acc}{ab}{acc}_TN", "layout": "(2,2,1):(1,2,0)",
                        "permutation": ["32", "32", "16"]}
    # K-major A/B: (8,32) row-major atoms tiled to (128,32,4); swizzle S<2,4,3> on byte addresses
    smem = tile_to_shape(swizzled(2, 3, 3, Layout((8, 32), (32, 1))), (128, 32, 4))
    for x in "AB":
        c, g = d["copy"][x], d["g2s"][x]
        assert (c["atom"], c["type"], c["align"]) == ("SM75_U32x4_LDSM_N", typ, 512)
        assert same_layout(c["smem"], smem)
        assert (g["atom"], g["type"], g["thr"], g["val"], g["gmem"], g["gmem_align"]) == \
            ("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", typ, "(32,4):(4,1)", "(1,8)", f"(128,32):(ld{x},1)", 16)
    assert d["stages"] == {"count": 4}
    # epilogue: autovec_copy of the converted accumulators into Sw<3,3,4>-swizzled (128,128), then 128-bit stores
    c = d["copy"]["C"]
    assert (c["atom"], c["type"], c.get("convert", False)) == ("AutoVectorizingCopy", typ, acc == "F32")
    assert same_layout(c["smem"], tile_to_shape(swizzled(3, 3, 4, Layout((8, 128), (128, 1))), (128, 128)))
    s = d["s2g"]["C"]
    assert (s["atom"], s["thr"], s["val"], s["gmem"]) == ("UniversalCopy<uint128_t>", "(8,16):(16,1)", "(1,8)",
                                                          "(128,128):(ldC,1)")
    assert tomllib.loads(gemm[case].toml()) == d


def test_tensorop_gemm_mmajor_a(gemm):
    d = gemm["f16_f32_a_mmajor"].to_dict()
    a, g = d["copy"]["A"], d["g2s"]["A"]
    assert a["atom"] == "SM75_U16x8_LDSM_T"
    assert same_layout(a["smem"], tile_to_shape(swizzled(3, 3, 3, Layout((64, 8), (1, 64))), (128, 32, 4)))
    assert (g["thr"], g["val"], g["gmem"]) == ("(16,8):(1,16)", "(8,1)", "(128,32):(1,ldA)")


@pytest.mark.parametrize("case", ["f16_f32_kmajor", "bf16_f32_kmajor", "f16_f16_kmajor", "f16_f32_a_mmajor"])
def test_tensorop_gemm_proves(gemm, case):
    """The whole data path (version 2): cp.async into every stage, ldmatrix, the epilogue's
    autovec_copy of the (converted) accumulators and the 128-bit stores; nothing left out."""
    rep = gemm[case].prove()
    assert (rep.version, rep.left_out) == (2, [])
    assert {r.operand for r in rep.results} == {"A", "B", "C", "g2s.A", "g2s.B", "s2g.C", "stages.A", "stages.B"}
    rep.assert_proved()


def test_tensorop_gemm_f16_epilogue_proves(gemm):
    """make_tiled_copy_C(Copy_Atom<AutoVectorizingCopy, half_t>, mma) into the swizzled C tile (it was
    wrongly REFUTED for coverage/exactly_once before AutoVectorizingCopy was remodelled, issue 12)."""
    rep = gemm["f16_f16_kmajor"].prove(properties=["coverage", "exactly_once", "bank_conflicts"])
    assert {r.operand for r in rep.results if r.operand in ("A", "B", "C")} == {"A", "B", "C"}
    rep.assert_proved()


def test_unaligned_leading_dimensions_are_uncoalesced(gemm):
    """With leading dimensions only multiples of the 16-byte vector, rows leave the 32-byte sector grid:
    coalescing is refuted (with the ld that shows it), every other property still proved."""
    rep = gemm["ld_multiple_of_8"].prove()
    bad = rep.refuted()
    assert {(r.property, r.operand) for r in bad} == {("coalescing", "g2s.A"), ("coalescing", "g2s.B"),
                                                      ("coalescing", "s2g.C")}
    for r in bad:
        cx = r.counterexample
        assert cx.message.startswith(f"{r.operand}: tiled_copy_{r.operand[-1]} = ")
        assert "sectors" in cx.message and cx.params[f"ld{r.operand[-1]}"] % 16 == 8


def test_broken_swizzle_refuted_in_dsl_words(gemm):
    """sA without its swizzle: ldmatrix rows 64 bytes apart collide in the same banks."""
    rep = gemm["broken_unswizzled_A"].prove(expect_refuted=["bank_conflicts"])
    bad = [r for r in rep.results if r.status == "refuted"]
    assert [(r.property, r.operand) for r in bad] == [("bank_conflicts", "A")]
    msg = bad[0].counterexample.message
    assert msg.startswith("A: tiled_copy_s2r_A = LdMatrix8x8x16bOp(transpose=False, num_matrices=4) on sA_layout: ")
    assert "bank conflict" in msg
    assert bad[0].counterexample.extra["dsl"]["tiled_mma"] == "tiled_mma"
    assert bad[0].as_expected   # [expect] refuted = ["bank_conflicts"] ...
    assert not rep.ok           # ... means every operand, and B's is proved
    assert all(r.status == "proved" for r in rep.results if r is not bad[0])
    assert "tiled_copy_s2r_A" in rep.explain()


def test_broken_transpose_refuted_in_dsl_words(gemm):
    """ldmatrix.trans on a K-major A tile: CuTe does not compile the copy (its source view does not
    vectorize into the atom's registers), so it is refuted, never proved."""
    rep = gemm["broken_transposed_ldmatrix_A"].prove()
    bad = [r for r in rep.results if r.status == "refuted"]
    assert bad and {r.operand for r in bad} == {"A"}
    msg = bad[0].counterexample.message
    assert msg.startswith("A: tiled_copy_s2r_A = LdMatrix8x8x16bOp(transpose=True, num_matrices=4) on sA_layout")
    assert "CuTe does not compile" in msg and "(CuTe SM75_U16x8_LDSM_T)" in msg
    assert not rep.ok
    with pytest.raises(AssertionError, match="tiled_copy_s2r_A"):
        rep.assert_proved()


# ---------------------------------------------------------------- flash_attention_v2.py, reconstructed


def fa2_configs(cute, dtype, head_dim, m_block, n_block, nthr):
    """S = Q K^T and O = P V with the O epilogue, as ``FlashAttentionForwardAmpere`` builds them."""
    from cutlass.cute.nvgpu import cpasync, warp
    import cutlass
    from symlayout.cute_dsl import DslConfig
    hd = (head_dim + 31) // 32 * 32
    kblock = 64 if hd % 64 == 0 else 32
    atom = cute.make_composed_layout(cute.make_swizzle(3 if kblock == 64 else 2, 3, 3), 0,
                                     cute.make_layout((8, kblock), stride=(kblock, 1)))
    sQ = cute.tile_to_shape(atom, (m_block, hd), (0, 1))
    sKV = cute.tile_to_shape(atom, (n_block, hd), (0, 1))
    sVt = cute.composition(sKV, cute.make_layout((hd, n_block), stride=(n_block, 1)))
    elems = 128 // dtype.width
    per_row = kblock // elems
    thr = cute.make_layout((nthr // per_row, per_row), stride=(per_row, 1))
    val = cute.make_layout((1, elems))
    g_qkv = cute.make_tiled_copy_tv(cute.make_copy_atom(
        cpasync.CopyG2SOp(cache_mode=cpasync.LoadCacheMode.GLOBAL), dtype, num_bits_per_copy=128), thr, val)
    g_o = cute.make_tiled_copy_tv(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=128),
                                  thr, val)
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(dtype, cutlass.Float32, (16, 8, 16)), (nthr // 32, 1, 1),
                              permutation_mnk=(nthr // 32 * 16, 16, 16))
    ld_n = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(transpose=False, num_matrices=4), dtype)
    ld_t = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(transpose=True, num_matrices=4), dtype)
    qk = DslConfig(mma, name="flash_attention_v2: S = Q K^T", label="tiled_mma")
    qk.copy("A", cute.make_tiled_copy_A(ld_n, mma), sQ, label="smem_tiled_copy_Q", smem_label="sQ_layout")
    qk.copy("B", cute.make_tiled_copy_B(ld_n, mma), sKV, label="smem_tiled_copy_K", smem_label="sKV_layout")
    # leading dimensions: row strides of [batch, seqlen, nheads, head_dim] tensors
    qk.g2s("A", g_qkv, label="gmem_tiled_copy_QKV", ld="ldQ", ld_multiple_of=head_dim)
    qk.g2s("B", g_qkv, label="gmem_tiled_copy_QKV", ld="ldK", ld_multiple_of=head_dim)
    pv = DslConfig(mma, name="flash_attention_v2: O = P V", label="tiled_mma")
    pv.copy("B", cute.make_tiled_copy_B(ld_t, mma), sVt, label="smem_tiled_copy_V", smem_label="sVt")
    pv.g2s("B", g_qkv, sKV, label="gmem_tiled_copy_QKV", smem_label="sKV_layout", transposed=True, ld="ldV",
           ld_multiple_of=head_dim)
    pv.copy("C", cute.make_tiled_copy_C(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype), mma), sQ,
            label="smem_tiled_copy_O", smem_label="sO_layout")
    pv.s2g(g_o, label="gmem_tiled_copy_O", ld="ldO", ld_multiple_of=head_dim)
    return qk, pv


FA2_CASES = [("BFloat16", 128, 128, 64, 128), ("Float16", 64, 128, 128, 128)]


@pytest.fixture(scope="module")
def fa2(cute):
    import cutlass
    out = {}

    @cute.jit
    def trace():
        for dt, hd, bm, bn, nthr in FA2_CASES:
            out[(dt, hd)] = fa2_configs(cute, getattr(cutlass, dt), hd, bm, bn, nthr)

    t0 = time.perf_counter()
    trace()
    print(f"flash_attention_v2: {2 * len(FA2_CASES)} configurations traced in {time.perf_counter() - t0:.2f} s")
    return out


@pytest.mark.parametrize("dt,hd,bm,bn,nthr", FA2_CASES)
def test_flash_attention_v2_matches_the_example(fa2, dt, hd, bm, bn, nthr):
    typ = {"BFloat16": "bfloat16_t", "Float16": "half_t"}[dt]
    qk, pv = (c.to_dict() for c in fa2[(dt, hd)])
    w = nthr // 32
    mma = {"atom": f"SM80_16x8x16_F32{'BF16BF16' if typ == 'bfloat16_t' else 'F16F16'}F32_TN",
           "layout": f"({w},1,1):(1,0,0)", "permutation": [str(16 * w), "16", "16"]}
    assert qk["mma"] == mma and pv["mma"] == mma
    atom = swizzled(3, 3, 3, Layout((8, 64), (64, 1)))
    kv = tile_to_shape(atom, (bn, hd))
    assert same_layout(qk["copy"]["A"]["smem"], tile_to_shape(atom, (bm, hd)))
    assert same_layout(qk["copy"]["B"]["smem"], kv)
    assert qk["copy"]["A"]["atom"] == qk["copy"]["B"]["atom"] == "SM75_U32x4_LDSM_N"
    thr = f"({nthr // 8},8):(8,1)"
    for x, ld, rows in (("A", "ldQ", bm), ("B", "ldK", bn)):
        g = qk["g2s"][x]
        assert (g["atom"], g["type"], g["thr"], g["val"], g["gmem"]) == \
            ("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", typ, thr, "(1,8)", f"({rows},{hd}):({ld},1)")
    b = pv["copy"]["B"]
    assert b["atom"] == "SM75_U16x8_LDSM_T"
    from symlayout.algebra.layout import composition
    assert same_layout(b["smem"], composition(kv, Layout((hd, bn), (bn, 1))))
    g = pv["g2s"]["B"]
    assert (g["thr"], g["val"], g["gmem"]) == (f"(8,{nthr // 8}):(1,8)", "(8,1)", f"({hd},{bn}):(1,ldV)")
    c = pv["copy"]["C"]
    # the example's make_copy_atom(CopyUniversalOp(), dtype) has no num_bits_per_copy: the DSL auto-vectorises
    assert (c["atom"], c["type"], c["convert"]) == ("AutoVectorizingCopy", typ, True)
    s = pv["s2g"]["C"]
    assert (s["atom"], s["thr"], s["val"], s["gmem"]) == ("UniversalCopy<uint128_t>", thr, "(1,8)", f"({bm},{hd}):(ldO,1)")


@pytest.mark.parametrize("dt,hd,bm,bn,nthr", FA2_CASES)
def test_flash_attention_v2_proves(fa2, dt, hd, bm, bn, nthr):
    for cfg in fa2[(dt, hd)]:
        rep = cfg.prove()
        rep.assert_proved()
        assert rep.results


# ---------------------------------------------------------------- refusals


def test_unsupported_ops_are_named(cute):
    import cutlass
    from cutlass.cute.nvgpu import warp
    from symlayout.cute_dsl import DslConfig, DslError
    errors = []

    @cute.jit
    def trace():
        mma = cute.make_tiled_mma(cute.nvgpu.MmaUniversalOp(cutlass.Float32), cute.make_layout((16, 16, 1)))
        errors.append(DslConfig(mma).doc.mma["atom"])      # CuTe's UniversalFMA (was not supported)
        mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)), cute.make_layout((2, 2, 1)))
        c = DslConfig(mma)
        try:
            c.copy("A", cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix16x8x8bOp(True, 4),
                                                                   cutlass.Uint8), mma),
                   cute.make_layout((32, 16), stride=(16, 1)))
        except DslError as e:
            errors.append(str(e))
        try:
            c.copy("A", "MyCopy", cute.make_layout((32, 16), stride=(16, 1)))
        except DslError as e:
            errors.append(str(e))

    trace()
    assert errors[0] == "UniversalFMA<float>"
    assert errors[1].startswith("not supported: LdMatrix16x8x8bOp(") and "transpose=True" in errors[1]
    assert errors[2] == "not supported: MyCopy"


def test_module_doctests():
    import doctest
    import symlayout.frontends.cute_dsl as m
    assert doctest.testmod(m).failed == 0


def test_hand_built_copies(cute):
    """A TiledCopy that is not make_tiled_copy_X(atom, mma): thr/val when it has that form, else tv/tiler."""
    import cutlass
    from cutlass.cute.nvgpu import warp
    from symlayout.cute_dsl import DslConfig
    out = {}

    @cute.jit
    def trace():
        mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)),
                                  cute.make_layout((2, 2, 1)))
        u32 = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float16, num_bits_per_copy=32)
        c = DslConfig(mma)
        c.copy("A", cute.make_tiled_copy_tv(u32, cute.make_layout((32, 4), stride=(4, 1)), cute.make_layout((1, 2))),
               cute.make_layout((32, 16), stride=(16, 1)), label="s2r_A")
        u16 = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float16, num_bits_per_copy=16)
        c.copy("B", cute.make_tiled_copy(u16, cute.make_layout(((2, 2), 2), stride=((1, 4), 2)), (8, 1)),
               cute.make_layout((16, 16), stride=(16, 1)), label="s2r_B")
        out["c"] = c

    trace()
    d = out["c"].to_dict()
    assert {k: d["copy"]["A"][k] for k in ("atom", "thr", "val")} == \
        {"atom": "UniversalCopy<uint32_t>", "thr": "(32,4):(4,1)", "val": "(1,2)"}
    assert (d["copy"]["B"]["atom"], d["copy"]["B"]["tv"], d["copy"]["B"]["tiler"]) == \
        ("UniversalCopy<uint16_t>", "((2,2),2):((1,4),2)", "(8,1)")
    _, left = out["c"].doc.version1()
    assert "[copy.A] (version 2: hand-built copy: thr, val)" in left
    assert "[copy.B] (version 2: hand-built copy: tv, tiler)" in left

