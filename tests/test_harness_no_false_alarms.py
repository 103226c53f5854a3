"""``symlayout gpu`` must not cry wolf (issue 26): what the H100 run of 2026-12-07
(docs/hardware/issue26-2026-12-07.md) showed the harness reporting as errors or disagreements
where the model was right, each found here without a GPU.

- an sm_100a-only copy atom (SM100_U8x16_LDSM_T) on an sm_90 GPU is *not run*, never a failing run;
- a whole data path that needs more shared memory than a block may have (16 stages of 16 KB: the
  prover's in_bounds[stages] refutation) is not launched (the launch is refused, CUDA_ERROR_INVALID_VALUE);
- a tensor map the driver rejects is the hardware's answer, checked against the model's encode rules;
- a harness error that is not a CUDA fault names where it was raised.
"""
from __future__ import annotations

import pytest

from symlayout.harness import cuda, hopper_run
from symlayout.harness import probe_sm90 as probe
from symlayout.harness import wholepath as W
from symlayout.harness.plan import plan_config
from symlayout.harness.run import run_config
from symlayout.harness.values import HarnessError, NeedsArch

NARROW = "proofs/blackwell/narrow_ldsm/int8_b_u8x16_ldsm_t.toml"
STAGES = "proofs/sm80_datapath/pitfalls/cutlass_f16_stage_family_over_capacity.toml@ldA=32,ldB=32,K=8,stages=16"


def test_an_sm100_only_atom_is_not_run_on_sm90():
    with pytest.raises(NeedsArch, match="needs sm_100a"):
        plan_config(NARROW)
    r = run_config(NARROW)
    assert r["status"] == "skipped" and "needs sm_100a" in r["reason"]


def test_needs_arch_is_a_harness_error():
    assert issubclass(NeedsArch, HarnessError)


def test_a_whole_path_over_the_shared_memory_limit_is_not_launched(monkeypatch):
    monkeypatch.setattr(cuda, "max_dynamic_shared_memory", lambda device=0: 232448)

    def no_compile(*a, **k):
        raise AssertionError("compiled a kernel the GPU would refuse to launch")
    monkeypatch.setattr(cuda, "compile_module", no_compile)
    w = W.run_whole(STAGES)
    assert w["status"] == "skipped" and w["smem_bytes"] > 232448
    assert f"needs {w['smem_bytes']} bytes of shared memory" in w["reason"] and "at most 232448" in w["reason"]


def test_a_whole_path_within_the_limit_goes_on_to_compile(monkeypatch):
    """The failing case of the check above: 8 stages fit, so the run reaches the compiler."""
    monkeypatch.setattr(cuda, "max_dynamic_shared_memory", lambda device=0: 232448)

    class Compiled(Exception):
        pass

    def compile_module(*a, **k):
        raise Compiled
    monkeypatch.setattr(cuda, "compile_module", compile_module)
    w = W.run_whole(STAGES.replace("stages=16", "stages=8"))
    assert w["status"] == "error" and w["error"]["stage"] == "compile" and "Compiled" in w["error"]["message"]
    assert w["error"]["where"].startswith("symlayout/harness/wholepath.py:")


def _exp(box, swizzle):
    return probe.TmaExperiment("t", "BFLOAT16", (512, 384), (1024,), box, swizzle, origin=(0, 0))


def test_a_rejected_tensor_map_agrees_with_the_model_when_a_rule_is_broken():
    r = probe.rejected_tensor_map(_exp((128, 128), "32B"), 1)
    assert r["rejected"] and r["status"] == "agree" and "exceeds the 32B swizzle span" in r["note"]


def test_a_rejected_tensor_map_the_model_accepts_is_a_disagreement():
    r = probe.rejected_tensor_map(_exp((64, 128), "128B"), 1)
    assert r["rejected"] and r["status"] == "disagree" and "the model accepts" in r["note"]


def test_a_rejected_tensor_map_is_a_failed_experiment_not_a_harness_error(monkeypatch):
    exp = _exp((128, 128), "32B")
    monkeypatch.setattr(probe, "_run_tma", lambda *a, **k: probe.rejected_tensor_map(exp, 1))
    x = hopper_run._tma_loads(None, None, None, None, None, exp, {})
    assert x["status"] == "fail" and x["model"] == "agree" and x["rejected"]


def test_error_site_names_symlayout_code_and_the_innermost_frame():
    import numpy as np

    def deep():
        return np.int64(1 << 64)
    try:
        W.round_up(deep(), 16)
    except OverflowError as e:
        site = cuda.error_site(e)
    assert site.startswith("tests/") or "test_harness_no_false_alarms.py" in site
    assert ":" in site and "(deep)" in site


F64 = """name = "f64 A through DefaultCopy (the campaign's datapath kmajor-028 without its global copy)"
[mma]
atom = "SM80_8x8x4_F64F64F64F64_TN"
layout = "(4,1,1)"
[copy.A]
atom = "DefaultCopy"
type = "double"
smem = "Sw<2,2,3> o ((8,8),(16,2)):((16,128),(1,1024))"
align = 128
"""


def test_64_bit_poison_is_read_as_the_int64_the_outputs_are(tmp_path):
    """Every f64 whole path of the campaign stopped with "OverflowError: Python int too large to convert
    to C long" (numpy 2.5 on the GPU machine: the 64-bit poison 2**64 - 1 met an int64 array); and a 64-bit
    slot left unwritten was never counted (``o == 2**64 - 1`` is False for the int64 -1)."""
    import numpy as np
    from symlayout.harness.run import marker_check
    from symlayout.harness.values import as_int64, uint_np
    f = tmp_path / "f64.toml"
    f.write_text(F64)
    p = plan_config(str(f)).operands["A"]
    assert p.bits == 64 and as_int64((1 << 64) - 1) == -1
    nothing = np.full((p.threads, p.frag_size), (1 << 64) - 1, dtype=uint_np(64))
    once = np.ones((p.threads, p.frag_size), dtype=np.int32)
    r = marker_check(p, [nothing], [once])
    assert r["unwritten"] == p.threads * p.frag_size
