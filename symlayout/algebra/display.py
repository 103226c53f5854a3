"""Rich display of layouts: the grid of offsets of CuTe's ``print_layout``, as text cells or an SVG picture.

A concrete layout of rank 2 is a grid with rows for mode 0 and columns for mode 1 (``print_layout``); rank 1
is one row (rows of 8 beyond 16 offsets); rank > 2 has columns over modes 1.. colexicographically.  The
calculator prints the grid as text (``symlayout layout``); Jupyter shows a layout's picture through
``Layout._repr_svg_`` (its CuTe spelling above the grid).  A symbolic layout, or one of more than
:data:`MAX_CELLS` offsets, has no picture: Jupyter then shows its text.

>>> from symlayout.algebra.layout import Layout
>>> g = grid(Layout((2, 3), (3, 1)))
>>> g.rows, g.cols, [[g.cell(r, c) for c in range(g.cols)] for r in range(g.rows)]
(2, 3, [[0, 1, 2], [3, 4, 5]])
>>> svg = layout_svg(Layout((2, 3), (3, 1)))
>>> svg.startswith("<svg") and svg._repr_svg_() == svg
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import int_tuple as it

#: the most offsets a layout's picture draws (a 64 x 64 tile)
MAX_CELLS = 4096


class Svg(str):
    """An SVG picture: a ``str`` (written to a file, searched, compared as before) that Jupyter draws inline."""
    __slots__ = ()

    def _repr_svg_(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Grid:
    """``rows x cols`` cells; ``cell(r, c)`` is an offset, or None past the end of a wrapped rank-1 layout."""
    rows: int
    cols: int
    cell: Callable[[int, int], int | None]
    row_labels: list[str]
    col_labels: list[str]
    note: str                   # how cells map to coordinates where rows and columns do not say it


def is_concrete(lay) -> bool:
    """Every leaf of the shape and stride (and a ComposedLayout's offset) is an int."""
    if getattr(lay, "is_composed", False):
        return isinstance(lay.offset, int) and is_concrete(lay.inner)
    if getattr(lay, "is_swizzle", False) or not hasattr(lay, "stride"):
        return False
    return all(isinstance(e, int) for e in it.flatten_leaves(lay.shape) + it.flatten_leaves(lay.stride))


def grid(lay, max_cells: int = MAX_CELLS) -> Grid | None:
    """The grid of a concrete layout of 1..``max_cells`` offsets (None otherwise)."""
    if not is_concrete(lay):
        return None
    n = lay.size()
    if n > max_cells or n <= 0:
        return None
    rank = lay.rank() if isinstance(lay.shape, tuple) else 1
    if rank >= 2:
        rows = int(it.product(lay.shape[0]))
        note = "" if rank == 2 else f"(rows: mode 0; columns: modes 1..{rank - 1}, colexicographic)"
        return Grid(rows, n // rows, lambda r, c: lay(r + rows * c),    # colex: mode 0 fastest
                    [str(r) for r in range(rows)], [str(c) for c in range(n // rows)], note)
    cols = n if n <= 16 else 8
    rows = -(-n // cols)
    if rows == 1:
        return Grid(1, cols, lambda r, c: lay(c), ["0"], [str(c) for c in range(cols)], "")
    return Grid(rows, cols, lambda r, c: lay(r * cols + c) if r * cols + c < n else None,
                [str(r * cols) for r in range(rows)], [f"+{c}" for c in range(cols)], "(index = row + column)")


def _cell_size(cols: int) -> tuple[int, int, int]:
    """Width, height and font size of a cell: smaller for wide grids."""
    if cols <= 16:
        return 36, 22, 10
    if cols <= 32:
        return 30, 20, 9
    return 24, 18, 8


def _fill(offset: int) -> str:
    """A light colour per offset modulo 8 (neighbouring offsets differ; equal ones, repeats, match)."""
    return ("#ffffff", "#e8eef8", "#fdf0d8", "#e4f4e4", "#f6e2e2", "#ece4f6", "#e2f2f4", "#f4f4dc")[offset % 8]


def layout_svg(lay, max_cells: int = MAX_CELLS) -> Svg | None:
    """The layout's picture: its CuTe spelling, then the grid of offsets (cell ``(r, c)`` is class
    ``offset``, its text the offset, its tooltip ``(r,c) -> offset``); None where :func:`grid` is None."""
    g = grid(lay, max_cells)
    if g is None:
        return None
    cw, ch, fs = _cell_size(g.cols)
    lw = 7 * max(len(s) for s in g.row_labels) + 8
    x0, y0 = lw, 40 + (14 if g.note else 0)
    W = max(x0 + g.cols * cw + 8, 12 + (15 * len(str(lay)) + 1) // 2, 12 + 6 * len(g.note))   # 12px: 7.5/char
    H = y0 + g.rows * ch + 8
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
             f'font-family="monospace" font-size="{fs}">',
             f"<title>{_xml(str(lay))}</title>", f'<rect width="{W}" height="{H}" fill="white"/>',
             f'<text class="layout" x="4" y="14" font-size="12">{_xml(str(lay))}</text>']
    if g.note:
        parts.append(f'<text class="note" x="4" y="30" font-size="9">{_xml(g.note)}</text>')
    parts += [f'<text class="axis" x="{x0 + c * cw + cw / 2:g}" y="{y0 - 4}" text-anchor="middle">{s}</text>'
              for c, s in enumerate(g.col_labels)]
    parts += [f'<text class="axis" x="{x0 - 4}" y="{y0 + r * ch + ch / 2 + 3:g}" text-anchor="end">{s}</text>'
              for r, s in enumerate(g.row_labels)]
    for r in range(g.rows):
        for c in range(g.cols):
            v = g.cell(r, c)
            if v is not None:
                parts.append(_cell(x0 + c * cw, y0 + r * ch, cw, ch, v, f"({g.row_labels[r]},{g.col_labels[c]})"))
    return Svg("\n".join(parts + ["</svg>"]))


def _xml(s: str) -> str:
    """``s`` as SVG text (``html.escape`` without its import: the algebra loads light)."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cell(x, y, w, h, v: int, where: str) -> str:
    return (f'<g class="offset"><rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{_fill(v)}" stroke="#888" '
            f'stroke-width="0.5"><title>{_xml(where)} -&gt; {v}</title></rect>'
            f'<text x="{x + w / 2:g}" y="{y + h / 2 + 3:g}" text-anchor="middle">{v}</text></g>')
