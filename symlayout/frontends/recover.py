"""Recover what a kernel author wrote from what a compiled TiledCopy keeps.

``make_tiled_copy(atom, thr_layout, val_layout)`` keeps only its result,
``TiledCopy<Atom, LayoutCopy_TV, Tiler_MN>``:

    layout_mn = raked_product(thr_layout, val_layout)          # (M,N) -> (thr, val)
    layout_tv = right_inverse(layout_mn).with_shape(size(thr_layout), size(val_layout))
    tiler     = product_each(shape(layout_mn))

:func:`thr_val_from_tv` reads ``(thr_layout, val_layout)`` back from
``(layout_tv, tiler)``: thread 0's values give the value block and its layout,
the first value of each thread gives the thread layout; the candidate is
accepted only if :func:`make_tiled_copy_tv` rebuilds the *same function*
``(thr, val) -> coordinate`` and the same tiler.  Otherwise there is no
``(thr, val)`` form and the front end writes ``tv``/``tiler``.

>>> from symlayout.algebra.notation import parse_layout
>>> thr, val = thr_val_from_tv(parse_layout("((8,16),8):((128,1),16)"), (16, 64))
>>> print(thr, val)
(16,8):(8,1) (1,8):(0,1)
>>> format_val(val)
'(1,8)'
"""
from __future__ import annotations

from ..algebra import int_tuple as it
from ..algebra.layout import Layout, composition, function_table, raked_product, right_inverse, select
from ..algebra.notation import parse
from .document import strip_static

__all__ = ["make_tiled_copy_tv", "same_function", "thr_val_from_tv", "transpose_thr_val", "format_val",
           "tiler_extents", "bytes_swizzle_to_elements"]


def make_tiled_copy_tv(thr: Layout, val: Layout) -> tuple[Layout, tuple]:
    """``(layout_tv, tiler)`` of ``make_tiled_copy(atom, thr, val)`` (CuTe's formula above).

    >>> tv, tiler = make_tiled_copy_tv(Layout((16, 8), (8, 1)), Layout((1, 8)))
    >>> function_table(tv)[:10], tiler
    ([0, 128, 256, 384, 512, 640, 768, 896, 1, 129], (16, 64))
    """
    layout_mn = raked_product(thr, val)
    tv = composition(right_inverse(layout_mn), Layout((thr.size(), val.size())))
    return tv, tuple(it.product_each(layout_mn.shape))


def same_function(a: Layout, b: Layout) -> bool:
    """Equal size and equal values everywhere (the layouts are the same function).

    >>> same_function(Layout((1, 8), (1, 1)), Layout((1, 8), (0, 1))), same_function(Layout(4), Layout(4, 2))
    (True, False)
    """
    return a.size() == b.size() and function_table(a) == function_table(b)


def tiler_extents(text: str) -> tuple | None:
    """The extents of a ``Tiler_MN`` as CuTe prints it: a shape ``(_16,_64)`` or a tile of
    identity layouts ``(16:1,64:1)``; ``None`` for any other tile (a tile of non-identity
    layouts is a permutation, not a plain extent).

    >>> tiler_extents("(_16,_64)"), tiler_extents("(32:1,32:1)"), tiler_extents("(4:2,8:1)")
    ((16, 64), (32, 32), None)
    """
    try:
        t = parse(strip_static(text))
    except Exception:  # noqa: BLE001 - anything CuTe prints that we cannot read
        return None
    if not isinstance(t, tuple):
        t = (t,)
    out = []
    for m in t:
        if isinstance(m, int):
            out.append(m)
        elif isinstance(m, Layout) and same_function(m, Layout(m.size())):
            out.append(m.size())
        else:
            return None
    return tuple(out)


def _coord(idx: int, M: int) -> tuple[int, int]:
    return idx % M, idx // M


def thr_val_from_tv(tv: Layout, tiler) -> tuple[Layout, Layout] | None:
    """``(thr_layout, val_layout)`` with ``make_tiled_copy_tv(thr, val) == (tv, tiler)``, or ``None``.

    Finds affine 2-D thread and value layouts (what kernels write: ``Layout<Shape<_16,_8>,
    Stride<_8,_1>>``, ``Layout<Shape<_1,_8>>``); anything else returns ``None``.

    >>> thr, val = thr_val_from_tv(*make_tiled_copy_tv(Layout((16, 8), (1, 16)), Layout((8, 1))))
    >>> print(thr, format_val(val))
    (16,8):(1,16) (8,1)
    >>> thr_val_from_tv(Layout(((2, 2), 2), ((1, 4), 2)), (8, 1)) is None   # thread 0 holds rows 0 and 2: no value block
    True
    """
    tiler = tuple(tiler)
    if len(tiler) != 2 or tv.rank() != 2 or not all(isinstance(x, int) for x in tiler):
        return None
    M, N = tiler
    T, V = tv[0].size(), tv[1].size()
    if not isinstance(T, int) or not isinstance(V, int) or T * V != M * N:
        return None
    table = function_table(tv)
    # thread 0's values: the value block and its layout
    v_crd = [_coord(table[v * T], M) for v in range(V)]
    vm, vn = max(c[0] for c in v_crd) + 1, max(c[1] for c in v_crd) + 1
    if vm * vn != V or M % vm or N % vn:
        return None
    inv = {c: v for v, c in enumerate(v_crd)}
    val = Layout((vm, vn), (inv.get((1, 0), 0) if vm > 1 else 0, inv.get((0, 1), 0) if vn > 1 else 0))
    if function_table(val) != [inv.get(_coord(i, vm), -1) for i in range(V)]:
        return None
    v0 = inv.get((0, 0))
    if v0 is None:
        return None
    # each thread's value at the block origin gives its coordinate in the thread layout
    Tm, Tn = M // vm, N // vn
    if Tm * Tn != T:
        return None
    at = {}
    for t in range(T):
        m, n = _coord(table[t + v0 * T], M)
        if m % vm or n % vn:
            return None
        at[(m // vm, n // vn)] = t
    thr = Layout((Tm, Tn), (at.get((1, 0), 0) if Tm > 1 else 0, at.get((0, 1), 0) if Tn > 1 else 0))
    tv2, tiler2 = make_tiled_copy_tv(thr, val)
    if tiler2 != (M, N) or not same_function(tv2, tv):
        return None
    return thr, val


def transpose_thr_val(thr: Layout, val: Layout) -> tuple[Layout, Layout]:
    """The ``(thr, val)`` of the same copy seen through the transposed tile ``(N,M)``:
    ``raked_product`` works mode by mode, so swapping the modes of both swaps those of the result.

    >>> thr, val = transpose_thr_val(Layout((16, 8), (8, 1)), Layout((1, 8)))
    >>> print(thr, format_val(val))
    (8,16):(1,8) (8,1)
    """
    return select(thr, 1, 0), select(val, 1, 0)


def format_val(val: Layout) -> str:
    """A value layout as a kernel writes it: the bare shape when it is the compact
    column-major layout of that shape (``Layout<Shape<_1,_8>>``), else the full layout.

    >>> format_val(Layout((1, 8), (0, 1))), format_val(Layout((2, 4), (4, 1)))
    ('(1,8)', '(2,4):(4,1)')
    """
    compact = Layout(val.shape)
    if same_function(val, compact):
        return str(compact).split(":")[0]
    return str(val)


def bytes_swizzle_to_elements(bits: int, base: int, shift: int, elem_bits: int) -> tuple[int, int, int] | None:
    """A swizzle that acts on byte addresses (CuTe's swizzled pointer, the DSL's
    ``get_tensor(layout, swizzle=...)``) as the same function of element offsets:
    ``Sw<B,M,S>`` on bytes is ``Sw<B,M-log2(bytes per element),S>`` on elements when the
    element is at least a byte and ``M`` keeps the element's own bits; else ``None``.

    >>> bytes_swizzle_to_elements(3, 4, 3, 16), bytes_swizzle_to_elements(3, 4, 3, 8), bytes_swizzle_to_elements(2, 1, 3, 32)
    ((3, 3, 3), (3, 4, 3), None)
    """
    if elem_bits % 8 or elem_bits <= 0:
        return None
    k = (elem_bits // 8).bit_length() - 1
    if (1 << k) * 8 != elem_bits or base < k:
        return None
    return bits, base - k, shift
