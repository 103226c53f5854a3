"""Evaluate layout-algebra expressions: the engine of ``symlayout layout "EXPR"``.

An expression is CuTe notation (``(32,16):(16,1)``, ``Sw<3,3,3> o (8,64):(64,1)``,
``(4,8)``, ``32*m``) or a call of one of :data:`FUNCTIONS` whose arguments
are again expressions: ``complement((4,2):(1,4), 32)``,
``logical_divide(composition((6,2):(8,2), (4,3):(3,1)), (2,3))``.  Names in
notation entries become positive-integer symbols; the side conditions that
CuTe would assert on them are collected and printed.  Nothing is ``eval``-ed.

Every error is a :class:`~symlayout.errors.SymlayoutError` with a one-line
message ``"EXPR": column C: problem`` whose column counts from the start of
the whole expression.

>>> print(run("composition((6,2):(8,2), (4,3):(3,1))", table=False))
((2,2),3):((24,2),8)
>>> print(run("complement((2,2):(1,6), 24)"))
(3,2):(2,12)
       0    1
    +----+----+
 0  |  0 | 12 |
 1  |  2 | 14 |
 2  |  4 | 16 |
    +----+----+
>>> print(run("upcast((4,8):(1,m), 2)"))
(2,8):(1,m//2)
side conditions:
  upcast<2>: stride divisibility: m%2 = 0
>>> run("complemnt(4:1)")
Traceback (most recent call last):
...
symlayout.errors.NotationError: "complemnt(4:1)": column 1: unknown function 'complemnt' (did you mean 'complement'?)
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ._lazy import sympy

from ..errors import AlgebraError, NotationError, SymlayoutError
from .int_tuple import _, format_int_tuple
from .display import grid, is_concrete
from .notation import EXPR_FUNCTIONS, parse
from .symbolic import collect_conditions
from . import int_tuple as it
from . import layout as L

__all__ = ["FUNCTIONS", "Result", "evaluate", "format_result", "format_table", "run", "MAX_TABLE"]

#: largest layout whose function table is printed
MAX_TABLE = 64
#: longest accepted expression (characters)
MAX_EXPR = 100_000
#: deepest nesting of calls
MAX_CALL_DEPTH = 64


# ---------------------------------------------------------------- argument kinds


def _describe(x) -> str:
    if x is _:
        return "_"
    if getattr(x, "is_swizzle", False):
        return f"the swizzle {x}"
    if L.is_layout(x):
        return f"the layout {x}"
    if isinstance(x, tuple):
        return f"the tuple {L.format_tiler(x)}"
    if isinstance(x, dict):
        return "a pair (tiler, layout_tv)"
    return f"the integer {format_int_tuple(x)}" if isinstance(x, (int, sympy.Basic)) else repr(x)


def _is_int_tuple(x) -> bool:
    if isinstance(x, tuple):
        return all(_is_int_tuple(e) for e in x)
    return isinstance(x, (int, sympy.Basic)) and not isinstance(x, bool)


class _ArgError(Exception):
    def __init__(self, index, msg):
        super().__init__(msg)
        self.index = index


def _want_layout(x, i, allow_swizzle=False):
    if L.is_layout(x) or (allow_swizzle and getattr(x, "is_swizzle", False)):
        return x
    hint = f" (write make_layout({format_int_tuple(x)}) for the compact layout of a shape)" if _is_int_tuple(x) else ""
    raise _ArgError(i, f"argument {i + 1} must be a layout \"shape:stride\", got {_describe(x)}{hint}")


def _want_plain_layout(x, i):
    if isinstance(x, L.Layout):
        return x
    raise _ArgError(i, f"argument {i + 1} must be a plain layout \"shape:stride\" (no swizzle), got {_describe(x)}")


def _want_shape(x, i):
    if _is_int_tuple(x):
        return x
    raise _ArgError(i, f"argument {i + 1} must be an integer or an integer tuple, got {_describe(x)}")


def _want_pos_int(x, i):
    if isinstance(x, int) and not isinstance(x, bool) and x > 0:
        return x
    raise _ArgError(i, f"argument {i + 1} must be a positive integer, got {_describe(x)}")


def _want_tiler(x, i):
    if x is _ or L.is_layout(x) or _is_int_tuple(x):
        return x
    if isinstance(x, tuple) and all(e is _ or L.is_layout(e) or _is_int_tuple(e) for e in x):
        return x
    raise _ArgError(i, f"argument {i + 1} must be a tiler (a layout, a shape or a tuple of layouts), got {_describe(x)}")


def _want_any(x, i):
    if isinstance(x, dict):
        raise _ArgError(i, f"argument {i + 1} is {_describe(x)}; take one of its parts")
    return x


# ---------------------------------------------------------------- functions


@dataclass(frozen=True)
class Function:
    """One callable of the expression language: CuTe's name, argument kinds, help."""
    name: str
    impl: Callable
    kinds: tuple          # argument converters, required first
    nreq: int             # number of required arguments
    signature: str
    help: str

    def call(self, args):
        conv = [k(a, i) for i, (k, a) in enumerate(zip(self.kinds, args))]
        return self.impl(*conv)


def _size(x):
    return x.size() if L.is_layout(x) else it.product(x)


def _cosize(x):
    return x.cosize()


def _rank(x):
    return x.rank() if L.is_layout(x) else it.rank(x)


def _depth(x):
    return x.depth() if L.is_layout(x) else it.depth(x)


def _make_layout(*args):
    if len(args) == 2 and _is_int_tuple(args[0]) and _is_int_tuple(args[1]):
        if not it.congruent(args[0], args[1]):
            raise AlgebraError(f"make_layout: shape {format_int_tuple(args[0])} and stride "
                               f"{format_int_tuple(args[1])} are not congruent")
        return L.Layout(args[0], args[1])
    if len(args) == 1 and _is_int_tuple(args[0]):
        return L.Layout(args[0])
    if all(isinstance(a, L.Layout) for a in args):
        return L.make_layout(*args)
    raise AlgebraError("make_layout: takes a shape, a shape and a stride, or plain layouts")


def _make_layout_tv(thr, val):
    tiler, tv = L.make_layout_tv(thr, val)
    return {"tiler": tiler, "layout_tv": tv}


def _crd2idx(crd, shape, stride=None):
    return it.crd2idx(crd, shape, stride)


def _idx2crd(idx, shape, stride=None):
    return it.idx2crd(idx, shape, stride)


def _fn(name, impl, kinds, nreq, signature, help_):
    return Function(name, impl, tuple(kinds), nreq, signature, help_)


_LAY, _SHP, _N, _TIL, _ANY = _want_layout, _want_shape, _want_pos_int, _want_tiler, _want_any


def _lay_or_sw(x, i):
    return _want_layout(x, i, allow_swizzle=True)


def _lay_or_shape(x, i):
    if L.is_layout(x) or _is_int_tuple(x):
        return x
    raise _ArgError(i, f"argument {i + 1} must be a layout or a shape, got {_describe(x)}")


def _make_layout_arg(x, i):
    if isinstance(x, L.Layout) or _is_int_tuple(x):
        return x
    raise _ArgError(i, f"argument {i + 1} must be a shape, a stride or a plain layout, got {_describe(x)}")


_FUNCS = [
    _fn("size", _size, [_lay_or_shape], 1, "size(L)", "number of coordinates of a layout or shape"),
    _fn("cosize", _cosize, [_LAY], 1, "cosize(L)", "1 + the largest offset"),
    _fn("rank", _rank, [_lay_or_shape], 1, "rank(L)", "number of top-level modes"),
    _fn("depth", _depth, [_lay_or_shape], 1, "depth(L)", "nesting depth"),
    _fn("make_layout", _make_layout, [_make_layout_arg] * 8, 1, "make_layout(shape[, stride]) | make_layout(L0, L1, ...)",
        "a compact column-major layout, a layout from shape and stride, or the concatenation of layouts"),
    _fn("make_ordered_layout", lambda s, o: L.make_ordered_layout(s, o), [_SHP, _SHP], 2,
        "make_ordered_layout(shape, order)", "compact layout with modes ordered by `order`"),
    _fn("coalesce", lambda x, p=None: L.coalesce(x, p), [_LAY, _SHP], 1, "coalesce(L[, profile])",
        "merge modes, same function"),
    _fn("filter", lambda x, p=None: L.filter(x, p), [_LAY, _SHP], 1, "filter(L[, profile])",
        "drop stride-0 and size-1 modes, then coalesce"),
    _fn("filter_zeros", lambda x: L.filter_zeros(x), [_want_plain_layout], 1, "filter_zeros(L)",
        "stride-0 modes get size 1"),
    _fn("composition", L.composition, [_lay_or_sw, _ANY], 2, "composition(A, B)", "R(c) = A(B(c))"),
    _fn("complement", lambda x, c=None: L.complement(x, c), [_LAY, _SHP], 1, "complement(L[, cotarget])",
        "the layout of the offsets L does not reach"),
    _fn("left_inverse", L.left_inverse, [_lay_or_sw], 1, "left_inverse(L)", "R(L(i)) == i"),
    _fn("right_inverse", L.right_inverse, [_lay_or_sw], 1, "right_inverse(L)", "L(R(i)) == i"),
    _fn("logical_divide", L.logical_divide, [_LAY, _TIL], 2, "logical_divide(L, tiler)", "((tile), (rest)) per mode"),
    _fn("zipped_divide", L.zipped_divide, [_LAY, _TIL], 2, "zipped_divide(L, tiler)", "((tile...), (rest...))"),
    _fn("tiled_divide", L.tiled_divide, [_LAY, _TIL], 2, "tiled_divide(L, tiler)", "((tile...), rest0, rest1, ...)"),
    _fn("flat_divide", L.flat_divide, [_LAY, _TIL], 2, "flat_divide(L, tiler)", "(tile0, tile1, ..., rest0, ...)"),
    _fn("logical_product", L.logical_product, [_LAY, _TIL], 2, "logical_product(L, tiler)", "(L, L's repetitions)"),
    _fn("zipped_product", L.zipped_product, [_LAY, _TIL], 2, "zipped_product(L, tiler)", "zipped logical product"),
    _fn("tiled_product", L.tiled_product, [_LAY, _TIL], 2, "tiled_product(L, tiler)", "tiled logical product"),
    _fn("flat_product", L.flat_product, [_LAY, _TIL], 2, "flat_product(L, tiler)", "flat logical product"),
    _fn("blocked_product", L.blocked_product, [_LAY, _TIL], 2, "blocked_product(L, tiler)", "((L0,T0'),(L1,T1'),...)"),
    _fn("raked_product", L.raked_product, [_LAY, _TIL], 2, "raked_product(L, tiler)", "((T0',L0),(T1',L1),...)"),
    _fn("tile_to_shape", lambda b, s, o=None: L.tile_to_shape(b, s, o), [_LAY, _SHP, _SHP], 2,
        "tile_to_shape(L, shape[, order])", "repeat L to fill shape"),
    _fn("upcast", L.upcast, [_lay_or_sw, _N], 2, "upcast(L, n)", "elements n times wider"),
    _fn("downcast", L.downcast, [_lay_or_sw, _N], 2, "downcast(L, n)", "elements n times narrower"),
    _fn("recast_layout", L.recast_layout, [_LAY, _N, _N], 3, "recast_layout(L, old_bits, new_bits)",
        "reinterpret the element type"),
    _fn("max_common_vector", L.max_common_vector, [_LAY, _LAY], 2, "max_common_vector(A, B)",
        "number of contiguous elements A and B share"),
    _fn("max_common_layout", L.max_common_layout, [_LAY, _LAY], 2, "max_common_layout(A, B)",
        "the largest common contiguous sub-layout"),
    _fn("nullspace", L.nullspace, [_want_plain_layout], 1, "nullspace(L)", "the coordinates L maps to 0"),
    _fn("make_layout_tv", _make_layout_tv, [_want_plain_layout, _want_plain_layout], 2, "make_layout_tv(thr, val)",
        "(tiler_mn, layout_tv) as make_tiled_copy builds them"),
    _fn("make_fragment_like", L.make_fragment_like, [_want_plain_layout], 1, "make_fragment_like(L)",
        "the register fragment layout"),
    _fn("max_alignment", L.max_alignment, [_want_plain_layout], 1, "max_alignment(L)", "CuTe's max_alignment"),
    _fn("crd2idx", _crd2idx, [_SHP, _SHP, _SHP], 2, "crd2idx(crd, shape[, stride])", "coordinate -> index"),
    _fn("idx2crd", _idx2crd, [_SHP, _SHP, _SHP], 2, "idx2crd(idx, shape[, stride])", "index -> coordinate"),
    _fn("product", it.product, [_SHP], 1, "product(shape)", "product of all entries"),
    _fn("product_each", it.product_each, [_SHP], 1, "product_each(shape)", "product of each mode"),
    _fn("flatten", it.flatten, [_SHP], 1, "flatten(shape)", "flatten an IntTuple"),
    _fn("prefix_product", lambda s, i=1: it.prefix_product(s, i), [_SHP, _SHP], 1, "prefix_product(shape[, init])",
        "exclusive prefix products (compact col-major strides)"),
    _fn("shape_div", it.shape_div, [_SHP, _SHP], 2, "shape_div(a, b)", "CuTe's shape_div"),
    _fn("ceil_div", it.ceil_div, [_SHP, _SHP], 2, "ceil_div(a, b)", "element-wise ceiling division"),
]

#: name -> :class:`Function`
FUNCTIONS: dict[str, Function] = {f.name: f for f in _FUNCS}


# ---------------------------------------------------------------- parsing


class _Expr:
    """Expression text plus error helpers (columns are 1-based over the whole text)."""

    def __init__(self, text: str):
        self.text = text

    def quoted(self) -> str:
        t = " ".join(self.text.split("\n"))
        return t if len(t) <= 80 else t[:77] + "..."

    def fail(self, pos: int, msg: str, cls=NotationError):
        raise cls(f'"{self.quoted()}": column {pos + 1}: {msg}')


_CALL_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_NOTATION_COL_RE = re.compile(r'^"(?:[^"\\]|\\.)*": column (\d+): (.*)$', re.S)


def _match_brackets(ex: _Expr) -> dict[int, int]:
    """Map each '(' to its ')' (iteratively); unbalanced brackets are errors."""
    text = ex.text
    stack: list[int] = []
    match: dict[int, int] = {}
    for i, c in enumerate(text):
        if c == "(":
            stack.append(i)
        elif c == ")":
            if not stack:
                ex.fail(i, "unmatched ')'")
            match[stack.pop()] = i
    if stack:
        ex.fail(stack[-1], "'(' is never closed")
    return match


def split_args(ex: _Expr, lo: int, hi: int, match) -> list[tuple[int, int]]:
    """Top-level comma-separated spans of text[lo:hi] (brackets and Sw<...> / S<...> respected)."""
    text = ex.text
    spans, start, i, angle = [], lo, lo, 0
    while i < hi:
        c = text[i]
        if c == "(":
            i = match[i] + 1
            continue
        if c == "<" and _swizzle_name_before(text, lo, i):
            angle += 1
        elif c == ">" and angle:
            angle -= 1
        elif c == "," and not angle:
            spans.append((start, i))
            start = i + 1
        i += 1
    spans.append((start, hi))
    return spans


def _swizzle_name_before(text: str, lo: int, i: int) -> bool:
    """``text[:i]`` ends with the name ``Sw`` or ``S`` (CuTe C++'s and the CuTe DSL's swizzle spellings)."""
    for name in ("Sw", "S"):
        j = i - len(name)
        if j >= lo and text[j:i] == name and (j == lo or not (text[j - 1].isalnum() or text[j - 1] == "_")):
            return True
    return False


@dataclass
class _Node:
    pos: int
    name: str | None = None            # function name for calls
    args: list = field(default_factory=list)
    span: tuple[int, int] | None = None  # notation text span


def _parse(ex: _Expr, lo: int, hi: int, match, depth: int) -> _Node:
    text = ex.text
    while lo < hi and text[lo].isspace():
        lo += 1
    while hi > lo and text[hi - 1].isspace():
        hi -= 1
    if lo >= hi:
        ex.fail(lo, "expected a layout, a tuple, an integer or a function call here")
    m = _CALL_RE.match(text, lo, hi)
    if m and m.group(1) not in ("o", "Sw") + EXPR_FUNCTIONS:
        if depth >= MAX_CALL_DEPTH:
            ex.fail(lo, f"calls nested deeper than {MAX_CALL_DEPTH}")
        name = m.group(1)
        open_ = m.end() - 1
        close = match[open_]
        if name not in FUNCTIONS:
            close_names = difflib.get_close_matches(name, list(FUNCTIONS), n=1, cutoff=0.6)
            hint = f" (did you mean {close_names[0]!r}?)" if close_names else " (symlayout layout --help lists the functions)"
            ex.fail(lo, f"unknown function {name!r}{hint}")
        if close != hi - 1:
            ex.fail(close + 1, f"unexpected text after {name}(...)")
        inner = text[open_ + 1:close]
        spans = [] if not inner.strip() else split_args(ex, open_ + 1, close, match)
        args = [_parse(ex, a, b, match, depth + 1) for a, b in spans]
        return _Node(lo, name=name, args=args)
    return _Node(lo, span=(lo, hi))


# ---------------------------------------------------------------- evaluation


@dataclass
class Result:
    """The value of an expression, the side conditions it needs, and whether the input was symbolic.

    >>> r = evaluate("size((32*m,16):(16,1))"); r.value, r.symbolic
    (512*m, True)
    """
    text: str
    value: Any
    conditions: list
    symbolic: bool


def _notation(ex: _Expr, node: _Node, state):
    a, b = node.span
    seg = ex.text[a:b]
    if seg in FUNCTIONS:
        ex.fail(a, f"{seg} is a function: call it as {FUNCTIONS[seg].signature}")
    try:
        v = parse(seg)
    except NotationError as e:
        m = _NOTATION_COL_RE.match(str(e))
        if m:
            ex.fail(a + int(m.group(1)) - 1, m.group(2))
        ex.fail(a, str(e))
    except SymlayoutError as e:
        ex.fail(a, str(e))
    if _has_symbols(v):
        state["symbolic"] = True
    return v


def _has_symbols(v) -> bool:
    if isinstance(v, tuple):
        return any(_has_symbols(e) for e in v)
    if isinstance(v, sympy.Basic):
        return bool(v.free_symbols)
    if getattr(v, "is_composed", False):
        return _has_symbols(v.inner) or _has_symbols(v.offset)
    if isinstance(v, L.Layout):
        return _has_symbols(v.shape) or _has_symbols(v.stride)
    return False


def _eval(ex: _Expr, node: _Node, state):
    if node.name is None:
        return _notation(ex, node, state)
    fn = FUNCTIONS[node.name]
    n = len(node.args)
    maxn = len(fn.kinds)
    if not fn.nreq <= n <= maxn:
        want = str(fn.nreq) if fn.nreq == maxn else f"{fn.nreq} to {maxn}" if maxn - fn.nreq > 1 else f"{fn.nreq} or {maxn}"
        ex.fail(node.pos, f"{fn.name} takes {want} argument{'s' if maxn > 1 else ''}, got {n}: {fn.signature}")
    args = [_eval(ex, a, state) for a in node.args]
    try:
        return fn.call(args)
    except _ArgError as e:
        ex.fail(node.args[e.index].pos, f"{fn.name}: {e}", cls=AlgebraError)
    except SymlayoutError as e:
        msg = str(e)
        if not msg.startswith(fn.name):
            msg = f"{fn.name}: {msg}"
        ex.fail(node.pos, msg, cls=type(e))


def evaluate(text: str) -> Result:
    """Parse and evaluate an expression; collect the side conditions.

    >>> evaluate("cosize(complement((4,2):(1,4), 32))").value
    25
    >>> [c.text for c in evaluate("upcast((4,8):(1,m), 2)").conditions]
    ['upcast<2>: stride divisibility: m%2 = 0']
    """
    if not isinstance(text, str):
        raise NotationError(f"expected an expression string, got {type(text).__name__}")
    if len(text) > MAX_EXPR:
        raise NotationError(f"expression is too long ({len(text)} characters; limit {MAX_EXPR})")
    ex = _Expr(text)
    for i, c in enumerate(text):
        if not (c.isascii() and (c.isprintable() or c in " \t")):
            ex.fail(i, f"unexpected character {c!r} (CuTe notation is ASCII)")
    match = _match_brackets(ex)
    node = _parse(ex, 0, len(text), match, 0)
    state = {"symbolic": False}
    with collect_conditions() as conds:
        value = _eval(ex, node, state)
    return Result(text, value, list(conds), state["symbolic"] or _has_symbols_any(value))


def _has_symbols_any(v) -> bool:
    if isinstance(v, dict):
        return any(_has_symbols_any(x) for x in v.values())
    return _has_symbols(v)


# ---------------------------------------------------------------- printing


def format_table(lay, max_size: int = MAX_TABLE) -> str | None:
    """The function table of a concrete layout as a small grid (None if too big or symbolic).

    Rank 2: rows are mode 0, columns mode 1 (as CuTe's ``print_layout``);
    rank 1: one row (rows of 8 when longer than 16); rank > 2: columns run over
    modes 1.. colexicographically.

    >>> print(format_table(L.Layout((2, 3), (3, 1))))
          0   1   2
        +---+---+---+
     0  | 0 | 1 | 2 |
     1  | 3 | 4 | 5 |
        +---+---+---+
    """
    g = grid(lay, max_size)
    if g is None:
        return None
    rows, cols, row_labels, col_labels = g.rows, g.cols, g.row_labels, g.col_labels
    vals = [[g.cell(r, c) for c in range(cols)] for r in range(rows)]
    w = max([len(str(v)) for row in vals for v in row if v is not None] + [len(s) for s in col_labels])
    lw = max(len(s) for s in row_labels)
    pad = " " * (lw + 3)
    head = (pad + " " + "".join(" " + s.rjust(w) + "  " for s in col_labels)).rstrip()
    rule = pad + "+" + "+".join("-" * (w + 2) for _c in range(cols)) + "+"
    out = [head, rule]
    for r in range(rows):
        cells = "|".join((" " + str(v).rjust(w) + " ") if v is not None else " " * (w + 2) for v in vals[r])
        out.append(" " + row_labels[r].rjust(lw) + "  |" + cells + "|")
    out.append(rule)
    return (g.note + "\n" if g.note else "") + "\n".join(out)


def _fmt_value(v) -> str:
    if v is _:
        return "_"
    if L.is_layout(v) or getattr(v, "is_swizzle", False):
        return str(v)
    if isinstance(v, tuple):
        return L.format_tiler(v)
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, sympy.Basic)):
        return format_int_tuple(v)
    return str(v)


def format_result(res: Result, table: bool = True) -> str:
    """The text ``symlayout layout`` prints for a :class:`Result`.

    >>> print(format_result(evaluate("(32*m,16):(16,1)")))
    (32*m,16):(16,1)
    side conditions: none
    """
    v = res.value
    lines = []
    if isinstance(v, dict):
        for k, x in v.items():
            lines.append(f"{k}: {_fmt_value(x)}")
        lay = v.get("layout_tv")
    else:
        lines.append(_fmt_value(v))
        lay = v if L.is_layout(v) else None
    if table and lay is not None:
        t = format_table(lay)
        if t is not None:
            lines.append(t)
        elif is_concrete(lay):
            lines.append(f"(function table omitted: size {lay.size()} > {MAX_TABLE})")
    if res.symbolic:
        if res.conditions:
            lines.append("side conditions:")
            lines.extend(f"  {c.text}" for c in res.conditions)
        else:
            lines.append("side conditions: none")
    return "\n".join(lines)


def run(text: str, table: bool = True) -> str:
    """Evaluate ``text`` and format the result (what ``symlayout layout`` prints).

    >>> print(run("right_inverse(Sw<3,3,3> o (8,64):(64,1))", table=False))
    Sw<3,0,-6> o 0 o (64,8):(8,1)
    """
    return format_result(evaluate(text), table=table)


def functions_help() -> str:
    """One line per function: signature and what it computes.

    >>> functions_help().splitlines()[0]
    '  size(L)  number of coordinates of a layout or shape'
    """
    return "\n".join(f"  {f.signature}  {f.help}" for f in _FUNCS)
