"""``[g2s.X]`` and ``[s2g.C]`` (version 2): TiledCopies between global and shared memory."""

from __future__ import annotations

import re

from ..algebra.int_tuple import flatten_leaves, product
from ..atoms.copy import get_copy_op
from .keys import G2S, MAX_GMEM_BYTES, OPERAND_MODES
from .model import GlobalCopyConfig
from .stages import staged_layout

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class GlobalCopySection:
    """``[g2s.X]`` / ``[s2g.C]``."""

    def load_global_copies(self, data, symbols, copies, stages, copy_only=False):
        """``copy_only`` (issue 31: no ``[mma]``): a tensor of any name, its tile's modes M and N, smem given here."""
        out = {"g2s": {}, "s2g": {}}
        for kind in ("g2s", "s2g"):
            if kind not in data:
                continue
            t = self.table(data[kind], (kind,))
            for op, spec in t.items():
                keys = (kind, op)
                allowed = ("A", "B") if kind == "g2s" else ("C",)
                if copy_only and not _NAME.match(op):
                    self.fail(keys, f"[{kind}.{op}]: the tensor's name must be an identifier (letters, digits, _)")
                if op not in allowed and not copy_only:
                    self.fail(keys, f"[{kind}.{op}]: {'global -> shared copies are [g2s.A] or [g2s.B]' if kind == 'g2s' else 'the shared -> global copy is [s2g.C]'}")
                self.operand_table(spec, keys, G2S)
                w = f"[{kind}.{op}]"
                atom = self.value(spec, keys, G2S["atom"])
                typ = self.value(spec, keys, G2S["type"])
                self.check_atom(atom, keys + ("atom",), "copy")
                self.check_global_direction(atom, kind, op, keys + ("atom",))
                bits = self.check_type(typ, keys + ("type",))
                self.check_copy_atom_type(atom, typ, keys)
                tiled = self.load_tiled(spec, keys, symbols, required=True)
                cc = copies.get(op)
                if "smem" in spec:
                    raw_smem = self.value(spec, keys, G2S["smem"])
                    smem = self.notation(raw_smem, keys + ("smem",), symbols, "a layout")
                    self.check_smem(smem, raw_smem, keys + ("smem",), op, bits, staged=op in ("A", "B") and not copy_only)
                    smem, staged, nst = self.split_stages(smem, keys + ("smem",))
                    if staged is not None and getattr(self, "stages_family", None):
                        self.fail(keys + ("smem",), f"{w} smem has a PIPE mode of {nst}, but [stages] count = "
                                                    f"{self.stages_family!r} is a family of stage counts: give one "
                                                    "or the other")
                    if staged is None and stages is not None and op != "C":
                        staged, nst = staged_layout(smem, stages), stages
                    elif staged is not None and stages is not None and nst != stages:
                        self.fail(keys + ("smem",), f"{w} smem has a PIPE mode of {nst}, [stages] count is {stages}")
                elif cc is not None:
                    raw_smem, smem, staged, nst = cc.raw_smem, cc.smem, cc.smem_staged, cc.stages
                else:
                    self.fail(keys, f"{w}: missing required key 'smem' (no [copy.{op}] table gives the smem tile)")
                align = self.value(spec, keys, G2S["align"],
                                   cc.align if cc is not None and "smem" not in spec else 128)
                raw_g = self.value(spec, keys, G2S["gmem"])
                gmem = self.notation(raw_g, keys + ("gmem",), symbols, "a layout")
                self.check_gmem(gmem, raw_g, smem, keys + ("gmem",), bits)
                galign = self.value(spec, keys, G2S["gmem_align"])
                if galign is None:
                    galign = max(1, (bits or 8) // 8)
                residue = spec.get("residue", [])
                names = ("M", "N") if copy_only else OPERAND_MODES[op]
                if not isinstance(residue, list) or any(not isinstance(r, str) for r in residue):
                    self.fail(keys + ("residue",), f"{w} residue must be an array of mode names like {list(names)}")
                for r in residue:
                    if r not in names:
                        self.fail(keys + ("residue",), f"{w} residue: {r!r} is not a mode of the {op} tile "
                                                       f"{'(' + ','.join(names) + ')'}")
                if len(set(residue)) != len(residue):
                    self.fail(keys + ("residue",), f"{w} residue names a mode twice")
                pred = self.load_predicate(spec, keys, names, residue)          # issue 31
                out[kind][op] = GlobalCopyConfig(kind, op, atom, typ, tiled, gmem, raw_g, galign, smem, raw_smem,
                                                 align, tuple(residue), staged, nst, self.lines.line(*keys),
                                                 predicate=pred)
        return out["g2s"], out["s2g"]

    def check_global_direction(self, atom, kind, op, keys):
        """ldmatrix/stmatrix move data between shared memory and registers, never global memory;
        cp.async only copies global into shared memory."""
        k = get_copy_op(atom).kind
        if k in ("ldsm", "stsm"):
            self.fail(keys, f"[{kind}.{op}] atom {atom!r} moves data between shared memory and registers, not "
                            "global memory: use SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, UniversalCopy<...> or "
                            "AutoVectorizingCopy")
        if k == "cp_async" and kind == "s2g":
            self.fail(keys, f"[s2g.{op}] atom {atom!r} (cp.async) copies global memory into shared memory; the "
                            "store of C to global memory needs UniversalCopy<...> or AutoVectorizingCopy")

    def check_gmem(self, gmem, raw, smem, keys, bits=None):
        w = self.where(keys)
        if not hasattr(gmem, "shape") or getattr(gmem, "is_composed", False) or getattr(gmem, "is_swizzle", False):
            self.fail(keys, f"{w} must be a layout \"shape:stride\" like \"(64,32):(ldA,1)\", got {raw!r}")
        if gmem.rank() != 2:
            self.fail(keys, f"{w} {raw!r} has rank {gmem.rank()}; the gmem tile has the smem tile's two modes")
        if any(not isinstance(x, int) for x in flatten_leaves(gmem.shape)):
            self.fail(keys, f"{w} {raw!r}: the tile's shape must be concrete (strides may be [params] symbols)")
        want = tuple(product(smem.shape[i]) for i in range(2))
        have = tuple(product(gmem.shape[i]) for i in range(2))
        if isinstance(want[0], int) and isinstance(want[1], int) and want != have:
            self.fail(keys, f"{w} {raw!r} is a {have[0]}x{have[1]} tile; the smem tile is {want[0]}x{want[1]}")
        for x in flatten_leaves(gmem.stride):
            if isinstance(x, int) and x < 0:
                self.fail(keys, f"{w} {raw!r}: negative strides are not supported")
        shp, std = flatten_leaves(gmem.shape), flatten_leaves(gmem.stride)
        if all(isinstance(x, int) for x in std):
            nbytes = (sum((n - 1) * d for n, d in zip(shp, std)) + 1) * max(bits or 8, 8) // 8
            if nbytes > MAX_GMEM_BYTES:
                self.fail(keys, f"{w} {raw!r} spans {nbytes} bytes, beyond the 64-bit global address space")
