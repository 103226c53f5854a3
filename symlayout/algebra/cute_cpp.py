"""CuTe C++ spellings of layouts, read as CuTe notation.

A kernel author copies layouts from C++: ``Swizzle<3,3,3>{}``,
``Layout<Shape<_64,_64>, Stride<_64,_1>>{}``, ``make_layout(make_shape(Int<8>{}, _64{}),
GenRowMajor{})``, ``tile_to_shape(composition(Swizzle<3,3,3>{}, ...), Shape<_64,_64>{})``.
:func:`to_notation` rewrites those spellings into the notation the calculator
(:mod:`symlayout.algebra.calculator`) evaluates: ``Sw<3,3,3>``, ``(64,64):(64,1)``,
``tile_to_shape(composition(Sw<3,3,3>, ...), (64,64))``; notation already in
CuTe's print form passes through unchanged.

>>> to_notation("Layout<Shape<_64,_64>,Stride<_64,_1>>{}")
'(64,64):(64,1)'
>>> to_notation("composition(Swizzle<3,3,3>{}, Layout<Shape<Shape<_8,_8>,_64>, Stride<Stride<_64,_512>,_1>>{})")
'composition(Sw<3,3,3>, ((8,8),64):((64,512),1))'
>>> to_notation("tile_to_shape(cute::Layout<Shape<Int<8>,_64>,Stride<_64,_1>>{}, make_shape(_128{}, _64{}))")
'tile_to_shape((8,64):(64,1), (128,64))'
>>> to_notation("(32,16):(16,1)"), is_cpp_spelling("(32,16):(16,1)"), is_cpp_spelling("Swizzle<2,3,3>")
('(32,16):(16,1)', False, True)
>>> to_notation("Layout<Shape<_8,_64>")
'Layout<Shape<_8,_64>'

"""
from __future__ import annotations

import re

from ..errors import NotationError

__all__ = ["to_notation", "is_cpp_spelling", "is_expression", "FUNCTION_SPELLINGS"]

#: calculator functions a configuration's layout may be written with
FUNCTION_SPELLINGS = ("composition", "tile_to_shape", "make_layout", "make_shape", "make_stride", "make_tile",
                      "logical_product", "blocked_product", "raked_product", "logical_divide", "zipped_divide",
                      "coalesce", "right_inverse", "left_inverse", "complement", "upcast", "downcast")

_TUPLES = ("Shape", "Stride", "Step", "Tile", "Coord", "make_shape", "make_stride", "make_tile", "make_step",
           "make_coord", "tuple", "cute::tuple")
_CPP_RE = re.compile(r"\b(?:Swizzle|Layout|Shape|Stride|Tile|Int|cute::|make_shape|make_stride|make_tile)\b|"
                     r"(?<![\w])_\d+\b|\{\}")
_CALL_RE = re.compile(r"\b(" + "|".join(FUNCTION_SPELLINGS) + r")\s*\(")


def is_cpp_spelling(text: str) -> bool:
    """True when ``text`` uses C++ spellings (``Layout<...>``, ``_64``, ``Int<8>{}``, ``cute::``)."""
    return bool(_CPP_RE.search(text))


def is_expression(text: str) -> bool:
    """True when ``text`` calls a layout function (``tile_to_shape(...)``, ``composition(...)``).

    >>> is_expression("tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (64,64))"), is_expression("(8,64):(64,1)")
    (True, False)
    """
    return bool(_CALL_RE.search(text))


class _Unbalanced(Exception):
    """A bracket that is never closed (the calculator then reports it with its column)."""


def split_args(s: str, opening: str = "<({", closing: str = ">)}") -> list:
    """Split at top-level commas (brackets ``<>``, ``()``, ``{}`` nest: ``opening`` / ``closing``), stripped.

    >>> split_args("Shape<_2, _4>, f(a, b), x"), split_args("f(a, b)", "<", ">")
    (['Shape<_2, _4>', 'f(a, b)', 'x'], ['f(a', 'b)'])
    """
    out, depth, cur = [], 0, []
    for c in s:
        if c in opening:
            depth += 1
        elif c in closing:
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    return [a.strip() for a in out]


def _close(s: str, i: int, open_c: str, close_c: str) -> int:
    """Index of the bracket closing the one at ``s[i]``."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == open_c:
            depth += 1
        elif s[j] == close_c:
            depth -= 1
            if depth == 0:
                return j
    raise _Unbalanced(i)


def _tuple(args) -> str:
    return "(" + ",".join(args) + ")" if len(args) != 1 else args[0]


def to_notation(text: str) -> str:
    """Rewrite C++ spellings into CuTe notation / calculator functions (see the module doc); text
    whose brackets do not balance is returned as it is (the calculator reports where)."""
    s = re.sub(r"\bcute::", "", text.strip())
    s = re.sub(r"\btypename\s+", "", s)
    try:
        return _rewrite(s)
    except _Unbalanced:
        return text


def _rewrite(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        m = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*([<(]?)").match(s, i)
        if not m:
            out.append(s[i])
            i += 1
            continue
        name, br = m.group(1), m.group(2)
        j = m.end()
        if re.fullmatch(r"_\d+", name):                      # _64 / _64{}
            out.append(name[1:])
            i = j - len(br)
            if s.startswith("{}", i):
                i += 2
            continue
        if not br:
            out.append(name)
            i = j
            continue
        open_c, close_c = ("<", ">") if br == "<" else ("(", ")")
        k = _close(s, j - 1, open_c, close_c)
        args = [_rewrite(a) for a in split_args(s[j:k])] if s[j:k].strip() else []
        i = k + 1
        while i < len(s) and s[i] == " ":
            i += 1
        if s.startswith("{}", i):                              # a value of the type: Shape<...>{}
            i += 2
        elif s.startswith("{", i) and br == "<":               # Layout<...>{shape, stride}: the braces' values
            i = _close(s, i, "{", "}") + 1
        out.append(_construct(name, br, args))
    return "".join(out)


def _row_major(shape: str) -> str:
    """``make_layout(shape, GenRowMajor{})`` of a flat static shape.

    >>> _row_major("(8,64)")
    '(8,64):(64,1)'
    """
    ext = re.fullmatch(r"\(?\s*(\d+(?:\s*,\s*\d+)*)\s*\)?", shape)
    if not ext:
        raise NotationError(f"make_layout({shape}, GenRowMajor{{}}): write the strides for a nested or dynamic shape")
    ns = [int(x) for x in ext.group(1).split(",")]
    st, acc = [], 1
    for n in reversed(ns):
        st.append(acc)
        acc *= n
    return f"({','.join(map(str, ns))}):({','.join(map(str, reversed(st)))})"


def _construct(name: str, br: str, args: list) -> str:
    if br == "<":
        if name == "Int":
            return args[0]
        if name == "Swizzle":
            return f"Sw<{','.join(args)}>"
        if name in _TUPLES:
            return _tuple(args)
        if name == "Layout":
            if len(args) == 1:
                return f"make_layout({args[0]})"
            return f"{args[0]}:{args[1]}"
        if name == "Sw":
            return f"Sw<{','.join(args)}>"
        raise NotationError(f"{name}<...>: not a CuTe type symlayout reads in a layout (Swizzle, Layout, Shape, "
                            "Stride, Int, _N)")
    if name in ("make_shape", "make_stride", "make_tile", "make_step", "make_coord"):
        return _tuple(args)
    if name == "make_layout" and len(args) == 2 and args[1] in ("GenColMajor", "LayoutLeft"):
        return f"make_layout({args[0]})"
    if name == "make_layout" and len(args) == 2 and args[1] in ("GenRowMajor", "LayoutRight"):
        return _row_major(args[0])
    return f"{name}({', '.join(args)})"
