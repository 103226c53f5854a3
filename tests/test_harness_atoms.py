"""The atom probe: CPU tests of the decoders with fake observed tables, and a GPU run."""
import subprocess
import sys

import pytest

from symlayout.harness import atoms_probe as P
from symlayout.arch import ptx


# ---------------------------------------------------------------------------
# import hygiene
# ---------------------------------------------------------------------------

def test_harness_imports_without_cupy_or_z3():
    code = ("import sys; import symlayout.harness as h; import symlayout.harness.atoms_probe; "
            "import symlayout.harness.cuda; h.have_gpu(); "
            "print([m for m in ('z3', 'sympy') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_have_gpu_needs_cupy_and_a_device(monkeypatch):
    import types

    from symlayout.harness import have_gpu
    monkeypatch.setitem(sys.modules, "cupy", None)                     # CuPy not importable
    assert have_gpu() is False

    def fake(count):
        def get():
            if isinstance(count, Exception):
                raise count
            return count
        return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=get)))
    for count, want in ((0, False), (RuntimeError("no driver"), False), (2, True)):
        monkeypatch.setitem(sys.modules, "cupy", fake(count))
        assert have_gpu() is want, count


# ---------------------------------------------------------------------------
# ldmatrix / stmatrix decoding
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("num", ptx.LDMATRIX_NUMS)
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_decoder_accepts_the_model(num, trans):
    rec = P.decode_ldmatrix(num, trans, P.simulate_ldmatrix(num, trans))
    assert rec["status"] == "agree" and rec["slots_checked"] == 64 * num


def test_ldmatrix_decoder_flags_transposed_hardware():
    # hardware that transposes when the model says it does not
    rec = P.decode_ldmatrix(1, False, P.simulate_ldmatrix(1, True))
    assert rec["status"] == "disagree"
    bad = {(m["lane"], m["reg"], m["half"]) for m in P.decode_ldmatrix(1, False, P.simulate_ldmatrix(1, True))["mismatches"]}
    assert (0, 0, 0) not in bad           # element (0,0) is on the diagonal: same either way
    assert rec["n_mismatches"] == 64 - 8  # every off-diagonal element differs


def test_ldmatrix_decoder_flags_poison_and_unread_lanes():
    words = P.simulate_ldmatrix(2, False)
    words[3] = P.POISON32                    # lane 1, reg 1 never written
    rec = P.decode_ldmatrix(2, False, words)
    assert rec["n_mismatches"] == 2
    assert all(m["observed"] == "unwritten (poison)" for m in rec["mismatches"])
    # x1 but the hardware read lane 20's address for lane 0's low half
    words = P.simulate_ldmatrix(1, False)
    words[0] = (words[0] & 0xFFFF0000) | (8 * P.ROW_OF_LANE[20])
    rec = P.decode_ldmatrix(1, False, words)
    assert rec["status"] == "disagree"
    assert "must not read" in str(rec["mismatches"][0]["observed"])


@pytest.mark.parametrize("num", ptx.LDMATRIX_NUMS)
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_decoder(num, trans):
    table = P.simulate_stmatrix(num, trans)
    assert P.decode_stmatrix(num, trans, table)["status"] == "agree"
    # untouched rows must stay poison; written rows must be written
    unused_row = next(r for r in range(P.TABLE_ROWS) if r not in P.ROW_OF_LANE[:8 * num])
    bad = list(table)
    bad[8 * unused_row] = 7
    bad[8 * P.ROW_OF_LANE[0] + 1] = P.POISON16
    rec = P.decode_stmatrix(num, trans, bad)
    assert rec["n_mismatches"] == 2


def test_stmatrix_decoder_flags_wrong_transpose():
    rec = P.decode_stmatrix(4, True, P.simulate_stmatrix(4, False))
    assert rec["status"] == "disagree" and rec["n_mismatches"] == 4 * 56


# ---------------------------------------------------------------------------
# cp.async decoding
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("size,cache,zfill", P._CP_PROBES)
def test_cp_async_decoder(size, cache, zfill):
    good = P.simulate_cp_async(size, zfill)
    assert P.decode_cp_async(size, cache, zfill, good)["status"] == "agree"
    bad = list(good)
    bad[5] ^= 1
    assert P.decode_cp_async(size, cache, zfill, bad)["n_mismatches"] == 1


def test_cp_async_zero_fill_expectation():
    out = P.simulate_cp_async(16, True)
    # thread 1 copies 4 bytes then 12 zero bytes
    assert out[4:8] == [0x10000 + P.CP_PERM[1] * 4, 0, 0, 0]


# ---------------------------------------------------------------------------
# mma decoding
# ---------------------------------------------------------------------------

SMALL = [("m16n8k8", "f16", "f32", "row", "col"), ("m16n8k8", "tf32", "f32", "row", "col"),
         ("m8n8k4", "f64", "f64", "row", "col"), ("m8n8k4", "f16", "f32", "row", "col"),
         ("m16n8k32", "e4m3", "f32", "row", "col")]


@pytest.mark.parametrize("v", SMALL, ids=lambda v: P.mma_name(*v))
def test_mma_decoder_accepts_the_model(v):
    A, B, C = P.mma_model(*v)
    exps = P.mma_experiments(len(A), len(B))
    rec = P.decode_mma(*v, exps, P.simulate_mma(exps, A, B, C))
    assert rec["status"] == "agree", rec["mismatches"][:3]
    s = ptx.mma_spec(*v[:3])
    assert rec["triples_observed"] == s.m * s.n * s.k * s.batches


def test_mma_decoder_finds_f16_order_on_tf32_hardware():
    # Fake hardware: m16n8k8 tf32 whose A registers follow the f16 order (a1 = column+1).
    v = ("m16n8k8", "tf32", "f32", "row", "col")
    A, B, C = P.mma_model(*v)
    fake_A = [(0, *(lambda m, k: (m, k))(*_f16_like_tf32_a(slot))) for slot in range(len(A))]
    exps = P.mma_experiments(len(A), len(B))
    rec = P.decode_mma(*v, exps, P.simulate_mma(exps, fake_A, B, C))
    assert rec["status"] == "disagree"
    a_bad = {(m["lane"], m["i"]) for m in rec["mismatches"] if m.get("operand") == "A"}
    assert (0, 0) not in a_bad and (0, 1) in a_bad and (0, 2) in a_bad


def _f16_like_tf32_a(slot):
    lane, i = divmod(slot, 4)
    g, t = lane >> 2, lane % 4
    # the f16 order applied to tf32's 8 columns: rows g / g+8 by i>>1, cols t and t+4 by i&1
    return g + 8 * (i >> 1), t + 4 * (i & 1)


def test_mma_decoder_flags_broken_c_identity_and_garbage():
    v = ("m8n8k4", "f64", "f64", "row", "col")
    A, B, C = P.mma_model(*v)
    exps = P.mma_experiments(len(A), len(B))
    obs = P.simulate_mma(exps, A, B, C)
    obs[0][3] = 99               # C -> D not the identity at one slot
    obs[1] = [None if x else x for x in obs[1]]  # a run whose lit values are not exact
    rec = P.decode_mma(*v, exps, obs)
    assert rec["status"] == "disagree"
    whats = " ".join(str(m.get("what", "")) for m in rec["mismatches"])
    assert "C->D identity" in whats and "values" in whats


def test_mma_sources_name_every_operand():
    for v in P.MMA_PROBES:
        src = P.mma_source(*v)
        s = ptx.mma_spec(*v[:3])
        assert P.mma_ptx(*v) in src
        assert f"%{2 * s.c_regs + s.a_regs + s.b_regs - 1}}}" in src  # last C operand


def test_all_probe_sources_compile_with_nvcc(tmp_path):
    import shutil
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not available")
    failures = []
    for name, src in P.all_probe_sources().items():
        f = tmp_path / (name.replace(">", "_").replace("-", "_") + ".cu")
        f.write_text(src)
        r = subprocess.run([nvcc, "-arch=sm_90", "-std=c++17", "-cubin", "-o", str(f.with_suffix(".cubin")), str(f)],
                           capture_output=True, text=True)
        if r.returncode:
            failures.append((name, r.stderr[:400]))
    assert not failures


def test_negative_controls_all_detect():
    results = []
    for num in ptx.LDMATRIX_NUMS:
        for trans in (False, True):
            results.append(P.decode_ldmatrix(num, trans, P.simulate_ldmatrix(num, trans)))
            results.append(P.decode_stmatrix(num, trans, P.simulate_stmatrix(num, trans)))
    for v in SMALL + [("m16n8k4", "tf32", "f32", "row", "col"), ("m8n8k16", "s8", "s32", "row", "col")]:
        A, B, C = P.mma_model(*v)
        exps = P.mma_experiments(len(A), len(B))
        results.append(P.decode_mma(*v, exps, P.simulate_mma(exps, A, B, C)))
    controls = P.negative_controls({"results": results})
    assert len(controls) == 12 + len(SMALL) + 2 + 1   # + the tf32 f16-order control
    assert all(c["n_mismatches"] > 0 for c in controls), [c for c in controls if not c["n_mismatches"]]
    # a failed probe has no control
    assert P.negative_controls({"results": [dict(results[0], status="disagree")]}) == []


def test_negative_controls_survive_json():
    import json
    v = ("m16n8k8", "tf32", "f32", "row", "col")
    A, B, C = P.mma_model(*v)
    exps = P.mma_experiments(len(A), len(B))
    res = {"results": [P.decode_mma(*v, exps, P.simulate_mma(exps, A, B, C))]}
    again = json.loads(json.dumps(res))
    assert P.negative_controls(again) == P.negative_controls(res)


# ---------------------------------------------------------------------------
# register packing (numpy)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("typ,elems", [("f16", 4), ("f32", 4), ("s32", 4), ("f64", 2)])
def test_pack_unpack_roundtrip(typ, elems):
    np = pytest.importorskip("numpy")
    vals = np.arange(2 * 32 * elems).reshape(2, 32 * elems) % 200
    words = P.pack_registers(vals, typ, elems)
    assert words.dtype == np.uint32
    assert words.shape == (2, 32, elems * (2 if typ == "f64" else 1) // (2 if typ == "f16" else 1))
    back = P.unpack_registers(words, typ, elems)
    assert back.tolist() == vals.tolist()


def test_pack_input_types():
    np = pytest.importorskip("numpy")
    one = np.array([[1] * 32 * 4])
    assert P.pack_registers(one, "f16", 4)[0, 0, 0] == 0x3C003C00
    assert P.pack_registers(one, "bf16", 4)[0, 0, 0] == 0x3F803F80
    assert P.pack_registers(np.array([[1] * 32 * 16]), "e4m3", 16)[0, 0, 0] == 0x38383838
    assert P.pack_registers(np.array([[2] * 32 * 16]), "e5m2", 16)[0, 0, 0] == 0x40404040
    assert P.pack_registers(np.array([[2] * 32 * 16]), "s8", 16)[0, 0, 0] == 0x02020202
    assert P.pack_registers(np.array([[1, 2] * 16 * 4]), "tf32", 4)[0, 0, :2].tolist() == [0x3F800000, 0x40000000]
    # low half first: element i=0 in bits 0..15
    assert P.pack_registers(np.array([[1, 2] * 16 * 4]), "f16", 4)[0, 0, 0] == 0x40003C00


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

def test_report_markdown_lists_differences():
    v = ("m16n8k8", "tf32", "f32", "row", "col")
    A, B, C = P.mma_model(*v)
    fake_A = [(0, *_f16_like_tf32_a(s)) for s in range(len(A))]
    exps = P.mma_experiments(len(A), len(B))
    bad = P.decode_mma(*v, exps, P.simulate_mma(exps, fake_A, B, C))
    good = P.decode_ldmatrix(4, True, P.simulate_ldmatrix(4, True))
    err = P._record("mma.m8n8k4.f16->f32", "mma", "mma.sync...", 0, [], status="error", note="NVRTC failed: x")
    md = P.report_markdown({"meta": {"name": "Fake GPU", "date": "today"}, "results": [good, bad, err],
                            "negative_controls": P.negative_controls({"results": [good]})})
    assert "Fake GPU" in md
    assert "| ldmatrix.x4.trans | `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16` | 256 | agrees |" in md
    assert "**disagrees**" in md and "operand=A" in md
    assert "NVRTC failed" in md
    assert "| ldmatrix.x4.trans | decoded with the non-.trans model | 224 of 256 |" in md
    assert P.summarize({"results": [good, bad, err]}) == {"agree": 1, "disagree": 1, "error": 1}


# ---------------------------------------------------------------------------
# on the GPU
# ---------------------------------------------------------------------------

@pytest.mark.gpu
def test_atom_probe_on_gpu():
    from symlayout.harness import have_gpu
    try:
        import cupy  # noqa: F401
    except Exception:
        pytest.skip("CuPy not installed")
    if not have_gpu():
        pytest.skip("no CUDA device")
    from symlayout.harness import cuda
    if cuda.compute_capability() < (9, 0):
        pytest.skip("stmatrix needs sm_90")
    res = P.run_atom_probe()
    bad = [(r["atom"], r["status"], r["mismatches"][:2], r.get("note", "")[:200])
           for r in res["results"] if r["status"] != "agree"]
    assert not bad
    assert len(res["results"]) == len(P.all_probe_sources())
    assert all(c["n_mismatches"] > 0 for c in res["negative_controls"])
