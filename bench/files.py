"""Issue 18, end to end: ``symlayout prove`` of files and directories, this checkout side by side with a
baseline checkout, interleaved in one run (by hand, never CI):

    python bench/files.py --baseline DIR [--repeat 3] [--no-append]
    python bench/files.py --balance [--jobs 2]      (how the workers share proofs/: CPU per worker, nothing appended)

``DIR`` is another checkout (``git archive main | tar -x -C DIR``).  Every measurement runs in a fresh
interpreter with ``PYTHONPATH`` set to the checkout (bytecode cached, as an installed package has it), the two
checkouts alternating, so both see the same load on a shared machine.  Wall time and CPU time (user + sys of
the process and its workers: what the load of other jobs does not inflate as much) are both reported.

1. ``symlayout prove proofs/`` as a user runs it (this checkout: its default, every CPU; the baseline: its
   default and ``--jobs 2``);
2. one concrete file, interpreter start-up included;
3. each ``proofs/parametric/*.toml`` in a fresh interpreter, imports excluded.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

ONE = "proofs/seeds/seed_000_A_x2.toml"

FILE_CHILD = r'''
import json, sys, time
from symlayout.config import load_config
from symlayout.prove.engine import prove_config
import symlayout.prove.copy.z3backend  # noqa: F401  (imports excluded)
import z3  # noqa: F401
c0, t0 = time.process_time(), time.perf_counter()
rep = prove_config(load_config(sys.argv[1]))
print("@@" + json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                         "verdicts": [[r.property, r.operand, r.status, r.checked] for r in rep.results]}))
'''


BALANCE_CHILD = r'''
import collections, os, resource, sys, time
c0 = time.process_time()
from symlayout.prove import schedule
orig = schedule.prove_file
def traced(*a, **k):
    c = time.process_time(); r = orig(*a, **k)
    return r[0], (r[1], os.getpid(), time.process_time() - c)
schedule.prove_file = traced
files, _ = schedule.list_files(["proofs"])
t, c = time.perf_counter(), time.process_time()
ans = schedule.prove_files(files, None, int(sys.argv[1]))
per = collections.Counter()
for _k, (_r, pid, cpu) in ans:
    per[pid] += cpu
print(f"jobs {sys.argv[1]}: wall {time.perf_counter() - t:.2f} s; parent CPU {time.process_time() - c:.2f} s "
      f"(imports before the fork included); CPU per worker in its files {sorted(round(v, 2) for v in per.values())}; "
      f"load {os.getloadavg()[0]:.1f}")
'''


def _env(checkout: Path) -> dict:
    e = dict(os.environ, PYTHONPATH=str(checkout))
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    return e


def run_cli(checkout: Path, *args) -> tuple:
    """(wall, cpu of the process and its workers, stdout) of ``symlayout ARGS`` in ``checkout``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "symlayout", *args], capture_output=True, text=True,
                       env=_env(checkout), cwd=checkout)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError(f"{checkout}: symlayout {' '.join(args)}: exit {r.returncode}\n{r.stderr[-1500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r.stdout


def run_file(checkout: Path, path: str) -> dict:
    r = subprocess.run([sys.executable, "-c", FILE_CHILD, path], capture_output=True, text=True,
                       env=_env(checkout), cwd=checkout)
    line = [x for x in r.stdout.splitlines() if x.startswith("@@")]
    if not line:
        raise RuntimeError(f"{checkout} {path}:\n{r.stderr[-1500:]}")
    return json.loads(line[-1][2:])


def _strip(doc):
    if isinstance(doc, dict):
        return {k: _strip(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [_strip(v) for v in doc]
    return doc


def _med(xs):
    return statistics.median(xs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline")
    ap.add_argument("--balance", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-append", action="store_true")
    a = ap.parse_args(argv)
    if a.balance:
        for jobs in (a.jobs, 1):
            subprocess.run([sys.executable, "-c", BALANCE_CHILD, str(jobs)], env=_env(common.REPO), cwd=common.REPO)
        return 0
    if not a.baseline:
        ap.error("--baseline DIR is required (or --balance)")
    here, base = common.REPO, Path(a.baseline).resolve()
    info = common.machine_info()
    for c in (here, base):                       # bytecode written once, outside the measurements
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(c / "symlayout")], env=_env(c))
    loads = []
    rows = []
    cases = [("`symlayout prove proofs/` (default)", ["prove", "proofs/"], ["prove", "proofs/"]),
             ("`symlayout prove proofs/ --jobs 2`", ["prove", "proofs/", "--jobs", "2"],
              ["prove", "proofs/", "--jobs", "2"]),
             (f"`symlayout prove {ONE}` (start-up included)", ["prove", ONE], ["prove", ONE])]
    same = True
    for title, here_args, base_args in cases:
        w = {"this": [], "base": []}
        c = {"this": [], "base": []}
        for _ in range(a.repeat):
            for who, where, args in (("base", base, base_args), ("this", here, here_args)):
                wall, cpu, _out = run_cli(where, *args)
                w[who].append(wall)
                c[who].append(cpu)
            loads.append(os.getloadavg()[0])
        rows.append([title, common.fmt_s(_med(w["base"])), common.fmt_s(_med(w["this"])),
                     f"{_med(w['base']) / _med(w['this']):.2f}x", common.fmt_s(_med(c["base"])),
                     common.fmt_s(_med(c["this"])), f"{_med(c['base']) / _med(c['this']):.2f}x"])
        print(rows[-1], flush=True)
    # the reports themselves: identical (timings stripped)
    docs = [json.loads(run_cli(where, "prove", "--json", "proofs/", *extra)[2])
            for where, extra in ((base, ()), (here, ()), (here, ("--jobs", "1")))]
    same = _strip(docs[0]) == _strip(docs[1]) == _strip(docs[2])
    frows = []
    for f in sorted(str(p.relative_to(here)) for p in (here / "proofs" / "parametric").glob("*.toml")):
        r = {"this": [], "base": []}
        for _ in range(a.repeat):
            for who, where in (("base", base), ("this", here)):
                r[who].append(run_file(where, f))
            loads.append(os.getloadavg()[0])
        ok = r["this"][0]["verdicts"] == r["base"][0]["verdicts"]
        bw, tw = _med([x["wall"] for x in r["base"]]), _med([x["wall"] for x in r["this"]])
        bc, tc = _med([x["cpu"] for x in r["base"]]), _med([x["cpu"] for x in r["this"]])
        frows.append([f"`{f}`", common.fmt_s(bw), common.fmt_s(tw), common.fmt_s(bc), common.fmt_s(tc),
                      f"{bc / tc:.2f}x", "same" if ok else "DIFFERENT"])
        print(frows[-1], flush=True)
    text = common.md_table(["end to end, median of %d (interleaved)" % a.repeat, "baseline wall", "this wall",
                            "wall ratio", "baseline CPU", "this CPU", "CPU ratio"], rows)
    text += ("\n\n`prove --json proofs/` (timings stripped): baseline, this (default jobs) and this `--jobs 1` "
             f"identical: **{same}**.\n\n")
    text += common.md_table(["parametric file, fresh interpreter, imports excluded", "baseline wall", "this wall",
                             "baseline CPU", "this CPU", "CPU ratio", "verdicts"], frows)
    text += (f"\n\nLoad average (1 min) during the run: {min(loads):.1f} - {max(loads):.1f} on "
             f"{os.cpu_count()} CPUs.\n")
    print(text)
    if not a.no_append:
        common.append_results("bench/files.py — `symlayout prove` end to end (issue 18), this vs baseline", text,
                              info, "python bench/files.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
