"""An autotuner's space of concrete configurations proved at scale (issue 18), by hand, never in CI:

    python bench/sweep.py [--n 100000] [--jobs 1,2] [--shards 4] [--xdist 2000] [--no-append]

1. **space**: the grid an SM80 autotuner walks (MMA atom x warp layout x operand x copy atom x tile size x
   row pitch x swizzle x base alignment: ``space()``, 117,000 points), shuffled with a fixed seed; the
   first ``--n`` are written as configuration files into a temporary directory (CuTe rejects some: they are
   reported as such, as a user would see them).
2. **jobs**: the whole directory proved as ``symlayout prove DIR`` proves it (``prove_files``: forked workers
   that read and prove whole files), for each ``--jobs``: wall time, configurations/s, the time 100,000 take at
   that rate, peak RSS of the parent (which holds every report) and of a worker (``RUSAGE_CHILDREN``: the
   largest), and the summary (identical for every ``--jobs``: checked).
3. **shards**: ``symlayout prove DIR --shard I/N --jobs 1`` for I = 1..N, one after another (a CI matrix of N
   one-core jobs): every file in exactly one shard (the union of the shards' summaries is the whole one), the
   slowest shard's wall time (what the matrix waits for) and the spread.
4. **xdist** (``--xdist M``): the first M files under a ``proofs/`` folder collected by the pytest plugin and run
   with ``pytest -n 2 --dist loadfile`` (pytest-xdist distributes the files): wall time and items.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

#: MMA atom -> (A/B value type, bytes per A/B element, atom K, C value type for a 16-bit STSM or None)
MMA = {
    "SM80_16x8x16_F16F16F16F16_TN": ("half_t", 2, 16, "half_t"),
    "SM80_16x8x8_F16F16F16F16_TN": ("half_t", 2, 8, "half_t"),
    "SM80_16x8x16_F32BF16BF16F32_TN": ("bfloat16_t", 2, 16, None),
    "SM80_16x8x8_F32TF32TF32F32_TN": ("tfloat32_t", 4, 8, None),
    "SM80_16x8x32_S32S8S8S32_TN": ("int8_t", 1, 32, None),
}
LAYOUTS = ["(1,1,1)", "(2,1,1)", "(1,2,1)", "(2,2,1)", "(4,2,1)"]
AB_COPIES = ["SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N", "SM75_U16x8_LDSM_T",
             "UniversalCopy<uint32_t>", "UniversalCopy<uint128_t>", "AutoVectorizingCopy"]
C_COPIES = ["SM90_U32x1_STSM_N", "SM90_U32x2_STSM_N", "SM90_U32x4_STSM_N", "UniversalCopy<uint32_t>"]
PADS = [0, 2, 4, 8, 16]
SWIZZLES = [None, "Sw<1,3,3>", "Sw<2,3,3>", "Sw<3,3,3>", "Sw<2,4,3>"]
ALIGNS = [128, 16, 8]


def space():
    """Every point of the grid: ``(atom, layout, operand, copy, type, smem, align)``."""
    for atom, (vt, nb, ak, ct) in MMA.items():
        for lay in LAYOUTS:
            wm, wn, _ = (int(x) for x in lay.strip("()").split(","))
            for op in ("A", "B", "C") if ct else ("A", "B"):
                copies = C_COPIES if op == "C" else AB_COPIES
                for cp, rm, km, pad, sw, al in itertools.product(copies, (1, 2), (1, 2), PADS, SWIZZLES, ALIGNS):
                    if op == "C":
                        rows, cols = 16 * wm * rm, 8 * wn * km
                    else:
                        rows, cols = (16 * wm if op == "A" else 8 * wn) * rm, ak * km * 2
                    smem = f"({rows},{cols}):({cols + pad},1)"
                    if sw:
                        smem = f"{sw} o 0 o {smem}"
                    yield atom, lay, op, cp, ct if op == "C" else vt, smem, al


def config_text(i, atom, lay, op, cp, vt, smem, al) -> str:
    return (f'name = "point {i}"\n\n[mma]\natom = "{atom}"\nlayout = "{lay}"\n\n'
            f'[copy.{op}]\natom = "{cp}"\ntype = "{vt}"\nsmem = "{smem}"\nalign = {al}\n')


def write_space(d: Path, n: int, seed: int) -> int:
    pts = list(space())
    random.Random(seed).shuffle(pts)
    for i, p in enumerate(pts[:n]):
        (d / f"p{i:06d}.toml").write_text(config_text(i, *p))
    return len(pts)


CHILD = r'''
import json, resource, sys, time
t0 = time.perf_counter()
from symlayout.prove.schedule import list_files, prove_files, shard_files
from symlayout.prove.verdict.summary import summary
d, jobs, shard = sys.argv[1], int(sys.argv[2]), sys.argv[3]
files, _ = list_files([d])
if shard != "-":
    i, n = (int(x) for x in shard.split("/"))
    keep = set(shard_files([p for p, _ in files], i, n))
    files = [f for f in files if f[0] in keep]
answers = prove_files(files, None, jobs)
reps = [a[1] for a in answers if a[0] == "report"]
s = summary(reps)
print("@@" + json.dumps({"n": len(files), "seconds": time.perf_counter() - t0, "summary": s,
                         "load_errors": sum(1 for a in answers if a[0] == "error"),
                         "self_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                         "worker_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
'''


def child(d: Path, jobs: int, shard: str = "-") -> dict:
    env = dict(os.environ, PYTHONPATH=str(common.REPO))
    r = subprocess.run([sys.executable, "-c", CHILD, str(d), str(jobs), shard], capture_output=True, text=True,
                       env=env)
    lines = [x for x in r.stdout.splitlines() if x.startswith("@@")]
    if not lines:
        raise SystemExit(r.stderr[-2000:])
    return json.loads(lines[-1][2:])


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--shards", type=int, default=4, help="N of the --shard I/N run (0: none)")
    ap.add_argument("--xdist", type=int, default=0, help="files for the pytest -n 2 run (0: none)")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--no-append", action="store_true")
    a = ap.parse_args(argv)
    info = common.machine_info()
    tmp = Path(tempfile.mkdtemp(prefix="symlayout-sweep-"))
    out = []
    try:
        d = tmp / "proofs"
        d.mkdir()
        t = time.perf_counter()
        total = write_space(d, a.n, a.seed)
        n = len(list(d.glob("*.toml")))
        out.append(f"Space: {total} points (`bench/sweep.py: space()`), {n} written in {time.perf_counter() - t:.1f} s.\n")
        rows, sums = [], []
        for jobs in (int(j) for j in a.jobs.split(",")):
            r = child(d, jobs)
            rate = r["n"] / r["seconds"]
            s = r["summary"]
            sums.append(s)
            rows.append([f"--jobs {jobs}", r["n"], common.fmt_s(r["seconds"]), f"{rate:.0f}",
                         f"{100000 / rate / 60:.1f} min", f"{r['self_mib']:.0f} MiB",
                         f"{r['worker_mib']:.0f} MiB" if jobs > 1 else "-",
                         f"proved {s['proved']}, refuted {s['refuted']}, vacuous {s['vacuous']}, unknown "
                         f"{s['unknown']}, errors {s['errors']}", _load()])
            print(rows[-1], flush=True)
        out.append(common.md_table(["whole directory (prove_files)", "configurations", "wall", "per s",
                                    "100,000 at this rate", "peak RSS parent", "peak RSS per worker", "summary",
                                    "load avg after"], rows))
        out.append(f"\nSummaries identical for every --jobs: **{all(x == sums[0] for x in sums)}**.\n")
        if a.shards:
            srows, tot = [], {}
            for i in range(1, a.shards + 1):
                r = child(d, 1, f"{i}/{a.shards}")
                for k, v in r["summary"].items():
                    tot[k] = tot.get(k, 0) + v
                srows.append([f"--shard {i}/{a.shards} --jobs 1", r["n"], common.fmt_s(r["seconds"]),
                              f"{r['self_mib']:.0f} MiB", _load()])
                print(srows[-1], flush=True)
            out.append(common.md_table(["CI matrix (one core per shard)", "configurations", "wall", "peak RSS",
                                        "load avg after"], srows))
            same = {k: tot.get(k) for k in sums[0]} == sums[0] if sums else None
            out.append(f"\nShards: {sum(r[1] for r in srows)} files in {a.shards} shards; the shards' summaries "
                       f"add up to the whole one: **{same}**.\n")
        if a.xdist:
            x = tmp / "x" / "proofs"
            x.mkdir(parents=True)
            for f in sorted(d.glob("*.toml"))[:a.xdist]:
                shutil.copy(f, x / f.name)
            t = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadfile", "-p", "no:cacheprovider",
                                "--rootdir", str(x.parent), str(x)], capture_output=True, text=True,
                               cwd=str(x.parent), env=dict(os.environ, PYTHONPATH=str(common.REPO)))
            dt = time.perf_counter() - t
            last = (r.stdout.strip().splitlines() or ["?"])[-1]
            out.append(f"pytest -n 2 --dist loadfile over {a.xdist} files (the plugin's items, distributed by pytest-xdist): "
                       f"{dt:.1f} s, `{last}`; load avg after {_load()}.\n")
            print(out[-1], flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = "\n".join(out)
    print(text)
    if not a.no_append:
        common.append_results("bench/sweep.py — an autotuner's space at scale (issue 18)", text, info,
                              "python bench/sweep.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
