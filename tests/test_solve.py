"""``symlayout solve``: the solve-file format, the symbolic search, the acceptance cases of the
layout-synthesis issue (docs/solve/examples/), Z3 against enumeration through the prover, and the CLI."""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from symlayout.cli import main
from symlayout.errors import ConfigError
from symlayout.solve import brute_force, candidates, load_spec, loads_spec, solve

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "docs" / "solve" / "examples"

HEAD = '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\nlayout = "(2,2,1)"\n'


def copy_a(smem, atom='"SM75_U32x4_LDSM_N"', extra=""):
    return f'[copy.A]\natom = {atom}\ntype = "half_t"\nsmem = "{smem}"\n{extra}'


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------- the format


def test_unknown_kinds_and_names():
    spec = loads_spec("[unknowns]\npad = { min = 0, max = 16, multiple_of = 8 }\n" + HEAD
                      + copy_a("Sw<?,3,?> o (32,64):(64+?pad,1)", atom='["SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N"]'))
    assert list(spec.unknowns) == ["pad", "B", "S"]
    assert spec.unknowns["pad"].values() == [0, 8, 16]
    assert (spec.unknowns["B"].min, spec.unknowns["B"].max, spec.unknowns["S"].max) == (0, 4, 8)
    assert spec.copies["A"].atoms == ("SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N")
    assert len(spec.combos()) == 2
    assert spec.copies["A"].smem.text({"pad": 8, "B": 2, "S": 3}) == "Sw<2,3,3> o 0 o (32,64):(72,1)"
    assert spec.copies["A"].smem.text({"pad": 0, "B": 0, "S": 0}) == "(32,64):(64,1)"


def test_anonymous_names_per_operand_and_range_override():
    text = ("[unknowns]\nB_A = { min = 1, max = 3 }\n"
            '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\nlayout = "(2,2,1)"\npermutation = ["32", "32", "16"]\n'
            '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\nsmem = "Sw<?,3,3> o (32,64):(64,1)"\n'
            '[copy.B]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\nsmem = "Sw<?,3,3> o (32,64):(64,1)"\n')
    spec = loads_spec(text)
    assert sorted(spec.unknowns) == ["B_A", "B_B"]
    assert (spec.unknowns["B_A"].min, spec.unknowns["B_A"].max) == (1, 3)


def test_named_swizzle_parameter_is_shared():
    text = ("[unknowns]\nb = { min = 0, max = 3 }\n"
            '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\nlayout = "(2,2,1)"\npermutation = ["32", "32", "16"]\n'
            '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\nsmem = "Sw<?b,3,3> o (32,64):(64,1)"\n'
            '[copy.B]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\nsmem = "Sw<?b,3,3> o (32,64):(64,1)"\n')
    spec = loads_spec(text)
    assert list(spec.unknowns) == ["b"] and spec.unknowns["b"].role == "B"


def test_permutation_choice_and_space_size():
    spec = loads_spec('[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\nlayout = "(2,2,1)"\n'
                      'permutation = ["32", ["32", "(8,2,2):(1,16,8)"], "16"]\n' + copy_a("Sw<?,3,3> o (32,64):(64,1)"))
    assert [c.permutation for c in spec.combos()] == [("32", "32", "16"), ("32", "(8,2,2):(1,16,8)", "16")]
    # B in 0..4 with |S| = 3 >= B: 4 swizzles, times 2 permutations
    assert spec.space_size() == 8 == len(list(candidates(spec)))


def test_complete_is_a_valid_configuration():
    from symlayout.config import loads_config
    spec = load_spec(EX / "c_1953_kpair.toml")
    combo = spec.combos()[1]
    cfg = loads_config(spec.complete({"B": 2, "M": 4, "S": 3}, combo))
    assert cfg.mma.raw_permutation == ("32", "(8,2,2):(1,16,8)", "32")
    assert cfg.copies["B"].raw_smem == "Sw<2,4,3> o 0 o (32,(2,32)):(2,(1,64))"


BAD = [
    ("undeclared", HEAD + copy_a("(32,64):(64+?pad,1)"), 7, "?pad is not declared in [unknowns]"),
    ("bare ?", "[unknowns]\np = { max = 4 }\n" + HEAD + copy_a("(32,64):(64+?,?p)"), 9, "column 13: '?' needs a name"),
    ("unknown atom", HEAD + copy_a("Sw<?,3,3> o (32,64):(64,1)", atom='["SM75_U32x4_LDSM_N", "SM75_U32x9_LDSM_N"]'), 5,
     "unknown copy operation 'SM75_U32x9_LDSM_N'"),
    ("unused", "[unknowns]\np = { max = 4 }\n" + HEAD + copy_a("(32,64):(64,1)"), 2, "declared but not used"),
    ("params", "[params]\np = { max = 4 }\n" + HEAD + copy_a("(32,64):(64,1)"), 1, "[params] does not apply"),
    ("expect", HEAD + copy_a("Sw<?,3,3> o (32,64):(64,1)", extra='[expect]\nrefuted = ["bank_conflicts"]\n'), 8,
     "[expect] does not apply"),
    ("two swizzle args", HEAD + copy_a("Sw<?,3> o (32,64):(64,1)"), 7, "three parameters"),
    ("|S| < B", HEAD + copy_a("Sw<4,3,2> o (32,64):(64,1)"), 7, "|S| >= B"),
    ("rank 3", HEAD + copy_a("Sw<?,3,3> o (32,64,2):(64,1,2048)"), 7, "has rank 3"),
    ("not a multiple", HEAD + copy_a("Sw<?,3,3> o (24,64):(64,1)"), 7, "not a multiple of the TiledMMA's M tile 32"),
    ("notation", HEAD + copy_a("Sw<?,3,3> o (32,64:(64,1)"), 7, "'Sw<?,3,3> o (32,64:(64,1)': column"),
    ("type", HEAD + '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "halff_t"\nsmem = "(32,64):(64,1)"\n', 6,
     "unknown value type 'halff_t'"),
    ("minimize", HEAD + copy_a("Sw<?,3,3> o (32,64):(64,1)", extra='[solve]\nminimize = "Q + 1"\n'), 9,
     "unknown variable 'Q'"),
    ("coalescing", HEAD + copy_a("Sw<?,3,3> o (32,64):(64,1)", extra='[prove]\nproperties = ["coalescing"]\n'), 9,
     "'coalescing' does not apply"),
    ("permutation", '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\npermutation = ["32", ["16", "(4,4):(1,8"], "16"]\n'
     + copy_a("(32,64):(64,1)"), 3, "permutation[1]"),
    ("no copy", '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n', 1, "at least one [copy.A]"),
    ("negative range", "[unknowns]\np = { min = -1, max = 4 }\n" + HEAD + copy_a("(32,64):(64+?p,1)"), 2, "min must lie in"),
    ("TOML", HEAD + '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t\n', 6, "invalid TOML"),
]


#: the keys a solve file shares with a configuration, checked through the configuration's description
#: (symlayout/config/keys.py): wrong forms, unknown keys (with the keys a solve file takes) and missing keys
SHARED_KEYS = [
    (HEAD.replace('"(2,2,1)"', "3") + copy_a("(32,64):(64,1)"), 3, "[mma] layout must be a string, not an integer"),
    (HEAD + 'foo = 1\n' + copy_a("(32,64):(64,1)"), 4, "[mma]: unknown key 'foo' (known: atom, layout, permutation)"),
    (HEAD + copy_a("(32,64):(64,1)").replace('"half_t"', "5"), 6, "[copy.A] type must be a string, not an integer"),
    (HEAD + copy_a("(32,64):(64,1)").replace('"(32,64):(64,1)"', "1"), 7,
     "[copy.A] smem must be a string, not an integer"),
    (HEAD + copy_a("(32,64):(64,1)", extra='align = "16"\n'), 8, "[copy.A] align must be an integer, not a string"),
    (HEAD + copy_a("(32,64):(64,1)", extra="element = 8\n"), 8, "[copy.A] element must be a string, not an integer"),
    (HEAD + copy_a("(32,64):(64,1)", extra='thr = "(32,4)"\n'), 8,
     "[copy.A]: unknown key 'thr' (known: atom, type, smem, align, element)"),
    (HEAD + copy_a("(32,64):(64,1)").replace('type = "half_t"\n', ""), 4, "[copy.A]: missing required key 'type'"),
    ("[unknowns]\np = { max = 4, mx = 3 }\n" + HEAD + copy_a("(32,64):(64+?p,1)"), 2,
     "[unknowns] p: unknown key 'mx' (known: min, max, multiple_of)"),
]


@pytest.mark.parametrize("text,line,message", SHARED_KEYS, ids=[m for _, _, m in SHARED_KEYS])
def test_shared_keys_are_checked_as_described(text, line, message):
    with pytest.raises(ConfigError) as e:
        loads_spec(text, "s.toml")
    assert str(e.value) == f"s.toml:{line}: {message}"


@pytest.mark.parametrize("name,text,line,fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_file_and_line(name, text, line, fragment):
    with pytest.raises(ConfigError) as ei:
        loads_spec(text, "bad.toml")
    msg = str(ei.value)
    assert msg.startswith(f"bad.toml:{line}:"), msg
    assert fragment in msg, msg
    assert "\n" not in msg


def test_example_files_load():
    files = sorted(EX.glob("*.toml"))
    assert len(files) >= 7
    for f in files:
        load_spec(f)


# ---------------------------------------------------------------- acceptance (a): swizzles


@pytest.fixture(scope="module")
def k64():
    return solve(load_spec(EX / "a_k64_swizzle.toml"))


def test_k64_finds_sw333_and_b3_is_optimal(k64):
    assert k64.status == "found" and k64.optimal is True
    sol = k64.solutions[0]
    assert sol.values == {"B": 3, "M": 3, "S": 3}
    assert sol.proved
    assert 'smem = "Sw<3,3,3> o 0 o (64,64):(64,1)"' in sol.text
    assert {r.property for r in sol.report.results} == {"coverage", "alignment", "exactly_once", "slot_agreement",
                                                        "bank_conflicts", "in_bounds", "type_agreement"}


def test_k64_no_swizzle_with_fewer_than_3_bits():
    text = (EX / "a_k64_swizzle.toml").read_text() + "\n[unknowns]\nB = { min = 0, max = 2 }\n"
    out = solve(loads_spec(text, "k64_b2.toml"))
    assert out.status == "none"
    assert any("bank_conflicts" in why for _c, why in out.reasons)
    assert out.representative is not None and out.representative.report is not None
    assert any(r.status == "refuted" for r in out.representative.report.results)


def test_k32_finds_cutlass_sw233():
    out = solve(load_spec(EX / "a_k32_swizzle.toml"))
    assert out.status == "found" and out.optimal
    assert out.solutions[0].values == {"B": 2, "M": 3, "S": 3}
    assert out.solutions[0].proved


# ---------------------------------------------------------------- acceptance (b): padding


def test_row_pad_smallest_is_8_and_all_agree_with_enumeration():
    spec = load_spec(EX / "b_row_pad.toml")
    out = solve(spec)
    assert out.status == "found" and out.optimal and out.solutions[0].values == {"pad": 8}
    every = solve(spec, all=True, minimize="")
    assert every.complete
    z3_pads = [s.values["pad"] for s in every.solutions]
    assert z3_pads == [8, 24, 40, 56]
    assert all(s.proved for s in every.solutions)
    sols, checked, _sec, complete = brute_force(spec)
    assert complete and checked == 65
    assert sorted(v["pad"] for v, _c in sols) == z3_pads


# ---------------------------------------------------------------- acceptance (c): NVIDIA/cutlass#1953


@pytest.mark.parametrize("name", ["c_1953_nmajor.toml", "c_1953_kmajor.toml"])
def test_1953_plain_families_have_no_solution(name):
    out = solve(load_spec(EX / name))
    assert out.status == "none"
    reasons = " / ".join(why for _c, why in out.reasons)
    assert "no value of the unknowns satisfies alignment[B]" in reasons
    assert "no value of the unknowns satisfies slot_agreement[B]" in reasons
    rep = out.representative
    refuted = {r.property for r in rep.report.results if r.status == "refuted"}
    # the representative (LDSM_N on an N-major B) does not compile in CuTe: refuted on alignment with
    # copy_unpack's static_assert, nothing else checked (docs/prover.md)
    assert "alignment" in refuted


def test_1953_kpair_family_solved():
    out = solve(load_spec(EX / "c_1953_kpair.toml"))
    assert out.status == "found" and out.optimal
    sol = out.solutions[0]
    assert sol.values == {"B": 2, "M": 4, "S": 3}
    assert sol.combo.atoms == {"B": "SM75_U16x8_LDSM_T"}
    assert sol.proved


def test_atom_choice_picks_ldsm_n():
    out = solve(load_spec(EX / "atom_choice.toml"))
    assert out.status == "found"
    assert out.solutions[0].combo.atoms == {"B": "SM75_U32x4_LDSM_N"}
    assert out.solutions[0].values == {"B": 2, "M": 4, "S": 3}


# ---------------------------------------------------------------- stores, static failures, agreement


def test_store_operand_c_with_stsm():
    text = ('[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\nlayout = "(2,2,1)"\npermutation = ["32", "32", "16"]\n'
            '[copy.C]\natom = "SM90_U32x4_STSM_N"\ntype = "half_t"\nsmem = "Sw<?,?,?> o (32,64):(64,1)"\n')
    out = solve(loads_spec(text, "c.toml"), minimize="B")
    assert out.status == "found" and out.solutions[0].values == {"B": 3, "M": 3, "S": 3}
    assert out.solutions[0].proved


def test_static_failure_is_reported_per_combination():
    # a float copy into a half MMA: type_agreement fails whatever the swizzle
    text = HEAD + '[copy.A]\natom = "UniversalCopy<uint128_t>"\ntype = "float"\nsmem = "Sw<?,3,3> o (32,64):(64,1)"\n'
    try:
        spec = loads_spec(text, "t.toml")
    except ConfigError as e:       # the catalog may refuse the pairing outright
        pytest.skip(str(e))
    out = solve(spec)
    assert out.status == "none"
    assert any("type_agreement" in why or "tiling" in why for _c, why in out.reasons)


def test_z3_matches_enumeration_on_a_swizzle_space():
    spec = loads_spec(HEAD + copy_a("Sw<?,3,?> o (32,32):(32,1)"), "s.toml")
    every = solve(spec, all=True)
    sols, _n, _s, complete = brute_force(spec)
    assert complete
    assert sorted(tuple(s.values.items()) for s in every.solutions) == sorted(tuple(v.items()) for v, _c in sols)
    assert every.solutions


def test_timeout_is_unknown():
    text = (EX / "a_k64_swizzle.toml").read_text().replace('minimize = "B"', 'minimize = "B"\ntimeout_s = 0.05')
    out = solve(loads_spec(text, "t.toml"))
    assert out.status == "unknown" and not out.complete


# ---------------------------------------------------------------- the command line


def test_cli_found_prints_toml_and_cute():
    rc, out, err = run_cli("solve", EX / "b_row_pad.toml")
    assert rc == 0, err
    assert "FOUND     pad = 8" in out
    assert "minimize pad: 8 is optimal" in out
    assert "PROVED    by the prover" in out
    assert 'smem = "(32,64):(72,1)"' in out
    assert "using SmemCopyAtomA = Copy_Atom<SM75_U32x4_LDSM_N, half_t>;" in out and "make_tiled_copy_A(SmemCopyAtomA{}, mma)" in out


def test_cli_minimize_and_all():
    rc, out, _ = run_cli("solve", EX / "b_row_pad.toml", "--all", "--minimize", "")
    assert rc == 0
    assert "4 solutions (every solution in the space)" in out
    rc, out, _ = run_cli("solve", EX / "b_row_pad.toml", "--minimize", "64 - pad")
    assert rc == 0 and "FOUND     pad = 56" in out


def test_cli_no_solution_exit_1():
    rc, out, _ = run_cli("solve", EX / "c_1953_kmajor.toml")
    assert rc == 1
    # its representative does not compile in CuTe: refuted on alignment (docs/prover.md)
    assert "NO SOLUTION" in out and "representative candidate" in out and "REFUTED  alignment[B]" in out


def test_cli_input_errors_exit_2(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(HEAD + copy_a("(32,64):(64+?pad,1)"))
    rc, _out, err = run_cli("solve", p)
    assert rc == 2 and err.startswith(f"symlayout: error: {p}:7:")
    rc, _out, err = run_cli("solve", EX / "b_row_pad.toml", "--minimize", "B")
    assert rc == 2 and "unknown variable 'B'" in err
    rc, _out, err = run_cli("solve", tmp_path / "missing.toml")
    assert rc == 2


def test_cli_timeout_exit_3(tmp_path):
    p = tmp_path / "t.toml"
    p.write_text((EX / "a_k64_swizzle.toml").read_text().replace('minimize = "B"', 'minimize = "B"\ntimeout_s = 0.05'))
    rc, out, _ = run_cli("solve", p)
    assert rc == 3 and "UNKNOWN" in out


# ---------------------------------------------------------------- docstrings


