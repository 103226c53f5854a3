"""Tensor Memory as a picture: the CTA's 128 lanes x its allocated columns, each cell coloured by its
owner (an accumulator stage, a ``[tmem]`` region, an ``[sf.X]`` factor block, both where they overlap), and the lanes banded by
the hardware warp of ``[tmem_copy.C]`` that reads them (``symlayout show --view tmem``; plain text and
SVG, the SVG also in the HTML report)."""
from __future__ import annotations

from html import escape

from ...arch.tcgen05 import LANES, warp_lanes
from ...tiled.mma import make_tiled_mma
from ..blackwell.tmem import _may_share, _owners, sf_blocks
from ..blackwell.tmem_model import accumulator_plan, copy_routes

#: lanes and columns per character of the text grid
LANES_PER_ROW, COLUMNS_PER_CHAR = 8, 8
_PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
            "#bab0ac")


def tmem_map(cfg) -> dict:
    """``{"columns", "owners": [(name, cells set)], "warps": {lane: warp}, "allowed": {(a, b)}}`` of a
    configuration: the accumulator's cells (peer 0) per stage and each region's cells (in the order they
    are drawn: aliasing regions over the accumulator over the other regions), which warp reads each lane,
    and the pairs of owners the configuration lets share cells."""
    tm = cfg.tmem
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
    stages = tm.accumulator_stages if tm is not None else 1
    plan = accumulator_plan(mma, stages, tm.accumulator_column if tm is not None else 0)
    columns = tm.columns if tm is not None else max(c for _, c in plan.cells[0]) + 1
    owners = []
    listed = _owners(plan, tm) if tm is not None else [(f"accumulator stage {s}", plan.stage_cells(s))
                                                       for s in range(stages)]
    for name, cells in listed + sf_blocks(cfg, plan):      # issue 29: the scale factors' column blocks
        if isinstance(cells, dict):
            owners.append((name, set(cells)))
        else:
            owners.append((name, {(lane, c) for lane in range(LANES) for c in range(*cells)}))
    aliasing = {f"region {a}" for a in (tm.aliases if tm is not None else {})}
    owners.sort(key=lambda o: 0 if o[0] in aliasing else 1 if o[0].startswith("accumulator") else 2)
    allowed = {(a, b) for a, _ in owners for b, _ in owners if tm is not None and _may_share(tm, a, b)}
    warps = {}
    cc = cfg.tmem_copies.get("C")
    if cc is not None:
        cr = copy_routes(plan, cc.atom, cc.tile)
        if cr.error is None:
            for lane, thread in zip(cr.arrays["lane"].tolist(), cr.arrays["thread"].tolist()):
                warps.setdefault(lane, cc.warps[thread // 32])
    return {"columns": columns, "owners": owners, "warps": warps, "allowed": allowed}


def _symbol(names: list, i: int) -> str:
    name = names[i]
    if name.startswith("accumulator stage "):
        return name.rsplit(" ", 1)[1][-1]
    k = sum(1 for n in names[:i] if not n.startswith("accumulator stage "))
    return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[k % 26]


def tmem_text(cfg) -> str:
    """The grid as text: one row per 8 lanes, one character per 8 columns: the owner's symbol, ``#``
    where two owners meet, ``.`` allocated and unused; the right margin names the warp reading the lanes."""
    m = tmem_map(cfg)
    names = [n for n, _ in m["owners"]]
    cols = m["columns"]
    hi = max([cols] + [c + 1 for _, cells in m["owners"] for _, c in cells])
    lines = [f"Tensor Memory of {cfg.name or cfg.path}: {LANES} lanes x {cols} allocated columns "
             f"({LANES_PER_ROW} lanes per row, {COLUMNS_PER_CHAR} columns per character; '|' marks the "
             "allocation's end)"]
    for i, n in enumerate(names):
        lines.append(f"  {_symbol(names, i)} = {n}")
    lines.append("  # = two owners share a cell the configuration does not let them share, . = allocated and unused "
                 "(where the configuration lets owners share, the first listed is shown)")
    head = "".join(str((c // 64) % 10) if c % 64 == 0 else " " for c in range(0, hi, COLUMNS_PER_CHAR))
    lines.append("lanes    " + head + "  (column / 64)")
    for lane0 in range(0, LANES, LANES_PER_ROW):
        row = []
        for c0 in range(0, hi, COLUMNS_PER_CHAR):
            block = {(lane, c) for lane in range(lane0, lane0 + LANES_PER_ROW)
                     for c in range(c0, c0 + COLUMNS_PER_CHAR)}
            hit = [i for i, (_, cells) in enumerate(m["owners"]) if block & cells]
            row.append("#" if _overlap(m, hit, block) else _symbol(names, hit[0]) if hit else
                       ("." if c0 < cols else " "))
            if c0 + COLUMNS_PER_CHAR == cols:
                row.append("|")
        w = sorted({m["warps"][lane] for lane in range(lane0, lane0 + LANES_PER_ROW) if lane in m["warps"]})
        lines.append(f"{lane0:3d}-{lane0 + LANES_PER_ROW - 1:3d} " + "".join(row) +
                     (f"  warp {', '.join(map(str, w))}" + _warp_note(w, lane0) if w else ""))
    return "\n".join(lines)


def _overlap(m, hit, block) -> bool:
    """Two of the owners ``hit`` share a cell of ``block`` without the configuration saying so."""
    owners = m["owners"]
    for x, i in enumerate(hit):
        for j in hit[x + 1:]:
            if (owners[i][0], owners[j][0]) not in m["allowed"] and owners[i][1] & owners[j][1] & block:
                return True
    return False


def _warp_note(warps, lane0) -> str:
    bad = [w for w in warps if lane0 not in warp_lanes(w)]
    if not bad:
        return ""
    return f"  (warp {bad[0]} reaches lanes {warp_lanes(bad[0]).start}..{warp_lanes(bad[0]).stop - 1} only)"


def _runs(cells) -> list:
    """``(first lane, lanes, first column, columns)`` rectangles covering ``cells``: runs of columns per
    lane, merged over consecutive lanes with the same runs."""
    by_lane: dict = {}
    for lane, c in sorted(cells):
        runs = by_lane.setdefault(lane, [])
        if runs and runs[-1][1] == c:
            runs[-1][1] = c + 1
        else:
            runs.append([c, c + 1])
    out, prev = [], None
    for lane in sorted(by_lane):
        key = tuple(map(tuple, by_lane[lane]))
        if prev is not None and prev[0] == key and prev[1] + prev[2] == lane:
            prev[2] += 1
        else:
            prev = [key, lane, 1]
            out.append(prev)
    return [(lane, n, a, b - a) for key, lane, n in out for a, b in key]


def _rects(cells, color, name, left, top, cell) -> list:
    return [f'<rect x="{left + c * cell}" y="{top + lane * cell}" width="{w * cell}" height="{n * cell}" '
            f'fill="{color}"><title>{escape(name)}: lanes {lane}..{lane + n - 1}, columns {c}..{c + w - 1}</title>'
            '</rect>' for lane, n, c, w in _runs(cells)]


def tmem_svg(cfg, cell: int = 2) -> str:
    """The grid as SVG: a ``cell``-pixel square per (lane, column), owners coloured (overlaps red), the
    warp reading each lane as a band on the left (red where the access rule forbids it)."""
    m = tmem_map(cfg)
    cols = m["columns"]
    hi = max([cols] + [c + 1 for _, cells in m["owners"] for _, c in cells])
    left, top = 60, 30
    w, h = left + hi * cell + 10, top + LANES * cell + 20 + 16 * len(m["owners"])
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="monospace" '
           'font-size="10">',
           f'<text x="{left}" y="12">Tensor Memory: {LANES} lanes x {cols} columns '
           f'({escape(cfg.name or str(cfg.path))})</text>',
           f'<rect x="{left}" y="{top}" width="{cols * cell}" height="{LANES * cell}" fill="#f4f4f4" stroke="#888"/>']
    shared: set = set()
    for x, (a, ca) in enumerate(m["owners"]):
        for b, cb in m["owners"][x + 1:]:
            if (a, b) not in m["allowed"]:
                shared |= ca & cb
    drawn: set = set()
    for i, (name, cells) in enumerate(m["owners"]):
        color = _PALETTE[i % len(_PALETTE)]
        out += _rects(cells - shared - drawn, color, name, left, top, cell)
        drawn |= cells
        y = top + LANES * cell + 16 + 16 * i
        out.append(f'<rect x="{left}" y="{y - 9}" width="10" height="10" fill="{color}"/>'
                   f'<text x="{left + 14}" y="{y}">{escape(name)}</text>')
    out += _rects(shared, "#d62728", "two owners", left, top, cell)
    for lane, warp in sorted(m["warps"].items()):
        ok = lane in warp_lanes(warp)
        fill = _PALETTE[warp % 10] if ok else "#d62728"
        out.append(f'<rect x="4" y="{top + lane * cell}" width="40" height="{cell}" fill="{fill}">'
                   f'<title>lane {lane}: warp {warp}{"" if ok else " (not its subpartition)"}</title></rect>')
    for lane in range(0, LANES, 32):
        out.append(f'<text x="46" y="{top + lane * cell + 8}" font-size="8">{lane}</text>')
    out.append("</svg>")
    return "\n".join(out)
