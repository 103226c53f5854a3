"""Issue-18 speed benchmark: this checkout side by side with a baseline checkout, in one run (by hand, never CI):

    python bench/speed.py --baseline DIR [--repeat R] [--sweep-max N] [--no-append]

``DIR`` is another checkout (e.g. ``git archive main | tar -x -C DIR``); every measurement runs in a fresh
interpreter with ``PYTHONPATH`` set to the checkout, this one and the baseline interleaved, so that both see the
same load on a shared machine (the ratios are the result; absolute times are noisy).

1. **sweep**: the ``bench/prove.py`` grid of concrete configurations written once to a temporary directory; per
   checkout: load + prove each configuration (first pass, then the median of R passes: per-configuration median
   and configurations/s), ``prove_paths(dir, jobs=2)``; for this checkout also with ``SYMLAYOUT_NO_TABLES=1``
   (the point-by-point obligations: what the whole-tile tables alone give).
2. **CLI**: ``symlayout prove proofs/`` end to end (``--jobs 1`` and ``2``) and one concrete file, interpreter
   start-up included (median of R).
3. **parametric files**: each ``proofs/parametric/*.toml`` in a fresh interpreter (imports excluded).
   **files** (``--parts files``): every concrete file of ``proofs/`` in one process per checkout, CPU time
   per file, every result compared.
4. **limit**: index evaluations per second of the obligations' arithmetic, point by point (pure Python,
   ``slot_agreement``'s loop) vs whole-tile (numpy tables), on one 128-thread tile, and the count one proof needs.
5. **scale** (``--parts scale``): ``--scale N`` random concrete configurations proved with ``prove_paths(dir, jobs)``,
   jobs 1 and 2: the rate extrapolated to 100,000 and the peak memory of the parent and of a worker.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

CHILD = r'''
import json, os, resource, statistics, sys, time
from pathlib import Path
mode, args = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
from symlayout.config import load_config
from symlayout.prove.engine import prove_config
try:
    from symlayout.cli.prove import prove_paths
except ImportError:                       # (a checkout before the cli/ package)
    from symlayout.prove.cli import prove_paths
out = {"import_s": time.perf_counter() - t0}
if mode == "sweep":
    d, repeat = Path(args[0]), int(args[1])
    paths = sorted(d.glob("*.toml"))
    per = [[] for _ in paths]
    first = []
    verdicts = []
    cpu = 0.0
    for rep_i in range(repeat + 1):
        c0 = time.process_time()
        for i, p in enumerate(paths):
            t = time.perf_counter()
            rep = prove_config(load_config(p))
            dt = time.perf_counter() - t
            if rep_i == 0:
                first.append(dt)
                verdicts.append([(r.property, r.operand, r.status, r.checked) for r in rep.results])
                assert rep.ok, (str(p), rep.error)
            else:
                per[i].append(dt)
        if rep_i:
            cpu += time.process_time() - c0
        else:
            cpu_first = time.process_time() - c0
    med = [statistics.median(v) for v in per]
    j2 = []
    for _ in range(repeat):
        t = time.perf_counter()
        reps = prove_paths([str(d)], jobs=2)
        j2.append(time.perf_counter() - t)
        assert all(r.ok for r in reps)
    out.update(n=len(paths), cpu_mean=cpu / repeat / len(paths), cpu_first=cpu_first / len(paths), first_total=sum(first), first_median=statistics.median(first),
               median=statistics.median(med), total=sum(med), jobs2=statistics.median(j2),
               verdicts=verdicts, maxrss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               child_maxrss_mib=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
elif mode == "file":
    import symlayout.prove.copy.z3backend  # noqa: F401  (imports excluded)
    try:
        import z3  # noqa: F401
    except ImportError:
        pass
    t = time.perf_counter()
    rep = prove_config(load_config(args[0]))
    out.update(seconds=time.perf_counter() - t, verdicts={f"{r.property}[{r.operand}]": r.status for r in rep.results})
elif mode == "files":
    import symlayout.prove.copy.z3backend  # noqa: F401  (imports excluded)

    def strip(d):
        if isinstance(d, dict):
            return {k: strip(v) for k, v in d.items() if k not in ("seconds", "time_s", "ms")}
        return [strip(x) for x in d] if isinstance(d, list) else d
    per, verdicts = {}, {}
    for f in args:
        ts = []
        for _ in range(2):                  # first (lazy imports of numpy/sympy paid by the first file), second
            c = time.process_time()
            rep = prove_config(load_config(f))
            ts.append(time.process_time() - c)
        per[f] = ts
        verdicts[f] = strip(rep.to_json())
    out.update(per=per, verdicts=verdicts)
print("@@" + json.dumps(out))
'''


def _env(checkout: Path, extra=None) -> dict:
    """The child's environment: the checkout first on the path, bytecode cached as an installed package's is."""
    e = dict(os.environ, PYTHONPATH=str(checkout), **(extra or {}))
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    return e


def child(checkout: Path, mode: str, *args, env=None) -> dict:
    e = _env(checkout, env)
    r = subprocess.run([sys.executable, "-c", CHILD, mode, *map(str, args)], capture_output=True, text=True, env=e,
                       cwd=checkout)
    line = [x for x in r.stdout.splitlines() if x.startswith("@@")]
    if r.returncode or not line:
        raise RuntimeError(f"{checkout} {mode}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return json.loads(line[-1][2:])


def cli(checkout: Path, *args) -> float:
    e = _env(checkout)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", "import sys; from symlayout.cli import main; sys.exit(main())", *args],
                       capture_output=True, text=True, env=e, cwd=checkout)
    dt = time.perf_counter() - t
    if r.returncode not in (0,):
        raise RuntimeError(f"CLI {args} in {checkout}: exit {r.returncode}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
    return dt


def ratio(base, this) -> str:
    return f"{base / this:.2f}x" if this else "n/a"


def part_sweep(a, here, base) -> str:
    import prove as P          # bench/prove.py: the grid
    sys.path.insert(0, str(here))
    cands = [c for c in P.sweep_candidates() if P.accepted(c)[0]]
    if a.sweep_max and len(cands) > a.sweep_max:
        step = len(cands) / a.sweep_max
        cands = [cands[int(i * step)] for i in range(a.sweep_max)]
    tmp = Path(tempfile.mkdtemp(prefix="symlayout-speed-sweep-"))
    try:
        P.write_configs(tmp, cands)
        runs = {"this": [], "this, tables off": [], "baseline": []}
        for _ in range(a.rounds):                       # interleaved rounds: the same load for each
            runs["this"].append(child(here, "sweep", tmp, a.repeat))
            runs["this, tables off"].append(child(here, "sweep", tmp, a.repeat, env={"SYMLAYOUT_NO_TABLES": "1"}))
            runs["baseline"].append(child(base, "sweep", tmp, a.repeat))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    best = {k: min(v, key=lambda d: d["total"]) for k, v in runs.items()}
    same = all(best[k]["verdicts"] == best["baseline"]["verdicts"] for k in best)
    n = best["this"]["n"]
    rows = []
    for label, key, fmt in [
        ("first pass: total (load + model + all properties)", "first_total", common.fmt_s),
        ("first pass: median per configuration", "first_median", common.fmt_s),
        ("first pass: CPU time per configuration (mean; the machine's load left out)", "cpu_first", common.fmt_s),
        (f"steady state (median of {a.repeat} passes): median per configuration", "median", common.fmt_s),
        ("steady state: configurations / s (jobs=1)", "total", lambda t: f"{n / t:.0f}"),
        ("steady state: CPU time per configuration (mean; the machine's load left out)", "cpu_mean", common.fmt_s),
        ("`prove_paths(dir, jobs=2)`: configurations / s", "jobs2", lambda t: f"{n / t:.0f}"),
    ]:
        b, t, t0 = best["baseline"][key], best["this"][key], best["this, tables off"][key]
        rows.append([label, fmt(b), fmt(t0), fmt(t), ratio(b, t)])
    rows.append(["peak RSS of the process (jobs=2 workers)",
                 f"{best['baseline']['maxrss_mib']:.0f} MiB ({best['baseline']['child_maxrss_mib']:.0f})",
                 f"{best['this, tables off']['maxrss_mib']:.0f} MiB",
                 f"{best['this']['maxrss_mib']:.0f} MiB ({best['this']['child_maxrss_mib']:.0f})", ""])
    head = [f"sweep: {n} concrete configurations (best of {a.rounds} interleaved rounds)", "baseline",
            "this, tables off", "this", "baseline / this"]
    return common.md_table(head, rows) + f"\n\nEvery verdict and count identical across the three: **{same}**."


def part_cli(a, here, base) -> str:
    seed = "proofs/seeds/seed_000_A_x2.toml"
    rows = []
    cli(base, "prove", seed), cli(here, "prove", seed)          # (bytecode written once)
    for label, args in [("`symlayout prove proofs/ --jobs 1`", ["prove", "proofs", "--jobs", "1"]),
                        ("`symlayout prove proofs/ --jobs 2`", ["prove", "proofs", "--jobs", "2"]),
                        (f"`symlayout prove {seed}` (one concrete file)", ["prove", seed])]:
        tb, tt = [], []
        for _ in range(a.repeat):
            tb.append(cli(base, *args))
            tt.append(cli(here, *args))
        b, t = statistics.median(tb), statistics.median(tt)
        rows.append([label, common.fmt_s(b), common.fmt_s(t), ratio(b, t)])
    return common.md_table([f"CLI end to end, interpreter start-up included (median of {a.repeat})", "baseline",
                            "this", "baseline / this"], rows)


def part_parametric(a, here, base) -> str:
    rows = []
    for f in sorted((here / "proofs" / "parametric").glob("*.toml")):
        tb, tt, vb, vt = [], [], None, None
        for _ in range(a.repeat):
            d = child(base, "file", f)
            tb.append(d["seconds"])
            vb = d["verdicts"]
            d = child(here, "file", f)
            tt.append(d["seconds"])
            vt = d["verdicts"]
        b, t = statistics.median(tb), statistics.median(tt)
        rows.append([f"`{f.relative_to(here)}`", common.fmt_s(b), common.fmt_s(t), ratio(b, t),
                     "same" if vb == vt else f"DIFFER: {vb} vs {vt}"])
    return common.md_table([f"parametric file, in process after imports (median of {a.repeat})", "baseline", "this",
                            "baseline / this", "verdicts"], rows)


def part_files(a, here, base) -> str:
    """Every file of proofs/ but the parametric families of proofs/parametric (Z3) proved in one process
    per checkout, CPU time per file (the second proof of each; the first one pays lazy imports),
    verdicts, counts and counterexamples compared."""
    files = [str(p.relative_to(here)) for p in sorted((here / "proofs").rglob("*.toml"))
             if p.parent.name != "parametric"]
    files = [f for f in files if (base / f).exists()]      # the baseline predates some files (proofs/hopper)
    tb, tt = child(base, "files", *files), child(here, "files", *files)
    same = tb["verdicts"] == tt["verdicts"]
    sb = {f: v[1] for f, v in tb["per"].items()}
    st = {f: v[1] for f, v in tt["per"].items()}
    rows = [[f"`{f}`", common.fmt_s(sb[f]), common.fmt_s(st[f]), ratio(sb[f], st[f])]
            for f in sorted(files, key=lambda f: -sb[f])[:12]]
    rows.append([f"all {len(files)} files (sum)", common.fmt_s(sum(sb.values())), common.fmt_s(sum(st.values())),
                 ratio(sum(sb.values()), sum(st.values()))])
    rows.append(["slowest file", common.fmt_s(max(sb.values())), common.fmt_s(max(st.values())), ""])
    return common.md_table(["file of proofs/, not proofs/parametric (CPU time in process, second proof; 12 slowest at "
                            "baseline)",
                            "baseline", "this", "baseline / this"], rows) + \
        f"\n\nEvery result identical (status, count, counterexample, detail): **{same}**."


def part_limit(a, here) -> str:
    """Index evaluations per second: the reference slot_agreement loop vs the tables, on one tile."""
    sys.path.insert(0, str(here))
    from symlayout.prove.copy import obligations as ob
    from symlayout.prove.decide import tables
    from symlayout.prove.copy.model import build_operand_model
    m = build_operand_model("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "half_t",
                            "Sw<3,3,3> o 0 o (128,64):(64,1)")
    T, C, R = tables.of(m).reg.shape
    evals = T * C * R                      # one delivered-vs-expected comparison per fragment slot

    def ref():
        m.__dict__["_tables"] = None
        try:
            return ob.slot_agreement(m)
        finally:
            tables.forget(m)

    def fast():
        return tables.slot_agreement_holds(m, tables.of(m))

    ref(), fast()
    tr = min(common.time_call(ref, repeat=a.repeat)[1])
    tf = min(common.time_call(fast, repeat=max(5, a.repeat))[1])
    from symlayout.atoms.mma import get_mma_atom
    from symlayout.tiled.mma import make_tiled_mma
    # afresh: a new TiledMMA object each time (no TiledCopy, partition or route of an earlier build reused)
    t_model = min(common.time_call(lambda: build_operand_model(
        make_tiled_mma(get_mma_atom("SM80_16x8x16_F16F16F16F16_TN"), "(2,2,1)"), None, None, "A",
        "SM75_U32x4_LDSM_N", "half_t", "Sw<3,3,3> o 0 o (128,64):(64,1)"), repeat=a.repeat)[1])
    # the same tile again (the route computed once per TiledCopy, operand, shape and fragment is reused)
    t_again = min(common.time_call(lambda: build_operand_model(
        "SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "half_t",
        "Sw<3,3,3> o 0 o (128,64):(64,1)"), repeat=a.repeat)[1])
    rows = [
        ["tile", f"A 128x64 half, Sw<3,3,3>, LDSM x4, 128 threads: {T} x {C} calls x {R} values = {evals} slots"],
        ["point by point (pure Python, `obligations.slot_agreement`)",
         f"{common.fmt_s(tr)} = {evals / tr / 1e6:.2f} M evaluations/s"],
        ["whole tile (numpy, `tables.slot_agreement_holds`)", f"{common.fmt_s(tf)} = {evals / tf / 1e6:.1f} M evaluations/s"],
        ["ratio", f"{tr / tf:.0f}x"],
        ["building the model of that tile afresh (layout algebra, CuTe's partitions)", common.fmt_s(t_model)],
        ["building it again (a configuration over the same TiledMMA, copy atom and tile shape)", common.fmt_s(t_again)],
        ["evaluations one proof of that tile needs (every property's obligations)", f"{_proof_evaluations(m)}"],
    ]
    return common.md_table(["physical limit", "value"], rows)


def _proof_evaluations(m) -> int:
    """Index evaluations of one exhaustive proof of ``m``: the obligations of every property, each at
    least one layout evaluation (the count the verdicts report)."""
    from symlayout.prove.engine import run_checks
    return sum(r.checked or 0 for r in run_checks(m, ("coverage", "alignment", "exactly_once", "slot_agreement",
                                                        "bank_conflicts", "in_bounds")))


SCALE_CHILD = r'''
import json, resource, sys, time
try:
    from symlayout.cli.prove import prove_paths
except ImportError:
    from symlayout.prove.cli import prove_paths
t = time.perf_counter()
reps = prove_paths([sys.argv[1]], jobs=int(sys.argv[2]))
dt = time.perf_counter() - t
st = {}
for r in reps:
    for x in r.results:
        st[x.status] = st.get(x.status, 0) + 1
print("@@" + json.dumps({"n": len(reps), "seconds": dt, "errors": sum(1 for r in reps if r.error), "status": st,
                         "self_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                         "worker_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
'''


def part_scale(a, here) -> str:
    """An autotuner's space: N random concrete configurations (bench/prove.py's generator) proved with
    ``prove_paths(dir, jobs)``; the rate extrapolated to 100,000, memory per worker."""
    import random
    import prove as P
    rng = random.Random(a.seed)
    tmp = Path(tempfile.mkdtemp(prefix="symlayout-speed-scale-"))
    try:
        seen = set()
        while len(seen) < a.scale:
            seen.add(P.random_config(rng))
        for i, c in enumerate(sorted(seen)):
            atom, lay, op, cp, vt, smem, align = c
            (tmp / f"c{i:06d}.toml").write_text(P.config_text(f"c{i}", atom, lay, op, cp, vt, smem, align))
        rows = []
        for jobs in (1, 2):
            e = _env(here)
            r = subprocess.run([sys.executable, "-c", SCALE_CHILD, str(tmp), str(jobs)], capture_output=True,
                               text=True, env=e)
            d = json.loads([x for x in r.stdout.splitlines() if x.startswith("@@")][-1][2:])
            rate = d["n"] / d["seconds"]
            rows.append([f"jobs={jobs}", d["n"], common.fmt_s(d["seconds"]), f"{rate:.0f}",
                         f"{100000 / rate / 60:.1f} min", f"{d['self_mib']:.0f} MiB",
                         f"{d['worker_mib']:.0f} MiB" if jobs > 1 else "-",
                         f"{d['errors']} input errors; " + ", ".join(f"{k} {v}" for k, v in sorted(d["status"].items()))])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return common.md_table(["random concrete configurations", "configurations", "wall", "per s",
                            "100,000 at this rate", "peak RSS parent", "peak RSS per worker", "results"], rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", required=True, help="another checkout (PYTHONPATH root)")
    ap.add_argument("--parts", default="sweep,cli,parametric,limit")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2, help="interleaved sweep rounds (best of)")
    ap.add_argument("--sweep-max", type=int, default=0)
    ap.add_argument("--scale", type=int, default=2000, help="random configurations for the scale part")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--no-append", action="store_true")
    a = ap.parse_args(argv)
    here, base = common.REPO, Path(a.baseline).resolve()
    info = common.machine_info()
    print(common.machine_line(info), flush=True)
    out = []
    for p in [x.strip() for x in a.parts.split(",") if x.strip()]:
        t0 = time.perf_counter()
        body = {"sweep": lambda: part_sweep(a, here, base), "cli": lambda: part_cli(a, here, base),
                "parametric": lambda: part_parametric(a, here, base), "limit": lambda: part_limit(a, here),
                "files": lambda: part_files(a, here, base),
                "scale": lambda: part_scale(a, here)}[p]()
        out.append(f"### {p} ({common.fmt_s(time.perf_counter() - t0)})\n\n{body}")
        print(out[-1] + "\n", flush=True)
    load = os.getloadavg()
    text = "\n\n".join(out) + (f"\n\nLoad average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
                               f"(2 cores shared with other engineers' jobs).\n")
    if not a.no_append:
        common.append_results("bench/speed.py — issue 18, this checkout vs baseline", text, info)
    return 0


if __name__ == "__main__":
    sys.exit(main())
