"""symlayout against CuTe C++ on random configurations nobody chose (``fuzz.py``).

``fuzz_truth.jsonl.gz`` holds 4,881 random configurations (seeds 1-4 of ``fuzz.random_cases``) with the
verdicts CuTe 4.2.0 gave through the oracle (``fuzz.py truth``, seeds 1-3 on the GPU host's 16 cores, seed 4
here); more than
half are configurations CuTe refuses to compile, where symlayout must refute something.  Each test proves
one slice of them and fails on any difference from CuTe that ``fuzz_known.json`` does not explain with
exactly that difference, and on an explained one that no longer differs (so the list only shrinks).
"""
from __future__ import annotations

import zlib

import pytest

import fuzz
from oracle_compare import unexplained

ROWS = fuzz.load_truth(fuzz.TRUTH)
KNOWN = fuzz.load_known()
SLICES = 16


@pytest.mark.parametrize("k", range(SLICES))
def test_random_configurations_agree_with_cute(k):
    rows = [c for c in ROWS if zlib.crc32(c["id"].encode()) % SLICES == k]   # (the file is in batch order)
    bad, counts = fuzz.disagreements(rows)
    new = unexplained(bad, KNOWN)
    assert not new, "\n".join(f"{b['id']}: {b['differences']}" for b in new)
    ids = {c["id"] for c in rows}
    still = {b["id"] for b in bad}
    fixed = [cid for cid in KNOWN if cid in ids and cid not in still]
    assert not fixed, f"no longer differ from CuTe (remove from fuzz_known.json): {fixed}"
    assert counts["built"] > 50 and counts["rejected"] > 50 and not counts["oracle error"]


def test_known_differences_name_stored_cases_with_a_reason():
    ids = {c["id"] for c in ROWS}
    assert len(ROWS) == 4881 and len(ids) == len(ROWS)
    for cid, k in KNOWN.items():
        assert cid in ids and k["kind"] in ("converting copy", "contiguity"), cid
        assert k["differences"] and len(k["why"]) > 40, cid


def test_compare_command_fails_on_an_unexplained_difference(tmp_path, capsys):
    """The CLI's exit status: 0 with the stored explanations, 1 when one is withdrawn."""
    import gzip
    import json
    cid = next(cid for cid, k in KNOWN.items() if k["kind"] == "contiguity")
    row = next(c for c in ROWS if c["id"] == cid)
    truth = tmp_path / "t.jsonl.gz"
    with gzip.open(truth, "wt") as f:
        f.write(json.dumps(row) + "\n")
    assert fuzz.main(["compare", str(truth)]) == 0
    empty = tmp_path / "known.json"
    empty.write_text(json.dumps({"cases": {}}))
    assert fuzz.main(["compare", str(truth), "--known", str(empty)]) == 1
    assert f"DISAGREE {cid}: alignment: CuTe proved / symlayout refuted" in capsys.readouterr().out


def test_truth_keeps_distinct_configurations_under_one_id(tmp_path):
    """Campaign ids name the MMA atom by its shape only: a second configuration under an id is kept as id#2,
    a repeated one is dropped."""
    import json
    a, b = ROWS[0], ROWS[1]
    f = tmp_path / "t.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in (a, a, dict(b, id=a["id"]))))
    got = fuzz.load_truth(f)
    assert [c["id"] for c in got] == [a["id"], a["id"] + "#2"] and got[1]["toml"] == b["toml"]
