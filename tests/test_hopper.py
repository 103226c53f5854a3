"""Hopper (SM90) configurations: [smem.X] / [tma.X] / [stages], the GMMA descriptor and TMA
obligations, their counterexamples, bad input, and the verdicts against CuTe C++ ground
truth (tests/data/sm90/configs.jsonl, made by configs_generate.py)."""
from __future__ import annotations

import doctest
import importlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from symlayout.config import loads_config
from symlayout.prove.engine import prove_config

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "sm90"
GMMA_PROPS = ("descriptor", "slot_agreement", "coverage", "exactly_once", "in_bounds")


@pytest.mark.parametrize("mod", ["symlayout.tiled.gmma", "symlayout.tiled.tma", "symlayout.prove.hopper.obligations"])
def test_doctests(mod):
    res = doctest.testmod(importlib.import_module(mod), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0


def _verdicts(rep, via=None):
    out = {}
    for r in rep.results:
        if via is not None and r.via != via:
            continue
        out.setdefault(r.operand, {})[r.property] = r.status
    return out


# ---------------------------------------------------------------------------
# CuTe C++ ground truth for whole configurations
# ---------------------------------------------------------------------------


def _oracle_cases(proof_files: bool):
    p = DATA / "configs.jsonl"
    if not p.exists():
        return []
    rows = [json.loads(x) for x in p.read_text().splitlines()]
    return [pytest.param(r, id=r["id"]) for r in rows if r["id"].startswith("proofs/") == proof_files]


@pytest.mark.parametrize("case", _oracle_cases(True))
def test_proof_file_expectations_are_cute_cpp_verdicts(case):
    """The files of proofs/hopper expect (``[expect]``, else PROVED) exactly the verdicts
    CuTe C++ and the PTX ISA give; the proofs/ items check that the prover gives them."""
    cfg = loads_config(case["toml"], case["id"])
    for op, truth in case["truth"].items():
        for p, want in truth.items():
            expected = "refuted" if cfg.expect.refutes(p, op) else "proved"
            if not case["compiles"][op] and p != "descriptor":
                continue
            assert expected == want, (case["id"], op, p)


@pytest.mark.parametrize("case", _oracle_cases(False))
def test_verdicts_agree_with_cute_cpp(case):
    """Every descriptor-operand verdict equals the one computed from what CuTe C++ builds
    (its descriptors and partitions) and the PTX ISA's wgmma reads; a configuration CuTe
    does not compile is refuted by ``descriptor`` and nothing else of that operand."""
    cfg = loads_config(case["toml"], case["id"])
    rep = prove_config(cfg, properties=list(GMMA_PROPS))
    assert rep.error is None, rep.error
    got = _verdicts(rep, via="wgmma")
    for op, truth in case["truth"].items():
        mine = got.get(op, {})
        if not case["compiles"][op]:
            assert mine.get("descriptor") == "refuted", (op, mine)
            assert [r.method for r in rep.results if r.operand == op and r.via == "wgmma"] == ["cute"]
            continue
        for p, want in truth.items():
            assert mine.get(p) == want, (case["id"], op, p, mine.get(p), want)


def test_oracle_campaign_has_both_verdicts():
    rows = [json.loads(x) for x in (DATA / "configs.jsonl").read_text().splitlines()]
    statuses = [s for r in rows for v in r["truth"].values() for s in v.values()]
    assert len(rows) >= 50
    assert statuses.count("refuted") >= 10 and statuses.count("proved") >= 100
    assert sum(not ok for r in rows for ok in r["compiles"].values()) >= 3


# ---------------------------------------------------------------------------
# Failing cases, counterexamples in the user's terms
# ---------------------------------------------------------------------------


def _prove(path, **kw):
    from symlayout.config import load_config
    return prove_config(load_config(REPO / path), **kw)


def test_pitfalls_refute_with_reasons():
    rep = _prove("proofs/hopper/pitfalls/misaligned_base.toml")
    assert rep.ok
    by = {(r.property, r.operand, r.via): r for r in rep.results}
    d = by[("descriptor", "A", "wgmma")]
    assert d.status == "refuted" and "not a multiple of 16" in d.counterexample.message
    s = by[("slot_agreement", "A", "wgmma")]
    assert s.counterexample.element == (0, 0) and s.counterexample.address_bytes == 0
    assert "keeps it at byte 8" in s.counterexample.message
    t = by[("tma", "A", "tma")]
    assert "128-byte aligned" in t.counterexample.message
    assert ("coverage", "A", "tma") not in by            # the load does not run: nothing else is checked
    assert by[("descriptor", "B", "wgmma")].status == "proved"

    rep = _prove("proofs/hopper/pitfalls/mn_major_tf32.toml")
    d = [r for r in rep.results if r.operand == "A"]
    assert [(r.property, r.status, r.method) for r in d] == [("descriptor", "refuted", "cute")]
    assert "Not a canonical GMMA_K Layout" in d[0].counterexample.message

    rep = _prove("proofs/hopper/pitfalls/tma_swizzle_mismatch.toml")
    t = [r for r in rep.results if r.via == "tma" and r.status == "refuted"]
    assert [r.property for r in t] == ["tma"] and "swizzles none" in t[0].counterexample.message

    rep = _prove("proofs/hopper/pitfalls/overlapping_stages.toml")
    eo = [r for r in rep.results if r.property == "exactly_once" and r.operand == "A"]
    assert {r.via: r.status for r in eo} == {"wgmma": "refuted", "tma": "refuted"}
    assert "stage 1" in eo[0].counterexample.message and "stage 0" in eo[0].counterexample.message

    rep = _prove("proofs/hopper/pitfalls/sw128_short_k_tile.toml")
    t = {(r.property, r.via): r for r in rep.results if r.operand == "A"}
    assert "lands" not in t[("tma", "tma")].counterexample.message
    assert "byte 144" in t[("tma", "tma")].counterexample.message      # row 1 at the 128-byte pitch, swizzled
    assert t[("in_bounds", "tma")].status == "refuted"


_MMA = '[mma]\natom = "SM90_64x64x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>"\n'
_SMEM = ('[smem.A]\ntype = "half_t"\nlayout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((8,8),(64,1)):((64,512),(1,0))"\n'
         '[smem.B]\ntype = "half_t"\nlayout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((8,8),(64,1)):((64,512),(1,0))"\n')


def test_broadcast_k_mode_refutes_exactly_once():
    """A K mode of stride 0 (two K-blocks in the same bytes) compiles in CuTe; wgmma then
    reads one byte as two tile elements."""
    smem = _SMEM.replace("((8,8),(64,1)):((64,512),(1,0))", "((8,8),(64,2)):((64,512),(1,0))", 1)
    rep = prove_config(loads_config(_MMA + smem))
    v = _verdicts(rep, via="wgmma")
    assert v["A"]["exactly_once"] == "refuted" and v["A"]["slot_agreement"] == "proved"
    assert v["B"]["exactly_once"] == "proved"


def test_register_fragment_checks_can_fail(monkeypatch):
    """slot_agreement of the RS A fragment and of the accumulators compares CuTe's atom
    layouts with the PTX fragments: a wrong atom layout is refuted."""
    from symlayout.algebra.notation import parse_layout
    from symlayout.prove.hopper import obligations as hopper
    from symlayout.tiled.mma import make_tiled_mma
    mma = make_tiled_mma("SM90_64x64x16_F32F16F16_RS<GMMA::Major::K,GMMA::Major::K>", (1, 1, 1))
    assert hopper.rs_fragment_result(mma).status == "proved"
    assert [r.status for r in hopper.accumulator_results(mma, ("slot_agreement", "coverage"))] == ["proved"] * 2
    bad = replace(mma.atom, a_layout=parse_layout("((4,8,4),(2,2,2)):((128,1,16),(64,512,8))"),
                  c_layout=parse_layout("((4,8,4),(2,2,8)):((128,1,16),(8,64,512))"))
    mma.atom = bad
    r = hopper.rs_fragment_result(mma)
    assert r.status == "refuted" and r.counterexample.thread is not None
    r = hopper.accumulator_results(mma, ("slot_agreement",))[0]
    assert r.status == "refuted" and "accumulator element" in r.counterexample.message


def test_symbolic_gmem_stride_not_16_bytes():
    text = _MMA + _SMEM + ('[params]\nK = { min = 64, max = 4096 }\n'
                           '[tma.A]\ngmem = "(4096,K):(K,1)"\nbox = "(64,64)"\n')
    rep = prove_config(loads_config(text))
    t = [r for r in rep.results if r.property == "tma"][0]
    assert t.status == "refuted" and t.counterexample.params == {"K": 65}
    ok = prove_config(loads_config(text.replace("max = 4096 }", "max = 4096, multiple_of = 8 }")))
    assert [r.status for r in ok.results if r.property == "tma"] == ["proved"]


def test_json_carries_via():
    rep = _prove("proofs/hopper/pitfalls/tma_swizzle_mismatch.toml")
    js = rep.to_json()
    vias = {r.get("via") for r in js["results"] if not r.get("operand", "").startswith("stages.")}
    assert vias == {"wgmma", "tma", "registers"}


# ---------------------------------------------------------------------------
# Bad input: one line, the key's line
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("text, msg", [
    (_MMA, "needs an [smem.A] table"),
    (_MMA + _SMEM + '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\nsmem = "(64,64):(64,1)"\n',
     "reads A from shared memory through a GMMA descriptor"),
    ('[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n' + _SMEM.split("[smem.B]")[0], "is not an SM90 GMMA atom"),
    (_MMA + _SMEM.replace("smem_ptr[16b]", "smem_ptr[32b]", 1), "32-bit elements"),
    (_MMA + _SMEM + '[tma.C]\ngmem = "(64,64):(64,1)"\nbox = "(64,64)"\n', "[tma.C] stores the epilogue's subtiles: it needs an [epilogue] table"),   # issue 31
    (_MMA + _SMEM + '[tma.A]\natom = "SM90_TMA_LOAD_MULTICAST_X"\ngmem = "(64,64):(64,1)"\nbox = "(64,64)"\n',
     "expected one of"),
    (_MMA + _SMEM + '[tma.A]\nmulticast = 2\ngmem = "(64,64):(64,1)"\nbox = "(64,64)"\n', "needs atom"),
    (_MMA + _SMEM + '[stages]\ncount = 0\n', "count"),
    ('[mma]\natom = "SM90_64x64x8_F32TF32TF32_SS<GMMA::Major::MN,GMMA::Major::K>"\n', "K-major only"),
])
def test_bad_hopper_input(text, msg):
    from symlayout.errors import ConfigError
    with pytest.raises(ConfigError) as ei:
        loads_config(text, "x.toml")
    s = str(ei.value)
    assert msg in s and "\n" not in s and s.startswith("x.toml:")


def test_stages_adds_the_pipe_mode():
    cfg = loads_config(_MMA + _SMEM + "[stages]\ncount = 3\n")
    assert str(cfg.smem["A"].layout.layout) == "((8,8),(64,1),3):((64,512),(1,0),4096)"
    rep = prove_config(cfg, properties=["descriptor"])
    assert [r.checked for r in rep.results] == [12, 12]          # 4 K-blocks x 3 stages per operand


# ---------------------------------------------------------------------------
# The GPU run of a Hopper configuration (planned here; run by `symlayout gpu`)
# ---------------------------------------------------------------------------


def _plan_diffs(path):
    from symlayout.config import load_config
    from symlayout.harness import hopper_run as H
    from symlayout.harness import probe_sm90 as P
    p = H.plan(load_config(REPO / path))
    w = [len(P.compare_wgmma(P.predict_wgmma(wc), P.predict_wgmma(wc, addr=fn))) for wc, fn, _n in p.wgmma]
    t = [sum(a != b for a, b in zip(P.predict_tma(e), P.predict_tma(e, landing=lambda *a, _l=land: dict(_l))))
         for e, land, _n in p.tma]
    return w, t, p.skipped


def test_gpu_plan_separates_what_the_prover_refutes():
    """The experiments of a proved configuration: the PTX model predicts exactly CuTe's
    layout (the GPU must then agree with both); of a refuted one, visibly wrong data."""
    w, t, skipped = _plan_diffs("proofs/hopper/fa3_fwd_hd64_pv_rs.toml")
    assert w == [0, 0] and t == [0, 0] and not skipped
    w, t, skipped = _plan_diffs("proofs/hopper/pitfalls/misaligned_base.toml")
    assert all(x > 0 for x in w) and not t
    assert any("128-byte aligned" in why for _w, why in skipped)      # never launched: it would fault
    w, t, _s = _plan_diffs("proofs/hopper/pitfalls/tma_swizzle_mismatch.toml")
    assert w == [0, 0] and all(x > 0 for x in t)
    w, t, skipped = _plan_diffs("proofs/hopper/pitfalls/sw128_short_k_tile.toml")
    assert not w and all(x > 0 for x in t) and len(skipped) == 2


def test_split_hopper():
    from symlayout.harness.hopper_run import split_hopper
    other, hopper = split_hopper([str(REPO / "proofs" / "hopper" / "pitfalls"),
                                  str(REPO / "proofs" / "seeds" / "seed_000_A_x2.toml")])
    n = len(list((REPO / "proofs" / "hopper" / "pitfalls").glob("*.toml")))
    assert n >= 6 and len(hopper) == n and [Path(o).name for o in other] == ["seed_000_A_x2.toml"]


# ---------------------------------------------------------------------------
# Families over stages and K tiles
# ---------------------------------------------------------------------------

_FAM = ('[mma]\natom = "SM90_64x64x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>"\n'
        '[params]\nP = {{ min = 1, max = {pmax} }}\nk = {{ min = 1, max = {kmax} }}\n'
        '[smem.A]\ntype = "half_t"\nlayout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((8,8),(64,k),(1,P)):((64,512),(1,{kst}),(0,{pst}))"\n'
        'align = {align}\n'
        '[smem.B]\ntype = "half_t"\nlayout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((8,8),(64,1),(1,P)):((64,512),(1,0),(0,{pst}))"\n')


@pytest.mark.parametrize("kw, method", [
    pytest.param(dict(pmax=3, kmax=3, kst=4096, pst=12288, align=1024), "translation",   # K tiles and stages, proved
                 marks=pytest.mark.slow),
    (dict(pmax=2, kmax=3, kst=4096, pst=12288, align=8), "translation"),         # misaligned base: refuted for all
    pytest.param(dict(pmax=3, kmax=3, kst=4096, pst=6144, align=1024), "enumerated",     # stages overlap when k > 1
                 marks=pytest.mark.slow),
    (dict(pmax=2, kmax=2, kst=4104, pst=16384, align=1024), "enumerated"),       # K stride off the swizzle period
])
def test_family_verdicts_equal_member_verdicts(kw, method):
    """A family's verdict (by the translation argument or member by member) is the
    conjunction of its members' verdicts, each member proved on its own."""
    from symlayout.algebra.layout import Layout  # noqa: F401
    text = _FAM.format(**kw)
    fam = prove_config(loads_config(text), properties=list(GMMA_PROPS))
    got = {(r.property, r.operand): r for r in fam.results if r.via == "wgmma"}
    assert all((method in r.method) == (method == "translation") for r in got.values())
    want = {}
    for P in range(1, kw["pmax"] + 1):
        for k in range(1, kw["kmax"] + 1):
            member = text.replace(f"P = {{ min = 1, max = {kw['pmax']} }}\n", "").replace(
                f"k = {{ min = 1, max = {kw['kmax']} }}\n", "").replace("[params]\n", "")
            member = member.replace("(64,k)", f"(64,{k})").replace("(1,P)", f"(1,{P})")
            rep = prove_config(loads_config(member), properties=list(GMMA_PROPS))
            for r in rep.results:
                if r.via == "wgmma":
                    key = (r.property, r.operand)
                    want[key] = "refuted" if r.status == "refuted" or want.get(key) == "refuted" else r.status
    assert {k: r.status for k, r in got.items()} == want
    for r in got.values():
        if r.status == "refuted":
            assert set(r.counterexample.params) == {"P", "k"}


def test_tiles_beyond_the_descriptor_range_are_refuted():
    """A descriptor's start address is 14 bits of 16-byte units: an operand read beyond
    256 KiB cannot be described (and no SM90 block has that much shared memory)."""
    rep = prove_config(loads_config(_MMA + _SMEM + "[stages]\ncount = 40\n"), properties=["descriptor"])
    d = {r.operand: r for r in rep.results}
    assert d["A"].status == "refuted" and "256 KiB" in d["A"].counterexample.message
    assert d["A"].counterexample.address_bytes >= 1 << 18


def _tma_oracle_cases():
    p = DATA / "configs_tma.jsonl"
    if not p.exists():
        return []
    return [pytest.param(r, id=f"{r['id']}-{r['operand']}") for r in map(json.loads, p.read_text().splitlines())]


@pytest.mark.parametrize("case", _tma_oracle_cases())
def test_tma_copy_agrees_with_cute_cpp(case):
    """make_tma_copy of every [tma.X] (proofs/hopper and a generated campaign): the tensor map
    symlayout derives is the one CuTe C++ encodes, and where CuTe does not compile or asserts,
    ``tma`` is refuted by CuTe's reason."""
    from symlayout.arch import tma as arch_tma
    from symlayout.harness.hopper_run import _concrete
    from symlayout.tiled.tma import tma_model
    cfg = loads_config(case["toml"], case["id"])
    sc, tc = cfg.smem[case["operand"]], cfg.tma[case["operand"]]
    m = tma_model(sc.type, _concrete(tc.gmem, cfg), sc.layout, tc.box, tc.multicast, tc.atom)
    if not case["compiles"] or case.get("aborts"):
        assert m.error is not None, case.get("assertion")
        return
    assert m.error is None, m.error
    enc, c = case["encode"], m.copy
    assert enc["data_type"] == arch_tma.DATA_TYPES[c.data_type][0]
    assert enc["rank"] == c.rank
    assert enc["global_dim"] == list(c.global_dim)
    assert enc["global_strides"] == list(c.global_strides)
    assert enc["box_dim"] == list(c.box_dim)
    assert enc["element_strides"] == list(c.element_strides)
    assert enc["swizzle"] == arch_tma.SWIZZLE_ENUM[c.swizzle]


def _tma_file(smem_a: str, align: int = 1024, ty: str = "half_t") -> str:
    return ('[mma]\natom = "SM90_64x64x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>"\n'
            f'[smem.A]\ntype = "{ty}"\nlayout = "{smem_a}"\nalign = {align}\n'
            f'[smem.B]\ntype = "{ty}"\nlayout = "{smem_a}"\n'
            '[tma.A]\ngmem = "(64,64):(64,1)"\nbox = "(64,64)"\n')


def test_element_swizzle_is_one_function_for_tma():
    """A swizzle written without ``smem_ptr`` acts on element offsets for every consumer (issue 26.2):
    a 128B TMA (Sw<3,4,3> on bytes) into a half_t tile whose Sw<3,4,3> swizzles elements lands A(m=1,k=0)
    on byte 144 while the layout keeps it at 128 (A(m=1,k=8): 128 vs 144); the same bits on the pointer are proved."""
    rep = _prove("proofs/hopper/pitfalls/element_swizzle_tma.toml")
    assert rep.ok
    t = {(r.property, r.operand, r.via): r for r in rep.results}
    cex = t[("tma", "A", "tma")].counterexample
    assert t[("tma", "A", "tma")].status == "refuted" and t[("tma", "B", "tma")].status == "proved"
    assert cex.element == (1, 0) and cex.address_bytes == 144 and cex.extra["cute_address_bytes"] == 128
    assert "element offsets" in cex.message
    # the element (1,8): the layout keeps it at 2 * Sw<3,4,3>(72) = 144, TMA writes it to 160
    from symlayout.harness import hopper_run as H
    from symlayout.config import load_config
    plan = H.plan(load_config(REPO / "proofs/hopper/pitfalls/element_swizzle_tma.toml"))
    land = [land for exp, land, _n in plan.tma if "[tma.A]" in exp.name][0]
    assert land[(0, 1)] == 128 and land[(8, 1)] == 144   # the GPU harness compares the GPU's bytes with these
    from symlayout.arch import tma as arch_tma
    assert arch_tma.smem_address(1 * 128 + 8 * 2, "128B") == 128             # where TMA writes A(m=1,k=8)
    assert _plan_diffs("proofs/hopper/pitfalls/element_swizzle_tma.toml")[1][0] > 0


@pytest.mark.parametrize("align, want", [(1024, "proved"), (128, "refuted")])
def test_element_swizzle_tma_every_base(align, want):
    """Over 8-bit elements Sw<2,4,3> on element offsets is the 64B TMA swizzle only where the base has no
    swizzle bits: the element swizzle follows the tensor (base + Sw(offset)), TMA's the absolute address."""
    lay = "Sw<2,4,3> o ((8,8),(64,1)):((64,512),(1,0))"
    text = _tma_file(lay, align, "int8_t").replace("SM90_64x64x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>",
                                                   "SM90_64x64x32_S32S8S8_SS_TN")
    rep = prove_config(loads_config(text), properties=["tma"])
    r = [r for r in rep.results if r.property == "tma" and r.operand == "A"][0]
    assert r.status == want, r
    if want == "refuted":
        assert r.counterexample.extra["base"] > 0


def test_tile_the_tiled_mma_cannot_partition_is_cute_s_refusal_not_an_error():
    """An MN-major SW128 B tile of 128 rows under a 64x80 atom: partition_B divides the 128 rows by the
    TiledMMA's 80, which CuTe's composition static_asserts (found by tests/oracle/hopper_fuzz.py, h1-0005:
    CuTe compiles A and refuses B). Before, the divisibility error escaped as an input error for the whole
    file (exit 2); now descriptor[B] is refuted by CuTe's reason and A is still proved."""
    text = ('[mma]\natom = "SM90_64x80x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::MN>"\nlayout = "(1,1,1)"\n'
            '[smem.A]\ntype = "half_t"\n'
            'layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((8,8),(64,1),(1,4)):((64,512),(1,0),(0,4096))"\n'
            '[smem.B]\ntype = "half_t"\n'
            'layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((64,2),(8,2),(1,4)):((1,1024),(64,512),(0,2048))"\n')
    rep = prove_config(loads_config(text), properties=list(GMMA_PROPS))
    assert rep.error is None
    b = [r for r in rep.results if r.operand == "B" and r.via == "wgmma"]
    assert [(r.property, r.status, r.method) for r in b] == [("descriptor", "refuted", "cute")]
    assert "partition_B" in b[0].counterexample.message and "80" in b[0].counterexample.message
    assert all(r.status == "proved" for r in rep.results if r.operand == "A")


def test_reads_beyond_the_descriptor_range_wrap_as_wgmma_reads_them():
    """A 512 KiB staged B tile (found by tests/oracle/hopper_fuzz.py, h1-0038): the descriptor's 14-bit start
    field keeps the low 18 bits of the address, so stage 2's descriptor points at stage 0 (CuTe C++'s
    descriptors through the PTX ISA: slot_agreement, coverage and exactly_once refuted). Before, symlayout
    refuted descriptor (256 KiB) but proved the reads as if the field held the whole address."""
    text = ('[mma]\natom = "SM90_64x128x16_F16F16F16_RS<GMMA::Major::K,GMMA::Major::MN>"\nlayout = "(1,4,1)"\n'
            '[smem.B]\ntype = "half_t"\nalign = 256\n'
            'layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((64,16),(8,8),(1,4)):((1,4096),(64,512),(0,65536))"\n')
    rep = prove_config(loads_config(text), properties=list(GMMA_PROPS))
    got = _verdicts(rep, via="wgmma")["B"]
    assert got == {"descriptor": "refuted", "slot_agreement": "refuted", "coverage": "refuted",
                   "exactly_once": "refuted", "in_bounds": "proved"}
    r = next(r for r in rep.results if r.property == "slot_agreement" and r.operand == "B")
    assert "stage 2" in r.counterexample.message and "descriptor start 0," in r.counterexample.message
