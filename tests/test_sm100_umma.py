"""SM100 UMMA: the tcgen05.mma atoms (symlayout.atoms.umma) and their TiledMMAs against CuTe C++
compiled host-only (tests/sm100_cpp.py), CuTe's static_assert rejections included."""
from __future__ import annotations

import doctest
import importlib

import pytest

from symlayout.atoms import umma
from symlayout.errors import CuteStaticAssert
from symlayout.tiled.mma import make_tiled_mma
from sm100_cpp import compiler, strip


@pytest.fixture(scope="module")
def cxx():
    c = compiler()
    if c is None:
        pytest.skip("CuTe C++ headers (SYMLAYOUT_CUTE_SITE) or g++ not available")
    return c


@pytest.mark.parametrize("mod", ["symlayout.atoms.umma"])
def test_doctests(mod):
    res = doctest.testmod(importlib.import_module(mod), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


def cpp_atom(op: umma.UmmaOp) -> str:
    """The C++ MMA atom of ``op`` (kind::f8f6f4 SS atoms are spelled through their traits' parameters)."""
    maj = [f"UMMA::Major::{op.a_major}", f"UMMA::Major::{op.b_major}"]
    pair = "_2x1SM" if op.cta_group == 2 else ""
    if op.family == "F8F6F4" and op.a_source == "smem":
        one = "integral_constant<UMMA::ScaleIn,UMMA::ScaleIn::One>"
        return (f"MMA_Atom<MMA_Traits<SM100_MMA_F8F6F4{pair}_SS, {op.a_type}, {op.b_type}, {op.c_type}, C<{op.m}>, "
                f"C<{op.n}>, integral_constant<UMMA::Major,{maj[0]}>, integral_constant<UMMA::Major,{maj[1]}>, "
                f"{one}, {one}>>{{}}")
    src = "SS" if op.a_source == "smem" else "TS"
    return (f"SM100_MMA_{op.family}{pair}_{src}<{op.a_type},{op.b_type},{op.c_type},{op.m},{op.n},"
            f"{maj[0]},{maj[1]}>{{}}")


GRID = [
    "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,256,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_F16BF16_SS<bfloat16_t,bfloat16_t,float,64,8,UMMA::Major::MN,UMMA::Major::K>",
    "SM100_MMA_F16BF16_SS<half_t,half_t,half_t,64,200,UMMA::Major::K,UMMA::Major::MN>",
    "SM100_MMA_F16BF16_TS<half_t,half_t,float,128,128,UMMA::Major::K,UMMA::Major::MN>",
    "SM100_MMA_F16BF16_2x1SM_SS<half_t,half_t,float,256,128,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_F16BF16_2x1SM_SS<bfloat16_t,bfloat16_t,float,128,16,UMMA::Major::MN,UMMA::Major::MN>",
    "SM100_MMA_F16BF16_2x1SM_TS<half_t,half_t,float,256,64,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_TF32_SS<tfloat32_t,tfloat32_t,float,128,64,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_TF32_TS<tfloat32_t,tfloat32_t,float,64,24,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_TF32_2x1SM_SS<tfloat32_t,tfloat32_t,float,256,256,UMMA::Major::MN,UMMA::Major::K>",
    "SM100_MMA_TF32_2x1SM_TS<tfloat32_t,tfloat32_t,float,128,96,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_S8_SS<int8_t,int8_t,int32_t,128,8,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_S8_TS<uint8_t,int8_t,int32_t,64,48,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_S8_2x1SM_SS<int8_t,uint8_t,int32_t,256,256,UMMA::Major::K,UMMA::Major::MN>",
    "SM100_MMA_S8_2x1SM_TS<int8_t,int8_t,int32_t,128,32,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_F8F6F4_SS<float_e4m3_t,float_e5m2_t,float,128,256,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_F8F6F4_SS<float_e4m3_t,float_e4m3_t,half_t,64,16,UMMA::Major::MN,UMMA::Major::MN>",
    "SM100_MMA_F8F6F4_TS<float_e5m2_t,float_e4m3_t,float,128,64,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_F8F6F4_2x1SM_SS<float_e4m3_t,float_e4m3_t,float,256,192,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_F8F6F4_2x1SM_TS<float_e4m3_t,float_e4m3_t,float,128,32,UMMA::Major::K,UMMA::Major::MN>",
]
TILINGS = [(1, 1, 1), (2, 1, 1), (1, 2, 1)]


def _program(ops) -> str:
    body = ["int main() {"]
    for i, op in enumerate(ops):
        for j, (a, b, c) in enumerate(TILINGS):
            body.append(f"  {{ auto mma = make_tiled_mma({cpp_atom(op)}, Layout<Shape<_{a},_{b},_{c}>>{{}});")
            body.append("    using A = typename decltype(mma)::Atom;")
            if j == 0:
                for key, expr in (("ThrID", "typename A::ThrID{}"), ("Shape_MNK", "typename A::Shape_MNK{}"),
                                  ("LayoutA_TV", "typename A::LayoutA_TV{}"),
                                  ("LayoutB_TV", "typename A::LayoutB_TV{}"),
                                  ("LayoutC_TV", "typename A::LayoutC_TV{}")):
                    body.append(f'    printf("{i} {j} {key} "); print({expr}); printf("\\n");')
                body.append(f'    printf("{i} {j} idesc %u\\n", uint32_t(typename A::Traits{{}}.idesc_));')
            for key in ("A", "B", "C"):
                body.append(f'    printf("{i} {j} TV{key} "); print(mma.get_layout{key}_TV()); printf("\\n");')
            body.append("  }")
    body.append("}")
    return "\n".join(body) + "\n"


def test_atoms_and_tiled_mma_match_cute(cxx):
    """For every family (SS/TS, 1SM/2x1SM, each type class): the traits (ThrID, Shape_MNK, the
    (peer,(MN,K)) TV layouts), the instruction descriptor, and make_tiled_mma's TV layouts over three
    atom layouts equal what CuTe C++ prints."""
    ops = [umma.parse_umma_name(n) for n in GRID]
    got = {}
    for line in cxx.run(_program(ops)).splitlines():
        i, j, key, val = line.split(" ", 3)
        got[(int(i), int(j), key)] = strip(val)
    checked = 0
    for i, op in enumerate(ops):
        atom = umma.umma_mma_atom(op)
        assert got[(i, 0, "ThrID")] == str(atom.thr_id)
        assert got[(i, 0, "Shape_MNK")] == "(" + ",".join(map(str, atom.shape_mnk)) + ")"
        assert got[(i, 0, "LayoutA_TV")] == str(atom.a_layout)
        assert got[(i, 0, "LayoutB_TV")] == str(atom.b_layout)
        assert got[(i, 0, "LayoutC_TV")] == str(atom.c_layout)
        assert int(got[(i, 0, "idesc")]) == umma.instr_desc(op), op.name
        for j, tiling in enumerate(TILINGS):
            mma = make_tiled_mma(atom, tiling)
            for key in ("A", "B", "C"):
                assert got[(i, j, "TV" + key)] == str(mma.get_layout_TV(key)), (op.name, tiling, key)
                checked += 1
    assert checked == 3 * len(TILINGS) * len(GRID)


REJECTED = [
    "SM100_MMA_F16BF16_SS<half_t,half_t,float,256,64,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,260,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_F16BF16_TS<half_t,half_t,float,128,24,UMMA::Major::MN,UMMA::Major::K>",
    "SM100_MMA_F16BF16_2x1SM_SS<half_t,half_t,float,64,128,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_F16BF16_2x1SM_TS<half_t,half_t,float,128,48,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_TF32_SS<float,float,float,128,64,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_TF32_SS<half_t,half_t,float,128,64,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_S8_SS<int8_t,int8_t,float,128,24,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_S8_2x1SM_SS<int8_t,int8_t,int32_t,256,16,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_F8F6F4_SS<float_e4m3_t,float_e4m3_t,float,128,8,UMMA::Major::K,UMMA::Major::MN>",
    "SM100_MMA_F8F6F4_2x1SM_SS<half_t,float_e4m3_t,float,64,16,UMMA::Major::K,UMMA::Major::K>",
    "SM100_MMA_F8F6F4_2x1SM_TS<float_e4m3_t,float_e4m3_t,float,64,40,UMMA::Major::MN,UMMA::Major::K>",
]


@pytest.mark.parametrize("name", REJECTED)
def test_rejections_match_cute(cxx, name):
    """Each atom CuTe does not compile: our messages are CuTe's static_assert messages, all of them
    (g++ reports an assert of one template instantiation once: compared as sets)."""
    op = umma.parse_umma_name(name)
    ours = umma.cute_rejections(op)
    assert ours
    theirs = cxx.static_asserts(f"int main() {{ auto mma = make_tiled_mma({cpp_atom(op)}); (void)mma; }}\n")
    assert set(theirs) == set(ours)
    with pytest.raises(CuteStaticAssert) as ei:
        umma.umma_mma_atom(op)
    assert ei.value.assertion == ours[0]


def test_legal_n_grid():
    """The legal N per atom kind (the N-mode static_asserts) over every N in [0, 264]."""
    def legal(name_fmt, m):
        return [n for n in range(0, 265) if not any("N-mode" in r for r in umma.cute_rejections(
            umma.parse_umma_name(name_fmt.format(m=m, n=n))))]
    f16 = "SM100_MMA_F16BF16_{src}<half_t,half_t,float,{{m}},{{n}},UMMA::Major::K,UMMA::Major::K>"
    assert legal(f16.format(src="SS"), 64) == list(range(8, 257, 8))
    assert legal(f16.format(src="TS"), 128) == list(range(16, 257, 16))
    assert legal(f16.format(src="2x1SM_TS"), 256) == list(range(32, 257, 32))
    s8 = "SM100_MMA_S8_SS<int8_t,int8_t,int32_t,{m},{n},UMMA::Major::K,UMMA::Major::K>"
    assert legal(s8, 128) == [8] + list(range(16, 257, 16))


def test_bad_names():
    for bad in ("SM100_MMA_F16BF16_SS<half_t,half_t,float,128>",
                "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,x,UMMA::Major::K,UMMA::Major::K>",
                "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,64,UMMA::Major::T,UMMA::Major::K>",
                "SM100_MMA_F16BF16_SS<halff_t,half_t,float,128,64,UMMA::Major::K,UMMA::Major::K>",
                "SM90_64x64x16_F16F16F16_SS"):
        with pytest.raises(umma.UmmaAtomError):
            umma.parse_umma_name(bad)
