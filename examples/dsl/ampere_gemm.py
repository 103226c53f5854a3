"""The tiling of an Ampere tensor-core GEMM written with the CuTe DSL, proved by symlayout.

    pip install '.[dsl]'
    symlayout dsl examples/dsl/ampere_gemm.py

The objects below are the ones CUTLASS's public CuTe DSL example
``examples/python/CuTeDSL/ampere/tensorop_gemm.py`` (``TensorOpGemm``) builds on the
host: a 2x2x1 grid of ``mma.sync`` 16x8x16 atoms (f16 in, f32 accumulate) over a
128x128x32 CTA tile with the N mode permuted to 32, shared-memory tiles of 8-row
swizzled atoms with a pipeline mode of 3 stages, ``ldmatrix`` x4 copies from shared
memory into the MMA's registers (``.trans`` for an M- or N-major tile), 128-bit
``cp.async`` copies from global memory, and the epilogue: converted accumulators
written to a swizzled C tile, stored to global memory with 128-bit copies.
The formulas follow the example's; the code is ours.

``symlayout dsl`` imports this file and calls :func:`symlayout_configs` while a
``@cute.jit`` function is being traced (the DSL builds layouts only then), so the
function is plain DSL setup code returning :class:`symlayout.cute_dsl.DslConfig`
objects.  A kernel's own ``@cute.jit`` host function can do the same in place:
``DslConfig(...)...prove().assert_proved()``.
"""
from __future__ import annotations

import math

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync, warp

from symlayout.cute_dsl import DslConfig

CTA_TILE = (128, 128, 32)       # bM, bN, bK
STAGES = 3
MMA_SHAPE = (16, 8, 16)
COPY_BITS = 128                 # every global-memory copy moves 16 bytes
# The kernel needs leading dimensions that are multiples of 8 elements (16-byte vectors); a warp's
# copies touch the fewest 32-byte sectors only when every row starts on that grid: the proof of
# coalescing assumes multiples of 16 elements (ldA = 40 costs 20 sectors for 512 bytes, not 16).
LD_MULTIPLE = 16


def smem_layout_ab(dtype, k_major: bool, rows: int):
    """(rows, bK, STAGES) tile of 8-row atoms along the contiguous mode, swizzled so that
    the 8 rows one ldmatrix phase reads fall into distinct bank groups."""
    bK = CTA_TILE[2]
    contiguous = min(bK if k_major else rows, 1024 // dtype.width)   # at most 128 bytes per atom row
    bits = min(int(math.log2(contiguous * dtype.width // COPY_BITS)), 3)
    if k_major:
        atom = cute.make_layout((8, contiguous), stride=(contiguous, 1))
    else:
        atom = cute.make_layout((contiguous, 8), stride=(1, contiguous))
    swizzled = cute.make_composed_layout(cute.make_swizzle(bits, 3, 3), 0, atom)
    return cute.tile_to_shape(swizzled, (rows, bK, STAGES), (0, 1, 2))


def smem_layout_c(dtype):
    """The (bM, bN) row-major C tile the epilogue stages through shared memory."""
    bM, bN, _ = CTA_TILE
    contiguous = bN
    bits = min(int(math.log2(contiguous * dtype.width // COPY_BITS)), 3)
    atom = cute.make_composed_layout(cute.make_swizzle(bits, 3, 4), 0,
                                     cute.make_layout((8, contiguous), stride=(contiguous, 1)))
    return cute.tile_to_shape(atom, (bM, bN), (0, 1))


def gmem_tiled_copy(atom, dtype, contiguous_first: bool, rows: int, cols: int, threads: int):
    """Threads laid out along the contiguous mode of a (rows, cols) global tile, one
    COPY_BITS vector each."""
    vec = COPY_BITS // dtype.width
    if contiguous_first:            # the first mode has stride 1 (M- or N-major)
        along = rows // vec
        thr = cute.make_layout((along, threads // along), stride=(1, along))
        val = cute.make_layout((vec, 1))
    else:                           # the second mode has stride 1 (K-major A/B, row-major C)
        along = cols // vec
        thr = cute.make_layout((threads // along, along), stride=(along, 1))
        val = cute.make_layout((1, vec))
    return cute.make_tiled_copy_tv(atom, thr, val)


def ampere_gemm(ab=cutlass.Float16, acc=cutlass.Float32, c=cutlass.Float16, a_major="K", b_major="K",
                atom_layout=(2, 2, 1)) -> DslConfig:
    """The GEMM's configuration: the TiledMma, the copies of A, B and C and their smem tiles."""
    bM, bN, bK = CTA_TILE
    threads = math.prod(atom_layout) * 32
    mma = cute.make_tiled_mma(
        warp.MmaF16BF16Op(ab, acc, MMA_SHAPE), cute.make_layout(atom_layout),
        permutation_mnk=(atom_layout[0] * MMA_SHAPE[0], atom_layout[1] * MMA_SHAPE[1] * 2,
                         atom_layout[2] * MMA_SHAPE[2]))
    sA_layout = smem_layout_ab(ab, a_major == "K", bM)
    sB_layout = smem_layout_ab(ab, b_major == "K", bN)
    sC_layout = smem_layout_c(c)

    cp_async = cute.make_copy_atom(cpasync.CopyG2SOp(cache_mode=cpasync.LoadCacheMode.GLOBAL), ab,
                                   num_bits_per_copy=COPY_BITS)
    tiled_copy_A = gmem_tiled_copy(cp_async, ab, a_major != "K", bM, bK, threads)
    tiled_copy_B = gmem_tiled_copy(cp_async, ab, b_major != "K", bN, bK, threads)
    store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), c, num_bits_per_copy=COPY_BITS)
    tiled_copy_C = gmem_tiled_copy(store, c, False, bM, bN, threads)

    # ldmatrix reads 8x8 blocks of 16-bit values; .trans when the tile is not K-major
    ldsm_A = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(a_major != "K", 4), ab)
    ldsm_B = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(b_major != "K", 4), ab)
    tiled_copy_s2r_A = cute.make_tiled_copy_A(ldsm_A, mma)
    tiled_copy_s2r_B = cute.make_tiled_copy_B(ldsm_B, mma)

    cfg = DslConfig(mma, name=f"ampere tensorop_gemm: {ab.__name__} x {ab.__name__} -> {acc.__name__} -> "
                              f"{c.__name__}, A {a_major}-major, B {b_major}-major", label="tiled_mma")
    cfg.copy("A", tiled_copy_s2r_A, sA_layout, label="tiled_copy_s2r_A", smem_label="sA_layout")
    cfg.copy("B", tiled_copy_s2r_B, sB_layout, label="tiled_copy_s2r_B", smem_label="sB_layout")
    cfg.copy("C", "AutoVectorizingCopy", sC_layout, dtype=c, label="autovec_copy(tCrD, tCsC)",
             smem_label="sC_layout")
    cfg.g2s("A", tiled_copy_A, label="tiled_copy_A", ld_multiple_of=LD_MULTIPLE)
    cfg.g2s("B", tiled_copy_B, label="tiled_copy_B", ld_multiple_of=LD_MULTIPLE)
    cfg.s2g(tiled_copy_C, label="tiled_copy_C", ld_multiple_of=LD_MULTIPLE)
    return cfg


def symlayout_configs():
    """The configurations ``symlayout dsl`` proves (called at trace time)."""
    return {
        "k_major": ampere_gemm(),
        "mn_major": ampere_gemm(a_major="M", b_major="N"),
    }


if __name__ == "__main__":
    import sys

    from symlayout.cli import main
    sys.exit(main(["dsl", __file__, *sys.argv[1:]]))
