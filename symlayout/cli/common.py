"""What every command of the ``symlayout`` CLI shares: exit codes, one-line errors, argument types, colour.

A command module (``prove``, ``show``, ...) holds ``HELP`` (one line), ``EXIT_CODES``
(its own codes, printed by its ``--help``), ``add_arguments(parser)`` and
``run(args) -> int``; :mod:`symlayout.cli` loads the configurations a command
names once and passes the :class:`~symlayout.config.Config` objects down.

>>> exit_codes_text({0: "ok", 2: "bad input"}).splitlines()[:2]
['exit codes:', '  0    ok']
"""
from __future__ import annotations

import argparse
import contextlib
import difflib
import math
import os
import signal
import sys
import threading

from ..errors import SymlayoutError, printable
from ..config import PROPERTIES

PROG = "symlayout"

EXIT_OK = 0
EXIT_REFUTED = 1
EXIT_USAGE = 2
EXIT_UNKNOWN = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + 15      # (SIGTERM)

#: codes every command shares (added to each command's own)
COMMON_EXIT_CODES = {
    EXIT_USAGE: "bad input (configuration, expression or command line), or command not available",
    EXIT_INTERNAL: "internal error (a bug; SYMLAYOUT_DEBUG=1 shows the traceback)",
    EXIT_INTERRUPTED: "interrupted",
    EXIT_TERMINATED: "terminated (SIGTERM); the worker processes are stopped too",
}


class Terminated(BaseException):
    """SIGTERM arrived (raised in the main thread by :func:`on_sigterm`'s handler)."""


@contextlib.contextmanager
def on_sigterm():
    """While inside, SIGTERM raises :class:`Terminated` in the main thread, so that the worker pools are
    torn down (their workers stopped at once: :func:`symlayout.prove.engine.worker_init`) and the command
    exits 143; outside (or in another thread), the handler is left as it was."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)     # a second SIGTERM ends the process at once
        raise Terminated()
    old = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


class UsageError(SymlayoutError):
    """A command-line usage error (exit 2)."""


class Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line (raised, not printed with the usage)."""

    def error(self, message):  # noqa: D401 (argparse API)
        raise UsageError(f"{' '.join(str(message).split())} (see '{self.prog} --help')")


def exit_codes_text(codes: dict) -> str:
    """The ``exit codes:`` block of a ``--help`` (own codes first, then the shared ones)."""
    merged = dict(sorted({**COMMON_EXIT_CODES, **codes}.items()))
    return "exit codes:\n" + "\n".join(f"  {k:<4} {v}" for k, v in merged.items())


def one_line(msg) -> str:
    """A message on one line (``" / "`` joins its lines).

    >>> one_line("a\\n  b\\n")
    'a / b'
    """
    return " / ".join(s.strip() for s in str(msg).splitlines() if s.strip()) or type(msg).__name__


def print_error(msg) -> None:
    print(f"{PROG}: error: {printable(one_line(msg))}", file=sys.stderr)


# ---------------------------------------------------------------- argument types


def properties():
    return PROPERTIES


def property_name(s: str) -> str:
    props = properties()
    if s in props:
        return s
    close = difflib.get_close_matches(s, props, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(props)})"
    raise argparse.ArgumentTypeError(f"unknown property {s!r}{hint}")


def positive_int(s: str) -> int:
    return _number(s, int, lambda v: v > 0, "a positive integer", "a positive integer")


def nonneg_int(s: str) -> int:
    return _number(s, int, lambda v: v >= 0, "a non-negative integer", "a non-negative integer")


def positive_seconds(s: str) -> float:
    return _number(s, float, lambda v: math.isfinite(v) and v > 0, "a number of seconds",
                   "a positive number of seconds")


def _number(s: str, parse, ok, form: str, value: str):
    """An argparse type: ``parse(s)`` ("expected <form>" when it cannot) that is ``ok`` ("expected <value>")."""
    try:
        v = parse(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {form}, got {s!r}") from None
    if not ok(v):
        raise argparse.ArgumentTypeError(f"expected {value}, got {s!r}")
    return v


def operand(s: str) -> str:
    if s.upper() in ("A", "B", "C"):
        return s.upper()
    raise argparse.ArgumentTypeError(f"expected A, B or C, got {s!r}")


# ---------------------------------------------------------------- colour


_CODES = {"proved": "32", "refuted": "31", "unknown": "33", "vacuous": "35", "error": "31;1", "bold": "1",
          "dim": "2", "expected": "36"}


def use_colour(stream=None, mode: str = "auto") -> bool:
    """Colour on a terminal unless ``NO_COLOR`` is set (https://no-color.org); ``mode``
    ``always``/``never`` override.

    >>> import io; use_colour(io.StringIO())
    False
    """
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    stream = stream if stream is not None else sys.stdout
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Style:
    """Paint words with ANSI colours when enabled (a no-op otherwise).

    >>> Style(False)("proved", "PROVED"), Style(True)("proved", "PROVED")
    ('PROVED', '\\x1b[32mPROVED\\x1b[0m')
    """

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, kind: str, text: str) -> str:
        code = _CODES.get(kind)
        if not self.enabled or code is None:
            return text
        return f"\x1b[{code}m{text}\x1b[0m"
