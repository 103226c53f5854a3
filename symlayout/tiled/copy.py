"""TiledCopy: ``make_tiled_copy_A/B/C`` and ``make_tiled_copy`` exactly as CuTe builds them,
``partition_S/D``, ``retile`` and the atom-call plan of ``copy()``.

>>> from symlayout.tiled.mma import make_tiled_mma
>>> from symlayout.atoms.copy import make_copy_atom
>>> from symlayout.algebra.layout import Layout
>>> mma = make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)")
>>> tc = make_tiled_copy_A(make_copy_atom("SM75_U32x2_LDSM_N", "half_t"), mma)
>>> tc.tiler_mn, str(tc.get_slice(8).partition_S(Layout((32, 16), (16, 1)))[0])
((32, 16), '((8,2),1,1):((1,8),0,0)')
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..algebra import int_tuple as it
from ..errors import AlgebraError, CuteStaticAssert, TilingError
from ..algebra.layout import (Layout, coalesce, composition, function_table, group, is_layout, logical_product,
                              make_layout, nullspace, raked_product, right_inverse, slice_, slice_and_offset, upcast,
                              zip_layouts, zipped_divide)
from ..algebra.int_tuple import _
from ..algebra.symbolic import DynInt
from .mma import per_layout
from ..atoms import canonical_type, value_type_bits
from ..algebra.layout import max_alignment, max_common_vector, recast_layout


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
            raise CuteStaticAssert(f"TiledCopy uses too few threads ({self.tiled_num_thr}) for {atom.name} "
                                   f"({self.atom_num_thr} per atom)", "TiledCopy uses too few thrs for selected CopyAtom")
        if self.tiled_num_val % self.atom_num_val:
            raise CuteStaticAssert(f"TiledCopy uses too few values ({self.tiled_num_val}) for {atom.name} "
                                   f"({self.atom_num_val} per atom)", "TiledCopy uses too few vals for selected CopyAtom")

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
        return per_layout(self, "tidfrg_S", L, lambda: self.tile2thrfrg(zipped_divide(L, self.tiler_mn), self.ref2src))

    def tidfrg_D(self, L):
        return per_layout(self, "tidfrg_D", L, lambda: self.tile2thrfrg(zipped_divide(L, self.tiler_mn), self.ref2dst))

    def get_layoutS_TV(self):
        ref = Layout((self.tiler_mn, 1))
        return slice_((_, _, 0), self.tile2thrfrg(ref, self.ref2src))

    def get_layoutD_TV(self):
        ref = Layout((self.tiler_mn, 1))
        return slice_((_, _, 0), self.tile2thrfrg(ref, self.ref2dst))

    def retile(self, X: Layout) -> Layout:
        """``retile_S`` == ``retile_D``: regroup a thread fragment to ((AtomVal, RestVal), Rest...)."""
        return per_layout(self, "retile", X, lambda: self._retile(X))

    def _retile(self, X: Layout) -> Layout:
        R = X.rank()
        V = X[0].size() if it.is_tuple(X.shape) else X.size()
        frg_mn, frg_v = self._retile_tilers(V)
        t = zipped_divide(X, (V,) + it.product_each(frg_mn.shape))
        v = composition(t, (frg_v, _))
        return slice_((_, (0,) + (_,) * (R - 1)), v)

    def _retile_tilers(self, V):
        """``(frg_mn, frg_v)`` of :meth:`_retile` for fragments of ``V`` values (they depend on the
        TiledCopy and ``V`` only: once per ``V``)."""
        memo = self.__dict__.setdefault("_retile_tilers_memo", {})
        hit = memo.get(V) if type(V) is int else None
        if hit is None:
            frg_mn = upcast(composition(right_inverse(self.tiled_layout_tv), Layout(self.tiler_mn)),
                            self.tiled_num_thr * V)
            frg_v = zipped_divide(logical_product(Layout(V), right_inverse(frg_mn)), Layout(self.atom_num_val))
            hit = (frg_mn, frg_v)
            if type(V) is int:
                memo[V] = hit
        return hit

    retile_S = retile
    retile_D = retile

    def get_slice(self, thr_idx) -> "ThrCopy":
        return ThrCopy(self, thr_idx)


class ThrCopy:
    """One thread's slice of a TiledCopy."""

    def __init__(self, tc: TiledCopy, thr_idx):
        self.tc = tc
        self.thr_idx = thr_idx

    def thread_coord(self, L):
        """The coordinate ``(thr_idx, _, (_, ...))`` that slices ``tidfrg_S/D(L)`` (thread index dynamic)."""
        r = L.rank()
        return (DynInt(int(self.thr_idx)), _, tuple([_] * r) if r > 1 else _)

    def partition_S(self, L):
        """``partition_S(L)`` -> ``(layout, offset)`` of (CopyV, RestM, RestN, ...)."""
        return slice_and_offset(self.thread_coord(L), self.tc.tidfrg_S(L))

    def partition_D(self, L):
        """``partition_D(L)`` -> ``(layout, offset)``."""
        return slice_and_offset(self.thread_coord(L), self.tc.tidfrg_D(L))

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
    """The copy for operand ``"A"``, ``"B"`` or ``"C"`` (one per atom object and TiledMMA)."""
    return per_layout(mma, ("tiled_copy", operand), atom,
                      lambda: {"A": make_tiled_copy_A, "B": make_tiled_copy_B, "C": make_tiled_copy_C}[operand](atom, mma))


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


def view_values(view) -> list:
    """``[int(off + L(i)) for i in range(size(L))]`` of a ``(layout, offset)`` view: its function table
    (built mode by mode) shifted, or point by point where the layout has none (symbolic entries)."""
    L, off = view
    try:
        tab = function_table(L)
    except AlgebraError:
        return [int(off + L(i)) for i in range(L.size())]
    return [int(off + x) for x in tab]


def _sub(view, crd, key=None):
    """Slice a (layout, offset) view with a coordinate containing ``_``; with ``key`` (naming ``crd``:
    plain ints and ``_`` only) the slice of a plain layout is memoised on the layout object (copy()
    slices the memoised reshapes of :func:`_reshaped`, the same objects for every configuration of
    an atom)."""
    L, off = view
    if key is not None and type(L) is Layout:
        k = (id(L), key)
        hit = _SLICED.get(k)
        if hit is None or hit[0] is not L:
            if len(_SLICED) > 4096:
                _SLICED.clear()
            hit = _SLICED[k] = (L, slice_and_offset(crd, L))      # (the layout kept alive with its key)
        s, o = hit[1]
    else:
        s, o = slice_and_offset(crd, L)
    return s, off + o


_SLICED: dict = {}


def _reg_offsets(view, nregs, elems_per_reg):
    if nregs == 0:
        return ()
    return tuple(int(_view_eval(view, r * elems_per_reg)) for r in range(nregs))


def copy_calls(atom, src, dst, bits=None, first_only: bool = False) -> list:
    """The sequence of atom calls ``cute::copy(atom, src, dst)`` makes.

    ``src``/``dst`` are ``(layout, offset)`` views of equal rank.  Each
    :class:`AtomCall` lists one offset per source/destination register (the
    offset of the register's first value-type element).  With ``bits =
    (src value bits, dst value bits)`` (the two tensors' element widths) each call
    also checks ``copy_unpack``'s static_asserts: ``recast`` of the view to the
    operation's register type must give exactly its register count (else
    :class:`~symlayout.errors.CuteStaticAssert`).  ``first_only``: only the first
    iteration of each rest-mode loop (they all see the same layout, at other
    offsets: enough for the static checks).
    """
    out: list = []
    _copy(atom, src, dst, out, bits, first_only)
    return out


def _check_unpack(atom, s, d, bits):
    """``copy_unpack``: ``recast<RegTypeSrc>(src)`` / ``recast<RegTypeDst>(dst)`` sizes."""
    recast = []                 # CuTe builds rS and rD first, then asserts their sizes
    for side, view, vbits, regs in (("src", s, bits[0], atom.op.s_regs), ("dst", d, bits[1], atom.op.d_regs)):
        # a view that keeps its swizzle (a ComposedLayout): the recast sizes follow its inner layout (the
        # recast of a swizzle never asserts); one that decayed carries the swizzle in its strides
        lay = view[0].inner if getattr(view[0], "is_composed", False) else view[0]
        try:
            recast.append((side, (lay, view[1]), vbits, regs, recast_layout(lay, vbits, regs.bits)))
        except AlgebraError as e:
            a = "Downcast requires adjacent elements" if "unit-stride" in str(e) else "Divisibility condition"
            raise CuteStaticAssert(f"copy_unpack: {side} view {view[0]} of {vbits}-bit values cannot be recast to "
                                   f"{regs.type} ({e})", a, side=side) from None
    for side, view, vbits, regs, r in recast:
        n = r.size()
        if n != regs.count:
            raise CuteStaticAssert(
                f"copy_unpack: {side} view {view[0]} of {vbits}-bit values is {n} {regs.type} registers after recast, "
                f"{atom.op.name} takes {regs.count}",
                f"Copy_Traits: {side} failed to vectorize into registers. Layout is incompatible with this CopyOp.",
                side=side)


def _copy(atom, src, dst, out, bits=None, first_only=False):
    sL, dL = src[0], dst[0]
    R = sL.rank() if it.is_tuple(sL.shape) else 1
    Rd = dL.rank() if it.is_tuple(dL.shape) else 1
    if R != Rd:
        raise TilingError(f"copy: rank mismatch between {sL} and {dL}")
    if R == 1:
        _call(atom, src, dst, out, bits, first_only)
        return
    sv = (_reshaped(sL, ("group", R), lambda L: group(L, 1, R)), src[1])
    dv = (_reshaped(dL, ("group", R), lambda L: group(L, 1, R)), dst[1])
    if sv[0][1].size() != dv[0][1].size():       # CuTe: CUTE_STATIC_ASSERT_V(size<1>(src_v) == size<1>(dst_v))
        raise CuteStaticAssert(f"copy: rest modes of {sL} and {dL} differ in size",
                               "size<1>(src_v) == size<1>(dst_v)")
    rest = dv[0][1]
    null = nullspace(rest.inner if getattr(rest, "is_composed", False) else rest)   # a swizzle keeps stride 0
    nk = (_signature(null.shape), _signature(null.stride))
    tiler = (dv[0][0].shape, null)
    dn = (_reshaped(dv[0], ("zd", _signature(tiler[0]), nk), lambda L: zipped_divide(L, tiler)), dv[1])
    tiler = (sv[0][0].shape, null)
    sn = (_reshaped(sv[0], ("zd", _signature(tiler[0]), nk), lambda L: zipped_divide(L, tiler)), sv[1])
    dc = _sub(dn, ((_, 0), (0, _)), "first rest")
    sc = _sub(sn, ((_, 0), (0, _)), "first rest")
    n = dc[0][1].size()
    shifts = None if first_only or n == 1 else _rest_offsets(sc, dc, n)
    if shifts is None:
        for i in range(1 if first_only else n):
            _call(atom, _iteration(sc, i), _iteration(dc, i), out, bits, first_only)
        return
    # plain layouts: iteration i slices the same modes at offsets L_rest(i), so its calls are the first
    # iteration's, shifted (slice_and_offset((_, i), L) = (L<0>, L<1>(i)))
    first: list = []
    _call(atom, _sub(sc, (_, 0), 0), _sub(dc, (_, 0), 0), first, bits, first_only)
    for ds, dd in shifts:
        out.extend(AtomCall((c.src[0], c.src[1] + ds), (c.dst[0], c.dst[1] + dd),
                            tuple(x + ds for x in c.src_regs), tuple(x + dd for x in c.dst_regs)) for c in first)


def _iteration(view, i):
    """``view(_, i)`` as ``cute::copy``'s loop takes it: ``i`` is a run-time ``int``, so slicing a swizzled
    view leaves the swizzle bits the rest mode reaches unknown at compile time (a decayed layout then has
    run-time strides, which ``copy_unpack``'s ``recast`` cannot merge into registers)."""
    if getattr(view[0], "is_composed", False):
        return _sub(view, (_, DynInt(i)))
    return _sub(view, (_, i), i)


def _rest_offsets(sc, dc, n):
    """``[(src offset, dst offset) of iteration i - those of iteration 0]`` when both views are plain
    layouts with integer rest modes of ``n`` iterations (else None: every slice is taken)."""
    if getattr(sc[0], "is_composed", False) or getattr(dc[0], "is_composed", False) or sc[0][1].size() != n:
        return None
    try:
        so, do = function_table(sc[0][1]), function_table(dc[0][1])
    except AlgebraError:
        return None
    if not all(type(x) is int for x in so + do):
        return None
    return [(so[i] - so[0], do[i] - do[0]) for i in range(n)]


_RESHAPED: dict = {}


def _signature(x):
    """An IntTuple with each leaf's kind: ``8`` and a dynamic ``8`` print alike but CuTe treats them apart
    (a plain int stands for itself; any other leaf is ``(its type's name, its text)``, never equal to a
    tuple of signatures)."""
    if type(x) is int:
        return x
    return tuple([_signature(y) for y in x]) if isinstance(x, tuple) else (type(x).__name__, str(x))


def _reshaped(L, key, f):
    """``f(L)`` for a reshaping (group, zipped_divide) of the domain, memoised on the layout: it acts on a
    ComposedLayout's inner layout only, keeping the swizzle and offset (so every thread's partition of a
    swizzled tensor shares the work)."""
    if getattr(L, "is_composed", False):
        return L.map_inner(lambda B: _reshaped(B, key, f))
    k = (key, _signature(L.shape), _signature(L.stride))     # static and dynamic (DynInt) entries print alike
    hit = _RESHAPED.get(k)
    if hit is None:
        if len(_RESHAPED) > 4096:
            _RESHAPED.clear()
        hit = _RESHAPED[k] = f(L)
    return hit


def _call(atom, s, d, out, bits=None, first_only=False):
    ss, ds = s[0].size(), d[0].size()
    if ss == atom.num_val_src or ds == atom.num_val_dst:
        if bits is not None:
            _check_unpack(atom, s, d, bits)
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
            _copy(atom, s0, d0, out, bits, first_only)
            return
    raise CuteStaticAssert(f"copy: src/dst partitioning {s[0]} / {d[0]} does not match {atom.name} "
                           f"({atom.num_val_src} src / {atom.num_val_dst} dst values per call)",
                           "CopyAtom: Src/Dst partitioning does not match the instruction requirement.")


# ---------------------------------------------------------------- copy() of AutoVectorizingCopy
#
# ``copy(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<MaxVecBits>, T>, src, dst)`` (and a
# TiledCopy built on it) never calls ``copy_unpack``: CuTe's algorithm/copy.hpp dispatches it to
#
#     common_elem = max_common_vector(src, dst)            // 0 if the value types differ
#     align_bits  = gcd(max_alignment(src), max_alignment(dst), MaxVecBits)
#     vec_bits    = gcd(common_elem * sizeof_bits(T), align_bits)
#     if common_elem > 1 and vec_bits % 8 == 0 and sizeof_bits(T) < vec_bits:
#         copy_if(recast<uint_bit_t<vec_bits>>(src), recast<...>(dst))   // one vec_bits access each
#     else:
#         copy_if(src, dst)                                                // element by element
#
# max_alignment(Tensor) = gcd(max_alignment(pointer), max_alignment(layout) * sizeof_bits(T)); a
# plain pointer's is unknown (Int<0>, neutral for gcd: CuTe assumes it aligned), a swizzle
# pointer's is 8 * 2^M bits.  ``AutoVectorizingCopy`` is MaxVecBits = 128, ``DefaultCopy`` 8.

def cute_max_alignment(L) -> int:
    """CuTe's ``max_alignment`` of a layout, in elements: only static shapes and
    strides count (a dynamic shape is taken as 1, a dynamic stride as 0); of a
    swizzled ``ComposedLayout`` the gcd with ``2^M`` and its offset's alignment.

    >>> cute_max_alignment(Layout((4, 8), (1, 6))), cute_max_alignment(Layout(((1, 8), 1, 4), ((0, 1), 0, 8)))
    (2, 32)
    >>> cute_max_alignment(Layout(((1, (2, 2, 2)), 1, (2, 2)), ((0, (1, 512, DynInt(8))), 0, (DynInt(16), DynInt(32)))))
    2
    """
    from math import gcd
    if getattr(L, "is_composed", False):
        off = L.offset
        a_off = (off & -off) if type(off) is int else 0          # C<v>: v; a dynamic offset: neutral
        return gcd(1 << L.swizzle.m, a_off, cute_max_alignment(L.inner))
    return max_alignment(L)


def _cute_max_common_vector(a, b) -> int:
    """``max_common_vector(a, b)`` of two layouts (static stride-1 prefix of a o b^-1)."""
    v = max_common_vector(a, b)
    return v if type(v) is int else 1


def auto_vectorizing_width(src, dst, src_type: str, dst_type: str, max_vec_bits: int,
                           src_swizzle_m: int | None = None) -> int:
    """Elements per access of CuTe's auto-vectorizing ``copy(src, dst)`` (see above).

    ``src``/``dst`` are the two tensors' layouts, ``*_type`` their value types.
    ``src_swizzle_m``: ``M`` of a swizzle pointer under ``src`` (None: plain pointer).

    >>> s = Layout(((1, (2, 2, 2)), 1, (2, 2)), ((0, (1, 512, DynInt(8))), 0, (DynInt(16), DynInt(32))))
    >>> auto_vectorizing_width(s, Layout(((1, 8), 1, 4), ((0, 1), 0, 8)), "half_t", "half_t", 128)
    2
    >>> auto_vectorizing_width(Layout(8, 1), Layout(8, 1), "half_t", "half_t", 64)
    4
    """
    from math import gcd
    if canonical_type(src_type) != canonical_type(dst_type):
        return 1                                  # a converting copy: element by element
    bits = value_type_bits(dst_type)
    if bits < 8:
        return 1                                  # sub-byte values: no references, no vectorization
    common = _cute_max_common_vector(src, dst)
    if common <= 1:
        return 1
    a_src = cute_max_alignment(src) * bits
    if src_swizzle_m is not None:
        a_src = gcd(a_src, 8 * (1 << src_swizzle_m))
    align_bits = gcd(a_src, cute_max_alignment(dst) * bits, max_vec_bits)
    vec_bits = gcd(common * bits, align_bits)
    if vec_bits % 8 == 0 and bits < vec_bits:
        return vec_bits // bits
    return 1


def auto_vectorizing_calls(reg, smem_index, width: int) -> list:
    """The accesses of an auto-vectorizing copy between a register view ``reg``
    (domain -> fragment slot) and a shared-memory view ``smem_index`` (domain ->
    smem element index) of the same domain, ``width`` elements each, in CuTe's
    order: ``recast`` of the register view by ``width`` (offset ``reg(0)``
    kept), access ``j`` being the slots ``width * upcast(reg)(j) + e``.
    Returns ``[(smem indices, slots), ...]``.

    >>> auto_vectorizing_calls((Layout((2, 4), (4, 1)), 0), (Layout((2, 4), (1, 2)), 0), 2)
    [([0, 2], [0, 1]), ([1, 3], [4, 5]), ([4, 6], [2, 3]), ([5, 7], [6, 7])]
    """
    R, I = reg[0], smem_index[0]
    n = R.size()
    by_slot = {}
    for x in range(n):
        by_slot[int(reg[1] + R(x))] = int(smem_index[1] + I(x))
    if width == 1:
        return [([by_slot[s]], [s]) for s in (int(reg[1] + R(x)) for x in range(n))]
    try:
        U = upcast(R, width)
    except Exception as e:                        # CuTe: static_assert in upcast
        raise CuteStaticAssert(f"recast of the register view {R} to {width}-element vectors fails ({e})",
                               "Divisibility condition") from None
    out = []
    base = int(reg[1])
    for j in range(U.size()):
        slots = [base + width * int(U(j)) + e for e in range(width)]
        if any(s not in by_slot for s in slots):
            raise CuteStaticAssert(f"register view {R} is not {width}-element contiguous at slot {slots[0]}",
                                   "Divisibility condition")
        out.append(([by_slot[s] for s in slots], slots))
    return out
