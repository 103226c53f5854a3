"""``[tma.X]`` (version 2, Hopper): ``make_tma_copy(atom, gmem, smem stage, box, multicast)``."""

from __future__ import annotations

from ..arch.tma import SWIZZLE_ENUM
from ..atoms.tma import TmaCopyError, tma_swizzle
from .messages import _short, _suggest, _type_name
from .keys import OPERAND_MODES, TMA, TMA_ATOMS, TMA_ATOMS_SM100, TMA_STORE_ATOMS
from .model import TmaConfig


class TmaSection:
    """``[tma.X]``."""

    def load_tma_tables(self, data, symbols, smem) -> dict:
        if "tma" not in data:
            return {}
        t = self.table(data["tma"], ("tma",))
        out = {}
        for op, spec in t.items():
            keys = ("tma", op)
            if op == "C" and "C" not in smem:
                continue                            # issue 31: [tma.C] is the epilogue's store (config/epilogue.py)
            if op not in ("A", "B", "C"):
                self.fail(keys, f"[tma.{op}]: unknown operand {op!r}; TMA loads [tma.A] and [tma.B]")
            if not isinstance(spec, dict):
                self.fail(keys, f"tma.{op} must be a table [tma.{op}], not {_type_name(spec)} {_short(spec)}")
            if op not in smem:
                self.fail(keys, f"[tma.{op}] loads the tile of [smem.{op}], which the configuration does not have")
            self.check_keys(spec, keys, TMA.names)
            atom = self.value(spec, keys, TMA["atom"], *(("SM90_TMA_STORE",) if op == "C" else ()))
            if op == "C" and atom not in TMA_STORE_ATOMS:         # issue 31
                self.fail(keys + ("atom",), f"[tma.C] atom {atom!r}: the epilogue's store is SM90_TMA_STORE")
            if op != "C" and atom not in TMA_ATOMS:
                self.fail(keys + ("atom",), f"[tma.{op}] atom {atom!r}: expected one of {', '.join(TMA_ATOMS)}"
                                            f"{_suggest(atom, TMA_ATOMS)}")
            mc = self.value(spec, keys, TMA["multicast"])
            if mc > 1 and not atom.endswith("_MULTICAST"):
                self.fail(keys + ("multicast",), f"[tma.{op}] multicast = {mc} needs atom = 'SM90_TMA_LOAD_MULTICAST'"
                                                 " (or SM100_TMA_2SM_LOAD_MULTICAST)")
            if atom in TMA_ATOMS_SM100 and not getattr(self, "sm100_mma", False):   # Version 3
                self.fail(keys + ("atom",), f"[tma.{op}] atom {atom!r} is an SM100 TMA atom: [mma] needs an SM100 "
                                            "(SM100_MMA_*) atom")
            raw_g = self.value(spec, keys, TMA["gmem"])
            gmem = self.notation(raw_g, keys + ("gmem",), symbols, "a layout")
            if not hasattr(gmem, "shape") or getattr(gmem, "is_composed", False) or getattr(gmem, "is_swizzle", False):
                self.fail(keys + ("gmem",), f"[tma.{op}] gmem must be a layout 'shape:stride', got {raw_g!r}")
            raw_b = self.value(spec, keys, TMA["box"])
            box = self.notation(raw_b, keys + ("box",), {}, "an int tuple")
            box = box.shape if hasattr(box, "shape") and not isinstance(box, tuple) else box
            box = box if isinstance(box, tuple) else (box,)
            if not all(isinstance(x, int) and x > 0 for x in box):
                self.fail(keys + ("box",), f"[tma.{op}] box must be a tuple of positive integers like '(128,64)', "
                                           f"got {raw_b!r}")
            sw = None
            if "swizzle" in spec:
                raw_s = self.value(spec, keys, TMA["swizzle"])
                sw = self.notation(raw_s, keys + ("swizzle",), {}, "a swizzle")
                if not getattr(sw, "is_swizzle", False):
                    self.fail(keys + ("swizzle",), f"[tma.{op}] swizzle must be written 'Sw<B,M,S>', got {raw_s!r}")
            self.check_tma_swizzle(sw, keys + ("swizzle",)) if sw is not None else \
                self.check_tma_swizzle(getattr(smem[op].layout, "swizzle", None), ("smem", op, "layout"))
            residue = self.load_tma_residue(spec, keys, gmem)                   # issue 31
            out[op] = TmaConfig(op, atom, mc, gmem, tuple(box), sw, raw_g, self.lines.line(*keys), residue)
        return out

    def load_tma_residue(self, spec, keys, gmem) -> tuple:
        """issue 31: ``residue``, the modes the problem may cut; each names a ``[params]`` symbol, the problem's extent
        along it (TMA's bounds check zero-fills / drops what lies past the tensor map's extents)."""
        if "residue" not in spec:
            return ()
        op = keys[1]
        names = OPERAND_MODES[op]
        v = spec["residue"]
        w = self.where(keys)
        if not isinstance(v, list) or any(x not in names for x in v) or len(set(v)) != len(v):
            self.fail(keys + ("residue",), f"{w} residue must name modes of the {op} tile {list(names)}, each at most "
                                           f"once, got {_short(v)}")
        for x in v:
            if x not in getattr(self, "params", {}):
                self.fail(keys + ("residue",), f"{w} residue {x!r}: needs a [params] symbol {x}, the problem's extent "
                                               f"along {x} (the tensor map's bounds are checked against it)")
        if getattr(gmem, "rank", lambda: 0)() != 2:
            self.fail(keys + ("residue",), f"{w} residue: the gmem tensor must have the tile's two modes (rank 2)")
        return tuple(v)

    def check_tma_swizzle(self, sw, keys):
        """A tensor-map swizzle symlayout models: CuTe maps ``Sw<2,5,2>`` / ``Sw<2,6,2>`` to the ``128B_ATOM_32B``
        / ``128B_ATOM_64B`` modes (``CU_TENSOR_MAP_SWIZZLE_128B_ATOM_*``: 32- or 64-byte chunks permuted in a
        128-byte span), which ``symlayout.arch.tma`` does not model: an input error, not a crash."""
        try:
            mode = tma_swizzle(sw) if sw is not None else "none"
        except TmaCopyError:
            return                                  # (CuTe's make_tma_copy refuses it: refuted as `tma`)
        if mode not in SWIZZLE_ENUM:
            self.fail(keys, f"{self.where(keys)}: not supported: {sw} is the TMA swizzle mode {mode} (32- or 64-byte "
                            f"chunks); symlayout models the tensor-map swizzles {', '.join(SWIZZLE_ENUM)} only")
