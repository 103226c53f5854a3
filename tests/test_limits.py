"""Limits and argument checks (issue 26 items 7, 8, 11): every unbounded input is a one-line input error
before any work, or honours its limit; what would have been exit 4 is an input error or a verdict; the API
rejects bad arguments with TypeError/ValueError-style symlayout errors; user strings reach the terminal
escaped.  Malformed configuration files are in tests/test_bad_input.py (section "limits")."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import symlayout
from symlayout import cli
from symlayout.algebra.composed import Swizzle, fits_cute_int
from symlayout.algebra.notation import parse
from symlayout.errors import (AlgebraError, ArgumentTypeError, ArgumentValueError, NotationError, SymlayoutError,
                              printable)
from symlayout.prove.schedule import shard_files

ROOT = Path(__file__).resolve().parent.parent

HOPPER = """\
name = "{name}"
[mma]
atom = "SM90_64x64x16_F16F16F16_SS<GMMA::Major::MN,GMMA::Major::MN>"

[smem.A]
type = "half_t"
layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((64,2),(8,8),(1,3)):({stride},(64,1024),(0,8192))"

[smem.B]
type = "half_t"
layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((64,2),(8,8),(1,3)):((1,512),(64,1024),(0,8192))"
"""

SM80 = """\
name = "{name}"
[mma]
atom = "SM80_16x8x16_F16F16F16F16_TN"
layout = "(2,2,1)"

[copy.A]
atom = "SM75_U32x2_LDSM_N"
type = "half_t"
smem = "(32,16):(16,1)"
"""


def _cli(argv, capsys):
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def _one_line_error(rc, out, err):
    assert rc == 2, (rc, out, err)
    assert err.startswith("symlayout: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "internal error" not in err


# ---------------------------------------------------------------- swizzles: CuTe's 32-bit masks


@pytest.mark.parametrize("b,m,s,ok", [(3, 3, 26, True), (3, 3, 27, False), (1, 30, 1, True), (1, 31, 1, False),
                                      (2, 28, 2, True), (0, 31, 0, True), (0, 32, 0, False), (4, 3, -25, True),
                                      (4, 3, -26, False), (0, 3, 40, False)])
def test_swizzle_limit_is_cutes(b, m, s, ok):
    """The boundary g++ draws on CuTe 4.2's ``Swizzle<B,M,S>`` (``(2^B-1) << (M+|S|)`` must fit an int as an
    unsigned value, the shift below 32): ``Swizzle<3,3,26>`` compiles, ``<3,3,27>`` and ``<1,31,1>`` do not."""
    assert fits_cute_int(b, m, s) == ok
    if ok:
        assert Swizzle(b, m, s)(0) == 0
        assert str(parse(f"Sw<{b},{m},{s}>")) == f"Sw<{b},{m},{s}>"
    else:
        with pytest.raises(AlgebraError, match="32-bit"):
            Swizzle(b, m, s)
        with pytest.raises(NotationError, match="column 1.*32-bit"):
            parse(f"Sw<{b},{m},{s}> o 0 o (8,8):(8,1)")


SWIZZLE_CASES = [(3, 3, 26), (3, 3, 27), (1, 30, 1), (1, 31, 1), (2, 28, 2), (0, 31, 0), (0, 32, 0), (4, 3, -25),
                 (4, 3, -26), (0, 3, 40), (3, 4, 3)]


@pytest.mark.slow
@pytest.mark.parametrize("b,m,s", SWIZZLE_CASES)
def test_swizzle_limit_against_cute_cpp(b, m, s, tmp_path):
    """g++ against the CuTe headers: ``Swizzle<B,M,S>`` (its masks and one application) compiles exactly
    when :func:`fits_cute_int` says so."""
    import subprocess
    from cute_cpp import cute_site
    inc = cute_site()
    if inc is None:
        pytest.skip("no CuTe headers (SYMLAYOUT_CUTE_SITE)")
    src = tmp_path / "sw.cpp"
    src.write_text("#include <cute/swizzle.hpp>\nint main() { cute::Swizzle<%d,%d,%d> sw; "
                   "return int(sw(5)) + int(decltype(sw)::swizzle_code & 1); }\n" % (b, m, s))
    p = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *[f"-I{d}" for d in inc], str(src)],
                       capture_output=True, text=True)
    assert (p.returncode == 0) == fits_cute_int(b, m, s), p.stderr[-500:]


def test_huge_swizzle_is_an_error_at_once(capsys):
    """``Sw<3,3,16e9>`` built a 2**16e9 mask (2 GB, then exit 4); a 5,000-digit parameter overflowed int()."""
    for text in ("Sw<3,3,16000000000>", "Sw<3,3,16000000000> o (8,8):(8,1)", "Sw<3,3," + "9" * 5000 + ">",
                 "(_" + "9" * 5000 + ",2)"):
        _one_line_error(*_cli(["layout", "--no-table", text], capsys))


# ---------------------------------------------------------------- the member replay honours timeout_s


FAMILY = """\
[params]
m = { min = 1, max = 64 }

[mma]
atom = "SM80_16x8x16_F16F16F16F16_TN"
layout = "(2,2,1)"
permutation = ["32", "32", "16"]

[copy.A]
atom = "SM75_U32x2_LDSM_N"
type = "half_t"
align = 128
smem = "Sw<2,3,26> o 0 o (32*m,16):(16,1)"
"""


def test_member_replay_honours_timeout():
    """CuTe's compile-time checks of a family the symbolic replay cannot decide are replayed member by member
    (up to 4096); the replays ignored ``timeout_s`` (a 4096-member family ran 45 s under ``--timeout 5``)."""
    rep = symlayout.prove(symlayout.config(FAMILY), timeout_s=1e-3)
    assert rep.results and all(r.status == "unknown" for r in rep.results)
    assert all("time budget (timeout_s = 0.001)" in r.detail for r in rep.results), rep.results[0].detail


# ---------------------------------------------------------------- --shard


def test_shard_count_is_bounded(capsys):
    _one_line_error(*_cli(["prove", "proofs/hopper", "--shard", "1/" + "1" + "0" * 20], capsys))


def test_more_shards_than_files_split_the_same_way():
    """With N > files, shard k holds the k-th file of the N = files split (the loop over N shards per file
    was O(N): ``--shard 1/10**20`` did not fit an index)."""
    files = [f"f{i}.toml" for i in range(7)]
    costs = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0]
    base = [shard_files(files, k, 7, costs) for k in range(1, 8)]
    more = [shard_files(files, k, 10 ** 20, costs) for k in (1, 2, 3, 4, 5, 6, 7, 8, 10 ** 20)]
    assert more[:7] == base and more[7:] == [[], []]
    assert sorted(f for s in base for f in s) == sorted(files)


# ---------------------------------------------------------------- GMMA: recast<uint128_t> CuTe does not compile


@pytest.mark.parametrize("stride", ["(3,512)", "(1,513)"])
def test_gmma_upcast_stride_is_cutes_rejection(stride):
    """A GMMA smem stride that recast<uint128_t> cannot divide (half: 8 elements per uint128_t) is CuTe's
    ``Divisibility condition`` static_assert (g++: upcast<8> of a stride-3 layout): ``descriptor`` is refuted
    as CuTe's rejection; it was an error naming neither key nor line."""
    rep = symlayout.prove(symlayout.config(HOPPER.format(name="x", stride=stride)))
    d = rep["descriptor[A]"]
    assert d.status == "refuted" and d.method == "cute", d
    assert "recast<uint128_t>" in d.counterexample.message and "[smem.A]" in d.counterexample.message
    assert rep["descriptor[B]"].status == "proved"


# ---------------------------------------------------------------- API arguments


@pytest.mark.parametrize("kw,exc,needle", [
    (dict(timeout_s=-1), ArgumentValueError, "timeout_s"), (dict(timeout_s=0), ArgumentValueError, "timeout_s"),
    (dict(timeout_s=math.nan), ArgumentValueError, "timeout_s"), (dict(timeout_s=math.inf), ArgumentValueError, "finite"),
    (dict(timeout_s=1e9), ArgumentValueError, "at most"), (dict(timeout_s="10"), ArgumentTypeError, "str"),
    (dict(timeout_s=True), ArgumentTypeError, "bool"), (dict(method="bogus"), ArgumentValueError, "bogus"),
    (dict(method=None), ArgumentTypeError, "method"), (dict(properties="coverage"), ArgumentTypeError, "str"),
    (dict(properties=["covrage"]), ArgumentValueError, "covrage"), (dict(properties=[1]), ArgumentTypeError, "1"),
    (dict(properties=[]), ArgumentValueError, "empty"), (dict(properties=5), ArgumentTypeError, "int"),
    (dict(properties=["coverage", "coverage"]), ArgumentValueError, "twice"),
])
def test_prove_arguments(kw, exc, needle):
    cfg = symlayout.config(SM80.format(name="x"))
    with pytest.raises(exc, match=needle) as e:
        symlayout.prove(cfg, **kw)
    assert isinstance(e.value, SymlayoutError) and "\n" not in str(e.value)
    assert isinstance(e.value, TypeError if exc is ArgumentTypeError else ValueError)


def test_prove_arguments_accepted():
    cfg = symlayout.config(SM80.format(name="x"))
    rep = symlayout.prove(cfg, properties=("coverage", "bank_conflicts"), method="exhaustive", timeout_s=5)
    assert [r.property for r in rep.results] == ["coverage", "bank_conflicts"]
    assert symlayout.prove(cfg, timeout_s=2).summary == symlayout.prove(cfg, timeout_s=2.5).summary


def test_load_argument():
    with pytest.raises(ArgumentTypeError, match="path"):
        symlayout.load(3)


# ---------------------------------------------------------------- user strings on the terminal


def test_printable():
    assert printable("a\x1b[8mb") == "a\\x1b[8mb"
    assert printable("\u202eevil") == "\\u202eevil" and printable("\x7f\x9b") == "\\x7f\\x9b"
    assert printable("café ok / (x)") == "café ok / (x)"


@pytest.mark.parametrize("command", ["prove", "cute"])
def test_name_escapes_are_printed_escaped(command, tmp_path, capsys):
    """``name = "\\u001b[8m..."`` reached the terminal raw: ESC[8m hid the rest of the report."""
    p = tmp_path / "c.toml"
    p.write_text(SM80.format(name="hidden \\u001b[8m secret \\u202e"))
    rc, out, err = _cli([command, str(p)], capsys)
    assert rc in (0, 1), err
    assert "\x1b" not in out and "\u202e" not in out
    assert "hidden \\x1b[8m secret \\u202e" in out


def test_error_paths_are_printed_escaped(tmp_path, capsys):
    p = tmp_path / "bad\x1b[8m.toml"
    p.write_text(SM80.format(name="x").replace("half_t", "halft"))
    rc, out, err = _cli(["prove", str(p)], capsys)
    _one_line_error(rc, out, err)
    assert "\x1b" not in err and "bad\\x1b[8m.toml" in err


# ---------------------------------------------------------------- process-wide caches are bounded


def test_stride_decisions_are_bounded(monkeypatch):
    """The Hopper families' stride decisions were kept forever (one entry per distinct global stride
    expression of every family a long-lived process proves); with the bound at 1 the verdicts are the
    same and the cache holds at most one entry."""
    from symlayout.prove.hopper import obligations as hopper
    text = (ROOT / "proofs" / "hopper" / "family_stages_tma.toml").read_text()
    others = [text.replace('gmem = "(M,K):(K,1)"', f'gmem = "(M,K):({k}*K,1)"') for k in (2, 3)]
    hopper._STRIDE_DECIDED.clear()
    want = [symlayout.prove(symlayout.config(t)).summary for t in [text] + others]
    assert len(hopper._STRIDE_DECIDED) >= 2
    monkeypatch.setattr(hopper, "STRIDE_DECIDED_KEPT", 1)
    hopper._STRIDE_DECIDED.clear()
    got = []
    for t in [text] + others:
        got.append(symlayout.prove(symlayout.config(t)).summary)
        assert len(hopper._STRIDE_DECIDED) <= 1
    assert got == want


def test_routes_and_parsed_notation_stay_within_their_bounds(monkeypatch):
    """The two caches that grow with every distinct configuration (measured: 10,000 distinct SM80 files grow
    the peak RSS by about 2.7 KB each while they fill) hold at most their bounds, and the verdicts are the
    ones an empty cache gives."""
    from symlayout.algebra import notation
    from symlayout.prove.copy import model
    cfgs = [symlayout.config(SM80.format(name=f"c{i}").replace('"(2,2,1)"', f'"{lay}"')
                             .replace("U32x2", atom).replace("(32,16):(16,1)", f"(64,16):({pitch},1)"))
            for i, (lay, atom, pitch) in enumerate((lay, atom, pitch) for lay in ("(1,1,1)", "(2,1,1)", "(1,2,1)",
                                                                                  "(2,2,1)")
                                                   for atom in ("U32x2", "U32x4") for pitch in (16, 24, 40))]
    want = [symlayout.prove(c).summary for c in cfgs]
    monkeypatch.setattr(model, "ROUTES_KEPT", 3)
    monkeypatch.setattr(notation, "MEMO_SIZE", 8)
    model._ROUTES.clear()                   # (a bound is kept as entries are added)
    notation._PARSED.clear()
    got = []
    for c in cfgs:
        got.append(symlayout.prove(symlayout.config(c.text)).summary)
        assert len(model._ROUTES) <= 3 and len(notation._PARSED) <= 8
    assert got == want
