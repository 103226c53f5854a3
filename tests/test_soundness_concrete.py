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


# ------------------------------------------------------------ 12, 13. inputs that are not judged: one line, exit 2

MMA_CFG = '[mma]\natom = "{atom}"\nlayout = "{layout}"\n'
COPY = '[copy.{op}]\natom = "{atom}"\ntype = "half_t"\nsmem = "{smem}"\n'


@pytest.mark.parametrize("text,needle", [
    (MMA_CFG.format(atom="SM90_64x64x16_F32F16F16_SS", layout="(2,1,1)"), "not supported: SM90 GMMA"),
    (MMA_CFG.format(atom="SM90_64x64x16_F32F16F16_RS", layout="(1,1,1)"), "not supported: SM90 GMMA"),
    (MMA_CFG.format(atom="SM90_64x128x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::MN>", layout="(1,1,1)"),
     "not supported: SM90 GMMA"),
    (MMA_CFG.format(atom=ATOM, layout="(2,2,1):(0,0,0)"), "atom 0 is used twice"),
    (MMA_CFG.format(atom=ATOM, layout="(2,2,1):(1,4,0)") + COPY.format(op="A", atom="SM75_U32x2_LDSM_N",
                                                                      smem="(32,16):(16,1)"), "reaches atom 5"),
    (MMA_CFG.format(atom=ATOM, layout="(2,2,1)") + COPY.format(op="C", atom="SM75_U32x4_LDSM_N",
                                                              smem="(32,32):(32,1)"), "is a load (ldmatrix"),
    (MMA_CFG.format(atom=ATOM, layout="(2,2,1)") + COPY.format(op="A", atom="SM90_U32x4_STSM_N",
                                                              smem="(32,16):(16,1)"), "is a store (stmatrix"),
    (MMA_CFG.format(atom=ATOM, layout="(2,2,1)") + COPY.format(op="A", atom="SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>",
                                                              smem="(32,16):(16,1)"), "global memory into shared"),
    (MMA_CFG.format(atom=ATOM, layout="(2,2,1)") + COPY.format(op="A", atom="SM75_U32x2_LDSM_N",
                                                              smem="(32,16):(16,1)") + "convert = true\n",
     "convert applies to [copy.C] only"),
])
def test_unsupported_or_impossible_inputs_are_one_line_errors(tmp_path, capsys, text, needle):
    p = write(tmp_path, text)
    for cmd in (["prove", p], ["show", p]):
        assert main(cmd) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1 and "internal error" not in err


def test_show_svg_into_a_missing_directory(tmp_path, capsys):
    p = write(tmp_path, MMA_CFG.format(atom=ATOM, layout="(2,2,1)")
              + COPY.format(op="A", atom="SM75_U32x2_LDSM_N", smem="(32,16):(16,1)"))
    assert main(["show", p, "--svg", str(tmp_path / "nope" / "x.svg")]) == 2
    out, err = capsys.readouterr()
    assert "no such directory" in err and err.count("\n") == 1 and out == ""
    assert main(["show", p, "--svg", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["show", p, "--svg", str(tmp_path / "ok.svg")]) == 0 and (tmp_path / "ok.svg").read_text().startswith("<")
