"""A small flash-attention-2 forward tiling in the style of CuTe DSL kernels (test input of ``symlayout dsl --entry``).

Written for symlayout's tests (no code copied): one TiledMma for both GEMMs (S = Q K^T, O = P V), swizzled
smem tiles for Q, K, V and O (O reusing Q's buffer), one 128-bit cp.async TiledCopy for Q, K and V, a
128-bit store for O; the kernel body builds the ldmatrix copies (V read as V^T through a composed view of
sV) and partitions the smem tensors with every copy.  Only the objects matter: nothing is computed.

    symlayout dsl tests/data/dsl_kernels/flash_attention_v2.py --entry FlashAttentionForward.__call__ \\
        --shape B=1,S=4096,H=16,D=128 --tensor mQ=B,S,H,D --tensor mK=B,S,H,D --tensor mV=B,S,H,D \\
        --tensor mO=B,S,H,D --dtype f16
"""
import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync, warp
from cutlass.memory import SmemAllocator


class FlashAttentionForward:
    def __init__(self, head_dim=128, m_block_size=128, n_block_size=64, num_threads=128):
        self.head_dim = head_dim
        self.m_block_size, self.n_block_size = m_block_size, n_block_size
        self.num_threads = num_threads

    @cute.jit
    def __call__(self, mQ: cute.Tensor, mK: cute.Tensor, mV: cute.Tensor, mO: cute.Tensor):
        dtype = mQ.element_type
        hd = self.head_dim
        k_block = 64 if hd % 64 == 0 else 32
        swizzle_bits = 3 if k_block == 64 else 2
        sQ_layout_atom = cute.make_composed_layout(cute.make_swizzle(swizzle_bits, 3, 3), 0,
                                                   cute.make_layout((8, k_block), stride=(k_block, 1)))
        sQ_layout = cute.tile_to_shape(sQ_layout_atom, (self.m_block_size, hd), (0, 1))
        sKV_layout = cute.tile_to_shape(sQ_layout_atom, (self.n_block_size, hd), (0, 1))
        sO_layout = sQ_layout

        elems = 128 // dtype.width
        per_row = k_block // elems
        thr = cute.make_layout((self.num_threads // per_row, per_row), stride=(per_row, 1))
        val = cute.make_layout((1, elems))
        atom_async_copy = cute.make_copy_atom(cpasync.CopyG2SOp(cache_mode=cpasync.LoadCacheMode.GLOBAL), dtype,
                                              num_bits_per_copy=128)
        gmem_tiled_copy_QKV = cute.make_tiled_copy_tv(atom_async_copy, thr, val)
        atom_universal_copy = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=128)
        gmem_tiled_copy_O = cute.make_tiled_copy_tv(atom_universal_copy, thr, val)

        warps = self.num_threads // 32
        tiled_mma = cute.make_tiled_mma(warp.MmaF16BF16Op(dtype, cutlass.Float32, (16, 8, 16)), (warps, 1, 1),
                                        permutation_mnk=(warps * 16, 16, 16))
        self.kernel(mQ, mK, mV, mO, sQ_layout, sKV_layout, sO_layout, gmem_tiled_copy_QKV, gmem_tiled_copy_O,
                    tiled_mma).launch(grid=[1, 1, 1], block=[self.num_threads, 1, 1])

    @cute.kernel
    def kernel(self, mQ: cute.Tensor, mK: cute.Tensor, mV: cute.Tensor, mO: cute.Tensor,
               sQ_layout: cute.ComposedLayout, sKV_layout: cute.ComposedLayout, sO_layout: cute.ComposedLayout,
               gmem_tiled_copy_QKV: cute.TiledCopy, gmem_tiled_copy_O: cute.TiledCopy, tiled_mma: cute.TiledMma):
        tidx, _, _ = cute.arch.thread_idx()
        dtype = mQ.element_type
        smem = SmemAllocator()
        sQ = smem.allocate_tensor(dtype, sQ_layout, 16)
        sK = smem.allocate_tensor(dtype, sKV_layout, 16)
        sV = smem.allocate_tensor(dtype, sKV_layout, 16)
        sVt = cute.composition(sV, cute.make_layout((self.head_dim, self.n_block_size),
                                                    stride=(self.n_block_size, 1)))
        gmem_thr_copy_QKV = gmem_tiled_copy_QKV.get_slice(tidx)
        tQsQ = gmem_thr_copy_QKV.partition_D(sQ)
        tKsK = gmem_thr_copy_QKV.partition_D(sK)
        tVsV = gmem_thr_copy_QKV.partition_D(sV)

        smem_copy_atom_QK = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(transpose=False, num_matrices=4), dtype)
        smem_copy_atom_V = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(transpose=True, num_matrices=4), dtype)
        smem_tiled_copy_Q = cute.make_tiled_copy_A(smem_copy_atom_QK, tiled_mma)
        smem_tiled_copy_K = cute.make_tiled_copy_B(smem_copy_atom_QK, tiled_mma)
        smem_tiled_copy_V = cute.make_tiled_copy_B(smem_copy_atom_V, tiled_mma)
        tSsQ = smem_tiled_copy_Q.get_slice(tidx).partition_S(sQ)
        tSsK = smem_tiled_copy_K.get_slice(tidx).partition_S(sK)
        tOsVt = smem_tiled_copy_V.get_slice(tidx).partition_S(sVt)

        # epilogue: O through shared memory (Q's buffer), then to global memory
        sO = cute.make_tensor(sQ.iterator, sO_layout)
        smem_tiled_copy_O = cute.make_tiled_copy_C(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype),
                                                   tiled_mma)
        taccOsO = smem_tiled_copy_O.get_slice(tidx).partition_D(sO)
        tOsO = gmem_tiled_copy_O.get_slice(tidx).partition_S(sO)
