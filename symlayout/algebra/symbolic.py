"""Symbolic integers: sympy entries in shapes/strides, side conditions, layouts as sympy functions
(their Z3 terms: :mod:`.z3terms`).

A shape or stride entry may be a Python ``int`` (static, CuTe ``Int<N>``), a
:class:`DynInt` (a run-time integer, CuTe ``int``) or a sympy integer
expression over positive-integer symbols (``32*m``).  Symbolic entries behave
like CuTe's dynamic integers: the algebra only simplifies what is statically
known, and every assertion CuTe would make on them is recorded as a *side
condition* instead of being assumed silently.

The contract of a symbolic result: **at every symbol value where all its side
conditions hold, it is the function (size, function table, and the modes the
operation defines) that static CuTe computes on the instantiated input**; where
static CuTe rejects the input, some condition is false.  So besides CuTe's own
assertions, a condition is recorded wherever a static test (``is_constant<1>``,
``is_constant<0>``, a merge in ``coalesce``) would change the function at some
value: ``downcast`` of a symbolic stride that may be 1, ``filter`` of one that
may be 0, a ``composition`` on modes static CuTe merges
(``composition((m,8):(1,m), 4:3)`` is exact, or else excluded, as at m = 5), a
cotarget static CuTe coalesces further (``logical_divide((2*m,4):(1,2*m),4)``
excludes m = 7).  The print form may differ from the instantiation's as a
dynamic int's does: unmerged modes, kept size-1 modes.  Where CuTe requires a
static layout (``right_inverse``, ``left_inverse``, ``max_common_vector`` /
``max_common_layout``, ``make_fragment_like``'s ordered form), the symbolic
result is what every static instantiation gives, not CuTe's dynamic-int answer;
``max_alignment`` (which counts only static entries) refuses symbolic layouts.
A zero divisor is an error, a symbolic divisor that may be 0 the condition
``b != 0``.  ``tests/test_symbolic_vs_concrete.py`` checks all this on random
symbolic inputs.

>>> import sympy
>>> m = sympy.Symbol('m', positive=True, integer=True)
>>> with collect_conditions() as conds:
...     require(sympy.Eq(sympy.Mod(32*m, 16), 0), "composition: shape divisibility")
>>> conds
[]
>>> with collect_conditions() as conds:
...     require(sympy.Eq(sympy.Mod(m, 2), 0), "upcast: stride divisibility")
>>> [c.text for c in conds]
['upcast: stride divisibility: m%2 = 0']
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
from dataclasses import dataclass

from ._lazy import sympy

from ..errors import AlgebraError, ConditionError, NotationError


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


# ---------------------------------------------------------------- printing integer expressions
#
# The notation's integer expressions are  e := int | name | e+e | e-e | e*e | e//e | e%e | -e | (e)
# | min(e,...) | max(e,...) | abs(e), with Python's precedence and floor semantics.  The printer emits
# exactly this syntax (never a sympy spelling such as ``ceiling(16/m)`` or ``Mod(m, 2)``) and only the
# parentheses the precedence needs, so that ``parse(print(e))`` is the same function as ``e``:
#
#   floor(n/d)    -> n//d                 Mod(a, b)  -> a%b
#   ceiling(n/d)  -> (n+d-1)//d (d > 0)   Min/Max    -> min(a,b) / max(a,b)
#                 -> -(-n//d)   (else)    Abs        -> abs(a)
#   n/d with a non-integer coefficient (an exact quotient, e.g. upcast's stride m/2 under the side
#   condition m%2 = 0)  -> n//d, the same value wherever n/d is an integer.

_SUM, _TERM, _UNARY, _ATOM = 0, 1, 2, 3


def format_expr(e) -> str:
    """A sympy integer expression in the notation's syntax (``//``, ``%``, ``min``..., no spaces).

    >>> m, k = sympy.symbols("m k", positive=True, integer=True)
    >>> format_expr(8 * sympy.floor(m / 2)), format_expr(sympy.ceiling(16 / m)), format_expr(sympy.Mod(m - 5, k) * k)
    ('8*(m//2)', '(m+15)//m', 'k*((m-5)%k)')
    >>> format_expr(sympy.Min(4, 2 * m) - 1), format_expr(m / 2), format_expr(-sympy.floor((m - 1) / k))
    ('min(4,2*m)-1', 'm//2', '-((m-1)//k)')
    """
    return _pr(sympy.sympify(e))[0]


def _need(e, level: int) -> str:
    text, lv = _pr(e)
    return text if lv >= level else f"({text})"


def _quotient(n, d):
    """``n//d`` (floor division; the exact quotient where ``d`` divides ``n``)."""
    return f"{_need(n, _TERM)}//{_need(d, _ATOM)}", _TERM


def _pr(e):
    """(text, precedence level) of ``e``."""
    if e.is_Integer:
        return (str(int(e)), _ATOM) if e >= 0 else (str(int(e)), _UNARY)
    if e.is_Symbol:
        return e.name, _ATOM
    if e.is_Rational:                                   # p/q: an exact quotient
        return _quotient(sympy.Integer(e.p), sympy.Integer(e.q))
    if e.is_Add or e.is_Mul or e.is_Pow:
        n, d = e.as_numer_denom()
        if d != 1:
            return _quotient(sympy.expand(n) if n.is_Add else n, d)
    if e.is_Add:
        parts = []
        for i, t in enumerate(e.as_ordered_terms()):
            if i and t.could_extract_minus_sign():
                parts.append("-" + _need(-t, _TERM))
            elif i:
                parts.append("+" + _need(t, _TERM))
            else:
                parts.append(_need(t, _TERM))
        return "".join(parts), _SUM
    if e.is_Mul:
        if e.could_extract_minus_sign():
            return "-" + _need(-e, _TERM) if (-e).is_Mul else "-" + _need(-e, _UNARY), _TERM
        c, rest = e.as_coeff_mul()
        factors = [] if c == 1 else [str(int(c))]
        for f in sympy.Mul(*rest).as_ordered_factors():
            if f.is_Pow and f.exp.is_Integer and f.exp > 0:
                factors.extend([_need(f.base, _ATOM)] * int(f.exp))
            else:
                factors.append(_need(f, _ATOM))
        return "*".join(factors), _TERM
    if e.is_Pow and e.exp.is_Integer and e.exp > 0:
        return "*".join([_need(e.base, _ATOM)] * int(e.exp)), _TERM
    if isinstance(e, sympy.floor):
        # (a term printed from a non-integer X, e.g. min(m/2,3) -> min(m//2,3), is floor(X): floor is monotone)
        n, d = e.args[0].as_numer_denom()
        return _pr(n) if d == 1 else _quotient(n, d)
    if isinstance(e, sympy.ceiling):
        n, d = e.args[0].as_numer_denom()
        if d == 1:
            return _pr(n) if n.is_integer else ("-" + _need(-n, _ATOM), _UNARY)
        if d.is_positive:
            return _quotient(n + d - 1, d)
        return "-" + f"({_quotient(-n, d)[0]})", _UNARY
    if isinstance(e, sympy.Mod):
        a, b = e.args
        return f"{_need(a, _TERM)}%{_need(b, _ATOM)}", _TERM
    if isinstance(e, (sympy.Min, sympy.Max)):
        name = "min" if isinstance(e, sympy.Min) else "max"
        return f"{name}({','.join(_pr(a)[0] for a in _ordered_args(e))})", _ATOM
    if isinstance(e, sympy.Abs):
        return f"abs({_pr(e.args[0])[0]})", _ATOM
    raise NotationError(f"cannot print {e} in CuTe notation (+ - * // % min max abs over integers)")


def _ordered_args(e):
    """Min/Max arguments, numbers first (sympy's args are an unordered set)."""
    return sorted(e.args, key=lambda a: (not a.is_Number, sympy.default_sort_key(a)))


@dataclass(frozen=True)
class Condition:
    """A side condition: a sympy boolean that must hold, and where it came from."""
    expr: object
    origin: str

    @property
    def text(self) -> str:
        return f"{self.origin}: {format_condition(self.expr)}"


def format_condition(e) -> str:
    """Render a condition with the notation's integer syntax (``m%2 = 0``, ``m > 2 or 2%m = 0``).

    >>> m, = symbols('m')
    >>> format_condition(sympy.Or(sympy.Eq(sympy.Mod(6, m), 0), sympy.StrictLessThan(6, m)))
    '6 < m or 6%m = 0'
    """
    if isinstance(e, bool) or e in (sympy.true, sympy.false):
        return str(bool(e)).lower()
    if isinstance(e, (sympy.And, sympy.Or)):
        sep = " and " if isinstance(e, sympy.And) else " or "
        parts = [format_condition(a) for a in e.args]
        parts = [f"({p})" if isinstance(a, (sympy.And, sympy.Or)) else p for p, a in zip(parts, e.args)]
        return sep.join(parts)
    if isinstance(e, sympy.Not):
        return f"not ({format_condition(e.args[0])})"
    ops = {sympy.Eq: "=", sympy.Ne: "!=", sympy.StrictLessThan: "<", sympy.LessThan: "<=",
           sympy.StrictGreaterThan: ">", sympy.GreaterThan: ">="}
    for t, op in ops.items():
        if isinstance(e, t):
            try:
                return f"{format_expr(e.lhs)} {op} {format_expr(e.rhs)}"
            except Exception:  # noqa: BLE001 -- a term outside the notation: sympy's spelling
                return str(e)
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
    c = _simplify(cond)
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


def _simplify(cond):
    """Decide what is cheap to decide in ``cond``; return ``sympy.true``/``sympy.false`` or a condition.

    And/Or/Not are simplified argument by argument (sympy's own absorption of True/False, no
    minimisation of the boolean formula); a relation ``a R b`` is decided from ``simplify(a - b)``
    and the symbols' assumptions (positive integers).  A condition sympy cannot decide -- or on which
    it fails (``The argument 'zoo' is not comparable``) or would take minutes (nested Min/floor/ceiling
    chains) -- stays undecided: it is recorded, never assumed.
    """
    try:
        return _simplify_cached(cond)
    except Exception:  # noqa: BLE001 -- any sympy failure only means "not decided"
        return cond


@functools.lru_cache(maxsize=4096)
def _simplify_cached(cond):
    if cond is sympy.true or cond is sympy.false:
        return cond
    if isinstance(cond, (sympy.And, sympy.Or)):
        return cond.func(*[_simplify(a) for a in cond.args])
    if isinstance(cond, sympy.Not):
        return sympy.Not(_simplify(cond.args[0]))
    if isinstance(cond, sympy.core.relational.Relational):
        return _decide_relation(cond)
    if sympy.count_ops(cond) > _SIMPLIFY_MAX_OPS:
        return cond
    return sympy.simplify(cond)


def _decide_relation(rel):
    r = _decide_difference(rel, rel.lhs - rel.rhs)
    if r is None and sympy.count_ops(rel.lhs - rel.rhs) <= _SIMPLIFY_RELATION_MAX_OPS and not _both_ways(rel):
        r = _decide_difference(rel, simplify(rel.lhs - rel.rhs))
    return rel if r is None else r


def simplify(e):
    """``sympy.simplify(e)``, returning a linear form with integer coefficients (``1 - m``, ``8*m``,
    ``3 + 2*m - k``), a number or a symbol as it is -- what ``sympy.simplify`` returns for them (checked on
    random forms by ``tests/test_symbolic.py``) -- without calling it: its first call imports
    ``sympy.physics.units`` (~0.13 s in every process that meets one).

    >>> m = sympy.Symbol('m', positive=True, integer=True)
    >>> simplify(1 - 8*m) == 1 - 8*m, simplify((m**2 - 1) / (m - 1))
    (True, m + 1)
    """
    e = sympy.sympify(e)
    return e if _linear_form(e) else sympy.simplify(e)


def _linear_form(e) -> bool:
    """``e`` is ``c0 + c1*x1 + ...`` with Integer ``c`` and Symbol ``x`` (as sympy stores it)."""
    for t in (e.args if e.is_Add else (e,)):
        if t.is_Integer or t.is_Symbol:
            continue
        if t.is_Mul and len(t.args) == 2 and t.args[0].is_Integer and t.args[1].is_Symbol:
            continue
        return False
    return True


#: the positive-integer points :func:`_both_ways` tries (every symbol at one value, then one symbol moved)
_POINTS = (1, 2, 3, 4, 7, 8, 16, 64)


def _both_ways(rel) -> bool:
    """``rel`` is true at one value of its (positive-integer) symbols and false at another, so no
    simplification decides it: ``sympy.simplify`` is not worth calling (nor importing).

    >>> m = sympy.Symbol('m', positive=True, integer=True)
    >>> _both_ways(sympy.Eq(sympy.Mod(1, m), 0)), _both_ways(sympy.Eq(sympy.Mod(4 * m, 2), 0))
    (True, False)
    """
    syms = sorted(rel.free_symbols, key=str)
    if not syms or len(syms) > 3 or any(x != sympy.Symbol(x.name, positive=True, integer=True) for x in syms):
        return False                  # (only symbols whose every positive integer value is admissible)
    seen = set()
    points = [{x: v for x in syms} for v in _POINTS]
    points += [{x: (v if x is y else 1) for x in syms} for y in syms for v in _POINTS[1:]] if len(syms) > 1 else []
    for pt in points:
        try:
            v = rel.xreplace(pt)
        except Exception:  # noqa: BLE001 -- a point where sympy fails tells nothing
            continue
        if v is sympy.true or v is sympy.false:
            seen.add(v is sympy.true)
            if len(seen) == 2:
                return True
    return False


def _decide_difference(rel, d):
    """``rel`` decided from ``d = lhs - rhs`` by the symbols' assumptions, or None."""
    if d.is_number:
        return sympy.sympify(rel.func(d, 0))
    checks = {sympy.Eq: (d.is_zero, None), sympy.Ne: (None, d.is_zero),
              sympy.StrictLessThan: (d.is_negative, d.is_nonnegative),
              sympy.LessThan: (d.is_nonpositive, d.is_positive),
              sympy.StrictGreaterThan: (d.is_positive, d.is_nonpositive),
              sympy.GreaterThan: (d.is_nonnegative, d.is_negative)}
    for t, (true_if, false_if) in checks.items():
        if isinstance(rel, t):
            if t is sympy.Eq and d.is_zero is False:
                return sympy.false
            if t is sympy.Ne and d.is_zero is False:
                return sympy.true
            if true_if:
                return sympy.true
            if false_if:
                return sympy.false
            return None
    return None


#: larger conditions (nested Min/floor/ceiling chains) are recorded without sympy.simplify, which can
#: take minutes on them; recording an undecided condition is always sound
_SIMPLIFY_MAX_OPS = 24
#: a relation's difference is given to sympy.simplify only when smaller than this (simplify costs ~0.1 s on
#: the Min/ceiling terms composition makes; deciding less only records more conditions, which is sound)
_SIMPLIFY_RELATION_MAX_OPS = 12


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
    c = _simplify(cond)
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


# ---------------------------------------------------------------- layouts as functions


def flat_leaves(t) -> tuple:
    if type(t) is tuple:
        out = ()
        for e in t:
            out += flat_leaves(e)
        return out
    return (t,)


def leaf_symbol(x, what: str):
    """A shape/stride/offset leaf as a sympy integer (DynInt and int alike)."""
    if isinstance(x, bool):
        raise AlgebraError(f"{what}: {x!r} is not an integer")
    if isinstance(x, int):
        return sympy.Integer(int(x))
    if isinstance(x, sympy.Basic) and x.is_integer is not False and not x.is_Boolean:
        return x
    raise AlgebraError(f"{what}: {x!r} is not an integer")


def index_symbol(i, op: str):
    if isinstance(i, bool) or not isinstance(i, (int, sympy.Basic)):
        raise AlgebraError(f"{op}: the index must be an int or an integer sympy expression, got {type(i).__name__}")
    if isinstance(i, int):
        return sympy.Integer(int(i))
    if i.is_Boolean or i.is_integer is False:
        raise AlgebraError(f"{op}: the index {i} is not an integer")
    return i


def layout_kind(L):
    """'swizzle', 'composed' or 'layout' (duck-typed, so symbolic.py imports no layout module)."""
    if getattr(L, "is_swizzle", False):
        return "swizzle"
    if getattr(L, "is_composed", False):
        return "composed"
    if hasattr(L, "shape") and hasattr(L, "stride"):
        return "layout"
    raise AlgebraError(f"expected a Layout, ComposedLayout or Swizzle, got {type(L).__name__}")


def swizzle_function(sw, x):
    """``Sw<B,M,S>(x)`` as a sympy integer expression without XOR (floor / Mod only).

    Each of the B swizzled bits is ``z' = z XOR y = z + y - 2*y*z`` with
    ``y = Mod(floor(x / 2**(ylo+k)), 2)`` and ``z`` alike, so
    ``Sw(x) = x + Σ_k 2**(zlo+k) * (y_k - 2*y_k*z_k)``: exact for every
    integer ``x`` (negative ones too, as Python's two's-complement ``^``).
    A concrete ``x`` is evaluated directly.

    >>> from symlayout.algebra.composed import Swizzle
    >>> x, = symbols('x'); e = swizzle_function(Swizzle(1, 0, 1), x)
    >>> e
    x - 2*Mod(x, 2)*Mod(floor(x/2), 2) + Mod(floor(x/2), 2)
    >>> [int(e.subs(x, v)) for v in range(4)] == [Swizzle(1, 0, 1)(v) for v in range(4)]
    True
    """
    x = sympy.sympify(x)
    if x.is_Integer:
        return sympy.Integer(sw(int(x)))
    ylo = sw.m + max(0, sw.s)
    zlo = sw.m - min(0, sw.s)
    r = x
    for k in range(sw.b):
        y = sympy.Mod(sympy.floor(x / 2 ** (ylo + k)), 2)
        z = sympy.Mod(sympy.floor(x / 2 ** (zlo + k)), 2)
        r = r + 2 ** (zlo + k) * (y - 2 * y * z)
    return r


def layout_function(L, i):
    """``L(i)`` for a 1-D index ``i`` as a sympy integer expression (floor / Mod).

    ``i`` is an int or an integer sympy expression (a Symbol, ``2*j + 1``, ...).
    The index is split colexicographically over the flattened leaves,
    ``Mod(floor(i / p_k), s_k) * d_k`` with ``p_k`` the product of the
    earlier leaf sizes, and -- as in CuTe -- the last leaf is not reduced
    (``floor(i / p_last) * d_last``), so out-of-range indices continue along
    the last mode.  Shape and stride entries may be symbolic.  A swizzled
    :class:`~symlayout.algebra.composed.ComposedLayout` ``Sw o O o B`` gives
    ``Sw(O + B(i))`` through :func:`swizzle_function` (an exact floor / Mod
    form of the XOR); a bare Swizzle gives ``Sw(i)``.  Concrete input gives a
    sympy Integer.

    >>> from symlayout.algebra.layout import Layout
    >>> i, m = symbols('i m')
    >>> e = layout_function(Layout((32 * m, 16), (16, 1)), i); e
    16*(Mod(i, 32*m)) + floor(i/(32*m))
    >>> e.subs({m: 2, i: 65}), layout_function(Layout((2, (3, 4)), (12, (1, 3))), 17)
    (17, 20)
    """
    op = "layout_function"
    kind = layout_kind(L)
    x = index_symbol(i, op)
    if kind == "swizzle":
        return swizzle_function(L, x)
    if kind == "composed":
        inner = layout_function(L.inner, x)
        off = leaf_symbol(L.offset, f"{op}: offset of {L}")
        return swizzle_function(L.swizzle, off + inner)
    shape, stride = flat_leaves(L.shape), flat_leaves(L.stride)
    if len(shape) != len(stride):
        raise AlgebraError(f"{op}: shape and stride of {L} are not congruent")
    if x.is_Integer:
        try:
            return sympy.Integer(int(L(int(x))))
        except (TypeError, ValueError):
            pass
    r = sympy.Integer(0)
    p = sympy.Integer(1)
    n = len(shape)
    for k, (s, d) in enumerate(zip(shape, stride)):
        s = leaf_symbol(s, f"{op}: shape of {L}")
        d = leaf_symbol(d, f"{op}: stride of {L}")
        q = x if p == 1 else sympy.floor(x / p)
        r = r + (q if k == n - 1 else sympy.Mod(q, s)) * d
        p = p * s
    return r


