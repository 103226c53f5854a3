"""TMA of the sub-byte types (task tma4): CuTe's ``to_CUtensorMapDataType`` (cute/arch/copy_sm90_desc.hpp, under
CUDA >= 12.7) maps packed ``float_e2m1_t`` to ``CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B``, the fp6 types and CUTLASS's
16-byte containers (``float_e2m1_unpacksmem_t``, ...) to ``16U4_ALIGN16B`` / ``16U6_ALIGN16B``; the driver's rules
for those types (``cuda.h``, ``cuTensorMapEncodeTiled``) are :func:`symlayout.arch.tma.packed_problems`.

The C++ oracle is nvcc (host side only): ``make_tma_copy`` over a ``float_e2m1_t`` / container tensor compiles
(the bits one TMA moves, ``NumBitsPerTMA`` of the atom, printed from its type without encoding a descriptor) and
over ``float_ue4m3_t`` it is CuTe's ``static_assert "Unknown TMA Format!"``."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cute_cpp import cute_site
from symlayout.arch import tma as arch_tma
from symlayout.atoms.gmma import layout_atom
from symlayout.atoms.tma import TmaCopyError, make_tma_copy
from symlayout.config import load_config, loads_config
from symlayout.prove.engine import prove_config
from symlayout.prove.verdict.result import PROVED, REFUTED

ROOT = Path(__file__).resolve().parents[1]
BS = ROOT / "proofs" / "blackwell" / "blockscaled"

PROGRAM = """#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
#include <cstdio>
using namespace cute;
template <class T> struct Tma;           // Copy_Traits<SM90_TMA_LOAD, NumBitsPerTMA, AuxTmaParams<..., box basis, ...>>
template <class Op, class N, class G, class B, class S> struct Tma<Copy_Traits<Op, N, AuxTmaParams<G, B, S>>> {
  static void show() { printf("%d ", int(N::value)); print(shape(remove_cvref_t<B>{})); printf("\\n"); }
};
template <class T, class SL>
void box(SL sl) {                       // the atom's type alone: no descriptor is encoded
  auto g = make_tensor(make_gmem_ptr((T*)nullptr), make_layout(make_shape(4096, 4096), LayoutRight{}));
  Tma<typename decltype(make_tma_copy(SM90_TMA_LOAD{}, g, sl, product_each(shape(sl))))::Traits>::show();
}
int main() {
  box<cutlass::float_e2m1_t>(
      tile_to_shape(UMMA::Layout_K_SW128_Atom<cutlass::float_e2m1_t>{}, make_shape(Int<128>{}, Int<256>{})));
  box<cutlass::detail::float_e2m1_unpacksmem_t>(
      tile_to_shape(UMMA::Layout_K_SW128_Atom<uint8_t>{}, make_shape(Int<128>{}, Int<128>{})));
#ifdef REJECTED
  box<cutlass::float_ue4m3_t>(
      tile_to_shape(UMMA::Layout_K_SW128_Atom<uint8_t>{}, make_shape(Int<128>{}, Int<128>{})));
#endif
}
"""


def _nvcc(tmp_path, *defines):
    nvcc, inc = shutil.which("nvcc"), cute_site()
    if nvcc is None or inc is None:
        pytest.skip("nvcc / CUTLASS headers not available")
    (tmp_path / "p.cu").write_text(PROGRAM)
    return subprocess.run([nvcc, "-std=c++17", "-arch=sm_90a", "-w", *defines, f"-I{inc[0]}", str(tmp_path / "p.cu"),
                           "-o", str(tmp_path / "p")], capture_output=True, text=True)


def _model_bits(value_type, atom_type, tile):
    sl = layout_atom("K_SW128", atom_type).tile_to_shape(tile)
    t = make_tma_copy(value_type, ((4096, 4096), (4096, 1)), sl)
    return t, t.box_dim[0] * t.box_dim[1] * 4


def test_cute_compiles_tma_of_packed_fp4_and_containers_and_the_box_is_cutes(tmp_path):
    out = _nvcc(tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = subprocess.run([str(tmp_path / "p")], capture_output=True, text=True, check=True).stdout.splitlines()
    packed, bits = _model_bits("float_e2m1_t", "float_e2m1_t", (128, 256))
    assert packed.data_type == "16U4_ALIGN8B" and packed.box_dim == (256, 128)
    container, cbits = _model_bits("float_e2m1_unpacksmem_t", "uint8_t", (128, 128))
    assert container.data_type == "16U4_ALIGN16B" and container.box_dim == (128, 128)
    assert lines == [f"{bits} (_256,_128)", f"{cbits} (_128,_128)"]       # CuTe's bits per TMA and box basis


def test_cute_rejects_tma_of_ue4m3_and_so_does_symlayout(tmp_path):
    out = _nvcc(tmp_path, "-DREJECTED")
    assert out.returncode != 0 and "Unknown TMA Format!" in out.stderr
    sl = layout_atom("K_SW128", "uint8_t").tile_to_shape((128, 128))
    with pytest.raises(TmaCopyError, match="Unknown TMA Format!"):
        make_tma_copy("float_ue4m3_t", ((4096, 4096), (4096, 1)), sl)


def test_data_types_and_their_bits():
    assert [arch_tma.data_type_value(t) for t in ("16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B")] == [13, 14, 15]
    assert arch_tma.element_bits("16U4_ALIGN16B") == (4, 8)


@pytest.mark.parametrize("dtype, dims, strides, box, swizzle, address, problem", [
    ("16U4_ALIGN8B", (255, 8), (128,), (256, 8), "128B", 0, "global dimension 0 is 255, not a multiple of 2"),
    ("16U4_ALIGN8B", (256, 8), (128,), (16, 8), "none", 0, "inner box dimension 8 bytes is not a multiple of 16"),
    ("16U4_ALIGN8B", (512, 8), (256,), (512, 8), "128B", 0, "box dimension 0 is 512, not in [1, 256]"),
    ("16U4_ALIGN16B", (128, 8), (64,), (128, 8), "128B", 16, "global address 16 is not 32-byte aligned"),
    ("16U4_ALIGN16B", (192, 8), (96,), (128, 8), "128B", 0, "global dimension 0 is 192, not a multiple of 128"),
    ("16U4_ALIGN16B", (128, 8), (80,), (128, 8), "128B", 0, "global stride 80 (dimension 1) is not a multiple of 32"),
    ("16U4_ALIGN16B", (128, 8), (64,), (64, 8), "none", 0, "box dimension 0 is 64, not 128"),
    ("16U6_ALIGN16B", (128, 8), (96,), (128, 8), "64B", 0, "swizzle 64B is not supported with 16U6_ALIGN16B"),
])
def test_the_driver_rules_of_the_packed_types(dtype, dims, strides, box, swizzle, address, problem):
    probs = arch_tma.encode_tiled_problems(dtype, dims, strides, box, swizzle=swizzle, global_address=address)
    assert any(p.startswith(problem) for p in probs), probs
    ok = {"16U4_ALIGN8B": ((256, 8), (128,), (256, 8)), "16U4_ALIGN16B": ((128, 8), (64,), (128, 8)),
          "16U6_ALIGN16B": ((128, 8), (96,), (128, 8))}[dtype]
    assert arch_tma.encode_tiled_problems(dtype, *ok, swizzle="128B") == []


def _results(cfg):
    return {(r.property, r.operand): r for r in prove_config(cfg).results}


def test_nvfp4_tma_load_proves():
    """Regression: [tma.X] of float_e2m1_t was refuted as "CuTe rejects" (no CUtensorMapDataType)."""
    r = _results(load_config(str(BS / "nvfp4_1sm_128x128x256_tma.toml")))
    for op in "AB":
        assert all(r[(p, op)].status == PROVED for p in ("tma", "coverage", "exactly_once", "in_bounds")), op
    assert "box (256, 128)" in r[("tma", "A")].detail


def test_a_tensor_map_swizzle_that_is_not_the_fp4_layouts_is_refuted():
    text = (BS / "nvfp4_1sm_128x128x256_tma.toml").read_text()
    text = text.replace('box = "(128,256)"', 'box = "(128,256)"\nswizzle = "Sw<2,4,3>"', 1)
    r = _results(loads_config(text, "t.toml"))[("tma", "A")]
    assert r.status == REFUTED and "the tensor map swizzles 64B but [smem.A]" in r.counterexample.message


def test_packed_fp4_lands_where_its_byte_pair_does():
    """The nibble model of a 16U4_ALIGN8B load agrees with the byte model of the same rows as uint8_t: fp4 element
    (m, k) is in smem byte (m, k // 2) of the byte tile, low nibble for even k (TMA and CuTe's layout alike)."""
    import numpy as np
    from symlayout.tiled.tma import tma_model
    fp4 = tma_model("float_e2m1_t", ((1024, 4096), (4096, 1)), layout_atom("K_SW128", "float_e2m1_t")
                    .tile_to_shape((128, 256)), (128, 256))
    u8 = tma_model("uint8_t", ((1024, 2048), (2048, 1)), layout_atom("K_SW128", "uint8_t").tile_to_shape((128, 128)),
                   (128, 128))
    t4, in4, a4 = fp4.write_arrays(1024)
    _t8, _in8, a8 = u8.write_arrays(1024)
    assert in4.all() and fp4.per_byte == 2
    assert (a4 // 2 == np.repeat(a8, 2, axis=1)).all() and (a4 % 2 == t4[..., 1] % 2).all()
    assert (fp4.cute_addresses(1024, np.zeros(t4.shape[:-1], dtype=np.int64), t4) == a4).all()
    assert fp4.where(2 * 100 + 1) == "smem byte 100 (high nibble)"


def test_container_box_that_breaks_a_16u4_rule_is_refuted():
    r = _results(load_config(str(BS / "pitfalls" / "fp4_containers_tma_sw64.toml")))[("tma", "B")]
    assert r.status == REFUTED
    assert "cuTensorMapEncodeTiled would reject the map" in r.counterexample.message
    assert "box dimension 0 is 64, not 128 (16U4_ALIGN16B)" in r.counterexample.message


def test_run_time_k_must_keep_dimension_0_a_multiple_of_128_for_containers():
    text = (BS / "mxf8xmxf4_1sm_128x128x128_tma.toml").read_text()
    text = text.replace("K = { min = 128, max = 65536, multiple_of = 128 }", "K = { min = 64, max = 65536, multiple_of = 64 }")
    r = _results(loads_config(text, "t.toml"))[("tma", "B")]
    assert r.status == REFUTED and r.counterexample.params == {"K": 64}
    assert "global dimension 0 is 64 elements (16U4_ALIGN16B)" in r.counterexample.message
