"""``[g2r.X]`` and ``[r2g.X]`` (issue 31): TiledCopies between global memory and registers, with no MMA.

A copy-only kernel (QuACK's RMSNorm and softmax, the CuTe DSL's elementwise examples) loads a gmem
tile into each thread's registers with ``copy(tiled_copy, thr.partition_S(gX), tXrX)``, computes, and
stores with ``copy(tiled_copy, tXrX, thr.partition_D(gO))``; ``tXrX = make_fragment_like(...)`` is the
thread's compact register fragment.  ``X`` names the tensor (any name); its tile's modes are ``M``
(rows) and ``N`` (columns), which ``residue`` names.
"""

from __future__ import annotations

import re

from ..atoms.copy import get_copy_op
from .keys import REGCOPY
from .messages import _short, _type_name
from .model import GlobalCopyConfig

#: the tile modes of a register copy's tensor, by name (``residue``)
REGCOPY_MODES = ("M", "N")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class RegisterCopySection:
    """``[g2r.X]`` / ``[r2g.X]``."""

    def load_register_copies(self, data, symbols, mma=None) -> dict:
        out = {}
        for kind in ("g2r", "r2g"):
            if kind not in data:
                continue
            t = self.table(data[kind], (kind,))
            for name, spec in t.items():
                out[f"{kind}.{name}"] = rc = self.load_register_copy(kind, name, spec, symbols)
                if rc.fragment and mma is None:
                    self.fail((kind, name, "fragment"), f"[{kind}.{name}] fragment = \"C\" needs an [mma] table "
                                                        "(the TiledMMA whose accumulator is added)")
        return out

    def load_register_copy(self, kind, name, spec, symbols) -> GlobalCopyConfig:
        keys = (kind, name)
        w = f"[{kind}.{name}]"
        if not _NAME.match(name):
            self.fail(keys, f"{w}: the tensor's name must be an identifier (letters, digits, _)")
        if not isinstance(spec, dict):
            self.fail(keys, f"{kind}.{name} must be a table [{kind}.{name}], not {_type_name(spec)} {_short(spec)}")
        self.check_keys(spec, keys, REGCOPY.names)
        atom = self.value(spec, keys, REGCOPY["atom"])
        typ = self.value(spec, keys, REGCOPY["type"])
        self.check_atom(atom, keys + ("atom",), "copy")
        self.check_register_atom(atom, kind, keys + ("atom",))
        bits = self.check_type(typ, keys + ("type",))
        self.check_copy_atom_type(atom, typ, keys)
        tiled = self.load_tiled(spec, keys, symbols, required=True)
        raw_g = self.value(spec, keys, REGCOPY["gmem"])
        gmem = self.notation(raw_g, keys + ("gmem",), symbols, "a layout")
        self.check_gmem(gmem, raw_g, gmem, keys + ("gmem",), bits)
        galign = self.value(spec, keys, REGCOPY["gmem_align"])
        if galign is None:
            galign = max(1, (bits or 8) // 8)
        residue = spec.get("residue", [])
        if not isinstance(residue, list) or any(r not in REGCOPY_MODES for r in residue) or \
                len(set(residue)) != len(residue):
            self.fail(keys + ("residue",), f"{w} residue must name the tile's modes {list(REGCOPY_MODES)}, each "
                                           f"at most once, got {_short(residue)}")
        el = self.value(spec, keys, REGCOPY["element"]) or ""
        if el:
            self.check_type(el, keys + ("element",))
        pred = self.load_predicate(spec, keys, REGCOPY_MODES, residue)
        reduce, contributors, fragment = self.load_reduction(kind, spec, keys)
        return GlobalCopyConfig(kind, name, atom, typ, tiled, gmem, raw_g, galign, None, None, 16, tuple(residue),
                                None, 1, self.lines.line(*keys), el, pred, reduce, contributors, fragment)

    def load_reduction(self, kind, spec, keys):
        """``reduce``, ``contributors``, ``fragment`` of an atomic accumulation (``[r2g.X]`` only)."""
        w = self.where(keys)
        given = [k for k in ("reduce", "contributors", "fragment") if k in spec]
        if not given:
            return "", 1, ""
        if kind != "r2g":
            self.fail(keys + (given[0],), f"{w} {given[0]}: an atomic accumulation is a store: [r2g.X]")
        if "reduce" not in spec:
            self.fail(keys + (given[0],), f"{w} {given[0]} needs reduce = \"add\"")
        reduce = self.value(spec, keys, REGCOPY["reduce"])
        if reduce != "add":
            self.fail(keys + ("reduce",), f"{w} reduce = {reduce!r}: only \"add\" (atomicAdd / red.add) is modelled")
        c = spec.get("contributors", 1)
        if isinstance(c, bool) or not isinstance(c, (int, str)):
            self.fail(keys + ("contributors",), f"{w} contributors must be an integer or a [params] name")
        if isinstance(c, int) and c < 1:
            self.fail(keys + ("contributors",), f"{w} contributors must be >= 1, got {c}")
        if isinstance(c, str) and c not in getattr(self, "params", {}):
            self.fail(keys + ("contributors",), f"{w} contributors = {c!r} is not a [params] symbol")
        frag = self.value(spec, keys, REGCOPY["fragment"]) or ""
        if frag and frag != "C":
            self.fail(keys + ("fragment",), f"{w} fragment must be \"C\" ([mma]'s accumulator)")
        return reduce, c, frag

    def check_register_atom(self, atom, kind, keys):
        """ldmatrix/stmatrix and cp.async move shared memory; a register copy needs a plain vector copy."""
        k = get_copy_op(atom).kind
        if k in ("ldsm", "stsm", "cp_async"):
            self.fail(keys, f"[{keys[0]}.{keys[1]}] atom {atom!r} moves shared memory; a copy between global memory "
                            "and registers needs UniversalCopy<...> or AutoVectorizingCopy")
