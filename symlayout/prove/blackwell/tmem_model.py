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
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...algebra import int_tuple as it
from ...algebra.int_tuple import _
from ...algebra.layout import Layout, flat_divide, function_table, make_layout, slice_
from ...arch.tcgen05 import datapath, datapath_cells, ld_cells
from ...atoms import value_type_bits
from ...atoms.tmem import tmem_copy_op
from ...errors import CuteStaticAssert, SymlayoutError
from ...tiled.tmem import accumulator_layout, make_tmem_copy, tmem_address_layout
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
