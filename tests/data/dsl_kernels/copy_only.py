"""A copy-only CuTe DSL kernel: no TiledMma, a TiledCopy loads a tile of X into registers and another
stores it to Y (test input of ``symlayout dsl --entry``; written for symlayout's tests, no code copied).

    symlayout dsl tests/data/dsl_kernels/copy_only.py --entry scale_rows \\
        --shape M=1024,N=1024 --tensor mX=M,N --tensor mY=M,N --dtype f16

``--arg threads_down_columns=True`` orders the threads down the tile's columns: each warp request
then spans 32 rows (``coalescing`` refuted).
"""
import cutlass
import cutlass.cute as cute


@cute.kernel
def scale_rows_kernel(gX: cute.Tensor, gY: cute.Tensor, tiled_load: cute.TiledCopy, tiled_store: cute.TiledCopy):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    tile_x = gX[((None, None), bidx)]
    tile_y = gY[((None, None), bidx)]
    src = tiled_load.get_slice(tidx).partition_S(tile_x)
    dst = tiled_store.get_slice(tidx).partition_D(tile_y)
    regs = cute.make_fragment_like(src)
    cute.copy(tiled_load, src, regs)
    regs.store(regs.load() + regs.load())
    cute.copy(tiled_store, regs, dst)


@cute.jit
def scale_rows(mX: cute.Tensor, mY: cute.Tensor, threads_down_columns: cutlass.Constexpr = False):
    vec = 128 // mX.element_type.width
    # a warp: one row of 32 vectors, or (down the columns) 32 rows of one 16-byte vector each
    threads = cute.make_ordered_layout((32, 8) if threads_down_columns else (8, 32),
                                       order=(0, 1) if threads_down_columns else (1, 0))
    values = cute.make_ordered_layout((1, vec), order=(1, 0))
    tiler_mn, tv = cute.make_layout_tv(threads, values)
    load = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mX.element_type, num_bits_per_copy=128)
    store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mY.element_type)    # auto-vectorising
    tiled_load = cute.make_tiled_copy_tv(load, threads, values)
    tiled_store = cute.make_tiled_copy_tv(store, threads, values)
    gX = cute.zipped_divide(mX, tiler_mn)
    gY = cute.zipped_divide(mY, tiler_mn)
    scale_rows_kernel(gX, gY, tiled_load, tiled_store).launch(grid=[cute.size(gX, mode=[1]), 1, 1],
                                                              block=[cute.size(tv, mode=[0]), 1, 1])
