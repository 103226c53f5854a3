"""``[sf.X]`` (Version 3, block-scaled formats, issue 29): the scale factors of operand X: their type and
vector size, one CTA's staged factor buffer in shared memory, where the MMA reads them from (TMEM after
``tcgen05.cp``, or registers on SM120), and optionally the layout the global buffer was written with."""

from __future__ import annotations

from ..algebra.int_tuple import flatten_leaves
from ..algebra.layout import Layout
from ..atoms.blockscaled import is_blockscaled_name
from ..atoms.types import canonical_type
from ..errors import SymlayoutError
from .keys import SF
from .model import SfConfig

#: the factor types CuTe's ``to_ScaleFormat`` knows
SF_TYPES = ("float_ue4m3_t", "float_ue8m0_t")


class SfSection:
    """``[sf.A]`` / ``[sf.B]``."""

    def load_sf_tables(self, data, symbols, mma) -> dict:
        if "sf" not in data:
            return {}
        t = self.table(data["sf"], ("sf",))
        if mma is None or not is_blockscaled_name(mma.atom):
            self.fail(("sf",), "[sf.X] scale factors need a block-scaled SM100 atom in [mma] (SM100_MMA_MXF8F6F4_SS, "
                               "SM100_MMA_MXF4_SS, their _2x1SM forms)")
        out = {}
        for op, spec in t.items():
            keys = ("sf", op)
            if op not in ("A", "B"):
                self.fail(keys, f"[sf.{op}]: unknown operand {op!r}; scale factors are [sf.A] and [sf.B]")
            self.operand_table(spec, keys, SF)
            typ = self.sf_type(self.value(spec, keys, SF["type"]), keys + ("type",))
            vec = self.value(spec, keys, SF["vec"])
            raw = self.value(spec, keys, SF["smem"])
            smem = self.plain_layout(raw, keys + ("smem",), symbols, f"[sf.{op}] smem")
            if smem.rank() not in (3, 4) or not isinstance(smem.shape[0], tuple) or len(smem.shape[0]) != 2:
                self.fail(keys + ("smem",), f"[sf.{op}] smem must be MMA-partitioned as the collective prints it, "
                                            f"((MMA_MN,(vec,NSF)),MMAs_MN,MMAs_K[,stages]), got {raw!r}")
            raw_g = spec.get("gmem")
            gmem = None
            if raw_g is not None:
                raw_g = self.value(spec, keys, SF["gmem"])
                gmem = self.plain_layout(raw_g, keys + ("gmem",), symbols, f"[sf.{op}] gmem")
                if gmem.rank() not in (2, 3):
                    self.fail(keys + ("gmem",), f"[sf.{op}] gmem must be a layout over the data's (MN, K) or "
                                                f"(MN, K, L) coordinates, got rank {gmem.rank()}: {raw_g!r}")
            placement = self.value(spec, keys, SF["placement"])
            if placement != "tmem":
                self.fail(keys + ("placement",), f"[sf.{op}] placement = {placement!r}: {mma.atom} (tcgen05.mma) reads "
                                                 "its scale factors from Tensor Memory (placement = \"tmem\"); "
                                                 "\"registers\" is SM120's mma.sync, not modelled yet")
            out[op] = SfConfig(op, typ, vec, smem, raw, placement, self.value(spec, keys, SF["tmem_column"]), gmem,
                               raw_g, self.lines.line(*keys))
        return out

    def sf_type(self, raw, keys) -> str:
        try:
            typ = canonical_type(raw)
        except SymlayoutError as e:
            self.fail(keys, f"{self.where(keys)}: {e}")
        if typ not in SF_TYPES:
            self.fail(keys, f"{self.where(keys)} {raw!r} is not a scale-factor type (float_ue4m3_t, float_ue8m0_t)")
        return typ

    def plain_layout(self, raw, keys, symbols, what) -> Layout:
        self.check_ascii(raw, keys)
        lay = self.notation(raw, keys, symbols, "a layout")
        if not hasattr(lay, "shape") or getattr(lay, "is_composed", False) or getattr(lay, "is_swizzle", False):
            self.fail(keys, f"{what} must be a layout 'shape:stride' (no swizzle), got {raw!r}")
        if not all(isinstance(v, int) for v in flatten_leaves((lay.shape, lay.stride))):
            self.fail(keys, f"{what} must be concrete (no [params] symbols), got {raw!r}")
        return lay
