"""A small Blackwell GEMM setup in the style of CuTe DSL kernels (test input of ``symlayout dsl --entry``).

Written for symlayout's tests (no code copied): the host ``__call__`` builds a tcgen05 TiledMma
(``sm100_utils.make_trivial_tiled_mma``, one CTA or a CTA pair), the staged UMMA smem layouts, the
cluster layout and one SM100 TMA load per operand (``make_tiled_tma_atom_A/B``), and launches
``kernel``, which allocates the accumulator's Tensor Memory and makes the tcgen05.ld copy the
epilogue warps use.  Only the objects matter to symlayout: the body computes nothing.

    symlayout dsl tests/data/dsl_kernels/blackwell_dense_gemm.py --entry BlackwellGemm.__call__ \\
        --shape M=4096,N=4096,K=4096 --dtype f16
"""
import cuda.bindings.driver as cuda

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.blackwell_helpers as sm100_utils
from cutlass.cute.nvgpu import tcgen05
from cutlass.memory import SmemAllocator, TmemAllocator, get_num_tmem_alloc_cols
from cutlass.tensor_utils import LayoutEnum


class BlackwellGemm:
    def __init__(self, acc_dtype=cutlass.Float32, mma_tiler_mn=(128, 256), cluster_shape_mn=(2, 1), pair=False,
                 stages=4, acc_stages=2, epi_n=32, b_stages=None):
        self.acc_dtype = acc_dtype
        self.mma_tiler_mn = mma_tiler_mn
        self.cluster_shape_mn = cluster_shape_mn
        self.cta_group = tcgen05.CtaGroup.TWO if pair else tcgen05.CtaGroup.ONE
        self.ab_stage = stages
        self.b_stage = b_stages or stages
        self.num_acc_stage = acc_stages
        self.epi_tile_n = epi_n
        self.epilogue_warp_id = (4, 5, 6, 7)
        self.threads_per_cta = 256

    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, stream: cuda.CUstream):
        a_major = LayoutEnum.from_tensor(a).mma_major_mode()
        b_major = LayoutEnum.from_tensor(b).mma_major_mode()
        tiled_mma = sm100_utils.make_trivial_tiled_mma(a.element_type, b.element_type, a_major, b_major,
                                                       self.acc_dtype, self.cta_group, self.mma_tiler_mn)
        k_tile = 4 * cute.size(tiled_mma.shape_mnk, mode=[2])
        mma_tiler = (*self.mma_tiler_mn, k_tile)
        a_smem_layout_staged = sm100_utils.make_smem_layout_a(tiled_mma, mma_tiler, a.element_type, self.ab_stage)
        b_smem_layout_staged = sm100_utils.make_smem_layout_b(tiled_mma, mma_tiler, b.element_type, self.b_stage)
        cluster_layout_vmnk = cute.tiled_divide(cute.make_layout((*self.cluster_shape_mn, 1)),
                                                (tiled_mma.thr_id.shape,))
        one_stage = (None, None, None, 0)
        tma_atom_a, tma_tensor_a = cute.nvgpu.make_tiled_tma_atom_A(
            sm100_utils.cluster_shape_to_tma_atom_A(self.cluster_shape_mn, tiled_mma.thr_id), a,
            cute.slice_(a_smem_layout_staged, one_stage), mma_tiler, tiled_mma, cluster_layout_vmnk.shape)
        tma_atom_b, tma_tensor_b = cute.nvgpu.make_tiled_tma_atom_B(
            sm100_utils.cluster_shape_to_tma_atom_B(self.cluster_shape_mn, tiled_mma.thr_id), b,
            cute.slice_(b_smem_layout_staged, one_stage), mma_tiler, tiled_mma, cluster_layout_vmnk.shape)
        acc_fake = tiled_mma.make_fragment_C(cute.append(tiled_mma.partition_shape_C(self.mma_tiler_mn),
                                                         self.num_acc_stage))
        self.tmem_columns = get_num_tmem_alloc_cols(acc_fake)
        self.c_layout = LayoutEnum.from_tensor(c)
        self.c_dtype = c.element_type
        grid = cute.ceil_div(c.shape, (*self.mma_tiler_mn, 1))
        self.kernel(tiled_mma, tma_atom_a, tma_tensor_a, tma_atom_b, tma_tensor_b, a_smem_layout_staged,
                    b_smem_layout_staged).launch(grid=grid, block=[self.threads_per_cta, 1, 1],
                                                 cluster=(*self.cluster_shape_mn, 1), stream=stream)

    @cute.kernel
    def kernel(self, tiled_mma: cute.TiledMma, tma_atom_a: cute.CopyAtom, mA_mkl: cute.Tensor,
               tma_atom_b: cute.CopyAtom, mB_nkl: cute.Tensor, a_smem_layout_staged: cute.ComposedLayout,
               b_smem_layout_staged: cute.ComposedLayout):
        smem = SmemAllocator()
        holder = smem.allocate_array(cutlass.Int32, 1)
        tmem = TmemAllocator(holder, barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=128),
                             allocator_warp_id=self.epilogue_warp_id[0])
        tmem.allocate(self.tmem_columns)
        tmem.wait_for_alloc()
        acc = tiled_mma.make_fragment_C(cute.append(tiled_mma.partition_shape_C(self.mma_tiler_mn),
                                                    self.num_acc_stage))
        cta_m = self.mma_tiler_mn[0] // cute.size(tiled_mma.thr_id.shape)
        epi_tile = (cta_m, self.epi_tile_n)
        acc_epi = cute.flat_divide(acc[((None, None), 0, 0, 0)], epi_tile)
        t2r_atom = sm100_utils.get_tmem_load_op((cta_m, self.mma_tiler_mn[1], 64), self.c_layout, self.c_dtype,
                                                self.acc_dtype, epi_tile, cute.size(tiled_mma.thr_id.shape) == 2)
        tiled_copy_t2r = tcgen05.make_tmem_copy(t2r_atom, acc_epi[(None, None, 0, 0)])
