"""The Z3 encoding of a copy tile over a symbolic smem layout: the terms the obligations are stated in.

A :class:`Problem` holds one copy tile's route model (concrete: who reads which tile element), the smem
layout ``S`` whose shapes/strides may hold parameters, and the rest tile ``u`` the copy is working on::

    addr(idx) = S(coord(idx) + u * tile)        (element offset of tile-local index idx, as a bounded term)

with the parameters as range-bounded variables (``multiple_of`` constraints) and ``u * tile < extent``.
:class:`Instance` is the same thing with exact integers at one witness (the layout's own evaluation).
A :class:`Query` lowers a violation ``Or(entries)`` plus the constraints to bit-vectors one bit wider than
the widest term (nothing wraps) or to unbounded integers, and asks Z3 within a time budget
(:class:`OutOfTime` when it is spent).  The prover (:mod:`~symlayout.prove.copy.z3backend`) and the solver
(:mod:`symlayout.solve`) state their queries over these terms.
"""
from __future__ import annotations

import time

from ...algebra import int_tuple as it
from ...algebra._lazy import sympy
from ...algebra.composed import ComposedLayout
from ...algebra.layout import Layout
from .bvterms import OutOfTime, Or, Untranslatable, const, var
from . import bvterms as bt

#: Z3 resource units (``rlimit``) one minimisation step may use: a limit counted by Z3, not the clock, so the
#: same witness is minimised to the same values on a loaded machine.  Generous (~10 s of this machine's Z3;
#: the time budget bounds it too): an unsat step of a bank-conflict family's selector query takes 2-3.5
#: million units, and how many varies with what the process asked Z3 before -- a limit near that made the
#: reported minimum depend on the history (tests/test_soundness_parametric.py's sharing test)
MINIMIZE_STEP_RLIMIT = 30_000_000
#: queries wider than this many bits (or nonlinear ones) are first tried over unbounded integers
WIDE_BITS = 40
#: Z3 resource units of that integer attempt (about 5 s of this machine's Z3; within a time budget, at most
#: half the time left): which query decides does not depend on the machine's load
INTEGER_FIRST_RLIMIT = 10_000_000


def z3_module():
    import z3
    return z3


# ---------------------------------------------------------------- the problem


class TileAddressing:
    """The one address encoder of the prover's and the solver's queries: a copy tile ``tm`` placed at
    rest tile ``u`` of an smem layout whose extents are the terms ``ext``::

        addr(idx) = layout(coord(idx) + u * tile)

    Subclasses give :meth:`layout` (the smem layout of a term coordinate) and call
    :meth:`_place_tile` once; ``u_name(k)`` names the rest-tile variables.
    """

    def _place_tile(self, tm, extents, env, u_name) -> list:
        """Set ``extents``, ``ext``, ``tile`` and the rest-tile variables ``u``; returns the constraints
        "rest tile inside the smem tile" (``u * tile < extent``)."""
        self.extents = extents
        self.ext = [bt.from_sympy(e, env) for e in extents]
        tiler = list(tm.shape2)
        self.tile = tiler + [1] * (len(extents) - len(tiler))
        self.u, inside = [], []
        for k, (ext, t) in enumerate(zip(self.ext, self.tile)):
            top = -(-ext.hi // t) - 1                 # u * t < ext  =>  u <= ceil(ext / t) - 1
            uk = const(0) if top <= 0 else var(u_name(k), 0, top)
            self.u.append(uk)
            inside.append(uk * t < ext)
        self._addr_memo = {}
        self._origin = [uk * t for uk, t in zip(self.u, self.tile)]       # the rest tile's first coordinate
        return inside

    def addr(self, idx: int):
        """Element offset of tile-local index ``idx`` in rest tile ``u``."""
        r = self._addr_memo.get(idx)
        if r is None:
            local = self.tm.coord(idx)
            crd = [const(local[k] if k < len(local) else 0) + self._origin[k] for k in range(len(self.extents))]
            r = self._addr_memo[idx] = self.layout(crd)
        return r

    def layout(self, crd):
        raise NotImplementedError


class Problem(TileAddressing):
    """A tile-level route model plus the (symbolic) smem layout and parameters, as terms.

    ``env``: the parameters as range-bounded variables; ``u``: the rest-tile
    indices (a constant 0 where the smem extent holds one tile);
    ``constraints``: ``multiple_of`` and "rest tile inside the smem tile".
    """
    concrete = False

    def __init__(self, tile_model, S, params: dict, value_bits: int, align: int, deadline: float | None = None):
        self.tm = tile_model
        self.S = S
        self.params = params
        self.env = bt.Env({}, deadline)           # translations cached, their bounds proved (bvterms.tighten)
        cons = []
        for n, p in params.items():
            lo = -(-p.min // p.multiple_of) * p.multiple_of
            hi = p.max // p.multiple_of * p.multiple_of
            v = self.env[n] = var(n, lo, hi)
            if p.multiple_of > 1:
                cons.append(v % p.multiple_of == 0)
        self.value_bits = value_bits
        self.eb = value_bits // 8
        self.align = align
        cons += self._place_tile(tile_model, it.product_each(S.shape), self.env, lambda k: f"u{k}")
        self.constraints = cons
        self._cosize = None
        self.tiling_proved = False                # whole tiles, no broadcast mode (z3backend.decide)
        self.memo: dict = {}                      # decided facts kept for the properties sharing the problem

    @property
    def cosize(self):
        if self._cosize is None:
            self._cosize = bt.from_sympy(self.S.cosize(), self.env)
        return self._cosize

    def solve(self, formula, timeout_s=None, info: dict | None = None):
        """Ask whether ``formula`` (a term Bool) holds somewhere under the problem's constraints:
        ``("sat", values)``, ``("unsat", None)`` or ``("unknown", reason)`` (used by prove/copy/contiguity.py).
        ``info["guarded"]``: whether the query has a divisor that may be 0 (not excluded here)."""
        deadline = None if timeout_s is None else time.perf_counter() + timeout_s
        try:
            qs = queries(self, [((), formula)])
            if info is not None:
                info["guarded"] = bool(qs[0].guards)
            st, m, q = first_decided(qs, deadline)
        except OutOfTime:
            return "unknown", f"time budget of {timeout_s} s spent"
        except Untranslatable as e:
            return "unknown", f"not encoded for Z3: {e}"
        return st, (q.values(m) if st == "sat" else m)

    def values(self, vals: dict):
        """``(parameters, rest tile)`` of the values :meth:`solve` returned."""
        ps = {n: vals.get(n, self.env[n].lo) for n in self.params}
        return ps, [vals.get(f"u{k}", 0) for k in range(len(self.u))]

    def coords(self, prefix: str):
        """Fresh coordinate variables, one per smem mode, and their range constraints."""
        xs = [var(f"{prefix}{k}", 0, max(0, e.hi - 1)) for k, e in enumerate(self.ext)]
        return xs, [x < e for x, e in zip(xs, self.ext)]

    def layout(self, crd):
        return bt.layout_term(self.S, tuple(crd), self.env)


class Instance:
    """One witness with exact integers: the layout instantiated at the witness's
    parameter values and evaluated by the layout itself (no Z3 term involved),
    at the witness's rest tile.  The obligations' entries evaluate to bools here.
    """
    concrete = True

    def __init__(self, P: Problem, values: dict):
        self.tm, self.eb, self.align, self.tile = P.tm, P.eb, P.align, P.tile
        # a parameter the query does not mention takes its smallest value
        self.params = {n: values.get(n, P.env[n].lo) for n in P.params}
        self.values = values
        self.S = substitute(P.S, self.params)
        self.extents = [int(e) for e in it.product_each(self.S.shape)]
        self.u = [values.get(f"u{k}", 0) for k in range(len(self.extents))]
        self._cosize = None

    @property
    def cosize(self):
        if self._cosize is None:
            self._cosize = int(self.S.cosize())
        return self._cosize

    def inside(self) -> bool:
        """The rest tile lies inside the smem tile, whose extents are whole tiles."""
        return all(e % t == 0 for e, t in zip(self.extents, self.tile)) and \
            all(0 <= u and u * t < e for u, t, e in zip(self.u, self.tile, self.extents))

    def crd(self, idx: int) -> tuple:
        local = self.tm.coord(idx)
        return tuple((local[k] if k < len(local) else 0) + self.u[k] * self.tile[k] for k in range(len(self.extents)))

    def addr(self, idx: int) -> int:
        return int(self.S(self.crd(idx)))

    def coords(self, prefix: str):
        xs = [self.values.get(f"{prefix}{k}", 0) for k in range(len(self.extents))]
        return xs, [0 <= x < e for x, e in zip(xs, self.extents)]

    def layout(self, crd):
        return int(self.S(tuple(crd)))

    def name(self, idx: int, operand: str) -> str:
        return f"{operand}({','.join(map(str, self.crd(idx)))})"


def substitute(L, values: dict):
    """Instantiate the parameters of a (possibly composed) layout."""
    subs = {sympy.Symbol(n, positive=True, integer=True): v for n, v in values.items()}

    def go(x):
        if isinstance(x, tuple):
            return tuple(go(e) for e in x)
        if isinstance(x, sympy.Basic):
            r = x.subs(subs)
            return int(r) if r.is_Integer else r
        return x
    if getattr(L, "is_composed", False):
        return ComposedLayout(L.swizzle, go(L.offset), Layout(go(L.inner.shape), go(L.inner.stride)))
    return Layout(go(L.shape), go(L.stride))


# ---------------------------------------------------------------- solving


class Query:
    """One lowered query: the violation, the problem's constraints, the variables' ranges.

    ``integer``: lowered to unbounded Z3 integers instead of bit-vectors (tried first
    on wide queries, whose multipliers are costly to bit-blast).
    """

    def __init__(self, P: Problem, entries, integer: bool = False):
        self.f = Or(*[c for _l, c in entries])
        roots = [self.f] + list(P.constraints)
        self.integer = integer
        self.L = bt.IntLowering() if integer else bt.Lowering.of(roots, own_names=True)
        z3 = z3_module()
        self.base = [self.L(c) for c in P.constraints]
        fz = self.L(self.f)
        self.base += self.L.ranges()
        self.goal = self.base + [fz]
        self.guards = list(self.L.guards)
        self.width = self.L.width
        self.extra = []
        self.z3 = z3

    def solve(self, deadline, extra=(), step_s=None, goal=None, rlimit=None):
        z3 = self.z3
        s = z3.Solver() if self.integer else z3.SolverFor("QF_BV")
        ms = budget_ms(deadline, step_s)
        if ms is not None:
            s.set("timeout", ms)
        if rlimit is not None:
            s.set("rlimit", rlimit)
        s.add(*(self.goal if goal is None else goal), *self.extra, *extra)
        r = s.check()
        if r == z3.unsat:
            return "unsat", None
        if r == z3.sat:
            return "sat", s.model()
        if deadline is not None and time.perf_counter() >= deadline:
            raise OutOfTime()
        return "unknown", s.reason_unknown()

    def value(self, model, v) -> int:
        x = model.eval(v, model_completion=True)
        return x.as_long() if self.integer else x.as_signed_long()

    def values(self, model) -> dict:
        return {n: self.value(model, v) for n, v in self.L.vars.items()}

    def exclude(self, values: dict, names):
        z3 = self.z3
        self.extra.append(z3.Or(*[self.L.vars[n] != values[n] for n in names if n in self.L.vars]))

    def minimize(self, model, names, deadline):
        """Shrink the witness's variables ``names`` to their smallest values, one by one
        (each step a query: the bottom of the range first, where witnesses mostly are, then
        bisection); stops early at the deadline, keeping the last witness."""
        fixed = []
        for n in names:
            v = self.L.vars.get(n)
            if v is None:
                continue
            lo = self.L.ranges_[n][0]
            best = self.value(model, v)
            first = True
            while lo < best:
                if deadline is not None and time.perf_counter() >= deadline:
                    return model
                mid = lo if first else (lo + best) // 2
                first = False
                try:
                    st, m2 = self.solve(deadline, fixed + [v <= mid], rlimit=MINIMIZE_STEP_RLIMIT)
                except OutOfTime:
                    return model
                if st == "sat":
                    model, best = m2, self.value(m2, v)
                elif st == "unsat":
                    lo = mid + 1
                else:
                    break
            fixed.append(v == best)
        return model


def budget_ms(deadline, step_s=None):
    if deadline is None:
        return None if step_s is None else max(1, int(step_s * 1000))
    left = deadline - time.perf_counter()
    if left <= 0:
        raise OutOfTime()
    if step_s is not None:
        left = min(left, step_s)
    return max(1, int(left * 1000))


def time_left(deadline):
    """Seconds left before ``deadline`` (None without one)."""
    if deadline is None:
        return None
    left = deadline - time.perf_counter()
    if left <= 0:
        raise OutOfTime()
    return left


def check_time(deadline):
    if deadline is not None and time.perf_counter() >= deadline:
        raise OutOfTime()


def is_nonlinear(roots) -> bool:
    """True when a product or a divisor involves two variable terms (bit-blasted
    multipliers: often faster over integers)."""
    return bt.subtree_facts(list(roots))[1]


def queries(P, entries) -> list:
    """The query over bit-vectors, preceded by the one over integers when it is wide or nonlinear."""
    qs = [Query(P, entries)]
    if qs[0].width > WIDE_BITS or is_nonlinear([qs[0].f] + list(P.constraints)):
        try:
            qs.insert(0, Query(P, entries, integer=True))
        except Untranslatable:
            pass
    return qs


def first_decided(qs, deadline):
    """Ask the queries in turn (every one but the last with :data:`INTEGER_FIRST_RLIMIT` and at most half the
    time left)."""
    st = mdl = None
    for k, q in enumerate(qs):
        step = rl = None
        if k < len(qs) - 1:
            rl = INTEGER_FIRST_RLIMIT
            step = None if deadline is None else max(0.001, (deadline - time.perf_counter()) / 2)
        st, mdl = q.solve(deadline, step_s=step, rlimit=rl)
        if st != "unknown":
            return st, mdl, q
    return st, mdl, qs[-1]
