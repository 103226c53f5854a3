"""Text tables (CuTe ``print_layout`` style) and SVG pictures that explain a verdict.

Views (``symlayout show --svg FILE --view V``, :meth:`symlayout.Report.svg`):

* ``tv``: the smem tile coloured by the MMA thread whose fragment expects each
  element, labelled ``T<thread>`` / ``s<slot>``; an element the copy delivers
  elsewhere than the MMA expects is outlined red (its label says what arrived);
* ``copy``: the TiledCopy's source and destination TV layouts side by side (as
  CuTe's ``print_latex`` of a TiledCopy);
* ``banks``: one warp instruction's shared-memory phases: per phase, the 32 banks
  and the 4-byte words each serves, labelled with the lanes; a bank needing more
  wavefronts than the minimum, and its lanes, are red;
* ``swizzle``: the tile's banks without and with the swizzle.

``--thread T`` outlines thread T's cells (``tv``, ``copy``) or picks its warp
(``banks``).  Every picture is a standalone SVG whose panels are ``<g
class="panel" data-view=...>`` and whose cells carry their meaning in ``class``
(``cell``, ``mismatch``, ``conflict``, ``thread``), so tests parse it.

>>> from symlayout.tiled.mma import make_tiled_mma
>>> mma = make_tiled_mma("SM80_16x8x16_F16F16F16F16_TN")
>>> tv_table(mma, "C").splitlines()[2][:40]
'   0  T0V0  T0V1  T1V0  T1V1  T2V0  T2V1'
"""
from __future__ import annotations

import colorsys
from html import escape

from ...algebra.layout import function_table
from ...errors import ConfigError
from ..copy.obligations import PROPERTIES, bank_phases
from ..engine import run_checks


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



PALETTE_BANKS = 32


def _color(t, n=None):
    h = (t * 0.61803398875) % 1.0
    r, g, b = colorsys.hls_to_rgb(h, 0.8, 0.55)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


class _Svg:
    """A tiny SVG writer: rectangles and text, in panels (``<g class="panel">``)."""

    def __init__(self, title: str):
        self.parts = []
        self.title = title
        self.w = self.h = 0

    def rect(self, x, y, w, h, fill="none", stroke="#888", sw=0.5, cls="cell", tip=None, extra=""):
        t = f"<title>{escape(tip)}</title>" if tip else ""
        self.parts.append(f'<rect class="{cls}" x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" fill="{fill}" '
                          f'stroke="{stroke}" stroke-width="{sw:g}"{extra}>{t}</rect>')
        self.w, self.h = max(self.w, x + w), max(self.h, y + h)

    def text(self, x, y, s, anchor="middle", size=None, fill=None, cls=None):
        a = f' text-anchor="{anchor}"' + (f' font-size="{size}"' if size else "") + (f' fill="{fill}"' if fill else "")
        c = f' class="{cls}"' if cls else ""
        self.parts.append(f'<text{c} x="{x:g}" y="{y:g}"{a}>{escape(str(s))}</text>')
        self.w, self.h = max(self.w, x + 8 * len(str(s)) * (anchor == "start")), max(self.h, y + 4)

    def open(self, view, label=""):
        self.parts.append(f'<g class="panel" data-view="{view}" data-label="{escape(label)}">')

    def close(self):
        self.parts.append("</g>")

    def render(self) -> str:
        W, H = int(self.w + 12), int(self.h + 12)
        return "\n".join([f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
                           f'viewBox="0 0 {W} {H}" font-family="monospace" font-size="10">',
                           f"<title>{escape(self.title)}</title>",
                           f'<rect width="{W}" height="{H}" fill="white"/>'] + self.parts + ["</svg>"])


def _cell_size(rows, cols):
    """Cells shrink for big tiles (labels stay readable up to 64 columns)."""
    if cols <= 16:
        return 46, 26
    if cols <= 32:
        return 36, 24
    return 30, 22


def _grid_axes(svg, x0, y0, rows, cols, cw, ch, step=1):
    for c in range(0, cols, step):
        svg.text(x0 + c * cw + cw / 2, y0 - 4, c, size=9)
    for r in range(0, rows, step):
        svg.text(x0 - 4, y0 + r * ch + ch / 2 + 3, r, anchor="end", size=9)


def tv_svg(mma, op: str, model=None, highlight: dict | None = None, title: str = "", thread=None) -> str:
    """The ``tv`` view.  Without a model: the MMA's operand tile coloured by thread,
    labelled thread/value.  With a model: the smem tile, each element coloured by the
    MMA thread whose fragment expects it; elements delivered wrong outlined red.
    ``highlight`` (``{(row, col): label}``) frames a counterexample's element."""
    svg = _Svg(title or f"operand {op}")
    if model is None:
        rows, cols, own = _owners(mma, op)
        cells = {(r, c): (t, f"V{v}") for (r, c), (t, v) in
                 (((e % rows, e // rows), tv) for e, tv in own.items())}
        mism = {}
    else:
        rows, cols = _rows_cols(model)
        cells, mism = _expected_and_delivered(model)
    cw, ch = _cell_size(rows, cols)
    x0, y0 = 40, 40
    svg.text(4, 14, f"{title} - operand {op}: {'smem tile' if model is not None else 'MMA tile'} "
                    f"{rows}x{cols}, coloured by MMA thread", anchor="start", size=12)
    svg.open("tv", f"operand {op}")
    _grid_axes(svg, x0, y0, rows, cols, cw, ch)
    n = mma.size()
    for (r, c), (t, lab) in cells.items():
        x, y = x0 + c * cw, y0 + r * ch
        mine = thread is not None and t == thread
        cls = "cell" + (" thread" if mine else "")
        svg.rect(x, y, cw, ch, fill=_color(t, n) if thread is None or mine else "#eeeeee", cls=cls,
                 tip=f"{op}({r},{c}): thread {t} {lab}")
        svg.text(x + cw / 2, y + ch / 2 - 1, f"T{t}", size=9)
        svg.text(x + cw / 2, y + ch - 3, lab, size=8, fill="#444")
        if mine:
            svg.rect(x + 1, y + 1, cw - 2, ch - 2, stroke="black", sw=2, cls="thread-frame")
    for (r, c), got in mism.items():
        x, y = x0 + c * cw, y0 + r * ch
        svg.rect(x, y, cw, ch, stroke="red", sw=2.5, cls="mismatch", tip=f"{op}({r},{c}) expected; {got} arrived")
    for (r, c), label in (highlight or {}).items():
        if r < rows and c < cols:
            x, y = x0 + c * cw, y0 + r * ch
            svg.rect(x - 2, y - 2, cw + 4, ch + 4, stroke="red", sw=3, cls="counterexample")
            svg.text(4, y0 + rows * ch + 18, f"counterexample ({label}): {op}({r},{c})", anchor="start", fill="red",
                     cls="counterexample-label")
    if mism:
        svg.text(4, y0 + rows * ch + 32, f"{len(mism)} element(s) outlined red: the copy delivers another element "
                                         "than the MMA expects", anchor="start", fill="red")
    svg.close()
    return svg.render()


def _rows_cols(m):
    shp = m.shape2
    cols = 1
    for x in shp[1:]:
        cols *= x
    return shp[0], cols


def _rc(m, i):
    rows, _ = _rows_cols(m)
    return i % rows, i // rows


def _expected_and_delivered(m):
    """``cells``: (row, col) -> (MMA thread, "s<slot>") expecting that element;
    ``mismatch``: (row, col) of an expected element -> name of what the copy delivers there
    (the slot_agreement check, for every slot)."""
    cells, mism = {}, {}
    addr = m.addr_table
    for t in range(m.threads):
        for s, i in enumerate(m.expected[t]):
            cells.setdefault(_rc(m, i), (t, f"s{s}"))
    w_of = lambda t: t // 32  # noqa: E731
    for t in range(m.threads):
        w, l = divmod(t, 32)
        for c, call in enumerate(m.calls[t]):
            for a, s in enumerate(call.reg):
                p, e = m.hw.provider(l, a, m.value_bits, m.reg_bits_frag)
                if 32 * w + p >= m.threads:
                    continue
                got = m.delivered_address(32 * w_of(t) + p, c, e)
                want = m.expected[t][s]
                if got != addr[want]:
                    idx = m.index_of_address(got)
                    mism[_rc(m, want)] = m.name(idx) if idx is not None else f"offset {got}"
    return cells, mism


def copy_svg(model, title: str = "", thread=None) -> str:
    """The ``copy`` view: the TiledCopy's source (left) and destination (right) TV layouts
    over its tile, each cell labelled with the copy thread and value (CuTe's print_latex)."""
    tc = model.tiled_copy
    svg = _Svg(title or "TiledCopy")
    tm = tuple(tc.tiler_mn)
    rows, cols = int(tm[0]) if isinstance(tm[0], int) else tm[0].size(), \
        int(tm[1]) if isinstance(tm[1], int) else tm[1].size()
    cw, ch = _cell_size(rows, cols)
    svg.text(4, 14, f"{title} - {tc.atom.name if hasattr(tc.atom, 'name') else 'copy'}: source and destination "
                    f"TV layouts over the {rows}x{cols} copy tile", anchor="start", size=12)
    x0 = 40
    for side, tv in (("src", tc.get_layoutS_TV()), ("dst", tc.get_layoutD_TV())):
        own = {}
        for t in range(tv[0].size()):
            for v in range(tv[1].size()):
                own.setdefault(tv(t, v), (t, v))
        y0 = 56
        svg.open("copy", side)
        svg.text(x0, 34, f"{side}: {tv}", anchor="start", size=10)
        _grid_axes(svg, x0, y0, rows, cols, cw, ch)
        for e, (t, v) in own.items():
            r, c = e % rows, e // rows
            if c >= cols:
                continue
            x, y = x0 + c * cw, y0 + r * ch
            mine = thread is not None and t == thread
            svg.rect(x, y, cw, ch, fill=_color(t) if thread is None or mine else "#eeeeee",
                     cls="cell" + (" thread" if mine else ""), tip=f"({r},{c}): T{t} V{v}")
            svg.text(x + cw / 2, y + ch / 2 - 1, f"T{t}", size=9)
            svg.text(x + cw / 2, y + ch - 3, f"V{v}", size=8, fill="#444")
        svg.close()
        x0 += cols * cw + 60
    return svg.render()


def banks_svg(model, title: str = "", thread=None, warp=None, call=None) -> str:
    """The ``banks`` view: the phases of one warp instruction (the worst one unless ``warp``/
    ``call`` or ``thread`` pick it): per phase, 32 bank columns and the distinct 4-byte words each
    serves (one row per wavefront), labelled with the lanes; a bank needing more wavefronts
    than the phase's minimum is red, with its lanes."""
    vb, groups = bank_phases(model)
    eb = model.elem_bytes
    addr = model.addr_table
    by_instr = {}
    for key, items in groups.items():
        by_instr.setdefault((key[0], key[1]), []).append((key, items))

    def analyse(items, key):
        banks = {}
        for l, t, idx in items:
            sm = model.calls[t][key[1]].smem
            b0 = int(addr[sm[idx[0]]] * eb)
            for wd in range(b0 // 4, (b0 + vb + 3) // 4):
                banks.setdefault(wd % 32, {}).setdefault(wd, set()).add(l)
        need = max((len(ws) for ws in banks.values()), default=0)
        minimum = max(1, -(-(len(items) * vb) // 128))
        return banks, need, minimum

    if warp is None and thread is not None:
        warp = thread // 32
    if warp is None or call is None:
        worst = None
        for (w, c), phs in sorted(by_instr.items()):
            if warp is not None and w != warp:
                continue
            ratio = max(analyse(items, key)[1] / analyse(items, key)[2] for key, items in phs)
            if worst is None or ratio > worst[0]:
                worst = (ratio, w, c)
        warp, call = (worst[1], worst[2]) if worst else (0, 0)
    phs = sorted(by_instr.get((warp, call), []))
    svg = _Svg(title or "banks")
    svg.text(4, 14, f"{title} - {model.operand}: warp {warp} instruction {call}, {len(phs)} phase(s), "
                    f"{vb}-byte accesses; columns are banks, rows wavefronts", anchor="start", size=12)
    bw, bh = 30, 24
    y0 = 50
    for key, items in phs:
        banks, need, minimum = analyse(items, key)
        w, c, r, ph = key
        bad = need > minimum
        svg.open("banks", f"phase {ph} reg {r}")
        svg.text(4, y0 - 6, f"phase {ph} (register {r}): {need} wavefront(s), minimum {minimum}"
                            + (f" -- {need // minimum}-way conflict" if bad else " -- conflict-free"),
                 anchor="start", fill="red" if bad else "black", cls="phase-title")
        for b in range(32):
            svg.text(40 + b * bw + bw / 2, y0 + 10, b, size=8)
        depth = max(need, 1)
        for b in range(32):
            ws = sorted(banks.get(b, {}))
            conflict = len(ws) > minimum
            for k in range(depth):
                x, y = 40 + b * bw, y0 + 14 + k * bh
                if k < len(ws):
                    lanes = sorted(banks[b][ws[k]])
                    svg.rect(x, y, bw, bh, fill="#f4a6a6" if conflict else _color(b),
                             cls="cell conflict" if conflict else "cell",
                             tip=f"bank {b}, byte {ws[k] * 4}: lanes {lanes}")
                    svg.text(x + bw / 2, y + bh / 2 + 3, "L" + ",".join(map(str, lanes[:2])) +
                             ("+" if len(lanes) > 2 else ""), size=7, fill="#a00" if conflict else None)
                else:
                    svg.rect(x, y, bw, bh, fill="#fafafa", stroke="#ddd", cls="empty")
        for k in range(depth):
            svg.text(36, y0 + 14 + k * bh + bh / 2 + 3, f"w{k}", anchor="end", size=8)
        svg.close()
        y0 += 14 + depth * bh + 34
    return svg.render()


def swizzle_svg(model, title: str = "") -> str:
    """The ``swizzle`` view: the smem tile's banks (``(byte offset / 4) % 32``) under the
    layout without its swizzle (left) and with it (right)."""
    smem = model.smem
    inner = smem.inner if getattr(smem, "is_composed", False) else smem
    rows, cols = _rows_cols(model)
    cw, ch = _cell_size(rows, cols)
    svg = _Svg(title or "swizzle")
    svg.text(4, 14, f"{title} - {model.operand}: bank of each element, {inner} (left) vs {smem} (right)",
             anchor="start", size=12)
    x0 = 40
    for side, L in (("without swizzle", inner), ("with swizzle", smem)):
        tab = function_table(L)
        svg.open("swizzle", side)
        svg.text(x0, 34, side, anchor="start")
        _grid_axes(svg, x0, 50, rows, cols, cw, ch)
        for i in range(rows * cols):
            r, c = i % rows, i // rows
            bank = int(tab[i] * model.elem_bytes) // 4 % 32
            x, y = x0 + c * cw, 50 + r * ch
            svg.rect(x, y, cw, ch, fill=_color(bank))
            svg.text(x + cw / 2, y + ch / 2 + 3, f"b{bank}", size=8)
        svg.close()
        x0 += cols * cw + 60
        if L is smem and smem is inner:
            break
    if smem is inner:
        svg.text(4, 50 + rows * ch + 18, "this layout has no swizzle", anchor="start")
    return svg.render()


def view_svg(view: str, cfg, mma, op: str, model=None, thread=None, results=None) -> str:
    """The picture ``symlayout show --svg --view VIEW`` draws (``results``: the proof's, to frame
    a counterexample; proved here when not given)."""
    title = cfg.name or cfg.path
    if view == "tv" or model is None:
        hl = None
        if model is not None:
            if results is None:
                results = run_checks(model, PROPERTIES, method="auto")
            for r in results:
                if r.operand in (None, op) and r.status == "refuted" and r.counterexample \
                        and r.counterexample.element is not None:
                    hl = {tuple(r.counterexample.element[:2]): r.property}
                    break
        return tv_svg(mma, op, model, highlight=hl, title=title, thread=thread)
    if view == "copy":
        return copy_svg(model, title, thread=thread)
    if view == "banks":
        return banks_svg(model, title, thread=thread)
    if view == "swizzle":
        return swizzle_svg(model, title)
    raise ConfigError(f"unknown view {view!r} (tv, copy, banks, swizzle)")
