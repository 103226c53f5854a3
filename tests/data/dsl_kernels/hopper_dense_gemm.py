"""A small Hopper GEMM mainloop in the style of CuTe DSL kernels (test input of ``symlayout dsl --entry``).

Written for symlayout's tests (no code copied): the host ``__call__`` builds a warpgroup TiledMma
(``MmaF16BF16Op`` through ``sm90_utils.make_trivial_tiled_mma``), the staged GMMA smem layouts and
one TMA load atom per operand and the TMA store atom of the C epilogue, and launches ``kernel``.  Only the objects matter to symlayout: the
kernel body does not compute a GEMM.

    symlayout dsl tests/data/dsl_kernels/hopper_dense_gemm.py --entry HopperGemm.__call__ \\
        --shape M=4096,N=4096,K=4096 --dtype f16
"""
import cuda.bindings.driver as cuda

import cutlass
import cutlass.cute as cute
from cutlass.memory import SmemAllocator
from cutlass.tensor_utils import LayoutEnum
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import cpasync


class HopperGemm:
    def __init__(self, acc_dtype=cutlass.Float32, tile_shape_mnk=(128, 128, 64), atom_layout_mn=(2, 1), stages=4):
        self.acc_dtype = acc_dtype
        self.tile_shape_mnk = tile_shape_mnk
        self.atom_layout_mnk = (*atom_layout_mn, 1)
        self.ab_stage = stages
        self.threads_per_cta = 128 * (atom_layout_mn[0] * atom_layout_mn[1] + 1)

    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, stream: cuda.CUstream):
        self.a_dtype, self.b_dtype = a.element_type, b.element_type
        self.a_layout = LayoutEnum.from_tensor(a)
        self.b_layout = LayoutEnum.from_tensor(b)
        bM, bN, bK = self.tile_shape_mnk
        tiled_mma = sm90_utils.make_trivial_tiled_mma(
            self.a_dtype, self.b_dtype, self.a_layout.sm90_mma_major_mode(), self.b_layout.sm90_mma_major_mode(),
            self.acc_dtype, self.atom_layout_mnk, tiler_mn=(64, bN // self.atom_layout_mnk[1]))
        a_smem_layout_staged = sm90_utils.make_smem_layout_a(self.a_layout, self.tile_shape_mnk, self.a_dtype,
                                                             self.ab_stage)
        b_smem_layout_staged = sm90_utils.make_smem_layout_b(self.b_layout, self.tile_shape_mnk, self.b_dtype,
                                                             self.ab_stage)
        a_smem_layout = cute.slice_(a_smem_layout_staged, (None, None, 0))
        b_smem_layout = cute.slice_(b_smem_layout_staged, (None, None, 0))
        tma_atom_a, tma_tensor_a = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, a_smem_layout,
                                                               (bM, bK))
        tma_atom_b, tma_tensor_b = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), b, b_smem_layout,
                                                               (bN, bK))
        epi_tile = (64, 32)
        epi_smem_layout_staged = sm90_utils.make_smem_layout_epi(c.element_type, LayoutEnum.from_tensor(c), epi_tile, 2)
        tma_atom_c, tma_tensor_c = cpasync.make_tiled_tma_atom(
            cpasync.CopyBulkTensorTileS2GOp(), c, cute.slice_(epi_smem_layout_staged, (None, None, 0)), epi_tile)
        grid = cute.ceil_div(c.shape, (bM, bN, 1))
        self.kernel(tma_atom_a, tma_tensor_a, tma_atom_b, tma_tensor_b, tiled_mma, a_smem_layout_staged,
                    b_smem_layout_staged).launch(grid=grid, block=[self.threads_per_cta, 1, 1], stream=stream)

    @cute.kernel
    def kernel(self, tma_atom_a: cute.CopyAtom, mA_mkl: cute.Tensor, tma_atom_b: cute.CopyAtom, mB_nkl: cute.Tensor,
               tiled_mma: cute.TiledMma, a_smem_layout_staged: cute.ComposedLayout,
               b_smem_layout_staged: cute.ComposedLayout):
        tidx, _, _ = cute.arch.thread_idx()
