"""Copies between global and shared memory (``[g2s.X]``, ``[s2g.C]``): the model and its obligations.

A global-memory copy is CuTe's ``copy(tiled_copy, thr.partition_S(src), thr.partition_D(dst))`` of
a gmem tile and an smem tile of the same shape, with ``tiled_copy = make_tiled_copy(atom, thr,
val)`` (or ``make_tiled_copy_impl(atom, tv, tiler)``).  Both partitions come from the same
``tidfrg``, so the model names every tile element by its index ``i`` (``i = row + M * col``, the
colexicographic index of the (M,K) tile) and lists, per thread, its *accesses*: the element indices
one instruction moves, in CuTe's value order (one ``copy_unpack`` call of a cp.async /
UniversalCopy atom; for an auto-vectorizing atom, one access of the width CuTe picks).  The
hardware moves ``k`` contiguous elements from the address of the first one: every obligation
reads the addresses, never the indices alone.

The gmem tile may have ``[params]`` symbols in its strides.  Its address is a polynomial in them,
so a property over all admissible values is decided exactly on a finite set of representatives
(:func:`representatives`): every admissible value up to a bound past which rows never share a
32-byte sector nor an address, and one value of each residue class modulo 128 above it (alignment,
bank and sector positions only depend on the residue).  With two or more symbols every admissible
combination is enumerated (UNKNOWN beyond :data:`MAX_ASSIGNMENTS`).

Predication (``residue``): CuTe kernels predicate each copy instruction on the coordinate of its
first element (``tApA(m,k) = elem_less(tAcA(0,m,k), residue)`` in CUTLASS's SM80 mainloop and the
CuTe tutorial, ``predicate_K`` / ``identity_MN(0,m,0)`` in flash-attention); ``in_bounds`` proves that
every element of an executed instruction lies inside the problem for every admissible residue (the
problem size modulo the tile: a ``[params]`` symbol named after the mode, ``M``/``N``/``K``, gives
them; otherwise any residue 1..extent).

>>> from symlayout.config import loads_config
>>> cfg = loads_config('''[params]
... ldA = { min = 32, max = 4096, multiple_of = 8 }
... [mma]
... atom = "SM80_16x8x16_F16F16F16F16_TN"
... [g2s.A]
... atom = "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"
... type = "half_t"
... smem = "Sw<2,3,3> o (16,32):(32,1)"
... thr = "(4,4):(4,1)"
... val = "(1,8)"
... gmem = "(16,32):(ldA,1)"
... gmem_align = 16
... ''')
>>> m = build_global_model(cfg.g2s["A"], cfg.params)
>>> m.threads, len(m.accesses[0]), m.k
(16, 4, 8)
>>> [(r.property, r.status) for r in prove_global(m, ["alignment", "coverage", "coalescing"])]
[('alignment', 'proved'), ('coverage', 'proved'), ('coalescing', 'refuted')]
"""
from __future__ import annotations

import itertools
import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property


from ...algebra import int_tuple as it
from ...algebra._lazy import sympy
from ...algebra.layout import Layout, function_table, logical_divide, slice_and_offset
from ...algebra.symbolic import DynInt
from ...atoms import canonical_type, value_type_bits
from ...atoms.copy import make_copy_atom
from ...errors import CuteStaticAssert, SymlayoutError
from ...tiled.copy import auto_vectorizing_width, copy_calls, view_values
from ..copy.model import cute_addresses_differ, swizzle_inside_register
from ..decide.tables import enabled as tables_enabled, index_table, lazy_np as np, phase_wavefronts
from ..verdict.result import ERROR, PROVED, REFUTED, UNKNOWN, Counterexample, Result, verdict

#: properties a global-memory copy has (in the spec's order)
GLOBAL_PROPERTIES = ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
                     "type_agreement", "coalescing")
#: most symbol assignments enumerated for a parametric gmem tile
MAX_ASSIGNMENTS = 4096
#: residues a symbol's representatives cover above the bound (a multiple of every width that
#: matters: 16-byte vectors, 32-byte sectors, 128-byte bank rows)
RESIDUE_MODULUS = 128
SECTOR = 32


class NotModelled(SymlayoutError):
    """A configuration this module does not model (an ``error`` result, never a verdict)."""


# ---------------------------------------------------------------- the gmem tile's address function


@dataclass
class GmemTile:
    """``G(i)`` of a gmem tile whose strides may hold symbols: per element, the coordinate of each
    flattened mode (``coords[i]``) and the strides (ints or sympy expressions)."""
    coords: object                 # (elements, flattened modes) int64 numpy array
    strides: list
    symbols: list                  # sympy symbols (sorted by name)

    @classmethod
    def of(cls, gmem, M, N):
        modes = []
        for mi in range(2):
            sh, st = gmem.shape[mi], gmem.stride[mi]
            leaves_sh = it.flatten_leaves(sh) if it.is_tuple(sh) else (sh,)
            leaves_st = it.flatten_leaves(st) if it.is_tuple(st) else (st,)
            modes.append((list(leaves_sh), list(leaves_st)))
        strides = modes[0][1] + modes[1][1]
        i = np.arange(M * N, dtype=np.int64)
        cols = []
        for mi, c in enumerate((i % M, i // M)):
            for s in modes[mi][0]:
                cols.append(c % s)
                c = c // s
        coords = np.stack(cols, axis=1) if cols else np.zeros((M * N, 0), dtype=np.int64)
        syms = set()
        for s in strides:
            syms |= set(getattr(s, "free_symbols", ()))
        return cls(coords, strides, sorted(syms, key=lambda s: s.name))

    def table(self, values: dict) -> list:
        """Element offsets ``G(i)`` at a symbol assignment ``{name: int}``."""
        return self.table_array(values).tolist()

    def table_array(self, values: dict):
        """:meth:`table` as an int64 numpy array (the coordinates times the strides at once)."""
        st = []
        for s in self.strides:
            if isinstance(s, int):
                st.append(int(s))
            else:
                st.append(int(s.subs({sym: values[sym.name] for sym in s.free_symbols})))
        return self.coords @ np.array(st, dtype=np.int64)


def representatives(param, bound: int, modulus: int = RESIDUE_MODULUS) -> list:
    """Values of ``param`` that decide a property whose outcome, above ``bound``, depends only on
    the value modulo ``modulus``: every admissible value ``<= bound``, then the least admissible
    value ``> bound`` of each residue class.

    >>> from symlayout.config import Param
    >>> representatives(Param("ld", 8, 10**6, 8), 40, 32)
    [8, 16, 24, 32, 40, 48, 56, 64, 72]
    """
    mult = param.multiple_of
    lo = -(-param.min // mult) * mult
    out = list(range(lo, min(bound, param.max) + 1, mult))
    start = max(lo, (bound // mult + 1) * mult)
    seen = set()
    v = start
    while v <= param.max and len(seen) < modulus:
        r = v % modulus
        if r in seen:
            break                          # the classes repeat from here on
        seen.add(r)
        out.append(v)
        v += mult
    return out


# ---------------------------------------------------------------- the model


@dataclass
class GlobalCopyModel:
    """Everything the prover knows about one ``[g2s.X]`` / ``[s2g.C]``."""
    cfg: object                    # GlobalCopyConfig
    kind: str                      # "g2s" or "s2g"
    operand: str
    atom: object
    tiled_copy: object
    value_type: str
    value_bits: int
    shape: tuple                   # (M, N) of the tile
    smem: object                   # stage-0 smem layout (elements)
    smem_align: int
    gmem: GmemTile
    gmem_align: int
    params: dict
    residue: tuple                 # mode indices (0, 1) the problem may cut
    k: int                         # elements per access
    accesses: dict                 # thread -> list of element-index lists (CuTe value order)
    vector_width: int = 0          # auto-vectorizing atoms: CuTe's width (0: other atoms)
    notes: list = field(default_factory=list)
    past: tuple = ()               # (row, col) of element indices n, n+1, ...: past the tile (a tiler that does
                                   # not divide it; CuTe's partitions round up and reach them)
    unpredicated: tuple = ()       # issue 31: residue modes (indices) the kernel's predicate does not test

    @property
    def n(self) -> int:
        """Elements of the tile (indices ``0 .. n-1``; :attr:`past` follow)."""
        return self.shape[0] * self.shape[1]
    recast: dict | None = None     # first element -> the smem offset its instruction gets (recast_starts)

    @property
    def name(self) -> str:
        return f"{self.kind}.{self.operand}"

    @property
    def threads(self) -> int:
        return len(self.accesses)

    @property
    def eb(self) -> int:
        return self.value_bits // 8

    @property
    def vb(self) -> int:
        """Bytes of one access."""
        return self.k * self.value_bits // 8

    @cached_property
    def smem_addr(self) -> list:
        return self.smem_array.tolist()

    @cached_property
    def start_array(self):
        """The smem element offset each instruction is handed, indexed by its access's first element: that
        element's address, or where CuTe's ``recast`` rounds it (:func:`recast_starts`)."""
        if not self.recast:
            return self.smem_array
        out = self.smem_array.copy()
        out[np.array(list(self.recast), dtype=np.int64)] = np.array(list(self.recast.values()), dtype=np.int64)
        return out

    @cached_property
    def start_addr(self) -> list:
        return self.start_array.tolist()

    def starts(self, table):
        """The access starts in ``table`` (the smem table: :attr:`start_array`; a gmem table: itself)."""
        return self.start_array if table is self.smem_array else table

    @cached_property
    def smem_index(self) -> dict:
        d = {}
        for i, a in enumerate(self.smem_addr):
            d.setdefault(a, i)
        return d

    def coord(self, i: int) -> tuple:
        if i >= self.n:
            return self.past[i - self.n]
        return (i % self.shape[0], i // self.shape[0])

    def el(self, i: int) -> str:
        r, c = self.coord(i)
        return f"{self.operand}({r},{c})" + (f" past the {self.shape[0]}x{self.shape[1]} tile" if i >= self.n else "")

    @cached_property
    def coord_array(self):
        """:meth:`coord` of every element index (the tile's, then :attr:`past`) as an ``(indices, 2)`` array."""
        i = np.arange(self.n, dtype=np.int64)
        inside = np.stack([i % self.shape[0], i // self.shape[0]], axis=1)
        if not self.past:
            return inside
        return np.concatenate([inside, np.array(self.past, dtype=np.int64).reshape(-1, 2)])

    def requests(self):
        """``(warp, access index)`` of every warp-wide instruction."""
        n = len(self.accesses[0]) if self.accesses else 0
        for w in range((self.threads + 31) // 32):
            for c in range(n):
                yield w, c

    @property
    def src_is_gmem(self) -> bool:
        return self.kind == "g2s"

    @cached_property
    def assignments(self):
        """Symbol assignments that decide every gmem obligation (see the module doc), or None
        when there are too many."""
        syms = self.gmem.symbols
        if not syms:
            return [{}]
        missing = [s.name for s in syms if s.name not in self.params]
        if missing:
            raise NotModelled(f"[{self.name}] gmem: symbol {missing[0]} is not in [params]")
        # past this value of one symbol, elements whose symbol coefficients differ are further apart
        # than the static part of the tile spans plus a vector and a sector: no shared sector, no
        # shared address, and every other outcome depends on the value modulo RESIDUE_MODULUS
        static = np.array([s if isinstance(s, int) else 0 for s in self.gmem.strides], dtype=np.int64)
        offs = self.gmem.coords @ static
        span = int(offs.max()) - int(offs.min()) + self.k + SECTOR
        if len(syms) == 1 and all(_linear(s, syms[0]) for s in self.gmem.strides):
            p = self.params[syms[0].name]
            return [{p.name: v} for v in representatives(p, span)]
        ranges = []
        total = 1
        for s in syms:
            p = self.params[s.name]
            total *= p.count()
            if total > MAX_ASSIGNMENTS:
                return None
            ranges.append([(p.name, v) for v in p.values()])
        return [dict(c) for c in itertools.product(*ranges)]

    def gmem_tables(self):
        """``(assignment, G table)`` for every deciding assignment (memoised)."""
        cached = self.__dict__.get("_gtables")
        if cached is None:
            arrays = self.gmem_arrays()
            cached = None if arrays is None else [(a, G.tolist()) for a, G in arrays]
            self.__dict__["_gtables"] = cached
        return cached

    def gmem_arrays(self):
        """:meth:`gmem_tables` with each table a numpy array (memoised)."""
        cached = self.__dict__.get("_garrays", False)
        if cached is False:
            asg = self.assignments
            cached = None if asg is None else [(a, self.gmem.table_array(a)) for a in asg]
            self.__dict__["_garrays"] = cached
        return cached

    @cached_property
    def smem_array(self):
        """:attr:`smem_addr` as a numpy array (elements past the tile: where CuTe's partition puts them)."""
        return index_table(self.smem)

    @cached_property
    def access_array(self):
        """Every access's element indices as a ``(accesses, values)`` numpy array (threads in order,
        then accesses), or None when the accesses are ragged (or ``SYMLAYOUT_NO_TABLES=1``): the checks
        then run point by point."""
        if not tables_enabled():
            return None
        rows = [a for accs in self.accesses.values() for a in accs]
        if not rows or any(len(a) != len(rows[0]) for a in rows) or len(rows[0]) < 1:
            return None
        return np.array(rows, dtype=np.int64).reshape(len(rows), len(rows[0]))


def _linear(stride, sym) -> bool:
    """``stride`` is an integer or ``a * sym + b`` (the representatives' argument needs it)."""
    if isinstance(stride, int):
        return True
    try:
        return sympy.Poly(stride, sym).degree() <= 1 and len(stride.free_symbols) <= 1
    except Exception:  # noqa: BLE001 - not a polynomial: enumerate
        return False


def _dyn_layout(gmem, params):
    """The gmem tile as CuTe sees it at compile time: symbols as dynamic ints."""

    def conv(x):
        if isinstance(x, tuple):
            return tuple(conv(e) for e in x)
        if isinstance(x, int):
            return x
        vals = {s: params[s.name].first_value() if s.name in params else 2 for s in x.free_symbols}
        # a run-time stride is dynamic whatever its value: never 1, which the algebra would take
        # for the static unit stride a vector can be recast along (CuTe cannot: it rejects)
        return DynInt(max(2, int(x.subs(vals))))
    return Layout(gmem.shape, conv(gmem.stride))


def build_global_model(gc, params=None) -> GlobalCopyModel:
    """The model of a :class:`~symlayout.config.GlobalCopyConfig`.  Raises
    :class:`~symlayout.errors.CuteStaticAssert` where CuTe does not compile the copy, and
    :class:`NotModelled` for what is not modelled."""
    params = params or {}
    smem = gc.smem
    if cute_addresses_differ(smem):
        raise NotModelled(f"[{gc.kind}.{gc.operand}] smem {smem}: a swizzle offset that is not a multiple of the "
                          "swizzle period is not supported for global-memory copies")
    M, N = (it.product(smem.shape[0]), it.product(smem.shape[1]))
    if not isinstance(M, int) or not isinstance(N, int):
        raise NotModelled(f"[{gc.kind}.{gc.operand}] smem {smem}: a parametric smem tile is not supported for "
                          "global-memory copies")
    atom = make_copy_atom(gc.atom, gc.element_type)
    tc = gc.tiled.build(atom)
    tm, tn = (it.product(x) for x in tc.tiler_mn)
    Mx, Nx = -(-M // tm) * tm, -(-N // tn) * tn        # zipped_divide rounds the rest modes up
    vbits = value_type_bits(gc.element_type)
    ident = Layout((Mx, Nx))
    tf_s, tf_d = tc.tidfrg_S(ident), tc.tidfrg_D(ident)
    cp0 = tc.get_slice(0)
    sview = slice_and_offset(cp0.thread_coord(ident), tf_s)
    dview = slice_and_offset(cp0.thread_coord(ident), tf_d)
    gdyn = _dyn_layout(gc.gmem, params)
    g2s = gc.kind == "g2s"

    def real(L):
        # a partition that keeps its swizzle: copy() slices it per call at a run-time index, where it may
        # decay into run-time strides that copy_unpack's recast cannot merge (tiled.copy._iteration)
        return cp0.partition_S(L) if (L is gdyn) == g2s else cp0.partition_D(L)
    src_real, dst_real = (real(gdyn), real(smem)) if g2s else (real(smem), real(gdyn))
    width = 0
    if atom.op.kind == "default":                 # copy() hands the whole partitions to the auto-vectorizer
        s_av, d_av = src_real, dst_real
        width = auto_vectorizing_width(s_av[0], d_av[0], gc.element_type, gc.element_type, atom.op.vector_bits)
        n = sview[0].size()
        base = [[int(sview[1] + sview[0](j * width + e)) for e in range(width)] for j in range(n // width)]
        k = width
    else:
        copy_calls(atom, src_real, dst_real, bits=(vbits, vbits), first_only=True)   # CuTe's static_asserts
        plan = copy_calls(atom, sview, dview)
        base = []
        for c in plan:
            s_idx, d_idx = view_values(c.src), view_values(c.dst)
            if s_idx != d_idx:
                raise NotModelled(f"{gc.atom}: source and destination values of one call differ")
            base.append(s_idx)
        k = len(base[0]) if base else 1
    thr_s = function_table(tf_s[0])
    T = tc.tiled_num_thr
    whole = None
    if base and all(len(a) == len(base[0]) for a in base) and len(base[0]) and len(thr_s) >= T:
        # every thread's accesses at once: its offset plus thread 0's plan
        whole = np.array(thr_s[:T], dtype=np.int64)[:, None, None] + np.array(base, dtype=np.int64)[None]
        acc = dict(enumerate(whole.tolist()))
    else:
        acc = {}
        for t in range(T):
            o = thr_s[t]
            acc[t] = [[i + o for i in a] for a in base]
    names = {"A": "MK", "B": "NK", "C": "MN"}.get(gc.operand, "MN")      # (issue 31: a tensor X of a register copy)
    residue = tuple(names.index(r) for r in gc.residue)
    pred = getattr(gc, "predicate", None)                                  # issue 31: a hand-written predicate
    unpredicated = () if pred is None else tuple(d for d in residue if names[d] not in pred)
    gmem, past = GmemTile.of(gc.gmem, M, N), ()
    if (Mx, Nx) != (M, N):
        remap, past, sext, gmem = _past_the_tile(gc, tc, M, N, Mx, Nx)
        whole = remap[whole] if whole is not None else None
        acc = {t: [remap[a].tolist() for a in accs] for t, accs in acc.items()}
    m = GlobalCopyModel(cfg=gc, kind=gc.kind, operand=gc.operand, atom=atom, tiled_copy=tc, value_type=gc.element_type,
                        value_bits=vbits, shape=(M, N), smem=smem, smem_align=gc.align,
                        gmem=gmem, gmem_align=gc.gmem_align, params=dict(params),
                        residue=residue, k=k, accesses=acc, vector_width=width, past=past,
                        unpredicated=unpredicated)
    if past:
        m.__dict__["smem_array"] = sext
        m.notes.append(f"the {M}x{N} tile is not a whole number of the TiledCopy's {tm}x{tn} tiles "
                       f"({gc.tiled.how}): CuTe's partitions round the rest modes up to {Mx}x{Nx}, and the copy "
                       "moves those elements too")
    regs = (atom.op.d_regs if g2s else atom.op.s_regs).count
    if not width and swizzle_inside_register(smem, k // max(regs, 1)):
        if regs != 1:
            raise NotModelled(f"[{gc.kind}.{gc.operand}] smem {smem}: a swizzle inside one of {regs} registers of "
                              f"{gc.atom} is not supported")
        m.recast = recast_starts(tc, smem, acc, m.smem_addr, g2s, k)
    if whole is not None and tables_enabled():
        m.__dict__["access_array"] = whole.reshape(-1, whole.shape[2])      # (the rows access_array reads)
    return m


def _past_the_tile(gc, tc, M, N, Mx, Nx):
    """A TiledCopy tile that does not divide the ``M x N`` tile: CuTe compiles it, and ``zipped_divide``
    rounds the rest modes up to ``Mx x Nx``, so the partitions name elements past the tile and the copy
    moves them, at the addresses the divided layouts give them (``logical_divide`` of each side by the
    TiledCopy's tile).  Returns ``(remap, past, smem offsets, gmem tile)``: ``remap`` takes the index
    ``r + Mx*c`` of the rounded-up tile to the model's (``r + M*c`` inside the tile, then ``n, n+1, ...``
    in that order past it), ``past`` the ``(r, c)`` of those, and the offsets of every model index."""
    tiler = tuple(tc.tiler_mn)
    v = np.arange(Mx * Nx, dtype=np.int64)
    r, c = v % Mx, v // Mx
    inside = (r < M) & (c < N)
    remap = np.empty(Mx * Nx, dtype=np.int64)
    remap[inside] = r[inside] + M * c[inside]
    out = np.flatnonzero(~inside)
    remap[out] = M * N + np.arange(len(out))
    past = tuple(zip(r[out].tolist(), c[out].tolist()))
    sext = np.empty(Mx * Nx, dtype=np.int64)
    sext[remap] = index_table(logical_divide(gc.smem, tiler))
    g = GmemTile.of(logical_divide(gc.gmem, tiler), Mx, Nx)
    coords = np.empty_like(g.coords)
    coords[remap] = g.coords
    return remap, past, sext, GmemTile(coords, g.strides, g.symbols)


def recast_starts(tc, smem, accesses, table, g2s, k) -> dict:
    """first element of each access -> the smem element offset CuTe hands its instruction when the swizzle
    moves bits inside the ``k``-element register (:func:`~symlayout.prove.copy.model.swizzle_inside_register`:
    ``Sw<2,1,2>`` over int8 under a 16-byte cp.async).  ``copy_unpack``'s ``recast`` upcasts the swizzle by
    ``k`` (``Sw<B,M,S>`` -> ``Sw<max(B+M-log2 k,0),0,S>``) and the pointer of the thread's partition
    (offset ``P``): the instruction gets ``P + k * floor((Sw(o + L(i)) - P) / k)``, the first element's
    swizzled offset rounded down to the register, not that element's address (as
    :func:`symlayout.prove.copy.model._recast_starts` for ldmatrix; checked with CuTe C++ in
    ``tests/test_datapath.py``)."""
    tf = tc.tidfrg_D(smem) if g2s else tc.tidfrg_S(smem)
    out = {}
    for t, accs in accesses.items():
        _L, P = slice_and_offset(tc.get_slice(t).thread_coord(smem), tf)      # partition_D/S(smem)'s pointer
        P = int(P)
        for a in accs:
            out[a[0]] = P + (table[a[0]] - P) // k * k
    return out


# ---------------------------------------------------------------- obligations


def _result(name, m, t0, cex=None, checked=None, **kw):
    return Result(name, verdict(cex, checked), operand=m.name, seconds=time.perf_counter() - t0, checked=checked,
                  method=kw.pop("method", "exhaustive"), counterexample=cex, **kw)


def _unknown(name, m, t0, why):
    return Result(name, UNKNOWN, operand=m.name, seconds=time.perf_counter() - t0, detail=why)


def _too_many(name, m, t0):
    return _unknown(name, m, t0, f"the gmem tile's symbols have more than {MAX_ASSIGNMENTS} combinations to "
                                 "enumerate (one symbol is decided exactly for its whole range)")


def _params_text(a):
    return ", ".join(f"{k} = {v}" for k, v in a.items())


def _at(a):
    return f" (at {_params_text(a)})" if a else ""


def _writers(m, first) -> tuple[dict, dict]:
    """``(count, who)`` of the destination: how many times the hardware writes each element offset (``k``
    contiguous elements from each access's first, whose offset is ``first[index]``: the smem side's
    :attr:`GlobalCopyModel.start_addr` or a gmem table) and the first three ``(thread, access)`` writing it."""
    cnt, who = defaultdict(int), defaultdict(list)
    for t, accs in m.accesses.items():
        for c, a in enumerate(accs):
            a0 = first[a[0]]
            for e in range(m.k):
                cnt[a0 + e] += 1
                if len(who[a0 + e]) < 3:
                    who[a0 + e].append((t, c))
    return cnt, who


def _each_destination(name, m, t0, holds, refute):
    """``name`` decided on the destination tile (smem for ``g2s``, every gmem table otherwise): on the arrays
    where ``holds`` says it holds (:func:`_destination_holds`), else element by element from its writers
    (:func:`_writers`): ``refute(m, n, i, x, cnt, who, asg)`` is the Counterexample of element ``i`` at offset
    ``x`` under the symbols' assignment ``asg`` (None for smem), None where it holds."""
    n = m.shape[0] * m.shape[1]
    fast = _destination_holds(name, m, t0, n, holds)
    if fast is not None:
        return fast
    if m.kind == "g2s":
        cnt, who = _writers(m, m.start_addr)
        for i in range(n):
            cex = refute(m, n, i, m.smem_addr[i], cnt, who, None)
            if cex is not None:
                return _result(name, m, t0, cex, n)
        return _result(name, m, t0, None, n)
    tables = m.gmem_tables()
    if tables is None:
        return _too_many(name, m, t0)
    checked = 0
    for asg, G in tables:
        cnt, who = _writers(m, G)
        for i in range(n):
            checked += 1
            cex = refute(m, n, i, G[i], cnt, who, asg)
            if cex is not None:
                return _result(name, m, t0, cex, checked)
    return _result(name, m, t0, None, checked)


# ---------------------------------------------------------------- whole-array fast paths
# Each ``_*_holds`` decides on numpy arrays whether every obligation of a property holds (the same
# quantifier and cases as the point-by-point loop below it); False sends the property to that loop,
# which finds, tells and counts the counterexample.


def _written(m, table):
    """The element offsets the hardware touches: ``k`` contiguous from every access's first element."""
    return (m.starts(table)[m.access_array[:, 0]][:, None] + np.arange(m.k)).ravel()


def _coverage_holds(m, table, n) -> bool:
    return bool(np.all(np.isin(table[:n], _written(m, table))))


def _exactly_once_holds(m, table, n) -> bool:
    u, cnt = np.unique(_written(m, table), return_counts=True)
    a = table[:n]
    if len(u) == 0:
        return n == 0
    pos = np.minimum(np.searchsorted(u, a), len(u) - 1)
    return bool(np.all(u[pos] == a) and np.all(cnt[pos] == 1))


def _contiguous_holds(m, table) -> bool:
    """Every access starts ``vb``-byte aligned and its elements are contiguous in ``table``."""
    A = m.access_array
    a0 = m.starts(table)[A[:, 0]]
    return bool(np.all((a0 * m.eb) % m.vb == 0) and np.all(table[A] == a0[:, None] + np.arange(A.shape[1])))


def _first_index(table):
    """``(sorted distinct values, index of each one's first occurrence)``; for a table of distinct
    small non-negative values, ``(None, inverse)`` with ``inverse[value]`` its index (-1: none), no sort."""
    if table.size and int(table.min()) >= 0 and int(table.max()) < 1 << 24:
        inv = np.full(int(table.max()) + 1, -1, dtype=np.int64)
        inv[table] = np.arange(table.size, dtype=np.int64)
        if bool(np.all(inv[table] == np.arange(table.size))):       # distinct values: every index kept
            return None, inv
    u, first = np.unique(table, return_index=True)
    return u, first


def _lookup(u, first, x):
    """The first index holding each value of ``x`` (-1: none)."""
    if u is None:                             # (an inverse table of distinct values)
        inside = (x >= 0) & (x < len(first))
        return np.where(inside, first[np.where(inside, x, 0)], -1)
    if len(u) == 0:
        return np.full(np.shape(x), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(u, x), len(u) - 1)
    return np.where(u[pos] == x, first[pos], -1)


def _destination_holds(name, m, t0, n, holds):
    """The holding Result of ``name`` when ``holds(m, table, n)`` is true of the destination tile on
    the arrays (smem for ``g2s``, every gmem table otherwise); None sends it to the point-by-point loop."""
    if m.access_array is None or len(m.smem_array) < n:
        return None
    if m.kind == "g2s" and holds(m, m.smem_array, n):
        return _result(name, m, t0, None, n)
    arrays = m.gmem_arrays() if m.kind != "g2s" else None
    if arrays and all(len(G) >= n and holds(m, G, n) for _a, G in arrays):
        return _result(name, m, t0, None, n * len(arrays))
    return None


def _dst_side(m):
    return "smem" if m.kind == "g2s" else "gmem"


def coverage(m: GlobalCopyModel) -> Result:
    """Every element of the destination tile (smem for ``g2s``, the gmem tile for ``s2g``) is
    written by some instruction: the bytes the hardware writes from each access's first address."""
    return _each_destination("coverage", m, time.perf_counter(), _coverage_holds, _never_written)


def _never_written(m, n, i, x, cnt, who, asg):
    """The Counterexample of destination element ``i`` (offset ``x``) when no access writes it."""
    if x in cnt:
        return None
    if m.kind == "g2s":
        return Counterexample(f"smem element {m.el(i)} (byte {x * m.eb}) is never written by {m.atom.op.name}: "
                              f"the copy writes {len(cnt)} of the {n} tile elements",
                              element=m.coord(i), address_bytes=x * m.eb)
    return Counterexample(f"gmem element {m.el(i)} (offset {x}) is never written{_at(asg)}",
                          element=m.coord(i), params=asg or None)


def _stage_shifts(m) -> list:
    """Element offset of stage ``s`` from stage 0, for ``s = 1 ..`` of a staged smem buffer whose stages are
    translates of stage 0 (else no shift: the stages module says UNKNOWN for it)."""
    staged, n = getattr(m.cfg, "smem_staged", None), getattr(m.cfg, "stages", 1)
    if staged is None or n < 2 or not isinstance(n, int):
        return []
    table = index_table(staged)
    S = len(table) // n
    out = []
    for st in range(1, n):
        d = int(table[st * S] - table[0])
        if not np.array_equal(table[st * S:(st + 1) * S], table[:S] + d):
            return []
        out.append(d)
    return out


def _into_other_stages(m, t0, name):
    """A copy that reaches past its tile (:attr:`GlobalCopyModel.past`) in a staged buffer: the copy of stage
    ``s`` writes those elements into the bytes of another stage's tile elements, so that element is written
    twice (by both stages' copies) and receives an element that is not its own.  The refutation of ``name``
    at the first such element, or None."""
    if m.kind != "g2s" or not m.past:
        return None
    shifts = _stage_shifts(m)
    if not shifts:
        return None
    sa, n = m.smem_array, m.n
    mine = {int(a): i for i, a in enumerate(sa[:n].tolist())}
    stage_of = {0: 0}
    for st, d in enumerate(shifts, start=1):
        stage_of[d] = st
    checked = 0
    for t, accs in m.accesses.items():
        for c, a in enumerate(accs):
            for e, j in enumerate(a):
                checked += 1
                if j < n:
                    continue
                w = int(sa[j])                       # stage 0's copy writes past element j here
                for d, st in stage_of.items():
                    i = mine.get(w - d)
                    if st == 0 or i is None:
                        continue
                    by = f"thread {t}'s {_instr(m)} (access {c}) of the stage-0 copy"
                    why = (f"the {m.shape[0]}x{m.shape[1]} tile is not a whole number of the TiledCopy's tiles (CuTe "
                           "rounds the partitions up)")
                    if name == "exactly_once":
                        msg = (f"smem element {m.el(i)} of stage {st} (byte {w * m.eb}) is written twice: by the "
                               f"stage-{st} copy and by {by}, which writes {m.el(j)} there: {why}")
                    else:
                        msg = (f"smem element {m.el(i)} of stage {st} (byte {w * m.eb}) receives {m.el(j)} from {by}, "
                               f"not its own element: {why}")
                    cex = Counterexample(msg, thread=t, value=e, element=m.coord(i), address_bytes=w * m.eb,
                                         extra={"stage": st, "past_element": list(m.coord(j))})
                    return _result(name, m, t0, cex, checked)
    return None


def exactly_once(m: GlobalCopyModel) -> Result:
    """Every destination element is written exactly once (by the bytes the hardware writes); in a staged
    buffer, also by the copies of the other stages (a copy past its tile writes into the next stage)."""
    t0 = time.perf_counter()
    staged = _into_other_stages(m, t0, "exactly_once")
    if staged is not None:
        return staged
    return _each_destination("exactly_once", m, t0, _exactly_once_holds, _not_once)


def _not_once(m, n, i, x, cnt, who, asg):
    """The Counterexample of destination element ``i`` (offset ``x``) when it is not written exactly once."""
    if cnt.get(x, 0) == 1:
        return None
    by = f": by thread/access {who[x]}" if who.get(x) else ""
    thread = who[x][0][0] if who.get(x) else None
    if m.kind == "g2s":
        return Counterexample(f"smem element {m.el(i)} (byte {x * m.eb}) is written {cnt.get(x, 0)} times by the "
                              f"{m.name} copy (expected once){by}",
                              element=m.coord(i), address_bytes=x * m.eb, thread=thread)
    return Counterexample(f"gmem element {m.el(i)} (offset {x}) is written {cnt.get(x, 0)} times (expected once)"
                          f"{_at(asg)}{by}", element=m.coord(i), params=asg or None, thread=thread)


def _instr(m):
    return m.atom.op.name


def alignment(m: GlobalCopyModel) -> Result:
    """Both sides: every access starts at a byte address aligned to its width (cp.async: the
    16/8/4-byte source and destination alignment PTX requires; any vector access: its width),
    given the base alignments (``align`` of smem, ``gmem_align`` of the gmem tile's first element),
    and its ``k`` elements are contiguous in both memories."""
    t0 = time.perf_counter()
    vb = m.vb
    checked = 0
    for side, base in (("smem", m.smem_align), ("gmem", m.gmem_align)):
        if vb > 1 and base % vb:
            cex = Counterexample(f"{side} base alignment {base} B is less than the {vb}-byte access of {_instr(m)}"
                                 f" ({'gmem_align' if side == 'gmem' else 'align'} = {base})",
                                 address_bytes=base, extra={"side": side})
            return _result("alignment", m, t0, cex, 1)
    if m.access_array is not None and _contiguous_holds(m, m.smem_array):
        arrays = m.gmem_arrays()
        if arrays is not None and all(_contiguous_holds(m, G) for _a, G in arrays):
            return _result("alignment", m, t0, None, len(m.access_array) * (1 + len(arrays)))
    for cex in _unaligned_accesses(m, m.smem_addr, m.start_addr, None):
        checked += 1
        if cex is not None:
            return _result("alignment", m, t0, cex, checked)
    tables = m.gmem_tables()
    if tables is None:
        return _too_many("alignment", m, t0)
    for asg, G in tables:
        for cex in _unaligned_accesses(m, G, G, asg):
            checked += 1
            if cex is not None:
                return _result("alignment", m, t0, cex, checked)
    return _result("alignment", m, t0, None, checked)


def _unaligned_accesses(m, table, first, asg):
    """For each access of the copy in turn, the Counterexample where on one side its first element (at offset
    ``first[index]``) is not aligned to the access's width or its elements are not contiguous in ``table``, else
    None; the side is smem where ``asg`` is None, else the gmem table under the symbols' assignment ``asg``."""
    for t, accs in m.accesses.items():
        for c, a in enumerate(accs):
            yield _unaligned(m, t, c, a, table, first[a[0]], asg)


def _unaligned(m, t, c, a, table, a0, asg):
    """The Counterexample of thread ``t``'s access ``c`` (element indices ``a``, the first at offset ``a0``)."""
    vb, eb = m.vb, m.eb
    if (a0 * eb) % vb:
        if asg is None:
            return Counterexample(f"thread {t} access {c}: smem address {a0 * eb} B of {m.el(a[0])} is not "
                                  f"{vb}-byte aligned ({_instr(m)})", thread=t, element=m.coord(a[0]),
                                  address_bytes=a0 * eb, extra={"side": "smem"})
        return Counterexample(f"thread {t} access {c}: gmem offset {a0 * eb} B of {m.el(a[0])} from the "
                              f"tile's first element is not {vb}-byte aligned{_at(asg)}",
                              thread=t, element=m.coord(a[0]), address_bytes=a0 * eb, params=asg or None,
                              extra={"side": "gmem"})
    for e, i in enumerate(a):
        if table[i] == a0 + e:
            continue
        if asg is None:
            return Counterexample(f"thread {t} access {c}: element {e} of its {vb}-byte vector is {m.el(i)} at "
                                  f"smem byte {table[i] * eb}, not contiguous with {m.el(a[0])} at {a0 * eb}",
                                  thread=t, value=e, element=m.coord(i), address_bytes=table[i] * eb,
                                  extra={"side": "smem"})
        return Counterexample(f"thread {t} access {c}: element {e} of its {vb}-byte vector is {m.el(i)} "
                              f"at gmem offset {table[i] * eb} B, not contiguous with {m.el(a[0])} at "
                              f"{a0 * eb} B{_at(asg)}", thread=t, value=e, element=m.coord(i),
                              params=asg or None, extra={"side": "gmem"})
    return None


def phase_of(lane, vb):
    """Shared-memory phases of a warp's vector access: 128 bytes each (16-byte accesses: 8 lanes,
    8-byte: 16 lanes), as for the vector copies of ``[copy.X]``."""
    return lane // max(1, 128 // vb) if vb > 4 else 0


def wavefronts(byte_starts, vb):
    """``(wavefronts, worst bank, {word: index})`` of one phase: the most distinct 4-byte words a
    bank serves."""
    banks = defaultdict(dict)
    for j, b0 in enumerate(byte_starts):
        for wd in range(b0 // 4, (b0 + vb + 3) // 4):
            banks[wd % 32].setdefault(wd, j)
    bank = max(banks, key=lambda b: len(banks[b]))
    return len(banks[bank]), bank, banks[bank]


def _request_starts(m, table):
    """The first element offset of every access as ``(threads, accesses)`` (threads 0.. in order, each
    with the same number of accesses), or None."""
    A = m.access_array
    T = m.threads
    if A is None or T == 0 or len(A) % T or list(m.accesses) != list(range(T)):
        return None
    return m.starts(table)[A[:, 0]].reshape(T, len(A) // T)


def _bank_conflicts_holds(m):
    """:func:`bank_conflicts` on the arrays: ``(holds, phases)``; every phase's wavefronts are its
    minimum."""
    b = _request_starts(m, m.smem_array) if m.access_array is not None else None
    if b is None:
        return False, 0
    vb = m.vb
    b0 = b * m.eb                                                          # (T, C) byte addresses
    T, C = b0.shape
    t = np.arange(T)
    lane = t % 32
    ph = lane // max(1, 128 // vb) if vb > 4 else np.zeros_like(lane)
    nph = int(ph.max()) + 1
    gid = ((t // 32)[:, None] * C + np.arange(C)[None, :]) * nph + ph[:, None]    # (T, C)
    need, items, minimum = phase_wavefronts(gid, b0, vb)
    return bool(np.all(need <= minimum)), int(np.count_nonzero(items))


def bank_conflicts(m: GlobalCopyModel) -> Result:
    """The shared-memory side: per warp instruction and phase, the wavefronts needed equal the
    minimum (one per 128 bytes of the phase)."""
    t0 = time.perf_counter()
    ok, phases = _bank_conflicts_holds(m)
    if ok:
        return _result("bank_conflicts", m, t0, None, phases)
    vb, eb, sa = m.vb, m.eb, m.start_addr
    worst, phases = None, 0
    for w, c in m.requests():
        groups = defaultdict(list)
        for l in range(32):
            t = 32 * w + l
            if t < m.threads:
                groups[phase_of(l, vb)].append((l, sa[m.accesses[t][c][0]] * eb))
        for ph, items in groups.items():
            phases += 1
            need, bank, words = wavefronts([b for _l, b in items], vb)
            minimum = max(1, -(-(len(items) * vb) // 128))
            if need > minimum and (worst is None or need / minimum > worst[0]):
                lanes = sorted({items[j][0] for j in words.values()})
                worst = (need / minimum, need, minimum, w, c, ph, bank, lanes, sorted(wd * 4 for wd in words))
    if worst is None:
        return _result("bank_conflicts", m, t0, None, phases)
    ratio, need, minimum, w, c, ph, bank, lanes, addrs = worst
    deg = int(round(ratio))
    cex = Counterexample(f"{deg}-way bank conflict on the smem side of {m.name}: warp {w} access {c} phase {ph} needs "
                         f"{need} wavefronts (minimum {minimum}); lanes {lanes} hit bank {bank} at byte addresses {addrs}",
                         thread=32 * w + lanes[0], address_bytes=addrs[0],
                         extra={"degree": deg, "wavefronts": need, "minimum": minimum, "lanes": lanes,
                                "addresses": addrs, "bank": bank})
    return _result("bank_conflicts", m, t0, cex, phases)


def coalescing(m: GlobalCopyModel) -> Result:
    """The gmem side: per warp instruction, the 32-byte sectors touched equal the minimum
    ``ceil(distinct bytes / 32)`` (the tile's first element on a sector boundary), for every
    admissible value of the gmem tile's symbols."""
    t0 = time.perf_counter()
    tables = m.gmem_arrays()                  # (the lists only for the loop)
    if tables is None:
        return _too_many("coalescing", m, t0)
    eb, vb = m.eb, m.vb
    checked = 0
    if _coalescing_holds(m):
        return _result("coalescing", m, t0, None, len(tables) * len(list(m.requests())))
    tables = m.gmem_tables()
    for asg, G in tables:
        for w, c in m.requests():
            checked += 1
            sectors, nbytes = set(), set()
            for l in range(32):
                t = 32 * w + l
                if t >= m.threads:
                    continue
                b0 = G[m.accesses[t][c][0]] * eb
                nbytes.update(range(b0, b0 + vb))
                sectors.update(range(b0 // SECTOR, (b0 + vb - 1) // SECTOR + 1))
            minimum = -(-len(nbytes) // SECTOR)
            if len(sectors) > minimum:
                cex = Counterexample(f"warp {w} access {c} of {m.name} touches {len(sectors)} 32-byte sectors of "
                                     f"global memory for {len(nbytes)} bytes (minimum {minimum}){_at(asg)}",
                                     thread=32 * w, params=asg or None,
                                     extra={"sectors": len(sectors), "minimum": minimum, "bytes": len(nbytes)})
                return _result("coalescing", m, t0, cex, checked)
    return _result("coalescing", m, t0, None, checked)


def _coalescing_holds(m) -> bool:
    """:func:`coalescing` on the arrays: per warp instruction, the lanes' ``vb``-byte intervals
    (sorted by start) cover ``vb + sum min(vb, gap)`` bytes and their sector ranges (non-decreasing
    at both ends) ``sum`` of the new sectors each adds; no instruction touches more sectors than
    ``ceil(bytes / 32)``."""
    arrays = m.gmem_arrays()
    if m.access_array is None or arrays is None or m.threads % 32:
        return False
    vb = m.vb
    for _asg, G in arrays:
        b = _request_starts(m, G)
        if b is None:
            return False
        T, C = b.shape
        s0 = np.sort((b * m.eb).reshape(T // 32, 32, C), axis=1)           # (warps, lanes sorted, accesses)
        nbytes = vb + np.minimum(vb, np.diff(s0, axis=1)).sum(axis=1)
        lo, hi = s0 // SECTOR, (s0 + vb - 1) // SECTOR
        sectors = (hi[:, 0] - lo[:, 0] + 1) + (hi[:, 1:] - np.maximum(lo[:, 1:] - 1, hi[:, :-1])).sum(axis=1)
        if np.any(sectors > -(-nbytes // SECTOR)):
            return False
    return True


def residues(m: GlobalCopyModel, mode: int) -> list:
    """The residues (1..extent; the extent is a full tile) the problem size can leave along ``mode``:
    from a ``[params]`` symbol named after the mode, else every one."""
    T = m.shape[mode]
    names = {"A": "MK", "B": "NK", "C": "MN"}.get(m.operand, "MN")      # (issue 31: a register copy's tensor)
    p = m.params.get(names[mode])
    if p is None:
        return list(range(1, T + 1))
    out = set()
    mult = p.multiple_of
    v = -(-p.min // mult) * mult
    for _ in range(T // math.gcd(mult, T) + 1):
        if v > p.max:
            break
        out.add(v % T or T)
        v += mult
    return sorted(out)


def in_bounds(m: GlobalCopyModel) -> Result:
    """Every byte an instruction touches lies inside the smem tile (``[0, cosize * sizeof(T))``)
    and inside the gmem tile; with ``residue``, for every residue the problem can leave, every
    element of an instruction that executes (its first element inside the problem: CuTe's
    predicate) lies inside the problem."""
    t0 = time.perf_counter()
    eb = m.eb
    limit = int(m.smem.cosize()) * eb
    checked = 0
    if _in_bounds_holds(m, limit):
        res = {d: residues(m, d) for d in m.residue}
        return _result("in_bounds", m, t0, None, len(m.access_array) * (1 + len(m.gmem_arrays())),
                       detail=_in_bounds_detail(m, res))
    for t, accs in m.accesses.items():
        for c, a in enumerate(accs):
            checked += 1
            b0 = m.start_addr[a[0]] * eb
            if b0 < 0 or b0 + m.vb > limit:
                cex = Counterexample(f"thread {t} access {c} ({m.el(a[0])}) touches smem bytes [{b0}, {b0 + m.vb}) "
                                     f"outside the smem tile [0, {limit})" + _why_past(m, a[0]),
                                     thread=t, element=m.coord(a[0]), address_bytes=b0)
                return _result("in_bounds", m, t0, cex, checked)
    tables = m.gmem_tables()
    if tables is None:
        return _too_many("in_bounds", m, t0)
    res = {d: residues(m, d) for d in m.residue}
    for asg, G in tables:
        where = {}
        for i, g in enumerate(G[:m.n]):           # the gmem tile (elements past it are outside)
            where.setdefault(g, i)
        for t, accs in m.accesses.items():
            for c, a in enumerate(accs):
                checked += 1
                g0 = G[a[0]]
                els = []
                for e in range(m.k):
                    i = where.get(g0 + e)
                    if i is None:
                        cex = Counterexample(f"thread {t} access {c} touches gmem offset {g0 + e} (element {e} of its "
                                             f"vector from {m.el(a[0])}), outside the gmem tile{_at(asg)}"
                                             + _why_past(m, a[0]),
                                             thread=t, value=e, element=m.coord(a[0]), params=asg or None)
                        return _result("in_bounds", m, t0, cex, checked)
                    els.append(i)
                first = m.coord(a[0])
                for d, rs in res.items():
                    hi = max(m.coord(i)[d] for i in els)
                    if d in m.unpredicated:             # issue 31: runs whatever its coordinate along d
                        bad = next((r for r in rs if r <= hi), None)
                        if bad is not None:
                            return _result("in_bounds", m, t0, _unpredicated_cex(m, t, c, a, d, bad, hi, asg), checked)
                        continue
                    bad = next((r for r in rs if first[d] < r <= hi), None)
                    if bad is not None:
                        mode = {"A": "MK", "B": "NK", "C": "MN"}.get(m.operand, "MN")[d]
                        cex = Counterexample(
                            f"{mode} residue {bad}: thread {t} access {c} starts at {m.el(a[0])}, inside the problem "
                            f"(its predicate is true), and its {m.k}-element vector reaches "
                            f"{mode.lower()} = {hi} >= {bad}, outside it{_at(asg)}",
                            thread=t, element=first, params=asg or None,
                            extra={"residue": {mode: bad}, "first_element": list(first)})
                        return _result("in_bounds", m, t0, cex, checked)
    return _result("in_bounds", m, t0, None, checked, detail=_in_bounds_detail(m, res))


def _unpredicated_cex(m, t, c, a, d, bad, hi, asg) -> Counterexample:
    """issue 31: an access along a residue mode the kernel's predicate does not test."""
    mode = {"A": "MK", "B": "NK", "C": "MN"}.get(m.operand, "MN")[d]
    i = next(i for i in a if m.coord(i)[d] == hi)
    pred = ", ".join(getattr(m.cfg, "predicate", None) or ()) or "nothing"
    return Counterexample(f"{mode} residue {bad}: the predicate tests {pred}, not {mode}, so thread {t} access {c} "
                          f"({m.el(a[0])}) runs and moves {m.el(i)}, whose {mode.lower()} = {hi} >= {bad} is outside "
                          f"the problem{_at(asg)}", thread=t, element=m.coord(i), params=asg or None,
                          extra={"residue": {mode: bad}, "first_element": list(m.coord(a[0]))})


def _why_past(m, i) -> str:
    return f": {m.notes[0]}" if i >= m.n and m.notes else ""


def _in_bounds_detail(m, res) -> str:
    if not m.residue:
        return ""
    return "predicated on each instruction's first element; residues " + ", ".join(
        f"{'MK' if m.operand == 'A' else 'NK' if m.operand == 'B' else 'MN'}"[d] + f" in {_span(res[d])}"
        for d in m.residue)


def _in_bounds_holds(m, limit) -> bool:
    """:func:`in_bounds` on the arrays: the smem bytes inside the tile; every gmem element of every
    access inside the gmem tile, and no residue cuts an executing access's vector."""
    A = m.access_array
    if A is None:
        return False
    b0 = m.start_array[A[:, 0]] * m.eb
    if not (np.all(b0 >= 0) and np.all(b0 + m.vb <= limit)):
        return False
    arrays = m.gmem_arrays()
    if arrays is None:
        return False
    res = {d: np.array(residues(m, d), dtype=np.int64) for d in m.residue}
    xy = m.coord_array
    first = xy[A[:, 0]]
    for _asg, G in arrays:
        u, fi = _first_index(G[:m.n])                                        # the gmem tile's elements only
        els = _lookup(u, fi, (G[A[:, 0]][:, None] + np.arange(m.k)))       # (accesses, k)
        if np.any(els < 0):
            return False
        for d, rs in res.items():
            hi = xy[els][..., d].max(axis=1)
            if d in m.unpredicated and len(rs) and np.any(hi >= rs[0]):
                return False                                                # (issue 31: an unpredicated mode)
            # a residue r with first[d] < r <= hi cuts the vector
            if np.any(np.searchsorted(rs, hi, "right") > np.searchsorted(rs, first[:, d], "right")):
                return False
    return True


def _span(rs):
    return f"{{{rs[0]}..{rs[-1]}}}" if len(rs) > 3 else "{" + ", ".join(map(str, rs)) + "}"


def slot_agreement(m: GlobalCopyModel, operand_model=None, partner=None) -> Result:
    """The whole route: the bytes an instruction moves from its source address land where the
    destination expects the same element (``g2s``: the smem element at each written address is
    the gmem element read there; ``s2g``: the gmem offset written holds the smem element read).
    With the ``[copy.X]`` model, a counterexample follows the element on into the register slot
    the MMA reads it from; and the ``[copy.X]`` table's smem layout puts every element where this
    copy does."""
    t0 = time.perf_counter()
    staged = _into_other_stages(m, t0, "slot_agreement")
    if staged is not None:
        return staged
    tables = m.gmem_arrays()                  # (the lists only for the loop)
    if tables is None:
        return _too_many("slot_agreement", m, t0)
    sa, eb = m.smem_addr, m.eb
    checked = 0
    if _slot_agreement_holds(m):
        checked = len(tables) * len(m.access_array) * m.k
        tables = ()
    else:
        tables = m.gmem_tables()
    for asg, G in tables:
        gwhere = {}
        for i, g in enumerate(G):
            gwhere.setdefault(g, i)
        for t, accs in m.accesses.items():
            for c, a in enumerate(accs):
                g0, s0 = G[a[0]], m.start_addr[a[0]]
                for e in range(m.k):
                    checked += 1
                    gi, si = gwhere.get(g0 + e), m.smem_index.get(s0 + e)
                    if si is not None and G[si] == g0 + e:
                        continue                 # the element stored there is the one at that gmem offset
                    route = [f"gmem offset {g0 + e} ({m.el(gi) if gi is not None else 'no element of the tile'})",
                             f"{_instr(m)} of thread {t} (access {c}, byte {e * eb} of its {m.vb}-byte vector)",
                             f"smem byte {(s0 + e) * eb} ({m.el(si) if si is not None else 'no element of the tile'})"]
                    if m.kind == "g2s":
                        msg = (f"smem element {m.el(si) if si is not None else '?'} receives "
                               f"{m.el(gi) if gi is not None else f'gmem offset {g0 + e}'} from thread {t}'s "
                               f"{_instr(m)}{_at(asg)}")
                        om = operand_model() if callable(operand_model) else operand_model
                        if om is not None and si is not None:
                            route += _register_story(om, si)
                    else:
                        msg = (f"gmem element {m.el(gi) if gi is not None else f'at offset {g0 + e}'} receives "
                               f"{m.el(si) if si is not None else '?'} from thread {t}'s {_instr(m)}{_at(asg)}")
                        route.reverse()
                    cex = Counterexample(msg, thread=t, value=e, element=m.coord(a[0]), params=asg or None,
                                         route=route)
                    return _result("slot_agreement", m, t0, cex, checked)
    if partner is not None and getattr(partner, "smem", None) is not None:
        cex, n = _same_smem(m, partner, operand_model, lambda: m.gmem_tables()[0])
        checked += n
        if cex is not None:
            return _result("slot_agreement", m, t0, cex, checked)
    return _result("slot_agreement", m, t0, None, checked)


def _slot_agreement_holds(m) -> bool:
    """:func:`slot_agreement` on the arrays: for every access and value ``e``, the smem element at
    ``smem(first) + e`` is the gmem element at ``G(first) + e``."""
    A = m.access_array
    arrays = m.gmem_arrays()
    if A is None or arrays is None:
        return False
    sa = m.smem_array
    u, fi = _first_index(sa)
    e = np.arange(m.k)
    si = _lookup(u, fi, m.start_array[A[:, 0]][:, None] + e)                            # (accesses, k)
    if np.any(si < 0):
        return False
    return all(bool(np.all(G[si] == G[A[:, 0]][:, None] + e)) for _a, G in arrays)


def _same_smem(m, partner, operand_model, gtable):
    """The ``[copy.X]`` table reads (or, for C, writes) the tile through its own smem layout: each
    element must be where the global-memory copy put it (or takes it from)."""
    try:
        other = index_table(partner.smem)
    except Exception:  # noqa: BLE001 - a parametric partner: compared by the [copy.X] results alone
        return None, 0
    sa, eb = m.smem_array, m.eb
    n = min(len(other), len(sa))
    differ = np.flatnonzero(other[:n] != sa[:n])
    if len(differ) == 0:
        return None, n
    asg, G = gtable()                         # (the first deciding assignment's table, as ints)
    other, sa = other.tolist(), m.smem_addr
    for i in range(int(differ[0]), n):
        if other[i] == sa[i]:
            continue
        j = m.smem_index.get(other[i])
        who = next(((t, c) for t, accs in m.accesses.items() for c, a in enumerate(accs)
                    if m.start_addr[a[0]] <= other[i] < m.start_addr[a[0]] + m.k), None)
        by = f" of thread {who[0]} (access {who[1]})" if who else ""
        if m.kind == "g2s":
            route = [f"gmem offset {G[j]} ({m.el(j)})" if j is not None else "no gmem element",
                     f"{_instr(m)}{by} writes it to smem byte {other[i] * eb}"]
            om = operand_model() if callable(operand_model) else operand_model
            if om is not None:
                route += _register_story(om, i, m.el(j) if j is not None else "no element")
            msg = (f"[copy.{m.operand}] reads {m.el(i)} at smem byte {other[i] * eb}, where [{m.name}] (smem "
                   f"{m.smem}) put {m.el(j) if j is not None else 'no element'}: the two tables give different smem "
                   f"layouts ({partner.smem})")
        else:
            route = [f"[copy.C] writes {m.el(i)} to smem byte {other[i] * eb}",
                     f"{_instr(m)}{by} reads that byte as {m.el(j) if j is not None else 'no element'}",
                     f"gmem offset {G[j]}" if j is not None else "nowhere in the gmem tile"]
            msg = (f"[copy.C] writes {m.el(i)} at smem byte {other[i] * eb}, where [{m.name}] (smem {m.smem}) reads "
                   f"{m.el(j) if j is not None else 'no element'}: the two tables give different smem layouts")
        return Counterexample(msg, element=m.coord(i), address_bytes=other[i] * eb, route=route), i + 1
    return None, n


def _copy_instr(om) -> str:
    """The ``[copy.X]`` instruction's name (``ldmatrix.x4.trans``, or the atom)."""
    if om.hw.kind in ("ldsm", "stsm"):
        return f"{'ldmatrix' if om.hw.kind == 'ldsm' else 'stmatrix'}.x{om.hw.num}{'.trans' if om.hw.trans else ''}"
    return om.atom.op.name


def _register_story(om, i, got=None):
    """Where the ``[copy.X]`` copy takes smem element ``i`` to: the instruction, lane and register
    that read it, and the fragment slot where the MMA expects it (``got``: what is really there)."""
    for t, exp in om.expected.items():
        for s, j in enumerate(exp):
            if j != i:
                continue
            steps = []
            for c, call in enumerate(om.calls[t]):
                if s in call.reg:
                    a = call.reg.index(s)
                    k = max(1, om.reg_bits_frag // om.value_bits)
                    steps.append(f"{_copy_instr(om)} (call {c} of warp {t // 32}): lane {t % 32} register {a // k}")
                    break
            steps.append(f"fragment slot {s} of thread {t}, where the MMA expects {om.name(i)}"
                         + (f" and gets {got}" if got else ""))
            return steps
    return []


def type_agreement(m: GlobalCopyModel, partner=None) -> Result:
    """The global-memory copy moves the element type the shared-memory tile holds: the element type
    (``element``, default ``type``) of the ``[copy.X]`` table that reads (A, B) or writes (C) the same
    tile.  Where no ``element`` is given and the two types have one width, the refutation says how to
    state it (the atoms' value types may be widths, contract 2.1)."""
    t0 = time.perf_counter()
    if partner is None:
        return _result("type_agreement", m, t0, None, 0,
                       detail=f"no [copy.{m.operand}] table: nothing to compare the element type with")
    theirs = partner.element_type
    if canonical_type(theirs) == canonical_type(m.value_type):
        return _result("type_agreement", m, t0, None, 1)
    if m.kind == "g2s":
        msg = f"[g2s.{m.operand}] writes {m.value_type} into shared memory, but [copy.{m.operand}] reads it as {theirs}"
    else:
        msg = f"[copy.C] stores {theirs} into shared memory, but [s2g.C] reads it as {m.value_type}"
    if not partner.element and not m.cfg.element and value_type_bits(theirs) == value_type_bits(m.value_type):
        msg += f"; if operand {m.operand}'s tensors hold {m.value_type}, say element = \"{m.value_type}\""
    return _result("type_agreement", m, t0, Counterexample(msg, extra={"copy_type": theirs,
                                                                     "global_type": m.value_type}), 1)


CHECKS = {
    "coverage": coverage, "alignment": alignment, "exactly_once": exactly_once, "bank_conflicts": bank_conflicts,
    "in_bounds": in_bounds, "coalescing": coalescing,
}


def prove_global(m: GlobalCopyModel, properties, partner=None, operand_model=None, refuted=frozenset()) -> list:
    """The results of ``properties`` on one global-memory copy model."""
    out = []
    for p in properties:
        if p == "slot_agreement":
            r = slot_agreement(m, operand_model, partner)
        elif p == "type_agreement":
            r = type_agreement(m, partner)
            if r.status != REFUTED and r.checked == 0:
                continue                       # nothing to compare: no result rather than a vacuous one
        elif p in CHECKS:
            try:
                r = CHECKS[p](m)
            except NotModelled as e:
                r = Result(p, ERROR, operand=m.name, detail=str(e))
        else:
            continue
        r.expected = REFUTED if p in refuted else PROVED
        out.append(r)
    return out


def rejection(e: CuteStaticAssert, gc, refuted) -> Result:
    """CuTe does not compile the copy: the refutation of the property that explains it
    (a copy_unpack vectorization failure is ``alignment``; a tile the TiledCopy does not divide,
    ``coverage``; an atom that cannot move the type, ``type_agreement``)."""
    a = e.assertion or ""
    if "vectorize" in a or a.startswith("Divisibility") or a.startswith("Downcast"):
        prop = "alignment"
    elif a.startswith("CopyOperation is not valid"):
        prop = "type_agreement"
    else:
        prop = "coverage"
    cex = Counterexample(f"CuTe does not compile this copy: static_assert \"{a}\" ({e})",
                         extra={"cute_static_assert": a})
    return Result(prop, REFUTED, operand=f"{gc.kind}.{gc.operand}", checked=1, method="cute", counterexample=cex,
                  detail="CuTe rejects the copy at compile time; its other properties are not checked",
                  expected=REFUTED if prop in refuted else PROVED)
