"""The configuration's JSON Schema (issue 27): made from ``symlayout/config/keys.py``, published as
``docs/config.schema.json``, and agreeing with the loader: every configuration in ``proofs/`` and every
TOML example of the docs validates; bad inputs fail both the schema and the loader."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from symlayout.config import find_config_files, loads_config
from symlayout.config.keys import TABLES, TOP
from symlayout.config.schema import schema, schema_text
from symlayout.errors import ConfigError

jsonschema = pytest.importorskip("jsonschema")

REPO = Path(__file__).resolve().parents[1]
PUBLISHED = REPO / "docs" / "config.schema.json"
DOCS = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]
VALIDATOR = jsonschema.Draft202012Validator(json.loads(PUBLISHED.read_text()))


def _examples():
    """``(doc:line, text)`` of every ```toml block of the docs that is a configuration (not a solve input, not a
    sweep spec)."""
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for m in re.finditer(r"```toml\n(.*?)```", text, re.S):
            if not re.search(r"^\[(unknowns|space)\]", m.group(1), re.M):
                out.append((f"{doc.name}:{text[:m.start()].count(chr(10)) + 1}", m.group(1)))
    return out


def _errors(data) -> list:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(data)]


def test_published_schema_is_up_to_date():
    assert PUBLISHED.read_text() == schema_text(), "run: python -m symlayout.config.schema > docs/config.schema.json"


def test_schema_is_a_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(schema())
    assert schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_schema_names_every_described_key():
    s = schema()
    assert list(s["properties"]) == list(TOP.names)
    assert list(s["properties"]["copy"]["properties"]["C"]["properties"]) == list(TABLES["copy"].names)
    assert list(s["$defs"]["threadmap"]["properties"]) == list(TABLES["threadmap"].names)


# (prove mirrors this: the TOML files of proofs/ that are not configurations are skipped)
@pytest.mark.parametrize("path", find_config_files([REPO / "proofs"]), ids=lambda p: str(Path(p).relative_to(REPO)))
def test_every_proof_validates(path):
    assert _errors(tomllib.loads(Path(path).read_text())) == []


@pytest.mark.parametrize("where,text", _examples(), ids=[w for w, _ in _examples()])
def test_every_docs_example_validates(where, text):
    assert _errors(tomllib.loads(text)) == []


def test_docs_have_examples():
    names = {w.split(":")[0] for w, _ in _examples()}
    assert {"configs.md", "hopper.md", "README.md"} <= names


GOOD_MMA = '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\nlayout = "(2,2,1)"\n'
GOOD_A = '[copy.A]\natom = "SM75_U32x2_LDSM_N"\ntype = "half_t"\nsmem = "(32,16):(16,1)"\n'

#: (text, a piece of the schema's complaint, a piece of the loader's message)
BAD = [
    (GOOD_MMA + GOOD_A.replace("smem =", "smme ="), "'smme' was unexpected", "unknown key 'smme'"),
    (GOOD_MMA + GOOD_A.replace('type = "half_t"\n', ""), "'type' is a required property",
     "missing required key 'type'"),
    (GOOD_MMA + GOOD_A + "align = 24\n", "24 is not one of", "must be a positive power of two"),
    (GOOD_MMA + GOOD_A + "align = \"16\"\n", "'16' is not of type 'integer'", "must be an integer, not a string"),
    (GOOD_MMA + GOOD_A.replace("[copy.A]", "[copy.D]"), "'D' was unexpected", "unknown operand 'D'"),
    (GOOD_MMA + "[prove]\nproperties = [\"coverge\"]\n", "'coverge' is not one of", "unknown property 'coverge'"),
    (GOOD_MMA + "[prove]\ntimeout_s = 0\n", "less than or equal to the minimum of 0", "must be positive"),
    (GOOD_MMA + "[expect]\nrefuted = [\"bank_conflicts(A)\"]\n", "does not match", "is not a property name"),
    (GOOD_MMA + "[expect]\nmax_bank_degree = 33\n", "33 is greater than the maximum of 32", "must be <= 32"),
    (GOOD_MMA + "[params]\nm = { min = 0, max = 8 }\n", "0 is less than the minimum of 1", "must be >= 1"),
    (GOOD_MMA + "[params]\nSw = { max = 8 }\n", "'Sw' does not match", "not a valid symbol name"),
    (GOOD_MMA + "[stages]\ncount = 65\n", "65 is not valid under any of the given schemas", "must be <= 64"),
    (GOOD_MMA + "[mma.x]\n", "'x' was unexpected", "unknown key 'x'"),
    ("[threadmap]\nkind = \"PitchLinearStripminedThreadMap\"\nshape = [64, 8]\n",
     "'threads' is a required property", "needs the key 'threads'"),
    ("[threadmap]\nkind = \"PitchLinearStripminedThreadMap\"\nshape = [64, 8]\nthreads = 32\n"
     "warp_arrangement = [8, 4]\n",
     "'warp_arrangement' is not one of", "does not apply to kind"),
    ("[threadmap]\nkind = \"offset\"\nthreads = 32\noffset = \"t\"\nextent = 32\niterations = [1, 0]\n",
     "is not valid under any of the given schemas", "entries must be positive"),
    ("nmae = \"x\"\n" + GOOD_MMA, "'nmae' was unexpected", "unknown key 'nmae' (did you mean 'name'?)"),
]


@pytest.mark.parametrize("text,schema_says,loader_says", BAD, ids=[b[2] for b in BAD])
def test_bad_input_fails_the_schema_and_the_loader(text, schema_says, loader_says):
    errors = _errors(tomllib.loads(text))
    assert any(schema_says in e for e in errors), errors
    with pytest.raises(ConfigError, match=re.escape(loader_says)):
        loads_config(text, "bad.toml")


GMMA = ('[mma]\natom = "SM90_64x128x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>"\n'
        '[smem.B]\ntype = "half_t"\nlayout = "Sw<3,4,3> o smem_ptr[16b](unset) o (128,64):(64,1)"\n')
#: a whole configuration with each table that comes in operands (the table to take keys from is the last)
WHOLE = {
    "copy": GOOD_MMA + GOOD_A,
    "g2s": GOOD_MMA + GOOD_A + '[g2s.A]\natom = "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"\ntype = "half_t"\n'
                               'thr = "(16,2):(2,1)"\nval = "(1,8)"\ngmem = "(32,16):(16,1)"\n',
    "s2g": GOOD_MMA + '[s2g.C]\natom = "UniversalCopy<uint128_t>"\ntype = "half_t"\nsmem = "(32,32):(32,1)"\n'
                      'thr = "(32,4):(4,1)"\nval = "(1,8)"\ngmem = "(32,32):(32,1)"\n',
    "smem": GMMA + '[smem.A]\ntype = "half_t"\nlayout = "Sw<3,4,3> o smem_ptr[16b](unset) o (64,64):(64,1)"\n',
    "tma": GMMA + '[smem.A]\ntype = "half_t"\nlayout = "Sw<3,4,3> o smem_ptr[16b](unset) o (64,64):(64,1)"\n'
                  '[tma.A]\ngmem = "(64,64):(64,1)"\nbox = "(64,64)"\n',
    "tmem_copy": '[mma]\natom = "SM100_MMA_F16BF16_TS<half_t,half_t,float,128,64,UMMA::Major::K,UMMA::Major::K>"\n'
                 '[smem.B]\ntype = "half_t"\n'
                 'layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_64,_16),_1,_4):((_64,_1),_0,_16)"\n'
                 '[tmem]\ncolumns = 128\n[tmem_copy.C]\natom = "SM100_TMEM_LOAD_32dp32b16x"\n',
    "sf": (REPO / "proofs" / "blackwell" / "blockscaled" / "nvfp4_1sm_128x256x256.toml").read_text(),   # Version 3 (issue 29)
}


@pytest.mark.parametrize("table", [t for t in TABLES.values() if t.operands], ids=lambda t: t.name)
def test_a_required_key_is_required_by_the_loader(table):
    """keys.py's ``required`` is what the loader asks for: the whole configuration loads, and without
    any one required key of its last table it is refused, naming the key."""
    text = WHOLE[table.name]
    loads_config(text, "x.toml")
    head, last = text.rsplit("\n[", 1)
    assert last.startswith(table.name + ".")
    for key in (k for k in table.keys if k.required):
        without = head + "\n[" + re.sub(rf"(?m)^{key.name} = .*\n", "", last)
        with pytest.raises(ConfigError, match=re.escape(f"missing required key '{key.name}'")):
            loads_config(without, "x.toml")
        assert any(f"'{key.name}' is a required property" in e for e in _errors(tomllib.loads(without)))


def test_the_schema_directive_is_a_comment_to_the_loader():
    """``#:schema`` (Taplo's directive, docs/configs.md) on the first line leaves the configuration as it was."""
    text = GOOD_MMA + GOOD_A
    cfg = loads_config("#:schema ./docs/config.schema.json\n" + text, "x.toml")
    assert cfg.copies["A"].smem == loads_config(text, "x.toml").copies["A"].smem and cfg.copies["A"].line == 5
