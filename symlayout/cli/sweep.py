"""``symlayout sweep SPEC``: prove every candidate of a tuning space, keep the legal ones (docs/sweep.md).

The table goes to ``-o`` (CSV, default ``SPEC-stem.sweep.csv`` in the working directory), appended per batch:
a rerun of a killed sweep proves only what is not in it yet.  ``--json`` prints the whole table as JSON,
``--parquet FILE`` writes it as Parquet (needs pyarrow), ``--emit toml|cute DIR`` writes the legal candidates.
"""
from __future__ import annotations

import os
import sys
from importlib.util import find_spec

from .common import EXIT_OK, EXIT_UNKNOWN, EXIT_USAGE, UsageError, positive_int

HELP = "prove every candidate of a tuning space (a sweep spec) and keep the legal ones"
EXIT_CODES = {
    EXIT_OK: "every candidate decided: legal, illegal, pruned or invalid (the table says which)",
    EXIT_USAGE: "bad input (the spec, an output, the command line; a template none of whose candidates is valid), "
                "or command not available",
    EXIT_UNKNOWN: "some candidate unknown (a proof timed out) and the others decided: the legal set may miss it",
}


def add_arguments(sp) -> None:
    sp.add_argument("spec_path", metavar="SPEC")
    sp.add_argument("-o", "--output", default=None, metavar="CSV",
                    help="the table (default: SPEC-stem.sweep.csv here); resumed when it exists")
    sp.add_argument("--fresh", action="store_true", help="start over: remove the table first")
    sp.add_argument("--json", action="store_true", help="print the table as one JSON document")
    sp.add_argument("--parquet", default=None, metavar="FILE", help="also write the table as Parquet (pyarrow)")
    sp.add_argument("--emit", nargs=2, default=None, metavar=("toml|cute", "DIR"),
                    help="write each legal candidate as a configuration file or a CuTe C++ program")
    sp.add_argument("--workers", type=positive_int, default=1, metavar="N",
                    help="N > 1: a Dask LocalCluster of N processes (needs dask[distributed])")
    sp.add_argument("--scheduler", default=None, metavar="ADDRESS", help="a running Dask scheduler instead")
    sp.add_argument("--batch", type=positive_int, default=None, metavar="N", help="candidates per task")
    sp.add_argument("-q", "--quiet", action="store_true", help="no progress")


def run(args) -> int:
    # lazy: only 'symlayout sweep' needs the sweep package; other commands start without it
    from ..sweep import emit_ids, load_spec, sweep_table
    from ..sweep.table import write_json, write_parquet  # lazy: as above
    if args.emit is not None and args.emit[0] not in ("toml", "cute"):
        raise UsageError(f"--emit {args.emit[0]}: give toml or cute")
    if args.workers > 1 and args.scheduler:
        raise UsageError("give --workers N (a LocalCluster) or --scheduler ADDRESS (a running cluster), not both")
    if (args.workers > 1 or args.scheduler) and not _has_dask():
        raise UsageError("--workers/--scheduler need Dask: pip install 'dask[distributed]' (or symlayout[sweep])")
    spec = load_spec(args.spec_path)
    out = args.output or os.path.splitext(os.path.basename(args.spec_path))[0] + ".sweep.csv"
    _check_outputs(args, out)
    table = sweep_table(spec, out, workers=args.workers, scheduler=args.scheduler, batch=args.batch,
                        fresh=args.fresh, progress=None if args.quiet else _progress())
    rows = table.rows() if args.json or args.parquet else None      # typed rows only when written
    if args.parquet:
        write_parquet(args.parquet, spec, rows)
    emitted = emit_ids(spec, sorted(table.legal), args.emit[0], args.emit[1]) if args.emit else None
    s = table.summary()
    if args.json:
        write_json(spec, rows, sys.stdout)
    else:
        more = f"; {emitted} written to {args.emit[1]}" if emitted is not None else ""
        print(f"{len(table)} candidates: " + ", ".join(f"{v} {k}" for k, v in s.items()) + f" -> {out}{more}")
    _no_candidate_valid(spec, table, s)
    return EXIT_UNKNOWN if s["unknown"] else EXIT_OK


def _no_candidate_valid(spec, table, s: dict) -> None:
    """A template none of whose candidates (within the budgets) is valid is a bad spec: exit 2 with the first
    candidate's message (some invalid candidates are a status of the table: a warp layout that does not tile);
    the rows are read back only then."""
    if s["invalid"] and s["invalid"] == len(table) - s["pruned"]:
        first = next(r for r in table.rows() if r["status"] == "invalid")
        raise UsageError(f"{spec.path}: [config]: no candidate within the budgets is a valid configuration; "
                         f"the first: {first['reason']}")


def _check_outputs(args, out: str) -> None:
    """Every output the command line names can be written, before anything is proved (a bad one is exit 2)."""
    _can_create("-o", out)
    if args.parquet:
        if find_spec("pyarrow") is None:
            raise UsageError(f"--parquet {args.parquet}: writing Parquet needs pyarrow (pip install pyarrow)")
        _can_create("--parquet", args.parquet)
    if args.emit:
        try:
            os.makedirs(args.emit[1], exist_ok=True)
        except OSError as e:
            raise UsageError(f"--emit {args.emit[0]} {args.emit[1]}: cannot make the directory: "
                             f"{e.strerror or e}") from None
        if not os.access(args.emit[1], os.W_OK):
            raise UsageError(f"--emit {args.emit[0]} {args.emit[1]}: the directory is not writable")


def _can_create(option: str, path: str) -> None:
    """``path`` is a file this process may write (or create, in an existing writable directory)."""
    where = os.path.dirname(path) or "."
    if os.path.isdir(path):
        why = "is a directory"
    elif not os.path.isdir(where):
        why = f"no directory {where}"
    elif not os.access(path if os.path.exists(path) else where, os.W_OK):
        why = "permission denied"
    else:
        return
    raise UsageError(f"{option} {path}: cannot write: {why}")


def _has_dask() -> bool:
    return find_spec("distributed") is not None


def _progress():
    """tqdm's bar on a terminal when tqdm is installed (optional), else a plain line now and then."""
    from ..sweep import plain_progress  # lazy: as in run()
    if sys.stderr.isatty():
        try:
            from tqdm import tqdm
        except ImportError:
            return plain_progress()
        bar = tqdm(file=sys.stderr, bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]")

        def report(done, total, rate):       # the sweep's rate: candidates proved by this run (not resumed) ...
            bar.total, bar.n = total, done   # ... and the time left from it (tqdm's would count the resumed ones)
            left = tqdm.format_interval((total - done) / rate) if rate > 0 else "?"
            bar.set_postfix_str(f"{rate:.1f} candidates/s, {left} left", refresh=True)
            if done == total:
                bar.close()
        return report
    return plain_progress()
