"""Issue 12, concrete verdicts: every PROVED is a proof (items 6-9, 11-14).

Each test here failed before its fix: vacuous proofs, AutoVectorizingCopy, element types,
configurations CuTe refuses to build, coverage of the bytes really moved, GMMA atoms rejected,
input errors and the enumeration limit."""
import json
import sys
from pathlib import Path

import pytest

from symlayout.cli import main
from symlayout.config import loads_config
from symlayout.prove.engine import prove_config
from symlayout.prove.copy.model import build_operand_model
from symlayout.prove.copy.obligations import CHECKS
from symlayout.prove.decide import tables
from symlayout.prove.verdict.result import VACUOUS, verdict
from symlayout.prove.threadmaps.obligations import prove_offset_formula

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
    from symlayout.prove.threadmaps.obligations import prove_threadmap
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
    # SM90 GMMA atoms read shared memory through descriptors: without the [smem.X] tile nothing is judged
    (MMA_CFG.format(atom="SM90_64x64x16_F32F16F16_SS", layout="(2,1,1)"), "needs an [smem.A] table"),
    (MMA_CFG.format(atom="SM90_64x64x16_F32F16F16_RS", layout="(1,1,1)"), "needs an [smem.B] table"),
    (MMA_CFG.format(atom="SM90_64x128x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::MN>", layout="(1,1,1)"),
     "needs an [smem.A] table"),
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


# ------------------------------------------------------------ 8. type_agreement compares element types

def _type_verdict(mma_atom, op, copy_atom, ty, smem, layout="(2,2,1)", perm=None):
    from symlayout.prove.engine import prove_operand
    from symlayout.tiled.mma import make_tiled_mma
    mma = make_tiled_mma(mma_atom, layout, perm)
    rs = prove_operand(mma, None, None, op, copy_atom, ty, smem, properties=["type_agreement"])
    (r,) = [r for r in rs if r.property == "type_agreement"]
    return r


@pytest.mark.parametrize("mma_atom,op,copy_atom,ty,smem,why", [
    (ATOM, "A", "SM75_U32x4_LDSM_N", "bfloat16_t", "(32,16):(16,1)", "reads A as half_t"),
    ("SM80_16x8x32_S32U8U8S32_TN", "A", "SM75_U32x4_LDSM_N", "int8_t", "(32,32):(32,1)", "reads A as uint8_t"),
    ("SM80_16x8x32_S32S8S8S32_TN", "B", "SM75_U32x2_LDSM_N", "uint8_t", "(16,32):(32,1)", "reads B as int8_t"),
    ("SM89_16x8x32_F32E4M3E4M3F32_TN", "A", "SM75_U32x4_LDSM_N", "float_e5m2_t", "(32,32):(32,1)",
     "reads A as float_e4m3_t"),
    ("SM89_16x8x32_F32E4M3E5M2F32_TN", "B", "SM75_U32x2_LDSM_N", "float_e4m3_t", "(16,32):(32,1)",
     "reads B as float_e5m2_t"),
    ("SM80_16x8x16_F32F16F16F32_TN", "C", "UniversalCopy<uint32_t>", "half_t", "(32,16):(16,1)", "accumulat"),
    ("SM80_16x8x16_F32BF16BF16F32_TN", "A", "AutoVectorizingCopy", "half_t", "(32,16):(16,1)",
     "not every half_t value"),
])
def test_type_agreement_refutes_same_width_other_types(mma_atom, op, copy_atom, ty, smem, why):
    r = _type_verdict(mma_atom, op, copy_atom, ty, smem)
    assert r.status == "refuted" and why in r.counterexample.message


@pytest.mark.parametrize("mma_atom,op,copy_atom,ty,smem,detail", [
    (ATOM, "A", "SM75_U32x4_LDSM_N", "half_t", "(32,16):(16,1)", ""),
    ("SM80_16x8x8_F32TF32TF32F32_TN", "A", "SM75_U32x4_LDSM_N", "float", "(32,8):(8,1)", "float storage read as tf32"),
    ("SM80_16x8x8_F32TF32TF32F32_TN", "A", "AutoVectorizingCopy", "half_t", "(32,16):(16,1)", "converted exactly"),
    ("SM80_16x8x16_F32F16F16F32_TN", "C", "AutoVectorizingCopy", "half_t", "(32,16):(16,1)", "accumulator (float)"),
])
def test_type_agreement_allows_what_the_hardware_or_cute_defines(mma_atom, op, copy_atom, ty, smem, detail):
    r = _type_verdict(mma_atom, op, copy_atom, ty, smem)
    assert r.status == "proved" and detail in r.detail


def test_converted_accumulator_store(tmp_path, capsys):
    """[copy.C] convert = true: convert_type<half_t>(float accumulators), then the copy (flash-attention's O)."""
    text = (MMA_CFG.format(atom="SM80_16x8x16_F32F16F16F32_TN", layout="(2,2,1)") + 'permutation = ["32", "32", "16"]\n'
            + COPY.format(op="C", atom="SM90_U32x4_STSM_N", smem="Sw<2,3,3> o (32,32):(32,1)"))
    code, doc = prove_json(capsys, write(tmp_path, text))
    assert code == 1 and doc["configs"][0]["results"][0]["property"] == "type_agreement"   # float bits via stmatrix
    code, doc = prove_json(capsys, write(tmp_path, text + "convert = true\n"))
    assert code == 0 and {r["status"] for r in doc["configs"][0]["results"]} == {"proved"}


# ------------------------------------------------------------ 7. AutoVectorizingCopy for A, B and C

AVC_CASES = [
    # (mma layout, permutation, operand, atom, smem, convert, vector width CuTe picks)
    ("(2,2,1)", None, "A", "AutoVectorizingCopy", "Sw<3,3,3> o (32,64):(64,1)", False, 2),
    ("(2,2,1)", None, "B", "AutoVectorizingCopy", "Sw<3,3,3> o (16,64):(64,1)", False, 2),
    ("(4,1,1)", ["64", "16", "16"], "C", "AutoVectorizingCopyWithAssumedAlignment<128>", "Sw<3,3,3> o (64,64):(64,1)",
     True, 2),                                   # flash-attention's O store
    ("(4,1,1)", ["64", "16", "16"], "C", "AutoVectorizingCopy", "Sw<3,3,3> o (64,64):(64,1)", False, 1),
    ("(2,2,1)", None, "A", "DefaultCopy", "Sw<3,3,3> o (32,64):(64,1)", False, 1),
]


@pytest.mark.parametrize("layout,perm,op,atom,smem,convert,width", AVC_CASES)
def test_auto_vectorizing_copy_is_proved_on_its_real_accesses(tmp_path, capsys, layout, perm, op, atom, smem, convert,
                                                               width):
    text = (MMA_CFG.format(atom="SM80_16x8x16_F32F16F16F32_TN", layout=layout)
            + (f"permutation = {perm!r}\n".replace("'", '"') if perm else "")
            + COPY.format(op=op, atom=atom, smem=smem) + ("convert = true\n" if convert else ""))
    code, doc = prove_json(capsys, write(tmp_path, text))
    res = {r["property"]: r for r in doc["configs"][0]["results"]}
    assert code == 0 and all(r["status"] == "proved" for r in res.values()), res
    for p in ("alignment", "in_bounds", "bank_conflicts", "exactly_once", "coverage"):
        assert res[p]["checked"] > 0
    cfg = loads_config(text)
    m = build_operand_model(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation, op, atom, "half_t", cfg.copies[op].smem,
                            convert=convert)
    assert m.vector_width == width and m.reg_bits_smem == 16 * width


def test_auto_vectorizing_copy_misaligned_rows_are_refuted():
    """CuTe vectorizes by the layout's static strides and assumes the pointer aligned: with a
    17-element pitch the 4-byte accesses of odd rows are misaligned (the GPU faults)."""
    m = build_operand_model(ATOM, "(2,2,1)", None, "A", "AutoVectorizingCopy", "half_t", "(32,16):(17,1)")
    assert m.vector_width == 2
    r = CHECKS["alignment"](m)
    assert r.status == "refuted" and "not 4-byte aligned" in r.counterexample.message
    m = build_operand_model(ATOM, "(2,2,1)", None, "A", "AutoVectorizingCopy", "half_t", "(32,16):(16,1)", align=2)
    assert CHECKS["alignment"](m).status == "refuted"            # base only 2-byte aligned


def test_auto_vectorizing_copy_with_params_is_not_supported(tmp_path, capsys):
    text = ('[params]\nm = { min = 1, max = 8 }\n' + MMA_CFG.format(atom=ATOM, layout="(2,2,1)")
            + COPY.format(op="A", atom="AutoVectorizingCopy", smem="(32*m,16):(16,1)"))
    assert main(["prove", write(tmp_path, text)]) == 2
    assert "not supported with [params]" in capsys.readouterr().out


# ------------------------------------------------------------ 11. coverage is about the bytes really moved

def test_coverage_counts_the_bytes_the_hardware_reads():
    """LDSM_N on an N-major B: CuTe's partition assigns every index once, but each lane's row address
    is followed by 16 contiguous bytes: the hardware reads 78 of the 512 elements.  (CuTe itself does
    not compile this one -- test_cute_build.py -- so the prover reports that; the model shows why.)"""
    from symlayout.tiled.mma import make_tiled_mma
    mma = make_tiled_mma(ATOM, "(2,2,1)", ["32", "32", "16"])
    m = build_operand_model(mma, None, None, "B", "SM75_U32x4_LDSM_N", "half_t", "(32,16):(1,32)")
    r = CHECKS["coverage"](m)
    assert r.status == "refuted" and r.counterexample.extra["elements_touched"] == 78
    assert "reads 78 of the 512" in r.counterexample.message


def test_coverage_refutes_a_route_whose_indices_cover_but_whose_rows_do_not():
    m = build_operand_model(ATOM, "(1,1,1)", None, "A", "SM75_U32x4_LDSM_N", "half_t", "(16,16):(16,1)")
    assert CHECKS["coverage"](m).status == "proved"
    sm = m.calls[1][0].smem                # lane 1's row: same indices, another one first
    sm[0], sm[1] = sm[1], sm[0]
    tables.forget(m)                       # (the model changed in place: its whole-tile tables are stale)
    r = CHECKS["coverage"](m)
    assert r.status == "refuted" and "never read" in r.counterexample.message


def test_stores_exactly_once_counts_the_bytes_written():
    m = build_operand_model(ATOM, "(2,2,1)", ["32", "32", "16"], "C", "SM90_U32x4_STSM_N", "half_t",
                            "Sw<2,3,3> o (32,32):(32,1)")
    assert CHECKS["exactly_once"](m).status == "proved"
    sm = m.calls[2][0].smem
    sm[0], sm[1] = sm[1], sm[0]           # the row starts one element later: overlaps its neighbour
    tables.forget(m)
    r = CHECKS["exactly_once"](m)
    assert r.status == "refuted" and "times (expected once)" in r.counterexample.message


def test_z3_links_indices_to_bytes(tmp_path, capsys):
    """A Z3 proof decides coverage on a stand-in tile (CuTe's indices) and proves every vector
    contiguous in the real layout; where one is not, the witness is checked on the bytes."""
    fam = ('[params]\nm = { min = 1, max = 4 }\n[mma]\natom = "SM80_16x8x32_S32S8S8S32_TN"\n'
           '[copy.B]\natom = "SM75_U16x2_LDSM_T"\ntype = "int8_t"\nsmem = "(8,32*m):(1,8)"\n'
           '[prove]\nproperties = ["coverage"]\n')
    code, doc = prove_json(capsys, write(tmp_path, fam))
    (r,) = doc["configs"][0]["results"]
    assert r["status"] == "unknown" and "not contiguous" in r["detail"]
    ok = fam.replace("SM75_U16x2_LDSM_T", "SM75_U32x1_LDSM_N").replace('"int8_t"', '"int8_t"').replace(
        "(8,32*m):(1,8)", "Sw<1,4,3> o (8,32*m):(32*m,1)")
    code, doc = prove_json(capsys, write(tmp_path, ok, "ok.toml"))
    (r,) = doc["configs"][0]["results"]
    assert r["status"] == "proved" and "contiguous vectors" in r["method"], r


# ------------------------------------------------------------ 14. bounded time and memory

BIG = (MMA_CFG.format(atom=ATOM, layout="(2,2,1)")
       + COPY.format(op="A", atom="SM75_U32x4_LDSM_N", smem="Sw<3,3,3> o (8192,8192):(8192,1)"))


def test_a_128_mb_tile_is_decided_by_z3_not_enumerated(tmp_path, capsys):
    from symlayout.prove.engine import EXHAUSTIVE_LIMIT
    p = write(tmp_path, BIG + '[prove]\nproperties = ["alignment", "in_bounds", "type_agreement"]\n')
    code, doc = prove_json(capsys, p)
    res = doc["configs"][0]["results"]
    assert code == 0 and [r["status"] for r in res] == ["proved"] * 3
    assert all(r["checked"] > 0 for r in res)
    assert any("z3" in r["method"] and f"enumeration limit {EXHAUSTIVE_LIMIT}" in r.get("detail", "") for r in res)
    assert main(["show", p]) == 2 and "show/explain list every element" in capsys.readouterr().err


# ------------------------------------------------------------ a swizzle inside one register


def test_swizzle_inside_a_register_uses_the_row_pointer_cute_hands_ldmatrix():
    """Sw<2,1,2> over int8 permutes 2-byte units inside each 16-byte ldmatrix row. CuTe's recast upcasts that
    swizzle away and hands ldmatrix the swizzled offset rounded down to 16 bytes (its C++ oracle: every row
    in bounds, every byte read; tests/oracle/fuzz_truth.jsonl.gz). Before, symlayout took the swizzled address
    of the row's first element (lane 31 at byte 2036: "out of bounds")."""
    from symlayout.prove.copy.model import swizzle_inside_register
    from symlayout.algebra.notation import parse_layout
    m = build_operand_model("SM80_16x8x32_S32S8S8S32_TN", "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "int8_t",
                            "Sw<2,1,2> o (32,64):(64,1)")
    assert m.cute_routes
    got = {p: CHECKS[p](m) for p in ("coverage", "in_bounds", "alignment", "slot_agreement", "bank_conflicts")}
    assert got["coverage"].status == "proved" and got["in_bounds"].status == "proved"
    assert got["alignment"].status == "refuted" and "not contiguous" in got["alignment"].counterexample.message
    assert "delivers A(0,20), but the MMA expects A(0,16)" in got["slot_agreement"].counterexample.message
    assert got["bank_conflicts"].counterexample.extra["degree"] == 4          # CuTe's oracle: 4-way
    # every row start CuTe hands the instruction is 16-byte aligned (the element offsets of int8)
    starts = {m.addr_table[c.smem[0]] for t in range(m.threads) for c in m.calls[t]}
    assert starts and all(a % 16 == 0 for a in starts)
    # the predicate: a swizzle unit below the register (2^M < 16 int8) only
    assert swizzle_inside_register(parse_layout("Sw<2,1,2> o (32,64):(64,1)"), 16)
    assert not swizzle_inside_register(parse_layout("Sw<3,4,3> o (32,64):(64,1)"), 16)
    assert not swizzle_inside_register(parse_layout("(32,64):(64,1)"), 16)


# ------------------------------------------------------------ a swizzle inside one ldmatrix row, CuTe rejects


_LDSM_F16 = ('[mma]\natom = "SM80_16x8x16_F32F16F16F32_TN"\nlayout = "(2,2,1)"\npermutation = ["32", "32", "16"]\n'
             '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\nsmem = "{smem}"\n'
             '[copy.B]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\nsmem = "{smem}"\n')


@pytest.mark.parametrize("smem", ["Sw<3,2,3> o 0 o (128,64):(64,1)", "Sw<3,2,3> o 0 o (128,32):(32,1)"])
def test_a_swizzle_inside_the_ldmatrix_row_is_cute_rejected_never_proved(smem):
    """Sw<3,2,3> over half_t flips bit 2 of the element offset, inside the 8-element (16-byte) row LDSM x4 reads
    as one uint128_t. cute::copy slices the swizzled partition at a run-time loop index, so the slice decays to
    (4,2):(1,4) with a run-time 4, and copy_unpack's recast<uint128_t> gives 2 registers: CuTe C++ fails
    "src failed to vectorize into registers" (issue 26.3; test_the_ldmatrix_row_rejection_is_cute_cpp). Before,
    the (128,64) tile's partition kept its swizzle, the check used its inner layout, and exactly_once and
    type_agreement were PROVED."""
    rep = prove_config(loads_config(_LDSM_F16.format(smem=smem)))
    assert rep.error is None and rep.results
    assert not [r for r in rep.results if r.status == "proved"]
    assert all(r.status == "refuted" and r.method == "cute" for r in rep.results)
    assert all("src failed to vectorize into registers" in r.counterexample.message for r in rep.results)


def test_the_same_copy_with_a_swizzle_above_the_row_keeps_its_proofs():
    rep = prove_config(loads_config(_LDSM_F16.format(smem="Sw<3,3,3> o 0 o (128,64):(64,1)")))
    assert rep.results and all(r.status == "proved" for r in rep.results)


@pytest.mark.slow
def test_the_ldmatrix_row_rejection_is_cute_cpp(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from cute_cpp import Compiler, cute_site
    if cute_site() is None:
        pytest.skip("CuTe C++ headers not installed (SYMLAYOUT_CUTE_SITE or cutlass_library)")
    c = Compiler(tmp_path)
    bad = ("SM80_16x8x16_F32F16F16F32_TN", "(2,2,1)", ("32", "32", "16"), "A", "SM75_U32x4_LDSM_N", "half_t",
           "Sw<3,2,3> o 0 o (128,64):(64,1)")
    assert any("src failed to vectorize into registers" in a for a in c.static_asserts(bad))
    assert c.static_asserts(bad[:-1] + ("Sw<3,3,3> o 0 o (128,64):(64,1)",)) == []
