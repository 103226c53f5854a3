"""The ``symlayout`` command line.

Commands::

    symlayout prove PATH... [--json] [--jobs N] [--timeout S] [--property P]...
    symlayout show CONFIG [--operand A|B|C] [--svg FILE] [--thread T]
    symlayout explain CONFIG --operand A|B|C --thread T --slot S
    symlayout layout "EXPR" [--no-table]
    symlayout atoms [--json]
    symlayout cute CONFIG
    symlayout gpu [CONFIG...] [--atoms] [--json]
    symlayout solve CONFIG [--all] [--minimize EXPR]

Exit codes:

* 0 -- success (``prove``: every result as expected);
* 1 -- ``prove``: some property refuted unexpectedly, or an expected refutation proved;
* 2 -- bad input: a malformed configuration, expression or command line, or a
  command that is not available in this installation;
* 3 -- ``prove``: some result unknown (e.g. a timeout) and none wrong;
* 4 -- an internal error (a bug in symlayout: please report it); set
  ``SYMLAYOUT_DEBUG=1`` to see the traceback;
* 130 -- interrupted (Ctrl-C).

Every user error is one line on stderr, ``symlayout: error: <message>``, naming
the file and line (``path:12: ...``) or the column in a string; no traceback.

Configurations are loaded (and validated) here, before any command runs: the
command functions receive ``args.configs`` (``prove``, ``gpu``: a list of
:class:`symlayout.config.Config`) or ``args.cfg`` (``show``, ``explain``,
``cute``: one Config); the paths as typed are ``args.paths`` and
``args.config`` (``args.config_path`` is the same string).  ``--property``
values are ``args.property`` (also ``args.properties``; None when not given).
``solve`` gets the path only (its files may hold unknowns).

>>> main(["layout", "composition((6,2):(8,2), (4,3):(3,1))", "--no-table"])
((2,2),3):((24,2),8)
0
"""
from __future__ import annotations

import argparse
import difflib
import importlib
import json
import os
import sys

from ..errors import SymlayoutError

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_REFUTED", "EXIT_USAGE", "EXIT_UNKNOWN", "EXIT_INTERNAL",
           "EXIT_INTERRUPTED"]

EXIT_OK = 0
EXIT_REFUTED = 1
EXIT_USAGE = 2
EXIT_UNKNOWN = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130

PROG = "symlayout"

EPILOG = """\
exit codes:
  0    success (prove: every result as expected)
  1    prove: a property refuted unexpectedly, or an expected refutation proved
  2    bad input (configuration, expression or command line), or command not available
  3    prove: some result unknown (e.g. timeout), none wrong
  4    internal error (a bug; SYMLAYOUT_DEBUG=1 shows the traceback)
  130  interrupted
"""


class UsageError(SymlayoutError):
    """A command-line usage error (exit 2)."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line (raised, not printed with the usage)."""

    def error(self, message):  # noqa: D401 (argparse API)
        raise UsageError(f"{' '.join(str(message).split())} (see '{self.prog} --help')")


# ---------------------------------------------------------------- argument types


def _properties():
    from ..config import PROPERTIES
    return PROPERTIES


def _property(s: str) -> str:
    props = _properties()
    if s in props:
        return s
    close = difflib.get_close_matches(s, props, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(props)})"
    raise argparse.ArgumentTypeError(f"unknown property {s!r}{hint}")


def _positive_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {s!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {s!r}")
    return v


def _nonneg_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {s!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {s!r}")
    return v


def _positive_seconds(s: str) -> float:
    import math
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {s!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {s!r}")
    return v


def _operand(s: str) -> str:
    if s in ("A", "B", "C"):
        return s
    if s.upper() in ("A", "B", "C"):
        return s.upper()
    raise argparse.ArgumentTypeError(f"expected A, B or C, got {s!r}")


# ---------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``symlayout`` command (one-line usage errors).

    >>> sorted(build_parser()._subparsers._group_actions[0].choices)[:3]
    ['atoms', 'cute', 'explain']
    """
    from ..algebra.calculator import functions_help
    p = _Parser(prog=PROG, description="Prove CuTe/CUTLASS GPU tiling configurations correct.",
                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def add(name, help_, **kw):
        return sub.add_parser(name, help=help_, description=help_, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter, **kw)

    sp = add("prove", "prove the properties of configuration files (directories: every *.toml below)")
    sp.add_argument("paths", nargs="+", metavar="PATH", help="configuration files or directories")
    sp.add_argument("--json", action="store_true", help="print one JSON document (see shared/spec/configs.md)")
    sp.add_argument("--jobs", type=_positive_int, default=1, metavar="N", help="prove configurations in N processes")
    sp.add_argument("--method", choices=("auto", "exhaustive", "z3"), default="auto",
                    help="decide concrete configurations by exhaustive evaluation (auto) or with Z3 "
                         "(parametric configurations always use Z3)")
    sp.add_argument("--timeout", type=_positive_seconds, default=None, metavar="S",
                    help="per-property timeout in seconds (overrides [prove] timeout_s)")
    sp.add_argument("--property", dest="property", action="append", type=_property, default=None, metavar="P",
                    help="prove only this property (repeatable): " + ", ".join(_properties()))

    sp = add("show", "print TV layouts, partitions and thread maps as tables (and SVG)")
    sp.add_argument("config_path", metavar="CONFIG")
    sp.add_argument("--operand", type=_operand, default=None, metavar="A|B|C")
    sp.add_argument("--svg", default=None, metavar="FILE", help="also write an SVG picture to FILE")
    sp.add_argument("--thread", type=_nonneg_int, default=None, metavar="T", help="highlight thread T")

    sp = add("explain", "the route of one fragment element, step by step")
    sp.add_argument("config_path", metavar="CONFIG")
    sp.add_argument("--operand", type=_operand, required=True, metavar="A|B|C")
    sp.add_argument("--thread", type=_nonneg_int, required=True, metavar="T")
    sp.add_argument("--slot", type=_nonneg_int, required=True, metavar="S")

    sp = add("layout", "evaluate layout algebra in CuTe notation", )
    sp.epilog = "functions:\n" + functions_help() + "\n\n" + EPILOG
    sp.add_argument("expr", metavar="EXPR", help='e.g. "complement((4,2):(1,4), 32)" or "(32*m,16):(16,1)"')
    sp.add_argument("--no-table", dest="table", action="store_false", help="do not print the function table")

    sp = add("atoms", "list the MMA and copy atom catalog")
    sp.add_argument("--json", action="store_true", help='print {"atoms": [...]} as JSON')

    sp = add("cute", "print the configuration as a CuTe C++ snippet")
    sp.add_argument("config_path", metavar="CONFIG")

    sp = add("gpu", "run configurations on the GPU (CuPy) and compare with the model")
    sp.add_argument("paths", nargs="*", metavar="CONFIG")
    sp.add_argument("--atoms", action="store_true", help="check every catalog atom on the GPU")
    sp.add_argument("--json", action="store_true", help="print the report as JSON")

    sp = add("solve", "find the unknown parts of a configuration")
    sp.add_argument("config_path", metavar="CONFIG")
    sp.add_argument("--all", action="store_true", help="enumerate (or count) every solution")
    sp.add_argument("--minimize", default=None, metavar="EXPR", help="pick the solution minimizing EXPR")
    return p


# ---------------------------------------------------------------- commands


def _dispatch(module: str, func: str, args) -> int:
    """Call ``module.func(args)`` if it exists; a missing module is a one-line error (exit 2)."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and (module == e.name or module.startswith(e.name + ".")):
            raise UsageError(f"'{args.command}' is not available in this installation ({module} is missing)") from None
        raise
    fn = getattr(mod, func, None)
    if fn is None:
        raise UsageError(f"'{args.command}' is not available in this installation ({module}.{func} is missing)")
    rc = fn(args)
    return EXIT_OK if rc is None else int(rc)


def _print_errors(failures) -> None:
    for _path, msg in failures:
        print(f"{PROG}: error: {_one_line(msg)}", file=sys.stderr)


def _cmd_prove(args) -> int:
    """Load every configuration first: any unreadable file is exit 2 (one line each on stderr).

    Without ``--json`` nothing is proved then; with ``--json`` the document
    still lists every file (unreadable ones with ``"error"``).
    """
    from ..config import load_configs
    args.timeout_s = args.timeout
    args.properties = args.property
    configs, failures = load_configs(args.paths, errors="collect")
    args.configs = configs
    args.load_errors = failures
    if failures:
        _print_errors(failures)
        if args.json:
            # the prover reports unreadable files as error entries next to the others' results
            try:
                _dispatch("symlayout.cli.prove", "run_prove", args)
                return EXIT_USAGE
            except UsageError:
                pass
            entries = [{"path": p, "name": None, "ok": False, "error": _one_line(m), "results": []} for p, m in failures]
            entries += [{"path": c.path, "name": c.name, "ok": False, "results": [],
                         "skipped": "not proved: another configuration could not be read"} for c in configs]
            doc = {"configs": entries,
                   "summary": {"proved": 0, "refuted": 0, "vacuous": 0, "unknown": 0, "errors": len(failures),
                               "unmet": 0}}
            print(json.dumps(doc, indent=1))
        return EXIT_USAGE
    return _dispatch("symlayout.cli.prove", "run_prove", args)


def _load_one(args):
    from ..config import load_config
    args.config = args.config_path
    args.cfg = load_config(args.config_path)
    return args.cfg


def _cmd_show(args) -> int:
    _load_one(args)
    return _dispatch("symlayout.cli.prove", "run_show", args)


def _cmd_explain(args) -> int:
    cfg = _load_one(args)
    if cfg.kind != "mma":
        raise UsageError(f"{cfg.path}: explain follows an element through a copy; this file has no [mma] table")
    if args.operand not in cfg.copies:
        have = ", ".join(f"[copy.{k}]" for k in cfg.copies) or "none"
        raise UsageError(f"{cfg.path}:{cfg.line('copy')}: explain --operand {args.operand}: the file has no "
                         f"[copy.{args.operand}] table (copies: {have})")
    return _dispatch("symlayout.cli.prove", "run_explain", args)


def _cmd_cute(args) -> int:
    _load_one(args)
    return _dispatch("symlayout.cli.prove", "run_cute", args)


def _cmd_gpu(args) -> int:
    from ..config import load_configs
    if not args.paths and not args.atoms:
        raise UsageError("gpu: give at least one CONFIG, or --atoms (see 'symlayout gpu --help')")
    configs, failures = load_configs(args.paths, errors="collect") if args.paths else ([], [])
    if failures:
        _print_errors(failures)
        return EXIT_USAGE
    args.configs = configs
    return _dispatch("symlayout.cli.gpu", "run_gpu", args)


def _cmd_solve(args) -> int:
    args.config = args.config_path
    if os.path.isdir(args.config_path):
        raise UsageError(f"{args.config_path}: is a directory, not a configuration file")
    if not os.path.exists(args.config_path):
        raise UsageError(f"{args.config_path}: no such file")
    return _dispatch("symlayout.cli.solve", "run_solve", args)


def _cmd_layout(args) -> int:
    from ..algebra.calculator import run
    print(run(args.expr, table=args.table))
    return EXIT_OK


def _cmd_atoms(args) -> int:
    try:
        atoms = importlib.import_module("symlayout.atoms")
    except ModuleNotFoundError as e:
        if e.name and "symlayout.atoms".startswith(e.name):
            raise UsageError("'atoms' is not available in this installation (symlayout.atoms is missing)") from None
        raise
    fn = getattr(atoms, "catalog_json" if args.json else "catalog_text", None)
    if fn is None:
        raise UsageError("'atoms' is not available in this installation (the atom catalog is missing)")
    out = fn()
    if args.json:
        print(out if isinstance(out, str) else json.dumps(out, indent=1))
    else:
        print(out.rstrip("\n"))
    return EXIT_OK


_COMMANDS = {
    "prove": _cmd_prove, "show": _cmd_show, "explain": _cmd_explain, "layout": _cmd_layout,
    "atoms": _cmd_atoms, "cute": _cmd_cute, "gpu": _cmd_gpu, "solve": _cmd_solve,
}


# ---------------------------------------------------------------- main


def _one_line(msg) -> str:
    return " / ".join(s.strip() for s in str(msg).splitlines() if s.strip()) or type(msg).__name__


def main(argv=None) -> int:
    """Run the ``symlayout`` command with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    User errors print one line ``symlayout: error: ...`` on stderr and return 2;
    other exceptions are bugs: one line ``symlayout: internal error: ...``
    (the traceback too when ``SYMLAYOUT_DEBUG=1``) and 4.

    >>> main(["layout", "size((4,8):(8,1))"])
    32
    0
    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     rc = main(["layout", "complement((4,2):(1,4)"])
    >>> rc, err.getvalue()
    (2, 'symlayout: error: "complement((4,2):(1,4)": column 11: \\'(\\' is never closed\\n')
    """
    if argv is None:
        argv = sys.argv[1:]
    try:
        try:
            args = build_parser().parse_args([str(a) for a in argv])
        except SystemExit as e:  # --help / --version
            code = e.code
            return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_USAGE)
        return _COMMANDS[args.command](args)
    except SymlayoutError as e:
        print(f"{PROG}: error: {_one_line(e)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (silence the flush at exit)
        except OSError:
            pass
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 (anything else is a bug)
        if os.environ.get("SYMLAYOUT_DEBUG") == "1":
            import traceback
            traceback.print_exc(file=sys.stderr)
        print(f"{PROG}: internal error (a bug in symlayout): {type(e).__name__}: {_one_line(e)[:300]}"
              f"{'' if os.environ.get('SYMLAYOUT_DEBUG') == '1' else ' (SYMLAYOUT_DEBUG=1 shows the traceback)'}",
              file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
