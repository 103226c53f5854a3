"""The accumulator datapath: where a UMMA TiledMMA keeps each accumulator element in Tensor Memory
(CuTe's ``UMMA::tmem_frg<ValueType, StorageType, N_SM, TmemAllocMode>::make``, what
``make_fragment_C`` / ``partition_fragment_C`` build for an SM100 atom).

A post-partition shape ``((M_MMA, N_MMA), MMA_M, MMA_N, ...)`` maps each coordinate to a virtual
address ``lane + 128 * cell`` (data-path lane, then column in units of the storage type):

* one CTA, ``M_MMA = 128``: one row per lane, ``(128, N):(1, 128)``;
* one CTA, ``M_MMA = 64``: half subpartitions, rows 0-15 on lanes 0-15, rows 16-31 on lanes 32-47,
  ...: ``((16, 4), N):((1, 32), 128)``; the next M-tile fills lanes 16-31, 48-63, ... (Interleaved)
  or moves to the next columns (NonInterleaved: TS atoms);
* two CTAs: each CTA holds ``M_MMA = M/2`` rows: 128 -> one row per lane; 64 -> the "2x2" atom
  ``(64, (N/2, 2)):(1, (128, 64))`` (columns N/2.. on lanes 64-127); 32 -> the "1x4" atom.

MMA tiles then repeat ``tiled_product``-wise, lanes first, then columns.

>>> L = tmem_frg_layout(32, 32, 1, "Interleaved", ((64, 32), 2, 1))
>>> [tmem_cell(L, (m, 0), 1, 0) for m in (0, 15, 16)], tmem_cell(L, (0, 5), 1, 0)
([(16, 0), (31, 0), (48, 0)], (16, 5))
"""
from __future__ import annotations

from ..algebra import int_tuple as it
from ..algebra.layout import (Layout, coalesce, composition, filter, left_inverse, make_layout, tiled_product,
                              upcast)
from ..errors import CuteStaticAssert
from .copy import TiledCopy
from ..atoms.types import value_type_bits
from ..algebra.layout import function_table
from ..arch.tcgen05 import warp_lanes, alloc_problems

#: Bits of a CTA's Tensor Memory (128 lanes x 512 columns x 32 bits): CuTe's ``MAX_CAPACITY_BITS``.
MAX_CAPACITY_BITS = 128 * 512 * 32
MODES = ("Interleaved", "NonInterleaved", "Duplicated")


def _assert(ok: bool, msg: str) -> None:
    if not ok:
        raise CuteStaticAssert(f"UMMA::tmem_frg: {msg}", msg)


def _atom(n_sm: int, mode: str, m: int, n: int) -> Layout:
    """The ``(M_MMA, N_MMA) -> lane + 128*cell`` atom of one MMA tile."""
    if n_sm == 1:
        _assert(mode in ("Interleaved", "NonInterleaved"), "UMMA_1SM only accepts Interleaved or NonInterleaved")
        _assert(m in (64, 128), "UMMA_1SM M-mode size should be 64 or 128.")
        return Layout(((16, 4), n), ((1, 32), 128)) if m == 64 else Layout((128, n), (1, 128))
    _assert(n_sm == 2, "UMMA expects N_SM == 1 or N_SM == 2")
    _assert(mode in ("Interleaved", "Duplicated"), "UMMA_2SM only accepts Interleaved or Duplicated")
    _assert(m in (32, 64, 128), "UMMA_2SM M-mode size should be 32 or 64 or 128.")
    if m == 32:
        _assert(mode == "Interleaved", "Only TmemAllocMode::Interleaved is supported for UMMA_2SM M_MMA=32")
        return Layout((32, (n // 4, 4)), (1, (128, 32)))
    if m == 64 and mode == "Interleaved":
        return Layout((64, (n // 2, 2)), (1, (128, 64)))
    return Layout((128, n), (1, 128))


def tmem_frg_layout(value_bits: int, storage_bits: int, n_sm: int, mode: str, tmem_shape) -> Layout:
    """``tmem_frg<...>::make(tmem_shape)`` as a layout ``coord -> lane + 128 * cell`` (``cell`` in
    storage-type units); raises :class:`~symlayout.errors.CuteStaticAssert` with CuTe's message.

    >>> print(tmem_frg_layout(32, 32, 1, "NonInterleaved", ((64, 64), 2, 1)))
    (((16,4),64),2,1):(((1,32),128),8192,0)
    """
    _assert(value_bits <= storage_bits, "TMEM MMA allocations require StorageType big enough for ValueType.")
    _assert(int(it.product(tmem_shape)) * storage_bits <= MAX_CAPACITY_BITS, "Requesting more TMEM than is available.")
    _assert(isinstance(tmem_shape[0], tuple) and len(tmem_shape[0]) == 2,
            "Expected post-partitioned shape ((M_MMA,N_MMA),...).")
    (m, n), rest = tmem_shape[0], tuple(tmem_shape[1:])
    step = 2 if (n_sm == 1 and m == 64 and mode == "NonInterleaved") else 1
    tile = Layout(rest, it.compact_col_major(rest, step)) if rest else Layout(1, 0)
    return tiled_product(_atom(n_sm, mode, m, n), tile) if rest else _atom(n_sm, mode, m, n)


def tmem_cell(layout: Layout, mma_coord, *rest) -> tuple[int, int]:
    """``(lane, cell)`` of the element at ``(mma_coord, *rest)`` (``mma_coord = (m, n)`` in the tile)."""
    v = int(layout((mma_coord,) + rest)) if rest else int(layout(mma_coord))
    return v % 128, v // 128


def accumulator_layout(mma, tmem_shape) -> Layout:
    """``make_fragment_C`` of an SM100 UMMA TiledMMA over a post-partition shape: CuTe's
    ``FrgTypeC`` (``tmem_frg_{1,2}sm<c_type>``: uint32 storage, Interleaved; 1-CTA TS atoms: int32
    storage, NonInterleaved; 2x1SM TS atoms: ``tmem_frg_2sm<c_type>``, Interleaved).

    >>> from symlayout.atoms.umma import umma_mma_atom
    >>> from symlayout.tiled.mma import make_tiled_mma
    >>> mma = make_tiled_mma(umma_mma_atom("SM100_MMA_F16BF16_2x1SM_SS<half_t,half_t,float,128,64,UMMA::Major::K,UMMA::Major::K>"))
    >>> print(accumulator_layout(mma, ((64, 64), 1, 1)))
    ((64,(32,2)),1,1):((1,(128,64)),0,0)
    """
    atom = mma.atom
    n_sm = atom.thr_id.size()
    ts = not atom.frg_type_a.startswith("UMMA::smem_desc")
    mode = "NonInterleaved" if ts and n_sm == 1 else "Interleaved"      # (2x1SM TS atoms: tmem_frg_2sm<c_type>)
    return tmem_frg_layout(value_type_bits(atom.val_type_c), 32, n_sm, mode, tmem_shape)


def a_operand_layout(mma, tmem_shape) -> Layout:
    """``make_fragment_A`` of an SM100 TS TiledMMA (A read from Tensor Memory): CuTe's ``FrgTypeA``,
    ``tmem_frg_{1,2}sm<a_type, a_type, NonInterleaved | Duplicated>`` (storage = the element type, so
    a cell is one element: two 16-bit or four 8-bit elements share a 32-bit column).

    >>> from symlayout.atoms.umma import umma_mma_atom
    >>> from symlayout.tiled.mma import make_tiled_mma
    >>> mma = make_tiled_mma(umma_mma_atom("SM100_MMA_F16BF16_TS<half_t,half_t,float,64,64,UMMA::Major::K,UMMA::Major::K>"))
    >>> print(a_operand_layout(mma, ((64, 16), 1, 4)))
    (((16,4),16),1,4):(((1,32),128),0,2048)
    """
    atom = mma.atom
    if atom.frg_type_a.startswith("UMMA::smem_desc"):
        raise CuteStaticAssert(f"{atom.name}: A is read from shared memory (an SS atom), not Tensor Memory",
                               "Expected tmem in MMA_Atom::call")
    n_sm = atom.thr_id.size()
    bits = value_type_bits(atom.val_type_a)
    return tmem_frg_layout(bits, bits, n_sm, "NonInterleaved" if n_sm == 1 else "Duplicated", tmem_shape)


# ---------------------------------------------------------------------------
# make_tmem_copy: tcgen05.ld/st over a TMEM tensor (copy_traits_sm100.hpp, make_cotiled_copy)
# ---------------------------------------------------------------------------


#: CuTe's ``make_cotiled_copy`` assertion: an atom value reaches an address the data layout does not hold
#: (e.g. a 32-lane ``tcgen05.ld`` over an ``M = 64`` accumulator, which lives on half the lanes).
MISSING_MEMORY = "The memory pointed to by AtomTVLayout does not exist in the DataLayout."


def make_cotiled_copy(copy_atom, atom_tv: Layout, data_layout: Layout):
    """``make_cotiled_copy(atom, atom_tv, data_layout)``: the TiledCopy whose threads move what
    ``atom_tv`` ``(thr, val) -> data address`` names, tiled by the modes of ``data_layout``
    ``coord -> data address``; CuTe's validity check (every address the atom's values reach is one
    the data layout holds) raises :class:`~symlayout.errors.CuteStaticAssert` with CuTe's message."""
    inv = make_layout(left_inverse(data_layout), Layout(1, 0))
    tv_data = composition(inv, atom_tv)                           # (thr, val) -> data coord
    reached = coalesce(composition(make_layout(data_layout, Layout(1, 0)), tv_data[1]))
    if reached != coalesce(atom_tv[1]):                           # (CuTe's CUTE_STATIC_ASSERT_V)
        raise CuteStaticAssert(f"make_cotiled_copy: {MISSING_MEMORY} (the atom's values {atom_tv[1]} reach "
                               f"addresses the data layout {data_layout} does not hold)", MISSING_MEMORY)
    flat = tuple(int(x) for x in it.product_each(data_layout.shape))
    tiler = []
    for i in range(len(flat)):
        pick = Layout(flat, tuple(1 if j == i else 0 for j in range(len(flat))))
        tiler.append(filter(composition(pick, tv_data)))
    tiler = tuple(tiler)
    tile2data = composition(Layout(flat), tiler)
    layout_tv = composition(left_inverse(tile2data), tv_data)
    return TiledCopy(copy_atom, layout_tv, tiler)


def make_tmem_copy(op, value_type: str, tmem_layout: Layout):
    """``make_tmem_copy(op, tmem)`` for a :class:`~symlayout.atoms.tmem.TmemCopyOp` over a TMEM tensor
    of ``value_type`` with layout ``tmem_layout`` (CuTe's addresses in ``value_type`` units: lane stride
    ``TMEM::DP<T>``): four warps, warp ``w`` at lane ``32*w`` of its own subpartition.

    >>> from symlayout.atoms.tmem import tmem_copy_op
    >>> acc = tmem_address_layout(tmem_frg_layout(32, 32, 1, "Interleaved", ((128, 64), 1, 1)), 32)
    >>> tc = make_tmem_copy(tmem_copy_op("SM100_TMEM_LOAD_32dp32b16x"), "float", acc)
    >>> [divmod(int(tc.get_slice(t).partition_S(acc)[1]), 1 << 16) for t in (0, 31, 33, 127)]   # (lane, column)
    [(0, 0), (0, 0), (32, 0), (96, 0)]
    """
    bits = value_type_bits(value_type)
    dp = _dp(bits)
    atom_t = Layout((32, 4), (0, 32 * dp))
    atom_v = coalesce(upcast(op.val_id, bits))
    return make_cotiled_copy(op.copy_atom(value_type), make_layout(atom_t, atom_v), tmem_layout)


def _dp(bits: int) -> int:
    """``TMEM::DP<T>``: one lane in ``T`` units of a TMEM pointer (``1 << 16`` shifted by ``log2(32/bits)``)."""
    return (1 << 16) * max(1, 32 // bits)


def tmem_address_layout(frg: Layout, value_bits: int, storage_bits: int = 32) -> Layout:
    """A :func:`tmem_frg_layout` (``lane + 128*cell``) restrided to CuTe's TMEM tensor addresses in
    value units: ``composition((128,16384):(DP<T>, storage/value), frg)``."""
    return composition(Layout((128, 16384), (_dp(value_bits), storage_bits // value_bits)), frg)


def access_violations(tiled_copy, tmem_layout: Layout, value_bits: int, warps=(0, 1, 2, 3)) -> list:
    """The warp access rule over a TMEM TiledCopy: slice ``i`` (threads ``32i .. 32i+31``) runs on
    hardware warp ``warps[i]``, which reaches lanes ``32*(warps[i]%4) ..`` only
    (:func:`symlayout.arch.tcgen05.warp_lanes`).  Returns one line per offending slice (empty: none).

    >>> from symlayout.atoms.tmem import tmem_copy_op
    >>> acc = tmem_address_layout(tmem_frg_layout(32, 32, 1, "Interleaved", ((128, 64), 1, 1)), 32)
    >>> tc = make_tmem_copy(tmem_copy_op("SM100_TMEM_LOAD_32dp32b16x"), "float", acc)
    >>> access_violations(tc, acc, 32, warps=(4, 5, 6, 7)), access_violations(tc, acc, 32, warps=(1, 2, 3, 4))[0]
    ([], 'threads 0..31 on warp 1 touch TMEM lanes 0..31; warp 1 reaches lanes 32..63 only')
    """
    dp = _dp(value_bits)
    load = tiled_copy.atom.op.ref == "src"
    out = []
    for i, w in enumerate(warps):
        lanes = set()
        for t in range(32 * i, 32 * i + 32):
            thr = tiled_copy.get_slice(t)
            p, off = thr.partition_S(tmem_layout) if load else thr.partition_D(tmem_layout)
            lanes.update((int(off) + int(v)) // dp for v in function_table(p))
        ok = warp_lanes(w)
        if not lanes <= set(ok):
            out.append(f"threads {32 * i}..{32 * i + 31} on warp {w} touch TMEM lanes {min(lanes)}..{max(lanes)}; "
                       f"warp {w} reaches lanes {ok.start}..{ok.stop - 1} only")
    return out


# ---------------------------------------------------------------------------
# The Tensor Memory budget of a CTA (the foundation of contract Version 3's ``tmem_alloc``)
# ---------------------------------------------------------------------------


def columns_used(frg: Layout) -> tuple[int, int]:
    """``(first, last + 1)`` columns (32-bit cells) an accumulator layout (:func:`tmem_frg_layout`,
    stages included) occupies.

    >>> columns_used(tmem_frg_layout(32, 32, 1, "Interleaved", ((128, 192), 1, 1, 2)))
    (0, 384)
    """
    cells = [int(v) // 128 for v in function_table(frg)]
    return min(cells), max(cells) + 1


def tmem_budget_problems(columns: int, accumulator: Layout | None = None, first_column: int = 0,
                         regions: dict | None = None, arch: str = "sm_100") -> tuple[list, int]:
    """``(problems, obligations)`` of a CTA's Tensor Memory plan: ``tcgen05.alloc`` of ``columns``
    (:func:`symlayout.arch.tcgen05.alloc_problems`), the accumulator (every stage) at ``first_column``
    inside the allocation, each hand-placed region ``name -> (first column, columns)`` inside it, and no
    two of them sharing a column.  ``obligations`` counts the facts checked.

    >>> acc = tmem_frg_layout(32, 32, 1, "Interleaved", ((128, 192), 1, 1, 2))
    >>> tmem_budget_problems(384, acc)
    (['nCols 384 is not a power of two'], 2)
    >>> tmem_budget_problems(512, acc, regions={"S": (256, 256)})[0]
    ['accumulator (columns 0..383) and region S (columns 256..511) share columns 256..383']
    """
    problems = list(alloc_problems(columns, arch))
    spans = {}
    if accumulator is not None:
        lo, hi = columns_used(accumulator)
        spans["accumulator"] = (first_column + lo, first_column + hi)
    for name, (start, n) in (regions or {}).items():
        spans[f"region {name}"] = (start, start + n)
    obligations = 1
    for name, (lo, hi) in spans.items():
        obligations += 1
        if lo < 0 or hi > columns:
            problems.append(f"{name} (columns {lo}..{hi - 1}) lies outside the {columns} allocated columns")
    names = list(spans)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            obligations += 1
            lo, hi = max(spans[a][0], spans[b][0]), min(spans[a][1], spans[b][1])
            if lo < hi:
                problems.append(f"{a} (columns {spans[a][0]}..{spans[a][1] - 1}) and {b} (columns "
                                f"{spans[b][0]}..{spans[b][1] - 1}) share columns {lo}..{hi - 1}")
    return problems, obligations
