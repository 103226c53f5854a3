"""CEGIS over the rest tiles: Z3 guesses unknown values that violate no property on a finite set of
rest-tile instances, the guess is checked with ``u`` free (a complete proof over every rest tile), and a
violating ``u`` becomes a new instance; an ``unsat`` guess proves no value in the ranges works.
:class:`Space` holds the unknowns' domain, :func:`objective_term` the ``--minimize`` objective.
"""
from __future__ import annotations

import time

from ..prove.decide import bvterms as bt
from ..prove.decide.z3problem import z3_module
from ..threadmap.formula import Const
from .queries import EXAMPLE_PAD, ComboProblem, unknown_terms
from .spec import SolveSpec, loads_spec, parse_objective

_EXAMPLE_CACHE = []


def example_problem():
    """``(spec, space, combo problem)`` of :data:`EXAMPLE_PAD` (built once; searches never modify it)."""
    if _EXAMPLE_CACHE:
        return _EXAMPLE_CACHE[0]
    spec = loads_spec(EXAMPLE_PAD, "pad.toml")
    terms = unknown_terms(spec)
    cp = ComboProblem(spec, spec.combos()[0], terms, spec.properties)
    space = Space(spec, cp.width(Space.constraint_terms_of(spec, terms)), terms)
    _EXAMPLE_CACHE.append((spec, space, cp.lower(space)))
    return _EXAMPLE_CACHE[0]


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
    >>> spec, space, cp = example_problem()
    >>> cs = CegisSearch(space, cp.checks, cp.base, time.perf_counter() + 60)
    >>> cs.find([space.vars["pad"] <= 8]), cs.find([space.vars["pad"] <= 7])
    ({'pad': 8}, None)
    """

    def __init__(self, space, checks, base, deadline: float, prover=None):
        z3 = z3_module()
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
        >>> spec, space, cp = example_problem(); cs = CegisSearch(space, cp.checks, cp.base, time.perf_counter() + 60)
        >>> n = cs.instances; cs.add_instance({"A_u1": 1}); cs.instances - n
        2
        """
        z3 = z3_module()
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
        z3 = z3_module()
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
        >>> spec, space, cp = example_problem(); CegisSearch(space, cp.checks, cp.base, time.perf_counter() + 60).find()["pad"] % 8
        0
        """
        z3 = z3_module()
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
        >>> spec, space, cp = example_problem(); cs = CegisSearch(space, cp.checks, cp.base, time.perf_counter() + 60)
        >>> cs.check_candidate({"pad": 8}), cs.check_candidate({"pad": 16})
        (True, False)
        """
        z3 = z3_module()
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
        >>> spec, space, cp = example_problem(); cs = CegisSearch(space, cp.checks, cp.base, time.perf_counter() + 60)
        >>> cs.block({"pad": 8}); cs.find() is None      # pad = 8 was the only solution in 0..16
        True
        """
        z3 = z3_module()
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

    >>> spec, space, cp = example_problem(); list(space.vars), len(space.constraints), space.width
    (['pad'], 1, 15)
    """

    def __init__(self, spec: SolveSpec, width: int, terms: dict | None = None):
        z3 = z3_module()
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

        >>> spec, space, cp = example_problem(); space.constraint_terms()
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
