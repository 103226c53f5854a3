"""The prover: one failing case per property, mutants, soundness against exhaustive evaluation,
UNKNOWN on timeouts, the `prove --json` contract and exit codes."""
import dataclasses
import json
import multiprocessing as mp
from pathlib import Path

import pytest

from symlayout.atoms.copy import CopyAtom, get_copy_op
from symlayout.atoms.mma import get_mma_atom
from symlayout.cli import main
from symlayout.algebra.layout import Layout
from symlayout.prove.engine import prove_operand
from symlayout.prove.copy.model import build_operand_model
from symlayout.prove.copy.obligations import CHECKS, exactly_once
from symlayout.prove.copy.z3backend import check_z3, decide, tile_model_for
from symlayout.tiled.mma import make_tiled_mma

ATOM = "SM80_16x8x16_F16F16F16F16_TN"
REPO = Path(__file__).resolve().parents[1]


def verdicts(mma, op, copy, vt, smem, method="auto"):
    m = build_operand_model(mma, None, None, op, copy, vt, smem)
    if method == "z3":
        return {p: check_z3(p, m, 60).status for p in CHECKS}
    return {p: CHECKS[p](m).status for p in CHECKS}


@pytest.fixture(scope="module")
def mma():
    return make_tiled_mma(ATOM, "(2,2,1)")


# ------------------------------------------------------------ one failing case per property

def test_alignment_fails_on_padded_pitch(mma):
    (r,) = prove_operand(mma, None, None, "A", "SM75_U32x2_LDSM_N", "half_t", "(32,16):(20,1)",
                         properties=["alignment"])
    assert r.status == "refuted"
    cx = r.counterexample
    assert cx.thread == 1 and cx.address_bytes == 40 and "not 16-byte aligned" in cx.message


def test_alignment_fails_on_small_base_alignment(mma):
    m = build_operand_model(mma, None, None, "A", "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,1)", align=8)
    r = CHECKS["alignment"](m)
    assert r.status == "refuted" and "base alignment 8 B" in r.counterexample.message


def test_slot_agreement_fails_on_int8_through_a_16_bit_transpose():
    # CuTe compiles it (tests/test_cute_build.py), but ldmatrix .trans moves 16-bit elements: int8 pairs
    (r,) = prove_operand("SM80_16x8x32_S32S8S8S32_TN", "(1,1,1)", None, "B", "SM75_U16x2_LDSM_T", "int8_t",
                         "(8,32):(1,8)", properties=["slot_agreement"])
    assert r.status == "refuted"
    assert "delivers B(1,0), but the MMA expects B(0,1)" in r.counterexample.message
    assert r.counterexample.route[0].startswith("lane 0 provides &B(0,0)")


def test_m_major_with_ldsm_n_is_not_compiled_by_cute(mma):
    (r,) = prove_operand(mma, None, None, "A", "SM75_U32x4_LDSM_N", "half_t", "(32,16):(1,32)",
                         properties=["slot_agreement"])
    assert r.status == "refuted" and r.property == "alignment" and "src failed to vectorize" in r.counterexample.message


def test_bank_conflicts_fail_unswizzled_and_pass_swizzled(mma):
    (bad,) = prove_operand(mma, None, None, "A", "SM75_U32x4_LDSM_N", "half_t", "(64,64):(64,1)",
                           properties=["bank_conflicts"])
    (good,) = prove_operand(mma, None, None, "A", "SM75_U32x4_LDSM_N", "half_t", "Sw<3,3,3> o 0 o (64,64):(64,1)",
                            properties=["bank_conflicts"])
    assert bad.status == "refuted" and bad.counterexample.extra["degree"] == 8
    assert bad.counterexample.extra["lanes"] == [0, 1, 2, 3, 4, 5, 6, 7]
    assert good.status == "proved"


def test_seed_rows_conflict_two_way(mma):
    (r,) = prove_operand(mma, None, None, "A", "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,1)",
                         properties=["bank_conflicts"])
    # rows r and r+4 of each 8x8 matrix share banks: 2-way, lanes 0 and 4
    assert r.status == "refuted" and r.counterexample.extra["degree"] == 2
    assert r.counterexample.extra["lanes"] == [0, 4]


def test_in_bounds_fails_on_negative_stride(mma):
    (r,) = prove_operand(mma, None, None, "A", "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,-1)",
                         properties=["in_bounds"])
    assert r.status == "refuted" and "outside the smem tile" in r.counterexample.message


def test_type_agreement_fails_tf32_with_half_ldsm():
    (r,) = prove_operand("SM80_16x8x8_F32TF32TF32F32_TN", "(2,2,1)", None, "A", "SM75_U32x2_LDSM_N", "half_t",
                         "(32,16):(16,1)", properties=["type_agreement"])
    assert r.status == "refuted" and "tfloat32_t" in r.counterexample.message


def test_exactly_once_fails_for_overlapping_store_rows():
    mma = make_tiled_mma(ATOM, "(2,2,1)", ["32", "32", "16"])
    (r,) = prove_operand(mma, None, None, "C", "UniversalCopy<uint32_t>", "half_t", "(64,64):(32,1)",
                         properties=["exactly_once"])
    assert r.status == "refuted" and "written 2 times" in r.counterexample.message


def test_exactly_once_fails_when_a_call_is_duplicated(mma):
    m = build_operand_model(mma, None, None, "A", "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,1)")
    assert exactly_once(m).status == "proved"
    m.calls[3] = m.calls[3] + [m.calls[3][0]]
    r = exactly_once(m)
    assert r.status == "refuted" and r.counterexample.thread == 3


def test_coverage_fails_for_a_non_injective_mma_layout():
    A = get_mma_atom(ATOM)
    mut = dataclasses.replace(A, a_layout=Layout(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 8))))
    v = verdicts(make_tiled_mma(mut, "(2,2,1)"), "A", "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,1)")
    assert v["coverage"] == "refuted"


# ------------------------------------------------------------ mutants are refuted

@pytest.mark.parametrize("strides", [((32, 1), (8, 16, 128)), ((32, 1), (16, 128, 8)), ((1, 32), (16, 8, 128))])
def test_swapped_mma_strides_are_refuted(strides):
    A = get_mma_atom(ATOM)
    mut = dataclasses.replace(A, a_layout=Layout(((4, 8), (2, 2, 2)), strides))
    v = verdicts(make_tiled_mma(mut, "(2,2,1)"), "A", "SM75_U32x2_LDSM_N", "half_t", "(32,16):(16,1)")
    assert "refuted" in (v["slot_agreement"], v["coverage"], v["alignment"])


def test_mutated_copy_trait_is_refuted(mma):
    op = get_copy_op("SM75_U32x2_LDSM_N")
    bad = Layout((32, (32, 2)), (32, (1, 512)))
    mop = dataclasses.replace(op, dst_layout=bad, ref_layout=bad)
    v = verdicts(mma, "A", CopyAtom(mop, "half_t"), "half_t", "(32,16):(16,1)")
    assert v["slot_agreement"] == "refuted"


@pytest.mark.parametrize("smem", ["(32,16):(17,1)", "(32,16):(16,2)", "(32,16):(1,32)"])
def test_shifted_strides_are_refuted(mma, smem):
    v = verdicts(mma, "A", "SM75_U32x2_LDSM_N", "half_t", smem)
    assert v["alignment"] == "refuted"


def test_wrong_value_type_is_refuted(mma):
    v = verdicts(mma, "A", "SM75_U32x4_LDSM_N", "float", "(32,16):(16,1)")
    assert v["type_agreement"] == "refuted"


# ------------------------------------------------------------ soundness: Z3 == exhaustive

def _check_chunk(args):
    seed, n = args
    from symlayout.prove.campaigns.random_configs import random_configs
    bad, count = [], 0
    for m in random_configs(n, seed=seed, small=True):
        count += 1
        for p in CHECKS:
            a, b = CHECKS[p](m).status, check_z3(p, m, 60).status
            if a != b:
                bad.append((p, a, b, str(m.smem), m.atom.name, m.operand))
    return count, bad


def _z3_vs_exhaustive(chunks: int):
    jobs = [(1000 + i, 50) for i in range(chunks)]
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        res = pool.map(_check_chunk, jobs)
    total = sum(c for c, _ in res)
    bad = [b for _, bs in res for b in bs]
    assert total >= 50 * chunks
    assert bad == [], bad[:5]


def test_z3_equals_exhaustive_on_200_random_configs():
    _z3_vs_exhaustive(4)


@pytest.mark.slow
def test_z3_equals_exhaustive_on_1000_random_configs():
    _z3_vs_exhaustive(20)


def test_z3_equals_exhaustive_on_multi_tile_configs():
    for smem in ["(64,32):(32,1)", "Sw<2,3,3> o 0 o (64,32):(32,1)", "(64,32):(40,1)", "(64,32):(1,64)"]:
        for copy in ["SM75_U32x4_LDSM_N", "SM75_U16x8_LDSM_T"]:
            a = verdicts(make_tiled_mma(ATOM, "(2,2,1)"), "A", copy, "half_t", smem)
            b = verdicts(make_tiled_mma(ATOM, "(2,2,1)"), "A", copy, "half_t", smem, method="z3")
            assert a == b, (smem, copy, a, b)


def test_tiny_timeout_gives_unknown():
    from symlayout.config import Param
    from symlayout.algebra.notation import parse_layout
    mma = make_tiled_mma(ATOM, "(2,2,1)")
    S = parse_layout("Sw<3,3,3> o 0 o (64*m,64):(64,1)")
    tm = tile_model_for(mma, "A", "SM75_U32x4_LDSM_N", "half_t", 128)
    r = decide("bank_conflicts", tm, S, {"m": Param("m", 1, 1 << 20)}, timeout_s=0.0001)
    assert r.status == "unknown"


def test_parametric_refutation_names_smallest_value():
    from symlayout.config import load_config
    from symlayout.prove.engine import prove_config
    rep = prove_config(load_config(REPO / "proofs" / "parametric" / "row_pitch.toml"))
    (al,) = [r for r in rep.results if r.property == "alignment"]
    assert al.status == "refuted" and al.counterexample.params == {"p": 17}
    assert al.method == "z3"


# ------------------------------------------------------------ CLI contract

def test_prove_json_contract(capsys):
    rc = main(["prove", "--json", str(REPO / "proofs" / "seeds" / "seed_000_A_x2.toml"),
               str(REPO / "proofs" / "pitfalls" / "pitch_misaligned.toml")])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert set(doc) == {"configs", "summary"}
    c0 = doc["configs"][0]
    assert c0["ok"] is True and c0["path"].endswith("seed_000_A_x2.toml")
    res = {r["property"]: r for r in c0["results"]}
    assert res["slot_agreement"]["status"] == "proved" and res["slot_agreement"]["operand"] == "A"
    assert res["bank_conflicts"]["status"] == "refuted" and res["bank_conflicts"]["expected"] == "refuted"
    al = [r for r in doc["configs"][1]["results"] if r["property"] == "alignment"][0]
    assert al["counterexample"]["thread"] == 1 and al["counterexample"]["address_bytes"] == 40
    assert doc["summary"]["errors"] == 0 and doc["summary"]["refuted"] == 3


def test_exit_1_on_unexpected_refutation(tmp_path, capsys):
    p = tmp_path / "c.toml"
    p.write_text('[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\nlayout = "(2,2,1)"\n'
                 '[copy.A]\natom = "SM75_U32x2_LDSM_N"\ntype = "half_t"\nsmem = "(32,16):(20,1)"\n'
                 '[prove]\nproperties = ["alignment"]\n')
    assert main(["prove", str(p)]) == 1
    assert "expected PROVED" in capsys.readouterr().out


def test_exit_1_when_expected_refutation_is_proved(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\nlayout = "(2,2,1)"\n'
                 '[copy.A]\natom = "SM75_U32x2_LDSM_N"\ntype = "half_t"\nsmem = "(32,16):(16,1)"\n'
                 '[prove]\nproperties = ["alignment"]\n[expect]\nrefuted = ["alignment"]\n')
    assert main(["prove", str(p)]) == 1


def test_exit_3_on_unknown(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[params]\nm = { min = 1, max = 1048576 }\n'
                 '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\nlayout = "(2,2,1)"\n'
                 '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\nsmem = "Sw<3,3,3> o 0 o (64*m,64):(64,1)"\n'
                 '[prove]\nproperties = ["bank_conflicts"]\ntimeout_s = 0.0001\n')
    assert main(["prove", str(p)]) == 3


def test_jobs_gives_same_results(capsys):
    main(["prove", "--json", str(REPO / "proofs" / "seeds")])
    one = json.loads(capsys.readouterr().out)
    main(["prove", "--json", "--jobs", "2", str(REPO / "proofs" / "seeds")])
    two = json.loads(capsys.readouterr().out)
    strip = lambda d: [[(r["property"], r["status"]) for r in c["results"]] for c in d["configs"]]
    assert strip(one) == strip(two)


def test_z3_witnesses_are_rebuilt_from_the_tile_model_not_from_names():
    """The Z3 decider takes the built tile model; a witness's instantiated configuration keeps that model's
    atom and hand-built TiledCopy (a version-2 ``[copy.C]`` ``tv``/``tiler``), where a rebuild from the atom's
    name would have used ``make_tiled_copy_X`` instead."""
    from symlayout.algebra.notation import parse, parse_layout
    from symlayout.config import TiledCopySpec
    from symlayout.prove.copy.model import instantiated_model, stand_in_tile
    mma = make_tiled_mma(ATOM, "(2,2,1)")
    spec = TiledCopySpec(tv=parse("((4,8,2,2),((2,2),(1,1))):((64,1,16,256),((32,8),(0,0)))"), tiler=(32, 16))
    m = build_operand_model(mma, None, None, "C", "UniversalCopy<uint32_t>", "half_t", parse_layout("(32,32):(32,1)"),
                            tiled=spec)
    tm = stand_in_tile(m)
    w = instantiated_model(tm, parse_layout("(64,32):(32,1)"))
    assert tm.tiled is spec and w.tiled is spec
    assert w.atom is m.atom and w.mma is m.mma
    assert str(w.tiled_copy.tiled_layout_tv) == str(m.tiled_copy.tiled_layout_tv)
    assert {p: decide(p, tm, m.smem, {}, 60).status for p in ("coverage", "alignment")} == \
        {p: CHECKS[p](m).status for p in ("coverage", "alignment")}
