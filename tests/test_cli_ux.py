"""The CLI as a user meets it (issue 17) and the Python API (issue 16): one test per item.

prove DIR robustness, version-2 [expect] keys, pytest items per property, --version /
colour / -q / explain, CuTe spellings and type aliases, the too-few-vals fix, per-command
help, atoms filters, a `symlayout cute` program that compiles, layout --table, pictures
and the HTML report (checked structurally), extract wired, the public API.
"""
from __future__ import annotations

import doctest
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from cli_run import run, write
from symlayout import cli

REPO = Path(__file__).resolve().parents[1]
SEED000 = REPO / "proofs" / "seeds" / "seed_000_A_x2.toml"
MMA = '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\nlayout = "(2,2,1)"\n'
COPY_A = '[copy.A]\natom = "SM75_U32x2_LDSM_N"\ntype = "half_t"\nsmem = "(32,16):(16,1)"\n'
# A and B both conflict (2-way for A, 2-way for B through an unswizzled N-major tile)
COPY_B = '[copy.B]\natom = "SM75_U32x2_LDSM_N"\ntype = "half_t"\nsmem = "(32,16):(16,1)"\n'
OFF16 = MMA + '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\n' \
                              'smem = "Sw<3,3,3> o 16 o (32,64):(64,1)"\n'


# ---------------------------------------------------------------- 1. prove DIR


def test_prove_dir_proves_every_readable_file_and_reports_errors_in_place(tmp_path, capsys):
    write(tmp_path, "a_good.toml", MMA + COPY_A + '[expect]\nrefuted = ["bank_conflicts"]\n')
    write(tmp_path, "b_typo.toml", MMA + COPY_A.replace("smem", "smme"))
    write(tmp_path, "c_good.toml", MMA + COPY_A + '[expect]\nrefuted = ["bank_conflicts"]\n')
    rc, out, err = run(capsys, "prove", tmp_path)
    assert rc == 2
    lines = out.splitlines()
    i_a = next(i for i, l in enumerate(lines) if l.startswith(str(tmp_path / "a_good.toml")))
    i_b = next(i for i, l in enumerate(lines) if l.startswith("ERROR") and "b_typo.toml:7" in l)
    i_c = next(i for i, l in enumerate(lines) if l.startswith(str(tmp_path / "c_good.toml")))
    assert i_a < i_b < i_c                                   # in place, in order
    assert "12 proved, 2 refuted, 0 vacuous, 0 unknown, 1 errors, 0 unmet" in out
    assert err.count("\n") == 1 and "unknown key 'smme'" in err
    rc, out, _ = run(capsys, "prove", "--json", tmp_path)
    doc = json.loads(out)
    assert rc == 2 and [bool(c.get("error")) for c in doc["configs"]] == [False, True, False]
    assert doc["configs"][0]["results"] and doc["summary"]["errors"] == 1


def test_prove_dir_skips_files_that_are_not_configurations(tmp_path, capsys):
    write(tmp_path, "pyproject.toml", '[project]\nname = "kernel"\n')
    write(tmp_path, "solve/pad.toml", '[unknowns]\npad = { min = 0, max = 8 }\n' + MMA + COPY_A)
    write(tmp_path, "ok.toml", MMA + COPY_A + '[prove]\nproperties = ["alignment"]\n')
    rc, out, err = run(capsys, "prove", tmp_path)
    assert rc == 0 and "skipped" not in out and err == ""
    rc, out, _ = run(capsys, "prove", "-v", tmp_path)
    assert rc == 0
    assert re.search(r"skipped  .*pyproject.toml: not a configuration", out)
    assert re.search(r"skipped  .*pad.toml: not a configuration: a solve input", out)
    write(tmp_path, "typo.toml", '[mmma]\natom = "x"\n')           # a mistyped table is still a configuration
    rc, out, err = run(capsys, "prove", tmp_path)
    assert rc == 2 and "typo.toml" in err


# ---------------------------------------------------------------- 2. [expect] version 2


def test_expect_per_operand_catches_a_new_conflict_on_B(tmp_path, capsys):
    p = write(tmp_path, "ab.toml", MMA + COPY_A + COPY_B + '[expect]\nrefuted = ["bank_conflicts[A]"]\n')
    rc, out, _ = run(capsys, "prove", p)
    assert rc == 1
    assert re.search(r"REFUTED  bank_conflicts\[A\] .*\(expected\)", out)
    assert re.search(r"REFUTED  bank_conflicts\[B\] .*<-- expected PROVED", out)
    assert f"UNMET    {p}: bank_conflicts[B] refuted, expected proved" in out
    assert out.rstrip().splitlines()[-2].endswith("1 unmet")
    p.write_text(MMA + COPY_A + COPY_B + '[expect]\nrefuted = ["bank_conflicts"]\n')   # v1: every operand
    assert run(capsys, "prove", p)[0] == 0


def test_expect_max_bank_degree(tmp_path, capsys):
    p = write(tmp_path, "deg.toml", MMA + COPY_A + '[expect]\nmax_bank_degree = 2\n')
    rc, out, _ = run(capsys, "prove", "--json", p)
    r = next(x for x in json.loads(out)["configs"][0]["results"] if x["property"] == "bank_conflicts")
    assert rc == 0 and r["status"] == "proved" and r["stats"]["bank_degree"] == 2
    assert "within max_bank_degree = 2" in r["detail"]
    p.write_text(MMA + COPY_A + '[expect]\nmax_bank_degree = 1\n')
    rc, out, _ = run(capsys, "prove", p)
    assert rc == 1 and "bank_conflicts[A]" in out and "1 unmet" in out
    p.write_text(MMA + COPY_A + '[expect]\nmax_bank_degree = 2\nrefuted = ["bank_conflicts[A]"]\n')
    rc, _, err = run(capsys, "prove", p)
    assert rc == 2 and "deg.toml:9: [expect] max_bank_degree" in err and "contradicts" in err


def test_expect_per_operand_errors(tmp_path, capsys):
    p = write(tmp_path, "e.toml", MMA + COPY_A + '[expect]\nrefuted = ["bank_conflict[A]"]\n')
    rc, _, err = run(capsys, "prove", p)
    assert rc == 2 and "unknown property 'bank_conflict'" in err and "did you mean 'bank_conflicts'" in err
    p.write_text(MMA + COPY_A + '[expect]\nrefuted = ["bank_conflicts[B]"]\n')        # no [copy.B]
    rc, out, _ = run(capsys, "prove", p)
    assert rc == 2 and "[expect] names 'bank_conflicts[B]', which does not apply here" in out
    p.write_text(MMA + COPY_A + '[expect]\nrefuted = ["alignment", "alignment[A]"]\n')
    rc, _, err = run(capsys, "prove", p)
    assert rc == 2 and "redundant" in err


# ---------------------------------------------------------------- 3. pytest plugin


def _pytest(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)


@pytest.fixture
def proof_dir(tmp_path):
    d = tmp_path / "proofs"
    write(d, "seed.toml", MMA + COPY_A + '[expect]\nrefuted = ["bank_conflicts"]\n')
    write(d, "ab.toml", MMA + COPY_A + COPY_B + '[expect]\nrefuted = ["bank_conflicts[A]"]\n')
    write(d, "broken.toml", MMA + "[copy.A\n")
    write(d, "pyproject.toml", '[project]\nname = "x"\n')
    return tmp_path


def test_pytest_items_per_property_and_operand(proof_dir):
    p = _pytest(proof_dir, "proofs", "--junitxml=j.xml")
    assert p.returncode == 1, p.stdout
    assert "FAILED proofs/ab.toml::bank_conflicts[B]" in p.stdout
    assert "ERROR proofs/broken.toml::config" in p.stdout and "invalid TOML" in p.stdout
    assert "FAILED proofs/broken.toml" not in p.stdout and "pyproject" not in p.stdout
    m = re.search(r"(\d+) failed, (\d+) passed.*?(\d+) error", p.stdout)
    assert m and m.group(1) == "1" and int(m.group(2)) == 7 + 14 - 1, p.stdout
    cases = ET.parse(proof_dir / "j.xml").getroot().iter("testcase")
    props = {c.get("name"): [json.loads(pp.get("value")) for pp in c.iter("property") if pp.get("name") == "symlayout"]
             for c in cases}
    r = props["bank_conflicts[B]"][0]
    assert r["property"] == "bank_conflicts" and r["operand"] == "B" and r["status"] == "refuted"
    k = _pytest(proof_dir, "proofs", "-k", "bank_conflicts and not broken")
    assert re.search(r"1 failed, 2 passed, \d+ deselected", k.stdout), k.stdout


def test_pytest_xdist_gives_identical_results(proof_dir):
    pytest.importorskip("xdist")
    serial = _pytest(proof_dir, "proofs", "--junitxml=s.xml")
    par = _pytest(proof_dir, "proofs", "-n", "2", "--junitxml=p.xml")

    def outcome(path):
        out = {}
        for c in ET.parse(path).getroot().iter("testcase"):
            kind = next((ch.tag for ch in c if ch.tag in ("failure", "error", "skipped")), "passed")
            vals = [json.loads(p.get("value")) for p in c.iter("property") if p.get("name") == "symlayout"]
            for v in vals:
                v.pop("seconds", None)
            out[(c.get("classname"), c.get("name"))] = (kind, vals)
        return out
    assert serial.returncode == par.returncode == 1
    assert outcome(proof_dir / "s.xml") == outcome(proof_dir / "p.xml")


# ---------------------------------------------------------------- 4. --version, colour, -q, explain


def test_version(capsys):
    rc, out, _ = run(capsys, "--version")
    assert rc == 0 and re.fullmatch(r"symlayout \S+\n", out)


def test_colour_only_on_request_or_tty(capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    rc, out, _ = run(capsys, "prove", SEED000)                        # captured: not a TTY
    assert "\x1b[" not in out
    rc, out, _ = run(capsys, "prove", "--color", "always", SEED000)
    assert "\x1b[32mPROVED" in out and "\x1b[31mREFUTED" in out
    from symlayout.cli.common import use_colour

    class Tty:
        def isatty(self):
            return True
    assert use_colour(Tty()) is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_colour(Tty()) is False


def test_quiet_prints_only_refutations_unmet_and_errors(tmp_path, capsys):
    p = write(tmp_path, "ab.toml", MMA + COPY_A + COPY_B + '[expect]\nrefuted = ["bank_conflicts[A]"]\n')
    rc, out, _ = run(capsys, "prove", "-q", p, REPO / "proofs" / "pitfalls" / "k64_swizzled.toml")
    assert rc == 1
    assert "PROVED " not in out and "k64_swizzled" not in out
    assert "bank_conflicts[A]" in out and "bank_conflicts[B]" in out and "UNMET" in out


def test_explain_without_thread_explains_the_first_counterexample(tmp_path, capsys):
    p = write(tmp_path, "off16.toml", OFF16)
    rc, out, _ = run(capsys, "explain", p)
    assert rc == 1
    assert out.startswith("slot_agreement[A] is refuted; its counterexample, thread ")
    assert "=> DISAGREES: delivered A(" in out
    rc, out, _ = run(capsys, "explain", SEED000)                      # a bank conflict: the message and route
    assert rc == 1 and "bank_conflicts[A] is refuted" in out and "2-way bank conflict" in out
    rc, out, _ = run(capsys, "explain", REPO / "proofs" / "pitfalls" / "k64_swizzled.toml")
    assert rc == 0 and "nothing is refuted" in out
    rc, _, err = run(capsys, "explain", SEED000, "--thread", "0")
    assert rc == 2 and "together" in err


# ---------------------------------------------------------------- 5. spellings, types


def test_cute_cpp_spellings_in_configs(tmp_path, capsys):
    cpp = (MMA.replace('"(2,2,1)"', '"Layout<Shape<_4,_1,_1>>"') + 'permutation = ["64", "16", "16"]\n'
           '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "cutlass::half_t"\n'
           'smem = "tile_to_shape(composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{}), '
           'Shape<_64,_64>{})"\n')
    note = (MMA.replace('"(2,2,1)"', '"(4,1,1)"') + 'permutation = ["64", "16", "16"]\n'
            '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\n'
            'smem = "Sw<3,3,3> o ((8,8),(64,1)):((64,512),(1,0))"\n')
    a, b = write(tmp_path, "cpp.toml", cpp), write(tmp_path, "note.toml", note)
    rc, out, _ = run(capsys, "prove", "--json", a, b)
    doc = json.loads(out)
    strip = [[(r["property"], r["status"], r.get("checked")) for r in c["results"]] for c in doc["configs"]]
    assert rc == 0 and strip[0] == strip[1] and len(strip[0]) == 7
    from symlayout.config import load_config
    assert str(load_config(a).copies["A"].smem) == str(load_config(b).copies["A"].smem)
    rc, out, _ = run(capsys, "layout", "Layout<Shape<_8,_64>,Stride<_64,_1>>{}", "--no-table")
    assert rc == 0 and out == "(8,64):(64,1)\n"
    bad = write(tmp_path, "bad.toml", MMA + COPY_A.replace('"(32,16):(16,1)"', '"Layout<Shape<_32,_16>, Strid<_16,_1>>{}"'))
    rc, _, err = run(capsys, "prove", bad)
    assert rc == 2 and "bad.toml:7: [copy.A] smem" in err and "Strid" in err


@pytest.mark.parametrize("alias,canon", [("fp16", "half_t"), ("float16", "half_t"), ("bf16", "bfloat16_t"),
                                         ("__nv_bfloat16", "bfloat16_t"), ("fp32", "float"), ("__half", "half_t")])
def test_type_aliases(alias, canon):
    from symlayout.atoms import canonical_type
    assert canonical_type(alias) == canon


def test_ambiguous_type_named(tmp_path, capsys):
    p = write(tmp_path, "t.toml", MMA + COPY_A.replace('"half_t"', '"fp8"'))
    rc, _, err = run(capsys, "prove", p)
    assert rc == 2 and "'fp8' is ambiguous: write float_e4m3_t (e4m3) or float_e5m2_t (e5m2)" in err


# ---------------------------------------------------------------- 6. too few values


def test_too_few_vals_names_the_table_and_suggests_a_fix(tmp_path, capsys):
    p = write(tmp_path, "b.toml", MMA + '[copy.B]\natom = "SM75_U16x8_LDSM_T"\ntype = "half_t"\n'
                                        'smem = "(32,32):(1,32)"\n')
    rc, out, _ = run(capsys, "prove", p)
    assert rc == 1
    assert '[copy.B] (line 4): fix: [mma] permutation = "(32,16,32)"' in out
    assert 'or atom = "SM75_U16x4_LDSM_T"' in out
    fixed = write(tmp_path, "fixed.toml", MMA + 'permutation = ["32", "16", "32"]\n' +
                  '[copy.B]\natom = "SM75_U16x8_LDSM_T"\ntype = "half_t"\nsmem = "(32,32):(1,32)"\n')
    rc, out, _ = run(capsys, "prove", fixed)                      # compiles now: an ordinary verdict
    assert "CuTe rejects" not in out and "PROVED   slot_agreement[B]" in out


# ---------------------------------------------------------------- 7. help, atoms


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_command_documents_its_exit_codes(command, capsys):
    rc, out, _ = run(capsys, command, "--help")
    assert rc == 0 and "exit codes:" in out
    own = cli.COMMANDS[command].EXIT_CODES
    for code, text in own.items():
        assert f"  {code:<4} {text[:30]}" in out
    assert "  4    internal error" in out
    if command != "prove":
        assert "expected refutation proved" not in out


def test_atoms_filters(capsys):
    rc, out, _ = run(capsys, "atoms", "--arch", "sm80", "--kind", "copy", "ldsm")
    names = re.findall(r"^  (\S+)", out, re.M)
    assert rc == 0 and names and all("LDSM" in n for n in names)
    assert "SM90_U32x4_STSM_N" not in out
    rc, out, _ = run(capsys, "atoms", "--arch", "sm90", "*STSM*", "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["atoms"] and all("STSM" in a["name"] for a in doc["atoms"])
    rc, out, _ = run(capsys, "atoms", "--kind", "mma", "--arch", "sm_75")
    assert rc == 0 and "SM80_" not in out and "SM75_16x8x8_F32F16F16F32_TN" in out
    assert run(capsys, "atoms", "no_such_atom")[0] == 1
    rc, _, err = run(capsys, "atoms", "--arch", "ampere")
    assert rc == 2 and "--arch 'ampere'" in err


# ---------------------------------------------------------------- 8. cute program


def _cute_includes():
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from cute_cpp import cute_site
    finally:
        sys.path.pop(0)
    return cute_site()


@pytest.mark.parametrize("config", ["seeds/seed_000_A_x2.toml", "seeds/seed_004_perm.toml",
                                    "grid/sm90_f16_2x2_C_stsm_t.toml", "parametric/k_family_swizzled.toml"])
def test_cute_program_compiles_as_is(config, tmp_path, capsys):
    inc = _cute_includes()
    if inc is None:
        pytest.skip("CuTe headers (SYMLAYOUT_CUTE_SITE or cutlass_library) or g++ not available")
    rc, out, _ = run(capsys, "cute", REPO / "proofs" / config)
    assert rc == 0 and out.startswith("//") and "#include <cute/tensor.hpp>" in out
    assert "Int<" not in out.split("int main")[0].split("using TiledMma")[1].split("template")[0] \
        or "parametric" in config
    src = tmp_path / "p.cpp"
    src.write_text(out)
    p = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *[f"-I{d}" for d in inc], str(src)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[:3000]


def test_cute_program_keeps_the_users_spelling(tmp_path, capsys):
    p = write(tmp_path, "t.toml", MMA.replace('"(2,2,1)"', '"(4,1,1)"') + 'permutation = ["64", "16", "16"]\n'
              '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "fp16"\n'
              'smem = "tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (64,64))"\n')
    rc, out, _ = run(capsys, "cute", p)
    assert rc == 0
    assert ("using SmemLayoutA = decltype(tile_to_shape(composition(Swizzle<3,3,3>{}, "
            "Layout<Shape<_8,_64>, Stride<_64,_1>>{}), Shape<_64,_64>{}));") in out
    assert "Copy_Atom<SM75_U32x4_LDSM_N, half_t>" in out and "Tile<_64, _16, _16>{}" in out
    assert "copy(tiled_copy, tSsA, tSrA);" in out and "Tensor tCrA = " in out


# ---------------------------------------------------------------- 9. layout --table


def test_layout_table_forced(capsys):
    rc, out, _ = run(capsys, "layout", "(64,64):(64,1)")
    assert rc == 0 and "function table omitted" in out
    rc, out, _ = run(capsys, "layout", "(64,64):(64,1)", "--table")
    assert rc == 0 and "omitted" not in out and out.count("\n") > 64
    rc, _, err = run(capsys, "layout", "(32*m,16):(16,1)", "--table")
    assert rc == 2 and "not concrete" in err
    rc, out, _ = run(capsys, "layout", "ceil_div(m, 16)")
    assert rc == 0 and "ceiling" not in out


# ---------------------------------------------------------------- 10. pictures, HTML


def _svg(path):
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    panels = [g for g in root.iter(ns + "g") if g.get("class") == "panel"]
    rects = list(root.iter(ns + "rect"))
    return root, panels, rects


@pytest.mark.parametrize("view", ["tv", "copy", "banks", "swizzle"])
def test_show_views_parse(view, tmp_path, capsys):
    out = tmp_path / f"{view}.svg"
    rc, _, _ = run(capsys, "show", REPO / "proofs" / "pitfalls" / "k64_swizzled.toml", "--svg", out, "--view", view)
    assert rc == 0
    root, panels, rects = _svg(out)
    assert root.tag.endswith("svg") and panels and all(p.get("data-view") == view for p in panels)
    assert sum("cell" in (r.get("class") or "") for r in rects) >= 64
    if view in ("copy", "swizzle"):
        assert [p.get("data-label") for p in panels] == (["src", "dst"] if view == "copy"
                                                          else ["without swizzle", "with swizzle"])


def test_banks_view_marks_the_conflicting_lanes(tmp_path, capsys):
    bad, good = tmp_path / "bad.svg", tmp_path / "good.svg"
    run(capsys, "show", SEED000, "--svg", bad, "--view", "banks")
    run(capsys, "show", REPO / "proofs" / "pitfalls" / "k64_swizzled.toml", "--svg", good, "--view", "banks")
    _, panels, rects = _svg(bad)
    conflict = [r for r in rects if "conflict" in (r.get("class") or "")]
    assert conflict and any("lanes [0]" in r.findtext("{http://www.w3.org/2000/svg}title") for r in conflict)
    assert len(panels) == 2                                    # x2: two phases
    _, _, rects = _svg(good)
    assert not [r for r in rects if "conflict" in (r.get("class") or "")]


def test_tv_view_outlines_delivered_vs_expected_and_thread(tmp_path, capsys):
    p = write(tmp_path, "off16.toml", OFF16)
    bad, good = tmp_path / "bad.svg", tmp_path / "good.svg"
    assert run(capsys, "show", p, "--svg", bad, "--thread", "5")[0] == 0
    _, _, rects = _svg(bad)
    assert any(r.get("class") == "mismatch" and r.get("stroke") == "red" for r in rects)
    mine = [r for r in rects if r.get("class") == "cell thread"]
    assert mine and all("thread 5 " in r.findtext("{http://www.w3.org/2000/svg}title") for r in mine)
    run(capsys, "show", REPO / "proofs" / "pitfalls" / "k64_swizzled.toml", "--svg", good)
    assert not [r for r in _svg(good)[2] if r.get("class") == "mismatch"]


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_html_report_is_self_contained(tmp_path, capsys):
    write(tmp_path, "seed.toml", SEED000.read_text())
    write(tmp_path, "off16.toml", OFF16)
    write(tmp_path, "broken.toml", MMA + "[copy.A\n")
    html = tmp_path / "r.html"
    rc, out, _ = run(capsys, "prove", tmp_path, "--html", html)
    assert rc == 2 and f"wrote {html}" in out
    text = html.read_text()
    t = _Tags()
    t.feed(text)
    tags = [x for x, _ in t.tags]
    assert tags.count("section") == 3 and tags.count("svg") >= 2 and "style" in tags
    assert not [a for _, a in t.tags if any(k in a for k in ("src", "href")) and
                not str(a.get("href", "#")).startswith("#")]           # no network, no external file
    assert "UNMET" in text and "invalid TOML" in text and 'data-view="banks"' in text


# ---------------------------------------------------------------- extract, API, docs


def test_extract_is_a_command(capsys, tmp_path):
    rc, out, _ = run(capsys, "extract", "--help")
    assert rc == 0 and "--type" in out and "--member" in out
    rc, out, err = run(capsys, "extract", tmp_path / "missing.h", "--type", "Traits")
    assert rc == 2 and err.count("\n") == 1 and err.startswith("symlayout: error: ")


@pytest.mark.parametrize("mod", ["symlayout", "symlayout.api", "symlayout.cli", "symlayout.cli.common",
                                 "symlayout.cli.atoms", "symlayout.prove.report.explain", "symlayout.prove.verdict.expect",
                                 "symlayout.prove.copy.suggest", "symlayout.prove.verdict.summary", "symlayout.prove.report.cute_snippet",
                                 "symlayout.algebra.cute_cpp", "symlayout.pytest_plugin", "symlayout.prove.report.pictures"])
def test_doctests(mod):
    import importlib
    res = doctest.testmod(importlib.import_module(mod))
    assert res.failed == 0 and res.attempted > 0


def test_docs_api_examples_run():
    path = REPO / "docs" / "api.md"
    res = doctest.testfile(str(path), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted >= 10


def test_api_report(tmp_path):
    import symlayout
    rep = symlayout.prove(SEED000)
    assert rep.exit_code == 0 and rep.ok and rep["bank_conflicts[A]"].expected == "refuted"
    assert "2-way bank conflict" in rep.explain() and rep.svg("copy").startswith("<svg")
    assert "<table>" in rep._repr_html_()
    text = rep.explain(thread=0, slot=2)
    assert text.endswith("=> agrees: delivered A(8,0), expected A(8,0)")
    with pytest.raises(KeyError):
        rep["coalescing"]


@pytest.mark.parametrize("source", ["path", pytest.param("git", marks=pytest.mark.slow)])
def test_readme_ci_recipe(source, tmp_path):
    """README's CI section, run as written on a fresh kernel project: install from a path into a fresh
    venv, pytest proofs/ with JUnit (the venv reuses this interpreter's dependencies; pip builds the
    package with its build backend from the configured index, and the test skips when there is none)."""
    readme = (REPO / "README.md").read_text()
    block = re.search(r"<!-- ci-recipe -->\s*```sh\n(.*?)```", readme, re.S)
    assert block, "README has no CI recipe block"
    if os.environ.get("SYMLAYOUT_SKIP_INSTALL_TESTS") or shutil.which("bash") is None:
        pytest.skip("install tests disabled")
    proj = tmp_path / "kernel"
    write(proj, "proofs/tiling.toml", SEED000.read_text())
    venv = tmp_path / "venv"                   # a fresh venv that sees this interpreter's packages (no network
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)        # needed for sympy, z3, pytest)
    import sysconfig
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "parent.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    script = block.group(1)
    if source == "git":                        # the recipe's git-URL form, on this checkout's HEAD
        if not (REPO / ".git").exists() or shutil.which("git") is None:
            pytest.skip("not a git checkout")
        script = re.sub(r"python -m pip install /path/to/symlayout[^\n]*",
                        f'python -m pip install "git+file://{REPO}"', script)   # (pip 23: no 'name @' with file)
    script = script.replace("/path/to/symlayout", str(REPO))
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)
    p = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=proj, env=env, capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0 and ("No matching distribution" in p.stderr or "Could not find" in p.stderr):
        pytest.skip("no package index here to install the build backend")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    root = ET.parse(proj / "proofs.xml").getroot()
    names = {c.get("name") for c in root.iter("testcase")}
    assert "bank_conflicts[A]" in names and "slot_agreement[A]" in names
