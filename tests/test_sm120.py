"""SM120 ``mma.sync`` atoms (kind::f8f6f4 every type pair, block-scaled m16n8k32 / m16n8k64) against
CuTe C++ (host-only g++, one program): ``MMA_Traits`` layouts and value types, the factors' TV layouts,
``SFVecSize``, the factor register width, and CuTe's rejections."""
from __future__ import annotations

import itertools

import pytest

from sm100_cpp import compiler
from symlayout.atoms.mma import get_mma_atom
from symlayout.atoms.sm120 import (F8F6F4_TYPES, cute_rejections, kind_problems, parse_sm120_name, sm120_mma_atom,
                                   sm120_sf_layouts)
from symlayout.atoms.types import value_type_bits
from symlayout.errors import CuteStaticAssert

PAIRS = list(itertools.product(F8F6F4_TYPES, repeat=2))
PLAIN = [f"SM120_16x8x32_TN<{a},{b},{c}>" for (a, b), c in zip(PAIRS, itertools.cycle(["float", "half_t"]))]
SCALED = ([f"SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<{a},{b},float,float_ue8m0_t,32>" for a, b in PAIRS[::4]]
          + ["SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue8m0_t,32>",
             "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue4m3_t,16>",
             "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue8m0_t,16>"])
REJECTED = ["SM120_16x8x32_TN<float_e4m3_t,half_t,float>",
            "SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<float_e4m3_t,float_e4m3_t,float,float_ue4m3_t,32>",
            "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e4m3_t,float_e2m1_t,float,float_ue8m0_t,32>"]


def _program():
    out = ["int main() {"]
    for name in PLAIN + SCALED:
        out += ["  {", f"    using Tr = MMA_Traits<{name}>;",
                "    print(typename Tr::ALayout{}); printf(\" \"); print(typename Tr::BLayout{}); printf(\" \");"
                " print(typename Tr::CLayout{});",
                "    printf(\" %d %d\\n\", int(sizeof_bits_v<typename Tr::ValTypeA>), "
                "int(sizeof_bits_v<typename Tr::ValTypeB>));"]
        if "_VS" in name:
            out += ["    print(typename Tr::SFALayout{}); printf(\" \"); print(typename Tr::SFBLayout{});",
                    f"    printf(\" %d %d\\n\", int(Tr::SFVecSize), int(sizeof_bits_v<std::remove_extent_t<typename "
                    f"{name}::SFARegisters>>));"]
        out.append("  }")
    return "#include <cute/atom/mma_traits_sm120.hpp>\n" + "\n".join(out) + "\n}\n"


def _norm(s):
    return s.replace("_", "").replace(" ", "")


def test_sm120_traits_equal_cute():
    c = compiler()
    if c is None:
        pytest.skip("CuTe headers / g++ not available")
    lines = iter(c.run(_program()).splitlines())
    for name in PLAIN + SCALED:
        a = sm120_mma_atom(name)
        want = f"{a.a_layout}{a.b_layout}{a.c_layout}{value_type_bits(a.val_type_a)}{value_type_bits(a.val_type_b)}"
        assert _norm(next(lines)) == _norm(want), name
        if "_VS" in name:
            sfa, sfb, vs, reg = sm120_sf_layouts(name)
            assert _norm(next(lines)) == _norm(f"{sfa}{sfb}{vs}{reg.bits}"), name


@pytest.mark.parametrize("name", REJECTED)
def test_rejections_are_cutes(name):
    c = compiler()
    if c is None:
        pytest.skip("CuTe headers / g++ not available")
    msgs = c.static_asserts(f"void f() {{ auto m = make_tiled_mma(MMA_Atom<{name}>{{}}); }}\nint main() {{}}\n")
    assert cute_rejections(parse_sm120_name(name))[0] in msgs
    with pytest.raises(CuteStaticAssert):
        sm120_mma_atom(name)


def test_get_mma_atom_builds_sm120():
    a = get_mma_atom("SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<float_e4m3_t,float_e2m1_t,float,float_ue8m0_t,32>")
    assert a.ptx == ("mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e4m3.e2m1.f32."
                     "ue8m0") and a.arch == "sm_120a"


def test_vector_size_the_instruction_does_not_read():
    """CuTe compiles SM120_16x8x64_TN_VS<e2m1,e2m1,float,ue8m0,16> (a 32-bit register of four factors) but
    issues scale_vec::2X (one ue8m0 factor per 32 elements): refuted; the NVFP4 and MXFP4 forms hold."""
    k64 = "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,{},{}>"
    assert kind_problems(parse_sm120_name(k64.format("float_ue8m0_t", 16)))
    assert kind_problems(parse_sm120_name(k64.format("float_ue4m3_t", 32)))
    assert not kind_problems(parse_sm120_name(k64.format("float_ue8m0_t", 32)))
    assert not kind_problems(parse_sm120_name(k64.format("float_ue4m3_t", 16)))
    assert not any(kind_problems(parse_sm120_name(n)) for n in SCALED[:-1])
    c = compiler()
    if c is not None:      # CuTe compiles both mismatched forms
        for sf, vs in (("float_ue8m0_t", 16), ("float_ue4m3_t", 32)):
            assert c.static_asserts(f"void f() {{ auto m = make_tiled_mma(MMA_Atom<{k64.format(sf, vs)}>{{}}); }}\n"
                                    "int main() {}\n") == []
