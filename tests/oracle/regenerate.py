"""Regenerate the CuTe C++ ground truth of the oracle campaign, and the list of known disagreements.

    python tests/oracle/regenerate.py [--jobs 2] [--batch 24] [--family NAME] [--keep DIR]
    python tests/oracle/regenerate.py --known-only        # symlayout vs the stored ground truth only

Writes ``tests/oracle/cases.jsonl`` (one configuration per line with CuTe's verdicts and version; see
``oracle_compare.py``) and ``tests/oracle/known_disagreements.json`` (the cases where symlayout disagrees
today, classified by issue-12 item; the default test marks them ``xfail(strict=True)``).  Needs g++ and
the CuTe headers (``$SYMLAYOUT_CUTE_SITE`` or the installed ``nvidia-cutlass`` wheel).
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cute_oracle  # noqa: E402
import oracle_campaign  # noqa: E402
import oracle_compare  # noqa: E402


def regenerate(args) -> int:
    incs = cute_oracle.include_dirs()
    if incs is None:
        print("CuTe headers or g++ not found: set SYMLAYOUT_CUTE_SITE to a site with nvidia-cutlass and the "
              "nvidia-cuda-{runtime,cccl,nvcc}-cu12 wheels", file=sys.stderr)
        return 2
    version = cute_oracle.cute_version(incs)
    cases = oracle_campaign.campaign()
    old = {}
    if oracle_compare.CASES.exists():
        old = {c["id"]: c for c in oracle_compare.load_cases()}
    todo = [c for c in cases if (not args.family or c["family"] in args.family)
            and (args.all or c["id"] not in old or old[c["id"]]["cute"].get("version") != version
                 or (args.match and re.search(args.match, c["id"]))
                 or (args.rejected and "rejected" in old[c["id"]]["cute"]))]
    print(f"{len(cases)} configurations, {len(todo)} to run through CuTe {version} (jobs {args.jobs}, batch {args.batch})")
    t0 = time.perf_counter()
    got: dict = {}

    def save(res=None):                  # after every batch: an interrupted run keeps what it has
        got.update(res or {})
        write(cases, old, got, version)

    if todo:
        cute_oracle.run_cases(todo, incs, jobs=args.jobs, batch=args.batch, workdir=args.keep, on_batch=save)
    secs = time.perf_counter() - t0
    bad = [k for k, v in got.items() if "error" in v]
    for k in bad:
        print(f"ORACLE ERROR {k}: {got[k]['error']}", file=sys.stderr)
    n = write(cases, old, got, version)
    print(f"wrote {n} cases to {oracle_compare.CASES} ({secs:.0f} s in the oracle)")
    return 1 if bad else 0


def write(cases, old, got, version) -> int:
    """cases.jsonl: the campaign's cases with CuTe's verdicts (new ones from ``got``, else stored)."""
    lines = []
    for c in cases:
        v = got.get(c["id"])
        if v is not None and "error" not in v:
            cute = oracle_compare.cute_record(v, version)
        elif c["id"] in old:
            cute = old[c["id"]]["cute"]
        else:
            continue
        lines.append({"id": c["id"], "family": c["family"], "note": c["note"],
                      "config": {"mma": c["mma"], "operand": c["operand"], "copy": c["copy"]},
                      "toml": cute_oracle.case_toml(c), "cute": cute})
    tmp = oracle_compare.CASES.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for line in lines:
            f.write(json.dumps(line, sort_keys=True) + "\n")
    tmp.replace(oracle_compare.CASES)
    return len(lines)


def known(args) -> int:
    cases = oracle_compare.load_cases()
    out, by_item = {}, collections.Counter()
    t0 = time.perf_counter()
    for c, d in oracle_compare.disagreements(cases):
        items = oracle_compare.classify(c, d)
        out[c["id"]] = {"items": items, "differences": [list(x) for x in d]}
        for i in items:
            by_item[str(i)] += 1
    secs = time.perf_counter() - t0
    doc = {"_doc": "Cases of cases.jsonl where symlayout disagrees with CuTe C++ today, by issue-12 item; "
                   "tests/oracle/test_oracle.py marks them xfail(strict=True). Written by regenerate.py.",
           "by_item": dict(sorted(by_item.items())), "cases": out}
    oracle_compare.KNOWN.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"{len(cases)} cases, {len(out)} disagree ({dict(sorted(by_item.items()))}); symlayout took {secs:.1f} s")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=24)
    ap.add_argument("--family", action="append", help="only this campaign family (repeatable)")
    ap.add_argument("--all", action="store_true", help="re-run every case, not only new ones")
    ap.add_argument("--match", help="also re-run the stored cases whose id matches this regular expression")
    ap.add_argument("--rejected", action="store_true", help="also re-run the stored cases CuTe rejects")
    ap.add_argument("--keep", help="keep the generated C++ programs in this directory")
    ap.add_argument("--known-only", action="store_true", help="only recompute known_disagreements.json")
    a = ap.parse_args(argv)
    rc = 0 if a.known_only else regenerate(a)
    return rc or known(a)


if __name__ == "__main__":
    sys.exit(main())
