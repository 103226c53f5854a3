"""symlayout against CuTe C++ on random Hopper configurations nobody chose (``hopper_fuzz.py``).

``hopper_truth.jsonl.gz`` holds random SM90 configurations (GMMA atoms of every type, SS and RS, warpgroup
layouts, GMMA smem layout atoms tiled with stages, mutants, TMA loads with multicast) with what CuTe C++ built
for them: the wgmma verdicts from CuTe's descriptors and partitions and the PTX ISA's reads, CuTe's
compile-time refusals, and ``make_tma_copy``'s tensor map (or its refusal).  Each test proves one slice of
them and fails on any difference from CuTe that ``hopper_known.json`` does not explain with exactly that
difference, and on an explained one that no longer differs.
"""
from __future__ import annotations

import zlib

import pytest

import hopper_fuzz as hf
from oracle_compare import unexplained

ROWS = hf.load_truth(hf.TRUTH) if hf.TRUTH.exists() else []
KNOWN = hf.load_known()
SLICES = 8


@pytest.mark.parametrize("k", range(SLICES))
def test_random_hopper_configurations_agree_with_cute(k):
    rows = [r for r in ROWS if zlib.crc32(r["id"].encode()) % SLICES == k]
    bad = hf.disagreements(rows)
    new = unexplained(bad, KNOWN)
    assert not new, "\n".join(f"{b['id']}: {b['differences']}" for b in new)
    ids = {r["id"] for r in rows}
    fixed = [cid for cid in KNOWN if cid in ids and cid not in {b["id"] for b in bad}]
    assert not fixed, f"no longer differ from CuTe (remove from hopper_known.json): {fixed}"


def test_truth_exercises_every_verdict():
    """The stored truth is not one-sided: every wgmma property proved and refuted somewhere, operands CuTe
    does not compile, TMA copies encoded, refused at compile time, asserted at run time, and refused by the
    driver's limits."""
    ids = {r["id"] for r in ROWS}
    assert len(ROWS) == 264 and len(ids) == len(ROWS)
    for p in hf.GMMA_PROPS:
        seen = {v[p] for r in ROWS for v in r["truth"].values() if p in v and len(v) > 1}
        assert seen == {"proved", "refuted"}, p
    assert any(not ok for r in ROWS for ok in r["compiles"].values())
    tma = [t for r in ROWS for t in r["tma"].values()]
    assert {t["tma"] for t in tma} == {"proved", "refuted"}       # (as generated; compare recomputes it)
    assert any(not t["compiles"] for t in tma) and any(t.get("aborts") for t in tma)
    assert any(t["compiles"] and not t.get("aborts") and hf.driver_problems(t["encode"]) for t in tma)


def test_known_differences_are_explained_by_their_rule():
    """Each listed difference is a stored case whose kind ``hopper_fuzz.explain`` decides from the stored truth
    (a descriptor past 256 KiB, a TMA box narrower than its swizzle span), with that kind's reason."""
    rows = {r["id"]: r for r in ROWS}
    for cid, k in KNOWN.items():
        assert cid in rows, cid
        assert hf.explain(rows[cid], k["differences"]) == k["kind"] and k["why"] == hf.why(k["kind"]), cid
    assert hf.explain(ROWS[0], [["coverage[A]", "proved", "refuted"]]) is None


def test_driver_limits():
    """Each documented cuTensorMapEncodeTiled limit refuses the encoding that breaks it."""
    ok = {"data_type": 6, "rank": 2, "global_dim": [256, 128], "global_strides": [512], "box_dim": [64, 64],
          "element_strides": [1, 1], "interleave": 0, "swizzle": 3}
    assert hf.driver_problems(ok) == []
    for key, value, problem in (("global_strides", [520], "global_strides"), ("box_dim", [64, 512], "box_dim"),
                                ("box_dim", [3, 64], "inner box bytes"), ("swizzle", 1, "inner box > swizzle span"),
                                ("element_strides", [1, 9], "element_strides"), ("global_dim", [0, 128], "global_dim")):
        assert problem in hf.driver_problems(dict(ok, **{key: value})), (key, value)
    assert hf.tma_truth({"compiles": True, "encode": ok}, 1024, 4096 * 3) == "proved"
    assert hf.tma_truth({"compiles": True, "encode": ok}, 64, 4096) == "refuted"   # the smem base not 128-byte aligned
    assert hf.tma_truth({"compiles": False}, 1024, 4096) == "refuted"
    # boxes of 32 half_t (64 bytes) one after another: every second destination is off the 128-byte grid
    small = dict(ok, box_dim=[16, 2], swizzle=1)
    assert hf.tma_truth({"compiles": True, "encode": small}, 1024, 32) == "proved"
    assert hf.tma_truth({"compiles": True, "encode": small}, 1024, 64) == "refuted"


def test_compare_command_fails_on_an_unexplained_difference(tmp_path, capsys):
    """The CLI's exit status: 0 when every difference is explained, 1 on one that is not (a stored case with
    one verdict turned over)."""
    import gzip
    import json
    row = next(r for r in ROWS if all(r["compiles"].values()) and r["truth"] and r["id"] not in KNOWN)
    truth = tmp_path / "t.jsonl.gz"
    with gzip.open(truth, "wt") as f:
        f.write(json.dumps(row) + "\n")
    empty = tmp_path / "known.json"
    empty.write_text(json.dumps({"cases": {}}))
    assert hf.main(["compare", str(truth), "--known", str(empty)]) == 0
    op = sorted(row["truth"])[0]
    was = row["truth"][op]["coverage"]
    flipped = dict(row, truth=dict(row["truth"], **{op: dict(row["truth"][op], coverage="refuted" if was == "proved"
                                                                          else "proved")}))
    with gzip.open(truth, "wt") as f:
        f.write(json.dumps(flipped) + "\n")
    assert hf.main(["compare", str(truth), "--known", str(empty)]) == 1
    assert f"DISAGREE {row['id']}: coverage[{op}]: CuTe" in capsys.readouterr().out
