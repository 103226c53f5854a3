"""Tensor Memory properties of a Blackwell configuration (contract Version 3), decided by enumerating
every cell, element and register (:mod:`.tmem_model`):

* ``tmem_alloc`` [tmem]: ``tcgen05.alloc`` of ``columns`` is legal (a power of two in [32, 512], within
  the architecture's capacity); every accumulator cell of every stage, and every region, lies inside
  the allocation; a stage named in ``accumulator_regions`` lies inside its region; no two owners (a
  stage, a region) share a cell unless ``accumulator_regions`` / ``aliases`` say so.  Refuted with the
  cell (lane, column) and its two owners.  The scale factors of a block-scaled MMA (``[sf.X]``, issue 29)
  are owners too: each ``[sf.X]`` is a block of columns (every lane) at its ``tmem_column``, or where
  CUTLASS's collective puts it (:func:`sf_blocks`).
* ``slot_agreement`` [C] via ``tcgen05.mma``: the cell the MMA writes for ``D(m, n)`` (the PTX data
  path from the address CuTe issues the tile with) is the cell CuTe's ``tmem_frg`` keeps ``(m, n)`` in.
* ``slot_agreement`` [tmem_copy.C] via ``tcgen05.ld`` (C through the copy): each value of each register of each
  thread holds the element ``partition_D`` says (the cell the instruction moves holds that element).
  What CuTe does not compile (``make_cotiled_copy``'s assertion: a 32-lane load of an M = 64
  accumulator) refutes it with CuTe's message, and nothing else of the copy is checked.
* ``coverage`` / ``exactly_once`` [tmem_copy.C]: the copy moves every accumulator element of every stage,
  each once.
* ``tmem_access`` [tmem_copy.C]: slice ``i`` runs on warp ``warps[i]``, which reaches lanes
  ``32*(w%4) ..`` only; refuted with the warp, thread, register, lane and column.
* A of a TS atom (read from Tensor Memory, :class:`.tmem_model.OperandAPlan`): ``slot_agreement`` [A]
  via ``tcgen05.mma`` (the cell the MMA reads for ``A(m, k)``, every MMA block and lane copy, holds
  ``A(m, k)`` in CuTe's ``make_fragment_A``), ``coverage`` / ``exactly_once`` [A] (every element is
  read; no cell keeps two elements, no element is read twice by one lane copy); with ``[tmem] a_region``
  ``tmem_alloc`` also owns A's cells: inside the allocation and its region, sharing cells only with its
  region and the region that one aliases (P over S, never over O).

Every refutation is re-derived on its own (one element's route computed again from the PTX maps and
CuTe's layouts) before it is reported; 0 obligations is ``vacuous``.
"""
from __future__ import annotations

import time

from ...arch.tcgen05 import LANES, a_lanes, alloc_problems, datapath_cell, ld_cell, warp_lanes
from ...algebra import int_tuple as it
from ...errors import CuteStaticAssert
from ..verdict.result import ERROR, REFUTED, Counterexample, Result, verdict
from ..decide.tables import lazy_np as np
from .obligations import cta_tile
from .sf import sf_tmem_blocks
from .tmem_model import a_operand_plan, accumulator_plan, copy_routes, mma_writes

#: the TMEM properties, in report order
TMEM_PROPERTIES = ("tmem_alloc", "slot_agreement", "coverage", "exactly_once", "tmem_access")


def _res(prop, op, t0, cex, checked, via="", detail="", method="exhaustive"):
    return Result(prop, verdict(cex, checked), operand=op, checked=checked, method=method, counterexample=cex,
                  via=via, detail=detail, seconds=time.perf_counter() - t0)


def _unconfirmed(prop, op, t0, via=""):
    return Result(prop, ERROR, operand=op, via=via, seconds=time.perf_counter() - t0,
                  detail="internal: a counterexample did not survive re-validation")


# ---------------------------------------------------------------------------
# tmem_alloc
# ---------------------------------------------------------------------------

def _owners(plan, tm) -> list:
    """``(name, cells)``: each accumulator stage (its cells, peer 0) and each region (all lanes)."""
    out = []
    if plan is not None:
        for s in range(plan.stages):
            out.append((f"accumulator stage {s}", plan.stage_cells(s)))
    for name, (first, n) in tm.regions.items():
        out.append((f"region {name}", (first, first + n)))
    return out


def _stage_arrays(plan, s):
    """``(lane, column, m, n)`` arrays of stage ``s`` (peer 0), in column-then-lane order."""
    k = plan.s[0] == s
    lane, col, m, n = plan.lane[0][k], plan.col[0][k], plan.m[0][k], plan.n[0][k]
    order = np.lexsort((lane, col))
    return lane[order], col[order], m[order], n[order]


def _first_shared(a, b):
    """The first cell (by column, then lane) two owners share, or None; an owner is ``("stage", arrays)``
    or ``("region", (lo, hi))``."""
    (ka, da), (kb, db) = a, b
    if ka == "region" and kb == "region":
        lo, hi = max(da[0], db[0]), min(da[1], db[1])
        return (0, lo) if lo < hi else None
    if ka == "region" or kb == "region":
        (lo, hi), (lane, col) = (da, db[:2]) if ka == "region" else (db, da[:2])
        hit = np.flatnonzero((col >= lo) & (col < hi))
        return (int(lane[hit[0]]), int(col[hit[0]])) if hit.size else None
    width = int(max(da[1].max(), db[1].max())) + 1
    mark = np.zeros(128 * width, dtype=bool)
    mark[da[1] * 128 + da[0]] = True
    hit = np.flatnonzero(mark[db[1] * 128 + db[0]])          # (b's cells are in column-then-lane order)
    return (int(db[0][hit[0]]), int(db[1][hit[0]])) if hit.size else None


def _describe(name, owner, cell) -> str:
    kind, data = owner
    if kind in ("stage", "operand"):
        lane, col, m, n = data
        i = int(np.flatnonzero((lane == cell[0]) & (col == cell[1]))[0])
        if kind == "operand":
            return f"{name} (element A(m={int(m[i])}, k={int(n[i])}))"
        return f"{name} (element (m={int(m[i])}, n={int(n[i])}))"
    return f"{name} (columns {data[0]}..{data[1] - 1}, every lane)"


def _holds(owner, cell) -> bool:
    kind, data = owner
    if kind == "region":
        return data[0] <= cell[1] < data[1]
    return bool(np.any((data[0] == cell[0]) & (data[1] == cell[1])))


def _may_share(tm, a: str, b: str) -> bool:
    """Whether the configuration says owners ``a`` and ``b`` share cells on purpose."""
    acc = {f"accumulator stage {s}": f"region {r}" for s, r in enumerate(tm.accumulator_regions)}
    alias = {f"region {x}": f"region {y}" for x, y in tm.aliases.items()}
    if tm.a_region is not None:                   # A of a TS atom: as its region (its own, what that aliases)
        mine = f"region {tm.a_region}"
        if a == "operand A" or b == "operand A":
            other = b if a == "operand A" else a
            return other == mine or _may_share(tm, mine, other)
    for x, y in ((a, b), (b, a)):
        if acc.get(x) == y or alias.get(x) == y:
            return True
        if x in alias and acc.get(y) == alias[x]:     # P over S, where S holds an accumulator stage
            return True
    return False


def _alloc_cex(t0, checked, message, cell, **extra):
    cex = Counterexample(message, element=cell, extra={"lane": cell[0], "column": cell[1], **extra})
    return _res("tmem_alloc", "tmem", t0, cex, checked)


def sf_blocks(cfg, plan) -> list:
    """``(owner, (first column, end))`` of each ``[sf.X]`` the MMA reads from TMEM: at its ``tmem_column``,
    else where CUTLASS's collective puts it (``find_tmem_tensor_col_offset``: SFA right after the
    accumulator stages, SFB right after SFA); the widths are :func:`~.sf.sf_tmem_blocks`'s."""
    out, at = [], int(plan.col[0].max()) + 1 if plan is not None else 0
    for name, n in sf_tmem_blocks(cfg, cta_tile) if getattr(cfg, "sf", None) else ():
        sc = cfg.sf[name[len("sf."):]]
        if sc.placement != "tmem":
            continue
        at = sc.tmem_column if sc.tmem_column is not None else at
        out.append((f"[{name}] scale factors", (at, at + n)))
        at += n
    return out


def _operand_arrays(ap):
    """``(lane, column, m, k)`` arrays of A's cells in CuTe's fragment (32-bit columns, absolute)."""
    return ap.lane, ap.column(ap.cell), ap.m, ap.k


def tmem_alloc(tm, plan=None, sf=(), aplan=None) -> Result:
    """``tmem_alloc`` of a :class:`~symlayout.config.tmem.TmemConfig`, the accumulator's plan, the scale
    factors' column blocks ``sf`` (:func:`sf_blocks`) and the TS atom's A (``aplan``, an
    :class:`~.tmem_model.OperandAPlan` at ``[tmem] a_region``)."""
    t0 = time.perf_counter()
    checked = 1
    bad = alloc_problems(tm.columns, tm.arch)
    if bad:
        cex = Counterexample(f"tcgen05.alloc({tm.columns}) on {tm.arch}: {'; '.join(bad)} (PTX ISA tcgen05.alloc: "
                             f"nCols is a power of two in [32, 512])", extra={"columns": tm.columns})
        return _res("tmem_alloc", "tmem", t0, cex, checked)
    owners = {}
    if aplan is not None:                           # (first: a clash names A's element)
        owners["operand A"] = ("operand", _operand_arrays(aplan))
    for s in range(plan.stages if plan is not None else 0):
        owners[f"accumulator stage {s}"] = ("stage", _stage_arrays(plan, s))
    for name, (first, n) in tm.regions.items():
        owners[f"region {name}"] = ("region", (first, first + n))
    for name, cols in sf:
        owners[name] = ("region", cols)
    for name, owner in owners.items():              # inside the allocation
        kind, data = owner
        if kind == "region":
            checked += LANES * (data[1] - data[0])
            if data[1] > tm.columns:
                return _alloc_cex(t0, checked, f"{_describe(name, owner, (0, data[1] - 1))} ends at TMEM column "
                                  f"{data[1] - 1}, outside the {tm.columns} columns tcgen05.alloc gives",
                                  (0, data[1] - 1), owner=name)
            continue
        checked += int(data[1].size)
        out = np.flatnonzero(data[1] >= tm.columns)
        if out.size:
            cell = (int(data[0][out[0]]), int(data[1][out[0]]))
            return _alloc_cex(t0, checked, f"{_describe(name, owner, cell)} is at TMEM lane {cell[0]}, column "
                              f"{cell[1]}, outside the {tm.columns} columns tcgen05.alloc gives", cell, owner=name)
    inside = [(f"accumulator stage {s}", r) for s, r in enumerate(tm.accumulator_regions)]
    if aplan is not None:
        inside.insert(0, ("operand A", tm.a_region))
    for name, rname in inside:                       # each stage (and A) inside its region
        owner = owners[name]
        first, n = tm.regions[rname]
        lane, col = owner[1][:2]
        checked += int(col.size)
        out = np.flatnonzero((col < first) | (col >= first + n))
        if out.size:
            cell = (int(lane[out[0]]), int(col[out[0]]))
            return _alloc_cex(t0, checked, f"{_describe(name, owner, cell)} is at TMEM lane {cell[0]}, column "
                              f"{cell[1]}, outside its region {rname} (columns {first}..{first + n - 1})", cell)
    names = list(owners)
    for i, a in enumerate(names):                   # no two owners share a cell
        for b in names[i + 1:]:
            checked += 1
            if _may_share(tm, a, b):
                continue
            cell = _first_shared(owners[a], owners[b])
            if cell is None:
                continue
            if not (_holds(owners[a], cell) and _holds(owners[b], cell)):      # re-validated
                return _unconfirmed("tmem_alloc", "tmem", t0)
            fix = "place [sf.X] tmem_column apart" if "[sf." in a + b else \
                "say [tmem] aliases or accumulator_regions where one overlays the other on purpose"
            return _alloc_cex(t0, checked, f"TMEM lane {cell[0]}, column {cell[1]} belongs to "
                              f"{_describe(a, owners[a], cell)} and to {_describe(b, owners[b], cell)}; two live "
                              f"owners share it ({fix})", cell, owners=[a, b])
    return _res("tmem_alloc", "tmem", t0, None, checked)


# ---------------------------------------------------------------------------
# slot_agreement [C] via tcgen05.mma
# ---------------------------------------------------------------------------

def mma_agreement(plan) -> Result:
    """Every accumulator element of every stage and MMA tile: the cell ``tcgen05.mma`` writes (PTX data
    path layout, from the tile's address) is the cell CuTe's ``tmem_frg`` keeps it in."""
    t0 = time.perf_counter()
    letter = plan.datapath()
    checked = 0
    mm, nn = plan.mma_mn
    for p in range(plan.peers):
        wl, wc = mma_writes(plan, p)
        checked += int(wl.size)
        bad = np.flatnonzero((wl != plan.lane[p]) | (wc != plan.col[p]))
        if not bad.size:
            continue
        i = int(bad[0])
        m, n, s = int(plan.m[p][i]), int(plan.n[p][i]), int(plan.s[p][i])
        c = (int(plan.lane[p][i]), int(plan.col[p][i]))
        first = i - i % (mm * nn)                     # re-validated: the tile's address, the PTX layout
        again = tuple(int(x) + y for x, y in zip((plan.lane[p][first], plan.col[p][first]),
                                                  datapath_cell(letter, nn, i % mm, (i // mm) % nn)))
        if again == c:
            return _unconfirmed("slot_agreement", "C", t0, "tcgen05.mma")
        cex = Counterexample(
            f"C(m={m}, n={n}) of stage {s}{f' (CTA {p} of the pair)' if plan.peers > 1 else ''}: tcgen05.mma "
            f"(data-path layout {letter}) writes it to TMEM lane {again[0]}, column {again[1]}; CuTe's tmem_frg "
            f"keeps it at lane {c[0]}, column {c[1]}", element=(m, n),
            route=[f"C(m={m}, n={n}) -> MMA tile {i // (mm * nn)} row {i % mm}, column {(i // mm) % nn} -> "
                   f"tcgen05.mma layout {letter}: lane {again[0]}, column {again[1]}",
                   f"make_fragment_C: lane {c[0]}, column {c[1]}"],
            extra={"mma_cell": list(again), "cute_cell": list(c)})
        return _res("slot_agreement", "C", t0, cex, checked, via="tcgen05.mma")
    return _res("slot_agreement", "C", t0, None, checked, via="tcgen05.mma",
                detail=f"data-path layout {letter}, {plan.peers} CTA(s), {plan.stages} stage(s)")


# ---------------------------------------------------------------------------
# [tmem_copy.C]: slot_agreement via tcgen05.ld, coverage, exactly_once, tmem_access
# ---------------------------------------------------------------------------

def _route_text(r, op, warp=None) -> str:
    w = f" (warp {warp})" if warp is not None else ""
    return (f"C(m={r.element[0]}, n={r.element[1]}) of stage {r.stage} -> thread {r.thread}{w}, register {r.register} "
            f"of call {r.call} -> {op.ptx} moves TMEM lane {r.cell[0]}, column {r.cell[1]}"
            + (f", bit {r.cell[2]}" if r.cell[2] else ""))


def _held(plan, cr):
    """Per route: ``m + M*n`` of the element the cell it moves holds (-1: none; a bit inside a cell holds none)."""
    grid = plan.element_grid()
    a = cr.arrays
    ok = (a["lane"] >= 0) & (a["lane"] < LANES) & (a["col"] >= 0) & (a["col"] < grid.shape[2]) & (a["bit"] == 0)
    held = np.full(a["lane"].size, -1, dtype=np.int64)
    held[ok] = grid[a["stage"][ok], a["lane"][ok], a["col"][ok]]
    return held


def _rejected(cr, t0, prop="slot_agreement") -> Result:
    cex = Counterexample(f"CuTe does not compile make_tmem_copy({cr.op.name}) over this accumulator: static_assert "
                         f"\"{cr.assertion}\" ({cr.error})", extra={"cute_static_assert": cr.assertion})
    return Result(prop, REFUTED, operand="tmem_copy.C", checked=1, method="cute", counterexample=cex, via="tcgen05.ld",
                  detail="CuTe rejects the configuration at compile time; the other properties of [tmem_copy.C] "
                         "are not checked", seconds=time.perf_counter() - t0)


def ld_agreement(plan, cr) -> Result:
    """Each value of each register of each thread holds the element CuTe's partition says."""
    t0 = time.perf_counter()
    M = plan.tile_mn[0]
    held = _held(plan, cr)
    bad = np.flatnonzero(held != cr.arrays["m"] + M * cr.arrays["n"])
    if not bad.size:
        return _res("slot_agreement", "tmem_copy.C", t0, None, len(cr), via="tcgen05.ld")
    r = cr.route(int(bad[0]))
    pos = r.value * plan.value_bits                 # re-validated: the register and cell from the PTX map again
    lane, col = ld_cell(cr.op.shape, cr.op.num, r.thread % 32, pos // 32, (pos % 32) // 16 if cr.op.pack16 else 0,
                        cr.op.pack16)
    cells = plan.stage_cells(r.stage)
    if pos // 32 != r.register or (cells.get(r.cell[:2]) == r.element and not r.cell[2]) or (lane, col) == (-1, -1):
        return _unconfirmed("slot_agreement", "tmem_copy.C", t0, "tcgen05.ld")
    h = cells.get(r.cell[:2]) if not r.cell[2] else None
    where = f"the element C(m={h[0]}, n={h[1]})" if h else "no accumulator element"
    cex = Counterexample(
        f"thread {r.thread}, register {r.register} (value {r.value} of call {r.call}, stage {r.stage}): CuTe's "
        f"partition says it holds C(m={r.element[0]}, n={r.element[1]}), but {cr.op.ptx} moves TMEM lane "
        f"{r.cell[0]}, column {r.cell[1]}{f' bit {r.cell[2]}' if r.cell[2] else ''}, which holds {where}",
        thread=r.thread, slot=r.register, element=r.element, route=[_route_text(r, cr.op)],
        extra={"lane": r.cell[0], "column": r.cell[1]})
    return _res("slot_agreement", "tmem_copy.C", t0, cex, int(bad[0]) + 1, via="tcgen05.ld")


def copy_coverage(plan, cr) -> list:
    """``coverage`` and ``exactly_once`` of the copy over every stage's elements (the cells it moves)."""
    t0 = time.perf_counter()
    M, N = plan.tile_mn
    held = _held(plan, cr)
    key = np.where(held >= 0, cr.arrays["stage"] * (M * N) + held, -1)
    present = np.zeros(plan.stages * M * N, dtype=bool)
    present[plan.s[0] * (M * N) + plan.m[0] + M * plan.n[0]] = True
    want = np.flatnonzero(present)
    counts = np.bincount(key[key >= 0], minlength=plan.stages * M * N)
    cov_cex = once_cex = None
    missing = want[counts[want] == 0]
    if missing.size:
        s, e = divmod(int(missing[0]), M * N)
        m, n = e % M, e // M
        cell = next(c for c, x in plan.stage_cells(s).items() if x == (m, n))
        cov_cex = Counterexample(f"C(m={m}, n={n}) of stage {s} (TMEM lane {cell[0]}, column {cell[1]}) is moved by "
                                 f"no thread's register of {cr.op.name}", element=(m, n),
                                 extra={"lane": cell[0], "column": cell[1]})
    twice = np.flatnonzero(counts > 1)
    if twice.size:
        i, j = np.flatnonzero(key == twice[0])[:2]
        a, b = cr.route(int(i)), cr.route(int(j))
        if a.cell[:2] != b.cell[:2]:                  # (re-validated: the same cell, so the same element)
            return [_unconfirmed("coverage", "tmem_copy.C", t0), _unconfirmed("exactly_once", "tmem_copy.C", t0)]
        once_cex = Counterexample(f"the element in TMEM lane {a.cell[0]}, column {a.cell[1]} of stage {a.stage} is "
                                  f"moved twice: thread {a.thread} register {a.register} and thread {b.thread} "
                                  f"register {b.register}", element=a.element,
                                  route=[_route_text(a, cr.op), _route_text(b, cr.op)])
    return [_res("coverage", "tmem_copy.C", t0, cov_cex, int(want.size)),
            _res("exactly_once", "tmem_copy.C", t0, once_cex, len(cr))]


def tmem_access(cr, warps) -> Result:
    """Every lane each thread's instruction touches is in its warp's 32-lane subpartition."""
    t0 = time.perf_counter()
    a = cr.arrays
    w = np.asarray(warps, dtype=np.int64)[a["thread"] // 32]
    lo = 32 * (w % 4)
    bad = np.flatnonzero((a["lane"] < lo) | (a["lane"] >= lo + 32))
    if not bad.size:
        return _res("tmem_access", "tmem_copy.C", t0, None, len(cr))
    r = cr.route(int(bad[0]))
    warp = warps[r.thread // 32]
    ok = warp_lanes(warp)
    if r.cell[0] in ok:                               # (re-validated)
        return _unconfirmed("tmem_access", "tmem_copy.C", t0)
    cex = Counterexample(
        f"warp {warp} (threads {32 * (r.thread // 32)}..{32 * (r.thread // 32) + 31} of the copy) reaches TMEM lanes "
        f"{ok.start}..{ok.stop - 1} only, but thread {r.thread}'s register {r.register} is TMEM lane {r.cell[0]}, "
        f"column {r.cell[1]} (PTX ISA, Tensor Memory access restrictions: warp w of a warpgroup reaches lanes "
        f"32*(w%4)..+31)", thread=r.thread, slot=r.register, element=r.element,
        route=[_route_text(r, cr.op, warp)], extra={"warp": warp, "lane": r.cell[0], "column": r.cell[1]})
    return _res("tmem_access", "tmem_copy.C", t0, cex, int(bad[0]) + 1)


# ---------------------------------------------------------------------------
# A of a TS atom: slot_agreement via tcgen05.mma, coverage, exactly_once
# ---------------------------------------------------------------------------

def _a_grid(ap):
    """``(grid, clash)``: ``grid[lane, cell]`` = ``m + M*k`` of the element CuTe's fragment keeps there (-1:
    none); ``clash``: the first fragment index whose cell already keeps another element, or None."""
    M = ap.tile_mk[0]
    e = ap.m + M * ap.k
    grid = np.full((128, int(max(ap.cell.max(), ap.r_cell.max())) + 1), -1, dtype=np.int64)
    grid[ap.lane, ap.cell] = e
    bad = np.flatnonzero(grid[ap.lane, ap.cell] != e)
    return grid, (int(bad[0]) if bad.size else None)


def _a_held(ap):
    """Per read: ``m + M*k`` of the element CuTe's fragment keeps in the cell ``tcgen05.mma`` reads (-1:
    none, or a lane past 127)."""
    grid, _ = _a_grid(ap)
    ok = (ap.r_lane >= 0) & (ap.r_lane < LANES) & (ap.r_cell >= 0)
    held = np.full(ap.r_lane.size, -1, dtype=np.int64)
    held[ok] = grid[ap.r_lane[ok], ap.r_cell[ok]]
    return held


def a_coverage(ap) -> list:
    """``coverage`` [A]: every element of A is in a cell ``tcgen05.mma`` reads; ``exactly_once`` [A]: CuTe's
    fragment keeps no two elements in one cell, and per lane copy no element is read twice."""
    t0 = time.perf_counter()
    M, K = ap.tile_mk
    held = _a_held(ap)
    counts = np.bincount(np.where(held >= 0, held * 4 + ap.r_copy, 0), weights=(held >= 0),
                         minlength=M * K * 4).reshape(M * K, 4)
    want = np.zeros(M * K, dtype=bool)
    want[ap.elements] = True                                # (peer 0's rows; each peer reads its own)
    cov_cex = once_cex = None
    missing = np.flatnonzero(want & (counts[:, 0] == 0))
    if missing.size:
        m, k = int(missing[0]) % M, int(missing[0]) // M
        keep = np.flatnonzero((ap.m == m) & (ap.k == k))
        at = f" (CuTe keeps it at {ap.where(ap.lane[keep[0]], ap.cell[keep[0]])})" if keep.size else ""
        cov_cex = Counterexample(f"A(m={m}, k={k}){at} is read by no tcgen05.mma of the TiledMMA", element=(m, k))
    _, clash = _a_grid(ap)
    if clash is not None:
        e = np.flatnonzero((ap.lane == ap.lane[clash]) & (ap.cell == ap.cell[clash]))   # (re-validated: every
        kept = sorted({(int(ap.m[j]), int(ap.k[j])) for j in e})                          # index of that cell)
        a, b = kept[0], kept[-1]
        if a == b:
            return [_unconfirmed("coverage", "A", t0), _unconfirmed("exactly_once", "A", t0)]
        once_cex = Counterexample(f"CuTe's make_fragment_A keeps A(m={a[0]}, k={a[1]}) and A(m={b[0]}, k={b[1]}) in "
                                  f"one cell, {ap.where(ap.lane[clash], ap.cell[clash])}", element=b)
    else:
        twice = np.flatnonzero(counts.ravel() > 1)
        if twice.size:
            e, h = divmod(int(twice[0]), 4)
            reads = np.flatnonzero((held == e) & (ap.r_copy == h))[:2]
            once_cex = Counterexample(f"A(m={e % M}, k={e // M}) is read twice: " + " and ".join(
                _a_read_text(ap, int(i)) for i in reads), element=(e % M, e // M),
                route=[_a_read_text(ap, int(i)) for i in reads])
    n = int(want.sum())
    return [_res("coverage", "A", t0, cov_cex, n, via="tcgen05.mma"),
            _res("exactly_once", "A", t0, once_cex, int(held.size), via="tcgen05.mma")]


def _block_base(ap, b: int) -> int:
    """``lane + 128*cell`` of element (0, 0) of MMA block ``b`` in CuTe's fragment: the A address CuTe
    issues that block's ``tcgen05.mma`` with."""
    fm_kk = ap.lane.size // (int(ap.r_block.max()) + 1)
    return int(ap.lane[b * fm_kk]) + 128 * int(ap.cell[b * fm_kk])


def _a_read_text(ap, i) -> str:
    m, k, b, h = int(ap.r_m[i]), int(ap.r_k[i]), int(ap.r_block[i]), int(ap.r_copy[i])
    copy = f", lane copy {h}" if h else ""
    return (f"A(m={m}, k={k}) -> MMA block {b} (row {m % ap.shape[0][0]}, k {k % ap.shape[0][1]}{copy}) -> "
            f"tcgen05.mma (data-path layout {ap.layout}) reads {ap.where(ap.r_lane[i], ap.r_cell[i])}")


def a_agreement(ap) -> Result:
    """For every MMA block, ``(row, k)`` and lane copy of A: the cell ``tcgen05.mma`` reads holds that
    element in CuTe's ``make_fragment_A``."""
    t0 = time.perf_counter()
    M = ap.tile_mk[0]
    held = _a_held(ap)
    bad = np.flatnonzero(held != ap.r_m + M * ap.r_k)
    if not bad.size:
        return _res("slot_agreement", "A", t0, None, int(held.size), via="tcgen05.mma",
                    detail=f"A in Tensor Memory (TS), data-path layout {ap.layout}, columns from {ap.first_column}")
    i = int(bad[0])
    m, k = int(ap.r_m[i]), int(ap.r_k[i])
    keep = np.flatnonzero((ap.m == m) & (ap.k == k))
    mm, kk = (int(it.product(x)) for x in ap.shape[0])       # re-validated: the read again, from the block's
    b, h_ = int(ap.r_block[i]), int(ap.r_copy[i])             # address and the PTX lane rule, and what CuTe's
    base = _block_base(ap, b)                                 # fragment keeps there
    lane, cell = base % 128 + a_lanes(ap.layout, m % mm, h_), base // 128 + k % kk
    kept_there = sorted({(int(ap.m[j]), int(ap.k[j])) for j in np.flatnonzero((ap.lane == lane) & (ap.cell == cell))})
    if (lane, cell) != (int(ap.r_lane[i]), int(ap.r_cell[i])) or kept_there == [(m, k)]:
        return _unconfirmed("slot_agreement", "A", t0, "tcgen05.mma")
    there = " and ".join(f"A(m={a}, k={b})" for a, b in kept_there[:2]) + (" and others" if len(kept_there) > 2
                                                                           else "") or "no element of A"
    kept = f"; CuTe keeps A(m={m}, k={k}) at {ap.where(ap.lane[keep[0]], ap.cell[keep[0]])}" if keep.size else ""
    cex = Counterexample(f"A(m={m}, k={k}): tcgen05.mma reads it from {ap.where(ap.r_lane[i], ap.r_cell[i])}, "
                         f"where CuTe's make_fragment_A keeps {there}{kept}", element=(m, k),
                         route=[_a_read_text(ap, i)],
                         extra={"lane": int(ap.r_lane[i]), "column": int(ap.column(ap.r_cell[i]))})
    return _res("slot_agreement", "A", t0, cex, i + 1, via="tcgen05.mma")


# ---------------------------------------------------------------------------
# The entry: a configuration's TMEM results
# ---------------------------------------------------------------------------

def operand_a_plan(cfg, mma):
    """A of a TS atom over the CTA's ``(M, K)`` (K: ``[smem.B]``'s, else one MMA's), placed at the first
    column of ``[tmem] a_region`` (else column 0); None for an SS atom."""
    if mma.atom.frg_type_a.startswith("UMMA::smem_desc"):
        return None
    sb = cfg.smem.get("B")
    k = cta_tile(sb)[1] if sb is not None else int(mma.tile_size(2))
    tm = cfg.tmem
    first = tm.regions[tm.a_region][0] if tm is not None and tm.a_region is not None else 0
    return a_operand_plan(mma, k, first)


def prove_tmem(cfg, mma, props, refuted=frozenset()) -> list:
    """The TMEM results of a configuration with an SM100 ``[mma]``: ``slot_agreement`` [C] via
    ``tcgen05.mma`` always; ``tmem_alloc`` with ``[tmem]``; the copy's properties with ``[tmem_copy.C]``."""
    tm = cfg.tmem
    stages = tm.accumulator_stages if tm is not None else 1
    first = tm.accumulator_column if tm is not None else 0
    try:
        plan = accumulator_plan(mma, stages, first)
    except CuteStaticAssert as e:                 # (tmem_frg: more TMEM than a CTA has)
        t0 = time.perf_counter()
        cex = Counterexample(f"CuTe does not compile partition_fragment_C over {stages} accumulator stage(s): "
                             f"static_assert \"{e.assertion}\" ({e})", extra={"cute_static_assert": e.assertion})
        return [Result("tmem_alloc", REFUTED, operand="tmem", checked=1, method="cute", counterexample=cex,
                       detail="CuTe rejects the configuration at compile time; the other TMEM properties are not "
                              "checked", expected=REFUTED if "tmem_alloc" in refuted else "proved",
                       seconds=time.perf_counter() - t0)]
    out = []
    if "slot_agreement" in props:
        out.append(mma_agreement(plan))
    aplan = operand_a_plan(cfg, mma)
    if tm is not None and "tmem_alloc" in props:
        out.append(tmem_alloc(tm, plan, sf_blocks(cfg, plan), aplan if tm.a_region is not None else None))
    if aplan is not None:
        if "slot_agreement" in props:
            out.append(a_agreement(aplan))
        out.extend(r for r in a_coverage(aplan) if r.property in props)
    cc = cfg.tmem_copies.get("C")
    if cc is not None:
        t0 = time.perf_counter()
        cr = copy_routes(plan, cc.atom, cc.tile)
        if cr.error is not None:
            out.append(_rejected(cr, t0))
        else:
            if "slot_agreement" in props:
                out.append(ld_agreement(plan, cr))
            cov = [r for r in copy_coverage(plan, cr) if r.property in props]
            out.extend(cov)
            if "tmem_access" in props:
                out.append(tmem_access(cr, cc.warps))
    for r in out:
        r.expected = REFUTED if r.property in refuted else r.expected     # ([expect] per operand: the engine)
    return out
