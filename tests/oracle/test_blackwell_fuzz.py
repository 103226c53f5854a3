"""symlayout against CuTe C++ on random Blackwell (SM100 UMMA) configurations nobody chose
(``blackwell_fuzz.py``).

``blackwell_truth.jsonl.gz`` holds random SM100 configurations (every modelled UMMA family, 1SM and 2x1SM, legal
and illegal M/N, either major per operand, UMMA smem layout atoms tiled by ``tile_to_mma_shape`` over MMA blocks
and stages, the other major's atom and the 32-byte-atomic swizzle on K-major operands as mutants) with what CuTe
C++ built: each buffer's print, every descriptor of ``make_fragment_A/B``, a digest of the partition's elements
and CuTe's addresses, or CuTe's static_asserts.  The prover, run on each configuration's text, must agree: 0
disagreements.  A live slice (g++ on the CuTe headers) runs with the slow tests.
"""
from __future__ import annotations

import tempfile
import zlib
from pathlib import Path

import pytest

import blackwell_fuzz as bf

ROWS = bf.load_truth(bf.TRUTH) if bf.TRUTH.exists() else []
SLICES = 4


@pytest.mark.parametrize("k", range(SLICES))
def test_random_blackwell_configurations_agree_with_cute(k):
    rows = [r for r in ROWS if zlib.crc32(r["id"].encode()) % SLICES == k]
    assert rows
    bad = bf.disagreements(rows)
    assert not bad, "\n".join(f"{b['id']}: {b['differences']}" for b in bad)


def test_truth_is_not_one_sided():
    """Every family, 1SM and pairs, both majors, every layout-atom kind, stages, and refusals of both kinds
    (an atom's M/N, a descriptor CuTe will not build)."""
    cases = [r["case"] for r in ROWS]
    assert len(ROWS) >= 60 and len({r["id"] for r in ROWS}) == len(ROWS)
    ops = [bf.op_of(c) for c in cases]
    assert {o.family for o in ops} == set(bf.TYPES)
    assert {o.cta_group for o in ops} == {1, 2} and {o.a_major for o in ops} == {"K", "MN"}
    kinds = {c["ops"][x]["kind"] for c in cases for x in "AB"}
    assert kinds == set(bf.K_ATOMS + bf.MN_ATOMS)
    refused = [r for r in ROWS if "static_asserts" in r]
    assert any(bf.umma.cute_rejections(bf.op_of(r["case"])) for r in refused)
    assert any(not bf.umma.cute_rejections(bf.op_of(r["case"])) for r in refused)
    assert sum("cute" in r for r in ROWS) >= 50


def test_a_wrong_model_is_caught():
    """The comparison is not blind: a digest or a descriptor that differs from CuTe's is a disagreement."""
    row = next(r for r in ROWS if "cute" in r)
    bad = {**row, "cute": {op: dict(v) for op, v in row["cute"].items()}}
    bad["cute"]["A"]["digest"] = hex(int(bad["cute"]["A"]["digest"], 16) ^ 1)
    bad["cute"]["B"]["desc"] = " ".join(hex(int(v, 16) + 1)[2:] for v in bad["cute"]["B"]["desc"].split())
    diff = bf.disagreements([bad])[0]["differences"]
    assert any("digest" in d for d in diff) and any("descriptors differ" in d for d in diff)


@pytest.mark.slow
def test_live_random_cases_agree_with_cute():
    """A fresh draw compiled now (one program for the compiling cases): 0 disagreements."""
    from cute_cpp import cute_site
    if cute_site() is None:
        pytest.skip("CuTe headers not found (SYMLAYOUT_CUTE_SITE)")
    from sm100_cpp import Sm100Compiler
    cxx = Sm100Compiler(Path(tempfile.mkdtemp(prefix="symlayout-bwfuzz-")))
    rows = bf.truth(bf.draw(8, 99), cxx)
    assert bf.disagreements(rows) == []
