"""TiledMMA: ``make_tiled_mma(atom, atom_layout, permutation)`` exactly as CuTe builds it.

>>> from symlayout.atoms.mma import get_mma_atom
>>> mma = make_tiled_mma(get_mma_atom("SM80_16x8x16_F16F16F16F16_TN"), "(2,2,1)")
>>> print(mma.thr_layout_vmnk), mma.tile_shape(), mma.size()
(32,2,2,1):(1,32,64,0)
(None, (32, 16, 16), 128)
>>> print(mma.get_layoutA_TV())
((4,8,2,2),((2,2,2),(1,1))):((64,1,16,0),((32,8,256),(0,0)))
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..algebra import int_tuple as it
from ..errors import TilingError
from ..algebra.layout import (Layout, append, complement, composition, make_fragment_like, make_layout, right_inverse,
                      slice_and_offset, tiled_product, zipped_divide, logical_divide, is_layout)
from ..algebra.int_tuple import _
from ..algebra.notation import parse
from ..algebra.symbolic import DynInt
from ..atoms.mma import get_mma_atom
from ..atoms import umma as _umma  # noqa: F401  (registers the SM100 UMMA atoms with get_mma_atom)


def per_layout(owner, key, L, f):
    """``f()`` memoised on ``owner`` for ``key`` and the layout ``L``: by value when ``L`` is concrete
    (every shape and stride a plain ``int``, a swizzle and offset of plain ints -- :func:`value_key`),
    else by the layout *object* (kept alive with the answer: a static and a dynamic stride print alike,
    so equal-looking symbolic layouts are not shared).  Configurations over the same tile shape, and
    one configuration's checks and model slicing the same smem layout several times, compute each
    partition once.  At most 512 answers per owner."""
    memo = owner.__dict__.setdefault("_per_layout", {})
    vk = value_key(L)
    k = (key, vk) if vk is not None else (key, id(L))
    hit = memo.get(k)
    if hit is not None and (vk is not None or hit[0] is L):
        return hit[1]
    if len(memo) >= 512:
        memo.clear()
    v = f()
    memo[k] = (L, v)
    return v


def _ints(t) -> bool:
    if type(t) is int:
        return True
    return type(t) is tuple and all(_ints(x) for x in t)


def value_key(L):
    """A hashable key of a concrete layout by value, or None: a ``Layout`` whose shape and stride are
    plain ints (no ``DynInt``, no symbol), a ``Sw<B,M,S> o off o inner`` of such an inner layout and a
    plain int offset.  Two layouts with the same key are the same function with the same static-ness,
    so every CuTe partition of them is the same."""
    if type(L) is Layout:
        return ("L", L.shape, L.stride) if _ints(L.shape) and _ints(L.stride) else None
    if type(L).__name__ == "ComposedLayout":
        sw, off = L.swizzle, L.offset
        if type(sw).__name__ != "Swizzle" or type(off) is not int or not _ints((sw.b, sw.m, sw.s)):
            return None
        inner = value_key(L.inner)
        return None if inner is None else ("C", sw.b, sw.m, sw.s, off, inner)
    return None


def _as_layout(x, what):
    if isinstance(x, str):
        x = parse(x)
    if is_layout(x):
        return x
    if isinstance(x, (int, tuple)):
        return Layout(x)
    raise TilingError(f"{what}: expected a layout or a shape, got {x!r}")


def _as_perm(p):
    """A PermutationMNK entry: ``_``, an extent (int) or a layout."""
    if p is None or p is _:
        return _
    if isinstance(p, str):
        p = p.strip()
        if p in ("_", ""):
            return _
        p = parse(p)
    if is_layout(p) or isinstance(p, int) or it.is_tuple(p):
        return p
    raise TilingError(f"permutation: cannot use {p!r}")


class TiledMMA:
    """A tiling of one MMA atom over ``AtomLayoutMNK`` with ``PermutationMNK``."""

    def __init__(self, atom, atom_layout=None, permutation=None):
        self.atom = atom
        al = _as_layout(atom_layout if atom_layout is not None else Layout((1, 1, 1)), "atom_layout")
        if al.rank() > 3:
            raise TilingError(f"make_tiled_mma: atom layout {al} has rank > 3")
        self.atom_layout = append(al, Layout(1, 0), n=3) if al.rank() < 3 else al
        perm = list(permutation) if permutation is not None else []
        if isinstance(permutation, str):
            p = parse(permutation)
            perm = list(p) if it.is_tuple(p) else [p]
        if len(perm) > 3:
            raise TilingError("make_tiled_mma: permutation has more than 3 modes")
        perm = [_as_perm(x) for x in perm] + [_] * (3 - len(perm))
        self.permutation = tuple(perm)
        self.thr_layout_vmnk = tiled_product(atom.thr_id, self.atom_layout)
        for i in range(3):
            pm = self.permutation_mnk(i)
            ts = self.tile_size(i)
            need = it.product(atom.shape_mnk[i]) * it.product(self.thr_layout_vmnk[i + 1].shape)
            if isinstance(ts, int) and isinstance(need, int) and ts % need:
                raise TilingError(f"make_tiled_mma: permutation mode {i} of size {ts} is not a multiple of the atom tiling {need}")

    def __repr__(self):
        return f"TiledMMA({self.atom.name}, {self.atom_layout}, {self.permutation})"

    # -- sizes
    def permutation_mnk(self, i):
        p = self.permutation[i]
        if p is _:
            return self.atom.shape_mnk[i] * self.thr_layout_vmnk[i + 1].size()
        return p

    def tile_size(self, i):
        p = self.permutation_mnk(i)
        if is_layout(p):
            return p.size()
        return it.product(p)

    def tile_shape(self):
        return tuple(self.tile_size(i) for i in range(3))

    def size(self):
        return self.thr_layout_vmnk.size()

    # -- thrfrg
    def _thrfrg(self, L, i0, i1, atom_tv, t0, t1):
        return per_layout(self, ("thrfrg", i0, i1), L, lambda: self._thrfrg_impl(L, i0, i1, atom_tv, t0, t1))

    def _thrfrg_impl(self, L, i0, i1, atom_tv, t0, t1):
        t_tensor = logical_divide(L, (self.permutation_mnk(i0), self.permutation_mnk(i1)))
        a_tile = (Layout(self.atom.shape_mnk[i0]), Layout(self.atom.shape_mnk[i1]))
        a_tensor = zipped_divide(t_tensor, a_tile)
        tv = composition(a_tensor, (atom_tv, _))
        thr_tile = (_, (Layout(self.thr_layout_vmnk[t0].size()), Layout(self.thr_layout_vmnk[t1].size())))
        return zipped_divide(tv, thr_tile)

    def thrfrg_C(self, L):
        """(M,N,...) -> ((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN,...)))."""
        return self._thrfrg(L, 0, 1, self.atom.c_layout, 1, 2)

    def thrfrg_A(self, L):
        """(M,K,...) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...)))."""
        return self._thrfrg(L, 0, 2, self.atom.a_layout, 1, 3)

    def thrfrg_B(self, L):
        """(N,K,...) -> ((ThrV,(ThrN,ThrK)),(FrgV,(RestN,RestK,...)))."""
        return self._thrfrg(L, 1, 2, self.atom.b_layout, 2, 3)

    @cached_property
    def thridx_2_thrid(self):
        v = self.thr_layout_vmnk
        return composition(Layout((v.size(), 1), (1, 0)), right_inverse(make_layout(v, complement(v))))

    @cached_property
    def _layoutC_TV(self):
        ref = Layout((self.tile_size(0), self.tile_size(1)))
        return composition(self.thrfrg_C(ref), (self.thridx_2_thrid, _))

    @cached_property
    def _layoutA_TV(self):
        return self._operand_TV(self.thrfrg_A, 0, (1, 0))     # A: the N threads repeat (stride 0)

    @cached_property
    def _layoutB_TV(self):
        return self._operand_TV(self.thrfrg_B, 1, (0, 1))     # B: the M threads repeat (stride 0)

    def _operand_TV(self, thrfrg, mn: int, tile_stride: tuple):
        """CuTe's ``get_layoutA_TV`` / ``get_layoutB_TV``: ``thrfrg`` of the (MN,K) tile, its thread modes
        reduced by ``(size<1>(vmnk), size<2>(vmnk)) : tile_stride``, threads by ``thridx_2_thrid``."""
        v = self.thr_layout_vmnk
        ref = Layout((self.tile_size(mn), self.tile_size(2)))
        tile = (_, (Layout((v[1].size(), v[2].size()), tile_stride), _))
        return composition(composition(thrfrg(ref), (tile, _)), (self.thridx_2_thrid, _))

    def get_layoutC_TV(self):
        """(thr_idx, val) -> m + tile_M*n."""
        return self._layoutC_TV

    def get_layoutA_TV(self):
        """(thr_idx, val) -> m + tile_M*k (A replicated across ThrN)."""
        return self._layoutA_TV

    def get_layoutB_TV(self):
        """(thr_idx, val) -> n + tile_N*k (B replicated across ThrM)."""
        return self._layoutB_TV

    def get_layout_TV(self, operand: str):
        """The TV layout of operand ``"A"``, ``"B"`` or ``"C"``."""
        return {"A": self.get_layoutA_TV, "B": self.get_layoutB_TV, "C": self.get_layoutC_TV}[operand]()

    def operand_tile(self, operand: str):
        """(rows, cols) of the operand's tile: (M,K), (N,K) or (M,N)."""
        M, N, K = self.tile_shape()
        return {"A": (M, K), "B": (N, K), "C": (M, N)}[operand]

    def get_slice(self, thr_idx) -> "ThrMMA":
        """``get_slice(t)``: the thread's (v, m, n, k) flat coordinate."""
        return ThrMMA(self, thr_idx)

    @cached_property
    def _vmnk_leaves(self):
        v = self.thr_layout_vmnk
        modes = []
        for i in range(4):
            m = v[i]
            if it.static_eq(m.size(), 1):
                modes.append(None)
                continue
            shp, std = it.flatten_leaves(m.shape), it.flatten_leaves(m.stride)
            if not all(isinstance(x, int) for x in shp + std):
                return None
            leaves, w = [], 1
            for s_, d_ in zip(shp, std):
                if s_ != 1:
                    leaves.append((d_, s_, w))
                w *= s_
            modes.append(leaves)
        return modes

    def thr_vmnk_ints(self, t: int) -> tuple:
        """``get_flat_coord(t)`` as plain ints (fast path for concrete layouts)."""
        modes = self._vmnk_leaves
        if modes is None:
            return tuple(int(x) for x in self.thr_vmnk(t))
        out = []
        for leaves in modes:
            if leaves is None:
                out.append(0)
                continue
            r = 0
            for d_, s_, w in leaves:
                r += ((t // d_) % s_ if d_ else 0) * w
            out.append(r)
        return tuple(out)

    def thr_vmnk_table(self, n: int) -> list:
        """``[thr_vmnk_ints(t) for t in range(n)]``, computed once per TiledMMA (every configuration on it
        asks for every thread)."""
        memo = self.__dict__.setdefault("_vmnk_table", {})
        hit = memo.get(n)
        if hit is None:
            hit = memo[n] = [self.thr_vmnk_ints(t) for t in range(n)]
        return hit

    def thr_vmnk(self, thr_idx):
        """``ThrLayoutVMNK.get_flat_coord(t)`` (size-1 modes give a static 0)."""
        v = self.thr_layout_vmnk
        out = []
        for i in range(4):
            m = v[i]
            if it.static_eq(m.size(), 1):
                out.append(0)
                continue
            hier = it.idx2crd(int(thr_idx), m.shape, m.stride)
            flat = it.crd2idx(hier, m.shape)
            out.append(DynInt(int(flat)))
        return tuple(out)


class ThrMMA:
    """One thread's slice of a TiledMMA (``tiled_mma.get_slice(t)``)."""

    def __init__(self, mma: TiledMMA, thr_idx):
        self.mma = mma
        self.thr_idx = thr_idx
        self.thr_vmnk = mma.thr_vmnk(thr_idx)

    def _partition(self, thrfrg, L, c0, c1):
        tt = thrfrg(L)
        r = it.rank(tt.shape[1][1]) if it.is_tuple(tt.shape[1]) else 1
        rest = tuple([_] * r) if r > 1 else _
        v = self.thr_vmnk
        return slice_and_offset(((v[0], (v[c0], v[c1])), (_, rest)), tt)

    def partition_C(self, L):
        """``partition_C``: ``(layout, offset)`` of the thread's (FrgV, RestM, RestN, ...)."""
        return self._partition(self.mma.thrfrg_C, L, 1, 2)

    def partition_A(self, L):
        """``partition_A``: ``(layout, offset)`` of (FrgV, RestM, RestK, ...)."""
        return self._partition(self.mma.thrfrg_A, L, 1, 3)

    def partition_B(self, L):
        """``partition_B``: ``(layout, offset)`` of (FrgV, RestN, RestK, ...)."""
        return self._partition(self.mma.thrfrg_B, L, 2, 3)

    def partition(self, operand, L):
        return per_layout(self.mma, ("partition", operand, int(self.thr_idx)), L,
                          lambda: {"A": self.partition_A, "B": self.partition_B, "C": self.partition_C}[operand](L))

    def partition_fragment(self, operand, L):
        """``partition_fragment_X(L)``: the register fragment's layout."""
        return per_layout(self.mma, ("fragment", operand, int(self.thr_idx)), L,
                          lambda: self._partition_fragment(operand, L))

    def _partition_fragment(self, operand, L):
        p, _off = self.partition(operand, L)
        if operand == "C":
            return Layout(p.shape)
        if getattr(p, "is_composed", False):
            return make_fragment_like(p.inner)
        return make_fragment_like(p)

    def partition_fragment_A(self, L):
        return self.partition_fragment("A", L)

    def partition_fragment_B(self, L):
        return self.partition_fragment("B", L)

    def partition_fragment_C(self, L):
        return self.partition_fragment("C", L)


def make_tiled_mma(atom, atom_layout=None, permutation=None) -> TiledMMA:
    """``make_tiled_mma(atom, atom_layout, permutation)``; atom may be a name.

    ``atom_layout`` is a layout or shape (``"(2,2,1)"``), ``permutation`` a
    sequence of up to 3 entries (``"_"``, an extent, or a layout) or a string
    like ``"(32,32,16)"``.
    """
    if isinstance(atom, str) and _plain(atom_layout) and _plain(permutation):
        key = (atom, _frozen(atom_layout), _frozen(permutation))
        hit = _NAMED.get(key)
        if hit is None:
            if len(_NAMED) >= 256:
                _NAMED.clear()
            hit = _NAMED[key] = TiledMMA(get_mma_atom(atom), atom_layout, permutation)
        return hit
    if isinstance(atom, str):
        atom = get_mma_atom(atom)
    return TiledMMA(atom, atom_layout, permutation)


def _plain(x):
    """A spelling (names, plain ints, nested tuples of them) that identifies a tiling by value."""
    if x is None or isinstance(x, str) or type(x) is int:
        return True
    return isinstance(x, (list, tuple)) and all(_plain(e) for e in x)


def _frozen(x):
    """A hashable key of a spelling (lists and tuples kept apart: TiledMMA reads them differently)."""
    return (type(x).__name__,) + tuple(_frozen(e) for e in x) if isinstance(x, (list, tuple)) else x


#: one TiledMMA per spelling: configurations naming the same tiling share its layouts, TV layouts and
#: partitions (a TiledMMA is not changed after it is built)
_NAMED: dict = {}
