"""Rich display in Jupyter: a Layout (and a swizzled ComposedLayout) draws the grid of its offsets
(``_repr_svg_``), a Report's pictures are ``str`` that draw themselves, a Report renders as HTML.  Each is
parsed (SVG with xml.etree, HTML with html.parser) and read back: the offsets drawn are the layout's."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

import symlayout
from symlayout.algebra.calculator import format_table
from symlayout.algebra.display import MAX_CELLS, Svg, grid

SVG = "{http://www.w3.org/2000/svg}"
SEED = '''
[mma]
atom = "SM80_16x8x16_F16F16F16F16_TN"
layout = "(2,2,1)"
[copy.A]
atom = "SM75_U32x2_LDSM_N"
type = "half_t"
smem = "(32,16):(16,1)"
'''


def _drawn(svg: str) -> tuple[str, list[tuple[str, int]]]:
    """The layout text above the grid, and each cell's ``(row,col)`` tooltip with the offset it shows."""
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    head = next(t.text for t in root.iter(SVG + "text") if t.get("class") == "layout")
    cells = [(g.find(SVG + "rect").find(SVG + "title").text.split(" -> ")[0], int(g.find(SVG + "text").text))
             for g in root.iter(SVG + "g") if g.get("class") == "offset"]
    return head, cells


def test_layout_draws_its_offsets_as_print_layout():
    L = symlayout.layout("(2,3):(3,1)")
    head, cells = _drawn(L._repr_svg_())
    assert head == "(2,3):(3,1)"
    assert cells == [("(0,0)", 0), ("(0,1)", 1), ("(0,2)", 2), ("(1,0)", 3), ("(1,1)", 4), ("(1,2)", 5)]


@pytest.mark.parametrize("text", ["(4,(2,2)):(2,(1,8))", "(2,2,2):(1,4,2)", "12:3", "24:2", "((2,2),8):((16,1),2)"])
def test_layout_picture_is_the_function(text):
    """Cell (r, c) shows L(r + rows*c) (rank >= 2) or L(r*cols + c) (rank 1), the cells the text table has."""
    L = symlayout.layout(text)
    g = grid(L)
    _, cells = _drawn(L._repr_svg_())
    if isinstance(L.shape, tuple):
        want = [L(r + g.rows * c) for r in range(g.rows) for c in range(g.cols)]
    else:
        want = [L(i) for i in range(L.size())]
    assert [v for _, v in cells] == want
    table = format_table(L, max_size=MAX_CELLS)
    assert all(f" {v} " in table for v in want)


def test_swizzled_layout_draws_swizzled_offsets():
    L = symlayout.layout("Sw<1,0,1> o (2,2):(2,1)")     # x ^ ((x & 2) >> 1): 2 <-> 3
    head, cells = _drawn(L._repr_svg_())
    assert head == "Sw<1,0,1> o 0 o (2,2):(2,1)"
    assert [v for _, v in cells] == [0, 1, 3, 2] == [L(r, c) for r in range(2) for c in range(2)]


def test_no_picture_for_symbolic_or_large_layouts():
    assert symlayout.layout("(4,m):(1,4)", m=1)._repr_svg_() is None
    assert symlayout.layout(f"({MAX_CELLS},2):(1,{MAX_CELLS})")._repr_svg_() is None
    assert symlayout.layout("(64,64):(64,1)")._repr_svg_() is not None


def test_ipython_picks_the_svg():
    formatters = pytest.importorskip("IPython.core.formatters")
    data, _ = formatters.DisplayFormatter().format(symlayout.layout("(2,3):(3,1)"))
    assert data["image/svg+xml"].startswith("<svg") and data["text/plain"] == "Layout((2,3):(3,1))"
    data, _ = formatters.DisplayFormatter().format(symlayout.layout("(4,m):(1,4)", m=1))
    assert "image/svg+xml" not in data


def test_report_pictures_are_str_that_draw_themselves():
    rep = symlayout.prove(symlayout.config(SEED))
    svg = rep.svg("banks")
    assert isinstance(svg, Svg) and isinstance(svg, str) and svg._repr_svg_() == svg
    assert svg.startswith("<svg") and 'class="cell conflict"' in svg          # existing callers' str use
    root = ET.fromstring(svg._repr_svg_())
    assert root.tag == SVG + "svg" and any(r.get("class") == "cell conflict" for r in root.iter(SVG + "rect"))
    formatters = pytest.importorskip("IPython.core.formatters")
    assert formatters.DisplayFormatter().format(rep.svg("tv"))[0]["image/svg+xml"].startswith("<svg")


class _Balance(HTMLParser):
    """Open tags, checked to close in order (void elements excepted)."""
    VOID = {"br", "hr", "img", "meta", "input", "link", "col", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack, self.seen, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.seen.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.seen.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack.pop() == tag, (tag, self.stack)

    def handle_data(self, data):
        self.text.append(data)


def test_report_renders_as_html():
    rep = symlayout.prove(symlayout.config(SEED))
    p = _Balance()
    p.feed(rep._repr_html_())
    p.close()
    assert not p.stack
    assert {"table", "svg"} <= set(p.seen)
    text = " ".join(p.text)
    assert "bank_conflicts[A]" in text and "coverage" in text
