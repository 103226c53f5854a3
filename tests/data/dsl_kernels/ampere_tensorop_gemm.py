"""A small Ampere tensor-core GEMM in the style of CuTe DSL kernels (test input of ``symlayout dsl --entry``).

Written for symlayout's tests (no code copied): the host ``__call__`` builds the TiledMma, the
staged swizzled smem layouts, the cp.async global->shared copies and the 128-bit C store, and
launches ``kernel``; the kernel body builds the ldmatrix copies from the TiledMma and writes the
converted accumulators to shared memory with ``cute.autovec_copy``.  Only the objects matter to
symlayout: the body does not compute a GEMM.

    symlayout dsl tests/data/dsl_kernels/ampere_tensorop_gemm.py --entry TensorOpGemm.__call__ \\
        --shape M=4096,N=4096,K=4096 --dtype f16

``ld_divby=16`` (``--init ld_divby=16``) makes the kernel state what it assumes of its tensors' leading
dimensions, as flash-attention 4's ``assume_tensor_aligned`` does: every dynamic stride rebuilt with
``cute.assume(stride, divby=16)``.  ``body_error=True`` makes the kernel body fail at its end (a trace
that does not reach the end of the body).
"""
import math

import torch  # noqa: F401  (as real kernels do; loaded through symlayout's stub without torch)

import cutlass
import cutlass.cute as cute
from cutlass.memory import SmemAllocator
from cutlass.tensor_utils import LayoutEnum
from cutlass.cute.nvgpu import cpasync, warp


class TensorOpGemm:
    def __init__(self, ab_dtype=cutlass.Float16, c_dtype=cutlass.Float16, acc_dtype=cutlass.Float32,
                 atom_layout_mnk=(2, 2, 1), swizzle=True, ld_divby=None, body_error=False):
        self.ab_dtype, self.c_dtype, self.acc_dtype = ab_dtype, c_dtype, acc_dtype
        self.atom_layout_mnk = atom_layout_mnk
        self.cta_tiler = (128, 128, 32)
        self.num_stages = 3
        self.num_threads = math.prod(atom_layout_mnk) * 32
        self.swizzle = swizzle
        self.ld_divby = ld_divby
        self.body_error = body_error

    def _aligned(self, t):
        """``t`` with each dynamic stride stated a multiple of ``ld_divby`` elements."""
        strides = tuple(s if isinstance(s, int) else cute.assume(s, divby=self.ld_divby) for s in t.stride)
        return cute.make_tensor(t.iterator, cute.make_layout(t.shape, stride=strides))

    def _smem_layout_AB(self, dtype, major, rows):
        bK = self.cta_tiler[2]
        contiguous = min(bK if major == LayoutEnum.ROW_MAJOR else rows, 64)
        bits = min(int(math.log2(contiguous * dtype.width // 128)), 3)
        if major == LayoutEnum.ROW_MAJOR:
            atom = cute.make_layout((8, contiguous), stride=(contiguous, 1))
        else:
            atom = cute.make_layout((contiguous, 8), stride=(1, contiguous))
        swizzle = cute.make_swizzle(bits if self.swizzle else 0, 3, 3)
        atom = cute.make_composed_layout(swizzle, 0, atom)
        return cute.tile_to_shape(atom, (rows, bK, self.num_stages), (0, 1, 2))

    def _g2s_copy(self, atom, dtype, major, rows, cols):
        vec = 128 // dtype.width
        if major == LayoutEnum.ROW_MAJOR:
            along = cols // vec
            thr = cute.make_layout((self.num_threads // along, along), stride=(along, 1))
            val = cute.make_layout((1, vec))
        else:
            along = rows // vec
            thr = cute.make_layout((along, self.num_threads // along), stride=(1, along))
            val = cute.make_layout((vec, 1))
        return cute.make_tiled_copy_tv(atom, thr, val)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
        if cutlass.const_expr(self.ld_divby is not None):
            mA, mB, mC = [self._aligned(t) for t in (mA, mB, mC)]
        self.a_major_mode = LayoutEnum.from_tensor(mA)
        self.b_major_mode = LayoutEnum.from_tensor(mB)
        bM, bN, bK = self.cta_tiler
        sA_layout = self._smem_layout_AB(mA.element_type, self.a_major_mode, bM)
        sB_layout = self._smem_layout_AB(mB.element_type, self.b_major_mode, bN)
        c_atom = cute.make_composed_layout(cute.make_swizzle(3, 3, 4), 0,
                                           cute.make_layout((8, 128), stride=(128, 1)))
        sC_layout = cute.tile_to_shape(c_atom, (bM, bN), (0, 1))

        atom_async_copy = cute.make_copy_atom(cpasync.CopyG2SOp(cache_mode=cpasync.LoadCacheMode.GLOBAL),
                                              mA.element_type, num_bits_per_copy=128)
        tiled_copy_A = self._g2s_copy(atom_async_copy, mA.element_type, self.a_major_mode, bM, bK)
        tiled_copy_B = self._g2s_copy(atom_async_copy, mB.element_type, self.b_major_mode, bN, bK)
        atom_sync_copy = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mC.element_type, num_bits_per_copy=128)
        tiled_copy_C = self._g2s_copy(atom_sync_copy, mC.element_type, LayoutEnum.ROW_MAJOR, bM, bN)

        op = warp.MmaF16BF16Op(self.ab_dtype, self.acc_dtype, (16, 8, 16))
        permutation_mnk = (self.atom_layout_mnk[0] * 16, self.atom_layout_mnk[1] * 8 * 2,
                           self.atom_layout_mnk[2] * 16)
        tiled_mma = cute.make_tiled_mma(op, cute.make_layout(self.atom_layout_mnk), permutation_mnk=permutation_mnk)

        grid_dim = cute.ceil_div(mC.shape, (bM, bN, 1))
        self.kernel(mA, mB, mC, sA_layout, sB_layout, sC_layout, tiled_copy_A, tiled_copy_B, tiled_copy_C,
                    tiled_mma).launch(grid=grid_dim, block=[self.num_threads, 1, 1])

    @cute.kernel
    def kernel(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, sA_layout: cute.ComposedLayout,
               sB_layout: cute.ComposedLayout, sC_layout: cute.ComposedLayout, tiled_copy_A: cute.TiledCopy,
               tiled_copy_B: cute.TiledCopy, tiled_copy_C: cute.TiledCopy, tiled_mma: cute.TiledMma):
        tidx, _, _ = cute.arch.thread_idx()
        smem = SmemAllocator()
        sA = smem.allocate_tensor(mA.element_type, sA_layout, 16)
        sB = smem.allocate_tensor(mB.element_type, sB_layout, 16)
        thr_mma = tiled_mma.get_slice(tidx)
        bidx, bidy, _ = cute.arch.block_idx()
        gA = cute.local_tile(mA[None, None, 0], self.cta_tiler, (bidx, bidy, None), proj=(1, None, 1))
        gB = cute.local_tile(mB[None, None, 0], self.cta_tiler, (bidx, bidy, None), proj=(None, 1, 1))
        gC = cute.local_tile(mC[None, None, 0], self.cta_tiler, (bidx, bidy, None), proj=(1, 1, None))
        tAgA = tiled_copy_A.get_slice(tidx).partition_S(gA)
        tAsA = tiled_copy_A.get_slice(tidx).partition_D(sA)
        tBgB = tiled_copy_B.get_slice(tidx).partition_S(gB)
        tBsB = tiled_copy_B.get_slice(tidx).partition_D(sB)

        atom_copy_s2r_A = cute.make_copy_atom(
            warp.LdMatrix8x8x16bOp(self.a_major_mode != LayoutEnum.ROW_MAJOR, 4), mA.element_type)
        atom_copy_s2r_B = cute.make_copy_atom(
            warp.LdMatrix8x8x16bOp(self.b_major_mode != LayoutEnum.ROW_MAJOR, 4), mB.element_type)
        tiled_copy_s2r_A = cute.make_tiled_copy_A(atom_copy_s2r_A, tiled_mma)
        tiled_copy_s2r_B = cute.make_tiled_copy_B(atom_copy_s2r_B, tiled_mma)
        tCsA = tiled_copy_s2r_A.get_slice(tidx).partition_S(sA)
        tCsB = tiled_copy_s2r_B.get_slice(tidx).partition_S(sB)

        # the epilogue reuses A's buffer for the C tile
        sC = cute.make_tensor(cute.recast_ptr(sA.iterator, dtype=mC.element_type), sC_layout)
        tCsC = thr_mma.partition_C(sC)
        tCrC = tiled_mma.make_fragment_C(tCsC)
        tCrC.fill(0.0)
        tCrD = cute.make_fragment_like(tCrC, self.c_dtype)
        tCrD.store(tCrC.load().to(self.c_dtype))
        cute.autovec_copy(tCrD, tCsC)
        tCgC = tiled_copy_C.get_slice(tidx).partition_D(gC)
        if cutlass.const_expr(self.body_error):
            raise ValueError("the kernel body fails here (test input)")
