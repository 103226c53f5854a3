// CuTe C++'s own addresses for the s2r copy of A in CUTLASS's CuTe DSL Ampere fp8 GEMM
// (examples/python/CuTeDSL/cute/ampere/kernel/dense_gemm/tensorop_gemm.py, e4m3, atom_layout_mnk=(2,2,1)):
// make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, float_e4m3_t>, TiledMMA of SM89_16x8x32_F32E4M3E4M3F32_TN
// (2,2,1), Tile<32,32,32>) over one stage of its smem tile, 128x64 bytes row-major, swizzled by
// Sw<2,4,S> (the kernel's S<2,4,4> on byte addresses; S = 3 the conflict-free alternative).
// Prints "S t m k byte": for swizzle shift S, thread t, copy instruction (m, k), the smem byte its
// ldmatrix row starts at.  Host-only: g++ -std=c++17 -I<cutlass include> -I<cuda include dirs>.
// (Written for symlayout's issue 30 check; tests/frontends/test_fp8_ldsm_cute.py compiles and reads it.)
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cstdio>
using namespace cute;

template <int S>
void addresses() {
  auto mma = make_tiled_mma(SM89_16x8x32_F32E4M3E4M3F32_TN{}, Layout<Shape<_2, _2, _1>>{}, Tile<_32, _32, _32>{});
  auto s2r = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, float_e4m3_t>{}, mma);
  auto sA = composition(Swizzle<2, 4, S>{}, make_layout(make_shape(Int<128>{}, Int<64>{}), make_stride(Int<64>{}, Int<1>{})));
  auto coords = make_identity_tensor(make_shape(Int<128>{}, Int<64>{}));
  for (int t = 0; t < int(size(mma)); ++t) {
    auto part = s2r.get_slice(t).partition_S(coords);     // ((CPY_V), CPY_M, CPY_K) coordinates (m, k)
    for (int m = 0; m < int(size<1>(part)); ++m)
      for (int k = 0; k < int(size<2>(part)); ++k)
        printf("%d %d %d %d %d\n", S, t, m, k, int(sA(part(0, m, k))));
  }
}

int main() {
  addresses<4>();
  addresses<3>();
}
