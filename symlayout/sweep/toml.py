"""A configuration dict written as TOML text (scalars first, then one ``[table.path]`` header per table).

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
import re

__all__ = ["to_toml"]

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
