"""Swizzle<B,M,S> and ComposedLayout ``A o O o B`` (CuTe ``swizzle.hpp``,
``layout_composed.hpp``, ``swizzle_layout.hpp``).

``Sw(x) = x ^ shiftr(x & yyy_msk, S)``: the B bits at ``M+S`` (Y) are XOR-ed
into the B bits at ``M`` (Z).

>>> sw = Swizzle(3, 3, 3); [sw(x) for x in (0, 8, 64, 65, 72, 100, 200, 511)]
[0, 8, 72, 73, 64, 108, 208, 455]
>>> from symlayout.algebra.layout import Layout
>>> sL = ComposedLayout(sw, 0, Layout((8, 64), (64, 1)))
>>> print(sL), [sL(1, c) for c in (0, 1, 7, 8, 16)]
Sw<3,3,3> o 0 o (8,64):(64,1)
(None, [72, 73, 79, 64, 88])
"""
from __future__ import annotations

from ..errors import AlgebraError, CuteStaticAssert
from .int_tuple import _, dice_modes, flatten_leaves, format_int_tuple, has_underscore, idx2crd, is_tuple, \
    zero_underscores
from .display import layout_svg
from .layout import (Layout, composition, dice, downcast, left_inverse, right_inverse, slice_, upcast,
                     slice_and_offset as _plain_slice_and_offset)
from .symbolic import DynInt


def _ctz(x: int) -> int:
    return (x & -x).bit_length() - 1


class _ComposedAlgebra:
    """What ``layout.composition`` / ``right_inverse`` / ``left_inverse`` call for an operand that is a
    Swizzle or a ComposedLayout (CuTe's overloads in ``layout_composed.hpp``, ``swizzle_layout.hpp``):
    this module's algebra, reached without an import from layout.py."""

    def compose_left(self, B):
        """``composition(self, B)``."""
        return compose_left(self, B)

    def compose_right(self, A):
        """``composition(A, self)``, A a plain layout."""
        return compose_right(A, self)

    def right_inverse(self):
        return right_inverse_composed(self)

    def left_inverse(self):
        return left_inverse_composed(self)


#: CuTe computes a swizzle's masks ``(2^B - 1) << (M + |S|)`` as 32-bit ints: wider ones do not compile
SWIZZLE_LIMIT = "CuTe computes its masks in a 32-bit int: needs B + M + |S| <= 32 and M + |S| <= 31"


def fits_cute_int(b: int, m: int, s: int) -> bool:
    """Whether CuTe's ``Swizzle<B,M,S>`` compiles: its YYY and ZZZ masks fit a 32-bit int.

    >>> fits_cute_int(3, 3, 26), fits_cute_int(3, 3, 27), fits_cute_int(0, 31, 1)
    (True, False, False)
    """
    return b + m + abs(s) <= 32 and m + abs(s) <= 31


class Swizzle(_ComposedAlgebra):
    """CuTe ``Swizzle<B,M,S>`` (an involution on integers).

    >>> Swizzle(3, 0, -3)(1), Swizzle(2, 4, 3)(300)
    (9, 268)
    """
    is_swizzle = True
    is_composed = False
    __slots__ = ("b", "m", "s", "_y", "_r", "_l")

    def __init__(self, b: int, m: int, s: int):
        if b < 0 or m < 0 or abs(s) < b:
            raise AlgebraError(f"Swizzle<{b},{m},{s}>: needs B >= 0, M >= 0 and |S| >= B")
        if not fits_cute_int(b, m, s):
            raise AlgebraError(f"Swizzle<{b},{m},{s}>: {SWIZZLE_LIMIT}")
        self.b, self.m, self.s = b, m, s
        # Sw(x) = x ^ shiftr(x & yyy_msk, S): the mask and the two shift amounts (one of them 0)
        self._y = ((1 << b) - 1) << (m + max(0, s))
        self._r, self._l = max(0, s), max(0, -s)

    @property
    def bit_msk(self):
        return (1 << self.b) - 1

    @property
    def yyy_msk(self):
        return self.bit_msk << (self.m + max(0, self.s))

    @property
    def zzz_msk(self):
        return self.bit_msk << (self.m - min(0, self.s))

    def __call__(self, x):
        return x ^ ((x & self._y) >> self._r << self._l)

    def table(self, n=None):
        """``[Sw(0), ..., Sw(n-1)]`` (default: the whole domain, ``2**(B+M+|S|)`` values).

        >>> Swizzle(1, 1, 1).table()
        [0, 1, 2, 3, 6, 7, 4, 5]
        """
        if n is None:
            n = 1 << (self.b + self.m + abs(self.s))
        y, r, l = self._y, self._r, self._l
        blk = 1 << self.m
        if n <= 16 or n & (n - 1) or n < blk:               # small or not a power of two: value by value
            return [x ^ ((x & y) >> r << l) for x in range(n)]
        if blk >= 16:
            # the M low bits pass unchanged: Sw(x + t) = Sw(x) + t for x a multiple of 2**M, t < 2**M
            out = []
            for x in range(0, n, blk):
                x ^= (x & y) >> r << l
                out.extend(range(x, x + blk))
            return out
        # Sw is linear over GF(2) and the identity below 2**M: Sw(k ^ t) = Sw(k) ^ Sw(t) for t < k = 2**j
        T = list(range(blk))
        k = blk
        while k < n:
            c = k ^ ((k & y) >> r << l)
            T += [t ^ c for t in T]
            k <<= 1
        return T

    def __str__(self):
        return f"Sw<{self.b},{self.m},{self.s}>"

    __repr__ = __str__

    def __eq__(self, o):
        return isinstance(o, Swizzle) and (self.b, self.m, self.s) == (o.b, o.m, o.s)

    def __hash__(self):
        return hash((self.b, self.m, self.s))

    def is_identity(self):
        return self.b == 0

    def upcast(self, n: int):
        """``upcast<n>(Sw)``: ``Sw<B,M-log2 n,S>`` (clamped at 0).

        >>> print(Swizzle(3, 4, 3).upcast(32)), print(Swizzle(3, 4, 3).upcast(128))
        Sw<2,0,3>
        Sw<0,0,3>
        (None, None)
        """
        k = _log2(n, "upcast")
        if self.m - k >= 0:
            return Swizzle(self.b, self.m - k, self.s)
        return Swizzle(max(self.b + self.m - k, 0), 0, self.s)

    def downcast(self, n: int):
        """``downcast<n>(Sw)`` = ``Sw<B,M+log2 n,S>``."""
        return Swizzle(self.b, self.m + _log2(n, "downcast"), self.s)


def _log2(n, op):
    if n <= 0 or n & (n - 1):
        raise AlgebraError(f"{op}<{n}> of a swizzle needs a power of two")
    return n.bit_length() - 1


def make_swizzle(y: int, z: int) -> Swizzle:
    """``make_swizzle<Y,Z>()`` from two bit masks of equal popcount.

    >>> print(make_swizzle(0b1000, 0b0100)), print(make_swizzle(0b11000000, 0b110))
    Sw<1,2,1>
    Sw<2,1,5>
    (None, None)
    """
    if bin(y).count("1") != bin(z).count("1"):
        raise AlgebraError(f"make_swizzle: masks {y:#x} and {z:#x} differ in popcount")
    if y == 0:
        return Swizzle(0, 0, 0)
    b = bin(y).count("1")
    cy, cz = _ctz(y), _ctz(z)
    # both masks must be contiguous bit ranges
    if y != (((1 << b) - 1) << cy) or z != (((1 << b) - 1) << cz):
        raise AlgebraError(f"make_swizzle: masks {y:#x} / {z:#x} are not contiguous bit ranges")
    return Swizzle(b, min(cy, cz), cy - cz)


class ComposedLayout(_ComposedAlgebra):
    """``A o O o B``: ``C(c) = A(O + B(c))`` with A a Swizzle.

    >>> print(ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))[0])
    Sw<3,3,3> o 0 o 8:64
    """
    is_composed = True
    is_swizzle = False
    __slots__ = ("swizzle", "offset", "inner")

    def __init__(self, swizzle: Swizzle, offset, inner: Layout):
        self.swizzle, self.offset, self.inner = swizzle, offset, inner

    # accessors come from the inner layout
    @property
    def shape(self):
        return self.inner.shape

    def size(self):
        return self.inner.size()

    def cosize(self):
        return self.inner.cosize()

    def rank(self):
        return self.inner.rank()

    def depth(self):
        return self.inner.depth()

    def __getitem__(self, i):
        return ComposedLayout(self.swizzle, self.offset, self.inner[i])

    def map_inner(self, f):
        """Apply a layout operation to B only (divides, products, coalesce...)."""
        return ComposedLayout(self.swizzle, self.offset, f(self.inner))

    def __str__(self):
        return f"{self.swizzle} o {format_int_tuple(self.offset)} o {self.inner}"

    __repr__ = __str__

    def _repr_svg_(self):
        """Jupyter's picture: the grid of swizzled offsets; None (the text) if symbolic or large."""
        return layout_svg(self)

    def __eq__(self, o):
        return isinstance(o, ComposedLayout) and str(self) == str(o)

    def __hash__(self):
        return hash(str(self))

    def __call__(self, *crd):
        if len(crd) == 1:
            crd = crd[0]
        if has_underscore(crd):
            return self.slice(crd)
        return self.swizzle(self.offset + self.inner(crd))

    def table(self):
        return [self(i) for i in range(self.size())]

    def compose(self, *tilers):
        return composition(self, tilers[0] if len(tilers) == 1 else tuple(tilers))

    def upcast(self, n):
        if not isinstance(self.offset, int) or self.offset % n:
            raise AlgebraError(f"upcast<{n}>: offset {self.offset} is not divisible")
        return ComposedLayout(self.swizzle.upcast(n), self.offset // n, upcast(self.inner, n))

    def downcast(self, n):
        return ComposedLayout(self.swizzle.downcast(n), self.offset * n, downcast(self.inner, n))

    def slice(self, crd):
        return self.slice_and_offset(crd)[0]

    def slice_and_offset(self, crd):
        """CuTe's ``slice_and_offset`` for ``Sw o O o B`` (``swizzle_layout.hpp``), including the decay to
        a plain layout.  Returns ``(layout, offset)``; the offset already includes the swizzle.

        CuTe splits the sliced-off (diced) part of ``B`` into the swizzle's Y/Z bits and the rest: the Y/Z
        bits of each diced mode are combined by XOR with ``O`` (``O ^ to_mixed_bits(...)``), the rest is
        added.  That equals ``Sw(O + B(crd))`` only when ``O``'s Y/Z bits are disjoint from what the
        diced modes contribute; with an offset that is not a multiple of the swizzle period the partitions
        (and so the addresses ``cute::copy`` dereferences) differ from the layout function, and this
        reproduces CuTe's result, not the function.

        >>> from symlayout.algebra.int_tuple import _
        >>> C = ComposedLayout(Swizzle(3, 3, 3), 16, Layout((8, 64), (64, 1)))
        >>> L, off = C.slice_and_offset((_, DynInt(16))); print(L), int(off)   # 16 ^ 16 = 0, not Sw(16 + 16) = 32
        ((2,2,2)):((72,144,288))
        (None, 0)
        """
        if crd is _ or (is_tuple(crd) and _all_underscore(crd)):
            return ComposedLayout(self.swizzle, self.offset, slice_(crd, self.inner)), 0
        sw = self.swizzle
        if sw.b == 0:
            sliced, off = _plain_slice_and_offset(crd, self.inner)
            return sliced, off + self.offset
        dynamic = _has_dyn(crd) or isinstance(self.offset, DynInt)
        sliced, only, anti, decays = _slicer(sw, self.inner, crd)
        dcrd = dice_modes(crd, crd)
        # Y/Z bits of the diced part, XOR-ed with the offset; the other bits added (CuTe's two offsets)
        bits, mask = _mixed_bits(only, dcrd)
        off_zy = int(self.offset) ^ bits
        mask |= _dynamic_bits(self.offset)
        off_anti = int(anti(dcrd))
        if not decays:                                # the sliced layout hits Y and Z: no decay
            return ComposedLayout(sw, MixedBits.make(off_zy, mask), sliced), _dyn(off_anti, dynamic)
        zy = sw.yyy_msk | sw.zzz_msk
        return _decayed(sw, sliced, off_zy & zy, mask & zy), _dyn(sw(off_zy) + off_anti, dynamic)


class MixedBits(DynInt):
    """CuTe's ``MixedBits``: a run-time offset some of whose bits are known statically.  Prints as its
    value (the contract's notation); ``dyn_mask`` holds the bits only known at run time, which decide
    which strides of a decayed swizzle layout are dynamic (and so how CuTe prints and coalesces it).

    >>> m = MixedBits.make(88, 0b110000); m, m.dyn_mask, MixedBits.make(88, 0)
    (MixedBits(88), 48, 88)
    """

    def __new__(cls, value, mask):
        obj = super().__new__(cls, value)
        obj.dyn_mask = mask
        return obj

    def __repr__(self):
        return f"MixedBits({int(self)})"

    @classmethod
    def make(cls, value, mask):
        return cls(value, mask) if mask else int(value)


def _dynamic_bits(x) -> int:
    if isinstance(x, MixedBits):
        return x.dyn_mask
    return -1 if isinstance(x, DynInt) else 0


_SLICERS: dict = {}
_DECAYED: dict = {}


def _exact(x):
    """A key of an IntTuple by each leaf's kind and value: a static ``8`` and a ``DynInt`` 8 print (and
    compare) alike, but CuTe treats them apart (the sliced layout keeps the dynamic strides)."""
    if is_tuple(x):
        return tuple(_exact(e) for e in x)
    return (type(x).__name__, x, getattr(x, "dyn_mask", None))


def _layout_key(L):
    """:func:`_exact` of a plain layout's shape and stride (anything else: its own object, kept alive by
    the caller's key tuple holding it)."""
    if type(L) is Layout:
        return _exact(L.shape), _exact(L.stride)
    return ("object", id(L), L)


def _pattern(c):
    if is_tuple(c):
        return tuple(_pattern(e) for e in c)
    return "_" if c is _ else 0


def _slicer(sw, inner, crd):
    """The coordinate-independent part of slicing ``Sw o O o inner`` by ``crd`` (cached): the sliced layout,
    the Y/Z and non-Y/Z projections of the diced layout, and whether the result decays."""
    key = (sw.b, sw.m, sw.s, _layout_key(inner), _pattern(crd))
    hit = _SLICERS.get(key)
    if hit is None:
        only_zy, anti_zy = _projections(sw)
        sliced = slice_(crd, inner)
        diced = dice(crd, inner)
        only, anti = _compose(only_zy, diced), _compose(anti_zy, diced)
        _mixed_bits(only, zero_underscores(dice_modes(crd, crd)))          # CuTe's static check on the diced modes
        # the Y/Z bits the remaining (sliced) layout reaches, at its last coordinate
        pz = _compose(only_zy, sliced)
        active = int(_last_value(pz))
        hit = (sliced, only, anti, not (active & ~sw(active)))
        if len(_SLICERS) > 4096:
            _SLICERS.clear()
        _SLICERS[key] = hit
    return hit


def _last_value(L):
    """``L(size(L) - 1)``: the value at the last coordinate, every mode at its largest, ``sum((s-1)*d)``
    (0 for an empty layout).  A mode of stride 0 adds nothing whatever its extent, so a symbolic extent
    the swizzle's projection does not see leaves the value an integer."""
    shape, stride = flatten_leaves(L.shape), flatten_leaves(L.stride)
    if any(s == 0 for s in shape):
        return 0
    return sum(((s - 1) * d for s, d in zip(shape, stride) if d != 0), 0)


def _decayed(sw, sliced, off_zy, dynamic):
    """``composition(swizzle_layout(off_zy, dynamic), sliced)`` (cached): the decayed plain layout."""
    key = (sw.b, sw.m, sw.s, _layout_key(sliced), off_zy, dynamic)
    hit = _DECAYED.get(key)
    if hit is None:
        hit = _compose(swizzle_layout(sw, off_zy, dynamic), sliced)
        if len(_DECAYED) > 4096:
            _DECAYED.clear()
        _DECAYED[key] = hit
    return hit


def _compose(A, B):
    """``composition(A, B)`` inside CuTe's ``slice_and_offset``: with static shapes its divisibility
    conditions are CuTe static_asserts (a swizzle over a pitch that is not a power of two)."""
    try:
        return composition(A, B)
    except AlgebraError as e:
        a = "Stride Divisibility Condition" if "stride" in str(e) else "Shape Divisibility Condition"
        raise CuteStaticAssert(f"slicing a swizzled layout composes {A} with {B}: {e}", a) from None


def _projections(sw: Swizzle):
    """CuTe's projections of an index onto the swizzle's Y/Z bits and onto the other bits, as layouts over
    ``(2^M, 2^B, 2^(|S|-B), 2^B, 1)`` (the last mode extends past the swizzle)."""
    B, M, S = sw.b, sw.m, abs(sw.s)
    shape = (1 << M, 1 << B, 1 << (S - B), 1 << B, 1)
    full = (1, 1 << M, 1 << (M + B), 1 << (M + S), 1 << (M + B + S))
    only = Layout(shape, (0, full[1], 0, full[3], 0))
    anti = Layout(shape, (full[0], 0, full[2], 0, full[4]))
    return only, anti


def _mixed_bits(L: Layout, crd):
    """CuTe's ``to_mixed_bits(L, crd)``: the XOR over the modes of ``(c * d) & ((s - 1) * d)``, and the
    bits that are only known at run time (those of modes with a run-time coordinate).  A mode whose
    ``s * d`` is neither 0 nor a power of two is a compile-time error in CuTe."""
    acc = [0, 0]

    def go(s, d, c):
        if is_tuple(s):
            for si, di, ci in zip(s, d, c):
                go(si, di, ci)
            return
        sd = int(s) * int(d)
        if sd != 0 and (sd < 0 or sd & (sd - 1)):
            raise CuteStaticAssert(f"slicing a swizzled layout: the mode {s}:{d} has size x stride = {sd}, not a "
                                   f"power of two (to_mixed_bits)", "Requires pow2 shape*stride.")
        acc[0] ^= (int(c) * int(d)) & ((int(s) - 1) * int(d))
        if isinstance(c, DynInt):
            acc[1] |= (int(s) - 1) * int(d)

    go(L.shape, L.stride, idx2crd(crd, L.shape))
    return acc[0], acc[1]


def _dyn(v, dynamic):
    return DynInt(v) if dynamic else v


def _has_dyn(c):
    if is_tuple(c):
        return any(_has_dyn(e) for e in c)
    return isinstance(c, DynInt)



def _all_underscore(c):
    if is_tuple(c):
        return all(_all_underscore(e) for e in c)
    return c is _


def swizzle_layout(sw: Swizzle, off_zy: int, dynamic) -> Layout:
    """The plain layout equal to ``x -> Sw(off_zy ^ x) ^ Sw(off_zy)`` on the swizzle's bits.

    Shape ``(2^M, (2..)[B], 2^(|S|-B), (2..)[B], 1)`` (CuTe ``make_swizzle_layout``).  ``dynamic``: True
    (every stride dynamic), False, or the mask of the offset bits known only at run time (a stride that
    depends on a run-time bit is dynamic, the others static, as CuTe's ``conditional_return`` makes them).

    >>> print(swizzle_layout(Swizzle(3, 3, 3), 128, False))
    (8,(2,2,2),1,(2,2,2),1):(1,(8,-16,32),64,(72,144,288),512)
    """
    B, M, S = sw.b, sw.m, sw.s
    mask = -1 if dynamic is True else 0 if dynamic is False else int(dynamic)
    aS = abs(S)
    zlo = M - min(0, S)           # lowest Z bit
    ylo = M + max(0, S)           # lowest Y bit
    Z, Y = 1 << zlo, 1 << ylo
    zg, yg = [], []
    for i in range(B):
        ybit = 1 << (ylo + i)
        zbit = 1 << (zlo + i)
        zs = -(Z << i) if off_zy & ybit else (Z << i)
        ys = ((Y - Z) << i) if off_zy & zbit else ((Y + Z) << i)
        zg.append(_dyn(zs, bool(mask & ybit)))
        yg.append(_dyn(ys, bool(mask & zbit)))
    lo, hi = (zg, yg) if zlo < ylo else (yg, zg)
    two = tuple([2] * B)
    shape = (1 << M, two, 1 << (aS - B), two, 1)
    stride = (1, tuple(lo), 1 << (M + B), tuple(hi), 1 << (M + B + aS))
    return Layout(shape, stride)


# ---------------------------------------------------------------- composition dispatch


def compose_left(A, B):
    """``composition(A, B)`` where A is a Swizzle or ComposedLayout."""
    if getattr(A, "is_swizzle", False):
        if getattr(B, "is_swizzle", False):
            if A.s != B.s:
                raise AlgebraError(f"composition: {A} and {B} have different shifts")
            return make_swizzle(A.yyy_msk ^ B.yyy_msk, A.zzz_msk ^ B.zzz_msk)
        if isinstance(B, Layout):
            return B if A.b == 0 else ComposedLayout(A, 0, B)
        if getattr(B, "is_composed", False):
            return ComposedLayout(compose_left(A, B.swizzle), B.offset, B.inner) if B.offset == 0 else _unsupported(A, B)
        raise AlgebraError(f"composition: cannot compose {A} with {B!r}")
    if getattr(B, "is_composed", False) or getattr(B, "is_swizzle", False):
        return _unsupported(A, B)
    return ComposedLayout(A.swizzle, A.offset, composition(A.inner, B))


def _unsupported(A, B):
    raise AlgebraError(f"composition: {A} o {B} is not supported")


def compose_right(L, B):
    """``composition(L, B)`` where L is a Layout and B a Swizzle or ComposedLayout."""
    if getattr(B, "is_swizzle", False):
        if B.b == 0:
            return L
        sw = make_swizzle(int(L(B.yyy_msk)), int(L(B.zzz_msk)))
        return compose_left(sw, L)
    if B.offset != 0:
        raise AlgebraError(f"composition: {L} o {B} needs a zero offset")
    return composition(compose_right(L, B.swizzle), B.inner)


def right_inverse_composed(C):
    """``right_inverse`` of a Swizzle (itself) or of ``Sw o 0 o B``: ``right_inverse(B) o Sw``."""
    return _inverse_composed(C, right_inverse)


def left_inverse_composed(C):
    """``left_inverse`` of a Swizzle (itself) or of ``Sw o 0 o B``: ``left_inverse(B) o Sw``."""
    return _inverse_composed(C, left_inverse)


def _inverse_composed(C, inverse):
    """A swizzle is its own inverse, so ``inverse(Sw o 0 o B) = inverse(B) o Sw``."""
    if getattr(C, "is_swizzle", False):
        return C
    if C.offset != 0:
        raise AlgebraError(f"{inverse.__name__}: {C} needs a zero offset")
    return composition(inverse(C.inner), C.swizzle)
