"""``symlayout solve CONFIG [--all] [--minimize EXPR]``.

Reads a solve file (:mod:`symlayout.solve.spec`), searches its unknowns
symbolically (:mod:`symlayout.solve.search`), re-proves the answer with the
ordinary prover and prints it as a completed configuration (TOML) and as CuTe
C++.  Exit codes: 0 a solution found and proved, 1 no solution in the declared
space (proved by Z3; a representative candidate's counterexamples are shown),
2 bad input, 3 unknown (time limit reached, or a minimum / the full list not
established within it).

>>> import pathlib, tempfile, contextlib, io
>>> from types import SimpleNamespace
>>> p = pathlib.Path(tempfile.mkdtemp()) / "pad.toml"
>>> _ = p.write_text('[unknowns]\\npad = { min = 0, max = 16 }\\n[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n'
...                  'layout = "(2,2,1)"\\n[copy.A]\\natom = "SM75_U32x4_LDSM_N"\\ntype = "half_t"\\n'
...                  'smem = "(32,64):(64+?pad,1)"\\n')
>>> with contextlib.redirect_stdout(io.StringIO()) as out:
...     rc = run_solve(SimpleNamespace(config=str(p), all=False, minimize="pad"))
>>> rc, "FOUND     pad = 8" in out.getvalue()
(0, True)
"""
from __future__ import annotations

import os
import sys

from ..errors import printable, ConfigError, SymlayoutError
from .common import UsageError
from ..config import loads_config

EXIT_FOUND, EXIT_NONE, EXIT_INPUT, EXIT_UNKNOWN = 0, 1, 2, 3

HELP = "find the unknown parts of a configuration (a solve file: [unknowns] and '?name' holes)"
EXIT_CODES = {EXIT_FOUND: "a solution found and proved (the minimum, or every solution, when asked and established)",
              EXIT_NONE: "no solution in the declared space (proved by Z3)",
              EXIT_UNKNOWN: "unknown: the time limit reached, or the minimum / full list not established"}


def add_arguments(sp) -> None:
    sp.add_argument("config_path", metavar="CONFIG")
    sp.add_argument("--all", action="store_true", help="enumerate (or count) every solution")
    sp.add_argument("--minimize", default=None, metavar="EXPR", help="pick the solution minimizing EXPR")


def run(args) -> int:
    """``symlayout solve``: the solve file is read here (it holds unknowns, not a configuration)."""
    args.config = args.config_path
    if os.path.isdir(args.config_path):
        raise UsageError(f"{args.config_path}: is a directory, not a configuration file")
    if not os.path.exists(args.config_path):
        raise UsageError(f"{args.config_path}: no such file")
    return run_solve(args)


def _solver():
    try:
        # lazy: the solver only for 'symlayout solve'; other commands start without it
        from ..solve.search import solve
        # lazy: the solver only for 'symlayout solve'; other commands start without it
        from ..solve.spec import load_spec, parse_objective
    except ModuleNotFoundError as e:
        raise UsageError(f"'solve' is not available in this installation ({e.name} is missing)") from None
    return solve, load_spec, parse_objective


def _fmt(values: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in values.items()) or "(no unknowns)"


def describe_space(spec) -> str:
    """One line naming the unknowns, their ranges and the size of the space.

    >>> from symlayout.solve.spec import loads_spec
    >>> describe_space(loads_spec('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n[copy.A]\\n'
    ...                           'atom = "SM75_U32x2_LDSM_N"\\ntype = "half_t"\\nsmem = "Sw<?,3,3> o (32,16):(16,1)"\\n'))
    'unknowns: B in 0..4, |S| >= B; 4 candidates'
    """
    parts = []
    for u in spec.unknowns.values():
        step = f" step {u.multiple_of}" if u.multiple_of > 1 else ""
        parts.append(f"{u.name} in {u.min}..{u.max}{step}")
    if any(c.smem.swizzle is not None and c.smem.swizzle.unknown_names() for c in spec.copies.values()):
        parts.append("|S| >= B")
    n = len(spec.combos())
    choice = f"; {n} combinations of atoms / permutation modes" if n > 1 else ""
    return f"unknowns: {', '.join(parts) or 'none'}{choice}; {spec.space_size()} candidates"


def _results_line(rep) -> str:
    return " ".join(f"{r.property}[{r.operand}]" if r.operand else r.property for r in rep.results)


def _print_report(rep, indent="  "):
    for r in rep.results:
        tag = r.status.upper()
        name = f"{r.property}[{r.operand}]" if r.operand else r.property
        print(f"{indent}{tag:<8} {name:<24} {r.seconds * 1000:7.1f} ms  {r.method}")
        if r.status != "proved":
            if r.counterexample is not None:
                print(f"{indent}         {r.counterexample.message}")
                if r.counterexample.route:
                    print(f"{indent}         route: " + " -> ".join(r.counterexample.route))
            elif r.detail:
                print(f"{indent}         {r.detail}")
    if rep.error:
        print(f"{indent}ERROR    {rep.error}")


def _print_solution(spec, sol):
    # lazy: only 'symlayout solve' writes C++; other commands start without the snippet writer
    from ..prove.report.cute_snippet import snippet
    print()
    print("# completed configuration (TOML)")
    print(sol.text.rstrip())
    print()
    print("// CuTe C++")
    print(snippet(loads_config(sol.text, f"{spec.path} (solution)")))


def run_solve(args) -> int:
    """Run ``symlayout solve`` for ``args.config`` (``args.all``, ``args.minimize``); return the exit code."""
    solve, load_spec, parse_objective = _solver()
    spec = load_spec(args.config)
    minimize = getattr(args, "minimize", None)
    if minimize is not None and not minimize.strip():
        minimize = ""                      # --minimize "": ignore the file's [solve] minimize
    elif minimize is not None:
        try:
            parse_objective(minimize, spec.unknowns)
        except SymlayoutError as e:
            raise ConfigError(f"--minimize {minimize!r}: {e}") from None
    want_all = bool(getattr(args, "all", False))
    out = solve(spec, all=want_all, minimize=minimize)
    obj = out.objective
    print(printable(f"{spec.path}  ({spec.name})"))
    print(f"  {describe_space(spec)}")
    print(f"  properties: {', '.join(spec.properties)}")
    st = out.stats
    z3line = (f"z3: {st['cegis_rounds']} CEGIS rounds, {st['instances']} rest-tile instances, "
              f"{st['proofs']} prover checks; {out.seconds:.2f} s")
    for vals, combo, why in out.disagreements:
        print(f"  note: the prover refuted a Z3 answer ({_fmt(vals)}, {combo.describe()}: {why}); it was excluded",
              file=sys.stderr)
    if out.status == "found":
        if want_all:
            total = len(out.solutions)
            scope = "every solution in the space" if out.complete else \
                f"stopped at {total}: [solve] max_solutions" if total >= spec.max_solutions else "time limit reached"
            head = f"{total} solution{'s' if total != 1 else ''}"
            if obj:
                head += (f" with the minimum {obj} = {out.solutions[0].objective} (of {st.get('found', total)} "
                         f"solutions found)")
            print(f"  FOUND     {head} ({scope})")
            for i, sol in enumerate(out.solutions, 1):
                verdict = "PROVED" if sol.proved else "NOT PROVED"
                choice = f"   {sol.combo.describe()}" if spec.has_choices else ""
                print(f"    {i:3d}. {_fmt(sol.values):<40} {verdict}{choice}")
        else:
            sol = out.solutions[0]
            choice = f"   ({sol.combo.describe()})" if spec.has_choices else ""
            print(f"  FOUND     {_fmt(sol.values)}{choice}")
            if obj:
                if out.optimal:
                    print(f"            minimize {obj}: {sol.objective} is optimal -- no solution with {obj} < "
                          f"{sol.objective} in the space (z3: unsat)")
                else:
                    print(f"            minimize {obj}: {sol.objective} is the best found; optimality not established "
                          f"({out.detail})")
        print(f"            {z3line}")
        first = out.solutions[0]
        if first.report is not None:
            if first.proved:
                print(f"  PROVED    by the prover on the completed configuration: {_results_line(first.report)}")
            else:
                print("  the prover did not prove the completed configuration:")
                _print_report(first.report, "    ")
        if want_all and len(out.solutions) > 1:
            print(f"\n(the completed configuration of solution 1 of {len(out.solutions)})")
        _print_solution(spec, first)
        if not all(s.proved for s in out.solutions if s.report is not None):
            return EXIT_UNKNOWN
        if not out.complete or (obj and not out.optimal):
            return EXIT_UNKNOWN
        return EXIT_FOUND
    if out.status == "unknown":
        print(f"  UNKNOWN   {out.detail} after {out.seconds:.1f} s (time limit {spec.timeout_s:g} s: "
              f"raise [solve] timeout_s)")
        print(f"            {z3line}")
        return EXIT_UNKNOWN
    print(f"  NO SOLUTION in the declared space ({spec.space_size()} candidates; z3: unsat)")
    print(f"            {z3line}")
    if out.reasons:
        print("  why:")
        for combo, why in out.reasons:
            where = f"{combo.describe()}: " if spec.has_choices or combo.permutation else ""
            print(f"    - {where}{why}")
    rep = out.representative
    if rep is not None:
        print(f"  a representative candidate, {_fmt(rep.values)}"
              + (f" ({rep.combo.describe()})" if spec.has_choices else "") + ", by the prover:")
        if rep.report is not None:
            _print_report(rep.report, "    ")
        print()
        print("# the representative candidate (TOML)")
        print(rep.text.rstrip())
    return EXIT_NONE
