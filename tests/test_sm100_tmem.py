"""Tensor Memory: tcgen05.alloc, the warp access rule, and the tcgen05.ld/st lane/register maps
(symlayout.arch.tcgen05, symlayout.atoms.tmem) -- each rule with a case where it fails, and the maps
against CuTe's SM100_TMEM_LOAD/STORE Copy_Traits evaluated in C++ (host-only)."""
from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

from cute_cpp import cute_site
from sm100_cpp import compiler, cpp_atom, strip
from symlayout.algebra.layout import Layout, coalesce, function_table
from symlayout.algebra.notation import parse_layout
from symlayout.arch import tcgen05 as arch
from symlayout.atoms import tmem, umma, value_type_bits
from symlayout.atoms.tmem import tmem_copy_op
from symlayout.errors import AtomError, CuteStaticAssert
from symlayout.tiled.mma import make_tiled_mma
from symlayout.tiled.tmem import (a_operand_layout, access_violations, accumulator_layout, make_tmem_copy,
                                  tmem_address_layout, tmem_budget_problems, tmem_frg_layout)


@pytest.mark.parametrize("mod", ["symlayout.atoms.tmem", "symlayout.arch.tcgen05", "symlayout.tiled.tmem",
                                 "symlayout.config.tmem"])
def test_doctests(mod):
    res = doctest.testmod(importlib.import_module(mod), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


# --- tcgen05.alloc -----------------------------------------------------------

@pytest.mark.parametrize("cols", [32, 64, 128, 256, 512])
def test_alloc_legal(cols):
    assert arch.alloc_problems(cols) == []


@pytest.mark.parametrize("cols,why", [(384, "power of two"), (16, "minimum"), (1024, "maximum"), (0, "minimum"),
                                      (96, "power of two"), ("32", "integer")])
def test_alloc_refuted(cols, why):
    bad = arch.alloc_problems(cols)
    assert bad and any(why in b for b in bad)


def test_capacity_is_data():
    assert arch.CAPACITY_COLUMNS["sm_100"] == 512 and arch.CAPACITY_COLUMNS["sm_107"] == 576
    with pytest.raises(ValueError):
        arch.alloc_problems(32, "sm_90")


# --- the warp access rule -------------------------------------------------

def test_warp_lanes_partition_the_tmem():
    """Warps 0-3 of a warpgroup reach four disjoint 32-lane chunks that cover the 128 lanes; warp w+4 the same as w."""
    chunks = [set(arch.warp_lanes(w)) for w in range(4)]
    assert set().union(*chunks) == set(range(arch.LANES)) and sum(map(len, chunks)) == arch.LANES
    assert all(arch.warp_lanes(w) == arch.warp_lanes(w + 4) for w in range(8))


@pytest.mark.parametrize("shape", sorted(arch.LD_SHAPES))
def test_access_rule(shape):
    n = arch.LD_SHAPES[shape][0]
    for w in range(8):
        ok = [lane for lane in range(0, arch.LANES, 8) if not arch.access_problems(w, lane, shape)]
        assert ok == [lane for lane in range(32 * (w % 4), 32 * (w % 4) + 33 - n, 8)]
    assert arch.access_problems(0, 32, shape)          # warp 0 reaching into warp 1's lanes


# --- tcgen05.ld/st maps ---------------------------------------------------

@pytest.mark.parametrize("name", ["SM100_TMEM_LOAD_32dp32b16x", "SM100_TMEM_LOAD_16dp64b8x_16b",
                                  "SM100_TMEM_STORE_16dp128b4x", "SM100_TMEM_LOAD_16dp256b2x",
                                  "SM100_TMEM_LOAD_16dp32b32x"])
def test_each_cell_moved_once(name):
    """An atom moves every (lane, column[, half]) of its lanes x columns block exactly once."""
    op = tmem.tmem_copy_op(name)
    halves = (0, 1) if op.pack16 else (0,)
    cells = [op.cell(t, r, h) for t in range(32) for r in range(op.registers) for h in halves]
    assert len(cells) == len(set(cells)) == op.lanes * op.columns


@pytest.mark.parametrize("bad", ["SM100_TMEM_LOAD_16dp128b128x", "SM100_TMEM_LOAD_32dp32b3x",
                                 "SM100_TMEM_LOAD_8dp32b1x", "SM100_TMEM_STORE_16dp256b64x_16b"])
def test_bad_atoms(bad):
    with pytest.raises(AtomError):
        tmem.tmem_copy_op(bad)


def test_names_are_cutes():
    """Our list of atoms is exactly the SM100_TMEM_LOAD/STORE operations CuTe's header declares."""
    site = cute_site()
    if site is None:
        pytest.skip("CuTe headers not available")
    hdr = Path(site[0]) / "cute" / "arch" / "copy_sm100.hpp"
    theirs = set(re.findall(r"^struct (SM100_TMEM_(?:LOAD|STORE)_\w+)", hdr.read_text(), re.M))
    assert theirs == set(tmem.tmem_copy_names())


def test_maps_match_cute():
    """For all 148 atoms, every thread, register and 16-bit half: the (lane, column, bit) the PTX model
    says equals CuTe's Copy_Traits (register-side layout through ValID; lane = bit address >> 21)."""
    cxx = compiler()
    if cxx is None:
        pytest.skip("CuTe C++ headers (SYMLAYOUT_CUTE_SITE) or g++ not available")
    names = tmem.tmem_copy_names()
    body = ["template <class Op, bool Load> void show(int i) {",
            "  using T = Copy_Traits<Op>;",
            "  using R = conditional_t<Load, typename T::DstLayout, typename T::SrcLayout>;",
            "  R reg{}; typename T::ValID vid{};",
            "  printf(\"%d\", i);",
            "  for (int t = 0; t < 32; ++t) for (int v = 0; v < int(size<1>(reg)); v += 16) {",
            "    long a = vid(reg(t, v)); printf(\" %ld.%ld.%ld\", a >> 21, (a & ((1 << 21) - 1)) / 32, a % 32); }",
            "  printf(\"\\n\"); }", "int main() {"]
    body += [f"  show<{n}, {'true' if '_LOAD_' in n else 'false'}>({i});" for i, n in enumerate(names)]
    body.append("}")
    lines = cxx.run("\n".join(body) + "\n").splitlines()
    assert len(lines) == len(names)
    checked = 0
    for line in lines:
        i, *cells = line.split()
        op = tmem.tmem_copy_op(names[int(i)])
        ours = []
        for t in range(32):
            for r in range(op.registers):
                for h in (0, 1):
                    lane, col = op.cell(t, r, h) if op.pack16 else op.cell(t, r)
                    ours.append(f"{lane}.{col}.{0 if op.pack16 else 16 * h}")
        assert cells == ours, op.name
        checked += len(ours)
    assert checked > 100000


# --- the accumulator datapath (tmem_frg) ------------------------------------

ACC_CASES = [
    ("SM100_MMA_F16BF16_SS<half_t,half_t,float,128,256,UMMA::Major::K,UMMA::Major::K>", (128, 256, 2)),
    ("SM100_MMA_F16BF16_SS<half_t,half_t,float,64,128,UMMA::Major::K,UMMA::Major::K>", (128, 128, 1)),
    ("SM100_MMA_F16BF16_TS<half_t,half_t,float,64,64,UMMA::Major::K,UMMA::Major::K>", (128, 64, 1)),
    ("SM100_MMA_F16BF16_SS<half_t,half_t,half_t,128,64,UMMA::Major::K,UMMA::Major::K>", (128, 128, 1)),
    ("SM100_MMA_TF32_2x1SM_SS<tfloat32_t,tfloat32_t,float,256,128,UMMA::Major::K,UMMA::Major::K>", (256, 128, 2)),
    ("SM100_MMA_F16BF16_2x1SM_SS<half_t,half_t,float,128,64,UMMA::Major::K,UMMA::Major::K>", (256, 64, 1)),
    ("SM100_MMA_S8_SS<int8_t,int8_t,int32_t,128,64,UMMA::Major::K,UMMA::Major::K>", (128, 64, 1)),
    ("SM100_MMA_F16BF16_2x1SM_TS<half_t,half_t,float,256,128,UMMA::Major::K,UMMA::Major::K>", (256, 128, 2)),
    ("SM100_MMA_S8_2x1SM_TS<int8_t,int8_t,int32_t,128,64,UMMA::Major::K,UMMA::Major::K>", (128, 64, 1)),
]


def test_accumulator_datapath_matches_cute():
    """make_fragment_C of SM100 TiledMMAs (M = 64/128 on one CTA, interleaved and not; M = 128/256 on a
    CTA pair; f32, f16 and s32 accumulators): every element's (lane, column) is CuTe's tmem_frg's."""
    cxx = compiler()
    if cxx is None:
        pytest.skip("CuTe C++ headers (SYMLAYOUT_CUTE_SITE) or g++ not available")
    body = ["int main() {"]
    for i, (name, (m, n, s)) in enumerate(ACC_CASES):
        body += [f"  {{ auto mma = make_tiled_mma({cpp_atom(umma.parse_umma_name(name))});",
                 f"    auto shp = partition_shape_C(mma, make_shape(Int<{m}>{{}}, Int<{n}>{{}}, Int<{s}>{{}}));",
                 "    auto acc = make_tensor<typename decltype(mma)::FrgTypeC>(shp);",
                 f'    printf("{i}"); for (int j = 0; j < int(size(acc)); ++j) printf(" %d", int(acc.layout()(j)));',
                 '    printf("\\n"); }']
    body.append("}")
    checked = 0
    lines = cxx.run("\n".join(body) + "\n").splitlines()
    assert len(lines) == len(ACC_CASES)
    for line in lines:
        i, *vals = line.split()
        name, tile = ACC_CASES[int(i)]
        mma = make_tiled_mma(umma.umma_mma_atom(name))
        p, _ = mma.get_slice(0).partition("C", Layout(tile))
        ours = function_table(accumulator_layout(mma, p.shape))
        shift = {32: 0, 16: 1}[value_type_bits(mma.atom.val_type_c)]
        theirs = [(int(v) >> (16 + shift), (int(v) & ((1 << (16 + shift)) - 1)) >> shift) for v in vals]
        assert [(int(v) % 128, int(v) // 128) for v in ours] == theirs, name
        checked += len(theirs)
    assert checked > 50000


def test_tmem_frg_rejections():
    """CuTe's tmem_frg asserts: an M the datapath has no layout for, and more TMEM than the CTA has."""
    with pytest.raises(CuteStaticAssert, match="M-mode size should be 64 or 128"):
        tmem_frg_layout(32, 32, 1, "Interleaved", ((32, 64), 1, 1))
    with pytest.raises(CuteStaticAssert, match="more TMEM"):
        tmem_frg_layout(32, 32, 1, "Interleaved", ((128, 256), 1, 1, 3))
    with pytest.raises(CuteStaticAssert, match="Duplicated"):
        tmem_frg_layout(32, 32, 2, "NonInterleaved", ((64, 64), 1, 1))


def test_traits_layouts_match_cute():
    """ValID, the TMEM-side and the register-side layouts of all 148 atoms are CuTe's Copy_Traits
    layouts as functions (same domain, same value at every point; stores swap Src and Dst)."""
    cxx = compiler()
    if cxx is None:
        pytest.skip("CuTe C++ headers (SYMLAYOUT_CUTE_SITE) or g++ not available")
    names = tmem.tmem_copy_names()
    body = ["template <class Op> void show(int i) { using T = Copy_Traits<Op>;",
            '  printf("%d V ", i); print(typename T::ValID{}); printf("\\n");',
            '  printf("%d S ", i); print(typename T::SrcLayout{}); printf("\\n");',
            '  printf("%d D ", i); print(typename T::DstLayout{}); printf("\\n");',
            '  printf("%d R ", i); print(typename T::RefLayout{}); printf("\\n"); }', "int main() {"]
    body += [f"  show<{n}>({i});" for i, n in enumerate(names)]
    body.append("}")
    got = {}
    for line in cxx.run("\n".join(body) + "\n").splitlines():
        i, key, text = line.split(" ", 2)
        got[(int(i), key)] = parse_layout(strip(text))
    assert len(got) == 4 * len(names)

    def same(a, b):
        return a.size() == b.size() and list(function_table(a)) == list(function_table(b))

    def same_coalesced(a, b):             # the TMEM-side layouts (stride-0 threads): too big to tabulate
        return str(coalesce(a)) == str(coalesce(b))
    for i, n in enumerate(names):
        op = tmem.tmem_copy_op(n)
        load = op.direction == "load"
        assert same(op.val_id, got[(i, "V")]), n
        assert same_coalesced(op.tmem_layout, got[(i, "S" if load else "D")]), n
        assert same(op.register_layout, got[(i, "D" if load else "S")]), n
        assert same_coalesced(op.tmem_layout, got[(i, "R")]), n


# --- make_tmem_copy over the accumulator ------------------------------------

T2R_CASES = [
    ("SM100_MMA_F16BF16_SS<half_t,half_t,float,128,64,UMMA::Major::K,UMMA::Major::K>", (128, 64), "SM100_TMEM_LOAD_32dp32b16x"),
    ("SM100_MMA_F16BF16_SS<half_t,half_t,float,128,256,UMMA::Major::K,UMMA::Major::K>", (128, 256), "SM100_TMEM_LOAD_32dp32b32x"),
    ("SM100_MMA_TF32_2x1SM_SS<tfloat32_t,tfloat32_t,float,256,128,UMMA::Major::K,UMMA::Major::K>", (256, 128), "SM100_TMEM_LOAD_32dp32b8x"),
    ("SM100_MMA_S8_SS<int8_t,int8_t,int32_t,128,64,UMMA::Major::K,UMMA::Major::K>", (128, 64), "SM100_TMEM_STORE_32dp32b4x"),
    ("SM100_MMA_F16BF16_SS<half_t,half_t,float,64,64,UMMA::Major::K,UMMA::Major::K>", (64, 64), "SM100_TMEM_LOAD_16dp256b2x"),
    ("SM100_MMA_F16BF16_SS<half_t,half_t,float,64,64,UMMA::Major::K,UMMA::Major::K>", (64, 64), "SM100_TMEM_LOAD_16dp32b8x"),
]


def test_make_tmem_copy_matches_cute():
    """make_tmem_copy(atom, tCtAcc): for every one of the 128 threads, partition_S / partition_D of the
    accumulator (the TMEM addresses it reads, in order) and partition_D of the C tile (which (m, n) each
    register receives) equal CuTe C++'s."""
    cxx = compiler()
    if cxx is None:
        pytest.skip("CuTe C++ headers (SYMLAYOUT_CUTE_SITE) or g++ not available")
    body = ["int main() {"]
    for i, (name, (m, n), atom) in enumerate(T2R_CASES):
        op = umma.parse_umma_name(name)
        load = "_LOAD_" in atom
        body += [f"  {{ auto mma = make_tiled_mma({cpp_atom(op)});",
                 f"    static {op.c_type} buf[{m * n}];",
                 f"    auto gC = make_tensor(make_gmem_ptr(buf), make_layout(make_shape(Int<{m}>{{}}, Int<{n}>{{}})));",
                 "    auto tCgC = mma.get_slice(0).partition_C(gC);",
                 "    auto acc = make_tensor<typename decltype(mma)::FrgTypeC>(shape(tCgC));",
                 f"    auto tc = make_tmem_copy({atom}{{}}, acc);",
                 "    for (int t = 0; t < 128; ++t) { auto thr = tc.get_slice(t);",
                 f"      auto tm = thr.partition_{'S' if load else 'D'}(acc); auto g = thr.partition_{'D' if load else 'S'}(tCgC);",
                 f'      printf("{i} %d T", t); for (int j = 0; j < int(size(tm)); ++j)'
                 ' printf(" %u", uint32_t(raw_pointer_cast(tm.data())) + uint32_t(tm.layout()(j)));',
                 '      printf(" G"); for (int j = 0; j < int(size(g)); ++j) printf(" %d", int(&g(j) - buf));',
                 '      printf("\\n"); } }']
    body.append("}")
    lines = cxx.run("\n".join(body) + "\n").splitlines()
    assert len(lines) == 128 * len(T2R_CASES)
    checked = 0
    for line in lines:
        i, t, rest = line.split(" ", 2)
        tm_txt, g_txt = rest[2:].split(" G")
        name, (m, n), atom = T2R_CASES[int(i)]
        mma = make_tiled_mma(umma.umma_mma_atom(name))
        cl, coff = mma.get_slice(0).partition("C", Layout((m, n)))
        acc = tmem_address_layout(accumulator_layout(mma, cl.shape), 32)
        op = tmem_copy_op(atom)
        thr = make_tmem_copy(op, mma.atom.val_type_c, acc).get_slice(int(t))
        tp, to = thr.partition_S(acc) if op.direction == "load" else thr.partition_D(acc)
        gp, go = thr.partition_D(cl) if op.direction == "load" else thr.partition_S(cl)
        ours_t = [int(to) + int(v) for v in function_table(tp)]
        ours_g = [int(coff) + int(go) + int(v) for v in function_table(gp)]
        assert ours_t == [int(x) for x in tm_txt.split()], (atom, t)
        assert ours_g == [int(x) for x in g_txt.split()], (atom, t)
        checked += len(ours_t)
    assert checked > 10000


@pytest.mark.parametrize("case", T2R_CASES, ids=[c[2] for c in T2R_CASES])
def test_tmem_copy_access_rule(case):
    """CuTe's make_tmem_copy partitions respect the warp access rule when slice i runs on warp 4+i (an
    epilogue warpgroup), and break it when the slices run on warps shifted by one."""
    name, (m, n), atom = case
    mma = make_tiled_mma(umma.umma_mma_atom(name))
    cl, _ = mma.get_slice(0).partition("C", Layout((m, n)))
    acc = tmem_address_layout(accumulator_layout(mma, cl.shape), 32)
    tc = make_tmem_copy(tmem_copy_op(atom), mma.atom.val_type_c, acc)
    assert access_violations(tc, acc, 32, warps=(4, 5, 6, 7)) == []
    assert len(access_violations(tc, acc, 32, warps=(1, 2, 3, 4))) == 4


# --- the TMEM budget ------------------------------------------------------------

def test_budget_384_columns_pitfall():
    """A 128x192 f32 accumulator in two stages needs 384 columns: tcgen05.alloc(384) is refuted (not a
    power of two), 512 holds it."""
    acc = tmem_frg_layout(32, 32, 1, "Interleaved", ((128, 192), 1, 1, 2))
    bad, n = tmem_budget_problems(384, acc)
    assert bad == ["nCols 384 is not a power of two"] and n == 2
    assert tmem_budget_problems(512, acc) == ([], 2)


def test_budget_outside_and_overlap():
    acc = tmem_frg_layout(32, 32, 1, "Interleaved", ((128, 256), 1, 1, 2))
    bad, _ = tmem_budget_problems(256, acc)
    assert any("outside the 256 allocated columns" in b for b in bad)
    bad, n = tmem_budget_problems(512, None, regions={"S0": (0, 128), "S1": (128, 128), "O0": (255, 128)})
    assert bad == ["region S1 (columns 128..255) and region O0 (columns 255..382) share columns 255..255"]
    assert n == 1 + 3 + 3
    assert tmem_budget_problems(512, None, regions={"S0": (0, 128), "S1": (128, 128), "O0": (256, 256)})[0] == []


A_TMEM_CASES = [
    ("SM100_MMA_F16BF16_TS<half_t,half_t,float,64,64,UMMA::Major::K,UMMA::Major::K>", (128, 64)),
    ("SM100_MMA_F16BF16_TS<bfloat16_t,bfloat16_t,float,128,128,UMMA::Major::K,UMMA::Major::MN>", (128, 64)),
    ("SM100_MMA_TF32_TS<tfloat32_t,tfloat32_t,float,128,64,UMMA::Major::K,UMMA::Major::K>", (128, 32)),
    ("SM100_MMA_S8_TS<int8_t,int8_t,int32_t,64,64,UMMA::Major::K,UMMA::Major::K>", (64, 128)),
    ("SM100_MMA_F16BF16_2x1SM_TS<half_t,half_t,float,256,64,UMMA::Major::K,UMMA::Major::K>", (256, 64)),
]


def test_a_operand_in_tmem_matches_cute():
    """TS atoms: make_fragment_A (A read from Tensor Memory, NonInterleaved / Duplicated, element-sized
    cells) puts every element of A at CuTe's TMEM address (16-, 32- and 8-bit A; 1 and 2 CTAs)."""
    cxx = compiler()
    if cxx is None:
        pytest.skip("CuTe C++ headers (SYMLAYOUT_CUTE_SITE) or g++ not available")
    body = ["int main() {"]
    for i, (name, (m, k)) in enumerate(A_TMEM_CASES):
        body += [f"  {{ auto mma = make_tiled_mma({cpp_atom(umma.parse_umma_name(name))});",
                 f"    auto shp = partition_shape_A(mma, make_shape(Int<{m}>{{}}, Int<{k}>{{}}));",
                 "    auto a = make_tensor<typename decltype(mma)::FrgTypeA>(shp);",
                 f'    printf("{i}"); for (int j = 0; j < int(size(a)); ++j) printf(" %d", int(a.layout()(j)));',
                 '    printf("\\n"); }']
    body.append("}")
    lines = cxx.run("\n".join(body) + "\n").splitlines()
    assert len(lines) == len(A_TMEM_CASES)
    checked = 0
    for line in lines:
        i, *vals = line.split()
        name, tile = A_TMEM_CASES[int(i)]
        mma = make_tiled_mma(umma.umma_mma_atom(name))
        p, _ = mma.get_slice(0).partition("A", Layout(tile))
        bits = value_type_bits(mma.atom.val_type_a)
        dp = (1 << 16) * (32 // bits)
        ours = [(int(v) % 128) * dp + int(v) // 128 for v in function_table(a_operand_layout(mma, p.shape))]
        assert ours == [int(v) for v in vals], name
        checked += len(ours)
    assert checked > 10000


def test_a_operand_of_an_ss_atom_is_refused():
    mma = make_tiled_mma(umma.umma_mma_atom(
        "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,64,UMMA::Major::K,UMMA::Major::K>"))
    with pytest.raises(CuteStaticAssert):
        a_operand_layout(mma, ((128, 16), 1, 4))
