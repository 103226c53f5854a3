"""UMMA operands of an SM100 TiledMMA: what ``tcgen05.mma`` reads from shared memory for every
(mn, k), against where the TiledMMA's partition keeps that element (the foundation of contract
Version 3's ``descriptor`` / ``slot_agreement`` for A and B).

The kernel keeps an SS operand in the MMA-partitioned form ``UMMA::tile_to_mma_shape`` builds,
``((MMA_MN, MMA_K), MMAs_MN, MMAs_K, stages)``; ``make_fragment_A/B`` gives one descriptor per block
(``make_umma_desc`` of mode 0, advanced by the block's offset).  For each block and each ``(row, k)``
of one instruction:

* CuTe's view (:mod:`symlayout.atoms.umma`): the logical element the partition names there
  (``partition_A/B`` of the CTA's ``(MN, K, stages)`` tile) and its byte address
  ``Sw(base + L(...) * bytes)``;
* the PTX ISA's view (:mod:`symlayout.arch.tcgen05`): the byte the MMA reads through the descriptor
  (CuTe's, or one written by hand).

>>> from symlayout.atoms.umma import layout_atom, tile_to_mma_shape, umma_mma_atom
>>> from symlayout.tiled.mma import make_tiled_mma
>>> mma = make_tiled_mma(umma_mma_atom("SM100_MMA_F16BF16_SS<half_t,half_t,float,128,64,UMMA::Major::K,UMMA::Major::K>"))
>>> smem = tile_to_mma_shape(layout_atom("K_SW128", "half_t"), ((128, 16), 1, 4, 2))
>>> m = umma_operand_model(mma, "A", smem, (128, 64, 2), base=0x4000)
>>> len(m.reads), m.obligations(), m.mismatches()
(8, 16384, [])
>>> bad = umma_operand_model(mma, "A", smem, (128, 64, 2), base=0x4000, desc=0x4000402000010400)
>>> bad.mismatches()[0]
'block (0, 0, 0) (row 8, k 0): the MMA reads byte 0x4240 (element (8, 0, 0) is at 0x4400)'
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..algebra import int_tuple as it
from ..algebra.layout import Layout, function_table
from .arrays import index_array
from ..arch import tcgen05 as arch
from ..errors import TilingError
from ..atoms.gmma import GmmaSmemLayout
from ..atoms.umma import UmmaDescriptorError, descriptor_fragment


@dataclass
class UmmaRead:
    """One instruction's operand block: its index ``(mn-block, k-block, stage)``, the descriptor the MMA
    is given, and per value ``v = row + rows*k`` the logical element, CuTe's address and the read address."""
    block: tuple
    desc: arch.SmemDescriptor
    elements: list = field(repr=False)
    cute: list = field(repr=False)
    ptx: list = field(repr=False)


@dataclass
class UmmaOperandModel:
    operand: str
    major: str
    rows: int
    kin: int
    tile: tuple
    reads: list = field(default_factory=list)
    error: UmmaDescriptorError | None = None
    desc_problems: list = field(default_factory=list)

    def coord(self, e: int) -> tuple:
        return it.colex_coord(e, self.tile)

    def obligations(self) -> int:
        """Read addresses compared (one per (mn, k) of every block)."""
        return sum(len(r.ptx) for r in self.reads)

    def mismatches(self, limit: int = 10) -> list:
        """Where the MMA reads a byte other than the one CuTe keeps that element at (first ``limit``)."""
        out = []
        for r in self.reads:
            for v, (c, p) in enumerate(zip(r.cute, r.ptx)):
                if c != p:
                    row, k = v % self.rows, v // self.rows
                    out.append(f"block {r.block} (row {row}, k {k}): the MMA reads byte {hex(p)} (element "
                               f"{self.coord(r.elements[v])} is at {hex(c)})")
                    if len(out) >= limit:
                        return out
        return out


def umma_operand_model(mma, operand: str, smem: GmmaSmemLayout, tile: tuple, base: int = 0,
                       desc: int | None = None) -> UmmaOperandModel:
    """The reads of SS operand ``operand`` of ``mma`` from ``smem`` (the tile_to_mma_shape layout of one
    CTA's ``tile = (MN, K[, stages])``) at byte address ``base``; ``desc`` a hand-written 64-bit
    descriptor used instead of CuTe's (decoded field by field, its problems kept in ``desc_problems``)."""
    atom = mma.atom
    major = atom.frg_type_a if operand == "A" else atom.frg_type_b
    major = "MN" if major.endswith("MN>") else "K"
    rows, kin = (int(x) for x in it.product_each(smem.layout[0].shape))
    m = UmmaOperandModel(operand, major, rows, kin, tuple(tile))
    try:
        d, frag = descriptor_fragment(smem, major, start_address=base)
    except UmmaDescriptorError as e:
        m.error = e
        return m
    d0 = d.arch()
    if desc is not None:
        d0, m.desc_problems = arch.SmemDescriptor.decode(desc)
    part, _ = mma.get_slice(0).partition(operand, Layout(tuple(tile)))
    elems = [int(x) for x in function_table(part)]
    offs = [int(x) for x in function_table(smem.layout)]
    e = smem.bits // 8
    n = rows * kin
    blocks = _block_coords(tuple(frag.shape[1:]))
    for j, fo in enumerate(int(x) for x in function_table(frag)):
        dj = d0.advanced(fo)
        vals = range(n * j, n * (j + 1))
        m.reads.append(UmmaRead(blocks[j], dj, [elems[v] for v in vals],
                                [smem.swizzle(base + offs[v] * e) for v in vals],
                                [arch.element_address(dj, major, e, v % rows, (v % n) // rows) for v in vals]))
    return m


def _block_coords(shape: tuple) -> list:
    """Colexicographic coordinates of the fragment's blocks, flattened to ``(mn-block, k-block, stage...)``."""
    flat = [int(it.product(s)) for s in shape]
    out = []
    total = 1
    for s in flat:
        total *= s
    for j in range(total):
        c, q = [], j
        for s in flat:
            c.append(q % s)
            q //= s
        out.append(tuple(c))
    return out


@dataclass
class UmmaReadArrays:
    """:func:`umma_operand_model`'s reads as int64 arrays of shape ``(blocks, rows*kin)`` (value
    ``v = row + rows*k`` of an instruction): the logical element (``colex`` index into ``tile``), its
    element offset in ``smem`` (unswizzled), CuTe's byte address and the byte the MMA reads."""
    operand: str
    major: str
    rows: int
    kin: int
    tile: tuple
    bits: int
    base: int
    blocks: list = field(default_factory=list)
    descs: list = field(default_factory=list)
    elements: object = None
    offsets: object = None
    cute: object = None
    ptx: object = None
    cute_desc: object = None          # make_umma_desc's descriptor (block 0), whatever ``desc`` says
    error: UmmaDescriptorError | None = None
    desc_problems: list = field(default_factory=list)

    def coord(self, e: int) -> tuple:
        return tuple(int(x) for x in it.colex_coord(int(e), self.tile))

    # --- issue 29: packed sub-byte elements (fp4 of kind::mxf4 / mxf4nvf4) are addressed by nibble ---
    #: elements per byte of a packed sub-byte operand (2 for fp4), 1 otherwise; with ``per > 1`` the
    #: ``cute``/``ptx`` arrays and ``base`` are in units of one element (byte * per + element in the byte)
    per: int = 1

    def cute_at(self, swizzle, off):
        """CuTe's address of element offset ``off`` (the swizzle acts on the byte address)."""
        byte, sub = divmod(off, self.per)
        return swizzle(self.base // self.per + byte) * self.per + sub

    def ptx_at(self, d, row, k):
        """The address ``tcgen05.mma`` reads for instruction element ``(row, k)`` through ``d``: a packed
        element lies in the byte of its pair along the contiguous mode (K for K-major, MN for MN-major)."""
        p = self.per
        if p == 1:
            return arch.element_address(d, self.major, self.bits // 8, row, k)
        if self.major == "K":
            return arch.element_address(d, "K", 1, row, k // p) * p + k % p
        return arch.element_address(d, "MN", 1, row // p, k) * p + row % p

    def where(self, a: int) -> str:
        """An address in words: ``smem byte 17``, or ``smem byte 8, element 1 of the byte``."""
        return f"smem byte {a}" if self.per == 1 else f"smem byte {a // self.per}, element {a % self.per} of the byte"

    def obligations(self) -> int:
        return 0 if self.ptx is None else int(self.ptx.size)


def umma_read_arrays(mma, operand: str, smem: GmmaSmemLayout, tile: tuple, base: int = 0,
                     desc: int | None = None) -> UmmaReadArrays:
    """The same reads as :func:`umma_operand_model`, every block and (row, k) at once (numpy): the
    PTX ISA's address formulas (:func:`symlayout.arch.tcgen05.element_address`) are arithmetic and
    evaluate on arrays of rows and ks unchanged.  ``tile`` is the TiledMMA's ``(MN, K, stages)``: for a
    pair, both CTAs' rows (CuTe's ``partition_A/B`` by peer 0, ``get_slice(0)``, of the pair's tile)."""
    import numpy as np       # lazy: numpy's start-up (the prover's tables import it the same way)
    atom = mma.atom
    major = atom.frg_type_a if operand == "A" else atom.frg_type_b
    major = "MN" if major.endswith("MN>") else "K"
    inner = smem.layout if isinstance(smem, GmmaSmemLayout) else getattr(smem, "inner", smem)
    rows, kin = (int(x) for x in it.product_each(inner[0].shape))
    bits = getattr(smem, "bits", 0)
    per = max(1, 8 // bits) if bits else 1
    m = UmmaReadArrays(operand, major, rows, kin, tuple(tile), bits * per, base * per, per=per)
    try:
        d, frag = descriptor_fragment(smem, major, start_address=base)
    except UmmaDescriptorError as e:
        m.error = e
        return m
    m.cute_desc = d
    d0 = d.arch()
    if desc is not None:
        d0, m.desc_problems = arch.SmemDescriptor.decode(desc)
    part, _ = mma.get_slice(0).partition(operand, Layout(tuple(tile)))
    n = rows * kin
    nblk = int(frag.size())
    if int(part.size()) != nblk * n:
        raise TilingError(f"not supported: partition_{operand} of the {tuple(tile)} tile gives {part.shape}, not "
                          f"the buffer's {inner.shape}")
    m.elements = index_array(part).reshape(nblk, n)
    m.offsets = index_array(smem.layout).reshape(nblk, n)
    e = smem.bits * per // 8
    m.cute = m.cute_at(smem.swizzle, m.offsets * e)
    v = np.arange(n, dtype=np.int64)
    row, k = v % rows, v // rows
    m.blocks = _block_coords(tuple(frag.shape[1:]))
    m.descs = [d0.advanced(int(fo)) for fo in function_table(frag)]
    m.ptx = np.stack([m.ptx_at(dj, row, k) for dj in m.descs])
    return m
