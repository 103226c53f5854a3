"""The Tensor Memory of a Blackwell CTA cell by cell, as the TMEM properties read it.

* :class:`AccumulatorPlan`: where each accumulator element ``(m, n)`` of each stage lives, CuTe's side
  (``make_fragment_C`` = ``UMMA::tmem_frg``, :func:`symlayout.tiled.tmem.accumulator_layout`) and the
  PTX side (the cell ``tcgen05.mma`` writes, :func:`symlayout.arch.tcgen05.datapath_cell`, from the
  address CuTe issues the MMA tile with);
* :class:`CopyRoutes`: every value of every thread of ``make_tmem_copy`` over the accumulator (the
  CUTLASS epilogue's way: the copy made for one ``tile`` of the accumulator, partitioned over all of
  them): the element CuTe's ``partition_D`` (a load; ``partition_S`` of a store) says the register
  holds, and the cell the ``tcgen05.ld/st`` instruction moves into it
  (:func:`symlayout.arch.tcgen05.ld_cell` from the warp's address).

A cell is ``(lane, column)``, columns absolute (``accumulator_column`` added). Every CTA of a pair has
the same plan; peers are modelled one by one where the element differs (rows ``p * M/2 ..``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...algebra import int_tuple as it
from ...algebra.int_tuple import _
from ...algebra.layout import Layout, flat_divide, function_table, slice_
from ...arch.tcgen05 import datapath, datapath_cell, ld_cell
from ...atoms import value_type_bits
from ...atoms.tmem import tmem_copy_op
from ...errors import CuteStaticAssert, SymlayoutError
from ...tiled.tmem import accumulator_layout, make_tmem_copy, tmem_address_layout


@dataclass
class AccumulatorPlan:
    """One CTA's accumulator in Tensor Memory.

    ``shape`` is the post-partition shape ``((M_MMA, N_MMA), MMA_M, MMA_N, stages)``; ``cells[p]`` maps
    each index of it (colexicographic) to ``(lane, column)`` and ``elements[p]`` to ``(m, n, stage)`` in
    the TiledMMA's C tile, for peer ``p``; ``frg`` is the layout ``index -> lane + 128 * cell``.
    """
    mma: object
    stages: int
    first_column: int
    shape: tuple
    frg: Layout
    cells: list
    elements: list
    value_type: str
    value_bits: int
    tile_mn: tuple

    @property
    def peers(self) -> int:
        return len(self.elements)

    @property
    def mma_mn(self) -> tuple:
        return self.shape[0]

    def stage_cells(self, stage: int, peer: int = 0) -> dict:
        """``(lane, column) -> (m, n)`` of one stage."""
        return {c: e[:2] for c, e in zip(self.cells[peer], self.elements[peer]) if e[2] == stage}

    def datapath(self) -> str:
        """The PTX data-path layout letter of the MMA's D."""
        atom = self.mma.atom
        return datapath(int(it.product(atom.shape_mnk[0])), self.peers)


def accumulator_plan(mma, stages: int = 1, first_column: int = 0, frg: Layout | None = None) -> AccumulatorPlan:
    """The :class:`AccumulatorPlan` of ``partition_fragment_C(mma, (M, N, stages))`` at ``first_column``
    (``frg``: a layout to use instead of CuTe's, for tests that break it)."""
    M, N = int(mma.tile_size(0)), int(mma.tile_size(1))
    peers = int(mma.atom.thr_id.size())
    cells, elements, shape = [], [], None
    for p in range(peers):
        cl, coff = mma.get_slice(p).partition("C", Layout((M, N, stages)))
        shape = cl.shape
        lay = frg if frg is not None else accumulator_layout(mma, shape)
        cells.append([(v % 128, v // 128 + first_column) for v in map(int, function_table(lay))])
        offs = [int(coff) + int(v) for v in function_table(cl)]
        elements.append([(o % M, (o // M) % N, o // (M * N)) for o in offs])
        frg_used = lay
    c = mma.atom.val_type_c
    return AccumulatorPlan(mma, stages, first_column, shape, frg_used, cells, elements, c, value_type_bits(c), (M, N))


def _coords(shape) -> list:
    """Colexicographic coordinates ``((m, n), i, j, s)`` of a post-partition shape (ints per mode)."""
    (mm, nn), *rest = shape
    flat = [mm, nn] + [int(it.product(r)) for r in rest]
    out = []
    for idx in range(int(it.product(tuple(flat)))):
        c = []
        for e in flat:
            c.append(idx % e)
            idx //= e
        out.append(((c[0], c[1]),) + tuple(c[2:]))
    return out


def mma_writes(plan: AccumulatorPlan) -> list:
    """Per index (colexicographic): the cell ``tcgen05.mma`` writes ``D(m, n)`` of that MMA tile to, from
    the address CuTe issues the tile with (the cell of its element ``(0, 0)``) plus the PTX data path."""
    coords = _coords(plan.shape)
    first = {}
    for i, c in enumerate(coords):
        if c[0] == (0, 0):
            first[c[1:]] = i
    letter = plan.datapath()
    nmma = plan.mma_mn[1]
    out = []
    for c in coords:
        bl, bc = plan.cells[0][first[c[1:]]]
        dl, dc = datapath_cell(letter, nmma, c[0][0], c[0][1])
        out.append((bl + dl, bc + dc))
    return out


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


@dataclass
class CopyRoutes:
    """The routes of a ``[tmem_copy.C]`` over every stage (peer 0), or CuTe's rejection."""
    op: object
    tile: tuple
    routes: list = field(default_factory=list)
    #: per thread: the TMEM address (CuTe's units) each atom call is issued at, and the C offsets
    #: ``m + M_MMA*n`` of its register values (what the C++ oracle prints)
    bases: dict = field(default_factory=dict)
    offsets: dict = field(default_factory=dict)
    error: str | None = None
    assertion: str | None = None


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
    acc0 = tmem_address_layout(accumulator_layout(plan.mma, ((mm, nn),)), bits)
    c0 = Layout((mm, nn))
    out = CopyRoutes(op, tile)
    try:
        if mm % tile[0] or nn % tile[1]:
            raise CuteStaticAssert(f"the tile {tile} does not divide the accumulator tile ({mm},{nn})",
                                   "flat_divide: the tile does not divide the accumulator")
        acc_epi = flat_divide(acc0, tile)
        c_epi = flat_divide(c0, tile)
        tc = make_tmem_copy(op, plan.value_type, slice_((_, _, 0, 0), acc_epi))
    except CuteStaticAssert as e:
        out.error, out.assertion = str(e), e.assertion
        return out
    load = op.direction == "load"
    dp = (1 << 16) * max(1, 32 // bits)
    stage_base = {s: plan.cells[0][plan.elements[0].index((0, 0, s))] for s in range(plan.stages)}
    for t in range(128):
        thr = tc.get_slice(t)
        tp, to = thr.partition_S(acc_epi) if load else thr.partition_D(acc_epi)
        gp, go = thr.partition_D(c_epi) if load else thr.partition_S(c_epi)
        calls = Layout(tuple(tp.shape[1:]), tuple(tp.stride[1:]))      # the instruction address of each call
        bases = [int(to) + int(v) for v in function_table(calls)]
        g = [int(go) + int(v) for v in function_table(gp)]
        per_call_g = int(it.product(gp.shape[0]))
        out.bases[t], out.offsets[t] = bases, g
        for k, base in enumerate(bases):
            bl, bc = base // dp, (base % dp) * bits // 32
            for v in range(per_call_g):
                o = g[k * per_call_g + v]
                pos = v * bits
                reg, inreg = pos // 32, pos % 32
                if op.pack16:
                    lane, col = ld_cell(op.shape, op.num, t % 32, reg, inreg // 16, True)
                    bit = 0
                else:
                    lane, col = ld_cell(op.shape, op.num, t % 32, reg)
                    bit = inreg
                for s in range(plan.stages):
                    sl, sc = stage_base[s]
                    cell = (sl + bl + lane, sc + bc + col, bit)
                    out.routes.append(Route(t, v, reg, k, s, (o % mm, o // mm), cell))
    return out
