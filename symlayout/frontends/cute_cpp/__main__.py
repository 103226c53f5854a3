"""``python -m symlayout.frontends.cute_cpp HEADER --type TYPE`` (and ``python -m symlayout.extract``) is
``symlayout extract HEADER --type TYPE`` (:mod:`symlayout.cli.extract`)."""
from __future__ import annotations

import sys

from ...cli import main as _cli_main


def main(argv=None) -> int:
    return _cli_main(["extract", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
