"""The symbolic search behind ``symlayout solve``.

For one choice of the listed alternatives (a :class:`~symlayout.solve.spec.Combo`:
permutation modes and copy atoms) the route of one copy tile is concrete: it is
the prover's tile model (:func:`symlayout.prove.copy.z3backend.tile_model_for`).  What
is unknown is *where* each tile element lives: the smem layout, whose swizzle
parameters ``B, M, S`` and ``?name`` entries are variables.  A
symbolic swizzle is ``x ^ ((x & (((1 << B) - 1) << (M + S))) >> S)`` with
variable shifts.  Terms carry intervals over the unknowns' ranges
(:mod:`symlayout.prove.decide.bvterms`); each combination is lowered to bit-vectors one
bit wider than its widest term, so nothing wraps and ``//``/``%`` are floor
division and Python's modulo.  Each property's violation is the prover's Z3 encoding
(:func:`~symlayout.prove.copy.z3backend.q_alignment`, ``q_in_bounds``,
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

from ..algebra.z3lock import serialized
from ..config import loads_config
from ..errors import SymlayoutError
from ..prove.engine import prove_config
from .cegis import CegisSearch, Space, Timeout, objective_term
from .queries import ComboProblem, unknown_terms
from .spec import Combo, SolveSpec, parse_objective

__all__ = ["solve", "Solution", "SolveOutcome"]

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


@serialized
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
        values, best = _bisect(cs, fixed, v, spec.unknowns[n].min, values, lambda r, n=n: r[n])
        fixed.append(v == best)
    return values


def _bisect(cs, fixed, term, lo, vals, value_of):
    """The least value of ``term`` (at least ``lo``) in a solution keeping ``fixed``, by bisection from the
    solution ``vals``: that value's solution and the value (``value_of`` a solution)."""
    best = value_of(vals)
    while lo < best:
        mid = (lo + best) // 2
        r = cs.find(fixed + [term <= mid])
        if r is None:
            lo = mid + 1
        else:
            vals, best = r, value_of(r)
    return vals, best


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
    vals, best = _bisect(cs, extra, obj, obj_t.lo, vals, eval_obj)    # obj_t: its interval over the ranges
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


