"""Fixes for a copy CuTe rejects because its TiledCopy has too few values for the atom.

``make_tiled_copy_A/B/C(atom, mma)`` gives each thread the values the TiledMMA's
fragment holds over the copy tile; an ldmatrix ``x4`` / ``.T x8`` atom needs more
than a small TiledMMA tile gives (``static_assert "TiledCopy uses too few vals for
selected CopyAtom"``).  Two fixes make it compile: a permutation tile that widens
the TiledMMA along the operand's modes (``[mma] permutation``), or the smaller
atom of the same family.  Each candidate is checked with the same replay of
CuTe's static_asserts the prover uses (:func:`~symlayout.prove.copy.model.cute_build_check`).

>>> from symlayout.config import loads_config
>>> cfg = loads_config('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\nlayout = "(2,2,1)"\\n'
...                    '[copy.B]\\natom = "SM75_U16x8_LDSM_T"\\ntype = "half_t"\\nsmem = "(32,32):(1,32)"\\n')
>>> print(too_few_vals_fix(cfg, cfg.copies["B"]))
[copy.B] (line 4): fix: [mma] permutation = "(32,16,32)" (widens the TiledMMA's K tile 16 -> 32), or atom = "SM75_U16x4_LDSM_T"
"""
from __future__ import annotations

import re

from ...errors import SymlayoutError
from ...tiled.mma import make_tiled_mma
from .model import cute_build_check

#: CuTe's static_assert this module explains
TOO_FEW_VALS = "TiledCopy uses too few vals for selected CopyAtom"

_MODES = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}


def _compiles(cfg, cc, atom, permutation) -> bool:
    try:
        mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, permutation)
        cute_build_check(mma, cc.operand, atom, cc.element_type, cc.smem, getattr(cc, "convert", False))
    except SymlayoutError:
        return False
    return True


def smaller_atoms(name: str) -> list:
    """The same ldmatrix/stmatrix family with fewer matrices, largest first.

    >>> smaller_atoms("SM75_U32x4_LDSM_N"), smaller_atoms("SM75_U16x8_LDSM_T")
    (['SM75_U32x2_LDSM_N', 'SM75_U32x1_LDSM_N'], ['SM75_U16x4_LDSM_T', 'SM75_U16x2_LDSM_T'])
    """
    m = re.fullmatch(r"(SM\d+_U(?:32|16)x)(\d+)(_(?:LDSM|STSM)_[NT])", name)
    if not m:
        return []
    n = int(m.group(2))
    lo = 2 if "U16" in m.group(1) else 1
    out, k = [], n // 2
    while k >= lo:
        out.append(f"{m.group(1)}{k}{m.group(3)}")
        k //= 2
    return out


def permutation_candidates(cfg, operand):
    """Permutation tiles widening the operand's modes by 2 or 4 (the other mode as the TiledMMA has it)."""
    base = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation).tile_shape()
    if not all(isinstance(x, int) for x in base):
        return
    i, j = _MODES[operand]
    for fi, fj in ((1, 2), (2, 1), (2, 2), (1, 4), (4, 1)):
        t = list(base)
        t[i] *= fi
        t[j] *= fj
        yield tuple(t), base


def too_few_vals_fix(cfg, cc) -> str:
    """The one-line fix for a ``[copy.X]`` whose TiledCopy has too few values ('' when none found)."""
    where = f"[copy.{cc.operand}] (line {cfg.line('copy', cc.operand)})"
    fixes = []
    for tile, base in permutation_candidates(cfg, cc.operand):
        perm = "(" + ",".join(map(str, tile)) + ")"
        if _compiles(cfg, cc, cc.atom, perm):
            grown = [f"{'MNK'[k]} tile {base[k]} -> {tile[k]}" for k in range(3) if tile[k] != base[k]]
            fixes.append(f"[mma] permutation = \"{perm}\" (widens the TiledMMA's {', '.join(grown)})")
            break
    for a in smaller_atoms(cc.atom):
        if _compiles(cfg, cc, a, cfg.mma.permutation):
            fixes.append(f"atom = \"{a}\"")
            break
    if not fixes:
        return ""
    return f"{where}: fix: " + ", or ".join(fixes)
