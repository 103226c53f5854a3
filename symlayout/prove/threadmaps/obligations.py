"""Proofs about CUTLASS 2.x thread maps (``[threadmap]`` configurations).

A thread map sends access ``i`` of thread ``t`` to a ``(contiguous,
strided)`` coordinate of a pitch-linear tile (see :mod:`symlayout.threadmap.maps`);
each access covers ``thread_access_shape`` elements (``elements_per_access``
contiguous elements; a 4x4 block for the 2-D thread-tile maps).  Custom maps
(``kind = "offset"``) give a 1-D element offset ``formula(t, i)`` into a tile
of ``extent`` elements; here they are the coordinate ``(offset, 0)`` of an
``(extent, 1)`` tile.

Properties (names of ``shared/spec/configs.md``; the operand is absent):

* ``coverage`` -- every element of the tile is accessed;
* ``exactly_once`` -- no element is accessed twice (over all threads,
  iterations and vector elements).  Elements are compared as coordinates, so
  a proof holds for every pitch;
* ``in_bounds`` -- every accessed element lies inside the tile;
* ``alignment`` -- every vector access (``elements_per_access * sizeof(type)``
  bytes, one row of a 2-D thread tile) starts at a multiple of its width, for
  every base address that is a multiple of ``align`` bytes (default
  :data:`DEFAULT_ALIGN`), the tile stored pitch-linear with pitch = its
  contiguous extent; the width must be a power of two;
* ``coalescing`` -- for every warp (32 consecutive threads) and iteration,
  the number of 32-byte global-memory sectors the warp touches equals the
  minimum ``ceil(distinct bytes / 32)``, with the tile's base on a sector
  boundary (the property judges the map, not the allocation: a base that is
  only 16-byte aligned costs every map the same extra sector per run).

``alignment`` and ``coalescing`` need the value ``type``; without it they do
not apply (they are skipped, or an ``error`` result when ``[prove]`` names
them).  The other properties of the spec (``slot_agreement``, ...) concern
TiledMMAs and are skipped.

Methods.  ``"exhaustive"`` evaluates every access (a complete proof for a
concrete map).  ``"z3"`` decides ``coverage``, ``exactly_once``,
``in_bounds`` and ``alignment`` with Z3 from the symbolic offsets
(:meth:`~symlayout.threadmap.maps.ThreadMap.offset_exprs`): e.g. ``in_bounds`` is
proved when "some thread ``t < threads`` and iteration ``i < iterations``
access an element outside the tile" is unsat; ``coalescing`` has no Z3
encoding and is decided exhaustively.  ``"auto"`` is exhaustive unless the
map has more than :data:`EXHAUSTIVE_LIMIT` element accesses.  A solver that
runs past the timeout gives ``unknown``, never ``proved``.

Custom formulas with symbols (:func:`prove_offset_formula`) are proved with
Z3 for every value of the symbols in their ranges; a refutation names the
values.

>>> from symlayout.threadmap.maps import PitchLinearWarpRakedThreadMap
>>> m = PitchLinearWarpRakedThreadMap((32, 128), 128, (4, 8), 8)
>>> [(r.property, r.status) for r in prove_map(m, type="half_t", align=16)]
[('coverage', 'proved'), ('exactly_once', 'proved'), ('in_bounds', 'proved'), ('alignment', 'proved'), ('coalescing', 'proved')]

The map as a CuTe layout is :mod:`symlayout.threadmap.layout`; its pictures :mod:`.threadmap_pictures`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ...atoms import value_type_bits
from ...config import PROPERTIES, Param
from ...errors import ConfigError, SymlayoutError
from ...threadmap.formula import BinOp, Const, Expr, Neg, Var, parse_expr
from ...threadmap.maps import OffsetThreadMap, ThreadMap
from ..copy.obligations import PROPERTIES as COPY_PROPERTIES
from ..verdict.result import ERROR, PROVED, REFUTED, UNKNOWN, VACUOUS, Counterexample, Result, verdict

__all__ = [
    "THREADMAP_PROPERTIES", "DEFAULT_ALIGN", "WARP_SIZE", "SECTOR_BYTES", "EXHAUSTIVE_LIMIT",
    "MapModel", "prove_threadmap", "prove_map", "prove_offset_formula",
    "coverage", "exactly_once", "in_bounds", "alignment", "coalescing",
    "map_elements", "format_ranges",
]

#: the properties that apply to thread maps, in the order they are reported
THREADMAP_PROPERTIES = ("coverage", "exactly_once", "in_bounds", "alignment", "coalescing")
#: base-address alignment (bytes) assumed when ``[threadmap] align`` is absent
DEFAULT_ALIGN = 128
#: threads per warp (coalescing groups)
WARP_SIZE = 32
#: global-memory sector size in bytes
SECTOR_BYTES = 32
#: ``method="auto"`` evaluates exhaustively up to this many element accesses
EXHAUSTIVE_LIMIT = 1 << 22

_SECTOR_BITS = SECTOR_BYTES * 8


class _Timeout(Exception):
    pass


# ---------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------

@dataclass
class MapModel:
    """A concrete thread map with the facts the properties need.

    ``tile`` is ``(C, S)`` (``(extent, 1)`` for a custom offset map); the
    tile is stored pitch-linear with pitch ``C``; ``vec`` is the
    ``(contiguous, strided)`` shape of one access; ``bits`` the value width
    (None without a type); ``align`` the base alignment in bytes.

    >>> from symlayout.threadmap.maps import PitchLinearStripminedThreadMap
    >>> m = MapModel.of(PitchLinearStripminedThreadMap((64, 8), 32, 8), type="half_t", align=16)
    >>> m.tile, m.vec, m.bits, m.iterations, m.vector_bits
    ((64, 8), (8, 1), 16, 2, 128)
    """
    tm: ThreadMap
    tile: tuple
    vec: tuple
    bits: int | None
    align: int
    type: str | None = None
    name: str = ""
    _starts: list | None = field(default=None, repr=False)

    @classmethod
    def of(cls, tm: ThreadMap, type: str | None = None, align: int | None = None, name: str = "") -> "MapModel":
        """Wrap a :class:`~symlayout.threadmap.maps.ThreadMap` model.

        >>> from symlayout.threadmap.maps import OffsetThreadMap
        >>> MapModel.of(OffsetThreadMap("t", 4, 1, 4)).tile
        (4, 1)
        """
        tile = (tm.extent, 1) if isinstance(tm, OffsetThreadMap) else tuple(tm.shape)
        vec = tuple(tm.thread_access_shape)
        bits = int(value_type_bits(type)) if type else None
        return cls(tm, tile, vec, bits, int(align) if align else DEFAULT_ALIGN, type, name or str(tm))

    @classmethod
    def from_config(cls, cfg) -> "MapModel":
        """The model of a loaded configuration's ``[threadmap]``.

        >>> from symlayout.config import loads_config
        >>> cfg = loads_config('[threadmap]\\nkind = "offset"\\nthreads = 4\\noffset = "t * 2"\\nextent = 8\\n')
        >>> MapModel.from_config(cfg).tile
        (8, 1)
        """
        tmc = cfg.threadmap
        return cls.of(tmc.build(), type=tmc.type, align=tmc.align, name=cfg.name or "")

    @property
    def is_offset(self) -> bool:
        """True for a custom ``offset`` formula map (1-D tile).

        >>> from symlayout.threadmap.maps import OffsetThreadMap
        >>> MapModel.of(OffsetThreadMap("t", 4, 1, 4)).is_offset
        True
        """
        return isinstance(self.tm, OffsetThreadMap)

    @property
    def threads(self) -> int:
        """Number of threads.

        >>> from symlayout.threadmap.maps import OffsetThreadMap
        >>> MapModel.of(OffsetThreadMap("t", 4, 1, 4)).threads
        4
        """
        return self.tm.threads

    @property
    def iterations(self) -> int:
        """Accesses per thread (``Iterations.C * Iterations.S``).

        >>> from symlayout.threadmap.maps import PitchLinearStripminedThreadMap
        >>> MapModel.of(PitchLinearStripminedThreadMap((64, 8), 32, 8)).iterations
        2
        """
        return self.tm.iterations[0] * self.tm.iterations[1]

    @property
    def pitch(self) -> int:
        """Elements between consecutive strided rows (the contiguous extent).

        >>> from symlayout.threadmap.maps import PitchLinearStripminedThreadMap
        >>> MapModel.of(PitchLinearStripminedThreadMap((64, 8), 32, 8)).pitch
        64
        """
        return self.tile[0]

    @property
    def vector_bits(self) -> int | None:
        """Width of one vector access (one row of ``vec``) in bits (None without a type).

        >>> from symlayout.threadmap.maps import PitchLinearStripminedThreadMap
        >>> MapModel.of(PitchLinearStripminedThreadMap((64, 8), 32, 8), type="half_t").vector_bits
        128
        """
        return None if self.bits is None else self.vec[0] * self.bits

    @property
    def element_accesses(self) -> int:
        """Total number of element accesses (threads x iterations x vector elements).

        >>> from symlayout.threadmap.maps import PitchLinearStripminedThreadMap
        >>> MapModel.of(PitchLinearStripminedThreadMap((64, 8), 32, 8)).element_accesses
        512
        """
        return self.threads * self.iterations * self.vec[0] * self.vec[1]

    def starts(self) -> list:
        """Every access as ``(thread, iteration, c, s)`` (the access's first element).

        >>> from symlayout.threadmap.maps import OffsetThreadMap
        >>> MapModel.of(OffsetThreadMap("t * 2 + i", 2, 2, 4)).starts()
        [(0, 0, 0, 0), (0, 1, 1, 0), (1, 0, 2, 0), (1, 1, 3, 0)]
        """
        if self._starts is None:
            self._starts = [(t, i, c, s) for t, i, (c, s) in self.tm.accesses()]
        return self._starts

    def offset(self, c: int, s: int) -> int:
        """Linear element offset ``c + s * pitch``.

        >>> from symlayout.threadmap.maps import PitchLinearStripminedThreadMap
        >>> MapModel.of(PitchLinearStripminedThreadMap((64, 8), 32, 8)).offset(3, 2)
        131
        """
        return c + s * self.pitch

    def inside(self, c: int, s: int) -> bool:
        """Whether element ``(c, s)`` lies in the tile.

        >>> from symlayout.threadmap.maps import PitchLinearStripminedThreadMap
        >>> m = MapModel.of(PitchLinearStripminedThreadMap((64, 8), 32, 8))
        >>> m.inside(63, 7), m.inside(0, 8)
        (True, False)
        """
        return 0 <= c < self.tile[0] and 0 <= s < self.tile[1]

    def where(self, c: int, s: int) -> str:
        """An element told in the user's terms.

        >>> from symlayout.threadmap.maps import PitchLinearStripminedThreadMap
        >>> MapModel.of(PitchLinearStripminedThreadMap((8, 8), 8)).where(1, 2)
        '(c,s) = (1,2) (offset 17)'
        """
        if self.is_offset:
            return f"offset {c}"
        return f"(c,s) = ({c},{s}) (offset {self.offset(c, s)})"

    def tile_text(self) -> str:
        """The tile told in the user's terms.

        >>> from symlayout.threadmap.maps import OffsetThreadMap
        >>> MapModel.of(OffsetThreadMap("t", 4, 1, 128)).tile_text()
        'the 128-element tile (offsets 0..127)'
        """
        if self.is_offset:
            return f"the {self.tile[0]}-element tile (offsets 0..{self.tile[0] - 1})"
        return f"the {self.tile[0]}x{self.tile[1]} (contiguous x strided) tile"

    def address_bytes(self, c: int, s: int) -> int | None:
        """Byte address of element ``(c, s)`` from a base at byte 0 (None without a type).

        >>> from symlayout.threadmap.maps import OffsetThreadMap
        >>> MapModel.of(OffsetThreadMap("t", 4, 1, 128), type="float").address_bytes(5, 0)
        20
        """
        if self.bits is None:
            return None
        return (self.offset(c, s) * self.bits) // 8


def _deadline(timeout_s):
    return None if timeout_s is None else time.perf_counter() + float(timeout_s)


def _tick(deadline, n):
    if deadline is not None and (n & 4095) == 0 and time.perf_counter() > deadline:
        raise _Timeout()


def map_elements(m: MapModel, deadline=None):
    """Yield ``(t, i, e, c, s)`` for every element access (``e`` = vector element index)."""
    vc, vs = m.vec
    n = 0
    for t, i, c0, s0 in m.starts():
        n += 1
        _tick(deadline, n)
        e = 0
        for es in range(vs):
            for ec in range(vc):
                yield t, i, e, c0 + ec, s0 + es
                e += 1


def _result(name, status, t0, method, cex=None, checked=None, detail="", **kw):
    return Result(name, status, seconds=time.perf_counter() - t0, checked=checked, method=method,
                  counterexample=cex, detail=detail, **kw)


def format_ranges(values: Sequence[int]) -> str:
    """``[256,...,263,272,...,279]`` -> ``"256..263, 272..279"``."""
    vs = sorted(set(values))
    out, k = [], 0
    while k < len(vs):
        j = k
        while j + 1 < len(vs) and vs[j + 1] == vs[j] + 1:
            j += 1
        out.append(str(vs[k]) if j == k else f"{vs[k]}..{vs[j]}")
        k = j + 1
    if len(out) > 8:
        out = out[:8] + ["..."]
    return ", ".join(out)


# ---------------------------------------------------------------------------
# exhaustive decisions
# ---------------------------------------------------------------------------

def _element_arrays(m: MapModel, deadline=None):
    """Every element access of :func:`map_elements` at once, in its order: ``(t, i, c, s)`` int64 arrays,
    or None where numpy is not loaded (the loops decide then).  Kept on the model.  The deadline is
    checked as :func:`map_elements` checks it (once 4096 accesses are made)."""
    if deadline is not None and len(m.starts()) >= 4096:
        _tick(deadline, 4096)
    hit = m.__dict__.get("_element_arrays")
    if hit is None:
        import sys
        np = sys.modules.get("numpy")
        if np is None or not m.starts():
            return None
        vc, vs = m.vec
        st = np.array(m.starts(), dtype=np.int64).reshape(-1, 4)
        ec = np.tile(np.arange(vc, dtype=np.int64), vs)                # element e = ec + vc * es
        es = np.repeat(np.arange(vs, dtype=np.int64), vc)
        k = vc * vs
        hit = m.__dict__["_element_arrays"] = (np.repeat(st[:, 0], k), np.repeat(st[:, 1], k),
                                               (st[:, 2:3] + ec).ravel(), (st[:, 3:4] + es).ravel())
    return hit


def _inside_array(m: MapModel, c, s):
    return (c >= 0) & (c < m.tile[0]) & (s >= 0) & (s < m.tile[1])


def _ex_coverage(m: MapModel, deadline) -> tuple:
    C, S = m.tile
    arr = _element_arrays(m, deadline)
    if arr is not None:                        # every access at once; the same count, the same first miss
        import numpy as np
        _t, _i, c, s = arr
        ins = _inside_array(m, c, s)
        seen = np.zeros(C * S, dtype=bool)
        seen[(c + s * C)[ins]] = True
        if seen.all():
            return None, len(c)
    seen = bytearray(C * S)
    n = 0
    for t, i, e, c, s in map_elements(m, deadline):
        n += 1
        if 0 <= c < C and 0 <= s < S:
            seen[c + s * C] = 1
    missing = seen.count(0)
    if not missing:
        return None, n
    off = seen.index(0)
    c, s = off % C, off // C
    cex = Counterexample(
        f"tile element {m.where(c, s)} is accessed by no thread "
        f"({missing} of {C * S} elements of {m.tile_text()} are never accessed)",
        element=(c, s), address_bytes=m.address_bytes(c, s), extra={"uncovered": missing})
    return cex, n


def _ex_exactly_once(m: MapModel, deadline) -> tuple:
    arr = _element_arrays(m, deadline)
    if arr is not None:                        # no element twice: decided at once (the loop tells a violation)
        import numpy as np
        _t, _i, c, s = arr
        c0, s0 = int(c.min()), int(s.min())
        key = (c - c0) + (s - s0) * (int(c.max()) - c0 + 1)
        key = np.sort(key)
        if not bool((key[1:] == key[:-1]).any()):
            return None, len(key)
    first: dict = {}
    dup_elems = set()
    cex = None
    n = 0
    for t, i, e, c, s in map_elements(m, deadline):
        n += 1
        k = (c, s)
        prev = first.get(k)
        if prev is None:
            first[k] = (t, i)
        elif prev != (t, i):
            dup_elems.add(k)
            if cex is None:
                cex = (t, i, c, s, prev)
    if cex is None:
        return None, n
    t, i, c, s, (t1, i1) = cex
    return Counterexample(
        f"element {m.where(c, s)} is accessed twice: by thread {t1} iteration {i1} and by thread {t} "
        f"iteration {i} ({len(dup_elems)} elements are accessed more than once)",
        thread=t, value=i, element=(c, s), address_bytes=m.address_bytes(c, s),
        extra={"first_thread": t1, "first_iteration": i1, "duplicated": len(dup_elems)}), n


def _ex_in_bounds(m: MapModel, deadline) -> tuple:
    arr = _element_arrays(m, deadline)
    if arr is not None and bool(_inside_array(m, arr[2], arr[3]).all()):
        return None, len(arr[2])               # every access inside, at once (the loop tells a violation)
    bad = None
    out_offsets = []
    n = nout = 0
    for t, i, e, c, s in map_elements(m, deadline):
        n += 1
        if not m.inside(c, s):
            nout += 1
            out_offsets.append(m.offset(c, s))
            if bad is None:
                bad = (t, i, c, s)
    if bad is None:
        return None, n
    t, i, c, s = bad
    lo, hi = min(out_offsets), max(out_offsets)
    msg = (f"thread {t}, iteration {i} accesses {m.where(c, s)}, outside {m.tile_text()}; "
           f"{nout} of {n} element accesses fall outside: offsets {format_ranges(out_offsets)}")
    if "," in format_ranges(out_offsets):
        msg += f" (in {lo}..{hi})"
    return Counterexample(msg, thread=t, value=i, element=(c, s), address_bytes=m.address_bytes(c, s),
                          extra={"outside": nout, "offset": m.offset(c, s)}), n


def _alignment_precheck(m: MapModel):
    """Problems that do not depend on the accesses: width not a power of two, base too weak."""
    wbits = m.vector_bits
    if wbits % 8 or (wbits // 8) & (wbits // 8 - 1):
        return Counterexample(
            f"a vector access of {m.vec[0]} x {m.type} is {wbits / 8:g} bytes, not a power-of-two width",
            thread=0, value=0, extra={"width_bytes": wbits / 8})
    wb = wbits // 8
    if m.align % wb:
        t, i, c, s = m.starts()[0]
        addr = m.align + (m.offset(c, s) * m.bits) // 8
        return Counterexample(
            f"the base address is only {m.align}-byte aligned, less than the {wb}-byte access width: with the "
            f"base at byte {m.align}, thread {t} iteration {i} ({m.where(c, s)}) starts at byte {addr}",
            thread=t, value=i, element=(c, s), address_bytes=addr, extra={"width_bytes": wb, "align": m.align})
    return None


def _ex_alignment(m: MapModel, deadline) -> tuple:
    pre = _alignment_precheck(m)
    if pre is not None:
        return pre, 1
    wbits = m.vector_bits
    n = 0
    for t, i, c0, s0 in m.starts():
        for es in range(m.vec[1]):
            n += 1
            _tick(deadline, n)
            c, s = c0, s0 + es
            a = m.offset(c, s) * m.bits
            if a % wbits:
                return Counterexample(
                    f"thread {t}, iteration {i}: the {wbits // 8}-byte access at {m.where(c, s)} starts at byte "
                    f"{a / 8:g}, not a multiple of {wbits // 8}",
                    thread=t, value=i, element=(c, s), address_bytes=a // 8,
                    extra={"width_bytes": wbits // 8}), n
    return None, n


def _ex_coalescing(m: MapModel, deadline) -> tuple:
    wbits = m.vector_bits
    groups: dict = {}
    for t, i, c0, s0 in m.starts():
        for es in range(m.vec[1]):
            groups.setdefault((t // WARP_SIZE, i), []).append((t, c0, s0 + es))
    n = 0
    for (w, i), accs in sorted(groups.items()):
        n += 1
        _tick(deadline, n)
        ivs = sorted((m.offset(c, s) * m.bits, m.offset(c, s) * m.bits + wbits) for _, c, s in accs)
        merged = []
        for a, b in ivs:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        distinct_bits = sum(b - a for a, b in merged)
        minimum = -(-distinct_bits // _SECTOR_BITS)
        sectors = set()
        for a, b in merged:
            sectors.update(range(a // _SECTOR_BITS, (b - 1) // _SECTOR_BITS + 1))
        if len(sectors) > minimum:
            t0_, c, s = min(accs)
            lanes = len({a[0] for a in accs})
            return Counterexample(
                f"warp {w}, iteration {i}: its {lanes} threads touch {len(sectors)} sectors of {SECTOR_BYTES} B "
                f"for {distinct_bits / 8:g} distinct bytes; the minimum is {minimum}",
                thread=t0_, value=i, element=(c, s), address_bytes=m.address_bytes(c, s),
                extra={"warp": w, "iteration": i, "sectors": len(sectors), "minimum": minimum}), n
    return None, n


_EXHAUSTIVE = {"coverage": _ex_coverage, "exactly_once": _ex_exactly_once, "in_bounds": _ex_in_bounds,
               "alignment": _ex_alignment, "coalescing": _ex_coalescing}


# ---------------------------------------------------------------------------
# Z3 decisions
# ---------------------------------------------------------------------------

@dataclass
class _Sym:
    """A thread map in Z3 terms: per access copy, the element coordinate and its domain."""
    c: Any
    s: Any
    dom: Any
    vars: dict


class _Z3Map:
    """Symbolic form of a map (concrete, or an offset formula over symbols)."""

    def __init__(self, coord_exprs, threads, iterations, vec, tile, pitch, bits, align, params=None,
                 is_offset=False):
        self.coord_exprs = coord_exprs      # (cexpr, sexpr) in t, i (+ params)
        self.threads, self.iterations = threads, iterations   # Expr or int
        self.vec, self.tile, self.pitch = vec, tile, pitch    # tile entries Expr or int
        self.bits, self.align = bits, align
        self.params = params or {}
        self.is_offset = is_offset
        import z3
        self.z3 = z3
        self.pvars = {n: z3.Int(n) for n in self.params}
        self.divisors: list = []
        self.pdom = []
        for n, p in self.params.items():
            v = self.pvars[n]
            self.pdom += [v >= p.min, v <= p.max]
            if p.multiple_of != 1:
                self.pdom.append(v % p.multiple_of == 0)

    def term(self, e, env=None):
        if isinstance(e, int):
            return self.z3.IntVal(e)
        env2 = dict(self.pvars)
        env2.update(env or {})
        return e.to_z3(env2, self.divisors)

    def copy(self, tag: str) -> _Sym:
        z3 = self.z3
        t, i, ec, es = z3.Ints(f"t{tag} i{tag} ec{tag} es{tag}")
        env = {"t": t, "i": i}
        c = self.term(self.coord_exprs[0], env) + ec
        s = self.term(self.coord_exprs[1], env) + es
        dom = z3.And(t >= 0, t < self.term(self.threads), i >= 0, i < self.term(self.iterations),
                     ec >= 0, ec < self.vec[0], es >= 0, es < self.vec[1])
        return _Sym(c, s, dom, {"t": t, "i": i, "ec": ec, "es": es})

    def inside(self, c, s):
        z3 = self.z3
        C, S = self.term(self.tile[0]), self.term(self.tile[1])
        return z3.And(c >= 0, c < C, s >= 0, s < S)


class _Budget:
    """What is left of one property's time limit (shared by its solver calls)."""

    def __init__(self, timeout_s):
        self.end = None if timeout_s is None else time.perf_counter() + float(timeout_s)

    def left(self):
        return None if self.end is None else max(0.001, self.end - time.perf_counter())


def _z3_check(solver, timeout_s):
    import z3
    if isinstance(timeout_s, _Budget):
        timeout_s = timeout_s.left()
    if timeout_s is not None:
        solver.set(timeout=max(1, int(float(timeout_s) * 1000)))
    r = solver.check()
    if r == z3.sat:
        return "sat", solver.model()
    if r == z3.unsat:
        return "unsat", None
    return "unknown", solver.reason_unknown()


def _mval(model, v) -> int:
    return model.eval(v, model_completion=True).as_long()


def _z3_divisor_guard(zm: _Z3Map, timeout_s, t0, name):
    """Refuse formulas whose symbolic divisors can be zero in the domain."""
    z3 = zm.z3
    zm.divisors = []
    probe = zm.copy("g")
    if not zm.divisors:
        return None
    sol = z3.Solver()
    sol.add(*zm.pdom)
    sol.add(probe.dom)
    sol.add(z3.Or([d == 0 for d in zm.divisors]))
    st, model = _z3_check(sol, timeout_s)
    if st == "sat":
        vals = {n: _mval(model, v) for n, v in zm.pvars.items()}
        return Result(name, ERROR, seconds=time.perf_counter() - t0, method="z3",
                      detail=f"the formula divides by zero for {', '.join(f'{k} = {v}' for k, v in vals.items())}")
    if st == "unknown":
        return Result(name, UNKNOWN, seconds=time.perf_counter() - t0, method="z3",
                      detail=f"Z3 could not rule out a division by zero ({model})")
    return None


def _z3_decide(zm: _Z3Map, name: str, timeout_s, m: MapModel | None = None):
    """Decide one property with Z3.  Returns ``(status, counterexample, detail)``."""
    z3 = zm.z3
    if not isinstance(timeout_s, _Budget):
        timeout_s = _Budget(timeout_s)
    sol = z3.Solver()
    sol.add(*zm.pdom)
    a = zm.copy("1")
    sol.add(a.dom)

    def params_of(model):
        return {n: _mval(model, v) for n, v in zm.pvars.items()} or None

    def where(c, s):
        return m.where(c, s) if m is not None else (f"offset {c}" if zm.is_offset else f"(c,s) = ({c},{s})")

    if name == "in_bounds":
        sol.add(z3.Not(zm.inside(a.c, a.s)))
        st, model = _z3_check(sol, timeout_s)
        if st != "sat":
            return st, None, model
        t, i, c, s = (_mval(model, x) for x in (a.vars["t"], a.vars["i"], a.c, a.s))
        tile = (f"the {_mval(model, zm.term(zm.tile[0]))}-element tile" if zm.is_offset else
                f"the {_mval(model, zm.term(zm.tile[0]))}x{_mval(model, zm.term(zm.tile[1]))} tile")
        return "sat", Counterexample(f"thread {t}, iteration {i} accesses {where(c, s)}, outside {tile}",
                                     thread=t, value=i, element=(c, s), params=params_of(model)), ""
    if name == "exactly_once":
        b = zm.copy("2")
        sol.add(b.dom)
        sol.add(z3.Or(a.vars["t"] != b.vars["t"], a.vars["i"] != b.vars["i"]))
        sol.add(a.c == b.c, a.s == b.s)
        st, model = _z3_check(sol, timeout_s)
        if st != "sat":
            return st, None, model
        t1, i1, t2, i2, c, s = (_mval(model, x) for x in (a.vars["t"], a.vars["i"], b.vars["t"], b.vars["i"],
                                                           a.c, a.s))
        return "sat", Counterexample(
            f"element {where(c, s)} is accessed twice: by thread {t1} iteration {i1} and by thread {t2} "
            f"iteration {i2}", thread=t2, value=i2, element=(c, s), params=params_of(model),
            extra={"first_thread": t1, "first_iteration": i1}), ""
    if name == "coverage":
        # pigeonhole first (quantifier-free): in bounds and injective, with as many element
        # accesses as tile elements (for every value of the symbols), means every element is reached
        same = z3.Solver()
        same.add(*zm.pdom)
        same.add(zm.term(zm.threads) * zm.term(zm.iterations) * (zm.vec[0] * zm.vec[1])
                 != zm.term(zm.tile[0]) * zm.term(zm.tile[1]))
        if _z3_check(same, timeout_s)[0] == "unsat":
            st_in, _, _ = _z3_decide(zm, "in_bounds", timeout_s, m)
            if st_in == "unsat":
                st_once, _, _ = _z3_decide(zm, "exactly_once", timeout_s, m)
                if st_once == "unsat":
                    return "unsat", None, ""
    if name == "coverage":
        xc, xs = z3.Ints("xc xs")
        sol2 = z3.Solver()
        sol2.add(*zm.pdom)
        sol2.add(zm.inside(xc, xs))
        q = zm.copy("q")
        # quantify over (t, i) only: x misses the whole vec[0] x vec[1] block of each access
        c0 = q.c - q.vars["ec"]
        s0 = q.s - q.vars["es"]
        qv = [q.vars["t"], q.vars["i"]]
        dom_ti = z3.And(q.vars["t"] >= 0, q.vars["t"] < zm.term(zm.threads),
                        q.vars["i"] >= 0, q.vars["i"] < zm.term(zm.iterations))
        sol2.add(z3.ForAll(qv, z3.Implies(dom_ti, z3.Or(xc < c0, xc >= c0 + zm.vec[0],
                                                        xs < s0, xs >= s0 + zm.vec[1]))))
        st, model = _z3_check(sol2, timeout_s)
        if st != "sat":
            return st, None, model
        c, s = _mval(model, xc), _mval(model, xs)
        pv = params_of(model)
        # re-validate the model with a quantifier-free query: nobody may reach (c, s)
        chk = z3.Solver()
        chk.add([v == pv[n] for n, v in zm.pvars.items()] if pv else [])
        chk.add(*zm.pdom)
        chk.add(a.dom, a.c == c, a.s == s)
        st2, _ = _z3_check(chk, timeout_s)
        if st2 != "unsat":
            return "unknown", None, f"Z3's uncovered element {where(c, s)} did not re-validate ({st2})"
        return "sat", Counterexample(f"tile element {where(c, s)} is accessed by no thread",
                                     element=(c, s), params=pv), ""
    if name == "alignment":
        wbits = zm.vec[0] * zm.bits
        addr = (a.c + a.s * zm.term(zm.pitch)) * zm.bits
        sol.add(a.vars["ec"] == 0)
        sol.add(addr % wbits != 0)
        st, model = _z3_check(sol, timeout_s)
        if st != "sat":
            return st, None, model
        t, i, c, s, ab = (_mval(model, x) for x in (a.vars["t"], a.vars["i"], a.c, a.s, addr))
        return "sat", Counterexample(
            f"thread {t}, iteration {i}: the {wbits // 8}-byte access at {where(c, s)} starts at byte {ab / 8:g}, "
            f"not a multiple of {wbits // 8}", thread=t, value=i, element=(c, s), address_bytes=ab // 8,
            params=params_of(model)), ""
    raise SymlayoutError(f"no Z3 encoding of {name!r}")  # pragma: no cover


def _z3_of_model(m: MapModel) -> _Z3Map:
    return _Z3Map(m.tm.offset_exprs(), m.threads, m.iterations, m.vec, m.tile, m.pitch, m.bits, m.align,
                  is_offset=m.is_offset)


# ---------------------------------------------------------------------------
# the property functions
# ---------------------------------------------------------------------------

def _check(name: str, m: MapModel, method: str = "exhaustive", timeout_s: float | None = None) -> Result:
    t0 = time.perf_counter()
    if name in ("alignment", "coalescing") and m.bits is None:
        return _result(name, ERROR, t0, "", detail=f"{name} needs the value type ([threadmap] type)")
    if method == "z3" and name != "coalescing":
        if name == "alignment":
            pre = _alignment_precheck(m)
            if pre is not None:
                return _result(name, REFUTED, t0, "z3", pre, checked=1)
        try:
            zm = _z3_of_model(m)
            st, cex, info = _z3_decide(zm, name, timeout_s, m)
        except SymlayoutError as e:
            return _result(name, ERROR, t0, "z3", detail=str(e))
        if st == "unsat":
            n = _obligations(m, name)
            return _result(name, verdict(None, n), t0, "z3", checked=n)
        if st == "sat":
            bad = _revalidate(m, name, cex)
            if bad:
                return _result(name, UNKNOWN, t0, "z3", detail=f"Z3's counterexample did not re-validate: {bad}")
            if cex.element is not None and cex.address_bytes is None:
                cex.address_bytes = m.address_bytes(*cex.element)
            return _result(name, REFUTED, t0, "z3", cex)
        return _result(name, UNKNOWN, t0, "z3", detail=f"Z3: {info}")
    deadline = _deadline(timeout_s)
    try:
        cex, n = _EXHAUSTIVE[name](m, deadline)
    except _Timeout:
        return _result(name, UNKNOWN, t0, "exhaustive", detail=f"timed out after {timeout_s} s")
    detail = "no Z3 encoding of sector counting: decided exhaustively" if method == "z3" else ""
    return _result(name, verdict(cex, n), t0, "exhaustive", cex, checked=n, detail=detail)


def _obligations(m: MapModel, name: str) -> int:
    """What a Z3 proof of ``name`` quantified over, counted as the exhaustive
    check counts it: element accesses (coverage, exactly_once, in_bounds),
    vector accesses (alignment).  0 makes the proof vacuous.

    >>> from symlayout.threadmap.maps import OffsetThreadMap
    >>> _obligations(MapModel.of(OffsetThreadMap("t * 2", 4, 1, 8, 2)), "alignment")
    4
    """
    if name == "alignment":
        return m.threads * m.iterations * m.vec[1]
    return m.element_accesses


def _revalidate(m: MapModel, name: str, cex: Counterexample) -> str:
    """Check a Z3 counterexample against the concrete map; '' when it holds."""
    if name == "coverage":
        return ""           # re-validated by a quantifier-free query in _z3_decide
    ce, se = m.tm.offset_exprs()

    def at(t, i):
        if not (0 <= t < m.threads and 0 <= i < m.iterations):
            return None
        return ce.evaluate({"t": t, "i": i}), se.evaluate({"t": t, "i": i})

    def covers(t, i, c, s):
        st = at(t, i)
        return st is not None and st[0] <= c < st[0] + m.vec[0] and st[1] <= s < st[1] + m.vec[1]

    t, i, (c, s) = cex.thread, cex.value, cex.element
    if not covers(t, i, c, s):
        return f"thread {t} iteration {i} does not access ({c},{s})"
    if name == "in_bounds" and m.inside(c, s):
        return f"({c},{s}) is inside the tile"
    if name == "exactly_once":
        t1, i1 = cex.extra["first_thread"], cex.extra["first_iteration"]
        if (t1, i1) == (t, i) or not covers(t1, i1, c, s):
            return f"thread {t1} iteration {i1} does not also access ({c},{s})"
    if name == "alignment" and (m.offset(c, s) * m.bits) % m.vector_bits == 0:
        return f"the access at ({c},{s}) is aligned"
    return ""


def coverage(m: MapModel, method: str = "exhaustive", timeout_s: float | None = None) -> Result:
    """Every element of the tile is accessed by some thread, iteration and vector element.

    Refuted with the first uncovered element (in pitch-linear order).

    >>> from symlayout.threadmap.maps import OffsetThreadMap
    >>> r = coverage(MapModel.of(OffsetThreadMap("t * 2", 4, 1, 8)))
    >>> r.status, r.counterexample.message
    ('refuted', 'tile element offset 1 is accessed by no thread (4 of 8 elements of the 8-element tile (offsets 0..7) are never accessed)')
    """
    return _check("coverage", m, method, timeout_s)


def exactly_once(m: MapModel, method: str = "exhaustive", timeout_s: float | None = None) -> Result:
    """No element is accessed twice (over threads, iterations and vector elements).

    >>> from symlayout.threadmap.maps import OffsetThreadMap
    >>> r = exactly_once(MapModel.of(OffsetThreadMap("t % 4", 8, 1, 4)))
    >>> r.status, r.counterexample.thread, r.counterexample.extra["first_thread"]
    ('refuted', 4, 0)
    """
    return _check("exactly_once", m, method, timeout_s)


def in_bounds(m: MapModel, method: str = "exhaustive", timeout_s: float | None = None) -> Result:
    """Every accessed element lies inside the tile.

    >>> from symlayout.threadmap.maps import OffsetThreadMap
    >>> r = in_bounds(MapModel.of(OffsetThreadMap("t + 2", 4, 1, 4)))
    >>> r.status, r.counterexample.thread, r.counterexample.element
    ('refuted', 2, (4, 0))
    """
    return _check("in_bounds", m, method, timeout_s)


def alignment(m: MapModel, method: str = "exhaustive", timeout_s: float | None = None) -> Result:
    """Every vector access is aligned to its width (``vec[0] * sizeof(type)``
    bytes, a power of two) for every base address aligned to ``m.align``.

    >>> from symlayout.threadmap.maps import OffsetThreadMap
    >>> r = alignment(MapModel.of(OffsetThreadMap("t * 8 + 2", 4, 1, 64, 4), type="half_t", align=16))
    >>> r.status, r.counterexample.address_bytes
    ('refuted', 4)
    """
    return _check("alignment", m, method, timeout_s)


def coalescing(m: MapModel, method: str = "exhaustive", timeout_s: float | None = None) -> Result:
    """Per warp and iteration, the 32-byte sectors touched equal the minimum
    ``ceil(distinct bytes / 32)`` (tile base on a sector boundary).

    >>> from symlayout.threadmap.maps import OffsetThreadMap
    >>> r = coalescing(MapModel.of(OffsetThreadMap("t * 2", 32, 1, 64), type="float", align=16))
    >>> r.status, r.counterexample.extra["sectors"], r.counterexample.extra["minimum"]
    ('refuted', 8, 4)
    """
    return _check("coalescing", m, method, timeout_s)


_CHECKS = {"coverage": coverage, "exactly_once": exactly_once, "in_bounds": in_bounds, "alignment": alignment,
           "coalescing": coalescing}


def _pick_method(m: MapModel, method: str) -> str:
    if method in (None, "", "auto"):
        return "exhaustive" if m.element_accesses <= EXHAUSTIVE_LIMIT else "z3"
    if method not in ("exhaustive", "z3"):
        raise ConfigError(f"unknown proof method {method!r} (auto, exhaustive or z3)")
    return method


def prove_map(tm: ThreadMap | MapModel, properties: Iterable[str] | None = None, *, type: str | None = None,
              align: int | None = None, method: str = "auto", timeout_s: float | None = None) -> list:
    """Prove ``properties`` (default: every one that applies) of a thread map model.

    ``alignment`` and ``coalescing`` apply only with a value ``type``.

    >>> from symlayout.threadmap.maps import PitchLinearWarpStripedThreadMap
    >>> m = PitchLinearWarpStripedThreadMap((512, 8), 256, (16, 2), 8)
    >>> [(r.property, r.status) for r in prove_map(m, ["coverage", "exactly_once", "in_bounds"], method="z3")]
    [('coverage', 'proved'), ('exactly_once', 'refuted'), ('in_bounds', 'refuted')]
    """
    m = tm if isinstance(tm, MapModel) else MapModel.of(tm, type=type, align=align)
    meth = _pick_method(m, method)
    props = list(properties) if properties is not None else [
        p for p in THREADMAP_PROPERTIES if m.bits is not None or p not in ("alignment", "coalescing")]
    out = []
    for p in props:
        if p not in _CHECKS:
            out.append(Result(p, ERROR, detail=f"{p!r} does not apply to thread maps "
                                                 f"(they have {', '.join(THREADMAP_PROPERTIES)})"))
            continue
        out.append(_CHECKS[p](m, meth, timeout_s))
    return out


def prove_threadmap(cfg, props=None, method: str = "auto", timeout_s: float | None = None) -> list:
    """Prove the thread-map properties among ``props`` for a loaded configuration.

    Properties of the spec that concern TiledMMAs are skipped unless
    ``[prove] properties`` names them (then they are ``error`` results);
    ``alignment``/``coalescing`` likewise without a ``type``.  Each result's
    ``expected`` follows ``[expect] refuted``.

    >>> from symlayout.config import loads_config
    >>> cfg = loads_config('[threadmap]\\nkind = "offset"\\nthreads = 32\\n'
    ...     'offset = "t % 8 + ((t // 8) % 2) * 16 + (t // 16) * 256"\\nextent = 128\\n')
    >>> r = prove_threadmap(cfg, ["in_bounds"])[0]
    >>> r.status, r.counterexample.thread, r.counterexample.element
    ('refuted', 16, (256, 0))
    """
    explicit = set(cfg.prove.properties or ())
    props = list(props) if props else list(cfg.prove.properties or PROPERTIES)
    if not explicit and set(COPY_PROPERTIES) <= set(props):
        # the engine's default list (every property): all thread-map properties, coalescing included
        props = list(THREADMAP_PROPERTIES)
    refuted = cfg.expect.refuted
    tmc = cfg.threadmap
    out = []
    formula = getattr(tmc, "offset", None)
    if tmc.kind == "offset" and formula is not None and formula.variables() - {"t", "i"} and cfg.params:
        rs = prove_offset_formula(formula, tmc.threads, tmc.iterations or 1, tmc.extent, cfg.params,
                                  elements_per_access=tmc.elements_per_access or 1,
                                  properties=[p for p in props if p in THREADMAP_PROPERTIES],
                                  type=tmc.type, align=tmc.align, timeout_s=timeout_s)
    else:
        m = MapModel.from_config(cfg)
        meth = _pick_method(m, method)
        rs = []
        for p in props:
            if p not in THREADMAP_PROPERTIES:
                if p in explicit:
                    rs.append(Result(p, ERROR, detail=f"{p!r} does not apply to a thread map"))
                continue
            if p in ("alignment", "coalescing") and m.bits is None and p not in explicit and p not in refuted:
                continue
            rs.append(_CHECKS[p](m, meth, timeout_s))
    for r in rs:
        r.expected = REFUTED if r.property in refuted else PROVED
        out.append(r)
    return out


# ---------------------------------------------------------------------------
# parametric custom formulas
# ---------------------------------------------------------------------------

def _as_param(name, p):
    if isinstance(p, Param):
        return p
    if isinstance(p, dict):
        return Param(name, int(p["min"]), int(p["max"]), int(p.get("multiple_of", 1)))
    lo, hi, *rest = p
    return Param(name, int(lo), int(hi), int(rest[0]) if rest else 1)


def _as_expr(v, names):
    if isinstance(v, Expr):
        return v
    if isinstance(v, int):
        return v
    return parse_expr(str(v), set(names))


def prove_offset_formula(formula: str | Expr, threads, iterations, extent, params: dict, *,
                         elements_per_access: int = 1, properties: Iterable[str] | None = None,
                         type: str | None = None, align: int | None = None,
                         timeout_s: float | None = None) -> list:
    """Prove a custom offset formula in ``t``, ``i`` and symbols for every value
    of the symbols (``params``: name -> :class:`~symlayout.config.Param`, a
    ``{"min", "max", "multiple_of"}`` dict or a ``(min, max[, multiple_of])``
    tuple).  ``threads``, ``iterations`` and ``extent`` may be expressions in
    the symbols.  ``coverage``, ``exactly_once``, ``in_bounds`` and
    ``alignment`` are decided by Z3; ``coalescing`` by enumerating the symbol
    values when there are at most 256 combinations (else ``unknown``).
    Refutations carry the symbol values in ``counterexample.params``.

    >>> rs = prove_offset_formula("t % p + (t // p) * p", "4 * p", 1, "4 * p", {"p": (1, 64)},
    ...                           properties=["coverage", "exactly_once", "in_bounds"])
    >>> [(r.property, r.status) for r in rs]
    [('coverage', 'proved'), ('exactly_once', 'proved'), ('in_bounds', 'proved')]
    >>> r = prove_offset_formula("t % p + (t // p) * 2 * p", "4 * p", 1, "4 * p", {"p": (1, 64)},
    ...                          properties=["in_bounds"])[0]
    >>> r.status, sorted(r.counterexample.params)
    ('refuted', ['p'])
    """
    params = {n: _as_param(n, p) for n, p in params.items()}
    names = set(params) | {"t", "i"}
    f = _as_expr(formula, names)
    unknown = f.variables() - names
    if unknown:
        raise ConfigError(f"offset formula {f}: unknown symbol(s) {', '.join(sorted(unknown))}")
    th = _as_expr(threads, params)
    it = _as_expr(iterations, params)
    ex = _as_expr(extent, params)
    bits = int(value_type_bits(type)) if type else None
    al = int(align) if align else DEFAULT_ALIGN
    props = list(properties) if properties is not None else [
        p for p in THREADMAP_PROPERTIES if bits is not None or p not in ("alignment", "coalescing")]
    out = []
    for p in props:
        t0 = time.perf_counter()
        if p not in _CHECKS:
            out.append(Result(p, ERROR, detail=f"{p!r} does not apply to thread maps"))
            continue
        if p in ("alignment", "coalescing") and bits is None:
            out.append(_result(p, ERROR, t0, "", detail=f"{p} needs the value type"))
            continue
        if p == "coalescing":
            out.append(_enumerate_params(p, f, th, it, ex, params, elements_per_access, type, al, timeout_s, t0))
            continue
        zm = _Z3Map((f, parse_expr("0")), th, it, (elements_per_access, 1), (ex, 1), ex, bits, al, params,
                    is_offset=True)
        try:
            if p == "alignment":
                wb = elements_per_access * bits
                if wb % 8 or (wb // 8) & (wb // 8 - 1) or al % (wb // 8):
                    out.append(_result(p, REFUTED, t0, "z3", Counterexample(
                        f"a {wb / 8:g}-byte vector access cannot be aligned to its width with a "
                        f"{al}-byte aligned base")))
                    continue
            guard = _z3_divisor_guard(zm, timeout_s, t0, p)
            if guard is not None:
                out.append(guard)
                continue
            empty = _empty_member(zm, p, timeout_s)
            if empty is not None:
                out.append(_result(p, VACUOUS if isinstance(empty, dict) else UNKNOWN, t0, "z3", checked=0 if
                                   isinstance(empty, dict) else None,
                                   detail=(f"nothing to check for " + ", ".join(f"{k} = {v}" for k, v in empty.items())
                                           + (" (an empty tile)" if p == "coverage" else " (no thread or iteration)")) if isinstance(empty, dict)
                                   else f"Z3: {empty}"))
                continue
            st, cex, info = _z3_decide(zm, p, timeout_s)
        except SymlayoutError as e:
            out.append(_result(p, ERROR, t0, "z3", detail=str(e)))
            continue
        if st == "unsat":
            out.append(_result(p, PROVED, t0, "z3"))
        elif st == "sat":
            if cex.params:
                cex.message += " with " + ", ".join(f"{k} = {v}" for k, v in cex.params.items())
            out.append(_result(p, REFUTED, t0, "z3", cex))
        else:
            out.append(_result(p, UNKNOWN, t0, "z3", detail=f"Z3: {info}"))
    return out


def _empty_member(zm: _Z3Map, name: str, timeout_s):
    """A member of the family with nothing to check (coverage: an empty tile;
    the others: no thread or no iteration): its symbol values (a dict), None when every
    member has obligations, or Z3's reason (a str) when undecided."""
    z3 = zm.z3
    s = z3.Solver()
    s.add(*zm.pdom)
    if name == "coverage":          # obligations: the tile's elements (no access at all refutes it)
        s.add(z3.Or(zm.term(zm.tile[0]) <= 0, zm.term(zm.tile[1]) <= 0))
    else:                           # obligations: the accesses
        s.add(z3.Or(zm.term(zm.threads) <= 0, zm.term(zm.iterations) <= 0))
    st, mdl = _z3_check(s, timeout_s)
    if st == "unsat":
        return None
    if st == "sat":
        return {n: _mval(mdl, v) for n, v in zm.pvars.items()}
    return str(mdl)


def _enumerate_params(p, f, th, it, ex, params, epa, type, align, timeout_s, t0):
    import itertools
    counts = [pp.count() for pp in params.values()]
    if math.prod(counts) > 256:
        return _result(p, UNKNOWN, t0, "enumeration",
                       detail=f"{p} is decided by enumerating the symbol values; {math.prod(counts)} combinations "
                              "are too many (limit 256)")
    deadline = _deadline(timeout_s)
    n = 0
    for vals in itertools.product(*(pp.values() for pp in params.values())):
        env = dict(zip(params, vals))
        ev = lambda e: e if isinstance(e, int) else e.evaluate(env)  # noqa: E731
        try:
            sub = _substitute(f, env)
            tm = OffsetThreadMap(sub, ev(th), ev(it), ev(ex), epa)
        except SymlayoutError as e:
            return _result(p, ERROR, t0, "enumeration", detail=f"with {env}: {e}")
        try:
            cex, k = _EXHAUSTIVE[p](MapModel.of(tm, type=type, align=align), deadline)
        except _Timeout:
            return _result(p, UNKNOWN, t0, "enumeration", detail=f"timed out after {timeout_s} s")
        n += k
        if cex is not None:
            cex.params = env
            cex.message += " with " + ", ".join(f"{a} = {b}" for a, b in env.items())
            return _result(p, REFUTED, t0, "enumeration", cex, checked=n)
    return _result(p, verdict(None, n), t0, "enumeration", checked=n)


def _substitute(e: Expr, env: dict) -> Expr:
    if isinstance(e, Var) and e.name in env:
        return Const(env[e.name]) if env[e.name] >= 0 else Neg(Const(-env[e.name]))
    if isinstance(e, Neg):
        return Neg(_substitute(e.operand, env))
    if isinstance(e, BinOp):
        return BinOp(e.op, _substitute(e.left, env), _substitute(e.right, env))
    return e
