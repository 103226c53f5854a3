"""``symlayout sweep`` (issue 32) by hand, never in CI: candidates/s for 1..16 workers vs the serial ``prove``.

    python bench/sweep_space.py [--spec bench/sweep_1m.toml] [--n 20000] [--from I] [--workers 1,2,4,8,16]
                                [--defaults 1] [--serial 1000] [--unshared] [--simulate W] [--full]
                                [--no-in-process] [--cli W,..] [--cli-spec SPEC] [--client W,..] [--no-append]

The same ``--n`` candidates -- runs of 512 consecutive ids (a block of bench/sweep_1m.toml, as a sweep hands
them out) at seeded places in the space, the ids ``I..I+n-1`` with ``--from``, or the whole space when ``--n``
covers it -- are

1. swept in this process (no Dask), with the proofs of copies shared between candidates (``--unshared``: also
   without, the "before" of issue 32's sharing, on the same candidates),
2. swept on a Dask ``LocalCluster`` of W processes for each ``--defaults`` W with distributed's own settings
   (the "before" of the cluster's settings: ``symlayout.sweep.cluster.WORKER_CONFIG``) and for each ``--workers``
   W as the sweep starts it, the batches handed out as the sweep does (the cluster's start-up is shown apart: it
   is paid once per sweep); under the table, per run, the workers' CPU (task threads, and the processes' user
   and system time) and the pieces of proofs they proved (memo misses, summed over the workers),
3. the first ``--serial`` of them within the spec's budgets written as configuration files and proved by
   ``symlayout prove DIR -q --jobs 1`` (the serial prove, a subprocess: its start-up included, as a user sees
   it; pruned candidates are not proved by a sweep, so they are left out here),

and each run's rows must be the same (checked).  ``--simulate W``: W workers simulated in this process, for the
ways of handing out batches (pieces proved, CPU, balance).  ``--full``: then the whole spec is swept by the CLI,
as a user runs it (``symlayout sweep SPEC --workers MAX -q``: start-up, cluster, table and all), timed.  Scaling
efficiency from W1 to W2 is ``(rate(W2) / rate(W1)) / (W2 / W1)``; the table ends with the time 10^6 candidates
take at the largest worker count's rate.  The table opens with the machine's CPUs (logical, physical cores).

``--no-in-process`` skips run 1 (a large ``--n``: the Dask runs' rows are compared with each other), ``--n 0``
runs none of 1-3.  ``--cli W,..``: the whole spec (``--cli-spec``, default ``--spec``) swept by the CLI with each
W, a subprocess each (start-up, cluster, proofs and the sorted table), the tables byte-identical, with the
scaling efficiency.  ``--client W,..``: the client's cost -- the spec with every candidate pruned swept by the
CLI's ``main`` in this process, whose CPU (the client's, and a LocalCluster's scheduler's) is shown per
candidate.

The measurement of issue 32 on a 16-core machine (about 6 minutes there, most of it the 10^6 sweep on 2
workers): ``python bench/sweep_space.py --n 200000 --from 0 --workers 2,16 --no-in-process --defaults ''
--serial 500 --cli 2,16 --no-append``.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import filecmp
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from symlayout.sweep import batches_of, load_spec, radices_of  # noqa: E402
from symlayout.sweep import cluster, prover  # noqa: E402
from symlayout.sweep.table import prove_part_relayed, render  # noqa: E402
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
    """(wall seconds, CPU seconds, rows) of a sweep of ``ids`` in this process; the rows as the table's
    (id, line, status), rendered as a sweep renders them."""
    prover._MEMO.clear()
    t, c = time.perf_counter(), time.process_time()
    rows = [r for b in batches_of(ids, 1, radices=radices_of(spec))
            for r in prover.prove_batch(spec.text, spec.path, b, share=share)]
    lines = render(spec, rows)
    secs, cpu = time.perf_counter() - t, time.process_time() - c
    return secs, cpu, [(r["id"], line, r["status"]) for r, line in zip(rows, lines)]


def timed_batch(text, path, ids, seed=None):
    """A worker's task, as a sweep's (``table.prove_part_relayed``): a ``Relayed`` of (the batch as lines of the
    table, the task thread's CPU seconds, the pieces of proofs it proved -- memo misses --, the worker) and the
    pieces.  Defined in ``__main__``, so Dask sends it by value."""
    from distributed import get_worker
    c = time.thread_time()
    part, pieces = prove_part_relayed(text, path, ids, seed)
    return prover.Relayed((part, time.thread_time() - c, len(pieces), get_worker().address), pieces)


def _times(dask_worker=None) -> tuple:
    t = os.times()
    return t.user, t.system


def on_dask(spec, ids, workers: int, defaults: bool = False,
            relay: bool = True) -> tuple[float, float, list, dict]:
    """(start-up seconds, sweep seconds, rows, per-worker measures) on a fresh LocalCluster of ``workers``
    processes: the sweep's (:func:`symlayout.sweep.cluster.local_cluster`), or with ``defaults`` distributed's
    own settings (the "before" of issue 32's fix)."""
    t0 = time.perf_counter()
    with (_default_cluster(workers) if defaults else cluster.local_cluster(workers)) as client:
        batches = batches_of(ids, workers, radices=radices_of(spec))
        cluster.warm_up(client, spec, batches)          # as the sweep does: start-up
        before = client.run(_times)
        t = time.perf_counter()
        relay = cluster.Relay() if relay else None
        done = list(cluster.in_lanes(client, batches, timed_batch, spec.text, spec.path, relay=relay))
        secs = time.perf_counter() - t
        after = client.run(_times)
    rows = sorted(r for part, _, _, _ in done for r in zip(*part))
    return t - t0, secs, rows, {**_per_worker(done, before, after), "relayed": dict(relay.sent) if relay else {}}


@contextlib.contextmanager
def _default_cluster(workers: int):
    """A LocalCluster with distributed's defaults; this process's environment as it was after (the Nanny
    writes its pre-spawn variables into it, which every later subprocess would inherit)."""
    from distributed import Client, LocalCluster
    env = dict(os.environ)
    try:
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
                Client(cl) as client:
            yield client
    finally:
        os.environ.clear()
        os.environ.update(env)


def _per_worker(done, before, after) -> dict:
    """Per worker: candidates, task-thread CPU, process user and system CPU, pieces of proofs (memo misses)."""
    out = {w: {"candidates": 0, "thread": 0.0, "pieces": 0,
               "user": after[w][0] - before[w][0], "system": after[w][1] - before[w][1]} for w in after}
    for part, cpu, pieces, w in done:
        out[w]["candidates"] += len(part.ids)
        out[w]["thread"] += cpu
        out[w]["pieces"] += pieces
    return out


def worker_note(ids, stats: dict) -> str:
    """The workers' CPU per candidate and pieces of proofs, summed over the workers; the pieces relayed."""
    stats = dict(stats)
    relayed = stats.pop("relayed", None)
    thread = sum(s["thread"] for s in stats.values())
    user, system = sum(s["user"] for s in stats.values()), sum(s["system"] for s in stats.values())
    pieces = sum(s["pieces"] for s in stats.values())
    return (f"workers' CPU: task threads {thread:.1f} s ({1e3 * thread / len(ids):.2f} ms per candidate), "
            f"processes {user:.1f} s user + {system:.1f} s system; {pieces} pieces proved"
            + (f" ({', '.join(f'{n} {k}' for k, n in sorted(relayed.items()))} relayed from other workers)"
               if relayed else ""))


def simulate(spec, ids, workers: int) -> str:
    """``workers`` workers simulated in this process, each with its own memo, the next batch always to the
    worker with the least CPU so far (the one free first): runs of the target size from one queue (the sweep
    before blocks), blocks of the space from one queue, blocks in the lanes of :mod:`symlayout.sweep.cluster`
    one a task, runs of them a task, and those with the pieces of proofs relayed between the workers (the sweep
    now: :class:`symlayout.sweep.cluster.Relay`; a task's seed is what the others proved up to its start); per
    scheme the tasks, the pieces of proofs (memo misses), the CPU and the busiest worker's CPU (the sweep's span:
    a task's Dask cost not counted); the rows must be the same."""
    target = max(1, min(256, len(ids) // (8 * workers)))
    blocks = batches_of(ids, workers, radices=radices_of(spec))
    schemes = {f"runs of {target} consecutive ids, one queue (before)": _queue(batches_of(ids, workers, target)),
               "blocks of the space, one queue": _queue(blocks),
               "blocks of the space in lanes, a block a task": _lanes(blocks, workers, 0),
               "blocks of the space in lanes, runs of blocks a task": _lanes(blocks, workers),
               "the same, pieces relayed (now)": _lanes(blocks, workers)}
    table, ref, memo = [], None, prover._MEMO
    for name, handout in schemes.items():
        relay = cluster.Relay() if "relayed" in name else None
        memos, cpu, rows, count, proved = [{} for _ in range(workers)], [0.0] * workers, [], 0, 0
        while (b := handout(w := min(range(workers), key=cpu.__getitem__))) is not None:
            c = time.process_time()
            if relay is None:
                rows += [prover.prove_candidate(spec, i, memos[w]) for i in b]
            else:
                prover._MEMO = memos[w]
                out, new = prover.prove_relayed(spec.text, spec.path, b, relay.seed(w))
                relay.take(w, new)
                rows, proved = rows + out, proved + len(new)
            cpu[w] += time.process_time() - c
            count += 1
        prover._MEMO = memo
        rows.sort(key=lambda r: r["id"])
        assert ref is None or rows == ref, "the rows differ between the batchings"
        ref, pieces, span = rows, [len(m) for m in memos], max(cpu)
        shown = sum(pieces) if relay is None else f"{proved} ({sum(relay.sent.values())} relayed)"
        table.append([name, count, shown, f"{min(pieces)}..{max(pieces)}", f"{sum(cpu):.1f} s",
                      f"{1e3 * sum(cpu) / len(ids):.2f}", f"{span:.2f} s", f"{sum(cpu) / workers / span:.0%}"])
    return (f"{workers} workers simulated in this process ({len(ids)} candidates; in process, one memo: "
            f"{len(prover._MEMO)} pieces):\n\n"
            + common.md_table(["batches", "tasks", "pieces proved", "per worker", "CPU", "ms per candidate",
                               "busiest worker's CPU (span)", "mean / span"], table))


def _queue(batches):
    q = collections.deque(batches)
    return lambda w: q.popleft() if q else None


def _lanes(batches, workers, most=cluster.TASK_MAX):
    lanes = cluster.lanes(batches, workers)
    return lambda w: cluster.next_batch(lanes, w, most)


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
        return cli_sweep(spec_path, workers, str(Path(d, "t.csv")))


def cli_sweep(spec_path: str, workers: int, out: str) -> tuple[float, str]:
    """(wall seconds, the summary line) of ``symlayout sweep SPEC --workers W -q -o OUT`` (a subprocess: its
    start-up, the cluster's, the proofs and the sorted table, as a user runs it) into a fresh ``out``."""
    cmd = [sys.executable, "-m", "symlayout", "sweep", spec_path, "-q", "--fresh", "-o", out]
    if workers > 1:
        cmd += ["--workers", str(workers)]
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"the sweep failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return secs, done.stdout.strip().split(" -> ")[0]


def cli_runs(spec_path: str, workers: list, started: dict) -> str:
    """The whole spec swept by the CLI for each worker count: wall, candidates/s, efficiency vs the smallest
    count, and the same less the cluster's start-up where the Dask runs above measured it for that count
    (``started``: workers -> seconds; one worker runs without a cluster); the tables must be byte-identical
    (checked)."""
    n = len(load_spec(spec_path))
    table, rates, net, first = [], {}, {}, None
    with tempfile.TemporaryDirectory() as d:
        for w in workers:
            out = str(Path(d, f"w{w}.csv"))
            secs, line = cli_sweep(spec_path, w, out)
            rates[w] = n / secs
            assert first is None or filecmp.cmp(first, out, shallow=False), f"{w} workers: another table"
            first = first or out
            eff = efficiency(rates, w, min(rates)) if w > min(rates) else ""
            less, up = "", 0.0 if w == 1 else started.get(w)      # one worker: no cluster
            if up is not None:
                net[w] = n / (secs - up)
                less = f"{net[w]:.0f}" + (f" ({efficiency(net, w, min(net))})" if w > min(net) else "")
            table.append(shown([w, n, common.fmt_s(secs), f"{rates[w]:.0f}", f"{rates[w] / w:.0f}", eff, less,
                                line]))
    name = os.path.relpath(spec_path, common.REPO)
    return (f"`symlayout sweep {name} --workers W -q` (a subprocess: start-up, cluster, proofs and the sorted "
            f"table; the tables byte-identical):\n\n"
            + common.md_table(["workers", "candidates", "wall", "candidates/s", "per worker", "scaling efficiency",
                               "candidates/s less the cluster's start-up above (efficiency)", "summary"], table))


def all_pruned(spec_path: str) -> str:
    """The spec's text with ``max_registers = 1``: every candidate pruned (bench/sweep_1m.toml's need 4 or
    more), so a worker only evaluates the constraints (about 26 us a candidate): what is left is the client's."""
    text = Path(spec_path).read_text()
    if not re.search(r"(?m)^max_registers\s*=", text):
        raise SystemExit(f"{spec_path}: --client needs a spec with max_registers (to prune every candidate)")
    return re.sub(r"(?m)^max_registers\s*=.*$", "max_registers = 1", text)


def client_cost(spec_path: str, workers: list) -> str:
    """``symlayout sweep`` (the CLI's ``main``, in this process) of the spec with every candidate pruned, for
    each worker count: wall, and this process's CPU -- the client, and a LocalCluster's scheduler, which runs in
    the client's process -- per candidate (the workers are other processes)."""
    from symlayout.cli import main as cli_main
    table = []
    with tempfile.TemporaryDirectory() as d:
        spec = Path(d, Path(spec_path).name)
        spec.write_text(all_pruned(spec_path))
        n, ref = len(load_spec(spec)), None
        for w in workers:
            out = str(Path(d, f"w{w}.csv"))
            t, c = time.perf_counter(), time.process_time()
            with contextlib.redirect_stdout(open(os.devnull, "w")):
                rc = cli_main(["sweep", str(spec), "-q", "-o", out, "--workers", str(w)])
            secs, cpu = time.perf_counter() - t, time.process_time() - c
            assert rc == 0, f"{w} workers: exit {rc}"
            assert ref is None or filecmp.cmp(ref, out, shallow=False), f"{w} workers: another table"
            ref = ref or out
            what = "client and scheduler" if w > 1 else "everything (no Dask)"
            table.append(shown([w, n, common.fmt_s(secs), f"{n / secs:.0f}", f"{cpu:.1f} s ({what})",
                                f"{1e6 * cpu / n:.1f}"]))
    return (f"The client's cost: `symlayout sweep` of {os.path.relpath(spec_path, common.REPO)} with "
            f"`max_registers = 1` (every candidate pruned: a worker only evaluates the constraints), the CLI's "
            f"`main` in this process:\n\n"
            + common.md_table(["workers", "candidates", "wall", "candidates/s", "this process's CPU",
                               "its us per candidate"], table))


def cpus() -> str:
    """The machine's CPUs: logical, physical cores (psutil, a dependency of distributed) and lscpu's topology."""
    import psutil
    topo = ""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        keep = ("Thread(s) per core", "Core(s) per socket", "Socket(s)", "Model name")
        topo = "; ".join(" ".join(ln.split()) for ln in out.splitlines() if ln.split(":")[0].strip() in keep)
    return (f"CPUs: {os.cpu_count()} logical, {psutil.cpu_count(logical=False)} physical cores"
            + (f" (lscpu: {topo})" if topo else "") + f"; load average {os.getloadavg()[0]:.1f}")


def shown(cells: list) -> list:
    """``cells``, also printed on stderr at once as a table row (a run cut by a time limit keeps what it did)."""
    print("| " + " | ".join(map(str, cells)) + " |", file=sys.stderr, flush=True)
    return cells


def row(run, workers, ids, rows, secs, note=""):
    proved = sum(status != "pruned" for _, _, status in rows)
    return shown([run, workers, len(ids), proved, common.fmt_s(secs), f"{len(ids) / secs:.1f}",
                  f"{len(ids) / secs / workers:.1f}", note])


def cpu_rate(ids, cpu: float) -> str:
    return f"(CPU {cpu:.1f} s: {len(ids) / cpu:.0f} candidates per CPU second)"


def efficiency(rates: dict, w: int, base: int) -> str:
    return f"{(rates[w] / rates[base]) / (w / base):.0%} vs {base}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default=str(common.REPO / "bench" / "sweep_1m.toml"))
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--from", dest="start", type=int, default=None, metavar="I",
                    help="the ids I..I+n-1 (a contiguous part of the space, as a whole sweep hands it out) instead")
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--serial", type=int, default=1000, metavar="N", help="candidates for the serial prove (0: none)")
    ap.add_argument("--unshared", action="store_true", help="also sweep in process without sharing proofs")
    ap.add_argument("--defaults", default="1", metavar="W,..",
                    help="also these worker counts on a LocalCluster with distributed's defaults ('': none)")
    ap.add_argument("--full", action="store_true", help="then sweep the whole spec with the most workers")
    ap.add_argument("--simulate", type=int, default=0, metavar="W",
                    help="also hand the batches of W workers out in this process, before and after blocks")
    ap.add_argument("--no-in-process", action="store_true",
                    help="skip the in-process sweep (a large --n): the rows are compared between the Dask runs")
    ap.add_argument("--cli", default="", metavar="W,..",
                    help="then sweep the whole --cli-spec by the CLI with each W (byte-identical tables checked)")
    ap.add_argument("--cli-spec", default=None, metavar="SPEC", help="the spec --cli sweeps (default: --spec)")
    ap.add_argument("--client", default="", metavar="W,..",
                    help="then the client's cost: the spec with every candidate pruned, swept with each W")
    ap.add_argument("--repeat", type=int, default=1, metavar="R",
                    help="the --workers runs R times, in turn (2,16,2,16,..); efficiency from the median rates")
    ap.add_argument("--no-relay", action="store_true", help="the pieces of proofs not relayed between workers")
    ap.add_argument("--no-append", action="store_true")
    a = ap.parse_args()
    spec = load_spec(a.spec)
    table, rates, starts, notes, ref = [], {}, {}, [], None
    ids = sample(spec, a.n) if a.start is None else list(range(a.start, min(len(spec), a.start + a.n)))
    if ids and not a.no_in_process:
        secs, cpu, ref = in_process(spec, ids)
        notes.append(f"in process: {cpu:.1f} s CPU ({1e3 * cpu / len(ids):.2f} ms per candidate); "
                     f"{len(prover._MEMO)} pieces proved")
        table.append(row("sweep, in process (no Dask), proofs shared", 1, ids, ref, secs, cpu_rate(ids, cpu)))
    if ids and a.unshared:
        secs, cpu, rows = in_process(spec, ids, share=False)
        assert ref is None or rows == ref, "the rows without sharing differ from the rows with sharing"
        table.append(row("sweep, in process (no Dask), every candidate on its own (before)", 1, ids, rows, secs,
                         cpu_rate(ids, cpu)))
    for w in [int(x) for x in a.defaults.split(",") if x] if ids else []:
        start, secs, rows, stats = on_dask(spec, ids, w, defaults=True)
        assert ref is None or rows == ref, f"{w} workers (distributed's defaults): the rows differ"
        ref = ref or rows
        table.append(row("sweep, Dask LocalCluster, distributed's defaults (before)", w, ids, rows, secs,
                         f"(start-up {start:.1f} s)"))
        notes.append(f"{w} worker(s), distributed's defaults: {worker_note(ids, stats)}")
    runs = collections.defaultdict(list)
    for rep in range(a.repeat):
        this = {}
        for w in [int(x) for x in a.workers.split(",") if x] if ids else []:
            start, secs, rows, stats = on_dask(spec, ids, w, relay=not a.no_relay)
            assert ref is None or rows == ref, f"{w} workers: the rows differ from the first run's"
            ref = ref or rows
            this[w] = len(ids) / secs
            runs[w].append(this[w])
            rates[w] = statistics.median(runs[w])
            starts[w] = max(start, starts.get(w, 0.0))
            eff = "; ".join(efficiency(this, w, b) for b in sorted({min(this), 2} & set(this)) if b < w)
            run = "sweep, Dask LocalCluster" + (" (pieces not relayed)" if a.no_relay else "") \
                + (f", run {rep + 1}" if a.repeat > 1 else "")
            table.append(row(run, w, ids, rows, secs, eff + f" (start-up {start:.1f} s)"))
            notes.append(f"{w} worker(s){f', run {rep + 1}' if a.repeat > 1 else ''}: {worker_note(ids, stats)}")
    if a.repeat > 1 and rates:
        ws = sorted(rates)
        notes.append(f"median of {a.repeat} runs: " + ", ".join(f"{w} workers {rates[w]:.0f}/s" for w in ws) + "; "
                     + "; ".join(f"{w} workers {efficiency(rates, w, b)}" for w in ws
                                 for b in sorted({ws[0], 2} & set(ws)) if b < w))
    within = [i for i, _, status in ref or [] if status != "pruned"][:a.serial]
    if within:
        secs = serial_prove(spec, within)
        table.append(["`symlayout prove DIR --jobs 1` (the first candidates within budget, as files)", 1,
                      len(within), len(within), common.fmt_s(secs), f"{len(within) / secs:.1f}",
                      f"{len(within) / secs:.1f}", ""])
    md = cpus()
    if table:
        md += "\n\n" + common.md_table(["run", "workers", "candidates", "proved (not pruned)", "wall",
                                         "candidates/s", "per worker", "scaling efficiency / note"], table)
        md += "\n\n" + "\n".join(f"* {n}" for n in notes)
    top = max(rates) if rates else None
    if top:
        est = 1e6 / rates[top] + max(starts.values())
        md += (f"\n\n10^6 candidates at the {top}-worker rate: {est:.0f} s ({est / 60:.1f} min, start-up included)"
               f" for this spec's mix of pruned and proved candidates ({sum(s != 'pruned' for _, _, s in ref)}"
               f" of {len(ids)} proved here).\n")
    if a.simulate:
        md += "\n" + simulate(spec, ids, a.simulate) + "\n"
    if a.cli:
        same = a.cli_spec is None or Path(a.cli_spec).resolve() == Path(a.spec).resolve()
        md += "\n\n" + cli_runs(a.cli_spec or a.spec, [int(x) for x in a.cli.split(",")], starts if same else {}) + "\n"
    if a.client:
        md += "\n\n" + client_cost(a.spec, [int(x) for x in a.client.split(",")]) + "\n"
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
