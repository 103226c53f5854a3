"""SM90 TMA: CuTe's make_tma_copy (symlayout.atoms.tma) against CuTe C++ (tests/data/sm90/tma.jsonl),
and the driver's rules (symlayout.arch.tma) on what CuTe derives."""
from __future__ import annotations

import doctest
import importlib
import json
from pathlib import Path

import pytest

from symlayout.arch import tma as arch
from symlayout.atoms import gmma as cg
from symlayout.atoms import tma as ct
from symlayout.algebra.layout import Layout
from symlayout.algebra.notation import parse
from symlayout.algebra.symbolic import DynInt

DATA = Path(__file__).resolve().parent / "data" / "sm90"
SWIZZLE_NAMES = {0: "none", 1: "32B", 2: "64B", 3: "128B"}


def _cases(op):
    with open(DATA / "tma.jsonl") as f:
        rows = [json.loads(line) for line in f]
    return [pytest.param(r, id=r["id"]) for r in rows if r["op"] == op]


@pytest.mark.parametrize("mod", ["symlayout.arch.tma", "symlayout.atoms.tma"])
def test_doctests(mod):
    res = doctest.testmod(importlib.import_module(mod), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


def _int(s: str):
    """'Int<64>' is a static 64, '512' a run-time 512 (CuTe's int)."""
    return int(s[4:-1]) if s.startswith("Int<") else DynInt(int(s))


def _smem(t, spec):
    kind, shape, order = spec
    if kind == "plain":
        return Layout(tuple(shape), tuple(order))
    return cg.layout_atom(kind, t).tile_to_shape(tuple(shape), tuple(order))


def _run(args):
    name, t, gshape, gstride, sspec, tiler, op, cluster = args
    g = (tuple(_int(x) for x in gshape), tuple(_int(x) for x in gstride))
    return ct.make_tma_copy(t, g, _smem(t, sspec), tuple(tiler) if tiler else None, cluster, op)


@pytest.mark.parametrize("case", _cases("make_tma_copy"))
def test_make_tma_copy(case):
    exp = case["expect"]
    if exp.get("aborts"):
        with pytest.raises(ct.TmaCopyError) as ei:
            _run(case["args"])
        assert exp["assertion"].split("(")[0].strip() in str(ei.value)
        return
    got = _run(case["args"])
    assert str(_smem(case["args"][1], case["args"][4])) == exp["smem"]
    assert got.rank == exp["rank"]
    assert list(got.global_dim) == exp["global_dim"]
    assert list(got.global_strides) == exp["global_strides"]
    assert list(got.box_dim) == exp["box_dim"]
    assert list(got.element_strides) == exp["element_strides"]
    assert got.swizzle == SWIZZLE_NAMES[exp["swizzle"]]
    assert arch.DATA_TYPES[got.data_type][0] == exp["data_type"]
    assert (exp["interleave"], exp["l2_promotion"], exp["oob_fill"]) == (0, 2, 0)
    assert "(" + ",".join(map(str, got.tiler)) + ")" == exp["tiler"]
    assert got.encode_problems() == []          # what CuTe derives, the driver accepts


_REJECTED = {
    "SM80 element swizzle Sw<3,3,3>": lambda: ct.make_tma_copy(
        "half_t", ((DynInt(1024), DynInt(512)), (DynInt(512), 1)),
        parse("Sw<3,3,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))")),
    "smem K-major, gmem MN-major": lambda: ct.make_tma_copy(
        "half_t", ((DynInt(1024), DynInt(512)), (1, DynInt(1024))),
        cg.layout_atom("K_SW128", "half_t").tile_to_shape((128, 64))),
    "gmem row stride not a multiple of 16 bytes": lambda: ct.make_tma_copy(
        "half_t", ((DynInt(1024), DynInt(500)), (DynInt(502), 1)),
        cg.layout_atom("K_SW128", "half_t").tile_to_shape((128, 64))),
}


@pytest.mark.parametrize("case", _cases("make_tma_copy_rejected"))
def test_make_tma_copy_rejected(case):
    exp = case["expect"]
    build = _REJECTED[case["args"][0]]
    if exp.get("compiles") and not exp.get("aborts"):
        build()
        return
    with pytest.raises(ct.TmaCopyError) as ei:
        build()
    text = (exp.get("error") or exp.get("assertion") or "").rstrip(".")
    assert text and text in str(ei.value)


def test_box_landing_matches_cute_smem_layout():
    """One checks the other: the box TMA writes (arch.tma, measured on the H200) lands
    each element where CuTe's smem layout puts it, for the boxes CuTe derives."""
    for kind, t, tile, order, gstride in (("K_SW128", "half_t", (128, 64), (1, 2), (DynInt(512), 1)),
                                          ("K_SW64", "half_t", (64, 32), (1, 2), (DynInt(256), 1)),
                                          ("K_SW32", "bfloat16_t", (64, 16), (1, 2), (DynInt(64), 1)),
                                          ("K_SW128", "tfloat32_t", (128, 32), (1, 2), (DynInt(128), 1)),
                                          ("MN_SW128", "half_t", (128, 64), (2, 1), (1, DynInt(1024))),
                                          ("K_SW128", "float_e4m3_t", (128, 128), (1, 2), (DynInt(1024), 1))):
        sm = cg.layout_atom(kind, t).tile_to_shape(tile, order)
        g = ((DynInt(4096), DynInt(4096)), gstride)
        tc = ct.make_tma_copy(t, g, sm)
        e = sm.bits // 8
        base = 0x800
        land = arch.box_landing(base, tc.box_dim, e, tc.swizzle)
        # box dimension i walks global mode basis[i]; with one box (the whole tile) the
        # box coordinate is the tile coordinate of those modes
        assert len(tc.basis) == 2 and all(len(b) == 1 for b in tc.basis)
        count = 0
        for c, addr in land.items():
            coord = [0, 0]
            for ci, (j,) in zip(c, tc.basis):
                coord[j] = ci
            if coord[0] >= tile[0] or coord[1] >= tile[1]:
                continue
            assert sm.byte_address(tuple(coord), base) == addr, (kind, t, c)
            count += 1
        assert count == tc.box_dim[0] * tc.box_dim[1]
