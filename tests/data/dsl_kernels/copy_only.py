"""A copy-only CuTe DSL kernel: no TiledMma, a TiledCopy loads a tile of X into registers and another
stores it to Y (test input of ``symlayout dsl --entry``; written for symlayout's tests, no code copied).

    symlayout dsl tests/data/dsl_kernels/copy_only.py --entry scale_rows \\
        --shape M=1024,N=1024 --tensor mX=M,N --tensor mY=M,N --dtype f16

``--arg threads_down_columns=True`` orders the threads down the tile's columns: each warp request
then spans 32 rows (``coalescing`` refuted).  ``--arg base_align=B`` makes the kernel state the alignment
of X's base pointer itself (``cute.make_ptr(..., assumed_align=B)``), as kernels taking raw pointers do.
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
def scale_rows(mX: cute.Tensor, mY: cute.Tensor, threads_down_columns: cutlass.Constexpr = False,
               base_align: cutlass.Constexpr = None):
    if cutlass.const_expr(base_align is not None):
        mX = cute.make_tensor(cute.make_ptr(mX.element_type, mX.iterator.toint(), cute.AddressSpace.gmem,
                                            assumed_align=base_align), mX.layout)
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


@cute.kernel
def add_row_kernel(gX: cute.Tensor, gW: cute.Tensor, gY: cute.Tensor, tiled: cute.TiledCopy):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    thr = tiled.get_slice(tidx)
    tile_x, tile_w = thr.partition_S(gX[((None, None), bidx)]), thr.partition_S(gW[((None, None), bidx)])
    tile_y = thr.partition_D(gY[((None, None), bidx)])
    rx, rw = cute.make_fragment_like(tile_x), cute.make_fragment_like(tile_w)
    cute.copy(tiled, tile_x, rx)
    cute.copy(tiled, tile_w, rw)      # the row vector W, the same for every row: a broadcast (stride-0) tile
    rx.store(rx.load() + rw.load())
    cute.copy(tiled, rx, tile_y)


@cute.jit
def add_row(mX: cute.Tensor, mW: cute.Tensor, mY: cute.Tensor):
    """Y = X + W with W of shape (N,) added to every row."""
    threads = cute.make_ordered_layout((8, 32), order=(1, 0))
    values = cute.make_ordered_layout((1, 128 // mX.element_type.width), order=(1, 0))
    tiler_mn, tv = cute.make_layout_tv(threads, values)
    tiled = cute.make_tiled_copy_tv(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mX.element_type,
                                                        num_bits_per_copy=128), threads, values)
    rows_w = cute.make_tensor(mW.iterator, cute.make_layout(mX.shape, stride=(0, 1)))
    gX, gW, gY = (cute.zipped_divide(t, tiler_mn) for t in (mX, rows_w, mY))
    add_row_kernel(gX, gW, gY, tiled).launch(grid=[cute.size(gX, mode=[1]), 1, 1],
                                             block=[cute.size(tv, mode=[0]), 1, 1])


@cute.kernel
def row_slices_kernel(mX: cute.Tensor, mY: cute.Tensor, tiled: cute.TiledCopy, n: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    thr = tiled.get_slice(tidx)
    gX = cute.local_tile(mX, tiler=(1, n), coord=(bidx, 0))[0, None]     # one row of n elements
    gY = cute.local_tile(mY, tiler=(1, n), coord=(bidx, 0))[0, None]
    tXgX, tYgY = thr.partition_S(gX), thr.partition_D(gY)
    tXrX = cute.make_fragment_like(tXgX)
    for i in range(cute.size(tXrX, mode=[1])):
        cute.autovec_copy(tXgX[None, i], tXrX[None, i])     # slice i of every thread's partition
    for i in range(cute.size(tXrX, mode=[1])):
        cute.autovec_copy(tXrX[None, i], tYgY[None, i])


@cute.jit
def copy_row_slices(mX: cute.Tensor, mY: cute.Tensor, elems_per_thread: cutlass.Constexpr = 8):
    """Each CTA copies one row with a 1-D TiledCopy of 128 threads, slice by slice (``cute.autovec_copy``
    of ``tXgX[None, i]``, as CUTLASS's ``cta_norm`` loads); ``--arg elems_per_thread=1`` makes each access
    2 bytes (``coalescing`` still holds: a warp reads 64 contiguous bytes)."""
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mX.element_type, num_bits_per_copy=128)
    tiled = cute.make_tiled_copy_tv(atom, cute.make_layout(128), cute.make_layout(elems_per_thread))
    row_slices_kernel(mX, mY, tiled, mX.shape[1]).launch(grid=[mX.shape[0], 1, 1], block=[128, 1, 1])


@cute.kernel
def stage_rows_kernel(gX: cute.Tensor, tiled: cute.TiledCopy, s_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    sX = smem.allocate_tensor(gX.element_type, s_layout, byte_alignment=16)
    thr = tiled.get_slice(tidx)
    tXgX, tXsX = thr.partition_S(gX[((None, None), bidx)]), thr.partition_D(sX)
    atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), gX.element_type, num_bits_per_copy=128)
    cute.copy(atom, tXgX, tXsX)          # cp.async on the TiledCopy's partitions, as QuACK's norms stage X


@cute.jit
def stage_rows(mX: cute.Tensor, smem_pitch: cutlass.Constexpr = 0):
    """Each CTA stages an 8x256 tile of X into shared memory with cp.async (no MMA: ``[g2s.gX]`` of a copy-only
    kernel); ``--arg smem_pitch=P`` pads the smem rows to P elements (P = 264: 16 bytes of padding per row)."""
    threads = cute.make_ordered_layout((8, 32), order=(1, 0))
    values = cute.make_ordered_layout((1, 128 // mX.element_type.width), order=(1, 0))
    tiler_mn, tv = cute.make_layout_tv(threads, values)
    tiled = cute.make_tiled_copy_tv(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mX.element_type,
                                                        num_bits_per_copy=128), threads, values)
    s_layout = cute.make_layout(tiler_mn, stride=(smem_pitch or tiler_mn[1], 1))
    gX = cute.zipped_divide(mX, tiler_mn)
    stage_rows_kernel(gX, tiled, s_layout).launch(grid=[cute.size(gX, mode=[1]), 1, 1],
                                                  block=[cute.size(tv, mode=[0]), 1, 1])
