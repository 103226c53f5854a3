"""The atom catalog's template engine: CuTe's MMA_Traits / Copy_Traits families as data.

``data/mma.json`` and ``data/copy.json`` hold CuTe's layouts as notation strings in CuTe's own
units; a family (GMMA ``64xNx16`` for every N, the S8/U8 and FP8 combinations,
``UniversalCopy<T>``, ...) is one template entry whose ``{placeholders}`` (``{N}``, ``{bits(T)}``,
``{N*2}``) this module substitutes.  :class:`Catalog` resolves an atom name to its entry;
:mod:`.mma` and :mod:`.copy` build the atom objects from it.

>>> split_name("UniversalCopy< uint128_t >")
('UniversalCopy', ['uint128_t'])
"""
from __future__ import annotations

import itertools
import re
from typing import Any

from ..errors import AtomError
from .datafiles import load_data, normalize_spelling, suggest
from .types import canonical_type, value_type_bits


# --------------------------------------------------------------------------- template engine

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_TERM = r"\s*(bits\(\s*\w+\s*\)|\w+)\s*"
_EXPR = re.compile(rf"^{_TERM}(?:([*/+-]){_TERM})?$")


def _term(tok: str, ctx: dict):
    m = re.fullmatch(r"bits\(\s*(\w+)\s*\)", tok)
    if m:
        return value_type_bits(str(_term(m.group(1), ctx)))
    if re.fullmatch(r"-?\d+", tok):
        return int(tok)
    if tok not in ctx:
        raise KeyError(f"atom data: unknown placeholder variable {tok!r}")
    return ctx[tok]


def _eval(expr: str, ctx: dict):
    m = _EXPR.match(expr)
    if not m:
        raise ValueError(f"atom data: bad placeholder {{{expr}}}")
    a = _term(m.group(1), ctx)
    if m.group(2) is None:
        return a
    a, b = int(a), int(_term(m.group(3), ctx))
    op = m.group(2)
    if op == "/":
        if b == 0 or a % b:
            raise ValueError(f"atom data: {{{expr}}} = {a}/{b} is not an integer")
        return a // b
    return {"*": a * b, "+": a + b, "-": a - b}[op]


def substitute(value: Any, ctx: dict) -> Any:
    """Fill ``{placeholders}`` in a JSON value (strings, lists, dicts) from ``ctx``.

    A string that is exactly one placeholder becomes the placeholder's value
    (an int stays an int); ``bits(T)`` is a value type's width.

    >>> substitute({"s": "(1,{bits(T)}):(0,1)", "n": "{N/8}"}, {"T": "half_t", "N": 64})
    {'s': '(1,16):(0,1)', 'n': 8}
    """
    if isinstance(value, str):
        m = _PLACEHOLDER.fullmatch(value)
        if m:
            return _eval(m.group(1), ctx)
        return _PLACEHOLDER.sub(lambda mm: str(_eval(mm.group(1), ctx)), value)
    if isinstance(value, list):
        return [substitute(v, ctx) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, ctx) for k, v in value.items()}
    return value


def split_name(name: str) -> tuple[str, list[str] | None]:
    """``'Base<a, b<c>>'`` -> ``('Base', ['a', 'b<c>'])``; no ``<...>`` -> ``(name, None)``.

    >>> split_name("UniversalCopy< uint128_t >"), split_name("DefaultCopy")
    (('UniversalCopy', ['uint128_t']), ('DefaultCopy', None))
    """
    if not isinstance(name, str) or not name.strip():
        raise AtomError(f"atom name must be a non-empty string, got {name!r}")
    s = normalize_spelling(name)
    for prefix in ("cute::", "SM90::GMMA::"):
        if s.startswith(prefix):
            s = s[len(prefix):]
    if "<" not in s:
        if ">" in s:
            raise AtomError(f"malformed atom name {name!r}: '>' without '<'")
        return s, None
    i = s.index("<")
    if not s.endswith(">"):
        raise AtomError(f"malformed atom name {name!r}: template arguments must end with '>'")
    base, inner = s[:i], s[i + 1:-1]
    args, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
            if depth < 0:
                raise AtomError(f"malformed atom name {name!r}: unbalanced '>'")
        if ch == "," and depth == 0:
            args.append(cur)
            cur = ""
        else:
            cur += ch
    if depth != 0:
        raise AtomError(f"malformed atom name {name!r}: unbalanced '<'")
    args.append(cur)
    if any(a == "" for a in args):
        raise AtomError(f"malformed atom name {name!r}: empty template argument")
    return base, args


def _choice_table(choices) -> dict[str, dict]:
    """Normalize a choices spec to ``{value: {"aliases": [...], "vars": {...}}}``."""
    out = {}
    for k, v in choices.items():
        if isinstance(v, list):
            out[k] = {"aliases": v, "vars": {}}
        elif isinstance(v, dict) and ("aliases" in v or "vars" in v):
            out[k] = {"aliases": v.get("aliases", []), "vars": v.get("vars", {})}
        else:  # a param choice: the dict is its variables
            out[k] = {"aliases": [], "vars": v}
    return out


class _Template:
    """One generated family of a catalog file (see ``mma.json``'s ``_doc``)."""

    def __init__(self, spec: dict, what: str):
        self.spec = spec
        self.what = what
        self.pattern = spec["name"]
        self.params = {}
        for p, ps in spec.get("params", {}).items():
            if isinstance(ps, dict) and set(ps) == {"range"}:
                a, b, step = ps["range"]
                self.params[p] = ("range", list(range(a, b + 1, step)))
            else:
                self.params[p] = ("choice", _choice_table(ps))
        self.args = spec.get("args", [])
        regex, seen = "", set()
        pos = 0
        for m in re.finditer(r"\{(\w+)\}", self.pattern):
            regex += re.escape(self.pattern[pos:m.start()])
            p = m.group(1)
            if p in seen:
                regex += f"(?P={p})"
            else:
                seen.add(p)
                kind, vals = self.params[p]
                if kind == "range":
                    regex += f"(?P<{p}>\\d+)"
                else:
                    alts = sorted(vals, key=len, reverse=True)
                    regex += f"(?P<{p}>" + "|".join(re.escape(a) for a in alts) + ")"
            pos = m.end()
        regex += re.escape(self.pattern[pos:])
        self.regex = re.compile(regex + r"\Z")

    def match(self, base: str):
        m = self.regex.match(base)
        return None if m is None else m.groupdict()

    def base_names(self) -> list[str]:
        keys = list(self.params)
        pools = [self.params[k][1] if self.params[k][0] == "range" else list(self.params[k][1]) for k in keys]
        out = []
        for combo in itertools.product(*pools):
            ctx = dict(zip(keys, combo))
            out.append(re.sub(r"\{(\w+)\}", lambda m: str(ctx[m.group(1)]), self.pattern))
        return out

    def catalog_names(self) -> list[str]:
        if "catalog_args" in self.spec:
            arglists = self.spec["catalog_args"]
        elif all("default" in a for a in self.args):
            arglists = [None]
        else:
            return []
        out = []
        for b in self.base_names():
            for a in arglists:
                out.append(self.instantiate(b, b, self.match(b), a)[0])
        return out

    def instantiate(self, name: str, base: str, groups: dict, given: list[str] | None) -> tuple[str, dict]:
        ctx: dict = {}
        for p, (kind, vals) in self.params.items():
            v = groups[p]
            if kind == "range":
                v = int(v)
                if v not in vals:
                    raise _NotInFamily()
            ctx[p] = v
        given_list = list(given or [])
        if len(given_list) > len(self.args):
            raise AtomError(f"{self.what} {name!r}: at most {len(self.args)} template argument(s), got {len(given_list)}")
        canon_args = []
        for i, a in enumerate(self.args):
            if i < len(given_list):
                raw = given_list[i]
            elif "default" in a:
                raw = str(substitute(a["default"], ctx))
            else:
                raise AtomError(f"{self.what} {name!r}: missing template argument {a['name']} "
                                f"(write {self.pattern.split('{')[0] or base}<...>)")
            if a.get("type"):
                try:
                    val = canonical_type(raw)
                except AtomError as e:
                    raise AtomError(f"{self.what} {name!r}: {e}") from None
            elif "choices" in a:
                table = _choice_table(a["choices"])
                val = None
                for k, c in table.items():
                    if raw == k or raw in c["aliases"]:
                        val = k
                        break
                if val is None:
                    raise AtomError(f"{self.what} {name!r}: bad template argument {a['name']}={raw!r}"
                                    f"{suggest(raw, table)}")
                for vk, vv in table[val]["vars"].items():
                    ctx[vk] = vv
            else:
                val = raw
            ctx[a["name"]] = val
            canon_args.append(val)
        for p, (kind, vals) in self.params.items():
            if kind == "choice":
                for vk, vv in vals[ctx[p]]["vars"].items():
                    ctx[vk] = substitute(vv, ctx)
        if self.spec.get("canonical_args") == "all":
            canon = f"{base}<{','.join(canon_args)}>"
        elif given is None:
            canon = base
        else:
            canon = f"{base}<{','.join(canon_args[:len(given_list)])}>"
        for c in self.spec.get("constraints", []):
            if any(str(ctx.get(k)) != str(v) for k, v in c.get("when", {}).items()):
                continue
            val = substitute(c["value"], ctx)
            ok = True
            if "in" in c:
                ok = val in [substitute(x, ctx) for x in c["in"]]
            if "min" in c:
                ok = ok and val >= c["min"]
            if not ok:
                raise AtomError(f"{canon}: {c['message']}")
        entry = substitute(self.spec["entry"], ctx)
        if "kind" in self.spec:
            entry.setdefault("kind", self.spec["kind"])
        entry["name"] = canon
        return canon, entry


class _NotInFamily(Exception):
    pass


class Catalog:
    """Explicit entries plus templates of one data file (``mma`` or ``copy``).

    >>> c = Catalog("copy", "ops", "copy operation")
    >>> c.lookup("UniversalCopy<uint64_t>")["src"]
    '(1,64):(0,1)'
    """

    def __init__(self, file: str, key: str, what: str):
        data = load_data(file)
        self.what = what
        self.layouts = data.get("layouts", {})
        self.explicit = {e["name"]: e for e in data[key]}
        self.templates = [_Template(t, what) for t in data.get("templates", [])]
        self._cache: dict[str, dict] = {}

    def _explicit(self, name: str) -> dict:
        e = dict(self.explicit[name])
        if "like" in e:
            base = self._explicit(e.pop("like"))
            base.update(e)
            e = base
        e["name"] = name
        return e

    def names(self) -> list[str]:
        """Every name the catalog lists (explicit entries, then template instances)."""
        out = list(self.explicit)
        for t in self.templates:
            out.extend(t.catalog_names())
        return out

    def lookup(self, name: str, hint: bool = True) -> dict:
        """The resolved entry (a fresh dict) for ``name``; AtomError if unknown (with the closest known
        name when ``hint``: listing every name costs more than most lookups, so a caller that has
        another way to resolve the name asks without it)."""
        if name in self._cache:
            return dict(self._cache[name])
        base, args = split_name(name)
        norm = base if args is None else f"{base}<{','.join(args)}>"
        entry = None
        if norm in self.explicit:
            entry = self._explicit(norm)
        elif args is None or base not in self.explicit:
            for t in self.templates:
                groups = t.match(base)
                if groups is None:
                    continue
                try:
                    _canon, entry = t.instantiate(name, base, groups, args)
                except _NotInFamily:
                    continue
                break
        if entry is None:
            if args is not None and base in self.explicit:
                raise AtomError(f"{self.what} {base!r} takes no template arguments (got {name!r})")
            raise AtomError(f"unknown {self.what} {name!r}{suggest(norm, self.names()) if hint else ''}")
        self._cache[name] = entry
        return dict(entry)

    def resolve_layout(self, s: str) -> str:
        """``'@Name'`` -> the named layout string; other strings unchanged."""
        if isinstance(s, str) and s.startswith("@"):
            return self.layouts[s[1:]]
        return s


