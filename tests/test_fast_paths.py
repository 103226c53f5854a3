"""The concrete fast paths compute what the general formulas compute (hypothesis, random concrete input).

``layout.FAST_PATHS = False`` sends every operation down the general path (the reference); each
operation is run both ways on the same random input and must give the same result (print form,
leaf types: ``int`` stays ``int``) or raise the same :class:`AlgebraError` with the same message.
The inputs include what the fast paths decline (size-0 modes, negative strides, non-divisible
compositions, non-injective complements), so declining is tested too.
"""
from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symlayout.algebra import layout as L
from symlayout.algebra import int_tuple as it
from symlayout.algebra import notation
from symlayout.algebra.composed import Swizzle
from symlayout.algebra.int_tuple import _
from symlayout.algebra.layout import Layout
from symlayout.errors import AlgebraError, SymlayoutError

PROP = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.filter_too_much])

sizes = st.integers(0, 8).map(lambda x: x if x else 1) | st.sampled_from([0, 1, 2, 4, 16])
strides = st.integers(-6, 40)


def _shapes(max_leaves=4):
    return st.recursive(sizes, lambda kids: st.lists(kids, min_size=1, max_size=3).map(tuple),
                        max_leaves=max_leaves).filter(lambda s: it.product(s) <= 4096)


def _fill(shape, draw, leaf):
    if type(shape) is tuple:
        return tuple(_fill(e, draw, leaf) for e in shape)
    return draw(leaf)


@st.composite
def layouts(draw, max_leaves=4):
    shape = draw(_shapes(max_leaves))
    return Layout(shape, _fill(shape, draw, strides))


@st.composite
def tilers(draw):
    """What the divides, products and composition take: a layout, an int, ``_`` or a tuple of those."""
    leaf = layouts(3) | st.integers(-1, 12) | st.just(_)
    return draw(leaf | st.lists(leaf, min_size=1, max_size=3).map(tuple))


cotargets = st.none() | st.integers(-2, 600) | st.lists(st.integers(0, 20), min_size=1, max_size=3).map(tuple)


@contextlib.contextmanager
def general_path():
    saved = L.FAST_PATHS, it.FAST_PATHS
    L.FAST_PATHS = it.FAST_PATHS = False
    try:
        yield
    finally:
        L.FAST_PATHS, it.FAST_PATHS = saved


def _typed(x):
    """A result with its leaf types (``4`` and ``DynInt(4)`` differ)."""
    if isinstance(x, tuple):
        return tuple(_typed(e) for e in x)
    if isinstance(x, Layout):
        return ("L", _typed(x.shape), _typed(x.stride), str(x))
    if getattr(x, "is_composed", False):
        return ("C", str(x), _typed(x.offset), _typed(x.inner))
    if getattr(x, "is_swizzle", False):
        return ("S", str(x))
    return (type(x).__name__, x)


def _outcome(fn, *args):
    try:
        return "ok", _typed(fn(*args))
    except AlgebraError as e:
        return "error", str(e)
    except Exception as e:               # the same exception both ways (int_tuple is not guarded)
        return "raised", f"{type(e).__name__}: {e}"


def same_both_ways(fn, *args):
    fast = _outcome(fn, *args)
    with general_path():
        general = _outcome(fn, *args)
    assert fast == general, (fn.__name__, [str(a) for a in args])
    return fast


def _fresh(x):
    """The same value as new objects (no cached flat forms carried between the two runs)."""
    if isinstance(x, Layout):
        return Layout(x.shape, x.stride)
    if isinstance(x, tuple):
        return tuple(_fresh(e) for e in x)
    return x


UNARY = [L.coalesce, L.filter, L.right_inverse, L.left_inverse, Layout.size, Layout.cosize]
BINARY = [L.composition, L.logical_divide, L.zipped_divide, L.tiled_divide, L.flat_divide,
          L.logical_product, L.zipped_product, L.tiled_product, L.blocked_product, L.raked_product]


@PROP
@given(layouts())
def test_unary_ops_fast_equals_general(A):
    for fn in UNARY:
        same_both_ways(fn, _fresh(A))


@PROP
@given(layouts(), tilers())
def test_binary_ops_fast_equals_general(A, T):
    for fn in BINARY:
        same_both_ways(fn, _fresh(A), _fresh(T))


profiles = st.recursive(st.integers(0, 2) | st.none(), lambda kids: st.lists(kids, max_size=3).map(tuple),
                        max_leaves=5)


@PROP
@given(layouts(), profiles)
def test_coalesce_by_profile_fast_equals_general(A, p):
    same_both_ways(L.coalesce, _fresh(A), p)
    same_both_ways(L.filter, _fresh(A), p)


@PROP
@given(layouts(), cotargets)
def test_complement_fast_equals_general(A, c):
    same_both_ways(L.complement, _fresh(A), c)


@PROP
@given(layouts(3), layouts(3))
def test_chains_fast_equals_general(A, B):
    """Results of fast paths fed back in (their cached flat forms) agree too."""
    def chain(a, b):
        c = L.logical_divide(a, b)
        return L.composition(L.coalesce(c), L.right_inverse(b)), L.complement(c, 4096), c[0], c.size()
    same_both_ways(chain, A, B)


int_trees = st.recursive(st.integers(-3, 9), lambda kids: st.lists(kids, max_size=3).map(tuple), max_leaves=6)


@PROP
@given(int_trees, int_trees, int_trees | st.none(), st.integers(0, 300))
def test_int_tuple_fast_equals_general(crd, shape, stride, idx):
    """crd2idx / idx2crd / shape_div on random (often mismatched) integer trees."""
    same_both_ways(it.crd2idx, crd, shape, stride)
    same_both_ways(it.crd2idx, idx, shape, stride)
    same_both_ways(it.idx2crd, idx, shape, stride)
    same_both_ways(it.idx2crd, crd, shape, stride)
    same_both_ways(it.shape_div, shape, crd)


@PROP
@given(layouts(4), st.integers(0, 4096))
def test_coordinates_fast_equals_general(A, i):
    """Well-formed coordinates: idx2crd then crd2idx on a layout's own shape and stride."""
    i %= max(A.size(), 1)
    kind, c = same_both_ways(it.idx2crd, i, A.shape)
    if kind == "ok":
        crd = it.idx2crd(i, A.shape)
        same_both_ways(it.crd2idx, crd, A.shape, A.stride)
        same_both_ways(it.crd2idx, crd, A.shape)
    same_both_ways(it.idx2crd, i, A.shape, A.stride)
    same_both_ways(it.crd2idx, i, A.shape, A.stride)


def test_fast_paths_decline_to_the_general_errors():
    """Inputs the general path rejects are rejected with its message."""
    cases = [(L.composition, Layout((4, 3), (1, 8)), Layout(2, 6)),      # stride divisibility
             (L.composition, Layout((4, 3), (1, 8)), Layout(6, 1)),      # shape divisibility
             (L.complement, Layout((2, 2), (1, 1)), 8),                   # not injective
             (L.complement, Layout(4, -1), 8),                            # negative stride
             (L.left_inverse, Layout((2, 3), (2, 3))),                    # divisibility
             (L.logical_divide, Layout(8, 1), (2, 2))]                    # tiler rank
    for fn, *args in cases:
        kind, msg = same_both_ways(fn, *args)
        assert kind == "error", (fn.__name__, msg)


@PROP
@given(layouts(3), tilers())
def test_memoised_results_equal_general(A, T):
    """A memo hit (fresh objects of the same values) gives what the general path gives."""
    with memo_on():
        for fn in (L.composition, L.logical_divide, L.logical_product, L.complement):
            first = _outcome(fn, _fresh(A), _fresh(T) if fn is not L.complement else 64)
            again = same_both_ways(fn, _fresh(A), _fresh(T) if fn is not L.complement else 64)
            assert first == again


@contextlib.contextmanager
def memo_on():
    saved = L.MEMO
    L.MEMO = True
    try:
        yield
    finally:
        L.MEMO = saved


def test_memo_keys_are_exact():
    """A DynInt (equal to its int) or a bool (equal to 0/1) never hits a static entry."""
    from symlayout.algebra.symbolic import DynInt
    with memo_on():
        _memo_keys_are_exact(DynInt)


def _memo_keys_are_exact(DynInt):
    A = Layout((8, 4), (1, 8))
    static = L.logical_divide(A, Layout(4, 1))
    dynamic = L.logical_divide(A, Layout(DynInt(4), 1))
    with general_path():
        assert _typed(dynamic) == _typed(L.logical_divide(A, Layout(DynInt(4), 1)))
    assert _typed(static) != _typed(dynamic)
    assert _typed(L.complement(A, 64)) == _typed(L.complement(A, 64))
    same_both_ways(L.complement, A, (DynInt(64),))
    same_both_ways(L.composition, A, True)
    L.clear_caches()
    assert not L._MEMO


@st.composite
def injective_layouts(draw):
    """Compact layouts with holes, modes in a random order, some pairs that merge (``s0:d0, s1:s0*d0``),
    an occasional stride 0 or negative stride: where complement / the inverses / the divides mostly
    succeed (random strides mostly make them decline)."""
    n = draw(st.integers(1, 5))
    sizes = [draw(st.sampled_from([1, 2, 2, 3, 4, 8])) for _ in range(n)]
    order = draw(st.permutations(range(n)))
    strides, cur = [0] * n, 1
    for j in order:
        cur *= draw(st.sampled_from([1, 1, 1, 2, 3]))              # a hole (or none)
        strides[j] = draw(st.sampled_from([cur] * 8 + [0, -cur]))
        cur *= sizes[j]
    k = draw(st.integers(0, n - 1))                                # nest a run of modes
    shape = tuple(sizes[:k]) + ((tuple(sizes[k:]),) if n - k > 1 else tuple(sizes[k:]))
    stride = tuple(strides[:k]) + ((tuple(strides[k:]),) if n - k > 1 else tuple(strides[k:]))
    return Layout(shape, stride)


@PROP
@given(injective_layouts(), injective_layouts(), cotargets)
def test_injective_fast_equals_general(A, T, c):
    """complement, the inverses, the divides and products where they mostly succeed."""
    same_both_ways(L.complement, _fresh(A), c)
    same_both_ways(L.complement, _fresh(A))
    for fn in UNARY:
        same_both_ways(fn, _fresh(A))
    for fn in BINARY + [L.make_layout_tv]:
        same_both_ways(fn, _fresh(A), _fresh(T))
    same_both_ways(L.logical_divide, _fresh(A), (_fresh(T), 2))


def test_static_flat_marks_only_concrete_layouts():
    assert L.static_flat(Layout((2, (3, 4)), (12, (1, 3)))) == ((2, 3, 4), (12, 1, 3))
    assert L.static_flat(Layout((2, 0), (1, 2))) is False            # a size-0 mode: general path
    assert L.static_flat(Layout(it.DynInt(4), 1)) is False           # a dynamic int: general path
    assert L.static_flat(Layout((), ())) is False


@PROP
@given(st.integers(0, 4), st.integers(0, 4), st.integers(-6, 6))
def test_swizzle_table_is_the_function(b, m, s):
    if abs(s) < b:
        s = b
    sw = Swizzle(b, m, s)
    n = 1 << (b + m + abs(s))
    assert sw.table() == [sw(x) for x in range(n)]
    assert sw.table(5) == [sw(x) for x in range(5)]
    for j in range(12):                              # every branch: value by value, 2**M blocks, doubling
        assert sw.table(1 << j) == [sw(x) for x in range(1 << j)]


def _read(f):
    try:
        return "ok", _typed(f())
    except SymlayoutError as e:
        return "error", str(e)


@PROP
@given(layouts(4) | tilers() | _shapes(6), st.booleans())
def test_fast_parser_equals_full_parser(x, swizzled):
    """The fast parser reads what the full parser reads (layouts, tilers, int tuples, swizzled layouts)."""
    text = L.format_tiler(x)
    if swizzled and isinstance(x, Layout):
        text = f"Sw<2,1,3> o {len(text) % 3} o {text}"
    fast = _read(lambda: notation.parse(text))
    full = _read(lambda: notation._Parser(text, None).parse_top())
    assert fast == full
    if fast[0] == "ok" and isinstance(notation.parse(text), Layout):
        a, b = notation.parse(text), notation._Parser(text, None).parse_top()
        assert L.static_flat(a) == L.static_flat(Layout(b.shape, b.stride))


@pytest.mark.parametrize("text", ["(4,8", "(4,8):(1", "(0,2):(1,2)", "(4,8):(1,(2,3))", "(-1):(1)", "((4)):(1)",
                                  "(_4,_2):(_1,_4)", "4:1", "(4)", "()", "():()", "_", "(_,4:1)", "(3:3,(2,4):(1,8))",
                                  "3:3:3", "3:(4:5)", "(3:3):(1)", "(08)", "(4,)", "(4-3)", "1_0", "_-3", "-_3", "(--1)",
                                  "1,2", "8:1,", "Sw<3,3,3>", "Sw<3,3,3> o 8", "Sw<3,3,2> o 0 o 4:1",
                                  "Sw<3,3,3> o 16 o (8,64):(64,1)", "Sw<1,2,-3> o (4,2):(2,1)",
                                  "Sw<3,3,3> o 0 o Sw<1,1,1> o 0 o 4:1", "(" * 70 + "4" + ")" * 70,
                                  "(" * 63 + "4" + ")" * 63, "(" * 64 + "4" + ")" * 64, "(" * 65 + "4" + ")" * 65,
                                  "(" + "1" * 40 + ")", "(4,8):(1,-2)"])
def test_fast_parser_agrees_or_falls_back(text):
    fast = _read(lambda: notation.parse(text))
    assert fast == _read(lambda: notation._Parser(text, None).parse_top())


@PROP
@given(layouts(6), st.integers(0, 2))
def test_function_table_vectorised_equals_python(A, scale):
    """function_table's numpy path (numpy loaded, large tables) gives the pure Python path's list."""
    import numpy  # noqa: F401  (loaded: the vectorised path may run)
    A = Layout(A.shape, it.repeat_like(A.stride, 0) if scale == 2 else A.stride)
    saved = L.VECTOR_MIN
    try:
        L.VECTOR_MIN = 1
        fast = _outcome(L.function_table, _fresh(A))
        L.VECTOR_MIN = 1 << 62
        slow = _outcome(L.function_table, _fresh(A))
    finally:
        L.VECTOR_MIN = saved
    assert fast == slow
    if fast[0] == "ok":
        assert all(type(x) is int for x in L.function_table(_fresh(A)))
