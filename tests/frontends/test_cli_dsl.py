"""``symlayout dsl FILE.py`` on the bundled CuTe DSL example (examples/dsl/ampere_gemm.py) and on
broken copies of it; one-line errors for what cannot be proved (most tests skip without the DSL)."""
from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from frontend_expect import same_layout
from symlayout.algebra.composed import ComposedLayout, Swizzle
from symlayout.algebra.layout import Layout, tile_to_shape
from symlayout.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dsl" / "ampere_gemm.py"
needs_dsl = pytest.mark.usefixtures("cute")


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def broken_copy(tmp_path, old: str, new: str) -> Path:
    """The example with one line of its setup changed, as a user's mistake would change it."""
    text = EXAMPLE.read_text()
    assert text.count(old) == 1, old
    p = tmp_path / "my_gemm.py"
    p.write_text(text.replace(old, new))
    return p


@needs_dsl
def test_the_bundled_example_is_proved(capsys):
    rc, out, err = run(capsys, "dsl", EXAMPLE, "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert [c["path"].rsplit("::", 1)[1] for c in doc["configs"]] == ["k_major", "mn_major"]
    for c in doc["configs"]:
        assert c["ok"] and c["results"], c
        assert {r["operand"] for r in c["results"]} >= {"A", "B"}
        assert all(r["status"] == "proved" for r in c["results"])
        assert c["dsl"]["version"] in (1, 2)
        if c["dsl"]["version"] == 1:   # what the version-1 prover does not read is named, not dropped
            assert any(x.startswith("[g2s.A]") for x in c["dsl"]["not_proved_here"])
    assert doc["summary"]["refuted"] == doc["summary"]["unmet"] == doc["summary"]["errors"] == 0
    rc, out, _ = run(capsys, "dsl", EXAMPLE)
    assert rc == 0 and "0 refuted" in out and out.rstrip().endswith("exit 0")
    rc, out, _ = run(capsys, "dsl", EXAMPLE, "-q")   # -q still says that parts were not proved
    assert rc == 0 and "PROVED" not in out
    assert ("parts not proved here" in out) == (doc["configs"][0]["dsl"]["version"] == 1)


@needs_dsl
def test_the_example_writes_cutlass_sm80_smem_tiles(capsys):
    """The DSL objects give the tiles of CUTLASS's SM80 f16 GEMM: Sw<2,3,3> o (8,32) K-major,
    Sw<3,3,3> o (64,8) M/N-major, tiled to (128,32,3), read by ldmatrix / ldmatrix.trans."""
    rc, out, _ = run(capsys, "dsl", EXAMPLE, "--toml")
    assert rc == 0
    docs = [tomllib.loads(d.split("\n", 1)[1]) for d in out.split("# ---- ")[1:]]
    assert len(docs) == 2
    k, mn = docs
    assert k["mma"] == mn["mma"] == {"atom": "SM80_16x8x16_F32F16F16F32_TN", "layout": "(2,2,1):(1,2,0)",
                                     "permutation": ["32", "32", "16"]}
    kmajor = tile_to_shape(ComposedLayout(Swizzle(2, 3, 3), 0, Layout((8, 32), (32, 1))), (128, 32, 3))
    mmajor = tile_to_shape(ComposedLayout(Swizzle(3, 3, 3), 0, Layout((64, 8), (1, 64))), (128, 32, 3))
    for x in "AB":
        assert (k["copy"][x]["atom"], mn["copy"][x]["atom"]) == ("SM75_U32x4_LDSM_N", "SM75_U16x8_LDSM_T")
        assert same_layout(k["copy"][x]["smem"], kmajor) and same_layout(mn["copy"][x]["smem"], mmajor)
        assert (k["g2s"][x]["thr"], mn["g2s"][x]["thr"]) == ("(32,4):(4,1)", "(16,8):(1,16)")
    assert k["stages"] == {"count": 3}


@needs_dsl
@pytest.mark.parametrize("old,new,prop", [
    # sA/sB without their swizzle: the 8 rows of an ldmatrix phase, 64 bytes apart, share banks
    ("swizzled = cute.make_composed_layout(cute.make_swizzle(bits, 3, 3), 0, atom)", "swizzled = atom",
     "bank_conflicts"),
    # ldmatrix's .trans inverted for A: CuTe does not compile the copy (it cannot vectorize)
    ('ldsm_A = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(a_major != "K", 4), ab)',
     'ldsm_A = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(a_major == "K", 4), ab)', None),
])
def test_a_broken_copy_is_refuted_in_the_dsl_words(tmp_path, capsys, old, new, prop):
    path = broken_copy(tmp_path, old, new)
    rc, out, err = run(capsys, "dsl", path, "--json")
    assert rc == 1, err
    doc = json.loads(out)
    bad = [(c["path"], r) for c in doc["configs"] for r in c["results"] if r["status"] == "refuted"]
    assert bad and doc["summary"]["unmet"] == len(bad)
    for where, r in bad:
        assert r["operand"] == "A" or prop == "bank_conflicts"
        msg = r["counterexample"]["message"]
        assert msg.startswith(f"{r['operand']}: tiled_copy_s2r_{r['operand']} = LdMatrix8x8x16bOp("), msg
        assert f"on s{r['operand']}_layout" in msg
    if prop:
        assert {r["property"] for _, r in bad} == {prop}
        assert "bank conflict" in bad[0][1]["counterexample"]["message"]
    else:   # ldmatrix's .trans flag inverted: wrong in both configurations
        assert {w.rsplit("::", 1)[1] for w, _ in bad} == {"k_major", "mn_major"}
        assert "CuTe does not compile" in bad[0][1]["counterexample"]["message"]
    rc, out, _ = run(capsys, "dsl", path, "-q")
    assert rc == 1 and "UNMET" in out and "tiled_copy_s2r_A = LdMatrix8x8x16bOp(" in out


@needs_dsl
def test_function_option_and_module_level_configs(tmp_path, capsys):
    p = tmp_path / "mine.py"
    p.write_text(f"import sys\nsys.path.insert(0, {str(EXAMPLE.parent)!r})\n"
                 "import ampere_gemm\n"
                 "def just_one():\n    return ampere_gemm.ampere_gemm()\n"
                 "from symlayout.cute_dsl import trace\n"
                 "cfg = trace(lambda: ampere_gemm.ampere_gemm(a_major='M'))\n")
    rc, out, err = run(capsys, "dsl", p, "--function", "just_one", "--json")
    assert rc == 0, err
    assert [c["path"] for c in json.loads(out)["configs"]] == [str(p)]
    rc, out, err = run(capsys, "dsl", p, "--json")   # no symlayout_configs(): the module's DslConfig objects
    assert rc == 0, err
    assert [c["path"] for c in json.loads(out)["configs"]] == [f"{p}::cfg"]


@needs_dsl
@pytest.mark.filterwarnings("ignore:Passing None as MLIR Context:RuntimeWarning")   # the DSL's, outside a trace
@pytest.mark.parametrize("text,message", [
    ("import cutlass\nx = 1\n", "mine.py: no DslConfig found: define symlayout_configs()"),
    ("def symlayout_configs():\n    return 42\n", "mine.py: symlayout_configs() returned int: expected DslConfig"),
    ("import cutlass, cutlass.cute as cute\nfrom symlayout.cute_dsl import DslConfig\n"
     "def symlayout_configs():\n"
     "    c = DslConfig(cute.make_tiled_mma(cute.nvgpu.MmaUniversalOp(cutlass.Float32), cute.make_layout((4, 8, 1))))\n"
     "    return c.copy('A', 'MyCopy', cute.make_layout((4, 4)))\n",
     "mine.py:5: not supported: MyCopy"),
    ("import cutlass.cute as cute\nL = cute.make_layout((4, 8))\n",
     "mine.py:2: DSLUserCodeTypeError: DSL objects exist only at trace time: build them in symlayout_configs()"),
    ("def symlayout_configs(:\n", "mine.py:1: SyntaxError: "),
])
def test_bad_files_are_one_line_errors(tmp_path, capsys, text, message):
    p = tmp_path / "mine.py"
    p.write_text(text)
    rc, out, err = run(capsys, "dsl", p)
    assert rc == 2 and out == ""
    assert err.startswith(f"symlayout: error: {tmp_path}/{message}"), err
    assert err.count("\n") == 1


def test_without_the_dsl_a_one_line_error(monkeypatch, capsys, tmp_path):
    """No CuTe DSL importable: exit 2 and the install command, before the file is read."""
    for name in ("cutlass", "cutlass.cute", "nvidia_cutlass_dsl"):
        monkeypatch.setitem(sys.modules, name, None)    # import raises ImportError
    monkeypatch.delenv("SYMLAYOUT_DSL_SITE", raising=False)
    rc, out, err = run(capsys, "dsl", EXAMPLE)
    assert (rc, out) == (2, "")
    assert err == "symlayout: error: the CuTe DSL is not installed: pip install 'symlayout[dsl]' (nvidia-cutlass-dsl)\n"
