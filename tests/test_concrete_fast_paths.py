"""The prover's whole-array decisions agree with the loops they stand for (hypothesis, random input).

Each fast path of the concrete prover (thread maps' coverage / exactly_once / in_bounds on every
element access at once, the Hopper checks' one-owner-per-byte test and per-element tables, the
copy plan's view tables, a parameter's first value, a stride's divisibility shortcut) is run
against the point-by-point computation it replaces, on random input that includes the failing
cases (where the loop then tells the counterexample: the same one).
"""
from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symlayout.algebra.layout import Layout
from symlayout.config import Param
from symlayout.errors import ConfigError
from symlayout.prove.decide import tables
from symlayout.prove.threadmaps import obligations as T
from symlayout.threadmap.maps import OffsetThreadMap, PitchLinearStripminedThreadMap

PROP = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _both(f, m):
    """``f(m)`` with the whole-array path, then with the loops only."""
    m.__dict__.pop("_element_arrays", None)
    fast = f(m, time.perf_counter() + 1e6)
    assert m.__dict__.get("_element_arrays") is not None or not m.starts()
    whole = T._element_arrays
    T._element_arrays = lambda m, deadline=None: None
    try:
        slow = f(m, time.perf_counter() + 1e6)
    finally:
        T._element_arrays = whole
    return fast, slow


def _key(res):
    cex, n = res
    if cex is None:
        return None, n
    return (cex.message, cex.thread, cex.value, cex.element, cex.address_bytes, cex.extra), n


@PROP
@given(a=st.integers(0, 6), b=st.integers(0, 12), c=st.integers(-2, 4), threads=st.sampled_from([2, 4, 8, 32]),
       iters=st.integers(1, 4), extent=st.sampled_from([8, 16, 32, 100, 128]), epa=st.sampled_from([1, 2, 4]))
def test_offset_maps_whole_array_vs_loops(a, b, c, threads, iters, extent, epa):
    try:
        m = T.MapModel.of(OffsetThreadMap(f"t * {a} + i * {b} + {c}", threads, iters, extent, epa), type="half_t")
    except Exception:                          # (a map the constructor refuses: nothing to compare)
        return
    for name in ("coverage", "exactly_once", "in_bounds"):
        fast, slow = _both(T._EXHAUSTIVE[name], m)
        assert _key(fast) == _key(slow), name


@PROP
@given(shape=st.sampled_from([(64, 8), (32, 4), (128, 16), (16, 16)]), threads=st.sampled_from([8, 16, 32, 64]),
       vec=st.sampled_from([1, 2, 4, 8]))
def test_pitch_linear_maps_whole_array_vs_loops(shape, threads, vec):
    try:
        m = T.MapModel.of(PitchLinearStripminedThreadMap(shape, threads, vec), type="half_t")
    except Exception:
        return
    for name in ("coverage", "exactly_once", "in_bounds"):
        fast, slow = _both(T._EXHAUSTIVE[name], m)
        assert _key(fast) == _key(slow), name


def test_threadmap_fast_path_refutes_like_the_loop():
    m = T.MapModel.of(OffsetThreadMap("t % 4", 8, 1, 4))               # every element twice
    fast, slow = _both(T._ex_exactly_once, m)
    assert fast[0] is not None and _key(fast) == _key(slow)


@PROP
@given(st.lists(st.integers(0, 40), min_size=0, max_size=60), st.integers(1, 5))
def test_one_owner_vs_first_occurrence(addrs, nels):
    a = np.array(addrs, dtype=np.int64)
    els = (a * 7 + 3) % nels if nels > 1 else np.zeros_like(a)
    first = {}
    ok = True
    for x, e in zip(a.tolist(), els.tolist()):
        ok &= first.setdefault(x, e) == e
    assert tables.one_owner(a, els) == ok
    assert tables.one_owner(a, np.arange(len(a))) == (len(set(addrs)) == len(addrs))


def test_one_owner_declines_negative_keys():
    assert tables.one_owner(np.array([-1, 3]), np.array([0, 1])) is False


@pytest.mark.parametrize("n", [8, 64, 128, 256])
def test_accumulator_table_is_the_per_element_function(n):
    from symlayout.arch import gmma as arch
    from symlayout.prove.hopper.obligations import _ptx_table
    cnt = arch.accumulator_count(n)
    want = [0] * (128 * cnt)
    for t in range(128):
        for i in range(cnt):
            r, c = arch.accumulator_elem(t, i)
            want[t + 128 * i] = r + 64 * c
    got = _ptx_table("C", n)
    assert got == want and all(type(x) is int for x in got)


def test_tma_element_is_the_elements_entry():
    from symlayout.atoms.gmma import layout_atom
    from symlayout.tiled.tma import tma_model
    sA = layout_atom("K_SW128", "half_t").tile_to_shape((128, 64, 2))
    t = tma_model("half_t", ((1024, 512), (512, 1)), sA, (128, 64), multicast=2)
    for w in (t.writes[0], t.writes[-1]):
        allel = list(t.elements(w))
        for b in (0, 1, 63, 64, len(allel) - 1):
            assert t.element(w, b) == allel[b]


@given(st.integers(0, 40), st.integers(0, 60), st.integers(1, 9))
def test_param_first_value(lo, hi, k):
    p = Param("x", lo, hi, k)
    try:
        want = p.values()[0]
    except IndexError:
        with pytest.raises(IndexError):
            p.first_value()
        return
    assert p.first_value() == want


def test_param_first_value_of_too_many_raises_as_values():
    p = Param("x", 1, 10 ** 9)
    with pytest.raises(ConfigError):
        p.values()
    with pytest.raises(ConfigError):
        p.first_value()


@PROP
@given(st.lists(st.integers(1, 8), min_size=1, max_size=3), st.lists(st.integers(0, 30), min_size=3, max_size=3),
       st.integers(0, 50))
def test_view_values_vs_point_by_point(shape, stride, off):
    from symlayout.tiled.copy import view_values
    L = Layout(tuple(shape), tuple(stride[:len(shape)]))
    assert view_values((L, off)) == [int(off + L(i)) for i in range(L.size())]


@given(st.lists(st.integers(0, 500), max_size=80))
def test_distinct_is_sorted_unique(keys):
    k = np.array(keys, dtype=np.int64)
    assert tables.distinct(k, 501).tolist() == np.unique(k).tolist()


def test_stride_shortcut_agrees_with_sympy():
    import sympy
    from symlayout.algebra.symbolic import decide
    from symlayout.prove.hopper.obligations import _multiple_of
    q, r = sympy.symbols("q r", integer=True, positive=True)
    for e in (128 * q, 128 * q + 32 * r, 64 * q * r, 8 * q, 128 * q + 8, 16 * q ** 2, sympy.Integer(48)):
        if _multiple_of(e, 16):
            assert decide(sympy.Eq(sympy.Mod(e, 16), 0)) is True, e
    assert not _multiple_of(8 * q, 16) and not _multiple_of(16 * sympy.Symbol("x"), 16)


@pytest.mark.parametrize("atom,major,layout", [
    ("SM90_64x128x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>", "K_SW128", (128, 64, 2)),
    ("SM90_64x64x16_F32F16F16_SS<GMMA::Major::MN,GMMA::Major::MN>", "MN_SW64", (128, 32)),
    ("SM90_64x128x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>", "K_INTER", (64, 32, 3)),
])
def test_ptx_reads_is_every_read_ptx_array(atom, major, layout):
    from symlayout.atoms.gmma import layout_atom
    from symlayout.tiled.gmma import gmma_operand_model
    from symlayout.tiled.mma import make_tiled_mma
    mma = make_tiled_mma(atom, (2, 1, 1))
    m = gmma_operand_model(mma, "A", "half_t", layout_atom(major, "half_t").tile_to_shape(layout))
    assert m.error is None
    for base in (0, 16, 48, 1024):
        whole = m.ptx_reads(base)
        assert whole.tolist() == [m.ptx_array(rd, base).tolist() for rd in m.reads]
        assert m.read_arrays()[1].tolist() == [rd.offsets for rd in m.reads]


@PROP
@given(st.lists(st.integers(-3, 60), max_size=40), st.lists(st.integers(-5, 70), max_size=30))
def test_g2s_first_index_lookup_vs_sort(table, xs):
    from symlayout.prove.datapath.g2s import _first_index, _lookup
    t, x = np.array(table, dtype=np.int64), np.array(xs, dtype=np.int64)
    want = [table.index(v) if v in table else -1 for v in xs]
    u, first = _first_index(t)
    assert _lookup(u, first, x).tolist() == want
    assert _lookup(u, first, x.reshape(-1, 1)).ravel().tolist() == want
