"""Issue-18 concrete prover: per-folder CPU of ``proofs/`` and the sweep's first pass, this checkout
side by side with a baseline checkout (by hand, never CI):

    python bench/perfile.py --baseline DIR [--repeat R] [--no-append]

``DIR`` is another checkout (``git archive main | tar -x -C DIR``).  Each measurement runs in a fresh
interpreter with ``PYTHONPATH`` set to the checkout, the two checkouts interleaved R times (the best of R
is kept: the ratios are the result on a shared machine):

* **files**: every file of ``proofs/`` proved once in one process after the imports (the prover's
  ``schedule.preload``), seconds per folder; "four folders" is hopper + sm80_datapath + grid + threadmaps
  (the concrete files: parametric is the Z3 families');
* **sweep**: the ``bench/prove.py`` grid of concrete configurations (written once to a temporary
  directory), each loaded and proved once in one process: median and mean CPU per configuration.

Every report is compared between the checkouts (timings stripped): a difference fails the run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

CHILD = r'''
import json, re, statistics, sys, time
mode, arg = sys.argv[1], sys.argv[2]

def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if not re.search(r"time|second|_ms|elapsed|duration", k)}
    return [strip(x) for x in o] if isinstance(o, list) else o

from symlayout.prove import schedule, engine  # noqa: F401
out = {}
if mode == "files":
    files, _ = schedule.list_files([arg])
    schedule.preload([p for p, _ in files])
    per, reports = {}, []
    for p, e in files:
        t = time.process_time()
        kind, rep = schedule.prove_file(p, e, None, "auto", None)
        folder = p.split("/")[1] if p.count("/") > 1 else "."
        per[folder] = per.get(folder, 0.0) + time.process_time() - t
        reports.append([p, kind, strip(rep.to_json()) if hasattr(rep, "to_json") else str(rep)])
    out.update(per=per, reports=reports)
else:
    from pathlib import Path
    from symlayout.config import load_config
    paths = sorted(Path(arg).glob("*.toml"))
    cpu, verdicts = [], []
    for p in paths:
        t = time.process_time()
        rep = engine.prove_config(load_config(p))
        cpu.append(time.process_time() - t)
        verdicts.append([(r.property, r.operand, r.status, r.checked, r.method,
                          r.counterexample.message if r.counterexample else None) for r in rep.results])
    out.update(n=len(paths), median=statistics.median(cpu), mean=sum(cpu) / len(cpu), reports=verdicts)
print(json.dumps(out))
'''

FOUR = ("hopper", "sm80_datapath", "grid", "threadmaps")


def child(tree: Path, mode: str, arg: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    r = subprocess.run([sys.executable, "-c", CHILD, mode, arg], cwd=tree, env=env, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{tree}: {mode} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", required=True, type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-append", action="store_true")
    a = ap.parse_args(argv)
    here = Path(__file__).resolve().parent.parent
    trees = {"baseline": a.baseline.resolve(), "this": here}
    for t in trees.values():                       # bytecode in both (PYTHONDONTWRITEBYTECODE machines)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(t / "symlayout")],
                       env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    sys.path.insert(0, str(here))
    import prove as P                              # bench/prove.py: the grid
    tmp = Path(tempfile.mkdtemp(prefix="symlayout-perfile-sweep-"))
    try:
        P.write_configs(tmp, [c for c in P.sweep_candidates() if P.accepted(c)[0]])
        best = {k: {"per": {}, "median": 1e9, "mean": 1e9} for k in trees}
        reports = {k: {} for k in trees}
        loads = []
        for _ in range(a.repeat):                  # interleaved: the same load for both
            for k, t in trees.items():
                loads.append(os.getloadavg()[0])
                f = child(t, "files", "proofs/")
                for folder, s in f["per"].items():
                    best[k]["per"][folder] = min(best[k]["per"].get(folder, 1e9), s)
                reports[k]["files"] = f["reports"]
                s = child(t, "sweep", str(tmp))
                best[k]["median"] = min(best[k]["median"], s["median"])
                best[k]["mean"] = min(best[k]["mean"], s["mean"])
                reports[k]["sweep"] = s["reports"]
        same = reports["baseline"] == reports["this"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    folders = sorted(best["this"]["per"], key=lambda f: -best["baseline"]["per"].get(f, 0))
    rows = []
    for f in folders + ["four folders"]:
        b, t = ((sum(best[k]["per"].get(x, 0) for x in FOUR) for k in trees) if f == "four folders"
                else (best[k]["per"].get(f, 0) for k in trees))
        rows.append([f"proofs/{f}" if f != "four folders" else "hopper + sm80_datapath + grid + threadmaps",
                     common.fmt_s(b), common.fmt_s(t), f"{b / t:.2f}x" if t else "-"])
    for key, label in (("median", "sweep first pass: median CPU per configuration"),
                       ("mean", "sweep first pass: mean CPU per configuration")):
        b, t = best["baseline"][key], best["this"][key]
        rows.append([label, common.fmt_s(b), common.fmt_s(t), f"{b / t:.2f}x"])
    table = common.md_table(["CPU, best of %d interleaved runs" % a.repeat, "baseline", "this", "ratio"], rows)
    table += (f"\n\nReports identical (timings stripped, every file and sweep configuration): {same}; "
              f"load average {min(loads):.1f}-{max(loads):.1f} during the runs.")
    print(table)
    if not a.no_append:
        common.append_results("bench/perfile.py — concrete prover per folder and sweep first pass (issue 18)", table,
                              command=f"python bench/perfile.py --baseline {a.baseline} --repeat {a.repeat}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
