"""SM100 UMMA: the tcgen05.mma atoms (symlayout.atoms.umma) and their TiledMMAs against CuTe C++
compiled host-only (tests/sm100_cpp.py), CuTe's static_assert rejections included."""
from __future__ import annotations

import doctest
import importlib

import pytest

from symlayout.algebra.layout import Layout, function_table
from symlayout.arch import tcgen05 as arch_tc
from symlayout.atoms import gmma, umma
from symlayout.errors import CuteStaticAssert
from symlayout.tiled.mma import make_tiled_mma
from symlayout.tiled.umma import umma_operand_model
from sm100_cpp import compiler, cpp_atom, strip


@pytest.fixture(scope="module")
def cxx():
    c = compiler()
    if c is None:
        pytest.skip("CuTe C++ headers (SYMLAYOUT_CUTE_SITE) or g++ not available")
    return c


@pytest.mark.parametrize("mod", ["symlayout.atoms.umma", "symlayout.arch.tcgen05", "symlayout.tiled.umma"])
def test_doctests(mod):
    res = doctest.testmod(importlib.import_module(mod), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


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


def _tilings(i):
    """Atom layouts checked for grid atom ``i``: all three for every third atom (C++ compile time)."""
    return TILINGS if i % 3 == 0 else TILINGS[:1]


def _program(ops) -> str:
    body = ["int main() {"]
    for i, op in enumerate(ops):
        for j, (a, b, c) in enumerate(_tilings(i)):
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
        for j, tiling in enumerate(_tilings(i)):
            mma = make_tiled_mma(atom, tiling)
            for key in ("A", "B", "C"):
                assert got[(i, j, "TV" + key)] == str(mma.get_layout_TV(key)), (op.name, tiling, key)
                checked += 1
    assert checked == 3 * sum(len(_tilings(i)) for i in range(len(GRID)))


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


# ---------------------------------------------------------------------------
# UMMA shared-memory descriptors: make_umma_desc vs CuTe C++, and the PTX reads vs CuTe's addresses
# ---------------------------------------------------------------------------

K_ATOMS = ["K_INTER", "K_SW32", "K_SW64", "K_SW128"]
MN_ATOMS = ["MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128", "MN_SW128_32B"]
DESC_OPS = [
    "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,64,UMMA::Major::{a},UMMA::Major::{b}>",
    "SM100_MMA_F16BF16_SS<bfloat16_t,bfloat16_t,float,64,32,UMMA::Major::{a},UMMA::Major::{b}>",
    "SM100_MMA_TF32_SS<tfloat32_t,tfloat32_t,float,128,32,UMMA::Major::{a},UMMA::Major::{b}>",
    "SM100_MMA_F8F6F4_SS<float_e4m3_t,float_e4m3_t,float,128,64,UMMA::Major::{a},UMMA::Major::{b}>",
    "SM100_MMA_F16BF16_2x1SM_SS<half_t,half_t,float,256,64,UMMA::Major::{a},UMMA::Major::{b}>",
]


def _desc_cases():
    """(op, operand, atom kind, (BMN, BK, stages)): every atom kind for both operands of each op."""
    out = []
    for fmt in DESC_OPS:
        for major in ("K", "MN"):
            op = umma.parse_umma_name(fmt.format(a=major, b=major))
            bits = umma.value_type_bits(op.a_type)
            for operand in ("A", "B"):
                mn = op.m if operand == "A" else op.n
                for kind in (K_ATOMS if major == "K" else MN_ATOMS):
                    if (mn // op.cta_group) % umma.layout_atom(kind, op.a_type).layout.shape[0] == 0:  # else CuTe refuses
                        out.append((op, operand, kind, (mn, 1024 // bits, 2)))
    return out


def _py_desc_case(op, operand, kind, tile):
    mma = make_tiled_mma(umma.umma_mma_atom(op))
    shape = _partition_shape(mma, operand, tile)
    smem = umma.tile_to_mma_shape(umma.layout_atom(kind, op.a_type), shape)
    major = op.a_major if operand == "A" else op.b_major
    return shape, smem, umma.descriptor_fragment(smem, major)


def _partition_shape(mma, operand, tile):
    """``partition_shape_A/B(mma, (MN, K, stages))`` for one CTA of the atom (what the kernel keeps)."""
    p, _ = mma.get_slice(0).partition(operand, Layout(tile))
    return p.shape


def _cpp_desc_program(cases) -> str:
    body = ["int main() {"]
    for i, (op, operand, kind, (mn, k, st)) in enumerate(cases):
        t = op.a_type if operand == "A" else op.b_type
        body += [f"  {{ auto mma = make_tiled_mma({cpp_atom(op)});",
                 f"    auto shp = partition_shape_{operand}(mma, make_shape(Int<{mn}>{{}}, Int<{k}>{{}}, Int<{st}>{{}}));",
                 f"    auto sL = UMMA::tile_to_mma_shape(UMMA::Layout_{kind}_Atom<{t}>{{}}, shp);",
                 f'    printf("{i} shape "); print(shp); printf("\\n");',
                 f'    printf("{i} layout "); print(sL); printf("\\n");',
                 f"    static {t} buf[cosize_v<decltype(sL)>];",
                 "    auto s = make_tensor(make_smem_ptr(buf), sL);",
                 f"    auto frag = mma.make_fragment_{operand}(s);",
                 f'    printf("{i} desc");',
                 '    for (int j = 0; j < int(size(frag)); ++j) printf(" %llx", (unsigned long long)uint64_t(frag(j)));',
                 '    printf("\\n"); }']
    body.append("}")
    return "\n".join(body) + "\n"


def test_make_umma_desc_matches_cute(cxx):
    """For every UMMA layout atom (K and MN, 32-byte-atomic 128B included), four types and both
    operands, 1SM and 2x1SM: tile_to_mma_shape's layout and every descriptor of make_fragment_A/B
    (make_umma_desc + the K-block/stage advance) equal CuTe C++'s, bit for bit."""
    cases = _desc_cases()
    got = {}
    for line in cxx.run(_cpp_desc_program(cases)).splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0].isdigit():
            got[(int(parts[0]), parts[1])] = parts[2]
    checked = 0
    for i, case in enumerate(cases):
        shape, smem, (desc, frag) = _py_desc_case(*case)
        assert strip(got[(i, "layout")]) == str(smem), case
        theirs = [int(v, 16) for v in got[(i, "desc")].split()]
        ours = [desc.arch().advanced(int(frag(j))).encode() for j in range(frag.size())]
        assert ours == theirs, case
        checked += len(ours)
    assert checked > 100


def test_ptx_reads_what_cute_lays_out():
    """One checks the other: for every case, every instruction block (MN-block, K-block, stage) and
    every (row, k), the address the PTX model of tcgen05.mma reads through CuTe's descriptor is the
    swizzled byte address where CuTe's smem tensor keeps that element."""
    base = 0x4000
    checked = 0
    for case in _desc_cases():
        op, operand, kind, tile = case
        shape, smem, (desc, frag) = _py_desc_case(*case)
        major = op.a_major if operand == "A" else op.b_major
        e = smem.bits // 8
        L = smem.layout
        rows, kin = shape[0]
        table = function_table(L)
        nblk = L.size() // (rows * kin)
        d0 = umma.make_umma_desc(major, smem, start_address=base).arch()
        ftab = function_table(frag)
        for j in range(nblk):
            d = d0.advanced(int(ftab[j]))
            for k in range(kin):
                for r in range(rows):
                    cute = smem.swizzle(base + int(table[r + rows * k + rows * kin * j]) * e)
                    assert arch_tc.element_address(d, major, e, r, k) == cute, (case, j, r, k)
                    checked += 1
    assert checked > 10000


UMMA_REJECTED = [
    # (C++ atom, type, major, tile (MN,K), what)
    ("MN_SW128", "half_t", "K", (128, 64), "K desc on an MN-major atom"),
    ("K_SW128", "half_t", "MN", (128, 64), "MN desc on a K-major atom"),
    ("MN_SW128_32B", "half_t", "K", (128, 64), "32-byte-atomic swizzle, K-major"),
]


@pytest.mark.parametrize("case", UMMA_REJECTED, ids=[c[-1] for c in UMMA_REJECTED])
def test_make_umma_desc_rejections_match_cute(cxx, case):
    """A layout CuTe's make_umma_desc refuses: our refusal carries CuTe's static_assert message."""
    kind, t, major, (mn, k), _what = case
    op = umma.parse_umma_name(f"SM100_MMA_F16BF16_SS<{t},{t},float,128,128,UMMA::Major::{major},"
                              f"UMMA::Major::{major}>")
    theirs = cxx.static_asserts(
        f"int main() {{ auto mma = make_tiled_mma({cpp_atom(op)});\n"
        f"  auto shp = partition_shape_A(mma, make_shape(Int<{mn}>{{}}, Int<{k}>{{}}));\n"
        f"  auto sL = UMMA::tile_to_mma_shape(UMMA::Layout_{kind}_Atom<{t}>{{}}, shp);\n"
        f"  static {t} buf[cosize_v<decltype(sL)>];\n"
        f"  auto frag = mma.make_fragment_A(make_tensor(make_smem_ptr(buf), sL)); (void)frag; }}\n")
    assert theirs
    mma = make_tiled_mma(umma.umma_mma_atom(op))
    smem = umma.tile_to_mma_shape(umma.layout_atom(kind, t), _partition_shape(mma, "A", (mn, k)))
    with pytest.raises(umma.UmmaDescriptorError) as ei:
        umma.make_umma_desc(major, smem)
    assert any(msg.rstrip(".") in str(ei.value) for msg in theirs), (theirs, str(ei.value))


# ---------------------------------------------------------------------------
# Hand-written descriptors: each PTX rule of the descriptor fails where it should
# ---------------------------------------------------------------------------



def _good():
    return umma.make_umma_desc("K", umma.tile_to_mma_shape(umma.layout_atom("K_SW128", "half_t"),
                                                           ((128, 16), 1, 4))).value


def test_cute_descriptor_decodes_clean():
    d, bad = arch_tc.SmemDescriptor.decode(_good())
    assert bad == [] and d.version == 1 and d.layout_type == "SWIZZLE_128B" and d.stride_byte_offset == 1024


def test_ported_hopper_descriptor_is_refuted():
    """The SM90 descriptor of the same layout (make_gmma_desc) lacks only the version bits: refuted."""
    hopper = gmma.make_gmma_desc("K", Layout(((8, 16), 16), ((64, 512), 1)), 16, gmma.Swizzle(3, 4, 3)).value
    assert hopper ^ _good() == 1 << 46
    _, bad = arch_tc.SmemDescriptor.decode(hopper)
    assert len(bad) == 1 and "version" in bad[0]


@pytest.mark.parametrize("bit", [14, 15, 30, 31, 48, 53, 60])
def test_reserved_or_fixed_bits_refuted(bit):
    _, bad = arch_tc.SmemDescriptor.decode(_good() | 1 << bit)
    assert bad, bit


@pytest.mark.parametrize("code", [3, 5, 7])
def test_undefined_layout_type_refuted(code):
    v = (_good() & ~(7 << 61)) | code << 61
    _, bad = arch_tc.SmemDescriptor.decode(v)
    assert any("layout type" in b for b in bad)


def test_field_overflow_refused_when_encoding():
    """A byte offset past the 18-bit window would overlap the next field: encode refuses, problems name it."""
    d = arch_tc.SmemDescriptor(0, 16, 1 << 18, "SWIZZLE_128B")
    assert any("18-bit" in p for p in d.problems())
    with pytest.raises(ValueError, match="overlap"):
        arch_tc.SmemDescriptor(0, 16, 1024, "SWIZZLE_128B", base_offset=8).encode()


def test_misaligned_start_and_base_offset_without_swizzle():
    assert arch_tc.SmemDescriptor(8, 16, 1024, "SWIZZLE_128B").problems() == ["start_address 8 is not a multiple of 16"]
    assert arch_tc.SmemDescriptor(0, 16, 1024, "SWIZZLE_NONE", base_offset=1).problems() == \
        ["base_offset must be 0 without swizzle"]


def test_advance_carries_past_the_start_field():
    """CuTe's DescriptorIterator adds to the low 32 bits: a start address past 14 bits spills into
    bits 14-15 (reserved), which the decode refutes."""
    d = arch_tc.SmemDescriptor(0x3FFF0, 16, 1024, "SWIZZLE_128B")
    moved, bad = arch_tc.SmemDescriptor.decode(d.encode() + 1)
    assert moved.start_address == 0 and any("reserved" in b for b in bad)


# ---------------------------------------------------------------------------
# tiled/umma: what the MMA reads for every (mn, k) vs where the partition keeps it
# ---------------------------------------------------------------------------


def test_operand_reads_agree_and_cover_the_tile():
    """For every descriptor case: every (mn, k) of every block is read where CuTe keeps that element,
    and the blocks together read each element of the CTA's tile exactly once."""
    total = 0
    for case in _desc_cases():
        op, operand, kind, tile = case
        mma = make_tiled_mma(umma.umma_mma_atom(op))
        shape, smem, _ = _py_desc_case(*case)
        per_cta = (tile[0] // op.cta_group,) + tuple(tile[1:])
        m = umma_operand_model(mma, operand, smem, per_cta, base=0x8000)
        assert m.error is None and m.mismatches() == [], case
        seen = sorted(e for r in m.reads for e in r.elements)
        assert seen == list(range(per_cta[0] * per_cta[1] * per_cta[2])), case
        total += m.obligations()
    assert total > 100000


def test_operand_reads_refute_a_wrong_hand_written_descriptor():
    """A hand-written descriptor with half the stride byte offset: the MMA reads other bytes (refuted
    with the element and both addresses); the same value with the right SBO agrees."""
    mma = make_tiled_mma(umma.umma_mma_atom(
        "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,64,UMMA::Major::K,UMMA::Major::K>"))
    smem = umma.tile_to_mma_shape(umma.layout_atom("K_SW128", "half_t"), ((128, 16), 1, 4, 2))
    good = umma_operand_model(mma, "A", smem, (128, 64, 2), base=0x4000, desc=0x4000404000010400)
    assert good.mismatches() == [] and good.desc_problems == []
    bad = umma_operand_model(mma, "A", smem, (128, 64, 2), base=0x4000, desc=0x4000402000010400)
    assert bad.mismatches() and "row 8, k 0" in bad.mismatches()[0]
    hopper = umma_operand_model(mma, "A", smem, (128, 64, 2), base=0x4000, desc=0x4000004000010400)
    assert hopper.mismatches() == [] and any("version" in p for p in hopper.desc_problems)
