"""``[tmem]`` and ``[tmem_copy.C]`` (contract Version 3, Blackwell): the Tensor Memory a CTA allocates
(``tcgen05.alloc``), where its accumulator stages and hand-placed regions live, and the
``tcgen05.ld/st`` copy of the accumulator (``make_tmem_copy``) with the hardware warps that run it.

Only the form of each value is checked here (a one-line error at the key's line); whether the plan is
legal (a power-of-two allocation, regions inside it and disjoint, the warp access rule) is what the
properties ``tmem_alloc``, ``tmem_access`` and ``slot_agreement`` decide.

Extensions of the contract (documented in docs/configs.md): ``[tmem] arch`` (the capacity table's
architecture, default ``sm_100``), ``accumulator_regions`` (the regions that hold the accumulator's
stages, e.g. FMHA's ``["S0", "S1"]``) and ``aliases`` (``{P0 = "S0"}``: region P0 shares cells with S0
on purpose, P written over S in place) and ``a_region`` (the region whose first column is the TMEM
address of A for a TS atom: FMHA's P).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..arch.tcgen05 import CAPACITY_COLUMNS
from ..atoms.tmem import tmem_copy_op
from ..errors import AtomError
from .keys import TMEM, TMEM_COPY, TMEM_MAX_COLUMNS
from .messages import _short, _suggest, _type_name

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class TmemConfig:
    """``[tmem]``: ``columns`` (``tcgen05.alloc`` nCols), the accumulator's stages from
    ``accumulator_column``, hand-placed ``regions`` ``name -> (first column, columns)``, and the
    extensions ``accumulator_regions``, ``aliases`` and ``arch``.

    >>> TmemConfig(512, 2, regions={"S0": (0, 128)}).regions["S0"]
    (0, 128)
    """
    columns: int
    accumulator_stages: int = 1
    accumulator_column: int = 0
    regions: dict = field(default_factory=dict)
    accumulator_regions: tuple = ()
    aliases: dict = field(default_factory=dict)
    arch: str = "sm_100"
    line: int = 0
    a_region: str | None = None


@dataclass(frozen=True)
class TmemCopyConfig:
    """``[tmem_copy.C]``: ``make_tmem_copy(atom, tile of the accumulator)`` partitioned over the
    accumulator, slice ``i`` (threads ``32i .. 32i+31``) run by hardware warp ``warps[i]``; ``tile``
    None is the whole accumulator tile.

    >>> TmemCopyConfig("C", "SM100_TMEM_LOAD_32dp32b16x", (128, 16), (4, 5, 6, 7)).table
    'tmem_copy.C'
    """
    operand: str
    atom: str
    tile: tuple | None
    warps: tuple = (0, 1, 2, 3)
    line: int = 0

    @property
    def table(self) -> str:
        return f"tmem_copy.{self.operand}"


class TmemSection:
    """``[tmem]`` and ``[tmem_copy.C]``."""

    def load_tmem(self, data) -> TmemConfig | None:
        if "tmem" not in data:
            return None
        keys = ("tmem",)
        t = self.table(data["tmem"], keys)
        self.check_keys(t, keys, TMEM.names)
        columns = self.value(t, keys, TMEM["columns"])
        stages = self.value(t, keys, TMEM["accumulator_stages"])
        first = self.value(t, keys, TMEM["accumulator_column"])
        arch = self.value(t, keys, TMEM["arch"])
        if arch not in CAPACITY_COLUMNS:
            self.fail(keys + ("arch",), f"[tmem] arch {arch!r}: expected one of {', '.join(sorted(CAPACITY_COLUMNS))}"
                                        f"{_suggest(arch, CAPACITY_COLUMNS)}")
        regions = self.load_regions(t.get("regions"), keys + ("regions",)) if "regions" in t else {}
        acc_regions = self.load_names(t, keys + ("accumulator_regions",), regions)
        if acc_regions and len(acc_regions) != stages:
            self.fail(keys + ("accumulator_regions",), f"[tmem] accumulator_regions names {len(acc_regions)} "
                                                       f"regions for {stages} accumulator stages (one per stage)")
        aliases = self.load_aliases(t.get("aliases"), keys + ("aliases",), regions) if "aliases" in t else {}
        a_region = self.load_a_region(t, keys + ("a_region",), regions)
        return TmemConfig(columns, stages, first, regions, acc_regions, aliases, arch, self.lines.line(*keys),
                          a_region)

    def load_a_region(self, t, keys, regions) -> str | None:
        if "a_region" not in t:
            return None
        v = t["a_region"]
        if not isinstance(v, str) or v not in regions:
            known = _suggest(v, regions) if isinstance(v, str) and regions else " (no [tmem] regions are given)" \
                if not regions else ""
            self.fail(keys, f"[tmem] a_region: {_short(v)} is not one of the regions{known}")
        return v

    def load_regions(self, v, keys) -> dict:
        if not isinstance(v, dict):
            self.fail(keys, f"[tmem] regions must be a table {{ NAME = [first column, columns], ... }}, not "
                            f"{_type_name(v)} {_short(v)}")
        out = {}
        for name, span in v.items():
            at = keys + (name,)
            if not _NAME_RE.match(name):
                self.fail(at, f"[tmem] regions: {name!r} is not a name (letters, digits, _)")
            if (not isinstance(span, list) or len(span) != 2
                    or any(isinstance(x, bool) or not isinstance(x, int) for x in span)):
                self.fail(at, f"[tmem] regions.{name} must be [first column, columns], two integers, not "
                              f"{_type_name(span)} {_short(span)}")
            first, n = span
            if first < 0 or n <= 0 or first + n > TMEM_MAX_COLUMNS:
                self.fail(at, f"[tmem] regions.{name} = {span}: first column >= 0 and columns > 0, ending by "
                              f"column {TMEM_MAX_COLUMNS}")
            out[name] = (first, n)
        return out

    def load_names(self, t, keys, regions) -> tuple:
        if keys[-1] not in t:
            return ()
        v = t[keys[-1]]
        if not isinstance(v, list) or not v or any(not isinstance(x, str) for x in v):
            self.fail(keys, f"[tmem] {keys[-1]} must be a non-empty array of region names, not "
                            f"{_type_name(v)} {_short(v)}")
        for x in v:
            if x not in regions:
                known = _suggest(x, regions) if regions else " (no [tmem] regions are given)"
                self.fail(keys, f"[tmem] {keys[-1]}: {x!r} is not one of the regions{known}")
        if len(set(v)) != len(v):
            self.fail(keys, f"[tmem] {keys[-1]} names a region twice: {v}")
        return tuple(v)

    def load_aliases(self, v, keys, regions) -> dict:
        if not isinstance(v, dict):
            self.fail(keys, f"[tmem] aliases must be a table {{ REGION = \"REGION IT OVERLAYS\" }}, not "
                            f"{_type_name(v)} {_short(v)}")
        out = {}
        for a, b in v.items():
            at = keys + (a,)
            for x in (a, b):
                if not isinstance(x, str) or x not in regions:
                    self.fail(at, f"[tmem] aliases: {_short(x)} is not one of the regions"
                                  f"{_suggest(x, regions) if isinstance(x, str) else ''}")
            if a == b:
                self.fail(at, f"[tmem] aliases: region {a} aliasing itself")
            out[a] = b
        return out

    def load_tmem_copies(self, data, tmem, mma) -> dict:
        if "tmem_copy" not in data:
            return {}
        t = self.table(data["tmem_copy"], ("tmem_copy",))
        out = {}
        for op, spec in t.items():
            keys = ("tmem_copy", op)
            if op != "C":
                self.fail(keys, f"[tmem_copy.{op}]: unknown operand {op!r}; the accumulator's copy is [tmem_copy.C]")
            if not isinstance(spec, dict):
                self.fail(keys, f"tmem_copy.{op} must be a table [tmem_copy.{op}], not {_type_name(spec)} "
                                f"{_short(spec)}")
            self.check_keys(spec, keys, TMEM_COPY.names, what=f"[tmem_copy.{op}]")
            if mma is None:
                self.fail(keys, f"[tmem_copy.{op}] copies the accumulator of an [mma] table, which the configuration "
                                "does not have")
            atom = self.value(spec, keys, TMEM_COPY["atom"])
            try:
                tmem_copy_op(atom)
            except AtomError as e:
                self.fail(keys + ("atom",), f"[tmem_copy.{op}] atom: {e}")
            tile = None
            if "tile" in spec:
                raw = self.value(spec, keys, TMEM_COPY["tile"])
                tile = self.notation(raw, keys + ("tile",), {}, "an int tuple")
                tile = tile.shape if hasattr(tile, "shape") and not isinstance(tile, tuple) else tile
                if not (isinstance(tile, tuple) and len(tile) == 2
                        and all(isinstance(x, int) and x > 0 for x in tile)):
                    self.fail(keys + ("tile",), f"[tmem_copy.{op}] tile must be two positive integers like "
                                                f"\"(128,16)\", got {raw!r}")
            warps = self.load_warps(spec, keys + ("warps",))
            out[op] = TmemCopyConfig(op, atom.strip(), tile, warps, self.lines.line(*keys))
        return out

    def load_warps(self, spec, keys) -> tuple:
        if "warps" not in spec:
            return TMEM_COPY["warps"].default
        v = spec["warps"]
        if (not isinstance(v, list) or len(v) != 4
                or any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < 32 for x in v)):
            self.fail(keys, f"[tmem_copy.C] warps must be four warp indices in [0, 32) (make_tmem_copy runs on four "
                            f"warps), not {_type_name(v)} {_short(v)}")
        if len(set(v)) != 4:
            self.fail(keys, f"[tmem_copy.C] warps names a warp twice: {v}")
        return tuple(v)

    def check_tmem_mma(self, tmem, copies, mma):
        """Tensor Memory belongs to an SM100 ``tcgen05.mma`` (UMMA) atom's accumulator."""
        if (tmem is None and not copies) or (mma is not None and getattr(mma, "is_sm100", False)):
            if tmem is not None and tmem.a_region is not None and "_TS" not in mma.atom:
                self.fail(("tmem", "a_region"), f"[tmem] a_region places A of a TS atom (SM100_MMA_*_TS: A read "
                                                f"from Tensor Memory), but [mma] atom {mma.atom!r} reads A from "
                                                "shared memory")
            return
        keys = ("tmem",) if tmem is not None else ("tmem_copy", "C")
        what = f"[mma] atom {mma.atom!r} is not" if mma is not None else "the configuration has no [mma] table with"
        self.fail(keys, f"[{'.'.join(keys)}]: {what} an SM100 tcgen05.mma (UMMA) atom, whose accumulator lives in "
                        "Tensor Memory")
