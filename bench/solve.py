"""Layout-synthesis benchmark (run by hand, never in CI):

    python bench/solve.py [--repeat R] [--cases a,b,...] [--no-append] [--enum-timeout S]

For each acceptance case of ``symlayout solve`` (``docs/solve/examples/*.toml``) and two scaled variants
(a 256-row swizzled tile; a pad range 0..1024 on a 128-row tile), it measures

* **solve**: ``symlayout.solve.solve`` in process, as ``symlayout solve`` runs it (the file's ``[solve]
  minimize``): the symbolic Z3 search (CEGIS over the rest tiles), the optimality proof, the tie-break, and
  the final proof of the answer by the ordinary prover; for a space with no solution, the decision alone
  (``explain=False``) and with the explanation (which property is to blame, and the representative
  candidate's counterexamples) -- median of R runs;
* **enumerate**: the same space through the ordinary prover, candidate by candidate
  (``symlayout.solve.brute_force``): to the first solution in objective order (the optimum; a fair baseline
  for ``--minimize``), and over the whole space (the baseline for ``--all`` and for "no solution");
* **agree**: ``solve(all=True)`` (every solution, found symbolically by blocking) against the enumeration's
  solution set.  A mismatch is a bug and is printed prominently.

Appends a section to bench/RESULTS.md through ``bench/common.py``'s ``append_results`` (or writes
bench/RESULTS-solve.md when that helper is missing).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
try:
    import common  # noqa: E402
except ImportError:  # pragma: no cover - the helper belongs to another part of bench/
    common = None

from symlayout.solve import brute_force, loads_spec, solve  # noqa: E402

EXAMPLES = REPO / "docs" / "solve" / "examples"

#: (key, file, text transformation, what it asks)
CASES = [
    ("a64", "a_k64_swizzle.toml", None, "(a) A (64,64) K-major half, LDSM x4: Sw<?,?,?>, min B"),
    ("a32", "a_k32_swizzle.toml", None, "(a) A (64,32) K-major half, LDSM x4: Sw<?,?,?>, min B"),
    ("pad", "b_row_pad.toml", None, "(b) A (32,64):(64+?pad,1), pad 0..64, min pad"),
    ("c-nmajor", "c_1953_nmajor.toml", None, "(c) #1953 int8 B LDSM_T, N-major, Sw<?,?,?>"),
    ("c-kmajor", "c_1953_kmajor.toml", None, "(c) #1953 int8 B LDSM_T, K-major, Sw<?,?,?>"),
    ("c-kpair", "c_1953_kpair.toml", None, "(c) #1953 int8 B LDSM_T, K-pair N-major, Sw<?,?,?> x 2 N permutations, min B"),
    ("atoms", "atom_choice.toml", None, "int8 B K-major, atom in {LDSM_T, LDSM_N} x Sw<?,?,?>, min B"),
    ("a64x256", "a_k64_swizzle.toml", lambda t: t.replace("(64,64):(64,1)", "(256,64):(64,1)"),
     "scaled (a): A (256,64) K-major, Sw<?,?,?>, min B"),
    ("pad1024", "b_row_pad.toml",
     lambda t: t.replace("(32,64):(64+?pad,1)", "(128,64):(64+?pad,1)").replace("max = 64", "max = 1024"),
     "scaled (b): A (128,64):(64+?pad,1), pad 0..1024, min pad"),
]


def _fmt(values: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())


def _s(x: float) -> str:
    return common.fmt_s(x) if common else f"{x:.2f} s"


def run_case(key, fname, transform, what, repeat, enum_timeout):
    text = (EXAMPLES / fname).read_text()
    if transform:
        text = transform(text)
    spec = loads_spec(text, f"{fname}" + (f" [{key}]" if transform else ""))
    row = {"case": key, "what": what, "space": spec.space_size()}
    # symbolic search, as `symlayout solve` runs it
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = solve(spec, explain=False)
        times.append(time.perf_counter() - t0)
    row["solve_s"] = statistics.median(times)
    if out.status == "found":
        sol = out.solutions[0]
        row["answer"] = _fmt(sol.values) + (f" ({sol.combo.describe()})" if spec.has_choices else "")
        row["answer"] += "; optimal" if out.optimal else ""
        row["proved"] = sol.proved
        row["explain_s"] = None
    else:
        row["answer"] = "no solution" if out.status == "none" else f"unknown: {out.detail}"
        row["proved"] = out.status == "none"
        t0 = time.perf_counter()
        full = solve(spec)
        row["explain_s"] = time.perf_counter() - t0
        row["why"] = "; ".join(w for _c, w in full.reasons)
    row["rounds"] = out.stats.get("cegis_rounds")
    row["instances"] = out.stats.get("instances")
    # every solution, symbolically
    t0 = time.perf_counter()
    every = solve(spec, all=True, minimize="", explain=False)
    row["all_s"] = time.perf_counter() - t0
    z3_set = sorted((tuple(s.values.items()), s.combo.describe()) for s in every.solutions)
    # the baseline: enumeration through the prover
    if spec.minimize:
        sols, n, sec, complete = brute_force(spec, minimize=spec.minimize, first_only=True, timeout_s=enum_timeout)
        row["enum_first_s"], row["enum_first_n"] = sec, n
        row["enum_first_ok"] = complete
    else:
        row["enum_first_s"] = row["enum_first_n"] = None
    sols, n, sec, complete = brute_force(spec, timeout_s=enum_timeout)
    row["enum_all_s"], row["enum_all_n"], row["enum_all_complete"] = sec, n, complete
    enum_set = sorted((tuple(v.items()), c.describe()) for v, c in sols)
    row["solutions"] = len(z3_set)
    row["agree"] = (z3_set == enum_set) if complete else None
    if complete and z3_set != enum_set:
        print(f"!!! MISMATCH in {key}: z3 {z3_set} vs enumeration {enum_set}", file=sys.stderr)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default=",".join(k for k, *_ in CASES))
    ap.add_argument("--no-append", action="store_true")
    ap.add_argument("--enum-timeout", type=float, default=900.0, help="seconds per enumeration (default 900)")
    args = ap.parse_args(argv)
    want = set(args.cases.split(","))
    rows = []
    for key, fname, tr, what in CASES:
        if key not in want:
            continue
        r = run_case(key, fname, tr, what, args.repeat, args.enum_timeout)
        rows.append(r)
        print(f"{key:9s} space {r['space']:5d}  solve {_s(r['solve_s']):>9}  all {_s(r['all_s']):>9}  "
              f"enum-first {(_s(r['enum_first_s']) + ' (' + str(r['enum_first_n']) + ')') if r['enum_first_s'] is not None else '-':>16}  "
              f"enum-all {_s(r['enum_all_s']):>9} ({r['enum_all_n']})  {r['answer']}  agree={r['agree']}", flush=True)
    headers = ["case", "question", "space", "answer (proved)", "solve (Z3)", "no-solution explanation",
               "CEGIS rounds / instances", "enumerate to optimum", "all solutions (Z3)", "enumerate whole space",
               "solutions (Z3 = enum)"]
    table = []
    for r in rows:
        enum_first = f"{_s(r['enum_first_s'])} ({r['enum_first_n']} proofs)" if r["enum_first_s"] is not None else "-"
        enum_all = f"{_s(r['enum_all_s'])} ({r['enum_all_n']} proofs)" + ("" if r["enum_all_complete"] else ", timed out")
        agree = {True: "yes", False: "**NO**", None: "n/a"}[r["agree"]]
        table.append([r["case"], r["what"], r["space"], f"{r['answer']} ({'yes' if r['proved'] else 'NO'})",
                      _s(r["solve_s"]), _s(r["explain_s"]) if r["explain_s"] is not None else "-",
                      f"{r['rounds']} / {r['instances']}", enum_first, _s(r["all_s"]), enum_all,
                      f"{r['solutions']} ({agree})"])
    md = (common.md_table(headers, table) if common else _md(headers, table))
    notes = [r for r in rows if r.get("why")]
    if notes:
        md += "\n\nWhy no solution:\n\n" + "\n".join(f"* {r['case']}: {r['why']}" for r in notes)
    md += (f"\n\nsolve: median of {args.repeat} runs, in process, the file's `[solve] minimize`, including the final "
           "proof by the prover; for no-solution spaces the decision alone, and the explanation separately. "
           "Enumeration: `brute_force` (prove_config on every candidate), in objective order up to the first "
           "solution, and over the whole space.\n")
    print()
    print(md)
    if args.no_append:
        return 0
    if common is not None and hasattr(common, "append_results"):
        common.append_results("Layout synthesis (symlayout solve)", md)
    else:
        out = HERE / "RESULTS-solve.md"
        with open(out, "a") as f:
            f.write(f"\n## Layout synthesis (symlayout solve) — {time.strftime('%Y-%m-%d %H:%M')}\n\n{md}\n")
        print(f"(appended to {out})")
    return 0


def _md(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    return "\n".join(out + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


if __name__ == "__main__":
    sys.exit(main())
