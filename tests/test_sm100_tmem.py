"""Tensor Memory: tcgen05.alloc, the warp access rule, and the tcgen05.ld/st lane/register maps
(symlayout.arch.tcgen05, symlayout.atoms.tmem) -- each rule with a case where it fails, and the maps
against CuTe's SM100_TMEM_LOAD/STORE Copy_Traits evaluated in C++ (host-only)."""
from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

from symlayout.arch import tcgen05 as arch
from symlayout.atoms import tmem
from symlayout.errors import AtomError
from sm100_cpp import compiler
from cute_cpp import cute_site


@pytest.mark.parametrize("mod", ["symlayout.atoms.tmem", "symlayout.arch.tcgen05"])
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
