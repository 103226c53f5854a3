"""The C++ front end without a compiler: recorded probe output -> configuration documents -> TOML.

The recordings in ``data/*.probe.txt`` are what the probe program printed for
flash-attention 2's ``Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t>``
and CUTLASS's ``DefaultGemmConfigurationToCutlass3Types<..., half_t, RowMajor, half_t,
ColumnMajor, float, RowMajor, float>`` (CuTe print notation and type names only);
the expected values come from the headers' formulas (``frontend_expect``).
"""
from __future__ import annotations

import doctest
import tomllib
from pathlib import Path

import pytest

from frontend_expect import check_cutlass_sm80_f16, check_fa2_fwd
from symlayout.config import loads_config
from symlayout.frontends import document, recover, tables
from symlayout.frontends.cute_cpp import ExtractError, Extraction, conventions, documents_from_output
from symlayout.frontends.cute_cpp import probe as cute_cpp
from symlayout.frontends.cute_cpp.probe import first_error, op_name, parse_probe_output, value_type_name
from symlayout.prove.engine import prove_config

DATA = Path(__file__).with_name("data")
FA2_TYPE = "Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t>"
CUTLASS_TYPE = ("cutlass::gemm::device::DefaultGemmConfigurationToCutlass3Types<cutlass::arch::OpClassTensorOp, "
                "cutlass::arch::Sm80, cutlass::half_t, cutlass::layout::RowMajor, cutlass::half_t, "
                "cutlass::layout::ColumnMajor, float, cutlass::layout::RowMajor, float>")


def recorded(name):
    return (DATA / f"{name}.probe.txt").read_text()


@pytest.fixture(scope="module")
def fa2_docs():
    return documents_from_output(recorded("fa2_fwd_hdim64"), "kernel_traits.h", FA2_TYPE)


@pytest.fixture(scope="module")
def cutlass_docs():
    return documents_from_output(recorded("cutlass_sm80_f16_tn"), "default_gemm_configuration.hpp", CUTLASS_TYPE)


@pytest.mark.parametrize("mod", [cute_cpp, document, recover, conventions, tables])
def test_doctests(mod):
    res = doctest.testmod(mod)
    assert res.attempted > 0 and res.failed == 0


def test_fa2_hdim64_from_recorded_output(fa2_docs):
    check_fa2_fwd(fa2_docs, hd=64, block_m=128, block_n=128, nwarps=4)


def test_cutlass_sm80_from_recorded_output(cutlass_docs):
    check_cutlass_sm80_f16(cutlass_docs, a_kmajor=True, b_kmajor=True)


def test_cutlass_sm90_collective_from_recorded_output():
    """The recorded probe output of CUTLASS's SM90 CollectiveBuilder (tests/frontends/test_extract_cpp.py's
    SM90_COLLECTIVE, compiled with g++): the cutlass_sm90_collective profile writes [smem.X], [tma.X] and
    [stages] besides [mma], and the file is proved."""
    from frontend_expect import check_cutlass_sm90_f16
    docs = documents_from_output(recorded("cutlass_sm90_f16_tn"), "sm90_collective.hpp", "SM90Mainloop")
    check_cutlass_sm90_f16(docs)


def test_cli_member_with_an_empty_name_drops_the_role():
    from symlayout.cli.extract import _members
    assert _members(["A.copy=", "qk:B.copy=MyAtom"]) == {"A.copy": "", "qk:B.copy": "MyAtom"}


def test_cli_needs_a_type(tmp_path, capsys):
    from symlayout.cli import main
    h = tmp_path / "t.h"
    h.write_text("struct T {};\n")
    assert main(["extract", str(h)]) == 2
    assert "no traits type: give --type TYPE" in capsys.readouterr().err


def test_host_compilers_get_the_sm90_builder_define():
    assert "-DCUTLASS_SM90_COLLECTIVE_BUILDER_SUPPORTED" in cute_cpp._host_flags(["g++"])
    assert cute_cpp._host_flags(["/usr/bin/nvcc", "-x", "cu"]) == []


def test_toml_names_header_and_type(fa2_docs):
    text = fa2_docs[0].to_toml()
    assert text.startswith("# extracted by symlayout from kernel_traits.h\n# type: " + FA2_TYPE + "\n")
    assert "# GmemTiledCopyQKV = make_tiled_copy(atom, thr, val)" in text


@pytest.mark.parametrize("which", ["fa2", "cutlass"])
def test_version1_part_loads_and_proves(which, fa2_docs, cutlass_docs):
    """What today's (version-1) prover reads of the extracted files is proved, property by property;
    what it cannot read is listed, not dropped silently."""
    for doc in (fa2_docs if which == "fa2" else cutlass_docs):
        v1, left = doc.version1()
        rep = prove_config(loads_config(v1.to_toml(), path=f"{which}-{doc.key}.toml"))
        assert rep.error is None
        assert rep.results and all(r.status == "proved" for r in rep.results), \
            [(r.property, r.operand, r.status) for r in rep.results if r.status != "proved"]
        assert left and all(("version 2" in x) or ("version-2" in x) or ("stage" in x) for x in left)
        assert {r.operand for r in rep.results} == set(v1.copy)


def test_version2_left_out_is_listed(fa2_docs, cutlass_docs):
    _, left = fa2_docs[1].version1()
    assert "[copy.C] (version 2: converts the accumulator: convert)" in left
    assert "[g2s.B] (version 2: global -> shared copy)" in left and "[s2g.C] (version 2: shared -> global copy)" in left
    _, left = cutlass_docs[0].version1()
    assert "[stages] count = 3 (version 2)" in left
    assert "[copy.A] stages 1..2 (version 1 proves stage 0 of the staged smem layout)" in left


def test_member_override_and_drop():
    docs = documents_from_output(recorded("fa2_fwd_hdim64"), "kernel_traits.h", FA2_TYPE,
                                 members={"qk:B.copy": "SmemCopyAtomTransposed", "pv:C.g2s": ""})
    qk, pv = (d.to_dict() for d in docs)
    assert qk["copy"]["B"]["atom"] == "SM75_U16x8_LDSM_T" and qk["copy"]["A"]["atom"] == "SM75_U32x4_LDSM_N"
    assert "s2g" not in pv


def test_member_override_errors():
    out = recorded("fa2_fwd_hdim64")
    with pytest.raises(ExtractError, match=r"unknown role 'A\.smme'"):
        documents_from_output(out, "h", FA2_TYPE, members={"A.smme": "X"})
    with pytest.raises(ExtractError, match=r"no document 'xx'"):
        documents_from_output(out, "h", FA2_TYPE, members={"xx:A.smem": "X"})
    with pytest.raises(ExtractError, match=r"member SmemCopyAtom \(A.smem\) is a copy_atom"):
        documents_from_output(out, "h", FA2_TYPE, members={"A.smem": "SmemCopyAtom"})


def test_profile_detection_and_failure():
    p = parse_probe_output(recorded("fa2_fwd_hdim64"))
    assert conventions.detect_profile(p) == "fa2_fwd"
    assert conventions.detect_profile(parse_probe_output(recorded("cutlass_sm80_f16_tn"))) == "cutlass_sm80"
    with pytest.raises(ExtractError, match="no TiledMma member found"):
        conventions.detect_profile(parse_probe_output("@|type|T [with T = Foo]\n@TiledMma|missing|\n"))


def test_unsupported_op_is_named_not_dropped():
    out = recorded("fa2_fwd_hdim64").replace("cute::SM75_U32x4_LDSM_N]", "cute::SM75_U32x4_LDSM_N_FANCY]")
    docs = documents_from_output(out, "h", FA2_TYPE)
    assert "not supported: copy operation SM75_U32x4_LDSM_N_FANCY ([copy.A])" in docs[0].notes
    assert docs[0].copy["A"]["atom"] == "SM75_U32x4_LDSM_N_FANCY"   # the prover then rejects it by name


def test_mma_model_disagreement_is_an_error():
    out = recorded("fa2_fwd_hdim64").replace("@TiledMma|layoutA_TV|((_4,_8,_4),", "@TiledMma|layoutA_TV|((_8,_4,_4),")
    with pytest.raises(ExtractError, match="disagrees with CuTe's get_layoutA_TV"):
        documents_from_output(out, "h", FA2_TYPE)


@pytest.mark.parametrize("spelling,name", [
    ("cute::SM80_16x8x16_F32BF16BF16F32_TN", "SM80_16x8x16_F32BF16BF16F32_TN"),
    ("cute::SM80_CP_ASYNC_CACHEALWAYS<cutlass::uint128_t, cutlass::uint128_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>"),
    ("cute::SM80_CP_ASYNC_CACHEGLOBAL<cutlass::uint128_t>", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"),
    ("cute::UniversalCopy<long unsigned int, long unsigned int>", "UniversalCopy<uint64_t>"),
    ("cute::AutoVectorizingCopyWithAssumedAlignment<128>", "AutoVectorizingCopy"),
    ("cute::AutoVectorizingCopyWithAssumedAlignment<8>", "DefaultCopy"),
    ("cute::AutoVectorizingCopyWithAssumedAlignment<64>", "AutoVectorizingCopyWithAssumedAlignment<64>"),
    ("cute::SM90::GMMA::MMA_64x128x16_F32BF16BF16_RS<cute::SM90::GMMA::Major::K, cute::SM90::GMMA::Major::K, "
     "cute::SM90::GMMA::ScaleIn::One, cute::SM90::GMMA::ScaleIn::One>", "SM90_64x128x16_F32BF16BF16_RS<GMMA::Major::K,GMMA::Major::K>"),
])
def test_op_names(spelling, name):
    assert op_name(f"static const char* symlayout_probe::Name<T>::get() [with T = {spelling}]") == name
    assert op_name(f"static const char *symlayout_probe::Name<{spelling}>::get() [T = {spelling}]") == name  # clang


@pytest.mark.parametrize("spelling,name", [("cutlass::half_t", "half_t"), ("unsigned char", "uint8_t"),
                                           ("cutlass::float_e4m3_t", "float_e4m3_t"), ("float", "float"),
                                           ("cutlass::tfloat32_t", "tfloat32_t"), ("int", "int32_t")])
def test_value_type_names(spelling, name):
    assert value_type_name(spelling) == name


def test_first_error_is_one_line():
    out = ("In file included from x.h:3,\n                 from probe.cpp:9:\n"
           "x.h:10:1: error: expected ';' after struct definition\n   10 | }\n      | ^\n"
           "x.h:12:5: error: second\n")
    assert first_error(out) == "x.h:10:1: error: expected ';' after struct definition"


def test_no_compiler(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(ExtractError, match=r"^no C\+\+ compiler found \(tried g\+\+, clang\+\+, nvcc\)"):
        cute_cpp.find_compiler()


def test_bad_arguments(tmp_path):
    h = tmp_path / "t.h"
    h.write_text("struct T {};\n")
    with pytest.raises(ExtractError, match="expected one C\\+\\+ type expression"):
        cute_cpp.probe_program(h, "A; int main(){}", ["X"])
    with pytest.raises(ExtractError, match="expected a C\\+\\+ member name"):
        cute_cpp.probe_program(h, "T", ["X; y"])
    with pytest.raises(ExtractError, match="no such header"):
        cute_cpp.probe_traits(tmp_path / "missing.h", "T", ["X"])


def test_program_defines_arch_only_for_the_header(tmp_path):
    h = tmp_path / "traits.h"
    h.write_text('#pragma once\n#include "cute/tensor.hpp"\n#include <cutlass/numeric_types.h>\nstruct T {};\n')
    src = cute_cpp.probe_program(h, "T", ["TiledMma"], cuda_arch=80)
    lines = src.splitlines()
    i_def, i_inc = lines.index("#define __CUDA_ARCH__ 800"), lines.index(f'#include "{h.resolve()}"')
    assert lines.index('#include "cute/tensor.hpp"') < i_def < i_inc < lines.index("#undef __CUDA_ARCH__")
    assert lines.index("#include <cutlass/numeric_types.h>") < i_def
    assert "__CUDA_ARCH__" not in cute_cpp.probe_program(h, "T", ["TiledMma"], cuda_arch=None).split("#if !defined(__CUDACC__)")[0]
    assert "#define __CUDA_ARCH__" not in cute_cpp.probe_program(h, "T", ["TiledMma"], cuda_arch=None)


def test_write_files(tmp_path, fa2_docs):
    ex = Extraction("kernel_traits.h", FA2_TYPE, parse_probe_output(""), fa2_docs)
    paths = ex.write(tmp_path / "fa2.toml")
    assert [p.name for p in paths] == ["fa2_qk.toml", "fa2_pv.toml"]
    assert tomllib.loads(paths[1].read_text())["copy"]["C"]["convert"] is True
    assert [p.name for p in ex.write(tmp_path)] == ["Flash_fwd_kernel_traits_qk.toml", "Flash_fwd_kernel_traits_pv.toml"]
