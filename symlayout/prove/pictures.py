"""Text tables (CuTe ``print_layout`` style) and SVG pictures of TV layouts.

>>> from symlayout.tiled.mma import make_tiled_mma
>>> mma = make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN")
>>> print(tv_table(mma, "C").splitlines()[2][:40])
     0  T0V0  T0V1  T1V0  T1V1  T2V0  T2V1
"""
from __future__ import annotations

import colorsys
from html import escape


def _owners(mma, op):
    tv = mma.get_layout_TV(op)
    rows, cols = mma.operand_tile(op)
    own = {}
    for t in range(tv[0].size()):
        for v in range(tv[1].size()):
            e = tv(t, v)
            if e not in own:
                own[e] = (t, v)
    return rows, cols, own


def tv_table(mma, op: str, model=None) -> str:
    """The operand tile with the first owning ``T<thread>V<value>`` in each cell,
    plus (with a model) the smem layout's element offsets."""
    rows, cols, own = _owners(mma, op)
    names = {"A": ("M", "K"), "B": ("N", "K"), "C": ("M", "N")}[op]
    out = [f"{op} tile {rows}x{cols} ({names[0]} x {names[1]}), layout{op}_TV = {mma.get_layout_TV(op)}"]
    w = max(len(f"T{t}V{v}") for t, v in own.values()) + 1
    out.append("    " + "".join(f"{c:>{w}}" for c in range(cols)))
    for r in range(rows):
        cells = []
        for c in range(cols):
            t, v = own.get(r + rows * c, (None, None))
            cells.append(f"{'T%dV%d' % (t, v) if t is not None else '-':>{w}}")
        out.append(f"{r:4d}" + "".join(cells))
    if model is not None:
        sm = model.smem
        out.append("")
        out.append(f"smem {sm} ({model.value_type}); copy {model.atom.name}: element offsets")
        shp = model.shape2
        R = shp[0]
        C = 1
        for s in shp[1:]:
            C *= s
        if R * C <= 64 * 128:
            wd = len(str(max(model.addr_table))) + 1
            out.append("    " + "".join(f"{c:>{wd}}" for c in range(C)))
            for r in range(R):
                out.append(f"{r:4d}" + "".join(f"{model.addr_table[r + R * c]:>{wd}}" for c in range(C)))
    return "\n".join(out)


def _color(t, n):
    h = (t * 0.61803398875) % 1.0
    r, g, b = colorsys.hls_to_rgb(h, 0.8, 0.55)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


def tv_svg(mma, op: str, model=None, highlight: dict | None = None, title: str = "") -> str:
    """An SVG of the operand tile: cells coloured by thread, labelled thread/value;
    cells named in ``highlight`` (``{(row, col): label}``) get a red frame."""
    rows, cols, own = _owners(mma, op)
    cw, ch, pad = 46, 26, 40
    W, H = pad + cols * cw + 10, pad + rows * ch + 40
    n = mma.size()
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="monospace" font-size="10">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="4" y="14" font-size="12">{escape(title)} - operand {op} ({rows}x{cols})</text>']
    for c in range(cols):
        s.append(f'<text x="{pad + c * cw + cw / 2}" y="{pad - 6}" text-anchor="middle">{c}</text>')
    for r in range(rows):
        s.append(f'<text x="{pad - 6}" y="{pad + r * ch + ch / 2 + 4}" text-anchor="end">{r}</text>')
        for c in range(cols):
            t, v = own.get(r + rows * c, (0, 0))
            x, y = pad + c * cw, pad + r * ch
            s.append(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{_color(t, n)}" stroke="#888" stroke-width="0.5"/>')
            s.append(f'<text x="{x + cw / 2}" y="{y + 11}" text-anchor="middle">T{t}</text>')
            s.append(f'<text x="{x + cw / 2}" y="{y + 22}" text-anchor="middle" fill="#444">V{v}</text>')
    for (r, c), label in (highlight or {}).items():
        if r < rows and c < cols:
            x, y = pad + c * cw, pad + r * ch
            s.append(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="none" stroke="red" stroke-width="3"/>')
            s.append(f'<text x="4" y="{H - 8}" fill="red">counterexample ({escape(str(label))}): {op}({r},{c})</text>')
    s.append("</svg>")
    return "\n".join(s)


def view_svg(view: str, cfg, mma, op: str, model=None, thread=None) -> str:
    """The picture ``symlayout show --svg --view VIEW`` draws."""
    from .engine import run_checks
    from .obligations import PROPERTIES as ALL
    hl = None
    if model is not None:
        for r in run_checks(model, ALL, method="auto"):
            if r.status == "refuted" and r.counterexample and r.counterexample.element is not None:
                hl = {tuple(r.counterexample.element): r.property}
                break
    return tv_svg(mma, op, model, highlight=hl, title=cfg.name or cfg.path)
