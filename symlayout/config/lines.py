"""Where each key and table of a TOML text is: tomllib gives no positions, and every message names a line."""

from __future__ import annotations

import functools
import json
import re

_BARE_KEY = r"[A-Za-z0-9_-]+"
_QKEY = r'"(?:[^"\\]|\\.)*"|\'[^\']*\''
_KEY = rf"(?:{_BARE_KEY}|{_QKEY})"
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER_RE = re.compile(rf"\s*(\[\[?)\s*({_DOTTED})\s*\]\]?")
_KEYVAL_RE = re.compile(rf"\s*({_DOTTED})\s*=")


def _split_dotted(s: str) -> tuple[str, ...]:
    parts = []
    for m in re.finditer(_KEY, s):
        k = m.group(0)
        if k[0] == "'":
            k = k[1:-1]
        elif k[0] == '"':
            try:
                k = json.loads(k)
            except ValueError:
                k = k[1:-1]
        parts.append(k)
    return tuple(parts)


@functools.lru_cache(maxsize=4096)
def _read_line(line: str):
    """What one line (outside a multi-line string) holds: ``(the table a header opens or None, ((key path
    below the table, column) ...), the multi-line string delimiter it opens or None)`` -- a function of the
    line alone, so a line that many texts share (a sweep's candidates) is read once."""
    m = _HEADER_RE.match(line)
    if m and not _KEYVAL_RE.match(line):
        return _split_dotted(m.group(2)), (((), m.start(2) + 1),), None
    m = _KEYVAL_RE.match(line)
    if not m:
        return None, (), None
    path = _split_dotted(m.group(1))
    vcol = m.end()
    while vcol < len(line) and line[vcol] in " \t":
        vcol += 1
    keys = [(path, vcol + 1)]
    rest = line[m.end():]
    opens = None
    for delim in ('"""', "'''"):
        if rest.count(delim) % 2 == 1:
            opens = delim
    # keys of an inline table on the same line
    if rest.lstrip().startswith("{"):
        for im in re.finditer(rf"[{{,]\s*({_DOTTED})\s*=\s*", rest):
            keys.append((path + _split_dotted(im.group(1)), m.end() + im.end() + 1))
    return None, tuple(keys), opens


class KeyLines:
    """Where each key and table of a TOML text is (tomllib gives no positions).

    ``line(*keys)`` is the 1-based line of the key path (the closest known
    ancestor if the path itself is not on a line of its own, e.g. inside an
    inline table); ``column(*keys)`` the 1-based column where its value starts.

    >>> kl = KeyLines('name = "x"\\n[copy.A]\\natom = "LDSM"\\n smem = "(8,8):(8,1)"\\n[params]\\nm = { min = 1, max = 8 }\\n')
    >>> kl.line("copy", "A", "smem"), kl.line("copy", "A"), kl.line("params", "m", "max"), kl.line("nothing")
    (4, 2, 6, 1)
    >>> kl.column("copy", "A", "smem")
    9
    """

    def __init__(self, text: str):
        self.pos: dict[tuple[str, ...], tuple[int, int]] = {}
        self.nlines = text.count("\n") + 1
        table: tuple[str, ...] = ()
        in_ml = None  # inside a multi-line string: its delimiter
        for lineno, line in enumerate(text.split("\n"), start=1):
            if in_ml is not None:
                if line.count(in_ml) % 2 == 1:
                    in_ml = None
                continue
            header, keys, opens = _read_line(line)
            if header is not None:
                table = header
            for path, col in keys:
                self._add(table + path, lineno, col)
            in_ml = opens

    def _add(self, path, lineno, col):
        if path and path not in self.pos:
            self.pos[path] = (lineno, col)

    def _find(self, keys):
        keys = tuple(str(k) for k in keys)
        while keys:
            if keys in self.pos:
                return self.pos[keys]
            below = [v for p, v in self.pos.items() if p[:len(keys)] == keys]
            if below:
                return min(below)
            keys = keys[:-1]
        return None

    def line(self, *keys) -> int:
        """Line of a key path (1 when nothing is known)."""
        f = self._find(keys)
        return f[0] if f else 1

    def column(self, *keys) -> int | None:
        """Column where the value of a key path starts, or None."""
        f = self._find(keys)
        return f[1] if f and tuple(str(k) for k in keys) in self.pos else None
