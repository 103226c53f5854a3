"""The C++ front end with a compiler: headers from packages (or env paths), skipped when absent.

* an extraction that does not compile gives the compiler's first error on one line (runs whenever
  the CuTe headers and a compiler are present);
* a CUTLASS SM80 ``CollectiveMma`` written here from the wheel's headers (slow);
* flash-attention 2's ``kernel_traits.h`` for head dims 64 and 128 (slow; ``$SYMLAYOUT_FLASH_ATTN``);
* CUTLASS's ``DefaultGemmConfigurationToCutlass3Types`` SM80 f16 configurations (slow; ``$SYMLAYOUT_CUTLASS_SRC``).

Each extraction is compared with what the sources say (``frontend_expect``) and its version-1
part proved.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from frontend_expect import check_cutlass_sm80_f16, check_fa2_fwd, same_layout
from symlayout.config import loads_config
from symlayout.extract import ExtractError, extract
from symlayout.algebra.layout import Layout, tile_to_shape
from symlayout.prove.engine import prove_config

FA2 = "Flash_fwd_kernel_traits<{hd}, {bm}, {bn}, {w}, false, false, cutlass::{elem}>"
DEFAULT_CONFIG = ("cutlass::gemm::device::DefaultGemmConfigurationToCutlass3Types<cutlass::arch::OpClassTensorOp, "
                  "cutlass::arch::Sm80, cutlass::half_t, cutlass::layout::{a}, cutlass::half_t, cutlass::layout::{b}, "
                  "float, cutlass::layout::RowMajor, float>")


def prove_version1(docs):
    for d in docs:
        v1, _ = d.version1()
        rep = prove_config(loads_config(v1.to_toml(), path=d.key))
        assert rep.error is None and rep.results
        assert all(r.status == "proved" for r in rep.results), [(r.property, r.operand, r.status) for r in rep.results]


def test_compile_error_is_one_line(cute_headers, tmp_path):
    h = tmp_path / "broken_traits.h"
    h.write_text("#pragma once\n#include <cute/tensor.hpp>\nstruct Traits { using TiledMma = int }\n")
    with pytest.raises(ExtractError) as ei:
        extract(h, "Traits")
    msg = str(ei.value)
    assert "\n" not in msg
    assert msg.startswith(f"{h}: ") and "could not compile Traits: " in msg
    assert f"{h.name}:3:" in msg and "error:" in msg


def test_unknown_type_names_the_type(cute_headers, tmp_path):
    h = tmp_path / "traits.h"
    h.write_text("#pragma once\n#include <cute/tensor.hpp>\nstruct Traits {};\n")
    with pytest.raises(ExtractError, match=r"could not compile Traitz<1>: <generated probe>:\d+:\d+: error: .*Traitz"):
        extract(h, "Traitz<1>")


def test_cli_error_exit_code(cute_headers, tmp_path):
    h = tmp_path / "traits.h"
    h.write_text("struct Traits {};\n")
    r = subprocess.run([sys.executable, "-m", "symlayout.extract", str(h), "--type", "Traits"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "no TiledMma member found by convention" in r.stderr


# two instances of one generic traits template (what FA2's backward needed three runs for)
TWO_TRAITS = r"""
#pragma once
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/copy_atom.hpp>
template <int WarpsM>
struct Traits {
  using TiledMma = cute::TiledMMA<cute::MMA_Atom<cute::SM80_16x8x16_F32F16F16F32_TN>,
                                  cute::Layout<cute::Shape<cute::Int<WarpsM>, cute::_1, cute::_1>>>;
  using SmemLayoutA = decltype(cute::composition(cute::Swizzle<3, 3, 3>{},
      cute::Layout<cute::Shape<cute::Int<16 * WarpsM>, cute::_64>, cute::Stride<cute::_64, cute::_1>>{}));
  using SmemCopyAtomA = cute::Copy_Atom<cute::SM75_U32x4_LDSM_N, cutlass::half_t>;
};
"""


@pytest.mark.slow
def test_several_types_in_one_run_and_a_dropped_role(cute_headers, tmp_path, capsys):
    """--type and --types-from: one document per type, written beside -o; --member A.copy= drops the
    role (the file is then about the TiledMMA alone)."""
    from symlayout.cli import main
    h = tmp_path / "traits.h"
    h.write_text(TWO_TRAITS)
    listing = tmp_path / "types.txt"
    listing.write_text("# the second instance\nTraits<4>\n")
    rc = main(["extract", str(h), "--type", "Traits<2>", "--types-from", str(listing), "-o", str(tmp_path / "t.toml")])
    out, _ = capsys.readouterr()
    assert rc == 0 and out.split() == [str(tmp_path / "t_1.toml"), str(tmp_path / "t_2.toml")]
    import tomllib
    d2, d4 = (tomllib.loads((tmp_path / f"t_{i}.toml").read_text()) for i in (1, 2))
    assert (d2["mma"]["layout"], d4["mma"]["layout"]) == ("(2,1,1):(1,0,0)", "(4,1,1):(1,0,0)")
    assert d2["copy"]["A"]["smem"] == "Sw<3,3,3> o 0 o (32,64):(64,1)"
    rc = main(["extract", str(h), "--type", "Traits<2>", "--member", "A.copy="])
    out, _ = capsys.readouterr()
    assert rc == 0 and "[copy.A]" not in out and "[mma]" in out


# a kernel's own configuration of CUTLASS's SM80 mainloop (the kind of type a user passes to --type)
COLLECTIVE = r"""
#pragma once
#include <cute/tensor.hpp>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/collective/collective_mma.hpp>

namespace mykernel {
using namespace cute;
template <int Stages>
using Mainloop = cutlass::gemm::collective::CollectiveMma<
    cutlass::gemm::MainloopSm80CpAsync<Stages>, Shape<_128, _128, _64>,
    half_t, Stride<int64_t, _1, int64_t>, half_t, Stride<int64_t, _1, int64_t>,
    TiledMMA<MMA_Atom<SM80_16x8x16_F32F16F16F32_TN>, Layout<Shape<_2, _2, _1>>, Tile<_32, _32, _16>>,
    decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, half_t>{},
                             Layout<Shape<_16, _8>, Stride<_8, _1>>{}, Layout<Shape<_1, _8>>{})),
    decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{})),
    Copy_Atom<SM75_U32x4_LDSM_N, half_t>, cute::identity,
    decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, half_t>{},
                             Layout<Shape<_16, _8>, Stride<_8, _1>>{}, Layout<Shape<_1, _8>>{})),
    decltype(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_8, _64>, Stride<_64, _1>>{})),
    Copy_Atom<SM75_U32x4_LDSM_N, half_t>, cute::identity>;
}
"""


@pytest.mark.slow
def test_cutlass_sm80_collective(cute_headers, tmp_path):
    h = tmp_path / "my_mainloop.h"
    h.write_text(COLLECTIVE)
    ex = extract(h, "mykernel::Mainloop<4>")
    assert ex.probe.traits.startswith("cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm80CpAsync<4")
    (doc,) = ex.docs
    d = doc.to_dict()
    assert d["mma"] == {"atom": "SM80_16x8x16_F32F16F16F32_TN", "layout": "(2,2,1):(1,2,0)", "permutation": ["32", "32", "16"]}
    atom = loads_config('[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n')  # noqa: F841 - the loader is importable
    from frontend_expect import swizzle_atom
    for x in "AB":
        assert d["copy"][x]["atom"] == "SM75_U32x4_LDSM_N" and d["copy"][x]["type"] == "half_t"
        assert same_layout(d["copy"][x]["smem"], tile_to_shape(swizzle_atom(3, 8, 64), (128, 64, 4)))
        g = d["g2s"][x]
        assert (g["atom"], g["thr"], g["val"], g["gmem"], g["gmem_align"]) == \
            ("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "(16,8):(8,1)", "(1,8)", f"(128,64):(ld{x},1)", 16)
    assert d["stages"] == {"count": 4}
    prove_version1(ex.docs)
    # the whole file: every table proved, but for the sectors of a G2S warp request at a leading dimension
    # the header allows (a multiple of 8 halves) that is not a multiple of 16: rows off the 32-byte sectors
    rep = prove_config(loads_config(doc.to_toml(), path=doc.key))
    assert rep.error is None and len(rep.results) == 34
    bad = {(r.property, r.operand): r for r in rep.results if r.status != "proved"}
    assert sorted(bad) == [("coalescing", "g2s.A"), ("coalescing", "g2s.B")]
    for x in "AB":
        cex = bad["coalescing", f"g2s.{x}"].counterexample.to_json()
        assert (cex["params"], cex["sectors"], cex["minimum"]) == ({f"ld{x}": 72}, 18, 16)
    doc.params = {f"ld{x}": {"min": 64, "max": 1048576, "multiple_of": 16} for x in "AB"}
    rep = prove_config(loads_config(doc.to_toml(), path=doc.key))
    assert [(r.property, r.operand) for r in rep.results if r.status != "proved"] == []


@pytest.mark.slow
@pytest.mark.parametrize("hd,bm,bn,w", [(64, 128, 128, 4), (128, 128, 64, 4)])
@pytest.mark.parametrize("elem", ["half_t", "bfloat16_t"])
def test_flash_attention2_fwd(cute_headers, fa2_traits_header, hd, bm, bn, w, elem):
    ex = extract(fa2_traits_header, FA2.format(hd=hd, bm=bm, bn=bn, w=w, elem=elem))
    check_fa2_fwd(ex.docs, hd, bm, bn, w, elem)
    prove_version1(ex.docs)


@pytest.mark.slow
def test_flash_attention2_without_cuda_arch_is_the_host_fallback(cute_headers, fa2_traits_header):
    """kernel_traits.h picks SM75 / DefaultCopy atoms when __CUDA_ARCH__ is unset: the flag matters."""
    ex = extract(fa2_traits_header, FA2.format(hd=64, bm=128, bn=128, w=4, elem="half_t"), cuda_arch=None)
    qk = ex.docs[0].to_dict()
    assert qk["mma"]["atom"] == "SM75_16x8x8_F32F16F16F32_TN"
    assert qk["copy"]["A"]["atom"] == "DefaultCopy" and qk["g2s"]["A"]["atom"] == "AutoVectorizingCopy"


@pytest.mark.slow
@pytest.mark.parametrize("a,b", [("RowMajor", "ColumnMajor"), ("ColumnMajor", "RowMajor")])
def test_cutlass_default_gemm_configuration(cute_headers, cutlass_default_config_header, a, b):
    ex = extract(cutlass_default_config_header, DEFAULT_CONFIG.format(a=a, b=b))
    check_cutlass_sm80_f16(ex.docs, a_kmajor=(a == "RowMajor"), b_kmajor=(b == "ColumnMajor"))
    prove_version1(ex.docs)


@pytest.mark.slow
def test_cutlass_default_gemm_configuration_tf32(cute_headers, cutlass_default_config_header):
    """TF32, A RowMajor / B ColumnMajor: TiledMMA<MMA_Atom<SM80_16x8x8_F32TF32TF32F32_TN>, Layout<Shape<2,2,1>,
    Stride<2,1,1>>, Tile<32,32,8>>; OperandA<tfloat32_t, RowMajor, 4, 32>: composition(Swizzle<3,2,3>,
    Layout<Shape<8,32>,Stride<32,1>>), Copy_Atom<SM75_U32x4_LDSM_N, tfloat32_t>, make_tiled_copy(Copy_Atom<
    SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, tfloat32_t>, Layout<Shape<16,8>,Stride<8,1>>, Layout<Shape<1,4>>)."""
    from frontend_expect import swizzle_atom
    t = DEFAULT_CONFIG.replace("cutlass::half_t", "cutlass::tfloat32_t").format(a="RowMajor", b="ColumnMajor")
    (doc,) = extract(cutlass_default_config_header, t).docs
    d = doc.to_dict()
    assert d["mma"]["atom"] == "SM80_16x8x8_F32TF32TF32F32_TN" and d["mma"]["permutation"] == ["32", "32", "8"]
    assert same_layout(d["mma"]["layout"], Layout((2, 2, 1), (2, 1, 1)))
    atom = swizzle_atom(3, 8, 32, m=2)
    for x in "AB":
        assert (d["copy"][x]["atom"], d["copy"][x]["type"]) == ("SM75_U32x4_LDSM_N", "tfloat32_t")
        assert same_layout(d["copy"][x]["smem"], tile_to_shape(atom, (128, 32, 3)))
        g = d["g2s"][x]
        assert (g["atom"], g["thr"], g["val"], g["gmem"]) == ("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "(16,8):(8,1)",
                                                              "(1,4)", f"(128,32):(ld{x},1)")
    assert d["params"]["ldA"]["multiple_of"] == 4
    prove_version1([doc])


# CUTLASS's SM90 collective builder, as a kernel configures it (TMA + GMMA, K-major f16, 4 stages)
SM90_COLLECTIVE = r"""
#pragma once
#include <cutlass/cutlass.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/dispatch_policy.hpp>
using SM90Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    cutlass::half_t, cutlass::layout::RowMajor, 8,
    cutlass::half_t, cutlass::layout::ColumnMajor, 8,
    float, cute::Shape<cute::_128, cute::_128, cute::_64>, cute::Shape<cute::_1, cute::_1, cute::_1>,
    cutlass::gemm::collective::StageCount<4>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
"""


@pytest.mark.slow
def test_cutlass_sm90_collective_with_a_host_compiler(cute_headers, tmp_path):
    """g++ builds the SM90 collective (CUTLASS_SM90_COLLECTIVE_BUILDER_SUPPORTED stands in for nvcc's
    toolkit version) and the whole configuration is written: [mma], [smem.X], [tma.X], [stages]; proved."""
    from frontend_expect import check_cutlass_sm90_f16
    h = tmp_path / "sm90_collective.hpp"
    h.write_text(SM90_COLLECTIVE)
    ex = extract(h, "SM90Mainloop", cuda_arch=90, compiler="g++")
    check_cutlass_sm90_f16(ex.docs)
