"""Symbolic layout algebra in Z3: integer sympy expressions, layouts (plain, swizzled, composed) as
functions of a Z3 index, and side conditions, as Z3 integer terms with Python's (CuTe's) floor ``//``
and ``%``.  ``z3`` is imported inside the functions, so the algebra imports without it.

>>> import z3, sympy
>>> m = sympy.Symbol("m", positive=True, integer=True)
>>> z3.simplify(z3.substitute(to_z3(sympy.floor(m / 3), {"m": z3.Int("m")}), (z3.Int("m"), z3.IntVal(7))))
2
"""
from __future__ import annotations

from ._lazy import sympy

from ..errors import AlgebraError, ConditionError
from .symbolic import Condition, flat_leaves, index_symbol, layout_kind, leaf_symbol


def to_z3(expr, env: dict):
    """Translate an integer sympy expression (+, *, floor, ceiling, Mod, Abs, Max/Min,
    Piecewise) to Z3 integers, with Python's (CuTe's) floor division and modulo.

    ``env`` maps symbol names to Z3 integer terms.  Z3's integer ``div``/``mod`` are
    Euclidean: they equal floor division and Python's ``%`` for a positive divisor
    only, so a divisor sympy cannot show positive gets the floor form
    ``If(d > 0, n div d, (-n) div (-d))`` (and ``n - d * floor(n/d)`` for ``Mod``).

    >>> import z3
    >>> from symlayout.algebra.symbolic import symbols
    >>> m, = symbols('m'); t = to_z3(32*m + sympy.Mod(m, 4), {'m': z3.Int('m')})
    >>> str(t)
    '32*m + m%4'
    >>> n = sympy.Symbol('n', integer=True); e = sympy.floor(7 / n) + sympy.Mod(7, n)
    >>> [z3.simplify(z3.substitute(to_z3(e, {'n': z3.Int('n')}), (z3.Int('n'), z3.IntVal(v)))).as_long() for v in (-2, 2)]
    [-5, 4]
    """
    import z3
    if isinstance(expr, int):
        return z3.IntVal(int(expr))
    e = sympy.sympify(expr)
    if e.is_Integer:
        return z3.IntVal(int(e))
    if e.is_Symbol:
        return env[e.name]
    if e.is_Add:
        args = [to_z3(a, env) for a in e.args]
        r = args[0]
        for a in args[1:]:
            r = r + a
        return r
    if e.is_Mul:
        num, den = e.as_numer_denom()
        if den != 1:
            raise ConditionError(f"non-integer expression {e}")
        args = [to_z3(a, env) for a in e.args]
        r = args[0]
        for a in args[1:]:
            r = r * a
        return r
    if isinstance(e, sympy.Mod):
        n, d = e.args
        if sympy.sympify(d).is_positive:
            return to_z3(n, env) % to_z3(d, env)
        return to_z3(n, env) - to_z3(d, env) * _z3_floordiv(n, d, env)
    if isinstance(e, sympy.floor):
        num, den = e.args[0].as_numer_denom()
        return _z3_floordiv(num, den, env)
    if isinstance(e, sympy.ceiling):
        num, den = e.args[0].as_numer_denom()
        return -_z3_floordiv(-num, den, env)
    if isinstance(e, sympy.Abs):
        a = to_z3(e.args[0], env)
        return z3.If(a < 0, -a, a)
    if isinstance(e, (sympy.Max, sympy.Min)):
        args = [to_z3(a, env) for a in e.args]
        r = args[0]
        for a in args[1:]:
            r = z3.If(r >= a, r, a) if isinstance(e, sympy.Max) else z3.If(r <= a, r, a)
        return r
    if isinstance(e, sympy.Piecewise):
        if e.args[-1][1] is not sympy.true:
            raise ConditionError(f"cannot translate {e} to Z3: no 'otherwise' piece")
        r = to_z3(e.args[-1][0], env)
        for val, cond in reversed(e.args[:-1]):
            r = z3.If(condition_z3(cond, env), to_z3(val, env), r)
        return r
    if e.is_Pow and e.exp.is_Integer and e.exp > 0:
        b = to_z3(e.base, env)
        r = b
        for _ in range(int(e.exp) - 1):
            r = r * b
        return r
    raise ConditionError(f"cannot translate {e} to Z3")


def _z3_floordiv(num, den, env):
    """``floor(num / den)`` in Z3 integers (Z3's ``div`` is Euclidean: floor only for ``den > 0``)."""
    import z3
    n, d = to_z3(num, env), to_z3(den, env)
    if sympy.sympify(den).is_positive:
        return n / d
    return z3.If(d > 0, n / d, (-n) / (-d))


def _z3_index(i, env, op):
    import z3
    if isinstance(i, bool):
        raise AlgebraError(f"{op}: the index must be an integer, got a bool")
    if isinstance(i, int):
        return z3.IntVal(int(i))
    if isinstance(i, sympy.Basic):
        return to_z3(index_symbol(i, op), env)
    if isinstance(i, z3.ArithRef) and i.is_int():
        return i
    raise AlgebraError(f"{op}: the index must be an int, a sympy expression or a Z3 Int term, got {i!r}")


def _z3_env_for(exprs, env):
    """Add ``z3.Int(name)`` to ``env`` for every free symbol of ``exprs`` it lacks."""
    import z3
    for e in exprs:
        if isinstance(e, sympy.Basic):
            for s in e.free_symbols:
                if s.name not in env:
                    env[s.name] = z3.Int(s.name)
    return env


def _z3_swizzle(sw, x):
    import z3
    ylo = sw.m + max(0, sw.s)
    zlo = sw.m - min(0, sw.s)
    r = x
    for k in range(sw.b):
        y = (x / (2 ** (ylo + k))) % 2
        z = (x / (2 ** (zlo + k))) % 2
        r = r + z3.If(y == 1, z3.If(z == 1, -(2 ** (zlo + k)), 2 ** (zlo + k)), 0)
    return r


def layout_z3(L, i, env=None):
    """``L(i)`` as a Z3 *integer* term, for a 1-D index ``i``.

    ``i`` is an int, an integer sympy expression or a Z3 ``Int`` term.
    ``env`` maps symbol names to Z3 ``Int`` terms (see :func:`to_z3`); a
    symbol of ``L`` (or of ``i``) missing from ``env`` is added to it as
    ``z3.Int(name)``, so pass a dict to get the variables back.  The terms are
    the ones of :func:`layout_function` (Z3 ``div`` / ``mod`` are floor
    division / non-negative remainder for the positive divisors used here).
    The caller states the symbols' ranges (they are positive integers).
    Swizzled layouts are encoded bit by bit with ``If``; for proofs about
    swizzles the bit-vector encoding of :mod:`symlayout.prove.copy.z3backend` is
    usually faster.

    >>> import z3
    >>> from symlayout.algebra.layout import Layout
    >>> from symlayout.algebra.symbolic import symbols
    >>> m, = symbols('m'); env = {}
    >>> t = layout_z3(Layout((32 * m, 16), (16, 1)), z3.Int('i'), env)
    >>> sorted(env), z3.simplify(z3.substitute(t, (env['m'], z3.IntVal(2)), (z3.Int('i'), z3.IntVal(65))))
    (['m'], 17)
    """
    import z3
    op = "layout_z3"
    if env is None:
        env = {}
    kind = layout_kind(L)
    if isinstance(i, sympy.Basic):
        _z3_env_for([i], env)
    x = _z3_index(i, env, op)
    if kind == "swizzle":
        return _z3_swizzle(L, x)
    if kind == "composed":
        _z3_env_for([L.offset], env)
        off = to_z3(leaf_symbol(L.offset, f"{op}: offset of {L}"), env)
        return _z3_swizzle(L.swizzle, off + layout_z3(L.inner, x, env))
    shape, stride = flat_leaves(L.shape), flat_leaves(L.stride)
    if len(shape) != len(stride):
        raise AlgebraError(f"{op}: shape and stride of {L} are not congruent")
    shape = [leaf_symbol(s, f"{op}: shape of {L}") for s in shape]
    stride = [leaf_symbol(d, f"{op}: stride of {L}") for d in stride]
    _z3_env_for(shape + stride, env)
    r = z3.IntVal(0)
    p = sympy.Integer(1)
    n = len(shape)
    for k, (s, d) in enumerate(zip(shape, stride)):
        q = x if p == 1 else x / to_z3(p, env)
        if k < n - 1:
            q = q % to_z3(s, env)
        r = r + q * to_z3(d, env)
        p = p * s
    return z3.simplify(r) if n == 0 else r


def condition_z3(cond, env=None):
    """A side condition (sympy relation / And / Or / Not, or a :class:`Condition`) as a Z3 Bool.

    Symbols missing from ``env`` are added as ``z3.Int(name)``, as in :func:`layout_z3`.

    >>> import z3
    >>> from symlayout.algebra.symbolic import symbols
    >>> m, = symbols('m'); env = {}
    >>> c = condition_z3(sympy.Or(sympy.Eq(sympy.Mod(4, m), 0), sympy.Lt(4, m)), env)
    >>> z3.simplify(z3.substitute(c, (env['m'], z3.IntVal(3))))
    False
    """
    import z3
    if env is None:
        env = {}
    if isinstance(cond, Condition):
        cond = cond.expr
    if isinstance(cond, bool):
        return z3.BoolVal(cond)
    c = sympy.sympify(cond)
    if c is sympy.true or c is sympy.false:
        return z3.BoolVal(bool(c))
    _z3_env_for([c], env)
    if isinstance(c, sympy.And):
        return z3.And(*[condition_z3(a, env) for a in c.args])
    if isinstance(c, sympy.Or):
        return z3.Or(*[condition_z3(a, env) for a in c.args])
    if isinstance(c, sympy.Not):
        return z3.Not(condition_z3(c.args[0], env))
    ops = {sympy.Eq: lambda a, b: a == b, sympy.Ne: lambda a, b: a != b,
           sympy.StrictLessThan: lambda a, b: a < b, sympy.LessThan: lambda a, b: a <= b,
           sympy.StrictGreaterThan: lambda a, b: a > b, sympy.GreaterThan: lambda a, b: a >= b}
    for t, f in ops.items():
        if isinstance(c, t):
            return f(to_z3(c.lhs, env), to_z3(c.rhs, env))
    raise ConditionError(f"cannot translate the condition {c} to Z3")
