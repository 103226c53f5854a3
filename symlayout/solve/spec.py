"""Solve files: configurations with unknown parts (``symlayout solve``).

A solve file is a configuration (``shared/spec/configs.md``: ``[mma]`` and
``[copy.*]`` tables) in which some values are left open.  Four kinds of
unknowns are understood:

* **a swizzle** ``Sw<?,?,?>`` in front of an smem layout, or with some of its
  parameters fixed (``Sw<?,3,3>``); each ``?`` is an unknown named ``B``, ``M``
  or ``S`` (with the operand appended -- ``B_A``, ``B_B`` -- when more than one
  ``[copy.*]`` has an unknown swizzle).  A parameter may also be a named unknown
  (``Sw<?b,3,3>``, declared in ``[unknowns]``), which lets two operands share it.
  Default ranges: ``B`` 0..4, ``M`` 0..6, ``S`` 0..8, always with ``S >= B``
  (CuTe's ``|S| >= B``); declaring ``[unknowns] B = { min = 1, max = 3 }``
  (or ``B_A = ...``) overrides a default.  ``Sw<0,M,S>`` is the identity: with
  ``B = 0`` the other unknown parameters are pinned to their minimum, so the
  unswizzled layout is one candidate, printed without a swizzle.
* **an integer** ``?name`` in a shape or stride entry of an smem layout, with a
  declared range: ``smem = "(32,64):(64+?pad,1)"`` and
  ``[unknowns] pad = { min = 0, max = 16 }`` (optional ``multiple_of``).  Entries
  are expressions (integers, names, ``+ - * //``, parentheses) as in ``[params]``.
* **a copy atom from a list**: ``atom = ["SM75_U32x4_LDSM_N", "SM75_U16x8_LDSM_T"]``.
* **a permutation mode from a list**: in ``[mma] permutation``, an entry that is
  itself an array lists the alternatives for that mode:
  ``permutation = ["32", ["32", "(8,2,2):(1,16,8)"], "32"]``.

Optional ``[solve]`` keys: ``minimize`` (an expression over unknown names, the
default of ``--minimize``), ``timeout_s`` (the whole search, default 120) and
``max_solutions`` (how many ``--all`` lists, default 256).  ``[prove]
properties`` picks the properties every solution must have (default: all seven
copy properties).  ``[params]`` and ``[expect]`` do not apply to solve files.

The known parts are validated by :func:`symlayout.config.loads_config` on
placeholder instances of the file (every alternative of every choice is
checked), so errors read exactly as for configurations:
``"<path>:<line>: <problem>"``.

>>> spec = loads_spec('''
... [unknowns]
... pad = { min = 0, max = 16 }
... [mma]
... atom = "SM80_16x8x16_F16F16F16F16_TN"
... layout = "(2,2,1)"
... [copy.A]
... atom = ["SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N"]
... type = "half_t"
... smem = "Sw<?,3,3> o (32,64):(64+?pad,1)"
... ''', "x.toml")
>>> sorted(spec.unknowns), spec.unknowns["B"].max, spec.copies["A"].atoms
(['B', 'pad'], 4, ('SM75_U32x4_LDSM_N', 'SM75_U32x2_LDSM_N'))
>>> spec.copies["A"].smem.text({"B": 3, "pad": 0}), spec.copies["A"].smem.text({"B": 0, "pad": 8})
('Sw<3,3,3> o 0 o (32,64):(64,1)', '(32,64):(72,1)')
"""
from __future__ import annotations

import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass
from typing import Any

import sympy

from ..algebra.composed import ComposedLayout, Swizzle
from ..algebra.layout import Layout
from ..algebra.notation import parse
from ..config import loads_config, read_text
from ..config.base import LoaderBase
from ..config.keys import COPY, MMA, PARAM
from ..errors import ConfigError, SymlayoutError
from ..threadmap.formula import parse_expr

__all__ = ["Unknown", "SwizzleSpec", "SmemSpec", "CopySpec", "MMASpec", "SolveSpec", "Combo", "load_spec",
           "loads_spec", "COPY_PROPERTIES", "SWIZZLE_DEFAULTS"]

#: properties a solve file may ask for (the copy properties of the prover)
COPY_PROPERTIES = ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
                   "type_agreement")
#: default ranges of anonymous swizzle parameters
SWIZZLE_DEFAULTS = {"B": (0, 4), "M": (0, 6), "S": (0, 8)}
#: largest value an unknown may take
MAX_UNKNOWN = 1 << 20
#: most alternatives of one choice, and most combinations of all choices
MAX_CHOICES = 64
MAX_COMBOS = 256

_TOP_KEYS = ("name", "mma", "copy", "unknowns", "prove", "solve", "params", "expect")
# the keys of the configuration's description a solve file takes (a hand-built TiledCopy, convert: proved, not solved)
_MMA_KEYS = tuple(k for k in MMA.names if k != "cluster")   # (a solve file is an mma.sync TiledMMA: no SM100 cluster)
_COPY_KEYS = tuple(k for k in COPY.names if k in ("atom", "type", "smem", "align", "element"))
_UNK_KEYS = PARAM.names                    # (an unknown's range: the keys of a [params] symbol)
_SOLVE_KEYS = ("minimize", "timeout_s", "max_solutions")
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_RESERVED = {"o", "Sw"}
_SW_RE = re.compile(r"\s*Sw<(?P<args>[^<>]*)>\s*o\s*(?:(?P<off>_?-?\d+)\s*o\s*)?")
_Q_NAME = re.compile(r"\?([A-Za-z][A-Za-z0-9_]*)")


def _sym(name: str):
    return sympy.Symbol(name, integer=True, nonnegative=True)


# ---------------------------------------------------------------- data


@dataclass(frozen=True)
class Unknown:
    """An integer unknown: ``min <= value <= max``, a multiple of ``multiple_of``.

    ``role`` is ``"int"`` (a ``?name`` entry) or ``"B"``/``"M"``/``"S"`` (a swizzle parameter).

    >>> u = Unknown("pad", 0, 16, 8); u.values(), u.count()
    ([0, 8, 16], 3)
    """
    name: str
    min: int
    max: int
    multiple_of: int = 1
    role: str = "int"
    line: int = 0

    def values(self) -> list:
        """Every admissible value, ascending."""
        lo = -(-self.min // self.multiple_of) * self.multiple_of
        return list(range(lo, self.max + 1, self.multiple_of))

    def count(self) -> int:
        """Number of admissible values."""
        return max(0, self.max // self.multiple_of - (-(-self.min // self.multiple_of)) + 1)


@dataclass(frozen=True)
class SwizzleSpec:
    """``Sw<B,M,S>`` whose parameters are ints or unknown names.

    >>> sw = SwizzleSpec("B", 3, 3); sw.unknown_names(), sw.concrete({"B": 2})
    (['B'], (2, 3, 3))
    """
    b: Any
    m: Any
    s: Any

    def unknown_names(self) -> list:
        """Names of the unknown parameters, in B, M, S order."""
        return [x for x in (self.b, self.m, self.s) if isinstance(x, str)]

    def concrete(self, values: dict) -> tuple:
        """``(B, M, S)`` with the unknowns replaced by ``values``."""
        return tuple(values[x] if isinstance(x, str) else x for x in (self.b, self.m, self.s))

    def __str__(self):
        return "Sw<" + ",".join(f"?{x}" if isinstance(x, str) else str(x) for x in (self.b, self.m, self.s)) + ">"


@dataclass(frozen=True)
class SmemSpec:
    """An smem layout with unknowns: optional swizzle, offset, and an inner Layout
    whose entries may be sympy expressions in the unknowns.

    >>> from symlayout.algebra.layout import Layout
    >>> s = SmemSpec("(8,8):(8+?p,1)", None, 0, Layout((8, 8), (_sym("p") + 8, 1)), ("p",))
    >>> s.text({"p": 2}), s.instantiate({"p": 2})(1, 0)
    ('(8,8):(10,1)', 10)
    """
    raw: str
    swizzle: SwizzleSpec | None
    offset: int
    inner: Any
    names: tuple = ()

    def inner_at(self, values: dict):
        """The inner Layout with the unknowns replaced by ``values``."""
        subs = {_sym(n): values[n] for n in self.names}

        def go(x):
            if isinstance(x, tuple):
                return tuple(go(e) for e in x)
            if isinstance(x, sympy.Basic):
                r = sympy.sympify(x).subs(subs)
                if not r.is_Integer:
                    raise SymlayoutError(f"smem {self.raw!r}: entry {x} is not an integer for {values}")
                return int(r)
            return x
        return Layout(go(self.inner.shape), go(self.inner.stride))

    def instantiate(self, values: dict):
        """The concrete Layout / ComposedLayout for ``values``."""
        inner = self.inner_at(values)
        if self.swizzle is None:
            return inner
        b, m, s = self.swizzle.concrete(values)
        if b == 0 and self.offset == 0:
            return inner
        return ComposedLayout(Swizzle(b, m, s), self.offset, inner)

    def text(self, values: dict) -> str:
        """CuTe print form of the instance (``Sw<B,M,S> o off o inner`` or the plain inner layout)."""
        return str(self.instantiate(values))


@dataclass(frozen=True)
class CopySpec:
    """``[copy.X]`` of a solve file: the atom alternatives, value type, smem with unknowns, base alignment."""
    operand: str
    atoms: tuple
    type: str
    smem: SmemSpec
    align: int
    line: int = 0
    element: str = ""             # contract 2.1: the element type of the operand's tensors ("" = ``type``)

    @property
    def element_type(self) -> str:
        return self.element or self.type


@dataclass(frozen=True)
class MMASpec:
    """``[mma]``: atom, AtomLayoutMNK text, and per permutation mode the alternatives (None: no permutation)."""
    atom: str
    layout: str
    permutation: tuple | None
    line: int = 0


@dataclass(frozen=True)
class Combo:
    """One choice of every list: the permutation modes and each copy's atom.

    >>> Combo(("32", "32", "16"), {"A": "SM75_U32x4_LDSM_N"}).describe()
    'permutation [32, 32, 16], A: SM75_U32x4_LDSM_N'
    """
    permutation: tuple | None
    atoms: dict

    def describe(self) -> str:
        """A short human description."""
        parts = []
        if self.permutation is not None:
            parts.append("permutation [" + ", ".join(self.permutation) + "]")
        parts += [f"{op}: {a}" for op, a in sorted(self.atoms.items())]
        return ", ".join(parts)


@dataclass
class SolveSpec:
    """A loaded solve file."""
    path: str
    name: str
    mma: MMASpec
    copies: dict
    unknowns: dict
    properties: tuple
    prove_timeout_s: float
    timeout_s: float = 120.0
    minimize: str | None = None
    max_solutions: int = 256
    text: str = ""
    lines: Any = None
    explicit_properties: bool = False

    def combos(self) -> list:
        """Every combination of the choice lists (permutation modes x copy atoms).

        >>> spec = loads_spec('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\npermutation = ["32", ["16", "32"], "16"]\\n'
        ...                   '[copy.A]\\natom = ["SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N"]\\ntype = "half_t"\\n'
        ...                   'smem = "(32,16):(16,1)"\\n')
        >>> [c.describe() for c in spec.combos()][:2]
        ['permutation [32, 16, 16], A: SM75_U32x4_LDSM_N', 'permutation [32, 16, 16], A: SM75_U32x2_LDSM_N']
        """
        perms = [None] if self.mma.permutation is None else [tuple(p) for p in itertools.product(*self.mma.permutation)]
        ops = sorted(self.copies)
        out = []
        for p in perms:
            for atoms in itertools.product(*[self.copies[o].atoms for o in ops]):
                out.append(Combo(p, dict(zip(ops, atoms))))
        return out

    @property
    def has_choices(self) -> bool:
        """True when an atom or a permutation mode is chosen from a list."""
        return len(self.combos()) > 1

    def space_size(self) -> int:
        """Number of candidates in the declared space: value combinations (swizzles with
        ``S >= B``, and ``B = 0`` counted once) times choice combinations.

        >>> loads_spec('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\n'
        ...            'type = "half_t"\\nsmem = "Sw<?,3,3> o (32,16):(16,1)"\\n').space_size()
        4
        """
        n = len(self.combos())
        sw_names = [u for u in self.unknowns.values() if u.role != "int"]
        for u in self.unknowns.values():
            if u.role == "int":
                n *= u.count()
        total = 1
        for u in sw_names:
            total *= u.count()
        if total > 100000:
            return n * total
        sws = [c.smem.swizzle for c in self.copies.values() if c.smem.swizzle is not None]
        count = 0
        for combo in itertools.product(*[u.values() for u in sw_names]):
            vals = dict(zip([u.name for u in sw_names], combo))
            ok = True
            for sw in sws:
                b, m, s = sw.concrete({**vals, **{k: 0 for k in sw.unknown_names() if k not in vals}})
                if abs(s) < b:
                    ok = False
                elif b == 0 and isinstance(sw.b, str) and any(
                        isinstance(x, str) and vals[x] != self.unknowns[x].min for x in (sw.m, sw.s)):
                    ok = False
            count += ok
        return n * count

    def complete(self, values: dict, combo: Combo, note: str = "") -> str:
        """The completed (concrete) configuration as TOML text.

        >>> spec = loads_spec('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\n'
        ...                   'type = "half_t"\\nsmem = "Sw<?,3,3> o (32,16):(16,1)"\\n', "f.toml")
        >>> print(spec.complete({"B": 1}, spec.combos()[0]).splitlines()[-1])
        smem = "Sw<1,3,3> o 0 o (32,16):(16,1)"
        """
        out = [f"name = {_q(self.name + (f' ({note})' if note else ''))}", "", "[mma]", f"atom = {_q(self.mma.atom)}",
               f"layout = {_q(self.mma.layout)}"]
        if combo.permutation is not None:
            out.append("permutation = [" + ", ".join(_q(p) for p in combo.permutation) + "]")
        for op in sorted(self.copies):
            c = self.copies[op]
            out += ["", f"[copy.{op}]", f"atom = {_q(combo.atoms[op])}", f"type = {_q(c.type)}"]
            if c.element:
                out.append(f"element = {_q(c.element)}")
            out.append(f"smem = {_q(c.smem.text(values))}")
            if c.align != 128:
                out.append(f"align = {c.align}")
        if self.explicit_properties:
            out += ["", "[prove]", "properties = [" + ", ".join(_q(p) for p in self.properties) + "]"]
        return "\n".join(out) + "\n"

    def error(self, keys, problem: str) -> ConfigError:
        """A ConfigError ``"<path>:<line>: <problem>"`` at a key path."""
        line = self.lines.line(*keys) if self.lines else 1
        return ConfigError(f"{self.path}:{line}: {problem}")


def _q(s: str) -> str:
    return json.dumps(str(s))


# ---------------------------------------------------------------- loader


def _tname(v) -> str:
    if isinstance(v, bool):
        return "a boolean"
    return {int: "an integer", float: "a float", str: "a string", list: "an array", dict: "a table"}.get(
        type(v), f"a {type(v).__name__}")


class _SpecLoader(LoaderBase):
    """Reads one solve file (the configuration loader's text and lines; its own messages)."""

    def fail(self, keys, problem: str):
        raise ConfigError(f"{self.path}:{self.lines.line(*keys)}: {' '.join(str(problem).split())}")

    def check_known(self, t: dict, keys, known, what: str):
        """No key of ``t`` outside ``known``."""
        for k in t:
            if k not in known:
                self.fail(keys + (k,), f"{what}: unknown key {k!r} (known: {', '.join(known)})")

    def check_forms(self, t: dict, keys, what: str, described):
        """The value of each described key present in ``t`` has its form (a string, an integer)."""
        for key in described:
            v = t.get(key.name)
            if v is None:
                continue
            if key.form == "string" and not isinstance(v, str):
                self.fail(keys + (key.name,), f"{what} {key.name} must be a string, not {_tname(v)}")
            if key.form in ("integer", "align") and (isinstance(v, bool) or not isinstance(v, int)):
                self.fail(keys + (key.name,), f"{what} {key.name} must be an integer, not {_tname(v)}")

    def load(self) -> SolveSpec:
        try:
            data = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as e:
            # the configuration loader words TOML errors; reuse it
            loads_config(self.text, self.path)
            raise ConfigError(f"{self.path}: invalid TOML: {e}") from None
        except RecursionError:
            raise ConfigError(f"{self.path}:1: invalid TOML: arrays or tables nested too deeply") from None
        for k in data:
            if k not in _TOP_KEYS:
                self.fail((k,), f"top level: unknown key {k!r} (a solve file takes {', '.join(_TOP_KEYS[:6])})")
        if "params" in data:
            self.fail(("params",), "[params] does not apply to a solve file: declare unknowns in [unknowns] "
                                   "(solve finds their values) and use them as ?name")
        if "expect" in data:
            self.fail(("expect",), "[expect] does not apply to a solve file: solve looks for values that make every "
                                   "requested property hold")
        if "mma" not in data:
            self.fail((), "a solve file needs an [mma] table and at least one [copy.*] table with unknowns")
        if "copy" not in data or not isinstance(data["copy"], dict) or not data["copy"]:
            self.fail(("mma",), "a solve file needs at least one [copy.A], [copy.B] or [copy.C] table")
        declared = self.load_unknowns(data)
        mma = self.load_mma(data["mma"])
        copies = self.load_copies(data["copy"], declared)
        unknowns = self.finish_unknowns(declared, copies)
        solve = self.load_solve(data.get("solve", {}), unknowns)
        name = data.get("name")
        if name is None:
            from pathlib import Path
            name = Path(self.path).stem
        spec = SolveSpec(path=self.path, name=str(name), mma=mma, copies=copies, unknowns=unknowns,
                         properties=COPY_PROPERTIES, prove_timeout_s=10.0, text=self.text, lines=self.lines, **solve)
        self.validate_with_config(spec, data)
        return spec

    # -- [unknowns]
    def load_unknowns(self, data) -> dict:
        t = data.get("unknowns", {})
        if not isinstance(t, dict):
            self.fail(("unknowns",), f"[unknowns] must be a table, not {_tname(t)}")
        out = {}
        for name, spec in t.items():
            keys = ("unknowns", name)
            if not _IDENT.match(name) or name in _RESERVED:
                self.fail(keys, f"[unknowns]: {name!r} is not a valid name (a letter, then letters, digits or '_'; "
                                "not 'o' or 'Sw')")
            if not isinstance(spec, dict):
                self.fail(keys, f"[unknowns] {name} must be a table like {{ min = 0, max = 16 }}, not {_tname(spec)}")
            self.check_known(spec, keys, _UNK_KEYS, f"[unknowns] {name}")
            vals = {}
            for k, default in (("min", 0), ("max", None), ("multiple_of", 1)):
                v = spec.get(k, default)
                if v is None:
                    self.fail(keys, f"[unknowns] {name}: missing required key 'max'")
                if isinstance(v, bool) or not isinstance(v, int):
                    self.fail(keys + (k,), f"[unknowns] {name} {k} must be an integer, not {_tname(v)} {v!r}")
                lo = 1 if k == "multiple_of" else 0
                if v < lo or v > MAX_UNKNOWN:
                    self.fail(keys + (k,), f"[unknowns] {name} {k} must lie in [{lo}, {MAX_UNKNOWN}], got {v}")
                vals[k] = v
            if vals["min"] > vals["max"]:
                self.fail(keys, f"[unknowns] {name}: min = {vals['min']} is greater than max = {vals['max']}")
            u = Unknown(name, vals["min"], vals["max"], vals["multiple_of"], "int", self.lines.line(*keys))
            if u.count() == 0:
                self.fail(keys, f"[unknowns] {name}: no multiple of {u.multiple_of} lies in [{u.min}, {u.max}]")
            out[name] = u
        return out

    def finish_unknowns(self, declared: dict, copies: dict) -> dict:
        used = {}
        for c in copies.values():
            for n in c.smem.names:
                used.setdefault(n, "int")
            if c.smem.swizzle is not None:
                for role, x in zip("BMS", (c.smem.swizzle.b, c.smem.swizzle.m, c.smem.swizzle.s)):
                    if isinstance(x, str):
                        prev = used.get(x)
                        if prev not in (None, "int", role):
                            self.fail(("copy", c.operand, "smem"), f"[copy.{c.operand}] smem: unknown {x!r} is used as "
                                                                   f"swizzle {prev} and swizzle {role}")
                        used[x] = role
        out = {}
        for n, role in used.items():
            if n in declared:
                d = declared[n]
                out[n] = Unknown(d.name, d.min, d.max, d.multiple_of, role, d.line)
            else:
                lo, hi = SWIZZLE_DEFAULTS[role]
                out[n] = Unknown(n, lo, hi, 1, role, 0)
        for n, d in declared.items():
            if n not in used:
                self.fail(("unknowns", n), f"[unknowns] {n} is declared but not used (write ?{n} in an smem layout)")
        return out

    # -- [mma]
    def load_mma(self, t) -> MMASpec:
        keys = ("mma",)
        if not isinstance(t, dict):
            self.fail(keys, f"[mma] must be a table, not {_tname(t)}")
        self.check_known(t, keys, _MMA_KEYS, "[mma]")
        atom = t.get("atom")
        if isinstance(atom, list):
            self.fail(keys + ("atom",), "[mma] atom: solve chooses copy atoms and permutation modes from lists, "
                                        "not the MMA atom (write one solve file per MMA atom)")
        if not isinstance(atom, str):
            self.fail(keys + ("atom",) if "atom" in t else keys,
                      "[mma]: missing required key 'atom'" if "atom" not in t else
                      f"[mma] atom must be a string, not {_tname(atom)}")
        self.check_forms(t, keys, "[mma]", (MMA["layout"],))
        layout = t.get("layout", MMA["layout"].default)
        perm = None
        if "permutation" in t:
            p = t["permutation"]
            if not isinstance(p, list) or not 1 <= len(p) <= 3:
                self.fail(keys + ("permutation",), "[mma] permutation must be an array of 1 to 3 entries; an entry "
                                                   "that is an array lists the alternatives for that mode")
            modes = []
            for i, e in enumerate(p):
                alts = e if isinstance(e, list) else [e]
                if not alts:
                    self.fail(keys + ("permutation",), f"[mma] permutation[{i}]: the list of alternatives is empty")
                if len(alts) > MAX_CHOICES:
                    self.fail(keys + ("permutation",), f"[mma] permutation[{i}]: more than {MAX_CHOICES} alternatives")
                for a in alts:
                    if isinstance(a, bool) or not isinstance(a, (str, int)):
                        self.fail(keys + ("permutation",), f"[mma] permutation[{i}]: alternatives must be extents "
                                                           f"(\"32\") or layouts, not {_tname(a)} {a!r}")
                strs = tuple(str(a) for a in alts)
                if len(set(strs)) != len(strs):
                    self.fail(keys + ("permutation",), f"[mma] permutation[{i}] lists an alternative twice")
                modes.append(strs)
            perm = tuple(modes)
        return MMASpec(atom, layout, perm, self.lines.line(*keys))

    # -- [copy.X]
    def load_copies(self, t, declared) -> dict:
        out = {}
        for op, spec in t.items():
            keys = ("copy", op)
            if op not in ("A", "B", "C"):
                self.fail(keys, f"[copy.{op}]: unknown operand {op!r}; copies are [copy.A], [copy.B] or [copy.C]")
            if not isinstance(spec, dict):
                self.fail(keys, f"copy.{op} must be a table [copy.{op}], not {_tname(spec)}")
            self.check_known(spec, keys, _COPY_KEYS, f"[copy.{op}]")
            for k in (key.name for key in COPY.keys if key.required):
                if k not in spec:
                    self.fail(keys, f"[copy.{op}]: missing required key {k!r}")
            atom = spec["atom"]
            atoms = tuple(atom) if isinstance(atom, list) else (atom,)
            if not atoms:
                self.fail(keys + ("atom",), f"[copy.{op}] atom: the list of alternatives is empty")
            if len(atoms) > MAX_CHOICES:
                self.fail(keys + ("atom",), f"[copy.{op}] atom: more than {MAX_CHOICES} alternatives")
            for a in atoms:
                if not isinstance(a, str):
                    self.fail(keys + ("atom",), f"[copy.{op}] atom must be a string or an array of strings, "
                                                f"not {_tname(a)} {a!r}")
            if len(set(atoms)) != len(atoms):
                self.fail(keys + ("atom",), f"[copy.{op}] atom lists an alternative twice")
            self.check_forms(spec, keys, f"[copy.{op}]", (COPY["type"], COPY["smem"], COPY["align"], COPY["element"]))
            typ, raw = spec["type"], spec["smem"]
            align, element = spec.get("align", COPY["align"].default), spec.get("element", "")
            smem = self.parse_smem(raw, keys + ("smem",), op, declared, multi=None)
            out[op] = CopySpec(op, atoms, typ, smem, align, self.lines.line(*keys), element)
        # anonymous swizzle parameters: B/M/S, or B_A ... when several copies have them
        anon = [op for op, c in out.items() if c.smem.swizzle is not None and
                any(isinstance(x, str) and x.startswith("\0") for x in (c.smem.swizzle.b, c.smem.swizzle.m,
                                                                          c.smem.swizzle.s))]
        for op in anon:
            c = out[op]
            sw = c.smem.swizzle

            def nm(x, role):
                if isinstance(x, str) and x.startswith("\0"):
                    return role if len(anon) == 1 else f"{role}_{op}"
                return x
            sw2 = SwizzleSpec(nm(sw.b, "B"), nm(sw.m, "M"), nm(sw.s, "S"))
            clash = [n for n in sw2.unknown_names() if n in c.smem.names]
            if clash:
                self.fail(("copy", op, "smem"), f"[copy.{op}] smem: ?{clash[0]} is also the name of the anonymous "
                                                f"swizzle parameter; rename the unknown")
            out[op] = CopySpec(op, c.atoms, c.type, SmemSpec(c.smem.raw, sw2, c.smem.offset, c.smem.inner,
                                                             c.smem.names), c.align, c.line, c.element)
        return out

    def parse_smem(self, raw: str, keys, op, declared, multi) -> SmemSpec:
        where = f"[copy.{op}] smem"
        for i, ch in enumerate(raw):
            if not (ch.isascii() and (ch.isprintable() or ch in " \t")):
                self.fail(keys, f"{where}: {raw!r}: column {i + 1}: unexpected character {ch!r}")
        sw, off, start = None, 0, 0
        m = _SW_RE.match(raw)
        if raw.lstrip().startswith("Sw<") and not m:
            self.fail(keys, f"{where}: {raw!r}: expected \"Sw<B,M,S> o layout\" (each of B, M, S an integer, '?' "
                            f"or '?name')")
        if m:
            args = [a.strip() for a in m.group("args").split(",")]
            if len(args) != 3:
                self.fail(keys, f"{where}: {raw!r}: a swizzle has three parameters Sw<B,M,S>, got {len(args)}")
            vals = []
            for role, a in zip("BMS", args):
                if a == "?":
                    vals.append("\0" + role)
                elif a.startswith("?"):
                    n = a[1:]
                    if not _IDENT.match(n):
                        self.fail(keys, f"{where}: {raw!r}: {a!r} is not '?' or '?name'")
                    if n not in declared:
                        self.fail(keys, f"{where}: {raw!r}: ?{n} is not declared in [unknowns] (add "
                                        f"{n} = {{ min = 0, max = ... }}), or write '?' for the default range")
                    vals.append(n)
                else:
                    try:
                        vals.append(int(a.lstrip("_")))
                    except ValueError:
                        self.fail(keys, f"{where}: {raw!r}: swizzle parameter {role} = {a!r} is not an integer, "
                                        "'?' or '?name'")
            b, mm, s = vals
            if isinstance(b, int) and b < 0 or isinstance(mm, int) and mm < 0:
                self.fail(keys, f"{where}: {raw!r}: a swizzle needs B >= 0 and M >= 0")
            if isinstance(b, int) and isinstance(s, int) and abs(s) < b:
                self.fail(keys, f"{where}: {raw!r}: a swizzle needs |S| >= B")
            sw = SwizzleSpec(b, mm, s)
            if m.group("off"):
                off = int(m.group("off").lstrip("_"))
                if off:
                    self.fail(keys, f"{where}: {raw!r}: solve supports a zero swizzle offset only")
            start = m.end()
        body = raw[start:]
        names = []
        for qm in _Q_NAME.finditer(body):
            n = qm.group(1)
            if n not in declared:
                self.fail(keys, f"{where}: {raw!r}: column {start + qm.start() + 1}: ?{n} is not declared in "
                                f"[unknowns] (add {n} = {{ min = 0, max = ... }})")
            if n not in names:
                names.append(n)
        if "?" in _Q_NAME.sub("", body):
            col = start + _Q_NAME.sub(lambda q: "x" * len(q.group(0)), body).index("?") + 1
            self.fail(keys, f"{where}: {raw!r}: column {col}: '?' needs a name (e.g. ?pad) declared in "
                            f"[unknowns]; a bare '?' is only for swizzle parameters")
        blanked = " " * start + _Q_NAME.sub(lambda q: " " + q.group(1), body)
        symbols = {n: _sym(n) for n in names}
        try:
            node = parse(blanked, symbols)
        except SymlayoutError as e:
            msg = str(e)
            mm = re.match(r'"(.*?)": column (\d+): (.*)\Z', msg, re.S)
            if mm:
                col = int(mm.group(2)) + (len(blanked) - len(blanked.lstrip()) if mm.group(1) == blanked.strip() else 0)
                msg = f"{raw!r}: column {col}: {mm.group(3)}"
            self.fail(keys, f"{where}: {msg}")
        except (RecursionError, MemoryError, OverflowError, ValueError):
            self.fail(keys, f"{where}: cannot read {raw!r} as a layout")
        if not hasattr(node, "shape") or getattr(node, "is_composed", False) or getattr(node, "is_swizzle", False):
            self.fail(keys, f"{where} must be a layout \"shape:stride\", optionally \"Sw<B,M,S> o shape:stride\", "
                            f"got {raw!r}")
        if node.rank() != 2:       # (M,K,PIPE) layouts are proved (version 2), not solved
            self.fail(keys, f"{where} {raw!r} has rank {node.rank()}; solve files take the rank-2 tile "
                            "(stages are not solved)")
        return SmemSpec(raw, sw, off, node, tuple(names))

    # -- [solve]
    def load_solve(self, t, unknowns) -> dict:
        keys = ("solve",)
        if not isinstance(t, dict):
            self.fail(keys, f"[solve] must be a table, not {_tname(t)}")
        out = {}
        self.check_known(t, keys, _SOLVE_KEYS, "[solve]")
        if "minimize" in t:
            v = t["minimize"]
            if not isinstance(v, str):
                self.fail(keys + ("minimize",), f"[solve] minimize must be a string expression, not {_tname(v)}")
            try:
                parse_objective(v, unknowns)
            except SymlayoutError as e:
                self.fail(keys + ("minimize",), f"[solve] minimize: {e}")
            out["minimize"] = v
        if "timeout_s" in t:
            v = t["timeout_s"]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                self.fail(keys + ("timeout_s",), f"[solve] timeout_s must be a positive number of seconds, got {v!r}")
            out["timeout_s"] = float(v)
        if "max_solutions" in t:
            v = t["max_solutions"]
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 100000:
                self.fail(keys + ("max_solutions",), f"[solve] max_solutions must be an integer in [1, 100000], got {v!r}")
            out["max_solutions"] = v
        return out

    # -- the known parts, validated by the configuration loader
    def validate_with_config(self, spec: SolveSpec, data):
        combos = spec.combos()
        if len(combos) > MAX_COMBOS:
            self.fail(("copy",), f"{len(combos)} combinations of atoms and permutation modes; solve takes at most "
                                 f"{MAX_COMBOS}")
        # every alternative at least once: the first combo, then each alternative of each list
        chosen = [combos[0]]
        if spec.mma.permutation is not None:
            for i, alts in enumerate(spec.mma.permutation):
                for a in alts[1:]:
                    p = list(combos[0].permutation)
                    p[i] = a
                    chosen.append(Combo(tuple(p), combos[0].atoms))
        for op, c in spec.copies.items():
            for a in c.atoms[1:]:
                chosen.append(Combo(combos[0].permutation, {**combos[0].atoms, op: a}))
        cfg = None
        for combo in chosen:
            text, keymap, smems = self.placeholder_text(spec, combo, data)
            try:
                cfg = loads_config(text, self.path)
            except ConfigError as e:
                msg = str(e)
                mm = re.match(re.escape(self.path) + r":(\d+):(?:\d+:)?\s*(.*)\Z", msg, re.S)
                if not mm:
                    raise
                keys = keymap.get(int(mm.group(1)), ())
                problem = mm.group(2)
                for ph, raw in smems.items():
                    problem = problem.replace(ph, raw)
                self.fail(keys, problem)
        spec.prove_timeout_s = cfg.prove.timeout_s
        if cfg.prove.properties is not None:
            bad = [p for p in cfg.prove.properties if p not in COPY_PROPERTIES]
            if bad:
                self.fail(("prove", "properties"), f"[prove] properties: {bad[0]!r} does not apply to a TiledMMA "
                                                   f"with copies (solve takes {', '.join(COPY_PROPERTIES)})")
            spec.properties = tuple(cfg.prove.properties)
            spec.explicit_properties = True

    def placeholder_text(self, spec: SolveSpec, combo: Combo, data):
        """TOML of one placeholder instance: unknown ints become [params] symbols
        (``?pad`` -> ``pad`` in ``[max(1, min), max(1, max)]``: parameters are
        positive), unknown swizzle parameters the smallest legal values."""
        lines, keymap, smems = [], {}, {}

        def emit(s, keys=()):
            lines.append(s)
            keymap[len(lines)] = keys
        emit(f"name = {_q(spec.name)}", ("name",))
        ints = [u for u in spec.unknowns.values() if u.role == "int"]
        if ints:
            emit("[params]", ("unknowns",))
            for u in ints:
                emit(f"{u.name} = {{ min = {max(1, u.min)}, max = {max(1, u.max)} }}", ("unknowns", u.name))
        emit("[mma]", ("mma",))
        emit(f"atom = {_q(spec.mma.atom)}", ("mma", "atom"))
        emit(f"layout = {_q(spec.mma.layout)}", ("mma", "layout"))
        if combo.permutation is not None:
            emit("permutation = [" + ", ".join(_q(p) for p in combo.permutation) + "]", ("mma", "permutation"))
        for op in sorted(spec.copies):
            c = spec.copies[op]
            emit(f"[copy.{op}]", ("copy", op))
            emit(f"atom = {_q(combo.atoms[op])}", ("copy", op, "atom"))
            emit(f"type = {_q(c.type)}", ("copy", op, "type"))
            if c.element:
                emit(f"element = {_q(c.element)}", ("copy", op, "element"))
            body = _Q_NAME.sub(lambda q: q.group(1), c.smem.raw[_body_start(c.smem.raw):]).strip()
            if c.smem.swizzle is not None:
                sw = c.smem.swizzle
                b = sw.b if isinstance(sw.b, int) else 0
                mm = sw.m if isinstance(sw.m, int) else 0
                s = sw.s if isinstance(sw.s, int) else b
                body = f"Sw<{b},{mm},{s}> o {c.smem.offset} o {body}"
            smems[body] = c.smem.raw
            emit(f"smem = {_q(body)}", ("copy", op, "smem"))
            emit(f"align = {c.align}", ("copy", op, "align"))
        if "prove" in data:
            emit("[prove]", ("prove",))
            pr = data["prove"]
            if isinstance(pr, dict):
                for k, v in pr.items():
                    emit(f"{k} = {_toml_value(v)}", ("prove", k))
            else:
                lines[-1] = f"prove = {_toml_value(pr)}"
                keymap[len(lines)] = ("prove",)
        return "\n".join(lines) + "\n", keymap, smems


def _body_start(raw: str) -> int:
    m = _SW_RE.match(raw)
    return m.end() if m else 0


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return _q(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_q(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    return _q(str(v))


def parse_objective(text: str, unknowns: dict):
    """Parse a ``--minimize`` expression over unknown names (``+ - * // %``, integers).

    >>> parse_objective("B + pad // 8", {"B": None, "pad": None}).evaluate({"B": 3, "pad": 16})
    5
    """
    if not text.strip():
        raise SymlayoutError("the expression to minimize is empty")
    return parse_expr(text, set(unknowns))


# ---------------------------------------------------------------- public API


def loads_spec(text: str, path: str = "<string>") -> SolveSpec:
    """Read a solve file's text (``path`` only names it in messages); see the module docstring.

    >>> loads_spec('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\n'
    ...            'type = "half_t"\\nsmem = "(32,16):(?p,1)"\\n', "f.toml")
    Traceback (most recent call last):
    ...
    symlayout.errors.ConfigError: f.toml:6: [copy.A] smem: '(32,16):(?p,1)': column 10: ?p is not declared in [unknowns] (add p = { min = 0, max = ... })
    """
    if not isinstance(text, str):
        raise ConfigError(f"{path}: solve file text must be a string")
    if text.startswith("\ufeff"):
        text = text[1:]
    return _SpecLoader(path, text).load()


def load_spec(path) -> SolveSpec:
    """Read and validate a solve file (errors: ``"<path>:<line>: <problem>"``).

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.toml"
    >>> _ = p.write_text('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\n'
    ...                  'type = "half_t"\\nsmem = "Sw<?,?,3> o (32,16):(16,1)"\\n')
    >>> sorted(load_spec(p).unknowns)
    ['B', 'M']
    """
    path = str(path)
    return loads_spec(read_text(path), path)
