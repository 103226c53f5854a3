"""TMA loads of a shared-memory tile: which smem byte every box element lands on.

``make_tma_copy`` (:mod:`symlayout.atoms.tma`, CuTe's derivation) cuts the CTA tile
into boxes: the box is the leading modes of the smem layout's inverse (smem offset
-> tile coordinate), so box instruction ``b`` fills the smem offsets
``[b*B, (b+1)*B)``; with multicast, each of the ``m`` CTAs of the cluster loads one
``B/m`` slice of every box and writes it into every CTA's smem.  The hardware
(:mod:`symlayout.arch.tma`, checked on the H200) writes box element ``c`` of a load
whose destination is ``dst`` to ``smem_address(dst + box_smem_offset(c))`` (rows
padded to the swizzle span, the swizzle on the absolute address) and reads it from
the global element ``origin + c`` along the box's global modes.  CuTe expects the
tile element at coordinate ``t`` where the smem layout's function puts it: at
``Sw(base + L(t) * bytes)`` for a swizzle on the pointer (``Sw o smem_ptr[Nb] o L``),
at ``base + Sw(L(t)) * bytes`` for a swizzle written without the marker (it acts on
element offsets, as CuTe composes ``Sw o 0 o L``; ``make_tma_copy`` still derives
the map's byte swizzle from its bits).  This module lists every write, with both
views; :mod:`symlayout.prove.hopper.obligations` compares them.

>>> from symlayout.atoms.gmma import layout_atom
>>> sA = layout_atom("K_SW128", "half_t").tile_to_shape((128, 64, 2))
>>> t = tma_model("half_t", ((1024, 512), (512, 1)), sA, (128, 64))
>>> t.copy.box_dim, len(t.writes), t.writes[0].dst, t.writes[-1].dst
((64, 128), 2, 0, 16384)
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..algebra import int_tuple as it
from ..arch import tma as arch_tma
from ..atoms import canonical_type
from ..atoms.types import smem_slot_bits
from ..atoms.gmma import GmmaSmemLayout
from ..atoms.tma import DATA_TYPE, TmaCopy, TmaCopyError, make_tma_copy, tma_swizzle
from ..errors import SymlayoutError
from ..algebra.layout import Layout, function_table, slice_and_offset
from ..algebra.notation import _
from ..algebra.composed import ComposedLayout, Swizzle
from ..algebra.symbolic import DynInt
from .arrays import index_array


@dataclass
class Write:
    """One box slice: stage, box instruction ``b``, multicast slice ``c``; ``dst`` its
    (unswizzled) destination byte offset from the smem base, ``origin`` the tile
    coordinate of its first element."""
    stage: int
    box: int
    slice: int
    dst: int
    origin: tuple


@dataclass
class TmaModel:
    """Every TMA write into the tile of one operand (all stages).  Addresses count *units*: bytes, or
    nibbles for packed 4-bit elements (``16U4_ALIGN8B``: two to a byte); ``bits`` is one element's
    shared-memory slot (8 for the 16-byte containers of ``16U4_ALIGN16B`` / ``16U6_ALIGN16B``)."""
    value_type: str
    bits: int
    smem: GmmaSmemLayout                # the layout, its byte swizzle (Sw<0,..> under an element swizzle)
    copy: TmaCopy | None
    swizzle: str                        # the swizzle the tensor map is encoded with
    writes: list = field(default_factory=list)
    stage_offsets: tuple = ()           # element offset of each stage
    tile_shape: tuple = ()              # (MN, K) of one stage
    error: SymlayoutError | None = None
    element_swizzle: Swizzle | None = None   # a swizzle on element offsets (written without smem_ptr)
    _box: list | None = field(default=None, repr=False)
    _tab: list | None = field(default=None, repr=False)
    _merged_strides: dict = field(default_factory=dict, repr=False)

    @property
    def per_byte(self) -> int:
        """Address units in a byte: 1, or 2 (nibbles) for packed 4-bit elements."""
        return 2 if self.bits == 4 else 1

    @property
    def bytes(self) -> int:
        """Address units of one element (bytes; 1 nibble for packed 4-bit elements)."""
        return max(self.bits // 8, 1)

    def units(self, base_bytes):
        """A byte address (e.g. an smem base) in address units."""
        return base_bytes * self.per_byte

    def where(self, a) -> str:
        """An address (units) in words: ``smem byte a``, or the byte and nibble of a packed 4-bit element."""
        a = int(a)
        if self.per_byte == 1:
            return f"smem byte {a}"
        return f"smem byte {a // 2} ({'high' if a % 2 else 'low'} nibble)"

    def unit_swizzle(self, sw, a):
        """``sw``, a swizzle on byte addresses, applied to the address(es) ``a`` in units."""
        if self.per_byte == 1:
            return sw(a)
        return sw(a // 2) * 2 + a % 2

    def layout_bytes(self, base, offsets):
        """The smem address (units) where CuTe's tensor at ``base`` (bytes) keeps the element at element
        offset(s) ``offsets`` (ints or arrays): the element swizzle on the offset, the pointer's on the byte."""
        if self.element_swizzle is not None:
            offsets = self.element_swizzle(offsets)
        return self.unit_swizzle(self.smem.swizzle, self.units(base) + offsets * self.bytes)

    def tma_address(self, a):
        """:func:`~symlayout.arch.tma.smem_address` of the unswizzled address(es) ``a`` in units."""
        return self.unit_swizzle(lambda x: arch_tma.smem_address(x, self.swizzle), a)

    def stage_layout(self) -> Layout:
        return _stage0(self.smem.layout)[0]

    def _box_table(self):
        """Per box element (flat, dimension 0 fastest): (box coordinate, tile displacement,
        unswizzled byte offset from the destination)."""
        if self._box is None:
            coords, disp, off = self.box_arrays()
            self._box = [(tuple(c), tuple(d), o) for c, d, o in zip(coords.tolist(), disp.tolist(), off.tolist())]
        return self._box

    def box_arrays(self):
        """:meth:`_box_table` as numpy arrays over the box elements (dimension 0 fastest): box
        coordinates ``(NB, rank)``, tile displacements ``(NB, tile rank)``, byte offsets ``(NB,)``
        (:func:`~symlayout.arch.tma.box_smem_offset`: dimension 0 in elements, the others in rows of
        :func:`~symlayout.arch.tma.row_pitch` bytes)."""
        hit = self.__dict__.get("_box_arrays")
        if hit is None:
            import numpy as np
            box = self.copy.box_dim
            r = np.arange(_prod(box), dtype=np.int64)
            cols = []
            for b in box:
                cols.append(r % b)
                r = r // b
            disp = np.zeros((len(cols[0]), len(self.tile_shape)), dtype=np.int64)
            for d, cd in enumerate(cols):
                for j, k in self._disp(d, cd):
                    if j < disp.shape[1]:
                        disp[:, j] += k
            off, pitch = cols[0] * self.bytes, self.row_pitch(box)
            for c, b in zip(cols[1:], box[1:]):
                off = off + c * pitch
                pitch *= b
            hit = self.__dict__["_box_arrays"] = (np.stack(cols, axis=1), disp, off)
        return hit

    def row_pitch(self, box) -> int:
        """:func:`~symlayout.arch.tma.row_pitch` in address units (a row of nibbles padded to the span)."""
        if self.per_byte == 1:
            return arch_tma.row_pitch(box, self.bytes, self.swizzle)
        span = arch_tma.SWIZZLE_SPAN_BYTES[arch_tma.swizzle_mode(self.swizzle)]
        return box[0] if self.swizzle == "none" else max(box[0], span * self.per_byte)

    def write_arrays(self, base: int = 0):
        """Every (write, box element) at once, in :attr:`writes` x box order: the tile coordinate
        ``(NW, NB, tile rank)``, whether it lies inside the tile ``(NW, NB)``, and the byte TMA
        writes (:func:`~symlayout.arch.tma.smem_address`, smem base ``base``) ``(NW, NB)``."""
        if base:
            t, inside, _a = self.write_arrays()
            dst = self.__dict__["_write_dst"]
            return t, inside, self.tma_address(self.units(base) + dst)
        hit = self.__dict__.get("_write_arrays")
        if hit is None:
            import numpy as np
            _c, disp, off = self.box_arrays()
            origin = np.array([w.origin for w in self.writes], dtype=np.int64).reshape(len(self.writes), -1)
            dst = np.array([w.dst for w in self.writes], dtype=np.int64)
            t = origin[:, None, :] + disp[None, :, :]
            inside = np.all((t >= 0) & (t < np.array(self.tile_shape, dtype=np.int64)), axis=2)
            self.__dict__["_write_dst"] = dst[:, None] + off[None, :]
            addr = self.tma_address(self.__dict__["_write_dst"])
            hit = self.__dict__["_write_arrays"] = (t, inside, addr)
        return hit

    def cute_addresses(self, base: int, stages, coords):
        """:meth:`cute_address` of tile coordinates ``coords`` (``(..., tile rank)``, inside the tile)
        of stages ``stages`` (broadcast against ``coords[..., 0]``), as an array."""
        import numpy as np
        tab = self.__dict__.get("_tab_array")
        if tab is None:
            tab = self.__dict__["_tab_array"] = index_array(self.stage_layout())
        i, s = np.zeros(coords.shape[:-1], dtype=np.int64), 1
        for j, n in enumerate(self.tile_shape):
            i += coords[..., j] * s
            s *= n
        so = np.array(self.stage_offsets, dtype=np.int64)[stages]
        return self.layout_bytes(base, so + tab[i])

    def elements(self, w: Write):
        """``(box coordinate, tile coordinate or None, TMA byte address from base 0)`` of
        every element the slice ``w`` writes (the tile coordinate None: outside the tile)."""
        for c, disp, off in self._box_table():
            t = tuple(o + d for o, d in zip(w.origin, disp))
            inside = all(0 <= x < s for x, s in zip(t, self.tile_shape))
            yield c, (t if inside else None), self.tma_address(w.dst + off)

    def element(self, w: Write, b: int, base: int = 0):
        """Box element ``b`` (flat, dimension 0 fastest) of :meth:`elements` of ``w``: ``(box coordinate,
        tile coordinate or None, TMA byte address from smem base ``base``)``, from :meth:`box_arrays` alone."""
        coords, disp, off = self.box_arrays()
        c, dd = tuple(coords[b].tolist()), tuple(disp[b].tolist())
        t = tuple(o + d for o, d in zip(w.origin, dd))
        inside = all(0 <= x < s for x, s in zip(t, self.tile_shape))
        return c, (t if inside else None), self.tma_address(self.units(base) + w.dst + int(off[b]))

    def _disp(self, d: int, cd: int):
        """Tile-coordinate displacement along the global modes box dimension ``d`` walks."""
        js = self.copy.basis[d]
        if len(js) == 1:
            return [(js[0], cd)]
        # modes merged by CuTe (static strides only): decompose the element offset
        strides = self._merged_strides[d]
        off = cd * min(strides.values())
        out = []
        for j in sorted(js, key=lambda j: -strides[j]):
            out.append((j, off // strides[j]))
            off %= strides[j]
        return out

    def cute_address(self, base: int, stage: int, coord: tuple) -> int:
        """Where CuTe's smem tensor keeps tile element ``coord`` of ``stage``."""
        if self._tab is None:
            self._tab = function_table(self.stage_layout())
        i, s = 0, 1
        for x, n in zip(coord, self.tile_shape):
            i += x * s
            s *= n
        return self.layout_bytes(base, self.stage_offsets[stage] + int(self._tab[i]))


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def _stage0(L: Layout):
    """(the rank-2 layout of stage 0, element offset of each stage)."""
    if L.rank() == 2:
        return L, (0,)
    n = int(it.product(L.shape[2]))
    offs = []
    L0 = None
    for s in range(n):
        Ls, o = slice_and_offset((_, _, s), L)
        L0 = L0 or Ls
        offs.append(int(o))
    return L0, tuple(offs)


def _dynamic(x):
    """A gmem extent or stride as CuTe sees a run-time value (1 stays the static ``_1``)."""
    if isinstance(x, tuple):
        return tuple(_dynamic(y) for y in x)
    if type(x) is int and x != 1:
        return DynInt(x)
    return x


def tma_model(value_type: str, gmem, smem, box, multicast: int = 1, atom: str = "SM90_TMA_LOAD",
              swizzle: Swizzle | None = None) -> TmaModel:
    """The writes of ``make_tma_copy(atom, gmem, stage layout, box, multicast)`` into every
    stage of ``smem`` (a GmmaSmemLayout or a layout, rank 2 or 3); ``swizzle``: a TMA
    swizzle encoded by hand instead of CuTe's.  CuTe's refusal is kept in ``error``."""
    bits = smem_slot_bits(value_type)
    dt = DATA_TYPE.get(canonical_type(value_type))
    if dt is not None and arch_tma.element_bits(dt)[1] != bits:
        m = TmaModel(value_type, bits, smem, None, "none")
        m.error = SymlayoutError(f"not supported: {value_type} in shared memory takes {bits} bits, but the tensor "
                                 f"map's {dt} writes {arch_tma.element_bits(dt)[1]}-bit slots (use the container type)")
        return m
    esw = composed = None
    if not isinstance(smem, GmmaSmemLayout):
        if getattr(smem, "is_composed", False):
            composed, esw = smem, (smem.swizzle if smem.swizzle.b else None)
            smem = GmmaSmemLayout(Swizzle(0, 4, 3), bits, smem.inner)
        else:
            smem = GmmaSmemLayout(Swizzle(0, 4, 3), bits, smem)
    L0, offs = _stage0(smem.layout)
    shape = tuple(int(it.product(s)) for s in L0.shape)
    m = TmaModel(value_type, bits, smem, None, "none", stage_offsets=offs, tile_shape=shape, element_swizzle=esw)
    if gmem is None:
        return m
    gshape, gstride = (tuple(gmem.shape), tuple(gmem.stride)) if hasattr(gmem, "shape") else gmem
    try:
        # what make_tma_copy is given: the stage layout as written (the swizzle on the pointer or on elements)
        src = ComposedLayout(composed.swizzle, composed.offset, L0) if composed is not None else \
            GmmaSmemLayout(smem.swizzle, bits, L0)
        tc = make_tma_copy(value_type, (_dynamic(gshape), _dynamic(gstride)), src, tuple(box), multicast, atom)
    except (TmaCopyError, SymlayoutError) as e:
        m.error = e
        return m
    m.copy = tc
    m.swizzle = tma_swizzle(swizzle) if swizzle is not None else tc.swizzle
    m._merged_strides = {d: {j: int(gstride[j]) for j in js} for d, js in enumerate(tc.basis) if len(js) > 1}
    # smem offset -> tile coordinate (CuTe's right_inverse of the stage layout)
    import numpy as np
    n = _prod(shape)
    # the first tile index holding each smem offset (sorted offsets, the first index of each)
    offsets, first = np.unique(index_array(L0), return_index=True)
    full = _prod(tc.box_dim) * multicast
    part = full // multicast
    starts = [b * full + c * part for b in range(n // full) for c in range(multicast)]
    pos = np.searchsorted(offsets, starts).tolist()
    inv = {}
    for o, p in zip(starts, pos):
        if p < len(offsets) and int(offsets[p]) == o:
            inv[o] = int(first[p])
    for s in range(len(offs)):
        for b in range(n // full):
            for c in range(multicast):
                o = b * full + c * part
                if o not in inv:
                    m.error = SymlayoutError(f"not supported: the smem layout {L0} is not a bijection onto "
                                             f"[0, {n}) (offset {o} holds no tile element)")
                    return m
                i = inv[o]
                origin = []
                for sz in shape:
                    origin.append(i % sz)
                    i //= sz
                m.writes.append(Write(s, b, c, (offs[s] + o) * m.bytes, tuple(origin)))
    return m
