"""Integer terms with proven bounds, lowered to Z3 bit-vectors that cannot wrap.

A Z3 bit-vector of ``w`` bits computes modulo ``2**w``: a product that
exceeds it wraps around, and a violation at a large interior parameter value
can vanish.  Here every integer term carries an interval ``[lo, hi]`` that
contains its value for *every* value of its variables in their declared
ranges (interval arithmetic, one rule per operation, including ``//``, ``%``,
products, XOR and shifts).  A formula is lowered at the width of its widest
term plus one bit, in two's complement, so every bit-vector operation computes
the exact integer result:

* ``+ - *`` never wrap; comparisons are signed;
* ``//`` and ``%`` are Python's (CuTe's) floor division and modulo, for
  negative operands too (``bvsmod``; floor-corrected ``bvsdiv``); unsigned
  division, masks and shifts are used only where the intervals show both
  operands non-negative (or the divisor is a power of two);
* ``& ^ >> <<`` are Python's two's-complement operations;
* each variable's range is asserted next to the formula (:meth:`Lowering.ranges`).

A divisor whose interval contains 0 is *guarded*: the lowering collects
``divisor != 0`` (:attr:`Lowering.guards`) for the caller to prove first.

:func:`from_sympy` translates a sympy integer expression (``+ * Pow``,
``floor``, ``ceiling``, ``Mod``, ``Abs``, ``Min``, ``Max``, ``Piecewise``);
anything else raises :class:`Untranslatable`.

>>> m = var("m", 1, 1 << 31)
>>> t = 16 * ((m - 5) // 7); (t.lo, t.hi)
(-16, 4908534032)
>>> L = Lowering.of([t > 0]); L.width
35
>>> evaluate((m - 5) // 7, {"m": 3}), evaluate((m - 5) % 7, {"m": 3})
(-1, 5)
"""
from __future__ import annotations

import itertools

from ...algebra import int_tuple as it
from ...errors import SymlayoutError

__all__ = ["Untranslatable", "Term", "Bool", "var", "const", "lift", "If", "And", "Or", "Not", "Implies",
           "Lowering", "IntLowering", "Env", "tighten", "evaluate", "from_sympy", "crd2idx", "swizzle",
           "layout_term", "signed_bits"]


class Untranslatable(SymlayoutError):
    """A term that has no sound bit-vector encoding (an unsupported function, an unbounded power)."""


class OutOfTime(Exception):
    """The property's time budget is spent."""


def signed_bits(v: int) -> int:
    """Bits of ``v`` in two's complement (sign bit included).

    >>> [signed_bits(v) for v in (0, 1, -1, 127, 128, -128, -129)]
    [1, 2, 1, 8, 9, 8, 9]
    """
    return (v if v >= 0 else ~v).bit_length() + 1


def _pow2(v) -> int | None:
    """``k`` when ``v == 2**k`` (``v`` a positive int), else None."""
    return v.bit_length() - 1 if isinstance(v, int) and v > 0 and v & (v - 1) == 0 else None


# ---------------------------------------------------------------- integer terms


class Term:
    """An integer term with an interval ``[lo, hi]`` valid over its variables' ranges.

    ``need``: bits its lowering needs (its interval's, or more for temporaries).
    Operators build new terms (ints are lifted); comparisons build :class:`Bool`.
    """
    __slots__ = ("op", "args", "lo", "hi", "need", "_agg", "_lin")

    def __init__(self, op: str, args: tuple, lo: int, hi: int, need: int = 0):
        self.op, self.args, self.lo, self.hi = op, args, lo, hi
        self.need = max(signed_bits(lo), signed_bits(hi), need)
        self._agg = None              # (widest need, nonlinear) below and at this node: subtree_facts()
        self._lin = None              # its linear form: linear()

    @property
    def value(self):
        """The constant's value (None when not a constant)."""
        return self.args[0] if self.op == "const" else None

    def __repr__(self):
        if self.op == "const":
            return str(self.args[0])
        if self.op == "var":
            return self.args[0]
        return f"{self.op}({', '.join(map(repr, self.args))})"

    __hash__ = object.__hash__

    # arithmetic
    def __add__(self, o):
        return add(self, lift(o))

    def __radd__(self, o):
        return add(lift(o), self)

    def __sub__(self, o):
        return add(self, neg(lift(o)))

    def __rsub__(self, o):
        return add(lift(o), neg(self))

    def __neg__(self):
        return neg(self)

    def __mul__(self, o):
        return mul(self, lift(o))

    def __rmul__(self, o):
        return mul(lift(o), self)

    def __floordiv__(self, o):
        return floordiv(self, lift(o))

    def __rfloordiv__(self, o):
        return floordiv(lift(o), self)

    def __mod__(self, o):
        return mod(self, lift(o))

    def __rmod__(self, o):
        return mod(lift(o), self)

    def __and__(self, o):
        return bitand(self, lift(o))

    __rand__ = __and__

    def __xor__(self, o):
        return bitxor(self, lift(o))

    __rxor__ = __xor__

    def __rshift__(self, o):
        return shr(self, lift(o))

    def __lshift__(self, o):
        return shl(self, lift(o))

    # comparisons
    def __eq__(self, o):
        return compare("eq", self, lift(o))

    def __ne__(self, o):
        return compare("ne", self, lift(o))

    def __lt__(self, o):
        return compare("lt", self, lift(o))

    def __le__(self, o):
        return compare("le", self, lift(o))

    def __gt__(self, o):
        return compare("lt", lift(o), self)

    def __ge__(self, o):
        return compare("le", lift(o), self)

    def __bool__(self):
        raise TypeError("a symbolic Term has no truth value")


def const(v: int) -> Term:
    """An integer constant.

    >>> const(-3).lo, const(-3).need
    (-3, 3)

    Constants are immutable and shared (one node per value: fewer nodes to walk and lower).
    """
    hit = _CONSTS.get(v)
    if hit is not None and type(v) is int:
        return hit
    v = int(v)
    t = Term("const", (v,), v, v)
    if len(_CONSTS) < 1 << 16:
        _CONSTS[v] = t
    return t


_CONSTS: dict = {}


def var(name: str, lo: int, hi: int) -> Term:
    """A variable ranging over ``[lo, hi]`` (asserted by the lowering).

    >>> var("m", 1, 4096).need
    14
    """
    if lo > hi:
        raise ValueError(f"empty range [{lo}, {hi}] for {name}")
    return Term("var", (name,), int(lo), int(hi))


def lift(x) -> Term:
    """An int (or bool) as a constant; a Term as itself."""
    if isinstance(x, Term):
        return x
    if isinstance(x, (int,)):
        return const(int(x))
    raise TypeError(f"cannot use {x!r} ({type(x).__name__}) in an integer term")


def _is(t, v):
    return t.op == "const" and t.args[0] == v


def add(a: Term, b: Term) -> Term:
    if a.op == "const" and b.op == "const":
        return const(a.args[0] + b.args[0])
    if _is(a, 0):
        return b
    if _is(b, 0):
        return a
    return Term("add", (a, b), a.lo + b.lo, a.hi + b.hi)


def neg(a: Term) -> Term:
    if a.op == "const":
        return const(-a.args[0])
    return Term("neg", (a,), -a.hi, -a.lo)


def mul(a: Term, b: Term) -> Term:
    if a.op == "const" and b.op == "const":
        return const(a.args[0] * b.args[0])
    if _is(a, 0) or _is(b, 0):
        return const(0)
    if _is(a, 1):
        return b
    if _is(b, 1):
        return a
    ps = (a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi)
    return Term("mul", (a, b), min(ps), max(ps))


def _corners(f, a: Term, b: Term):
    vs = [f(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    return min(vs), max(vs)


def floordiv(a: Term, b: Term) -> Term:
    """``a // b`` (floor).  A divisor interval containing 0 makes a guarded term."""
    if a.op == "const" and b.op == "const":
        if b.args[0] == 0:
            raise Untranslatable(f"division by zero: {a.args[0]} // 0")
        return const(a.args[0] // b.args[0])
    if _is(b, 1):
        return a
    if b.lo > 0 or b.hi < 0:
        # floor(a/b) is monotone in a, and in b for a fixed sign of a: extremes at the corners
        lo, hi = _corners(lambda x, y: x // y, a, b)
        if b.lo > 0 and a.lo >= 0 and a.hi < b.lo:
            lo = hi = 0
        return Term("floordiv", (a, b), lo, hi, need=_quotient_need(a, b))
    m = max(abs(a.lo), abs(a.hi))                 # |b| >= 1 under the guard
    return Term("floordiv", (a, b), -m, m)


def _quotient_need(a: Term, b: Term) -> int:
    """Bits of ``d*q`` and ``d*q + d - 1`` when ``a // d`` is a defined quotient (constant ``d``)."""
    if b.op != "const":
        return 0
    m = max(abs(a.lo), abs(a.hi)) + 2 * abs(b.args[0])
    return signed_bits(m)


def mod(a: Term, b: Term) -> Term:
    """``a % b`` (Python: the sign follows the divisor)."""
    if a.op == "const" and b.op == "const":
        if b.args[0] == 0:
            raise Untranslatable(f"division by zero: {a.args[0]} % 0")
        return const(a.args[0] % b.args[0])
    if _is(b, 1) or _is(b, -1):
        return const(0)
    if b.lo > 0:
        if a.lo >= 0 and a.hi < b.lo:
            return a                               # already reduced
        lo, hi = 0, b.hi - 1
        if a.lo >= 0:
            hi = min(hi, a.hi)
        return Term("mod", (a, b), lo, hi, need=_quotient_need(a, b))
    if b.hi < 0:
        lo, hi = b.lo + 1, 0
        if a.hi <= 0:
            lo = max(lo, a.lo)
        return Term("mod", (a, b), lo, hi, need=_quotient_need(a, b))
    m = max(abs(b.lo), abs(b.hi)) - 1
    return Term("mod", (a, b), -m, m)


def _bits_range(a: Term, b: Term):
    """``[-2**k, 2**k - 1]`` holding every two's-complement combination of ``a`` and ``b``."""
    k = max(a.need, b.need) - 1
    return -(1 << k), (1 << k) - 1


def bitand(a: Term, b: Term) -> Term:
    if a.op == "const" and b.op == "const":
        return const(a.args[0] & b.args[0])
    if _is(a, 0) or _is(b, 0):
        return const(0)
    if a.lo >= 0 and b.lo >= 0:
        return Term("and", (a, b), 0, min(a.hi, b.hi))
    if a.lo >= 0 or b.lo >= 0:
        return Term("and", (a, b), 0, a.hi if a.lo >= 0 else b.hi)
    lo, hi = _bits_range(a, b)
    return Term("and", (a, b), lo, hi)


def bitxor(a: Term, b: Term) -> Term:
    if a.op == "const" and b.op == "const":
        return const(a.args[0] ^ b.args[0])
    if _is(a, 0):
        return b
    if _is(b, 0):
        return a
    if a.lo >= 0 and b.lo >= 0:
        return Term("xor", (a, b), 0, (1 << max(a.hi, b.hi).bit_length()) - 1)
    lo, hi = _bits_range(a, b)
    return Term("xor", (a, b), lo, hi)


def _check_shift(s: Term):
    if s.lo < 0:
        raise Untranslatable(f"shift by a possibly negative amount {s}")
    if s.hi > 4096:
        raise Untranslatable(f"shift by up to {s.hi} bits")


def shr(a: Term, s: Term) -> Term:
    """``a >> s`` (arithmetic, as Python's)."""
    _check_shift(s)
    if a.op == "const" and s.op == "const":
        return const(a.args[0] >> s.args[0])
    if _is(s, 0):
        return a
    lo, hi = _corners(lambda x, y: x >> y, a, s)
    return Term("shr", (a, s), lo, hi)


def shl(a: Term, s: Term) -> Term:
    """``a << s``."""
    _check_shift(s)
    if a.op == "const" and s.op == "const":
        return const(a.args[0] << s.args[0])
    if _is(s, 0):
        return a
    lo, hi = _corners(lambda x, y: x << y, a, s)
    return Term("shl", (a, s), lo, hi, need=signed_bits(max(abs(a.lo), abs(a.hi))) + s.need)


def If(c, a, b):
    """``a if c else b`` (Terms, or Python values when ``c`` is a Python bool)."""
    if isinstance(c, bool):
        return a if c else b
    if c.op == "bconst":
        return a if c.args[0] else b
    if isinstance(a, Bool) or isinstance(b, Bool):
        return Or(And(c, a), And(Not(c), b))
    a, b = lift(a), lift(b)
    return Term("ite", (c, a, b), min(a.lo, b.lo), max(a.hi, b.hi))


# ---------------------------------------------------------------- booleans


class Bool:
    """A boolean formula over :class:`Term`\\ s."""
    __slots__ = ("op", "args", "_agg")

    def __init__(self, op: str, args: tuple):
        self.op, self.args = op, args
        self._agg = None

    def __repr__(self):
        return f"{self.op}({', '.join(map(repr, self.args))})"

    def __bool__(self):
        if self.op == "bconst":
            return self.args[0]
        raise TypeError("a symbolic Bool has no truth value")

    __hash__ = object.__hash__


TRUE, FALSE = Bool("bconst", (True,)), Bool("bconst", (False,))


def _bconst(v: bool) -> Bool:
    return TRUE if v else FALSE


def linear(t: Term) -> tuple:
    """``(c, {id(atom): (atom, k)})`` with ``t == c + sum(k * atom)``: sums, negations and products by a
    constant expanded, any other node an atom (exact integer algebra); kept on the node.

    >>> m, u = var("m", 1, 8), var("u", 0, 3); c, atoms = linear((u * 32 + 5) * m + 2 * (m - u)); c
    0
    >>> sorted((repr(a), k) for a, k in atoms.values())
    [('m', 2), ('mul(add(mul(u, 32), 5), m)', 1), ('u', -2)]
    """
    r = t._lin
    if r is not None:
        return r
    op, args = t.op, t.args
    if op == "const":
        r = (args[0], {})
    elif op == "add":
        (ca, xa), (cb, xb) = linear(args[0]), linear(args[1])
        atoms = dict(xa)
        for i, (x, k) in xb.items():
            k += atoms[i][1] if i in atoms else 0
            if k:
                atoms[i] = (x, k)
            else:
                atoms.pop(i, None)
        r = (ca + cb, atoms)
    elif op == "neg":
        c, xs = linear(args[0])
        r = (-c, {i: (x, -k) for i, (x, k) in xs.items()})
    elif op == "mul" and (args[0].op == "const" or args[1].op == "const"):
        f, x = (args[0].args[0], args[1]) if args[0].op == "const" else (args[1].args[0], args[0])
        c, xs = linear(x)
        r = (c * f, {i: (y, k * f) for i, (y, k) in xs.items()} if f else {})
    else:
        r = (0, {id(t): (t, 1)})
    t._lin = r
    return r


def _difference_range(a: Term, b: Term):
    """An interval holding ``a - b`` over the variables' ranges, from their linear forms (terms that
    differ by a constant, like two addresses of one row, get a single value)."""
    (ca, xa), (cb, xb) = linear(a), linear(b)
    lo = hi = ca - cb
    for i, (x, k) in xa.items():
        if i in xb:
            k -= xb[i][1]
        if k > 0:
            lo, hi = lo + k * x.lo, hi + k * x.hi
        elif k < 0:
            lo, hi = lo + k * x.hi, hi + k * x.lo
    for i, (x, k) in xb.items():
        if i not in xa:
            if k > 0:
                lo, hi = lo - k * x.hi, hi - k * x.lo
            else:
                lo, hi = lo - k * x.lo, hi - k * x.hi
    return lo, hi


def compare(op: str, a: Term, b: Term) -> Bool:
    """``eq ne lt le`` of two terms (decided from the intervals where possible, and from the interval of
    their difference's linear form: ``addr(r) + 1 != addr(r + 1)`` is false for every value of a row-major
    layout's parameters, whatever their ranges)."""
    r = _compare_intervals(op, a.lo, a.hi, b.lo, b.hi, a is b or (a.op == "const" and b.op == "const"
                                                                  and a.args[0] == b.args[0]))
    if r is None and not (a.op == "const" and b.op == "const"):
        lo, hi = _difference_range(a, b)
        r = _compare_intervals(op, lo, hi, 0, 0, lo == hi == 0)
    return Bool(op, (a, b)) if r is None else r


def _compare_intervals(op, alo, ahi, blo, bhi, same):
    """TRUE/FALSE when ``a op b`` is decided by ``a`` in ``[alo, ahi]``, ``b`` in ``[blo, bhi]`` (``same``:
    they are one value), else None."""
    if op == "eq":
        if same:
            return TRUE
        if ahi < blo or bhi < alo:
            return FALSE
    elif op == "ne":
        if same:
            return FALSE
        if ahi < blo or bhi < alo:
            return TRUE
    elif op == "lt":
        if ahi < blo:
            return TRUE
        if alo >= bhi:
            return FALSE
    elif op == "le":
        if ahi <= blo:
            return TRUE
        if alo > bhi:
            return FALSE
    return None


def _is_py(x):
    return isinstance(x, (bool, int)) and not isinstance(x, (Term, Bool))


def And(*xs):
    """Conjunction (Python bools in, a Python bool out)."""
    if all(_is_py(x) for x in xs):
        return all(xs)
    out = []
    for x in xs:
        if _is_py(x) or x.op == "bconst":
            if not bool(x):
                return FALSE
            continue
        out.append(x)
    if not out:
        return TRUE
    return out[0] if len(out) == 1 else Bool("and", tuple(out))


def Or(*xs):
    """Disjunction (Python bools in, a Python bool out)."""
    if all(_is_py(x) for x in xs):
        return any(xs)
    out = []
    for x in xs:
        if _is_py(x) or x.op == "bconst":
            if bool(x):
                return TRUE
            continue
        out.append(x)
    if not out:
        return FALSE
    return out[0] if len(out) == 1 else Bool("or", tuple(out))


def Not(x):
    if _is_py(x):
        return not x
    if x.op == "bconst":
        return _bconst(not x.args[0])
    return Bool("not", (x,))


def Implies(a, b):
    return Or(Not(a), b)


# ---------------------------------------------------------------- evaluation and lowering


def _children(n):
    return [c for c in n.args if isinstance(c, (Term, Bool))]


_NODE = (Term, Bool)


def postorder(roots, done=None):
    """Every node reachable from ``roots``, children first (iterative: chains can be long);
    nodes whose id is in ``done`` are neither returned nor expanded."""
    seen = set()
    done = () if done is None else done             # (looked up, not copied: a lowering's memo grows large)
    out = []
    stack = [(r, False) for r in reversed(roots) if isinstance(r, _NODE)]
    while stack:
        n, expanded = stack.pop()
        if expanded:
            out.append(n)
            continue
        i = id(n)
        if i in seen or i in done:
            continue
        seen.add(i)
        stack.append((n, True))
        for c in n.args:
            if isinstance(c, _NODE):
                j = id(c)
                if j not in seen and j not in done:
                    stack.append((c, False))
    return out


_NONLINEAR_OPS = frozenset(("mul", "floordiv", "mod"))


def subtree_facts(roots) -> tuple:
    """``(widest need, nonlinear)`` over every node reachable from ``roots``: the bits the widest term
    needs, and whether a product or a divisor involves two non-constant terms.  Computed once per node
    (terms are immutable) and kept on it, so queries over shared terms do not walk them again.

    >>> m = var("m", 0, 100); subtree_facts([m * 3 < 7]), subtree_facts([m * m < 7])
    ((10, False), (15, True))
    """
    stack = [r for r in roots if isinstance(r, _NODE) and r._agg is None]
    while stack:
        n = stack[-1]
        if n._agg is not None:
            stack.pop()
            continue
        pending = [c for c in n.args if isinstance(c, _NODE) and c._agg is None]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        term = isinstance(n, Term)
        w = n.need if term else 0
        nl = term and n.op in _NONLINEAR_OPS and all(a.op != "const" for a in n.args)
        for c in n.args:
            if isinstance(c, _NODE):
                cw, cnl = c._agg
                if cw > w:
                    w = cw
                nl = nl or cnl
        n._agg = (w, nl)
    w, nl = 0, False
    for r in roots:
        if isinstance(r, _NODE):
            w, nl = max(w, r._agg[0]), nl or r._agg[1]
    return w, nl


def evaluate(node, values: dict):
    """The value of a Term/Bool with Python integers (variables from ``values``).

    >>> x = var("x", -8, 8); evaluate(If(x < 0, -x, x) % 3, {"x": -7})
    1
    """
    memo = {}
    for n in postorder([node]):
        a = [memo[id(c)] if isinstance(c, (Term, Bool)) else c for c in n.args]
        memo[id(n)] = _EVAL[n.op](values, n, *a)
    return memo[id(node)]


def _fdiv(x, y):
    if y == 0:
        raise ZeroDivisionError("division by zero in a guarded term")
    return x // y


def _fmod(x, y):
    if y == 0:
        raise ZeroDivisionError("division by zero in a guarded term")
    return x % y


_EVAL = {
    "const": lambda env, n, v: v,
    "var": lambda env, n, name: int(env[name]),
    "add": lambda env, n, a, b: a + b,
    "neg": lambda env, n, a: -a,
    "mul": lambda env, n, a, b: a * b,
    "floordiv": lambda env, n, a, b: _fdiv(a, b),
    "mod": lambda env, n, a, b: _fmod(a, b),
    "and": lambda env, n, *a: all(a) if isinstance(n, Bool) else a[0] & a[1],
    "xor": lambda env, n, a, b: a ^ b,
    "shr": lambda env, n, a, b: a >> b,
    "shl": lambda env, n, a, b: a << b,
    "ite": lambda env, n, c, a, b: a if c else b,
    "lemma": lambda env, n, a: a,
    "bconst": lambda env, n, v: v,
    "eq": lambda env, n, a, b: a == b,
    "ne": lambda env, n, a, b: a != b,
    "lt": lambda env, n, a, b: a < b,
    "le": lambda env, n, a, b: a <= b,
    "or": lambda env, n, *a: any(a),
    "not": lambda env, n, a: not a,
}


class Lowering:
    """Lower Terms/Bools to Z3 at one width; remembers variables and guards.

    ``width`` is at least one bit more than every reachable term needs
    (:meth:`of` computes it), so no operation wraps.

    >>> import z3
    >>> m = var("m", 3, 11); f = (16 + 4 * ((m - 5) // 7)) % 8 != 0
    >>> L = Lowering.of([f]); s = z3.Solver(); s.add(L(f), *L.ranges()); s.check(), s.model()[L.vars["m"]]
    (sat, 3)
    """

    def __init__(self, width: int, own_names: bool = False):
        self.width = width
        self.vars: dict = {}          # name -> z3 BitVec
        self.ranges_: dict = {}       # name -> (lo, hi)
        self.guards: list = []        # z3 Bools: divisors that must not be 0
        self.defs: list = []          # z3 Bools: definitions of auxiliary variables (quotients)
        self._memo: dict = {}
        self._consts: dict = {}
        # auxiliary variables: _q0, _q1, ... numbered in this lowering when its formulas go to a solver of their
        # own (``own_names``: the same query text whatever ran before in the process), else numbered process-wide
        # (formulas of several lowerings asserted together, as solve/ does, never share a name)
        self._fresh = itertools.count() if own_names else _FRESH

    @staticmethod
    def width_of(roots, minimum: int = 8) -> int:
        """One bit more than the widest reachable term (at least ``minimum``)."""
        return max(minimum, subtree_facts(list(roots))[0] + 1)

    @classmethod
    def of(cls, roots, minimum: int = 8, own_names: bool = False):
        return cls(cls.width_of(roots, minimum), own_names)

    def ranges(self) -> list:
        """``lo <= v <= hi`` for every variable lowered so far, and the definitions of
        the auxiliary variables (quotients by constants) the lowering introduced."""
        return [self._range(n) for n in self.vars] + list(self.defs)

    def _range(self, name):
        v, (lo, hi) = self.vars[name], self.ranges_[name]
        z3 = _z3()
        w = self.width
        return z3.And(v >= z3.BitVecVal(lo, w), v <= z3.BitVecVal(hi, w))

    def var(self, name: str):
        """The Z3 variable of ``name`` (after it was lowered)."""
        return self.vars[name]

    def __call__(self, node):
        z3 = _z3()
        if _is_py(node):
            return z3.BoolVal(bool(node)) if isinstance(node, bool) else z3.BitVecVal(int(node), self.width)
        memo = self._memo
        hit = memo.get(id(node))
        if hit is not None:
            return hit[1]
        direct = _direct_ops() if type(self) is Lowering else {}
        for n in postorder([node], memo):
            a = [memo[id(c)][1] if isinstance(c, _NODE) else c for c in n.args]
            f = direct.get(n.op)
            memo[id(n)] = (n, f(*a) if f is not None and isinstance(n, Term) is (n.op not in _CMP) else
                           self._lower(n, a))
        return memo[id(node)][1]

    def _lower(self, n, a):
        z3 = _z3()
        w = self.width
        op = n.op
        if op == "const":
            c = self._consts.get(a[0])
            if c is None:
                c = self._consts[a[0]] = z3.BitVecVal(a[0], w)
            return c
        if op == "var":
            name = a[0]
            v = self.vars.get(name)
            if v is None:
                v = self.vars[name] = z3.BitVec(name, w)
                self.ranges_[name] = (n.lo, n.hi)
            else:
                lo, hi = self.ranges_[name]
                self.ranges_[name] = (max(lo, n.lo), min(hi, n.hi))
            return v
        if op == "add":
            return a[0] + a[1]
        if op == "neg":
            return -a[0]
        if op == "mul":
            return a[0] * a[1]
        if op in ("floordiv", "mod"):
            x, y = n.args
            if y.lo <= 0 <= y.hi:
                self.guards.append(a[1] != 0)
            k = _pow2(y.value)
            if k is not None:
                return a[0] >> k if op == "floordiv" else a[0] & ((1 << k) - 1)
            if y.op == "const":
                # q = x // d as a fresh variable defined by d*q <= x <= d*q + d - 1 (d > 0; mirrored
                # for d < 0): multiplications by a constant instead of a divider circuit
                d = y.args[0]
                qlo, qhi = _corners(lambda u, v: u // v, x, y)
                name = f"_q{next(self._fresh)}"
                q = self.vars[name] = z3.BitVec(name, w)         # ranged like every variable
                self.ranges_[name] = (qlo, qhi)
                dq = q * d
                self.defs += [dq <= a[0], a[0] <= dq + (d - 1)] if d > 0 else [dq >= a[0], a[0] >= dq + (d + 1)]
                return q if op == "floordiv" else a[0] - dq
            if x.lo >= 0 and y.lo > 0:
                return z3.UDiv(a[0], a[1]) if op == "floordiv" else z3.URem(a[0], a[1])
            if op == "mod":
                return a[0] % a[1]                       # bvsmod: the sign follows the divisor
            q, r = a[0] / a[1], z3.SRem(a[0], a[1])      # truncating; floor-correct below
            return z3.If(z3.And(r != 0, (r < 0) != (a[1] < 0)), q - 1, q)
        if op == "and":
            if isinstance(n, Bool):
                return z3.And(*a)
            return a[0] & a[1]
        if op == "xor":
            return a[0] ^ a[1]
        if op == "shr":
            return a[0] >> a[1]
        if op == "shl":
            return a[0] << a[1]
        if op == "ite":
            return z3.If(a[0], a[1], a[2])
        if op == "lemma":                    # bounds proved by tighten(): asserted with the formula
            self.defs += [a[0] >= n.lo, a[0] <= n.hi]
            return a[0]
        if op == "bconst":
            return z3.BoolVal(a[0])
        if op == "eq":
            return a[0] == a[1]
        if op == "ne":
            return a[0] != a[1]
        if op == "lt":
            return a[0] < a[1]
        if op == "le":
            return a[0] <= a[1]
        if op == "or":
            return z3.Or(*a)
        if op == "not":
            return z3.Not(a[0])
        raise AssertionError(op)


def _z3():
    import z3
    return z3


_CMP = frozenset(("eq", "ne", "lt", "le"))
_DIRECT: dict = {}
_FRESH = itertools.count()


def _direct_ops() -> dict:
    """The bit-vector operations of :meth:`Lowering._lower` as the very Z3 C API calls z3py's operators make
    (``a + b`` is ``Z3_mk_bvadd``; the same terms, so the same queries and models) without z3py's per-call
    sort coercion and checks: the operands are of one width by construction."""
    if _DIRECT:
        return _DIRECT
    import z3
    from z3 import z3core as C
    BV, B, Ast = z3.BitVecRef, z3.BoolRef, z3.Ast

    def binary(mk, cls):
        def f(a, b):
            ctx = a.ctx
            return cls(mk(ctx.ctx, a.ast, b.ast), ctx)
        return f

    def neg(a):
        ctx = a.ctx
        return BV(C.Z3_mk_bvneg(ctx.ctx, a.ast), ctx)

    def ne(a, b):
        ctx = a.ctx
        return B(C.Z3_mk_distinct(ctx.ctx, 2, (Ast * 2)(a.ast, b.ast)), ctx)

    _DIRECT.update({"add": binary(C.Z3_mk_bvadd, BV), "mul": binary(C.Z3_mk_bvmul, BV), "neg": neg,
                    "xor": binary(C.Z3_mk_bvxor, BV), "shr": binary(C.Z3_mk_bvashr, BV),
                    "shl": binary(C.Z3_mk_bvshl, BV), "and": binary(C.Z3_mk_bvand, BV),
                    "eq": binary(C.Z3_mk_eq, B), "ne": ne, "lt": binary(C.Z3_mk_bvslt, B),
                    "le": binary(C.Z3_mk_bvsle, B)})
    return _DIRECT


# ---------------------------------------------------------------- sympy -> Term


def from_sympy(e, env: dict) -> Term:
    """An integer sympy expression as a Term (see :func:`_from_sympy`); an :class:`Env`
    caches the translation and narrows the term's interval to proved bounds."""
    if isinstance(env, Env):
        return env.term(e)
    return _from_sympy(e, env)


class Env(dict):
    """Symbol name -> variable, plus a translation cache; each translated non-monotone
    term (floor, mod, If) gets bounds proved by Z3 over the variables' ranges
    (:func:`tighten`), until ``deadline``.

    >>> import sympy
    >>> p = sympy.Symbol("p", positive=True, integer=True)
    >>> t = Env({"p": var("p", 1, (1 << 31) - 1)}).term(24 + sympy.floor((p + 5) / 7) - sympy.floor(p / 7))
    >>> t.op, t.lo, t.hi
    ('lemma', 24, 25)
    """

    def __init__(self, variables: dict, deadline: float | None = None, tighten_terms: bool = True):
        super().__init__(variables)
        self.deadline = deadline
        self.tighten_terms = tighten_terms
        self._memo: dict = {}

    def term(self, e) -> Term:
        key = e if not isinstance(e, int) else int(e)
        hit = self._memo.get(key)
        if hit is None:
            hit = _from_sympy(e, self)
            if self.tighten_terms:
                hit = tighten(hit, self.deadline)
            self._memo[key] = hit
        return hit


_LOOSE_OPS = frozenset(("floordiv", "mod", "ite", "and", "xor", "shr", "shl"))


#: Z3 resource units (``rlimit``: deterministic, unlike a wall-clock timeout) one bound query of :func:`tighten`
#: may use, and all of one term's queries together (about 0.25 s and 1 s of this machine's Z3)
TIGHTEN_STEP_RLIMIT = 500_000
TIGHTEN_RLIMIT = 2_000_000


def rlimit_used(s) -> int:
    """Z3 resource units a solver has used so far (its ``rlimit count``)."""
    st = s.statistics()
    return st.get_key_value("rlimit count") if "rlimit count" in st.keys() else 0


def tighten(t: Term, deadline: float | None = None, max_steps: int = 80) -> Term:
    """``t`` with its interval narrowed to bounds proved by Z3 (integer arithmetic over the
    variables' ranges): a ``lemma`` node whose lowering asserts them.  Interval arithmetic
    loses correlations (``(p+5)//7 - p//7`` is 0 or 1, not ``[-3e8, 3e8]``); the proved
    bounds keep the widths small and give the solver the range at once.  Terms without
    floor, mod or If, and terms with a guarded divisor, are returned as they are.

    The queries are bounded by Z3 resource units (:data:`TIGHTEN_STEP_RLIMIT` each,
    :data:`TIGHTEN_RLIMIT` in all), not by the clock, so the same term gets the same bounds on a
    loaded machine; past ``deadline`` it raises :class:`OutOfTime` (the property it serves is
    then undecided) instead of returning a looser term.

    >>> p = var("p", 1, 1000); t = tighten((p + 3) % 4 + (p % 4) * 0 + If(p > 500, 2, 1)); t.lo, t.hi
    (1, 5)
    """
    import time
    if t.op in ("const", "var", "lemma"):
        return t
    if not any(n.op in _LOOSE_OPS for n in postorder([t]) if isinstance(n, Term)):
        return t
    z3 = _z3()
    try:
        L = IntLowering()
        x = L(t)
    except Untranslatable:
        return t
    if L.guards:
        return t
    s = z3.Solver()
    s.add(*L.ranges())
    lo, hi = t.lo, t.hi
    start = rlimit_used(s)

    def ask(cond):
        """A value of t satisfying cond, False when none exists, None when undecided."""
        left = TIGHTEN_RLIMIT - (rlimit_used(s) - start)
        if left <= 0:
            return None
        s.push()
        s.set("rlimit", min(TIGHTEN_STEP_RLIMIT, left))
        if deadline is not None:
            ms = int(1000 * (deadline - time.perf_counter()))
            if ms <= 0:
                raise OutOfTime()
            s.set("timeout", ms)
        s.add(cond)
        r = s.check()
        v = s.model().eval(x, model_completion=True).as_long() if r == z3.sat else (False if r == z3.unsat else None)
        s.pop()
        if v is None and deadline is not None and time.perf_counter() >= deadline - 0.01:     # (the timeout, not the rlimit)
            raise OutOfTime()
        return v
    steps = 0
    a = ask(z3.BoolVal(True))                  # some attained value
    if a is None or a is False:
        return t
    top, bot = a, a                            # attained values: lo <= bot <= top <= hi
    while top < hi and steps < max_steps:     # the maximum lies in [top, hi]
        steps += 1
        mid = (top + hi + 1) // 2
        v = ask(x >= mid)
        if v is None:
            break
        if v is False:
            hi = mid - 1
        else:
            top = v
    while lo < bot and steps < max_steps:      # the minimum lies in [lo, bot]
        steps += 1
        mid = (lo + bot) // 2
        v = ask(x <= mid)
        if v is None:
            break
        if v is False:
            lo = mid + 1
        else:
            bot = v
    if (lo, hi) == (t.lo, t.hi):
        return t
    return Term("lemma", (t,), lo, hi)


def _from_sympy(e, env: dict) -> Term:
    """An integer sympy expression as a Term; ``env`` maps symbol names to Terms.

    Rational parts are floor divisions of their numerator by their denominator
    (sympy writes ``(m+1)//2`` as ``floor(m/2 + 1/2)``); ``ceiling(x)`` is
    ``-((-num) // den)``; ``Mod`` is Python's; ``Abs``, ``Min``, ``Max`` and
    ``Piecewise`` become ``If`` terms.

    >>> import sympy
    >>> m = sympy.Symbol("m", positive=True, integer=True)
    >>> t = from_sympy(sympy.Abs(4 * sympy.floor((m - 5) / 7)) + sympy.Max(m, 4), {"m": var("m", 1, 11)})
    >>> [evaluate(t, {"m": v}) for v in (1, 3, 5, 11)]
    [8, 8, 5, 11]
    """
    import sympy
    if isinstance(e, Term):
        return e
    if isinstance(e, bool):
        raise Untranslatable(f"{e} is not an integer")
    if isinstance(e, int):
        return const(e)
    e = sympy.sympify(e)
    if e.is_Integer:
        return const(int(e))
    if e.is_Symbol:
        if e.name not in env:
            raise Untranslatable(f"unknown symbol {e.name}")
        return env[e.name]
    if e.is_Rational:
        return const(int(e.p) // int(e.q))
    if e.is_Add or e.is_Mul:
        num, den = e.as_numer_denom()
        if den != 1:
            return floordiv(_from_sympy(num, env), _from_sympy(den, env))
        parts = [_from_sympy(x, env) for x in e.args]
        r = parts[0]
        for p in parts[1:]:
            r = (r + p) if e.is_Add else (r * p)
        return r
    if e.is_Pow:
        return _pow(e, env)
    if isinstance(e, sympy.floor):
        num, den = e.args[0].as_numer_denom()
        return floordiv(_from_sympy(num, env), _from_sympy(den, env))
    if isinstance(e, sympy.ceiling):
        num, den = e.args[0].as_numer_denom()
        return -floordiv(-_from_sympy(num, env), _from_sympy(den, env))
    if isinstance(e, sympy.Mod):
        return mod(_from_sympy(e.args[0], env), _from_sympy(e.args[1], env))
    if isinstance(e, sympy.Abs):
        x = _from_sympy(e.args[0], env)
        return If(x < 0, -x, x)
    if isinstance(e, (sympy.Min, sympy.Max)):
        xs = [_from_sympy(x, env) for x in e.args]
        r = xs[0]
        for x in xs[1:]:
            r = If(x < r, x, r) if isinstance(e, sympy.Min) else If(x > r, x, r)
        return r
    if isinstance(e, sympy.Piecewise):
        pieces = list(e.args)
        if pieces[-1][1] is not sympy.true:
            raise Untranslatable(f"{e} is not defined for every value (no 'otherwise' piece)")
        r = _from_sympy(pieces[-1][0], env)
        for val, cond in reversed(pieces[:-1]):
            r = If(condition_from_sympy(cond, env), _from_sympy(val, env), r)
        return r
    raise Untranslatable(f"cannot translate {e} to Z3")


def _pow(e, env):
    b, x = e.base, e.exp
    if x.is_Integer:
        n = int(x)
        if n < 0:
            return floordiv(const(1), _from_sympy(b ** (-n), env))
        r = const(1)
        base = _from_sympy(b, env)
        for _ in range(n):
            r = r * base
        return r
    if b.is_Integer and int(b) > 0:
        xt = _from_sympy(x, env)
        if xt.lo < 0 or xt.hi - xt.lo > 64:
            raise Untranslatable(f"cannot translate {e}: exponent range [{xt.lo}, {xt.hi}]")
        r = const(int(b) ** xt.hi)
        for k in range(xt.hi - 1, xt.lo - 1, -1):
            r = If(xt == k, const(int(b) ** k), r)
        return r
    raise Untranslatable(f"cannot translate {e} to Z3")


def condition_from_sympy(c, env: dict):
    """A sympy relation / And / Or / Not as a :class:`Bool`."""
    import sympy
    if c is sympy.true or c is True:
        return TRUE
    if c is sympy.false or c is False:
        return FALSE
    if isinstance(c, sympy.And):
        return And(*[condition_from_sympy(a, env) for a in c.args])
    if isinstance(c, sympy.Or):
        return Or(*[condition_from_sympy(a, env) for a in c.args])
    if isinstance(c, sympy.Not):
        return Not(condition_from_sympy(c.args[0], env))
    ops = {sympy.Eq: "eq", sympy.Ne: "ne", sympy.StrictLessThan: "lt", sympy.LessThan: "le"}
    for t, op in ops.items():
        if isinstance(c, t):
            return compare(op, from_sympy(c.lhs, env), from_sympy(c.rhs, env))
    flipped = {sympy.StrictGreaterThan: "lt", sympy.GreaterThan: "le"}
    for t, op in flipped.items():
        if isinstance(c, t):
            return compare(op, from_sympy(c.rhs, env), from_sympy(c.lhs, env))
    raise Untranslatable(f"cannot translate the condition {c} to Z3")


# ---------------------------------------------------------------- layouts


def crd2idx(c, shape, stride, env: dict) -> Term:
    """CuTe ``crd2idx`` with Term coordinates and (possibly symbolic) shape/stride:
    a mode's coordinate is split colexicographically over its sub-shape, the last
    sub-mode unreduced.

    >>> x = var("x", 0, 15)
    >>> t = crd2idx((x, const(3)), ((2, 8), 4), ((1, 16), 2), {}); evaluate(t, {"x": 13})
    103
    """
    if isinstance(c, tuple):
        r = const(0)
        for ci, s, d in zip(c, shape, stride):
            r = r + crd2idx(ci, s, d, env)
        return r
    c = lift(c)
    if it.is_tuple(shape):
        r = const(0)
        for s, d in zip(shape[:-1], stride[:-1]):
            sz = from_sympy(it.product(s), env)
            r = r + crd2idx(c % sz, s, d, env)
            c = c // sz
        return r + crd2idx(c, shape[-1], stride[-1], env)
    return c * from_sympy(stride, env)


def swizzle(x: Term, b, m, s) -> Term:
    """``Sw<B,M,S>(x) = x ^ ((x & yyy_msk) >> S)`` (``<< -S`` for ``S < 0``); ``b, m, s``
    are ints or Terms (a Term ``s`` is non-negative).

    >>> x = var("x", 0, 1023); [evaluate(swizzle(x, 3, 3, 3), {"x": v}) for v in (72, 100)]
    [64, 108]
    """
    b, m, s = (lift(v) for v in (b, m, s))
    if s.op == "const" and s.args[0] < 0:
        y = x & (((const(1) << b) - 1) << m)
        return x ^ (y << (-s.args[0]))
    y = x & (((const(1) << b) - 1) << (m + s))
    return x ^ (y >> s)


def layout_term(S, crd, env: dict) -> Term:
    """``S(crd)`` (a Layout, or a swizzled ComposedLayout ``Sw o O o B``) for a tuple
    of Term coordinates, one per top-level mode.  A concrete layout at constant
    coordinates is evaluated by the layout itself.

    >>> import sympy
    >>> from symlayout.algebra.notation import parse_layout
    >>> m = var("m", 1, 64); u = var("u", 0, 63)
    >>> t = layout_term(parse_layout("(32*m,16):(16,1)"), (u * 32 + 1, const(2)), {"m": m})
    >>> evaluate(t, {"m": 2, "u": 1})
    530
    """
    crd = tuple(lift(c) for c in crd)
    if all(c.op == "const" for c in crd) and not _free(S):
        return const(int(S(tuple(c.args[0] for c in crd))))
    if getattr(S, "is_composed", False):
        x = from_sympy(S.offset, env) + crd2idx(crd, S.inner.shape, S.inner.stride, env)
        sw = S.swizzle
        return swizzle(x, sw.b, sw.m, sw.s)
    return crd2idx(crd, S.shape, S.stride, env)


def _free(S) -> bool:
    """True when a layout has a symbolic entry."""
    import sympy
    L = S.inner if getattr(S, "is_composed", False) else S
    leaves = list(it.flatten_leaves(L.shape)) + list(it.flatten_leaves(L.stride))
    if getattr(S, "is_composed", False):
        leaves.append(S.offset)
    return any(isinstance(x, sympy.Basic) and not x.is_Integer for x in leaves)


# ---------------------------------------------------------------- unbounded integers


class IntLowering(Lowering):
    """Lower Terms/Bools to Z3 *integers* (no width at all: exact by construction).

    Bitwise operations have an integer form only with constant masks and shifts
    (``x & (2**k - 1) == x % 2**k``, ``x >> k == x // 2**k``); others raise
    :class:`Untranslatable`.  Nonlinear integer queries are often harder for Z3
    than bit-vectors, but they do not grow with the terms' magnitudes.

    >>> import z3
    >>> m = var("m", 1, 1 << 40); f = (m + 5) // 7 - m // 7 > 1
    >>> L = IntLowering(); s = z3.Solver(); s.add(L(f), *L.ranges()); s.check()
    unsat
    """

    def __init__(self):
        super().__init__(0)

    def _range(self, name):
        z3 = _z3()
        v, (lo, hi) = self.vars[name], self.ranges_[name]
        return z3.And(v >= lo, v <= hi)

    def _lower(self, n, a):
        z3 = _z3()
        op = n.op
        if op == "const":
            return z3.IntVal(a[0])
        if op == "var":
            name = a[0]
            v = self.vars.get(name)
            if v is None:
                v = self.vars[name] = z3.Int(name)
                self.ranges_[name] = (n.lo, n.hi)
            else:
                lo, hi = self.ranges_[name]
                self.ranges_[name] = (max(lo, n.lo), min(hi, n.hi))
            return v
        if op in ("floordiv", "mod"):
            x, y = n.args
            if y.lo <= 0 <= y.hi:
                self.guards.append(a[1] != 0)
            if y.lo > 0:                       # Z3 div/mod are Euclidean: floor for a positive divisor
                return a[0] / a[1] if op == "floordiv" else a[0] % a[1]
            q = z3.If(a[1] > 0, a[0] / a[1], (-a[0]) / (-a[1]))
            return q if op == "floordiv" else a[0] - a[1] * q
        if op in ("and", "xor", "shr", "shl") and isinstance(n, Term):
            x, y = n.args
            if op == "shl" and y.op == "const":
                return a[0] * (1 << y.args[0])
            if op == "shr" and y.op == "const":
                return a[0] / (1 << y.args[0])
            if op == "and":
                for p, c in ((0, y), (1, x)):
                    if c.op == "const" and _pow2(c.args[0] + 1) is not None:
                        return a[p] % (c.args[0] + 1)
            raise Untranslatable(f"{op} of non-constant operands has no integer encoding")
        return super()._lower(n, a)
