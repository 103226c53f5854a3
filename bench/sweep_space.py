"""``symlayout sweep`` (issue 32) by hand, never in CI: candidates/s for 1..16 workers vs the serial ``prove``.

    python bench/sweep_space.py [--spec bench/sweep_1m.toml] [--n 20000] [--workers 1,2,4,8,16] [--serial 1000]
                                [--unshared] [--full] [--no-append]

The same ``--n`` candidates -- runs of 512 consecutive ids (one batch's worth, as a sweep hands them out) at
seeded places in the space, or the whole space when ``--n`` covers it -- are

1. swept in this process (no Dask), with the proofs of copies shared between candidates (``--unshared``: also
   without, the "before" of issue 32's sharing, on the same candidates),
2. swept on a Dask ``LocalCluster`` of W processes for each ``--workers`` W (the cluster's start-up is shown
   apart: it is paid once per sweep),
3. the first ``--serial`` of them within the spec's budgets written as configuration files and proved by
   ``symlayout prove DIR -q --jobs 1`` (the serial prove, a subprocess: its start-up included, as a user sees
   it; pruned candidates are not proved by a sweep, so they are left out here),

and each run's rows must be the same (checked).  ``--full``: then the whole spec is swept by the CLI, as a user
runs it (``symlayout sweep SPEC --workers MAX -q``: start-up, cluster, table and all), timed.  Scaling efficiency
from W1 to W2 is ``(rate(W2) / rate(W1)) / (W2 / W1)``; the table ends with the time 10^6 candidates take at the
largest worker count's rate.

The measurement of issue 32 on a 16-core machine (estimated 6-8 minutes there, most of it the 10^6 sweep):
``python bench/sweep_space.py --n 20000 --workers 1,2,4,8,16 --full``.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from symlayout.sweep import batches_of, load_spec  # noqa: E402
from symlayout.sweep import prover  # noqa: E402
from symlayout.sweep.toml import to_toml  # noqa: E402

BLOCK = 512


def sample(spec, n: int, seed: int = 32) -> list:
    """``n`` candidate ids: runs of :data:`BLOCK` consecutive ids at seeded offsets, sorted (all if n covers
    the space)."""
    if n >= len(spec):
        return list(range(len(spec)))
    starts = list(range(0, len(spec) - BLOCK + 1, BLOCK))
    random.Random(seed).shuffle(starts)
    return sorted(i for s in starts[:math.ceil(n / BLOCK)] for i in range(s, s + BLOCK))[:n]


def in_process(spec, ids, share: bool = True) -> tuple[float, float, list]:
    """(wall seconds, CPU seconds, rows) of a sweep of ``ids`` in this process."""
    prover._MEMO.clear()
    t, c = time.perf_counter(), time.process_time()
    rows = [r for b in batches_of(ids, 1) for r in prover.prove_batch(spec.text, spec.path, b, share=share)]
    return time.perf_counter() - t, time.process_time() - c, rows


def on_dask(spec, ids, workers: int) -> tuple[float, float, list]:
    """(start-up seconds, sweep seconds, rows) on a fresh LocalCluster of ``workers`` processes."""
    from distributed import as_completed
    from symlayout.sweep.cluster import local_cluster      # (the sweep's own: without Dask's malloc trim threshold)
    t0 = time.perf_counter()
    with local_cluster(workers) as client:
        client.run(lambda: __import__("symlayout.sweep.prover"))        # the workers' imports: start-up
        t = time.perf_counter()
        futs = [client.submit(prover.prove_batch, spec.text, spec.path, b, pure=False)
                for b in batches_of(ids, workers)]
        rows = [r for f in as_completed(futs) for r in f.result()]
        return t - t0, time.perf_counter() - t, sorted(rows, key=lambda r: r["id"])


def serial_prove(spec, ids) -> float:
    with tempfile.TemporaryDirectory() as d:
        for i in ids:
            Path(d, f"c{i:07d}.toml").write_text(to_toml(spec.config(i)))
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "symlayout", "prove", d, "-q", "--jobs", "1"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t


def full_sweep(spec_path: str, workers: int) -> tuple[float, str]:
    """(wall seconds, the summary line) of ``symlayout sweep SPEC --workers W -q`` into a fresh table."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, "-m", "symlayout", "sweep", spec_path, "-q", "-o", str(Path(d, "t.csv"))]
        if workers > 1:
            cmd += ["--workers", str(workers)]
        t = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True)
        secs = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"the full sweep failed (exit {out.returncode}): {out.stderr.strip()[-500:]}")
    return secs, out.stdout.strip().split(" -> ")[0]


def row(run, workers, ids, rows, secs, note=""):
    proved = sum(r["status"] not in ("pruned",) for r in rows)
    return [run, workers, len(ids), proved, common.fmt_s(secs), f"{len(ids) / secs:.1f}",
            f"{len(ids) / secs / workers:.1f}", note]


def cpu_rate(ids, cpu: float) -> str:
    return f"(CPU {cpu:.1f} s: {len(ids) / cpu:.0f} candidates per CPU second)"


def efficiency(rates: dict, w: int, base: int) -> str:
    return f"{(rates[w] / rates[base]) / (w / base):.0%} vs {base}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default=str(common.REPO / "bench" / "sweep_1m.toml"))
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--serial", type=int, default=1000, metavar="N", help="candidates for the serial prove (0: none)")
    ap.add_argument("--unshared", action="store_true", help="also sweep in process without sharing proofs")
    ap.add_argument("--full", action="store_true", help="then sweep the whole spec with the most workers")
    ap.add_argument("--no-append", action="store_true")
    a = ap.parse_args()
    spec = load_spec(a.spec)
    ids = sample(spec, a.n)
    secs, cpu, ref = in_process(spec, ids)
    table = [row("sweep, in process (no Dask), proofs shared", 1, ids, ref, secs, cpu_rate(ids, cpu))]
    if a.unshared:
        secs, cpu, rows = in_process(spec, ids, share=False)
        assert rows == ref, "the rows without sharing differ from the rows with sharing"
        table.append(row("sweep, in process (no Dask), every candidate on its own (before)", 1, ids, rows, secs,
                         cpu_rate(ids, cpu)))
    rates, starts = {}, []
    for w in map(int, a.workers.split(",")):
        start, secs, rows = on_dask(spec, ids, w)
        assert rows == ref, f"{w} workers: the rows differ from the in-process sweep"
        rates[w] = len(ids) / secs
        starts.append(start)
        eff = "; ".join(efficiency(rates, w, b) for b in sorted({min(rates), 2} & set(rates)) if b < w)
        table.append(row("sweep, Dask LocalCluster", w, ids, rows, secs, eff + f" (start-up {start:.1f} s)"))
    within = [r["id"] for r in ref if r["status"] != "pruned"][:a.serial]
    if within:
        secs = serial_prove(spec, within)
        table.append(["`symlayout prove DIR --jobs 1` (the first candidates within budget, as files)", 1,
                      len(within), len(within), common.fmt_s(secs), f"{len(within) / secs:.1f}",
                      f"{len(within) / secs:.1f}", ""])
    md = common.md_table(["run", "workers", "candidates", "proved (not pruned)", "wall", "candidates/s",
                          "per worker", "scaling efficiency / note"], table)
    top = max(rates) if rates else None
    if top:
        est = 1e6 / rates[top] + max(starts)
        md += (f"\n\n10^6 candidates at the {top}-worker rate: {est:.0f} s ({est / 60:.1f} min, start-up included)"
               f" for this spec's mix of pruned and proved candidates ({sum(r['status'] != 'pruned' for r in ref)}"
               f" of {len(ids)} proved here).\n")
    if a.full:
        w = top or 1
        secs, line = full_sweep(a.spec, w)
        md += (f"\nThe whole spec, `symlayout sweep {os.path.relpath(a.spec, common.REPO)} --workers {w} -q`: "
               f"{line} in {secs:.1f} s ({len(spec) / secs:.0f} candidates/s, start-up, cluster and table "
               f"included).\n")
    print(md)
    if not a.no_append:
        common.append_results(f"bench/sweep_space.py — symlayout sweep (issue 32), {Path(a.spec).name}", md)


if __name__ == "__main__":
    main()
