"""Issue 12, concrete verdicts: every PROVED is a proof (items 6-9, 11-14).

Each test here failed before its fix: vacuous proofs, AutoVectorizingCopy, element types,
configurations CuTe refuses to build, coverage of the bytes really moved, GMMA atoms rejected,
input errors and the enumeration limit."""
import json

import pytest

from symlayout.cli import main
from symlayout.config import loads_config
from symlayout.prove.engine import prove_config
from symlayout.prove.model import build_operand_model
from symlayout.prove.properties import CHECKS
from symlayout.prove.result import VACUOUS, verdict
from symlayout.prove.threadmaps import prove_offset_formula

ATOM = "SM80_16x8x16_F16F16F16F16_TN"


def write(tmp_path, text, name="c.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def prove_json(capsys, *paths):
    code = main(["prove", "--json", *paths])
    return code, json.loads(capsys.readouterr().out)


# ------------------------------------------------------------ 6. vacuous is never PROVED

def test_zero_obligations_are_vacuous_not_proved():
    assert verdict(None, 0) == VACUOUS and verdict(None, 1) == "proved"
    m = build_operand_model(ATOM, "(2,2,1)", None, "A", "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,1)")
    for t in m.calls:                         # a route that moves nothing
        m.calls[t] = []
    for p in ("alignment", "in_bounds", "bank_conflicts"):
        r = CHECKS[p](m)
        assert r.status == VACUOUS and r.checked == 0, p


TM_EMPTY = """
[threadmap]
kind = "PitchLinearTilePolicyStripminedThreadStrided"
shape = [2, 32]
threads = 4
elements_per_access = 4
type = "half_t"
[prove]
properties = ["exactly_once", "in_bounds"]
"""


def test_vacuous_is_counted_apart_and_unmet(tmp_path, capsys):
    code, doc = prove_json(capsys, write(tmp_path, TM_EMPTY))
    st = {r["property"]: r["status"] for r in doc["configs"][0]["results"]}
    assert st == {"exactly_once": "vacuous", "in_bounds": "vacuous"}
    assert doc["summary"]["vacuous"] == 2 and doc["summary"]["proved"] == 0 and doc["summary"]["unmet"] == 2
    assert code == 1                          # a vacuous result does not meet an expected proved
    assert main(["prove", write(tmp_path, TM_EMPTY)]) == 1
    out = capsys.readouterr().out
    assert "VACUOUS" in out and "2 vacuous" in out and "2 unmet" in out


def test_vacuous_thread_map_with_z3_too(tmp_path):
    cfg = loads_config(TM_EMPTY)
    from symlayout.prove.threadmaps import prove_threadmap
    assert {r.status for r in prove_threadmap(cfg, method="z3")} == {VACUOUS}


def test_vacuous_member_of_a_formula_family():
    (r,) = prove_offset_formula("t", "p - 1", 1, "p", {"p": (1, 8)}, properties=["in_bounds"])
    assert r.status == VACUOUS and "p = 1" in r.detail
    (r,) = prove_offset_formula("t", "p", 1, "p", {"p": (1, 8)}, properties=["in_bounds"])
    assert r.status == "proved"
