"""``symlayout prove PATH...``: prove configuration files and report each result.

Every readable configuration is proved; a file that cannot be read is reported
in place (one ``ERROR`` line, an ``"error"`` entry in ``--json``) and the exit
code is 2 at the end.  In a directory, TOML files that are not configurations
(``pyproject.toml``, solve inputs) are skipped (``-v`` says so).

Exit codes (``shared/spec/configs.md``): 0 every result as expected, 1 some
expectation unmet (a property refuted unexpectedly, an expected refutation
proved, or a ``vacuous`` result where ``proved`` was expected), 2 bad input
(some file), 3 some result unknown and none wrong, 4 an internal error (a bug) in some file: that
file's ``error`` result, the others still proved and reported.
"""
from __future__ import annotations

import json
import sys
import time

from ..errors import printable
from ..prove.verdict.result import ERROR, REFUTED, UNKNOWN
from ..prove.verdict.summary import exit_code, summary, unmet
from .common import EXIT_INTERNAL, EXIT_OK, EXIT_REFUTED, EXIT_UNKNOWN, EXIT_USAGE, Style, positive_int, \
    positive_seconds, property_name, properties, use_colour
from ..prove.engine import prove_many, ConfigReport
from ..prove.schedule import list_files, prove_files, default_jobs, shard_files
from ..prove.copy.story import format_route
from .common import print_error
from ..config import load_config

HELP = "prove the properties of configuration files (directories: every configuration *.toml below)"
EXIT_CODES = {
    EXIT_OK: "every result as expected",
    EXIT_REFUTED: "an expectation unmet: a property refuted unexpectedly, an expected refutation proved, "
                  "or vacuous where proved was expected (the summary names each)",
    EXIT_USAGE: "bad input: some file could not be read (the others are still proved), or a bad option",
    EXIT_UNKNOWN: "some result unknown (e.g. a solver timeout) and none unmet",
    EXIT_INTERNAL: "internal error (a bug): in some file, that file's error result (the others still reported), "
                   "or in the command",
}
LOADS = "files"          # (the files are read where they are proved: symlayout/prove/schedule.py)


def add_arguments(sp) -> None:
    sp.add_argument("paths", nargs="+", metavar="PATH", help="configuration files or directories")
    sp.add_argument("--json", action="store_true", help="print one JSON document (see docs/configs.md)")
    sp.add_argument("-q", "--quiet", action="store_true",
                    help="print only refutations, unmet expectations and errors (and the summary)")
    sp.add_argument("-v", "--verbose", action="store_true", help="also name the files skipped as not configurations")
    sp.add_argument("--jobs", type=positive_int, default=None, metavar="N",
                    help="prove files side by side in N processes (default: one per CPU; 1: in this process)")
    sp.add_argument("--shard", type=shard_spec, default=None, metavar="I/N",
                    help="prove only the I-th of N disjoint parts of the files (a CI matrix: I = 1..N; every file "
                         "is in exactly one part, the parts balanced by an estimate of their cost)")
    sp.add_argument("--method", choices=("auto", "exhaustive", "z3"), default="auto",
                    help="decide concrete configurations by exhaustive evaluation (auto) or with Z3 "
                         "(parametric configurations always use Z3)")
    sp.add_argument("--timeout", type=positive_seconds, default=None, metavar="S",
                    help="per-property timeout in seconds (overrides [prove] timeout_s)")
    sp.add_argument("--property", dest="property", action="append", type=property_name, default=None,
                    metavar="P", help="prove only this property (repeatable): " + ", ".join(properties()))
    sp.add_argument("--html", default=None, metavar="FILE",
                    help="also write a self-contained HTML report (verdict table and pictures)")
    sp.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                    help="colour the verdicts (auto: on a terminal, unless NO_COLOR is set)")


#: most shards ``--shard I/N`` may name (a CI matrix has far fewer jobs)
MAX_SHARDS = 1 << 20


def shard_spec(s: str) -> tuple:
    """``"I/N"`` -> ``(I, N)`` with ``1 <= I <= N``."""
    import argparse
    try:
        i, n = (int(x) for x in s.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected I/N (e.g. 2/8), got {s!r}") from None
    if not 1 <= i <= n:
        raise argparse.ArgumentTypeError(f"expected I/N with 1 <= I <= N, got {s!r}")
    if n > MAX_SHARDS:
        raise argparse.ArgumentTypeError(f"expected I/N with N <= {MAX_SHARDS}, got {s!r}")
    return i, n


# ---------------------------------------------------------------- proving


def prove_configs(configs, properties=None, jobs: int = 1, timeout_s=None, method="auto") -> list:
    """Prove loaded configurations (in ``jobs`` processes, piece by piece: :func:`symlayout.prove.engine.prove_many`);
    one ConfigReport each, in order."""
    return prove_many(list(configs), properties, jobs, timeout_s, method)


def error_reports(failures) -> list:
    """ConfigReports for files that could not be read (``(path, message)`` pairs)."""
    return [ConfigReport(path, "", error=msg) for path, msg in failures]


def in_order(reports, order=None) -> list:
    """Reports of proved files and of unreadable ones in the order the files were named
    (``order``: their paths; errors in place)."""
    if not order:
        return list(reports)
    rank = {p: i for i, p in reversed(list(enumerate(order)))}
    return sorted(reports, key=lambda r: rank.get(r.path, len(rank)))


def prove_paths(paths, properties=None, jobs: int = 1, timeout_s=None, method="auto"):
    """Load and prove every config under ``paths``, each file read and proved in one of ``jobs`` processes
    as ``symlayout prove`` does (:func:`symlayout.prove.schedule.prove_files`); a list of ConfigReport: the
    configurations in order, then the paths and files that could not be read."""
    files, failures = list_files(paths)
    reports, failures = [], list(failures)
    for (path, _explicit), (kind, ans) in zip(files, prove_files(files, properties, jobs, timeout_s, method)):
        if kind == "report":
            reports.append(ans)
        elif kind == "error":
            failures.append((path, ans))
    return reports + error_reports(failures)


# ---------------------------------------------------------------- text


def _interesting(r) -> bool:
    """What ``-q`` keeps: refutations, unmet expectations, unknowns and errors."""
    return r.status in (REFUTED, UNKNOWN, ERROR) or not r.as_expected


def format_text(reports, verbose: bool = False, quiet: bool = False, style: Style | None = None) -> str:
    """The human report: one line per config and property, counterexamples under it,
    then the unmet expectations by name and the summary line."""
    style = style or Style(False)
    lines = []
    for rep in reports:
        title = printable(rep.path + (f"  ({rep.name})" if rep.name else ""))
        if rep.error:
            lines.append(f"{style('error', 'ERROR')}    {printable(rep.error)}")
            continue
        shown = [r for r in rep.results if _interesting(r)] if quiet else rep.results
        if quiet and not shown:
            continue
        lines.append(style("bold", title))
        for r in shown:
            tag = style(r.status, f"{r.status.upper():8s}")
            note = ""
            if r.status != r.expected:
                note = "  " + style("error", f"<-- expected {r.expected.upper()}")
            elif r.expected == REFUTED:
                note = "  " + style("expected", "(expected)")
            extra = []
            if r.method:
                extra.append(r.method)
            if r.checked is not None:
                extra.append(f"{r.checked} checked")
            for k, v in (r.stats or {}).items():
                extra.append(f"{v} {k.replace('_', ' ')}")
            op = (f"[{r.operand}]" if r.operand else "") + (f" via {r.via}" if getattr(r, "via", "") else "")
            lines.append(f"  {tag} {r.property + op:20s} {r.seconds * 1000:8.1f} ms  {', '.join(extra)}{note}")
            if r.detail:
                lines.append(f"           {printable(r.detail)}")
            if r.counterexample is not None:
                cx = r.counterexample
                lines.append(f"           {printable(cx.message)}")
                if cx.params:
                    lines.append(f"           with {', '.join(f'{k} = {v}' for k, v in cx.params.items())}")
                if cx.route:
                    lines.append(f"           route: {format_route(cx.route)}")
    for path, name, status, expected in unmet(reports):
        lines.append(style("error", "UNMET") + f"    {printable(path)}: {name} {status}, expected {expected}")
    s = summary(reports)
    lines.append(f"{s['proved']} proved, {s['refuted']} refuted, {s['vacuous']} vacuous, {s['unknown']} unknown, "
                 f"{s['errors']} errors, {s['unmet']} unmet")
    return "\n".join(lines)


def json_document(reports, skipped=()) -> dict:
    """The ``--json`` document: ``configs`` (errors in place), ``summary`` and ``skipped``."""
    doc = {"configs": [r.to_json() for r in reports], "summary": summary(reports)}
    if skipped:
        doc["skipped"] = [{"path": p, "reason": why} for p, why in skipped]
    return doc


def prove_listed(args) -> tuple:
    """Prove ``args.files`` (this shard's, in ``args.jobs`` processes); ``(reports, failures)``, with
    ``args.skipped`` extended by the files of a directory that are not configurations."""
    files = args.files
    if args.shard is not None:
        keep = set(shard_files([p for p, _ in files], *args.shard))
        files = [f for f in files if f[0] in keep]
    answers = prove_files(files, args.property or None, args.jobs or default_jobs(), args.timeout, args.method)
    reports, failures = [], list(args.load_errors)
    for (path, _), (kind, what) in zip(files, answers):
        if kind == "report":
            reports.append(what)
        elif kind == "error":
            failures.append((path, what))
        else:
            args.skipped.append((path, what))
    return reports, failures


def run(args) -> int:
    """``symlayout prove``: ``args.files`` / ``args.load_errors`` come listed (the files are read where they
    are proved).  Every file is reported in place, the ``--json`` document always printed."""
    t0 = time.perf_counter()
    proved, failures = prove_listed(args)
    if not proved and not failures:
        failures = [(", ".join(args.paths), f"no configuration found under {', '.join(args.paths)} "
                     f"({len(args.skipped)} TOML files are not configurations; -v names them)")]
    if not proved and not args.json:             # nothing readable: the errors alone, on stderr
        for _path, msg in failures:
            print_error(msg)
        return EXIT_USAGE
    reports = in_order(proved + error_reports(failures), args.order)
    code = exit_code(reports)
    if args.json:
        print(json.dumps(json_document(reports, args.skipped), indent=1))
    else:
        if args.verbose:
            for p, why in args.skipped:
                print(f"skipped  {p}: not a configuration: {why}")
        style = Style(use_colour(sys.stdout, args.color))
        print(format_text(reports, quiet=args.quiet, style=style))
        print(f"# {time.perf_counter() - t0:.2f} s, exit {code}")
    for rep in reports:                          # errors on stderr too, one line each
        if rep.error:
            print_error(rep.error)
    if args.html:
        # lazy: the HTML report only with --html; 'symlayout prove FILE' starts without it
        from ..prove.report.report_html import write_html
        write_html(args.html, reports, [load_config(r.path) for r in proved if not r.error], args.skipped)
        if not args.json:
            print(f"wrote {args.html}")
    return code
