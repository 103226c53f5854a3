"""Tensor Memory properties of a Blackwell configuration (contract Version 3), decided by enumerating
every cell, element and register (:mod:`.tmem_model`):

* ``tmem_alloc`` [tmem]: ``tcgen05.alloc`` of ``columns`` is legal (a power of two in [32, 512], within
  the architecture's capacity); every accumulator cell of every stage, and every region, lies inside
  the allocation; a stage named in ``accumulator_regions`` lies inside its region; no two owners (a
  stage, a region) share a cell unless ``accumulator_regions`` / ``aliases`` say so.  Refuted with the
  cell (lane, column) and its two owners.
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

Every refutation is re-derived on its own (one element's route computed again from the PTX maps and
CuTe's layouts) before it is reported; 0 obligations is ``vacuous``.
"""
from __future__ import annotations

import time

from ...arch.tcgen05 import LANES, alloc_problems, datapath_cell, ld_cell, warp_lanes
from ...errors import CuteStaticAssert
from ..verdict.result import ERROR, REFUTED, Counterexample, Result, verdict
from .tmem_model import _coords, accumulator_plan, copy_routes, mma_writes

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


def _cells_of(owner):
    """The cells of an owner: a dict (accumulator) or a column span (a region, every lane)."""
    cells = owner[1]
    if isinstance(cells, dict):
        return cells
    return None


def _shared_cell(a, b):
    """The first cell two owners share, or None."""
    ca, cb = _cells_of(a), _cells_of(b)
    if ca is not None and cb is not None:
        common = sorted(set(ca) & set(cb), key=lambda c: (c[1], c[0]))
        return common[0] if common else None
    if ca is None and cb is None:
        lo, hi = max(a[1][0], b[1][0]), min(a[1][1], b[1][1])
        return (0, lo) if lo < hi else None
    cells, (lo, hi) = (ca, b[1]) if ca is not None else (cb, a[1])
    hit = sorted((c for c in cells if lo <= c[1] < hi), key=lambda c: (c[1], c[0]))
    return hit[0] if hit else None


def _describe(owner, cell) -> str:
    name, cells = owner
    if isinstance(cells, dict):
        m, n = cells[cell]
        return f"{name} (element (m={m}, n={n}))"
    return f"{name} (columns {cells[0]}..{cells[1] - 1}, every lane)"


def _may_share(tm, a: str, b: str) -> bool:
    """Whether the configuration says owners ``a`` and ``b`` share cells on purpose."""
    acc = {f"accumulator stage {s}": f"region {r}" for s, r in enumerate(tm.accumulator_regions)}
    alias = {f"region {x}": f"region {y}" for x, y in tm.aliases.items()}
    for x, y in ((a, b), (b, a)):
        if acc.get(x) == y or alias.get(x) == y:
            return True
        if x in alias and acc.get(y) == alias[x]:     # P over S, where S holds an accumulator stage
            return True
    return False


def tmem_alloc(tm, plan=None) -> Result:
    """``tmem_alloc`` of a :class:`~symlayout.config.tmem.TmemConfig` and the accumulator's plan."""
    t0 = time.perf_counter()
    checked = 1
    bad = alloc_problems(tm.columns, tm.arch)
    if bad:
        cex = Counterexample(f"tcgen05.alloc({tm.columns}) on {tm.arch}: {'; '.join(bad)} (PTX ISA tcgen05.alloc: "
                             f"nCols is a power of two in [32, 512])", extra={"columns": tm.columns})
        return _res("tmem_alloc", "tmem", t0, cex, checked)
    owners = _owners(plan, tm)
    for owner in owners:
        cells = _cells_of(owner)
        spans = sorted(cells, key=lambda c: (c[1], c[0])) if cells is not None else None
        checked += len(cells) if cells is not None else LANES * (owner[1][1] - owner[1][0])
        out = [c for c in spans if not 0 <= c[1] < tm.columns] if spans is not None else \
            ([(0, owner[1][1] - 1)] if owner[1][1] > tm.columns else [])
        if out:
            cell = out[0]
            if cells is not None and cell not in cells:
                return _unconfirmed("tmem_alloc", "tmem", t0)
            cex = Counterexample(f"{_describe(owner, cell)} is at TMEM lane {cell[0]}, column {cell[1]}, outside the "
                                 f"{tm.columns} columns tcgen05.alloc gives", element=cell,
                                 extra={"lane": cell[0], "column": cell[1], "owner": owner[0]})
            return _res("tmem_alloc", "tmem", t0, cex, checked)
    for s, rname in enumerate(tm.accumulator_regions):
        first, n = tm.regions[rname]
        cells = plan.stage_cells(s)
        checked += len(cells)
        out = sorted((c for c in cells if not first <= c[1] < first + n), key=lambda c: (c[1], c[0]))
        if out:
            cell = out[0]
            m, nn = cells[cell]
            cex = Counterexample(f"accumulator stage {s} element (m={m}, n={nn}) is at TMEM lane {cell[0]}, column "
                                 f"{cell[1]}, outside its region {rname} (columns {first}..{first + n - 1})",
                                 element=cell, extra={"lane": cell[0], "column": cell[1]})
            return _res("tmem_alloc", "tmem", t0, cex, checked)
    for i, a in enumerate(owners):
        for b in owners[i + 1:]:
            checked += 1
            if _may_share(tm, a[0], b[0]):
                continue
            cell = _shared_cell(a, b)
            if cell is None:
                continue
            if not all(_holds(o, cell) for o in (a, b)):            # re-validated: both really own it
                return _unconfirmed("tmem_alloc", "tmem", t0)
            cex = Counterexample(f"TMEM lane {cell[0]}, column {cell[1]} belongs to {_describe(a, cell)} and to "
                                 f"{_describe(b, cell)}; two live owners share it (say [tmem] aliases or "
                                 "accumulator_regions where one overlays the other on purpose)", element=cell,
                                 extra={"lane": cell[0], "column": cell[1], "owners": [a[0], b[0]]})
            return _res("tmem_alloc", "tmem", t0, cex, checked)
    return _res("tmem_alloc", "tmem", t0, None, checked)


def _holds(owner, cell) -> bool:
    cells = owner[1]
    return cell in cells if isinstance(cells, dict) else cells[0] <= cell[1] < cells[1]


# ---------------------------------------------------------------------------
# slot_agreement [C] via tcgen05.mma
# ---------------------------------------------------------------------------

def mma_agreement(plan) -> Result:
    """Every accumulator element of every stage and MMA tile: the cell ``tcgen05.mma`` writes (PTX data
    path layout, from the tile's address) is the cell CuTe's ``tmem_frg`` keeps it in."""
    t0 = time.perf_counter()
    writes = mma_writes(plan)
    letter = plan.datapath()
    checked = 0
    for p in range(plan.peers):
        for i, (w, c) in enumerate(zip(writes, plan.cells[p])):
            checked += 1
            if w == c:
                continue
            coord = _coords(plan.shape)[i]
            m, n, s = plan.elements[p][i]
            (mm, nn), rest = coord[0], coord[1:]
            base = plan.cells[p][_coords(plan.shape).index(((0, 0),) + rest)]
            again = tuple(x + y for x, y in zip(base, datapath_cell(letter, plan.mma_mn[1], mm, nn)))
            if again == c:
                return _unconfirmed("slot_agreement", "C", t0, "tcgen05.mma")
            cex = Counterexample(
                f"C(m={m}, n={n}) of stage {s}{f' (CTA {p} of the pair)' if plan.peers > 1 else ''}: tcgen05.mma "
                f"(data-path layout {letter}) writes it to TMEM lane {again[0]}, column {again[1]}; CuTe's tmem_frg "
                f"keeps it at lane {c[0]}, column {c[1]}", element=(m, n),
                route=[f"C(m={m}, n={n}) -> MMA tile {rest[:-1]} row {mm}, column {nn} -> tcgen05.mma layout "
                       f"{letter}: lane {again[0]}, column {again[1]}", f"make_fragment_C: lane {c[0]}, column {c[1]}"],
                extra={"mma_cell": list(again), "cute_cell": list(c)})
            return _res("slot_agreement", "C", t0, cex, checked, via="tcgen05.mma")
    return _res("slot_agreement", "C", t0, None, checked, via="tcgen05.mma",
                detail=f"data-path layout {letter}, {plan.peers} CTA(s), {plan.stages} stage(s)")


# ---------------------------------------------------------------------------
# [tmem_copy.C]: slot_agreement via tcgen05.ld, coverage, exactly_once, tmem_access
# ---------------------------------------------------------------------------

def _instr(op) -> str:
    return op.ptx


def _route_text(r, op, warp=None) -> str:
    w = f" (warp {warp})" if warp is not None else ""
    return (f"C(m={r.element[0]}, n={r.element[1]}) of stage {r.stage} -> thread {r.thread}{w}, register {r.register} "
            f"of call {r.call} -> {_instr(op)} moves TMEM lane {r.cell[0]}, column {r.cell[1]}"
            + (f", bit {r.cell[2]}" if r.cell[2] else ""))


def _recell(cr, plan, r):
    """The cell of one route computed again from the PTX map (re-validation)."""
    op = cr.op
    pos = r.value * plan.value_bits
    reg = pos // 32
    lane, col = ld_cell(op.shape, op.num, r.thread % 32, reg, (pos % 32) // 16 if op.pack16 else 0, op.pack16)
    return reg, lane, col


def _rejected(cr, t0, prop="slot_agreement") -> Result:
    cex = Counterexample(f"CuTe does not compile make_tmem_copy({cr.op.name}) over this accumulator: static_assert "
                         f"\"{cr.assertion}\" ({cr.error})", extra={"cute_static_assert": cr.assertion})
    return Result(prop, REFUTED, operand="tmem_copy.C", checked=1, method="cute", counterexample=cex, via="tcgen05.ld",
                  detail="CuTe rejects the configuration at compile time; the other properties of [tmem_copy.C] "
                         "are not checked", seconds=time.perf_counter() - t0)


def ld_agreement(plan, cr) -> Result:
    """Each value of each register of each thread holds the element CuTe's partition says."""
    t0 = time.perf_counter()
    cells = [plan.stage_cells(s) for s in range(plan.stages)]
    checked = 0
    for r in cr.routes:
        checked += 1
        held = cells[r.stage].get(r.cell[:2]) if r.cell[2] == 0 else None
        if held == r.element:
            continue
        reg, _lane, _col = _recell(cr, plan, r)
        if reg != r.register:
            return _unconfirmed("slot_agreement", "tmem_copy.C", t0, "tcgen05.ld")
        where = f"the element C(m={held[0]}, n={held[1]})" if held else "no accumulator element"
        cex = Counterexample(
            f"thread {r.thread}, register {r.register} (value {r.value} of call {r.call}, stage {r.stage}): CuTe's "
            f"partition says it holds C(m={r.element[0]}, n={r.element[1]}), but {cr.op.ptx} moves TMEM lane "
            f"{r.cell[0]}, column {r.cell[1]}{f' bit {r.cell[2]}' if r.cell[2] else ''}, which holds {where}",
            thread=r.thread, slot=r.register, element=r.element, route=[_route_text(r, cr.op)],
            extra={"lane": r.cell[0], "column": r.cell[1]})
        return _res("slot_agreement", "tmem_copy.C", t0, cex, checked, via="tcgen05.ld")
    return _res("slot_agreement", "tmem_copy.C", t0, None, checked, via="tcgen05.ld")


def copy_coverage(plan, cr) -> list:
    """``coverage`` and ``exactly_once`` of the copy over every stage's elements (the cells it moves)."""
    t0 = time.perf_counter()
    cells = [plan.stage_cells(s) for s in range(plan.stages)]
    seen: dict = {}
    dup = None
    for r in cr.routes:
        held = cells[r.stage].get(r.cell[:2]) if r.cell[2] == 0 else None
        if held is None:
            continue
        key = (r.stage,) + held
        if key in seen and dup is None:
            dup = (seen[key], r)
        seen.setdefault(key, r)
    want = [(s,) + e for s in range(plan.stages) for e in cells[s].values()]
    missing = next((k for k in want if k not in seen), None)
    cov_cex = once_cex = None
    if missing is not None:
        s, m, n = missing
        cell = next(c for c, e in cells[s].items() if e == (m, n))
        cov_cex = Counterexample(f"C(m={m}, n={n}) of stage {s} (TMEM lane {cell[0]}, column {cell[1]}) is moved by "
                                 f"no thread's register of {cr.op.name}", element=(m, n),
                                 extra={"lane": cell[0], "column": cell[1]})
    if dup is not None:
        a, b = dup
        once_cex = Counterexample(f"C(m={a.element[0]}, n={a.element[1]}) of stage {a.stage} (TMEM lane {a.cell[0]}, "
                                  f"column {a.cell[1]}) is moved twice: thread {a.thread} register {a.register} and "
                                  f"thread {b.thread} register {b.register}", element=a.element,
                                  route=[_route_text(a, cr.op), _route_text(b, cr.op)])
    return [_res("coverage", "tmem_copy.C", t0, cov_cex, len(want)),
            _res("exactly_once", "tmem_copy.C", t0, once_cex, len(cr.routes))]


def tmem_access(cr, warps) -> Result:
    """Every lane each thread's instruction touches is in its warp's 32-lane subpartition."""
    t0 = time.perf_counter()
    checked = 0
    for r in cr.routes:
        checked += 1
        w = warps[r.thread // 32]
        ok = warp_lanes(w)
        if r.cell[0] in ok:
            continue
        if r.cell[0] in warp_lanes(w):                # (re-validated)
            return _unconfirmed("tmem_access", "tmem_copy.C", t0)
        cex = Counterexample(
            f"warp {w} (threads {32 * (r.thread // 32)}..{32 * (r.thread // 32) + 31} of the copy) reaches TMEM lanes "
            f"{ok.start}..{ok.stop - 1} only, but thread {r.thread}'s register {r.register} is TMEM lane {r.cell[0]}, "
            f"column {r.cell[1]} (PTX ISA, Tensor Memory access restrictions: warp w of a warpgroup reaches lanes "
            f"32*(w%4)..+31)", thread=r.thread, slot=r.register, element=r.element,
            route=[_route_text(r, cr.op, w)], extra={"warp": w, "lane": r.cell[0], "column": r.cell[1]})
        return _res("tmem_access", "tmem_copy.C", t0, cex, checked)
    return _res("tmem_access", "tmem_copy.C", t0, None, checked)


# ---------------------------------------------------------------------------
# The entry: a configuration's TMEM results
# ---------------------------------------------------------------------------

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
    if tm is not None and "tmem_alloc" in props:
        out.append(tmem_alloc(tm, plan))
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
