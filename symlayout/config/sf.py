"""``[sf.X]`` (Version 3, block-scaled formats, issue 29): the scale factors of operand X: their type and
vector size, one CTA's staged factor buffer in shared memory, where the MMA reads them from (TMEM after
``tcgen05.cp``, or registers on SM120), and optionally the layout the global buffer was written with."""

from __future__ import annotations

from ..algebra.int_tuple import flatten_leaves, product as it_product
from ..algebra.layout import Layout
from ..atoms.blockscaled import is_blockscaled_name
from ..atoms.sm120 import is_sm120_name, parse_sm120_name
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
        sm120 = mma is not None and is_sm120_name(mma.atom) and parse_sm120_name(mma.atom).scaled
        if mma is None or not (is_blockscaled_name(mma.atom) or sm120):
            self.fail(("sf",), "[sf.X] scale factors need a block-scaled SM100 atom in [mma] (SM100_MMA_MXF8F6F4_SS, "
                               "SM100_MMA_MXF4_SS, their _2x1SM forms) or a block-scaled SM120 mma.sync atom "
                               "(SM120::BLOCKSCALED::SM120_16x8x{32,64}_TN_VS)")
        out = {}
        for op, spec in t.items():
            keys = ("sf", op)
            if op not in ("A", "B"):
                self.fail(keys, f"[sf.{op}]: unknown operand {op!r}; scale factors are [sf.A] and [sf.B]")
            self.operand_table(spec, keys, SF)
            typ = self.sf_type(self.value(spec, keys, SF["type"]), keys + ("type",))
            vec = self.value(spec, keys, SF["vec"])
            placement = self.value(spec, keys, SF["placement"])
            if placement != ("registers" if sm120 else "tmem"):
                self.fail(keys + ("placement",), f"[sf.{op}] placement = {placement!r}: {mma.atom} " + (
                    "(mma.sync) reads its scale factors from registers (placement = \"registers\")" if sm120 else
                    "(tcgen05.mma) reads its scale factors from Tensor Memory (placement = \"tmem\")"))
            raw = spec.get("smem")
            smem = None
            if raw is None and not sm120:
                self.fail(keys, f"[sf.{op}] needs smem (the factors' shared-memory buffer tcgen05.cp reads)")
            if raw is not None:
                raw = self.value(spec, keys, SF["smem"])
                smem = self.plain_layout(raw, keys + ("smem",), symbols, f"[sf.{op}] smem")
                if sm120 and smem.rank() not in (2, 3):
                    self.fail(keys + ("smem",), f"[sf.{op}] smem must be the SM120 collective's SmemLayoutSF{op} over "
                                                f"(MN, K[, stages]), got rank {smem.rank()}: {raw!r}")
                if not sm120 and (smem.rank() not in (3, 4) or not isinstance(smem.shape[0], tuple)
                                  or len(smem.shape[0]) != 2):
                    self.fail(keys + ("smem",), f"[sf.{op}] smem must be MMA-partitioned as the collective prints "
                                                f"it, ((MMA_MN,(vec,NSF)),MMAs_MN,MMAs_K[,stages]), got {raw!r}")
            raw_g = spec.get("gmem")
            gmem = None
            if raw_g is not None:
                raw_g = self.value(spec, keys, SF["gmem"])
                gmem = self.plain_layout(raw_g, keys + ("gmem",), symbols, f"[sf.{op}] gmem")
                if gmem.rank() not in (2, 3):
                    self.fail(keys + ("gmem",), f"[sf.{op}] gmem must be a layout over the data's (MN, K) or "
                                                f"(MN, K, L) coordinates, got rank {gmem.rank()}: {raw_g!r}")
            regs, raw_r = self.sf_registers(spec, keys, symbols, sm120)
            out[op] = SfConfig(op, typ, vec, smem, raw, placement, self.value(spec, keys, SF["tmem_column"]), gmem,
                               raw_g, self.lines.line(*keys), regs, raw_r, self.value(spec, keys, SF["thread_id"]),
                               self.value(spec, keys, SF["byte_id"]))
        return out

    def sf_registers(self, spec, keys, symbols, sm120):
        """``(registers layout or None, raw)``; the register keys only with SM120's ``placement = "registers"``."""
        for k in ("registers", "thread_id", "byte_id"):
            if k in spec and not sm120:
                self.fail(keys + (k,), f"[sf.{keys[1]}] {k}: only with an SM120 block-scaled atom "
                                       "(placement = \"registers\")")
        if "registers" not in spec:
            return None, None
        raw = self.value(spec, keys, SF["registers"])
        lay = self.plain_layout(raw, keys + ("registers",), symbols, f"[sf.{keys[1]}] registers")
        if lay.rank() != 2 or it_product(lay.shape[0]) != 32:
            self.fail(keys + ("registers",), f"[sf.{keys[1]}] registers must be a TV layout (T32,V) -> (MN,K) over "
                                             f"the warp's 32 threads, got {raw!r}")
        return lay, raw

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
