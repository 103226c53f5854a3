"""CuTe's SM90 GMMA traits as data: the shared-memory layout atoms
``GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>``, ``make_gmma_desc``
(what it accepts, what it ``static_assert``-s, the fields it computes), the
descriptor fragments of SS operands, and the GMMA MMA atoms of every type
(``mma_traits_sm90_gmma.hpp``, ``mma_sm90_desc.hpp``).

The PTX ISA's statement of the same hardware is :mod:`symlayout.arch.gmma`;
``tests/test_sm90_gmma.py`` checks one against the other on every layout atom.

A GMMA smem layout is a :class:`GmmaSmemLayout`: an element layout ``L`` (what
CuTe partitions), the element width and a swizzle that acts on *byte
addresses* (CuTe's ``smem_ptr_flag`` composition: the swizzle moves into the
pointer).  Element ``c`` of a tensor at byte address ``base`` lives at
``Sw(base + L(c) * bytes)``.  It prints as CuTe does, without the underscores
of static integers:

>>> a = layout_atom("K_SW128", "half_t")
>>> print(a)
Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)
>>> print(a.tile_to_shape((128, 64, 2)))
Sw<3,4,3> o smem_ptr[16b](unset) o ((8,16),(64,1),(1,2)):((64,512),(1,0),(0,8192))
>>> sub = Layout(((8, 8), 16), ((64, 512), 1))     # the (64,16) block of tile_to_shape(a, (64,64))
>>> d = make_gmma_desc("K", sub, 16, a.swizzle, start_address=0x400)
>>> d.layout_type, d.fields()
('B128', {'start_address': 64, 'leading_byte_offset': 1, 'stride_byte_offset': 64, 'base_offset': 0, 'layout_type': 1})
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from ..algebra import int_tuple as it
from ..errors import AlgebraError, AtomError
from ..algebra.layout import Layout, is_layout, logical_divide, tile_to_shape, upcast
from ..algebra.notation import parse_layout
from ..algebra.composed import ComposedLayout, Swizzle
from .types import value_type_bits
from ..arch import gmma as arch_gmma
from .mma import gmma_mma_atom as build, gmma_majors as majors

#: The layout atoms in bits (``Layout_*_Atom_Bits``): (B of ``Swizzle<B,4,3>``, shape, stride).
ATOMS_BITS = {
    "MN_INTER": (0, (128, 8), (1, 128)), "MN_SW32": (1, (256, 8), (1, 256)),
    "MN_SW64": (2, (512, 8), (1, 512)), "MN_SW128": (3, (1024, 8), (1, 1024)),
    "K_INTER": (0, (8, 128), (128, 1)), "K_SW32": (1, (8, 256), (256, 1)),
    "K_SW64": (2, (8, 512), (512, 1)), "K_SW128": (3, (8, 1024), (1024, 1)),
}
#: ``GMMA::LayoutType`` names and values, by the swizzle's B.
LAYOUT_TYPES = {0: ("INTERLEAVE", 0), 1: ("B32", 3), 2: ("B64", 2), 3: ("B128", 1)}


class GmmaDescriptorError(AtomError):
    """``make_gmma_desc`` would not compile (a CuTe ``static_assert``) or the
    operand is not a GMMA shared-memory layout."""


# ---------------------------------------------------------------------------
# Shared-memory layouts with a byte-address swizzle
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GmmaSmemLayout:
    """``Sw o smem_ptr[bits b](unset) o layout``: the swizzle acts on byte addresses.

    >>> s = layout_atom("MN_SW64", "float")
    >>> s.layout.shape, s.cosize_bytes(), [s.byte_address((c, 1)) for c in range(4)]
    ((16, 8), 512, [64, 68, 72, 76])
    """
    swizzle: Swizzle
    bits: int
    layout: Layout

    def __str__(self) -> str:
        return f"{self.swizzle} o smem_ptr[{self.bits}b](unset) o {self.layout}"

    __repr__ = __str__

    def tile_to_shape(self, shape, order=None) -> "GmmaSmemLayout":
        """``tile_to_shape(atom, shape[, order])`` (acts on the layout only)."""
        return GmmaSmemLayout(self.swizzle, self.bits, tile_to_shape(self.layout, shape, order))

    def byte_address(self, coord, base: int = 0) -> int:
        """The swizzled byte address of element ``coord`` of a tensor at ``base``."""
        off = self.layout(coord) * self.bits
        if off % 8:
            raise GmmaDescriptorError(f"{self}: element {coord} does not start on a byte")
        return self.swizzle(base + off // 8)

    def cosize_bytes(self) -> int:
        return self.layout.cosize() * self.bits // 8

    def position_independent(self) -> ComposedLayout:
        """``as_position_independent_swizzle_layout``: the swizzle moved to element
        offsets (``upcast<bits/8>`` of the byte swizzle).

        >>> print(layout_atom("K_SW128", "half_t").position_independent())
        Sw<3,3,3> o 0 o (8,64):(64,1)
        """
        if self.bits % 8:
            raise GmmaDescriptorError(f"{self}: sub-byte types have no position-independent form")
        sw = self.swizzle.upcast(self.bits // 8)
        return self.layout if sw.b == 0 else ComposedLayout(sw, 0, self.layout)   # Sw<0,..> o L is L


def _type_bits(value_type) -> int:
    if isinstance(value_type, int):
        return value_type
    return value_type_bits(value_type)


def layout_atom(kind: str, value_type) -> GmmaSmemLayout:
    """``GMMA::Layout_<kind>_Atom<value_type>``: ``upcast<sizeof_bits<T>>`` of the bit atom.

    ``kind`` is ``K_INTER``, ``K_SW32``, ``K_SW64``, ``K_SW128`` or the ``MN_``
    forms; ``value_type`` a CuTe type name or a width in bits.

    >>> print(layout_atom("MN_SW128", "half_t")), print(layout_atom("K_SW64", 8))
    Sw<3,4,3> o smem_ptr[16b](unset) o (64,8):(1,64)
    Sw<2,4,3> o smem_ptr[8b](unset) o (8,64):(64,1)
    (None, None)
    """
    key = kind.upper().replace("LAYOUT_", "").replace("_ATOM", "")
    if key not in ATOMS_BITS:
        raise GmmaDescriptorError(f"unknown GMMA layout atom {kind!r}; expected one of {sorted(ATOMS_BITS)}")
    b, shape, stride = ATOMS_BITS[key]
    bits = _type_bits(value_type)
    return GmmaSmemLayout(Swizzle(b, 4, 3), bits, upcast(Layout(shape, stride), bits))


def layout_atom_names() -> list[str]:
    """The eight atom kinds.

    >>> layout_atom_names()[:2]
    ['K_INTER', 'K_SW32']
    """
    return sorted(ATOMS_BITS, key=lambda k: (k[0] != "K", int(re.sub(r"\D", "", k) or 0)))


_SMEM_RE = re.compile(r"^\s*Sw?<\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*>\s*o\s*smem_ptr\[(\d+)b\]\(unset\)\s*o\s*(.+)$")


def parse_smem_layout(text: str) -> GmmaSmemLayout:
    """Parse the contract's print form ``Sw<B,M,S> o smem_ptr[Nb](unset) o LAYOUT``.

    >>> parse_smem_layout("Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1)):((_64,_512),(_1,_0))").layout.shape
    ((8, 16), (64, 1))
    """
    m = _SMEM_RE.match(text)
    if not m:
        raise GmmaDescriptorError(f"not a GMMA smem layout (expected 'Sw<B,M,S> o smem_ptr[Nb](unset) o L'): {text!r}")
    b, mm, s, bits = (int(m.group(i)) for i in range(1, 5))
    return GmmaSmemLayout(Swizzle(b, mm, s), bits, parse_layout(m.group(5)))


# ---------------------------------------------------------------------------
# make_gmma_desc
# ---------------------------------------------------------------------------


class GmmaDesc(NamedTuple):
    """What ``make_gmma_desc<Major>`` computes: the layout type, the byte fields
    (start, leading and stride byte offsets; base offset 0), the 64-bit value
    and the canonical layout it checked (in ``uint128_t`` units)."""
    major: str
    layout_type: str
    start_address: int
    leading_byte_offset: int
    stride_byte_offset: int
    base_offset: int
    canonical: Layout

    def problems(self) -> list[str]:
        """What CuTe does not check but the descriptor cannot express: a start
        address off the 16-byte grid (CuTe drops the low 4 bits).

        >>> make_gmma_desc("K", Layout((8, 2), (8, 1)), 128, Swizzle(3, 4, 3), start_address=0x408).problems()
        ['start address 1032 is not a multiple of 16: the descriptor reads from 1024']
        """
        if self.start_address % 16:
            return [f"start address {self.start_address} is not a multiple of 16: the descriptor reads from "
                    f"{self.start_address & ~15}"]
        return []

    def fields(self) -> dict[str, int]:
        """The ``GmmaDescriptor::bitfield`` values (byte quantities >> 4, as CuTe prints them)."""
        return {"start_address": (self.start_address >> 4) & 0x3FFF,
                "leading_byte_offset": (self.leading_byte_offset >> 4) & 0x3FFF,
                "stride_byte_offset": (self.stride_byte_offset >> 4) & 0x3FFF,
                "base_offset": self.base_offset, "layout_type": _LT_VALUE[self.layout_type]}

    @property
    def value(self) -> int:
        """``desc.desc_`` (the 64-bit value).

        >>> hex(make_gmma_desc("K", Layout((8, 2), (8, 1)), 128, Swizzle(3, 4, 3)).value)
        '0x4000000000010000'
        """
        f = self.fields()
        return (f["start_address"] | f["leading_byte_offset"] << 16 | f["stride_byte_offset"] << 32
                | f["base_offset"] << 49 | f["layout_type"] << 62)

    def advanced(self, offset_u128: int) -> "GmmaDesc":
        """``DescriptorIterator + offset``: the start address moved by ``offset``
        16-byte units (CuTe adds to the low 32 bits of the descriptor)."""
        return self._replace(start_address=self.start_address + 16 * offset_u128)


_LT_VALUE = {name: v for name, v in LAYOUT_TYPES.values()}


def _static_int(x, what: str) -> int:
    if not isinstance(x, int):
        raise GmmaDescriptorError(f"make_gmma_desc: {what} must be static, got {x}")
    return x


def _swizzle_of(layout, swizzle):
    """(element layout, byte swizzle) of a make_gmma_desc operand."""
    if isinstance(layout, GmmaSmemLayout):
        return layout.layout, layout.swizzle, layout.bits
    if getattr(layout, "is_composed", False):
        raise GmmaDescriptorError(
            f"make_gmma_desc: {layout} swizzles element offsets; GMMA needs the swizzle on the smem pointer "
            "(a GMMA::Layout_*_Atom, 'Sw<B,4,3> o smem_ptr[..b](unset) o L'): CuTe does not compile this")
    return layout, (swizzle if swizzle is not None else Swizzle(0, 4, 3)), None


def make_gmma_desc(major: str, layout, bits: int | None = None, swizzle: Swizzle | None = None,
                   start_address: int = 0) -> GmmaDesc:
    """``SM90::GMMA::make_gmma_desc<Major>(tensor)`` for a rank-2 smem tensor
    ``(MN, K)`` with element layout ``layout`` (or a :class:`GmmaSmemLayout`),
    element width ``bits``, pointer swizzle ``swizzle`` (``None``: an
    unswizzled pointer, ``Swizzle<0,4,3>``) and data address ``start_address``
    (bytes, unswizzled).  Raises :class:`GmmaDescriptorError` with CuTe's
    ``static_assert`` message where CuTe would not compile.

    >>> make_gmma_desc("MN", layout_atom("MN_SW128", "half_t").tile_to_shape((64, 16))).fields()
    {'start_address': 0, 'leading_byte_offset': 0, 'stride_byte_offset': 64, 'base_offset': 0, 'layout_type': 1}
    >>> make_gmma_desc("K", layout_atom("K_SW128", "half_t").tile_to_shape((64, 64)))
    Traceback (most recent call last):
     ...
    symlayout.atoms.gmma.GmmaDescriptorError: make_gmma_desc<K>: Not a canonical GMMA_K Layout: Expected K-size 2 for dense or 4 for sparse (in units of uint128_t). (got K-size 8 of ((8,8),(8,1)):((8,64),(1,0)) in uint128_t)
    """
    major = str(major).upper().replace("GMMA::MAJOR::", "").replace("MAJOR::", "")
    if major not in ("K", "MN"):
        raise GmmaDescriptorError(f"make_gmma_desc: major must be K or MN, got {major!r}")
    L, sw, b = _swizzle_of(layout, swizzle)
    bits = b if b is not None else bits
    if bits is None:
        raise GmmaDescriptorError("make_gmma_desc: the element width (bits) is needed")
    if not is_layout(L) or L.rank() != 2:
        raise GmmaDescriptorError(f"make_gmma_desc<{major}>: GMMA Descriptors can only be constructed on rank-2 "
                                  f"tensors (got {L})")
    t = 128 // bits
    u = _recast_uint128(L, t, f"make_gmma_desc<{major}>")
    # layout_type(): Swizzle<B,4,3> of the pointer
    if sw.m != 4 or sw.s != 3 or not 0 <= sw.b <= 3:
        raise GmmaDescriptorError(f"make_gmma_desc<{major}>: Unsupported layout swizzle {sw} (needs Sw<B,4,3>, B<=3)")
    ltype = LAYOUT_TYPES[sw.b][0]
    w = 1 << sw.b
    where = f"(got {{}} of {u} in uint128_t)"
    if major == "MN":
        k_size = _static_int(u[1].size(), "the K size")
        allowed = {256 // bits, 128 // bits, 512 // bits}
        if k_size not in allowed:
            raise GmmaDescriptorError(
                f"make_gmma_desc<MN>: Not a canonical GMMA_MN Layout: Expected K-size 256/sizeof_bits<T> for dense "
                f"or (128|512)/sizeof_bits<T> for sparse. " + where.format(f"K-size {k_size}"))
        canon = logical_divide(u, (Layout(w, 1), Layout(8, 1)))
        _check_profile(canon, "GMMA_MN", major, u)
        s00, s01 = _stride(canon, 0, 0), _stride(canon, 0, 1)
        s10, s11 = _stride(canon, 1, 0), _stride(canon, 1, 1)
        if ltype != "INTERLEAVE" and s00 != 1:
            raise GmmaDescriptorError(f"make_gmma_desc<MN>: Not a canonical GMMA_MN Layout: Expected stride failure. "
                                      + where.format(f"stride<0,0> {s00} (expected 1) in {canon}"))
        if s10 != w:
            raise GmmaDescriptorError(f"make_gmma_desc<MN>: Not a canonical GMMA_MN Layout: Expected stride failure. "
                                      + where.format(f"stride<1,0> {s10} (expected {w}) in {canon}"))
        sbo, lbo = (s01, s11) if ltype == "INTERLEAVE" else (s11, s01)
    else:
        mn_size = _static_int(u[0].size(), "the MN size")
        k_size = _static_int(u[1].size(), "the K size")
        if mn_size % 8:
            raise GmmaDescriptorError(f"make_gmma_desc<K>: Not a canonical GMMA_K Layout: Expected MN-size multiple "
                                      f"of 8. " + where.format(f"MN-size {mn_size}"))
        if k_size not in (2, 4):
            raise GmmaDescriptorError(f"make_gmma_desc<K>: Not a canonical GMMA_K Layout: Expected K-size 2 for dense "
                                      f"or 4 for sparse (in units of uint128_t). " + where.format(f"K-size {k_size}"))
        canon = logical_divide(u, (Layout(8, 1), Layout(2, 1)))
        _check_profile(canon, "GMMA_K", major, u)
        s00, s01, s10 = _stride(canon, 0, 0), _stride(canon, 0, 1), _stride(canon, 1, 0)
        if s00 != w:
            raise GmmaDescriptorError(f"make_gmma_desc<K>: Not a canonical GMMA_K Layout: Expected stride failure. "
                                      + where.format(f"stride<0,0> {s00} (expected {w}) in {canon}"))
        if ltype != "INTERLEAVE" and s10 != 1:
            raise GmmaDescriptorError(f"make_gmma_desc<K>: Not a canonical GMMA_K Layout: Expected stride failure. "
                                      + where.format(f"stride<1,0> {s10} (expected 1) in {canon}"))
        sbo, lbo = s01, s10
    return GmmaDesc(major, ltype, start_address, 16 * _static_int(lbo, "LBO"), 16 * _static_int(sbo, "SBO"),
                    0, canon)


def _check_profile(canon: Layout, what: str, major: str, u: Layout) -> None:
    if not it.congruent(canon.shape, ((1, 1), (1, 1))):
        raise GmmaDescriptorError(f"make_gmma_desc<{major}>: Not a canonical {what} Layout: Expected profile "
                                  f"failure. (canonical layout {canon} of {u} in uint128_t)")


def _stride(L: Layout, i: int, j: int):
    return L.stride[i][j]


def arch_descriptor(desc: GmmaDesc):
    """The same descriptor as :class:`symlayout.arch.gmma.MatrixDescriptor`.

    >>> arch_descriptor(make_gmma_desc("K", Layout((8, 2), (8, 1)), 128, Swizzle(3, 4, 3))).swizzle
    '128B'
    """
    mode = {"INTERLEAVE": "none", "B32": "32B", "B64": "64B", "B128": "128B"}[desc.layout_type]
    return arch_gmma.MatrixDescriptor(desc.start_address, desc.leading_byte_offset, desc.stride_byte_offset,
                                      desc.base_offset, mode)


def _recast_uint128(L, t: int, what: str):
    """``recast<uint128_t>`` of a layout of ``128/t``-bit elements (``upcast<t>``); CuTe's ``shape_div`` does not
    compile a static stride that ``t`` does not divide (or divide), a :class:`GmmaDescriptorError` here."""
    try:
        return upcast(L, t)
    except AlgebraError as e:
        raise GmmaDescriptorError(f"{what}: recast<uint128_t> of {L}: {e}") from None


def descriptor_fragment(partitioned: Layout, bits: int, swizzle: Swizzle | None, major: str,
                        start_address: int = 0) -> tuple[GmmaDesc, Layout]:
    """``MakeTensor<smem_desc<Major>>`` on a partitioned smem tensor
    ``(MMA, MMA_M|N, MMA_K, ...)``: the descriptor of ``tensor<0>`` and the
    fragment layout ``replace<0>(recast<uint128_t>(tensor).layout(), 1:0)``; the
    descriptor of fragment element ``i`` is ``desc.advanced(layout(i))``.

    >>> part = Layout((((8, 8), 16), 1, 4), (((64, 512), 1), 0, 16))   # partition_A of a 64x64 K_SW128<half_t> tile
    >>> d, frag = descriptor_fragment(part, 16, Swizzle(3, 4, 3), "K")
    >>> str(frag), [d.advanced(frag(0, 0, k)).start_address for k in range(4)], d.stride_byte_offset
    ('(1,1,4):(0,0,2)', [0, 32, 64, 96], 1024)
    """
    t = 128 // bits
    mode0 = partitioned[0]
    desc = make_gmma_desc(major, mode0, bits, swizzle, start_address)
    u = _recast_uint128(partitioned, t, "make_gmma_desc (the fragment)")
    frag = Layout((1,) + tuple(u.shape[1:]), (0,) + tuple(u.stride[1:]))
    return desc, frag


# ---------------------------------------------------------------------------
# GMMA MMA atoms of every type (built in :mod:`symlayout.atoms.mma`, where MMAAtom lives)
# ---------------------------------------------------------------------------


def gmma_mma_atom(name: str):
    """The :class:`~symlayout.atoms.mma.MMAAtom` of any SM90 GMMA atom (:func:`symlayout.atoms.mma.gmma_mma_atom`).

    >>> gmma_mma_atom("SM90_64x8x32_S32S8S8_SS_TN").shape_mnk
    (64, 8, 32)
    """
    return build(name)


def gmma_majors(name: str) -> tuple[str, str]:
    """``(major A, major B)`` of a GMMA atom name (:func:`symlayout.atoms.mma.gmma_majors`).

    >>> gmma_majors("SM90_64x64x16_F16F16F16_SS<GMMA::Major::MN,GMMA::Major::K>")
    ('MN', 'K')
    """
    return majors(name)
