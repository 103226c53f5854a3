"""What the sources say: expected configurations of flash-attention 2 and CUTLASS SM80, written
from the formulas in their headers (read, not copied), evaluated with symlayout's algebra.

flash-attention 2, ``csrc/flash_attn/src/kernel_traits.h``, ``Flash_fwd_kernel_traits<kHeadDim,
kBlockM, kBlockN, kNWarps, false, false, elem_type>`` compiled for SM80:

* ``TiledMma = TiledMMA<MMA_Atom<SM80_16x8x16_F32{F16F16|BF16BF16}F32_TN>, Layout<Shape<kNWarps,1,1>>,
  Tile<16*kNWarps, 16, 16>>``
* ``kBlockKSmem = kHeadDim % 64 == 0 ? 64 : 32``, ``kSwizzle = kBlockKSmem == 32 ? 2 : 3``;
  ``SmemLayoutAtomQ = composition(Swizzle<kSwizzle,3,3>, Layout<Shape<8,kBlockKSmem>, Stride<kBlockKSmem,1>>)``;
  ``SmemLayoutQ = tile_to_shape(atom, (kBlockM, kHeadDim))``, ``SmemLayoutKV = tile_to_shape(atom, (kBlockN, kHeadDim))``,
  ``SmemLayoutVtransposed = composition(SmemLayoutKV, make_layout((kHeadDim, kBlockN), GenRowMajor))``,
  ``SmemLayoutO = tile_to_shape(atom, (kBlockM, kHeadDim))``
* ``SmemCopyAtom = Copy_Atom<SM75_U32x4_LDSM_N, elem>``, ``SmemCopyAtomTransposed = Copy_Atom<SM75_U16x8_LDSM_T, elem>``,
  ``SmemCopyAtomO = Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<128>, elem>``, ``ElementAccum = float``
* ``kGmemElemsPerLoad = 16 / sizeof(elem) = 8``, ``kGmemThreadsPerRow = kBlockKSmem / 8``,
  ``GmemLayoutAtom = Layout<Shape<kNThreads/kGmemThreadsPerRow, kGmemThreadsPerRow>, Stride<kGmemThreadsPerRow,1>>``,
  ``GmemTiledCopyQKV = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, elem>, GmemLayoutAtom, Layout<Shape<1,8>>)``,
  ``GmemTiledCopyO`` the same with ``AutoVectorizingCopyWithAssumedAlignment<128>``.

CUTLASS, ``test/unit/gemm/device/default_gemm_configuration.hpp``,
``DefaultGemmConfigurationToCutlass3Types<OpClassTensorOp, Sm80, half_t, LayoutA, half_t, LayoutB, float, LayoutC, float>``:
``TileShape = (128,128,32)``, ``MainloopSm80CpAsync<3>``, ``TiledMMA<MMA_Atom<SM80_16x8x16_F32F16F16F32_TN>,
Layout<Shape<2,2,1>>, Tile<32,32,16>>``; K-major operands (A RowMajor, B ColumnMajor) use
``DefaultGemm_TensorOpSm80_OperandA<half_t, RowMajor, 8, 32>``: ``composition(Swizzle<2,3,3>, Layout<Shape<8,32>,
Stride<32,1>>)``, ``SM75_U32x4_LDSM_N``, ``make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, half_t>,
Layout<Shape<32,4>,Stride<4,1>>, Layout<Shape<1,8>>)``; M/N-major ones (A ColumnMajor, B RowMajor):
``composition(Swizzle<3,3,3>, Layout<Shape<64,8>,Stride<1,64>>)``, ``SM75_U16x8_LDSM_T``,
``make_tiled_copy(..., Layout<Shape<16,8>,Stride<1,16>>, Layout<Shape<8,1>>)``; the collective's
``SmemLayoutA = tile_to_shape(SmemLayoutAtomA, (128, 32, Stages))``.
"""
from __future__ import annotations

import tomllib

from symlayout.algebra.layout import Layout, composition, function_table, tile_to_shape
from symlayout.algebra.notation import parse
from symlayout.algebra.composed import ComposedLayout, Swizzle


def same_layout(text: str, expected) -> bool:
    """The configuration's layout text is the same function as ``expected``."""
    got = parse(text)
    return got.size() == expected.size() and function_table(got) == function_table(expected)


def swizzle_atom(b, rows, cols, row_major=True, m=3, s=3):
    """``composition(Swizzle<b,m,s>, Layout<Shape<rows,cols>>)`` row- or column-major."""
    inner = Layout((rows, cols), (cols, 1)) if row_major else Layout((rows, cols), (1, rows))
    return ComposedLayout(Swizzle(b, m, s), 0, inner)


def fa2_fwd_expected(hd, block_m, block_n, nwarps, elem="half_t"):
    kblock = 64 if hd % 64 == 0 else 32
    atom = swizzle_atom(3 if kblock == 64 else 2, 8, kblock)
    kv = tile_to_shape(atom, (block_n, hd))
    per_row = kblock // 8
    mma = "SM80_16x8x16_F32F16F16F32_TN" if elem == "half_t" else "SM80_16x8x16_F32BF16BF16F32_TN"
    return {
        "mma": {"atom": mma, "layout": Layout((nwarps, 1, 1)), "permutation": [str(16 * nwarps), "16", "16"]},
        "Q": tile_to_shape(atom, (block_m, hd)), "KV": kv,
        "Vt": composition(kv, Layout((hd, block_n), (block_n, 1))),
        "O": tile_to_shape(atom, (block_m, hd)),
        "thr": f"({nwarps * 32 // per_row},{per_row}):({per_row},1)", "val": "(1,8)",
        "thr_T": f"({per_row},{nwarps * 32 // per_row}):(1,{per_row})", "val_T": "(8,1)",
        "elem": elem,
    }


def check_fa2_fwd(docs, hd, block_m, block_n, nwarps, elem="half_t"):
    """Assert the two extracted documents say what kernel_traits.h says."""
    e = fa2_fwd_expected(hd, block_m, block_n, nwarps, elem)
    assert [d.key for d in docs] == ["qk", "pv"]
    qk, pv = (d.to_dict() for d in docs)
    for d in (qk, pv):
        assert d["mma"]["atom"] == e["mma"]["atom"]
        assert same_layout(d["mma"]["layout"], e["mma"]["layout"])
        assert d["mma"]["permutation"] == e["mma"]["permutation"]
    # S = Q K^T: A = Q, B = K through ldmatrix; both loaded by GmemTiledCopyQKV
    assert qk["copy"]["A"]["atom"] == qk["copy"]["B"]["atom"] == "SM75_U32x4_LDSM_N"
    assert qk["copy"]["A"]["type"] == qk["copy"]["B"]["type"] == elem
    assert same_layout(qk["copy"]["A"]["smem"], e["Q"]) and same_layout(qk["copy"]["B"]["smem"], e["KV"])
    for x, ld, rows in (("A", "ldQ", block_m), ("B", "ldK", block_n)):
        g = qk["g2s"][x]
        assert (g["atom"], g["type"], g["thr"], g["val"]) == ("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", elem, e["thr"], e["val"])
        assert g["gmem"] == f"({rows},{hd}):({ld},1)" and g["gmem_align"] == 16
        assert qk["params"][ld] == {"min": hd, "max": 1 << 20, "multiple_of": 8}
    assert "C" not in qk.get("copy", {}) and "stages" not in qk
    # O = P V: B = V^T through ldmatrix.trans; V loaded by GmemTiledCopyQKV into the (kBlockN, kHeadDim) tile
    assert "A" not in pv["copy"]
    b = pv["copy"]["B"]
    assert (b["atom"], b["type"]) == ("SM75_U16x8_LDSM_T", elem) and same_layout(b["smem"], e["Vt"])
    g = pv["g2s"]["B"]
    assert (g["thr"], g["val"], g["gmem"]) == (e["thr_T"], e["val_T"], f"({hd},{block_n}):(1,ldV)")
    # the O epilogue: float accumulators converted to elem, stored to SmemLayoutO, then to global memory
    c = pv["copy"]["C"]
    assert (c["atom"], c["type"], c["convert"]) == ("AutoVectorizingCopy", elem, True)
    assert same_layout(c["smem"], e["O"])
    s = pv["s2g"]["C"]
    assert (s["atom"], s["type"], s["thr"], s["val"], s["gmem"]) == \
        ("AutoVectorizingCopy", elem, e["thr"], e["val"], f"({block_m},{hd}):(ldO,1)")
    for d in docs:
        assert tomllib.loads(d.to_toml()) == d.to_dict()
        assert not [n for n in d.notes if n.startswith("not supported")]


def cutlass_sm80_f16_expected(a_kmajor: bool, b_kmajor: bool, stages=3):
    def operand(kmajor):
        if kmajor:
            atom = swizzle_atom(2, 8, 32)
            return {"smem": tile_to_shape(atom, (128, 32, stages)), "copy": "SM75_U32x4_LDSM_N",
                    "thr": "(32,4):(4,1)", "val": "(1,8)", "gmem": "(128,32):({ld},1)"}
        atom = swizzle_atom(3, 64, 8, row_major=False)
        return {"smem": tile_to_shape(atom, (128, 32, stages)), "copy": "SM75_U16x8_LDSM_T",
                "thr": "(16,8):(1,16)", "val": "(8,1)", "gmem": "(128,32):(1,{ld})"}
    return {"A": operand(a_kmajor), "B": operand(b_kmajor), "stages": stages}


def check_cutlass_sm80_f16(docs, a_kmajor: bool, b_kmajor: bool, stages=3):
    e = cutlass_sm80_f16_expected(a_kmajor, b_kmajor, stages)
    assert [d.key for d in docs] == ["mainloop"]
    d = docs[0].to_dict()
    assert d["mma"]["atom"] == "SM80_16x8x16_F32F16F16F32_TN"
    assert same_layout(d["mma"]["layout"], Layout((2, 2, 1))) and d["mma"]["permutation"] == ["32", "32", "16"]
    for x in "AB":
        c, g, ex = d["copy"][x], d["g2s"][x], e[x]
        assert (c["atom"], c["type"]) == (ex["copy"], "half_t") and same_layout(c["smem"], ex["smem"])
        assert (g["atom"], g["type"], g["thr"], g["val"]) == ("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "half_t",
                                                              ex["thr"], ex["val"])
        assert g["gmem"] == ex["gmem"].format(ld=f"ld{x}")
    assert d["stages"] == {"count": stages}
    assert tomllib.loads(docs[0].to_toml()) == d


def check_cutlass_sm90_f16(docs):
    """CUTLASS's SM90 collective builder for 128x128x64 K-major f16, 4 stages, cooperative (2 warpgroups
    along M): the GMMA atom, the SW128 K-major smem tiles, TMA loads of 128x64 boxes; proved."""
    from symlayout.config import loads_config
    from symlayout.prove.engine import prove_config
    (doc,) = docs
    d = doc.to_dict()
    assert d["mma"]["atom"] == "SM90_64x128x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>"
    assert d["mma"]["layout"] == "(2,1,1):(1,0,0)"
    for x, rows in (("A", "M"), ("B", "N")):
        assert d["smem"][x] == {"type": "half_t", "align": 1024, "layout":
                                "Sw<3,4,3> o smem_ptr[16b](unset) o ((8,16),(64,1),(1,4)):((64,512),(1,0),(0,8192))"}
        assert d["tma"][x] == {"atom": "SM90_TMA_LOAD", "gmem": f"({rows},K):(K,1)", "box": "(128,64)"}
    assert d["stages"] == {"count": 4}
    rep = prove_config(loads_config(doc.to_toml(), path=doc.key))
    assert rep.error is None and rep.results
    assert [(r.property, r.operand) for r in rep.results if r.status != "proved"] == []
    assert {r.property for r in rep.results} >= {"descriptor", "slot_agreement", "tma", "coverage"}
