"""``[smem.X]`` (version 2, Hopper): the shared-memory tile a GMMA atom reads through descriptors."""

from __future__ import annotations

from ..algebra.composed import Swizzle
from ..algebra.int_tuple import flatten_leaves, product, unflatten
from ..algebra.layout import Layout
from ..atoms.gmma import _SMEM_RE, GmmaSmemLayout
from ..atoms.mma import get_mma_atom
from ..errors import SymlayoutError
from .keys import MAX_SMEM_BYTES, SMEM
from .model import SmemConfig
from .stages import _append_pipe


class SmemSection:
    """``[smem.X]``."""

    def gmma_sources(self, atom) -> dict | None:
        """``{"A": "smem"|"reg", "B": "smem"}`` of a GMMA atom, None for other atoms."""
        pm = getattr(get_mma_atom(atom), "ptx_model", None) or {}
        if pm.get("instr") != "wgmma":
            return None
        return {"A": "smem" if pm.get("a_source") == "smem" else "reg", "B": "smem"}

    def check_supported_mma(self, mma, copies, smem):
        """GMMA atoms read A (SS) and B from shared memory through descriptors: those
        operands need ``[smem.X]``; ``[smem.X]`` needs a GMMA atom reading X from smem."""
        src = self.gmma_sources(mma.atom) if mma is not None else None
        for op in ("A", "B"):
            reads_smem = src is not None and src[op] == "smem"
            if reads_smem and op in copies:
                self.fail(("copy", op), f"[copy.{op}]: not supported: {mma.atom} reads {op} from shared memory "
                                        f"through a GMMA descriptor, not through a copy; describe the tile in "
                                        f"[smem.{op}]")
            if reads_smem and op not in smem:
                self.fail(("mma", "atom"), f"[mma] atom {mma.atom!r} reads {op} from shared memory through a GMMA "
                                           f"descriptor: the configuration needs an [smem.{op}] table (type, layout)")
            if op in smem and not reads_smem:
                what = "is not an SM90 GMMA atom" if src is None else f"reads {op} from registers (RS)"
                self.fail(("smem", op), f"[smem.{op}]: [mma] atom {mma.atom if mma else None!r} {what}; [smem.X] "
                                        "describes an operand a GMMA atom reads from shared memory")

    def load_smem_tables(self, data, symbols, mma, stages) -> dict:
        out = {}
        if "smem" in data and getattr(self, "stages_family", None):
            self.fail(("stages", "count"), f"[stages] count = {self.stages_family!r}: not supported with [smem.X] "
                                           "tables (write the PIPE extent of the [smem.X] layout as the parameter)")
        if "smem" in data:
            t = self.table(data["smem"], ("smem",))
            for op, spec in t.items():
                keys = ("smem", op)
                if op not in ("A", "B"):
                    self.fail(keys, f"[smem.{op}]: unknown operand {op!r}; GMMA reads [smem.A] and [smem.B]")
                self.operand_table(spec, keys, SMEM)
                typ = self.value(spec, keys, SMEM["type"])
                raw = self.value(spec, keys, SMEM["layout"])
                align = self.value(spec, keys, SMEM["align"])
                bits = self.check_type(typ, keys + ("type",))
                layout = self.smem_layout(raw, keys + ("layout",), symbols, bits, stages)
                out[op] = SmemConfig(op, typ, layout, align, raw, self.lines.line(*keys))
        if mma is not None:
            self.check_supported_mma(mma, self.copies_seen, out)
        return out

    def smem_layout(self, raw, keys, symbols, bits, stages):
        """``Sw<B,M,S> o smem_ptr[Nb](unset) o L`` (a GmmaSmemLayout) or a plain / element-swizzled layout."""
        w = self.where(keys)
        self.check_ascii(raw, keys)
        if "smem_ptr" in raw:
            mm = _SMEM_RE.match(raw)
            if not mm:
                self.fail(keys, f"{w}: not a GMMA smem layout (expected 'Sw<B,M,S> o smem_ptr[Nb](unset) o L'): "
                                f"{raw!r}")
            if any(len(mm.group(i)) > 12 for i in range(1, 5)):
                self.fail(keys, f"{w}: integer too large in {raw[:60]!r}")
            b, m_, s_, lbits = (int(mm.group(i)) for i in range(1, 5))
            try:
                sw = Swizzle(b, m_, s_)
            except SymlayoutError as e:
                self.fail(keys, f"{w}: {e}")
            if lbits != bits:
                self.fail(keys, f"{w}: the layout is for {lbits}-bit elements (smem_ptr[{lbits}b]) but the "
                                f"type has {bits} bits")
            inner = self.notation(mm.group(5), keys, symbols, "a layout")
            if not hasattr(inner, "shape") or getattr(inner, "is_composed", False) or \
                    getattr(inner, "is_swizzle", False):
                self.fail(keys, f"{w}: after 'smem_ptr[{lbits}b](unset) o' a layout 'shape:stride' is expected")
            lay = GmmaSmemLayout(sw, bits, inner)
        else:
            lay = self.notation(raw, keys, symbols, "a layout")
            if not hasattr(lay, "shape") or getattr(lay, "is_swizzle", False):
                self.fail(keys, f"{w} must be a layout, got {raw!r}")
            inner = lay.inner if getattr(lay, "is_composed", False) else lay
        if not all(isinstance(x, int) for x in flatten_leaves(inner.stride)):
            self.fail(keys, f"{w}: not supported: symbols in the strides of a GMMA shared-memory layout (the "
                            "descriptor fields are compile-time constants in CuTe)")
        syms = [x for x in flatten_leaves(inner.shape) if not isinstance(x, int)]
        if any(not getattr(x, "is_Symbol", False) for x in syms) or len(set(syms)) != len(syms):
            self.fail(keys, f"{w}: not supported: a GMMA shared-memory layout takes a parameter only as the whole "
                            "extent of a mode, each parameter once (a family over stages or K tiles)")
        rank = inner.rank()
        if rank not in (2, 3):
            self.fail(keys, f"{w} {raw!r} has rank {rank}; a GMMA operand tile is (MN,K) or (MN,K,PIPE)")
        if stages is not None:
            if rank == 3:
                pipe = product(inner.shape[2])
                if not isinstance(pipe, int) or pipe != stages:
                    self.fail(keys, f"{w}: its PIPE mode has {pipe} stages but [stages] count = {stages}")
            else:
                lay = _append_pipe(lay, stages)
        # (a family: at the parameters' largest values, each a whole extent of a mode of concrete strides)
        top = {x: self.params[str(x)].max for x in syms if str(x) in getattr(self, "params", {})}
        if len(top) == len(syms):
            widest = Layout(unflatten(tuple(top.get(x, x) for x in flatten_leaves(inner.shape)), inner.shape), inner.stride)
            nbytes = int(widest.cosize()) * bits // 8 * (stages if stages and rank == 2 else 1)
            if nbytes > MAX_SMEM_BYTES:
                at = f" (at {', '.join(f'{x} = {v}' for x, v in top.items())})" if top else ""
                self.fail(keys, f"{w} {raw!r} spans {nbytes} bytes{at}, beyond the 32-bit shared-memory address "
                                "space")
        return lay
