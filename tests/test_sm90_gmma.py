"""SM90 GMMA: CuTe's traits (symlayout.atoms.gmma) against CuTe C++ (tests/data/sm90),
the PTX-ISA facts (symlayout.arch.gmma) against CuTe's traits ("one checks the
other"), and the TiledMMA partitions of GMMA atoms against CuTe C++."""
from __future__ import annotations

import doctest
import importlib
import json
from pathlib import Path

import pytest

from symlayout.arch import gmma as arch
from symlayout.atoms import gmma as cg
from symlayout.atoms import value_type_bits, value_type_info
from symlayout.algebra.layout import Layout, function_table, slice_
from symlayout.algebra.int_tuple import _
from symlayout.algebra.notation import parse, parse_layout
from symlayout.algebra.composed import Swizzle
from symlayout.tiled.mma import make_tiled_mma

DATA = Path(__file__).resolve().parent / "data" / "sm90"


def _cases(fname, op):
    with open(DATA / fname) as f:
        rows = [json.loads(line) for line in f]
    return [pytest.param(r, id=r["id"]) for r in rows if r["op"] == op]


def _table(L):
    return [int(L(i)) for i in range(L.size())]


def _check_value(got, exp, what):
    assert str(got) == exp["layout"], f"{what}: print {got} != {exp['layout']}"
    if exp.get("table") is not None:
        assert _table(got) == exp["table"], f"{what}: function table differs"


@pytest.mark.parametrize("mod", ["symlayout.arch", "symlayout.arch.gmma", "symlayout.atoms.gmma",
                                 "symlayout.harness.probe_sm90"])
def test_doctests(mod):
    res = doctest.testmod(importlib.import_module(mod), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


# ---------------------------------------------------------------------------
# CuTe conformance: atoms, tile_to_shape, make_gmma_desc, MMA atoms
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", _cases("gmma_atoms.jsonl", "gmma_layout_atom"))
def test_layout_atom(case):
    kind, t = case["args"]
    a = cg.layout_atom(kind, t)
    assert str(a) == case["expect"]["print"]
    _check_value(a.layout, case["expect"]["layout"], "layout")
    assert str(a.position_independent()) == case["expect"]["position_independent"]


@pytest.mark.parametrize("case", _cases("gmma_atoms.jsonl", "gmma_tile_to_shape"))
def test_tile_to_shape(case):
    kind, t, shape, order = case["args"]
    got = cg.layout_atom(kind, t).tile_to_shape(tuple(shape), tuple(order))
    assert str(got) == case["expect"]["print"]
    _check_value(got.layout, case["expect"]["layout"], "layout")


@pytest.mark.parametrize("case", _cases("gmma_atoms.jsonl", "make_gmma_desc"))
def test_make_gmma_desc(case):
    major, kind, t, tile, blk, coord = case["args"]
    exp = case["expect"]
    atom = cg.layout_atom(kind, t)
    tiled = atom.tile_to_shape(tuple(tile))
    assert str(tiled.layout) == exp["tile"].split(" o ")[-1]
    block = parse_layout(exp["block"]["layout"])
    d = cg.make_gmma_desc(major, block, value_type_bits(t), atom.swizzle)   # host start address is 0
    assert d.fields() == {k: exp["desc"][k] for k in d.fields()}
    assert d.value == int(exp["desc"]["value"], 16)


@pytest.mark.parametrize("case", _cases("gmma_atoms.jsonl", "gmma_mma_atom"))
def test_gmma_mma_atom(case):
    name = case["args"][0]
    exp = case["expect"]
    a = cg.gmma_mma_atom(name)
    assert str(Layout(a.shape_mnk)).split(":")[0] == exp["Shape_MNK"]
    for key, got in (("ThrID", a.thr_id), ("LayoutA_TV", a.a_layout), ("LayoutB_TV", a.b_layout),
                     ("LayoutC_TV", a.c_layout)):
        _check_value(got, exp[key], key)
    assert [a.val_type_d, a.val_type_a, a.val_type_b, a.val_type_c] == exp["ValTypes"]
    assert [a.a_regs.type, a.a_regs.count] == exp["ARegisters"]
    assert [a.c_regs.type, a.c_regs.count] == exp["CRegisters"]


def test_gmma_mma_atom_matches_catalog():
    """The 16-bit GMMA atoms built from the trait definitions equal the catalog's."""
    from symlayout.atoms.mma import get_mma_atom, mma_atom_names
    names = [n for n in mma_atom_names() if n.startswith("SM90_")]
    assert len(names) >= 192
    for n in names:
        for args in ("", "<GMMA::Major::K,GMMA::Major::MN>") if "_SS" in n else ("",):
            mine, cat = cg.gmma_mma_atom(n + args), get_mma_atom(n + args)
            assert mine.to_json() | {"ptx_model": None} == cat.to_json() | {"ptx_model": None}, n


# rejected snippets: the Python reproduction of each C++ snippet of generate.py (by name)
_REJECTED = {
    "K desc on an MN-major atom": ("K", lambda: cg.layout_atom("MN_SW128", "half_t").tile_to_shape((64, 16))),
    "MN desc on a K-major atom": ("MN", lambda: cg.GmmaSmemLayout(Swizzle(3, 4, 3), 16,
                                                                   parse_layout("((8,8),16):((64,512),1)"))),
    "K block of 64 halves (K-size 8 uint128)": ("K", lambda: cg.layout_atom("K_SW128", "half_t").tile_to_shape((64, 64))),
    "MN-size 4": ("K", lambda: cg.GmmaSmemLayout(Swizzle(1, 4, 3), 16, parse_layout("(4,16):(16,1)"))),
    "row-major plain layout, K desc": ("K", lambda: (parse_layout("(64,16):(16,1)"), 16)),
    "SM80 element swizzle": ("K", lambda: (parse("Sw<3,3,3> o 0 o (64,16):(64,1)"), 16)),
    "swizzle Sw<3,3,3> on the pointer": ("K", lambda: cg.GmmaSmemLayout(Swizzle(3, 3, 3), 16,
                                                                          parse_layout("(64,16):(64,1)"))),
    "MN desc with K = 16 floats": ("MN", lambda: cg.layout_atom("MN_SW128", "float").tile_to_shape((64, 16))),
    "rank-3 tensor": ("K", lambda: cg.layout_atom("K_SW128", "half_t").tile_to_shape((64, 64, 2))),
}


@pytest.mark.parametrize("case", _cases("gmma_atoms.jsonl", "make_gmma_desc_rejected"))
def test_make_gmma_desc_rejected(case):
    name = case["args"][0]
    major, build = _REJECTED[name]
    x = build()
    args = (x,) if isinstance(x, cg.GmmaSmemLayout) else (x[0], x[1])
    if case["expect"]["compiles"]:
        cg.make_gmma_desc(major, *args)
        return
    with pytest.raises(cg.GmmaDescriptorError) as ei:
        cg.make_gmma_desc(major, *args)
    err = case["expect"]["error"]
    if "static_assert" in err or "Not a canonical" in err or "Unsupported" in err or "rank-2" in err:
        assert err.rstrip(".") in str(ei.value)


# ---------------------------------------------------------------------------
# One checks the other: PTX facts (arch.gmma) vs CuTe traits (atoms.gmma)
# ---------------------------------------------------------------------------

_PTX_TYPES = ["half_t", "bfloat16_t", "tfloat32_t", "float_e4m3_t"]   # e5m2, s8, u8: same width as e4m3


def _blocks(kind, t):
    """(tile, block rows, k-blocks) combinations CuTe accepts for a layout atom."""
    bits = value_type_bits(t)
    kin = 256 // bits
    atom = cg.layout_atom(kind, t)
    r, c = atom.layout.shape
    out = []
    for rows in (64, 8, 24, 256):
        for ktile in (kin, 2 * kin):
            tr, tk = max(rows, r) * (2 if rows < 256 else 1), max(ktile, c)
            if tr % r or tk % c or tr % rows or tk % kin or (rows % r and r % rows):
                continue
            out.append(((tr, tk), rows))
    return out


@pytest.mark.parametrize("kind", cg.layout_atom_names())
@pytest.mark.parametrize("t", _PTX_TYPES)
def test_ptx_descriptor_reads_what_cute_lays_out(kind, t):
    """For every GMMA layout atom and type: tile it, cut every (rows x K) block a
    wgmma reads, build CuTe's descriptor, and check that the PTX model reads each
    element exactly at CuTe's (swizzled) byte address; 32-bit and 8-bit MN-major
    blocks are refused by the PTX model (the ISA has no transpose for them)."""
    atype = value_type_info(t)["ptx"]
    bits = value_type_bits(t)
    e = bits // 8
    kin = arch.instruction_k(atype)
    major = "K" if kind.startswith("K") else "MN"
    base = 0x2400                     # a 1024-byte aligned smem base
    checked = 0
    for (tr, tk), rows in _blocks(kind, t):
        sm = cg.layout_atom(kind, t).tile_to_shape((tr, tk))
        table = function_table(sm.layout)          # colexicographic: (r, k) -> table[r + tr*k]
        for bm in range(tr // rows):
            for bk in range(tk // kin):
                sub = _subblock(sm.layout, bm * rows, rows, bk * kin, kin)
                off = table[bm * rows + tr * bk * kin]
                d = cg.make_gmma_desc(major, sub, bits, sm.swizzle, start_address=base + off * e)
                ad = cg.arch_descriptor(d)
                if d.problems():              # CuTe would drop the low bits; the PTX model refuses the address
                    assert ad.problems()
                    checked += 1
                    continue
                if major == "MN" and not arch.supports_mn_major(atype):
                    with pytest.raises(ValueError):
                        arch.element_address(ad, major, atype, 0, 0)
                    checked += 1
                    continue
                for row in range(rows):
                    for k in range(kin):
                        cute_addr = sm.swizzle(base + table[bm * rows + row + tr * (bk * kin + k)] * e)
                        assert arch.element_address(ad, major, atype, row, k) == cute_addr, \
                            (kind, t, (tr, tk), rows, (bm, bk), (row, k))
                        checked += 1
    assert checked > 0


def _subblock(L, r0, rows, k0, kin):
    """The layout of the (rows x kin) block of a 2-D layout at (r0, k0) as CuTe's
    ``local_tile`` gives it: ``composition(L, (rows:1, kin:1))``, the same for
    every block when the block divides the tile (its offset is ``L(r0, k0)``)."""
    from symlayout.algebra.layout import composition
    return composition(L, (Layout(rows, 1), Layout(kin, 1)))


# ---------------------------------------------------------------------------
# TiledMMA partitions of GMMA atoms
# ---------------------------------------------------------------------------


def _mma_and_smem(args):
    atom, al, (M, N, K), st, ka, oa, kb, ob, ta, tb = args[:10]
    mma = make_tiled_mma(cg.gmma_mma_atom(atom), tuple(al))
    sA = cg.layout_atom(ka, ta).tile_to_shape((M, K, st), tuple(oa))
    sB = cg.layout_atom(kb, tb).tile_to_shape((N, K, st), tuple(ob))
    return mma, sA, sB


@pytest.mark.parametrize("case", _cases("gmma_partitions.jsonl", "gmma_tiled_mma"))
def test_gmma_tiled_mma(case):
    mma, sA, sB = _mma_and_smem(case["args"])
    exp = case["expect"]
    _check_value(mma.thr_layout_vmnk, exp["ThrLayoutVMNK"], "ThrLayoutVMNK")
    _check_value(mma.get_layoutA_TV(), exp["layoutA_TV"], "layoutA_TV")
    _check_value(mma.get_layoutB_TV(), exp["layoutB_TV"], "layoutB_TV")
    _check_value(mma.get_layoutC_TV(), exp["layoutC_TV"], "layoutC_TV")
    assert "(" + ",".join(map(str, mma.tile_shape())) + ")" == exp["tile_size"]
    assert mma.size() == exp["size"]
    assert str(sA) == exp["sA"] and str(sB) == exp["sB"]


@pytest.mark.parametrize("case", _cases("gmma_partitions.jsonl", "gmma_partition"))
def test_gmma_partition(case):
    args = case["args"]
    mma, sA, sB = _mma_and_smem(args)
    atom = cg.gmma_mma_atom(args[0])
    maj_a, maj_b = cg.gmma_majors(args[0])
    t = args[10]
    exp = case["expect"]
    thr = mma.get_slice(t)
    M, N, _K = args[2]
    pA, oA = thr.partition("A", sA.layout)
    _check_value(pA, exp["partition_A"], "partition_A")
    assert int(oA) == exp["offset_A"]
    pB, oB = thr.partition("B", sB.layout)
    _check_value(pB, exp["partition_B"], "partition_B")
    assert int(oB) == exp["offset_B"]
    gC = Layout((M, N))
    pC, oC = thr.partition("C", gC)
    _check_value(pC, exp["partition_C"], "partition_C")
    assert int(oC) == exp["offset_C"]
    _check_value(thr.partition_fragment("C", gC), exp["fragment_C"], "fragment_C")
    if atom.frg_type_a.startswith("GMMA::smem_desc"):
        dA, fA = cg.descriptor_fragment(pA, sA.bits, sA.swizzle, maj_a)
        _check_value(fA, exp["fragment_A"], "fragment_A")
        assert [hex(dA.advanced(fA(i)).value) for i in range(min(64, fA.size()))] == \
            [hex(int(v, 16)) for v in exp["descs_A"]]
    else:
        sA0 = slice_((_, _, 0), sA.layout)
        _check_value(mma.get_slice(t).partition_fragment("A", sA0), exp["fragment_A"], "fragment_A")
    dB, fB = cg.descriptor_fragment(pB, sB.bits, sB.swizzle, maj_b)
    _check_value(fB, exp["fragment_B"], "fragment_B")
    assert [hex(dB.advanced(fB(i)).value) for i in range(min(64, fB.size()))] == \
        [hex(int(v, 16)) for v in exp["descs_B"]]


@pytest.mark.parametrize("name", ["SM90_64x256x16_F32F16F16_RS", "SM90_64x64x8_F32TF32TF32_RS_TN",
                                  "SM90_64x128x32_F32E4M3E5M2_RS_TN", "SM90_64x8x32_S32S8S8_RS_TN",
                                  "SM90_64x24x16_F16F16F16_RS"])
def test_ptx_fragments_match_cute_tv_layouts(name):
    """One checks the other for registers: CuTe's ALayout_64xK (RS) and CLayout_64xN,
    ``(thread, value) -> m + 64*k`` / ``m + 64*n``, against the PTX fragments
    (value index = the PTX element index a_i / d_i)."""
    a = cg.gmma_mma_atom(name)
    atype = value_type_info(a.val_type_a)["ptx"]
    n = a.shape_mnk[1]
    for t in range(arch.WARPGROUP_SIZE):
        for i in range(arch.a_fragment_count(atype)):
            m, k = arch.a_fragment_elem(atype, t, i)
            assert a.a_layout((t, i)) == m + 64 * k
        for i in range(arch.accumulator_count(n)):
            m, nn = arch.accumulator_elem(t, i)
            assert a.c_layout((t, i)) == m + 64 * nn
    assert a.a_layout.size() == arch.WARPGROUP_SIZE * arch.a_fragment_count(atype)
    assert a.c_layout.size() == arch.WARPGROUP_SIZE * arch.accumulator_count(n)
