"""A CuTe DSL host *function* (``symlayout dsl ... --entry run_mma``): a TiledMma and an smem layout built on
the host, the ldmatrix copy in the kernel body.  Written for symlayout's tests."""
import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import warp


@cute.kernel
def mma_kernel(mA: cute.Tensor, sA_layout: cute.ComposedLayout, tiled_mma: cute.TiledMma):
    tidx, _, _ = cute.arch.thread_idx()
    tiled_copy_s2r_A = cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), mA.element_type),
                                              tiled_mma)


@cute.jit
def run_mma(mA: cute.Tensor, mB: cute.Tensor, warps_m: cutlass.Constexpr = 2):
    tiled_mma = cute.make_tiled_mma(warp.MmaF16BF16Op(mA.element_type, cutlass.Float32, (16, 8, 16)),
                                    cute.make_layout((warps_m, 2, 1)), permutation_mnk=(warps_m * 16, 32, 16))
    sA_layout = cute.tile_to_shape(cute.make_composed_layout(cute.make_swizzle(2, 3, 3), 0,
                                                             cute.make_layout((8, 32), stride=(32, 1))),
                                   (warps_m * 16, 32), (0, 1))
    mma_kernel(mA, sA_layout, tiled_mma).launch(grid=[1, 1, 1], block=[warps_m * 64, 1, 1])
