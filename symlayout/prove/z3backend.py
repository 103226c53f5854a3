"""Z3 decision of the copy obligations, for parametric and concrete configurations.

The route of one copy tile (who reads/writes which tile element, which slot,
which instruction phase) is finite and concrete: it comes from the same
CuTe-exact :class:`~symlayout.prove.model.OperandModel`, built on one tile of
the operand.  What may be symbolic is *where* each element lives: the smem
layout ``S`` (``[params]`` in shapes or strides) and which rest tile
``u = (u_0, u_1, ...)`` the copy is working on.  Each obligation becomes one
Z3 query "exists an entry of the route table, a rest tile and parameter
values violating it" over 64-bit bit-vectors (swizzles are XORs of bit
fields); ``unsat`` proves it for every parameter value and every rest tile,
``sat`` is decoded into a counterexample that is re-validated by concrete
evaluation, a timeout is UNKNOWN.

Rest tiles are disjoint translates of the first one, and ``copy()`` runs the
same atom-call plan on each (``make_tiled_copy_A/B/C`` tile by the TiledMMA's
tile), so the fragment-side facts (``exactly_once`` of loads, packed register
bindings) are decided on one tile by exhaustive evaluation.
"""
from __future__ import annotations

import time
from functools import reduce

import sympy

from .. import int_tuple as it
from ..errors import SymlayoutError
from ..layout import Layout
from .result import PROVED, REFUTED, UNKNOWN, Counterexample, Result

W = 64


def _z3():
    import z3
    return z3


# ---------------------------------------------------------------- terms


def _env_width(env):
    for v in env.values():
        if hasattr(v, "size"):
            return v.size()
    return W


def sym_to_bv(e, env, w=None):
    """Translate an integer sympy expression to a Z3 bit-vector term (as wide as
    ``env``'s variables, or ``w``, default 64 bits).

    >>> import z3, sympy
    >>> m = sympy.Symbol('m', positive=True, integer=True)
    >>> t = sym_to_bv(32*m + 1, {'m': z3.BitVec('m', 64)}); z3.simplify(z3.substitute(t, (z3.BitVec('m', 64), z3.BitVecVal(2, 64))))
    65
    """
    z3 = _z3()
    w = w or _env_width(env)
    if isinstance(e, int):
        return z3.BitVecVal(int(e), w)
    e = sympy.sympify(e)
    if e.is_Integer:
        return z3.BitVecVal(int(e), w)
    if e.is_Symbol:
        return env[e.name]
    if e.is_Add:
        return reduce(lambda a, b: a + b, [sym_to_bv(a, env, w) for a in e.args])
    if e.is_Mul:
        num, den = e.as_numer_denom()
        if den != 1:
            return z3.UDiv(sym_to_bv(num, env, w), sym_to_bv(den, env, w))
        return reduce(lambda a, b: a * b, [sym_to_bv(a, env, w) for a in e.args])
    if isinstance(e, sympy.Mod):
        return z3.URem(sym_to_bv(e.args[0], env, w), sym_to_bv(e.args[1], env, w))
    if isinstance(e, sympy.floor):
        num, den = e.args[0].as_numer_denom()
        return z3.UDiv(sym_to_bv(num, env, w), sym_to_bv(den, env, w))
    if isinstance(e, sympy.ceiling):
        num, den = e.args[0].as_numer_denom()
        n, d = sym_to_bv(num, env, w), sym_to_bv(den, env, w)
        return z3.UDiv(n + d - 1, d)
    if e.is_Pow and e.exp.is_Integer and e.exp > 0:
        b = sym_to_bv(e.base, env, w)
        return reduce(lambda a, _b: a * b, range(int(e.exp) - 1), b)
    if isinstance(e, (sympy.Max, sympy.Min)):
        args = [sym_to_bv(a, env, w) for a in e.args]
        f = (lambda a, b: z3.If(a >= b, a, b)) if isinstance(e, sympy.Max) else (lambda a, b: z3.If(a <= b, a, b))
        return reduce(f, args)
    raise SymlayoutError(f"cannot translate {e} to Z3")


def _leaf(x, env, w=None):
    return sym_to_bv(x, env, w)


def _crd_width(c, env):
    if isinstance(c, tuple):
        for x in c:
            r = _crd_width(x, None)
            if r:
                return r
        return _env_width(env) if env is not None else None
    if hasattr(c, "size"):
        return c.size()
    return _env_width(env) if env is not None else None


def crd2idx_bv(c, shape, stride, env, w=None):
    """``crd2idx`` with Z3 coordinate terms and (possibly symbolic) shape/stride."""
    z3 = _z3()
    w = w or _crd_width(c, env)
    if isinstance(c, tuple):
        return reduce(lambda a, b: a + b, [crd2idx_bv(ci, s, d, env, w) for ci, s, d in zip(c, shape, stride)])
    if it.is_tuple(shape):
        r = z3.BitVecVal(0, w)
        for s, d in zip(shape[:-1], stride[:-1]):
            sz = _leaf(it.product(s), env, w)
            r = r + crd2idx_bv(z3.URem(c, sz), s, d, env, w)
            c = z3.UDiv(c, sz)
        return r + crd2idx_bv(c, shape[-1], stride[-1], env, w)
    return c * _leaf(stride, env, w)


def layout_bv(S, crd, env):
    """``S(crd)`` as a Z3 term (Layout or swizzled ComposedLayout)."""
    z3 = _z3()
    w = _crd_width(crd, env)
    if getattr(S, "is_composed", False):
        x = _leaf(S.offset, env, w) + crd2idx_bv(crd, S.inner.shape, S.inner.stride, env, w)
        sw = S.swizzle
        y = x & z3.BitVecVal(sw.yyy_msk, w)
        sh = z3.LShR(y, sw.s) if sw.s >= 0 else y << (-sw.s)
        return x ^ sh
    return crd2idx_bv(crd, S.shape, S.stride, env, w)


class Problem:
    """A tile-level route model plus the (symbolic) smem layout and parameters.

    Bit-vectors are as wide as the largest address needs (plus margin), and
    every product that could wrap is constrained not to.
    """

    def __init__(self, tile_model, S, params: dict, value_bits: int, align: int):
        z3 = _z3()
        self.tm = tile_model
        self.S = S
        self.params = params
        self.width = W = _width(S, params, value_bits)
        self.env = {n: z3.BitVec(n, W) for n in params}
        self.value_bits = value_bits
        self.eb = value_bits // 8
        self.align = align
        shp = it.product_each(S.shape)
        self.extents = shp
        tiler = list(tile_model.shape2)
        self.tile = tiler + [1] * (len(shp) - len(tiler))
        self.u = [z3.BitVec(f"u{k}", W) for k in range(len(shp))]
        self._memo = {}
        cons = []
        for n, p in params.items():
            v = self.env[n]
            cons += [z3.UGE(v, p.min), z3.ULE(v, p.max)]
            if p.multiple_of > 1:
                cons.append(z3.URem(v, p.multiple_of) == 0)
        for k, uk in enumerate(self.u):
            cons += self.rest_bounds(uk, k)
        self.constraints = cons
        self.ground = not params and all(isinstance(e, int) and e == t for e, t in zip(shp, self.tile))
        if self.ground:
            self.constraints += [uk == 0 for uk in self.u]

    def rest_bounds(self, uk, k):
        z3 = _z3()
        ext = _leaf(self.extents[k], self.env, self.width)
        t = z3.BitVecVal(self.tile[k], self.width)
        return [z3.ULT(uk, ext), z3.BVMulNoOverflow(uk, t, False), z3.ULT(uk * t, ext)]

    def addr(self, idx: int, u=None):
        """Element offset of tile-local index ``idx`` (an int) in rest tile ``u``."""
        z3 = _z3()
        key = (idx, None if u is None else tuple(map(str, u)))
        if key in self._memo:
            return self._memo[key]
        u = u or self.u
        local = self.tm.coord(idx)
        if self.ground and u is self.u:
            # every rest index is 0 (one tile per mode) and S is concrete: fold to a constant
            crd = tuple(local[k] if k < len(local) else 0 for k in range(len(self.extents)))
            r = z3.BitVecVal(int(self.S(crd)), self.width)
            self._memo[key] = r
            return r
        crd = []
        for k in range(len(self.extents)):
            lk = local[k] if k < len(local) else 0
            crd.append(z3.BitVecVal(lk, self.width) + u[k] * self.tile[k])
        r = layout_bv(self.S, tuple(crd), self.env)
        self._memo[key] = r
        return r

    def solve(self, formula, timeout_s):
        z3 = _z3()
        s = z3.SolverFor("QF_BV")
        if timeout_s is not None:
            s.set("timeout", max(1, int(timeout_s * 1000)))
        s.add(*self.constraints)
        s.add(formula)
        r = s.check()
        if r == z3.unsat:
            return "unsat", None
        if r == z3.sat:
            return "sat", s.model()
        return "unknown", s.reason_unknown()

    def minimize(self, formula, model, timeout_s):
        """Shrink the witness's parameters (then rest tiles) to their smallest values, one by one."""
        z3 = _z3()
        fixed = []
        for var in list(self.env.values()) + list(self.u):
            best = model.eval(var, model_completion=True).as_long()
            lo = 0
            while lo < best:
                mid = (lo + best) // 2
                st, m2 = self.solve(z3.And(formula, *fixed, z3.ULE(var, mid)), timeout_s)
                if st == "sat":
                    model, best = m2, m2.eval(var, model_completion=True).as_long()
                elif st == "unsat":
                    lo = mid + 1
                else:
                    break
            fixed.append(var == best)
        return model

    def values(self, model):
        """Parameter and rest-tile values of a Z3 model."""
        ps = {n: model.eval(v, model_completion=True).as_long() for n, v in self.env.items()}
        us = [model.eval(u, model_completion=True).as_long() for u in self.u]
        return ps, us


def _width(S, params, value_bits):
    """Bits enough for every address (cosize at the parameter extremes) with margin."""
    vals = []
    for pick in ("min", "max"):
        try:
            Sc = substitute(S, {n: getattr(p, pick) for n, p in params.items()})
            c = Sc.cosize()
            off = abs(int(getattr(Sc, "offset", 0) or 0))
            if isinstance(c, int):
                vals.append((c + off + 1) * max(1, value_bits // 8))
        except Exception:
            pass
    bound = max(vals) if vals else 1 << 40
    for p in params.values():
        bound = max(bound, p.max)
    return min(64, max(16, bound.bit_length() + 8))


_TILE_CACHE: dict = {}


def tile_model_for(mma, operand, atom, value_type, align):
    """The OperandModel of one copy tile (a compact stand-in smem of the tile's shape), cached."""
    key = (id(mma), operand, atom, value_type, align)
    hit = _TILE_CACHE.get(key)
    if hit is not None and hit[0] is mma:
        return hit[1]
    tm = _tile_model(mma, operand, atom, value_type, align)
    if len(_TILE_CACHE) > 256:
        _TILE_CACHE.clear()
    _TILE_CACHE[key] = (mma, tm)
    return tm


def _tile_model(mma, operand, atom, value_type, align):
    from .model import build_operand_model
    from ..tiled.copy import make_tiled_copy_X
    from ..atoms.copy import make_copy_atom
    tc = make_tiled_copy_X(make_copy_atom(atom, value_type), mma, operand)
    tm = build_operand_model(mma, None, None, operand, atom, value_type, Layout(tuple(tc.tiler_mn)), align)
    tm.stand_in = True          # its indices are right, its addresses are not (see prove/contiguity.py)
    return tm


# ---------------------------------------------------------------- obligations


def _vectors(tm):
    from .properties import _vectors as v
    return list(v(tm))


def _low_bits_nonzero(x, n):
    """``x % n != 0`` for a power of two ``n`` (mask), else URem."""
    z3 = _z3()
    if n & (n - 1) == 0:
        return (x & (n - 1)) != 0
    return z3.URem(x, n) != 0


def q_alignment(P: Problem):
    z3 = _z3()
    tm = P.tm
    vb = max(tm.reg_bits_smem, tm.value_bits) // 8
    if P.align % vb and vb > 1:
        return None, f"smem base alignment {P.align} B is less than the {vb}-byte vector width"
    ents = {tuple(tm.calls[t][c].smem[i] for i in idx) for (w, c, l, t, r, idx) in _vectors(tm)}
    bad = []
    for ent in sorted(ents):
        a0 = P.addr(ent[0])
        terms = [_low_bits_nonzero(a0 * P.eb, vb)] if vb > 1 else []
        terms += [P.addr(i) != a0 + e for e, i in enumerate(ent) if e]
        if terms:
            bad.append(z3.Or(*terms))
    return (z3.Or(*bad) if bad else z3.BoolVal(False)), None


def q_in_bounds(P: Problem):
    z3 = _z3()
    tm = P.tm
    vb = max(tm.reg_bits_smem, tm.value_bits) // 8
    ents = {tm.calls[t][c].smem[idx[0]] for (w, c, l, t, r, idx) in _vectors(tm)}
    limit = _leaf(P.S.cosize(), P.env, P.width) * P.eb
    bad = []
    for i in sorted(ents):
        a0 = P.addr(i) * P.eb
        bad.append(z3.Or(a0 < 0, a0 + vb > limit))
    return (z3.Or(*bad) if bad else z3.BoolVal(False)), None


def q_slot_agreement(P: Problem):
    z3 = _z3()
    tm = P.tm
    k = max(1, tm.reg_bits_smem // tm.value_bits)
    ents = set()
    for w, c in tm.instructions():
        for l in range(32):
            t = 32 * w + l
            if t >= tm.threads:
                continue
            for a, s in enumerate(tm.calls[t][c].reg):
                p, e = tm.hw.provider(l, a, tm.value_bits, tm.reg_bits_frag)
                sm = tm.calls[32 * w + p][c].smem
                ents.add((sm[e - e % k], e % k, tm.expected[t][s]))
    bad = [P.addr(r) + o != P.addr(x) for r, o, x in sorted(ents) if not (o == 0 and r == x)]
    return (z3.Or(*bad) if bad else z3.BoolVal(False)), None


def q_bank_conflicts(P: Problem):
    """Two vectors of one phase touch different 4-byte words in the same bank.

    Vector ``a`` covers words ``F_a .. F_a + n_a - 1`` (``F = byte >> 2``).  With
    ``d = F_a - F_b`` and ``r = d mod 32``, some word pair shares a bank iff a
    difference ``delta = q_b - q_a`` in ``(-n_a, n_b)`` has ``delta == d (mod 32)``,
    i.e. ``delta = r`` (``r < n_b``) or ``delta = r - 32`` (``r > 32 - n_a``);
    the words differ iff ``delta != d``.
    """
    z3 = _z3()
    tm = P.tm
    from .properties import _phases
    vb, groups = _phases(tm)
    phases = {tuple(sorted({tm.calls[t][key[1]].smem[idx[0]] for l, t, idx in items})) for key, items in groups.items()}
    # selector encoding: two row indices s1 != s2 of the same phase (O(rows) terms)
    flat = []                       # (phase id, smem index)
    for pid, ph in enumerate(sorted(phases)):
        if len(ph) > 1:
            flat.extend((pid, i) for i in ph)
    if not flat:
        return z3.BoolVal(False), None
    rows = {}
    for _pid, i in flat:
        if i not in rows:
            byte = P.addr(i) * P.eb
            F = z3.LShR(byte, 2)
            rows[i] = (F, z3.LShR(byte + (vb - 1), 2) - F + 1)
    sw = len(flat).bit_length() + 1
    s1, s2 = z3.BitVec("s1", sw), z3.BitVec("s2", sw)

    def pick(sel, f):
        acc = f(flat[-1])
        for k in range(len(flat) - 2, -1, -1):
            acc = z3.If(sel == k, f(flat[k]), acc)
        return acc
    ph1 = pick(s1, lambda e: z3.BitVecVal(e[0], 32))
    ph2 = pick(s2, lambda e: z3.BitVecVal(e[0], 32))
    Fa, na = pick(s1, lambda e: rows[e[1]][0]), pick(s1, lambda e: rows[e[1]][1])
    Fb, nb = pick(s2, lambda e: rows[e[1]][0]), pick(s2, lambda e: rows[e[1]][1])
    d = Fa - Fb
    r = d & 31
    c32 = z3.BitVecVal(32, P.width)
    n = len(flat)
    f = z3.And(z3.ULT(s1, n), z3.ULT(s2, n), z3.ULT(s1, s2), ph1 == ph2,
               z3.Or(z3.And(z3.ULT(r, nb), d != r), z3.And(z3.UGT(r + na, c32), d != r - c32)))
    return f, None


def q_exactly_once_store(P: Problem):
    """Stores write every tile element once (checked on the tile); across the
    whole smem tile they are disjoint iff S is injective on its domain."""
    z3 = _z3()
    n = len(P.extents)
    c1 = [z3.BitVec(f"x{k}", P.width) for k in range(n)]
    c2 = [z3.BitVec(f"y{k}", P.width) for k in range(n)]
    cons = []
    for k in range(n):
        ext = _leaf(P.extents[k], P.env, P.width)
        cons += [z3.ULT(c1[k], ext), z3.ULT(c2[k], ext)]
    f = z3.And(*cons, z3.Or(*[a != b for a, b in zip(c1, c2)]),
               layout_bv(P.S, tuple(c1), P.env) == layout_bv(P.S, tuple(c2), P.env))
    return f, None


def q_divisibility(P: Problem):
    z3 = _z3()
    bad = [z3.URem(_leaf(ext, P.env, P.width), t) != 0 for ext, t in zip(P.extents, P.tile) if t > 1]
    return z3.Or(*bad) if bad else z3.BoolVal(False)


QUERIES = {"alignment": q_alignment, "in_bounds": q_in_bounds, "slot_agreement": q_slot_agreement,
           "bank_conflicts": q_bank_conflicts}


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
        from ..swizzle import ComposedLayout
        return ComposedLayout(L.swizzle, go(L.offset), Layout(go(L.inner.shape), go(L.inner.stride)))
    return Layout(go(L.shape), go(L.stride))


def decide(prop: str, mma, operand, atom, value_type, S, params: dict, align: int, timeout_s=None,
           tile_model=None) -> Result:
    """Decide one obligation with Z3 for every parameter value and rest tile."""
    from . import properties as props
    t0 = time.perf_counter()
    tm = tile_model or tile_model_for(mma, operand, atom, value_type, align)
    P = Problem(tm, S, params, tm.value_bits, align)

    def done(status, cex=None, checked=None, detail="", method="z3"):
        return Result(prop, status, operand=operand, seconds=time.perf_counter() - t0, checked=checked,
                      method=method, counterexample=cex, detail=detail)

    if tm.value_bits % 8:
        return done(UNKNOWN, detail="sub-byte value types are not encoded for Z3")
    # the smem extents must be whole tiles for every parameter value
    st, mdl = P.solve(q_divisibility(P), timeout_s)
    if st == "sat":
        ps, _u = P.values(mdl)
        return done(REFUTED, Counterexample(
            f"smem {S}: an extent is not a multiple of the tile {tuple(P.tile)} for "
            + ", ".join(f"{k} = {v}" for k, v in ps.items()), params=ps))
    if st == "unknown":
        return done(UNKNOWN, detail=f"solver: {mdl}")
    if prop == "type_agreement" or prop in ("coverage",) or (prop == "exactly_once" and tm.direction == "load"):
        r = props.CHECKS[prop](tm)     # parameter-independent: decided on the tile
        r.seconds = time.perf_counter() - t0
        r.method = "exhaustive (tile) + z3 (tiling)"
        r.operand = operand
        if prop == "coverage" and r.status == PROVED:     # CuTe's indices are the hardware's bytes?
            from .contiguity import hardware_link
            r = hardware_link(r, tm, mma, operand, atom, value_type, S, params, align, timeout_s)
        return r
    if prop == "exactly_once":
        r = props.exactly_once(tm)            # each tile element written once, on the tile
        if r.status == REFUTED:
            r.operand, r.method = operand, "exhaustive (tile)"
            return r
        from .contiguity import hardware_link
        r = hardware_link(r, tm, mma, operand, atom, value_type, S, params, align, timeout_s)
        if r.status != PROVED:
            return r
        f, info = q_exactly_once_store(P)
    elif prop in QUERIES:
        if prop == "slot_agreement":
            _n, pk = props.packed_bindings(tm)     # packed bindings: parameter-independent
            if pk is None:
                _n, pk = props.mma_route(mma.atom, operand)
            if pk is not None:
                return done(REFUTED, pk, method="exhaustive (tile)")
        f, info = QUERIES[prop](P)
        if f is None:
            return done(REFUTED, Counterexample(info))
    else:
        return done(UNKNOWN, detail=f"{prop} has no Z3 encoding")
    st, mdl = P.solve(f, timeout_s)
    if st == "unsat":
        return done(PROVED, checked=None)
    if st == "unknown":
        return done(UNKNOWN, detail=f"solver gave up: {mdl}")
    if params:
        mdl = P.minimize(f, mdl, min(2.0, timeout_s or 2.0))
    ps, us = P.values(mdl)
    cex = _revalidate(prop, mma, operand, atom, value_type, S, ps, align, us)
    return done(REFUTED, cex)


def _revalidate(prop, mma, operand, atom, value_type, S, ps, align, us):
    """Instantiate the witness's parameters, re-check concretely, return its counterexample."""
    from .model import build_operand_model
    from .properties import CHECKS
    Sc = substitute(S, ps)
    size = Sc.size()
    where = f" (rest tile {tuple(us)})" if any(us) else ""
    if isinstance(size, int) and size <= 1 << 20:
        m = build_operand_model(mma, None, None, operand, atom, value_type, Sc, align)
        r = CHECKS[prop](m)
        if r.status != REFUTED:
            raise SymlayoutError(f"internal error: Z3 counterexample for {prop} with {ps} does not reproduce")
        cex = r.counterexample
        cex.params = ps or None
        return cex
    return Counterexample(f"{prop} fails for " + ", ".join(f"{k} = {v}" for k, v in ps.items()) + where,
                          params=ps)


def check_z3(prop, model, timeout_s=None) -> Result:
    """Decide ``prop`` of a concrete model with Z3 (the cross-check of the exhaustive method)."""
    from .model import stand_in_tile
    return decide(prop, model.mma, model.operand, model.atom.op.name, model.value_type, model.smem, {},
                  model.align, timeout_s, tile_model=stand_in_tile(model))
