"""Regression tests of issue 12, items 13 and 16 (the algebra part), one failing case per bug.

* Item 13: a zero divisor reachable from user input (``shape_div(3,0)``, ``ceil_div(3,0)``,
  ``idx2crd`` over a size-0 mode) is a one-line error with exit 2, never an internal error; a
  symbolic divisor that may be 0 records ``b != 0``.
* Item 16: each symbolic result that used to differ from the concrete (static) result at some
  symbol value while every side condition held -- ``logical_divide((2*m,4):(1,2*m),4)`` at m = 7,
  ``downcast`` at n = 1, and the bugs the property test in ``test_symbolic_vs_concrete.py`` found --
  now either has a side condition that is false there, or is the concrete result.
"""
from __future__ import annotations

import pytest
import sympy

from symlayout import cli
from symlayout.algebra import int_tuple as it
from symlayout.algebra import layout as L
from symlayout.algebra.calculator import evaluate
from symlayout.errors import AlgebraError
from symlayout.algebra.layout import Layout
from symlayout.algebra.notation import parse
from symlayout.algebra.symbolic import collect_conditions, symbols

from test_symbolic_vs_concrete import OPS, check_case, holds, inst, table

m, n = symbols("m n")


# ---------------------------------------------------------------- item 13: division by zero


@pytest.mark.parametrize("expr,frag", [
    ("shape_div(3,0)", "shape_div: division by zero (3 / 0)"),
    ("ceil_div(3,0)", "ceil_div: division by zero (3 / 0)"),
    ("shape_div(0,0)", "shape_div: division by zero"),
    ("ceil_div((3,4),(0,1))", "ceil_div: division by zero (3 / 0)"),
    ("shape_div((4,m),0)", "shape_div: division by zero"),
    ("ceil_div(m, 2-2)", "ceil_div: division by zero (m / 0)"),
    ("idx2crd(3,(0,2))", "idx2crd: modulo by zero (3 % 0)"),
    ("crd2idx(3,(0,2),(1,1))", "crd2idx: modulo by zero (3 % 0)"),
])
def test_zero_divisors_are_one_line_input_errors(capsys, expr, frag):
    rc = cli.main(["layout", expr])
    out, err = capsys.readouterr()
    assert rc == 2, (rc, out, err)                      # input error, not an internal error (4)
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("symlayout: error: ") and frag in err, err


def test_zero_divisors_in_the_api():
    with pytest.raises(AlgebraError, match="division by zero"):
        it.shape_div(3, 0)
    with pytest.raises(AlgebraError, match="division by zero"):
        it.ceil_div((4, 5), 0)
    with pytest.raises(AlgebraError, match="modulo by zero"):
        it.idx2crd(5, (2, 0, 3))
    assert it.shape_div(0, 3) == 0                       # 0 divides nothing but is divisible


def test_a_symbolic_divisor_that_may_be_zero_is_a_side_condition():
    r = evaluate("ceil_div(3, m-1)")
    assert [c.text for c in r.conditions] == ["ceil_div: nonzero divisor: m-1 != 0"]
    r = evaluate("shape_div(m, m-1)")
    assert any(c.text == "shape_div: nonzero divisor: m-1 != 0" for c in r.conditions)


# ---------------------------------------------------------------- item 16: the examples


def _conditions(op, *args):
    with collect_conditions() as conds:
        R = op(*args)
    return R, conds


def test_logical_divide_of_an_unmerged_layout_excludes_m_7():
    A = parse("(2*m,4):(1,2*m)")
    R, conds = _conditions(L.logical_divide, A, 4)
    assert not all(holds(c, {"m": 7}) for c in conds)   # size 64 here, 56 for the static layout
    agreeing = 0
    for v in range(1, 17):
        C = L.logical_divide(inst(A, {"m": v}), 4)
        if all(holds(c, {"m": v}) for c in conds):
            Ri = inst(R, {"m": v})
            assert Ri.size() == C.size() and table(Ri) == table(C), v
            agreeing += 1
    assert agreeing >= 4                                  # m = 2, 4, 6, 8, ...: still a useful result


def test_downcast_of_a_symbolic_unit_stride_excludes_n_1():
    A = parse("(4,8):(1,n)")
    R, conds = _conditions(L.downcast, A, 2)
    assert [c.text for c in conds] == ["downcast<2>: symbolic stride is not 1 or -1: n != 1"]
    assert table(L.downcast(inst(A, {"n": 1}), 2)) != table(inst(R, {"n": 1}))
    for v in range(2, 9):
        assert table(L.downcast(inst(A, {"n": v}), 2)) == table(inst(R, {"n": v}))


# ---------------------------------------------------------------- item 16: what the property test found
#
# (operation, symbolic arguments, a value where the result used to be wrong with every condition true)

FOUND = [
    # composition on modes static CuTe merges ((m,8):(1,m) is 8m:1): the weak condition held at m=5
    ("composition", ("(m,8):(1,m)", "4:3"), {"m": 5}),
    ("composition", ("(2,m,4):(1,2,2*m)", "4:3"), {"m": 2}),
    # filter: a symbolic stride that is 0 drops its mode statically
    ("filter", ("(8*m,(m)):(8*(m//2),(4*m*m))",), {"m": 1}),
    ("nullspace", ("(4,m):(m-1,1)",), {"m": 1}),
    # complement: negative symbolic stride, a size-1 mode static CuTe filters out
    ("complement", ("(2):(n-8)",), {"m": 1, "n": 1}),
    ("complement", ("((m*m)):((4*m*m))", m * m), {"m": 1}),
    # the divides with a tiler of negative or zero stride (its complement), a zero divisor in the result
    ("logical_divide", ("(16*m,4):(1,16*m)", "2:m-4"), {"m": 2}),
    ("logical_divide", ("(2*m*m,3,m):(3*m,m,1)", ("m:m-8", L._)), {"m": 1}),
    ("zipped_divide", ("(m):(0)", ("m%4+1:16",)), {"m": 4}),
    ("tiled_divide", ("m:m-8", "(2):(m%2)"), {"m": 2}),
    # left_inverse of a symbolic mode of size 1
    ("left_inverse", ("n%2+1:4",), {"m": 2, "n": 2}),
    # right_inverse: a symbolic stride equal to the chain's (static CuTe follows it)
    ("right_inverse", ("m*m:m-1",), {"m": 2}),
    ("right_inverse", ("(m,4):(1,4)",), {"m": 4}),
    # max_common_vector/layout: the static stride-1 prefix
    ("max_common_vector", ("4:m", "(m,(2*m*m)):(1,(m))"), {"m": 1}),
    ("max_common_layout", ("m%8+1:m", "m+8:1"), {"m": 1}),
    # make_fragment_like: the order static instantiations see
    ("make_fragment_like", ("(4,m,2):(1,8,4*m)",), {"m": 2}),
    # shape_div: the weak divisibility static CuTe asserts
    ("shape_div", ("((2),((m+1)//2,m))", 6), {"m": 2}),
]


def _arg(x):
    if isinstance(x, str):
        return parse(x)
    if type(x) is tuple:
        return tuple(_arg(e) for e in x)
    return x


@pytest.mark.parametrize("name,args,bad", FOUND, ids=[f"{f[0]}-{i}" for i, f in enumerate(FOUND)])
def test_found_bugs_are_excluded_or_fixed(name, args, bad):
    args = tuple(_arg(a) for a in args)
    names = sorted(bad)
    if len(names) == 1:
        points = [bad] + [{names[0]: v} for v in range(1, 13)]
    else:
        points = [bad] + [{names[0]: a, names[1]: b} for a in (1, 2, 3, 5, 8) for b in (1, 2, 4, 7)]
    assert check_case(name, args, points) == []
    # and at the value where it was wrong: excluded by a condition, or now equal to the concrete result
    op = OPS[name][0]
    with collect_conditions() as conds:
        try:
            R = op(*args)
        except AlgebraError:
            return                                        # refused symbolically: nothing claimed
    if all(holds(c, bad) for c in conds):
        C = op(*inst(args, bad))
        Ri = inst(R, bad)
        assert (Ri == C) if not isinstance(C, Layout) else (table(Ri) == table(C) and Ri.size() == C.size())


def test_static_instantiations_are_what_symbolic_right_inverse_gives():
    # (16,32*m):(32*m,1) inverts fully for every m; CuTe's dynamic-int answer would stop at 32*m
    R, conds = _conditions(L.right_inverse, parse("(16,32*m):(32*m,1)"))
    assert conds == [] and str(R) == "(32*m,16):(16,1)"
    assert L.max_common_vector(parse("(32*m,16):(16,1)"), parse("(32*m,16):(16,1)")) == 512 * m


def test_max_alignment_refuses_symbolic_layouts_and_counts_static_entries_of_dynamic_ones():
    with pytest.raises(AlgebraError, match="symbolic"):
        L.max_alignment(parse("(32*m,16):(16,1)"))
    from symlayout.algebra.symbolic import DynInt
    # CuTe: a dynamic shape counts as 1, a dynamic stride as 0
    assert L.max_alignment(Layout((DynInt(32), 16), (16, 1))) == L.max_alignment(Layout((1, 16), (16, 1))) == 16
    assert L.max_alignment(Layout((32, 16), (16, 1))) == 512


def test_conditions_print_in_the_notation():
    texts = [c.text for c in evaluate("composition((m,8):(1,m), 4:3)").conditions]
    assert "composition: exact, or no mode merges statically: 3%m = 0 or m%3 = 0 or 4 <= (m+2)//3" in texts
    assert all("Mod(" not in t and "ceiling" not in t and "Min(" not in t for t in texts)


def test_symbolic_ceil_div_and_shape_div_match_static_values():
    for v in range(1, 13):
        with collect_conditions() as conds:
            r = it.shape_div((2 * m, 4), 4)
        if all(holds(c, {"m": v}) for c in conds):
            assert inst(r, {"m": v}) == it.shape_div((2 * v, 4), 4)
    assert sympy.simplify(it.ceil_div(16, m) - sympy.ceiling(16 / m)) == 0


# ---------------------------------------------------------------- item 13: no internal error from the calculator


@pytest.mark.parametrize("expr,frag", [
    ("crd2idx(((0),(4)), -4)", "does not match shape"),
    ("crd2idx(m, 8, (m%2))", "not congruent"),
    ("idx2crd(-1, (4), ((n-3,4,m)))", "not congruent"),
    ("idx2crd((1,2,3), (4,4))", "does not match shape"),
    ("prefix_product(m-1, ((-1,-4)))", "must be an integer"),
])
def test_ill_formed_int_tuple_calls_are_input_errors(capsys, expr, frag):
    rc = cli.main(["layout", expr])
    out, err = capsys.readouterr()
    assert rc == 2 and frag in err and err.count("\n") == 1, (rc, err)


def _fuzz_expressions(rnd, count):
    """Random calls of every calculator function on layouts/shapes with 0, negative and symbolic entries."""
    import re
    from symlayout.algebra.calculator import FUNCTIONS
    ints = ["0", "1", "2", "3", "4", "-1", "-4", "8", "m", "m-1", "m-m", "2*m", "m//2", "m%2", "n-3", "0*m"]

    def shape(d=0):
        if d < 2 and rnd.random() < 0.4:
            return "(" + ",".join(shape(d + 1) for _ in range(rnd.randint(1, 3))) + ")"
        return rnd.choice(ints)

    def layout():
        s = shape()
        return f"{s}:" + re.sub(r"[^(),]+", lambda _m: rnd.choice(ints), s)

    def arg():
        c = rnd.random()
        if c < 0.5:
            return layout()
        if c < 0.8:
            return shape()
        return "(" + ",".join(rnd.choice([layout(), shape(), "_"]) for _ in range(rnd.randint(1, 2))) + ")"
    names = sorted(FUNCTIONS)
    for _ in range(count):
        yield f"{rnd.choice(names)}({', '.join(arg() for _ in range(rnd.randint(1, 3)))})"


@pytest.mark.parametrize("seed,count", [(1, 300), pytest.param(2, 6000, marks=pytest.mark.slow)])
def test_calculator_fuzz_has_no_internal_errors(seed, count):
    """Every expression gives a result or a one-line SymlayoutError (exit 2), never another exception (exit 4)."""
    import random
    from symlayout.algebra.calculator import format_result
    from symlayout.errors import SymlayoutError
    escapes = {}
    for text in _fuzz_expressions(random.Random(seed), count):
        try:
            format_result(evaluate(text))
        except SymlayoutError as e:
            if "\n" in str(e):
                escapes.setdefault("two-line message", text)
        except Exception as e:   # noqa: BLE001
            escapes.setdefault(f"{text.split('(')[0]}: {type(e).__name__}", f"{text}: {e}")
    assert not escapes, escapes
