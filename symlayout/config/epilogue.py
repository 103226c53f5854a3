"""``[epilogue]`` (issue 31): the CTA's C tile stored subtile by subtile, as CUTLASS 3's SM90 epilogue does.

``[copy.C]`` then describes one subtile (``EpilogueTile``): its ``smem`` is the epilogue's smem buffer of
one subtile, and the register -> smem copy (stmatrix) runs once per subtile of the C tile.  The loader
gives ``[copy.C]`` the whole C tile as the prover sees it: subtile ``(i, j)`` in a buffer of its own
(``smem`` translated by ``(i + j * tiles_M) * cosize``), so coverage, exactly_once, slot_agreement and
bank_conflicts of ``[copy.C]`` hold for the whole tile over the subtile loop (the reuse of the buffers
in time, ``StagesD``, is ordering: out of scope).  ``[tma.C]`` (``SM90_TMA_STORE``) stores one subtile from
that buffer to global memory.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..algebra.composed import ComposedLayout, Swizzle
from ..atoms.gmma import GmmaSmemLayout
from ..atoms.types import value_type_bits
from ..algebra.int_tuple import flatten_leaves, product
from ..algebra.layout import Layout, make_layout
from ..tiled.mma import make_tiled_mma
from .keys import EPILOGUE
from .model import SmemConfig


@dataclass(frozen=True)
class EpilogueConfig:
    """``[epilogue]``: the subtile ``tile`` (M,N) of the C tile ``cta_tile``; ``smem`` one subtile's buffer
    (the ``[copy.C]`` smem as written), ``tma`` the ``[tma.C]`` store (a TmaConfig) or None."""
    tile: tuple
    cta_tile: tuple
    smem: Any
    raw_smem: str
    type: str
    align: int
    tma: Any = None
    line: int = 0

    @property
    def subtiles(self) -> tuple:
        return tuple(c // t for c, t in zip(self.cta_tile, self.tile))

    def smem_table(self) -> SmemConfig:
        """The subtile buffer as the ``[smem.C]`` a TMA store reads: a swizzle on element offsets (``[copy.C]``'s
        notation) is the same function as CuTe's swizzle pointer ``Sw<B,M+log2(bytes),S> o smem_ptr`` on bytes,
        the form ``make_tma_copy`` takes."""
        L = self.smem
        sw = getattr(L, "swizzle", None) if getattr(L, "is_composed", False) else None
        if sw is not None and sw.b and not L.offset:
            shift = (value_type_bits(self.type) // 8).bit_length() - 1
            L = GmmaSmemLayout(Swizzle(sw.b, sw.m + shift, sw.s), value_type_bits(self.type), L.inner)
        return SmemConfig("C", self.type, L, self.align, self.raw_smem)


def whole_tile(sub, subtiles):
    """The subtile layout repeated over the C tile, each subtile in a buffer of its own."""
    inner = sub.inner if getattr(sub, "is_composed", False) else sub
    C = int(inner.cosize())
    nm, nn = subtiles
    full = make_layout(make_layout(inner[0], Layout(nm, C)), make_layout(inner[1], Layout(nn, C * nm)))
    if getattr(sub, "is_composed", False):
        return ComposedLayout(sub.swizzle, sub.offset, full)
    return full


class EpilogueSection:
    """``[epilogue]``, and ``[tma.C]`` beside it."""

    def load_epilogue(self, data, symbols, mma, copies):
        """``(EpilogueConfig or None, copies)``: ``copies["C"]`` given the whole C tile."""
        if "epilogue" not in data:
            if "C" in (data.get("tma") or {}):
                self.fail(("tma", "C"), "[tma.C] stores the epilogue's subtiles: it needs an [epilogue] table "
                                        "(tile) and [copy.C] (the subtile's smem)")
            return None, copies
        keys = ("epilogue",)
        t = self.table(data["epilogue"], keys)
        self.check_keys(t, keys, EPILOGUE.names)
        if mma is None or "C" not in copies:
            self.fail(keys, "[epilogue] needs [mma] and [copy.C] (the copy of the accumulator into one subtile's smem)")
        tile = self.int_pair(t, keys, "tile")
        cc = copies["C"]
        cta = self.int_pair(t, keys, "cta_tile") if "cta_tile" in t else self.mma_c_tile(mma)
        if cc.tiled is not None:
            self.fail(("copy", "C"), "[copy.C] with [epilogue]: not supported: a hand-built TiledCopy (thr/val, tv/tiler)")
        inner = cc.smem.inner if getattr(cc.smem, "is_composed", False) else cc.smem
        if not all(isinstance(x, int) for x in flatten_leaves(inner.shape) + flatten_leaves(inner.stride)):
            self.fail(("copy", "C", "smem"), "[copy.C] smem with [epilogue]: not supported: a parametric subtile "
                                             "(write the subtile's smem layout with concrete extents and strides)")
        have = tuple(int(product(cc.smem.shape[i])) for i in range(2)) if cc.smem.rank() == 2 else None
        if have != tile:
            self.fail(("copy", "C", "smem"), f"[copy.C] smem {cc.raw_smem!r} is one subtile of the epilogue: its shape "
                                             f"must be [epilogue] tile {tile}, got {have}")
        for c, s, what in zip(cta, tile, "MN"):
            if c % s:
                self.fail(keys + ("tile",), f"[epilogue] tile {tile}: the C tile {cta} is not a whole number of "
                                            f"subtiles along {what}")
        full = whole_tile(cc.smem, tuple(c // s for c, s in zip(cta, tile)))
        epi = EpilogueConfig(tile, cta, cc.smem, cc.raw_smem, cc.element_type, cc.align, None, self.lines.line(*keys))
        copies = dict(copies, C=replace(cc, smem=full, raw_smem=f"{cc.raw_smem} per subtile, over {cta}"))
        if "C" in (data.get("tma") or {}):
            tma = self.load_tma_tables({"tma": {"C": data["tma"]["C"]}}, symbols, {"C": epi.smem_table()})
            epi = replace(epi, tma=tma["C"])
        return epi, copies

    def int_pair(self, t, keys, name):
        raw = self.value(t, keys, EPILOGUE[name])
        v = self.notation(raw, keys + (name,), {}, "an int tuple")
        v = v.shape if hasattr(v, "shape") else v
        if not (isinstance(v, tuple) and len(v) == 2 and all(type(x) is int and x > 0 for x in v)):
            self.fail(keys + (name,), f"[epilogue] {name} must be (M,N) like \"(64,32)\", got {raw!r}")
        return v

    def mma_c_tile(self, mma):
        t = make_tiled_mma(mma.atom, mma.layout, list(mma.permutation) if mma.permutation else None).tile_shape()
        return (int(t[0]), int(t[1]))
