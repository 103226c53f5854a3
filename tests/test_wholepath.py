"""The whole-path kernel of ``symlayout gpu`` (harness/wholepath.py): plan, tables and CUDA source on the CPU.

The marker-mode check runs against a CPU emulation of the kernel: every instruction the kernel issues
(``cp.async``/vector copies, ``ldmatrix`` [``.trans``] as the PTX ISA describes it, ``st.shared``,
``ld.shared`` + ``st.global``) applied byte by byte to the very tables the kernel receives.  The
emulation of ``ldmatrix`` is written here from the PTX ISA (not from ``symlayout.arch.ptx``), so a
table that disagrees with the hardware's semantics fails here before it fails on the GPU.
The GPU run itself is in ``test_harness_configs.py``-style tests that skip without a GPU.
"""
from __future__ import annotations

import glob
import shutil
import subprocess

import numpy as np
import pytest

from symlayout.config import load_config
from symlayout.harness import wholepath as W
from symlayout.harness.plan import instance_values
from symlayout.harness.values import HarnessError, uint_np

CONFIGS = sorted(glob.glob("proofs/sm80_datapath/*.toml"))
#: pitfalls whose data path runs (the GPU faults or not; the emulation checks the tables)
PITFALLS = [p for p in sorted(glob.glob("proofs/sm80_datapath/pitfalls/*.toml")) if "without_transpose" not in p]


def instance(path, k=0):
    vals = instance_values(load_config(path))
    return path + "@" + ",".join(f"{a}={b}" for a, b in vals[k].items())


# ------------------------------------------------------------------ a CPU emulation of the kernel


def ldmatrix(smem: np.ndarray, lane_addr, num: int, trans: bool):
    """``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`` of one warp (PTX ISA): row ``r`` of matrix
    ``j`` is the 16 bytes at the address of lane ``8 j + r``; lane ``l`` receives, in register ``j``, the
    16-bit elements (row l/4, cols 2(l%4), 2(l%4)+1) of matrix j, or with .trans (rows 2(l%4), 2(l%4)+1, col l/4)."""
    out = np.zeros((32, num), dtype=np.uint32)
    for j in range(num):
        rows = [int(lane_addr[8 * j + r]) for r in range(8)]
        assert all(a % 16 == 0 for a in rows), "ldmatrix row address not 16-byte aligned"
        half = lambda r, c: int(smem[rows[r] + 2 * c]) | (int(smem[rows[r] + 2 * c + 1]) << 8)   # noqa: E731
        for l in range(32):
            if trans:
                lo, hi = half(2 * (l % 4), l // 4), half(2 * (l % 4) + 1, l // 4)
            else:
                lo, hi = half(l // 4, 2 * (l % 4)), half(l // 4, 2 * (l % 4) + 1)
            out[l, j] = lo | (hi << 16)
    return out


def get_val(words, v, bits):
    if bits == 64:
        return int(words[2 * v]) | (int(words[2 * v + 1]) << 32)
    b = v * bits
    w = int(words[b >> 5]) >> (b & 31)
    return w if bits == 32 else w & ((1 << bits) - 1)


#: what the emulation reads past the end of an allocation (the GPU reads whatever lies there)
GARBAGE = 0xA5


def _read(img: np.ndarray, start: int, nbytes: int, oob: list, what):
    """``nbytes`` of ``img`` from ``start``; bytes past its end are GARBAGE and recorded in ``oob``
    (what compute-sanitizer's memcheck reports when the allocation ends there)."""
    out = np.full(nbytes, GARBAGE, dtype=np.uint8)
    have = max(0, min(nbytes, img.size - start))
    out[:have] = img[start:start + have]
    if have < nbytes:
        oob.append(("read", what, start + have, nbytes - have))
    return out


def _g2s(wp, op, case, smem, base, stages, oob):
    """The predicated G2S of ``op`` for ``stages``: per access ``elem_less(crd, residue)``; an access
    turned off zero-fills its destination (cp.async src-size 0) and reads nothing."""
    path = wp.ops[op]
    m, eb = path.g2s, path.bits // 8
    gimg = np.ascontiguousarray(case.ops[op]["image"]).view(np.uint8)
    goff, soff = W.g2s_tables(path, wp.stages)
    per = m.threads * len(m.accesses[0])
    crd = W.coord_table(m) if m.residue else [0] * per
    r0, r1 = case.ops[op]["r"]
    for s in stages:
        for j in range(s * per, (s + 1) * per):
            q = crd[j - s * per]
            src, dst = goff[j] * eb, base + soff[j] * eb
            assert src % m.vb == 0 and dst % m.vb == 0
            if (q & 0xFFFF) < r0 and (q >> 16) < r1:
                smem[dst:dst + m.vb] = _read(gimg, src, m.vb, oob, f"g2s.{op}")
            else:
                smem[dst:dst + m.vb] = 0


def emulate_marker(wp, case=None, digit=0):
    """The marker kernel's outputs on ``case`` (default: the full tile): ``{op: [stages][T][FS] fragment
    ids}``, the write counts, the output, the C-copy counts; ``case.memcheck`` lists the accesses past an
    allocation's end."""
    cpl = wp.compute
    T, n = wp.threads, wp.stages
    case = case or W.make_case(wp)
    inp = W.compute_inputs(wp, case)
    inp["digit"] = digit
    for op, img in W.host_images(wp, case, inp, True).items():
        case.ops[op]["image"] = img
    oob = []
    case.memcheck = oob
    smem = np.zeros(wp.smem_bytes + 64, dtype=np.uint8)
    frags, cnt = {}, np.zeros((n, T, cpl.frag["A"] + cpl.frag["B"]), dtype=np.int64)
    for op, path in wp.ops.items():
        if path.g2s is not None:                              # the kernel poisons the staged buffer first
            smem[wp.smem_layout[op]:wp.smem_layout[op] + path.span * path.bits // 8] = 0xFF
        if path.copy is None and path.g2s is not None:       # G2S only: the shared image is read back
            base, eb = wp.smem_layout[op], path.bits // 8
            _g2s(wp, op, case, smem, base, range(n), oob)
            frags["img_" + op] = smem[base:base + path.span * eb].view(uint_np(path.bits)).astype(np.int64)
            continue
        if path.copy is None:
            continue
        base = wp.smem_layout[op]
        vals = W.operand_values(wp, op, inp[op], True, digit)
        addr, slot = W.copy_tables(path, n)
        p = path.copy
        frags[op] = np.full((n, T, cpl.frag[op]), (1 << path.bits) - 1, dtype=np.int64)
        for s in range(n):
            if path.g2s is not None:                 # cp.async: k elements from gmem offset to smem offset
                _g2s(wp, op, case, smem, base, [s], oob)
            else:
                img = W.smem_image(path, vals, n, (1 << path.bits) - 1).view(np.uint8)
                smem[base:base + img.size] = img
            off = (cpl.frag["A"] if op == "B" else 0)
            for w in range(T // 32):
                for c in range(p.ncalls):
                    rows = [addr[(s * T + 32 * w + l) * p.ncalls + c] for l in range(32)]
                    if p.kind == "ldsm":
                        regs = ldmatrix(smem, [base + r[0] for r in rows], p.model.hw.num, p.model.hw.trans)
                    else:
                        assert p.kind == "vld"
                        regs = np.array([np.concatenate([smem[base + a:base + a + p.vec_bytes].view(np.uint32)
                                                         for a in r]) for r in rows])
                    for l in range(32):
                        t = 32 * w + l
                        for v, q in enumerate(p.slot[t][c]):
                            frags[op][s, t, q] = get_val(regs[l], v, path.bits)
                            cnt[s, t, off + q] += 1
    for op, path in wp.ops.items():
        if path.copy is None:                                  # registers or G2S only: the kernel counts 1
            off = cpl.frag["A"] if op == "B" else 0
            cnt[:, :, off:off + cpl.frag[op]] = 1
    # epilogue: the C fragment holds element ids; R2S by [copy.C], S2G by [s2g.C]
    fc = W.c_fragments(wp, inp["C"], True).astype(np.int64)
    cntc = None
    if wp.c_copy is None:
        return frags, cnt, fc.ravel(), None
    p = wp.c_copy
    U = uint_np(p.bits)
    pz = (1 << p.bits) - 1
    base = wp.smem_layout["C"]
    eb = p.bits // 8
    smem[base:base + p.span * eb] = np.full(p.span, pz, dtype=U).view(np.uint8)
    cntc = np.zeros((T, cpl.frag["C"]), dtype=np.int64)
    for t in range(T):
        for c in range(p.ncalls):
            vals = [int(fc[t, q]) for q in p.slot[t][c]]
            for q in p.slot[t][c]:
                cntc[t, q] += 1
            raw = np.array(vals, dtype=U).view(np.uint8)
            for j, a in enumerate(p.addr[t][c]):
                smem[base + a:base + a + p.vec_bytes] = raw[j * p.vec_bytes:(j + 1) * p.vec_bytes]
    if wp.s2g is None:
        return frags, cnt, smem[base:base + p.span * eb].view(U).copy(), cntc.ravel()
    goff, soff = W.s2g_tables(wp)
    m = wp.s2g
    crd = W.coord_table(m) if m.residue else [0] * len(goff)
    r0, r1 = case.c["r"]
    out = np.full(case.c["alloc"], pz, dtype=U).view(np.uint8)
    for j, (g, s_) in enumerate(zip(goff, soff)):
        q = crd[j]
        if not ((q & 0xFFFF) < r0 and (q >> 16) < r1):
            continue
        have = max(0, min(m.vb, out.size - g * eb))
        out[g * eb:g * eb + have] = smem[base + s_ * eb:base + s_ * eb + have]
        if have < m.vb:
            oob.append(("write", "s2g.C", out.size, m.vb - have))
    return frags, cnt, out.view(U).copy(), cntc.ravel()


def emulated_check(wp, case=None, digit=0):
    """The emulated marker run of ``case`` (id digit ``digit``) judged by the harness's own check."""
    case = case or W.make_case(wp)
    frags, cnt, out, cntc = emulate_marker(wp, case, digit)
    inp = W.compute_inputs(wp, case)
    inp["digit"] = digit
    inp["gimg"] = {op: case.ops[op]["image"] for op in case.ops}
    return W.check(wp, True, inp, frags, cnt, out, cntc, case)


# ------------------------------------------------------------------ tests


@pytest.mark.parametrize("path", CONFIGS + PITFALLS, ids=lambda p: p.split("/")[-1])
def test_marker_emulated_whole_path_is_exact(path):
    wp = W.plan_whole(instance(path))
    frags, cnt, out, cntc = emulate_marker(wp)
    ops = [k for k in frags if not k.startswith("img_")]
    imgs = [k[4:] for k in frags if k.startswith("img_")]
    res = W.check(wp, True, W.compute_inputs(wp), frags, cnt, out, cntc)
    assert res["status"] == "pass", res["problems"]
    assert res["mismatches"] == 0 and res["elements"] == wp.compute.M * wp.compute.N
    assert all(res[f"mismatches_{op}"] == 0 for op in ops)
    assert all(res[f"mismatches_smem_{op}"] == 0 and res[f"stray_smem_{op}"] == 0 for op in imgs)
    assert bool(imgs) == bool(wp.marker_only)


def test_wrong_table_is_caught_by_the_emulation(monkeypatch):
    """B's ldmatrix with the row addresses of lanes 0 and 1 swapped (one call): the marker check fails on B."""
    wp = W.plan_whole(instance("proofs/sm80_datapath/fa2_fwd_hd64_qk.toml"))
    real = W.copy_tables

    def swapped(path, n):
        addr, slot = real(path, n)
        if path.op == "B":
            nc = path.copy.ncalls
            addr[0], addr[nc] = addr[nc], addr[0]
        return addr, slot
    monkeypatch.setattr(W, "copy_tables", swapped)
    frags, cnt, out, cntc = emulate_marker(wp)
    res = W.check(wp, True, W.compute_inputs(wp), frags, cnt, out, cntc)
    assert res["status"] == "fail" and res["mismatches_B"] > 0 and res["mismatches_A"] == 0


INT8_3STAGE = """name = "int8 3-stage data path (issue 26 item 13)"
[mma]
atom = "SM80_16x8x32_S32S8S8S32_TN"
layout = "(2,2,1):(1,2,0)"
permutation = ["32", "32", "32"]
[copy.A]
atom = "SM75_U32x4_LDSM_N"
type = "int8_t"
smem = "Sw<2,4,3> o 0 o ((8,16),(64,1),(1,3)):((64,512),(1,0),(0,8192))"
[copy.B]
atom = "SM75_U32x4_LDSM_N"
type = "int8_t"
smem = "Sw<2,4,3> o 0 o ((8,16),(64,1),(1,3)):((64,512),(1,0),(0,8192))"
[g2s.A]
atom = "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>"
type = "int8_t"
thr = "(32,4):(4,1)"
val = "(1,16)"
gmem = "(128,64):(64,1)"
gmem_align = 16
[g2s.B]
atom = "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>"
type = "int8_t"
thr = "(32,4):(4,1)"
val = "(1,16)"
gmem = "(128,64):(64,1)"
gmem_align = 16
[stages]
count = 3
"""


def test_int8_marker_ids_take_several_passes(tmp_path):
    """Issue 26 item 13: 3 stages of 128x64 int8 are 24,576 ids, more than 8-bit values name; each
    pass carries one base-255 digit of every id, and every pass of the emulated kernel checks."""
    f = tmp_path / "int8.toml"
    f.write_text(INT8_3STAGE)
    wp = W.plan_whole(str(f))
    assert W.id_passes_of(wp) == 2
    runs = [emulated_check(wp, digit=q) for q in range(2)]
    assert all(r["status"] == "pass" for r in runs), [r["problems"][:2] for r in runs]
    assert W.merge_passes(runs)["status"] == "pass"
    ids = np.arange(3 * 128 * 64)
    digits = [W.marker_digit(wp, "A", ids, q) for q in range(2)]
    assert (digits[0] + 255 * digits[1] == ids).all() and max(d.max() for d in digits) < 255


def test_int8_marker_pass_catches_a_wrong_digit(tmp_path, monkeypatch):
    """The second pass is checked for real: the kernel loading the first pass's digits fails it."""
    f = tmp_path / "int8.toml"
    f.write_text(INT8_3STAGE)
    wp = W.plan_whole(str(f))
    real = W.operand_values
    monkeypatch.setattr(W, "operand_values", lambda wp_, op, X, marker, digit=0: real(wp_, op, X, marker, 0))
    frags, cnt, out, cntc = emulate_marker(wp, digit=1)
    monkeypatch.setattr(W, "operand_values", real)
    inp = W.compute_inputs(wp)
    inp["digit"] = 1
    res = W.check(wp, True, inp, frags, cnt, out, cntc)
    assert res["status"] == "fail" and res["mismatches_A"] > 0


def test_plan_reads_the_models():
    wp = W.plan_whole(instance("proofs/sm80_datapath/cutlass_sm80_f16_tn_3stage.toml"))
    assert wp.stages == 3 and wp.threads == 128
    a = wp.ops["A"]
    assert len(a.stage_table) == 3 * a.size and a.g2s.threads == 128
    goff, soff = W.g2s_tables(a, 3)
    assert len(goff) == 3 * 128 * len(a.g2s.accesses[0])
    assert len(set(zip(goff, soff))) == len(goff)              # no access twice
    assert "cp.async.ca.shared.global" in wp.source and "cp.async.wait_group 2;" in wp.source
    assert wp.source.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 3     # once per stage
    pv = W.plan_whole(instance("proofs/sm80_datapath/fa2_fwd_hd64_pv.toml"))
    assert pv.compute.convert == "f32->f16" and "cvt.rn.f16.f32" in pv.source and "s2g_C(" in pv.source
    assert "trans" in pv.ops["B"].copy.ptx and pv.ops["A"].copy is None
    assert W.route_text(pv).startswith("A: registers")


def test_compute_reference_is_exact_in_the_types():
    wp = W.plan_whole(instance("proofs/sm80_datapath/fa2_fwd_hd128_pv.toml"))
    inp = W.compute_inputs(wp)
    assert np.abs(inp["ref"]).max() <= 2048                  # exact in half (the stored type)
    vals = W.operand_values(wp, "B", inp["B"], False)
    assert vals.shape == (1, wp.ops["B"].size)


def test_g2s_without_copy_is_marker_only_at_the_admitted_base():
    wp = W.plan_whole(instance("proofs/sm80_datapath/pitfalls/cutlass_tf32_base_aligned_4.toml"))
    assert "without [copy.A]" in wp.marker_only and "whole_compute" not in wp.source
    assert wp.ops["A"].g_base == 4            # gmem_align = 4: the tile starts 4 bytes past a 1024-byte boundary


def test_not_runnable_is_a_reason():
    with pytest.raises(HarnessError, match="does not build"):
        W.plan_whole(instance("proofs/sm80_datapath/pitfalls/fa2_hd64_v_without_transpose.toml"))
    with pytest.raises(HarnessError, match="parametric"):
        W.plan_whole("proofs/sm80_datapath/fa2_fwd_hd64_qk.toml")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("path", CONFIGS[:1] + CONFIGS[-1:], ids=lambda p: p.split("/")[-1])
def test_source_compiles(path, tmp_path):
    wp = W.plan_whole(instance(path))
    cu = tmp_path / "w.cu"
    cu.write_text(wp.source)
    r = subprocess.run(["nvcc", "-arch=sm_80", "-cubin", "-o", str(tmp_path / "w.cubin"), str(cu)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]


def test_whole_path_on_the_gpu():
    from symlayout.harness import have_gpu
    if not have_gpu():
        pytest.skip("no GPU")
    for path in CONFIGS:
        res = W.run_whole(instance(path))
        assert res["status"] == "pass", res


# ------------------------------------------------------------------ the bank-conflict measurements' host side


def test_ncu_counters_and_ldgsts_judged_by_timing():
    from symlayout.harness.datapath_run import METRICS, compare, parse_ncu_csv
    csv = ('"ID","Kernel Name","l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_read.sum",'
           '"sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"\n'
           '"","","",""\n"0","pat_ldsm","8","0"\n"1","pat_ldgsts","0","32"\n')
    meas = parse_ncu_csv(csv)
    assert meas[1][METRICS["ldgsts"]] == 32.0                   # sm__ counters are read too
    pl = {"items": [{"name": "a", "kind": "ldsm", "predicted": 8}, {"name": "b", "kind": "ldgsts", "predicted": 8}]}
    rows = compare(pl, meas)
    assert rows[0][4] is True and rows[1][4] is None             # LDGSTS: reported, not judged by a counter


def test_timing_compare_judges_ratios_to_the_twin():
    from symlayout.harness.datapath_run import timing_compare
    res = [{"name": "ldgsts__stride1", "kind": "ldgsts", "predicted": 128, "cycles": 1000},
           {"name": "ldgsts__stride8", "kind": "ldgsts", "predicted": 1024, "cycles": 7800},
           {"name": "ldgsts__random0", "kind": "ldgsts", "predicted": 320, "cycles": 1000},    # no conflict seen
           {"name": "c:g2s.A", "kind": "ldgsts", "predicted": 1024, "cycles": 7400},
           {"name": "c:g2s.A (twin)", "kind": "ldgsts", "predicted": 128, "cycles": 1000},
           {"name": "st16__stride8", "kind": "st16", "predicted": 1024, "cycles": 5000}]
    rows = {r[0]: r for r in timing_compare(res)}
    assert set(rows) == {"ldgsts__stride8", "ldgsts__random0", "c:g2s.A"}
    assert rows["ldgsts__stride8"][5] and rows["c:g2s.A"][5] and not rows["ldgsts__random0"][5]
    assert rows["c:g2s.A"][3] == 8.0


def test_timing_items_and_ldmatrix_variants():
    from symlayout.harness.datapath_run import ldsm_variant_items, timing_items
    v = {i["name"]: i for i in ldsm_variant_items()}
    assert v["ldsmv_x1_r1_rows8"]["predicted"] == 8 and v["ldsmv_x2_r1_rows8"]["predicted"] == 16
    assert v["ld16v_r1"]["predicted"] == 4 + 1                   # the total counter's per-kernel constant
    it = {i["name"]: i for i in timing_items(["proofs/sm80_datapath/pitfalls/fa2_hd64_unswizzled_column_threads.toml"])}
    bad = it["proofs/sm80_datapath/pitfalls/fa2_hd64_unswizzled_column_threads.toml:g2s.A"]
    twin = it["proofs/sm80_datapath/pitfalls/fa2_hd64_unswizzled_column_threads.toml:g2s.A (twin)"]
    assert (bad["predicted"], twin["predicted"]) == (1024, 128)
    assert sorted(a for r in twin["saddr"] for a in r) == sorted(range(0, 16 * 128 * 8, 16))   # same bytes, contiguous
    assert it["ldgsts__stride1"]["predicted"] == 128 and it["ldgsts__stride8"]["predicted"] == 1024


# ------------------------------------------------------------------ partial tiles (residue predication)


def _cases(wp, exact=False):
    return [W.make_case(wp, r, label, exact=exact) for label, r in wp.cases]


@pytest.mark.parametrize("path", CONFIGS + PITFALLS, ids=lambda p: p.split("/")[-1])
def test_partial_tiles_emulated_as_the_predicate_says(path):
    """Every partial tile of every configuration: the emulated predicated kernel (zero-fill of what the
    predicate turns off) agrees with the check, the reads outside the problem are exactly the prover's,
    and with buffers ending at the problem nothing but those reaches past them (memcheck's view)."""
    wp = W.plan_whole(instance(path))
    assert bool(wp.cases) == bool(wp.dims)
    for case in [c for c in _cases(wp) if "alone" not in c.label]:       # (one dimension alone: a subset)
        res = emulated_check(wp, case)
        assert res["status"] == "pass", (case.label, res["problems"])
        assert res.get("oob_read_seen", 0) == case.oob_reads and not case.memcheck
    for label, r in wp.cases[:1] + [c for c in wp.cases if "counterexample" in c[0]]:
        case = W.make_case(wp, r, label, exact=True)
        res = emulated_check(wp, case)
        assert res["status"] == "pass", (case.label, res["problems"])
        assert bool(case.memcheck) == bool(case.oob_reads or case.oob_writes), case.memcheck


def test_residues_and_cases_are_the_provers():
    wp = W.plan_whole(instance("proofs/sm80_datapath/cutlass_sm80_f16_tn_3stage.toml"))
    assert wp.dims["K"] == (32, [8, 16, 24, 32]) and wp.dims["M"] == (128, list(range(1, 129)))   # [params] K: multiple of 8
    cases = dict(wp.cases)
    assert cases["least residue"] == {"M": 1, "N": 1, "K": 8} and cases["middle residue"] == {"M": 65, "N": 65, "K": 16}
    assert all("counterexample" not in label for label in cases)            # in_bounds is proved
    pit = W.plan_whole(instance("proofs/sm80_datapath/pitfalls/fa2_hd64_headdim_not_multiple_of_8.toml"))
    assert pit.cases[-1] == ("in_bounds[g2s.A] counterexample", {"K": 1})   # the prover's, run last
    with pytest.raises(HarnessError, match="no copy of this configuration cuts N"):
        W.make_case(pit, {"N": 3})


def test_pitfall_reads_outside_the_problem_where_the_prover_says():
    """fa2_hd64_headdim_not_multiple_of_8 at the prover's residue K = 1: every row's 8-element cp.async
    starting at k = 0 executes and reads k = 1..7 (896 elements, poison in the shared image); with the
    buffer ending at the problem's last element, the last row's vector reads 14 bytes past it."""
    wp = W.plan_whole(instance("proofs/sm80_datapath/pitfalls/fa2_hd64_headdim_not_multiple_of_8.toml"))
    label, r = wp.cases[-1]
    case = W.make_case(wp, r, label)
    assert case.oob_reads == 128 * 7 and case.ops["A"]["zero"].sum() == 128 * 56
    res = emulated_check(wp, case)
    assert res["status"] == "pass" and res["oob_read_seen"] == 896
    exact = W.make_case(wp, r, label, exact=True)
    res = emulated_check(wp, exact)
    assert res["status"] == "pass" and res["oob_read_seen"] == 889 and res["unchecked_past_allocation"] == 7
    assert exact.memcheck == [("read", "g2s.A", exact.ops["A"]["alloc"] * 2, 14)]


def test_a_predicate_that_lets_everything_run_is_caught(monkeypatch):
    """All coordinates 0 (every access executes): rows outside the problem arrive as poison, not zeros."""
    wp = W.plan_whole(instance("proofs/sm80_datapath/fa2_fwd_hd64_qk.toml"))
    case = W.make_case(wp, {"M": 65})
    monkeypatch.setattr(W, "coord_table", lambda m: [0] * sum(len(a) for a in m.accesses.values()))
    res = emulated_check(wp, case)
    assert res["status"] == "fail" and res["mismatches_A"] > 0 and res["mismatches_B"] == 0


def test_partial_tile_reference_is_the_zero_filled_product():
    wp = W.plan_whole(instance("proofs/sm80_datapath/cutlass_sm80_f16_tn_3stage.toml"))
    case = W.make_case(wp, {"M": 5, "K": 8})
    inp = W.compute_inputs(wp, case)
    A, B, C = inp["A"], inp["B"], inp["C"]
    want = sum(A[:, s * 32:s * 32 + 8] @ B[:, s * 32:s * 32 + 8].T for s in range(3)) + C    # K = 8 of each stage
    want[5:] = C[5:]                                                                          # rows past M = 5
    assert (inp["ref"] == want).all()


def test_partial_tile_source_and_arguments(monkeypatch):
    """The predicated kernel (cp.async with src-size, the guarded S2G) and run_plan's arguments, matched by
    name against the kernel's parameter list on a numpy stand-in for CuPy."""
    wp = W.plan_whole(instance("proofs/sm80_datapath/fa2_fwd_hd64_pv.toml"))
    assert "cp.async.cg.shared.global [%0], [%1], 16, %2;" in wp.source and "if (!((q & 0xffff) < r0" in wp.source

    class Stop(Exception):
        pass

    class FakeCuda:
        @staticmethod
        def load_cupy():
            import types
            return types.SimpleNamespace(asarray=np.asarray, zeros=np.zeros, full=np.full, int32=np.int32,
                                         uint8=np.uint8, asnumpy=np.asarray)

        @staticmethod
        def launch(module, kernel, grid, block, args, shared_mem=0):
            head = wp.source[wp.source.index(f" {kernel}(") + len(kernel) + 2:]
            params = head[:head.index(") {")].split(", ")
            assert len(params) == len(args)
            got = dict(zip((p.split()[-1] for p in params), args))
            for p, a in zip(params, args):
                assert isinstance(a, np.ndarray) == ("*" in p), p
            case = FakeCuda.case
            assert (int(got["rB0"]), int(got["rB1"])) == case.ops["B"]["r"] and int(got["zclampB"]) == 0
            assert (int(got["rC0"]), int(got["rC1"])) == case.c["r"]
            assert list(got["crdB"]) == W.coord_table(wp.ops["B"].g2s) and got["crdC"].size == len(W.s2g_tables(wp)[0])
            assert got["gC"].size == case.c["alloc"] * 2 and got["gB"].size == case.ops["B"]["alloc"] * 2
            raise Stop
    monkeypatch.setattr(W, "_exact_buffer", lambda cp, n: np.zeros(n, dtype=np.uint8))
    for exact in (False, True):
        FakeCuda.case = W.make_case(wp, {"K": 33, "M": 65}, exact=exact)
        for marker in (True, False):
            with pytest.raises(Stop):
                W.run_plan(wp, marker, FakeCuda, module=object(), case=FakeCuda.case)


def test_memcheck_report_is_read():
    """The H200 run's report of the pitfall (compute-sanitizer 2025.3): the last row's vector from A(127, 0),
    thread 120, reads 16 bytes from 2 bytes before the end of the 16,274-byte buffer (16 bytes of alignment
    + 8129 half elements): 14 bytes past it."""
    text = ("========= COMPUTE-SANITIZER\n"
            "========= Invalid __global__ read of size 16 bytes\n"
            "=========     at whole_marker+0x980\n"
            "=========     by thread (120,0,0) in block (0,0,0)\n"
            "=========     Access to 0x7fd62a807f90 is out of bounds\n"
            "=========     and is inside the nearest allocation at 0x7fd62a804000 of size 16,274 bytes\n"
            "========= Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch failure\"\n"
            "========= ERROR SUMMARY: 5 errors\n")
    s = W.memcheck_summary(text)
    assert s["errors"] == 5 and s["kinds"] == {"Invalid __global__ read of size 16 bytes": 1}
    assert s["threads"] == [120] and s["bytes_past_allocation"] == [14]
    wp = W.plan_whole(instance("proofs/sm80_datapath/pitfalls/fa2_hd64_headdim_not_multiple_of_8.toml"))
    label, r = wp.cases[-1]
    case = W.make_case(wp, r, label, exact=True)
    emulate_marker(wp, case)
    assert wp.ops["A"].g_base + case.ops["A"]["alloc"] * 2 == 16274 and case.memcheck[0][3] == 14   # the same bytes
    m = wp.ops["A"].g2s
    first = [a[0] for a in m.accesses[120]]
    assert (127, 0) in [m.coord(i) for i in first]                          # thread 120 copies row 127 from k = 0
    assert W.memcheck_summary("========= ERROR SUMMARY: 0 errors\n")["errors"] == 0
