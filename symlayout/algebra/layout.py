"""Layout: CuTe's ``Shape:Stride`` functions and their algebra (CuTe 4.2).

A :class:`Layout` maps a coordinate (an int, or a nested coordinate weakly
congruent with its shape) to an offset.  The module-level functions are
CuTe's free functions with the same names; they return new layouts and match
CuTe's printed results exactly (see ``shared/reference/cute-semantics.md``).

>>> A = Layout((6, 2), (8, 2)); B = Layout((4, 3), (3, 1))
>>> print(composition(A, B))
((2,2),3):((24,2),8)
>>> print(complement(Layout((2, 2), (1, 6)), 24))
(3,2):(2,12)
>>> print(logical_divide(Layout((12, 32), (1, 12)), (4, 8)))
((4,3),(8,4)):((1,4),(12,96))
"""
from __future__ import annotations

import functools
import sys

from ._lazy import sympy

from ..errors import AlgebraError, SymlayoutError
from .int_tuple import (_, cdiv, compact_col_major, dice_modes, fdiv, flatten, flatten_leaves, format_int_tuple,
                        has_underscore, iabs, is_tuple, product, product_each, signum, slice_modes,
                        static_eq, unwrap, wrap, zero_underscores)
from .display import layout_svg
from .symbolic import collect_conditions, is_static, normalize, require, simplify
from . import int_tuple as it


def _positive(t) -> bool:
    if type(t) is tuple:
        for e in t:
            if not _positive(e):
                return False
        return True
    if type(t) is int:
        return t >= 0               # CuTe allows empty (size-0) modes; negative sizes are errors
    return isinstance(t, (int, sympy.Basic))


def _may_be(x, v) -> bool:
    """True if the symbolic leaf ``x`` is not decidably different from ``v`` (static and DynInt: False).

    A static CuTe test (``is_constant<v>``) answers differently for a symbolic entry than for its
    instantiations exactly where ``x == v`` is possible; such places record a side condition.
    """
    if not isinstance(x, sympy.Basic) or isinstance(x, int):
        return False
    e = sympy.sympify(x) - v
    if e.is_zero is False or e.is_positive or e.is_negative:
        return False
    return True


def _fmt(x):
    try:
        return format_int_tuple(x)
    except Exception:
        return repr(x)


# ---------------------------------------------------------------- user-facing errors

def _guard(fn, name=None):
    """Decorator of the public algebra functions: a stray Python exception from bad arguments becomes a
    one-line AlgebraError naming the function (``name``, default its own) and its arguments."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AlgebraError:
            raise
        except RecursionError:
            raise AlgebraError(f"{name}: the arguments are nested too deeply") from None
        except (AttributeError, TypeError, IndexError, ZeroDivisionError, ValueError, KeyError) as e:
            if isinstance(e, SymlayoutError):
                raise
            shown = ", ".join(_short(a) for a in args)
            raise AlgebraError(f"{name}: cannot apply to ({shown}): "
                               f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".rstrip(": ")) from None
    return wrapper


def _guard_as(name):
    """``_guard`` naming the public function: for the general path of a function whose concrete fast
    path runs unguarded first (it raises nothing but ``_Decline``)."""
    return lambda fn: _guard(fn, name)


def _short(a, n=60):
    try:
        s = format_tiler(a) if (is_tuple(a) or is_layout(a)) else str(a)
    except Exception:
        s = repr(a)
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 3] + "..."


class Layout:
    """A CuTe layout ``shape:stride`` (congruent IntTuples).

    >>> L = Layout((2, (3, 4)), (12, (1, 3)))
    >>> L(1, 5), L(1, (2, 3)), L(24), L.size(), L.cosize()
    (17, 23, 12, 24, 24)
    >>> print(L(_, 1))
    (2):(12)
    """
    __slots__ = ("shape", "stride", "_flat", "_sf")
    is_composed = False

    def __init__(self, shape, stride=None):
        if stride is None:
            stride = compact_col_major(shape)
        if type(shape) is tuple or type(stride) is tuple:
            ok = it.congruent(shape, stride)
            if ok and not _positive(shape):
                raise AlgebraError(f"Layout: shape entries must not be negative, got {_fmt(shape)}")
        else:
            ok = True
            if type(shape) is int and shape < 0:
                raise AlgebraError(f"Layout: shape entries must not be negative, got {shape}")
            if not isinstance(shape, int) and not isinstance(shape, sympy.Basic):
                raise AlgebraError(f"Layout: shape must be an integer tuple, got {shape!r}")
        if not ok:
            raise AlgebraError(f"Layout: shape {format_int_tuple(shape)} and stride {format_int_tuple(stride)} are not congruent")
        self.shape = shape
        self.stride = stride
        self._flat = None
        self._sf = None

    # ---- printing / comparison
    def __str__(self):
        return f"{format_int_tuple(self.shape)}:{format_int_tuple(self.stride)}"

    def __repr__(self):
        return f"Layout({self})"

    def _repr_svg_(self):
        """Jupyter's picture: the grid of offsets (``print_layout``); None (the text) if symbolic or large."""
        return layout_svg(self)

    def __eq__(self, other):
        return isinstance(other, Layout) and not other.is_composed and self.shape == other.shape and self.stride == other.stride

    def __hash__(self):
        return hash((str(self.shape), str(self.stride)))

    # ---- accessors
    def rank(self):
        """Number of top-level modes."""
        return it.rank(self.shape)

    def depth(self):
        return it.depth(self.shape)

    def size(self):
        """Product of the shape."""
        f = self._sf if self._sf is not None else static_flat(self)
        if f:                                       # static: the product of the flat shape (same value)
            return _prod(f[0])
        return product(self.shape)

    def cosize(self):
        """``1 + Σ (s-1)|d|`` over leaves (CuTe's cosize)."""
        f = self._sf if self._sf is not None else static_flat(self)
        if f:                                       # static: the same sum on plain ints
            return _cosize_static(*f)
        s, d = flatten_leaves(self.shape), flatten_leaves(self.stride)
        r = 1
        for a, b in zip(s, d):
            r = it.add(r, it.mul(it.add(a, -1), iabs(b)))
        return r

    def __getitem__(self, i):
        """Mode ``i`` (CuTe ``layout<i>``); a leaf layout's mode 0 is itself."""
        if isinstance(i, tuple):
            L = self
            for j in i:
                L = L[j]
            return L
        if not is_tuple(self.shape):
            if i != 0:
                raise AlgebraError(f"layout<{i}>: {self} has rank 1")
            return self
        return _mk(self.shape[i], self.stride[i])      # a mode of a valid layout is valid

    def modes(self):
        """The top-level modes as layouts."""
        return [self[i] for i in range(self.rank())]

    # ---- evaluation
    def __call__(self, *crd):
        if len(crd) == 1:
            crd = crd[0]
        if has_underscore(crd):
            return slice_(crd, self)
        if isinstance(crd, int) and type(crd) is not bool:
            return self._eval_int(crd)
        return it.crd2idx(crd, self.shape, self.stride)

    def _eval_int(self, i):
        f = self._flat
        if f is None:
            f = self._flat = _flat_eval_table(self)
        if f is False:
            return it.crd2idx(i, self.shape, self.stride)
        r = 0
        n = len(f)
        for k, (s, d) in enumerate(f):
            if k == n - 1:
                r += i * d
            else:
                r += (i % s) * d
                i //= s
        return r

    def table(self):
        """``[L(0), ..., L(size-1)]`` (concrete layouts only)."""
        return function_table(self)

    def with_shape(self, *shape):
        """``composition(self, make_layout(shape))``."""
        shape = shape[0] if len(shape) == 1 else shape
        return composition(self, Layout(shape))

    def compose(self, *tilers):
        """``composition(self, tiler)``; several args form a tuple tiler."""
        if len(tilers) == 1:
            return composition(self, tilers[0])
        return composition(self, tuple(tilers))


_new = object.__new__


def trusted_layout(shape, stride, flat=None):
    """A Layout whose shape and stride the caller has checked (congruent, sizes >= 0; ``flat``: its
    :func:`static_flat` when known), built without the constructor's checks (the notation's reader)."""
    return _mk(shape, stride, flat)


def _mk(shape, stride, sf=None):
    """A Layout from parts of already-validated layouts, built by an operation whose result is congruent
    with non-negative sizes by construction: the constructor's checks are skipped (``sf``: its
    ``static_flat`` when known)."""
    L = _new(Layout)
    L.shape = shape
    L.stride = stride
    L._flat = None
    L._sf = sf
    return L


# ---------------------------------------------------------------- concrete (static integer) fast paths
#
# Where every leaf of the operands is a static int and every size is >= 1 (the concrete case), the
# operations run on flat int tuples (``static_flat``) with plain integer arithmetic.  Each
# ``_x_static`` sits next to the general formula it shortcuts and computes exactly what it computes
# on such input (tests/test_fast_paths.py compares both on random layouts); where the general path
# would raise, it declines (``_Decline``) and the general path runs, so errors stay the same.

#: off: every operation takes the general path (the tests' reference)
FAST_PATHS = True


class _Decline(Exception):
    """A fast path does not apply: the general path runs (and reports any error)."""


def _static_leaves(t):
    """``flatten(t)`` as a tuple when every leaf is a static int (``type(x) is int``), else None."""
    if type(t) is int:
        return (t,)
    if type(t) is not tuple:
        return None
    out = []
    for e in t:
        if type(e) is int:
            out.append(e)
        else:
            f = _static_leaves(e)
            if f is None:
                return None
            out.extend(f)
    return tuple(out)


def static_flat(L):
    """``(flatten(shape), flatten(stride))`` of a concrete Layout (static int leaves, sizes >= 1, rank
    >= 1), else False; cached on the (immutable) layout.

    >>> static_flat(Layout((2, (3, 4)), (12, (1, 3)))), static_flat(Layout((2, 0), (1, 2)))
    (((2, 3, 4), (12, 1, 3)), False)
    """
    f = L._sf
    if f is None:
        try:
            s = _static_leaves(L.shape)
            d = _static_leaves(L.stride) if s and min(s) >= 1 else None
        except RecursionError:                      # nested too deeply: the general path reports it
            d = None
        f = L._sf = (s, d) if d is not None else False
    return f


def _prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r


def _cosize_static(s, d):
    """``1 + Σ (s-1)|d|``."""
    r = 1
    for x, y in zip(s, d):
        r += (x - 1) * (y if y >= 0 else -y)
    return r


def _order(d):
    """The indices of ``d`` by increasing value, ties in index order (``sorted``, stable)."""
    if len(d) == 1:
        return (0,)
    if len(d) == 2:
        return (0, 1) if d[0] <= d[1] else (1, 0)
    return sorted(range(len(d)), key=d.__getitem__)


def _modes_parts(NS, ND):
    """(shape, stride, static_flat) of coalesced static modes (as ``_coalesce_flat`` builds them): none
    -> ``1:0``, one -> a leaf, several -> a flat tuple."""
    if not NS:
        return 1, 0, ((1,), (0,))
    if len(NS) == 1:
        a, b = NS[0], ND[0]
        return a, b, ((a,), (b,))
    s, d = tuple(NS), tuple(ND)
    return s, d, (s, d)


def _from_modes(NS, ND):
    """``_mk(*_modes_parts(NS, ND))``, built in place (the concrete paths' hottest constructor)."""
    L = _new(Layout)
    L._flat = None
    if not NS:
        L.shape, L.stride, L._sf = 1, 0, ((1,), (0,))
    elif len(NS) == 1:
        L.shape, L.stride = NS[0], ND[0]
        L._sf = ((NS[0],), (ND[0],))
    else:
        L.shape, L.stride = s, d = tuple(NS), tuple(ND)
        L._sf = (s, d)
    return L


def _tree_of_modes(NS, ND):
    """(shape, stride) trees of coalesced static modes (as :func:`_from_modes`)."""
    if not NS:
        return 1, 0
    if len(NS) == 1:
        return NS[0], ND[0]
    return tuple(NS), tuple(ND)


# ---------------------------------------------------------------- memo of concrete results
#
# A concrete result is an immutable value of its operands' values: with ``MEMO`` on, composition,
# complement, logical_divide and logical_product remember theirs by value.  Keys are exact: static
# ints only (a DynInt equals its int and a bool its 0/1, so neither ever forms a key), Layouts by
# shape and stride.  Off by default: building and hashing a key costs about 15% of a concrete call,
# and where calls repeat (``symlayout prove proofs/`` repeats about 60% of its divides and
# compositions) the algebra is a few milliseconds of the run (bench/RESULTS.md).  ``clear_caches()``
# empties the memo and the parse cache.

#: on: remember concrete composition / complement / logical_divide / logical_product results
MEMO = False
MEMO_SIZE = 1 << 14
_MEMO: dict = {}
_LK = object()                                       # marks a Layout inside a key
_CACHES = [_MEMO]


def register_cache(cache: dict) -> None:
    """Have :func:`clear_caches` empty ``cache`` too (notation.py's parse cache)."""
    _CACHES.append(cache)


def clear_caches() -> None:
    """Forget every memoised concrete result and parsed notation."""
    for c in _CACHES:
        c.clear()


def _value_key(T):
    """An exact hashable key of a static tiler or cotarget, or ``_Decline``."""
    t = type(T)
    if t is int or T is None or T is _:
        return T
    if t is Layout:
        if not (T._sf if T._sf is not None else static_flat(T)):
            raise _Decline
        return (_LK, T.shape, T.stride)
    if t is tuple:
        return tuple([_value_key(e) for e in T])
    raise _Decline


def _memo(op, A, T, fast):
    """``fast(A.shape, A.stride, static_flat(A), T)`` as a Layout, remembered by the operands' values."""
    key = (op, A.shape, A.stride, _value_key(T))
    R = _MEMO.get(key)
    if R is None:
        R = _mk(*fast(A.shape, A.stride, A._sf, T))
        if len(_MEMO) >= MEMO_SIZE:
            _MEMO.clear()
        _MEMO[key] = R
    return R


def _static_or_general(op, A, T, static, general):
    """``op(A, T)``: for a concrete Layout ``A`` (FAST_PATHS on) the same steps on plain ints,
    ``static(A.shape, A.stride, static_flat(A), T)`` -> parts of the result (remembered by value with
    ``MEMO`` on); else, or where ``static`` declines, ``general(A, T)`` (which reports any error)."""
    if type(A) is Layout and FAST_PATHS:
        f = A._sf if A._sf is not None else static_flat(A)
        if f:
            try:
                if MEMO:
                    return _memo(op, A, T, static)
                return _mk(*static(A.shape, A.stride, f, T))
            except (_Decline, RecursionError):       # (unguarded: the general path reports)
                pass
    return general(A, T)


def _flat_eval_table(L):
    s, d = flatten_leaves(L.shape), flatten_leaves(L.stride)
    if all(isinstance(x, int) for x in s + d):
        return tuple((int(a), int(b)) for a, b in zip(s, d))
    return False


def is_layout(x) -> bool:
    """True for a Layout or ComposedLayout.

    >>> is_layout(Layout(4)), is_layout((4,))
    (True, False)
    """
    return isinstance(x, Layout) or getattr(x, "is_composed", False)


@_guard
def function_table(L) -> list:
    """The function table ``[L(0), ..., L(size(L)-1)]`` of a concrete layout.

    >>> function_table(Layout((2, 2), (1, 6)))
    [0, 1, 6, 7]
    """
    n = L.size()
    if not isinstance(n, int):
        raise AlgebraError(f"function_table: {L} is symbolic")
    if L.is_composed:
        inner = function_table(L.inner)
        sw, off = L.swizzle, L.offset
        if isinstance(off, int):
            return [sw(off + x) for x in inner]
        return [L(i) for i in range(int(n))]
    f = L._flat if L._flat is not None else _flat_eval_table(L)
    L._flat = f
    if f is False:
        raise AlgebraError(f"function_table: {L} has symbolic entries")
    np = sys.modules.get("numpy") if n >= VECTOR_MIN else None
    if np is not None and L.cosize() < 1 << 62:
        # the same table as whole arrays where numpy is loaded already (the prover loads it; the
        # algebra never imports it): |every entry| <= cosize - 1 fits int64; tolist gives Python ints
        return function_array(L, np).tolist()
    out = [0]
    # build table mode by mode (colex): entry k*len(out) + b is out[b] + k*d
    for (s, d) in f:
        if s == 1:
            continue
        out = [b + k * d for k in range(s) for b in out]
    return out


#: function_table: tables of at least this many entries are built by numpy when it is loaded
VECTOR_MIN = 2048


def function_array(L, np):
    """:func:`function_table` as an int64 array of ``np`` (the numpy module of a caller that has it: the
    algebra never imports it), built mode by mode without the list in between.

    >>> import numpy
    >>> function_array(Layout((2, 2), (1, 6)), numpy).tolist() == function_table(Layout((2, 2), (1, 6)))
    True
    """
    n = L.size()
    f = None if L.is_composed or not isinstance(n, int) else \
        (L._flat if L._flat is not None else _flat_eval_table(L))
    if f is None or f is False or L.cosize() >= 1 << 62:
        return np.asarray(function_table(L), dtype=np.int64)    # (swizzled, symbolic or huge: the list)
    L._flat = f
    v = np.zeros(1, dtype=np.int64)
    for (s, d) in f:                                            # entry k*len(v) + b is v[b] + k*d (colex)
        if s != 1:
            v = (np.arange(s, dtype=np.int64)[:, None] * d + v).ravel()
    return v


# ---------------------------------------------------------------- constructors


@_guard
def make_layout(*args):
    """``make_layout(shape[, stride])`` or ``make_layout(L0, L1, ...)``.

    One layout argument is wrapped: ``make_layout(4:2) = (4):(2)``.

    >>> print(make_layout((2, (3, 4)))), print(make_layout(Layout(4, 2)))
    (2,(3,4)):(1,(2,6))
    (4):(2)
    (None, None)
    """
    if args and all(is_layout(a) for a in args):
        if any(getattr(a, "is_composed", False) for a in args):
            raise AlgebraError("make_layout: cannot combine composed layouts")
        return Layout(tuple(a.shape for a in args), tuple(a.stride for a in args))
    if len(args) == 1:
        return Layout(args[0])
    if len(args) == 2:
        return Layout(args[0], args[1])
    raise AlgebraError("make_layout: expected (shape[, stride]) or layouts")


@_guard
def make_ordered_layout(shape, order):
    """``make_ordered_layout(shape, order)``.

    >>> print(make_ordered_layout((2, 2, 2, 2), (0, 2, 3, 1)))
    (2,2,2,2):(1,4,8,2)
    """
    return Layout(shape, it.compact_order(shape, order))


def make_layout_row_major(shape):
    """``make_layout(shape, LayoutRight{})``.

    >>> print(make_layout_row_major((2, 3)))
    (2,3):(3,1)
    """
    return Layout(shape, it.compact_row_major(shape))


# ---------------------------------------------------------------- structural


@_guard
def append(L, x=None, n=None):
    """``append(L, x)``; with ``n``: pad with ``x`` (default ``1:0``) up to rank n.

    >>> print(append(Layout((2, (3, 4)), (12, (1, 3))), n=4))
    (2,(3,4),1,1):(12,(1,3),0,0)
    """
    if x is None:
        x = Layout(1, 0)
    s, d = L.shape, L.stride
    if n is None:
        return Layout(wrap(s) + (x.shape,), wrap(d) + (x.stride,))
    r = it.rank(s)
    if r >= n:
        return L
    return Layout(wrap(s) + (x.shape,) * (n - r), wrap(d) + (x.stride,) * (n - r))


@_guard
def prepend(L, x):
    """``prepend(L, x)``."""
    return Layout((x.shape,) + wrap(L.shape), (x.stride,) + wrap(L.stride))


@_guard
def take(L, b, e):
    """``take<b,e>(L)`` (always a tuple layout)."""
    return Layout(wrap(L.shape)[b:e], wrap(L.stride)[b:e])


@_guard
def select(L, *idx):
    """``select<i...>(L)``."""
    return Layout(tuple(wrap(L.shape)[i] for i in idx), tuple(wrap(L.stride)[i] for i in idx))


@_guard
def group(L, b, e):
    """``group<b,e>(L)``.

    >>> print(group(make_layout((2, 3, 4, 5)), 1, 3))
    (2,(3,4),5):(1,(2,6),24)
    """
    s, d = wrap(L.shape), wrap(L.stride)
    return Layout(s[:b] + (s[b:e],) + s[e:], d[:b] + (d[b:e],) + d[e:])


@_guard
def flatten_layout(L):
    """``flatten(L)``."""
    return Layout(flatten(L.shape), flatten(L.stride))


@_guard
def zip_layouts(A, B):
    """CuTe ``zip(A, B)`` of two layouts: transpose by A's modes, or ``((A,B))`` if A is a leaf.

    >>> print(zip_layouts(Layout((2, 5), (5, 1)), Layout((3, 4), (10, 30)))), print(zip_layouts(Layout(2, 1), Layout(32, 2)))
    ((2,3),(5,4)):((5,10),(1,30))
    ((2,32)):((1,2))
    (None, None)
    """
    def z(a, b):
        if is_tuple(a):
            if (is_tuple(b) and len(b) != len(a)) or (not is_tuple(b) and len(a) != 1):
                raise AlgebraError(f"zip: {A} and {B} have different ranks")
            return tuple((a[i], b[i] if is_tuple(b) else b) for i in range(len(a)))
        return ((a, b),)
    return Layout(z(A.shape, B.shape), z(A.stride, B.stride))


# ---------------------------------------------------------------- slicing


@_guard
def slice_(crd, L):
    """``slice(crd, L)``: keep the ``_`` modes (result always a tuple layout).

    >>> L = Layout((2, (3, 4)), (12, (1, 3)))
    >>> print(slice_((_, (_, 2)), L)), print(slice_((1, _), L))
    (2,3):(12,1)
    ((3,4)):((1,3))
    (None, None)
    """
    if getattr(L, "is_composed", False):
        return L.slice(crd)
    if not is_tuple(crd):
        if crd is _:
            return L
        raise AlgebraError("slice: coordinate has no '_'")
    s, d = _slice_shape(crd, L.shape), _slice_shape(crd, L.stride)
    return Layout(s, d)


def _slice_shape(c, t):
    if is_tuple(c):
        if not is_tuple(t):
            raise AlgebraError(f"slice: coordinate {format_int_tuple(c)} does not match {format_int_tuple(t)}")
        return slice_modes(c, t)
    return slice_modes(c, t)


@_guard
def dice(crd, L):
    """``dice(crd, L)``: keep the integer modes.

    >>> print(dice((1, (_, 2)), Layout((2, (3, 4)), (12, (1, 3)))))
    (2,4):(12,3)
    """
    return Layout(dice_modes(crd, L.shape), dice_modes(crd, L.stride))


@_guard
def slice_and_offset(crd, L):
    """``(slice(crd, L), L(crd with _ -> 0))``.

    >>> s, o = slice_and_offset((1, (_, 2)), Layout((2, (3, 4)), (12, (1, 3)))); str(s), o
    ('(3):(1)', 18)
    """
    if getattr(L, "is_composed", False):
        return L.slice_and_offset(crd)
    return slice_(crd, L), it.crd2idx(zero_underscores(crd), L.shape, L.stride)


# ---------------------------------------------------------------- coalesce / filter


def _coalesce_flat(s, d, keep_trailing=False):
    R = len(s)
    if R == 0:
        return Layout(1, 0)
    if keep_trailing and static_eq(s[-1], 1):
        NS, ND = [2], [d[-1]]
    else:
        NS, ND = [s[-1]], [d[-1]]
    for I in range(R - 2, -1, -1):
        if static_eq(s[I], 1):
            continue
        if len(NS) == 1 and static_eq(NS[0], 1):
            NS, ND = [s[I]], [d[I]]
            continue
        m = it.mul(s[I], d[I])
        if is_static(m) and is_static(ND[0]) and m == ND[0]:
            NS[0] = it.mul(s[I], NS[0])
            ND[0] = d[I]
        else:
            NS.insert(0, s[I])
            ND.insert(0, d[I])
    if len(NS) == 1 and static_eq(NS[0], 1):
        return Layout(1, 0)
    if len(NS) == 1:
        return Layout(NS[0], ND[0])
    return Layout(tuple(NS), tuple(ND))


def _coalesce_static(s, d, drop_zero=False):
    """``_coalesce_flat`` on static modes -> the modes (lists): drop size-1 modes (with ``drop_zero``
    also stride-0 ones: ``filter``), merge neighbours ``s0:d0, s1:d1`` when ``s0*d0 == d1``.  Scanned
    left to right: the merged pairs are the same adjacent pairs as in the general right-to-left scan."""
    if len(s) == 1 and not drop_zero:               # one mode: kept unless its size is 1
        return ([s[0]], [d[0]]) if s[0] != 1 else ([], [])
    NS, ND = [], []
    nxt = None                                      # size * stride of the last mode: where it continues
    i = 0
    for x in s:                                     # (indexing d: cheaper than zip on a few modes)
        y = d[i]
        i += 1
        if x == 1 or (drop_zero and y == 0):
            continue
        if y == nxt:                                # merge into the last mode
            NS[-1] *= x
            nxt *= x
        else:
            NS.append(x)
            ND.append(y)
            nxt = x * y
    return NS, ND


def _filter_static(s, d):
    """``_coalesce_static`` that also drops stride-0 modes (``filter_zeros`` makes them size 1)."""
    return _coalesce_static(s, d, True)


def _coalesce_x_static(s, d):
    """``coalesce_x`` on static modes: a trailing size-1 mode is kept as size 2 (only its stride is used)."""
    if s[-1] == 1:
        s = s[:-1] + (2,)
    return _coalesce_static(s, d)


def coalesce(L, profile=None):
    """``coalesce(L[, profile])``: merge modes while preserving ``L(i)``.

    >>> print(coalesce(Layout((2, (1, 6)), (1, (6, 2))))), print(coalesce(Layout(((2, 4), (3, 2)), ((1, 2), (8, 24))), (1, 1)))
    12:1
    (8,6):(1,8)
    (None, None)
    """
    if type(L) is Layout and FAST_PATHS:
        f = L._sf if L._sf is not None else static_flat(L)
        if f:                                               # static: the same merges on plain ints
            if type(profile) is not tuple:
                return _from_modes(*_coalesce_static(*f))
            try:
                return _mk(*_coalesce_profile_static(L.shape, L.stride, profile))
            except (_Decline, RecursionError):              # (unguarded: the general path reports)
                pass
    return _coalesce(L, profile)


@_guard_as("coalesce")
def _coalesce(L, profile):
    if getattr(L, "is_composed", False):
        return L.map_inner(lambda B: coalesce(B, profile))
    if profile is not None and is_tuple(profile):
        return _by_profile(L, profile, coalesce)
    return _coalesce_flat(flatten_leaves(L.shape), flatten_leaves(L.stride))


def _by_profile(L, profile, fn):
    s, d = wrap(L.shape), wrap(L.stride)
    if len(profile) > len(s):
        raise AlgebraError(f"coalesce: profile {format_int_tuple(profile)} has a higher rank than {L}")
    parts = []
    for i in range(len(s)):
        sub = _mk(s[i], d[i])                       # a mode of a valid layout
        parts.append(fn(sub, profile[i]) if i < len(profile) else sub)
    return _mk(tuple(p.shape for p in parts), tuple(p.stride for p in parts))


def _coalesce_profile_static(s, d, profile):
    """``_by_profile(L, profile, coalesce)`` on static trees: each mode coalesced by its profile entry
    (a tuple: mode by mode again), the modes past the profile kept -> trees."""
    if type(s) is not tuple:
        s, d = (s,), (d,)
    if len(profile) > len(s):
        raise _Decline
    rs, rd = list(s), list(d)
    for i, p in enumerate(profile):
        if type(p) is tuple:
            rs[i], rd[i] = _coalesce_profile_static(s[i], d[i], p)
        else:
            rs[i], rd[i] = _tree_of_modes(*_coalesce_static(_static_leaves(s[i]), _static_leaves(d[i])))
    return tuple(rs), tuple(rd)


def coalesce_x(L, profile=None):
    """CuTe's internal ``coalesce_x``: like coalesce but keeps a trailing stride.

    >>> print(coalesce_x(Layout((4, 1), (1, 0))))
    (4,2):(1,0)
    """
    if profile is not None and is_tuple(profile):
        return _by_profile(L, profile, coalesce_x)
    return _coalesce_flat(flatten_leaves(L.shape), flatten_leaves(L.stride), keep_trailing=True)


def filter_zeros(L):
    """Leaves with static stride 0 get size 1.

    >>> print(filter_zeros(Layout((4, 2, 3), (0, 1, 0))))
    (1,2,1):(0,1,0)
    """
    def go(s, d):
        if is_tuple(s):
            return tuple(go(a, b) for a, b in zip(s, d))
        if static_eq(d, 0):
            return 1
        if _may_be(d, 0):
            # static CuTe drops this mode where d = 0 (a dynamic stride is kept): same only for size 1
            require(sympy.Or(sympy.Ne(d, 0), sympy.Eq(s, 1)), "filter: symbolic stride is not 0")
        return s
    return Layout(go(L.shape, L.stride), L.stride)


def filter(L, profile=None):  # noqa: A001 (CuTe's name)
    """``filter(L)`` = ``coalesce(filter_zeros(L))``.

    >>> print(filter(Layout((4, 1, 2, 3), (0, 5, 1, 2))))
    6:1
    """
    if type(L) is Layout and type(profile) is not tuple and FAST_PATHS:
        f = L._sf if L._sf is not None else static_flat(L)
        if f:                                               # static: drop stride-0 modes, coalesce
            return _from_modes(*_filter_static(f[0], f[1]))
    return _filter(L, profile)


@_guard_as("filter")
def _filter(L, profile):
    if getattr(L, "is_composed", False):
        return L.map_inner(lambda B: filter(B, profile))
    if profile is not None and is_tuple(profile):
        return _by_profile(L, profile, filter)
    return coalesce(filter_zeros(L))


# ---------------------------------------------------------------- composition


def _composition_impl(LS, LD, RS, RD, strong=None):
    """CuTe's ``composition_impl`` on a coalesced A ``LS:LD`` and one B ``RS:RD``.

    ``strong`` (a list) receives, for each step, the condition that makes the step exact
    (``|d| % s == 0``, ``s % |d| == 0``, or all of B's rest fits in the mode): CuTe asserts only the
    weaker ``d % s == 0 or d < s``, which composition((m,8):(1,m), 4:3) can pass on unmerged modes.
    """
    if is_tuple(RS):
        parts = [_composition_impl(LS, LD, a, b, strong) for a, b in zip(RS, RD)]
        return Layout(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    if static_eq(RD, 0):
        return Layout(RS, RD)
    if not is_tuple(LS):
        return Layout(RS, it.mul(RD, LD))
    res_s, res_d = [], []
    rest_s, rest_d = RS, RD
    R = len(LS)
    for i in range(R - 1):
        s, d = LS[i], LD[i]
        _require_stride_div(rest_d, s)
        abs_d, sign_d = _abs_sign(rest_d, "composition")
        next_s = cdiv(s, abs_d)
        next_d = it.mul(cdiv(abs_d, s), sign_d)
        if strong is not None and not (isinstance(s, int) and isinstance(rest_d, int) and isinstance(rest_s, int)):
            strong.append(sympy.Or(sympy.Eq(sympy.Mod(abs_d, s), 0), sympy.Eq(sympy.Mod(s, abs_d), 0),
                                   sympy.Le(rest_s, next_s)))
        if static_eq(next_s, 1) or static_eq(rest_s, 1):
            rest_d = next_d
            continue
        new_s = _min(next_s, rest_s)
        _require_shape_div(rest_s, new_s)
        res_s.append(new_s)
        res_d.append(it.mul(rest_d, d))
        rest_s = fdiv(rest_s, new_s)
        rest_d = next_d
    if not res_s:
        return Layout(rest_s, it.mul(rest_d, LD[R - 1]))
    if static_eq(rest_s, 1):
        return Layout(unwrap(tuple(res_s)), unwrap(tuple(res_d)))
    return Layout(tuple(res_s) + (rest_s,), tuple(res_d) + (it.mul(rest_d, LD[R - 1]),))


def _compose_static(LS, LD, bs, bd):
    """``_composition_impl`` on static ints: A's coalesce_x modes ``LS:LD`` (sequences), B's shape and
    stride trees ``bs:bd`` -> the result's (shape, stride) trees.  Declines where B has a leaf that is
    not a static int or a size < 1, or CuTe's divisibility assertions fail (the general path raises)."""
    if type(bs) is tuple:                           # B by mode
        rs, rd = [], []
        i = 0
        for x in bs:
            x, y = _compose_static(LS, LD, x, bd[i])
            i += 1
            rs.append(x)
            rd.append(y)
        return tuple(rs), tuple(rd)
    if type(bs) is not int or type(bd) is not int or bs < 1:
        raise _Decline
    if bd == 0:                                     # a stride-0 mode stays
        return bs, 0
    R = len(LS)
    if R == 1:                                      # A = s:d -> bs : bd*d
        return bs, bd * LD[0]
    res_s, res_d = [], []
    rest_s, rest_d = bs, bd
    for i in range(R - 1):                          # divide B's (shape, stride) through A's modes
        s = LS[i]
        if rest_d >= s and rest_d % s:              # stride divisibility
            raise _Decline
        if rest_d > 0:                              # ceil(s/|d|), ceil(|d|/s) * signum(d)
            next_s, next_d = -(-s // rest_d), -(-rest_d // s)
        else:
            next_s, next_d = -(s // rest_d), rest_d // s
        if next_s == 1 or rest_s == 1:
            rest_d = next_d
            continue
        new_s = next_s if next_s < rest_s else rest_s
        if rest_s % new_s:                          # shape divisibility
            raise _Decline
        res_s.append(new_s)
        res_d.append(rest_d * LD[i])
        rest_s //= new_s
        rest_d = next_d
    if not res_s:
        return rest_s, rest_d * LD[R - 1]
    if rest_s == 1:
        return (res_s[0], res_d[0]) if len(res_s) == 1 else (tuple(res_s), tuple(res_d))
    res_s.append(rest_s)
    res_d.append(rest_d * LD[R - 1])
    return tuple(res_s), tuple(res_d)


def _abs_sign(x, op):
    """``(|x|, signum(x))``; a symbolic ``x`` of undecided sign records ``x > 0``."""
    if isinstance(x, int):
        return iabs(x), signum(x)
    e = sympy.sympify(x)
    if e.is_positive:
        return x, 1
    if e.is_negative:
        return normalize(-e), -1
    require(sympy.Gt(e, 0), f"{op}: the symbolic stride is positive")
    return x, 1


def _static_structure(flat):
    """Conditions under which static CuTe coalesces ``flat`` (a symbolic coalesce_x result) no further.

    Static CuTe drops size-1 modes and merges ``s0:d0, s1:d1`` when ``s0*d0 == d1``; a symbolic mode
    is never dropped or merged (as a dynamic int).  Empty when nothing can differ.
    """
    s, d = flatten_leaves(flat.shape), flatten_leaves(flat.stride)
    conds = []
    for k, x in enumerate(s):
        if _may_be(x, 1):
            conds.append(sympy.Ne(x, 1))
        if k + 1 < len(s):
            m = it.mul(x, d[k])
            if not (isinstance(m, int) and isinstance(d[k + 1], int)):
                diff = simplify(sympy.sympify(m) - d[k + 1])
                if not (diff.is_zero is False or diff.is_positive or diff.is_negative):
                    conds.append(sympy.Ne(m, d[k + 1]))
    return conds


def _min(a, b):
    if isinstance(a, int) and isinstance(b, int):
        r = min(int(a), int(b))
        return r if (is_static(a) and is_static(b)) else it.DynInt(r)
    return normalize(sympy.Min(a, b))


def _require_stride_div(rest_d, s):
    if isinstance(rest_d, int) and isinstance(s, int):
        if is_static(rest_d) and is_static(s) and not (rest_d % s == 0 or rest_d < s):
            raise AlgebraError(f"composition: stride divisibility condition fails ({rest_d} % {s} != 0 and {rest_d} >= {s})")
        return
    require(sympy.Or(sympy.Eq(sympy.Mod(rest_d, s), 0), sympy.StrictLessThan(rest_d, s)),
            "composition: stride divisibility")


def _require_shape_div(rest_s, new_s):
    if isinstance(rest_s, int) and isinstance(new_s, int):
        if is_static(rest_s) and is_static(new_s) and rest_s % new_s != 0:
            raise AlgebraError(f"composition: shape divisibility condition fails ({rest_s} % {new_s} != 0)")
        return
    require(sympy.Eq(sympy.Mod(rest_s, new_s), 0), "composition: shape divisibility")


def composition(A, B):
    """``composition(A, B)``: ``R(c) = A(B(c))``; B a layout, tiler tuple, int or ``_``.

    >>> print(composition(Layout((4, 8, 2), (1, 4, 32)), (2, 4)))
    (2,4):(1,4)
    >>> print(composition(Layout((12, (4, 8)), (59, (13, 1))), (Layout(3, 4), Layout(8, 2))))
    (3,(2,4)):(236,(26,1))
    """
    return _static_or_general(composition, A, B, _composition_static, _composition)


@_guard_as("composition")
def _composition(A, B):
    # a Swizzle or ComposedLayout operand composes by its own algebra (composed.py, CuTe's layout_composed.hpp)
    if getattr(A, "is_composed", False) or getattr(A, "is_swizzle", False):
        return A.compose_left(B)
    if getattr(B, "is_composed", False) or getattr(B, "is_swizzle", False):
        return B.compose_right(A)
    if B is _:
        return A
    if isinstance(B, Layout):
        return _compose_flat(coalesce_x(A), B.shape, B.stride)
    if is_tuple(B):
        if len(B) > A.rank():
            raise AlgebraError(f"composition: tiler {format_tiler(B)} has a higher rank than {A}")
        parts = [composition(A[i], B[i]) for i in range(len(B))]
        return Layout(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    if isinstance(B, (int, sympy.Basic)) and not isinstance(B, bool):
        if isinstance(B, int) and B <= 0:
            raise AlgebraError(f"composition: tiler {B} must be positive")
        return _compose_flat(coalesce_x(A), B, 1)
    raise AlgebraError(f"composition: unsupported right-hand side {B!r}")


def _mode_static(As, Ad, i):
    """Mode ``i`` of a static (shape, stride) as (shape, stride, flat form); a leaf is its own mode 0."""
    if type(As) is tuple:
        ms, md = As[i], Ad[i]
    else:
        ms, md = As, Ad
    if type(ms) is int:                             # (A is static: its leaves are ints >= 1)
        return ms, md, ((ms,), (md,))
    fs = _static_leaves(ms)
    if not fs:                                      # an empty mode ()
        raise _Decline
    return ms, md, (fs, _static_leaves(md))


def _composition_static(As, Ad, f, B):
    """``composition`` of a static A (trees ``As:Ad``, flat form ``f``) with a static tiler B -> trees."""
    if type(B) is Layout:                                   # (_compose_static checks B's leaves)
        if B.stride == 0 and type(B.stride) is int and type(B.shape) is int and B.shape >= 1:
            return B.shape, 0                               # n:0 stays n:0 (A's modes are not needed)
        LS, LD = _coalesce_static(*f) if f[0][-1] != 1 else _coalesce_x_static(*f)   # coalesce_x(A)
        return _compose_static(LS, LD, B.shape, B.stride)
    if type(B) is tuple:                                    # by mode (the first len(B) modes)
        if len(B) > (len(As) if type(As) is tuple else 1):
            raise _Decline
        rs, rd = [], []
        for i in range(len(B)):
            x, y = _composition_static(*_mode_static(As, Ad, i), B[i])
            rs.append(x)
            rd.append(y)
        return tuple(rs), tuple(rd)
    if B is _:
        return As, Ad
    if type(B) is int and B > 0:                            # the tiler n means n:1
        LS, LD = _coalesce_x_static(*f)
        return _compose_static(LS, LD, B, 1)
    raise _Decline


def _compose_flat(flat, RS, RD):
    """``composition_impl`` plus, for symbolic input, the condition that static CuTe gets the same function.

    Where static CuTe would coalesce A further (``(m,8):(1,m)`` is ``8*m:1`` for every m), its result
    can differ from the dynamic one on the unmerged modes; both are ``A(B(i))`` when every step is
    exact.  So: every step exact, or static CuTe sees the same modes.
    """
    strong = []
    R = _composition_impl(flat.shape, flat.stride, RS, RD, strong)
    same = _static_structure(flat) if strong else []
    if same:
        require(sympy.Or(sympy.And(*strong), sympy.And(*same)), "composition: exact, or no mode merges statically")
    return R


def format_tiler(T) -> str:
    """Print a tiler (tuple of layouts/ints/``_``, a layout, or an int)."""
    if is_tuple(T):
        return "(" + ",".join(format_tiler(e) for e in T) + ")"
    return str(T) if is_layout(T) else format_int_tuple(T)


# ---------------------------------------------------------------- complement


def complement(L, cotarget=None):
    """``complement(L, cotarget)``: the layout of the holes of ``L`` up to cotarget.

    >>> print(complement(Layout(4, 2), 32)), print(complement(Layout(2, 1), (3, 8)))
    (2,4):(1,8)
    16:2
    (None, None)
    """
    return _static_or_general(complement, L, cotarget, _complement_fast, _complement)


@_guard_as("complement")
def _complement(L, cotarget):
    if getattr(L, "is_composed", False):
        return complement(L.inner, cotarget)
    if cotarget is None:
        cotarget = filter(L).cosize()
    F = filter(L)
    if static_eq(F.stride, 0) and not is_tuple(F.stride):
        return Layout(_coalesce_shape(cotarget))
    s, d = list(wrap(F.shape)), list(wrap(F.stride))
    R = len(s)
    if R > 1 and not all(is_static(x) for x in d):
        raise AlgebraError(f"complement: {L} needs static strides")
    if any(isinstance(x, int) and x < 0 for x in d):
        raise AlgebraError(f"complement: {L} has a negative stride (CuTe's complement needs positive strides)")
    for x in it.flatten_leaves(cotarget):
        if isinstance(x, int) and x <= 0:
            raise AlgebraError(f"complement: cotarget {_fmt(cotarget)} must be positive")
        if isinstance(x, sympy.Basic) and not isinstance(x, int) and not x.is_positive:
            require(sympy.Ge(x, 1), "complement: cotarget is positive")
    for x in d:
        if isinstance(x, sympy.Basic) and not isinstance(x, int) and not x.is_positive:
            require(sympy.Ge(x, 1), "complement: stride is positive")
    _require_no_dropped_mode(s, d, cotarget)
    rs, rd = [], [1]
    for _k in range(R - 1):
        j = min(range(len(d)), key=lambda k: d[k])
        new_s = fdiv(d[j], rd[-1])
        _require_injective(new_s, L)
        rs.append(new_s)
        rd.append(it.mul(d[j], s[j]))
        del s[j], d[j]
    last = fdiv(d[0], rd[-1])
    _require_injective(last, L)
    rs.append(last)
    new_d = it.mul(d[0], s[0])
    rest_s = _coalesce_shape(it.ceil_div(cotarget, new_d))
    rest_d = compact_col_major(rest_s, new_d)
    return coalesce(Layout((tuple(rs), rest_s), (tuple(rd), rest_d)))


def _complement_fast(s, d, f, cotarget):
    return _modes_parts(*_complement_static(f[0], f[1], cotarget))


def _complement_static(fs, fd, cotarget):
    """``complement`` of the static modes ``fs:fd`` up to a static cotarget -> the result's coalesced
    modes (lists).  Declines where the general path raises (not injective, a negative stride, a
    cotarget entry <= 0) or the cotarget is not static."""
    if cotarget is None:
        cotarget = _cosize_static(fs, fd)                  # cosize(F): size-1 and stride-0 modes add 0
    elif type(cotarget) is int:
        if cotarget <= 0:
            raise _Decline
    else:
        c = _static_leaves(cotarget)
        if not c or min(c) <= 0:
            raise _Decline
    rs, rd, cur = _holes(fs, fd)
    rest = _rest(cotarget, cur)
    if rest != 1:
        rs.append(rest)
        rd.append(cur)
    return rs, rd


def _holes(fs, fd):
    """The holes of the static modes ``fs:fd`` below their end -> (sizes, strides, end): the general
    formula's steps on plain ints, its final coalesce included.  Declines where it raises (not
    injective, a negative stride).

    * ``F = filter(L)``: size-1 and stride-0 modes drop out.  filter also merges neighbours
      ``s0:d0, s1:s0*d0``; left unmerged, such a pair leaves a hole of size ``s0*d0 // (s0*d0) = 1``
      between them, which the final coalesce drops: the same result, so they are not merged here.
    * strides in increasing order: sorted (stride, size) pairs.  Equal strides are never injective
      (the second one's hole is ``d // (s*d) = 0``) whichever comes first, so ties need no index order.
    * the hole below each mode, ``d // cur``, at stride ``cur`` (then ``cur = s*d``).
    * the final coalesce: size-1 holes are dropped as they come; no two holes merge (a hole ends at
      ``(d // cur) * cur <= d < s*d``, where the next one starts), nor the last hole and the rest.
    """
    ds = []                                                 # F's modes as (stride, size)
    i = 0
    for x in fs:
        y = fd[i]
        i += 1
        if x != 1 and y != 0:
            ds.append((y, x))
    ds.sort()
    rs, rd, cur = [], [], 1
    if ds and ds[0][0] < 0:                                 # a negative stride
        raise _Decline
    for y, x in ds:
        h = y // cur                                        # the hole below this mode
        if h == 0:                                          # not injective
            raise _Decline
        if h != 1:
            rs.append(h)
            rd.append(cur)
        cur = y * x
    return rs, rd, cur


def _rest(cotarget, cur):
    """``size(ceil_div(cotarget, cur))`` (a tuple folds left to right), the complement's last mode."""
    if type(cotarget) is int:
        return -(-cotarget // cur)
    rest = 1
    for a in cotarget:
        if type(a) is not int:
            return product(it.ceil_div(cotarget, cur))
        rest *= -(-a // cur)
        cur = -(-cur // a)
    return rest


def _require_injective(new_s, L):
    if static_eq(new_s, 0):
        raise AlgebraError(f"complement: {L} is not injective")
    if _may_be(new_s, 0):
        require(sympy.Ne(new_s, 0), "complement: injective (a hole size is not 0)")


def _require_no_dropped_mode(s, d, cotarget):
    """A symbolic mode size that may be 1: static CuTe filters that mode out first.

    Rank 1 ``s:d`` with ``s = 1`` gives the holes ``(d, ceil_div(cotarget, d)):(1, d)`` where static CuTe
    gives ``cotarget:1``: the same function iff ``d * size(ceil_div(cotarget, d)) == size(cotarget)``.
    With more modes the hole sizes split differently: the size must not be 1.
    """
    for sj, dj in zip(s, d):
        if not _may_be(sj, 1):
            continue
        if len(s) == 1:
            with collect_conditions():          # (its own conditions are recorded by the real ceil_div)
                full = it.mul(dj, product(it.ceil_div(cotarget, dj)))
            require(sympy.Or(sympy.Ne(sj, 1), sympy.Eq(full, product(cotarget))),
                    "complement: a size-1 mode is filtered out")
        else:
            require(sympy.Ne(sj, 1), "complement: a size-1 mode is filtered out")


def _coalesce_shape(t):
    """``coalesce`` of an IntTuple: flatten, multiply neighbours of equal kind."""
    if not is_tuple(t):
        return t
    f = flatten(t)
    out = []
    for x in f:
        if out and is_static(out[-1]) == is_static(x):
            out[-1] = it.mul(out[-1], x)
        else:
            out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


# ---------------------------------------------------------------- inverses


def right_inverse(L):
    """``right_inverse(L)``: ``L(R(i)) == i`` for ``i < size(R)``.

    >>> print(right_inverse(Layout((4, 8), (8, 1)))), print(right_inverse(Layout((2, 4), (4, 1))))
    (8,4):(4,1)
    (4,2):(2,1)
    (None, None)
    """
    if type(L) is Layout and FAST_PATHS:
        f = L._sf if L._sf is not None else static_flat(L)
        if f:                                         # static: the chain below on plain ints
            return _from_modes(*_right_inverse_static(*_coalesce_static(*f)))
    return _right_inverse(L)


@_guard_as("right_inverse")
def _right_inverse(L):
    if L is _:
        return _
    if getattr(L, "is_composed", False) or getattr(L, "is_swizzle", False):
        return L.right_inverse()                      # composed.py
    s, d = _coalesced_modes(L)
    pp = it.exclusive_prefix(s)
    if all(isinstance(x, int) for x in s + d):
        # CuTe: follow the static strides in sorted order from 1 (a dynamic stride or a dynamic
        # current stride ends the chain)
        order = sorted((j for j in range(len(d)) if is_static(d[j])), key=lambda j: d[j])
        rs, rd, cur = [1], [0], 1
        for j in order:
            if d[j] == cur and is_static(cur):
                rs.append(s[j])
                rd.append(pp[j])
                cur = it.mul(s[j], d[j])
        return coalesce(Layout(tuple(rs), tuple(rd)))
    return coalesce(_right_inverse_symbolic(s, d, pp))


def _coalesced_modes(L):
    """The modes of ``coalesce(L)``, shape and stride as tuples: where both inverses start."""
    C = coalesce(L)
    return wrap(C.shape), wrap(C.stride)


def _exclusive_prefix_static(s) -> list:
    """``exclusive_prefix`` of plain ints: ``[1, s0, s0*s1, ...]``, one per mode."""
    pp, cur = [], 1
    for x in s:
        pp.append(cur)
        cur *= x
    return pp


def _right_inverse_static(s, d):
    """The static chain of ``right_inverse`` on coalesced modes ``s:d`` -> coalesced modes."""
    pp = _exclusive_prefix_static(s)
    # the chain from stride 1: in sorted order, the mode whose stride is the current one (of equal
    # strides the first: d.index).  The leading 1:0 and an empty layout's 1:0 coalesce away.
    rs, rd, cur = [], [], 1
    while cur in d:                                   # (cur grows: every coalesced size is >= 2)
        j = d.index(cur)
        rs.append(s[j])
        rd.append(pp[j])
        cur *= s[j]
    return _coalesce_static(rs, rd)


def _right_inverse_symbolic(s, d, pp):
    """The right inverse every static instantiation has (CuTe requires a static layout here).

    The chain follows a stride equal to the current one -- static, or provably equal as symbols
    (``(16,32*m):(32*m,1)`` inverts fully, as it does for every m) -- and records that no other
    stride equals a stride of the chain (where static CuTe would follow it too).
    """
    used, chain = set(), [1]
    rs, rd, cur = [1], [0], 1
    while True:
        j = next((j for j in range(len(d)) if j not in used and _provably_equal(d[j], cur)), None)
        if j is None:
            break
        used.add(j)
        rs.append(s[j])
        rd.append(pp[j])
        cur = it.mul(s[j], d[j])
        chain.append(cur)
    for j in range(len(d)):
        if j in used:
            continue
        for c in chain:
            if _provably_equal(d[j], c):
                continue                    # a duplicate of a followed stride: visited after it, not followed
            if not _decidably_different(d[j], c):
                require(sympy.Ne(d[j], c), "right_inverse: no other stride continues the chain")
    return Layout(tuple(rs), tuple(rd))


def _provably_equal(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return int(a) == int(b)
    return simplify(sympy.sympify(a) - b) == 0


def _decidably_different(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return int(a) != int(b)
    e = simplify(sympy.sympify(a) - b)
    return bool(e.is_zero is False or e.is_positive or e.is_negative)


def left_inverse(L):
    """``left_inverse(L)``: ``R(L(i)) == i`` on the image of an injective L.

    >>> print(left_inverse(Layout(4, 2))), print(left_inverse(Layout((2, 2), (1, 6))))
    (2,4):(0,1)
    (6,2):(1,2)
    (None, None)
    """
    if type(L) is Layout and FAST_PATHS:
        f = L._sf if L._sf is not None else static_flat(L)
        if f:
            try:                                      # static: the same steps on plain ints
                return _from_modes(*_left_inverse_static(*_coalesce_static(*f)))
            except (_Decline, RecursionError):       # (unguarded: the general path reports)
                pass
    return _left_inverse(L)


@_guard_as("left_inverse")
def _left_inverse(L):
    if L is _:
        return _
    if getattr(L, "is_composed", False) or getattr(L, "is_swizzle", False):
        return L.left_inverse()                       # composed.py
    s, d = _coalesced_modes(L)
    if not all(is_static(x) for x in d):
        raise AlgebraError(f"left_inverse: {L} needs static strides")
    for x in s:
        if _may_be(x, 1):
            require(sympy.Ne(x, 1), "left_inverse: no size-1 mode (static CuTe drops it)")
    pp = it.exclusive_prefix(s)
    order = sorted(range(len(d)), key=lambda j: d[j])
    rs, rd = [], [0]
    for j in order:
        if d[j] == 0:
            continue
        p = product(tuple(rs)) if rs else 1
        if d[j] % p != 0:
            raise AlgebraError(f"left_inverse: {L} fails the divisibility condition")
        rs.append(d[j] // p)
        rd.append(pp[j])
    rs.append(s[order[-1]])
    return coalesce(Layout(tuple(rs), tuple(rd)))


def _left_inverse_static(s, d):
    """``left_inverse`` on coalesced static modes ``s:d`` -> coalesced modes; declines where the general
    path raises (divisibility, a negative stride)."""
    if not s:
        s, d = [1], [0]
    if min(d) < 0:
        raise _Decline
    pp = _exclusive_prefix_static(s)
    order = _order(d)
    rs, rd, p = [], [0], 1                            # p = product(rs)
    for j in order:
        if d[j] == 0:
            continue
        if d[j] % p != 0:
            raise _Decline
        rs.append(d[j] // p)
        rd.append(pp[j])
        p *= rs[-1]
    rs.append(s[order[-1]])
    return _coalesce_static(rs, rd)


# ---------------------------------------------------------------- divides


def logical_divide(A, T):
    """``logical_divide(A, T)`` -> ``(tile, rest)`` per mode.

    >>> print(logical_divide(Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2)))
    ((2,2),(2,3)):((4,1),(2,8))
    """
    return _static_or_general(logical_divide, A, T, _logical_divide_static, _logical_divide)


def _by_tiler(op, A, T, by_layout, as_layout):
    """The tiler cases ``logical_divide`` and ``logical_product`` share: a composed A through its inner
    layout, ``_`` keeps A, a tuple tiler mode by mode (A's other modes stay), a size n is ``as_layout(n)``;
    a Layout tiler is ``by_layout(A, T)``."""
    if getattr(A, "is_composed", False):
        return A.map_inner(lambda B: op(B, T))
    if T is _:
        return A
    if isinstance(T, Layout):
        return by_layout(A, T)
    if is_tuple(T):
        if len(T) > A.rank():
            raise AlgebraError(f"{op.__name__}: tiler {format_tiler(T)} has a higher rank than {A}")
        parts = [op(A[i], T[i]) if i < len(T) else A[i] for i in range(A.rank())]
        return Layout(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    if isinstance(T, (int, sympy.Basic)):
        return op(A, as_layout(T))
    raise AlgebraError(f"{op.__name__}: unsupported tiler {T!r}")


def _by_mode_static(op, As, Ad, T):
    """A tuple tiler on static trees ``As:Ad``: ``op`` mode by mode; A's other modes stay."""
    if type(As) is not tuple:
        As, Ad = (As,), (Ad,)
    if len(T) > len(As):
        raise _Decline
    rs, rd = list(As), list(Ad)
    for i, t in enumerate(T):
        rs[i], rd[i] = op(*_mode_static(As, Ad, i), t)
    return tuple(rs), tuple(rd)


@_guard_as("logical_divide")
def _logical_divide(A, T):
    return _by_tiler(logical_divide, A, T, _divide_by_layout, Layout)


def _divide_by_layout(A, T):
    """``composition(A, make_layout(T, complement(T, coalesce(A).shape)))``."""
    cotarget = coalesce(A).shape
    C = complement(T, cotarget)
    _require_same_complement(T, C, cotarget)
    return composition(A, make_layout(T, C))


def _static_tiler(T):
    """A static tiler mode as (shape, stride, flat form): a concrete Layout, or n > 0 meaning ``Layout(n)``."""
    if type(T) is Layout:
        g = T._sf if T._sf is not None else static_flat(T)
        if g:
            return T.shape, T.stride, g
    elif type(T) is int and T > 0:
        d = 0 if T == 1 else 1
        return T, d, ((T,), (d,))
    raise _Decline


def _logical_divide_static(As, Ad, f, T):
    """``logical_divide`` of a static A (trees ``As:Ad``, flat form ``f``) by a static tiler -> trees:
    ``composition(A, make_layout(T, complement(T, coalesce(A).shape)))``, by mode for a tuple tiler."""
    if type(T) is tuple:
        return _by_mode_static(_logical_divide_static, As, Ad, T)
    if T is _:
        return As, Ad
    ts, td, g = _static_tiler(T)
    NS, ND = _coalesce_static(*f)
    cs, cd, cur = _holes(*g)                                # complement(T, coalesce(A).shape)
    rest = _rest(NS, cur)                                   #   (NS: entries >= 2; none -> 1)
    if rest != 1:
        cs.append(rest)
        cd.append(cur)
    cs, cd = _tree_of_modes(cs, cd)
    LS, LD = (NS, ND) if f[0][-1] != 1 else _coalesce_x_static(*f)    # coalesce_x(A): the same modes
    return _compose_static(LS, LD, (ts, cs), (td, cd))                #   unless A ends in a size-1 mode


def _require_same_complement(T, C, cotarget):
    """Static CuTe may coalesce ``A`` further than a symbolic ``A`` (``(2*m,4):(1,2*m)`` is ``8*m:1`` for
    every m), and ``ceil_div`` of a tuple cotarget folds mode by mode: the complement is the same
    function for the merged cotarget iff it has the same size.  (Merging is monotone: a partially merged
    cotarget then gives that size too.)
    """
    if not is_tuple(cotarget) or all(isinstance(x, int) for x in flatten_leaves(cotarget)):
        return
    with collect_conditions():
        merged = complement(T, product(cotarget)).size()
    require(sympy.Eq(C.size(), merged), "logical_divide: the complement does not depend on coalescing")


def _zip2_by(t, guide):
    if type(guide) is tuple:
        if type(t) is not tuple or len(guide) > len(t):
            raise AlgebraError("zip2_by: tiler does not match the layout")
        first, second = [], []
        for i, g in enumerate(guide):
            a, b = _zip2_by(t[i], g)
            first.append(a)
            second.append(b)
        return tuple(first), tuple(second) + t[len(guide):]
    if type(t) is not tuple or len(t) != 2:
        raise AlgebraError("zip2_by: a mode divided by a non-tuple tiler must have rank 2")
    return t


def tile_unzip(L, T):
    """``tile_unzip``: zip2_by on shape and stride separately."""
    return _mk(_zip2_by(L.shape, T), _zip2_by(L.stride, T))   # the same regrouping of both: congruent


def _split_rest(L, split0):
    s, d = L.shape, L.stride
    parts_s, parts_d = [], []
    for k in (0, 1):
        sk, dk = s[k], d[k]
        if (k == 1 or split0) and is_tuple(sk) and len(sk) != 1:
            parts_s.extend(sk)
            parts_d.extend(dk)
        else:
            parts_s.append(sk)
            parts_d.append(dk)
    return _mk(tuple(parts_s), tuple(parts_d))                 # the same regrouping of both: congruent


def _tiled(L, T):
    """``((tile...), rest0, rest1, ...)``: the zipped form with its rest mode spread out."""
    return _split_rest(tile_unzip(L, T), False)


def _flat(L, T):
    """``(tile0, tile1, ..., rest0, rest1, ...)``: both modes of the zipped form spread out."""
    return _split_rest(tile_unzip(L, T), True)


def _regrouped(name, base, regroup, doc):
    """The public ``name(A, T) = regroup(base(A, T), T)`` (``base``: logical_divide or logical_product).

    A plain Layout runs unguarded (``base`` guards itself; regrouping raises AlgebraError only); a composed
    layout is divided or multiplied through its inner layout; anything else goes through the guard, which
    turns a stray Python error into one AlgebraError naming ``name``."""
    def op(A, T):
        if type(A) is Layout:
            try:
                return regroup(base(A, T), T)
            except RecursionError:
                pass
        return general(A, T)

    @_guard_as(name)
    def general(A, T):
        if getattr(A, "is_composed", False):
            return A.map_inner(lambda B: op(B, T))
        return regroup(base(A, T), T)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


zipped_divide = _regrouped("zipped_divide", logical_divide, tile_unzip, """``zipped_divide(A, T)`` -> ``((tile...), (rest...))``.

    >>> print(zipped_divide(Layout((12, 32), (1, 12)), (4, 8)))
    ((4,8),(3,4)):((1,12),(4,96))
    """)

tiled_divide = _regrouped("tiled_divide", logical_divide, _tiled, """``tiled_divide(A, T)`` -> ``((tile...), rest0, rest1, ...)``.

    >>> print(tiled_divide(Layout((12, 32), (1, 12)), (4, 8)))
    ((4,8),3,4):((1,12),4,96)
    """)

flat_divide = _regrouped("flat_divide", logical_divide, _flat, """``flat_divide(A, T)`` -> ``(tile0, tile1, ..., rest0, rest1, ...)``.

    >>> print(flat_divide(Layout((12, 32), (1, 12)), (4, 8)))
    (4,8,3,4):(1,12,4,96)
    """)


# ---------------------------------------------------------------- products


def logical_product(B, T):
    """``logical_product(B, T)`` -> ``(B, T')``.

    >>> print(logical_product(Layout((2, 2), (4, 1)), Layout(6, 1)))
    ((2,2),(2,3)):((4,1),(2,8))
    """
    return _static_or_general(logical_product, B, T, _logical_product_static, _logical_product)


@_guard_as("logical_product")
def _logical_product(B, T):
    return _by_tiler(logical_product, B, T, _product_by_layout, lambda n: Layout(n, 1))


def _product_by_layout(B, T):
    """``make_layout(B, composition(complement(B, size(B) * cosize(T)), T))``."""
    return make_layout(B, composition(complement(B, it.mul(B.size(), T.cosize())), T))


def _logical_product_static(Bs, Bd, f, T):
    """``logical_product`` of a static B (trees ``Bs:Bd``, flat form ``f``) by a static tiler -> trees:
    ``(B, composition(complement(B, size(B)*cosize(T)), T))``, by mode for a tuple tiler."""
    if type(T) is tuple:
        return _by_mode_static(_logical_product_static, Bs, Bd, T)
    if T is _:
        return Bs, Bd
    if type(T) is int and T > 0:                            # the tiler n means n:1
        ts, td, g = T, 1, ((T,), (1,))
    else:
        ts, td, g = _static_tiler(T)
    cs, cd, cur = _holes(*f)                                # complement(B, size(B)*cosize(T))
    rest = -(-(_prod(f[0]) * _cosize_static(*g)) // cur)
    if rest != 1:
        cs.append(rest)
        cd.append(cur)
    # coalesce_x of the complement: its modes are coalesced already (see _holes); none is 1:0 -> 2:0
    LS, LD = (cs, cd) if cs else ([2], [0])
    rs, rd = _compose_static(LS, LD, ts, td)
    return (Bs, rs), (Bd, rd)


zipped_product = _regrouped("zipped_product", logical_product, tile_unzip, """``zipped_product(B, T)``.""")

tiled_product = _regrouped("tiled_product", logical_product, _tiled, """``tiled_product(B, T)``.

    >>> print(tiled_product(Layout(32, 1), Layout((2, 2, 1), (1, 2, 0))))
    (32,2,2,1):(1,32,64,0)
    """)

flat_product = _regrouped("flat_product", logical_product, _flat, """``flat_product(B, T)``.""")


def _blocked_or_raked(B, T, raked):
    if getattr(B, "is_composed", False):
        return B.map_inner(lambda X: _blocked_or_raked(X, T, raked))
    if not isinstance(T, Layout):
        if isinstance(T, int) and not isinstance(T, bool) and T > 0:
            T = Layout(T)
        else:
            raise AlgebraError(f"{'raked' if raked else 'blocked'}_product: the tiler must be a layout, got {_fmt(T)}")
    R = max(B.rank(), T.rank())
    P = logical_product(append(B, n=R), append(T, n=R))
    P0, P1 = P[0], P[1]
    return zip_layouts(P1, P0) if raked else zip_layouts(P0, P1)


@_guard
def blocked_product(B, T):
    """``blocked_product(B, T)`` = ``((B0,T0'),(B1,T1'),...)``.

    >>> print(blocked_product(Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3))))
    ((2,3),(5,4)):((5,10),(1,30))
    """
    return _blocked_or_raked(B, T, False)


@_guard
def raked_product(B, T):
    """``raked_product(B, T)`` = ``((T0',B0),(T1',B1),...)``.

    >>> print(raked_product(Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3))))
    ((3,2),(4,5)):((10,5),(30,1))
    """
    return _blocked_or_raked(B, T, True)


@_guard
def tile_to_shape(block, trg_shape, order=None):
    """``tile_to_shape(block, trg_shape[, order])`` (order: col-major by default).

    >>> print(tile_to_shape(Layout((8, 8), (8, 1)), (32, 32)))
    ((8,4),(8,4)):((8,64),(1,256))
    """
    if getattr(block, "is_composed", False):
        return block.map_inner(lambda X: tile_to_shape(X, trg_shape, order))
    R = it.rank(trg_shape)
    if block.rank() > R:
        raise AlgebraError(f"tile_to_shape: {block} has a higher rank than {format_int_tuple(trg_shape)}")
    padded = append(block, n=R)
    bs = product_each(padded.shape)
    ts = product_each(trg_shape)
    for a, b in zip(ts, bs):
        if isinstance(a, int) and isinstance(b, int):
            if a % b != 0:
                raise AlgebraError(f"tile_to_shape: {format_int_tuple(trg_shape)} is not divisible by the block {block}")
        else:
            require(sympy.Eq(sympy.Mod(a, b), 0), "tile_to_shape: divisibility")
    ps = it.ceil_div(ts, bs)
    if order is None:
        ord_layout = Layout(ps)
    else:
        ord_layout = make_ordered_layout(ps, order)
    return blocked_product(padded, ord_layout)


# ---------------------------------------------------------------- casts


@_guard
def upcast(L, n):
    """``upcast<n>(L)``: elements n times bigger (leaf by leaf).

    >>> print(upcast(Layout((4, 8), (1, 4)), 2)), print(upcast(Layout((8, 4), (4, 1)), 8))
    (2,8):(1,2)
    (4,1):(1,1)
    (None, None)
    """
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise AlgebraError(f"upcast<{n}>: the factor must be a positive integer")
    if getattr(L, "is_composed", False) or getattr(L, "is_swizzle", False):
        return L.upcast(n)

    def go(s, d):
        if is_tuple(s):
            return [go(a, b) for a, b in zip(s, d)]
        if static_eq(d, 0):
            return (s, d)
        if is_static(d):
            if not (d % n == 0 or n % abs(d) == 0):
                raise AlgebraError(f"upcast<{n}>: stride {d} and {n} do not divide each other")
            return (cdiv(s, cdiv(n, abs(d))), signum(d) * cdiv(abs(d), n))
        if isinstance(d, int):
            return (s, fdiv(d, n))
        require(sympy.Eq(sympy.Mod(d, n), 0), f"upcast<{n}>: stride divisibility")
        return (s, normalize(d / n))
    pairs = go(L.shape, L.stride)
    return Layout(*_unzip_pairs(pairs))


def _unzip_pairs(p):
    if isinstance(p, list):
        subs = [_unzip_pairs(x) for x in p]
        return tuple(a for a, _b in subs), tuple(b for _a, b in subs)
    return p


@_guard
def downcast(L, n):
    """``downcast<n>(L)``: elements n times smaller.

    >>> print(downcast(Layout((4, (2, 8)), (8, (1, 2))), 4))
    (4,(8,8)):(32,(1,8))
    """
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise AlgebraError(f"downcast<{n}>: the factor must be a positive integer")
    if getattr(L, "is_composed", False) or getattr(L, "is_swizzle", False):
        return L.downcast(n)
    fd = flatten_leaves(L.stride)
    if not any(static_eq(iabs(x), 1) for x in fd):
        raise AlgebraError(f"downcast<{n}>: {L} has no unit-stride mode")

    def go(s, d):
        if is_tuple(s):
            return [go(a, b) for a, b in zip(s, d)]
        if static_eq(d, 1) or static_eq(d, -1):
            return (it.mul(s, n), d)
        if n != 1 and (_may_be(d, 1) or _may_be(d, -1)):
            # static CuTe scales the shape of a unit-stride mode, a dynamic stride is scaled instead
            require(sympy.And(sympy.Ne(d, 1), sympy.Ne(d, -1)), f"downcast<{n}>: symbolic stride is not 1 or -1")
        return (s, it.mul(d, n))
    return Layout(*_unzip_pairs(go(L.shape, L.stride)))


@_guard
def recast_layout(L, old_bits: int, new_bits: int):
    """``recast_layout<Old,New>(L)`` given the two types' widths in bits.

    >>> print(recast_layout(Layout((4, 8), (1, 4)), 16, 32)), print(recast_layout(Layout((8, 8), (1, 8)), 8, 16))
    (2,8):(1,2)
    (4,8):(1,4)
    (None, None)
    """
    from math import gcd
    if not (isinstance(old_bits, int) and isinstance(new_bits, int)) or old_bits <= 0 or new_bits <= 0:
        raise AlgebraError(f"recast_layout: type widths must be positive, got {old_bits} and {new_bits}")
    g = gcd(new_bits, old_bits)
    num, den = new_bits // g, old_bits // g
    if num == 1 and den == 1:
        return L
    if num == 1:
        return downcast(L, den)
    if den == 1:
        return upcast(L, num)
    return downcast(upcast(L, num), den)


# ---------------------------------------------------------------- misc


@_guard
def max_common_layout(a, b):
    """``max_common_layout(a, b)``.

    >>> print(max_common_layout(Layout((2, 4), (4, 1)), Layout((2, 4), (4, 1))))
    (4,2):(2,1)
    """
    if getattr(a, "is_composed", False):
        r = max_common_layout(a.inner, b)
        lim = 1 << a.swizzle.m
        return _truncate(r, lim)
    if getattr(b, "is_composed", False):
        r = max_common_layout(a, b.inner)
        lim = 1 << b.swizzle.m
        return _truncate(r, lim)
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    if all(isinstance(x, int) for x in flatten_leaves(common.shape) + flatten_leaves(common.stride)):
        c0 = common[0] if is_tuple(common.shape) else common
        if is_static(c0.shape) and static_eq(c0.stride, 1):
            return composition(inv_b, c0)
        return Layout(1, 0)
    n = _common_vector(common)
    if static_eq(n, 1):
        return Layout(1, 0)
    return composition(inv_b, Layout(n, 1))


def _common_vector(common):
    """The size of the contiguous (stride-1) prefix of a coalesced layout, as static CuTe sees it.

    CuTe keeps the static stride-1 mode 0 (``Int<1>`` otherwise).  For symbolic input this is what every
    instantiation gives: mode 0's size when its stride is (provably) 1, extended over following modes
    that static CuTe would merge into it (``s0*d0 == d1`` provably), with the side conditions that
    no size-1 mode is dropped first and that no other mode merges.
    """
    s, d = list(wrap(common.shape)), list(wrap(common.stride))
    if all(isinstance(x, int) for x in s + d):
        if is_static(s[0]) and static_eq(d[0], 1):
            return s[0]
        return 1
    for x in s:
        if _may_be(x, 1):
            require(sympy.Ne(x, 1), "max_common_vector: no size-1 mode (static CuTe drops it)")
    if not _provably_equal(d[0], 1):
        if not _decidably_different(d[0], 1):
            require(sympy.Ne(d[0], 1), "max_common_vector: the first stride is not 1")
        return 1
    n, cur = s[0], s[0]
    for k in range(1, len(s)):
        if _provably_equal(d[k], cur):
            n, cur = it.mul(n, s[k]), it.mul(s[k], d[k])
            continue
        if not _decidably_different(d[k], cur):
            require(sympy.Ne(d[k], cur), "max_common_vector: the next mode does not continue the vector")
        break
    return n


def _truncate(r, lim):
    if isinstance(r.size(), int) and r.size() <= lim:
        return r
    return composition(r, Layout(lim, 1))


@_guard
def max_common_vector(a, b):
    """``max_common_vector(a, b)``.

    >>> max_common_vector(Layout((8, 4), (1, 8)), Layout(((4, 2), 4), ((1, 16), 4)))
    4
    """
    if getattr(a, "is_composed", False):
        return min(max_common_vector(a.inner, b), 1 << a.swizzle.m)
    if getattr(b, "is_composed", False):
        return min(max_common_vector(a, b.inner), 1 << b.swizzle.m)
    return _common_vector(coalesce(composition(a, right_inverse(b))))


@_guard
def nullspace(L):
    """``nullspace(L)``: the domain sub-layout that L maps to 0.

    >>> print(nullspace(Layout((4, 2, 3), (0, 1, 0))))
    (4,3):(1,8)
    """
    fs, fd = flatten_leaves(L.shape), flatten_leaves(L.stride)
    cs = compact_col_major(fs)
    for s, d in zip(fs, fd):
        if _may_be(d, 0):
            require(sympy.Or(sympy.Ne(d, 0), sympy.Eq(s, 1)), "nullspace: symbolic stride is not 0")
    I = [i for i in range(len(fd)) if static_eq(fd[i], 0)]
    if not I:
        return Layout(1, 0)
    return Layout(unwrap(tuple(fs[i] for i in I)), unwrap(tuple(cs[i] for i in I)))


@_guard
def make_layout_tv(thr_layout, val_layout):
    """CuTe DSL ``make_layout_tv``: ``(tiler_mn, layout_tv)`` as make_tiled_copy builds them.

    >>> tiler, tv = make_layout_tv(Layout((2, 3), (3, 1)), Layout((2, 2), (2, 1)))
    >>> tiler, str(tv)
    ((4, 6), '((3,2),(2,2)):((8,2),(4,1))')
    """
    layout_mn = raked_product(thr_layout, val_layout)
    layout_tv = composition(right_inverse(layout_mn), Layout((thr_layout.size(), val_layout.size())))
    return product_each(layout_mn.shape), layout_tv


@_guard
def make_fragment_like(L):
    """``make_fragment_like(L)`` (register fragment layout).

    >>> print(make_fragment_like(Layout(((2, 2), 4, 3), ((8, 1), 2, 32))))
    ((2,2),4,3):((1,2),4,16)
    """
    # (a symbolic shape stands for static instantiations: CuTe's static branch, not the dynamic one)
    if L.rank() > 1 and all(is_static(x) or isinstance(x, sympy.Basic) for x in flatten_leaves(L.shape)):
        s0, d0 = L.shape[0], L.stride[0]
        fz = filter_zeros(Layout(s0, d0)).shape
        m0 = Layout(s0, compact_col_major(fz))
        rest_s, rest_d = L.shape[1:], L.stride[1:]
        return tiled_product(m0, make_ordered_layout(rest_s, rest_d))
    return Layout(L.shape)


@_guard
def max_alignment(L):
    """CuTe ``max_alignment`` of a layout.

    >>> max_alignment(Layout((4, 8), (1, 6)))
    2
    """
    from math import gcd
    F = coalesce(L)
    if any(isinstance(x, sympy.Basic) for x in flatten_leaves(F.shape) + flatten_leaves(F.stride)):
        # CuTe counts only the static entries ("dynamic ones are assumed large multiples"): an answer
        # that is not what the instantiations give, so symbolic layouts are refused
        raise AlgebraError(f"max_alignment: {L} is symbolic (CuTe's max_alignment counts only static entries)")
    # dynamic entries do not count: a dynamic shape is 1, a dynamic stride 0
    F = Layout(_map_leaves(F.shape, lambda x: x if is_static(x) else 1),
               _map_leaves(F.stride, lambda x: x if is_static(x) else 0))
    p = logical_divide(F, right_inverse(F))
    return gcd(p[0].size(), p[1].stride if not is_tuple(p[1].stride) else flatten_leaves(p[1].stride)[0])


def _map_leaves(t, f):
    return tuple(_map_leaves(e, f) for e in t) if is_tuple(t) else f(t)
