"""Malformed configurations fed to the CLI in-process.

Every case must exit 2 with exactly one line on stderr that names the file and
the line (``path:N:``) or, for whole-file problems (a directory, a missing
file), the file -- never a traceback.  Cases are generated programmatically;
only inputs that fail while loading count (valid configurations are filtered
by an independent oracle, never by the loader itself).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from symlayout import cli

SEED = """\
[mma]
atom = "SM80_16x8x16_F16F16F16F16_TN"
layout = "(2,2,1)"

[copy.A]
atom = "SM75_U32x2_LDSM_N"
type = "half_t"
smem = "(32,16):(16,1)"
"""
# numbers of leading lines of SEED that are themselves complete, valid configurations
SEED_VALID_CUTS = {2, 3, 4, 8}

PARAM_SEED = """\
name = "parametric seed"
[prove]
timeout_s = 10
properties = ["coverage", "alignment", "bank_conflicts"]

[expect]
refuted = ["bank_conflicts"]

[params]
m = { min = 1, max = 64, multiple_of = 1 }

[mma]
atom = "SM80_16x8x16_F16F16F16F16_TN"
layout = "(2,2,1)"
permutation = ["32", "32", "16"]

[copy.A]
atom = "SM75_U32x2_LDSM_N"
type = "half_t"
align = 128
smem = "(32*m,16):(16,1)"
"""
PARAM_VALID_CUTS = {13, 14, 15, 16, 21}
PARAM_M_LINE = 10

TM_SEED = """\
[threadmap]
kind = "offset"
threads = 32
iterations = 1
extent = 512
elements_per_access = 1
type = "half_t"
align = 16
offset = "t % 8 + ((t // 8) % 2) * 16 + (t // 16) * 256"
"""
TM_VALID_CUTS = {9}

CUTLASS_TM_SEED = """\
[threadmap]
kind = "PitchLinearWarpRakedThreadMap"
shape = [64, 8]
threads = 64
elements_per_access = 8
warp_arrangement = [8, 4]
type = "half_t"
"""

SEEDS = {"seed": (SEED, SEED_VALID_CUTS), "param": (PARAM_SEED, PARAM_VALID_CUTS), "tm": (TM_SEED, TM_VALID_CUTS)}


@dataclass
class Case:
    id: str
    content: object            # str (TOML text), bytes, or a callable(tmp_path) -> path
    line: int | None = None    # expected line, when known
    needle: str | None = None  # expected substring of the message
    command: str = "prove"
    whole_file: bool = False   # the message names the file only (no line)


CASES: list[Case] = []


def add(*a, **kw):
    CASES.append(Case(*a, **kw))


def toml_str(s: str) -> str:
    """A TOML basic string holding s (JSON escapes are TOML escapes)."""
    return json.dumps(s, ensure_ascii=True)


def set_line(text: str, lineno: int, new: str) -> str:
    lines = text.split("\n")
    lines[lineno - 1] = new
    return "\n".join(lines)


def line_of(text: str, prefix: str) -> int:
    for i, ln in enumerate(text.split("\n"), start=1):
        if ln.startswith(prefix):
            return i
    raise KeyError(prefix)


def replace_value(text: str, key_prefix: str, value: str):
    """Replace the value of the first line starting with key_prefix; return (text, line)."""
    n = line_of(text, key_prefix)
    key = text.split("\n")[n - 1].split("=")[0].strip()
    return set_line(text, n, f"{key} = {value}"), n


# ---------------------------------------------------------------- 1. truncations


for sname, (text, valid_cuts) in SEEDS.items():
    lines = text.split("\n")
    valid_prefixes = {"\n".join(lines[:k]).rstrip() for k in valid_cuts}
    for i in range(len(text)):
        prefix = text[:i]
        if prefix.rstrip() in valid_prefixes:
            continue
        add(f"truncated-{sname}-{i}", prefix)

# ---------------------------------------------------------------- 2. wrong types

NOT_STRING = ["1", "true", "1.5", '["x"]', "{ a = 1 }", "1979-05-27", "[]"]
NOT_INT = ['"8"', "true", "1.5", "[1]", "{ a = 1 }", "1979-05-27T07:32:00Z", "inf", "nan"]

for key in ("atom", "layout"):
    for v in NOT_STRING:
        t, n = replace_value(SEED, key, v)
        add(f"type-mma.{key}-{v}", t, line=n, needle="must be")
for key in ("type", "smem"):
    for v in NOT_STRING:
        t, n = replace_value(SEED, key, v)
        add(f"type-copy.{key}-{v}", t, line=n, needle="must be")
for v in NOT_STRING:
    t = SEED.replace('[copy.A]\natom = "SM75_U32x2_LDSM_N"', f'[copy.A]\natom = {v}')
    add(f"type-copy.atom-{v}", t, line=6, needle="must be")
    add(f"type-name-{v}", f"name = {v}\n" + SEED, line=1, needle="must be")
for v in NOT_INT:
    t, n = replace_value(PARAM_SEED, "align", v)
    add(f"type-align-{v}", t, line=n, needle="must be")
    for k in ("min", "max", "multiple_of"):
        spec = {"min": "1", "max": "64", "multiple_of": "1"}
        spec[k] = v
        body = ", ".join(f"{a} = {b}" for a, b in spec.items())
        t = set_line(PARAM_SEED, PARAM_M_LINE, f"m = {{ {body} }}")
        add(f"type-params.{k}-{v}", t, line=PARAM_M_LINE, needle="must be")
for v in ['"10"', "true", "[1]", "{ a = 1 }", "0", "-1", "inf", "nan", "-inf", "1e12", "0.0", "1979-05-27"]:
    t, n = replace_value(PARAM_SEED, "timeout_s", v)
    add(f"type-timeout-{v}", t, line=n)
for v in ['"32"', "32", "true", "{ a = 1 }", "[1.5]", "[true]", '[["32"]]', "[]", '["32", "32", "16", "8"]',
          '[{ a = 1 }]', '["32", 1.5]']:
    t, n = replace_value(PARAM_SEED, "permutation", v)
    add(f"type-permutation-{v}", t, line=n, needle="permutation")
for key in ("properties", "refuted"):
    for v in ['"coverage"', "1", "[1]", "[true]", '["covrage"]', '["coverage", "coverage"]', "{ a = 1 }",
              '["Coverage"]', '["coverage", ["alignment"]]']:
        t, n = replace_value(PARAM_SEED, key, v)
        add(f"type-{key}-{v}", t, line=n)
t, n = replace_value(PARAM_SEED, "properties", "[]")
add("type-properties-empty", t, line=n, needle="empty")
t, n = replace_value(PARAM_SEED, "refuted", '["in_bounds"]')
add("expect-not-proved", t, line=n, needle="does not check")
for key, vals in {"kind": NOT_STRING, "offset": NOT_STRING, "type": NOT_STRING,
                  "threads": NOT_INT, "iterations": NOT_INT[:5] + ["[1, 2, 3]", "[0, 1]"],
                  "extent": NOT_INT, "elements_per_access": NOT_INT, "align": NOT_INT}.items():
    for v in vals:
        t, n = replace_value(TM_SEED, key, v)
        add(f"type-threadmap.{key}-{v}", t, line=n)
for key, vals in {"shape": ['"64x8"', "[64]", "[64, 8, 1]", '["64", "8"]', "[64.0, 8]", "[0, 8]", "[64, -8]", "64"],
                  "warp_arrangement": ["[8]", '"8x4"', "[8, 4, 1]", "[0, 4]", "[true, 4]"]}.items():
    for v in vals:
        t, n = replace_value(CUTLASS_TM_SEED, key, v)
        add(f"type-threadmap.{key}-{v}", t, line=n)

# tables of the wrong type
for i, (bad, line) in enumerate([
    ("mma = 1\n", 1), ('mma = "SM80_16x8x16_F16F16F16F16_TN"\n', 1), ("copy = 1\n", 1), ('copy = "A"\n', 1),
    ("params = [1]\n", 1), ("prove = 1\n", 1), ('expect = "x"\n', 1), ("threadmap = 1\n", 1),
    ("params = 1\n[mma]\natom = \"SM80_16x8x16_F16F16F16F16_TN\"\n", 1),
]):
    add(f"type-table-{i}", bad, line=line)
add("type-copy.A-int", '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n[copy]\nA = 1\n', line=4)
add("type-param-int", '[params]\nm = 5\n[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n', line=2)
add("type-param-str", '[params]\nm = "1..64"\n[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n', line=2)
add("type-param-list", '[params]\nm = [1, 64]\n[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n', line=2)
add("type-threadmap-base", '[threadmap]\nkind = "TransposePitchLinearThreadMapSimt"\nbase = 1\n', line=3)
add("type-threadmap-base-str", '[threadmap]\nkind = "TransposePitchLinearThreadMapSimt"\nbase = "x"\n', line=3)
add("type-threadmap-base-wrapper", '[threadmap]\nkind = "TransposePitchLinearThreadMapSimt"\n[threadmap.base]\n'
    'kind = "TransposePitchLinearThreadMapSimt"\n', line=4, needle="wrapper")

# ---------------------------------------------------------------- 3. unknown keys and tables

TYPOS = {  # (seed, after-line prefix, typo line, expected suggestion)
    "atm": (SEED, 'layout = "(2,2,1)"', 'atm = "x"', "atom"),
    "layuot": (SEED, 'layout = "(2,2,1)"', 'layuot = "(2,2,1)"', "layout"),
    "permutaion": (SEED, 'layout = "(2,2,1)"', 'permutaion = ["32"]', "permutation"),
    "smme": (SEED, 'smem = ', 'smme = "(32,16):(16,1)"', "smem"),
    "tpye": (SEED, 'smem = ', 'tpye = "half_t"', "type"),
    "algn": (SEED, 'smem = ', 'algn = 128', "align"),
    "aling": (SEED, 'smem = ', 'aling = 128', "align"),
    "timeout": (PARAM_SEED, 'timeout_s = 10', 'timeout = 10', "timeout_s"),
    "propertys": (PARAM_SEED, 'timeout_s = 10', 'propertys = ["coverage"]', "properties"),
    "refute": (PARAM_SEED, 'refuted = ', 'refute = ["coverage"]', "refuted"),
    "knd": (TM_SEED, 'threads = 32', 'knd = "offset"', "kind"),
    "thread": (TM_SEED, 'threads = 32', 'thread = 32', "threads"),
    "extnt": (TM_SEED, 'threads = 32', 'extnt = 5', "extent"),
    "ofset": (TM_SEED, 'threads = 32', 'ofset = "t"', "offset"),
    "elements_per_acess": (TM_SEED, 'threads = 32', 'elements_per_acess = 1', "elements_per_access"),
    "warp_arangement": (CUTLASS_TM_SEED, 'threads = 64', 'warp_arangement = [8, 4]', "warp_arrangement"),
}
for tid, (seed, after, typo, suggestion) in TYPOS.items():
    n = line_of(seed, after)
    lines = seed.split("\n")
    lines.insert(n, typo)
    add(f"unknown-key-{tid}", "\n".join(lines), line=n + 1, needle=f"did you mean '{suggestion}'")
for tid, extra, needle in [
    ("top-copies", '[copies.A]\natom = "x"', "did you mean 'copy'"),
    ("top-prooove", "[prooove]\ntimeout_s = 1", "did you mean 'prove'"),
    ("top-threadmaps", '[threadmaps]\nkind = "offset"', "did you mean 'threadmap'"),
    ("top-expects", "[expects]\nrefuted = []", "did you mean 'expect'"),
    ("top-param", "[param]\nm = { max = 2 }", "did you mean 'params'"),
    ("top-dotted", "a.b.c = 1", "unknown key 'a'"),
    ("top-quoted", '"mma " = 1', "unknown key"),
    ("copy-D", '[copy.D]\natom = "SM75_U32x2_LDSM_N"', "copy.D"),
    ("copy-a", '[copy.a]\natom = "SM75_U32x2_LDSM_N"', "copy.a"),
    ("copy-AB", '[copy.AB]\natom = "SM75_U32x2_LDSM_N"', "copy.AB"),
    ("param-step", "[params]\nm = { min = 1, max = 4, step = 2 }", "unknown key 'step'"),
    ("param-mx", "[params]\nm = { min = 1, mx = 4 }", "did you mean 'max'"),
]:
    t = SEED + "\n" + extra + "\n"
    line = len(SEED.split("\n")) + 1 + (1 if tid.startswith("param-") else 0)
    add(f"unknown-{tid}", t, line=line, needle=needle)
for tid, extra, needle in [("top-nme", 'nme = "x"', "did you mean 'name'"), ("top-mma2", "mma2 = 1", "did you mean 'mma'"),
                           ("top-nam", 'nam = "x"', "did you mean 'name'"), ("top-Name", 'Name = "x"', "did you mean 'name'")]:
    add(f"unknown-{tid}", extra + "\n" + SEED, line=1, needle=needle)
add("unknown-array-of-tables", '[[mma]]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n', line=1, needle="must be a table")
add("unknown-array-of-copy", '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n[[copy.A]]\natom = "x"\n', line=3,
    needle="must be a table")
for tid, text, needle in [
    ("tm-kind-typo", TM_SEED.replace('"offset"', '"ofset"'), "did you mean 'offset'"),
    ("tm-kind-cutlass-typo", CUTLASS_TM_SEED.replace("WarpRaked", "WarpRacked"), "did you mean"),
    ("tm-kind-case", CUTLASS_TM_SEED.replace("Stripmined", "StripMined").replace("WarpRaked", "StripMined"), "did you mean"),
    ("tm-key-not-for-kind", TM_SEED + "warp_arrangement = [8, 4]\n", "does not apply"),
    ("tm-shape-for-offset", TM_SEED + "shape = [64, 8]\n", "does not apply"),
    ("tm-missing-warp", CUTLASS_TM_SEED.replace("warp_arrangement = [8, 4]\n", ""), "warp_arrangement"),
    ("tm-missing-offset", TM_SEED.replace(TM_SEED.split("\n")[8], ""), "offset"),
    ("tm-missing-kind", TM_SEED.replace('kind = "offset"\n', ""), "kind"),
    ("tm-missing-base", TM_SEED.replace('kind = "offset"', 'kind = "TransposePitchLinearThreadMapSimt"'), "base"),
]:
    add(f"unknown-{tid}", text, needle=needle)

# ---------------------------------------------------------------- 4. missing keys / structure

for tid, text, line, needle in [
    ("no-mma-atom", SEED.replace('atom = "SM80_16x8x16_F16F16F16F16_TN"\n', ""), 1, "missing required key 'atom'"),
    ("no-copy-atom", SEED.replace('atom = "SM75_U32x2_LDSM_N"\n', ""), 5, "'atom'"),
    ("no-copy-type", SEED.replace('type = "half_t"\n', ""), 5, "'type'"),
    ("no-copy-smem", SEED.replace('smem = "(32,16):(16,1)"\n', ""), 5, "'smem'"),
    ("copy-without-mma", SEED.split("\n\n")[1], 1, "[mma]"),
    ("nothing", 'name = "x"\n', 1, "nothing to prove"),
    ("only-prove", "[prove]\ntimeout_s = 1\n", 1, "nothing to prove"),
    ("both", SEED + "\n" + TM_SEED, 10, "not both"),
    ("param-no-max", PARAM_SEED.replace(", max = 64", ""), PARAM_M_LINE, "'max'"),
    ("name-newline", 'name = "a\\nb"\n' + SEED, 1, "single line"),
    ("name-too-long", f'name = "{"x" * 600}"\n' + SEED, 1, "too long"),
]:
    add(f"missing-{tid}", text, line=line, needle=needle)

# ---------------------------------------------------------------- 5. atoms and types

for a in ["SM80_16x8x16_F16F16F16F16_TM", "SM80_16x8x16", "sm80_16x8x16_f16f16f16f16_tn", "", " ", "SM75_U32x2_LDSM_N",
          "SM80_16x8x16_F16F16F16F16_TN; rm -rf /", "__import__('os')", "SM80_16x8x16_F16F16F16F16_TN\\n", "MMA", "x" * 150]:
    t, n = replace_value(SEED, "atom", toml_str(a))
    add(f"atom-mma-{a[:30]}", t, line=n, needle="atom")
for a in ["SM75_U32x2_LDSM", "SM75_U32x2_LDSM_X", "SM80_16x8x16_F16F16F16F16_TN", "LDSM", "", "UniversalCopy<halft>",
          "UniversalCopy<", "SM80_CP_ASYNC_CACHEGLOBAL<uint64_t>", "SM75_U32x2_LDSM_N'; DROP TABLE atoms; --", "x" * 150]:
    t = SEED.replace('atom = "SM75_U32x2_LDSM_N"', f"atom = {toml_str(a)}")
    add(f"atom-copy-{a[:30]}", t, line=6, needle="atom")
# (a known type the atom cannot move, e.g. double through ldmatrix, is CuTe's static_assert: a
#  refutation of type_agreement, tests/test_soundness_concrete.py, not an input error)
# (fp16, float16, bf16, __nv_bfloat16 are aliases of half_t / bfloat16_t: tests/test_cli_ux.py)
for ty in ["float17", "fp8", "bf17", "int7_t", "", "Half_T",
           "half_t; rm -rf /", "__import__('os')", "std::string", "x" * 120]:
    t, n = replace_value(SEED, "type", toml_str(ty))
    add(f"type-name-{ty[:30]}", t, line=n, needle="type")
for ty in ["halft", "float17", "nope"]:
    t, n = replace_value(TM_SEED, "type", toml_str(ty))
    add(f"tm-type-name-{ty}", t, line=n, needle="type")

# ---------------------------------------------------------------- 6. garbage layouts

GARBAGE = [
    "", " ", "(", ")", "((", "))", "(32,16", "32,16):(16,1)", "(32,16):(16,1", "(32,16):(16,1))", "(32,16):",
    ":(16,1)", "(32,16)::(16,1)", "(32,,16):(16,1)", "(32,16):(16,1,1)", "(32,16):(16)", "((32,16):(16,1)",
    "[32,16]:[16,1]", "{32,16}:{16,1}", "32x16", "(32;16):(16;1)", "(a b)", "(32,16):(16,1) extra",
    "Sw<3,3> o (32,16):(16,1)", "Sw<3,3,3 o (32,16):(16,1)", "Sw<-1,3,3> o (32,16):(16,1)", "Sw<3,3,3> o",
    "Sw<3,3,3>", "o (32,16):(16,1)", "(32,16):(16,1) o Sw<3,3,3>", "Sw<3,3,3> o (32,16):(16,1) o (1,1)",
    "(32.0,16):(16,1)", "(0x20,16):(16,1)", "(1e3,16):(16,1)", "(32/2,16):(16,1)", "(32**2,16):(16,1)",
    "(32,16):(16,1);rm -rf /", "$(rm -rf /)", "`ls`", "${HOME}", "%s%s%s%n", "' or 1=1 --",
    "__import__('os').system('x')", "eval('1')", "lambda: 1", "(32,16):(16,1) if True else 0", "_",
    "(32,16)", "32:1", "16", "(32,16,1):(16,1,0)", "(32,(16)):(16,1)", "(３２,16):(16,1)", "(32,16):(16,1)\u0000",
    "(32,16):(16,1)\u200b", "(32,16)\t:\t(16,1)#", "(32,16):(16,1)\\", "\"(32,16):(16,1)\"", "(32,16):(16,1)'",
    "(_,16):(16,1)", "(32,16):(_,1)", "((32,16)):((16,1))", "(32,16):(16,x)", "(32,16):(16,1)(8,8):(8,1)",
    "Sw<3,3,3> o 1.5 o (32,16):(16,1)", "Sw<99,3,3> o (32,16):(16,1)", "(32 16):(16 1)", "(32,16);(16,1)",
    "é", "(32,16):(16,-)", "(32,16):(16,+)", "(32*,16):(16,1)", "(32//0,16):(16,1)", "(32%0,16):(16,1)",
]
for g in GARBAGE:
    t, n = replace_value(SEED, "smem", toml_str(g))
    if g != "(32,16,1):(16,1,0)":      # version 2: a rank-3 A/B smem layout is (M,K,PIPE), here one stage
        add(f"garbage-smem-{g!r}", t, line=n, needle="smem")
    t, n = replace_value(SEED, "layout", toml_str(g))
    if g not in ("_", "16", "(32,16)", "32:1", "(32,(16)):(16,1)", "((32,16)):((16,1))", "(32,16,1):(16,1,0)"):
        add(f"garbage-layout-{g!r}", t, line=n, needle="layout")
for g in GARBAGE[:45]:
    if g.strip() in ("", "_", "16", "(32,16)", "32:1", "(32,16)\t:\t(16,1)#"):
        continue
    t, n = replace_value(PARAM_SEED, "permutation", f'["32", {toml_str(g)}, "16"]')
    add(f"garbage-permutation-{g!r}", t, line=n, needle="permutation")

# ---------------------------------------------------------------- 7. zero / negative / huge sizes, tiles

for s in ["(0,16):(16,1)", "(-32,16):(16,1)", "(32,0):(16,1)", "(32,-16):(16,1)", "(4294967296,16):(16,1)",
          "(99999999999999999999,16):(16,1)", "(32,16):(99999999999,1)", "(1000000000000000000000000000000000,16):(16,1)",
          "(32,16):(16,1000000000000)", "(0,0):(0,0)", "(32,16):(16,1)" + "*0", "(32*0,16):(16,1)",
          "(32-64,16):(16,1)", "(30,16):(16,1)", "(32,12):(16,1)", "(48,16):(16,1)", "(16,16):(16,1)",
          "(32,8):(8,1)", "((16,2),(4,2)):((2,16),(32,1))", "Sw<3,3,3> o (16,64):(64,1)"]:
    t, n = replace_value(SEED, "smem", toml_str(s))
    add(f"size-smem-{s}", t, line=n)
for s in ["(0,2,1)", "(-2,2,1)", "(2048,1,1)", "(1024,2,1)", "(2,2,1,1)", "(2,2,1):(1,2,-0)x", "(2*2,0,1)",
          "(99999999999999999999,1,1)"]:
    t, n = replace_value(SEED, "layout", toml_str(s))
    add(f"size-layout-{s}", t, line=n)
for p in ['["0"]', '["-32"]', '["99999999"]', '["32", "0", "16"]', "[0]", "[-1]", '["(0,4):(1,4)"]',
          '["(4096,4096):(1,4096)"]', '["30", "32", "16"]', '["32", "32", "17"]', '["65537"]']:
    t, n = replace_value(PARAM_SEED, "permutation", p)
    add(f"size-permutation-{p}", t, line=n)
for a in ["0", "-128", "3", "96", "1048576", "9223372036854775807", "-9223372036854775808", "129"]:
    t, n = replace_value(PARAM_SEED, "align", a)
    add(f"size-align-{a}", t, line=n, needle="align")
for key, vals in {"threads": ["0", "-1", "5000", "9223372036854775807"], "extent": ["0", "-5", "1099511627776"],
                  "elements_per_access": ["0", "-8", "100000"], "iterations": ["0", "-1", "1000000", "[0, 1]"],
                  "align": ["0", "3", "24"]}.items():
    for v in vals:
        t, n = replace_value(TM_SEED, key, v)
        add(f"size-threadmap-{key}-{v}", t, line=n)
for key, vals in {"shape": ["[0, 8]", "[1073741824, 1073741824]", "[64, 0]"], "threads": ["0", "2048"],
                  "warp_arrangement": ["[0, 4]", "[2048, 1]"], "elements_per_access": ["0", "3"]}.items():
    for v in vals:
        t, n = replace_value(CUTLASS_TM_SEED, key, v)
        # CUTLASS's static_asserts (e.g. 64 % 3) are located at the [threadmap] table
        add(f"size-cutlass-{key}-{v}", t, line=1 if (key, v) == ("elements_per_access", "3") else n)
for spec in ["min = 0, max = 64", "min = -1, max = 64", "min = 1, max = 0", "min = 1, max = 1099511627776",
             "min = 1, max = 64, multiple_of = 0", "min = 1, max = 64, multiple_of = -2", "min = 64, max = 1",
             "max = 1, min = 2", "min = 3, max = 5, multiple_of = 8", "min = 9223372036854775807, max = 1",
             "min = 1, max = 64, multiple_of = 128"]:
    add(f"params-{spec}", set_line(PARAM_SEED, PARAM_M_LINE, f"m = {{ {spec} }}"), line=PARAM_M_LINE)
for name in ["1m", "o", "Sw", "_x", "m-n", "m n", "\u00e9", ""]:
    add(f"params-name-{name!r}", set_line(PARAM_SEED, PARAM_M_LINE, f"{toml_str(name)} = {{ min = 1, max = 64 }}"),
        line=PARAM_M_LINE)

# ---------------------------------------------------------------- 8. undefined symbols

for s, needle in [("(32*m,16):(16,1)", "undefined symbol 'm'"), ("(32,16):(16*k,1)", "undefined symbol 'k'"),
                  ("(32*M,16):(16,1)", "'M'"), ("(32*m,16*k):(16*k,1)", "'m'"), ("Sw<3,3,3> o (32*w,64):(64,1)", "'w'")]:
    t, n = replace_value(SEED, "smem", toml_str(s))
    add(f"symbol-{s}", t, line=n, needle=needle)
for s, needle in [("(32*n,16):(16,1)", "'n'"), ("(32*mm,16):(16,1)", "did you mean 'm'"), ("(32,16):(16*k,1)", "'k'")]:
    t, n = replace_value(PARAM_SEED, "smem", toml_str(s))
    add(f"symbol-param-{s}", t, line=n, needle=needle)
for s in ["(2*m,2,1)", "(m,2,1)"]:
    t, n = replace_value(PARAM_SEED, "layout", toml_str(s))
    add(f"symbol-layout-{s}", t, line=n, needle="concrete")
t, n = replace_value(SEED, "layout", toml_str("(2*w,2,1)"))
add("symbol-layout-undefined", t, line=n, needle="'w'")
t, n = replace_value(PARAM_SEED, "permutation", '["32*m", "32", "16"]')
add("symbol-permutation-param", t, line=n, needle="concrete")
t, n = replace_value(PARAM_SEED, "permutation", '["32*p", "32", "16"]')
add("symbol-permutation-undefined", t, line=n, needle="'p'")

# ---------------------------------------------------------------- 9. deep nesting

for depth in (200, 2000, 10_000):
    t, n = replace_value(SEED, "smem", toml_str("(" * depth + "32" + ")" * depth))
    add(f"nest-smem-{depth}", t, line=n)
    t, n = replace_value(TM_SEED, "offset", toml_str("(" * depth + "t" + ")" * depth))
    add(f"nest-offset-{depth}", t, line=n)
    t, n = replace_value(TM_SEED, "offset", toml_str("-" * depth + "t"))
    add(f"nest-offset-neg-{depth}", t, line=n)
    add(f"nest-toml-array-{depth}", SEED + "x = " + "[" * depth + "]" * depth + "\n")
    add(f"nest-toml-table-{depth}", SEED + "x = " + "{a=" * depth + "1" + "}" * depth + "\n")
    add(f"nest-toml-name-{depth}", "name = " + "[" * depth + "]" * depth + "\n" + SEED)
add("nest-toml-header", "[" + "a." * 5000 + "b]\nx = 1\n" + SEED, line=1)
add("nest-toml-unclosed", "x = " + "[" * 10_000 + "\n")
add("nest-long-sum", SEED.replace('"(32,16):(16,1)"', toml_str("(" + "1+" * 3000 + "1,16):(16,1)")), line=8)

# ---------------------------------------------------------------- 10. injection attempts in formulas

INJECT = [
    "__import__('os').system('x')", "t.__class__", "exec('x')", "t if t else 0", "t; import os", "t\nimport os",
    "os.system('ls')", "t ** 2", "t / 2", "t[0]", "lambda t: t", "[t for t in range(3)]", "t and i", "f'{t}'", "'t'",
    '"t"', "t # comment", "t @ 2", "t << 2", "t >> 1", "t & 1", "t | 1", "t ^ 1", "~t", "not t", "t == 1", "t < 1",
    "t, i", "{t}", "$t", "`t`", "t.real", "globals()", "open('/etc/passwd')", "x + t", "m + t", "1 // 0 + t",
    "t % 0", "t // (t - t)", "9" * 70 + " + t", "t + " * 2000 + "t", "", "   ", "t +", "(t", "t)", "abs(t)",
    "t\u0000", "t\u00a0+ 1", "\u0442", "True", "None", "t.bit_length()", "getattr(t, 'x')", "t if True else 0",
    "yield t", "await t", "t := 1", "*t", "**t", "t; t", "{'a': t}", "t[::-1]", "0t", "08 + t", "t + 1.0", "1e3 * t",
]
for f in INJECT:
    t, n = replace_value(TM_SEED, "offset", toml_str(f))
    add(f"inject-offset-{f[:40]!r}", t, line=n)
for f in ["__import__('os').system('x')", "eval('1')", "os.system('ls')", "$(reboot)"]:
    t, n = replace_value(TM_SEED, "kind", toml_str(f))
    add(f"inject-kind-{f}", t, line=n, needle="kind")
    t, n = replace_value(SEED, "layout", toml_str(f))
    add(f"inject-layout-{f}", t, line=n)

# ---------------------------------------------------------------- 10b. limits (issue 26 items 7, 8)

HOPPER_SEED = """\
[mma]
atom = "SM90_64x64x16_F16F16F16_SS<GMMA::Major::MN,GMMA::Major::MN>"
layout = "(1,1,1)"

[smem.A]
type = "half_t"
layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((64,2),(8,8),(1,3)):((1,512),(64,1024),(0,8192))"

[smem.B]
type = "half_t"
layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((64,2),(8,8),(1,3)):((1,512),(64,1024),(0,8192))"
"""
# swizzles CuTe does not compile (its masks are 32-bit ints), and swizzle parameters too long to read
for sw in ["Sw<3,3,16000000000>", "Sw<3,3,27>", "Sw<0,31,1>", "Sw<4,3,-26>", "Sw<2,3,2147483647>",
           "Sw<3," + "9" * 5000 + ",3>"]:
    t, n = replace_value(SEED, "smem", toml_str(sw + " o 0 o (32,16):(16,1)"))
    add(f"limit-swizzle-{sw[:30]}", t, line=n)
    t, n = replace_value(PARAM_SEED, "smem", toml_str(sw + " o 0 o (32*m,16):(16,1)"))
    add(f"limit-swizzle-family-{sw[:30]}", t, line=n)
    t = HOPPER_SEED.replace("Sw<3,4,3> o smem_ptr", sw + " o smem_ptr", 1)
    add(f"limit-swizzle-gmma-{sw[:30]}", t, line=line_of(HOPPER_SEED, "layout = \"Sw"))
# a GMMA family whose largest member spans beyond 2^32 bytes (it was enumerated: a 4 EiB array, exit 4)
for big, pmax in [("((64,9223372036854775808),(8,8),(1,P))", 8), ("((64,2),(8,8),(1,P))", 2147483647)]:
    t = f"[params]\nP = {{ min = 1, max = {pmax} }}\n" + HOPPER_SEED.replace("((64,2),(8,8),(1,3))", big, 1)
    add(f"limit-gmma-family-span-{pmax}", t, line=line_of(t, "layout = \"Sw"), needle="32-bit shared-memory")
# the thread limit counts the atoms' threads: 9 warpgroups, 33 warps
for lay, seed in [("(9,1,1)", HOPPER_SEED), ("(1024,1,1)", HOPPER_SEED), ("(33,1,1)", SEED), ("(8,4,2)", SEED)]:
    t, n = replace_value(seed, "layout", toml_str(lay))
    add(f"limit-threads-{lay}-{seed is SEED}", t, line=n, needle="threads; a block has at most 1024")
# TMA swizzle modes of 32- and 64-byte chunks (CuTe's 128B_ATOM_32B / 64B) are not modelled
TMA_SEED = HOPPER_SEED + '[tma.A]\ngmem = "(128,64):(1,128)"\nbox = "(128,64)"\n'
for sw, mode in [("Sw<2,5,2>", "128B_ATOM_32B"), ("Sw<2,6,2>", "128B_ATOM_64B")]:
    t = TMA_SEED.replace("Sw<3,4,3> o smem_ptr", sw + " o smem_ptr", 1)
    add(f"limit-tma-swizzle-{mode}", t, line=line_of(TMA_SEED, "layout = \"Sw"), needle=mode)
    add(f"limit-tma-hand-swizzle-{mode}", TMA_SEED + f'swizzle = "{sw}"\n', line=TMA_SEED.count("\n") + 1,
        needle=mode)
# a blank permutation entry is not "_" (issue 26 item 11)
for v in ['["", "32", "16"]', '["32", " ", "16"]', '["32", "32", "\\t"]']:
    t, n = replace_value(PARAM_SEED, "permutation", v)
    add(f"limit-permutation-blank-{v}", t, line=n, needle="blank")
# auto-vectorizing copies of sub-byte elements
for atom in ("AutoVectorizingCopy", "DefaultCopy", "AutoVectorizingCopyWithAssumedAlignment<8>"):
    for typ in ("uint1_t", "int4b_t"):
        t = SEED.replace('"SM75_U32x2_LDSM_N"', toml_str(atom)).replace('"half_t"', toml_str(typ))
        add(f"limit-subbyte-{atom}-{typ}", t, line=line_of(SEED, "type"), needle="sub-byte")

# ---------------------------------------------------------------- 11. files that are not configurations


def _dir(tmp_path):
    d = tmp_path / "adir.toml"
    d.mkdir()
    return d


def _empty_dir(tmp_path):
    d = tmp_path / "configs"
    d.mkdir()
    (d / "notes.txt").write_text("not a config")
    return d


def _missing(tmp_path):
    return tmp_path / "missing.toml"


def _in_dir_bad(tmp_path):
    d = tmp_path / "proofs"
    (d / "sub").mkdir(parents=True)
    (d / "sub" / "bad.toml").write_text(SEED.replace("half_t", "halft"))
    return d


add("file-dir-show", _dir, command="show", whole_file=True)
add("file-dir-cute", _dir, command="cute", whole_file=True)
add("file-dir-explain", _dir, command="explain", whole_file=True)
add("file-empty-dir", _empty_dir, whole_file=True, needle="no *.toml")
add("file-missing", _missing, whole_file=True, needle="no such file")
add("file-missing-show", _missing, command="show", whole_file=True, needle="no such file")
add("file-in-dir", _in_dir_bad, needle="did you mean 'half_t'")
add("file-empty", "", line=1, needle="nothing to prove")
add("file-whitespace", " \n\t\n\n", line=1, needle="nothing to prove")
add("file-comment", "# just a comment\n", line=1, needle="nothing to prove")
add("file-binary-nul", bytes(range(256)) * 4, needle="not a text file")
add("file-binary-utf16", SEED.encode("utf-16"), needle="not")
add("file-latin1", ("name = \"caf\u00e9\"\n" + SEED).encode("latin-1"), line=1, needle="UTF-8")
add("file-bad-utf8-later", (SEED + "# \xff\n").encode("latin-1"), line=9, needle="UTF-8")
add("file-bom-garbage", "\ufeff{{{".encode("utf-8"), line=1)
add("file-huge", "# " + "x" * (1 << 20) + "\n" + SEED, whole_file=True, needle="too large")
add("file-elf", b"\x7fELF\x02\x01\x01" + b"\x00" * 64, needle="not a text file")
add("file-png", b"\x89PNG\r\n\x1a\n" + bytes(range(200)), needle="not")
add("file-json", json.dumps({"mma": {"atom": "SM80_16x8x16_F16F16F16F16_TN"}}), line=1, needle="invalid TOML")
add("file-yaml", "mma:\n  atom: SM80_16x8x16_F16F16F16F16_TN\n", line=1, needle="invalid TOML")
add("file-cpp", "auto mma = make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN{}, Layout<Shape<_2,_2,_1>>{});\n", line=1)
add("file-dup-key", SEED + 'smem = "(32,16):(16,1)"\n', needle="invalid TOML")
add("file-dup-table", SEED + "[mma]\n", needle="invalid TOML")

# other commands load the same way
for cmd in ("show", "cute", "explain", "gpu"):
    for i, (bad, needle) in enumerate([(SEED.replace("half_t", "halft"), "did you mean 'half_t'"),
                                       (SEED.replace("(32,16):(16,1)", "(32,16:(16,1)"), "column"),
                                       (SEED[:40], "invalid TOML")]):
        add(f"cmd-{cmd}-{i}", bad, command=cmd, needle=needle)


# ---------------------------------------------------------------- the test


def _argv(command, path):
    if command == "explain":
        return ["explain", path, "--operand", "A", "--thread", "0", "--slot", "0"]
    return [command, path]


def test_enough_cases():
    assert len(CASES) >= 500
    assert len({c.id for c in CASES}) == len(CASES), "case ids must be unique"


@pytest.mark.parametrize("case", CASES, ids=[c.id[:80] for c in CASES])
def test_bad_input(case, tmp_path, capsys):
    if callable(case.content):
        path = case.content(tmp_path)
    else:
        path = tmp_path / "config.toml"
        if isinstance(case.content, bytes):
            path.write_bytes(case.content)
        else:
            path.write_text(case.content, encoding="utf-8")
    rc = cli.main(_argv(case.command, str(path)))
    out, err = capsys.readouterr()
    assert rc == 2, f"exit {rc}; stdout={out[:300]!r}; stderr={err[:500]!r}"
    assert "Traceback" not in err and "internal error" not in err, err
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err[:2000]!r}"
    assert err.startswith("symlayout: error: "), err
    assert out == ""
    msg = err[len("symlayout: error: "):]
    if case.whole_file:
        assert str(path) in msg or path.name in msg, msg
    else:
        loc = re.match(r"(.+?\.toml):(\d+):(?:(\d+):)? ", msg)
        assert loc, f"no file:line in {msg!r}"
        assert loc.group(1).endswith(".toml")
        if case.line is not None:
            assert int(loc.group(2)) == case.line, f"expected line {case.line}: {msg!r}"
    if case.needle is not None:
        assert case.needle in msg, f"expected {case.needle!r} in {msg!r}"


# ---------------------------------------------------------------- sanity: the seeds themselves load


@pytest.mark.parametrize("text", [SEED, PARAM_SEED, TM_SEED, CUTLASS_TM_SEED])
def test_seeds_are_valid(text, tmp_path):
    from symlayout.config import load_config
    p = tmp_path / "ok.toml"
    p.write_text(text)
    cfg = load_config(p)
    assert cfg.kind in ("mma", "threadmap")


@pytest.mark.parametrize("sname", sorted(SEEDS))
def test_valid_cut_oracle(sname, tmp_path):
    """The prefixes the truncation cases skip are exactly the loadable ones."""
    from symlayout.config import load_config
    from symlayout.errors import ConfigError
    text, cuts = SEEDS[sname]
    lines = text.split("\n")
    valid_prefixes = {"\n".join(lines[:k]).rstrip() for k in cuts}
    for k in range(1, len(lines) + 1):
        p = tmp_path / f"cut{k}.toml"
        prefix = "\n".join(lines[:k])
        p.write_text(prefix)
        try:
            load_config(p)
            ok = True
        except ConfigError:
            ok = False
        assert ok == (prefix.rstrip() in valid_prefixes), (k, lines[:k])


def test_prove_json_reports_load_errors(tmp_path, capsys):
    good = tmp_path / "good.toml"
    good.write_text(SEED)
    bad = tmp_path / "bad.toml"
    bad.write_text(SEED.replace("half_t", "halft"))
    rc = cli.main(["prove", "--json", str(bad), str(good)])
    out, err = capsys.readouterr()
    assert rc == 2
    doc = json.loads(out)
    entries = {e["path"]: e for e in doc["configs"]}
    assert "did you mean 'half_t'" in entries[str(bad)]["error"]
    assert entries[str(bad)]["ok"] is False
    assert doc["summary"]["errors"] == 1
    assert err.count("\n") == 1
