"""Parse and print CuTe's print notation.

Accepted (the conformance contract's notation; CuTe's static underscores are
accepted and dropped): integers ``8``, ``_8``, ``-16``; IntTuples ``(4,(2,2))``,
``(4)`` (rank 1), ``()``; layouts ``((2,4),8):((1,16),2)``; swizzles
``Sw<3,3,3>`` (CuTe C++'s print) or ``S<3,3,3>`` (the CuTe DSL's print, the same
Swizzle); composed layouts ``Sw<3,3,3> o 0 o (8,64):(64,1)`` (or without
the offset); tilers ``(3:3,(2,4):(1,8))``; the underscore ``_``.  Entries
may be integer expressions over symbols (``32*m``, ``16*k``, ``8*(m//2)``,
``(m+15)//m``, ``min(4,2*m)``: ``+ - * // %``, unary minus, parentheses,
``min``/``max``/``abs``, with Python's precedence and floor semantics), which
become sympy expressions over positive-integer symbols.  Printing emits the
same syntax, so ``parse(str(x))`` is the same function as ``x``.

>>> L = parse_layout("(_32,_16):(_16,_1)"); print(L)
(32,16):(16,1)
>>> print(parse("Sw<3,3,3> o _0 o (8,64):(64,1)"))
Sw<3,3,3> o 0 o (8,64):(64,1)
>>> parse("S<3,4,3> o 0 o (8,64):(64,1)") == parse("Sw<3,4,3> o 0 o (8,64):(64,1)")
True
>>> parse("(4,8")
Traceback (most recent call last):
...
symlayout.errors.NotationError: "(4,8": column 5: expected ',' or ')' but the text ended
"""
from __future__ import annotations

import difflib
import json
import re

from ._lazy import sympy

from ..errors import NotationError
from .composed import SWIZZLE_LIMIT, ComposedLayout, Swizzle, fits_cute_int
from .int_tuple import _, congruent, format_int_tuple
from .layout import MEMO_SIZE, Layout, register_cache, trusted_layout
from .symbolic import normalize

MAX_DEPTH = 64
MAX_LEN = 100_000


_TOKEN = re.compile(r"\s*(?:(?P<sw>Sw<)|(?P<num>[0-9]+)|(?P<name>[A-Za-z][A-Za-z0-9_]*)|(?P<us>_)|(?P<op>//|[-+*%():,<>])|(?P<bad>\S))")


class _Parser:
    def __init__(self, text: str, symbols: dict | None):
        if not isinstance(text, str):
            raise NotationError(f"expected a string in CuTe notation, got {type(text).__name__}")
        if len(text) > MAX_LEN:
            raise NotationError(f"notation is too long ({len(text)} characters; limit {MAX_LEN})")
        self.text = text
        self.pos = 0
        self.depth = 0
        self.symbols = symbols  # None: any name allowed; dict name->Symbol otherwise

    # -- low level
    def err(self, msg, pos=None):
        col = (self.pos if pos is None else pos) + 1
        t = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        t = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in t)
        raise NotationError(f'"{t}": column {col}: {msg}')

    def skip_ws(self):
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, s):
        self.skip_ws()
        return self.text.startswith(s, self.pos)

    def at_end(self):
        self.skip_ws()
        return self.pos >= len(self.text)

    def expect(self, s, what=None):
        self.skip_ws()
        if not self.text.startswith(s, self.pos):
            if self.pos >= len(self.text):
                self.err(f"expected {what or repr(s)} but the text ended")
            self.err(f"expected {what or repr(s)}, found {self.text[self.pos]!r}")
        self.pos += len(s)

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.err(f"nesting deeper than {MAX_DEPTH}")

    # -- grammar
    def parse_top(self):
        node = self.parse_composed()
        if not self.at_end():
            self.err(f"unexpected {self.text[self.pos]!r}")
        return node

    def parse_composed(self):
        if self.peek("Sw<") or self.peek("S<"):
            sw = self.parse_swizzle()
            if not self.peek("o"):
                return sw
            self.expect("o")
            first = self.parse_node()
            if self.peek("o"):
                self.expect("o")
                offset = first
                if type(offset) is tuple or not isinstance(offset, (int, sympy.Basic)) or hasattr(offset, "shape"):
                    self.err("the offset of a composed layout must be an integer")
                inner = self.parse_node()
            else:
                offset, inner = 0, first
            if not hasattr(inner, "shape"):
                self.err("a composed layout needs a layout after the swizzle")
            return ComposedLayout(sw, offset, inner)
        return self.parse_node()

    def parse_swizzle(self):
        start = self.pos
        self.expect("Sw<" if self.peek("Sw<") else "S<", "'Sw<' or 'S<'")
        vals = []
        for i in range(3):
            self.skip_ws()
            neg = False
            if self.peek("-"):
                self.expect("-")
                neg = True
            m = re.compile(r"[0-9]+").match(self.text, self.pos)
            if not m:
                self.err("expected an integer swizzle parameter")
            if len(m.group()) > 30:
                self.err("integer too large")
            v = int(m.group())
            self.pos = m.end()
            vals.append(-v if neg else v)
            if i < 2:
                self.expect(",")
        self.expect(">")
        b, mm, s = vals
        if b < 0 or mm < 0 or abs(s) < b:
            self.err(f"invalid swizzle Sw<{b},{mm},{s}> (needs B >= 0, M >= 0, |S| >= B)", start)
        if not fits_cute_int(b, mm, s):
            self.err(f"invalid swizzle Sw<{b},{mm},{s}> ({SWIZZLE_LIMIT})", start)
        return Swizzle(b, mm, s)

    def parse_node(self):
        """A tuple (maybe followed by ':' stride), a scalar (maybe a layout), or '_'."""
        self.skip_ws()
        start = self.pos
        if self.peek("("):
            tup = self.parse_tuple()
            if self.peek(":"):
                self.expect(":")
                stride = self.parse_node_plain()
                return self.make_layout(tup, stride, start)
            # "(m+1)*2": a parenthesised scalar used in arithmetic
            if len(tup) == 1 and not isinstance(tup[0], tuple) and self._is_scalar(tup[0]) and self._arith_follows():
                v = self.continue_expr(tup[0])
                if self.peek(":"):
                    self.expect(":")
                    return self.make_layout(v, self.parse_node_plain(), start)
                return v
            return tup
        if self.peek("_") and not re.match(r"_\s*-?[0-9]", self.text[self.pos:]):
            self.pos += 1
            return _
        v = self.parse_expr()
        if self.peek(":"):
            self.expect(":")
            stride = self.parse_node_plain()
            return self.make_layout(v, stride, start)
        return v

    def parse_node_plain(self):
        self.skip_ws()
        if self.peek("("):
            t = self.parse_tuple()
            if len(t) == 1 and self._is_scalar(t[0]) and self._arith_follows():
                return self.continue_expr(t[0])
            return t
        return self.parse_expr()

    @staticmethod
    def _is_scalar(x):
        return isinstance(x, (int, sympy.Basic)) and type(x) is not tuple

    def _arith_follows(self):
        self.skip_ws()
        return self.pos < len(self.text) and (self.text[self.pos] in "+-*%" or self.text.startswith("//", self.pos))

    def make_layout(self, shape, stride, start):
        for x in (shape, stride):
            if _contains_layout(x):
                self.err("a layout's shape and stride must be integer tuples", start)
        if not congruent(shape, stride):
            self.err("shape and stride are not congruent", start)
        _check_shape(shape, self, start)
        return Layout(shape, stride)

    def parse_tuple(self):
        self.enter()
        self.expect("(")
        items = []
        if self.peek(")"):
            self.expect(")")
            self.depth -= 1
            return ()
        while True:
            items.append(self.parse_node_in_tuple())
            self.skip_ws()
            if self.pos >= len(self.text):
                self.err("expected ',' or ')' but the text ended")
            c = self.text[self.pos]
            if c == ",":
                self.pos += 1
                continue
            if c == ")":
                self.pos += 1
                break
            self.err(f"expected ',' or ')', found {c!r}")
        self.depth -= 1
        return tuple(items)

    def parse_node_in_tuple(self):
        return self.parse_node()

    # -- integer expressions (+ - * // % over ints and symbols)
    def parse_expr(self):
        self.enter()
        v = self.parse_term()
        v = self._sum_rest(v)
        self.depth -= 1
        return normalize(v)

    def continue_expr(self, v):
        v = self._term_rest(v)
        return normalize(self._sum_rest(v))

    def _sum_rest(self, v):
        while True:
            self.skip_ws()
            if self.peek("+"):
                self.pos += 1
                v = v + self.parse_term()
            elif self.peek("-") and not self._minus_is_sign():
                self.pos += 1
                v = v - self.parse_term()
            else:
                return v

    def _minus_is_sign(self):
        return False

    def parse_term(self):
        return self._term_rest(self.parse_factor())

    def _term_rest(self, v):
        while True:
            self.skip_ws()
            if self.peek("//"):
                self.pos += 2
                r = self.parse_factor()
                if r == 0:
                    self.err("division by zero")
                v = sympy.floor(sympy.sympify(v) / r) if not (isinstance(v, int) and isinstance(r, int)) else v // r
            elif self.peek("*"):
                self.pos += 1
                v = v * self.parse_factor()
            elif self.peek("%"):
                self.pos += 1
                r = self.parse_factor()
                if r == 0:
                    self.err("modulo by zero")
                v = sympy.Mod(v, r) if not (isinstance(v, int) and isinstance(r, int)) else v % r
            else:
                return v

    def parse_factor(self):
        self.skip_ws()
        if self.pos >= len(self.text):
            self.err("expected a number but the text ended")
        c = self.text[self.pos]
        if c == "-":
            self.pos += 1
            return -self.parse_factor()
        if c == "+":
            self.pos += 1
            return self.parse_factor()
        if c == "_":
            m = re.compile(r"_(-?[0-9]+)").match(self.text, self.pos)
            if not m:
                self.err("'_' is only allowed as a whole mode")
            if len(m.group(1)) > 31:
                self.err("integer too large")
            self.pos = m.end()
            return int(m.group(1))
        if c in "0123456789":
            m = re.compile(r"[0-9]+").match(self.text, self.pos)
            if len(m.group()) > 30:
                self.err("integer too large")
            self.pos = m.end()
            return int(m.group())
        if c.isascii() and c.isalpha():
            m = re.compile(r"[A-Za-z][A-Za-z0-9_]*").match(self.text, self.pos)
            name = m.group()
            if name == "Sw" or name == "S" and self.text.startswith("<", m.end()):
                self.err("a swizzle is only allowed at the start of a composed layout")
            if name in EXPR_FUNCTIONS and self.text.startswith("(", m.end()):
                return self.parse_call(name, m.end())
            if self.symbols is not None and name not in self.symbols:
                close = difflib.get_close_matches(name, list(self.symbols), 1)
                hint = f" (did you mean {close[0]!r}?)" if close else (" (declare it under [params])" if not self.symbols else f" (known: {', '.join(sorted(self.symbols))})")
                self.err(f"undefined symbol {name!r}{hint}")
            self.pos = m.end()
            if self.symbols is not None:
                return self.symbols[name]
            return sympy.Symbol(name, positive=True, integer=True)
        if c == "(":
            self.enter()
            self.pos += 1
            v = self.parse_expr()
            self.expect(")")
            self.depth -= 1
            return v
        self.err(f"unexpected {c!r}")

    def parse_call(self, name, open_pos):
        """``min(e, ...)``, ``max(e, ...)``, ``abs(e)`` inside an integer expression."""
        start = self.pos
        self.pos = open_pos
        self.enter()
        self.expect("(")
        args = [self.parse_expr()]
        while self.peek(","):
            self.expect(",")
            args.append(self.parse_expr())
        self.expect(")", "',' or ')'")
        self.depth -= 1
        if name == "abs":
            if len(args) != 1:
                self.err("abs takes one argument", start)
            return normalize(sympy.Abs(args[0]))
        return normalize((sympy.Min if name == "min" else sympy.Max)(*args))


#: functions allowed inside integer expressions (what the printer emits for sympy's Min, Max, Abs)
EXPR_FUNCTIONS = ("min", "max", "abs")


def _contains_layout(x):
    if type(x) is tuple:
        return any(_contains_layout(e) for e in x)
    return hasattr(x, "shape") or x is _


def _check_shape(shape, p, start):
    if type(shape) is tuple:
        for e in shape:
            _check_shape(e, p, start)
        return
    if isinstance(shape, int) and shape <= 0:
        p.err(f"shape entries must be positive, got {shape}", start)
    if isinstance(shape, sympy.Basic) and shape.is_positive is False:
        p.err(f"shape entries must be positive, but {format_int_tuple(shape)} is never positive", start)


# ---------------------------------------------------------------- the fast parser (concrete notation)
#
# The common inputs -- integer tuples, layouts ``((2,4),8):((1,16),2)``, tilers of layouts
# ``(3:3,(2,4):(1,8))``, ``Sw<3,3,3> o 0 o LAYOUT`` -- are read by the C JSON reader after a
# character translation (``(`` -> ``[``, ``)`` -> ``]``, ``:`` -> a ``":"`` element); the arrays
# become tuples and ``a, ":", b`` a Layout.  It accepts only what the full parser reads the same
# way (no spaces, expressions, names, leading zeros, long integers, deep nesting or bad ``_``) and
# returns None otherwise: the full parser then reads it (and reports any error with its column).

_FAST_OK = re.compile(r"[0-9(),:_-]+")
_FAST_BAD = re.compile(r"[0-9]{31}|[0-9]_|_(?!-?[0-9])")      # long ints, '_' other than a static prefix
_TO_JSON = str.maketrans({"(": "[", ")": "]", ":": ',":",', "_": None})
_SW_FAST = re.compile(r"Sw?<(\d+),(\d+),(-?\d+)>(?: o (?:(\d+) o )?(.+))?")


#: text -> what the fast parser read (immutable values: the same notation gives the same object)
_PARSED: dict = {}
register_cache(_PARSED)


class _NotFast(Exception):
    """The fast parser does not read this text: the full parser does."""


def _fast_parse(text: str):
    """Integer tuples, layouts, tilers of layouts and swizzled layouts (no symbols), or None."""
    if text.startswith(("Sw<", "S<")):
        m = _SW_FAST.fullmatch(text)
        if not m:
            return None
        b, mm, sh = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if abs(sh) < b or len(text) > 200 or not fits_cute_int(b, mm, sh):
            return None
        if m.group(5) is None:
            return Swizzle(b, mm, sh)
        inner = _fast_parse(m.group(5))
        if type(inner) is not Layout:
            return None
        return ComposedLayout(Swizzle(b, mm, sh), int(m.group(4) or 0), inner)
    if not _FAST_OK.fullmatch(text) or text.count("(") >= MAX_DEPTH or ("_" in text and _FAST_BAD.search(text)) \
            or (len(text) > 30 and _FAST_BAD.search(text)):
        return None
    try:
        nodes = _group(json.loads("[" + text.translate(_TO_JSON) + "]"))
    except (ValueError, _NotFast, RecursionError):
        return None
    return nodes[0] if len(nodes) == 1 else None


def _tup(x):
    """A JSON array as a tuple (its ``":"`` elements make layouts)."""
    if ":" in x:
        return tuple(_group(x))
    return tuple([_tup(e) if type(e) is list else e for e in x])


def _group(x):
    """The nodes of a JSON array: ``a, ":", b`` is the layout a:b, arrays are tuples."""
    out = []
    i, n = 0, len(x)
    while i < n:
        a = x[i]
        if type(a) is list:
            a = _tup(a)
        elif type(a) is str:
            raise _NotFast
        if i + 1 < n and x[i + 1] == ":":
            if i + 2 >= n or (i + 3 < n and x[i + 3] == ":"):
                raise _NotFast
            b = x[i + 2]
            if type(b) is list:
                b = _tup(b)
            elif type(b) is str:
                raise _NotFast
            a = _fast_layout(a, b)
            i += 3
        else:
            i += 1
        out.append(a)
    return out


def _fast_layout(shape, stride):
    """``shape:stride`` when congruent with integer leaves and positive sizes (with its flat form)."""
    fs, fd = [], []
    if not _congruent_leaves(shape, stride, fs, fd) or not fs or min(fs) <= 0:
        raise _NotFast
    return trusted_layout(shape, stride, (tuple(fs), tuple(fd)))


def _congruent_leaves(a, b, fs, fd) -> bool:
    """``congruent(a, b)`` with int leaves only, collecting the flat leaves into ``fs`` / ``fd``."""
    if type(a) is tuple:
        if type(b) is not tuple or len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if type(x) is int and type(y) is int:
                fs.append(x)
                fd.append(y)
            elif not _congruent_leaves(x, y, fs, fd):
                return False
        return True
    if type(a) is not int or type(b) is not int:
        return False
    fs.append(a)
    fd.append(b)
    return True


def parse(text: str, symbols: dict | None = None):
    """Parse any CuTe notation: IntTuple, Layout, Swizzle, ComposedLayout, tiler or ``_``.

    ``symbols`` (name -> sympy Symbol) restricts the names allowed in entries.

    >>> parse("(4,(2,2))")
    (4, (2, 2))
    >>> print(parse("(3:3,(2,4):(1,8))")[1])
    (2,4):(1,8)
    """
    if type(text) is str and len(text) < 4096:
        r = _PARSED.get(text)
        if r is None:
            r = _fast_parse(text)
            if r is not None:
                if len(_PARSED) >= MEMO_SIZE:
                    _PARSED.clear()
                _PARSED[text] = r
        if r is not None:
            return r
    return _Parser(text, symbols).parse_top()


def parse_layout(text: str, symbols: dict | None = None):
    """Parse a Layout or ComposedLayout (an IntTuple ``S`` means ``make_layout(S)``? no: an error).

    >>> print(parse_layout("8:1"))
    8:1
    """
    node = parse(text, symbols)
    if not hasattr(node, "shape"):
        raise NotationError(f'"{text}": expected a layout "shape:stride"')
    return node


def parse_int_tuple(text: str, symbols: dict | None = None):
    """Parse an IntTuple.

    >>> parse_int_tuple("(2,(3,_4))")
    (2, (3, 4))
    """
    node = parse(text, symbols)
    if _contains_layout(node) or hasattr(node, "shape") or node is _:
        raise NotationError(f'"{text}": expected an integer tuple')
    if type(node) is not tuple and not isinstance(node, (int, sympy.Basic)):
        raise NotationError(f'"{text}": expected an integer tuple')
    return node
