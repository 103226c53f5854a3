"""The Tensor Memory of a Blackwell CTA cell by cell, as the TMEM properties read it.

* :class:`AccumulatorPlan`: where each accumulator element ``(m, n)`` of each stage lives, CuTe's side
  (``make_fragment_C`` = ``UMMA::tmem_frg``, :func:`symlayout.tiled.tmem.accumulator_layout`) and the
  PTX side (the cell ``tcgen05.mma`` writes, :func:`symlayout.arch.tcgen05.datapath_cell`, from the
  address CuTe issues the MMA tile with: :func:`mma_writes`);
* :class:`CopyRoutes`: every value of every thread of ``make_tmem_copy`` over the accumulator (the
  CUTLASS epilogue's way: the copy made for one ``tile`` of the accumulator, partitioned over all of
  them): the element CuTe's ``partition_D`` (a load; ``partition_S`` of a store) says the register
  holds, and the cell the ``tcgen05.ld/st`` instruction moves into it
  (:func:`symlayout.arch.tcgen05.ld_cell` from the warp's address).

A cell is ``(lane, column)``, columns absolute (``accumulator_column`` added).  Every CTA of a pair has
the same plan; peers are modelled one by one where the element differs (rows ``p * M/2 ..``).  The
tables are numpy arrays, one entry per element or register value.

* :class:`OperandAPlan`: A of a TS atom (``SM100_MMA_*_TS``: A read from Tensor Memory), CuTe's side
  (``make_fragment_A`` = ``tmem_frg<a_type, a_type, NonInterleaved | Duplicated>``,
  :func:`symlayout.tiled.tmem.a_operand_layout`) and the cells ``tcgen05.mma`` reads for each ``A(m, k)``
  (:func:`symlayout.arch.tcgen05.a_lanes` from the address CuTe issues each MMA block with).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...algebra import int_tuple as it
from ...algebra.int_tuple import _
from ...algebra.layout import Layout, flat_divide, function_table, make_layout, slice_
from ...arch.tcgen05 import A_ROW_COPIES, a_lanes, datapath, datapath_cells, ld_cells
from ...atoms import value_type_bits
from ...atoms.tmem import tmem_copy_op
from ...errors import CuteStaticAssert, SymlayoutError
from ...tiled.tmem import a_operand_layout, accumulator_layout, make_tmem_copy, tmem_address_layout
from ..decide.tables import lazy_np as np


@dataclass
class AccumulatorPlan:
    """One CTA's accumulator in Tensor Memory.

    ``shape`` is the post-partition shape ``((M_MMA, N_MMA), MMA_M, MMA_N, stages)``; per peer ``p``,
    ``lane[p]``, ``col[p]`` hold the cell of each index of it (colexicographic) and ``m[p]``, ``n[p]``,
    ``s[p]`` its element of the TiledMMA's C tile and its stage; ``frg`` is the layout
    ``index -> lane + 128 * cell``.
    """
    mma: object
    stages: int
    first_column: int
    shape: tuple
    frg: Layout
    lane: list
    col: list
    m: list
    n: list
    s: list
    value_type: str
    value_bits: int
    tile_mn: tuple

    @property
    def peers(self) -> int:
        return len(self.lane)

    @property
    def mma_mn(self) -> tuple:
        return self.shape[0]

    @property
    def cells(self) -> list:
        """Per peer: ``[(lane, column)]`` of every index."""
        return [list(zip(map(int, a), map(int, b))) for a, b in zip(self.lane, self.col)]

    @property
    def elements(self) -> list:
        """Per peer: ``[(m, n, stage)]`` of every index."""
        return [list(zip(map(int, a), map(int, b), map(int, c))) for a, b, c in zip(self.m, self.n, self.s)]

    def stage_cells(self, stage: int, peer: int = 0) -> dict:
        """``(lane, column) -> (m, n)`` of one stage."""
        k = self.s[peer] == stage
        return dict(zip(zip(self.lane[peer][k].tolist(), self.col[peer][k].tolist()),
                        zip(self.m[peer][k].tolist(), self.n[peer][k].tolist())))

    def stage_origin(self, stage: int) -> tuple:
        """The cell of element ``(0, 0)`` of a stage (peer 0): where the stage starts."""
        i = int(np.flatnonzero((self.m[0] == 0) & (self.n[0] == 0) & (self.s[0] == stage))[0])
        return int(self.lane[0][i]), int(self.col[0][i])

    def element_grid(self):
        """``grid[stage, lane, column]``: ``m + M*n`` of the element the cell holds (peer 0), or -1."""
        if getattr(self, "_grid", None) is None:
            self._grid = self._element_grid()
        return self._grid

    def _element_grid(self):
        M = self.tile_mn[0]
        grid = np.full((self.stages, 128, int(self.col[0].max()) + 1), -1, dtype=np.int64)
        grid[self.s[0], self.lane[0], self.col[0]] = self.m[0] + M * self.n[0]
        return grid

    def datapath(self) -> str:
        """The PTX data-path layout letter of the MMA's D."""
        return datapath(int(it.product(self.mma.atom.shape_mnk[0])), self.peers)


def accumulator_plan(mma, stages: int = 1, first_column: int = 0, frg: Layout | None = None) -> AccumulatorPlan:
    """The :class:`AccumulatorPlan` of ``partition_fragment_C(mma, (M, N, stages))`` at ``first_column``
    (``frg``: a layout to use instead of CuTe's, for tests that break it)."""
    M, N = int(mma.tile_size(0)), int(mma.tile_size(1))
    peers = int(mma.atom.thr_id.size())
    lanes, cols, ms, ns, ss, shape, used = [], [], [], [], [], None, None
    for p in range(peers):
        cl, coff = mma.get_slice(p).partition("C", Layout((M, N, stages)))
        shape = cl.shape
        used = frg if frg is not None else accumulator_layout(mma, shape)
        v = np.asarray(function_table(used), dtype=np.int64)
        lanes.append(v % 128)
        cols.append(v // 128 + first_column)
        o = int(coff) + np.asarray(function_table(cl), dtype=np.int64)
        ms.append(o % M)
        ns.append((o // M) % N)
        ss.append(o // (M * N))
    c = mma.atom.val_type_c
    return AccumulatorPlan(mma, stages, first_column, shape, used, lanes, cols, ms, ns, ss, c, value_type_bits(c),
                           (M, N))


def mma_writes(plan: AccumulatorPlan, peer: int = 0):
    """``(lane, column)`` arrays: per index (colexicographic), the cell ``tcgen05.mma`` writes ``D(m, n)``
    of that MMA tile to, from the address CuTe issues the tile with (the cell of its element ``(0, 0)``,
    the first index of each tile) plus the PTX data path."""
    mm, nn = plan.mma_mn
    idx = np.arange(plan.lane[peer].size)
    first = (idx // (mm * nn)) * (mm * nn)
    dl, dc = datapath_cells(plan.datapath(), nn, idx % mm, (idx // mm) % nn)
    return plan.lane[peer][first] + dl, plan.col[peer][first] + dc


# ---------------------------------------------------------------------------
# make_tmem_copy over the accumulator: every (thread, value) route
# ---------------------------------------------------------------------------

@dataclass
class Route:
    """One value of one thread: ``element`` (m, n) CuTe's partition puts in the register, ``cell``
    (lane, column, bit) the instruction moves, ``call`` the atom call (tile, rest index), ``stage``."""
    thread: int
    value: int
    register: int
    call: int
    stage: int
    element: tuple
    cell: tuple


#: the arrays of :class:`CopyRoutes`, one entry per (stage, thread, call, value)
ROUTE_FIELDS = ("thread", "value", "register", "call", "stage", "m", "n", "lane", "col", "bit")


@dataclass
class CopyRoutes:
    """The routes of a ``[tmem_copy.C]`` over every stage (peer 0), or CuTe's rejection."""
    op: object
    tile: tuple
    arrays: dict = field(default_factory=dict)
    #: per thread: the TMEM address (CuTe's units) each atom call is issued at, and the C offsets
    #: ``m + M_MMA*n`` of its register values (what the C++ oracle prints)
    bases: dict = field(default_factory=dict)
    offsets: dict = field(default_factory=dict)
    error: str | None = None
    assertion: str | None = None

    def __len__(self) -> int:
        return int(self.arrays["thread"].size) if self.arrays else 0

    def route(self, i: int) -> Route:
        a = {k: int(v[i]) for k, v in self.arrays.items()}
        return Route(a["thread"], a["value"], a["register"], a["call"], a["stage"], (a["m"], a["n"]),
                     (a["lane"], a["col"], a["bit"]))

    def replace(self, i: int, **values) -> None:
        """Overwrite fields of route ``i`` (tests that break a route)."""
        for k, v in values.items():
            self.arrays[k][i] = v


def copy_routes(plan: AccumulatorPlan, atom: str, tile=None) -> CopyRoutes:
    """Build ``make_tmem_copy(atom, tAcc_epi(_, _, 0, 0))`` over one stage of the accumulator's first MMA
    tile divided by ``tile`` (CUTLASS's epilogue: ``flat_divide(tAcc, epi_tile)``), partition it over all
    subtiles, and follow each value of each of the 128 threads, for every stage."""
    op = tmem_copy_op(atom)
    (mm, nn), *rest = plan.shape
    if any(int(it.product(r)) != 1 for r in rest[:-1]):
        raise SymlayoutError(f"not supported: [tmem_copy.C] over an accumulator of several MMA tiles {plan.shape}")
    tile = tuple(tile) if tile else (mm, nn)
    bits = plan.value_bits
    out = CopyRoutes(op, tile)
    try:
        if mm % tile[0] or nn % tile[1]:
            raise CuteStaticAssert(f"the tile {tile} does not divide the accumulator tile ({mm},{nn})",
                                   "flat_divide: the tile does not divide the accumulator")
        acc_epi = flat_divide(tmem_address_layout(accumulator_layout(plan.mma, ((mm, nn),)), bits), tile)
        c_epi = flat_divide(Layout((mm, nn)), tile)
        tc = make_tmem_copy(op, plan.value_type, slice_((_, _, 0, 0), acc_epi))
    except CuteStaticAssert as e:
        out.error, out.assertion = str(e), e.assertion
        return out
    load = op.direction == "load"
    dp = (1 << 16) * max(1, 32 // bits)
    tf = tc.tidfrg_S(acc_epi) if load else tc.tidfrg_D(acc_epi)       # (thr, val, rest): every thread at once
    gf = tc.tidfrg_D(c_epi) if load else tc.tidfrg_S(c_epi)
    t_off = np.asarray([int(v) for v in function_table(tf[0])], dtype=np.int64)
    g_off = np.asarray([int(v) for v in function_table(gf[0])], dtype=np.int64)
    calls = np.asarray([int(v) for v in function_table(tf[2])], dtype=np.int64)   # each call's address
    vals = np.asarray([int(v) for v in function_table(make_layout(gf[1], gf[2]))], dtype=np.int64)
    per_call = int(it.product(gf[1].shape))
    for t in range(128):
        out.bases[t] = (t_off[t] + calls).tolist()
        out.offsets[t] = (g_off[t] + vals).tolist()
    nv = vals.size
    thread = np.repeat(np.arange(128), nv)
    k = np.tile(np.arange(nv), 128)
    call, value = k // per_call, k % per_call
    base = t_off[thread] + calls[call]
    off = g_off[thread] + vals[k]
    pos = value * bits
    reg, inreg = pos // 32, pos % 32
    if op.pack16:
        lane, col = ld_cells(op.shape, op.num, thread % 32, reg, inreg // 16, True)
        bit = np.zeros_like(reg)
    else:
        lane, col = ld_cells(op.shape, op.num, thread % 32, reg)
        bit = inreg
    lane, col = base // dp + lane, (base % dp) * bits // 32 + col
    per_stage = []
    for s in range(plan.stages):
        sl, sc = plan.stage_origin(s)
        per_stage.append({"thread": thread, "value": value, "register": reg, "call": call,
                          "stage": np.full(thread.size, s), "m": off % mm, "n": off // mm,
                          "lane": sl + lane, "col": sc + col, "bit": bit})
    out.arrays = {k: np.concatenate([d[k] for d in per_stage]).astype(np.int64) for k in ROUTE_FIELDS}
    return out


# ---------------------------------------------------------------------------
# A of a TS atom in Tensor Memory: what CuTe's fragment keeps, what tcgen05.mma reads
# ---------------------------------------------------------------------------

@dataclass
class OperandAPlan:
    """A (``M x K``, one CTA: peer 0's rows) of a TS TiledMMA in Tensor Memory from ``first_column``.

    CuTe's side, per index of ``make_fragment_A`` (shape ``((M_frg, K_MMA), MMA_M, MMA_K)``; a
    Duplicated fragment has ``M_frg = copies * M_MMA`` rows, row ``r`` a copy of row ``r % M_MMA``):
    ``lane``, ``cell`` (element units: a 32-bit column holds ``32 / bits`` elements) and the element
    ``m``, ``k`` it keeps.  The PTX side, per read (block, row, k, copy): ``r_lane``, ``r_cell`` and the
    element ``r_m``, ``r_k`` the instruction multiplies there, ``r_block`` its MMA block.
    """
    mma: object
    first_column: int
    shape: tuple
    frg: Layout
    value_bits: int
    tile_mk: tuple
    layout: str
    lane: object
    cell: object
    m: object
    k: object
    r_lane: object
    r_cell: object
    r_m: object
    r_k: object
    r_block: object
    r_copy: object
    named: object = None

    @property
    def elements(self):
        """``m + M*k`` of every element partition_A names for this CTA (peer 0)."""
        return self.named

    def column(self, cell):
        """The 32-bit TMEM column (absolute) of an element-unit cell."""
        return self.first_column + cell * self.value_bits // 32

    def bit(self, cell):
        return cell * self.value_bits % 32

    def where(self, lane, cell) -> str:
        b = self.bit(cell)
        return (f"TMEM lane {int(lane)}, column {int(self.column(cell))}"
                + (f" bits {int(b)}..{int(b) + self.value_bits - 1}" if self.value_bits < 32 else ""))


def a_operand_plan(mma, k_total: int, first_column: int = 0, frg: Layout | None = None,
                   m_total: int | None = None) -> OperandAPlan:
    """The :class:`OperandAPlan` of ``make_fragment_A(partition_shape_A(mma, (M, k_total)))`` placed at
    ``first_column`` (``M``: ``m_total``, default the TiledMMA's M; ``frg``: a layout to use instead of
    CuTe's, for tests that break it); raises :class:`~symlayout.errors.CuteStaticAssert` where CuTe does not
    compile it."""
    M = int(m_total) if m_total is not None else int(mma.tile_size(0))
    pl, off = mma.get_slice(0).partition("A", Layout((M, k_total)))
    shape = pl.shape
    used = frg if frg is not None else a_operand_layout(mma, shape)
    mm, kk = (int(it.product(x)) for x in shape[0])
    fm = int(it.product(used.shape[0][0]))
    blocks = int(it.product(shape)) // (mm * kk)
    v = np.asarray(function_table(used), dtype=np.int64)
    e = int(off) + np.asarray(function_table(pl), dtype=np.int64)
    idx = np.arange(v.size)
    r, q, blk = idx % fm, (idx // fm) % kk, idx // (fm * kk)
    el = e[r % mm + mm * (q + kk * blk)]               # (row r of a Duplicated fragment: a copy of row r % M_MMA)
    letter = datapath(int(it.product(mma.atom.shape_mnk[0])), int(mma.atom.thr_id.size()))
    copies = A_ROW_COPIES[letter]
    ri = np.arange(blocks * mm * kk * copies)
    rr, rq = ri % mm, (ri // mm) % kk
    rh, rb = (ri // (mm * kk)) % copies, ri // (mm * kk * copies)
    base = v[rb * fm * kk]                              # the address CuTe issues block rb with: its (0, 0)
    re = e[rr + mm * (rq + kk * rb)]
    return OperandAPlan(mma, first_column, shape, used, value_type_bits(mma.atom.val_type_a), (M, k_total), letter,
                        v % 128, v // 128, el % M, el // M, base % 128 + a_lanes(letter, rr, rh),
                        base // 128 + rq, re % M, re // M, rb, rh, e)
