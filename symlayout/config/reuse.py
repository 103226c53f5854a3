"""``[reuse.X]`` (issue 31): the accumulator of ``[mma]`` converted and re-viewed as the A operand of a
second TiledMMA, in registers (flash-attention's P = softmax(S) fed to O = P V).

The kernel writes ``tSrS = partition_fragment_C(mma, (M,N))``, ``rP = convert_type<T>(tSrS)`` and
``tOrP = make_tensor(rP.data(), view(rP.layout()))``, then ``gemm(mma2, tOrP, ...)``: the register
array is the same, only its layout changes.  ``view`` is flash-attention's ``convert_layout_acc_Aregs``
(``"acc_Aregs"``), none (``"none"``), or a layout written out (A fragment coordinate -> register).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..atoms.mma import get_mma_atom
from ..errors import ConfigError
from .keys import REUSE
from .messages import _short, _type_name

#: the register views a ``[reuse.X]`` names (besides a layout written out)
REUSE_VIEWS = ("acc_Aregs", "none")


@dataclass(frozen=True)
class ReuseConfig:
    """``[reuse.X]``: operand ``name`` of a second TiledMMA (``mma``, ``layout``, ``permutation``) read from
    the registers of ``[mma]``'s accumulator over ``tile`` (M,N), converted to ``convert`` ("" = kept) and
    viewed through ``view`` (a name of :data:`REUSE_VIEWS` or a Layout)."""
    name: str
    source: str                   # "C"
    tile: tuple                   # (M, N)
    convert: str
    view: Any
    mma: str
    layout: Any
    permutation: tuple | None
    line: int = 0

    @property
    def table(self) -> str:
        return f"reuse.{self.name}"


class ReuseSection:
    """``[reuse.X]``."""

    def load_reuse(self, data, symbols, mma) -> dict:
        if "reuse" not in data:
            return {}
        t = self.table(data["reuse"], ("reuse",))
        if mma is None:
            self.fail(("reuse",), "[reuse.X] needs an [mma] table (the TiledMMA whose accumulator is reused)")
        return {name: self.load_one_reuse(name, spec, symbols, mma) for name, spec in t.items()}

    def load_one_reuse(self, name, spec, symbols, mma) -> ReuseConfig:
        keys = ("reuse", name)
        w = f"[reuse.{name}]"
        if not isinstance(spec, dict):
            self.fail(keys, f"reuse.{name} must be a table [reuse.{name}], not {_type_name(spec)} {_short(spec)}")
        self.check_keys(spec, keys, REUSE.names)
        src = self.value(spec, keys, REUSE["from"])
        if src != "C":
            self.fail(keys + ("from",), f"{w} from = {src!r}: only the accumulator \"C\" of [mma] is reused")
        raw_tile = self.value(spec, keys, REUSE["tile"])
        tile = self.notation(raw_tile, keys + ("tile",), {}, "an int tuple")
        tile = tile.shape if hasattr(tile, "shape") else tile
        if not (isinstance(tile, tuple) and len(tile) == 2 and all(type(x) is int and x > 0 for x in tile)):
            self.fail(keys + ("tile",), f"{w} tile must be the accumulator's (M,N) like \"(64,128)\", got {raw_tile!r}")
        conv = self.value(spec, keys, REUSE["convert"]) or ""
        if conv:
            self.check_type(conv, keys + ("convert",))
        view = self.value(spec, keys, REUSE["view"])
        if view not in REUSE_VIEWS:
            view = self.notation(view, keys + ("view",), {}, "a layout")
            if not hasattr(view, "shape") or getattr(view, "is_composed", False):
                self.fail(keys + ("view",), f"{w} view must be one of {', '.join(REUSE_VIEWS)} or a layout "
                                            "'shape:stride' (A fragment coordinate -> register)")
        atom = self.value(spec, keys, REUSE["mma"]) or mma.atom
        self.check_atom(atom, keys + ("mma",), "mma")
        a = get_mma_atom(atom)
        if a.frg_type_a != a.val_type_a:
            self.fail(keys + ("mma",), f"{w} mma {atom!r} reads A from shared memory through descriptors (SS); an A "
                                       "operand in registers needs an RS atom")
        if "layout" in spec:
            raw = self.value(spec, keys, REUSE["layout"])
            lay = self.notation(raw, keys + ("layout",), symbols, "an AtomLayoutMNK")
            self.renamed(lambda: self.check_atom_layout(lay, raw, keys + ("layout",), get_mma_atom(atom).num_threads),
                         w)
        else:
            lay = mma.layout
        perm = mma.permutation
        if "permutation" in spec:
            perm, _raw = self.renamed(lambda: self.load_permutation(spec["permutation"], keys + ("permutation",),
                                                                    symbols), w)
        return ReuseConfig(name, src, tile, conv, view, atom, lay, perm, self.lines.line(*keys))

    @staticmethod
    def renamed(fn, table):
        """``fn()``, its messages naming ``table`` where the shared ``[mma]`` checks say ``[mma]``."""
        try:
            return fn()
        except ConfigError as e:
            raise ConfigError(str(e).replace("[mma]", table, 1)) from None
