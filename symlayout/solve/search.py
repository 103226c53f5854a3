"""The symbolic search behind ``symlayout solve``.

For one choice of the listed alternatives (a :class:`~symlayout.solve.spec.Combo`:
permutation modes and copy atoms) the route of one copy tile is concrete: it is
the prover's tile model (:func:`symlayout.prove.z3backend.tile_model_for`).  What
is unknown is *where* each tile element lives: the smem layout, whose swizzle
parameters ``B, M, S`` and ``?name`` entries are variables.  A
symbolic swizzle is ``x ^ ((x & (((1 << B) - 1) << (M + S))) >> S)`` with
variable shifts.  Terms carry intervals over the unknowns' ranges
(:mod:`symlayout.prove.bvterms`); each combination is lowered to bit-vectors one
bit wider than its widest term, so nothing wraps and ``//``/``%`` are floor
division and Python's modulo.  Each property's violation is the prover's Z3 encoding
(:func:`~symlayout.prove.z3backend.q_alignment`, ``q_in_bounds``,
``q_slot_agreement``, ``q_bank_conflicts``; injectivity for stores): a
disjunction over the finite entries of the route table, with the rest-tile
indices ``u`` as the only other free variables.

"Every entry of every rest tile satisfies every property" is
``forall u. not violation(unknowns, u)``; it is solved by CEGIS: Z3 guesses
unknown values satisfying ``not violation`` on a finite set of rest-tile
instances (starting with ``u = 0``); the guess is checked with the unknowns fixed
and ``u`` free (a complete Z3 proof over every rest tile); a violating ``u`` is
added as a new instance.  An ``unsat`` guess proves that no value in the declared
ranges works (the instances are a subset of the real constraints).  Properties
that do not depend on the unknowns (coverage, type agreement, exactly-once of
loads, packed register bindings) are decided once per combination by the
prover's exhaustive checks on the tile.

``--minimize`` bisects on the objective (each step a CEGIS search; the last
``unsat`` proves optimality), then breaks ties by the smallest values of the
unknowns in declaration order; ``--all`` blocks each solution and asks again.
Every answer is finally re-proved by the ordinary prover
(:func:`symlayout.prove.engine.prove_config` on the completed configuration).

>>> from symlayout.solve.spec import loads_spec
>>> spec = loads_spec('''
... [unknowns]
... pad = { min = 0, max = 16 }
... [mma]
... atom = "SM80_16x8x16_F16F16F16F16_TN"
... layout = "(2,2,1)"
... [copy.A]
... atom = "SM75_U32x4_LDSM_N"
... type = "half_t"
... smem = "(32,64):(64+?pad,1)"
... ''', "pad.toml")
>>> out = solve(spec, minimize="pad")
>>> out.status, out.solutions[0].values, out.optimal
('found', {'pad': 8}, True)
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..algebra import int_tuple as it
from ..algebra.int_tuple import _
from ..algebra.notation import parse
from ..config import loads_config
from ..errors import SymlayoutError
from ..prove import bvterms as bt
from ..prove import obligations as props, z3backend as zb
from ..prove.engine import prove_config
from ..prove.result import Result
from ..prove.z3backend import q_alignment, q_bank_conflicts, q_exactly_once_store, q_in_bounds, q_slot_agreement
from ..prove.z3problem import TileAddressing
from ..threadmap.formula import Const
from ..tiled.mma import make_tiled_mma
from .spec import Combo, SolveSpec, loads_spec, parse_objective

__all__ = ["solve", "Solution", "SolveOutcome", "ComboProblem", "CegisSearch", "swizzle_term", "unknown_terms",
           "objective_term"]

SYMBOLIC = ("alignment", "in_bounds", "slot_agreement", "bank_conflicts")

#: a small solve file used by the examples below (the row-padding acceptance case)
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


_EXAMPLE = []


def _example():
    """``(spec, space, combo problem)`` of :data:`EXAMPLE_PAD` (built once; searches never modify it)."""
    if _EXAMPLE:
        return _EXAMPLE[0]
    spec = loads_spec(EXAMPLE_PAD, "pad.toml")
    terms = unknown_terms(spec)
    cp = ComboProblem(spec, spec.combos()[0], terms, spec.properties)
    space = Space(spec, cp.width(Space.constraint_terms_of(spec, terms)), terms)
    _EXAMPLE.append((spec, space, cp.lower(space)))
    return _EXAMPLE[0]


def _z3():
    import z3
    return z3


# ---------------------------------------------------------------- terms
#
# Every term is a :mod:`symlayout.prove.bvterms` term (an interval over the unknowns' ranges
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

    >>> from symlayout.prove.bvterms import var, evaluate
    >>> t = swizzle_term(bt.const(72), "B", 3, 3, {"B": var("B", 0, 4)})
    >>> [evaluate(t, {"B": b}) for b in (0, 1, 3)]
    [72, 64, 64]
    """
    b, m, s = (env[v] if isinstance(v, str) else v for v in (b, m, s))
    return bt.swizzle(x, b, m, s)


class OperandQuery(TileAddressing):
    """One copy of one combination, in the shape the prover's queries expect
    (:class:`symlayout.prove.z3problem.Problem`: ``tm``, ``addr``, ``eb``, ``align``,
    ``cosize``, ``coords``, ``layout``, ``ext``, ``tile``, ``u``); ``addr`` is the prover's
    address encoder (:class:`~symlayout.prove.z3problem.TileAddressing`) over :meth:`layout`.

    ``u`` are this operand's rest-tile variables (named after the operand);
    ``bounds`` keep them inside the (possibly unknown) smem extents.

    >>> spec, space, cp = _example()
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

        >>> spec, space, cp = _example(); P = cp.queries["A"]
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

        >>> spec, space, cp = _example(); len(cp.queries["A"].divisibility())     # (32, 64) by (32, 16)
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


# The obligations are the prover's queries (symlayout.prove.z3backend, imported above) as they are: they only
# need the Problem interface OperandQuery provides.  Bank conflicts are asked pairwise (no
# selector variables), so that in CEGIS the only universally quantified variables are the
# rest-tile indices (and store coordinates) and one counterexample tile rules out a guess for
# every entry at once.


def q_bank_conflicts_pairwise(P):
    """Two vectors of one phase touch different words of one bank, pair by pair.

    >>> spec, space, cp = _example(); entries, _ = q_bank_conflicts_pairwise(cp.queries["A"])
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

    >>> spec, space, cp = _example(); c = cp.checks[0]; c.property, [str(u) for u in c.universal]
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

    >>> spec, space, cp = _example()
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
            try:
                tm = zb.tile_model_for(mma, op, atom, cs.type, cs.align)
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
        z3 = _z3()
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

        >>> _example()[2].feasible
        True
        """
        return not self.static_failures


def _parse_layout(text):
    return parse(text)


def _parse_perm(p):
    p = str(p).strip()
    return _ if p in ("_", "") else parse(p)


# ---------------------------------------------------------------- CEGIS


class Timeout(Exception):
    """The search ran out of time (or Z3 gave up).

    >>> str(Timeout("time limit reached"))
    'time limit reached'
    """


class CegisSearch:
    """``exists unknowns. forall u. not violation`` for a set of checks, by CEGIS.

    ``find(extra)`` returns the values of a verified solution (a dict) or None
    when none exists (``unsat``: a proof); raises :class:`Timeout`.

    >>> import time, z3
    >>> spec, space, cp = _example()
    >>> cs = CegisSearch(space, cp.checks, cp.base, time.perf_counter() + 60)
    >>> cs.find([space.vars["pad"] <= 8]), cs.find([space.vars["pad"] <= 7])
    ({'pad': 8}, None)
    """

    def __init__(self, space, checks, base, deadline: float, prover=None):
        z3 = _z3()
        self.space = space
        self.checks = list(checks)
        self.deadline = deadline
        self.s = z3.SolverFor("QF_BV")
        self.s.add(*space.constraints, *base)
        self._lits = {}
        self.prover = prover
        self.proofs = 0
        self.disagreements = []
        self.rounds = 0
        self.queries = 0
        self.instances = 0
        self._seen = set()
        for c in self.checks:
            self.add_instance({str(u): 0 for u in c.universal})

    def add_instance(self, inst: dict):
        """Require ``not violation`` at these values of the universal variables (every check they cover).

        >>> import time
        >>> spec, space, cp = _example(); cs = CegisSearch(space, cp.checks, cp.base, time.perf_counter() + 60)
        >>> n = cs.instances; cs.add_instance({"A_u1": 1}); cs.instances - n
        4
        """
        z3 = _z3()
        for i, c in enumerate(self.checks):
            names = [str(u) for u in c.universal]
            if not all(n in inst for n in names):
                continue
            key = (i, tuple(inst[n] for n in names))
            if key in self._seen:
                continue
            self._seen.add(key)
            pairs = [(u, z3.BitVecVal(inst[str(u)], u.size())) for u in c.universal]
            g = z3.substitute(c.violation, *pairs) if pairs else c.violation
            self.s.add(z3.Not(g))
            self.instances += 1

    def _remaining_ms(self) -> int:
        left = self.deadline - time.perf_counter()
        if left <= 0:
            raise Timeout("time limit reached")
        return max(1, int(left * 1000))

    def _lit(self, solver_key, solver, expr):
        """An assumption literal standing for ``expr`` (memoized per solver)."""
        z3 = _z3()
        key = (solver_key, expr.get_id())
        lit = self._lits.get(key)
        if lit is None:
            lit = z3.Bool(f"__a{len(self._lits)}")
            solver.add(z3.Implies(lit, expr))
            self._lits[key] = (lit, expr)
            return lit
        return lit[0]

    def find(self, extra=()):
        """A verified solution under the extra constraints, or None (proved: none exists).

        Extra constraints are passed as assumption literals, so the incremental
        solver bit-blasts the obligations once.

        >>> import time
        >>> spec, space, cp = _example(); CegisSearch(space, cp.checks, cp.base, time.perf_counter() + 60).find()["pad"] % 8
        0
        """
        z3 = _z3()
        lits = [self._lit("g", self.s, e) for e in extra]
        while True:
            self.rounds += 1
            self.s.set("timeout", self._remaining_ms())
            r = self.s.check(*lits)
            self.queries += 1
            if r == z3.unsat:
                return None
            if r != z3.sat:
                raise Timeout(f"z3: {self.s.reason_unknown()}")
            m = self.s.model()
            values = {n: m.eval(v, model_completion=True).as_signed_long() for n, v in self.space.vars.items()}
            if self.check_candidate(values):
                return values

    def check_candidate(self, values: dict) -> bool:
        """Check a guess: with the prover when a ``prover`` callback is given (the
        Z3 check then only finds the counterexample's rest tile), else with Z3.
        A violation adds its instance (or blocks the guess) and returns False.

        >>> import time
        >>> spec, space, cp = _example(); cs = CegisSearch(space, cp.checks, cp.base, time.perf_counter() + 60)
        >>> cs.check_candidate({"pad": 8}), cs.check_candidate({"pad": 16})
        (True, False)
        """
        z3 = _z3()
        pairs = [(var, z3.BitVecVal(values[n], var.size())) for n, var in self.space.vars.items()]
        failing = None
        if self.prover is not None:
            self.proofs += 1
            failing = self.prover(values)
            if failing is None:
                return True
        for c in self.checks:
            if failing is not None and (c.operand, c.property) not in failing:
                continue
            v = z3.SolverFor("QF_BV")
            v.add(z3.substitute(c.violation, *pairs) if pairs else c.violation)
            v.set("timeout", self._remaining_ms())
            r2 = v.check()
            self.queries += 1
            if r2 == z3.sat:
                m2 = v.model()
                self.add_instance({str(u): m2.eval(u, model_completion=True).as_signed_long() for u in c.universal})
                return False
            if r2 != z3.unsat:
                raise Timeout(f"z3: {v.reason_unknown()}")
        if failing is None:
            return True
        # the prover refutes what the Z3 encoding accepts: exclude this guess only
        self.disagreements.append((dict(values), sorted(failing)))
        self.block(values)
        return False

    def block(self, values: dict):
        """Exclude one assignment from later answers.

        >>> import time
        >>> spec, space, cp = _example(); cs = CegisSearch(space, cp.checks, cp.base, time.perf_counter() + 60)
        >>> cs.block({"pad": 8}); cs.find() is None      # pad = 8 was the only solution in 0..16
        True
        """
        z3 = _z3()
        self.s.add(z3.Or(*[v != values[n] for n, v in self.space.vars.items()]))


def objective_term(spec: SolveSpec, terms: dict, text: str):
    """A minimize expression as a term (Python's ``//`` and ``%``) and the parsed expression.

    >>> from symlayout.solve.spec import loads_spec
    >>> spec = loads_spec(EXAMPLE_PAD); t, e = objective_term(spec, unknown_terms(spec), "pad // 8 - 3")
    >>> bt.evaluate(t, {"pad": 16}), (t.lo, t.hi), str(e)
    (-1, (-3, -1), 'pad // 8 - 3')
    """
    e = parse_objective(text, spec.unknowns)

    def leaf(node):
        return bt.const(node.value) if isinstance(node, Const) else terms[node.name]

    def neg(_node, x):
        return -x

    def binop(node, a, b):
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "//": lambda: a // b, "%": lambda: a % b}[node.op]()
    return e._fold(leaf, neg, binop), e


class Space:
    """The unknowns as Z3 bit-vectors of one width with their range constraints (and ``|S| >= B``).

    ``terms``: the unknowns as term variables (:func:`unknown_terms`), shared by every width.

    >>> spec, space, cp = _example(); list(space.vars), len(space.constraints), space.width
    (['pad'], 1, 15)
    """

    def __init__(self, spec: SolveSpec, width: int, terms: dict | None = None):
        z3 = _z3()
        self.spec = spec
        self.width = width
        self.terms = terms if terms is not None else unknown_terms(spec)
        L = bt.Lowering(width)
        cons = [L(c) for c in self.constraint_terms()]
        for n in self.terms:
            L(self.terms[n])
        self.vars = {n: L.vars[n] for n in spec.unknowns}
        self.constraints = [z3.And(*L.ranges())] + [c for c in cons if not z3.is_true(c)]
        self.constraints += list(L.guards)

    def constraint_terms(self) -> list:
        return Space.constraint_terms_of(self.spec, self.terms)

    @staticmethod
    def constraint_terms_of(spec, t: dict) -> list:
        """``multiple_of`` and, for unknown swizzles, ``|S| >= B`` and one candidate for ``B = 0``.

        >>> spec, space, cp = _example(); space.constraint_terms()
        []
        """
        cons = []
        for n, u in spec.unknowns.items():
            if u.multiple_of > 1:
                cons.append(t[n] % u.multiple_of == 0)
        for c in spec.copies.values():
            sw = c.smem.swizzle
            if sw is None or not sw.unknown_names():
                continue
            b, m, s = (t[x] if isinstance(x, str) else bt.const(abs(x)) for x in (sw.b, sw.m, sw.s))
            cons.append(s >= b)                    # |S| >= B
            if isinstance(sw.b, str):              # Sw<0,M,S> is the identity: one candidate
                pins = [t[x] == spec.unknowns[x].min for x in (sw.m, sw.s) if isinstance(x, str)]
                if pins:
                    cons.append(bt.Implies(b == 0, bt.And(*pins)))
        return cons

    def lower(self, term):
        """A term as a Z3 bit-vector at this width (a divisor that may be 0 is excluded)."""
        L = bt.Lowering(self.width)
        r = L(term)
        self.constraints += list(L.guards) + L.ranges()
        return r


# ---------------------------------------------------------------- results


@dataclass
class Solution:
    """One solution: the unknowns' values, the combination, the completed configuration and its proof.

    >>> from symlayout.solve.spec import Combo
    >>> Solution({"pad": 8}, Combo(None, {"A": "SM75_U32x4_LDSM_N"}), "...").proved
    False
    """
    values: dict
    combo: Combo
    text: str
    report: object = None
    objective: int | None = None

    @property
    def proved(self) -> bool:
        """True when the ordinary prover proved every requested property (False before it ran).

        >>> from symlayout.solve.spec import Combo
        >>> Solution({}, Combo(None, {}), "").proved
        False
        """
        return self.report is not None and self.report.error is None and \
            all(r.status == "proved" for r in self.report.results)


@dataclass
class SolveOutcome:
    """What ``solve`` found: ``status`` is ``"found"``, ``"none"`` or ``"unknown"``.

    ``optimal``: the minimum is proved (``--minimize``); ``complete``: every
    solution was listed (``--all``); ``reasons`` and ``representative``: why
    nothing was found.

    >>> SolveOutcome("none").solutions
    []
    """
    status: str
    solutions: list = field(default_factory=list)
    optimal: bool | None = None
    objective: str | None = None
    complete: bool = True
    reasons: list = field(default_factory=list)
    representative: Solution | None = None
    seconds: float = 0.0
    stats: dict = field(default_factory=dict)
    detail: str = ""
    disagreements: list = field(default_factory=list)
    cache: dict = field(default_factory=dict, repr=False)


def _prove(spec: SolveSpec, values: dict, combo: Combo, note: str = "", cache: dict | None = None):
    key = (tuple(sorted(values.items())), combo.describe(), note)
    if cache is not None and key in cache:
        return cache[key]
    text = spec.complete(values, combo, note)
    cfg = loads_config(text, f"{spec.path} (solution)")
    rep = prove_config(cfg, properties=list(spec.properties))
    if cache is not None:
        cache[key] = (text, rep)
    return text, rep


def _fmt(values: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in values.items()) or "(no unknowns)"


def solve(spec: SolveSpec, all: bool = False, minimize: str | None = None, timeout_s: float | None = None,
          prove: bool = True, explain: bool = True) -> SolveOutcome:
    """Find values for the unknowns of ``spec`` (see the module docstring).

    ``all``: every solution (up to ``spec.max_solutions``); ``minimize``: an
    expression over unknown names (default ``spec.minimize``); ``prove``: re-prove
    each answer with the ordinary prover; ``explain``: when none exists, find
    which property is to blame and prove a representative candidate.

    >>> from symlayout.solve.spec import loads_spec
    >>> spec = loads_spec('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\nlayout = "(2,2,1)"\\n[copy.A]\\n'
    ...                   'atom = "SM75_U32x4_LDSM_N"\\ntype = "half_t"\\nsmem = "Sw<?,?,?> o (32,64):(64,1)"\\n')
    >>> out = solve(spec, minimize="B")
    >>> out.solutions[0].values, out.optimal
    ({'B': 3, 'M': 3, 'S': 3}, True)
    """
    t0 = time.perf_counter()
    minimize = minimize if minimize is not None else spec.minimize
    timeout_s = timeout_s if timeout_s is not None else spec.timeout_s
    deadline = t0 + timeout_s
    terms = unknown_terms(spec)
    spaces: dict = {}                       # width -> (Space, lowered objective)
    obj_t = obj_expr = None
    if minimize:
        obj_t, obj_expr = objective_term(spec, terms, minimize)
    fixed_roots = Space.constraint_terms_of(spec, terms) + ([obj_t] if obj_t is not None else [])
    out = SolveOutcome("none", objective=minimize)
    stats = {"combos": 0, "cegis_rounds": 0, "z3_queries": 0, "instances": 0, "candidates": spec.space_size(),
             "proofs": 0, "width": 0}
    out.stats = stats
    problems = []
    try:
        best_val = None
        found = []          # (values, combo, objective)
        for combo in spec.combos():
            stats["combos"] += 1
            cp = ComboProblem(spec, combo, terms, spec.properties)
            problems.append(cp)
            if not cp.feasible:
                continue
            width = cp.width(fixed_roots)
            if width not in spaces:
                sp = Space(spec, width, terms)
                spaces[width] = (sp, sp.lower(obj_t) if obj_t is not None else None)
            space, obj = spaces[width]
            stats["width"] = max(stats["width"], width)
            cp.lower(space)
            cs = CegisSearch(space, cp.checks, cp.base, deadline, prover=_prover(spec, combo, out) if prove else None)
            try:
                if all:
                    _enumerate(spec, cs, combo, obj, found, out, stats, prove)
                else:
                    r = _best_in_combo(spec, space, cs, combo, obj, obj_t, obj_expr, best_val, out, stats, prove)
                    if r is not None:
                        vals, val = r
                        if best_val is None or (val is not None and val < best_val):
                            found[:] = [(vals, combo, val)]
                            best_val = val
                        if obj is None:
                            break
            finally:
                stats["cegis_rounds"] += cs.rounds
                stats["z3_queries"] += cs.queries
                stats["instances"] += cs.instances
                stats["proofs"] += cs.proofs
                out.disagreements += [(v, combo, f) for v, f in cs.disagreements]
        stats["found"] = len(found)
        if all:
            found.sort(key=lambda f: (f[2] if f[2] is not None else 0, tuple(f[0].values()), f[1].describe()))
        if all and obj is not None and found:
            lo = min(v for _vals, _c, v in found)
            found = [f for f in found if f[2] == lo]
            best_val = lo
        for vals, combo, val in found[: spec.max_solutions]:
            if not prove:
                out.solutions.append(Solution(vals, combo, spec.complete(vals, combo), None, val))
                continue
            text, rep = _prove(spec, vals, combo, "solved: " + _fmt(vals), out.cache)
            out.solutions.append(Solution(vals, combo, text, rep, val))
        if out.solutions:
            out.status = "found"
            if obj is not None and out.optimal is None:
                out.optimal = True
        elif explain:
            _explain(spec, problems, out, deadline)
    except Timeout as e:
        out.status = "unknown" if not out.solutions else "found"
        out.complete = False
        out.detail = str(e)
        if out.solutions and obj is not None:
            out.optimal = False
    out.seconds = time.perf_counter() - t0
    return out


def _prover(spec, combo, out):
    """The CEGIS check by the ordinary prover: the failing ``(operand, property)`` pairs, or None."""
    def check(values):
        _text, rep = _prove(spec, values, combo, "solved: " + _fmt(values), out.cache)
        if rep.error is not None:
            return {(None, "error")}
        bad = {(r.operand, r.property) for r in rep.results if r.status != "proved"}
        return bad or None
    return check


def _lexmin(spec, space, cs, extra, values):
    """Smallest values of the unknowns, in declaration order, keeping ``extra``."""
    fixed = list(extra)
    for n, v in space.vars.items():
        lo, best = spec.unknowns[n].min, values[n]
        while lo < best:
            mid = (lo + best) // 2
            r = cs.find(fixed + [v <= mid])
            if r is None:
                lo = mid + 1
            else:
                values, best = r, r[n]
        fixed.append(v == best)
    return values


def _best_in_combo(spec, space, cs, combo, obj, obj_t, obj_expr, bound, out, stats, prove):
    """The (optimal) lexicographically smallest solution of one combination, better than ``bound``."""

    def eval_obj(vals):
        return obj_expr.evaluate(vals) if obj_expr is not None else None

    extra = [obj < bound] if (obj is not None and bound is not None) else []
    vals = cs.find(extra)
    if vals is None:
        return None
    if obj is None:
        return _lexmin(spec, space, cs, extra, vals), None
    best = eval_obj(vals)
    lo = obj_t.lo                                   # the objective's interval over the ranges
    while lo < best:
        mid = (lo + best) // 2
        r = cs.find(extra + [obj <= mid])
        if r is None:
            lo = mid + 1
        else:
            vals, best = r, eval_obj(r)
    return _lexmin(spec, space, cs, extra + [obj == best], vals), best


def _enumerate(spec, cs, combo, obj, found, out, stats, prove):
    """Every solution of one combination (blocking each), until ``max_solutions`` in all."""
    e = parse_objective(out.objective, spec.unknowns) if obj is not None else None
    while True:
        if len(found) >= spec.max_solutions:
            if cs.find() is not None:
                out.complete = False
            return
        vals = cs.find()
        if vals is None:
            return
        cs.block(vals)
        found.append((vals, combo, e.evaluate(vals) if e is not None else None))


# ---------------------------------------------------------------- no solution: why


def _explain(spec, problems, out, deadline):
    """Why no combination has a solution: static failures, and per property whether
    any value satisfies it alone; then prove one representative candidate."""
    rep_combo, rep_values = None, None
    for cp in problems[:8]:
        if not cp.feasible:
            for f in cp.static_failures:
                where = f"[{f.operand}]" if f.operand else ""
                out.reasons.append((cp.combo, f"{f.property}{where} fails for every value of the unknowns: {f.message}"))
            if rep_combo is None:
                rep_combo = cp.combo
            continue
        space = cp.space
        alone_unsat = []
        for c in cp.checks:
            if CegisSearch(space, [c], cp.base, deadline).find() is None:
                alone_unsat.append(c)
                out.reasons.append((cp.combo, f"no value of the unknowns satisfies {c.property}[{c.operand}] "
                                              f"(z3: unsat over every entry and rest tile)"))
        # greedily keep the properties that can hold together: the representative satisfies those
        kept, cs_kept, vals = [], CegisSearch(space, [], cp.base, deadline), None
        vals = cs_kept.find()
        for c in cp.checks:
            if c in alone_unsat:
                continue
            cs = CegisSearch(space, kept + [c], cp.base, deadline)
            v = cs.find()
            if v is None:
                names = ", ".join(f"{k.property}[{k.operand}]" for k in kept)
                out.reasons.append((cp.combo, f"{c.property}[{c.operand}] can hold alone, but not together with "
                                              f"{names} (z3: unsat)"))
            else:
                kept, cs_kept, vals = kept + [c], cs, v
        if not alone_unsat and len(kept) == len(cp.checks):
            out.reasons.append((cp.combo, "every address property can hold, but not together with the others "
                                          "(z3: unsat)"))
        if rep_values is None and vals is not None:
            rep_combo, rep_values = cp.combo, _lexmin(spec, space, cs_kept, [], vals)
    if rep_combo is not None:
        if rep_values is None:
            rep_values = {n: u.values()[0] for n, u in spec.unknowns.items()}
        try:
            text, rep = _prove(spec, rep_values, rep_combo, "representative candidate: " + _fmt(rep_values))
            out.representative = Solution(rep_values, rep_combo, text, rep)
        except SymlayoutError as e:
            out.representative = Solution(rep_values, rep_combo, spec.complete(rep_values, rep_combo), None)
            out.reasons.append((rep_combo, f"the representative candidate cannot be built: {e}"))


# ---------------------------------------------------------------- the baseline: enumeration


def candidates(spec: SolveSpec):
    """Every candidate of the declared space, ``(values, combo)``, in lexicographic order
    (swizzles with ``|S| >= B``; ``B = 0`` once).  The baseline the symbolic search is
    measured and cross-checked against -- :func:`solve` never enumerates.

    >>> from symlayout.solve.spec import loads_spec
    >>> spec = loads_spec('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\n'
    ...                   'type = "half_t"\\nsmem = "Sw<?,3,3> o (32,16):(16,1)"\\n')
    >>> [v for v, _c in candidates(spec)]
    [{'B': 0}, {'B': 1}, {'B': 2}, {'B': 3}]
    """
    import itertools
    names = list(spec.unknowns)
    sws = [c.smem.swizzle for c in spec.copies.values() if c.smem.swizzle is not None]
    for combo in spec.combos():
        for vals in itertools.product(*[spec.unknowns[n].values() for n in names]):
            values = dict(zip(names, vals))
            ok = True
            for sw in sws:
                b, _m, s_ = sw.concrete(values)
                if abs(s_) < b or (b == 0 and isinstance(sw.b, str) and any(
                        isinstance(x, str) and values[x] != spec.unknowns[x].min for x in (sw.m, sw.s))):
                    ok = False
            if ok:
                yield values, combo


def brute_force(spec: SolveSpec, minimize: str | None = None, first_only: bool = False, timeout_s: float = 600.0):
    """Enumerate the space through the ordinary prover (the baseline of ``bench/solve.py``).

    Candidates are proved one by one (``prove_config`` on the completed
    configuration); with ``minimize`` they are visited in objective order (then
    lexicographic), so ``first_only`` stops at the optimum.  Returns
    ``(solutions, checked, seconds, complete)``; ``solutions`` is a list of ``(values, combo)``.

    >>> from symlayout.solve.spec import loads_spec
    >>> spec = loads_spec('[unknowns]\\npad = { max = 16, multiple_of = 8 }\\n[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n'
    ...                   'layout = "(2,2,1)"\\n[copy.A]\\natom = "SM75_U32x4_LDSM_N"\\ntype = "half_t"\\n'
    ...                   'smem = "(32,64):(64+?pad,1)"\\n')
    >>> sols, checked, _s, complete = brute_force(spec)
    >>> [v for v, _c in sols], checked, complete
    ([{'pad': 8}], 3, True)
    """
    t0 = time.perf_counter()
    cands = list(candidates(spec))
    if minimize:
        e = parse_objective(minimize, spec.unknowns)
        cands.sort(key=lambda vc: (e.evaluate(vc[0]), tuple(vc[0].values())))
    sols, checked = [], 0
    for values, combo in cands:
        if time.perf_counter() - t0 > timeout_s:
            return sols, checked, time.perf_counter() - t0, False
        checked += 1
        try:
            cfg = loads_config(spec.complete(values, combo), f"{spec.path} (candidate)")
            rep = prove_config(cfg, properties=list(spec.properties))
        except SymlayoutError:
            continue
        if rep.error is None and all(r.status == "proved" for r in rep.results):
            sols.append((values, combo))
            if first_only:
                break
    return sols, checked, time.perf_counter() - t0, True
