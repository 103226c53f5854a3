"""A producer writes a K-major swizzled tile into shared memory and ``wgmma`` reads it, in ONE kernel,
at a tile base that is 1024-byte aligned or only 128-byte aligned (issue 26: "both swizzle the absolute
address").

A tile of ``64 x Kt`` half_t (A) and ``8 x Kt`` half_t (B), ``Kt * 2`` bytes = the swizzle span
(SW128: 64, SW64: 32, SW32: 16 elements); one of them lands at ``base + off`` (``base`` 1024-byte
aligned, ``off`` a multiple of 128), the other on the 1024-byte grid, by one of three producers:

* ``tma``: ``cp.async.bulk.tensor.2d`` with a tensor map of the mode's swizzle (the hardware places
  every 16-byte chunk);
* ``st_abs``: each thread stores 16-byte chunks at ``Swizzle(base + off + o)`` -- CuTe's swizzle
  pointer (``smem_ptr_swizzle``), the absolute address;
* ``st_rel``: ``base + off + Swizzle(o)`` -- the offset inside the tile swizzled
  (``as_position_independent_swizzle_tensor``, the CuTe tutorial's ``cp.async`` producer).

Then ``wgmma.mma_async.m64n8k16.f32.f16.f16`` reads A and B through descriptors whose start address
is the tile's (advanced 32 bytes per K block, CuTe's ``DescriptorIterator``) with ``base_offset = 0``
(what ``make_gmma_desc`` writes), and the accumulators are compared exactly with ``A @ B^T`` (small
integers) and with the PTX model's prediction (:mod:`symlayout.arch.gmma` reading the image the
producer's model leaves, :mod:`symlayout.arch.tma` for TMA).

GPU side imports: numpy, CuPy (inside functions), :mod:`symlayout.arch` (no z3).
"""
from __future__ import annotations

import itertools

from ..arch import gmma, tma

PRODUCERS = ("tma", "st_abs", "st_rel")
MODES = {"128B": 3, "64B": 2, "32B": 1}          # log2 of the 16-byte chunks of a swizzle row
ROWS = {"A": 64, "B": 8}
#: B starts this many bytes past the base: after the largest A tile (64 rows of 128 bytes) at the largest offset
B_AFTER_A = 9216

_SOURCE = r"""
typedef unsigned long long u64; typedef unsigned int u32; typedef unsigned char u8;
__device__ __forceinline__ u32 smem_addr(const void* p) {
  u32 r; asm("{\n.reg .u64 a;\ncvta.to.shared.u64 a, %1;\ncvt.u32.u64 %0, a;\n}\n" : "=r"(r) : "l"(p)); return r;
}
__device__ __forceinline__ u32 swz(u32 a, int b) { return a ^ ((a >> 3) & (((1u << b) - 1u) << 4)); }
__device__ __forceinline__ void store_tile(u8* sm, u32 sbase, int off, const u8* g, int bytes, int b, int rel) {
  for (int c = threadIdx.x; c < bytes / 16; c += blockDim.x) {
    const u32 o = 16u * c;
    const u32 at = rel ? (u32)off + swz(o, b) : swz(sbase + (u32)off + o, b) - sbase;
    *(uint4*)(sm + at) = *(const uint4*)(g + o);
  }
}
extern "C" __global__ void __launch_bounds__(128, 1) tma_wgmma(
    const void* mapA, const void* mapB, const u8* gA, const u8* gB, int producer, int b, int span,
    int offA, int offB, int kblocks, u64 descA, u64 descB, float* out, u8* dump, int dump_bytes, int* status) {
  extern __shared__ __align__(1024) u8 smem_raw[];
  const u32 raw = smem_addr(smem_raw);
  const u32 pad = (1024u - (raw & 1023u)) & 1023u;
  u8* sm = smem_raw + pad;
  const u32 sbase = raw + pad;
  const u32 mb = sbase + dump_bytes;
  const int t = threadIdx.x;
  for (int i = t; i < dump_bytes; i += 128) sm[i] = 0xFF;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(mb) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (producer == 0) {
    if (t == 0) {
      asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(mapA) : "memory");
      asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(mapB) : "memory");
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(mb), "r"(72 * span) : "memory");
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                   :: "r"(sbase + offA), "l"(mapA), "r"(0), "r"(0), "r"(mb) : "memory");
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                   :: "r"(sbase + offB), "l"(mapB), "r"(0), "r"(0), "r"(mb) : "memory");
    }
    u32 done = 0;
    const long long t0 = clock64();
    while (!done && clock64() - t0 < 2000000000LL) {
      asm volatile("{\n.reg .pred P;\nmbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\nselp.u32 %0, 1, 0, P;\n}\n"
                   : "=r"(done) : "r"(mb), "r"(0) : "memory");
    }
    if (t == 0) status[0] = done ? 1 : -1;
  } else {
    store_tile(sm, sbase, offA, gA, 64 * span, b, producer == 2);
    store_tile(sm, sbase, offB, gB, 8 * span, b, producer == 2);
    if (t == 0) status[0] = 1;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int k = 0; k < kblocks; ++k) {
    const u64 dA = descA + (u64)(((sbase + offA + 32 * k) & 0x3FFFF) >> 4);
    const u64 dB = descB + (u64)(((sbase + offB + 32 * k) & 0x3FFFF) >> 4);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(dA), "l"(dB), "r"(k) : "memory");
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int r = 0; r < 4; ++r) out[4 * t + r] = d[r];
  __syncthreads();
  for (int i = t; i < dump_bytes; i += 128) dump[i] = sm[i];
}
"""


def swizzle(addr: int, b: int) -> int:
    """CuTe ``Swizzle<b, 4, 3>`` on a byte address.

    >>> swizzle(0x80, 3), swizzle(0x80, 1), swizzle(0x100, 1)
    (144, 144, 256)
    """
    return addr ^ ((addr >> 3) & (((1 << b) - 1) << 4))


def tile_values(rows: int, kt: int, seed: int):
    """Small integers (exact in half_t and in the f32 sums), ``rows x kt``."""
    import numpy as np
    return np.random.default_rng(seed).integers(-3, 4, size=(rows, kt))


def producer_image(producer: str, mode: str, off: int, vals, region: int):
    """The model's shared image (bytes from the 1024-aligned base) after ``producer`` wrote the
    row-major ``vals`` (half_t, K contiguous) at ``off``: TMA by :func:`symlayout.arch.tma.box_landing`,
    the stores by the swizzle of the absolute address or of the offset inside the tile."""
    import numpy as np
    b = MODES[mode]
    rows, kt = vals.shape
    raw = vals.astype(np.float16).view(np.uint8).reshape(-1)
    img = np.full(region, 0xFF, dtype=np.uint8)
    if producer == "tma":
        for (k, r), a in tma.box_landing(off, (kt, rows), 2, mode).items():
            o = 2 * (r * kt + k)
            img[a:a + 2] = raw[o:o + 2]
        return img
    for c in range(rows * kt * 2 // 16):
        o = 16 * c
        at = off + swizzle(o, b) if producer == "st_rel" else swizzle(off + o, b)
        img[at:at + 16] = raw[o:o + 16]
    return img


def descriptor(mode: str) -> gmma.MatrixDescriptor:
    """CuTe's K-major swizzled descriptor without its start address: LBO 1 (unused), SBO = 8 rows of
    the span, base_offset 0."""
    return gmma.MatrixDescriptor(0, 16, 8 * tma.SWIZZLE_SPAN_BYTES[mode], 0, mode)


def wgmma_model(img, mode: str, off_a: int, off_b: int, kblocks: int):
    """``D[m, n]`` the PTX model says wgmma computes from the image (each K block's operands read by
    :func:`symlayout.arch.gmma.element_address` with the block's start address)."""
    import numpy as np
    half = img.view(np.uint8)

    def read(off, rows, kb):
        d = descriptor(mode)
        d = gmma.MatrixDescriptor(off + 32 * kb, d.leading_byte_offset, d.stride_byte_offset, 0, mode)
        out = np.zeros((rows, 16))
        for r, k in itertools.product(range(rows), range(16)):
            a = gmma.element_address(d, "K", "f16", r, k)
            out[r, k] = half[a:a + 2].view(np.float16)[0]
        return out
    D = np.zeros((64, 8))
    for kb in range(kblocks):
        A, B = read(off_a, 64, kb), read(off_b, 8, kb)
        D += A @ B.T
    return D


def accumulators(out):
    """``D[m, n]`` of the 128 threads' four f32 accumulators (m64n8 layout: warp ``w`` rows ``16w..``,
    lane ``l`` row ``l/4`` (+8 for registers 2, 3), columns ``2(l%4)`` and ``+1``)."""
    import numpy as np
    D = np.full((64, 8), np.nan)
    for t in range(128):
        w, lane = divmod(t, 32)
        for r in range(4):
            D[16 * w + lane // 4 + 8 * (r // 2), 2 * (lane % 4) + r % 2] = out[4 * t + r]
    return D


def experiments() -> list:
    """``(producer, mode, operand, offset)``: every producer and swizzle mode with A or B at each of the
    eight 128-byte offsets, the other operand 1024-byte aligned (with both at one offset, a producer that
    permutes K alike in A and B would leave the sum over K unchanged)."""
    return [(p, m, op, off) for m in MODES for p in PRODUCERS for op in ("A", "B") for off in range(0, 1024, 128)]


def offsets(operand: str, off: int) -> tuple[int, int]:
    """Byte offsets of A and B from the 1024-byte aligned base."""
    return (off, B_AFTER_A) if operand == "A" else (0, B_AFTER_A + off)


def run(log=None) -> dict:
    """Every experiment on the GPU (needs sm_90a)."""
    import ctypes

    import numpy as np

    # lazy: the CUDA side (CuPy) only when a GPU run is asked for; the model half runs without it
    from . import cuda
    from .probe_sm90 import _encode_tensor_map  # lazy: as above
    cp = cuda.load_cupy()
    mod = cuda.compile_module(_SOURCE, cc=cuda.compute_capability(), suffix="a", name="e2e_sm90.cu")
    lib = ctypes.CDLL("libcuda.so.1")
    results = []
    for i, (producer, mode, operand, off) in enumerate(experiments()):
        span = tma.SWIZZLE_SPAN_BYTES[mode]
        kt = span // 2
        A, B = tile_values(64, kt, 2 * i), tile_values(8, kt, 2 * i + 1)
        gA = cp.asarray(A.astype(np.float16))
        gB = cp.asarray(B.astype(np.float16))
        maps = []
        for g, rows in ((gA, 64), (gB, 8)):
            res, m = _encode_tensor_map(lib, ctypes, {"dtype": "UINT16", "global_dim": (kt, rows),
                                                      "global_strides": (span,), "box_dim": (kt, rows),
                                                      "swizzle": mode}, int(g.data.ptr))
            if res:
                raise RuntimeError(f"cuTensorMapEncodeTiled returned {res}")
            maps.append(cp.asarray(np.frombuffer(m, dtype=np.uint8)))
        off_a, off_b = offsets(operand, off)
        region = B_AFTER_A + 1024 + 8 * span + 1024
        out = cp.zeros(512, dtype=cp.float32)
        dump = cp.zeros(region, dtype=cp.uint8)
        status = cp.zeros(1, dtype=cp.int32)
        d = descriptor(mode)
        base = d.encode()
        cuda.launch(mod, "tma_wgmma", 1, 128,
                    (maps[0], maps[1], gA.view(cp.uint8), gB.view(cp.uint8), np.int32(PRODUCERS.index(producer)),
                     np.int32(MODES[mode]), np.int32(span), np.int32(off_a), np.int32(off_b), np.int32(kt // 16),
                     np.uint64(base), np.uint64(base), out, dump, np.int32(region), status),
                    shared_mem=region + 1024 + 64)
        D = accumulators(cp.asnumpy(out))
        img = cp.asnumpy(dump)
        want = producer_image(producer, mode, off_a, A, region)
        want[off_b:off_b + 8 * span] = producer_image(producer, mode, off_b, B, region)[off_b:off_b + 8 * span]
        model_d = wgmma_model(img, mode, off_a, off_b, kt // 16)
        ref = A @ B.T
        r = {"producer": producer, "swizzle": mode, "operand": operand, "offset": off, "mbarrier": int(status.get()[0]),
             "image_vs_producer_model": int((img != want).sum()),
             "wrong_products": int((D != ref).sum()),
             "wgmma_vs_ptx_model": int((D != model_d).sum())}
        r["status"] = "pass" if r["wrong_products"] == 0 else "fail"
        results.append(r)
        if log:
            print(r, file=log, flush=True)
    return {"meta": cuda.device_info(), "results": results}


def report_markdown(res: dict) -> str:
    """One row per producer and swizzle mode: at which offsets wgmma got the right product."""
    lines = ["| producer | swizzle | operand off the 1024-byte grid | offsets (bytes from a 1024-byte boundary) with "
             "A @ B^T exact | offsets with wrong products | image = producer model | wgmma = PTX model |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    rows: dict = {}
    for r in res["results"]:
        rows.setdefault((r["producer"], r["swizzle"], r["operand"]), []).append(r)
    for (p, m, op), rs in rows.items():
        ok = [str(r["offset"]) for r in rs if r["status"] == "pass"]
        bad = [f"{r['offset']} ({r['wrong_products']}/512)" for r in rs if r["status"] != "pass"]
        img = all(r["image_vs_producer_model"] == 0 for r in rs)
        mdl = all(r["wgmma_vs_ptx_model"] == 0 for r in rs)
        lines.append(f"| {p} | {m} | {op} | {', '.join(ok) or '-'} | {', '.join(bad) or '-'} | {'yes' if img else 'NO'} "
                     f"| {'yes' if mdl else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    import json
    import os
    import sys
    out = (argv or sys.argv[1:] or [None])[0]
    res = run(log=sys.stderr)
    md = report_markdown(res)
    print(md)
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "e2e_sm90.json"), "w") as f:
            json.dump(res, f, indent=1, default=str)
        with open(os.path.join(out, "e2e_sm90.md"), "w") as f:
            f.write(md)
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main())
