"""MMA and copy atoms: CuTe's MMA_Traits / Copy_Traits as data.

The catalog lives in ``symlayout/atoms/data/*.json`` (``mma.json``, ``copy.json``,
``types.json``): CuTe's layouts as notation strings in CuTe's own units, register
arrays, the PTX each operation issues and a ``ptx_model`` key linking it to the
independent PTX-ISA model (:mod:`symlayout.arch.ptx`).  Families (GMMA
``64xNx16`` for every N, the S8/U8 and FP8 combinations, ``UniversalCopy<T>``, ...)
are generated from template entries; this module holds the small, generic
template engine and the value-type table.

Public API (the atom classes are imported lazily, so ``symlayout.arch.ptx``
stays importable without sympy):

* :func:`value_type_bits`, :func:`canonical_type`, :func:`value_type_names`
* :class:`Registers`
* :class:`~symlayout.atoms.mma.MMAAtom`, :func:`get_mma_atom`, :func:`mma_atom_names`
* :class:`~symlayout.atoms.copy.CopyOp`, :class:`~symlayout.atoms.copy.CopyAtom`,
  :func:`get_copy_op`, :func:`copy_op_names`, :func:`make_copy_atom`
* :func:`catalog_json`, :func:`catalog_text`

>>> value_type_bits("half_t"), value_type_bits("cutlass::bfloat16_t")
(16, 16)
>>> from symlayout.atoms import get_mma_atom
>>> get_mma_atom("SM80_16x8x8_F16F16F16F16_TN").shape_mnk
(16, 8, 8)
"""
from __future__ import annotations

import difflib
import functools
import itertools
import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import AtomError

_DATA_DIR = Path(__file__).resolve().with_name("data")

__all__ = [
    "Registers", "value_type_bits", "canonical_type", "value_type_names", "reinterpretation", "exact_conversion",
    "MMAAtom", "get_mma_atom", "mma_atom_names",
    "CopyOp", "CopyAtom", "get_copy_op", "copy_op_names", "make_copy_atom",
    "catalog_json", "catalog_text",
]

_LAZY = {
    "MMAAtom": "mma", "get_mma_atom": "mma", "mma_atom_names": "mma",
    "CopyOp": "copy", "CopyAtom": "copy", "get_copy_op": "copy", "copy_op_names": "copy",
    "make_copy_atom": "copy",
}


def __getattr__(name: str):  # PEP 562: import mma/copy (and sympy) only when used
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'symlayout.atoms' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f"{__name__}.{mod}"), name)


# --------------------------------------------------------------------------- helpers


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


# --------------------------------------------------------------------------- value types


@functools.lru_cache(maxsize=None)
def _type_index() -> dict[str, str]:
    idx: dict[str, str] = {}
    for canon, info in load_data("types")["types"].items():
        idx[canon] = canon
        for a in info.get("aliases", []):
            idx[a] = canon
    return idx


def _norm_space(s: str) -> str:
    s = " ".join(s.split())
    return re.sub(r"\s*([<>,])\s*", r"\1", s)


def canonical_type(name: str) -> str:
    """The canonical spelling of a value type (aliases such as ``cutlass::half_t``
    or ``int4b_t`` accepted); unknown names raise :class:`AtomError`.

    >>> canonical_type("cutlass::half_t"), canonical_type("int4b_t")
    ('half_t', 'int4_t')
    """
    if not isinstance(name, str):
        raise AtomError(f"value type must be a string, got {name!r}")
    key = _norm_space(name)
    idx = _type_index()
    if key in idx:
        return idx[key]
    if key.startswith("cute::") and key[6:] in idx:
        return idx[key[6:]]
    raise AtomError(f"unknown value type {name!r}{suggest(key, load_data('types')['types'])}")


def value_type_bits(name: str) -> int:
    """Width in bits of a value type (CuTe ``sizeof_bits``).

    >>> value_type_bits("float_e4m3_t"), value_type_bits("uint128_t"), value_type_bits("tfloat32_t")
    (8, 128, 32)
    """
    return load_data("types")["types"][canonical_type(name)]["bits"]


def value_type_info(name: str) -> dict:
    """The ``types.json`` record of a value type (bits, class, ptx, reg_class).

    >>> value_type_info("half_t")["ptx"]
    'f16'
    """
    return dict(load_data("types")["types"][canonical_type(name)])


def value_type_names() -> list[str]:
    """Canonical names of all known value types, narrowest first.

    >>> value_type_names()[:3]
    ['uint1_t', 'int4_t', 'uint4_t']
    """
    t = load_data("types")["types"]
    return sorted(t, key=lambda k: (t[k]["bits"], list(t).index(k)))


# --------------------------------------------------------------------------- element types an MMA reads

#: storage types the MMA hardware itself reads as another element type (copy type, MMA type) -> why;
#: a copy that moves raw bits (ldmatrix, stmatrix, UniversalCopy) must deliver exactly the MMA's
#: element type or one of these
REINTERPRETATIONS = {
    ("float", "tfloat32_t"): "float storage read as tf32: mma.sync .tf32 takes 32-bit registers and uses "
                             "the sign, exponent and upper 10 mantissa bits of an fp32 value",
}

# (exponent bits, mantissa bits) of the floating-point value types
_FLOAT_FORMAT = {"float_e4m3_t": (4, 3), "float_e5m2_t": (5, 2), "half_t": (5, 10), "bfloat16_t": (8, 7),
                 "tfloat32_t": (8, 10), "float": (8, 23), "double": (11, 52)}


def reinterpretation(copy_type: str, mma_type: str) -> str | None:
    """Why raw ``copy_type`` bits are the ``mma_type`` elements the MMA reads, or
    ``None`` when they are not: the same type, or a reinterpretation the hardware
    defines (:data:`REINTERPRETATIONS`).  Equal widths are not enough.

    >>> reinterpretation("half_t", "half_t"), reinterpretation("bfloat16_t", "half_t")
    ('the same element type', None)
    >>> reinterpretation("int8_t", "uint8_t"), reinterpretation("float_e5m2_t", "float_e4m3_t")
    (None, None)
    >>> reinterpretation("float", "tfloat32_t")[:28]
    'float storage read as tf32: '
    """
    a, b = canonical_type(copy_type), canonical_type(mma_type)
    if a == b:
        return "the same element type"
    return REINTERPRETATIONS.get((a, b))


def exact_conversion(src: str, dst: str) -> bool:
    """Every ``src`` value converts to ``dst`` exactly (C++ conversion, as CuTe's
    element-wise copy of mismatched types performs it).

    >>> exact_conversion("half_t", "tfloat32_t"), exact_conversion("bfloat16_t", "half_t")
    (True, False)
    >>> exact_conversion("int8_t", "uint8_t"), exact_conversion("int8_t", "half_t"), exact_conversion("uint8_t", "int8_t")
    (False, True, False)
    """
    a, b = canonical_type(src), canonical_type(dst)
    if a == b:
        return True
    ia, ib = value_type_info(a), value_type_info(b)
    ca, cb = ia["class"], ib["class"]
    if ca == "float":
        fa, fb = _FLOAT_FORMAT.get(a), _FLOAT_FORMAT.get(b)
        return cb == "float" and fa is not None and fb is not None and fb[0] >= fa[0] and fb[1] >= fa[1]
    magnitude = ia["bits"] - (1 if ca == "int" else 0)          # value bits of the integer
    if cb == "float":
        fb = _FLOAT_FORMAT.get(b)
        return fb is not None and fb[1] + 1 >= magnitude and 2 ** (fb[0] - 1) > ia["bits"]
    if ca == "int" and cb == "uint":
        return False
    return ib["bits"] - (1 if cb == "int" else 0) >= magnitude


class Registers(NamedTuple):
    """A register array ``type[count]`` of an MMA/copy operation struct.

    >>> r = Registers("uint32_t", 4)
    >>> r, r.bits, r.total_bits
    (Registers(type='uint32_t', count=4), 32, 128)
    """
    type: str
    count: int

    @property
    def bits(self) -> int:
        """Width of one register in bits."""
        return value_type_bits(self.type)

    @property
    def total_bits(self) -> int:
        """``count * bits``."""
        return self.count * self.bits

    def __str__(self) -> str:
        return f"{self.type}[{self.count}]"


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
    s = _norm_space(name)
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

    def lookup(self, name: str) -> dict:
        """The resolved entry (a fresh dict) for ``name``; AtomError if unknown."""
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
            raise AtomError(f"unknown {self.what} {name!r}{suggest(norm, self.names())}")
        self._cache[name] = entry
        return dict(entry)

    def resolve_layout(self, s: str) -> str:
        """``'@Name'`` -> the named layout string; other strings unchanged."""
        if isinstance(s, str) and s.startswith("@"):
            return self.layouts[s[1:]]
        return s


# --------------------------------------------------------------------------- catalog


def catalog_json() -> dict:
    """The whole atom catalog as JSON-ready data: ``{"atoms": [...]}``.

    MMA atoms carry ``shape_mnk``, ``thr_id``, ``a_layout``, ``b_layout``,
    ``c_layout``; copy operations ``thr_id``, ``src_layout``, ``dst_layout``,
    ``ref_layout`` in bits.  Every layout is a CuTe-notation string.

    >>> atoms = catalog_json()["atoms"]
    >>> a = next(x for x in atoms if x["name"] == "SM80_16x8x8_F16F16F16F16_TN")
    >>> a["kind"], a["shape_mnk"], a["b_layout"]
    ('mma', [16, 8, 8], '((4,8),2):((16,1),8)')
    >>> c = next(x for x in atoms if x["name"] == "SM75_U32x1_LDSM_N")
    >>> c["kind"], c["src_layout"]
    ('copy', '((8,4),128):((128,0),1)')
    """
    from .copy import copy_op_names, get_copy_op
    from .mma import get_mma_atom, mma_atom_names
    atoms = [get_mma_atom(n).to_json() for n in mma_atom_names()]
    atoms += [get_copy_op(n).to_json() for n in copy_op_names()]
    return {"atoms": atoms}


def catalog_text() -> str:
    """A readable table of the catalog (the non-JSON ``symlayout atoms`` output).

    >>> print(catalog_text().splitlines()[0])
    MMA atoms (Shape_MNK; ThrID; ALayout | BLayout | CLayout; registers D/A/B/C; arch)
    """
    from .copy import copy_op_names, get_copy_op
    from .mma import get_mma_atom, mma_atom_names
    lines = ["MMA atoms (Shape_MNK; ThrID; ALayout | BLayout | CLayout; registers D/A/B/C; arch)"]
    mmas = [get_mma_atom(n) for n in mma_atom_names()]
    w = max(len(a.name) for a in mmas)
    for a in mmas:
        regs = "/".join(str(r) if r else "-" for r in (a.d_regs, a.a_regs, a.b_regs, a.c_regs))
        shp = "(" + ",".join(map(str, a.shape_mnk)) + ")"
        lines.append(f"  {a.name:<{w}}  {shp:<13} {str(a.thr_id):<12} {a.a_layout} | {a.b_layout} | "
                     f"{a.c_layout}  {regs}  {a.arch or 'any'}")
    lines.append("")
    lines.append("Copy operations (kind; ThrID; Src | Dst bit layouts, Ref = src/dst; registers S/D; arch)")
    ops = [get_copy_op(n) for n in copy_op_names()]
    w = max(len(o.name) for o in ops)
    for o in ops:
        lines.append(f"  {o.name:<{w}}  {o.kind:<9} {str(o.thr_id):<6} {o.src_layout} | {o.dst_layout}  "
                     f"ref={o.ref}  {o.s_regs}/{o.d_regs}  {o.arch or 'any'}")
    return "\n".join(lines)
