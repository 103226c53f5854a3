"""``[threadmap]``: a CUTLASS 2.x thread map or a custom offset formula."""

from __future__ import annotations

from typing import Any

from ..errors import SymlayoutError
from .messages import _short, _suggest
from .keys import MAX_EXTENT, THREADMAP, TM_KIND_KEYS, TM_WRAPPERS
from .model import ThreadMapConfig


class ThreadMapSection:
    """``[threadmap]`` (and ``[threadmap.base]``)."""

    def load_threadmap(self, v, keys, nested=False) -> ThreadMapConfig:
        w = self.where(keys) if not nested else "[threadmap.base]"
        t = self.table(v, keys)
        self.check_keys(t, keys, THREADMAP.names, what=w)
        kind = self.value(t, keys, THREADMAP["kind"])
        if kind not in TM_KIND_KEYS:
            self.fail(keys + ("kind",), f"{w}: unknown thread map kind {kind!r}{_suggest(kind, list(TM_KIND_KEYS))}")
        if nested and kind in TM_WRAPPERS:
            self.fail(keys + ("kind",), f"{w}: a transposing wrapper cannot wrap another wrapper ({kind!r})")
        required, optional = TM_KIND_KEYS[kind]
        allowed = set(required) | set(optional) | {"kind", "type", "align"}
        for k in t:
            if k not in allowed:
                self.fail(keys + (k,), f"{w}: key {k!r} does not apply to kind {kind!r} (it takes "
                                       f"{', '.join(k2 for k2 in THREADMAP.names if k2 in allowed)})")
        for k in required:
            if k not in t:
                self.fail(keys, f"{w}: kind {kind!r} needs the key {k!r}")
        kw: dict[str, Any] = {"kind": kind, "line": self.lines.line(*keys)}
        kw["shape"] = self.value(t, keys, THREADMAP["shape"])
        if kw["shape"] is not None and kw["shape"][0] * kw["shape"][1] > MAX_EXTENT:
            self.fail(keys + ("shape",), f"{w} shape {list(kw['shape'])} has more than {MAX_EXTENT} elements")
        kw["threads"] = self.value(t, keys, THREADMAP["threads"])
        kw["elements_per_access"] = self.value(t, keys, THREADMAP["elements_per_access"])
        kw["warp_arrangement"] = self.value(t, keys, THREADMAP["warp_arrangement"])
        kw["thread_tile_shape"] = self.value(t, keys, THREADMAP["thread_tile_shape"])
        if "iterations" in t:
            it = t["iterations"]
            if isinstance(it, list):
                kw["iterations"] = self.value(t, keys, THREADMAP["iterations"], form="pair")
                n = kw["iterations"][0] * kw["iterations"][1]
            else:
                kw["iterations"] = n = self.value(t, keys, THREADMAP["iterations"], form="integer")
            if (kw["threads"] or 1) * n > 1 << 20:
                self.fail(keys + ("iterations",), f"{w}: {kw['threads']} threads x {n} iterations is too many "
                                                  f"accesses (limit {1 << 20})")
        if "offset" in t:
            raw = self.value(t, keys, THREADMAP["offset"])
            try:
                # lazy: the formula parser (4-6 ms of start-up) only for a [threadmap] offset formula
                from ..threadmap.formula import parse_expr
                kw["offset"] = parse_expr(raw, {"t", "i"})
            except SymlayoutError as e:
                self.fail(keys + ("offset",), f"{w} offset: {e}")
            except (RecursionError, MemoryError, ValueError):
                self.fail(keys + ("offset",), f"{w} offset: cannot read {_short(raw)} as a formula in t and i")
            kw["raw_offset"] = raw
        kw["extent"] = self.value(t, keys, THREADMAP["extent"])
        if "type" in t:
            kw["type"] = self.value(t, keys, THREADMAP["type"])
            self.check_type(kw["type"], keys + ("type",))
        kw["align"] = self.value(t, keys, THREADMAP["align"])
        if "base" in t:
            kw["base"] = self.load_threadmap(t["base"], keys + ("base",), nested=True)
        return ThreadMapConfig(**kw)

    def check_threadmap_model(self, tm: ThreadMapConfig):
        try:
            tm.build()
        except SymlayoutError as e:
            where = ("threadmap", "offset") if tm.kind == "offset" else ("threadmap",)
            self.fail(where, f"[threadmap]: {e}")
