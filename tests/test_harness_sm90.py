"""The SM90 probe (symlayout.harness.probe_sm90) without a GPU: its experiments are
well formed, the model predicts every one, the wrong models and the wrong
descriptors it runs are distinguishable from the model, and the CUDA source it
generates compiles for sm_90a (when nvcc is installed).  On a GPU, the probe runs."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from symlayout.arch import gmma, tma
from symlayout.harness import have_gpu
from symlayout.harness import e2e_sm90 as e2e
from symlayout.harness import probe_sm90 as probe

CONFIGS = probe.wgmma_configs()


@pytest.fixture(autouse=True)
def _slow_is_opt_in(request):
    """Tests marked ``slow`` run with ``-m slow`` or ``SYMLAYOUT_SLOW=1`` only."""
    if request.node.get_closest_marker("slow") and "slow" not in (request.config.getoption("-m") or "") \
            and not os.environ.get("SYMLAYOUT_SLOW"):
        pytest.skip("slow: run with -m slow or SYMLAYOUT_SLOW=1")


def test_experiments_cover_every_type_mode_and_major():
    seen = {(c.atype, c.desc_b.swizzle, c.major_a if not c.a_regs else "reg", c.major_b) for c in CONFIGS}
    for t in ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8"):
        for m in gmma.SWIZZLE_MODES:
            assert (t, m, "K", "K") in seen
        assert any(s[0] == t and s[2] == "reg" for s in seen)
    for t in ("f16", "bf16"):
        for m in gmma.SWIZZLE_MODES:
            assert (t, m, "MN", "MN") in seen
    assert {c.desc_a.base_offset for c in CONFIGS if c.desc_a} >= {0, 1, 3, 5}
    assert sum(c.name.startswith("neg.") for c in CONFIGS) >= 4


_FAST = {"ss.f16.KK.none", "ss.bf16.KK.32B", "ss.tf32.KK.64B", "ss.e4m3.KK.128B", "ss.s8.KK.none",
         "ss.f16.MNMN.32B", "ss.bf16.MNMN.none", "ss.f16.KMN.64B", "rs.tf32.K.128B", "rs.f16.MN.32B",
         "ss.f16.KK.128B.start+384.base3", "neg.f16.KK.128B.sbo", "neg.tf32.KK.32B.start"}


@pytest.mark.parametrize("cfg", [pytest.param(c, id=c.name, marks=() if c.name in _FAST else pytest.mark.slow)
                                 for c in CONFIGS])
def test_model_predicts_and_controls_differ(cfg):
    pred = probe.predict_wgmma(cfg)
    kk, n = cfg.k, cfg.n
    assert sum(len(v) for v in pred.values()) == gmma.M * kk * n     # every A element feeds N slots once
    for label, kw in probe._wrong_models(cfg):
        try:
            other = probe.predict_wgmma(cfg, **kw)
        except ValueError:
            continue                                                # reads outside the probe's regions
        assert probe.compare_wgmma(pred, other), label
    if cfg.intended_a is not None or cfg.intended_b is not None:
        from dataclasses import replace
        intended = replace(cfg, desc_a=cfg.intended_a or cfg.desc_a, desc_b=cfg.intended_b or cfg.desc_b)
        assert probe.compare_wgmma(probe.predict_wgmma(intended), pred)


def test_base_offset_hypotheses_are_distinguishable():
    cfg = next(c for c in CONFIGS if c.name == "ss.f16.KK.128B.start+384.base3")
    preds = {h: probe.predict_wgmma(cfg, addr=probe._alt_address(h)) for h in ("sub", "add", "xor", "ignored")}
    assert preds["sub"] == probe.predict_wgmma(cfg)
    for h in ("add", "xor", "ignored"):
        assert probe.compare_wgmma(preds["sub"], preds[h]), h


@pytest.mark.parametrize("exp", probe.tma_experiments(), ids=lambda e: e.name)
def test_tma_predictions(exp):
    img = probe.predict_tma(exp)
    assert len(img) * exp.elem == exp.region
    assert exp.region >= exp.dst_off + tma.box_smem_bytes(exp.box_dim, exp.elem, exp.swizzle)
    for label, fn in probe._tma_wrong_landings(exp):
        assert probe.predict_tma(exp, landing=fn) != img, label


def test_tma_labels_of_a_2048x2048_tensor_fit_16_bits():
    """Issue 26 item 12: a 2048x2048 16-bit tensor has 4,194,304 elements; its labels go in two loads,
    one base-65535 digit of the linear index each, every label a 16-bit value other than the poison, and
    the two predicted images together name the element each smem position holds."""
    import numpy as np
    exp = probe.TmaExperiment("u16.2048x2048", "UINT16", (2048, 2048), (4096,), (64, 16), "128B", (1984, 2032))
    assert probe.tma_passes(exp) == 2
    digits = [np.asarray(probe.tma_global_values(exp, q)) for q in range(2)]
    assert all(d.max() < 0xFFFF and (d.astype(np.uint16) == d).all() for d in digits)
    assert ((digits[0] + 0xFFFF * digits[1]) == np.arange(2048 * 2048)).all()
    imgs = [probe.predict_tma(exp, digit=q) for q in range(2)]
    for c, a in tma.box_landing(exp.dst_off, exp.box_dim, 2, exp.swizzle).items():
        g = tma.global_element(exp.origin, c, exp.global_dim)
        assert imgs[0][a // 2] + 0xFFFF * imgs[1][a // 2] == g[0] + 2048 * g[1]


def test_encode_cases_follow_the_driver_rules():
    cases = {c["name"]: c for c in probe.encode_cases()}
    assert cases["legal 128B"]["model_problems"] == [] and cases["box 256"]["model_problems"] == []
    assert cases["box 257"]["model_problems"] and cases["inner 128 bytes, 64B swizzle"]["model_problems"]


def test_source_has_every_kernel():
    src = probe.module_source()
    for c in CONFIGS:
        assert f"void __launch_bounds__(128, 1) {probe.kernel_name(c.kernel_key())}(" in src
    assert "cp.async.bulk.tensor.2d" in src and "cp.async.bulk.tensor.3d" in src


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_source_compiles_for_sm90a(tmp_path):
    cu = tmp_path / "probe_sm90.cu"
    cu.write_text(probe.module_source())
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-diag-suppress", "177,550", "-o",
                        str(tmp_path / "probe.cubin"), str(cu)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("atype,ok", [("f16", True), ("bf16", True), ("tf32", False), ("e4m3", False)])
def test_ptxas_accepts_mn_major_only_for_16_bit(tmp_path, atype, ok):
    """Model-free check of ``supports_mn_major``: ptxas refuses imm-trans for tf32/fp8."""
    k = gmma.instruction_k(atype)
    trans = ", 1, 1, 1, 1" if atype in ("f16", "bf16") else ", 1, 1, 1, 1"
    src = ('extern "C" __global__ void k(float* o, unsigned long long a, unsigned long long b) {\n'
           '  float d0=0,d1=0,d2=0,d3=0;\n'
           f'  asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %6, 0;\\n'
           f'wgmma.mma_async.sync.aligned.m64n8k{k}.f32.{atype}.{atype} {{%0,%1,%2,%3}}, %4, %5, p{trans};\\n}}\\n"'
           ' : "+f"(d0),"+f"(d1),"+f"(d2),"+f"(d3) : "l"(a),"l"(b),"r"(1));\n'
           '  o[threadIdx.x] = d0 + d1 + d2 + d3;\n}\n')
    cu = tmp_path / "t.cu"
    cu.write_text(src)
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "t.cubin"), str(cu)],
                       capture_output=True, text=True, timeout=300)
    assert (r.returncode == 0) == ok == gmma.supports_mn_major(atype), r.stderr[-1500:]


@pytest.mark.gpu
@pytest.mark.skipif(not have_gpu(), reason="needs CuPy and an NVIDIA GPU")
def test_probe_on_gpu():
    res = probe.run_sm90_probe()
    bad = [r["name"] for r in res["results"] if r["status"] != "agree"]
    assert not bad, bad
    assert all(c["status"] == "agree" for c in res["encode"])


# ---------------------------------------------------------------------------
# producer -> wgmma in one kernel at 128-byte bases (symlayout.harness.e2e_sm90)
# ---------------------------------------------------------------------------

def _e2e_product_errors(producer, mode, operand, off):
    span = tma.SWIZZLE_SPAN_BYTES[mode]
    kt = span // 2
    A, B = e2e.tile_values(64, kt, 1), e2e.tile_values(8, kt, 2)
    oa, ob = e2e.offsets(operand, off)
    region = e2e.B_AFTER_A + 2048 + 8 * span
    img = e2e.producer_image(producer, mode, oa, A, region)
    img[ob:ob + 8 * span] = e2e.producer_image(producer, mode, ob, B, region)[ob:ob + 8 * span]
    assert oa + 64 * span <= e2e.B_AFTER_A or ob + 8 * span <= oa        # the tiles never overlap
    return int((e2e.wgmma_model(img, mode, oa, ob, kt // 16) != A @ B.T).sum())


@pytest.mark.parametrize("mode", sorted(e2e.MODES))
def test_e2e_model_tma_and_absolute_stores_agree_with_wgmma_at_every_128_byte_base(mode):
    """The PTX model: TMA and CuTe's swizzle pointer swizzle the absolute address, as wgmma reads it,
    so the product is right at every 128-byte offset; the position-independent (relative) producer is
    right exactly where the offset is a multiple of the swizzle pattern (the GPU run measures both)."""
    pattern = 8 * tma.SWIZZLE_SPAN_BYTES[mode]
    for op in ("A", "B"):
        for off in range(0, 1024, 128):
            assert _e2e_product_errors("tma", mode, op, off) == 0
            assert _e2e_product_errors("st_abs", mode, op, off) == 0
            assert (_e2e_product_errors("st_rel", mode, op, off) == 0) == (off % pattern == 0), (op, off)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_e2e_source_compiles_for_sm90a(tmp_path):
    cu = tmp_path / "e2e.cu"
    cu.write_text(e2e._SOURCE)
    r = subprocess.run(["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-o", str(tmp_path / "e2e.cubin"),
                        str(cu)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.gpu
@pytest.mark.skipif(not have_gpu(), reason="no GPU")
def test_e2e_on_gpu():
    from symlayout.harness.cuda import compute_capability
    if tuple(compute_capability()) < (9, 0):
        pytest.skip("needs sm_90")
    res = e2e.run()
    for r in res["results"]:
        assert r["mbarrier"] == 1 and r["image_vs_producer_model"] == 0 and r["wgmma_vs_ptx_model"] == 0, r
