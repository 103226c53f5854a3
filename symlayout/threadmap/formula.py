"""A small, safe integer expression language (custom thread-map offsets).

Configuration files may describe a thread map by a formula such as
``"t % 8 + ((t // 8) % 2) * 16 + (t // 16) * 256"``.  This module parses such
text **without** ``eval``: a hand-written tokenizer and recursive-descent
parser accept exactly

* non-negative integer literals (``0``, ``128``; at most 64 digits),
* names (``t``, ``i``, ``warp_id``; Python keywords are refused),
* the binary operators ``+  -  *  //  %`` with Python's precedence and
  left associativity,
* unary minus (and unary plus), and parentheses.

Anything else (``/``, ``**``, strings, attribute access, calls, subscripts,
``lambda``...) is a :class:`~symlayout.errors.NotationError` naming the
1-based column.  Input longer than :data:`MAX_LENGTH` characters or nesting
deeper than :data:`MAX_DEPTH` levels is refused cleanly (no RecursionError).

The result is an immutable :class:`Expr` tree that can be evaluated with
Python's floor semantics, or translated to sympy and Z3.

>>> e = parse_expr("t % 8 + (t // 8) * 16", {"t"})
>>> [e.evaluate({"t": t}) for t in (0, 7, 8, 17)]
[0, 7, 16, 33]
>>> str(e)
't % 8 + t // 8 * 16'
>>> sorted(e.variables())
['t']
"""
from __future__ import annotations

import difflib
import json
import keyword
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ..errors import NotationError, SymlayoutError

__all__ = [
    "Expr", "Const", "Var", "Neg", "BinOp",
    "parse_expr", "MAX_LENGTH", "MAX_DEPTH", "MAX_DIGITS",
]

#: Longest accepted input text, in characters.
MAX_LENGTH = 4096
#: Deepest accepted nesting: both the nesting of parentheses/unary minus and
#: the height of the expression tree (long operator chains) are limited.
MAX_DEPTH = 100
#: Most digits in one integer literal.
MAX_DIGITS = 64

# Binding strength used by the printer: higher binds tighter.
_PREC = {"+": 1, "-": 1, "*": 2, "//": 2, "%": 2}
_PREC_UNARY = 3
_PREC_ATOM = 4


# --------------------------------------------------------------------------
# Expression tree
# --------------------------------------------------------------------------


#: the operators whose meaning is the same in every target algebra (sympy, Z3)
_RING = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}

class Expr:
    """Base class of the immutable expression tree.

    Nodes are :class:`Const`, :class:`Var`, :class:`Neg` and :class:`BinOp`
    (frozen dataclasses: hashable, comparable, immutable).  All tree walks are
    iterative, so even hand-built very deep trees do not hit Python's recursion
    limit.

    >>> e = parse_expr("-(a - 3) * 2")
    >>> e.evaluate({"a": 10})
    -14
    >>> e == parse_expr(str(e))
    True
    """

    __slots__ = ()

    # -- generic iterative fold ------------------------------------------
    def _fold(self, leaf: Callable[["Expr"], Any],
              neg: Callable[["Neg", Any], Any],
              binop: Callable[["BinOp", Any, Any], Any]) -> Any:
        """Post-order fold over the tree without recursion."""
        values: list[Any] = []
        stack: list[tuple[Expr, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if isinstance(node, (Const, Var)):
                values.append(leaf(node))
            elif not expanded:
                stack.append((node, True))
                if isinstance(node, Neg):
                    stack.append((node.operand, False))
                elif isinstance(node, BinOp):
                    stack.append((node.right, False))
                    stack.append((node.left, False))
                else:  # pragma: no cover - only our four node classes exist
                    raise SymlayoutError(f"unknown expression node {type(node).__name__}")
            elif isinstance(node, Neg):
                values.append(neg(node, values.pop()))
            else:
                right = values.pop()
                left = values.pop()
                values.append(binop(node, left, right))
        return values.pop()

    def _nodes(self) -> Iterator["Expr"]:
        stack: list[Expr] = [self]
        while stack:
            node = stack.pop()
            yield node
            if isinstance(node, Neg):
                stack.append(node.operand)
            elif isinstance(node, BinOp):
                stack.append(node.right)
                stack.append(node.left)

    # -- public API -------------------------------------------------------
    def evaluate(self, env: dict[str, int]) -> int:
        """Value of the expression, with Python's floor ``//`` and ``%``.

        Raises :class:`SymlayoutError` for a missing variable or a division
        by zero.

        >>> parse_expr("-7 // 2 + -7 % 2").evaluate({})
        -3
        >>> parse_expr("t // (t - t)").evaluate({"t": 3})
        Traceback (most recent call last):
        ...
        symlayout.errors.SymlayoutError: t // (t - t): division by zero (t=3)
        """
        def leaf(node: Expr) -> int:
            if isinstance(node, Const):
                return node.value
            try:
                value = env[node.name]
            except KeyError:
                raise SymlayoutError(f"{self}: variable {node.name!r} has no value") from None
            if isinstance(value, bool) or not isinstance(value, int):
                raise SymlayoutError(
                    f"{self}: variable {node.name!r} must be an int, got {type(value).__name__}")
            return value

        def binop(node: BinOp, a: int, b: int) -> int:
            op = node.op
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if b == 0:
                shown = ", ".join(f"{k}={env[k]}" for k in sorted(self.variables()) if k in env)
                raise SymlayoutError(f"{self}: division by zero" + (f" ({shown})" if shown else ""))
            return a // b if op == "//" else a % b

        return self._fold(leaf, lambda node, a: -a, binop)

    def compile(self, *names: str) -> Callable[..., int]:
        """A fast Python function of the positional arguments ``names``.

        Built from closures (no ``eval``/``exec``); same floor semantics as
        :meth:`evaluate`, division by zero raises :class:`SymlayoutError`.
        Every variable of the expression must be among ``names``.

        >>> f = parse_expr("t % 8 + i * 32").compile("t", "i")
        >>> f(9, 2)
        65
        """
        index = {n: k for k, n in enumerate(names)}
        missing = self.variables() - set(index)
        if missing:
            raise SymlayoutError(f"{self}: compile: no argument for variable(s) {', '.join(sorted(missing))}")

        def leaf(node: Expr):
            if isinstance(node, Const):
                v = node.value
                return lambda args: v
            k = index[node.name]
            return lambda args: args[k]

        def neg(node: Neg, f):
            return lambda args: -f(args)

        def binop(node: BinOp, f, g):
            op = node.op
            if op == "+":
                return lambda args: f(args) + g(args)
            if op == "-":
                return lambda args: f(args) - g(args)
            if op == "*":
                return lambda args: f(args) * g(args)
            if op == "//":
                return lambda args: f(args) // g(args)
            return lambda args: f(args) % g(args)

        body = self._fold(leaf, neg, binop)
        text = str(self)

        def run(*args: int) -> int:
            if len(args) != len(names):
                raise SymlayoutError(f"{text}: expected {len(names)} argument(s), got {len(args)}")
            try:
                return body(args)
            except ZeroDivisionError:
                shown = ", ".join(f"{n}={a}" for n, a in zip(names, args))
                raise SymlayoutError(f"{text}: division by zero ({shown})") from None

        return run

    def to_sympy(self, symbols: dict[str, Any], *, mod: str = "Mod"):
        """The expression as a sympy expression.

        ``a // b`` becomes ``sympy.floor(a / b)``; ``a % b`` becomes
        ``sympy.Mod(a, b)`` (both floor semantics, like Python).

        Caution: sympy 1.14.0 (and older) can *wrongly* rewrite a ``Mod`` of a
        product that contains another ``Mod`` when the symbols are declared
        integer, e.g. ``Mod(2*Mod(t, 8), 7)`` becomes ``Mod(2*Mod(t, 8)**2, 7)``
        (sympy issue #28744, fixed upstream by PR #28759 after 1.14.0).
        ``mod="floor"`` avoids ``sympy.Mod`` altogether by writing ``a % b`` as
        ``a - b*floor(a/b)``; use it (or symbols without the integer
        assumption) when the result must be trusted.

        >>> import sympy
        >>> t = sympy.Symbol("t", integer=True, nonnegative=True)
        >>> parse_expr("t % 8 + (t // 8) * 16").to_sympy({"t": t})
        Mod(t, 8) + 16*floor(t/8)
        >>> parse_expr("t % 8").to_sympy({"t": t}, mod="floor")
        t - 8*floor(t/8)
        """
        import sympy

        if mod not in ("Mod", "floor"):
            raise SymlayoutError(f"to_sympy: mod must be 'Mod' or 'floor', got {mod!r}")

        def leaf(node: Expr):
            return self._leaf(node, sympy.Integer, symbols, "sympy symbol")

        def binop(node: BinOp, a, b):
            op = node.op
            if op in _RING:
                return _RING[op](a, b)
            if b.is_zero:
                raise SymlayoutError(f"{self}: division by zero in {node}")
            if op == "//":
                return sympy.floor(a / b)
            if mod == "floor":
                return a - b * sympy.floor(a / b)
            return sympy.Mod(a, b)

        return self._fold(leaf, lambda node, a: -a, binop)

    def to_z3(self, env: dict[str, Any], divisors: list | None = None):
        """The expression as a Z3 integer term, with Python's floor ``//`` and ``%``.

        Z3's integer ``/`` and ``%`` are *Euclidean* (the remainder is never
        negative); they equal Python's floor division only for a positive divisor.
        So ``q = a // b`` is ``a / b`` for a positive constant ``b``, ``(-a) / (-b)``
        for a negative one, ``If(b > 0, a / b, (-a) / (-b))`` for a divisor with
        variables, and ``a % b`` is ``a - b * q``.  A divisor containing a variable
        is accepted only when ``divisors`` is a list: it is appended there and the
        caller must rule out zero; otherwise it raises :class:`SymlayoutError`
        ("not supported").  A constant zero divisor raises "division by zero".

        >>> import z3
        >>> t = z3.Int("t")
        >>> e = parse_expr("t % 8 + (t // 8) * 16").to_z3({"t": t})
        >>> z3.simplify(z3.substitute(e, (t, z3.IntVal(-3))))
        -11
        >>> parse_expr("t // t").to_z3({"t": t})
        Traceback (most recent call last):
        ...
        symlayout.errors.SymlayoutError: t // t: to_z3: division by the non-constant expression 't' is not supported
        """
        import z3

        def leaf(node: Expr):
            return self._leaf(node, z3.IntVal, env, "Z3 term")

        def binop(node: BinOp, a, b):
            op = node.op
            if op in _RING:
                return _RING[op](a, b)
            if node.right.variables():
                if divisors is None:
                    raise SymlayoutError(
                        f"{self}: to_z3: division by the non-constant expression "
                        f"'{node.right}' is not supported")
                divisors.append(b)
                q = z3.If(b > 0, a / b, (-a) / (-b))
            else:
                d = node.right.evaluate({})
                if d == 0:
                    raise SymlayoutError(f"{self}: division by zero in {node}")
                q = a / z3.IntVal(d) if d > 0 else (-a) / z3.IntVal(-d)
            return q if op == "//" else a - b * q

        return self._fold(leaf, lambda node, a: -a, binop)

    def _leaf(self, node: Expr, const, env: dict, what: str):
        """A leaf as a term of the target algebra: ``const(value)`` or the variable's term in ``env``."""
        if isinstance(node, Const):
            return const(node.value)
        try:
            return env[node.name]
        except KeyError:
            raise SymlayoutError(f"{self}: no {what} for variable {node.name!r}") from None

    def variables(self) -> set[str]:
        """Names of the variables the expression uses.

        >>> sorted(parse_expr("t + i * (t // 2)").variables())
        ['i', 't']
        """
        return {n.name for n in self._nodes() if isinstance(n, Var)}

    def __str__(self) -> str:
        """Python-syntax text with minimal parentheses; it parses back to an
        equal tree.

        >>> str(parse_expr("((a - b)) - (c * (d % 4))"))
        'a - b - c * (d % 4)'
        """
        def leaf(node: Expr) -> tuple[str, int]:
            if isinstance(node, Const):
                return str(node.value), (_PREC_ATOM if node.value >= 0 else _PREC_UNARY)
            return node.name, _PREC_ATOM

        def neg(node: Neg, a: tuple[str, int]) -> tuple[str, int]:
            text, prec = a
            return "-" + (text if prec >= _PREC_UNARY else f"({text})"), _PREC_UNARY

        def binop(node: BinOp, a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
            p = _PREC[node.op]
            left = a[0] if a[1] >= p else f"({a[0]})"
            right = b[0] if b[1] > p else f"({b[0]})"
            return f"{left} {node.op} {right}", p

        return self._fold(leaf, neg, binop)[0]


@dataclass(frozen=True, slots=True)
class Const(Expr):
    """An integer literal.

    >>> Const(5).evaluate({})
    5
    """
    value: int

    def __repr__(self) -> str:
        return f"Const({self.value})"


@dataclass(frozen=True, slots=True)
class Var(Expr):
    """A variable, looked up in the environment.

    >>> Var("t").evaluate({"t": 3})
    3
    """
    name: str

    def __repr__(self) -> str:
        return f"Var({self.name!r})"


@dataclass(frozen=True, slots=True)
class Neg(Expr):
    """Unary minus.

    >>> Neg(Var("t")).evaluate({"t": 3})
    -3
    """
    operand: Expr

    def __repr__(self) -> str:
        return f"Neg({self.operand!r})"


@dataclass(frozen=True, slots=True)
class BinOp(Expr):
    """A binary operation; ``op`` is one of ``+ - * // %``.

    >>> BinOp("//", Const(-7), Const(2)).evaluate({})
    -4
    """
    op: str
    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        if self.op not in _PREC:
            raise SymlayoutError(f"unknown operator {self.op!r} (expected one of + - * // %)")

    def __repr__(self) -> str:
        return f"BinOp({self.op!r}, {self.left!r}, {self.right!r})"


# --------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------

def _quote(text: str) -> str:
    """The input, double-quoted, escaped onto one line, shortened if long."""
    if len(text) > 60:
        text = text[:57] + "..."
    return json.dumps(text, ensure_ascii=False)


_SINGLE = {"+", "-", "*", "%", "(", ")"}


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    """``(kind, value, column)`` tokens; kind is 'int', 'name', 'op' or 'end'."""
    out: list[tuple[str, str, int]] = []
    i, n = 0, len(text)

    def fail(col: int, msg: str) -> None:
        raise NotationError(f"{_quote(text)}: column {col}: {msg}")

    while i < n:
        ch = text[i]
        col = i + 1
        if ch in " \t\r\n":
            i += 1
        elif ch.isascii() and ch.isdigit():
            j = i
            while j < n and text[j].isascii() and text[j].isdigit():
                j += 1
            if j < n and (text[j].isascii() and (text[j].isalpha() or text[j] in "_.")):
                fail(j + 1, f"unexpected {text[j]!r} after the number {text[i:j]!r}")
            if j - i > MAX_DIGITS:
                fail(col, f"integer literal longer than {MAX_DIGITS} digits")
            if j - i > 1 and text[i] == "0":
                fail(col, f"integer literal {text[i:j]!r} has a leading zero")
            out.append(("int", text[i:j], col))
            i = j
        elif ch.isascii() and (ch.isalpha() or ch == "_"):
            j = i
            while j < n and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
                j += 1
            name = text[i:j]
            if keyword.iskeyword(name) or keyword.issoftkeyword(name):
                fail(col, f"unexpected keyword {name!r}")
            out.append(("name", name, col))
            i = j
        elif text.startswith("//", i):
            out.append(("op", "//", col))
            i += 2
        elif text.startswith("**", i):
            fail(col, "'**' is not supported")
        elif ch == "/":
            fail(col, "'/' is not supported (use '//' for floor division)")
        elif ch in _SINGLE:
            out.append(("op", ch, col))
            i += 1
        else:
            fail(col, f"unexpected {ch!r}")
    out.append(("end", "", n + 1))
    return out


class _Parser:
    def __init__(self, text: str, variables: set[str] | None):
        self.text = text
        self.variables = variables
        self.tokens = _tokenize(text)
        self.pos = 0

    def fail(self, col: int, msg: str) -> None:
        raise NotationError(f"{_quote(self.text)}: column {col}: {msg}")

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.pos]

    def unexpected(self, tok: tuple[str, str, int]) -> None:
        kind, value, col = tok
        if kind == "end":
            self.fail(col, "unexpected end of expression")
        self.fail(col, f"unexpected {value!r}")

    def check_depth(self, depth: int, col: int) -> None:
        if depth > MAX_DEPTH:
            self.fail(col, f"expression nests deeper than {MAX_DEPTH} levels")

    # expr := term (('+' | '-') term)*
    def expr(self, depth: int) -> tuple[Expr, int]:
        left, ldepth = self.term(depth)
        while True:
            kind, value, col = self.peek()
            if kind == "op" and value in ("+", "-"):
                self.pos += 1
                right, rdepth = self.term(depth)
                ldepth = max(ldepth, rdepth) + 1
                self.check_depth(ldepth, col)
                left = BinOp(value, left, right)
            else:
                return left, ldepth

    # term := unary (('*' | '//' | '%') unary)*
    def term(self, depth: int) -> tuple[Expr, int]:
        left, ldepth = self.unary(depth)
        while True:
            kind, value, col = self.peek()
            if kind == "op" and value in ("*", "//", "%"):
                self.pos += 1
                right, rdepth = self.unary(depth)
                ldepth = max(ldepth, rdepth) + 1
                self.check_depth(ldepth, col)
                left = BinOp(value, left, right)
            else:
                return left, ldepth

    # unary := ('-' | '+') unary | atom
    def unary(self, depth: int) -> tuple[Expr, int]:
        kind, value, col = self.peek()
        if kind == "op" and value in ("-", "+"):
            self.check_depth(depth + 1, col)
            self.pos += 1
            operand, d = self.unary(depth + 1)
            if value == "+":
                return operand, d
            self.check_depth(d + 1, col)
            return Neg(operand), d + 1
        return self.atom(depth)

    # atom := INT | NAME | '(' expr ')'
    def atom(self, depth: int) -> tuple[Expr, int]:
        tok = self.peek()
        kind, value, col = tok
        if kind == "int":
            self.pos += 1
            node: Expr = Const(int(value))
            ndepth = 1
        elif kind == "name":
            self.pos += 1
            self.check_name(value, col)
            node = Var(value)
            ndepth = 1
        elif kind == "op" and value == "(":
            self.check_depth(depth + 1, col)
            self.pos += 1
            node, ndepth = self.expr(depth + 1)
            close = self.peek()
            if close[0] != "op" or close[1] != ")":
                if close[0] == "end":
                    self.fail(col, "unclosed '('")
                self.unexpected(close)
            self.pos += 1
        else:
            self.unexpected(tok)
        # a call or a juxtaposed operand directly after an operand
        nxt = self.peek()
        if nxt[0] == "op" and nxt[1] == "(":
            self.fail(nxt[2], "unexpected '(' (function calls are not allowed)")
        if nxt[0] in ("int", "name"):
            self.fail(nxt[2], f"unexpected {nxt[1]!r} (missing operator?)")
        return node, ndepth

    def check_name(self, name: str, col: int) -> None:
        if self.variables is None or name in self.variables:
            return
        known = sorted(self.variables)
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        if close:
            hint = f" (did you mean {close[0]!r}?)"
        elif known:
            hint = " (known: " + ", ".join(known) + ")"
        else:
            hint = " (no variables are defined)"
        self.fail(col, f"unknown variable {name!r}{hint}")


def parse_expr(text: str, variables: set[str] | None = None) -> Expr:
    """Parse an integer expression (see the module docstring for the grammar).

    ``variables``, when given, is the set of allowed names; any other name is
    a :class:`NotationError` that suggests the closest known name.  Every
    error is a :class:`NotationError` whose one-line message quotes the input
    and names the 1-based column.

    >>> parse_expr("t % 8 + (t // 8) * 16", {"t"}).evaluate({"t": 9})
    17
    >>> parse_expr("t % 8 + ?")
    Traceback (most recent call last):
    ...
    symlayout.errors.NotationError: "t % 8 + ?": column 9: unexpected '?'
    >>> parse_expr("tt + 1", {"t", "i"})
    Traceback (most recent call last):
    ...
    symlayout.errors.NotationError: "tt + 1": column 1: unknown variable 'tt' (did you mean 't'?)
    """
    if not isinstance(text, str):
        raise NotationError(f"expression must be a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise NotationError(
            f"{_quote(text)}: column {MAX_LENGTH + 1}: expression longer than {MAX_LENGTH} characters")
    if variables is not None:
        variables = set(variables)
    parser = _Parser(text, variables)
    if parser.peek()[0] == "end":
        parser.fail(len(text) + 1, "empty expression")
    node, _ = parser.expr(0)
    tok = parser.peek()
    if tok[0] != "end":
        if tok[0] == "op" and tok[1] == ")":
            parser.fail(tok[2], "unmatched ')'")
        parser.unexpected(tok)
    return node
