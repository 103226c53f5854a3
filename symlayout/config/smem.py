"""``[smem.X]`` (version 2, Hopper): the shared-memory tile a GMMA atom reads through descriptors."""

from __future__ import annotations

from ..algebra.composed import Swizzle
from ..algebra.int_tuple import flatten_leaves, product, unflatten
from ..algebra.layout import Layout
from ..atoms.gmma import _SMEM_RE, GmmaSmemLayout
from ..atoms.mma import get_mma_atom
from ..atoms.types import smem_slot_bits
from ..atoms.umma import is_umma_name, parse_umma_name
from ..errors import SymlayoutError
from .keys import MAX_SMEM_BYTES, SMEM
from .model import SmemConfig
from .stages import _append_pipe


class SmemSection:
    """``[smem.X]``."""

    def gmma_sources(self, atom) -> dict | None:
        """``{"A": "smem"|"reg", "B": "smem"}`` of a GMMA atom, None for other atoms."""
        if is_umma_name(atom):                    # Version 3: SM100 UMMA, SS (A from smem) or TS (A from TMEM)
            return {"A": "smem" if parse_umma_name(atom).a_source == "smem" else "tmem", "B": "smem"}
        pm = getattr(get_mma_atom(atom), "ptx_model", None) or {}
        if pm.get("instr") != "wgmma":
            return None
        return {"A": "smem" if pm.get("a_source") == "smem" else "reg", "B": "smem"}

    def check_supported_mma(self, mma, copies, smem):
        """GMMA/UMMA atoms read A (SS) and B from shared memory through descriptors: those
        operands need ``[smem.X]``; ``[smem.X]`` needs a GMMA/UMMA atom reading X from smem."""
        src = self.gmma_sources(mma.atom) if mma is not None else None
        fam = "UMMA" if mma is not None and mma.is_sm100 else "GMMA"
        if fam == "UMMA" and "C" in copies:
            self.fail(("copy", "C"), f"[copy.C]: not supported: {mma.atom} accumulates in Tensor Memory; its copy to "
                                     "registers is a tcgen05.ld ([tmem_copy.C]), not a TiledCopy of the TiledMMA")
        for op in ("A", "B"):
            reads_smem = src is not None and src[op] == "smem"
            if src is not None and fam == "UMMA" and op in copies:
                self.fail(("copy", op), f"[copy.{op}]: not supported: {mma.atom} reads {op} from "
                                        f"{'Tensor Memory' if src[op] == 'tmem' else 'shared memory'} itself, not "
                                        f"through a register copy" + (f"; describe the tile in [smem.{op}]"
                                                                      if reads_smem else ""))
            if reads_smem and op in copies:
                self.fail(("copy", op), f"[copy.{op}]: not supported: {mma.atom} reads {op} from shared memory "
                                        f"through a GMMA descriptor, not through a copy; describe the tile in "
                                        f"[smem.{op}]")
            if reads_smem and op not in smem and not mma.cute_rejections:
                self.fail(("mma", "atom"), f"[mma] atom {mma.atom!r} reads {op} from shared memory through a {fam} "
                                           f"descriptor: the configuration needs an [smem.{op}] table (type, layout)")
            if op in smem and not reads_smem:
                what = "is not an SM90 GMMA atom (nor an SM100 UMMA atom)" if src is None else \
                    f"reads {op} from Tensor Memory (TS)" if src[op] == "tmem" else f"reads {op} from registers (RS)"
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
                bits = smem_slot_bits(typ) if bits < 8 else bits     # issue 29: fp4/fp6 in 8-bit containers
                sm100 = mma is not None and mma.is_sm100
                layout = self.smem_layout(raw, keys + ("layout",), symbols, bits, stages, sm100)
                desc = None
                if "desc" in spec:
                    if not sm100:
                        self.fail(keys + ("desc",), f"[smem.{op}] desc: a hand-encoded UMMA descriptor needs an SM100 "
                                                    "(SM100_MMA_*) atom in [mma]")
                    desc = self.umma_desc(self.value(spec, keys, SMEM["desc"]), keys + ("desc",))
                if sm100:
                    self.check_umma_tile(mma, op, layout, raw, keys + ("layout",))
                out[op] = SmemConfig(op, typ, layout, align, raw, self.lines.line(*keys), desc=desc)
        if mma is not None:
            self.check_supported_mma(mma, self.copies_seen, out)
        return out

    # --- Version 3 (SM100) ---
    def umma_desc(self, raw, keys) -> int:
        """``desc = "0x..."``: a 64-bit value (its fields are checked by the prover, bit by bit)."""
        try:
            v = int(raw.strip(), 0)
        except ValueError:
            self.fail(keys, f"{self.where(keys)} must be a 64-bit descriptor like \"0x4000404000010000\", got {raw!r}")
        if not 0 <= v < 1 << 64:
            self.fail(keys, f"{self.where(keys)} = {raw!r} does not fit 64 bits")
        return v

    def check_umma_tile(self, mma, op, layout, raw, keys):
        """An SM100 operand buffer is in UMMA::tile_to_mma_shape's MMA-partitioned form: mode 0 is one
        instruction's ``(MMA_MN, MMA_K)`` of one CTA (a pair's peer holds MN/2)."""
        inner = layout.layout if isinstance(layout, GmmaSmemLayout) else \
            layout.inner if getattr(layout, "is_composed", False) else layout
        if not all(isinstance(x, int) for x in flatten_leaves(inner.shape)):
            self.fail(keys, f"{self.where(keys)} {raw!r}: not supported: parameters in an SM100 operand buffer "
                            "(write each member of the family as its own file)")
        if mma.cute_rejections:
            return
        o = parse_umma_name(mma.atom)
        mn, k = (o.m if op == "A" else o.n) // o.cta_group, o.k
        m0 = inner.shape[0]
        have = tuple(product(x) for x in m0) if isinstance(m0, tuple) and len(m0) == 2 else None
        if have != (mn, k):
            self.fail(keys, f"{self.where(keys)} {raw!r}: mode 0 must be one instruction's (MMA_{'M' if op == 'A' else 'N'}"
                            f",MMA_K) = ({mn},{k}) of one CTA, as UMMA::tile_to_mma_shape prints the buffer "
                            f"((({mn},{k}),MMAs_MN,MMAs_K[,PIPE])), got mode 0 {m0}")
    # --- end of Version 3 ---

    def smem_layout(self, raw, keys, symbols, bits, stages, sm100=False):
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
        full = 4 if sm100 else 3                  # (SM100: ((MMA_MN,MMA_K),MMAs_MN,MMAs_K[,PIPE]))
        if rank not in (full - 1, full):
            self.fail(keys, f"{w} {raw!r} has rank {rank}; " + ("an SM100 operand buffer is ((MMA_MN,MMA_K),MMAs_MN,"
                            "MMAs_K) or with a PIPE mode, as UMMA::tile_to_mma_shape prints it" if sm100 else
                            "a GMMA operand tile is (MN,K) or (MN,K,PIPE)"))
        if stages is not None:
            if rank == full:
                pipe = product(inner.shape[full - 1])
                if not isinstance(pipe, int) or pipe != stages:
                    self.fail(keys, f"{w}: its PIPE mode has {pipe} stages but [stages] count = {stages}")
            else:
                lay = _append_pipe(lay, stages)
        # (a family: at the parameters' largest values, each a whole extent of a mode of concrete strides)
        top = {x: self.params[str(x)].max for x in syms if str(x) in getattr(self, "params", {})}
        if len(top) == len(syms):
            widest = Layout(unflatten(tuple(top.get(x, x) for x in flatten_leaves(inner.shape)), inner.shape), inner.stride)
            nbytes = int(widest.cosize()) * bits // 8 * (stages if stages and rank == full - 1 else 1)
            if nbytes > MAX_SMEM_BYTES:
                at = f" (at {', '.join(f'{x} = {v}' for x, v in top.items())})" if top else ""
                self.fail(keys, f"{w} {raw!r} spans {nbytes} bytes{at}, beyond the 32-bit shared-memory address "
                                "space")
        return lay
