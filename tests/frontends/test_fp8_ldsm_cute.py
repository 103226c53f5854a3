"""The bank conflicts symlayout reports for CUTLASS's CuTe DSL Ampere fp8 GEMM (``LdMatrix8x16x8bOp(False, 4)``
read as ``SM75_U32x4_LDSM_N`` on the kernel's ``S<2,4,4>`` smem tile) are CuTe's own: the addresses every
thread's ldmatrix row starts at, printed by CuTe C++ (docs/hardware/fp8-ldsm-banks.cpp, host-only g++), give
2 wavefronts in every phase of every instruction, as the prover says (lanes 0 and 2 at bytes 0 and 128); the
same tile under ``Sw<2,4,3>`` is conflict-free in both.  Skipped without the CuTe headers and g++."""
from __future__ import annotations

import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from cute_cpp import cute_site
from symlayout.config import load_config, loads_config
from symlayout.prove.engine import prove_config

HW = Path(__file__).resolve().parents[2] / "docs" / "hardware"
PROGRAM, CONFIG = HW / "fp8-ldsm-banks.cpp", HW / "fp8-ldsm-sm89.toml"


@pytest.fixture(scope="module")
def cute_addresses(tmp_path_factory):
    """``{shift S: {(warp, m, k): [byte address of lane 0..31]}}`` from CuTe C++."""
    inc = cute_site()
    if inc is None:
        pytest.skip("CuTe headers or g++ not found (SYMLAYOUT_CUTE_SITE)")
    exe = tmp_path_factory.mktemp("fp8_ldsm") / "banks"
    subprocess.run(["g++", "-std=c++17", *[f"-I{d}" for d in inc], str(PROGRAM), "-o", str(exe)], check=True,
                   capture_output=True)
    out = defaultdict(lambda: defaultdict(lambda: [None] * 32))
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines():
        s, t, m, k, byte = map(int, line.split())
        out[s][(t // 32, m, k)][t % 32] = byte
    return out


def phase_wavefronts(rows: list) -> int:
    """Wavefronts of one ldmatrix phase: 8 lanes' 16-byte rows; a bank serves one 4-byte word per wavefront."""
    words = defaultdict(set)
    for a in rows:
        for w in range(a // 4, a // 4 + 4):
            words[w % 32].add(w)
    return max(len(s) for s in words.values())


def per_phase(addresses: dict) -> dict:
    return {(key, p): phase_wavefronts(lanes[8 * p:8 * p + 8]) for key, lanes in addresses.items() for p in range(4)}


def test_the_kernels_swizzle_conflicts_2_way_in_cute_as_symlayout_says(cute_addresses):
    waves = per_phase(cute_addresses[4])
    assert len(waves) == 4 * 8 * 4 and set(waves.values()) == {2}     # 4 warps x 8 instructions x 4 phases
    lanes = cute_addresses[4][(0, 0, 0)]
    assert (lanes[0], lanes[2]) == (0, 128)
    rep = prove_config(load_config(str(CONFIG)), properties=["bank_conflicts"])
    for r in rep.results:
        assert r.status == "refuted" and r.expected == "refuted"
        assert "2-way bank conflict: warp 0 instruction 0 phase 0" in r.counterexample.message
        assert "lanes [0, 2] hit bank 0 at byte addresses [0, 128]" in r.counterexample.message


def test_shift_3_is_conflict_free_in_cute_and_in_symlayout(cute_addresses):
    assert set(per_phase(cute_addresses[3]).values()) == {1}
    text = CONFIG.read_text().replace("Sw<2,4,4>", "Sw<2,4,3>").replace(
        'refuted = ["bank_conflicts[A]", "bank_conflicts[B]"]', "")
    rep = prove_config(loads_config(text, path="<S<2,4,3>>"), properties=["bank_conflicts"])
    assert [r.status for r in rep.results] == ["proved", "proved"]
