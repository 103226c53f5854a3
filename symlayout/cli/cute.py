"""``symlayout cute CONFIG``: the configuration as a CuTe C++ program that compiles as is."""
from __future__ import annotations

from .common import EXIT_OK

HELP = "print the configuration as a CuTe C++ program (compiles as is against the CUTLASS headers)"
EXIT_CODES = {EXIT_OK: "printed"}
LOADS = "one"


def add_arguments(sp) -> None:
    sp.add_argument("config_path", metavar="CONFIG")


def run(args) -> int:
    # lazy: only 'symlayout cute' writes C++; other commands start without the snippet writer
    from ..prove.report.cute_snippet import snippet
    print(snippet(args.cfg))
    return EXIT_OK
