"""Sub-byte and narrow element types (fp4 e2m1, fp6 e2m3/e3m2, the ue4m3/ue8m0 scale factors,
CUTLASS's ``*_unpacksmem_t`` containers) against CuTe C++ (host-only g++, one program for all
cases): ``sizeof_bits``, ``recast_layout<Old,New>`` over plain and swizzled layouts, and the
UMMA shared-memory layout atoms over sub-byte types; CuTe's rejections are ours."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from sm100_cpp import compiler, cpp_atom
from cute_cpp import cpp_layout
from symlayout.algebra.layout import recast_layout
from symlayout.algebra.notation import parse
from symlayout.atoms import canonical_type, exact_conversion, value_type_bits, value_type_info
from symlayout.atoms.umma import instr_desc, layout_atom, parse_umma_name
from symlayout.conformance.runner import run_files
from symlayout.errors import SymlayoutError

NEW_TYPES = ["float_e2m1_t", "float_e2m3_t", "float_e3m2_t", "float_ue4m3_t", "float_ue8m0_t",
             "detail::float_e2m1_unpacksmem_t", "detail::float_e2m3_unpacksmem_t",
             "detail::float_e3m2_unpacksmem_t", "detail::float_e2m3_unpack8bits_t",
             "detail::float_e3m2_unpack8bits_t"]

#: (old type, new type, layout over old): recast_layout<old, new>(layout)
RECASTS = [
    (o, n, lay)
    for o, n in [("uint8_t", "float_e2m1_t"), ("float_e2m1_t", "uint8_t"), ("half_t", "float_e2m1_t"),
                 ("float_e2m1_t", "uint128_t"), ("detail::float_e2m1_unpacksmem_t", "uint8_t"),
                 ("uint8_t", "detail::float_e2m1_unpacksmem_t"), ("float_e2m1_t", "uint32_t")]
    for lay in ["(8,64):(64,1)", "(64,8):(1,64)", "((8,2),(32,4)):((32,1024),(1,256))",
                "Sw<3,4,3> o 0 o (8,128):(128,1)", "Sw<2,4,3> o 0 o ((8,2),(64,2)):((64,1024),(1,512))",
                "Sw<1,4,3> o 0 o (64,8):(1,64)", "(16,(8,4)):(8,(1,128))"]
] + [("float_e2m3_t", "uint8_t", "(8,96):(96,1)"), ("float_e3m2_t", "uint8_t", "(96,4):(1,96)"),
     ("uint8_t", "float_e2m3_t", "(8,96):(96,1)"), ("float_e2m3_t", "uint32_t", "((16,8),4):((1,64),16)"),
     ("uint8_t", "float_e3m2_t", "(24,4):(1,24)"), ("float_ue8m0_t", "uint32_t", "((32,4),(4,4)):((16,4),(1,512))"),
     ("float_ue4m3_t", "uint8_t", "((32,4),(16,4)):((16,4),(0,1))")]

ATOMS = [(k, t) for k in ["K_INTER", "K_SW32", "K_SW64", "K_SW128", "MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128",
                          "MN_SW128_32B"]
         for t in ["float_e2m1_t", "detail::float_e2m1_unpacksmem_t", "uint8_t"]]


#: kind::f8f6f4 (not block-scaled) atoms over fp6/fp4 containers and e4m3: the instruction descriptor
F8F6F4 = [f"SM100_MMA_F8F6F4_SS<{a},{b},float,128,128,UMMA::Major::K,UMMA::Major::K>"
          for a, b in [("float_e2m1_unpacksmem_t", "float_e4m3_t"), ("float_e2m3_unpacksmem_t", "float_e3m2_unpacksmem_t"),
                       ("float_e5m2_t", "float_e2m1_unpacksmem_t")]]


def _bits(t):
    return value_type_bits(t)


def _program():
    lines = ["int main() {"]
    for t in NEW_TYPES:
        lines.append(f'  printf("%d\\n", int(sizeof_bits_v<{t}>));')
    for o, n, lay in RECASTS:
        lines.append(f'  print(recast_layout<{o}, {n}>({cpp_layout(lay)})); printf("\\n");')
    for k, t in ATOMS:
        lines.append(f'  print(UMMA::Layout_{k}_Atom<{t}>{{}}); printf("\\n");')
    for name in F8F6F4:
        atom = re.sub(r"\b(float_e\dm\d_unpacksmem_t)", r"cute::detail::\1", cpp_atom(parse_umma_name(name)))
        lines.append(f'  printf("%u\\n", uint32_t(decltype({atom})::Traits{{}}.idesc_));')
    return "\n".join(lines) + "\n}\n"


@pytest.fixture(scope="module")
def cute_out():
    c = compiler()
    if c is None:
        pytest.skip("CuTe headers / g++ not available")
    return [ln.replace("_", "").replace("smem ptr", "smem_ptr") for ln in c.run(_program()).splitlines()]


def _norm(text):
    return text.replace("smemptr", "smem_ptr").replace("(unset)", "").replace(" ", "")


def test_sizeof_bits_and_recast_equal_cute(cute_out):
    bits, rest = cute_out[:len(NEW_TYPES)], cute_out[len(NEW_TYPES):]
    assert [int(b) for b in bits] == [_bits(t) for t in NEW_TYPES]
    got = [str(recast_layout(parse(lay), _bits(o), _bits(n))) for o, n, lay in RECASTS]
    assert [_norm(g) for g in got] == [_norm(c) for c in rest[:len(RECASTS)]]


def test_umma_layout_atoms_over_subbyte_types_equal_cute(cute_out):
    rest = cute_out[len(NEW_TYPES) + len(RECASTS):][:len(ATOMS)]
    got = [str(layout_atom(k, t)) for k, t in ATOMS]
    assert [_norm(g) for g in got] == [_norm(c) for c in rest]


def test_f8f6f4_instruction_descriptor_over_containers_equals_cute(cute_out):
    rest = cute_out[len(NEW_TYPES) + len(RECASTS) + len(ATOMS):]
    assert [int(x) for x in rest] == [instr_desc(parse_umma_name(n)) for n in F8F6F4]


@pytest.mark.parametrize("body,ours", [
    ("auto x = recast_layout<uint8_t, float_e2m3_t>(make_layout(make_shape(Int<8>{},Int<64>{}), "
     "make_stride(Int<64>{},Int<1>{})));",
     lambda: recast_layout(parse("(8,64):(64,1)"), 8, 6)),
    ("auto x = UMMA::Layout_K_SW128_Atom<float_e2m3_t>{};", lambda: layout_atom("K_SW128", "float_e2m3_t")),
])
def test_cute_rejections_are_ours(body, ours):
    c = compiler()
    if c is None:
        pytest.skip("CuTe headers / g++ not available")
    msgs = c.static_asserts(f"void f() {{ {body} }}\nint main() {{}}\n")
    assert "Divisibility condition" in msgs
    with pytest.raises(SymlayoutError, match="divide each other"):
        ours()


def test_type_records():
    assert canonical_type("cutlass::detail::float_e2m1_unpacksmem_t") == "float_e2m1_unpacksmem_t"
    assert canonical_type("cute::detail::float_e3m2_unpacksmem_t") == "float_e3m2_unpacksmem_t"
    assert value_type_info("float_e2m1_unpacksmem_t")["storage"] == "container"
    assert "storage" not in value_type_info("float_e2m1_t")
    assert value_type_info("float_ue8m0_t")["class"] == "ufloat"
    # an unsigned factor never holds a signed value; ue8m0 (8 exponent bits) converts to float exactly
    assert not exact_conversion("float_e2m1_t", "float_ue4m3_t")
    assert exact_conversion("float_ue8m0_t", "float") and not exact_conversion("float_ue8m0_t", "half_t")
    assert exact_conversion("float_e2m1_t", "half_t") and exact_conversion("float_e3m2_t", "float_e5m2_t")
    assert not exact_conversion("float_e2m3_t", "float_e5m2_t")


def test_subbyte_conformance_cases_pass():
    """tests/data/subbyte/recast.jsonl: 76 cases CuTe C++ computed (generate.py there): recast_layout over
    sub-byte types, composition and logical_divide of recast swizzled layouts, with function tables."""
    path = Path(__file__).resolve().parent / "data" / "subbyte" / "recast.jsonl"
    passed, failed, info = run_files([str(path)], out=None)
    assert (passed, failed) == (76, 0), info["failures"]
    assert set(info["counts"]) == {"recast_layout", "composition", "logical_divide"}
