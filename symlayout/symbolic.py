"""Symbolic integers: sympy entries in shapes/strides, side conditions, Z3 terms.

A shape or stride entry may be a Python ``int`` (static, CuTe ``Int<N>``), a
:class:`DynInt` (a run-time integer, CuTe ``int``) or a sympy integer
expression over positive-integer symbols (``32*m``).  Symbolic entries behave
like CuTe's dynamic integers: the algebra only simplifies what is statically
known, and every assertion CuTe would make on them is recorded as a *side
condition* instead of being assumed silently.

>>> import sympy
>>> m = sympy.Symbol('m', positive=True, integer=True)
>>> with collect_conditions() as conds:
...     require(sympy.Eq(sympy.Mod(32*m, 16), 0), "composition: shape divisibility")
>>> conds
[]
>>> with collect_conditions() as conds:
...     require(sympy.Eq(sympy.Mod(m, 2), 0), "upcast: stride divisibility")
>>> [c.text for c in conds]
['upcast: stride divisibility: Mod(m, 2) = 0']
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass

import sympy

from .errors import ConditionError


class DynInt(int):
    """A run-time (dynamic) integer: same value, but CuTe will not simplify on it.

    Prints like an int (the contract strips static underscores); arithmetic
    stays dynamic except CuTe's static-zero rules (``_0 * d == _0``).

    >>> d = DynInt(8)
    >>> isinstance(d * 2, DynInt), d * 0, type(d * 0).__name__
    (True, 0, 'int')
    """

    def __repr__(self):
        return f"DynInt({int(self)})"

    def _wrap(self, v, other=None):
        return DynInt(v)

    def __add__(self, o):
        return DynInt(int(self) + int(o)) if isinstance(o, int) else NotImplemented

    __radd__ = __add__

    def __sub__(self, o):
        return DynInt(int(self) - int(o)) if isinstance(o, int) else NotImplemented

    def __rsub__(self, o):
        return DynInt(int(o) - int(self)) if isinstance(o, int) else NotImplemented

    def __mul__(self, o):
        if not isinstance(o, int):
            return NotImplemented
        if type(o) is int and o == 0:
            return 0
        return DynInt(int(self) * int(o))

    __rmul__ = __mul__

    def __floordiv__(self, o):
        return DynInt(int(self) // int(o)) if isinstance(o, int) else NotImplemented

    def __rfloordiv__(self, o):
        if not isinstance(o, int):
            return NotImplemented
        return 0 if type(o) is int and o == 0 else DynInt(int(o) // int(self))

    def __mod__(self, o):
        if not isinstance(o, int):
            return NotImplemented
        if type(o) is int and o in (1, -1):
            return 0
        return DynInt(int(self) % int(o))

    def __rmod__(self, o):
        return DynInt(int(o) % int(self)) if isinstance(o, int) else NotImplemented

    def __neg__(self):
        return DynInt(-int(self))

    def __abs__(self):
        return DynInt(abs(int(self)))

    def __hash__(self):
        return int.__hash__(self)


def is_static(x) -> bool:
    """True for a static (compile-time) integer: a plain ``int``.

    >>> is_static(4), is_static(DynInt(4)), is_static(sympy.Symbol('m'))
    (True, False, False)
    """
    return type(x) is int


def is_symbolic(x) -> bool:
    """True for a sympy expression that is not a plain number.

    >>> is_symbolic(sympy.Symbol('m') * 2), is_symbolic(3)
    (True, False)
    """
    return isinstance(x, sympy.Basic) and not x.is_Integer


def normalize(x):
    """Turn sympy Integers into ints (static); leave other values alone.

    >>> type(normalize(sympy.Integer(4))).__name__
    'int'
    """
    if isinstance(x, sympy.Basic):
        if x.is_Integer:
            return int(x)
        return x
    return x


@dataclass(frozen=True)
class Condition:
    """A side condition: a sympy boolean that must hold, and where it came from."""
    expr: object
    origin: str

    @property
    def text(self) -> str:
        return f"{self.origin}: {format_condition(self.expr)}"


def format_condition(e) -> str:
    """Render a sympy relation compactly (``Mod(m, 2) = 0``)."""
    if isinstance(e, sympy.Eq):
        return f"{e.lhs} = {e.rhs}"
    return str(e)


_COLLECTOR: contextvars.ContextVar[list | None] = contextvars.ContextVar("symlayout_conditions", default=None)


@contextlib.contextmanager
def collect_conditions():
    """Collect the side conditions recorded by algebra calls in the block."""
    conds: list[Condition] = []
    tok = _COLLECTOR.set(conds)
    try:
        yield conds
    finally:
        _COLLECTOR.reset(tok)


def require(cond, origin: str) -> None:
    """Assert ``cond`` as CuTe would: raise if decidably false, record if undecided.

    ``cond`` is a Python bool or a sympy boolean.
    """
    if isinstance(cond, bool) or cond in (sympy.true, sympy.false):
        if not bool(cond):
            raise ConditionError(f"{origin} does not hold")
        return
    c = sympy.simplify(cond)
    if c is sympy.true:
        return
    if c is sympy.false:
        raise ConditionError(f"{origin}: {format_condition(cond)} is false")
    conds = _COLLECTOR.get()
    cd = Condition(c, origin)
    if conds is not None and cd not in conds:
        conds.append(cd)
    elif conds is None:
        _UNCOLLECTED.append(cd)


#: conditions recorded outside any collect_conditions() block (kept, never dropped)
_UNCOLLECTED: list[Condition] = []


def decide(cond) -> bool | None:
    """Decide a sympy/bool condition statically: True, False or None (unknown).

    >>> m = sympy.Symbol('m', positive=True, integer=True)
    >>> decide(sympy.Eq(sympy.Mod(4*m, 2), 0)), decide(sympy.Eq(m, 1))
    (True, None)
    """
    if isinstance(cond, bool):
        return cond
    c = sympy.simplify(cond)
    if c is sympy.true:
        return True
    if c is sympy.false:
        return False
    return None


def symbols(names, **kw):
    """Positive-integer sympy symbols (the only kind symlayout uses).

    >>> m, = symbols('m'); m.is_positive and m.is_integer
    True
    """
    if isinstance(names, str):
        names = names.replace(",", " ").split()
    return tuple(sympy.Symbol(n, positive=True, integer=True) for n in names)


def to_z3(expr, env: dict):
    """Translate an integer sympy expression (+, *, floor, Mod, Max/Min) to Z3.

    ``env`` maps symbol names to Z3 integer terms.

    >>> import z3
    >>> m, = symbols('m'); t = to_z3(32*m + sympy.Mod(m, 4), {'m': z3.Int('m')})
    >>> str(t)
    '32*m + m%4'
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
        return to_z3(e.args[0], env) % to_z3(e.args[1], env)
    if isinstance(e, sympy.floor):
        num, den = e.args[0].as_numer_denom()
        return to_z3(num, env) / to_z3(den, env)
    if isinstance(e, sympy.ceiling):
        num, den = e.args[0].as_numer_denom()
        n, d = to_z3(num, env), to_z3(den, env)
        return (n + d - 1) / d
    if isinstance(e, (sympy.Max, sympy.Min)):
        args = [to_z3(a, env) for a in e.args]
        r = args[0]
        for a in args[1:]:
            r = z3.If(r >= a, r, a) if isinstance(e, sympy.Max) else z3.If(r <= a, r, a)
        return r
    if e.is_Pow and e.exp.is_Integer and e.exp > 0:
        b = to_z3(e.base, env)
        r = b
        for _ in range(int(e.exp) - 1):
            r = r * b
        return r
    raise ConditionError(f"cannot translate {e} to Z3")
