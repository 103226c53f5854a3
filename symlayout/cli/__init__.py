"""The ``symlayout`` command line.

Commands::

    symlayout prove PATH... [--json] [-q] [-v] [--jobs N] [--timeout S] [--property P]... [--html FILE]
    symlayout show CONFIG [--operand A|B|C] [--svg FILE] [--view V] [--thread T]
    symlayout explain CONFIG [--operand A|B|C] [--thread T --slot S]
    symlayout layout "EXPR" [--table | --no-table]
    symlayout atoms [--json] [--arch sm80] [--kind mma|copy] [PATTERN]
    symlayout cute CONFIG
    symlayout gpu [CONFIG...] [--atoms] [--json] [--out DIR] [--prover FILE]
    symlayout solve CONFIG [--all] [--minimize EXPR]
    symlayout extract HEADER --type "Traits<...>" [-I DIR]... [-o FILE]
    symlayout dsl FILE.py [--function NAME] [--toml] [--json] [-q]
    symlayout sweep SPEC [-o CSV] [--json] [--workers N | --scheduler ADDRESS] [--emit toml|cute DIR]

One module per command (``symlayout/cli/<command>.py``), each with its own
``--help`` and exit codes.
Exit codes:

* 0 -- success (``prove``: every result as expected);
* 1 -- ``prove``: some expectation unmet (a property refuted unexpectedly, an
  expected refutation proved, a vacuous result); ``explain``: the slot disagrees;
  ``solve``: no solution; ``gpu``: the GPU disagrees with the model;
  ``atoms``: no atom matches the filters;
* 2 -- bad input: a malformed configuration, expression or command line, or a
  command that is not available in this installation;
* 3 -- ``prove``/``solve``: some result unknown (e.g. a timeout) and none wrong;
* 4 -- an internal error (a bug in symlayout: please report it); set
  ``SYMLAYOUT_DEBUG=1`` to see the traceback;
* 130 -- interrupted (Ctrl-C);
* 143 -- terminated (SIGTERM): the worker processes of ``--jobs`` are stopped at once, no traceback.

Every user error is one line on stderr, ``symlayout: error: <message>``, naming
the file and line (``path:12: ...``) or the column in a string; no traceback.

Configurations are loaded (and validated) here, once, before any command runs:
the command functions receive ``args.configs`` (``gpu``: a list of
:class:`symlayout.config.Config`, ``args.load_errors``, a list of ``(path, message)``,
and ``args.skipped``, files that are not configurations) or ``args.cfg`` (``show``,
``explain``, ``cute``: one Config); ``prove`` receives ``args.files``, the files
named and found, and reads each in the process that proves it
(:mod:`symlayout.prove.schedule`).  ``solve``,
``extract`` and ``dsl`` read their own inputs (a solve file holds unknowns; a header is C++;
a DSL file is Python).

>>> main(["layout", "composition((6,2):(8,2), (4,3):(3,1))", "--no-table"])
((2,2),3):((24,2),8)
0
"""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import SymlayoutError, ConfigError
from . import atoms, cute, dsl, explain, extract, gpu, layout, prove, show, solve, sweep
from .common import (EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUTED, EXIT_TERMINATED, EXIT_UNKNOWN,
                     EXIT_USAGE, PROG, Parser, Terminated, UsageError, exit_codes_text, on_sigterm, one_line,
                     print_error)
from ..config import find_config_files, load_config
from ..prove.schedule import path_entries

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_REFUTED", "EXIT_USAGE", "EXIT_UNKNOWN", "EXIT_INTERNAL",
           "EXIT_INTERRUPTED", "EXIT_TERMINATED", "COMMANDS", "UsageError"]

#: the commands, in the order ``--help`` lists them
COMMANDS = {"prove": prove, "show": show, "explain": explain, "layout": layout, "atoms": atoms, "cute": cute,
            "gpu": gpu, "solve": solve, "extract": extract, "dsl": dsl, "sweep": sweep}

EPILOG = exit_codes_text({
    EXIT_OK: "success (prove: every result as expected)",
    EXIT_REFUTED: "prove: an expectation unmet (unexpected refutation, expected refutation proved, vacuous); "
                  "see each command's --help",
    EXIT_UNKNOWN: "prove/solve: some result unknown (e.g. timeout), none wrong; sweep: some candidate unknown",
}) + "\n\n'symlayout COMMAND --help' documents each command's arguments and exit codes."


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("symlayout")
    except Exception:  # noqa: BLE001 (not installed: running from a source tree)
        return "unknown"


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked (importlib.metadata is slow to import)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser._print_message(f"{PROG} {_version()}\n", sys.stdout)
        parser.exit()


def build_parser(argv=None) -> argparse.ArgumentParser:
    """The argparse parser of the ``symlayout`` command (one-line usage errors).

    With ``argv``, only the command it names gets its arguments (the others keep their help line):
    building every command's options imports what those commands need, which one run does not.

    >>> sorted(build_parser()._subparsers._group_actions[0].choices)[:3]
    ['atoms', 'cute', 'dsl']
    """
    p = Parser(prog=PROG, description="Prove CuTe/CUTLASS GPU tiling configurations correct.",
               epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version, help="show the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    named = next((str(a) for a in argv if not str(a).startswith("-")), None) if argv is not None else None
    for name, mod in COMMANDS.items():
        sp = sub.add_parser(name, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP),
                            epilog=exit_codes_text(mod.EXIT_CODES),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
        if named is None or named not in COMMANDS or name == named:
            mod.add_arguments(sp)
    return p


# ---------------------------------------------------------------- loading, once


def _load_many(args) -> None:
    """``args.configs`` / ``args.load_errors`` / ``args.skipped`` for the files and directories named,
    and ``args.order``: every file's path in the order given (errors keep their place)."""
    args.configs, args.load_errors, args.skipped, args.order = [], [], [], []
    for p in args.paths:
        try:
            files = find_config_files([p], args.skipped)
        except ConfigError as e:
            args.load_errors.append((str(p), str(e)))
            args.order.append(str(p))
            continue
        for f in files:
            args.order.append(f)
            try:
                args.configs.append(load_config(f))
            except ConfigError as e:
                args.load_errors.append((f, str(e)))


def _list_many(args) -> None:
    """``args.files`` (``(path, explicit)``: the TOML files named and found, read where they are proved),
    ``args.load_errors`` (missing paths), ``args.skipped`` (filled as files prove not to be
    configurations) and ``args.order`` (every file's path in the order given, errors in place)."""
    args.files, args.load_errors, args.skipped, args.order = [], [], [], []
    for p in map(str, args.paths):
        for path, why in path_entries(p):
            args.order.append(path)
            if why is None:
                args.files.append((path, path == p))
            else:
                args.load_errors.append((path, why))


def _load_one(args) -> None:
    args.config = args.config_path
    args.cfg = load_config(args.config_path)


# ---------------------------------------------------------------- main


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
            argv = [str(a) for a in argv]
            args = build_parser(argv).parse_args(argv)
        except SystemExit as e:  # --help / --version
            code = e.code
            return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_USAGE)
        mod = COMMANDS[args.command]
        loads = getattr(mod, "LOADS", None)
        if loads == "many":
            _load_many(args)
        elif loads == "files":
            _list_many(args)
        elif loads == "one":
            _load_one(args)
        with on_sigterm():
            rc = mod.run(args)
        return EXIT_OK if rc is None else int(rc)
    except SymlayoutError as e:
        print_error(e)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print(f"{PROG}: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (silence the flush at exit)
        except OSError:
            pass
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 (anything else is a bug)
        debug = os.environ.get("SYMLAYOUT_DEBUG") == "1"
        if debug:
            import traceback
            traceback.print_exc(file=sys.stderr)
        print(f"{PROG}: internal error (a bug in symlayout): {type(e).__name__}: {one_line(e)[:300]}"
              f"{'' if debug else ' (SYMLAYOUT_DEBUG=1 shows the traceback)'}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
