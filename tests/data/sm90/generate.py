"""Generate the SM90 conformance cases (``tests/data/sm90/*.jsonl``) from CuTe C++.

Every expectation is printed by CuTe itself (the ``nvidia-cutlass`` headers),
compiled host-only with g++ and static ``Int<N>`` shapes.  Nothing here needs a
GPU or the CUDA driver: ``make_tma_copy`` calls ``cuTensorMapEncodeTiled``,
which the generated program defines itself to record the arguments CuTe passes
(``-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL`` so that CuTe calls it directly, and
``-D__CUDACC_VER_MAJOR__=12`` so that the host path that encodes the map is
compiled); on the host ``cast_smem_ptr_to_uint`` returns 0, so every descriptor
start address here is relative to the smem tensor's base (the partition offset
is recorded separately).

Files and ops (one JSON object per line, ``{"id", "op", "args", "expect"}``;
layouts in CuTe's print form without the underscores of static integers, layout
values as ``{"layout", "table"}`` as in ``shared/conformance``):

* ``gmma_atoms.jsonl``: ``gmma_layout_atom`` ``[kind, type]``,
  ``gmma_tile_to_shape`` ``[kind, type, shape, order]``, ``make_gmma_desc``
  ``[major, kind, type, tile, block, coord]`` and ``make_gmma_desc_rejected``
  (snippets CuTe refuses to compile, with the ``static_assert`` text), and
  ``gmma_mma_atom`` ``[name]``.
* ``gmma_partitions.jsonl``: ``gmma_tiled_mma`` and ``gmma_partition``
  (``partition_A/B/C``, fragments, descriptors of the SS fragments).
* ``tma.jsonl``: ``make_tma_copy`` (the recorded encode arguments, the tiler) and
  ``make_tma_copy_rejected`` (compile-time or run-time assertion).

Usage (about two minutes on two cores)::

    SYMLAYOUT_CUTE_SITE=/path/to/site python tests/data/sm90/generate.py

``SYMLAYOUT_CUTE_SITE`` is a ``pip --target`` site holding ``cutlass_library``
(the headers) and ``nvidia/cuda_runtime``, ``nvidia/cuda_cccl``,
``nvidia/cuda_nvcc`` includes; without it the installed ``cutlass_library`` is used.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parents[1]) not in sys.path:
    sys.path.insert(0, str(HERE.parents[1]))               # tests/: cute_cpp

from cute_cpp import cute_site  # noqa: E402

TYPES = {"half_t": 16, "bfloat16_t": 16, "tfloat32_t": 32, "float": 32, "float_e4m3_t": 8, "float_e5m2_t": 8,
         "int8_t": 8, "uint8_t": 8}
ATOMS = {"K_INTER": ((8, 128), "K"), "K_SW32": ((8, 256), "K"), "K_SW64": ((8, 512), "K"),
         "K_SW128": ((8, 1024), "K"), "MN_INTER": ((128, 8), "MN"), "MN_SW32": ((256, 8), "MN"),
         "MN_SW64": ((512, 8), "MN"), "MN_SW128": ((1024, 8), "MN")}


def include_flags() -> list[str]:
    """``-I`` flags of the CuTe and CUDA headers (tests/cute_cpp.py finds them)."""
    dirs = cute_site()
    if dirs is None:
        raise SystemExit("CuTe headers not found: set SYMLAYOUT_CUTE_SITE or install nvidia-cutlass (and g++)")
    return [f"-I{d}" for d in dirs]


CXXFLAGS = ["-std=c++17", "-O0", "-w", "-D__CUDACC_VER_MAJOR__=12", "-D__CUDACC_VER_MINOR__=8",
            "-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL"]

PRELUDE = r"""
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/arch/mma_sm90_gmma_ext.hpp>
#include <cute/atom/mma_traits_sm90_gmma_ext.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cstdio>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>
using namespace cute;

static std::string strip(std::string const& s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i + 1 < s.size() && (isdigit((unsigned char)s[i+1]) || s[i+1] == '-')) continue;
    r += s[i];
  }
  return r;
}
template <class X> std::string S(X const& x) { std::ostringstream os; os << x; return strip(os.str()); }
template <class Sw, int B, class L> std::string S(ComposedLayout<Sw, smem_ptr_flag_bits<B>, L> const& c) {
  return S(c.layout_a()) + " o smem_ptr[" + std::to_string(B) + "b](unset) o " + S(c.layout_b());
}
template <class L> std::string TBL(L const& l) {
  long long n = (long long)size(l);
  if (n > 4096) return "null";
  std::string r = "[";
  for (long long i = 0; i < n; ++i) { if (i) r += ","; r += std::to_string((long long)l(i)); }
  return r + "]";
}
template <class L> std::string LV(L const& l) { return "{\"layout\":\"" + S(l) + "\",\"table\":" + TBL(l) + "}"; }
static std::string Q(std::string const& s) { return "\"" + s + "\""; }
static std::string H(unsigned long long v) { char b[32]; snprintf(b, sizeof b, "\"0x%016llx\"", v); return b; }
static void emit(std::string const& id, std::string const& op, std::string const& args, std::string const& expect) {
  printf("@@{\"id\":\"%s\",\"op\":\"%s\",\"args\":%s,\"expect\":{%s}}\n", id.c_str(), op.c_str(), args.c_str(), expect.c_str());
}
static std::string desc_json(GmmaDescriptor const& d) {
  return "{\"value\":" + H(d.desc_) + ",\"start_address\":" + std::to_string(d.bitfield.start_address_) +
         ",\"leading_byte_offset\":" + std::to_string(d.bitfield.leading_byte_offset_) +
         ",\"stride_byte_offset\":" + std::to_string(d.bitfield.stride_byte_offset_) +
         ",\"base_offset\":" + std::to_string(d.bitfield.base_offset_) +
         ",\"layout_type\":" + std::to_string(d.bitfield.layout_type_) + "}";
}
template <class T> const char* tname();
template <> const char* tname<half_t>() { return "half_t"; }
template <> const char* tname<bfloat16_t>() { return "bfloat16_t"; }
template <> const char* tname<tfloat32_t>() { return "tfloat32_t"; }
template <> const char* tname<float>() { return "float"; }
template <> const char* tname<float_e4m3_t>() { return "float_e4m3_t"; }
template <> const char* tname<float_e5m2_t>() { return "float_e5m2_t"; }
template <> const char* tname<int8_t>() { return "int8_t"; }
template <> const char* tname<uint8_t>() { return "uint8_t"; }
template <> const char* tname<int32_t>() { return "int32_t"; }
template <> const char* tname<uint32_t>() { return "uint32_t"; }
template <> const char* tname<uint64_t>() { return "uint64_t"; }
template <class T> T* buffer() { static T b[1 << 18]; return b; }

static std::string g_tma;
extern "C" CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dt, cuuint32_t rank, void* gaddr,
    const cuuint64_t* gdim, const cuuint64_t* gstr, const cuuint32_t* box, const cuuint32_t* es,
    CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  std::string r = "\"data_type\":" + std::to_string((int)dt) + ",\"rank\":" + std::to_string(rank);
  r += ",\"global_dim\":["; for (unsigned i = 0; i < rank; ++i) { if (i) r += ","; r += std::to_string((unsigned long long)gdim[i]); }
  r += "],\"global_strides\":["; for (unsigned i = 0; i + 1 < rank; ++i) { if (i) r += ","; r += std::to_string((unsigned long long)gstr[i]); }
  r += "],\"box_dim\":["; for (unsigned i = 0; i < rank; ++i) { if (i) r += ","; r += std::to_string(box[i]); }
  r += "],\"element_strides\":["; for (unsigned i = 0; i < rank; ++i) { if (i) r += ","; r += std::to_string(es[i]); }
  r += "],\"interleave\":" + std::to_string((int)il) + ",\"swizzle\":" + std::to_string((int)sw) +
       ",\"l2_promotion\":" + std::to_string((int)l2) + ",\"oob_fill\":" + std::to_string((int)oob);
  g_tma = r;
  return CUDA_SUCCESS;
}
"""


def _sh(shape) -> str:
    if isinstance(shape, (tuple, list)):
        return "make_shape(" + ",".join(_sh(s) for s in shape) + ")"
    return f"Int<{shape}>{{}}"


def _step(order) -> str:
    return "Step<" + ",".join(f"_{o}" for o in order) + ">{}"


def _j(x) -> str:
    return json.dumps(x, separators=(",", ":")).replace('"', '\\"')


def _atom_type(kind: str, t: str) -> str:
    return f"GMMA::Layout_{kind}_Atom<{t}>"


def _atom_elems(kind: str, t: str) -> tuple[int, int]:
    (r, c), _ = ATOMS[kind]
    b = TYPES[t]
    return (r // b, c) if kind.startswith("MN") else (r, c // b)


# ---------------------------------------------------------------------------
# gmma_atoms.jsonl
# ---------------------------------------------------------------------------


def atoms_program() -> str:
    body = []
    n = 0
    for kind in ATOMS:
        for t in TYPES:
            n += 1
            body.append(f"""  {{ auto a = {_atom_type(kind, t)}{{}};
    emit("sm90-atom-{n:03d}", "gmma_layout_atom", "{_j([kind, t])}",
         "\\"print\\":" + Q(S(a)) + ",\\"layout\\":" + LV(a.layout_b()) +
         ",\\"position_independent\\":" + Q(S(as_position_independent_swizzle_layout(a)))); }}""")
    n = 0
    for kind in ATOMS:
        for t in ("half_t", "tfloat32_t", "float_e4m3_t"):
            r, c = _atom_elems(kind, t)
            for shape, order in (((128, 64), (1, 2)), ((64, 128), (2, 1)), ((128, 64, 3), (1, 2, 3)),
                                 ((256, 128, 2), (2, 1, 3)), ((64, 32), (1, 2))):
                if shape[0] % r or shape[1] % c:
                    continue
                n += 1
                body.append(f"""  {{ auto l = tile_to_shape({_atom_type(kind, t)}{{}}, {_sh(shape)}, {_step(order)});
    emit("sm90-tile-{n:03d}", "gmma_tile_to_shape", "{_j([kind, t, list(shape), list(order)])}",
         "\\"print\\":" + Q(S(l)) + ",\\"layout\\":" + LV(l.layout_b())); }}""")
    n = 0
    for kind, ((_, _), major) in ATOMS.items():
        for t in ("half_t", "bfloat16_t", "tfloat32_t", "float_e4m3_t", "int8_t"):
            r, c = _atom_elems(kind, t)
            kin = 256 // TYPES[t]
            for tile, blk, coords in (((128, 64), (64, kin), ((0, 0), (1, 1), (0, 3))),
                                      ((64, 128), (64, kin), ((0, 1), (0, 5))),
                                      ((256, 64), (128, kin), ((1, 2),)),
                                      ((64, 64), (8, kin), ((3, 1),)), ((64, 64), (24, kin), ((1, 0),))):
                if tile[0] % r or tile[1] % c or tile[1] % blk[1] or tile[0] % blk[0]:
                    continue
                for co in coords:
                    if co[0] >= tile[0] // blk[0] or co[1] >= tile[1] // blk[1]:
                        continue
                    n += 1
                    body.append(f"""  {{ auto sT = make_tensor(make_smem_ptr(buffer<{t}>()), tile_to_shape({_atom_type(kind, t)}{{}}, {_sh(tile)}));
    auto blk = local_tile(sT, {_sh(blk)}, make_coord({co[0]}, {co[1]}));
    auto d = GMMA::make_gmma_desc<GMMA::Major::{major}>(blk);
    emit("sm90-desc-{n:03d}", "make_gmma_desc", "{_j([major, kind, t, list(tile), list(blk), list(co)])}",
         "\\"tile\\":" + Q(S(sT.layout())) + ",\\"block\\":" + LV(blk.layout()) + ",\\"offset\\":" +
         std::to_string(raw_pointer_cast(blk.data()) - buffer<{t}>()) + ",\\"desc\\":" + desc_json(d)); }}""")
    for i, name in enumerate(MMA_ATOM_NAMES, start=1):
        cpp = name if "<" in name or "_S32" in name else name + "<>"     # integer GMMA ops are not templates
        body.append(f"""  {{ using Op = {cpp}; using Tr = MMA_Traits<Op>;
    emit("sm90-mma-{i:03d}", "gmma_mma_atom", "{_j([name])}",
         "\\"Shape_MNK\\":" + Q(S(typename Tr::Shape_MNK{{}})) + ",\\"ThrID\\":" + LV(typename Tr::ThrID{{}}) +
         ",\\"LayoutA_TV\\":" + LV(typename Tr::ALayout{{}}) + ",\\"LayoutB_TV\\":" + LV(typename Tr::BLayout{{}}) +
         ",\\"LayoutC_TV\\":" + LV(typename Tr::CLayout{{}}) +
         ",\\"ValTypes\\":[" + Q(tname<typename Tr::ValTypeD>()) + "," + Q(tname<typename Tr::ValTypeA>()) + "," +
         Q(tname<typename Tr::ValTypeB>()) + "," + Q(tname<typename Tr::ValTypeC>()) + "]" +
         ",\\"ARegisters\\":[" + Q(tname<std::remove_extent_t<typename Op::ARegisters>>()) + "," + std::to_string(std::extent_v<typename Op::ARegisters>) + "]" +
         ",\\"CRegisters\\":[" + Q(tname<std::remove_extent_t<typename Op::CRegisters>>()) + "," + std::to_string(std::extent_v<typename Op::CRegisters>) + "]"); }}""")
    return PRELUDE + "int main() {\n" + "\n".join(body) + "\n}\n"


MMA_ATOM_NAMES = [
    "SM90_64x8x16_F16F16F16_SS<GMMA::Major::K,GMMA::Major::K>",
    "SM90_64x128x16_F32F16F16_RS<GMMA::Major::K,GMMA::Major::MN>",
    "SM90_64x256x16_F32BF16BF16_SS<GMMA::Major::MN,GMMA::Major::MN>",
    "SM90_64x8x8_F32TF32TF32_SS_TN", "SM90_64x64x8_F32TF32TF32_RS_TN", "SM90_64x256x8_F32TF32TF32_SS_TN",
    "SM90_64x16x32_F32E4M3E4M3_SS_TN", "SM90_64x128x32_F16E4M3E5M2_RS_TN", "SM90_64x256x32_F32E5M2E4M3_SS_TN",
    "SM90_64x64x32_F16E5M2E5M2_SS_TN", "SM90_64x32x32_S32S8S8_SS_TN", "SM90_64x128x32_S32U8S8_RS_TN",
    "SM90_64x96x32_S32S8U8_SS_TN_SATURATE", "SM90_64x24x32_F32E4M3E4M3_SS_TN",
]

# Snippets CuTe must refuse to compile: (name, declarations, expression, expected static_assert text)
REJECTED_DESC = [
    ("K desc on an MN-major atom", "auto sT = make_tensor(make_smem_ptr(buffer<half_t>()), tile_to_shape(GMMA::Layout_MN_SW128_Atom<half_t>{}, make_shape(_64{}, _16{})));",
     "GMMA::make_gmma_desc<GMMA::Major::K>(sT)", "Not a canonical GMMA_K Layout"),
    ("MN desc on a K-major atom", "auto sT = make_tensor(make_smem_ptr(buffer<half_t>()), tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_64{}, _64{})));",
     "GMMA::make_gmma_desc<GMMA::Major::MN>(local_tile(sT, make_shape(_64{}, _16{}), make_coord(0,0)))", "Not a canonical GMMA_MN Layout"),
    ("K block of 64 halves (K-size 8 uint128)", "auto sT = make_tensor(make_smem_ptr(buffer<half_t>()), tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_64{}, _64{})));",
     "GMMA::make_gmma_desc<GMMA::Major::K>(sT)", "Expected K-size 2"),
    ("MN-size 4", "auto sT = make_tensor(make_smem_ptr(buffer<half_t>()), tile_to_shape(GMMA::Layout_K_SW32_Atom<half_t>{}, make_shape(_8{}, _16{})));",
     "GMMA::make_gmma_desc<GMMA::Major::K>(local_tile(sT, make_shape(_4{}, _16{}), make_coord(0,0)))", "Expected MN-size multiple of 8"),
    ("row-major plain layout, K desc", "auto sT = make_tensor(make_smem_ptr(buffer<half_t>()), make_layout(make_shape(_64{}, _16{}), make_stride(_16{}, _1{})));",
     "GMMA::make_gmma_desc<GMMA::Major::K>(sT)", "Expected stride failure"),
    ("SM80 element swizzle", "auto sT = make_tensor(make_smem_ptr(buffer<half_t>()), tile_to_shape(composition(Swizzle<3,3,3>{}, make_layout(make_shape(_8{}, _64{}), make_stride(_64{}, _1{}))), make_shape(_64{}, _64{})));",
     "GMMA::make_gmma_desc<GMMA::Major::K>(local_tile(sT, make_shape(_64{}, _16{}), make_coord(0,0)))", ""),
    ("swizzle Sw<3,3,3> on the pointer", "auto sT = make_tensor(make_smem_ptr(buffer<half_t>()), composition(Swizzle<3,3,3>{}, smem_ptr_flag_bits<16>{}, make_layout(make_shape(_64{}, _16{}), make_stride(_64{}, _1{}))));",
     "GMMA::make_gmma_desc<GMMA::Major::K>(sT)", "Unsupported layout swizzle"),
    ("MN desc with K = 16 floats", "auto sT = make_tensor(make_smem_ptr(buffer<float>()), tile_to_shape(GMMA::Layout_MN_SW128_Atom<float>{}, make_shape(_64{}, _16{})));",
     "GMMA::make_gmma_desc<GMMA::Major::MN>(sT)", "Expected K-size 256/sizeof_bits<T>"),
    ("rank-3 tensor", "auto sT = make_tensor(make_smem_ptr(buffer<half_t>()), tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_64{}, _64{}, _2{})));",
     "GMMA::make_gmma_desc<GMMA::Major::K>(sT)", "rank-2"),
]


# ---------------------------------------------------------------------------
# gmma_partitions.jsonl
# ---------------------------------------------------------------------------

# (atom, atom layout, tile (M,N,K), stages, A atom kind, A order, B atom kind, B order, value types A,B, threads)
PARTITIONS = [
    ("SM90_64x128x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>", (2, 1, 1), (128, 128, 64), 2,
     "K_SW128", (1, 2, 3), "K_SW128", (1, 2, 3), "half_t", (0, 37, 127, 128, 255)),
    ("SM90_64x64x16_F32BF16BF16_SS<GMMA::Major::MN,GMMA::Major::MN>", (1, 1, 1), (64, 64, 64), 2,
     "MN_SW128", (2, 1, 3), "MN_SW128", (2, 1, 3), "bfloat16_t", (0, 77)),
    ("SM90_64x128x16_F16F16F16_SS<GMMA::Major::MN,GMMA::Major::K>", (2, 1, 1), (128, 128, 32), 3,
     "MN_SW64", (2, 1, 3), "K_SW64", (1, 2, 3), "half_t", (5, 200)),
    ("SM90_64x128x8_F32TF32TF32_SS_TN", (2, 1, 1), (128, 128, 32), 2,
     "K_SW128", (1, 2, 3), "K_SW128", (1, 2, 3), "tfloat32_t", (0, 130)),
    ("SM90_64x256x32_F32E4M3E4M3_SS_TN", (2, 1, 1), (128, 256, 128), 2,
     "K_SW128", (1, 2, 3), "K_SW128", (1, 2, 3), "float_e4m3_t", (3, 129)),
    ("SM90_64x64x16_F32F16F16_RS<GMMA::Major::K,GMMA::Major::MN>", (2, 1, 1), (128, 64, 64), 2,
     "K_SW128", (1, 2, 3), "MN_SW128", (2, 1, 3), "half_t", (0, 45, 160)),
    ("SM90_64x32x32_S32S8S8_SS_TN", (1, 1, 1), (64, 32, 64), 4,
     "K_SW64", (1, 2, 3), "K_SW64", (1, 2, 3), "int8_t", (0, 99)),
    ("SM90_64x64x16_F16F16F16_SS<GMMA::Major::K,GMMA::Major::K>", (1, 1, 1), (64, 64, 32), 2,
     "K_INTER", (1, 2, 3), "K_INTER", (1, 2, 3), "half_t", (0, 63)),
    ("SM90_64x64x16_F16F16F16_SS<GMMA::Major::MN,GMMA::Major::MN>", (1, 1, 1), (64, 64, 32), 2,
     "MN_INTER", (2, 1, 3), "MN_INTER", (2, 1, 3), "half_t", (0, 90)),
    ("SM90_64x32x16_F32BF16BF16_SS<GMMA::Major::K,GMMA::Major::MN>", (1, 1, 1), (64, 32, 64), 2,
     "K_SW32", (1, 2, 3), "MN_SW32", (2, 1, 3), "bfloat16_t", (0, 33)),
    ("SM90_64x64x32_F16E5M2E4M3_SS_TN", (1, 2, 1), (64, 128, 64), 2,
     "K_SW64", (1, 2, 3), "K_SW64", (1, 2, 3), "float_e5m2_t", (0, 131)),
    ("SM90_64x64x8_F32TF32TF32_RS_TN", (1, 1, 1), (64, 64, 32), 2,
     "K_SW128", (1, 2, 3), "K_SW128", (1, 2, 3), "tfloat32_t", (0, 17)),
    ("SM90_64x192x16_F32BF16BF16_SS<GMMA::Major::K,GMMA::Major::K>", (2, 1, 1), (128, 192, 64), 4,
     "K_SW128", (1, 2, 3), "K_SW128", (1, 2, 3), "bfloat16_t", (0, 255)),
]


def partitions_program() -> str:
    body = []
    for i, (atom, al, (M, N, K), st, ka, oa, kb, ob, t, threads) in enumerate(PARTITIONS, start=1):
        ss = "_SS" in atom
        ta = t
        tb = "float_e4m3_t" if "E5M2E4M3" in atom else t
        args = [atom, list(al), [M, N, K], st, ka, list(oa), kb, list(ob), ta, tb]
        body.append(f"""  {{ auto mma = make_tiled_mma({atom}{{}}, Layout<Shape<Int<{al[0]}>,Int<{al[1]}>,Int<{al[2]}>>>{{}});
    auto sLA = tile_to_shape({_atom_type(ka, ta)}{{}}, {_sh((M, K, st))}, {_step(oa)});
    auto sLB = tile_to_shape({_atom_type(kb, tb)}{{}}, {_sh((N, K, st))}, {_step(ob)});
    Tensor sA = make_tensor(make_smem_ptr(buffer<{ta}>()), sLA);
    Tensor sB = make_tensor(make_smem_ptr(buffer<{tb}>()), sLB);
    Tensor gC = make_tensor(make_gmem_ptr(buffer<float>()), make_layout(make_shape(Int<{M}>{{}}, Int<{N}>{{}})));
    emit("sm90-tmma-{i:03d}", "gmma_tiled_mma", "{_j(args)}",
         "\\"ThrLayoutVMNK\\":" + LV(mma.get_thr_layout_vmnk()) + ",\\"layoutA_TV\\":" + LV(mma.get_layoutA_TV()) +
         ",\\"layoutB_TV\\":" + LV(mma.get_layoutB_TV()) + ",\\"layoutC_TV\\":" + LV(mma.get_layoutC_TV()) +
         ",\\"tile_size\\":" + Q(S(tile_shape(mma))) + ",\\"size\\":" + std::to_string(size(mma)) +
         ",\\"sA\\":" + Q(S(sLA)) + ",\\"sB\\":" + Q(S(sLB)));""")
        for th in threads:
            frag_a = ""
            if ss:
                frag_a = f"""
      Tensor fA = thr.partition_fragment_A(sA);
      std::string da = "[";
      for (int e = 0; e < int(size(fA)) && e < 64; ++e) {{ if (e) da += ","; da += H(uint64_t(fA(e))); }}
      da += "]";
      ea += ",\\"fragment_A\\":" + LV(fA.layout()) + ",\\"descs_A\\":" + da;"""
            else:
                frag_a = f"""
      Tensor fA = thr.partition_fragment_A(sA(_,_,0));
      ea += ",\\"fragment_A\\":" + LV(fA.layout());"""
            body.append(f"""    {{ auto thr = mma.get_slice({th});
      Tensor pA = thr.partition_A(sA); Tensor pB = thr.partition_B(sB); Tensor pC = thr.partition_C(gC);
      std::string ea = "\\"partition_A\\":" + LV(pA.layout()) + ",\\"offset_A\\":" +
          std::to_string(raw_pointer_cast(pA.data()) - buffer<{ta}>());{frag_a}
      Tensor fB = thr.partition_fragment_B(sB);
      std::string db = "[";
      for (int e = 0; e < int(size(fB)) && e < 64; ++e) {{ if (e) db += ","; db += H(uint64_t(fB(e))); }}
      db += "]";
      ea += ",\\"partition_B\\":" + LV(pB.layout()) + ",\\"offset_B\\":" +
          std::to_string(raw_pointer_cast(pB.data()) - buffer<{tb}>()) + ",\\"fragment_B\\":" + LV(fB.layout()) +
          ",\\"descs_B\\":" + db + ",\\"partition_C\\":" + LV(pC.layout()) + ",\\"offset_C\\":" +
          std::to_string(raw_pointer_cast(pC.data()) - buffer<float>()) +
          ",\\"fragment_C\\":" + LV(thr.partition_fragment_C(gC).layout());
      emit("sm90-part-{i:03d}-t{th}", "gmma_partition", "{_j(args + [th])}", ea); }}""")
        body.append("  }")
    return PRELUDE + "int main() {\n" + "\n".join(body) + "\n}\n"


# ---------------------------------------------------------------------------
# tma.jsonl
# ---------------------------------------------------------------------------

# (name, value type, gmem shape (dynamic ints; "Int<n>" strings static), gmem stride, smem layout expr, cta tiler, op, cluster)
TMA_CASES = [
    ("K-major 128x64 SW128 half", "half_t", ("1024", "512"), ("512", "Int<1>"), ("K_SW128", (128, 64), (1, 2)), None, "SM90_TMA_LOAD", 1),
    ("MN-major 128x64 SW128 half, Step<2,1>", "half_t", ("1024", "512"), ("Int<1>", "1024"), ("MN_SW128", (128, 64), (2, 1)), None, "SM90_TMA_LOAD", 1),
    ("MN-major 128x64 SW128 half, col-major tiling", "half_t", ("1024", "512"), ("Int<1>", "1024"), ("MN_SW128", (128, 64), (1, 2)), None, "SM90_TMA_LOAD", 1),
    ("K-major 128x32 SW128 tf32", "tfloat32_t", ("256", "128"), ("128", "Int<1>"), ("K_SW128", (128, 32), (1, 2)), None, "SM90_TMA_LOAD", 1),
    ("K-major 128x128 SW128 e4m3", "float_e4m3_t", ("512", "1024"), ("1024", "Int<1>"), ("K_SW128", (128, 128), (1, 2)), None, "SM90_TMA_LOAD", 1),
    ("K-major 64x32 SW64 half", "half_t", ("256", "256"), ("256", "Int<1>"), ("K_SW64", (64, 32), (1, 2)), None, "SM90_TMA_LOAD", 1),
    ("K-major 64x16 SW32 half", "half_t", ("256", "64"), ("64", "Int<1>"), ("K_SW32", (64, 16), (1, 2)), None, "SM90_TMA_LOAD", 1),
    ("K-major 64x64 INTER half", "half_t", ("256", "256"), ("256", "Int<1>"), ("K_INTER", (64, 64), (1, 2)), None, "SM90_TMA_LOAD", 1),
    ("head dim 128: K-major 128x128 SW128 half", "half_t", ("4096", "128"), ("128", "Int<1>"), ("K_SW128", (128, 128), (1, 2)), None, "SM90_TMA_LOAD", 1),
    ("multicast 2", "half_t", ("1024", "512"), ("512", "Int<1>"), ("K_SW128", (128, 64), (1, 2)), None, "SM90_TMA_LOAD_MULTICAST", 2),
    ("multicast 4 MN-major", "bfloat16_t", ("1024", "512"), ("Int<1>", "1024"), ("MN_SW128", (128, 64), (2, 1)), None, "SM90_TMA_LOAD_MULTICAST", 4),
    ("batched (M,K,L)", "half_t", ("1024", "512", "8"), ("512", "Int<1>", "524288"), ("K_SW128", (128, 64), (1, 2)), (128, 64), "SM90_TMA_LOAD", 1),
    ("static K=64", "half_t", ("1024", "Int<64>"), ("Int<64>", "Int<1>"), ("K_SW128", (128, 64), (1, 2)), None, "SM90_TMA_LOAD", 1),
    ("plain row-major smem 64x32 half", "half_t", ("256", "256"), ("256", "Int<1>"), ("plain", (64, 32), (32, 1)), None, "SM90_TMA_LOAD", 1),
    ("K-major 512x64 SW128 half (box of 512 rows)", "half_t", ("1024", "512"), ("512", "Int<1>"), ("K_SW128", (512, 64), (1, 2)), None, "SM90_TMA_LOAD", 1),
    ("MN-major 64x32 SW64 half", "half_t", ("512", "256"), ("Int<1>", "512"), ("MN_SW64", (64, 32), (2, 1)), None, "SM90_TMA_LOAD", 1),
    ("rank-5 global tensor", "half_t", ("1024", "512", "4", "3", "2"), ("512", "Int<1>", "524288", "2097152", "6291456"),
     ("K_SW128", (128, 64), (1, 2)), (128, 64), "SM90_TMA_LOAD", 1),
    ("rank-6 global tensor (grouped)", "half_t", ("256", "64", "2", "3", "2", "2"),
     ("64", "Int<1>", "16384", "32768", "98304", "196608"), ("K_SW128", (128, 64), (1, 2)), (128, 64), "SM90_TMA_LOAD", 1),
    ("static contiguous modes merged", "half_t", ("Int<16>", "Int<16>", "64"), ("Int<1>", "Int<16>", "256"),
     ("plain", (16, 16), (1, 16)), (16, 16), "SM90_TMA_LOAD", 1),
    ("K-major 128x64 SW128 bf16 multicast 8", "bfloat16_t", ("2048", "512"), ("512", "Int<1>"), ("K_SW128", (128, 64), (1, 2)), None, "SM90_TMA_LOAD_MULTICAST", 8),
]

REJECTED_TMA = [
    ("SM80 element swizzle Sw<3,3,3>", "compile",
     "auto sl = tile_to_shape(composition(Swizzle<3,3,3>{}, make_layout(make_shape(_8{}, _64{}), make_stride(_64{}, _1{}))), make_shape(_128{}, _64{}));",
     "make_shape(1024, 512), make_stride(512, Int<1>{})", "Unsupported layout swizzle"),
    ("smem K-major, gmem MN-major", "run",
     "auto sl = tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_128{}, _64{}));",
     "make_shape(1024, 512), make_stride(Int<1>{}, 1024)", "Majorness of smem doesn't match majorness of gmem"),
    ("gmem row stride not a multiple of 16 bytes", "run",
     "auto sl = tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_128{}, _64{}));",
     "make_shape(1024, 500), make_stride(502, Int<1>{})", "Stride must be multiple of 16B"),
]


def _tma_smem(t: str, spec) -> str:
    kind, shape, order = spec
    if kind == "plain":
        return f"make_layout({_sh(shape)}, make_stride(Int<{order[0]}>{{}}, Int<{order[1]}>{{}}))"
    return f"tile_to_shape({_atom_type(kind, t)}{{}}, {_sh(shape)}, {_step(order)})"


def _dyn(x: str) -> str:
    """A static ``Int<n>`` or a run-time ``int``."""
    return x + "{}" if x.startswith("Int<") else f"int({x})"


def _tma_args(case) -> list:
    name, t, gshape, gstride, sspec, tiler, op, cluster = case
    return [name, t, list(gshape), list(gstride), [sspec[0], list(sspec[1]), list(sspec[2])],
            list(tiler) if tiler else None, op, cluster]


def tma_program() -> str:
    body = []
    for i, case in enumerate(TMA_CASES, start=1):
        name, t, gshape, gstride, sspec, tiler, op, cluster = case
        args = _tma_args(case)
        gs = "make_shape(" + ",".join(_dyn(x) for x in gshape) + ")"
        gd = "make_stride(" + ",".join(_dyn(x) for x in gstride) + ")"
        tiler_expr = _sh(tiler) if tiler else "product_each(shape(sl))"
        body.append(f"""  if (which == {i}) {{ g_tma.clear();
    auto sl = {_tma_smem(t, sspec)};
    Tensor g = make_tensor(make_gmem_ptr(buffer<{t}>()), {gs}, {gd});
    auto tma = make_tma_copy({op}{{}}, g, sl, {tiler_expr}, Int<{cluster}>{{}});
    emit("sm90-tma-{i:03d}", "make_tma_copy", "{_j(args)}",
         "\\"smem\\":" + Q(S(sl)) + "," + g_tma + ",\\"tiler\\":" + Q(S(typename decltype(tma)::Tiler_MN{{}})) +
         ",\\"tma_tensor_stride\\":" + Q(S(tma.get_tma_tensor(shape(g)).stride()))); }}""")
    return PRELUDE + "int main(int argc, char** argv) {\n  int which = argc > 1 ? atoi(argv[1]) : 0;\n" + \
        "\n".join(body) + "\n}\n"


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def compile_and_run(src: str, flags: list[str], tmp: Path, name: str, run: bool = True,
                    argv: tuple = ()) -> tuple[int, str]:
    cpp = tmp / f"{name}.cpp"
    exe = tmp / name
    if not exe.exists():
        cpp.write_text(src)
        p = subprocess.run(["g++", *CXXFLAGS, *flags, str(cpp), "-o", str(exe)], capture_output=True, text=True)
        if p.returncode != 0:
            return p.returncode, p.stderr
    if not run:
        return 0, ""
    r = subprocess.run([str(exe), *map(str, argv)], capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout + r.stderr


def _lines(out: str) -> list[dict]:
    return [json.loads(line[2:]) for line in out.splitlines() if line.startswith("@@")]


def _error_text(stderr: str, expected: str) -> str:
    msgs = re.findall(r"static assertion failed(?: with|:)? \"?([^\n\"]+)", stderr)
    msgs += re.findall(r"error: ([^\n]+)", stderr)
    for m in msgs:
        if expected and expected in m:
            return m.strip()
    return msgs[0].strip() if msgs else stderr.strip().splitlines()[-1] if stderr.strip() else ""


def main() -> int:
    flags = include_flags()
    out_atoms, out_parts, out_tma = [], [], []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        rc, out = compile_and_run(atoms_program(), flags, tmp, "atoms")
        if rc:
            print(out[-4000:], file=sys.stderr)
            return 1
        out_atoms += _lines(out)
        for i, (name, decl, expr, expect) in enumerate(REJECTED_DESC, start=1):
            src = PRELUDE + f"int main() {{ {decl}\n auto d = {expr};\n print(d); }}\n"
            rc, err = compile_and_run(src, flags, tmp, f"rej{i}", run=False)
            out_atoms.append({"id": f"sm90-descrej-{i:03d}", "op": "make_gmma_desc_rejected",
                              "args": [name, decl, expr],
                              "expect": {"compiles": rc == 0, "error": _error_text(err, expect) if rc else ""}})
        rc, out = compile_and_run(partitions_program(), flags, tmp, "parts")
        if rc:
            print(out[-4000:], file=sys.stderr)
            return 1
        out_parts += _lines(out)
        src = tma_program()
        for i, case in enumerate(TMA_CASES, start=1):      # one process per case: CuTe asserts at run time
            rc, out = compile_and_run(src, flags, tmp, "tma", argv=(i,))
            if rc and not os.path.exists(tmp / "tma"):
                print(out[-4000:], file=sys.stderr)
                return 1
            got = _lines(out)
            if rc == 0 and got:
                out_tma += got
            else:
                m = re.search(r"Assertion `(.+)' failed\.", out)
                out_tma.append({"id": f"sm90-tma-{i:03d}", "op": "make_tma_copy", "args": got[0]["args"] if got else
                                _tma_args(case), "expect": {"aborts": True, "assertion": m.group(1) if m else out[-300:]}})
        for i, (name, how, decl, gexpr, expect) in enumerate(REJECTED_TMA, start=1):
            src = PRELUDE + (f"int main() {{ {decl}\n Tensor g = make_tensor(make_gmem_ptr(buffer<half_t>()), {gexpr});\n"
                             f" auto tma = make_tma_copy(SM90_TMA_LOAD{{}}, g, sl);\n printf(\"@@ok\\n\"); }}\n")
            rc, out = compile_and_run(src, flags, tmp, f"tmarej{i}")
            if how == "compile":
                exp = {"compiles": "@@ok" in out, "error": _error_text(out, expect) if "@@ok" not in out else ""}
            else:
                m = re.search(r"Assertion `(.+)' failed\.", out)
                exp = {"compiles": True, "aborts": rc != 0, "assertion": m.group(1) if m else ""}
            out_tma.append({"id": f"sm90-tmarej-{i:03d}", "op": "make_tma_copy_rejected",
                            "args": [name, how, decl, gexpr], "expect": exp})
    for fname, rows in (("gmma_atoms.jsonl", out_atoms), ("gmma_partitions.jsonl", out_parts),
                        ("tma.jsonl", out_tma)):
        with open(HERE / fname, "w") as f:
            for r in rows:
                f.write(json.dumps(r, separators=(",", ":")) + "\n")
        print(f"{fname}: {len(rows)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
