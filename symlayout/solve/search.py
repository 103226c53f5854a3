"""The symbolic search behind ``symlayout solve``.

For one choice of the listed alternatives (a :class:`~symlayout.solve.spec.Combo`:
permutation modes and copy atoms) the route of one copy tile is concrete: it is
the prover's tile model (:func:`symlayout.prove.z3backend.tile_model_for`).  What
is unknown is *where* each tile element lives: the smem layout, whose swizzle
parameters ``B, M, S`` and ``?name`` entries are Z3 bit-vector variables.  A
symbolic swizzle is ``x ^ ((x & (((1 << B) - 1) << (M + S))) >> S)`` with
variable shifts.  Each property's violation is the prover's Z3 encoding
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

from .. import int_tuple as it
from ..errors import SymlayoutError
from ..prove import z3backend as zb
from .spec import Combo, SolveSpec, parse_objective

__all__ = ["solve", "Solution", "SolveOutcome", "ComboProblem", "CegisSearch", "swizzle_bv", "width_for"]

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
    from .spec import loads_spec
    spec = loads_spec(EXAMPLE_PAD, "pad.toml")
    space = Space(spec, width_for(spec))
    _EXAMPLE.append((spec, space, ComboProblem(spec, spec.combos()[0], space.vars, space.width, spec.properties)))
    return _EXAMPLE[0]


def _z3():
    import z3
    return z3


# ---------------------------------------------------------------- terms


def swizzle_bv(x, b, m, s, width):
    """``Sw<B,M,S>(x)`` with any of ``b, m, s`` a Z3 bit-vector (variable shifts).

    >>> import z3
    >>> B = z3.BitVec("B", 16)
    >>> t = swizzle_bv(z3.BitVecVal(72, 16), B, 3, 3, 16)
    >>> [z3.simplify(z3.substitute(t, (B, z3.BitVecVal(b, 16)))).as_long() for b in (0, 1, 3)]
    [72, 64, 64]
    """
    z3 = _z3()
    if all(isinstance(v, int) for v in (b, m, s)):
        from ..swizzle import Swizzle
        sw = Swizzle(b, m, s)
        y = x & z3.BitVecVal(sw.yyy_msk, width)
        return x ^ (z3.LShR(y, s) if s >= 0 else y << (-s))

    def bv(v):
        return z3.BitVecVal(v, width) if isinstance(v, int) else v
    one = z3.BitVecVal(1, width)
    B, M = bv(b), bv(m)
    if isinstance(s, int) and s < 0:
        y = x & (((one << B) - 1) << (M + (-s)))
        return x ^ (y << (-s))
    S = bv(s)
    y = x & (((one << B) - 1) << (M + S))
    return x ^ z3.LShR(y, S)


def width_for(spec: SolveSpec) -> int:
    """Bit-vector width enough for every address of every candidate (with margin).

    >>> from symlayout.solve.spec import loads_spec
    >>> width_for(loads_spec('[unknowns]\\np = { max = 64 }\\n[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n'
    ...                      '[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\ntype = "half_t"\\nsmem = "(32,16):(16+?p,1)"\\n'))
    21
    """
    import itertools
    from ..atoms import value_type_bits
    ints = [u for u in spec.unknowns.values() if u.role == "int"]
    if len(ints) <= 8:
        corners = [dict(zip([u.name for u in ints], c)) for c in itertools.product(*[(u.min, u.max) for u in ints])]
    else:
        corners = [{u.name: u.min for u in ints}, {u.name: u.max for u in ints}]
    best = max([u.max for u in spec.unknowns.values()] + [1])
    for c in spec.copies.values():
        eb = max(1, value_type_bits(c.type) // 8)
        for vals in corners:
            try:
                L = c.smem.inner_at(vals)
                best = max(best, (int(L.cosize()) + int(L.size()) + 1) * eb)
            except (SymlayoutError, TypeError, ValueError):
                best = max(best, 1 << 40)
    return min(64, max(16, best.bit_length() + 8))


class OperandQuery:
    """One copy of one combination, in the shape the prover's Z3 queries expect
    (``tm``, ``addr``, ``eb``, ``align``, ``S.cosize()``, ``env``, ``extents``, ``tile``).

    ``u`` are this operand's rest-tile variables; ``bounds`` keep them inside the
    (possibly unknown) smem extents.

    >>> spec, space, cp = _example()
    >>> P = cp.queries["A"]; P.tile, P.extents, [str(u) for u in P.u]
    ([32, 16], (32, 64), ['A_u0', 'A_u1'])
    """

    def __init__(self, tm, cs, env: dict, width: int, ranges: dict | None = None):
        z3 = _z3()
        self.tm = tm
        self.cs = cs
        self.smem = cs.smem
        self.S = cs.smem.inner                 # cosize() for q_in_bounds (a swizzle keeps the cosize)
        self.env = env
        self.width = width
        self.eb = tm.value_bits // 8
        self.align = cs.align
        self.extents = it.product_each(self.S.shape)
        tiler = list(tm.shape2)
        self.tile = tiler + [1] * (len(self.extents) - len(tiler))
        op = cs.operand
        self.u = [z3.BitVec(f"{op}_u{k}", width) for k in range(len(self.extents))]
        self.bounds = []
        for k, uk in enumerate(self.u):
            ext = sym_bv(self.extents[k], env, width)
            t = z3.BitVecVal(self.tile[k], width)
            self.bounds += [z3.ULT(uk, ext), z3.BVMulNoOverflow(uk, t, False), z3.ULT(uk * t, ext)]
        self._memo = {}
        sw = cs.smem.swizzle
        self._sw = None if sw is None else tuple(env[x] if isinstance(x, str) else x for x in (sw.b, sw.m, sw.s))


    def layout_term(self, crd):
        """``smem(crd)`` (element offset) for Z3 coordinate terms.

        >>> import z3
        >>> spec, space, cp = _example(); P = cp.queries["A"]
        >>> t = P.layout_term([z3.BitVecVal(1, P.width), z3.BitVecVal(2, P.width)])
        >>> z3.simplify(z3.substitute(t, (space.vars["pad"], z3.BitVecVal(8, P.width))))
        74
        """
        z3 = _z3()
        x = crd2idx_bv(tuple(crd), self.S.shape, self.S.stride, self.env, self.width)
        if self.smem.offset:
            x = x + z3.BitVecVal(self.smem.offset, self.width)
        if self._sw is not None:
            x = swizzle_bv(x, *self._sw, self.width)
        return x

    def addr(self, idx: int, u=None):
        """Element offset of tile-local index ``idx`` in rest tile ``u`` (default: the variables).

        >>> import z3
        >>> spec, space, cp = _example(); P = cp.queries["A"]
        >>> z3.simplify(P.addr(33, [z3.BitVecVal(0, P.width)] * 2))     # tile element (1, 1)
        65 + pad
        """
        z3 = _z3()
        key = (idx, None if u is None else tuple(map(str, u)))
        if key in self._memo:
            return self._memo[key]
        u = u or self.u
        local = self.tm.coord(idx)
        crd = [z3.BitVecVal(local[k] if k < len(local) else 0, self.width) + u[k] * self.tile[k]
               for k in range(len(self.extents))]
        r = self.layout_term(crd)
        self._memo[key] = r
        return r

    def divisibility(self):
        """Each smem extent is a positive multiple of the copy tile (no free variables).

        >>> spec, space, cp = _example(); len(cp.queries["A"].divisibility())
        4
        """
        z3 = _z3()
        out = []
        for ext, t in zip(self.extents, self.tile):
            e = sym_bv(ext, self.env, self.width)
            out += [z3.UGE(e, t)]
            if t > 1:
                out.append(z3.URem(e, t) == 0)
        return out

    def store_injective_violation(self):
        """Two distinct coordinates of the smem tile at one address (stores must write each element once);
        returns ``(formula, coordinate variables)``.

        >>> spec, space, cp = _example(); f, xs = cp.queries["A"].store_injective_violation(); [str(x) for x in xs]
        ['A_x0', 'A_x1', 'A_y0', 'A_y1']
        """
        z3 = _z3()
        n = len(self.extents)
        op = self.cs.operand
        c1 = [z3.BitVec(f"{op}_x{k}", self.width) for k in range(n)]
        c2 = [z3.BitVec(f"{op}_y{k}", self.width) for k in range(n)]
        cons = []
        for k in range(n):
            ext = sym_bv(self.extents[k], self.env, self.width)
            cons += [z3.ULT(c1[k], ext), z3.ULT(c2[k], ext)]
        f = z3.And(*cons, z3.Or(*[a != b for a, b in zip(c1, c2)]), self.layout_term(c1) == self.layout_term(c2))
        return f, c1 + c2


# The four address obligations, written for the solver: the same conditions as
# the prover's Z3 encodings (symlayout.prove.z3backend), at the solver's fixed
# width and with no selector variables, so that in CEGIS the only universally
# quantified variables are the rest-tile indices and one counterexample tile
# rules out a guess for every entry at once.


# alignment and slot agreement are the prover's queries as they are (they only need ``tm``,
# ``addr``, ``eb`` and ``align``, which OperandQuery provides); in_bounds and bank conflicts
# below differ on purpose (unsigned bounds at the solver's width; pairwise, selector-free
# bank conflicts for CEGIS).
from ..prove.z3backend import q_alignment, q_slot_agreement  # noqa: E402


def q_in_bounds(P):
    """Some dereferenced vector reaches outside ``[0, cosize(smem) * sizeof(T))``.

    >>> import z3
    >>> spec, space, cp = _example(); P = cp.queries["A"]; f, why = q_in_bounds(P)
    >>> pad = space.vars["pad"]                    # rest tiles inside the smem tile: P.bounds
    >>> z3.SolverFor("QF_BV").check(z3.substitute(z3.And(*P.bounds, f), (pad, z3.BitVecVal(16, pad.size()))))
    unsat
    """
    z3 = _z3()
    from ..prove.properties import _vectors
    tm = P.tm
    vb = max(tm.reg_bits_smem, tm.value_bits) // 8
    ents = {tm.calls[t][c].smem[idx[0]] for (w, c, l, t, r, idx) in _vectors(tm)}
    limit = sym_bv(P.S.cosize(), P.env, P.width) * P.eb
    bad = [z3.UGT(P.addr(i) * P.eb + vb, limit) for i in sorted(ents)]
    return (z3.Or(*bad) if bad else z3.BoolVal(False)), None


def q_bank_conflicts(P):
    """Two vectors of one phase touch different 4-byte words in the same bank
    (pairwise over each phase).

    Vector ``a`` covers words ``F_a .. F_a + n_a - 1`` (``F = byte >> 2``); with
    ``d = F_a - F_b`` and ``r = d mod 32`` some word pair shares a bank iff
    ``delta = r`` (``r < n_b``) or ``delta = r - 32`` (``r > 32 - n_a``) is a
    difference of word positions, and the words differ iff ``delta != d``.

    >>> import z3
    >>> spec, space, cp = _example(); P = cp.queries["A"]; f, why = q_bank_conflicts(P)
    >>> pad, g = space.vars["pad"], z3.And(*P.bounds, f)
    >>> [z3.SolverFor("QF_BV").check(z3.substitute(g, (pad, z3.BitVecVal(p, pad.size())))) for p in (0, 8)]
    [sat, unsat]
    """
    z3 = _z3()
    from ..prove.properties import _phases
    tm = P.tm
    vb, groups = _phases(tm)
    phases = {tuple(sorted({tm.calls[t][key[1]].smem[idx[0]] for l, t, idx in items})) for key, items in groups.items()}
    bad, rows = [], {}
    c32 = z3.BitVecVal(32, P.width)
    for ph in sorted(phases):
        for i in ph:
            if i not in rows:
                byte = P.addr(i) * P.eb
                F = z3.LShR(byte, 2)
                rows[i] = (F, z3.LShR(byte + (vb - 1), 2) - F + 1)
        for x in range(len(ph)):
            Fa, na = rows[ph[x]]
            for y in range(x + 1, len(ph)):
                Fb, nb = rows[ph[y]]
                d = Fa - Fb
                r = d & 31
                bad.append(z3.Or(z3.And(z3.ULT(r, nb), d != r), z3.And(z3.UGT(r + na, c32), d != r - c32)))
    return (z3.Or(*bad) if bad else z3.BoolVal(False)), None


QUERIES = {"alignment": q_alignment, "in_bounds": q_in_bounds, "slot_agreement": q_slot_agreement,
           "bank_conflicts": q_bank_conflicts}


def sym_bv(e, env: dict, width: int):
    """An integer sympy expression (``+ * // %``, symbols from ``env``) as a bit-vector term
    (the prover's translation, :func:`symlayout.prove.z3backend.sym_to_bv`).

    >>> import z3, sympy
    >>> p = sympy.Symbol("p", integer=True, nonnegative=True)
    >>> z3.simplify(z3.substitute(sym_bv(2 * p + 64, {"p": z3.BitVec("p", 16)}, 16), (z3.BitVec("p", 16), z3.BitVecVal(4, 16))))
    72
    """
    from ..prove.z3backend import sym_to_bv
    return sym_to_bv(e, env, width)


def crd2idx_bv(c, shape, stride, env, width):
    """CuTe ``crd2idx`` with Z3 coordinate terms (the prover's
    :func:`symlayout.prove.z3backend.crd2idx_bv`).

    >>> import z3
    >>> z3.simplify(crd2idx_bv((z3.BitVecVal(3, 16), z3.BitVecVal(5, 16)), (8, (2, 4)), (2, (1, 16)), {}, 16))
    39
    """
    from ..prove.z3backend import crd2idx_bv as _crd2idx_bv
    return _crd2idx_bv(c, shape, stride, env, width)


# ---------------------------------------------------------------- one combination


@dataclass
class Check:
    """One symbolic obligation: its violation formula and its universally quantified variables.

    >>> spec, space, cp = _example(); c = cp.checks[0]; c.property, [str(u) for u in c.universal]
    ('alignment', ['A_u0', 'A_u1'])
    """
    operand: str
    property: str
    violation: object
    universal: list


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
    ``base``: constraints on the unknowns alone (whole tiles).

    >>> spec, space, cp = _example()
    >>> cp.feasible, [c.property for c in cp.checks]
    (True, ['alignment', 'slot_agreement', 'bank_conflicts', 'in_bounds'])
    """

    def __init__(self, spec: SolveSpec, combo: Combo, env: dict, width: int, properties):
        from ..tiled.mma import make_tiled_mma
        from ..prove import properties as props
        z3 = _z3()
        self.spec, self.combo, self.env, self.width = spec, combo, env, width
        self.properties = tuple(properties)
        self.checks: list = []
        self.static_failures: list = []
        self.static_results: dict = {}
        self.base: list = []
        self.queries: dict = {}
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
            P = OperandQuery(tm, cs, env, width, {n: (u.min, u.max) for n, u in spec.unknowns.items()})
            self.queries[op] = P
            self.base += P.divisibility()
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
                        from ..prove.result import Result
                        static = Result(p, "refuted", operand=op, counterexample=pk, method="exhaustive (tile)")
                if static is not None:
                    self.static_results[(op, p)] = static
                    if static.status == "refuted":
                        msg = static.counterexample.message if static.counterexample else static.detail
                        self.static_failures.append(StaticFailure(op, p, msg))
                        continue
                    if not (p == "exactly_once" and tm.direction == "store"):
                        continue
                univ = list(P.u)
                if p == "exactly_once":
                    f, xs = P.store_injective_violation()
                    univ += xs
                elif p in SYMBOLIC:
                    f, info = QUERIES[p](P)
                    if f is None:
                        self.static_failures.append(StaticFailure(op, p, info))
                        continue
                else:
                    continue
                viol = z3.And(*P.bounds, f)
                extra = [v for v in _free_vars(viol, set(env)) if str(v) not in {str(u) for u in univ}]
                self.checks.append(Check(op, p, viol, univ + extra))

    @property
    def feasible(self) -> bool:
        """False when some property fails whatever the unknowns are.

        >>> _example()[2].feasible
        True
        """
        return not self.static_failures


def _parse_layout(text):
    from ..notation import parse
    return parse(text)


def _parse_perm(p):
    from ..notation import _, parse
    p = str(p).strip()
    return _ if p in ("_", "") else parse(p)


def _free_vars(f, exclude: set) -> list:
    """Uninterpreted constants of ``f`` whose names are not in ``exclude`` (walks the DAG once)."""
    z3 = _z3()
    from z3 import z3core as C
    ctx = f.ctx
    cref = ctx.ref()
    seen, out, stack = set(), {}, [f.as_ast()]
    while stack:
        a = stack.pop()
        i = C.Z3_get_ast_id(cref, a)
        if i in seen:
            continue
        seen.add(i)
        if C.Z3_get_ast_kind(cref, a) != z3.Z3_APP_AST:
            continue
        app = C.Z3_to_app(cref, a)
        n = C.Z3_get_app_num_args(cref, app)
        if n == 0:
            d = C.Z3_get_app_decl(cref, app)
            if C.Z3_get_decl_kind(cref, d) == z3.Z3_OP_UNINTERPRETED:
                e = z3.z3._to_expr_ref(a, ctx)
                if str(e) not in exclude:
                    out[str(e)] = e
        else:
            stack.extend(C.Z3_get_app_arg(cref, app, k) for k in range(n))
    return [out[k] for k in sorted(out)]


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
    >>> cs.find([z3.ULE(space.vars["pad"], 8)]), cs.find([z3.ULE(space.vars["pad"], 7)])
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
        >>> n = cs.instances; cs.add_instance({"A_u0": 0, "A_u1": 1}); cs.instances - n
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
            values = {n: m.eval(v, model_completion=True).as_long() for n, v in self.space.vars.items()}
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
                self.add_instance({str(u): m2.eval(u, model_completion=True).as_long() for u in c.universal})
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


class Space:
    """The unknowns as Z3 bit-vectors with their range constraints (and ``S >= B``).

    >>> spec, space, cp = _example(); list(space.vars), len(space.constraints)
    (['pad'], 2)
    """

    def __init__(self, spec: SolveSpec, width: int):
        z3 = _z3()
        self.spec = spec
        self.width = width
        self.vars = {n: z3.BitVec(n, width) for n in spec.unknowns}
        cons = []
        for n, u in spec.unknowns.items():
            v = self.vars[n]
            cons += [z3.UGE(v, u.min), z3.ULE(v, u.max)]
            if u.multiple_of > 1:
                cons.append(z3.URem(v, u.multiple_of) == 0)
        for c in spec.copies.values():
            sw = c.smem.swizzle
            if sw is None or not sw.unknown_names():
                continue
            b, m, s = (self.vars[x] if isinstance(x, str) else z3.BitVecVal(abs(x), width) for x in (sw.b, sw.m, sw.s))
            cons.append(z3.UGE(s, b))              # |S| >= B
            if isinstance(sw.b, str):              # Sw<0,M,S> is the identity: one candidate
                pins = [self.vars[x] == spec.unknowns[x].min for x in (sw.m, sw.s) if isinstance(x, str)]
                if pins:
                    cons.append(z3.Implies(b == 0, z3.And(*pins)))
        self.constraints = cons

    def objective(self, text: str):
        """The Z3 term of a minimize expression (signed) and the parsed expression.

        >>> import z3
        >>> spec, space, cp = _example(); t, e = space.objective("pad // 8")
        >>> z3.simplify(z3.substitute(t, (space.vars["pad"], z3.BitVecVal(16, space.width)))).as_long(), str(e)
        (2, 'pad // 8')
        """
        z3 = _z3()
        e = parse_objective(text, self.spec.unknowns)
        from ..expr import BinOp, Const, Neg, Var

        def leaf(node):
            if isinstance(node, Const):
                return z3.BitVecVal(node.value, self.width)
            return self.vars[node.name]

        def neg(_node, x):
            return -x

        def binop(node, a, b):
            if node.op == "+":
                return a + b
            if node.op == "-":
                return a - b
            if node.op == "*":
                return a * b
            q = a / b                                           # truncating; make it floor
            r = a - q * b
            fl = z3.If(z3.And(r != 0, (r < 0) != (b < 0)), q - 1, q)
            return fl if node.op == "//" else a - fl * b
        return e._fold(leaf, neg, binop), e

    def bounds(self, e) -> tuple:
        """Interval of an objective over the declared ranges (for bisection).

        >>> spec, space, cp = _example(); space.bounds(space.objective("2 * pad - 1")[1])
        (-1, 31)
        """
        from ..expr import Const

        def leaf(node):
            if isinstance(node, Const):
                return (node.value, node.value)
            u = self.spec.unknowns[node.name]
            return (u.min, u.max)

        def neg(_n, x):
            return (-x[1], -x[0])

        def binop(node, a, b):
            if node.op == "+":
                return (a[0] + b[0], a[1] + b[1])
            if node.op == "-":
                return (a[0] - b[1], a[1] - b[0])
            if node.op == "*":
                ps = [x * y for x in a for y in b]
                return (min(ps), max(ps))
            big = max(abs(a[0]), abs(a[1]), 1)
            return (-big, big)
        return e._fold(leaf, neg, binop)


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
    from ..config import loads_config
    from ..prove.engine import prove_config
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
    width = width_for(spec)
    space = Space(spec, width)
    obj = obj_expr = None
    if minimize:
        obj, obj_expr = space.objective(minimize)
    out = SolveOutcome("none", objective=minimize)
    stats = {"combos": 0, "cegis_rounds": 0, "z3_queries": 0, "instances": 0, "candidates": spec.space_size(),
             "proofs": 0, "width": width}
    out.stats = stats
    problems = []
    try:
        best_val = None
        found = []          # (values, combo, objective)
        for combo in spec.combos():
            stats["combos"] += 1
            cp = ComboProblem(spec, combo, space.vars, width, spec.properties)
            problems.append(cp)
            if not cp.feasible:
                continue
            cs = CegisSearch(space, cp.checks, cp.base, deadline, prover=_prover(spec, combo, out) if prove else None)
            try:
                if all:
                    _enumerate(spec, cs, combo, obj, found, out, stats, prove)
                else:
                    r = _best_in_combo(spec, space, cs, combo, obj, obj_expr, best_val, out, stats, prove)
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
            _explain(spec, space, problems, out, deadline)
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
    z3 = _z3()
    fixed = list(extra)
    for n, v in space.vars.items():
        lo, best = spec.unknowns[n].min, values[n]
        while lo < best:
            mid = (lo + best) // 2
            r = cs.find(fixed + [z3.ULE(v, mid)])
            if r is None:
                lo = mid + 1
            else:
                values, best = r, r[n]
        fixed.append(v == best)
    return values


def _best_in_combo(spec, space, cs, combo, obj, obj_expr, bound, out, stats, prove):
    """The (optimal) lexicographically smallest solution of one combination, better than ``bound``."""
    z3 = _z3()

    def eval_obj(vals):
        return obj_expr.evaluate(vals) if obj_expr is not None else None

    extra = [obj < bound] if (obj is not None and bound is not None) else []
    vals = cs.find(extra)
    if vals is None:
        return None
    if obj is None:
        return _lexmin(spec, space, cs, extra, vals), None
    best = eval_obj(vals)
    lo = max(space.bounds(obj_expr)[0], -(1 << (space.width - 2)))
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


def _explain(spec, space, problems, out, deadline):
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
    from ..config import loads_config
    from ..prove.engine import prove_config
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
