"""symlayout against CuTe C++ on whole configurations (issue 12's soundness campaign).

``cases.jsonl`` holds every configuration of ``oracle_campaign.campaign()`` with the verdicts CuTe C++
gave (``regenerate.py``: the real partitions and ``cute::copy`` dispatch, the PTX routes written in C++),
or CuTe's ``static_assert`` when it refuses to build the configuration.  The default tests compare
symlayout's verdicts with that stored ground truth (no compiler needed); the cases where symlayout is
still wrong are listed in ``known_disagreements.json`` with the issue-12 item that covers them and run as
``xfail(strict=True)``, so each flips to a failure (to be removed from the list) when its fix lands.
The ``slow`` test re-derives a sample of the ground truth with g++ and the CuTe headers.
"""
from __future__ import annotations

import os

import pytest

import cute_oracle
import oracle_campaign
import oracle_compare as oc

CASES = oc.load_cases()
KNOWN = oc.load_known()


def _params():
    for c in CASES:
        k = KNOWN.get(c["id"])
        marks = []
        if k:
            items = ", ".join(str(i) for i in k["items"])
            marks = [pytest.mark.xfail(strict=True, reason=f"issue 12 item {items}: {k['differences'][0]}")]
        yield pytest.param(c, id=c["id"], marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_symlayout_agrees_with_cute(case):
    sym = oc.symlayout_verdict(case["toml"], case["id"])
    diffs = oc.differences(case["cute"], sym)
    assert not diffs, "\n".join(f"{p}: CuTe {c}, symlayout {s}" for p, c, s in diffs)


def test_stored_ground_truth_is_the_campaign():
    """Every configuration of the campaign is stored, as the campaign writes it (regenerate after edits)."""
    want = {c["id"]: c for c in oracle_campaign.campaign()}
    have = {c["id"]: c for c in CASES}
    assert sorted(want) == sorted(have)
    for cid, c in want.items():
        assert have[cid]["toml"] == cute_oracle.case_toml(c)
        cute = have[cid]["cute"]
        assert cute["version"] and ("rejected" in cute or set(cute["verdict"]) == set(oc.PROPERTIES))


def test_known_disagreements_are_classified():
    """Each known disagreement names a stored case and an issue-12 item (none unexplained)."""
    ids = {c["id"] for c in CASES}
    for cid, k in KNOWN.items():
        assert cid in ids
        assert k["items"] and all(isinstance(i, int) and 1 <= i <= 16 for i in k["items"]), (cid, k)


def test_campaign_exercises_every_verdict():
    """The ground truth is not one-sided: each property is proved somewhere and refuted somewhere, and
    CuTe rejects some configurations."""
    verdicts = [c["cute"]["verdict"] for c in CASES if "verdict" in c["cute"]]
    for p in oc.PROPERTIES:
        assert {v[p] for v in verdicts} == {"proved", "refuted"}, p
    assert any("rejected" in c["cute"] for c in CASES)
    assert len(CASES) >= 300


@pytest.mark.slow
def test_regenerated_sample_matches_stored(tmp_path):
    """A sample of the campaign through g++ and CuTe again gives the stored ground truth."""
    incs = cute_oracle.include_dirs()
    if incs is None:
        pytest.skip("CuTe headers or g++ not available (set SYMLAYOUT_CUTE_SITE)")
    stored = {c["id"]: c for c in CASES}
    sample = oracle_campaign.sample(oracle_campaign.campaign(), int(os.environ.get("SYMLAYOUT_ORACLE_SAMPLE", "10")))
    got = cute_oracle.run_cases(sample, incs, jobs=2, batch=len(sample), workdir=tmp_path, log=lambda *a: None)
    version = cute_oracle.cute_version(incs)
    for c in sample:
        want, g = stored[c["id"]]["cute"], got[c["id"]]
        if want["version"] != version:
            continue
        if "rejected" in want:
            assert g == {"rejected": want["rejected"]}, c["id"]
        else:
            assert {p: g[p] for p in oc.PROPERTIES} == want["verdict"], c["id"]
            assert g["bank_degree"] == want["bank_degree"], c["id"]
