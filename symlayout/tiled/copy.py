"""TiledCopy: ``make_tiled_copy_A/B/C`` and ``make_tiled_copy`` exactly as CuTe builds them,
``partition_S/D``, ``retile`` and the atom-call plan of ``copy()``.

>>> from symlayout.tiled.mma import make_tiled_mma
>>> from symlayout.atoms.copy import make_copy_atom
>>> from symlayout.layout import Layout
>>> mma = make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)")
>>> tc = make_tiled_copy_A(make_copy_atom("SM75_U32x2_LDSM_N", "half_t"), mma)
>>> tc.tiler_mn, str(tc.get_slice(8).partition_S(Layout((32, 16), (16, 1)))[0])
((32, 16), '((8,2),1,1):((1,8),0,0)')
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .. import int_tuple as it
from ..errors import TilingError
from ..layout import (Layout, coalesce, composition, group, is_layout, logical_product, make_layout, nullspace,
                      raked_product, right_inverse, slice_, slice_and_offset, upcast, zip_layouts, zipped_divide)
from ..notation import _
from ..symbolic import DynInt


class TiledCopy:
    """``TiledCopy<Copy_Atom, LayoutCopy_TV, ShapeTiler_MN>``."""

    def __init__(self, atom, layout_tv: Layout, tiler_mn):
        self.atom = atom
        self.tiled_layout_tv = layout_tv
        self.tiler_mn = tiler_mn
        ref = atom.val_layout_ref
        self.atom_num_thr = ref[0].size()
        self.atom_num_val = ref[1].size()
        self.tiled_num_thr = layout_tv[0].size()
        self.tiled_num_val = layout_tv[1].size()
        if self.tiled_num_thr % self.atom_num_thr:
            raise TilingError(f"TiledCopy uses too few threads ({self.tiled_num_thr}) for {atom.name} ({self.atom_num_thr} per atom)")
        if self.tiled_num_val % self.atom_num_val:
            raise TilingError(f"TiledCopy uses too few values ({self.tiled_num_val}) for {atom.name} ({self.atom_num_val} per atom)")

    def __repr__(self):
        return f"TiledCopy({self.atom.name}, tiler={self.tiler_mn}, layout_tv={self.tiled_layout_tv})"

    @cached_property
    def ref2src(self):
        return composition(right_inverse(self.atom.val_layout_ref), self.atom.val_layout_src)

    @cached_property
    def ref2dst(self):
        return composition(right_inverse(self.atom.val_layout_ref), self.atom.val_layout_dst)

    @cached_property
    def atom_layout_tv(self):
        return zipped_divide(self.tiled_layout_tv, (self.atom_num_thr, self.atom_num_val))

    def thrval2mn(self, ref2trg):
        trg = composition(self.atom_layout_tv, (ref2trg, _))
        return coalesce(zip_layouts(trg[0], trg[1]), (1, (1, 1)))

    def tile2thrfrg(self, T, ref2trg):
        """((TileM,TileN,..),(RestM,..)) -> (Thr, Val, (RestM,RestN,...))."""
        tv = composition(T, (self.thrval2mn(ref2trg), _))
        return slice_((( _, _), _), tv)

    def tidfrg_S(self, L):
        return self.tile2thrfrg(zipped_divide(L, self.tiler_mn), self.ref2src)

    def tidfrg_D(self, L):
        return self.tile2thrfrg(zipped_divide(L, self.tiler_mn), self.ref2dst)

    def get_layoutS_TV(self):
        ref = Layout((self.tiler_mn, 1))
        return slice_((_, _, 0), self.tile2thrfrg(ref, self.ref2src))

    def get_layoutD_TV(self):
        ref = Layout((self.tiler_mn, 1))
        return slice_((_, _, 0), self.tile2thrfrg(ref, self.ref2dst))

    def retile(self, X: Layout) -> Layout:
        """``retile_S`` == ``retile_D``: regroup a thread fragment to ((AtomVal, RestVal), Rest...)."""
        R = X.rank()
        V = X[0].size() if it.is_tuple(X.shape) else X.size()
        frg_mn = upcast(composition(right_inverse(self.tiled_layout_tv), Layout(self.tiler_mn)), self.tiled_num_thr * V)
        frg_v = zipped_divide(logical_product(Layout(V), right_inverse(frg_mn)), Layout(self.atom_num_val))
        t = zipped_divide(X, (V,) + it.product_each(frg_mn.shape))
        v = composition(t, (frg_v, _))
        return slice_((_, (0,) + (_,) * (R - 1)), v)

    retile_S = retile
    retile_D = retile

    def get_slice(self, thr_idx) -> "ThrCopy":
        return ThrCopy(self, thr_idx)


class ThrCopy:
    """One thread's slice of a TiledCopy."""

    def __init__(self, tc: TiledCopy, thr_idx):
        self.tc = tc
        self.thr_idx = thr_idx

    def _crd(self, L):
        r = L.rank()
        return (DynInt(int(self.thr_idx)), _, tuple([_] * r) if r > 1 else _)

    def partition_S(self, L):
        """``partition_S(L)`` -> ``(layout, offset)`` of (CopyV, RestM, RestN, ...)."""
        return slice_and_offset(self._crd(L), self.tc.tidfrg_S(L))

    def partition_D(self, L):
        """``partition_D(L)`` -> ``(layout, offset)``."""
        return slice_and_offset(self._crd(L), self.tc.tidfrg_D(L))

    def retile_S(self, X):
        return self.tc.retile(X)

    def retile_D(self, X):
        return self.tc.retile(X)


def make_tiled_copy_impl(atom, layout_tv, tiler):
    return TiledCopy(atom, layout_tv, tiler)


def make_tiled_copy_A(atom, mma) -> TiledCopy:
    """``make_tiled_copy_A(atom, mma)``: the copy feeding operand A."""
    return TiledCopy(atom, mma.get_layoutA_TV(), (mma.tile_size(0), mma.tile_size(2)))


def make_tiled_copy_B(atom, mma) -> TiledCopy:
    """``make_tiled_copy_B(atom, mma)``."""
    return TiledCopy(atom, mma.get_layoutB_TV(), (mma.tile_size(1), mma.tile_size(2)))


def make_tiled_copy_C(atom, mma) -> TiledCopy:
    """``make_tiled_copy_C(atom, mma)``."""
    return TiledCopy(atom, mma.get_layoutC_TV(), (mma.tile_size(0), mma.tile_size(1)))


def make_tiled_copy_X(atom, mma, operand: str) -> TiledCopy:
    """The copy for operand ``"A"``, ``"B"`` or ``"C"``."""
    return {"A": make_tiled_copy_A, "B": make_tiled_copy_B, "C": make_tiled_copy_C}[operand](atom, mma)


def make_tiled_copy(atom, thr_layout: Layout, val_layout: Layout = None) -> TiledCopy:
    """``make_tiled_copy(atom, thr_layout, val_layout)``."""
    if val_layout is None:
        val_layout = Layout(1, 0)
    layout_mn = raked_product(thr_layout, val_layout)
    layout_tv = composition(right_inverse(layout_mn), Layout((thr_layout.size(), val_layout.size())))
    return TiledCopy(atom, layout_tv, it.product_each(layout_mn.shape))


# ---------------------------------------------------------------- copy() dispatch


@dataclass(frozen=True)
class AtomCall:
    """One ``copy_unpack`` call: the rank-1 src/dst views (layout, offset) and register offsets."""
    src: tuple
    dst: tuple
    src_regs: tuple
    dst_regs: tuple


def _view_eval(view, i):
    L, off = view
    return off + L(i)


def _sub(view, crd):
    """Slice a (layout, offset) view with a coordinate containing ``_``."""
    L, off = view
    s, o = slice_and_offset(crd, L)
    return s, off + o


def _reg_offsets(view, nregs, elems_per_reg):
    if nregs == 0:
        return ()
    return tuple(int(_view_eval(view, r * elems_per_reg)) for r in range(nregs))


def copy_calls(atom, src, dst) -> list:
    """The sequence of atom calls ``cute::copy(atom, src, dst)`` makes.

    ``src``/``dst`` are ``(layout, offset)`` views of equal rank.  Each
    :class:`AtomCall` lists one offset per source/destination register (the
    offset of the register's first value-type element).
    """
    out: list = []
    _copy(atom, src, dst, out)
    return out


def _copy(atom, src, dst, out):
    sL, dL = src[0], dst[0]
    R = sL.rank() if it.is_tuple(sL.shape) else 1
    Rd = dL.rank() if it.is_tuple(dL.shape) else 1
    if R != Rd:
        raise TilingError(f"copy: rank mismatch between {sL} and {dL}")
    if R == 1:
        _call(atom, src, dst, out)
        return
    sv = (group(sL, 1, R), src[1])
    dv = (group(dL, 1, R), dst[1])
    if sv[0][1].size() != dv[0][1].size():
        raise TilingError(f"copy: rest modes of {sL} and {dL} differ in size")
    null = nullspace(dv[0][1])
    dn = (zipped_divide(dv[0], (dv[0][0].shape, null)), dv[1])
    sn = (zipped_divide(sv[0], (sv[0][0].shape, null)), sv[1])
    dc = _sub(dn, ((_, 0), (0, _)))
    sc = _sub(sn, ((_, 0), (0, _)))
    n = dc[0][1].size()
    for i in range(n):
        _call(atom, _sub(sc, (_, i)), _sub(dc, (_, i)), out)


def _call(atom, s, d, out):
    ss, ds = s[0].size(), d[0].size()
    if ss == atom.num_val_src or ds == atom.num_val_dst:
        bits = atom.value_bits
        sreg_bits, sreg_n = atom.op.src_reg_bits, atom.op.src_reg_count
        dreg_bits, dreg_n = atom.op.dst_reg_bits, atom.op.dst_reg_count
        se = max(1, sreg_bits // bits) if sreg_bits else 1
        de = max(1, dreg_bits // bits) if dreg_bits else 1
        ns = ss // se if sreg_bits else sreg_n
        nd = ds // de if dreg_bits else dreg_n
        out.append(AtomCall(s, d, _reg_offsets(s, ns, se), _reg_offsets(d, nd, de)))
        return
    if it.is_tuple(s[0].shape) and it.is_tuple(d[0].shape):
        s0 = (s[0][0], s[1])
        d0 = (d[0][0], d[1])
        if it.is_tuple(s0[0].shape) and it.is_tuple(d0[0].shape):
            _copy(atom, s0, d0, out)
            return
    raise TilingError(f"copy: src/dst partitioning {s[0]} / {d[0]} does not match {atom.name} "
                      f"({atom.num_val_src} src / {atom.num_val_dst} dst values per call)")
