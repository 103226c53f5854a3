"""``[mma]``: the TiledMMA ``make_tiled_mma(atom, layout, permutation)`` and the tiles it fixes."""

from __future__ import annotations

import re

from ..algebra._lazy import sympy
from ..algebra.int_tuple import _, flatten_leaves, is_tuple, product
from ..algebra.layout import Layout
from ..algebra.notation import parse
from ..algebra.symbolic import decide
from ..atoms.mma import get_mma_atom
from ..atoms.sm120 import is_sm120_name, sm120_mma_atom
from ..atoms.umma import cute_rejections, is_umma_name, parse_umma_name
from ..errors import AtomError, CuteStaticAssert, SymlayoutError
from ..tiled.mma import make_tiled_mma
from .messages import _short, _type_name
from .keys import MAX_CLUSTER, MAX_PERMUTATION, MAX_STRING, MAX_THREADS, MMA
from .model import Config, MMAConfig


class MmaSection:
    """``[mma]``."""

    def load_mma(self, data, symbols) -> MMAConfig:
        keys = ("mma",)
        t = self.table(data["mma"], keys)
        self.check_keys(t, keys, MMA.names)
        atom = self.value(t, keys, MMA["atom"])
        sm100 = is_umma_name(atom)
        rejections = ()
        if sm100:                                 # Version 3: CuTe's static_asserts are refutations, not input errors
            atom, rejections, atom_threads = self.load_umma_atom(atom, keys + ("atom",))
        elif is_sm120_name(atom):                 # issue 29: SM120 mma.sync, a Version-2 TiledMMA
            atom, atom_threads = self.load_sm120_atom(atom, keys + ("atom",))
        else:
            self.check_atom(atom, keys + ("atom",), "mma")
            atom_threads = get_mma_atom(atom).num_threads
        raw_layout = self.value(t, keys, MMA["layout"])
        lay = self.notation(raw_layout, keys + ("layout",), symbols, "an AtomLayoutMNK")
        self.check_atom_layout(lay, raw_layout, keys + ("layout",), atom_threads)
        perm, raw_perm = None, None
        if "permutation" in t:
            perm, raw_perm = self.load_permutation(t["permutation"], keys + ("permutation",), symbols)
        if sm100 and (product(lay.shape if isinstance(lay, Layout) else lay) != 1 or perm is not None):
            self.fail(keys + (("layout",) if "layout" in t else ("permutation",)),
                      "[mma]: not supported: an AtomLayoutMNK or permutation over an SM100 atom (one thread issues "
                      "the whole tile: CuTe's kernels build make_tiled_mma(atom); tile along M/N with the buffers' "
                      "MMA blocks)")
        if "cluster" in t and not sm100:
            self.fail(keys + ("cluster",), f"[mma] cluster: only an SM100 (SM100_MMA_*) atom runs in a CTA cluster "
                                           f"here; {atom!r} is not one")
        cluster = self.load_cluster(self.value(t, keys, MMA["cluster"]), keys + ("cluster",))
        return MMAConfig(atom, lay, perm, raw_layout, raw_perm, self.lines.line(*keys), cluster=cluster,
                         cute_rejections=rejections)

    # --- Version 3 (SM100) ---
    def load_umma_atom(self, atom, keys):
        """``(the template-id name, CuTe's static_assert messages, ThrID size)`` of an SM100 atom (either of
        CuTe's spellings); a name that does not parse is an input error."""
        try:
            op = parse_umma_name(atom)
        except AtomError as e:
            self.fail(keys, f"{self.where(keys)}: {e}")
        return op.name, tuple(cute_rejections(op)), op.cta_group

    def load_sm120_atom(self, atom, keys):
        """``(CuTe's template-id name, 32)`` of an SM120 ``mma.sync`` atom; a name CuTe does not compile
        (its ``static_assert``) is an input error naming the assertion."""
        try:
            a = sm120_mma_atom(atom)
        except (AtomError, CuteStaticAssert) as e:
            self.fail(keys, f"{self.where(keys)}: {e}")
        return a.name, a.num_threads

    def load_cluster(self, raw, keys):
        """``cluster = "(x,y,z)"``: three positive integers, at most :data:`MAX_CLUSTER` CTAs."""
        self.check_ascii(raw, keys)
        m = re.fullmatch(r"\s*\(\s*(\d{1,4})\s*,\s*(\d{1,4})\s*,\s*(\d{1,4})\s*\)\s*", raw)
        if not m:
            self.fail(keys, f"[mma] cluster must be a cluster shape \"(x,y,z)\" of three positive integers, got {raw!r}")
        shape = tuple(int(x) for x in m.groups())
        if min(shape) < 1:
            self.fail(keys, f"[mma] cluster {raw!r}: every extent must be positive")
        if shape[0] * shape[1] * shape[2] > MAX_CLUSTER:
            self.fail(keys, f"[mma] cluster {raw!r} has {shape[0] * shape[1] * shape[2]} CTAs; a cluster has at most "
                            f"{MAX_CLUSTER}")
        return shape
    # --- end of Version 3 ---

    def check_atom_layout(self, lay, raw, keys, atom_threads=1):
        if getattr(lay, "is_composed", False) or getattr(lay, "is_swizzle", False) or lay is _:
            self.fail(keys, f"[mma] layout must be an IntTuple like \"(2,2,1)\" or a layout like "
                            f"\"(2,2,1):(1,2,0)\", got {raw!r}")
        shape = lay.shape if isinstance(lay, Layout) else lay
        if is_tuple(shape) and len(shape) > 3:
            self.fail(keys, f"[mma] layout {raw!r} has rank {len(shape)}; AtomLayoutMNK has at most 3 modes (M,N,K)")
        leaves = flatten_leaves(shape) if is_tuple(shape) else (shape,)
        n = 1
        for x in leaves:
            if not isinstance(x, int):
                self.fail(keys, f"[mma] layout {raw!r} must be concrete (no parameters)")
            if x <= 0:
                self.fail(keys, f"[mma] layout {raw!r}: entries must be positive, got {x}")
            n *= x
        if n * atom_threads > MAX_THREADS:       # CuTe's size(TiledMMA) = atoms x the atom's threads
            self.fail(keys, f"[mma] layout {raw!r} tiles {n} atoms of {atom_threads} threads = "
                            f"{n * atom_threads} threads; a block has at most {MAX_THREADS}")
        if isinstance(lay, Layout):
            for x in flatten_leaves(lay.stride) if is_tuple(lay.stride) else (lay.stride,):
                if not isinstance(x, int):
                    self.fail(keys, f"[mma] layout {raw!r} must be concrete (no parameters)")
            # CuTe numbers the TiledMMA's threads by this layout (size(mma) = atoms x atom threads):
            # it must number the n atoms 0..n-1, each once, or threads are duplicated or missing
            img = sorted(int(lay(i)) for i in range(n))
            if img != list(range(n)):
                dup = next((a for a, b in zip(img, img[1:]) if a == b), None)
                why = f"atom {dup} is used twice" if dup is not None else f"it reaches atom {max(img)}"
                self.fail(keys, f"[mma] layout {raw!r}: not supported: AtomLayoutMNK must number its {n} atoms "
                                f"0..{n - 1} once each ({why}); a TiledMMA of size {n} x the atom's threads "
                                "would leave threads without an atom or give two threads the same one")

    def load_permutation(self, v, keys, symbols):
        if not isinstance(v, list):
            self.fail(keys, f"[mma] permutation must be an array of 1 to 3 entries like [\"32\", \"32\", \"16\"], "
                            f"not {_type_name(v)} {_short(v)}")
        if not 1 <= len(v) <= 3:
            self.fail(keys, f"[mma] permutation must have 1 to 3 entries (M, N, K), got {len(v)}")
        out, raw = [], []
        for i, e in enumerate(v):
            what = f"[mma] permutation[{i}]"
            if isinstance(e, bool) or not isinstance(e, (str, int)):
                self.fail(keys, f"{what} must be an extent (\"32\"), a layout (\"(4,4,2):(1,8,4)\") or \"_\", not "
                                f"{_type_name(e)} {_short(e)}")
            text = str(e)
            if len(text) > MAX_STRING:
                self.fail(keys, f"{what} is too long ({len(text)} characters)")
            if not text.strip():
                self.fail(keys, f"{what} is blank: write \"_\" for no permutation of that mode")
            if text.strip() == "_":
                out.append(_)
                raw.append("_")
                continue
            self.check_ascii(text, keys)
            try:
                node = parse(text, symbols)
            except SymlayoutError as err:
                self.fail(keys, f"{what}: {err}")
            if getattr(node, "is_composed", False) or getattr(node, "is_swizzle", False) or is_tuple(node):
                self.fail(keys, f"{what} must be an extent or a layout, got {text!r}")
            leaves = []
            if hasattr(node, "shape"):
                leaves = list(flatten_leaves(node.shape)) + list(flatten_leaves(node.stride))
                size = node.size()
            else:
                leaves = [node]
                size = node
            if any(not isinstance(x, int) for x in leaves):
                self.fail(keys, f"{what} {text!r} must be concrete (no parameters)")
            if not hasattr(node, "shape") and node <= 0:
                self.fail(keys, f"{what}: the extent must be positive, got {node}")
            if size > MAX_PERMUTATION:
                self.fail(keys, f"{what}: extent {size} is too large (limit {MAX_PERMUTATION})")
            out.append(node)
            raw.append(text)
        return tuple(out), tuple(raw)

    def check_tiles(self, cfg: Config):
        """TiledMMA buildable and each smem tile a multiple of its tile."""
        if cfg.mma.cute_rejections:
            return                                # (refuted by the prover with CuTe's message)
        try:
            mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout,
                                 list(cfg.mma.permutation) if cfg.mma.permutation is not None else None)
            tile = mma.tile_shape()
        except SymlayoutError as e:
            msg = str(e)
            where = ("mma", "permutation") if "permutation" in msg and cfg.mma.permutation is not None else \
                ("mma", "layout") if "layout" in msg and "layout" in cfg.data.get("mma", {}) else ("mma",)
            self.fail(where, f"[mma]: {e}")
        idx = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}
        names = "MNK"
        for op, c in cfg.copies.items():
            for mode, ti in enumerate(idx[op]):
                need = tile[ti]
                have = product(c.smem.shape[mode]) if hasattr(c.smem, "shape") else None
                if have is None or not isinstance(need, int):
                    continue
                if isinstance(have, int):
                    ok = have % need == 0
                else:
                    ok = decide(sympy.Eq(sympy.Mod(have, need), 0)) is not False
                if not ok:
                    self.fail(("copy", op, "smem"),
                              f"[copy.{op}] smem {c.raw_smem!r}: mode {mode} has size {have}, not a multiple of the "
                              f"TiledMMA's {names[ti]} tile {need}")
