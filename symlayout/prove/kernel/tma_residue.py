"""Predicated tails through TMA (``residue`` on ``[tma.X]``): the tensor map's extents are the problem's.

TMA checks every box element against the extents of the tensor map: past them a load writes zeros into
shared memory and a store writes nothing.  A kernel that relies on it (no predicate of its own) is right
for every problem size exactly when, along each mode the problem cuts, the map's extent is the problem's
extent: then the last tile's box elements past the problem (every residue ``r`` of the extent modulo the
tile) are zero-filled or dropped, and the ones before it are moved.  The problem's extent along mode ``X``
is the ``[params]`` symbol ``X``; ``in_bounds`` (operand ``"tma.X"``, via ``tma``) proves the map's extent equal to it as
polynomials in the parameters (one obligation per residue class), and a map over anything else (a padded
allocation, a rounded extent) is refuted at the least admissible problem size where they differ, with the
first element that TMA then moves past the problem (or leaves out inside it).

>>> from symlayout.algebra.notation import parse
>>> from symlayout.config import Param
>>> from symlayout.config.model import TmaConfig
>>> class Cfg: params = {"M": Param("M", 1, 65536), "K": Param("K", 64, 65536, 64)}
>>> syms = {n: p.symbol for n, p in Cfg.params.items()}
>>> tc = TmaConfig("A", "SM90_TMA_LOAD", 1, parse("(M,K):(K,1)", syms), (128, 64), None, "(M,K):(K,1)", residue=("M",))
>>> [(r.property, r.status, r.checked) for r in tma_residue_results(Cfg, tc)]
[('in_bounds', 'proved', 128)]
"""
from __future__ import annotations

import time

from ...algebra._lazy import sympy
from ...algebra.int_tuple import product
from ...config.keys import OPERAND_MODES
from ..verdict.result import Counterexample, PROVED, REFUTED, Result

#: most admissible values of a problem extent tried for the least one where the map's extent differs
MAX_TRIED = 1 << 16


def residue_classes(p, tile: int) -> list:
    """The residues ``v mod tile`` (``tile`` for 0: a whole last tile) of the admissible values of ``p``."""
    out, v = set(), -(-p.min // p.multiple_of) * p.multiple_of
    for _ in range(tile + 1):
        if v > p.max:
            break
        out.add(v % tile or tile)
        v += p.multiple_of
    return sorted(out)


def _values(p):
    if p.count() <= MAX_TRIED:
        return p.values()
    return [p.first_value(), p.max]


def _first_difference(cfg, extent, sym_name):
    """The least admissible problem size where the map's extent differs from it: ``(size, extent there)``; the
    other symbols at their first admissible values."""
    p = cfg.params[sym_name]
    others = {s: cfg.params[s.name].first_value() for s in getattr(extent, "free_symbols", ())
              if s.name != sym_name and s.name in cfg.params}
    for v in _values(p):
        env = dict(others)
        env.update({s: v for s in getattr(extent, "free_symbols", ()) if s.name == sym_name})
        e = int(extent.subs(env)) if env or hasattr(extent, "subs") else int(extent)
        if e != v:
            return v, e
    return None


def tma_residue_results(cfg, tc, store: bool = False) -> list:
    """``in_bounds`` (via ``tma``) of each ``residue`` mode of one ``[tma.X]``."""
    op = tc.operand
    names = OPERAND_MODES[op]
    t0 = time.perf_counter()
    checked, cex, details = 0, None, []
    for x in tc.residue:
        d = names.index(x)
        extent = product(tc.gmem.shape[d])
        p = cfg.params[x]
        tile = int(tc.box[d]) if d < len(tc.box) else 1
        sym = p.symbol
        if sympy.simplify(sympy.sympify(extent) - sym) == 0:
            rs = residue_classes(p, tile)
            checked += len(rs)
            details.append(f"{x}: the map's extent is the problem's, residues {_span(rs)} of the {tile}-wide tile "
                           f"{'dropped' if store else 'zero-filled'} past it")
            continue
        hit = _first_difference(cfg, sympy.sympify(extent), x)
        checked += 1
        if hit is None:
            details.append(f"{x}: the map's extent {extent} equals the problem's at every admissible value")
            continue
        v, e = hit
        r = v % tile or tile
        if e > v:
            what = (f"writes it to memory, where the problem has no {x.lower()} = {v}" if store else
                    "reads it from memory instead of filling zeros")
            msg = (f"{x} = {v} (residue {r} of the {tile}-wide tile): the tensor map's extent along {x} is {e} "
                   f"({extent}), so TMA moves {op}({x.lower()}={v}), past the problem, and {what}")
        else:
            what = "never stores it" if store else "loads it as zero"
            msg = (f"{x} = {v}: the tensor map's extent along {x} is {e} ({extent}), so {op}({x.lower()}={e}) lies "
                   f"inside the problem but outside the map: TMA {what}")
        cex = Counterexample(msg, params={x: v}, extra={"residue": {x: r}, "map_extent": e, "problem_extent": v})
        break
    detail = "; ".join(details)
    return [Result("in_bounds", REFUTED if cex else PROVED, operand=f"tma.{op}", checked=checked, method="exhaustive",
                   counterexample=cex, via="tma", seconds=time.perf_counter() - t0,
                   detail=("TMA bounds: " + detail) if detail else "")]


def _span(rs):
    return f"{{{rs[0]}..{rs[-1]}}}" if len(rs) > 3 else "{" + ", ".join(map(str, rs)) + "}"
