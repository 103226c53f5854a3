"""Pictures of a thread map: which thread touches which element of the tile, as text and SVG
(``symlayout show`` of a ``[threadmap]`` configuration).
"""
from __future__ import annotations

from ...threadmap.maps import ThreadMap
from ..threadmaps.obligations import WARP_SIZE, MapModel, format_ranges, map_elements

def _owners(m: MapModel):
    C, S = m.tile
    owner: dict = {}
    dup = set()
    outside = []
    for t, i, e, c, s in map_elements(m):
        if not m.inside(c, s):
            outside.append((t, i, c, s))
            continue
        k = (c, s)
        if k in owner and owner[k] != (t, i):
            dup.add(k)
        else:
            owner.setdefault(k, (t, i))
    return owner, dup, outside


def _colour(t: int, threads: int) -> str:
    h = (t * 137.508) % 360
    light = 78 if (t // max(1, WARP_SIZE)) % 2 == 0 else 64
    return f"hsl({h:.1f},70%,{light}%)"


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def show_map(tm: ThreadMap | MapModel, width: int | None = None, title: str | None = None) -> tuple:
    """``(text, svg)``: which thread (and iteration) accesses each tile element.

    Rows are strided coordinates ``s``, columns contiguous coordinates ``c``
    (one column per vector when every access starts on a vector boundary);
    a cell reads ``t`` (one iteration) or ``t.i``; ``!`` marks an element
    accessed more than once, ``.`` one never accessed.  A custom offset map's
    1-D tile is drawn in rows of ``width`` elements (default 16, or 32 for
    tiles over 512 elements).  Accesses outside the tile are listed below.

    >>> from symlayout.threadmap.maps import PitchLinearStripminedThreadMap
    >>> text, svg = show_map(PitchLinearStripminedThreadMap((8, 2), 4, 2))
    >>> print(text)
    PitchLinearStripminedThreadMap<(8,2),4,2>: thread.iteration over the 8x2 tile (c across, s down)
          0-1   2-3   4-5   6-7
        +-----+-----+-----+-----+
      0 | 0.0 | 1.0 | 2.0 | 3.0 |
        +-----+-----+-----+-----+
      1 | 0.1 | 1.1 | 2.1 | 3.1 |
        +-----+-----+-----+-----+
    >>> svg.startswith("<svg")
    True
    """
    m = tm if isinstance(tm, MapModel) else MapModel.of(tm)
    owner, dup, outside = _owners(m)
    C, S = m.tile
    multi = m.iterations > 1
    if m.is_offset:
        w = min(width or (16 if C <= 512 else 32), C)
        rows_n, cols_n, group = -(-C // w), w, 1
        def coord(r, k):  # noqa: E306
            off = r * w + k
            return (off, 0) if off < C else None
        col_label = [str(k) for k in range(w)]
        row_label = [str(r * w) for r in range(rows_n)]
        what = f"the {C}-element tile, {w} per row"
    else:
        vc = m.vec[0]
        aligned = vc > 1 and C % vc == 0 and all(c % vc == 0 for _, _, c, _ in m.starts())
        group = vc if aligned else 1
        rows_n, cols_n = S, C // group
        def coord(r, k):  # noqa: E306
            return (k * group, r)
        col_label = [f"{k * group}-{k * group + group - 1}" if group > 1 else str(k) for k in range(cols_n)]
        row_label = [str(r) for r in range(rows_n)]
        what = f"the {C}x{S} tile (c across, s down)"
    label = "thread.iteration" if multi else "thread"
    head = f"{title or m.name or m.tm}: {label} over {what}"

    def cell(r, k):
        xy = coord(r, k)
        if xy is None:
            return "", None
        keys = [(xy[0] + g, xy[1]) for g in range(group)]
        if any(kk in dup for kk in keys):
            o = owner.get(keys[0])
            return ("!" + (f"{o[0]}.{o[1]}" if multi else str(o[0])) if o else "!"), o
        o = owner.get(keys[0])
        if o is None:
            return ".", None
        return (f"{o[0]}.{o[1]}" if multi else str(o[0])), o

    cells = [[cell(r, k) for k in range(cols_n)] for r in range(rows_n)]
    cw = max([len(x) for x in col_label] + [len(c[0]) for row in cells for c in row] + [1]) + 2
    rw = max(len(x) for x in row_label) + 2
    sep = " " * (rw + 1) + "+" + "+".join("-" * cw for _ in range(cols_n)) + "+"
    lines = [head, " " * (rw + 2) + " ".join(x.center(cw) for x in col_label).rstrip(), sep]
    for r in range(rows_n):
        lines.append(row_label[r].rjust(rw) + " |" + "|".join(c[0].rjust(cw - 1) + " " for c in cells[r]) + "|")
        lines.append(sep)
    notes = []
    if dup:
        notes.append(f"! {len(dup)} elements accessed more than once")
    missing = C * S - len(owner)
    if missing:
        notes.append(f". {missing} elements never accessed")
    if outside:
        offs = [m.offset(c, s) for _, _, c, s in outside]
        ths = sorted({t for t, _, _, _ in outside})
        notes.append(f"{len(outside)} element accesses outside the tile (threads {format_ranges(ths)}): "
                     f"offsets {format_ranges(offs)}")
    lines += notes
    text = "\n".join(lines)

    # SVG
    cs, pad_l, pad_t = 34, 8 + 8 * rw, 40
    cwid = cs * max(1, min(group, 2))
    Wd, Ht = pad_l + cols_n * cwid + 10, pad_t + rows_n * cs + 20 + 16 * len(notes)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{Wd}" height="{Ht}" '
           f'viewBox="0 0 {Wd} {Ht}" font-family="monospace" font-size="10">',
           f'<text x="4" y="14" font-size="12">{_esc(head)}</text>']
    for k in range(cols_n):
        out.append(f'<text x="{pad_l + k * cwid + cwid / 2:.1f}" y="{pad_t - 6}" text-anchor="middle">'
                   f'{_esc(col_label[k])}</text>')
    for r in range(rows_n):
        y = pad_t + r * cs
        out.append(f'<text x="{pad_l - 4}" y="{y + cs / 2 + 3:.1f}" text-anchor="end">{_esc(row_label[r])}</text>')
        for k in range(cols_n):
            txt, o = cells[r][k]
            if txt == "":
                continue
            x = pad_l + k * cwid
            fill = "#ffffff" if o is None else _colour(o[0], m.threads)
            stroke = ' stroke="#d00000" stroke-width="2"' if txt.startswith("!") else ' stroke="#444"'
            tip = "never accessed" if o is None else f"thread {o[0]} iteration {o[1]}"
            out.append(f'<rect x="{x}" y="{y}" width="{cwid}" height="{cs}" fill="{fill}"{stroke}>'
                       f'<title>{_esc(tip)}</title></rect>')
            out.append(f'<text x="{x + cwid / 2:.1f}" y="{y + cs / 2 + 3:.1f}" text-anchor="middle">'
                       f'{_esc(txt)}</text>')
    for q, note in enumerate(notes):
        out.append(f'<text x="4" y="{pad_t + rows_n * cs + 16 + 16 * q}">{_esc(note)}</text>')
    out.append("</svg>")
    return text, "\n".join(out) + "\n"


def show_threadmap(cfg) -> tuple:
    """``(text, svg)`` of a configuration's ``[threadmap]`` (see :func:`show_map`).

    >>> from symlayout.config import loads_config
    >>> cfg = loads_config('[threadmap]\\nkind = "offset"\\nthreads = 4\\noffset = "t * 2"\\nextent = 8\\n')
    >>> print(show_threadmap(cfg)[0].splitlines()[3])
      0 | 0 | . | 1 | . | 2 | . | 3 | . |
    """
    m = MapModel.from_config(cfg)
    return show_map(m, title=cfg.name or str(m.tm))
