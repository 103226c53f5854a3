"""Prover benchmark (run by hand, never in CI):

    python bench/prove.py [--parts sweep,family,agree] [--agree N] [--agree-jobs J] [--repeat R] [--no-append]

1. **sweep**: >= 200 concrete configurations generated programmatically (MMA atoms x atom layouts x
   operands A/B/C x copy atoms x smem layouts: K-major / M-major, padded pitches, swizzles), keeping those the
   prover accepts (a configuration it rejects as bad input is counted and left out).  Proof time per
   configuration (load the TOML + build the model + every property; median and max over the configurations,
   each the median of R repeats, in process), and configurations/second end to end through
   ``prove_paths(dir, jobs=1)`` and ``jobs=2`` (in process, R repeats, interleaved) and through the CLI
   ``symlayout prove DIR --jobs N`` (a fresh process: interpreter start and imports included).
2. **family**: ``proofs/parametric/seed_000_family.toml`` (seed 000 for every M = 32*m, m = 1..4096) end to end
   through the CLI (median of R runs) and in process; and the cost of exhaustive enumeration of the same family:
   the concrete seed-000 configuration (32*m,16):(16,1) proved exhaustively for sampled m, a power law
   t(m) = c * m^k fitted to the larger samples, summed over m = 1..4096 (measured values used where sampled).
3. **agree**: Z3 (``method="z3"``) vs the default (exhaustive) on N random concrete configurations (random atom,
   atom layout, operand, copy atom, smem shape, row pitch padding, major-ness, swizzle, base alignment; only
   configurations the prover accepts).  Every property's status must agree; a mismatch is a bug: printed
   prominently and written to RESULTS.md with the configuration.  Runs in ``--agree-jobs`` worker processes
   and logs every configuration to ``--agree-log`` (JSON lines) as it goes.

Peak memory: ru_maxrss of this process and of the waited-for children (worker pools, CLI runs), and the
tracemalloc peak of proving the sweep once in process.
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

FAMILY = common.REPO / "proofs" / "parametric" / "seed_000_family.toml"

#: MMA atom -> (A/B value type, atom K, bytes per A/B element, C value type usable by a 16-bit STSM or None)
MMA = {
    "SM80_16x8x16_F16F16F16F16_TN": ("half_t", 16, 2, "half_t"),
    "SM80_16x8x8_F16F16F16F16_TN": ("half_t", 8, 2, "half_t"),
    "SM80_16x8x16_F32BF16BF16F32_TN": ("bfloat16_t", 16, 2, None),
    "SM80_16x8x8_F32TF32TF32F32_TN": ("tfloat32_t", 8, 4, None),
    "SM80_16x8x32_S32S8S8S32_TN": ("int8_t", 32, 1, None),
}
AB_COPIES = ["SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N", "UniversalCopy<uint32_t>",
             "UniversalCopy<uint128_t>"]
AB_COPIES_T = ["SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T"]
C_COPIES = ["SM90_U32x1_STSM_N", "SM90_U32x2_STSM_N", "SM90_U32x4_STSM_N", "UniversalCopy<uint32_t>"]


def _swizzle_for(row_bytes: int, elem_bytes: int) -> str | None:
    """CUTLASS's SM80 choice: Sw<log2(row bytes / 16) (<= 3), log2(16 / sizeof T), 3>."""
    if row_bytes < 32:
        return None
    b = min(3, int(math.log2(row_bytes // 16)))
    return f"Sw<{b},{int(math.log2(16 // elem_bytes))},3>"


def config_text(name, atom, layout, operand, copy_op, vtype, smem, align=128, expect=None) -> str:
    t = (f'name = "{name}"\n\n[mma]\natom = "{atom}"\nlayout = "{layout}"\n\n'
         f'[copy.{operand}]\natom = "{copy_op}"\ntype = "{vtype}"\nsmem = "{smem}"\nalign = {align}\n')
    if expect:
        t += f"\n[expect]\nrefuted = {json.dumps(sorted(expect))}\n"
    return t


def sweep_candidates():
    """The sweep grid: (name, atom, layout, operand, copy_op, vtype, smem)."""
    out = []
    layouts = ["(1,1,1)", "(2,1,1)", "(2,2,1)", "(4,2,1)"]
    for atom, (vt, ak, nb, ct) in MMA.items():
        for lay in layouts:
            wm, wn, _ = (int(x) for x in lay.strip("()").split(","))
            for op in ("A", "B"):
                rows = (16 * wm if op == "A" else 8 * wn) * 2          # two TiledMMA tiles along M/N
                for cp in AB_COPIES:
                    for kmul in (1, 2):
                        K = ak * kmul * 2
                        sw = _swizzle_for(K * nb, nb)
                        for s in (None, sw) if sw else (None,):
                            smem = f"({rows},{K}):({K},1)"
                            if s:
                                smem = f"{s} o 0 o {smem}"
                            out.append((atom, lay, op, cp, vt, smem))
                if nb == 2:   # M-major (MN-contiguous) tiles through the transposing LDSM
                    for cp in AB_COPIES_T:
                        K = ak * 2
                        out.append((atom, lay, op, cp, vt, f"({rows},{K}):(1,{rows})"))
            if ct:
                for cp in C_COPIES:
                    M, N = 16 * wm * 2, 8 * wn * 4
                    out.append((atom, lay, "C", cp, ct, f"({M},{N}):({N},1)"))
                    out.append((atom, lay, "C", cp, ct, f"Sw<3,3,3> o 0 o ({M},{N}):({N},1)" if N >= 64
                                else f"Sw<2,3,3> o 0 o ({M},{N}):({N},1)"))
    return [(f"sweep_{i:04d}",) + c for i, c in enumerate(out)]


def accepted(c) -> tuple[bool, str]:
    from symlayout.errors import SymlayoutError
    from symlayout.prove.copy.model import build_operand_model
    _, atom, lay, op, cp, vt, smem = c[:7]
    try:
        build_operand_model(atom, lay, None, op, cp, vt, smem)
        return True, ""
    except SymlayoutError as e:
        return False, str(e)


def write_configs(dirpath: Path, cands) -> list[Path]:
    """Write accepted configurations (expecting what the default prover says: [expect] from a first run)."""
    from symlayout.prove.engine import prove_operand
    paths = []
    for c in cands:
        name, atom, lay, op, cp, vt, smem = c
        rs = prove_operand(atom, lay, None, op, cp, vt, smem)
        refuted = {r.property for r in rs if r.status == "refuted"}
        p = dirpath / f"{name}.toml"
        p.write_text(config_text(name, atom, lay, op, cp, vt, smem, expect=refuted))
        paths.append(p)
    return paths


# ---------------------------------------------------------------- part 1: sweep

def part_sweep(args, info) -> str:
    from symlayout.config import load_config
    from symlayout.cli.prove import prove_paths
    from symlayout.prove.engine import prove_config
    cands = sweep_candidates()
    acc, rejected = [], {}
    for c in cands:
        ok, why = accepted(c)
        if ok:
            acc.append(c)
        else:
            rejected[why.split(" for ")[0][:70]] = rejected.get(why.split(" for ")[0][:70], 0) + 1
    print(f"sweep: {len(cands)} candidates, {len(acc)} accepted, {len(cands) - len(acc)} rejected as bad input")
    if args.sweep_max and len(acc) > args.sweep_max:     # an evenly spaced subset (deterministic)
        step = len(acc) / args.sweep_max
        acc = [acc[int(i * step)] for i in range(args.sweep_max)]
        print(f"sweep: using {len(acc)} of them (--sweep-max)")
    for k, v in sorted(rejected.items(), key=lambda kv: -kv[1])[:5]:
        print(f"   rejected {v:4d}: {k}")
    tmp = Path(tempfile.mkdtemp(prefix="symlayout-bench-sweep-"))
    try:
        paths = write_configs(tmp, acc)
        n = len(paths)
        props = 0
        # per configuration, in process: load + prove (median of R)
        per = [[] for _ in paths]
        for _ in range(args.repeat):
            for i, p in enumerate(paths):
                t0 = time.perf_counter()
                rep = prove_config(load_config(p))
                per[i].append(time.perf_counter() - t0)
                if _ == 0:
                    props += len(rep.results)
                    bad = [r for r in rep.results if r.status not in ("proved", "refuted")]
                    if bad or rep.error:
                        print("UNEXPECTED", p.name, rep.error, [(r.property, r.status) for r in bad])
        med = [statistics.median(v) for v in per]
        # end to end: prove_paths with jobs 1 and 2 (interleaved), CLI jobs 1 and 2
        t_jobs = {1: [], 2: []}
        for _ in range(args.repeat):
            for j in (1, 2):
                t0 = time.perf_counter()
                reps = prove_paths([str(tmp)], jobs=j)
                t_jobs[j].append(time.perf_counter() - t0)
                assert len(reps) == n and all(r.ok for r in reps), "sweep configuration not as expected"
        t_cli = {1: [], 2: []}
        for _ in range(args.repeat):
            for j in (1, 2):
                t0 = time.perf_counter()
                r = subprocess.run(["symlayout", "prove", str(tmp), "--jobs", str(j)], capture_output=True, text=True)
                t_cli[j].append(time.perf_counter() - t0)
                if r.returncode != 0:
                    print("CLI exit", r.returncode, r.stdout[-500:], r.stderr[-500:])
        mem = {}
        with common.traced(mem):
            prove_paths([str(tmp)], jobs=1)
        # where the time goes (cProfile of one in-process pass, jobs 1)
        hot = profile_hotspots(lambda: prove_paths([str(tmp)], jobs=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    j1, j2 = statistics.median(t_jobs[1]), statistics.median(t_jobs[2])
    c1, c2 = statistics.median(t_cli[1]), statistics.median(t_cli[2])
    rows = [
        ["configurations proved (accepted / generated)", f"{n} / {len(cands)}"],
        ["property results per pass", props],
        ["proof time per configuration, median (load + model + all properties)", common.fmt_s(statistics.median(med))],
        ["proof time per configuration, max", common.fmt_s(max(med))],
        ["proof time per configuration, sum", common.fmt_s(sum(med))],
        ["prove_paths jobs=1: wall / configs per s", f"{common.fmt_s(j1)} / {n / j1:.1f}"],
        ["prove_paths jobs=2: wall / configs per s", f"{common.fmt_s(j2)} / {n / j2:.1f}"],
        ["CLI `symlayout prove DIR --jobs 1`: wall / configs per s", f"{common.fmt_s(c1)} / {n / c1:.1f}"],
        ["CLI `symlayout prove DIR --jobs 2`: wall / configs per s", f"{common.fmt_s(c2)} / {n / c2:.1f}"],
        ["goal >= 100 configurations/s on 2 cores (prove_paths jobs=2)", "met" if n / j2 >= 100 else "NOT met"],
        ["tracemalloc peak, one in-process pass (jobs=1)", f"{mem['tracemalloc_peak_mib']:.1f} MiB"],
    ]
    table = common.md_table(["sweep (medians of %d runs)" % args.repeat, "value"], rows)
    return table + "\n\ncProfile of one jobs=1 pass, top functions by internal time:\n\n" + hot


def profile_hotspots(fn, top=12) -> str:
    import cProfile
    import io
    import pstats
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    st = pstats.Stats(pr)
    total = st.total_tt
    rows = []
    for (file, line, func), (cc, nc, tt, ct, callers) in sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:top]:
        short = os.path.relpath(file, common.REPO) if file.startswith(str(common.REPO)) else os.path.basename(file)
        rows.append([f"`{short}:{line}({func})`", nc, f"{tt:.3f}", f"{100 * tt / total:.0f}%", f"{ct:.3f}"])
    return common.md_table(["function", "calls", "tottime s", "share", "cumtime s"], rows)


# ---------------------------------------------------------------- part 2: parametric family

FAMILY_SNIPPET = r"""
import json, time, sys
t0 = time.perf_counter()
from symlayout.cli.prove import prove_paths, exit_code
t1 = time.perf_counter()
reps = prove_paths([sys.argv[1]])
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "prove_s": t2 - t1, "exit": exit_code(reps),
                  "results": [(r.property, r.status, r.method) for r in reps[0].results]}))
"""


def part_family(args, info) -> str:
    from symlayout.prove.engine import prove_operand
    cli, inproc, imp = [], [], []
    last = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        r = subprocess.run(["symlayout", "prove", str(FAMILY)], capture_output=True, text=True)
        cli.append(time.perf_counter() - t0)
        if r.returncode != 0:
            print("FAMILY CLI exit", r.returncode, r.stdout[-800:])
        r2 = subprocess.run([sys.executable, "-c", FAMILY_SNIPPET, str(FAMILY)], capture_output=True, text=True)
        d = json.loads(r2.stdout.strip().splitlines()[-1])
        inproc.append(d["prove_s"])
        imp.append(d["import_s"])
        last = d
    # exhaustive enumeration of the same family: sampled m, power-law fit on the larger samples
    samples = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512] if not args.quick else [1, 2, 4, 8, 16, 32, 64]
    meas = {}
    for m in samples:
        ts = []
        for _ in range(args.repeat if m <= 64 else max(1, args.repeat // 2)):
            t0 = time.perf_counter()
            rs = prove_operand("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A", "SM75_U32x2_LDSM_N", "half_t",
                               f"({32 * m},16):(16,1)")
            ts.append(time.perf_counter() - t0)
            assert all(r.method == "exhaustive" for r in rs)
        meas[m] = statistics.median(ts)
        print(f"  exhaustive m={m}: {common.fmt_s(meas[m])}")
    big = [m for m in samples if m >= 16]
    xs = [math.log(m) for m in big]
    ys = [math.log(meas[m]) for m in big]
    k = (len(xs) * sum(x * y for x, y in zip(xs, ys)) - sum(xs) * sum(ys)) / (len(xs) * sum(x * x for x in xs) - sum(xs) ** 2)
    logc = (sum(ys) - k * sum(xs)) / len(xs)
    c = math.exp(logc)
    total = sum(meas.get(m, c * m ** k) for m in range(1, 4097))
    cli_med, in_med = statistics.median(cli), statistics.median(inproc)
    rows = [
        ["Z3 family proof, CLI end to end (`symlayout prove proofs/parametric/seed_000_family.toml`)", common.fmt_s(cli_med)],
        ["Z3 family proof, in process (after imports; fresh interpreter)", common.fmt_s(in_med)],
        ["  (`import symlayout.cli.prove` before it: z3/sympy load lazily, inside the proof time)",
         common.fmt_s(statistics.median(imp))],
        ["results", ", ".join(f"{p}:{s}" for p, s, _ in last["results"])],
        ["goal <= 10 s (CLI end to end)", "met" if cli_med <= 10 else "NOT met"],
        ["exhaustive, concrete m = " + ", ".join(map(str, samples)),
         ", ".join(common.fmt_s(meas[m]) for m in samples)],
        ["fit on m >= 16: t(m) = c * m^k", f"c = {c:.3g} s, k = {k:.3f}"],
        ["exhaustive enumeration of m = 1..4096, extrapolated sum", f"{total:,.0f} s = {total / 3600:.1f} h"],
        ["ratio exhaustive-family / Z3-family (CLI)", f"{total / cli_med:,.0f}x"],
    ]
    return common.md_table([f"parametric family (medians of {args.repeat} runs)", "value"], rows)


# ---------------------------------------------------------------- part 3: Z3 vs exhaustive agreement

def random_config(rng: random.Random):
    atom = rng.choice(list(MMA))
    vt, ak, nb, ct = MMA[atom]
    # small tilings (one or two warps): Z3 costs ~0.5-2 s per configuration, so 10,000 must stay small
    lay = rng.choice(["(1,1,1)", "(1,1,1)", "(1,1,1)", "(2,1,1)", "(1,2,1)"])
    wm, wn, _ = (int(x) for x in lay.strip("()").split(","))
    op = rng.choice(["A", "A", "B", "B", "C"] if ct else ["A", "B"])
    align = rng.choice([128, 128, 128, 16, 8, 4])
    if op == "C":
        cp = rng.choice(C_COPIES)
        M, N = 16 * wm * rng.choice([1, 2]), 8 * wn * rng.choice([1, 2])
        pitch = N + rng.choice([0, 0, 0, 2, 4, 8, 16])
        smem = f"({M},{N}):({pitch},1)"
        sw = rng.choice([None, None, "Sw<1,3,3>", "Sw<2,3,3>", "Sw<3,3,3>", "Sw<2,2,3>"])
        if sw:
            smem = f"{sw} o 0 o {smem}"
        return atom, lay, op, cp, ct, smem, align
    rows = (16 * wm if op == "A" else 8 * wn) * rng.choice([1, 1, 2])
    K = ak * rng.choice([1, 2])
    mmajor = nb == 2 and rng.random() < 0.3
    if mmajor:
        cp = rng.choice(AB_COPIES_T + ["SM75_U32x4_LDSM_N", "UniversalCopy<uint32_t>"])
        pitch = rows + rng.choice([0, 0, 0, 4, 8])
        smem = f"({rows},{K}):(1,{pitch})"
    else:
        cp = rng.choice(AB_COPIES + ["SM75_U16x4_LDSM_T"])
        pitch = K + rng.choice([0, 0, 0, 2, 4, 8, 16, 32])
        smem = f"({rows},{K}):({pitch},1)"
    if rng.random() < 0.4:
        b = rng.choice([1, 2, 3])
        m = rng.choice([int(math.log2(max(1, 16 // nb))), int(math.log2(max(1, 16 // nb))), 2, 3, 4])
        smem = f"Sw<{b},{m},3> o 0 o {smem}"
    return atom, lay, op, cp, vt, smem, align


def _agree_one(c):
    from symlayout.errors import SymlayoutError
    from symlayout.prove.engine import prove_operand
    atom, lay, op, cp, vt, smem, align = c
    try:
        t0 = time.perf_counter()
        ex = prove_operand(atom, lay, None, op, cp, vt, smem, align=align)
        t1 = time.perf_counter()
        z3 = prove_operand(atom, lay, None, op, cp, vt, smem, align=align, method="z3")
        t2 = time.perf_counter()
    except SymlayoutError as e:
        return {"cfg": c, "rejected": str(e)[:200]}
    except Exception as e:  # a crash is a finding too
        return {"cfg": c, "crash": f"{type(e).__name__}: {e}"[:300]}
    a = {r.property: r.status for r in ex}
    b = {r.property: r.status for r in z3}
    mism = {p: (a.get(p), b.get(p)) for p in set(a) | set(b) if a.get(p) != b.get(p)}
    return {"cfg": c, "ex": a, "z3": b, "mismatch": mism, "t_ex": t1 - t0, "t_z3": t2 - t1,
            "z3_methods": sorted({r.method for r in z3})}


def part_agree(args, info) -> str:
    rng = random.Random(args.seed)
    seen = set()
    target = args.agree
    results, n_ok = [], 0
    t0 = time.perf_counter()
    ctx = mp.get_context("fork")

    def gen(k):
        out = []
        while len(out) < k:
            c = random_config(rng)
            if c in seen:
                continue
            seen.add(c)
            out.append(c)
        return out

    with open(args.agree_log, "w") as log, ctx.Pool(args.agree_jobs) as pool:
        while n_ok < target:
            batch = gen(max(8, int((target - n_ok) * 1.5)))
            for res in pool.imap_unordered(_agree_one, batch, chunksize=2):
                log.write(json.dumps(res) + "\n")
                results.append(res)
                if "crash" in res:
                    print("!!! CRASH", res, flush=True)
                elif "mismatch" in res:
                    n_ok += 1
                    if res["mismatch"]:
                        print("!" * 78 + f"\n!!! Z3/EXHAUSTIVE MISMATCH on {res['cfg']}: {res['mismatch']}\n"
                              + "!" * 78, flush=True)
                    if n_ok % 250 == 0:
                        log.flush()
                        print(f"  agree: {n_ok}/{target} configurations, "
                              f"{sum(1 for r in results if r.get('mismatch'))} mismatches, "
                              f"{time.perf_counter() - t0:.0f} s", flush=True)
                if n_ok >= target:
                    break       # leaving the with-block terminates the pool
    return agree_summary(results, time.perf_counter() - t0, args.agree_jobs, args.seed)


def agree_summary(results, wall, jobs, seed) -> str:
    """The agreement table from result records (live, or read back from an --agree-log)."""
    ok = [r for r in results if "mismatch" in r]
    rejected = sum(1 for r in results if "rejected" in r)
    crashes = [r for r in results if "crash" in r]
    mismatches = [r for r in ok if r["mismatch"]]
    t_ex = sum(r["t_ex"] for r in ok)
    t_z3 = sum(r["t_z3"] for r in ok)
    n = len(ok)
    status_counts = {}
    for r in ok:
        for p, s in r["ex"].items():
            status_counts.setdefault(p, {}).setdefault(s, 0)
            status_counts[p][s] += 1
    rows = [
        ["random concrete configurations compared (accepted)", n],
        ["generated configurations rejected as bad input", rejected],
        ["crashes", len(crashes)],
        ["**status mismatches (Z3 vs exhaustive)**", f"**{len(mismatches)}**"],
        ["exhaustive proof time, total / per configuration (mean)", f"{common.fmt_s(t_ex)} / {common.fmt_s(t_ex / max(1, n))}"],
        ["Z3 proof time, total / per configuration (mean)", f"{common.fmt_s(t_z3)} / {common.fmt_s(t_z3 / max(1, n))}"],
        ["Z3 / exhaustive time ratio", f"{t_z3 / t_ex:.0f}x" if t_ex else "n/a"],
        ["median per configuration: exhaustive / Z3",
         f"{common.fmt_s(common.median(r['t_ex'] for r in ok))} / {common.fmt_s(common.median(r['t_z3'] for r in ok))}"],
        ["wall time (%d worker processes)" % jobs, common.fmt_s(wall)],
        ["random seed", seed],
    ]
    table = common.md_table(["Z3 vs exhaustive", "value"], rows)
    srows = [[p] + [d.get(s, 0) for s in ("proved", "refuted", "unknown", "error")] for p, d in sorted(status_counts.items())]
    table += "\n\nExhaustive verdicts over the compared configurations (Z3 gave the same unless listed below):\n\n"
    table += common.md_table(["property", "proved", "refuted", "unknown", "error"], srows)
    if mismatches or crashes:
        table += "\n\n**MISMATCHES / CRASHES (bugs):**\n\n"
        for m in (mismatches + crashes)[:50]:
            table += f"- `{m['cfg']}`: {m.get('mismatch') or m.get('crash')}\n"
    return table


def part_agree_from_log(args, info) -> str:
    with open(args.agree_log) as f:
        results = [json.loads(line) for line in f if line.strip()]
    wall = float("nan")
    n = sum(1 for r in results if "mismatch" in r)
    note = (f"\n\nRead back from the log of a run with target {args.agree} ({args.agree_log}); "
            + (f"**partial: {n} of {args.agree} configurations were compared before the run was stopped**."
               if n < args.agree else "complete."))
    return agree_summary(results, wall, args.agree_jobs, args.seed) + note


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="sweep,family,agree",
                    help="comma-separated: sweep, family, agree, agree-from-log (summarise --agree-log)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sweep-max", type=int, default=0,
                    help="prove at most this many of the accepted sweep configurations (0: all, ~700: ~15 min)")
    ap.add_argument("--agree", type=int, default=10000, help="random configurations for Z3 vs exhaustive")
    ap.add_argument("--agree-jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--agree-log", default=os.path.join(tempfile.gettempdir(), "symlayout-bench-agree.jsonl"))
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--quick", action="store_true", help="fewer exhaustive samples (development)")
    ap.add_argument("--no-append", action="store_true")
    a = ap.parse_args(argv)
    info = common.machine_info()
    print(common.machine_line(info))
    parts = [p.strip() for p in a.parts.split(",") if p.strip()]
    out = []
    for p in parts:
        t0 = time.perf_counter()
        body = {"sweep": part_sweep, "family": part_family, "agree": part_agree,
                "agree-from-log": part_agree_from_log}[p](a, info)
        out.append((p, body, time.perf_counter() - t0))
    mem = (f"Peak memory: this process ru_maxrss {common.peak_rss_mib():.0f} MiB; largest child process "
           f"(pool workers, CLI runs) ru_maxrss {common.peak_rss_children_mib():.0f} MiB.")
    text = "\n\n".join(f"### {p} ({common.fmt_s(dt)})\n\n{b}" for p, b, dt in out) + "\n\n" + mem + "\n"
    if not a.no_append:
        common.append_results(f"bench/prove.py — {', '.join(parts)}", text, info)
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
