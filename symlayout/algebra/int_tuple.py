"""IntTuple: CuTe's hierarchical integer tuples (``int`` or nested ``tuple``).

Leaves are Python ``int`` (static), :class:`~symlayout.algebra.symbolic.DynInt`
(dynamic) or sympy integer expressions (symbolic).  Every function follows
CuTe 4.2 (``cute/int_tuple.hpp``, ``cute/stride.hpp``) exactly.

>>> product((2, (3, 4)))
24
>>> compact_col_major((2, 1, 3))
(1, 0, 2)
>>> idx2crd(30, (2, (3, 4)))
(0, (0, 5))
"""
from __future__ import annotations

from ._lazy import sympy

from ..errors import AlgebraError, NotationError
from .symbolic import DynInt, format_expr, is_static, normalize, require

# ---------------------------------------------------------------- the underscore and the printer


class _Underscore:
    """CuTe's ``_`` (keep this mode)."""
    _inst = None

    def __new__(cls):
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self):
        return "_"

    __str__ = __repr__


#: the underscore singleton
_ = Underscore = _Underscore()


def format_int_tuple(t) -> str:
    """CuTe print form of an IntTuple (static underscores stripped).

    >>> format_int_tuple((4, (2, 2))), format_int_tuple((4,)), format_int_tuple(())
    ('(4,(2,2))', '(4)', '()')
    """
    if type(t) is tuple:
        return "(" + ",".join(format_int_tuple(e) for e in t) + ")"
    if t is _:
        return "_"
    if isinstance(t, bool):
        return str(t).lower()
    if isinstance(t, int):
        return str(int(t))
    if isinstance(t, sympy.Basic):
        return format_expr(t)
    if hasattr(t, "shape"):  # a Layout inside a tiler
        return str(t)
    raise NotationError(f"cannot print {t!r} as an IntTuple")


def has_underscore(c):
    """True if the coordinate ``c`` holds CuTe's ``_`` anywhere (``has_underscore``)."""
    if c is _:
        return True
    return is_tuple(c) and any(has_underscore(e) for e in c)


def colex_coord(e: int, shape) -> tuple:
    """The colexicographic coordinate of index ``e`` in the flat ``shape``, each mode ``% s`` (also the last).

    >>> colex_coord(37, (4, 8, 2)), colex_coord(200, (4, 8))
    ((1, 1, 1), (0, 2))
    """
    out = []
    for s in shape:
        out.append(e % s)
        e //= s
    return tuple(out)


def slice_modes(c, t):
    """The leaves of ``t`` where ``c`` holds ``_``, flattened (CuTe's ``slice(c, t)`` on tuples)."""
    return _modes_where(c, t, True)


def dice_modes(c, t):
    """The leaves of ``t`` where ``c`` holds no ``_``, flattened (CuTe's ``dice(c, t)`` on tuples)."""
    return _modes_where(c, t, False)


def _modes_where(c, t, underscore: bool):
    """The modes of ``t`` whose leaf of ``c`` is (``underscore``) or is not ``_``, flattened."""
    if is_tuple(c):
        return tuple(m for ci, ti in zip(c, t) for m in _modes_where(ci, ti, underscore))
    return (t,) if (c is _) == underscore else ()


def zero_underscores(c):
    """``c`` with every ``_`` replaced by 0 (the offset of the slice's first element)."""
    if is_tuple(c):
        return tuple(zero_underscores(e) for e in c)
    return 0 if c is _ else c


# ---------------------------------------------------------------- concrete fast paths
#
# Where every leaf is a static int, some functions below first try a shortcut on plain ints, placed
# next to the general formula; it computes the same value (tests/test_fast_paths.py compares them)
# and declines (``_Decline``: the general path runs, and reports any error) where the general path
# would raise or see a non-static leaf.

#: off: every function takes the general path (the tests' reference)
FAST_PATHS = True


class _Decline(Exception):
    """A fast path does not apply: the general path runs."""


# ---------------------------------------------------------------- scalar ops


def is_tuple(x) -> bool:
    """True if ``x`` is a tuple (not a leaf).

    >>> is_tuple((1,)), is_tuple(1)
    (True, False)
    """
    return type(x) is tuple


def mul(a, b):
    """``a * b`` of two leaves (static when both are; ``0 * x == 0`` as CuTe's ``_0``)."""
    if type(a) is int and type(b) is int:
        return a * b
    if (type(a) is int and a == 0) or (type(b) is int and b == 0):
        return 0
    return normalize(a * b)


def add(a, b):
    """``a + b`` of two leaves (static when both are)."""
    if type(a) is int and type(b) is int:
        return a + b
    return normalize(a + b)


def _check_divisor(a, b, op: str) -> None:
    """A zero divisor is an error (CuTe: a compile-time error or undefined behaviour).

    A symbolic divisor that may be zero (``m - 1``) records the side condition ``b != 0``.
    """
    if isinstance(b, int):
        if int(b) == 0:
            what = "modulo by zero" if op == "modulo" else "division by zero"
            raise AlgebraError(f"{'' if op == 'modulo' else op + ': '}{what} ({_s(a)} {'%' if op == 'modulo' else '/'} {_s(b)})")
        return
    if isinstance(b, sympy.Basic) and b.is_zero is not False:
        require(sympy.Ne(b, 0), f"{op}: nonzero divisor")


def cdiv(a, b, op: str = "ceil_div"):
    """Scalar ceil division ``⌈a/b⌉`` (static, dynamic or symbolic).

    >>> cdiv(7, 2), cdiv(-8, 3)
    (4, -2)
    >>> cdiv(3, 0)
    Traceback (most recent call last):
    ...
    symlayout.errors.AlgebraError: ceil_div: division by zero (3 / 0)
    """
    _check_divisor(a, b, op)
    if type(a) is int and type(b) is int:
        return -(-a // b)
    if type(a) is int and a == 0:
        return 0
    if isinstance(a, int) and isinstance(b, int):
        return DynInt(-(-int(a) // int(b)))
    return normalize(sympy.ceiling(sympy.sympify(a) / b))


def fdiv(a, b):
    """Scalar floor division (CuTe ``/`` on non-negative integers).

    >>> fdiv(7, 2)
    3
    """
    _check_divisor(a, b, "division")
    if type(a) is int and type(b) is int:
        return a // b
    if type(a) is int and a == 0:
        return 0
    if isinstance(a, int) and isinstance(b, int):
        return DynInt(int(a) // int(b))
    return normalize(sympy.floor(sympy.sympify(a) / b))


def imod(a, b):
    """Scalar modulo.

    >>> imod(7, 4)
    3
    """
    _check_divisor(a, b, "modulo")
    if type(a) is int and type(b) is int:
        return a % b
    if type(a) is int and a == 0:
        return 0
    if type(b) is int and b in (1, -1):
        return 0
    if isinstance(a, int) and isinstance(b, int):
        return DynInt(int(a) % int(b))
    return normalize(sympy.Mod(a, b))


def signum(a):
    """Sign of a leaf (symbolic leaves are positive by construction).

    >>> signum(-3), signum(0), signum(5)
    (-1, 0, 1)
    """
    if isinstance(a, int):
        return (a > 0) - (a < 0)
    s = sympy.sign(a)
    return int(s) if s.is_Integer else 1


def iabs(a):
    """Absolute value of a leaf."""
    if isinstance(a, int):
        return abs(a)
    return normalize(sympy.Abs(a))


def static_eq(a, v) -> bool:
    """True iff ``a`` is statically known to equal ``v`` (CuTe only simplifies then).

    >>> static_eq(1, 1), static_eq(DynInt(1), 1)
    (True, False)
    """
    return type(a) is int and a == v


def known_eq(a, v) -> bool:
    """True iff ``a == v`` is known (static, dynamic or symbolically provable)."""
    if isinstance(a, int):
        return int(a) == v
    return bool(sympy.simplify(a - v) == 0)


# ---------------------------------------------------------------- structure


def rank(t) -> int:
    """Number of top-level modes (1 for a leaf).

    >>> rank(((2, 3), 4, (5, (6, 7)))), rank(5)
    (3, 1)
    """
    return len(t) if is_tuple(t) else 1


def depth(t) -> int:
    """Nesting depth (0 for a leaf).

    >>> depth(((2, 3), 4, (5, (6, 7))))
    3
    """
    if is_tuple(t):
        return 1 + max((depth(e) for e in t), default=0)
    return 0


def product(t):
    """Product of all leaves (``size``); ``product(()) == 1``.

    >>> product(((2, 3), 4))
    24
    """
    if type(t) is tuple:
        r = 1
        for e in t:
            if type(e) is int and type(r) is int:
                r *= e                                  # static leaves: mul's first case
            else:
                r = mul(r, product(e))
        return r
    return t


size = product


def product_each(t):
    """Tuple of the products of each mode (a leaf is wrapped first).

    >>> product_each(((2, 3), 4, (5, (6, 7))))
    (6, 4, 210)
    """
    if is_tuple(t):
        return tuple(product(e) for e in t)
    return (t,)


def flatten(t):
    """All leaves in order; a leaf stays a leaf.

    >>> flatten(((2, 3), 4, (5, (6, 7))))
    (2, 3, 4, 5, 6, 7)
    """
    if type(t) is not tuple:
        return t
    out = []
    for e in t:
        if type(e) is tuple:
            out.extend(flatten(e))
        else:
            out.append(e)
    return tuple(out)


def flatten_leaves(t) -> tuple:
    """Like :func:`flatten` but always a tuple.

    >>> flatten_leaves(5)
    (5,)
    """
    return flatten(t) if is_tuple(t) else (t,)


def unflatten(flat, profile):
    """Regroup a flat tuple into the nesting of ``profile``.

    >>> unflatten((1, 2, 3, 4, 5, 6), ((2, 3), 4, (5, (6, 7))))
    ((1, 2), 3, (4, (5, 6)))
    """
    it = iter(flat if is_tuple(flat) else (flat,))

    def go(p):
        if is_tuple(p):
            return tuple(go(e) for e in p)
        return next(it)
    return go(profile)


def wrap(t):
    """A leaf becomes a 1-tuple.

    >>> wrap(3), wrap((3,))
    ((3,), (3,))
    """
    return t if is_tuple(t) else (t,)


def unwrap(t):
    """Strip rank-1 tuple levels.

    >>> unwrap(((4,),))
    4
    """
    while is_tuple(t) and len(t) == 1:
        t = t[0]
    return t


def repeat_like(t, x):
    """Same profile as ``t`` with every leaf replaced by ``x``.

    >>> repeat_like((2, (3, 4)), 0)
    (0, (0, 0))
    """
    if is_tuple(t):
        return tuple(repeat_like(e, x) for e in t)
    return x


def congruent(a, b) -> bool:
    """Identical nesting (leaves ignored).

    >>> congruent((2, (3, 4)), (5, (6, 7))), congruent((2, (3, 4)), (5, 6))
    (True, False)
    """
    if type(a) is tuple:
        if type(b) is not tuple or len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if (type(x) is tuple or type(y) is tuple) and not congruent(x, y):
                return False
        return True
    return type(b) is not tuple


def weakly_congruent(a, b) -> bool:
    """``a`` is coarser than or equal to ``b``.

    >>> weakly_congruent((5, 6), (2, (3, 4))), weakly_congruent((2, (3, 4)), (5, 6))
    (True, False)
    """
    if not is_tuple(a):
        return True
    if not is_tuple(b):
        return False
    return len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b))


def compatible(a, b) -> bool:
    """A coordinate for shape ``a`` is also valid for shape ``b``.

    >>> compatible(24, (2, (3, 4))), compatible((2, (3, 4)), (2, 12))
    (True, False)
    """
    if not is_tuple(a):
        return known_eq(size(b), a) if isinstance(a, int) else bool(sympy.simplify(size(b) - a) == 0)
    if not is_tuple(b):
        return False
    return len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))


def inner_product(a, b):
    """Sum of products of congruent leaves.

    >>> inner_product((2, (3, 4)), (5, (6, 7)))
    56
    """
    if is_tuple(a):
        r = 0
        for x, y in zip(a, b):
            r = add(r, inner_product(x, y))
        return r
    return mul(a, b)


# ---------------------------------------------------------------- arithmetic


def ceil_div(a, b):
    """CuTe ``ceil_div`` on IntTuples (tuple/int folds left to right).

    >>> ceil_div((4, 5, 6), 40), ceil_div((10, 10, 10), (3,)), ceil_div(24, (2, 5))
    ((1, 1, 3), (4, 10, 10), 3)
    """
    if is_tuple(a):
        if is_tuple(b):
            if len(a) < len(b):
                raise AlgebraError(f"ceil_div: rank({_s(a)}) < rank({_s(b)})")
            bb = b + (1,) * (len(a) - len(b))
            return tuple(ceil_div(x, y) for x, y in zip(a, bb))
        out = []
        for ai in a:
            out.append(ceil_div(ai, b))
            b = ceil_div(b, ai)
        return tuple(out)
    if is_tuple(b):
        return ceil_div(a, product(b))
    return cdiv(a, b)


def shape_div(a, b):
    """CuTe ``shape_div`` (like ``ceil_div``; asserts weak divisibility).

    >>> shape_div((4, 5, 6), 40), shape_div((8, 4), (2, 8)), shape_div(12, (2, 3))
    ((1, 1, 3), (4, 1), 2)
    """
    if type(a) is tuple:
        if type(b) is tuple:
            if len(a) != len(b):
                raise AlgebraError(f"shape_div: ranks of {_s(a)} and {_s(b)} differ")
            return tuple([shape_div(x, y) for x, y in zip(a, b)])
        out = []
        for ai in a:
            if type(ai) is int and type(b) is int and ai and b and (ai % b == 0 or b % ai == 0):
                out.append(-(-ai // b))                 # static, divisible: as below
                b = -(-b // ai)
            else:
                out.append(shape_div(ai, b))
                b = shape_div(b, ai)
        return tuple(out)
    if type(b) is tuple:
        return shape_div(a, product(b))
    if type(a) is int and type(b) is int and b and (a % b == 0 or (a != 0 and b % a == 0)):
        return -(-a // b)                               # static, divisible: as below
    _check_divisor(a, b, "shape_div")
    if type(a) is int and type(b) is int:
        if not (a % b == 0 or (a != 0 and b % a == 0)):
            raise AlgebraError(f"shape_div: {a} and {b} do not divide each other")
        return -(-a // b)
    if isinstance(a, sympy.Basic) or isinstance(b, sympy.Basic):
        # CuTe waives the check for dynamic ints, but asserts it for every static instantiation
        require(sympy.Or(sympy.Eq(sympy.Mod(a, b), 0), sympy.Eq(sympy.Mod(b, a), 0)),
                "shape_div: divisibility")
    return cdiv(a, b, "shape_div")


def elem_scale(a, b):
    """Elementwise ``a_i * product(b_i)``.

    >>> elem_scale((2, 3), (4, (5, 6)))
    (8, 90)
    """
    if is_tuple(a):
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return mul(a, product(b))


def round_up(a, b):
    """Elementwise ``⌈a/b⌉*b``.

    >>> round_up((10, 10), (3, 4))
    (12, 12)
    """
    if is_tuple(a):
        return tuple(round_up(x, y) for x, y in zip(a, b))
    return mul(cdiv(a, b), b)


def prefix_product(t, init=1):
    """CuTe ``compact_col_major(t, init)``: size-1 static leaves get stride 0.

    >>> prefix_product(((4, 8, 4), 2, 2), 3)
    ((3, 12, 96), 384, 768)
    """
    return compact_col_major(t, init)


def compact_col_major(shape, current=1):
    """Column-major (LayoutLeft) strides; a static size-1 leaf gets stride 0.

    >>> compact_col_major((2, (3, 4))), compact_col_major(((2, 2), (1, 4))), compact_col_major((2, 3), 4)
    ((1, (2, 6)), ((1, 2), (0, 4)), (4, 8))
    """
    if is_tuple(current):
        raise AlgebraError(f"compact_col_major: the initial stride {_s(current)} must be an integer")
    cur = current

    def go(s):
        nonlocal cur
        if type(s) is tuple:
            return tuple([go(e) for e in s])
        if type(s) is int and s == 1:                   # static_eq(s, 1)
            return 0
        d = cur
        cur = cur * s if type(cur) is int and type(s) is int else mul(cur, s)
        return d
    return go(shape)


def compact_row_major(shape, current=1):
    """Row-major (LayoutRight) strides.

    >>> compact_row_major((2, (3, 4))), compact_row_major((2, 1, 3))
    ((12, (4, 1)), (3, 0, 1))
    """
    if is_tuple(current):
        raise AlgebraError(f"compact_row_major: the initial stride {_s(current)} must be an integer")
    cur = [current]

    def go(s):
        if is_tuple(s):
            return tuple(reversed([go(e) for e in reversed(s)]))
        if static_eq(s, 1):
            return 0
        d = cur[0]
        cur[0] = mul(cur[0], s)
        return d
    return go(shape)


def exclusive_prefix(flat_shape):
    """Raw exclusive prefix products ``(1, s0, s0*s1, ...)`` (not zeroed).

    >>> exclusive_prefix((2, 1, 3))
    (1, 2, 2)
    """
    out, cur = [], 1
    for s in flat_shape:
        out.append(cur)
        cur = mul(cur, s)
    return tuple(out)


def compact_order(shape, order):
    """Strides for ``make_ordered_layout(shape, order)``.

    >>> compact_order((2, 3, 4), (1, 0, 2))
    (3, 1, 6)
    """
    fs = flatten_leaves(shape)
    fo = flatten_leaves(order)
    if len(fs) != len(fo):
        raise AlgebraError(f"compact_order: shape {_s(shape)} and order {_s(order)} differ in rank")
    # dynamic orders rank after every static one, left to right
    keyed = [((0, int(o)) if is_static(o) else (1, i)) for i, o in enumerate(fo)]
    if any(isinstance(o, sympy.Basic) for o in fo):
        # every static instantiation orders by value: the same order iff the symbolic entries
        # increase strictly after the largest static one
        chain = ([max(int(o) for o in fo if is_static(o))] if any(is_static(o) for o in fo) else []) + \
            [o for o in fo if not is_static(o)]
        require(sympy.And(*[sympy.Lt(a, b) for a, b in zip(chain, chain[1:])]),
                "compact_order: symbolic orders increase after the static ones")
    strides = []
    for i, s in enumerate(fs):
        start = 1
        for j, s2 in enumerate(fs):
            if keyed[j] < keyed[i]:
                start = mul(start, s2)
        strides.append(compact_col_major(s, start))
    if is_tuple(shape):
        return unflatten(tuple(strides), shape)
    return strides[0]


# ---------------------------------------------------------------- coordinates


def crd2idx(crd, shape, stride=None):
    """Coordinate -> index.  Without ``stride``: colex linear index.

    The last mode is never reduced modulo its size (CuTe).

    >>> crd2idx((1, (2, 3)), (2, (3, 4))), crd2idx(30, (2, (3, 4)), (12, (1, 3)))
    (23, 15)
    """
    if stride is None:
        if type(crd) is not tuple:
            return crd
        if FAST_PATHS:
            try:
                return _crd2idx_colex_static(crd, shape)[0]
            except _Decline:
                pass
        fc = flatten(crd)
        fs = flatten_leaves(product_like(shape, crd))
        r = 0
        for c, s in zip(reversed(fc), reversed(fs)):
            r = add(c, mul(s, r))
        return r
    if FAST_PATHS:
        try:
            return _crd2idx_static(crd, shape, stride)
        except _Decline:
            pass
    if not congruent(shape, stride):
        raise AlgebraError(f"crd2idx: shape {_s(shape)} and stride {_s(stride)} are not congruent")
    return _crd2idx(crd, shape, stride)


def _crd2idx_static(crd, shape, stride):
    """``_crd2idx`` on static ints (congruence checked on the way); declines on anything else."""
    if type(shape) is tuple:
        if type(stride) is not tuple or len(stride) != len(shape):
            raise _Decline
        if type(crd) is tuple:                      # by mode (an int leaf: c * d)
            if len(crd) != len(shape):
                raise _Decline
            r = 0
            for c, s, d in zip(crd, shape, stride):
                if type(c) is int and type(s) is int and type(d) is int:
                    r += c * d
                else:
                    r += _crd2idx_static(c, s, d)
            return r
        if type(crd) is not int or not shape:
            raise _Decline
        r = 0                                       # an index into a tuple: colex split, the last mode
        for s, d in zip(shape[:-1], stride[:-1]):   # is not reduced
            if type(s) is int and type(d) is int and s:
                r += crd % s * d
                crd //= s
            else:
                sz = _static_size(s)
                r += _crd2idx_static(crd % sz, s, d)
                crd //= sz
        return r + _crd2idx_static(crd, shape[-1], stride[-1])
    if type(shape) is not int or type(stride) is not int or type(crd) is not int:
        raise _Decline
    return crd * stride


def _crd2idx_colex_static(crd, shape):
    """(colex index, size) of ``crd`` in ``shape`` on static ints: ``Σ c_i * (s_0*...*s_{i-1})`` over
    the leaves of ``crd`` with the sizes of the shape modes they index (the Horner form below)."""
    if type(crd) is tuple:
        if type(shape) is not tuple or len(crd) != len(shape):
            raise _Decline
        idx, mult = 0, 1
        for c, s in zip(crd, shape):
            if type(c) is not int or type(s) is not int:
                c, s = _crd2idx_colex_static(c, s)
            idx += c * mult
            mult *= s
        return idx, mult
    if type(crd) is not int:
        raise _Decline
    if type(shape) is int:
        return crd, shape
    n = 1
    for x in flatten_leaves(shape) if type(shape) is tuple else (shape,):
        if type(x) is not int:
            raise _Decline
        n *= x
    return crd, n


def _static_size(s):
    """``product(s)`` of a static IntTuple, declining on a non-static leaf or a zero size."""
    if type(s) is int:
        if s == 0:
            raise _Decline
        return s
    if type(s) is not tuple:
        raise _Decline
    r = 1
    for e in s:
        r *= _static_size(e)
    return r


def _crd2idx(crd, shape, stride):
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise AlgebraError(f"crd2idx: coordinate {_s(crd)} does not match shape {_s(shape)}")
        r = 0
        for c, s, d in zip(crd, shape, stride):
            r = add(r, _crd2idx(c, s, d))
        return r
    if is_tuple(shape):
        if len(shape) == 0:
            return 0
        r = 0
        c = crd
        for s, d in zip(shape[:-1], stride[:-1]):
            sz = product(s)
            r = add(r, _crd2idx(imod(c, sz), s, d))
            c = fdiv(c, sz)
        return add(r, _crd2idx(c, shape[-1], stride[-1]))
    return mul(crd, stride)


def product_like(shape, crd):
    """Collapse ``shape`` to the profile of ``crd`` (which must be weakly congruent with it)."""
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise AlgebraError(f"crd2idx: coordinate {_s(crd)} does not match shape {_s(shape)}")
        return tuple(product_like(s, c) for s, c in zip(shape, crd))
    return product(shape)


def idx2crd(idx, shape, stride=None):
    """Index -> coordinate.  Without ``stride`` the last mode is not reduced.

    >>> idx2crd(30, (2, (3, 4))), idx2crd(17, (2, (3, 4)), (12, (1, 3)))
    ((0, (0, 5)), (1, (2, 1)))
    """
    if FAST_PATHS and type(idx) is int:
        try:
            if stride is None:
                return _idx2crd_colex_static(idx, shape) if type(shape) is tuple else idx
            return _idx2crd_static(idx, shape, stride)
        except _Decline:
            pass
    if stride is None:
        if is_tuple(idx):
            if not is_tuple(shape) or len(idx) != len(shape):
                raise AlgebraError(f"idx2crd: index {_s(idx)} does not match shape {_s(shape)}")
            return tuple(idx2crd(i, s) for i, s in zip(idx, shape))
        if not is_tuple(shape):
            return idx
        leaves = flatten_leaves(shape)
        pos = [0]

        def go(s, last):
            if is_tuple(s):
                k = len(s)
                return tuple(go(e, last and j == k - 1) for j, e in enumerate(s))
            i = pos[0]
            pos[0] += 1
            d = 1
            for s2 in leaves[:i]:
                d = mul(d, s2)
            q = fdiv(idx, d)
            return q if last else imod(q, s)
        return go(shape, True)
    if not congruent(shape, stride):
        raise AlgebraError(f"idx2crd: shape {_s(shape)} and stride {_s(stride)} are not congruent")
    return _idx2crd(idx, shape, stride)


def _idx2crd_colex_static(idx, shape):
    """The colex split below (leaf i: ``idx // (s0*...*s_{i-1})``, reduced mod ``s_i`` except the last
    leaf) on a static shape; declines on a non-static or zero leaf."""
    cur = 1

    def go(s, last):
        nonlocal cur
        if type(s) is tuple:
            k = len(s) - 1
            return tuple([go(e, last and j == k) for j, e in enumerate(s)])
        if type(s) is not int or s == 0:
            raise _Decline
        q = idx // cur
        cur *= s
        return q if last else q % s
    return go(shape, True)


def _idx2crd_static(idx, shape, stride):
    """``_idx2crd`` on static ints (leaf: ``idx // d % s``, a size-1 leaf 0); declines on anything else."""
    if type(shape) is tuple:
        if type(stride) is not tuple or len(stride) != len(shape):
            raise _Decline
        return tuple([(0 if s == 1 else idx // d % s) if type(s) is int and type(d) is int and d and s else
                      _idx2crd_static(idx, s, d) for s, d in zip(shape, stride)])
    if type(shape) is not int or type(stride) is not int:
        raise _Decline
    if shape == 1:
        return 0
    if stride == 0 or shape == 0:
        raise _Decline
    return idx // stride % shape


def _idx2crd(idx, shape, stride):
    if is_tuple(idx):
        if not is_tuple(shape) or len(idx) != len(shape):
            raise AlgebraError(f"idx2crd: index {_s(idx)} does not match shape {_s(shape)}")
        return tuple(_idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride))
    if is_tuple(shape):
        return tuple(_idx2crd(idx, s, d) for s, d in zip(shape, stride))
    if static_eq(shape, 1):
        return 0
    return imod(fdiv(idx, stride), shape)


def _s(x) -> str:
    try:
        return format_int_tuple(x)
    except Exception:
        return repr(x)
