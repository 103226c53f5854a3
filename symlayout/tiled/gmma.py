"""GMMA operands of a TiledMMA: what each warpgroup's ``wgmma`` reads from shared memory.

An SS operand (A or B) of an SM90 GMMA TiledMMA is not copied into registers: every
warpgroup builds one shared-memory matrix descriptor per fragment element
(``partition_fragment_A/B`` of the smem tensor: one per MN-block, K-block and
stage, CuTe's ``MakeTensor<smem_desc<Major>>``) and ``wgmma.mma_async`` reads the
``rows x K`` block through it.  This module builds, once, for each warpgroup and
fragment element:

* CuTe's view (:mod:`symlayout.atoms.gmma`): the descriptor ``make_gmma_desc``
  builds from the partition (or the ``static_assert`` it fails), and for each
  atom value ``v = row + rows*k`` the tile element the partition names and its
  swizzled byte address ``Sw(base + L(element) * bytes)``;
* the PTX ISA's view (:mod:`symlayout.arch.gmma`, checked on the H200): the byte
  address ``wgmma`` reads for ``(row, k)`` through that descriptor.

The properties (:mod:`symlayout.prove.hopper.obligations`) compare the two and count them.

>>> from symlayout.atoms.gmma import layout_atom
>>> from symlayout.tiled.mma import make_tiled_mma
>>> mma = make_tiled_mma("SM90_64x128x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>", (2, 1, 1))
>>> m = gmma_operand_model(mma, "A", "half_t", layout_atom("K_SW128", "half_t").tile_to_shape((128, 64, 2)))
>>> len(m.reads), m.rows, m.kin, m.reads[5].block, m.reads[5].desc.start_address
(16, 64, 16, (0, 1, 1), 16416)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..arch import gmma as arch
from ..atoms import value_type_bits, value_type_info
from ..atoms.gmma import GmmaDesc, GmmaDescriptorError, GmmaSmemLayout, arch_descriptor, descriptor_fragment, gmma_majors
from ..algebra.layout import Layout, function_table
from ..algebra.composed import Swizzle
from ..errors import AlgebraError, SymlayoutError
from .arrays import index_array
from ..algebra import int_tuple as it

WARPGROUP = arch.WARPGROUP_SIZE


@dataclass
class Read:
    """One ``wgmma`` operand read: warpgroup ``warpgroup`` (its first thread ``thread``),
    fragment element ``block = (mn-block, k-block, stage)``, the descriptor CuTe builds
    (``start_address`` relative to the smem base) and, per atom value ``v``, the tile
    element index (colexicographic in the smem shape) and its element offset."""
    warpgroup: int
    thread: int
    block: tuple
    desc: GmmaDesc
    element_array: object = field(repr=False)      # int64 numpy rows (views of the model's read arrays)
    offset_array: object = field(repr=False)

    @cached_property
    def elements(self) -> list:
        """The tile element index of every atom value, as ints."""
        return self.element_array.tolist()

    @cached_property
    def offsets(self) -> list:
        """The element offset of every atom value, as ints."""
        return self.offset_array.tolist()


@dataclass
class GmmaOperandModel:
    """The reads of one descriptor operand by every warpgroup of a TiledMMA."""
    operand: str
    major: str
    value_type: str
    atype: str
    bits: int
    smem: GmmaSmemLayout
    rows: int
    kin: int
    reads: list = field(default_factory=list)
    shape: tuple = ()
    error: GmmaDescriptorError | None = None     # CuTe does not compile make_gmma_desc / the partition
    _ptx: dict = field(default_factory=dict, repr=False)

    @property
    def bytes(self) -> int:
        return self.bits // 8

    def coord(self, e: int) -> tuple:
        """Tile coordinate ``(mn, k[, stage])`` of element index ``e``."""
        return it.colex_coord(e, self.shape)

    def cute_address(self, base: int, offset: int) -> int:
        """Where CuTe's smem tensor keeps the element at element offset ``offset``."""
        return self.smem.swizzle(base + offset * self.bits // 8)

    def ptx_address(self, read: Read, base: int, v: int) -> int:
        """The byte ``wgmma`` reads for atom value ``v`` of ``read`` (smem base ``base``)."""
        return self.ptx_addresses(read, base)[v]

    def ptx_addresses(self, read: Read, base: int) -> list:
        """The bytes ``wgmma`` reads for every atom value of ``read`` (PTX ISA: the descriptor
        holds the start address in 16-byte units; the swizzle acts on the absolute address)."""
        return self.ptx_array(read, base).tolist()

    def ptx_array(self, read: Read, base: int):
        """:meth:`ptx_addresses` as a numpy array (value ``v = row + rows * k``), computed once."""
        key = (id(read), base)
        hit = self._ptx.get(key)
        if hit is None:
            d = self._descriptor_at(read, base)
            hit = self._ptx[key] = arch.swizzle_address(d.swizzle, d.start_address + self._relative(d), d.base_offset)
        return hit

    def ptx_reads(self, base: int, wrap: bool = True):
        """:meth:`ptx_array` of every read at once, ``(reads, values)`` (computed once per base, read-only):
        the reads through descriptors of one form share their ``(row, k)`` offsets and swizzle.  ``wrap=False``:
        the start addresses CuTe computes, before the descriptor's 14-bit field keeps their low 18 bits."""
        key = ("reads", base, wrap)
        hit = self._ptx.get(key)
        if hit is None:
            import numpy as np
            ds = [self._descriptor_at(rd, base, wrap) for rd in self.reads]
            hit = np.empty((len(ds), self.rows * self.kin), dtype=np.int64)
            forms: dict = {}
            for j, d in enumerate(ds):
                forms.setdefault((d.swizzle, d.leading_byte_offset, d.stride_byte_offset, d.base_offset), []).append(j)
            for (sw, _l, _s, bo), js in forms.items():
                starts = np.array([ds[j].start_address for j in js], dtype=np.int64)
                hit[js] = arch.swizzle_address(sw, starts[:, None] + self._relative(ds[js[0]])[None, :], bo)
            hit.flags.writeable = False
            self._ptx[key] = hit
        return hit

    @staticmethod
    def _descriptor_at(read: Read, base: int, wrap: bool = True):
        """The PTX descriptor of ``read`` for smem base ``base``: the start address in 16-byte units, of which
        the 14-bit field keeps the low 18 bits (``matrix-descriptor-encode``; wgmma reads from there)."""
        start = (base + read.desc.start_address) & ~15
        return arch_descriptor(read.desc._replace(start_address=start & arch.ENCODE_MASK if wrap else start))

    def _relative(self, d):
        """``(row, k) -> byte offset`` (``v = row + rows * k``) of descriptor form ``d``, once per form."""
        ck = (d.swizzle, d.leading_byte_offset, d.stride_byte_offset)
        rel = self._ptx.get(ck)
        if rel is None:
            import numpy as np
            sh, st = arch.canonical_layout(self.major, d.swizzle, self.atype, self.rows,
                                           lbo=d.leading_byte_offset, sbo=d.stride_byte_offset)
            rowoff = np.array([arch.layout_offset(sh[0], st[0], r) for r in range(self.rows)], dtype=np.int64)
            koff = np.array([arch.layout_offset(sh[1], st[1], k) for k in range(self.kin)], dtype=np.int64)
            rel = self._ptx[ck] = (koff[:, None] + rowoff[None, :]).ravel()
        return rel

    def read_arrays(self):
        """``(elements, offsets)`` of every read as ``(reads, values)`` numpy arrays."""
        hit = self.__dict__.get("_read_arrays")
        if hit is None:
            import numpy as np
            n = self.rows * self.kin
            if not self.reads:
                e = o = np.zeros((0, n), dtype=np.int64)
            else:
                e = np.stack([rd.element_array for rd in self.reads]).reshape(len(self.reads), n)
                o = np.stack([rd.offset_array for rd in self.reads]).reshape(len(self.reads), n)
            hit = self.__dict__["_read_arrays"] = (e, o)
        return hit

    def cosize_bytes(self) -> int:
        return int(self.smem.layout.cosize()) * self.bits // 8


def as_gmma_smem(layout, bits: int):
    """``(GmmaSmemLayout, error)``: a layout written with the pointer marker as it is; a
    plain layout on an unswizzled pointer; an element-offset swizzle is what CuTe's
    ``make_gmma_desc`` refuses (the error), modelled on its inner layout."""
    if isinstance(layout, GmmaSmemLayout):
        return layout, None
    if getattr(layout, "is_composed", False):
        err = GmmaDescriptorError(
            f"make_gmma_desc: {layout} swizzles element offsets; GMMA needs the swizzle on the smem pointer "
            "(a GMMA::Layout_*_Atom, 'Sw<B,4,3> o smem_ptr[..b](unset) o L'): CuTe does not compile this")
        return GmmaSmemLayout(Swizzle(0, 4, 3), bits, layout.inner), err
    return GmmaSmemLayout(Swizzle(0, 4, 3), bits, layout), None


def _flat_shape(L) -> tuple:
    return tuple(int(it.product(s)) for s in (L.shape if isinstance(L.shape, tuple) else (L.shape,)))


def gmma_operand_model(mma, operand: str, value_type: str, layout) -> GmmaOperandModel:
    """The reads of descriptor operand ``operand`` ("A" or "B") of ``mma`` from the smem
    tile ``layout`` ((MN,K) or (MN,K,PIPE); a :class:`GmmaSmemLayout` or a layout)."""
    import numpy as np
    atom = mma.atom
    majors = gmma_majors(atom.name)
    major = majors[0] if operand == "A" else majors[1]
    vt = atom.val_type_a if operand == "A" else atom.val_type_b
    bits = value_type_bits(value_type)
    smem, err = as_gmma_smem(layout, bits)
    atype = value_type_info(vt)["ptx"]
    rows = atom.shape_mnk[0] if operand == "A" else atom.shape_mnk[1]
    kin = atom.shape_mnk[2]
    L = smem.layout
    shape = _flat_shape(L)
    m = GmmaOperandModel(operand, major, value_type, atype, bits, smem, rows, kin, shape=shape, error=err)
    ident = Layout(shape)
    for w, t0 in enumerate(range(0, mma.size(), WARPGROUP)):
        thr = mma.get_slice(t0)
        try:
            p, off = thr.partition(operand, L)
            pi, oi = thr.partition(operand, ident)
        except AlgebraError as e:                       # CuTe's partition static_asserts it the same way
            m.error = GmmaDescriptorError(f"partition_{operand} of the ({', '.join(map(str, shape))}) tile by the "
                                          f"TiledMMA does not compile: {e}")
            return m
        off, oi = int(off), int(oi)
        if m.error is None:
            try:
                desc, frag = descriptor_fragment(p, bits, smem.swizzle, major, start_address=off * bits // 8)
            except GmmaDescriptorError as e:
                m.error = e
        if m.error is not None:
            desc, frag = None, Layout((1,) + tuple(_flat_shape(p)[1:]))
        vals = rows * kin
        ptab, itab = index_array(p), index_array(pi)
        rest = _flat_shape(p)[1:]
        nrest = 1
        for r in rest:
            nrest *= r
        els, offs = oi + itab, off + ptab                 # values vals*j .. vals*(j+1)-1: fragment element j
        for a in (els, offs):
            a.flags.writeable = False
        try:                                            # fragment element j (colexicographic) at once
            ftab = function_table(frag)
        except SymlayoutError:
            ftab = None
        if ftab is not None and len(ftab) != nrest:
            ftab = None
        for j in range(nrest):
            blk, q = [], j
            for r in rest:
                blk.append(q % r)
                q //= r
            if ftab is not None:
                fo = int(ftab[j])
            else:
                fo = int(frag((0,) + tuple(blk))) if len(rest) > 1 else int(frag(0, blk[0]))
            d = desc.advanced(fo) if desc is not None else None
            m.reads.append(Read(w, t0, tuple(blk), d, els[vals * j:vals * (j + 1)], offs[vals * j:vals * (j + 1)]))
    return m
