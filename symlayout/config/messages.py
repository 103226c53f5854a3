"""How a value or a key is named in a one-line message: ``a string 'x'``, ``(did you mean 'smem'?)``.

>>> _type_name(True), _type_name(3), _short("x" * 50)
('a boolean', 'an integer', "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...")
>>> _suggest("smme", ("atom", "smem"))
" (did you mean 'smem'?)"
"""
from __future__ import annotations

import difflib


def _one_line(msg: str) -> str:
    return " ".join(str(msg).split("\n")).strip()


#: what a TOML value is called in messages (bool before int: True is an int to Python)
_TYPE_NAMES = ((bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"), (list, "an array"),
               (dict, "a table"))


def _type_name(v) -> str:
    name = next((n for t, n in _TYPE_NAMES if isinstance(v, t)), None)
    if name is None:
        return "a date/time" if hasattr(v, "isoformat") else f"a {type(v).__name__}"
    return name


def _short(v, n=40) -> str:
    s = repr(v) if isinstance(v, (str, int, float, list, dict)) else str(v)
    return s if len(s) <= n else s[:n - 3] + "..."


def _suggest(key: str, known) -> str:
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    return f" (known: {', '.join(known)})"
