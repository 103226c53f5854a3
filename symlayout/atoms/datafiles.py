"""The atom catalog's data files (``data/mma.json``, ``data/copy.json``, ``data/types.json``), read once,
and the "did you mean" hint of an unknown name."""
from __future__ import annotations

import difflib
import functools
import json
import re
from pathlib import Path

_DATA_DIR = Path(__file__).resolve().with_name("data")


def suggest(name: str, candidates) -> str:
    """``"; did you mean 'X'?"`` for the closest candidate (difflib), or ``""``.

    >>> suggest("half", ["half_t", "float"])
    "; did you mean 'half_t'?"
    """
    cands = list(candidates)
    best = difflib.get_close_matches(name, cands, n=1, cutoff=0.0)
    return f"; did you mean {best[0]!r}?" if best else ""


@functools.lru_cache(maxsize=None)
def load_data(name: str) -> dict:
    """The parsed JSON file ``data/<name>.json`` (cached; treat as read-only).

    >>> sorted(load_data("types"))
    ['_doc', 'types']
    """
    with open(_DATA_DIR / f"{name}.json") as f:
        return json.load(f)


def normalize_spelling(s: str) -> str:
    """A C++ type or atom name with its spaces normalised (``"UniversalCopy< uint128_t >"`` ->
    ``"UniversalCopy<uint128_t>"``)."""
    s = " ".join(s.split())
    return re.sub(r"\s*([<>,])\s*", r"\1", s)
