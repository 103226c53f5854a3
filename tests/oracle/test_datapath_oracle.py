"""Whole-path configurations not in the repository against CuTe C++ (issue 14's acceptance campaign).

``datapath_cases.jsonl`` holds every configuration of ``datapath_oracle.campaign()`` with what CuTe C++ says
(``datapath_oracle.hpp``: the real ``make_tiled_copy`` partitions, ``cute::copy`` / ``copy_if`` of every thread
for every admissible leading dimension, stage and residue, the properties computed from the addresses CuTe
hands the atoms; the ``[copy.X]`` table through ``oracle.hpp``), or CuTe's ``static_assert``.

Default: a small subset (every family) compared with symlayout.  ``slow``: every stored case, and a sample
regenerated with g++ and the CuTe headers.  A *wrong verdict* (proved where CuTe's truth refutes, or the
reverse, or another bank degree, or a configuration CuTe rejects proved) fails; an ``unknown`` or ``error``
(not modelled) is a gap, allowed only where :data:`GAPS` explains it.
"""
from __future__ import annotations

import os

import pytest

import datapath_oracle as dpo

CASES = {c["id"]: c for c in dpo.load_store()}
CAMPAIGN = dpo.campaign()
#: case id -> why symlayout leaves a property undecided there (never a wrong verdict)
GAPS = {
    "stages-082": "stage bytes not a multiple of 128: the stages' own copies are UNKNOWN (not supported)",
    "stages-086": "a swizzled PIPE stride off the swizzle period: CuTe does not compile the stage slice, "
                  "symlayout's input error says so",
    "swizzle-offset-104": "a swizzle offset off the period in a global-memory copy: not modelled (error)",
    "swizzle-offset-105": "a swizzle offset off the period in a global-memory copy: not modelled (error)",
    "swizzle-offset-106": "a swizzle offset off the period in a global-memory copy: not modelled (error)",
    "swizzle-offset-108": "a swizzle offset off the period in a global-memory copy: not modelled (error)",
    "swizzle-offset-110": "a swizzle offset off the period in a global-memory copy: not modelled (error)",
}
#: case id -> why symlayout refutes ``alignment`` where CuTe's oracle proves it (a definition, not a wrong verdict)
CONTIGUITY = {cid: "a swizzle inside the 16-byte vector: every register CuTe hands cp.async is 16-byte aligned (the "
                   "oracle's alignment: addresses only); symlayout's alignment also asks the vector's elements to be "
                   "contiguous in smem, which the swizzle breaks (slot_agreement is refuted by both)"
              for cid in ("recast-118", "recast-119")}


def wrong(diffs, cid=None):
    return [d for d in dpo.wrong(diffs)
            if not (cid in CONTIGUITY and d[0][1] == "alignment" and d[1:] == ("proved", "refuted"))]


def compare(cid):
    c = next(x for x in CAMPAIGN if x["id"] == cid)
    stored = CASES[cid]
    sym = dpo.symlayout_results(stored["toml"], cid)
    return dpo.differences(c, stored["cute"], sym)


def _check(cid):
    diffs = compare(cid)
    bad = wrong(diffs, cid)
    assert not bad, "\n".join(f"{p}: CuTe {c}, symlayout {s}" for p, c, s in bad)
    if len(diffs) > len(dpo.wrong(diffs)):
        assert cid in GAPS, "\n".join(f"{p}: CuTe {c}, symlayout {s} (a gap not listed in GAPS)" for p, c, s in diffs)


DEFAULT = [c["id"] for c in dpo.sample(CAMPAIGN, 14)]


@pytest.mark.parametrize("cid", DEFAULT)
def test_symlayout_agrees_with_cute(cid):
    _check(cid)


@pytest.mark.parametrize("cid", [c["id"] for c in CAMPAIGN if c["family"] == "recast" and c["id"] not in DEFAULT])
def test_cp_async_inside_a_swizzled_vector_agrees_with_cute(cid):
    """A swizzle inside the 16-byte vector: CuTe's recast hands cp.async the swizzled offset rounded down to the
    vector (every byte written once, in bounds, no bank conflict), or CuTe rejects it."""
    _check(cid)


def test_contiguity_differences_are_current():
    for cid in CONTIGUITY:
        assert [d[0][1] for d in dpo.wrong(compare(cid))] == ["alignment"], cid


@pytest.mark.slow
@pytest.mark.parametrize("cid", [c["id"] for c in CAMPAIGN if c["id"] not in DEFAULT])
def test_symlayout_agrees_with_cute_everywhere(cid):
    _check(cid)


def test_stored_ground_truth_is_the_campaign():
    """Every configuration of the campaign is stored as the campaign writes it (regenerate after edits)."""
    assert sorted(CASES) == sorted(c["id"] for c in CAMPAIGN)
    for c in CAMPAIGN:
        assert CASES[c["id"]]["toml"] == dpo.case_toml(c), c["id"]
        assert CASES[c["id"]]["cute"]["version"]


def test_campaign_exercises_every_verdict():
    """The ground truth is not one-sided: every property of the global copies is proved somewhere and
    refuted somewhere, the bank degree exceeds 1 somewhere, stages overlap somewhere, CuTe rejects some."""
    truths = [c["cute"] for c in CASES.values() if "rejected" not in c["cute"] and "error" not in c["cute"]]
    for p in dpo.GLOBAL_PROPS:
        assert {t[p] for t in truths} == {"proved", "refuted"}, p
    assert any(t["bank_degree"] > 1 for t in truths)
    assert {t["stages_exactly_once"] for t in truths} == {"proved", "refuted"}
    assert any("rejected" in c["cute"] for c in CASES.values())
    assert len(CASES) >= 100


def test_gaps_are_gaps():
    """Each listed gap is a stored case where symlayout leaves something undecided (not a stale entry)."""
    for cid in GAPS:
        assert cid in CASES
        assert compare(cid), cid


@pytest.mark.slow
def test_regenerated_sample_matches_stored(tmp_path):
    """A sample of the campaign through g++ and CuTe again gives the stored ground truth."""
    import cute_oracle
    incs = cute_oracle.include_dirs()
    if incs is None:
        pytest.skip("CuTe headers or g++ not available (set SYMLAYOUT_CUTE_SITE)")
    sample = dpo.sample(CAMPAIGN, int(os.environ.get("SYMLAYOUT_ORACLE_SAMPLE", "8")), seed=3)
    got = dpo.run_cases(sample, incs, jobs=2, batch=len(sample), workdir=tmp_path, log=lambda *a: None)
    version = cute_oracle.cute_version(incs)
    for c in sample:
        want = dict(CASES[c["id"]]["cute"])
        if want.pop("version") != version:
            continue
        g = got[c["id"]]
        if "rejected" in want:
            assert "rejected" in g, c["id"]
            continue
        for k in dpo.GLOBAL_PROPS + ("bank_degree", "stages_exactly_once", "smem_bytes"):
            assert g[k] == want[k], (c["id"], k)
        if "copy" in want:
            assert {p: g["copy"][p] for p in cute_oracle.PROPERTIES} == {p: want["copy"][p] for p in cute_oracle.PROPERTIES}
