"""``symlayout.extract``: the public name of the CuTe C++ front end, :mod:`symlayout.frontends.cute_cpp`.

``from symlayout.extract import extract`` and ``python -m symlayout.extract HEADER --type TYPE``
(the same as ``symlayout extract``) keep working; the front end itself lives with the
DSL one in :mod:`symlayout.frontends`.  This module re-exports its public names.
"""
from __future__ import annotations

import sys

from .cli import main as _cli_main
from .frontends.cute_cpp import ConfigDoc, ExtractError, Extraction, documents_from_output, extract

__all__ = ["ExtractError", "Extraction", "extract", "documents_from_output", "ConfigDoc"]


def main(argv=None) -> int:
    return _cli_main(["extract", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
