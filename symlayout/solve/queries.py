"""The solver's Z3 queries for one combination of the listed alternatives: the unknowns as bounded terms,
each copy as an :class:`OperandQuery` (the prover's address encoder over a symbolic smem layout whose
swizzle bits and ``?name`` entries are variables), the prover's obligations stated over it
(:mod:`symlayout.prove.copy.z3backend`), and the combination's parameter-independent facts decided once
(:class:`ComboProblem`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..algebra import int_tuple as it
from ..algebra.int_tuple import _
from ..algebra.notation import parse
from ..errors import SymlayoutError
from ..atoms.copy import width_mismatch
from ..prove.decide import bvterms as bt
from ..prove.copy import obligations as props
from ..prove.copy import z3backend as zb
from ..prove.verdict.result import Result
from ..prove.copy.z3backend import q_alignment, q_bank_conflicts, q_exactly_once_store, q_in_bounds, q_slot_agreement
from ..prove.decide.z3problem import TileAddressing, z3_module
from ..tiled.mma import make_tiled_mma
from .spec import Combo, SolveSpec

#: a small solve file used by the examples of this package's modules (the row-padding acceptance case)
EXAMPLE_PAD = """
[unknowns]
pad = { min = 0, max = 16 }
[mma]
atom = "SM80_16x8x16_F16F16F16F16_TN"
layout = "(2,2,1)"
[copy.A]
atom = "SM75_U32x4_LDSM_N"
type = "half_t"
smem = "(32,64):(64+?pad,1)"
"""


# ---------------------------------------------------------------- terms
#
# Every term is a :mod:`symlayout.prove.decide.bvterms` term (an interval over the unknowns' ranges
# travels with it); a combination's obligations are lowered to bit-vectors one bit wider than
# their widest term, so nothing wraps and ``//``/``%`` are floor division and Python's modulo.


def unknown_terms(spec: SolveSpec) -> dict:
    """The unknowns as range-bounded term variables.

    >>> from symlayout.solve.spec import loads_spec
    >>> t = unknown_terms(loads_spec(EXAMPLE_PAD)); t["pad"].lo, t["pad"].hi
    (0, 16)
    """
    out = bt.Env({})                      # translations cached, their bounds proved (bvterms.tighten)
    for n, u in spec.unknowns.items():
        lo = -(-u.min // u.multiple_of) * u.multiple_of
        out[n] = bt.var(n, lo, u.max // u.multiple_of * u.multiple_of)
    return out


def swizzle_term(x, b, m, s, env: dict):
    """``Sw<B,M,S>(x)`` with any of ``b, m, s`` an unknown name (variable shifts).

    >>> from symlayout.prove.decide.bvterms import var, evaluate
    >>> t = swizzle_term(bt.const(72), "B", 3, 3, {"B": var("B", 0, 4)})
    >>> [evaluate(t, {"B": b}) for b in (0, 1, 3)]
    [72, 64, 64]
    """
    b, m, s = (env[v] if isinstance(v, str) else v for v in (b, m, s))
    return bt.swizzle(x, b, m, s)


class OperandQuery(TileAddressing):
    """One copy of one combination, in the shape the prover's queries expect
    (:class:`symlayout.prove.decide.z3problem.Problem`: ``tm``, ``addr``, ``eb``, ``align``,
    ``cosize``, ``coords``, ``layout``, ``ext``, ``tile``, ``u``); ``addr`` is the prover's
    address encoder (:class:`~symlayout.prove.decide.z3problem.TileAddressing`) over :meth:`layout`.

    ``u`` are this operand's rest-tile variables (named after the operand);
    ``bounds`` keep them inside the (possibly unknown) smem extents.

    >>> from symlayout.solve.cegis import example_problem
    >>> spec, space, cp = example_problem()
    >>> P = cp.queries["A"]; P.tile, P.extents, [str(u) for u in P.u]
    ([32, 16], (32, 64), ['0', 'A_u1'])
    >>> bt.evaluate(P.addr(33), {"pad": 8, "A_u1": 0})      # tile element (1, 1)
    73
    """
    concrete = False

    def __init__(self, tm, cs, env: dict):
        self.tm = tm
        self.cs = cs
        self.smem = cs.smem
        self.S = cs.smem.inner                 # cosize() for in_bounds (a swizzle keeps the cosize)
        self.env = env
        self.eb = tm.value_bits // 8
        self.align = cs.align
        op = cs.operand
        self.bounds = self._place_tile(tm, it.product_each(self.S.shape), env, lambda k: f"{op}_u{k}")
        self.cosize = bt.from_sympy(self.S.cosize(), env)
        sw = cs.smem.swizzle
        self._sw = None if sw is None else (sw.b, sw.m, sw.s)

    def layout(self, crd):
        """``smem(crd)`` (element offset) for term coordinates.

        >>> from symlayout.solve.cegis import example_problem
        >>> spec, space, cp = example_problem(); P = cp.queries["A"]
        >>> bt.evaluate(P.layout([bt.const(1), bt.const(2)]), {"pad": 8})
        74
        """
        x = bt.crd2idx(tuple(crd), self.S.shape, self.S.stride, self.env)
        if self.smem.offset:
            x = x + self.smem.offset
        if self._sw is not None:
            x = swizzle_term(x, *self._sw, self.env)
        return x

    def coords(self, prefix: str):
        """Coordinate variables of the smem tile (named after the operand) and their bounds."""
        op = self.cs.operand
        xs = [bt.var(f"{op}_{prefix}{k}", 0, max(0, e.hi - 1)) for k, e in enumerate(self.ext)]
        return xs, [x < e for x, e in zip(xs, self.ext)]

    def divisibility(self):
        """Each smem extent is a positive multiple of the copy tile (constraints on the unknowns
        alone; those that hold whatever the unknowns are dropped).

        >>> from symlayout.solve.cegis import example_problem
        >>> spec, space, cp = example_problem(); len(cp.queries["A"].divisibility())     # (32, 64) by (32, 16)
        0
        """
        out = []
        for ext, t in zip(self.ext, self.tile):
            out.append(ext >= t)
            if t > 1:
                out.append(ext % t == 0)
        return [c for c in out if not (isinstance(c, bt.Bool) and c.op == "bconst" and c.args[0])]


def _violation(entries):
    """The prover's query entries as one violation."""
    return bt.Or(*[c for _l, c in entries])


# The obligations are the prover's queries (symlayout.prove.copy.z3backend, imported above) as they are: they only
# need the Problem interface OperandQuery provides.  Bank conflicts are asked pairwise (no
# selector variables), so that in CEGIS the only universally quantified variables are the
# rest-tile indices (and store coordinates) and one counterexample tile rules out a guess for
# every entry at once.


def q_bank_conflicts_pairwise(P):
    """Two vectors of one phase touch different words of one bank, pair by pair.

    >>> from symlayout.solve.cegis import example_problem
    >>> spec, space, cp = example_problem(); entries, _ = q_bank_conflicts_pairwise(cp.queries["A"])
    >>> f = _violation(entries)
    >>> [any(bt.evaluate(f, {"pad": p, "A_u1": u}) for u in range(4)) for p in (0, 8)]
    [True, False]
    """
    return q_bank_conflicts(P, pairwise=True)


QUERIES = {"alignment": q_alignment, "in_bounds": q_in_bounds, "slot_agreement": q_slot_agreement,
           "bank_conflicts": q_bank_conflicts_pairwise, "exactly_once": q_exactly_once_store}


# ---------------------------------------------------------------- one combination


@dataclass
class Check:
    """One symbolic obligation: its violation (a term formula; ``violation`` once lowered)
    and its universally quantified variables (everything but the unknowns).

    >>> from symlayout.solve.cegis import example_problem
    >>> spec, space, cp = example_problem(); c = cp.checks[0]; c.property, [str(u) for u in c.universal]
    ('alignment', ['A_u1'])
    """
    operand: str
    property: str
    term: object
    violation: object = None
    universal: list = field(default_factory=list)


@dataclass
class StaticFailure:
    """A property that fails for every value of the unknowns in one combination.

    >>> StaticFailure("A", "type_agreement", "copy value type float is 32 bits ...").property
    'type_agreement'
    """
    operand: str | None
    property: str
    message: str


class ComboProblem:
    """The tile models and the symbolic obligations of one combination.

    ``checks``: the symbolic obligations; ``static_failures``: properties that
    fail whatever the unknowns (decided on the tile by the prover's checks);
    ``base``: constraints on the unknowns alone (whole tiles).  The obligations
    are terms until :meth:`lower` gives them a :class:`Space` of the width they
    need (:meth:`width`).

    >>> from symlayout.solve.cegis import example_problem
    >>> spec, space, cp = example_problem()
    >>> cp.feasible, [c.property for c in cp.checks], cp.width()
    (True, ['alignment', 'slot_agreement', 'bank_conflicts', 'in_bounds'], 15)
    """

    def __init__(self, spec: SolveSpec, combo: Combo, env: dict, properties):
        self.spec, self.combo, self.env = spec, combo, env
        self.properties = tuple(properties)
        self.checks: list = []
        self.static_failures: list = []
        self.static_results: dict = {}
        self.base_terms: list = []
        self.base: list = []
        self.queries: dict = {}
        self.space = None
        try:
            mma = make_tiled_mma(spec.mma.atom, _parse_layout(spec.mma.layout),
                                 [_parse_perm(p) for p in combo.permutation] if combo.permutation else None)
        except SymlayoutError as e:
            self.static_failures.append(StaticFailure(None, "tiling", f"TiledMMA: {e}"))
            return
        self.mma = mma
        for op in sorted(spec.copies):
            cs = spec.copies[op]
            atom = combo.atoms[op]
            why = width_mismatch(atom, cs.type, cs.element_type)
            if why is not None:                  # (contract 2.1: a bit-moving atom's type is a width)
                self.static_failures.append(StaticFailure(op, "type_agreement", why))
                continue
            try:
                tm = zb.tile_model_for(mma, op, atom, cs.element_type, cs.align)
            except SymlayoutError as e:
                self.static_failures.append(StaticFailure(op, "tiling", f"make_tiled_copy_{op}(Copy_Atom<{atom}, "
                                                                        f"{cs.type}>, mma): {e}"))
                continue
            if tm.value_bits % 8:
                self.static_failures.append(StaticFailure(op, "tiling", "sub-byte value types are not encoded for Z3"))
                continue
            try:
                P = OperandQuery(tm, cs, env)
            except bt.Untranslatable as e:
                self.static_failures.append(StaticFailure(op, "tiling", f"smem {cs.smem.raw}: {e}"))
                continue
            self.queries[op] = P
            self.base_terms += P.divisibility()
            for p in self.properties:
                static = None
                if p in ("coverage", "type_agreement") or (p == "exactly_once"):
                    static = props.CHECKS[p](tm)
                elif p == "slot_agreement":
                    _n, pk = props.packed_bindings(tm)
                    route = getattr(props, "mma_route", None)
                    if pk is None and route is not None:
                        _m, pk = route(mma.atom, op)
                    if pk is not None:
                        static = Result(p, "refuted", operand=op, counterexample=pk, method="exhaustive (tile)")
                if static is not None:
                    self.static_results[(op, p)] = static
                    if static.status == "refuted":
                        msg = static.counterexample.message if static.counterexample else static.detail
                        self.static_failures.append(StaticFailure(op, p, msg))
                        continue
                    if not (p == "exactly_once" and tm.direction == "store"):
                        continue
                if p not in QUERIES:
                    continue
                try:
                    entries, info = QUERIES[p](P)
                except bt.Untranslatable as e:
                    self.static_failures.append(StaticFailure(op, p, f"not encoded for Z3: {e}"))
                    continue
                if entries is None:
                    self.static_failures.append(StaticFailure(op, p, info))
                    continue
                self.checks.append(Check(op, p, bt.And(*P.bounds, _violation(entries))))

    def roots(self) -> list:
        return [c.term for c in self.checks] + list(self.base_terms)

    def width(self, extra=()) -> int:
        """Bits every term of the obligations (and of ``extra``) fits in, plus one."""
        return bt.Lowering.width_of(self.roots() + list(extra))

    def lower(self, space):
        """Lower the obligations at ``space``'s width (a divisor that may be 0 counts as a violation)."""
        z3 = z3_module()
        self.space = space
        L = bt.Lowering(space.width)
        self.base = [L(c) for c in self.base_terms] + L.ranges() + list(L.guards)
        for c in self.checks:
            L = bt.Lowering(space.width)
            f = L(c.term)
            if L.guards:
                f = z3.Or(f, z3.Not(z3.And(*L.guards)))
            c.violation = z3.And(*L.ranges(), f)
            c.universal = [L.vars[n] for n in sorted(L.vars) if n not in self.env]
        return self

    @property
    def feasible(self) -> bool:
        """False when some property fails whatever the unknowns are.

        >>> from symlayout.solve.cegis import example_problem
        >>> example_problem()[2].feasible
        True
        """
        return not self.static_failures


def _parse_layout(text):
    return parse(text)


def _parse_perm(p):
    p = str(p).strip()
    return _ if p in ("_", "") else parse(p)
