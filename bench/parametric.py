"""Parametric (Z3) prover benchmark (run by hand, never in CI):

    python bench/parametric.py [--repeat R] [--baseline DIR] [--families N] [--no-append]

0. **first** (``--parts first``): what ``symlayout prove proofs/`` pays for the parametric files: in a fresh
   interpreter per round, after the imports the CLI makes before forking (``schedule.preload``), every file of
   ``proofs/`` proved once in the CLI's order, as in one worker (``/work/notes/perfile.py``), the
   ``proofs/parametric/*.toml`` ones timed (first-use costs included: lazy imports, caches filled); with ``--baseline DIR`` the other checkout runs in the same rounds, interleaved; medians of R rounds
   and the ``prove --json`` results of both compared (timings stripped).  One line:
   ``python bench/parametric.py --parts first --repeat 5 --baseline /tmp/base --no-append``
1. **files**: every ``proofs/parametric/*.toml`` and the issue-12 families (interior worst cases, a negative
   floor, huge ranges), each proved in a fresh process (imports excluded, the tile model included): median of R
   runs, with every property's verdict.  ``--baseline DIR`` runs the same measurement on another checkout
   (``PYTHONPATH=DIR``, e.g. a ``git worktree`` of an older commit) in the same session, side by side: time,
   ratio and verdicts (an old verdict that differs is marked).
2. **campaign**: N random families (``symlayout.prove.campaigns.random_families``) proved and compared with their members
   (exhaustive): families and members per second, disagreements (must be 0), unknowns.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

BUMP = "((p+14)//16-p//16)"
HEAD = '[mma]\natom = "{mma}"\nlayout = "{lay}"\n[copy.{op}]\natom = "{atom}"\ntype = "{vt}"\nsmem = "{smem}"\n'
F16 = "SM80_16x8x16_F16F16F16F16_TN"
#: the issue-12 families: name -> (params, mma, layout, operand, atom, type, smem)
ISSUE = {
    "int8 A interior (item 1)": ("p = { min = 1, max = 16 }", "SM80_8x8x16_S32S8S8S32_TN", "(1,1,1)", "A",
                                 "SM75_U32x1_LDSM_N", "int8_t", f"(8,(8,2)):(16,(1,8+65536*{BUMP}))"),
    "bank conflicts interior (item 1)": ("p = { min = 1, max = 16 }", F16, "(2,2,1)", "A", "SM75_U32x4_LDSM_N",
                                         "half_t", f"(32,16):(24+262120*{BUMP},1)"),
    "C store interior (item 1)": ("p = { min = 1, max = 16 }", F16, "(2,2,1)", "C", "SM90_U32x2_STSM_N", "half_t",
                                  f"(32,32):(32+524256*{BUMP},1)"),
    "negative floor (item 2)": ("m = { min = 3, max = 11 }", F16, "(2,2,1)", "A", "SM75_U32x2_LDSM_N", "half_t",
                                "(32,16):(16+4*((m-5)//7),1)"),
    "m, k up to 2^31-1 (item 3)": ("m = { min = 1, max = 2147483647 }\nk = { min = 1, max = 2147483647 }", F16,
                                   "(2,2,1)", "A", "SM75_U32x2_LDSM_N", "half_t", "(32*m,16*k):(16*k,1)"),
}

#: the measurement run in a fresh interpreter (for this checkout or the baseline)
CHILD = r'''
import json, statistics, sys, time
from symlayout.config import loads_config
from symlayout.prove.engine import prove_config
text, repeat = sys.argv[1], int(sys.argv[2])
times, out = [], None
for _ in range(repeat):
    cfg = loads_config(text, "bench.toml")
    t0 = time.perf_counter()
    try:
        rep = prove_config(cfg)
        out = rep.error or {r.property: r.status for r in rep.results}
    except Exception as e:
        out = f"{type(e).__name__}: {e}"
    times.append(time.perf_counter() - t0)
    import symlayout.prove.copy.z3backend as zb
    getattr(zb, "_TILE_CACHE", {}).clear()
print(json.dumps({"s": statistics.median(times), "v": out}))
'''


#: one round of part "first", run in a fresh interpreter: ms per parametric file (proved once, after the CLI's
#: imports) and the reports without their timings
FIRST = r'''
import json, sys, time
from symlayout.prove import schedule
files, _ = schedule.list_files(["proofs/"])
schedule.preload([p for p, _ in files])
out, reps = {}, {}
for p, e in files:
    t0 = time.perf_counter()
    kind, rep = schedule.prove_file(p, e, None, "auto", None)
    if "/parametric/" not in p:
        continue
    out[p] = time.perf_counter() - t0
    reps[p] = json.dumps(rep.to_json() if kind == "report" else rep, sort_keys=True)
print(json.dumps({"s": out, "reports": reps}))
'''


def _strip_times(text: str):
    def go(o):
        if isinstance(o, dict):
            return {k: go(v) for k, v in o.items() if not any(w in k for w in ("time", "second", "_ms", "elapsed"))}
        if isinstance(o, list):
            return [go(x) for x in o]
        return o
    return go(json.loads(text))


def part_first(args) -> str:
    import statistics
    sides = [("this checkout", None)] + ([("baseline", args.baseline)] if args.baseline else [])
    runs = {name: [] for name, _ in sides}
    reports = {}
    for _ in range(args.repeat):
        for name, path in (sides if _ % 2 == 0 else sides[::-1]):       # interleaved, alternating order
            env = dict(os.environ)
            if path:
                env["PYTHONPATH"] = path
            r = subprocess.run([sys.executable, "-c", FIRST], capture_output=True, text=True, env=env,
                               cwd=path or str(common.REPO), timeout=3600)
            if r.returncode:
                raise SystemExit(f"{name}: {r.stderr.strip()[-2000:]}")
            d = json.loads(r.stdout.strip().splitlines()[-1])
            runs[name].append(d["s"])
            reports.setdefault(name, {p: _strip_times(t) for p, t in d["reports"].items()})
    files = sorted(runs["this checkout"][0])
    rows = []
    for f in files + ["total"]:
        med = {name: statistics.median(sum(x.values()) if f == "total" else x[f] for x in runs[name])
               for name, _ in sides}
        row = [f, f"{med['this checkout'] * 1000:.0f} ms"]
        if args.baseline:
            same = "" if f == "total" else ("same" if reports["baseline"][f] == reports["this checkout"][f]
                                              else "DIFFERS")
            row += [f"{med['baseline'] * 1000:.0f} ms", f"{med['baseline'] / med['this checkout']:.2f}x", same]
        rows.append(row)
    head = ["file (proved once, in one process proving proofs/)", "this checkout"]
    if args.baseline:
        head += ["baseline", "baseline / this", "reports (timings stripped)"]
    load = os.getloadavg()
    return (common.md_table(head, rows) + f"\n\nmedian of {args.repeat} fresh-interpreter rounds, interleaved; "
            f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at the end")


def measure(text: str, repeat: int, path: str | None) -> dict:
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = path
    r = subprocess.run([sys.executable, "-c", CHILD, text, str(repeat)], capture_output=True, text=True, env=env,
                       cwd=path or str(common.REPO), timeout=3600)
    if r.returncode:
        return {"s": float("nan"), "v": (r.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def cases():
    for f in sorted((common.REPO / "proofs" / "parametric").glob("*.toml")):
        yield f"proofs/parametric/{f.name}", f.read_text()
    for name, (par, mma, lay, op, atom, vt, smem) in ISSUE.items():
        yield name, f"[params]\n{par}\n" + HEAD.format(mma=mma, lay=lay, op=op, atom=atom, vt=vt, smem=smem)


def short(v) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k} {s[0].upper()}" for k, s in v.items())
    return str(v)[:120]


def part_files(args) -> str:
    rows = []
    for name, text in cases():
        new = measure(text, args.repeat, None)
        row = [name, common.fmt_s(new["s"]), short(new["v"])]
        if args.baseline:
            old = measure(text, args.repeat, args.baseline)
            same = "" if old["v"] == new["v"] else " (differs)"
            ratio = old["s"] / new["s"] if new["s"] == new["s"] and old["s"] == old["s"] else float("nan")
            row += [common.fmt_s(old["s"]), f"{ratio:.2f}x", short(old["v"]) + same]
        rows.append(row)
        print(" | ".join(map(str, row)), flush=True)
    head = ["configuration", "this checkout", "verdicts (P proved, R refuted, U unknown)"]
    if args.baseline:
        head += ["baseline", "baseline / this", "baseline verdicts"]
    return common.md_table(head, rows)


def part_campaign(args) -> str:
    from symlayout.prove.campaigns.random_families import check_family, random_families
    t0 = time.perf_counter()
    fams = members = unknown = 0
    dis = []
    for fam in random_families(args.families, seed=args.seed):
        c = check_family(fam, random.Random(args.seed))
        fams += 1
        members += c.members
        unknown += len(c.unknown)
        dis += [(fam.smem, p, why) for p, why in c.disagreements]
    dt = time.perf_counter() - t0
    rows = [["families", fams], ["members proved exhaustively", members], ["disagreements", len(dis)],
            ["properties left UNKNOWN", unknown], ["time", common.fmt_s(dt)],
            ["families / s", f"{fams / dt:.2f}"]]
    for d in dis[:10]:
        rows.append(["DISAGREEMENT", str(d)])
    return common.md_table([f"random families (seed {args.seed})", "value"], rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", help="another checkout (its root) measured side by side")
    ap.add_argument("--families", type=int, default=20)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--parts", default="files,campaign")
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args()
    body = []
    parts = args.parts.split(",")
    if "first" in parts:
        body.append("### parametric files as `symlayout prove proofs/` meets them (first proof after the imports)\n\n"
                    + part_first(args))
    if "files" in parts:
        body.append("### parametric files (median of fresh-process runs, imports excluded)\n\n" + part_files(args))
    if "campaign" in parts:
        body.append("### families vs members\n\n" + part_campaign(args))
    text = "\n\n".join(body)
    print(text)
    if not args.no_append:
        common.append_results("bench/parametric.py", text)


if __name__ == "__main__":
    main()
