"""A configuration dict written as TOML text (scalars first, then one ``[table.path]`` header per table), and
the dict that text reads back as, built without reading it (:func:`read_back`: a sweep loads each candidate
from its dict, the text kept for messages and files).

>>> print(to_toml({"name": "x", "mma": {"atom": "A", "permutation": ["32", "_"]}, "copy": {"A": {"align": 16}}}), end="")
name = "x"
<BLANKLINE>
[mma]
atom = "A"
permutation = ["32", "_"]
<BLANKLINE>
[copy.A]
align = 16
"""
from __future__ import annotations

import json
import math
import re

__all__ = ["to_toml", "read_back"]

BARE = re.compile(r"[A-Za-z0-9_-]+")


def _key(k: str) -> str:
    return k if BARE.fullmatch(k) else json.dumps(k)


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, str)):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def to_toml(d: dict) -> str:
    lines: list = []
    _emit(lines, [], d)
    return "\n".join(lines).lstrip("\n") + "\n"


def _emit(lines: list, path: list, d: dict) -> None:
    scalars = {k: v for k, v in d.items() if not isinstance(v, dict) or (path and _inline(v))}
    tables = {k: v for k, v in d.items() if k not in scalars}
    if path and (scalars or not tables):
        lines += ["", "[" + ".".join(map(_key, path)) + "]"]
    lines += [f"{_key(k)} = {_value(v)}" for k, v in scalars.items()]
    for k, v in tables.items():
        _emit(lines, path + [k], v)


def _inline(v: dict) -> bool:
    """A ``[params]`` entry (``m = { min = 1, max = 8 }``) stays inline: its values are all scalars."""
    return all(not isinstance(x, dict) for x in v.values()) and set(v) <= {"min", "max", "multiple_of"}


class _NotPlain(Exception):
    """A value :func:`to_toml` may not write as TOML that reads back as that value."""


def read_back(d: dict) -> dict | None:
    """``tomllib.loads(to_toml(d))`` without writing and reading the text: the same values, every table's keys
    in the order the text defines them (its scalars, then its tables), new containers; None when a value
    might not read back as itself (a string that is not ASCII or holds DEL, which JSON's escapes do not write
    as TOML; a float that is not finite; a type TOML has not: then read the text).

    >>> read_back({"copy": {"A": {"align": 16}}, "name": "x", "params": {"m": {"min": 1, "max": 8}}})
    {'name': 'x', 'copy': {'A': {'align': 16}}, 'params': {'m': {'min': 1, 'max': 8}}}
    >>> read_back({"name": "caf\u00e9"}) is None, read_back({"x": float("inf")}) is None
    (True, True)
    """
    try:
        return _table(d, ())
    except _NotPlain:
        return None


def _table(d: dict, path: tuple) -> dict:
    scalars = {_plain_key(k): _plain(v) for k, v in d.items() if not isinstance(v, dict) or (path and _inline(v))}
    tables = {_plain_key(k): _table(v, path + (k,)) for k, v in d.items() if k not in scalars}
    return {**scalars, **tables}


def _plain_key(k) -> str:
    if not isinstance(k, str) or not k.isascii() or "\x7f" in k:
        raise _NotPlain(k)
    return k


def _plain(v):
    if isinstance(v, (bool, int)):
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise _NotPlain(v)
        return v
    if isinstance(v, str):
        return _plain_key(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {_plain_key(k): _plain(x) for k, x in v.items()}
    raise _NotPlain(v)
