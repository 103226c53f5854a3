"""The bundled block-scaled sweep spaces (issue 32): examples/sweep/sm100_blockscaled.toml (SM100 UMMA, the factors in
TMEM) and examples/sweep/sm120_blockscaled.toml (SM120 mma.sync, the factors in registers). Their first candidates
sweep with the expected statuses and reasons, the configurations of proofs/blackwell/blockscaled are members of
them with the status their budgets give, and CUTLASS's builder choices survive. (The CuTe C++ checks of samples
are tests/test_sweep_cute_sm1*0_blockscaled.py, ``-m slow``.)"""
from pathlib import Path

import pytest

from symlayout.atoms.blockscaled import parse_blockscaled_name
from symlayout.config import load_config
from symlayout.prove.decide.tables import index_table
from symlayout.prove.engine import prove_config
from symlayout.sweep import load_spec
from symlayout.sweep.prover import load_candidate, prove_candidate

ROOT = Path(__file__).resolve().parents[1]
SPACES = ROOT / "examples" / "sweep"
PROOFS = ROOT / "proofs" / "blackwell" / "blockscaled"


@pytest.fixture(scope="module")
def sm100():
    return load_spec(SPACES / "sm100_blockscaled.toml")


def _statuses(spec, ids):
    memo = {}
    return {i: prove_candidate(spec, i, memo) for i in ids}


def test_sm100_first_candidates_sweep_with_their_statuses(sm100):
    """NVFP4 1SM SW128, N = 64 and 128, 2..8 stages x 1..2 accumulator stages: legal up to the stage count whose
    A, B, SFA and SFB buffers and pipeline barriers pass 227 KiB (N = 128: 6 stages of 36 KiB), pruned after."""
    rows = _statuses(sm100, range(28))
    for i, r in rows.items():
        assert (r["format"], r["tile_n"], r["stages"], r["acc_stages"]) == ("nvfp4", 64 if i < 14 else 128,
                                                                             2 + (i % 14) // 2, 1 + i % 2)
        legal = r["tile_n"] == 64 or r["stages"] <= 6
        assert r["status"] == ("legal" if legal else "pruned"), r
        if legal:                       # (15 of the MMA side and the factors, 4 of the A/B stages)
            assert r["proved"] == 19 + 4 and r["refuted"] == 0, r
    assert rows[24]["reason"] == "smem_bytes 258160 > 232448 (sm100: shared memory per block)"     # 7 x 36880


def _ids(spec, **values):
    """The candidates whose variables have ``values``."""
    return [i for i in range(len(spec)) if all(spec.values(i)[k] == v for k, v in values.items())]


def test_sm100_known_bad_choices_are_rejected_with_the_right_reason(sm100):
    # CuTe's static_assert: a 2SM atom's N must be a multiple of 16 (200 is not)
    i = _ids(sm100, format="nvfp4", pair="_2x1SM", cluster="(2,1,1)", sw_bytes=128, tile_n=200, stages=2,
             acc_stages=1)[0]
    r = prove_candidate(sm100, i)
    assert r["status"] == "illegal" and "CuTe does not compile this atom" in r["reason"] and \
        "N-mode size should be a multiple of 16" in r["reason"], r
    # the 2SM atom in a cluster of one CTA (CUTLASS's builder: "Cluster shape not divisible by MMA size")
    i = _ids(sm100, format="mxfp8", pair="_2x1SM", cluster="(1,1,1)", sw_bytes=128, tile_n=128, stages=4,
             acc_stages=2)[0]
    r = prove_candidate(sm100, i)
    assert r["status"] == "illegal" and r["reason"].startswith("cta_pair[mma]: refuted:"), r
    # two accumulator stages of N = 256 and the factors: over the 512 TMEM columns (the builder takes 1 stage)
    i = _ids(sm100, format="nvfp4", pair="", sw_bytes=128, tile_n=256, stages=3, acc_stages=2)[0]
    assert prove_candidate(sm100, i)["reason"] == "tmem_columns 560 > 512 (sm100: tensor memory columns)"


# CUTLASS's builder choices (its examples' and unit tests' block-scaled tiles, SW128 K-major atoms, 1 accumulator
# stage for N = 256 and 2 otherwise) with a stage count that fits: legal
BUILDER = [("nvfp4", "", "(1,1,1)", 128, 4), ("nvfp4", "", "(1,1,1)", 256, 3), ("nvfp4", "_2x1SM", "(2,1,1)", 256, 4),
           ("mxfp4", "", "(1,1,1)", 128, 5), ("mxfp8", "", "(1,1,1)", 256, 4), ("mxfp8", "_2x1SM", "(2,1,1)", 192, 5),
           ("mxf8xf4", "", "(1,1,1)", 128, 6), ("mxfp8e5", "_2x1SM", "(2,1,1)", 256, 5)]


@pytest.mark.parametrize("fmt,pair,cluster,n,stages", BUILDER)
def test_sm100_cutlass_builder_choices_are_legal(sm100, fmt, pair, cluster, n, stages):
    i = _ids(sm100, format=fmt, pair=pair, cluster=cluster, sw_bytes=128, tile_n=n, stages=stages,
             acc_stages=1 if n == 256 else 2)[0]
    r = prove_candidate(sm100, i)
    assert r["status"] == "legal" and r["refuted"] == 0 and r["proved"] > 0, r


def _members(spec, cfg):
    """The candidates of ``spec`` with ``cfg``'s atom, cluster, A/B buffers, factor buffers and accumulator stages
    (``cfg``'s ``[tmem]``, else the builder's: 1 for N = 256, 2 otherwise)."""
    n = parse_blockscaled_name(cfg.mma.atom).n
    acc = cfg.tmem.accumulator_stages if cfg.tmem else 1 if n == 256 else 2
    out = []
    for i in range(len(spec)):
        d = spec.config(i)
        if d["mma"]["atom"] != cfg.mma.atom or d["tmem"]["accumulator_stages"] != acc:
            continue
        c = load_candidate(spec, i)
        if c.mma.cluster == cfg.mma.cluster and all(
                c.smem[x].layout.swizzle == cfg.smem[x].layout.swizzle and
                index_table(c.smem[x].layout.layout).tolist() == index_table(cfg.smem[x].layout.layout).tolist() and
                index_table(c.sf[x].smem).tolist() == index_table(cfg.sf[x].smem).tolist() for x in "AB"):
            out.append(i)
    return out


# proofs/blackwell/blockscaled's GEMMs in the SM100 space: their status there (all at a stage count that fits: the
# over-capacity builds are pitfalls, see test_the_space_and_the_prover_agree_on_the_sm100_over_capacity_pitfalls)
MEMBERS = {"nvfp4_1sm_128x256x256": "legal", "mxfp8_1sm_128x256x128": "legal", "nvfp4_2sm_256x256x256": "legal",
           "mxfp4_1sm_128x128x256": "legal", "mxfp8_2sm_256x192x128": "legal", "mxf8xmxf4_1sm_128x128x128": "legal",
           "nvfp4_1sm_128x128x256_tmem": "legal", "mxfp8_2sm_256x192x128_tmem": "legal",
           "nvfp4_1sm_128x128x256_tma": "legal", "mxf8xmxf4_1sm_128x128x128_tma": "legal"}


def test_the_block_scaled_proofs_are_members_of_the_sm100_space(sm100):
    assert sorted(MEMBERS) == sorted(p.stem for p in PROOFS.glob("*.toml"))
    for name, status in MEMBERS.items():
        ids = _members(sm100, load_config(str(PROOFS / f"{name}.toml")))
        assert ids, name
        assert {prove_candidate(sm100, i)["status"] for i in ids} == {status}, (name, ids)


@pytest.mark.parametrize("name,nbytes", [("nvfp4_128x256x256_5_stages_over_227k", 276560),
                                         ("mxfp8_128x256x128_6_stages_over_227k", 304224)])
def test_the_space_and_the_prover_agree_on_the_sm100_over_capacity_pitfalls(sm100, name, nbytes):
    """The space's smem_bytes (A, B, SFA, SFB, 16 barrier bytes a stage) prunes the over-capacity SM100 builds, and
    the prover, counting what the pitfall states ([smem.X] stages, [sf.X] buffers, [stages] barrier_bytes), refutes
    its in_bounds with the same byte count."""
    cfg = load_config(str(PROOFS / "pitfalls" / f"{name}.toml"))
    ids = _members(sm100, cfg)
    assert ids, name
    for i in ids:
        row = prove_candidate(sm100, i)
        assert row["status"] == "pruned" and row["reason"] == f"smem_bytes {nbytes} > 232448 (sm100: shared memory per block)"
    r = {(x.property, x.operand): x for x in prove_config(cfg).results}[("in_bounds", "stages.B")]
    assert r.status == "refuted" and r.counterexample.extra["bytes"] == nbytes


@pytest.fixture(scope="module")
def sm120():
    return load_spec(SPACES / "sm120_blockscaled.toml")


def test_sm120_first_candidates_sweep_with_their_statuses(sm120):
    """NVFP4, cooperative warps, SW128, 128x128x256: 2 stages legal (73,760 bytes), 3 over SM120's 101376 bytes; a
    256-row tile does not fit 2 stages."""
    rows = _statuses(sm120, range(12))
    assert [(r["tile_m"], r["tile_n"], r["stages"], r["status"]) for r in rows.values()][:4] == [
        (128, 128, 2, "legal"), (128, 128, 3, "pruned"), (128, 128, 4, "pruned"), (128, 256, 2, "pruned")]
    assert rows[0]["proved"] == 22 and rows[0]["bank_degree"] == 1
    assert rows[1]["reason"] == "smem_bytes 110640 > 101376 (sm120: shared memory per block)"
    assert all(r["status"] == "pruned" for i, r in rows.items() if i)


def test_sm120_known_bad_choices_are_refuted_with_the_right_first_refutation(sm120):
    i = _ids(sm120, format="mxfp4f8-u8", wm=4, sw_bytes=128, tile_m=128, tile_n=128, stages=2)[0]
    r = prove_candidate(sm120, i)
    assert r["status"] == "illegal" and r["reason"].startswith(
        "type_agreement[A]: refuted: the smem holds float_e2m1_unpacksmem_t (PTX .b4x16_p64"), r
    i = _ids(sm120, format="nvfp4-ue8m0", wm=2, sw_bytes=64, tile_m=128, tile_n=128, stages=2)[0]
    r = prove_candidate(sm120, i)
    assert r["status"] == "illegal" and r["reason"].startswith("sf_kind[sf.A]: refuted:") and \
        ".scale_vec::2X" in r["reason"], r


@pytest.mark.parametrize("fmt", ["nvfp4", "mxfp4", "mxfp8", "mxfp6", "mxfp4f8", "mxf8xf4"])
def test_sm120_cutlass_builder_choices_are_legal(sm120, fmt):
    """The builder's atom (SW128), both schedules' warps, 128x128 tiles, 2 stages (what StageCountAuto gives)."""
    for wm in (4, 2):
        r = prove_candidate(sm120, _ids(sm120, format=fmt, wm=wm, sw_bytes=128, tile_m=128, tile_n=128, stages=2)[0])
        assert r["status"] == "legal" and r["refuted"] == 0 and r["bank_degree"] == 1, r


def _sm120_members(spec, cfg):
    out = []
    for i in range(len(spec)):
        d = spec.config(i)
        if d["mma"]["atom"] != cfg.mma.atom or d["mma"]["layout"] != cfg.mma.raw_layout:
            continue
        c = load_candidate(spec, i)
        if all(c.copies[x].atom == cfg.copies[x].atom and c.copies[x].stages == cfg.copies[x].stages and
               index_table(c.copies[x].smem_staged).tolist() == index_table(cfg.copies[x].smem_staged).tolist() and
               index_table(c.sf[x].smem).tolist() == index_table(cfg.sf[x].smem).tolist() for x in "AB"):
            out.append(i)
    return out


# proofs/blackwell/blockscaled/sm120 in the SM120 space: each is one candidate, a 2-stage build (the builder's
# StageCountAutoCarveout<0>: 3 stages are over 99 KiB with their factors and barriers), so legal
SM120_MEMBERS = {"mxfp8_128x128x128": "legal", "mxfp4_f8f6f4_128x128x128": "legal", "nvfp4_128x128x256": "legal"}


def test_the_sm120_proofs_are_members_of_the_sm120_space(sm120):
    assert sorted(SM120_MEMBERS) == sorted(p.stem for p in (PROOFS / "sm120").glob("*.toml"))
    for name, status in SM120_MEMBERS.items():
        ids = _sm120_members(sm120, load_config(str(PROOFS / "sm120" / f"{name}.toml")))
        assert len(ids) == 1, (name, ids)
        assert prove_candidate(sm120, ids[0])["status"] == status, name


def test_the_space_and_the_prover_agree_on_the_3_stage_pitfall(sm120):
    """The space's smem_bytes (A, B, SFA, SFB, 16 barrier bytes a stage) prunes the 3-stage NVFP4 build, and the
    prover, counting what the pitfall states ([sf.X] buffers, [stages] barrier_bytes), refutes its in_bounds with
    the same byte count."""
    cfg = load_config(str(PROOFS / "sm120" / "pitfalls" / "nvfp4_3_stages_over_99k.toml"))
    ids = _sm120_members(sm120, cfg)
    assert len(ids) == 1
    row = prove_candidate(sm120, ids[0])
    assert row["status"] == "pruned" and row["reason"] == "smem_bytes 110640 > 101376 (sm120: shared memory per block)"
    r = {(x.property, x.operand): x for x in prove_config(cfg).results}[("in_bounds", "stages.A")]
    assert r.status == "refuted" and r.counterexample.extra["bytes"] == 110640


def _blackwell_keys(memo):
    return [k for k in memo if k and k[0] == "blackwell"]


@pytest.mark.parametrize("name", ["sm100_gemm.toml", "sm100_blockscaled.toml"])
def test_the_sm100_mma_piece_is_shared_between_accumulator_stages(name):
    """Candidates that differ only in their accumulator stages (the last variable of both SM100 spaces) share the
    MMA-side piece (``engine.part_key``: every table but ``[tmem]``): proved once, and the reports are the ones
    each proves alone (the block-scaled space's ``[tmem]`` piece, which reads the stages, is not shared)."""
    from dataclasses import replace
    from symlayout.prove.engine import config_parts, part_key
    spec = load_spec(SPACES / name)
    i = next(i for i in range(0, len(spec), 2) if prove_candidate(spec, i)["status"] == "legal"
             and prove_candidate(spec, i + 1)["status"] == "legal")
    assert [spec.values(i)["acc_stages"], spec.values(i + 1)["acc_stages"]] == [1, 2]
    memo = {}
    shared = [prove_config(load_candidate(spec, j), memo=memo) for j in (i, i + 1)]
    alone = [prove_config(load_candidate(spec, j)) for j in (i, i + 1)]
    assert len(_blackwell_keys(memo)) == 1
    assert [[{k: v for k, v in r.to_json().items() if k != "seconds"} for r in rep.results] for rep in shared] == \
        [[{k: v for k, v in r.to_json().items() if k != "seconds"} for r in rep.results] for rep in alone]
    other = load_candidate(spec, i + 2)                 # another stage count: another buffer, another key
    prove_config(other, memo=memo)
    assert len(_blackwell_keys(memo)) == 2
    part = next(p for p in config_parts(other, None) if p[0] == "blackwell")
    assert part_key(replace(other, data={}), part) is None     # a configuration built in code is not shared
