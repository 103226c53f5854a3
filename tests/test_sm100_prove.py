"""Contract Version 3, the MMA side proved: every property of an SM100 configuration (``descriptor``,
``slot_agreement``, ``coverage``, ``exactly_once``, ``in_bounds``, ``type_agreement``, ``cta_pair``, ``tma``)
proved on CUTLASS's configurations and refuted where it fails, each refutation telling the route of one
element; ``--json`` names the table in ``operand``.  No Blackwell GPU confirmed any of this: CuTe C++ is the
oracle (tests/test_sm100_umma.py, tests/oracle/blackwell_fuzz.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from symlayout import cli
from symlayout.config import load_config, loads_config
from symlayout.prove.engine import prove_config

REPO = Path(__file__).resolve().parents[1]
BW = REPO / "proofs" / "blackwell"
F16_1SM = (BW / "cutlass_sm100_f16_1sm_128x256x64_kmajor.toml").read_text()
F16_2SM = (BW / "cutlass_sm100_f16_2sm_256x256x64_kmajor.toml").read_text()
A_LAYOUT = "((_128,_16),_1,_4,(_1,_4)):((_64,_1),_0,_16,(_0,_8192))"


def _results(text):
    rep = prove_config(loads_config(text, "t.toml"))
    assert rep.error is None, rep.error
    return {(r.property, r.operand, r.via): r for r in rep.results}


def _one(res, prop, op, via="tcgen05.mma"):
    return res[(prop, op, via)]


def test_cutlass_files_prove_every_property():
    for name in ("cutlass_sm100_f16_1sm_128x256x64_kmajor.toml", "cutlass_sm100_f16_2sm_256x256x64_kmajor.toml",
                 "cutlass_sm100_f16_1sm_128x128x64_mnmajor.toml"):
        rep = prove_config(load_config(BW / name))
        assert rep.error is None and rep.ok, name
        props = {(r.property, r.operand) for r in rep.results}
        for op in ("A", "B"):
            for p in ("descriptor", "slot_agreement", "coverage", "exactly_once", "in_bounds", "type_agreement",
                      "tma"):
                assert (p, op) in props, (name, p, op)
        assert all(r.status == "proved" and r.checked for r in rep.results), name
    res = _results(F16_2SM)
    assert _one(res, "cta_pair", "mma", "cluster").status == "proved"
    # every (row, k) of every block of both operands (A 128x64x4 per CTA) is an obligation
    assert _one(res, "slot_agreement", "A").checked == 128 * 64 * 4


def test_proofs_blackwell_stay_as_expected():
    for f in sorted(BW.rglob("*.toml")):
        rep = prove_config(load_config(f))
        assert rep.error is None and rep.ok, (f, [(r.property, r.operand, r.status) for r in rep.results])


def test_slot_agreement_and_descriptor_refuted_with_the_route():
    bad = F16_1SM.replace("align = 1024\n\n[smem.B]", 'align = 1024\ndesc = "0x4000402000010000"\n\n[smem.B]')
    res = _results(bad)
    for p in ("slot_agreement", "descriptor"):
        r = _one(res, p, "A")
        assert r.status == "refuted", p
        cex = r.counterexample
        assert cex.element == (8, 0, 0) and cex.address_bytes == 576 and cex.extra["cute_address_bytes"] == 1024
        assert len(cex.route) == 3 and "logical A(m=8,k=0)" in cex.route[0] and "element offset 512" in cex.route[1]
        assert "SBO 512" in cex.route[2] and cex.route[2].endswith("byte 576")
    assert "is not the descriptor the layout needs (make_umma_desc: 0x4000404000010000)" in \
        _one(res, "descriptor", "A").counterexample.message
    assert _one(res, "descriptor", "B").status == "proved"


def test_descriptor_refuted_field_by_field():
    """A ported Hopper value: its reads agree, the missing version bits refute it; a reserved bit; an undefined
    layout type."""
    for desc, words in (("0x4000004000010000", "version (bits 46-48) is 0"),
                        ("0x4000404040010000", "reserved bits set: 30"),
                        ("0xE000404000010000", "layout type (bits 61-63) is 7")):
        res = _results(F16_1SM.replace("align = 1024\n\n[smem.B]", f'align = 1024\ndesc = "{desc}"\n\n[smem.B]'))
        r = _one(res, "descriptor", "A")
        assert r.status == "refuted" and words in r.counterexample.message, (desc, r.counterexample.message)
    res = _results(F16_1SM.replace("align = 1024\n\n[smem.B]", 'align = 1024\ndesc = "0x4000004000010000"\n\n[smem.B]'))
    assert _one(res, "slot_agreement", "A").status == "proved"


def test_descriptor_refuted_with_cutes_static_assert():
    text = (BW / "pitfalls" / "kmajor_on_sw128_base32b.toml").read_text()
    res = _results(text)
    r = _one(res, "descriptor", "A")
    assert r.status == "refuted" and r.method == "cute"
    assert r.counterexample.extra["cute_static_assert"] == "make_umma_desc<K>: SWIZZLE_128B_BASE32B is invalid for Major-K"
    assert ("slot_agreement", "A", "tcgen05.mma") not in res       # the rest of the operand is not checked


def test_descriptor_refuted_on_a_base_off_the_16_byte_grid():
    res = _results(F16_1SM.replace("align = 1024\n\n[smem.B]", "align = 8\n\n[smem.B]"))
    r = _one(res, "descriptor", "A")
    assert r.status == "refuted" and "start_address 8 is not a multiple of 16" in r.counterexample.message


def test_exactly_once_refuted_on_overlapping_stages():
    """Stages 4096 elements apart in a buffer of 8192-element stages: CuTe's descriptors read what the layout says
    (slot_agreement holds), but two stages share bytes."""
    res = _results(F16_1SM.replace("(_0,_8192))", "(_0,_4096))"))
    assert _one(res, "slot_agreement", "A").status == "proved"
    r = _one(res, "exactly_once", "A")
    assert r.status == "refuted" and "is read as two elements" in r.counterexample.message


def test_coverage_and_in_bounds_refuted_by_a_descriptor_past_the_buffer():
    """SBO 2048 instead of 1024: the 8-row groups are read twice as far apart, past the end of A's 64 KiB buffer
    in the last stage, and rows 8-15 of every group's 2 KiB are never read."""
    res = _results(F16_1SM.replace("align = 1024\n\n[smem.B]", 'align = 1024\ndesc = "0x4000408000010000"\n\n[smem.B]'))
    r = _one(res, "in_bounds", "A")
    assert r.status == "refuted" and "outside the buffer's bytes [0, 65536)" in r.counterexample.message
    r = _one(res, "coverage", "A")
    assert r.status == "refuted" and "is never read by any tcgen05.mma" in r.counterexample.message


def test_type_agreement_refuted():
    res = _results(F16_1SM.replace('[smem.A]\ntype = "half_t"', '[smem.A]\ntype = "bfloat16_t"'))
    r = _one(res, "type_agreement", "A")
    assert r.status == "refuted" and "holds bfloat16_t, but" in r.counterexample.message
    assert r.counterexample.extra["mma_type"] == "half_t"
    assert _one(res, "type_agreement", "B").status == "proved"


@pytest.mark.parametrize("cluster,words", [("(1,1,1)", "stride 0"), ("(3,1,1)", "do not split into pairs")])
def test_cta_pair_refuted(cluster, words):
    text = F16_2SM.replace('cluster = "(2,1,1)"', f'cluster = "{cluster}"')
    r = _one(_results(text), "cta_pair", "mma", "cluster")
    assert r.status == "refuted" and words in r.counterexample.message
    assert "Cluster shape not divisible by MMA size" in r.counterexample.message
    assert r.counterexample.route and "peer mode" in r.counterexample.route[1]


def test_cta_pair_does_not_apply_to_a_1sm_atom():
    assert not any(p == "cta_pair" for p, _o, _v in _results(F16_1SM))


def test_tma_2sm_box_split_over_the_pair():
    res = _results(F16_2SM)
    r = _one(res, "tma", "A", "tma")
    assert r.status == "proved" and "each peer loads its half (128, 64)" in r.detail
    bad = F16_2SM.replace('box = "(256,64)"', 'box = "(128,64)"', 1)
    r = _one(_results(bad), "tma", "A", "tma")
    assert r.status == "refuted" and "splits into two halves of 64" in r.counterexample.message


def test_tma_2sm_atom_needs_a_pair():
    bad = F16_1SM.replace('atom = "SM90_TMA_LOAD"\n', 'atom = "SM100_TMA_2SM_LOAD"\n', 1)
    r = _one(_results(bad), "tma", "A", "tma")
    assert r.status == "refuted" and "1SM atom: there is no peer" in r.counterexample.message


def test_tma_multicast_over_the_cluster():
    """make_tma_atom_A_sm100 multicasts an SM100_TMA_2SM_LOAD_MULTICAST over the cluster's N mode (tutorial 04:
    4); an SM90 multicast may not exceed the CTAs that share the tile."""
    text = (BW / "cute_tutorial_04_mma_tma_2sm_sm100.toml").read_text()
    assert _one(_results(text), "tma", "A", "tma").status == "proved"
    r = _one(_results(text.replace("multicast = 4", "multicast = 2")), "tma", "A", "tma")
    assert r.status == "refuted" and "size<2>(cluster_layout_vmnk) of cluster (4, 4, 1) is 4" in r.counterexample.message
    r = _one(_results(F16_1SM.replace("multicast = 2", "multicast = 4")), "tma", "B", "tma")
    assert r.status == "refuted" and "there are not 4 CTAs sharing the tile" in r.counterexample.message


def test_tma_refuted_through_the_version_2_model():
    """A box that does not match the smem tile: the Version-2 TMA model refutes it on the SM100 buffer's (MN,K)
    view."""
    r = _one(_results(F16_1SM.replace('box = "(128,64)"', 'box = "(64,64)"', 1)), "tma", "A", "tma")
    assert r.status == "refuted"


def test_json_names_the_table(tmp_path, capsys):
    p = tmp_path / "pair.toml"
    p.write_text((BW / "pitfalls" / "pair_atom_in_1cta_cluster.toml").read_text())
    assert cli.main(["prove", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    res = out["configs"][0]["results"]
    ops = {(r["property"], r["operand"]) for r in res}
    assert ("cta_pair", "mma") in ops and ("descriptor", "A") in ops and ("descriptor", "B") in ops
    cp = next(r for r in res if r["property"] == "cta_pair")
    assert cp["status"] == "refuted" and cp["counterexample"]["route"] and cp["counterexample"]["ctas"] == [0, 0]


def test_a_pair_with_two_mma_blocks_along_m():
    """A 2SM atom tiled twice along M (each CTA: two 128-row blocks): the buffer is partitioned by peer 0 of the
    pair's 512-row tile, as CuTe does (partitioning one CTA's 256 rows crashed)."""
    text = F16_2SM.replace(A_LAYOUT, "((_128,_16),_2,_4,(_1,_2)):((_64,_1),_8192,_16,(_0,_16384))", 1)
    res = _results(text.replace("[tma.A]", "[tma.X]").split("[tma.X]")[0])
    r = _one(res, "slot_agreement", "A")
    assert r.status == "proved" and r.checked == 256 * 64 * 2
    assert _one(res, "coverage", "A").status == "proved"


def test_a_buffer_without_the_smem_pointer_is_refuted_as_cute_refuses_it():
    """An element-offset swizzle (no smem_ptr): make_umma_desc does not compile it; refuted, not a crash."""
    text = F16_1SM.replace("Sw<3,4,3> o smem_ptr[16b](unset) o " + A_LAYOUT, "Sw<3,3,3> o " + A_LAYOUT, 1)
    res = _results(text)
    r = _one(res, "descriptor", "A")
    assert r.status == "refuted" and r.method == "cute" and "UMMA Descriptors can only be constructed on smem" in \
        r.counterexample.message
    assert _one(res, "tma", "A", "tma").status == "refuted"


@pytest.mark.parametrize("name", ["cute_tutorial_04_mma_tma_2sm_sm100.toml",
                                  "cutlass_sm100_e4m3_1sm_128x256x128_kmajor.toml"])
def test_symlayout_cute_writes_a_program_cute_compiles(name, capsys):
    """``symlayout cute`` of an SM100 file includes the SM100 traits and spells the atom as CuTe does (the
    kind::f8f6f4 SS atoms through MMA_Traits): g++ compiles it against the CUTLASS 4.2 headers."""
    from sm100_cpp import compiler
    assert cli.main(["cute", str(BW / name)]) == 0
    program = capsys.readouterr().out
    assert "#include <cute/atom/mma_traits_sm100.hpp>" in program
    cxx = compiler()
    if cxx is None:
        pytest.skip("CuTe headers not found (SYMLAYOUT_CUTE_SITE)")
    assert cxx.static_asserts(program) == []


def test_a_hand_descriptor_names_its_buffers_address():
    """desc's start address is where the buffer lies: make_umma_desc's value at 0x4000 (start field 0x400) proves;
    the same value with align = 32768 contradicts the alignment."""
    at = F16_1SM.replace("align = 1024\n\n[smem.B]", 'align = 1024\ndesc = "0x4000404000010400"\n\n[smem.B]')
    res = _results(at)
    assert all(_one(res, p, "A").status == "proved" for p in ("descriptor", "slot_agreement", "coverage"))
    r = _one(_results(at.replace("align = 1024\ndesc", "align = 32768\ndesc")), "descriptor", "A")
    assert r.status == "refuted" and "start address 16384 (the buffer's base) is not aligned" in r.counterexample.message


#: how CUTLASS's builder / CuTe's tutorials lay out each file's buffers: (file, A atom, B atom, (M, N, K) of the
#: TiledMMA tile, stages or None (the tutorials' rank-3 buffers), MN-first order (the builder's MN-major Step<2,1,3>))
BUFFERS = [
    ("cutlass_sm100_f16_1sm_128x256x64_kmajor.toml", "K_SW128", "K_SW128", (128, 256, 64), 4, False),
    ("cutlass_sm100_f16_2sm_256x256x64_kmajor.toml", "K_SW128", "K_SW128", (256, 256, 64), 4, False),
    ("cutlass_sm100_e4m3_1sm_128x256x128_kmajor.toml", "K_SW128", "K_SW128", (128, 256, 128), 4, False),
    ("cutlass_sm100_f16_1sm_128x128x64_mnmajor.toml", "MN_SW128", "MN_SW128", (128, 128, 64), 4, True),
    ("cutlass_sm100_tf32_1sm_128x128x32_mnmajor_sw128_32b.toml", "MN_SW128_32B", "MN_SW128_32B", (128, 128, 32), 4,
     True),
    ("cutlass_sm100_bf16_2sm_256x128x64_k_mn.toml", "K_SW128", "MN_SW128", (256, 128, 64), 5, None),
    ("cute_tutorial_01_mma_sm100.toml", "K_SW128", "K_SW128", (128, 256, 64), None, False),
    ("cute_tutorial_04_mma_tma_2sm_sm100.toml", "K_SW128", "K_SW128", (256, 256, 64), None, False),
]


@pytest.mark.slow
def test_proof_buffers_are_the_ones_cute_builds():
    """Every [smem.X] of proofs/blackwell/ is the print of UMMA::tile_to_mma_shape(atom, partition_shape_X(mma, tile)
    [+ stages], order) in CuTe C++ (CUTLASS 4.2 headers): one program for all files."""
    from sm100_cpp import compiler, cpp_atom, strip
    from symlayout.atoms.umma import parse_umma_name
    cxx = compiler()
    if cxx is None:
        pytest.skip("CuTe headers not found (SYMLAYOUT_CUTE_SITE)")
    body, want = ["int main() {"], {}
    for i, (name, ka, kb, (m, n, k), st, mn_first) in enumerate(BUFFERS):
        cfg = load_config(BW / name)
        op = parse_umma_name(cfg.mma.atom)
        body.append(f"  {{ auto mma = make_tiled_mma({cpp_atom(op)});")
        for o, kind, mnx in (("A", ka, m), ("B", kb, n)):
            t = op.a_type if o == "A" else op.b_type
            first = mn_first if mn_first is not None else (op.a_major if o == "A" else op.b_major) == "MN"
            shp = f"partition_shape_{o}(mma, make_shape(Int<{mnx}>{{}}, Int<{k}>{{}}))"
            shp = f"append({shp}, Int<{st}>{{}})" if st else shp
            order = (", Step<_2,_1,_3>{}" if first else ", Step<_1,_2,_3>{}") if st else ""
            body += [f"    {{ auto sL = UMMA::tile_to_mma_shape(UMMA::Layout_{kind}_Atom<{t}>{{}}, {shp}{order});",
                     f'      printf("{i}{o} "); print(sL); printf("\\n"); }}']
            want[f"{i}{o}"] = cfg.smem[o].raw_layout
        body.append("  }")
    body.append("}")
    got = dict(line.split(" ", 1) for line in cxx.run("\n".join(body) + "\n").splitlines() if line[:1].isdigit())
    assert {key: strip(v) for key, v in got.items()} == {key: strip(v) for key, v in want.items()}


def test_a_buffer_beyond_the_descriptors_reach_is_refuted_without_enumerating():
    text = F16_1SM.replace(A_LAYOUT, "((_128,_16),_1,_4,(_1,_64)):((_64,_1),_0,_16,(_0,_8192))", 1)
    text = text.replace("[tma.A]", "[tma.X]").split("[tma.X]")[0]
    res = _results(text)
    r = _one(res, "descriptor", "A")
    assert r.status == "refuted" and "spans 1048576 bytes" in r.counterexample.message
    assert ("slot_agreement", "A", "tcgen05.mma") not in res


# --- the stages of an [smem.X] buffer ((MMA_MN,MMA_K),MMAs_MN,MMAs_K,PIPE): exactly_once, in_bounds with the capacity
E4M3 = (BW / "cutlass_sm100_e4m3_1sm_128x256x128_kmajor.toml").read_text()
E4M3_B = "((_256,_32),_1,_4,(_1,_4)):((_128,_1),_0,_32,(_0,_32768))"


def _stage(res, prop, op):
    return res[(prop, f"stages.{op}", "")]


def test_sm100_buffers_get_the_stage_results():
    """Each PIPE stage of an SM100 buffer is stage 0 moved by whole 128-byte rows and no byte is in two stages;
    the capacity check counts what the file states (A, B, the pipeline's barriers: 4 x 16 bytes)."""
    res = _results(E4M3)
    for op, size in (("A", 128 * 128), ("B", 256 * 128)):
        assert _stage(res, "exactly_once", op).status == "proved" and _stage(res, "exactly_once", op).checked == 4 * size
        r = _stage(res, "in_bounds", op)
        assert r.status == "proved" and f"4 stages of {size} bytes" in r.detail
        assert "counted: A 65536, B 131072, barriers 64 = 196672 bytes" in r.detail


def test_sm100_stages_over_the_capacity_are_refuted_naming_each_buffer():
    """5 stages of the fp8 128x256x128 tile (CUTLASS's StageCount<5>) are 245840 bytes with the barriers."""
    rep = prove_config(load_config(BW / "pitfalls" / "e4m3_128x256x128_5_stages_over_227k.toml"))
    assert rep.ok
    r = next(r for r in rep.results if (r.property, r.operand) == ("in_bounds", "stages.A"))
    assert r.status == "refuted" and r.counterexample.extra["buffers"] == {"A": 81920, "B": 163840, "barriers": 80}
    assert "(A: 81920 bytes (5 stages), B: 163840 bytes (5 stages), barriers: 80 bytes (5 x 16)) takes 245840 " \
           "bytes; an SM100 block may use at most 232448" in r.counterexample.message


def test_sm100_block_scaled_stages_count_the_factor_buffers():
    """The block-scaled 5-stage NVFP4 build: A, B, SFA, SFB and barriers, 276560 bytes; a pair's buffers are one
    CTA's (the 2SM NVFP4 file: A holds M/2 = 128 rows, B N/2 = 128 columns of K = 256 fp4 a stage)."""
    bs = BW / "blockscaled"
    rep = prove_config(load_config(bs / "pitfalls" / "nvfp4_128x256x256_5_stages_over_227k.toml"))
    r = next(r for r in rep.results if (r.property, r.operand) == ("in_bounds", "stages.B"))
    assert r.status == "refuted" and r.counterexample.extra["bytes"] == 276560
    assert r.counterexample.extra["buffers"] == {"A": 81920, "B": 163840, "SFA": 10240, "SFB": 20480, "barriers": 80}
    res = {(r.property, r.operand): r for r in prove_config(load_config(bs / "nvfp4_2sm_256x256x256.toml")).results}
    per_stage = 128 * 256 // 2
    assert res[("in_bounds", "stages.A")].status == "proved"
    assert f"counted: A {4 * per_stage}, B {4 * per_stage}, SFA 8192, SFB 16384" in res[("in_bounds", "stages.A")].detail


def test_sm100_overlapping_stages_are_refuted():
    """B's PIPE stride half a stage (16384 bytes): stage 1 starts inside stage 0."""
    res = _results(E4M3.replace(E4M3_B, E4M3_B.replace("(_0,_32768)", "(_0,_16384)")))
    r = _stage(res, "exactly_once", "B")
    assert r.status == "refuted" and "stage 1 and stage 0 of the B buffer overlap" in r.counterexample.message


def test_sm100_stage_not_a_whole_row_translate_is_unknown():
    """A's stages 16400 bytes apart (a 16-byte multiple, not a 128-byte one): not proved, never assumed."""
    res = _results(E4M3.replace("(_0,_16384))", "(_0,_16400))"))
    r = _stage(res, "in_bounds", "A")
    assert r.status == "unknown" and "not stage 0 moved by a whole number of 128-byte rows" in r.detail


def test_no_stage_results_for_an_atom_cute_rejects():
    """A 1SM atom of M = 256 does not compile: its one refutation, nothing of its buffers proved."""
    rep = prove_config(loads_config(F16_1SM.replace("float,128,256,", "float,256,256,"), "t.toml"))
    assert rep.results and not any(r.operand.startswith("stages") for r in rep.results)
