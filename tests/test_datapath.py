"""The SM80 data path of version 2 (issue 14): config keys, each property of the global-memory
copies and of the stages proved on a good configuration and refuted on one that breaks it.

CuTe C++ ground truth for the partitions is in ``test_datapath_cute.py``.
"""
from pathlib import Path

import pytest

from symlayout.config import find_config_files, load_config, loads_config
from symlayout.errors import ConfigError
from symlayout.prove.datapath.path import prove_datapath
from symlayout.prove.engine import prove_config
from symlayout.prove.datapath.g2s import GLOBAL_PROPERTIES
from symlayout.prove.datapath.stages import staged_buffers

MMA = '[mma]\natom = "SM80_16x8x16_F32F16F16F32_TN"\nlayout = "(4,1,1)"\npermutation = ["64", "16", "16"]\n'
COPY_A = '[copy.A]\natom = "SM75_U32x4_LDSM_N"\ntype = "half_t"\nsmem = "{smem}"\n'
G2S_A = ('[g2s.A]\natom = "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"\ntype = "{type}"\nthr = "{thr}"\nval = "{val}"\n'
         'gmem = "{gmem}"\ngmem_align = {galign}\n{extra}')
FA2_Q = "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))"


def cfg_text(smem=FA2_Q, thr="(16,8):(8,1)", val="(1,8)", gmem="(128,64):(ldQ,1)", galign=16, extra="",
             params="ldQ = { min = 64, max = 65536, multiple_of = 64 }", type="half_t", more=""):
    return (f"[params]\n{params}\n" if params else "") + MMA + COPY_A.format(smem=smem) + \
        G2S_A.format(type=type, thr=thr, val=val, gmem=gmem, galign=galign, extra=extra) + more


def results(text, props=None):
    cfg = loads_config(text)
    return {(r.property, r.operand): r for r in prove_datapath(cfg, props)}


def status(text, prop, operand="g2s.A"):
    return results(text)[(prop, operand)]


def test_fa2_q_proves_every_property():
    rs = results(cfg_text())
    got = {p: r.status for (p, o), r in rs.items() if o == "g2s.A"}
    assert got == {p: "proved" for p in ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts",
                                          "in_bounds", "type_agreement", "coalescing")}
    assert all(r.checked and r.checked > 0 for r in rs.values())


def test_whole_config_through_the_engine():
    rep = prove_config(loads_config(cfg_text()))
    assert rep.error is None
    ops = {r.operand for r in rep.results}
    assert {"A", "g2s.A"} <= ops and all(r.status == "proved" for r in rep.results)


# ---------------------------------------------------------------- one failing case per property

def test_alignment_gmem_align_too_small():
    r = status(cfg_text(galign=8), "alignment")
    assert r.status == "refuted" and "gmem base alignment 8 B" in r.counterexample.message


def test_alignment_leading_dimension_not_a_multiple_of_the_vector():
    r = status(cfg_text(params="ldQ = { min = 64, max = 65536, multiple_of = 4 }"), "alignment")
    assert r.status == "refuted" and r.counterexample.params["ldQ"] % 8 == 4
    assert "not 16-byte aligned" in r.counterexample.message


def test_alignment_cute_rejects_vectors_across_the_leading_dimension():
    # the tile is M-contiguous in gmem but the copy's 8-value vectors run along K (stride ldQ)
    r = status(cfg_text(gmem="(128,64):(1,ldQ)", params="ldQ = { min = 128, max = 65536, multiple_of = 64 }"),
               "alignment")
    assert r.status == "refuted" and r.method == "cute" and "src failed to vectorize" in r.counterexample.message


def test_coalescing_leading_dimension_off_the_sector_grid():
    r = status(cfg_text(params="ldQ = { min = 64, max = 65536, multiple_of = 8 }"), "coalescing")
    assert r.status == "refuted"
    ex = r.counterexample.extra
    assert ex["sectors"] > ex["minimum"] == 16 and r.counterexample.params["ldQ"] % 16 == 8


def test_coalescing_proved_for_every_multiple_of_16():
    assert status(cfg_text(params="ldQ = { min = 64, max = 65536, multiple_of = 16 }"), "coalescing").status == "proved"


def test_bank_conflicts_unswizzled_column_major_threads():
    # 8 consecutive threads down a column of an unswizzled row-major tile: 16-byte writes 128 bytes apart
    r = status(cfg_text(smem="(128,64):(64,1)", thr="(16,8):(1,16)"), "bank_conflicts")
    assert r.status == "refuted" and r.counterexample.extra["degree"] == 8


def test_bank_conflicts_the_swizzle_fixes_it():
    assert status(cfg_text(thr="(16,8):(1,16)"), "bank_conflicts").status == "proved"


def test_exactly_once_and_coverage_duplicate_threads():
    # tv maps two threads onto the same values: half the tile is written twice, half never
    extra_tv = 'tv = "((8,16),8):((128,0),16)"\ntiler = "(16,64)"\n'
    text = cfg_text().replace('thr = "(16,8):(8,1)"\nval = "(1,8)"\n', extra_tv)
    rs = results(text)
    assert rs[("exactly_once", "g2s.A")].status == "refuted"
    assert rs[("coverage", "g2s.A")].status == "refuted"


def test_exactly_once_s2g_rows_overlap_for_a_short_leading_dimension():
    text = MMA + ('[params]\nldO = { min = 8, max = 4096, multiple_of = 8 }\n'
                  '[copy.C]\natom = "AutoVectorizingCopy"\ntype = "half_t"\nconvert = true\n'
                  f'smem = "{FA2_Q}"\n'
                  '[s2g.C]\natom = "UniversalCopy<uint128_t>"\ntype = "half_t"\nthr = "(16,8):(8,1)"\nval = "(1,8)"\n'
                  'gmem = "(128,64):(ldO,1)"\ngmem_align = 16\n')
    text = text.replace('[params]', '[params]', 1)
    rs = results(text)
    r = rs[("exactly_once", "s2g.C")]
    assert r.status == "refuted" and r.counterexample.params["ldO"] < 64
    assert rs[("alignment", "s2g.C")].status == "proved"


def test_in_bounds_residue_k_not_a_multiple_of_the_vector():
    r = status(cfg_text(extra='residue = ["M", "K"]\n'), "in_bounds")
    assert r.status == "refuted" and "K residue" in r.counterexample.message
    assert r.counterexample.extra["residue"]["K"] % 8 != 0


def test_in_bounds_residue_proved_when_k_is_a_multiple_of_8():
    text = cfg_text(extra='residue = ["M", "K"]\n',
                    params="ldQ = { min = 64, max = 65536, multiple_of = 64 }\nK = { min = 8, max = 65536, multiple_of = 8 }")
    r = status(text, "in_bounds")
    assert r.status == "proved" and "residues" in r.detail


def _overrun_text(stages=0):
    text = cfg_text(smem="(40,64):(64,1)", gmem="(40,64):(ldQ,1)", extra='smem = "(40,64):(64,1)"\n')
    text = text.replace(COPY_A.format(smem="(40,64):(64,1)"), "")
    return text + (f"[stages]\ncount = {stages}\n" if stages else "")


def test_in_bounds_tiler_that_does_not_divide_the_tile():
    """CuTe compiles a TiledCopy whose 16x64 tile does not divide the 40x64 tile: its partitions round up
    to 48x64 and the copy moves rows 40..47 too (tests/test_datapath_cute.py: the model's addresses are
    CuTe's). Every property of the copy is decided on that (contract 2.1, issue 26.4), not only in_bounds."""
    rs = results(_overrun_text())
    r = rs[("in_bounds", "g2s.A")]
    assert r.status == "refuted" and "A(40,0) past the 40x64 tile" in r.counterexample.message
    assert r.counterexample.element == (40, 0) and r.counterexample.address_bytes == 40 * 64 * 2
    got = {p for p, op in rs if op == "g2s.A"}
    assert got == {"coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
                   "coalescing"}
    assert rs[("exactly_once", "g2s.A")].status == "proved"      # rows 40..47 land past the buffer, once each


def test_a_copy_past_its_tile_writes_into_the_next_stage():
    """With [stages], the stage-0 copy's rows 40..47 land on stage 1's elements (0..7, k): smem element 0 of
    stage 1 is written twice and receives A(40,0), so exactly_once and slot_agreement are refuted."""
    rs = results(_overrun_text(stages=2))
    eo, sa = rs[("exactly_once", "g2s.A")], rs[("slot_agreement", "g2s.A")]
    assert eo.status == "refuted" and sa.status == "refuted"
    for r in (eo, sa):
        assert r.counterexample.element == (0, 0) and r.counterexample.extra["stage"] == 1
        assert r.counterexample.address_bytes == 40 * 64 * 2 and r.counterexample.extra["past_element"] == [40, 0]
    assert "written twice" in eo.counterexample.message and "receives A(40,0)" in sa.counterexample.message


def test_a_copy_past_its_tile_aliases_the_next_column():
    """Column-major smem (40,128):(1,40) under a 64-row TiledCopy tile: rows 40..63 of column k are rows
    0..23 of column k+1 (CuTe's addresses, tests/test_datapath_cute.py), written twice."""
    text = ('[params]\nld = { min = 48, max = 48 }\n[mma]\natom = "SM80_16x8x16_F32F16F16F32_TN"\n'
            '[g2s.A]\natom = "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"\ntype = "half_t"\nsmem = "(40,128):(1,40)"\n'
            'thr = "(8,16):(1,8)"\nval = "(8,1)"\ngmem = "(40,128):(1,ld)"\ngmem_align = 128\n')
    rs = results(text)
    eo = rs[("exactly_once", "g2s.A")]
    assert eo.status == "refuted" and eo.counterexample.element == (0, 1) and eo.counterexample.address_bytes == 80
    sa = rs[("slot_agreement", "g2s.A")]                 # gmem rows 40.. of column 0 are not rows 0.. of column 1
    assert sa.status == "refuted" and "past the 40x128 tile" in sa.counterexample.message


def test_slot_agreement_whole_route():
    # the g2s table writes the tile through an unswizzled layout, the ldmatrix copy reads it swizzled
    text = cfg_text(extra='smem = "(128,64):(64,1)"\n')
    sa = results(text)[("slot_agreement", "g2s.A")]
    assert sa.status == "refuted" and "different smem layouts" in sa.counterexample.message
    route = sa.counterexample.route
    assert route[0].startswith("gmem offset") and "of thread" in route[1] and "writes it to smem byte" in route[1]
    assert route[2].startswith("ldmatrix.x4") and "lane" in route[2]
    assert "fragment slot" in route[3] and "where the MMA expects A(" in route[3] and "gets A(" in route[3]


def test_slot_agreement_overlapping_gmem_rows_read_what_cute_reads():
    # ld = 8 < 64: gmem rows overlap; each smem element still receives the gmem offset CuTe maps it to
    text = cfg_text(params="ldQ = { min = 8, max = 65536, multiple_of = 8 }")
    assert status(text, "slot_agreement").status == "proved"


def test_type_agreement_g2s_type_differs_from_the_copy():
    r = status(cfg_text(type="bfloat16_t"), "type_agreement")
    assert r.status == "refuted" and "bfloat16_t" in r.counterexample.message


# ---------------------------------------------------------------- stages

STAGED = "Sw<3,3,3> o ((8,16),(64,1),(1,3)):((64,512),(1,0),(0,8192))"


def test_stages_from_the_pipe_mode():
    rs = results(cfg_text(smem=STAGED))
    assert rs[("exactly_once", "stages.A")].status == "proved"
    assert rs[("in_bounds", "stages.A")].status == "proved"
    cfg = loads_config(cfg_text(smem=STAGED))
    assert cfg.stages == 3 and cfg.copies["A"].smem.rank() == 2


def test_stages_overlap():
    r = results(cfg_text(smem=STAGED.replace("8192", "4096")))[("exactly_once", "stages.A")]
    assert r.status == "refuted" and "overlap" in r.counterexample.message


def test_stages_count_and_capacity():
    ok = results(cfg_text(more="[stages]\ncount = 4\n"))[("in_bounds", "stages.A")]
    assert ok.status == "proved" and ok.checked == 4 * 8192
    big = results(cfg_text(more="[stages]\ncount = 11\n"))[("in_bounds", "stages.A")]
    assert big.status == "refuted" and big.counterexample.extra["capacity"] == 166912


def _family(lo, hi, mult=1, smem=FA2_Q):
    return cfg_text(smem=smem, params=f"ldQ = {{ min = 64, max = 65536, multiple_of = 64 }}\n"
                    f"s = {{ min = {lo}, max = {hi}, multiple_of = {mult} }}", more='[stages]\ncount = "s"\n')


def _member(n, smem=FA2_Q):
    return cfg_text(smem=smem, more=f"[stages]\ncount = {n}\n")


STAGE_PROPS = [("exactly_once", "stages.A"), ("in_bounds", "stages.A")]


@pytest.mark.parametrize("lo,hi,mult", [(1, 10, 1), (2, 8, 2), (3, 3, 1)])
def test_stage_family_proved_and_every_member_agrees(lo, hi, mult):
    """A family of stage counts that fits: proved by translation, and each member proved concretely."""
    fam = results(_family(lo, hi, mult))
    assert {k: fam[k].status for k in STAGE_PROPS} == {k: "proved" for k in STAGE_PROPS}
    assert all(fam[k].method == "translation" and fam[k].checked for k in STAGE_PROPS)
    for n in range(lo, hi + 1, mult):
        got = results(_member(n))
        assert {k: got[k].status for k in STAGE_PROPS if k in got} == {k: "proved" for k in STAGE_PROPS if k in got}


def test_stage_family_capacity_refuted_at_the_least_count_that_does_not_fit():
    fam = results(_family(2, 16))[("in_bounds", "stages.A")]
    assert fam.status == "refuted" and fam.counterexample.params == {"s": 11}
    assert fam.counterexample.extra == {"bytes": 11 * 16384, "capacity": 166912, "stages": 11}
    assert results(_member(10))[("in_bounds", "stages.A")].status == "proved"     # the members agree
    assert results(_member(11))[("in_bounds", "stages.A")].status == "refuted"
    assert results(_family(2, 16, 4))[("in_bounds", "stages.A")].counterexample.params == {"s": 12}


def test_stage_family_not_on_the_bank_grid_is_unknown():
    padded = "(128,64):(72,1)"           # cosize 127*72+64 = 9208 elements: 18416 bytes, not 128-byte rows
    r = results(_family(1, 4, smem=padded))[("in_bounds", "stages.A")]
    assert r.status == "unknown" and "128-byte rows" in r.detail
    assert results(_member(3, smem=padded))[("in_bounds", "stages.A")].status == "unknown"   # as a member
    one = _family(1, 1, smem=padded)     # one stage: nothing is moved
    assert results(one)[("in_bounds", "stages.A")].status == "proved"


def test_first_overlap_decides_every_count():
    from symlayout.prove.datapath.stages import first_overlap
    assert first_overlap([0, 1, 2, 3], 4) is None
    assert first_overlap([0, 1, 2, 3], 2) == 2 or first_overlap([0, 1, 2, 3], 2) == 1
    assert first_overlap([0, 2, 4, 6], 3) == 2          # 0+2*3 = 6: stage 2 meets stage 0; stage 1 does not
    assert first_overlap([0, 2, 4, 6], 1) == 2          # 1 is no difference of two offsets, 2 is


# ---------------------------------------------------------------- bad input: one line, located

@pytest.mark.parametrize("text,where,what", [
    (cfg_text(extra='tv = "(8,8):(1,8)"\n'), 18, "either thr/val or tv/tiler"),
    (cfg_text(extra='residue = ["N"]\n'), 18, "not a mode of the A tile"),
    (cfg_text(gmem="(64,64):(ldQ,1)"), 16, "the smem tile is 128x64"),
    (cfg_text(gmem="(128,64):(ldX,1)"), 16, "ldX"),
    (cfg_text().replace("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "SM75_U32x4_LDSM_N"), 12, "not global memory"),
    (cfg_text(smem=STAGED, more="[stages]\ncount = 2\n"), 19, "PIPE mode of 3"),
    (cfg_text().replace("[g2s.A]", "[g2s.C]"), 11, "[g2s.A] or [g2s.B]"),
    (cfg_text(extra="gmem_aling = 16\n"), 18, "did you mean 'gmem_align'"),
    (cfg_text(more='[stages]\ncount = "q"\n'), 19, "not a [params] symbol"),
    (cfg_text(smem="Sw<3,3,3> o 0 o (128,64,3):(64,1,8200)"), 10, "cannot be sliced"),
    (cfg_text(smem=STAGED, params="ldQ = { min = 64, max = 65536, multiple_of = 64 }\ns = { min = 1, max = 4 }",
              more='[stages]\ncount = "s"\n'), 20, "a family of stage counts"),
])
def test_bad_input_is_one_line(text, where, what):
    with pytest.raises(ConfigError) as ei:
        loads_config(text, path="x.toml")
    msg = str(ei.value)
    assert "\n" not in msg and what in msg, msg
    assert msg.startswith(f"x.toml:{where}:"), msg


# ---------------------------------------------------------------- the GPU harness's host side (no GPU)

def test_harness_predictions_follow_the_phase_rule():
    from symlayout.harness.datapath_run import patterns, predicted_wavefronts
    assert predicted_wavefronts("ld", 16, [16 * l for l in range(32)]) == 4          # 512 B: 4 phases of 128 B
    assert predicted_wavefronts("ld", 16, [128 * l for l in range(32)]) == 32        # 8-way in each phase
    assert predicted_wavefronts("ld", 8, [(l % 16) * 8 + (l // 16) * 512 for l in range(32)]) == 2   # half warps
    assert predicted_wavefronts("ld", 4, [(l % 16) * 4 + (l // 16) * 512 for l in range(32)]) == 2   # 2-way
    assert predicted_wavefronts("ldsm", 16, [16 * l for l in range(32)]) == 4
    names = [p[0] for p in patterns()]
    assert len(names) == len(set(names)) and any(n.startswith("ldsm") for n in names)


def test_harness_copy_kernel_and_ncu_csv():
    from symlayout.harness.datapath_run import compare, copy_source, models_of, parse_ncu_csv
    (m, asg), = [x for x in models_of("proofs/sm80_datapath/fa2_fwd_hd64_qk.toml") if x[0].operand == "A"]
    assert asg == {"ldQ": 64} and "cp.async.cg.shared.global" in copy_source(m)
    csv = ('"ID","Kernel Name","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"\n'
           '"","","sector"\n"0","pat_ld16","4"\n"1","pat_ld16","33"\n')
    meas = parse_ncu_csv(csv)
    assert meas == [{"kernel": "pat_ld16", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 4.0},
                    {"kernel": "pat_ld16", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 33.0}]
    pl = {"items": [{"name": "a", "kind": "ld", "predicted": 4}, {"name": "b", "kind": "ld", "predicted": 32}]}
    assert [r[4] for r in compare(pl, meas)] == [True, False]


def test_two_gmem_symbols_enumerated_or_unknown():
    # rows 0..63 and 64..127 of the Q tile in two places (ldQ apart within, s apart between)
    small = cfg_text(gmem="((64,2),64):((ldQ,s),1)", params="ldQ = { min = 64, max = 256, multiple_of = 64 }\n"
                                                           "s = { min = 4096, max = 4104, multiple_of = 4 }")
    r = status(small, "alignment")
    assert r.status == "refuted" and r.counterexample.params["s"] % 8 == 4
    big = cfg_text(gmem="((64,2),64):((ldQ,s),1)", params="ldQ = { min = 64, max = 65536, multiple_of = 64 }\n"
                                                         "s = { min = 8, max = 1048576, multiple_of = 8 }")
    r = status(big, "coalescing")
    assert r.status == "unknown" and "combinations" in r.detail


def test_cute_rejects_a_dynamic_stride_inside_the_vector():
    r = status(cfg_text(gmem="(128,64):(ldQ,s)", params="ldQ = { min = 64, max = 256, multiple_of = 64 }\n"
                                                        "s = { min = 1, max = 2 }"), "alignment")
    assert r.status == "refuted" and r.method == "cute"


# ---------------------------------------------------------------- hand-built [copy.X] over a parametric smem tile

HB_TV = 'tv = "((4,8,4),((2,2,2),(1,1))):((128,1,16),((64,8,512),(0,0)))"\ntiler = "(64,16)"\n'


def _hb(smem, keys=HB_TV, params="K = { min = 16, max = 128, multiple_of = 16 }"):
    return (f"[params]\n{params}\n[mma]\natom = \"SM80_16x8x16_F32F16F16F32_TN\"\nlayout = \"(4,1,1)\"\n"
            f"[copy.A]\natom = \"SM75_U32x4_LDSM_N\"\ntype = \"half_t\"\nsmem = \"{smem}\"\n{keys}")


def _copy_results(text):
    rep = prove_config(loads_config(text))
    assert rep.error is None, rep.error
    return {r.property: r for r in rep.results if r.operand == "A"}


@pytest.mark.parametrize("smem", ["(64,K):(K,1)", "Sw<3,3,3> o (64,K):(K,1)", "(64,K):(K+8,1)"])
def test_handbuilt_copy_over_a_parametric_tile_is_every_member(smem):
    fam = _copy_results(_hb(smem))
    members = {k: _copy_results(_hb(smem.replace("K+8", str(k + 8)).replace("K", str(k)), params="x = { min = 1, max = 1 }"))
               for k in range(16, 129, 16)}
    rejected = [k for k, m in members.items() if any(r.method == "cute" for r in m.values())]
    if rejected:                       # CuTe rejects a member: the family is that rejection, naming it
        (only,) = fam.values()
        assert only.method == "cute" and only.counterexample.params == {"K": rejected[0]}
        return
    assert fam and all("members (K)" in r.detail for r in fam.values())
    for p, r in fam.items():
        bad = [k for k, m in members.items() if m[p].status == "refuted"]
        assert r.status == ("refuted" if bad else "proved"), (p, bad)
        if bad:
            assert r.counterexample.params == {"K": bad[0]}


def test_handbuilt_copy_over_a_parametric_tile_cute_rejects_a_member():
    r = _copy_results(_hb("(64,K):(K,1)", keys='thr = "(32,4):(1,32)"\nval = "(1,8)"\n'))
    (only,) = r.values()
    assert only.status == "refuted" and only.method == "cute" and only.counterexample.params == {"K": 16}


def test_handbuilt_copy_over_too_many_members_is_an_error_naming_the_table():
    rep = prove_config(loads_config(_hb("(64,K):(K,1)", params="K = { min = 16, max = 8192, multiple_of = 16 }")))
    msg = rep.error or next(r.detail for r in rep.results if r.status == "error")
    assert "[copy.A]" in msg and "members" in msg and "\n" not in msg


# ---------------------------------------------------------------- swizzle offsets in a global-memory copy

def test_g2s_swizzle_offset_off_the_period_is_an_error_naming_the_key():
    rs = results(cfg_text(smem="Sw<3,3,3> o 8 o (128,64):(64,1)"))
    errs = [r for (p, o), r in rs.items() if o == "g2s.A"]
    assert [r.status for r in errs] == ["error"]
    assert errs[0].detail.startswith("[g2s.A] smem Sw<3,3,3> o 8 o") and "\n" not in errs[0].detail


def test_g2s_swizzle_offset_on_the_period_follows_the_layout():
    rs = results(cfg_text(smem="Sw<3,3,3> o 512 o (128,64):(64,1)"))
    got = {p: r.status for (p, o), r in rs.items() if o == "g2s.A"}
    assert got["in_bounds"] == "refuted"               # CuTe's buffer is cosize (8192 elements): the offset runs past it
    assert got["coverage"] == got["alignment"] == got["bank_conflicts"] == "proved"


# ---------------------------------------------------------------- contract 2.1: no result goes missing


def _data_path_applies(cfg, table, op):
    """The properties that apply to one data-path table of ``cfg`` (contract 2.1), given ``[prove] properties``."""
    wanted = set(cfg.prove.properties or GLOBAL_PROPERTIES)
    if table == "stages":
        return wanted & {"exactly_once", "in_bounds"}
    out = wanted & set(GLOBAL_PROPERTIES)
    if op not in cfg.copies:
        out.discard("type_agreement")          # nothing to compare the element type with
    return out


def _data_path_configs():
    root = Path(__file__).resolve().parents[1]
    out = []
    for f in find_config_files([str(root / "proofs")]):
        cfg = load_config(f)
        if cfg.g2s or cfg.s2g or cfg.stages:
            out.append(pytest.param(cfg, id=str(Path(f).relative_to(root))))
    s2g = ('[params]\nld = { min = 64, max = 4096, multiple_of = 64 }\n[mma]\natom = "SM80_16x8x16_F32F16F16F32_TN"\n'
           '[s2g.C]\natom = "UniversalCopy<uint128_t>"\ntype = "half_t"\nsmem = "(40,64):(64,1)"\n'
           'thr = "(16,8):(8,1)"\nval = "(1,8)"\ngmem = "(40,64):(ld,1)"\ngmem_align = 16\n')
    for name, text in (("overrun", _overrun_text()), ("overrun_stages", _overrun_text(stages=2)), ("overrun_s2g", s2g)):
        out.append(pytest.param(loads_config(text, name), id=name))
    return out


@pytest.mark.parametrize("cfg", _data_path_configs())
def test_every_property_that_applies_to_a_copy_gets_a_result(cfg):
    """Per [g2s.X], [s2g.C] and [stages] table: the properties reported are exactly those that apply (a copy
    CuTe does not compile: the one refutation with CuTe's static_assert, docs/prover.md)."""
    rep = prove_config(cfg)
    assert rep.error is None, rep.error
    tables = [(gc.kind, op) for t in (cfg.g2s, cfg.s2g) for op, gc in t.items()]
    tables += [("stages", op) for op in staged_buffers(cfg)]
    assert tables
    for kind, op in tables:
        rs = [r for r in rep.results if r.operand == f"{kind}.{op}"]
        if any(r.method == "cute" for r in rs):
            assert len(rs) == 1 and rs[0].status == "refuted"
            continue
        assert sorted(r.property for r in rs) == sorted(_data_path_applies(cfg, kind, op)), (kind, op)


# ---------------------------------------------------------------- a swizzle inside one 16-byte vector

INT8_MMA = '[mma]\natom = "SM80_16x8x32_S32S8S8S32_TN"\nlayout = "(2,1,1)"\n'
INT8_G2S = ('[params]\nld = { min = 64, max = 112, multiple_of = 16 }\n' + INT8_MMA +
            '[g2s.A]\natom = "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"\ntype = "int8_t"\nthr = "(16,4):(4,1)"\n'
            'val = "(1,16)"\ngmem = "(32,64):(ld,1)"\ngmem_align = 16\nsmem = "Sw<2,1,2> o (32,64):(64,1)"\n')


def test_cp_async_gets_the_address_cute_recast_rounds_down_to_the_vector():
    """Sw<2,1,2> over int8 permutes 2-byte units inside each 16-byte cp.async vector. CuTe compiles it:
    copy_unpack's recast upcasts the swizzle away and hands cp.async the swizzled offset rounded down to 16
    bytes (its C++ oracle, tests/oracle/datapath_cases.jsonl recast-118: every byte written once, in bounds,
    16-byte aligned, 1 wavefront per phase; slot_agreement refuted). Before, symlayout took the swizzled
    address of the vector's first element (thread 0 at byte 2: misaligned, bytes 16-17 never written, 2-way
    bank conflicts)."""
    from symlayout.prove.datapath.g2s import build_global_model
    cfg = loads_config(INT8_G2S)
    m = build_global_model(cfg.g2s["A"], cfg.params)
    starts = [m.start_addr[a[0]] for accs in m.accesses.values() for a in accs]
    assert m.recast and all(s % 16 == 0 for s in starts)
    # each start is the 16-byte block holding the vector's elements (the swizzle stays inside the block)
    assert all({m.smem_addr[i] // 16 for i in a} == {m.start_addr[a[0]] // 16}
               for accs in m.accesses.values() for a in accs)
    rs = {p: r for (p, o), r in results(INT8_G2S).items() if o == "g2s.A"}
    got = {p: r.status for p, r in rs.items()}
    assert got["coverage"] == got["exactly_once"] == got["in_bounds"] == got["bank_conflicts"] == "proved"
    assert got["slot_agreement"] == "refuted"
    assert "receives" in rs["slot_agreement"].counterexample.message
    # symlayout's alignment also asks the vector's elements to be contiguous (CuTe's oracle: addresses only)
    assert got["alignment"] == "refuted" and "not contiguous" in rs["alignment"].counterexample.message
    # a swizzle above the vector is not rounded
    plain = build_global_model(loads_config(INT8_G2S.replace("Sw<2,1,2>", "Sw<3,4,3>")).g2s["A"], cfg.params)
    assert not plain.recast
