// Does an sm_90 GPU (H100/H200) take the packed tensor-map types, and where does TMA put them? (task tma4)
//
// symlayout models CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B / 16U4_ALIGN16B / 16U6_ALIGN16B from cuda.h alone (the
// driver documentation sets no compute-capability condition on them; nothing is measured). For each type this
// program (1) encodes a 2-D tensor map with cuTensorMapEncodeTiled and prints the CUresult, (2) if it encodes,
// loads one box with cp.async.bulk.tensor into shared memory pre-filled with 0xEE, waits on an mbarrier expecting
// `tx` bytes (argv[1]: "smem" = the bytes the box takes in shared memory, "gmem" = its packed bytes), and compares
// every smem byte with symlayout's model:
//   16U4_ALIGN8B : packed both sides, rows of box0/2 bytes back to back (no swizzle);
//   16U4_ALIGN16B: 16 fp4 (8 bytes) of global memory to each 16-byte smem chunk, bytes 8..15 of a chunk untouched;
//   16U6_ALIGN16B: 16 fp6 (12 bytes) to each 16-byte chunk, bytes 12..15 untouched.
// Output: one line per type: encode result, whether the barrier completed, mismatching data bytes, gap bytes that
// were overwritten. Build and run (docs/hardware/tma-subbyte-run.sh):
//   nvcc -std=c++17 -arch=sm_90a tma-subbyte-sm90.cu -o tma-subbyte && ./tma-subbyte smem && ./tma-subbyte gmem
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <vector>

using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                            const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                            CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

constexpr int ROWS = 8, SMEM = 4096;

__global__ void load(const __grid_constant__ CUtensorMap map, uint32_t tx, uint8_t* out, int* done) {
  __shared__ alignas(128) uint8_t buf[SMEM];
  __shared__ alignas(8) uint64_t bar;
  for (int i = threadIdx.x; i < SMEM; i += blockDim.x) buf[i] = 0xEE;
  uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(buf));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;");
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(tx));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(s), "l"(&map), "r"(0), "r"(0), "r"(b) : "memory");
    uint32_t ok = 0;
    for (long it = 0; it < 20000000 && !ok; ++it)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                   : "=r"(ok) : "r"(b));
    *done = ok;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < SMEM; i += blockDim.x) out[i] = buf[i];
}

struct Case { const char* name; CUtensorMapDataType type; int bits; int chunk_bytes; int box0; };

int main(int argc, char** argv) {
  bool gmem_tx = argc > 1 && !strcmp(argv[1], "gmem");
  cudaDriverEntryPointQueryResult q;
  void* fn = nullptr;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      fn == nullptr) { printf("no cuTensorMapEncodeTiled\n"); return 1; }
  Encode encode = reinterpret_cast<Encode>(fn);
  int dev; cudaDeviceProp p; cudaGetDevice(&dev); cudaGetDeviceProperties(&p, dev);
  printf("device %s sm_%d%d, tx = %s bytes\n", p.name, p.major, p.minor, gmem_tx ? "packed (gmem)" : "smem");
  const Case cases[] = {{"16U4_ALIGN8B", CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B, 4, 8, 256},
                        {"16U4_ALIGN16B", CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B, 4, 16, 128},
                        {"16U6_ALIGN16B", CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B, 6, 16, 128}};
  for (const Case& c : cases) {
    int cols = 256;                                      // elements a row (a multiple of 128)
    int row_bytes = cols * c.bits / 8;                   // 128 (fp4) or 192 (fp6): multiples of 32
    std::vector<uint8_t> host(ROWS * row_bytes);
    for (size_t i = 0; i < host.size(); ++i) host[i] = uint8_t((i * 37 + i / 97) & 0xFF) | 1;   // never 0xEE
    uint8_t *g, *out; int* done;
    cudaMalloc(&g, host.size()); cudaMalloc(&out, SMEM); cudaMalloc(&done, sizeof(int));
    cudaMemcpy(g, host.data(), host.size(), cudaMemcpyHostToDevice);
    cudaMemset(done, 0, sizeof(int));
    CUtensorMap map;
    cuuint64_t dim[2] = {cuuint64_t(cols), ROWS}, stride[1] = {cuuint64_t(row_bytes)};
    cuuint32_t box[2] = {cuuint32_t(c.box0), ROWS}, es[2] = {1, 1};
    CUresult r = encode(&map, c.type, 2, g, dim, stride, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("%s: cuTensorMapEncodeTiled -> CUresult %d\n", c.name, int(r)); continue; }
    int packed_row = c.box0 * c.bits / 8;                // bytes of one box row in global memory
    int data = 16 * c.bits / 8;                          // bytes of 16 elements
    int smem_row = c.box0 / 16 * c.chunk_bytes;          // bytes of one box row in shared memory (model)
    uint32_t tx = uint32_t((gmem_tx ? packed_row : smem_row) * ROWS);
    load<<<1, 128>>>(map, tx, out, done);
    cudaError_t e = cudaDeviceSynchronize();
    std::vector<uint8_t> sm(SMEM); int ok = 0;
    cudaMemcpy(sm.data(), out, SMEM, cudaMemcpyDeviceToHost); cudaMemcpy(&ok, done, sizeof(int), cudaMemcpyDeviceToHost);
    int bad = 0, gaps = 0, first = -1;
    for (int row = 0; row < ROWS; ++row)
      for (int ch = 0; ch < c.box0 / 16; ++ch)
        for (int k = 0; k < c.chunk_bytes; ++k) {
          int at = row * smem_row + ch * c.chunk_bytes + k;
          if (k < data) {
            if (sm[at] != host[row * row_bytes + ch * data + k]) { ++bad; if (first < 0) first = at; }
          } else if (sm[at] != 0xEE) {
            ++gaps;
          }
        }
    printf("%s: encoded, kernel %s, barrier %s (tx %u), %d data bytes differ from the model (first at smem byte %d), "
           "%d gap bytes overwritten\n", c.name, cudaGetErrorString(e), ok ? "completed" : "TIMED OUT", tx, bad, first,
           gaps);
    cudaFree(g); cudaFree(out); cudaFree(done);
  }
  return 0;
}
