"""`symlayout layout "EXPR"`: README examples, symbolic side conditions, errors, and the CLI wrapper."""
import re
from pathlib import Path

import pytest

from cli_run import run
from symlayout import cli
from symlayout.algebra.calculator import FUNCTIONS, evaluate, format_table
from symlayout.algebra.layout import Layout, composition, function_table, logical_divide
from symlayout.algebra.notation import parse
from symlayout.config import loads_config
from symlayout.prove.engine import prove_config


def assert_one_line_error(rc, out, err, col=None):
    assert rc == 2, (rc, out, err)
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("symlayout: error: "), err
    assert "Traceback" not in err
    if col is not None:
        assert f"column {col}:" in err, err


# ---------------------------------------------------------------- README examples


def test_complement_readme(capsys):
    rc, out, err = run(capsys, "layout", "complement((4,2):(1,4), 32)")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "4:8"
    # one-row function table of 4:8
    assert re.search(r"\|\s+0 \|\s+8 \|\s+16 \|\s+24 \|", out)


def test_composition_readme(capsys):
    rc, out, err = run(capsys, "layout", "composition((6,2):(8,2), (4,3):(3,1))")
    assert rc == 0
    assert out.splitlines()[0] == "((2,2),3):((24,2),8)"
    # size 12 <= 64: a 4x3 grid follows
    assert len([ln for ln in out.splitlines() if ln.lstrip()[:1].isdigit() and "|" in ln]) == 4


def test_composition_is_functional_composition():
    A, B = parse("(6,2):(8,2)"), parse("(4,3):(3,1)")
    R = evaluate("composition((6,2):(8,2), (4,3):(3,1))").value
    assert [R(i) for i in range(R.size())] == [A(B(i)) for i in range(B.size())]


def test_nested_calls(capsys):
    rc, out, _ = run(capsys, "layout", "logical_divide(composition((6,2):(8,2), (4,3):(3,1)), (2,3))", "--no-table")
    assert rc == 0
    expect = str(logical_divide(composition(parse("(6,2):(8,2)"), parse("(4,3):(3,1)")), (2, 3)))
    assert out.strip() == expect


def test_plain_notation_prints_itself_and_grid(capsys):
    rc, out, _ = run(capsys, "layout", "(_4,_8):(_8,_1)")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "(4,8):(8,1)"
    assert lines[1].split() == [str(c) for c in range(8)]
    assert lines[3].split("|")[1:9] == [f" {v:>2} " for v in range(8)]
    assert len(lines) == 1 + 1 + 1 + 4 + 1


def test_grid_matches_cute_print_layout_semantics():
    L = parse("((2,2),(2,4)):((1,4),(2,8))")
    t = format_table(L)
    rows = [ln for ln in t.splitlines() if "|" in ln and not ln.strip().startswith("+")]
    assert len(rows) == 4
    for r, ln in enumerate(rows):
        cells = [int(c) for c in ln.split("|")[1:-1]]
        assert cells == [L(r, c) for c in range(8)]


def test_rank1_and_rank3_tables(capsys):
    rc, out, _ = run(capsys, "layout", "20:3")
    assert rc == 0 and "(index = row + column)" in out
    assert "57" in out and "60" not in out
    rc, out, _ = run(capsys, "layout", "(2,2,2):(4,2,1)")
    assert "columns: modes 1..2" in out


def test_large_layout_table_omitted(capsys):
    rc, out, _ = run(capsys, "layout", "zipped_divide((12,32):(1,12), (4,8))")
    assert rc == 0
    assert out.splitlines()[0] == "((4,8),(3,4)):((1,12),(4,96))"
    assert "function table omitted: size 384 > 64" in out


def test_no_table(capsys):
    rc, out, _ = run(capsys, "layout", "(4,8):(8,1)", "--no-table")
    assert rc == 0 and out == "(4,8):(8,1)\n"


def test_swizzle_right_inverse(capsys):
    rc, out, _ = run(capsys, "layout", "right_inverse(Sw<3,3,3> o (8,64):(64,1))", "--no-table")
    assert rc == 0
    R = evaluate("right_inverse(Sw<3,3,3> o (8,64):(64,1))").value
    C = parse("Sw<3,3,3> o (8,64):(64,1)")
    assert all(C(R(i)) == i for i in range(R.size()))
    assert out.startswith("Sw<")


def test_swizzled_layout_table(capsys):
    rc, out, _ = run(capsys, "layout", "Sw<1,0,1> o (2,2):(2,1)")
    assert rc == 0
    C = parse("Sw<1,0,1> o (2,2):(2,1)")
    rows = [ln for ln in out.splitlines() if "|" in ln and not ln.strip().startswith("+")]
    assert [[int(c) for c in ln.split("|")[1:-1]] for ln in rows] == [[C(r, c) for c in range(2)] for r in range(2)]


@pytest.mark.parametrize("expr,first", [
    ("size((4,8):(8,1))", "32"),
    ("cosize((4,8):(1,5))", "39"),
    ("upcast((4,8):(1,4), 2)", "(2,8):(1,2)"),
    ("downcast((4,(2,8)):(8,(1,2)), 4)", "(4,(8,8)):(32,(1,8))"),
    ("tile_to_shape((8,8):(8,1), (32,32))", "((8,4),(8,4)):((8,64),(1,256))"),
    ("coalesce((2,(1,6)):(1,(6,2)))", "12:1"),
    ("filter((4,1,2,3):(0,5,1,2))", "6:1"),
    ("left_inverse((2,2):(1,6))", "(6,2):(1,2)"),
    ("right_inverse((4,8):(8,1))", "(8,4):(4,1)"),
    ("max_common_vector((8,4):(1,8), ((4,2),4):((1,16),4))", "4"),
    ("nullspace((4,2,3):(0,1,0))", "(4,3):(1,8)"),
    ("zipped_divide((12,32):(1,12), (4,8))", "((4,8),(3,4)):((1,12),(4,96))"),
    ("tiled_divide((12,32):(1,12), (4,8))", "((4,8),3,4):((1,12),4,96)"),
    ("flat_divide((12,32):(1,12), (4,8))", "(4,8,3,4):(1,12,4,96)"),
    ("blocked_product((2,5):(5,1), (3,4):(1,3))", "((2,3),(5,4)):((5,10),(1,30))"),
    ("raked_product((2,5):(5,1), (3,4):(1,3))", "((3,2),(4,5)):((10,5),(30,1))"),
    ("make_layout((2,(3,4)))", "(2,(3,4)):(1,(2,6))"),
    ("make_layout((4,8), (8,1))", "(4,8):(8,1)"),
    ("make_layout_tv((2,3):(3,1), (2,2):(2,1))", "tiler: (4,6)"),
    ("(32,16):(16,1)", "(32,16):(16,1)"),
    ("crd2idx((1,2), (4,8))", "9"),
    ("idx2crd(17, (4,8))", "(1,4)"),
    ("  complement ( (4,2):(1,4) , 32 )  ", "4:8"),
])
def test_functions(capsys, expr, first):
    rc, out, err = run(capsys, "layout", expr)
    assert rc == 0, err
    assert out.splitlines()[0] == first


def test_make_layout_tv_prints_both(capsys):
    rc, out, _ = run(capsys, "layout", "make_layout_tv((2,3):(3,1), (2,2):(2,1))")
    assert rc == 0
    assert out.splitlines()[:2] == ["tiler: (4,6)", "layout_tv: ((3,2),(2,2)):((8,2),(4,1))"]


def test_every_function_has_help_and_runs_in_help(capsys):
    rc = cli.main(["layout", "--help"])
    out = capsys.readouterr().out
    assert rc == 0
    for name in FUNCTIONS:
        assert f"  {name}(" in out
    assert "exit codes:" in out


# ---------------------------------------------------------------- symbolic


def test_symbolic_without_conditions(capsys):
    rc, out, _ = run(capsys, "layout", "(32*m,16):(16,1)")
    assert rc == 0
    assert out.splitlines() == ["(32*m,16):(16,1)", "side conditions: none"]


def test_symbolic_size(capsys):
    rc, out, _ = run(capsys, "layout", "size((32*m,16):(16,1))")
    assert out.splitlines() == ["512*m", "side conditions: none"]


def test_symbolic_side_condition_printed(capsys):
    rc, out, _ = run(capsys, "layout", "upcast((4,8):(1,m), 2)")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "(2,8):(1,m//2)"
    assert lines[1] == "side conditions:"
    assert "upcast<2>" in lines[2] and "m%2 = 0" in lines[2]


def test_symbolic_composition_condition(capsys):
    rc, out, _ = run(capsys, "layout", "composition((6*m,2):(8,2), (4,3):(3,1))")
    assert rc == 0
    assert "side conditions:" in out and "composition" in out.split("side conditions:")[1]


def test_symbolic_concrete_result_still_tabled(capsys):
    rc, out, _ = run(capsys, "layout", "composition((32*m,16):(16,1), (8,4))")
    assert rc == 0
    assert out.splitlines()[0] == "(8,4):(16,1)"
    assert "|" in out and out.rstrip().endswith("side conditions: none")


def test_symbolic_undecided_condition_is_reported(capsys):
    rc, out, err = run(capsys, "layout", "upcast((4,8):(1,3*m), 2)")
    # 3*m % 2 is undecided (m even works): a condition, not an error
    assert rc == 0 and "m%2 = 0" in out


def test_symbolic_results_match_concrete_instances():
    import sympy
    m = sympy.Symbol("m", positive=True, integer=True)
    r = evaluate("tile_to_shape((8,8):(8,1), (8*m,64))").value
    for mv in (1, 2, 5):
        conc = evaluate(f"tile_to_shape((8,8):(8,1), ({8 * mv},64))").value
        sub = Layout(_subst(r.shape, m, mv), _subst(r.stride, m, mv))
        assert function_table(sub) == function_table(conc)


def _subst(t, m, v):
    if isinstance(t, tuple):
        return tuple(_subst(e, m, v) for e in t)
    if isinstance(t, int):
        return t
    return int(t.subs(m, v))


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("expr,col,needle", [
    ("complemnt((4,2):(1,4), 32)", 1, "did you mean 'complement'"),
    ("compositon((6,2):(8,2), (4,3):(3,1))", 1, "did you mean 'composition'"),
    ("foo(4:1)", 1, "unknown function 'foo'"),
    ("complement((4,2):(1,4), 32, 3)", 1, "takes 1 or 2 arguments, got 3"),
    ("composition((4,8):(1,4))", 1, "takes 2 arguments, got 1"),
    ("size()", 1, "takes 1 argument, got 0"),
    ("complement((4,2:(1,4), 32)", 11, "never closed"),
    ("complement((4,2):(1,4), 32))", 28, "unmatched ')'"),
    ("(4,8):(1", 7, "never closed"),
    ("complement((4,2):(1,4), 3$)", 26, "'$'"),
    ("composition((6,2):(8,2), (4,3):(3,1,1))", 26, "not congruent"),
    ("logical_divide(composition((6,2):(8,2), (4,3):(3,#)), (2,3))", 50, "'#'"),
    ("upcast((4,8):(1,4), -2)", 21, "positive integer"),
    ("upcast((4,8):(1,4), 0)", 21, "positive integer"),
    ("composition((6,2):(8,2), (5,3):(3,1))", 1, "composition"),
    ("tile_to_shape((8,8):(8,1), (30,64))", 1, "not divisible"),
    ("logical_divide(4:1, (2,2,2))", 1, "higher rank"),
    ("complement((4,8), 32)", 12, "make_layout((4,8))"),
    ("complement(make_layout_tv(4:1, 2:1))", 12, "pair"),
    ("complement((4,2):(1,4), 32) x", 28, "unexpected text"),
    ("", 1, "expected a layout"),
    ("size(,)", 6, "expected a layout"),
    ("size(4:1,)", 10, "expected a layout"),
    ("(0,8):(1,0)", 1, "positive"),
    ("(-4,8):(1,4)", 1, "positive"),
    ("coalesce", 1, "is a function"),
    ("__import__('os').system('x')", 1, "unknown function '__import__'"),
    ("composition(__import__('os'), 1)", 13, "unknown function '__import__'"),
    ("eval('1')", 1, "unknown function 'eval'"),
    ("exec(4:1)", 1, "unknown function 'exec'"),
    ("(4,8):(1,4); rm -rf /", 12, "';'"),
    ("Sw<3,3,3> o (8,8):(8,1) o 3", 26, "offset"),
    ("Sw<3,3> o (8,8):(8,1)", 7, ""),
    ("99999999999999999999999999999999999:1", 1, "too large"),
])
def test_errors_one_line_with_column(capsys, expr, col, needle):
    rc, out, err = run(capsys, "layout", expr)
    assert_one_line_error(rc, out, err, col)
    assert needle in err


def test_column_points_at_the_bad_character(capsys):
    expr = "logical_divide(composition((6,2):(8,2), (4,3):(3,1)), (2,@))"
    rc, out, err = run(capsys, "layout", expr)
    assert_one_line_error(rc, out, err)
    col = int(re.search(r"column (\d+)", err).group(1))
    assert expr[col - 1] == "@"


def test_deep_nesting_parentheses(capsys):
    for n in (100, 10_000):
        rc, out, err = run(capsys, "layout", "(" * n + "4" + ")" * n)
        assert_one_line_error(rc, out, err)
        assert "column" in err


def test_deep_nesting_calls(capsys):
    expr = "coalesce(" * 5000 + "4:1" + ")" * 5000
    rc, out, err = run(capsys, "layout", expr)
    assert_one_line_error(rc, out, err)
    assert "nested deeper" in err


def test_unbalanced_many(capsys):
    rc, out, err = run(capsys, "layout", ")" * 10_000)
    assert_one_line_error(rc, out, err, 1)


def test_too_long(capsys):
    rc, out, err = run(capsys, "layout", "1+" * 60_000 + "1")
    assert_one_line_error(rc, out, err)
    assert "too long" in err


@pytest.mark.parametrize("expr", ["\x00", "(4,8):(1,4)\x00", "\u0661:1", "(４,8):(1,4)", "é", "\n", "'", '"', "\\"])
def test_odd_characters(capsys, expr):
    rc, out, err = run(capsys, "layout", expr)
    assert_one_line_error(rc, out, err)


# ---------------------------------------------------------------- the CLI wrapper


def test_usage_errors_are_one_line(capsys):
    for argv in ([], ["bogus"], ["layout"], ["layout", "4:1", "--tabel"], ["prove"], ["prove", "--jobs", "0", "x"],
                 ["prove", "--timeout", "-1", "x"], ["prove", "--property", "coverag", "x"],
                 ["explain", "x.toml", "--operand", "D", "--thread", "0", "--slot", "0"],
                 ["explain", "x.toml", "--operand", "A", "--thread", "-1", "--slot", "0"]):
        rc, out, err = run(capsys, *argv)
        assert_one_line_error(rc, out, err)
    rc, out, err = run(capsys, "prove", "--property", "coverag", "x")
    assert "did you mean 'coverage'" in err


def test_help_documents_exit_codes(capsys):
    rc = cli.main(["--help"])
    out = capsys.readouterr().out
    assert rc == 0
    for code in ("0 ", "1 ", "2 ", "3 ", "4 ", "130"):
        assert f"\n  {code}" in out
    assert "SYMLAYOUT_DEBUG" in out and "SYMLAYOUT_DEBUG" in cli.__doc__


def test_internal_error_is_exit_4(capsys, monkeypatch):
    def boom(args):
        raise RuntimeError("kaputt\nsecond line")
    monkeypatch.setattr(cli.COMMANDS["layout"], "run", boom)
    monkeypatch.delenv("SYMLAYOUT_DEBUG", raising=False)
    rc, out, err = run(capsys, "layout", "4:1")
    assert rc == 4
    assert err.count("\n") == 1 and "internal error" in err and "Traceback" not in err
    monkeypatch.setenv("SYMLAYOUT_DEBUG", "1")
    rc, out, err = run(capsys, "layout", "4:1")
    assert rc == 4 and "Traceback" in err and "kaputt" in err


def test_keyboard_interrupt_is_130(capsys, monkeypatch):
    def stop(args):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli.COMMANDS["layout"], "run", stop)
    rc, out, err = run(capsys, "layout", "4:1")
    assert rc == 130 and err.count("\n") == 1


def test_missing_command_module_is_exit_2(capsys, monkeypatch, tmp_path):
    import sys
    p = tmp_path / "s.toml"
    p.write_text("x = 1\n")
    for mod in ("symlayout.solve", "symlayout.solve.search", "symlayout.solve.spec"):
        monkeypatch.setitem(sys.modules, mod, None)
    rc, out, err = run(capsys, "solve", str(p))
    assert_one_line_error(rc, out, err)
    assert "not available" in err


def test_atoms_command(capsys):
    pytest.importorskip("symlayout.atoms.mma")
    import json
    rc, out, err = run(capsys, "atoms", "--json")
    assert rc == 0
    doc = json.loads(out)
    names = {a["name"] for a in doc["atoms"]}
    assert "SM80_16x8x16_F16F16F16F16_TN" in names and "SM75_U32x2_LDSM_N" in names
    rc, out, err = run(capsys, "atoms")
    assert rc == 0 and "SM75_U32x2_LDSM_N" in out


def test_dsl_swizzle_spelling_is_the_same_swizzle(capsys):
    """The CuTe DSL prints a swizzle as ``S<B,M,S>``; it reads as ``Sw<B,M,S>`` everywhere (issue 26.2)."""
    assert parse("S<3,4,3> o 0 o (8,64):(64,1)") == parse("Sw<3,4,3> o 0 o (8,64):(64,1)")
    assert parse("S<2,3,3> o (16,32):(32,1)") == parse("Sw<2,3,3> o 0 o (16,32):(32,1)")
    assert parse("S<1,2,-3>") == parse("Sw<1,2,-3>")
    rc, out, _err = run(capsys, "layout", "S<3,4,3> o 0 o (8,64):(64,1)")
    rc2, out2, _err2 = run(capsys, "layout", "Sw<3,4,3> o 0 o (8,64):(64,1)")
    assert rc == rc2 == 0 and out == out2 and out.startswith("Sw<3,4,3> o 0 o (8,64):(64,1)")
    for expr in ("tile_to_shape({} o (8,64):(64,1), (64,64))", "upcast({}, 2)"):
        rc, out, _err = run(capsys, "layout", expr.format("S<3,3,3>"))
        rc2, out2, _err2 = run(capsys, "layout", expr.format("Sw<3,3,3>"))
        assert rc == rc2 == 0 and out == out2
    rc, _out, err = run(capsys, "layout", "(4,S<3,4,3>)")
    assert rc == 2 and "a swizzle is only allowed at the start" in err


def test_dsl_swizzle_spelling_in_configs():
    src = (Path(__file__).resolve().parents[1] / "proofs/sm80_datapath/fa2_fwd_hd64_qk.toml").read_text()
    assert "Sw<" in src
    a, b = (prove_config(loads_config(t)) for t in (src, src.replace("Sw<", "S<")))
    assert [(r.property, r.operand, r.status) for r in a.results] == \
        [(r.property, r.operand, r.status) for r in b.results] and a.results
    hop = (Path(__file__).resolve().parents[1] / "proofs/hopper/fa3_fwd_hd64_qk_ss.toml").read_text()
    assert "Sw<3,4,3> o smem_ptr" in hop
    cfg = loads_config(hop.replace("Sw<3,4,3> o smem_ptr", "S<3,4,3> o smem_ptr"))
    assert str(cfg.smem["A"].layout).startswith("Sw<3,4,3> o smem_ptr[16b](unset) o")
