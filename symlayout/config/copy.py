"""``[copy.X]``: ``make_tiled_copy_X(Copy_Atom<atom, type>, mma)`` over an smem tile (or a hand-built TiledCopy)."""

from __future__ import annotations

from ..algebra.composed import ComposedLayout, Swizzle
from ..algebra.int_tuple import flatten_leaves, is_tuple, product
from ..algebra.layout import Layout
from ..atoms.copy import get_copy_op, make_copy_atom
from ..atoms.gmma import _SMEM_RE
from ..atoms.types import value_type_bits
from ..errors import CuteStaticAssert, SymlayoutError
from .messages import _short, _suggest, _type_name
from .keys import COPY, MAX_SMEM_BYTES, MAX_THREADS, OPERANDS
from .model import CopyConfig, TiledCopySpec


class CopySection:
    """``[copy.X]`` and the hand-built TiledCopy of version 2 (``thr``/``val``, ``tv``/``tiler``)."""

    def load_copies(self, data, symbols, mma) -> dict:
        self.copies_seen = {}
        if "copy" not in data:
            return {}
        t = self.table(data["copy"], ("copy",))
        out = self.copies_seen = {}
        for op, spec in t.items():
            keys = ("copy", op)
            if op not in OPERANDS:
                self.fail(keys, f"[copy.{op}]: unknown operand {op!r}; copies are [copy.A], [copy.B] or [copy.C]"
                                f"{_suggest(op.upper(), OPERANDS) if op.upper() in OPERANDS else ''}")
            self.operand_table(spec, keys, COPY)
            atom = self.value(spec, keys, COPY["atom"])
            typ = self.value(spec, keys, COPY["type"])
            raw = self.value(spec, keys, COPY["smem"])
            align = self.value(spec, keys, COPY["align"])
            self.check_atom(atom, keys + ("atom",), "copy")
            self.check_copy_direction(atom, op, keys + ("atom",))
            bits = self.check_type(typ, keys + ("type",))
            self.check_copy_atom_type(atom, typ, keys)
            smem = self.copy_smem(raw, keys + ("smem",), symbols, bits)
            self.check_smem(smem, raw, keys + ("smem",), op, bits, staged=op != "C")
            smem, staged, nst = self.split_stages(smem, keys + ("smem",))
            tiled = self.load_tiled(spec, keys, symbols, required=False)
            convert = spec.get("convert", False)
            if not isinstance(convert, bool):
                self.fail(keys + ("convert",), f"[copy.{op}] convert must be true or false, not "
                                               f"{_type_name(convert)} {_short(convert)}")
            if convert and op != "C":
                self.fail(keys + ("convert",), f"[copy.{op}] convert applies to [copy.C] only (the accumulator is "
                                               "converted to the stored type before the copy)")
            out[op] = CopyConfig(op, atom, typ, smem, align, raw, self.lines.line(*keys), convert, tiled, staged, nst)
        return out

    def copy_smem(self, raw, keys, symbols, bits):
        """``smem``: a layout over element offsets (``Sw<B,M,S> o 0 o L`` swizzles element offsets), or CuTe's
        print form ``Sw<B,M,S> o smem_ptr[Nb](unset) o L``, whose swizzle acts on the byte address of a
        ``bits``-bit pointer (a sub-byte one too: CuTe's ``swizzle_ptr`` swizzles the storage byte and keeps
        the index inside it): the same function of element offsets as ``Sw<B,M+log2(8/N),S> o 0 o L``
        (``N`` < 8) or ``Sw<B,M-log2(N/8),S> o 0 o L``, for a buffer aligned to the swizzle's period."""
        if "smem_ptr" not in raw:
            return self.notation(raw, keys, symbols, "a layout")
        w = self.where(keys)
        mm = _SMEM_RE.match(raw)
        if not mm or any(len(mm.group(i)) > 12 for i in range(1, 5)):
            self.fail(keys, f"{w}: expected 'Sw<B,M,S> o smem_ptr[Nb](unset) o L' or a layout, got {raw[:80]!r}")
        b, m, s, nbits = (int(mm.group(i)) for i in range(1, 5))
        if nbits != bits:
            self.fail(keys, f"{w}: the layout is for {nbits}-bit elements (smem_ptr[{nbits}b]) but the copy's type "
                            f"has {bits} bits")
        inner = self.notation(mm.group(5), keys, symbols, "a layout")
        if not hasattr(inner, "shape") or getattr(inner, "is_composed", False) or getattr(inner, "is_swizzle", False):
            self.fail(keys, f"{w}: after 'smem_ptr[{nbits}b](unset) o' a layout 'shape:stride' is expected")
        try:
            sw = Swizzle(b, m, s)
            sw = sw.downcast(8 // bits) if bits < 8 else sw
            if bits > 8 and m < (bits // 8).bit_length() - 1:
                raise SymlayoutError(f"Sw<{b},{m},{s}> moves bytes inside a {bits}-bit element")
            sw = sw.upcast(bits // 8) if bits > 8 else sw
        except SymlayoutError as e:
            self.fail(keys, f"{w}: {e}")
        return inner if sw.b == 0 else ComposedLayout(sw, 0, inner)

    def load_tiled(self, spec, keys, symbols, required):
        """``thr``/``val`` or ``tv``/``tiler`` of a table (None when neither is given and not required)."""
        have = [k for k in ("thr", "val", "tv", "tiler") if k in spec]
        w = self.where(keys)
        if not have:
            if required:
                self.fail(keys, f"{w}: needs the TiledCopy: 'thr' and 'val' (make_tiled_copy(atom, thr, val)) or "
                                "'tv' and 'tiler' (make_tiled_copy_impl(atom, tv, tiler))")
            return None
        if ("thr" in have or "val" in have) and ("tv" in have or "tiler" in have):
            self.fail(keys + (have[-1],), f"{w}: give either thr/val or tv/tiler, not both")
        parsed = {}
        for k in have:
            raw = self.value(spec, keys, COPY[k])
            v = self.notation(raw, keys + (k,), {}, "a layout")
            if k == "tiler":
                ext = v.shape if hasattr(v, "shape") and not getattr(v, "is_composed", False) else v
                if hasattr(v, "shape") and not getattr(v, "is_composed", False):
                    ext = tuple(v[i].size() for i in range(v.rank())) if is_tuple(v.shape) else (v.size(),)
                elif not is_tuple(ext):
                    ext = (ext,)
                if len(ext) != 2 or any(not isinstance(e, int) or e <= 0 for e in flatten_leaves(ext)):
                    self.fail(keys + (k,), f"{w} tiler {raw!r} must be two positive extents like \"(64,16)\"")
                v = tuple(product(e) for e in ext)
            else:
                if getattr(v, "is_composed", False) or getattr(v, "is_swizzle", False):
                    self.fail(keys + (k,), f"{w} {k} must be a plain layout, got {raw!r}")
                if not hasattr(v, "shape"):
                    v = Layout(v)
                leaves = list(flatten_leaves(v.shape)) + list(flatten_leaves(v.stride))
                if any(not isinstance(x, int) for x in leaves):
                    self.fail(keys + (k,), f"{w} {k} {raw!r} must be concrete (no parameters)")
                if v.size() > MAX_THREADS * 1024:
                    self.fail(keys + (k,), f"{w} {k} {raw!r} is too large")
                if k == "thr" and v.size() > MAX_THREADS:
                    self.fail(keys + (k,), f"{w} thr {raw!r} has {v.size()} threads; a block has at most {MAX_THREADS}")
            parsed[k] = v
        if "thr" in parsed or "val" in parsed:
            if "thr" not in parsed:
                self.fail(keys, f"{w}: 'val' needs 'thr' (make_tiled_copy(atom, thr, val))")
            spec_ = TiledCopySpec(thr=parsed["thr"], val=parsed.get("val", Layout(1, 0)))
        else:
            if "tv" not in parsed or "tiler" not in parsed:
                self.fail(keys, f"{w}: 'tv' and 'tiler' go together (make_tiled_copy_impl(atom, tv, tiler))")
            spec_ = TiledCopySpec(tv=parsed["tv"], tiler=parsed["tiler"])
        return spec_

    def check_copy_direction(self, atom, op, keys):
        """[copy.A]/[copy.B] load shared memory into registers, [copy.C] stores registers
        into shared memory: an atom that moves data the other way (ldmatrix for C,
        stmatrix for A/B) or between global and shared memory (cp.async) is not that copy."""
        kind = get_copy_op(atom).kind
        store = op == "C"
        if kind == "cp_async":
            self.fail(keys, f"[copy.{op}] atom {atom!r} copies global memory into shared memory (cp.async); "
                            f"[copy.{op}] {'stores the accumulator into' if store else 'loads the MMA operand from'} "
                            "shared memory: use an ldmatrix/stmatrix, UniversalCopy or AutoVectorizingCopy atom")
        if store and kind == "ldsm":
            self.fail(keys, f"[copy.C] atom {atom!r} is a load (ldmatrix: shared memory -> registers); [copy.C] "
                            "stores the accumulator into shared memory: use a store atom such as "
                            "SM90_U32x4_STSM_N, UniversalCopy<uint32_t> or AutoVectorizingCopy")
        if not store and kind == "stsm":
            self.fail(keys, f"[copy.{op}] atom {atom!r} is a store (stmatrix: registers -> shared memory); "
                            f"[copy.{op}] loads the MMA operand from shared memory: use a load atom such as "
                            "SM75_U32x4_LDSM_N, UniversalCopy<uint32_t> or AutoVectorizingCopy")

    def check_copy_atom_type(self, atom, typ, keys):
        """A value type whose width cannot feed the atom."""
        try:
            ca = make_copy_atom(atom, typ)
        except CuteStaticAssert:
            return                  # CuTe refuses Copy_Atom<atom, type>: the prover refutes it (type_agreement)
        except SymlayoutError as e:
            self.fail(keys + ("type",), f"{self.where(keys + ('type',))}: {e}")
        bits = value_type_bits(typ)
        if getattr(ca.op, "kind", "") == "default" and bits < 8:
            self.fail(keys + ("type",), f"{self.where(keys + ('type',))}: not supported: {atom} of {typ} ({bits}-bit "
                                        "elements): an auto-vectorizing copy may move single sub-byte elements, and "
                                        "symlayout addresses whole bytes")
        if getattr(ca.op, "kind", "") in ("ldsm", "stsm") and bits < 8 and 16 % bits:
            self.fail(keys + ("type",), f"{self.where(keys + ('type',))}: not supported: {atom} of {typ} ({bits}-bit "
                                        "elements): symlayout routes sub-byte values through ldmatrix/stmatrix as "
                                        "4-bit nibbles of its 16-bit elements (packed fp4, SM120's kind::mxf4nvf4)")

    def check_smem(self, smem, raw, keys, op, bits, staged=False):
        w = self.where(keys)
        if not hasattr(smem, "shape") or getattr(smem, "is_swizzle", False):
            self.fail(keys, f"{w} must be a layout \"shape:stride\" (optionally \"Sw<B,M,S> o shape:stride\"), "
                            f"got {raw!r}")
        rank = smem.rank()
        if rank == 3 and staged:
            pass                       # (M,K,PIPE): a pipelined buffer, as tile_to_shape prints it
        elif rank != 2:
            dims = {"A": "(M,K)", "B": "(N,K)", "C": "(M,N)"}.get(op, "(M,N)")
            self.fail(keys, f"{w} {raw!r} has rank {rank}; the {op} tile is {dims}, rank 2"
                            + (" (or (M,K,PIPE) with stages)" if op != "C" else ""))
        inner = smem.inner if getattr(smem, "is_composed", False) else smem
        leaves = list(flatten_leaves(inner.shape)) + list(flatten_leaves(inner.stride))
        if all(isinstance(x, int) for x in leaves):
            nbytes = int(inner.cosize()) * max(bits or 8, 1) // 8
            if nbytes > MAX_SMEM_BYTES:
                self.fail(keys, f"{w} {raw!r} spans {nbytes} bytes, beyond the 32-bit shared-memory address space")
        off = getattr(smem, "offset", 0)
        if not isinstance(off, int):
            self.fail(keys, f"{w}: the offset of a composed layout must be a concrete integer")
