"""``symlayout sweep`` (issue 32) by hand, never in CI: candidates/s for N workers vs the serial ``prove``.

    python bench/sweep_space.py [--spec examples/sweep/sm80_gemm.toml] [--n 400] [--workers 1,2] [--cute N] [--no-append]

The same ``--n`` candidates (a seeded sample of the spec's candidates within its constraints) are

1. swept in this process (``workers=1``: no Dask),
2. swept on a Dask ``LocalCluster`` of W processes for each ``--workers`` W (cluster start-up not counted:
   it is paid once per sweep; candidates/s of the proving itself),
3. written as configuration files and proved by ``symlayout prove DIR -q --jobs 1`` (the serial prove, a
   subprocess: its start-up is included, as a user sees it),

and each run's table must be the same (checked).  ``--cute N``: N of those candidates (half legal, half not,
seeded) compiled with g++ against the CuTe C++ headers (``tests/cute_cpp.py``, ``SYMLAYOUT_CUTE_SITE``), each of
operands A and B: CuTe compiles it exactly when symlayout does not report it as rejected at compile time (only
the compile-time part of legality; the routes are checked by the conformance tests).  Scaling efficiency W1 -> W2 is
``(rate(W2) / rate(W1)) / (W2 / W1)``.  The 16-worker run and the 10^6-candidate space need a 16-core machine:
``python bench/sweep_space.py --n 20000 --workers 1,2,16``.
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from symlayout.sweep import batches_of, load_spec  # noqa: E402
from symlayout.sweep.prover import prove_batch  # noqa: E402
from symlayout.sweep.toml import to_toml  # noqa: E402


def sample(spec, n: int, seed: int = 32) -> list:
    """``n`` candidate ids within the spec's constraints (the ones a sweep proves), sorted."""
    ids = list(range(len(spec)))
    random.Random(seed).shuffle(ids)
    return sorted([i for i in ids if spec.over_budget(spec.scope(i))[0] is None][:n])


def in_process(spec, ids) -> tuple[float, list]:
    t = time.perf_counter()
    rows = [r for b in batches_of(ids, 1) for r in prove_batch(spec.text, spec.path, b)]
    return time.perf_counter() - t, rows


def on_dask(spec, ids, workers: int) -> tuple[float, list]:
    from distributed import Client, LocalCluster, as_completed
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            Client(cl) as client:
        client.run(lambda: __import__("symlayout.sweep.prover"))        # warm the workers' imports
        t = time.perf_counter()
        futs = [client.submit(prove_batch, spec.text, spec.path, b, pure=False) for b in batches_of(ids, workers)]
        rows = [r for f in as_completed(futs) for r in f.result()]
        return time.perf_counter() - t, sorted(rows, key=lambda r: r["id"])


def serial_prove(spec, ids) -> float:
    with tempfile.TemporaryDirectory() as d:
        for i in ids:
            Path(d, f"c{i:07d}.toml").write_text(to_toml(spec.config(i)))
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "symlayout", "prove", d, "-q", "--jobs", "1"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t


def cute_check(spec, ids, rows, n: int) -> list:
    """[agreements, disagreements (id, operand, symlayout, CuTe)] of CuTe's compile-time verdicts on a sample."""
    sys.path.insert(0, str(common.REPO / "tests"))
    from cute_cpp import Compiler
    from symlayout.sweep.prover import load_candidate, prove_config     # the prover, as the sweep imports it
    status = {r["id"]: r["status"] for r in rows}
    compile_time = {r["id"] for r in rows if "CuTe does not compile" in r["reason"]}
    rng = random.Random(7)
    legal = [i for i in ids if status[i] == "legal"]
    rejected = sorted(compile_time & set(ids))                 # half the rejects: ones CuTe should refuse
    other = [i for i in ids if status[i] != "legal" and i not in compile_time]
    k = min((n - n // 2) // 2, len(rejected))
    pick = sorted(rng.sample(legal, min(n // 2, len(legal))) + rng.sample(rejected, k)
                  + rng.sample(other, min(n - n // 2 - k, len(other))))
    jobs = []
    for i in pick:
        cfg = load_candidate(spec, i)
        rejected = prove_config(cfg).rejected
        m = cfg.mma
        perm = tuple(m.permutation) if m.permutation else None
        for op, c in sorted(cfg.copies.items()):
            jobs.append((i, op, op in rejected, (m.atom, m.raw_layout, perm, op, c.atom, c.type, c.raw_smem)))
    with tempfile.TemporaryDirectory() as d:
        gxx = Compiler(Path(d))
        asserts = gxx.map(lambda j: gxx.static_asserts(j[3]), jobs)
    agree = [j for j, a in zip(jobs, asserts) if bool(a) == j[2]]
    return [len(pick), len(agree), [(j[0], j[1], j[2], a[:1]) for j, a in zip(jobs, asserts) if bool(a) != j[2]]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default=str(common.REPO / "examples/sweep/sm80_gemm.toml"))
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--cute", type=int, default=0, metavar="N")
    ap.add_argument("--no-append", action="store_true")
    a = ap.parse_args()
    spec = load_spec(a.spec)
    ids = sample(spec, a.n)
    secs, ref = in_process(spec, ids)
    table = [["sweep, in process (no Dask)", 1, len(ids), common.fmt_s(secs), f"{len(ids) / secs:.1f}", ""]]
    rates = {}
    for w in map(int, a.workers.split(",")):
        secs, rows = on_dask(spec, ids, w)
        assert rows == ref, f"{w} workers: the table differs from the in-process sweep"
        rates[w] = len(ids) / secs
        base = min(rates)
        eff = f"{(rates[w] / rates[base]) / (w / base):.0%} vs {base}" if w != base else ""
        table.append(["sweep, Dask LocalCluster", w, len(ids), common.fmt_s(secs), f"{rates[w]:.1f}", eff])
    secs = serial_prove(spec, ids)
    table.append(["`symlayout prove DIR --jobs 1` (same candidates as files)", 1, len(ids), common.fmt_s(secs),
                  f"{len(ids) / secs:.1f}", ""])
    md = common.md_table(["run", "workers", "candidates", "wall", "candidates/s", "scaling efficiency"], table)
    if a.cute:
        n, agree, bad = cute_check(spec, ids, ref, a.cute)
        md += (f"\nCuTe C++ (g++, compile-time verdicts of operands A and B): {n} candidates, {agree} operands agree, "
               f"{len(bad)} disagree{': ' + repr(bad) if bad else ''}\n")
    print(md)
    if not a.no_append:
        common.append_results(f"bench/sweep_space.py — symlayout sweep (issue 32), {Path(a.spec).name}", md)


if __name__ == "__main__":
    main()
