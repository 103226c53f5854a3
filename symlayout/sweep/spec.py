"""A sweep spec: a space of configurations written in the configuration's own keys.

A spec file (TOML) holds

* ``[space]``: the variables; each is a list of values, a range ``{ min, max, step }`` (or ``times``:
  a geometric range), or a list of tables whose keys vary together (``mma = [{ atom = "...", type = "half_t" }]``
  defines the names ``atom`` and ``type``);
* ``[derived]``: integer expressions of the variables and of the derived values above (``pm = "16 * wm"``);
* ``[config]``: the configuration template, a normal configuration in which ``{name}`` is replaced by a
  variable's value (a string that is exactly ``"{name}"`` takes the value itself, an int stays an int);
* ``[constraints]``: budgets checked before proving (``smem_bytes`` against the architecture's shared memory
  per block, ``registers`` against the user's ``max_registers``, ``tmem_columns`` on SM100).

Candidates are the product of the variables in the order ``[space]`` lists them; candidate ``i`` is the
mixed-radix digit string of ``i`` (the last variable varies fastest), so ids are deterministic and a
candidate is built from its id alone, without the ones before it.

>>> s = loads_spec('[space]\\nk = [16, 32]\\nw = { min = 1, max = 3 }\\n'
...                '[config.mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\nlayout = "({w},1,1)"\\n')
>>> len(s), s.values(4)
(6, {'k': 32, 'w': 2})
>>> s.config(4)["mma"]["layout"]
'(2,1,1)'
"""
from __future__ import annotations

import hashlib
import math
import re
import tomllib

from ..errors import ConfigError, SymlayoutError
from ..threadmap.formula import parse_expr

__all__ = ["Spec", "SpecError", "loads_spec", "load_spec", "ARCH_SMEM", "TMEM_COLUMNS"]

#: the most shared memory one thread block may use (bytes, with the opt-in of
#: cudaFuncAttributeMaxDynamicSharedMemorySize): CUDA C++ Programming Guide, "Features and Technical
#: Specifications", table "Technical Specifications per Compute Capability" (8.0: 163 KB; 8.6, 8.9: 99 KB;
#: 9.0, 10.0: 227 KB; 12.0: 99 KB, CUTLASS's cutlass/arch/arch.h sm120_smem_capacity_bytes = 101376)
ARCH_SMEM = {"sm80": 163 * 1024, "sm86": 99 * 1024, "sm89": 99 * 1024, "sm90": 227 * 1024, "sm100": 227 * 1024,
             "sm120": 99 * 1024}
#: tensor memory columns per SM (SM100: 128 lanes x 512 columns of 32 bits; PTX ISA, "Tensor Memory")
TMEM_COLUMNS = {"sm100": 512}

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
TOP_KEYS = {"name", "space", "derived", "config", "constraints"}
CONSTRAINT_KEYS = {"arch", "smem_bytes", "smem_budget", "registers", "max_registers", "tmem_columns"}
MAX_VALUES = 1_000_000
#: the most candidates one sweep enumerates (the table and the resume set are held in memory)
MAX_CANDIDATES = 100_000_000
#: the most expression values a spec keeps (:meth:`Spec.evaluate`)
VALUES_KEPT = 100_000


def _line(text: str, table: str, key: str | None) -> int | None:
    """The line of ``key =`` inside ``[table]`` (or of the table's header): for one-line error messages."""
    current, header = "", None
    for n, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if s.startswith("[") and not s.startswith("[["):
            current = s.strip("[]").strip()
            if current == table and header is None:
                header = n
            continue
        if current == table and key is not None and re.match(rf"{re.escape(key)}\s*=", s):
            return n
    return header


class SpecError(ConfigError):
    """A malformed sweep spec (exit 2)."""


class Spec:
    """A parsed sweep spec: ``len(spec)`` candidates, ``spec.values(i)``, ``spec.config(i)``."""

    def __init__(self, text: str, path: str = "<spec>"):
        self.text, self.path = text, path
        self.hash = hashlib.sha256(text.encode()).hexdigest()[:12]
        self._variables: dict = {}       # (table, key) -> the names an expression reads
        self._values: dict = {}          # (table, key, their values) -> the expression's value
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SpecError(f"{path}: {e}") from None
        unknown = sorted(set(doc) - TOP_KEYS)
        if unknown:
            self.fail("", unknown[0], f"unknown key {unknown[0]!r} (a spec has {', '.join(sorted(TOP_KEYS))})")
        self.name = str(doc.get("name", path))
        self.axes = [self._axis(k, v) for k, v in self._table(doc, "space").items()]
        if not self.axes:
            self.fail("space", None, "[space] names no variable")
        self.names = [n for ax in self.axes for n in ax[1]]
        if len(self) > MAX_CANDIDATES:
            self.fail("space", None, f"{len(self):,} candidates: more than one sweep takes ({MAX_CANDIDATES:,}); "
                      f"split the space")
        dup = next((n for n in self.names if self.names.count(n) > 1), None)
        if dup:
            self.fail("space", None, f"variable {dup!r} is defined twice")
        self.derived = {}
        for k, v in self._table(doc, "derived").items():      # in order: one may use the ones above it
            self.derived[k] = self._expr("derived", k, v, set(self.names) | set(self.derived))
        self.template = self._table(doc, "config")
        if not self.template:
            self.fail("config", None, "[config] (the configuration template) is missing")
        self._check_placeholders(self.template)
        self.constraints = self._constraints(self._table(doc, "constraints"))

    # -- errors
    def fail(self, table: str, key: str | None, message: str):
        n = _line(self.text, table, key) if table or key else None
        where = f"{self.path}:{n}" if n else self.path
        where += f": [{table}]" if table else ""
        where += f" {key}" if key and table else ""
        raise SpecError(f"{where}: {message}")

    def _table(self, doc: dict, name: str) -> dict:
        t = doc.get(name, {})
        if not isinstance(t, dict):
            self.fail("", name, f"{name} must be a table [{name}]")
        return t

    # -- the space
    def _axis(self, key: str, v) -> tuple:
        """(key, names, values): ``values`` a list of tuples, one entry per name."""
        if isinstance(v, dict):
            return key, (key,), [(x,) for x in self._range(key, v)]
        if not isinstance(v, list) or not v:
            self.fail("space", key, "a variable is a non-empty list or a range { min, max, step }")
        if all(isinstance(x, dict) for x in v):
            names = tuple(v[0])
            if not names or any(tuple(x) != names for x in v):
                self.fail("space", key, f"every table of {key!r} needs the same keys {list(names)}")
            return key, names, [tuple(x[n] for n in names) for x in v]
        if any(isinstance(x, (dict, list)) for x in v):
            self.fail("space", key, "values are scalars (int, string, bool) or all tables")
        return key, (key,), [(x,) for x in v]

    def _range(self, key: str, r: dict) -> list:
        bad = sorted(set(r) - {"min", "max", "step", "times"})
        if bad or not all(isinstance(r.get(k), int) and not isinstance(r.get(k), bool) for k in ("min", "max")):
            self.fail("space", key, "a range is { min = INT, max = INT } with step = INT or times = INT")
        lo, hi, step, times = r["min"], r["max"], r.get("step"), r.get("times")
        if step is not None and times is not None:
            self.fail("space", key, "a range takes step or times, not both")
        if times is not None:
            if not isinstance(times, int) or times < 2 or lo < 1:
                self.fail("space", key, "times must be an int >= 2 and min >= 1")
            out = [lo]
            while out[-1] * times <= hi and len(out) <= MAX_VALUES:
                out.append(out[-1] * times)
            return out
        step = 1 if step is None else step
        if not isinstance(step, int) or step < 1:
            self.fail("space", key, "step must be an int >= 1")
        if hi < lo or (hi - lo) // step >= MAX_VALUES:
            self.fail("space", key, f"range {lo}..{hi} is empty or longer than {MAX_VALUES} values")
        return list(range(lo, hi + 1, step))

    def _expr(self, table: str, key: str, text, names: set):
        if not isinstance(text, str):
            self.fail(table, key, "must be an integer expression in a string")
        try:
            e = parse_expr(text, names)
        except SymlayoutError as err:
            self.fail(table, key, str(err))
        return e

    def _check_placeholders(self, t) -> None:
        known = set(self.names) | set(self.derived)
        for s in _strings(t):
            for m in PLACEHOLDER.finditer(s):
                if m.group(1) not in known:
                    self.fail("config", None, f"{{{m.group(1)}}} names no variable of [space] or [derived]")

    def _constraints(self, c: dict) -> dict:
        bad = sorted(set(c) - CONSTRAINT_KEYS)
        if bad:
            self.fail("constraints", bad[0], f"unknown key (known: {', '.join(sorted(CONSTRAINT_KEYS))})")
        arch = c.get("arch")
        if arch is not None and arch not in ARCH_SMEM:
            self.fail("constraints", "arch", f"unknown arch {arch!r} (known: {', '.join(ARCH_SMEM)})")
        names = set(self.names) | set(self.derived)
        out = {"arch": arch}
        for k in ("smem_bytes", "registers", "tmem_columns"):
            if k in c:
                out[k] = self._expr("constraints", k, c[k], names)
        for k in ("smem_budget", "max_registers"):
            if k in c and (not isinstance(c[k], int) or c[k] < 1):
                self.fail("constraints", k, "must be a positive int")
        out["smem_budget"] = c.get("smem_budget", ARCH_SMEM.get(arch))
        out["max_registers"] = c.get("max_registers")
        out["tmem_budget"] = TMEM_COLUMNS.get(arch)
        out["source"] = {"smem_bytes": "smem_budget" if "smem_budget" in c else f"{arch}: shared memory per block",
                         "registers": "max_registers", "tmem_columns": f"{arch}: tensor memory columns"}
        if "smem_bytes" in out and out["smem_budget"] is None:
            self.fail("constraints", "smem_bytes", "needs arch or smem_budget (the budget it is checked against)")
        if "registers" in out and out["max_registers"] is None:
            self.fail("constraints", "registers", "needs max_registers (your register limit per thread)")
        if "tmem_columns" in out and out["tmem_budget"] is None:
            self.fail("constraints", "tmem_columns", "needs arch = \"sm100\" (tensor memory)")
        return out

    # -- candidates
    def __len__(self) -> int:
        return math.prod(len(ax[2]) for ax in self.axes)

    def values(self, i: int) -> dict:
        """The variables of candidate ``i`` (mixed radix, the last variable fastest)."""
        out = {}
        digits = []
        for ax in reversed(self.axes):
            i, d = divmod(i, len(ax[2]))
            digits.append((ax, d))
        for ax, d in reversed(digits):
            out.update(zip(ax[1], ax[2][d]))
        return out

    def scope(self, i: int) -> dict:
        """The variables and derived values of candidate ``i`` (derived values that fail are absent)."""
        env = self.values(i)
        for k, e in self.derived.items():
            env[k] = self.evaluate(e, env, "derived", k)
        return env

    def evaluate(self, e, env: dict, table: str, key: str) -> int:
        """The value of the expression ``e`` (``[table] key``) for the variables ``env``; a space has few
        distinct values of an expression's own variables, so each is evaluated once (:data:`VALUES_KEPT`)."""
        names = self._variables.get((table, key))
        if names is None:
            names = self._variables[(table, key)] = tuple(sorted(e.variables()))
        args = tuple(env.get(n) for n in names)
        plain = all(type(a) is int for a in args)        # (not a bool, which equals 1 as a key)
        if plain and (table, key, args) in self._values:
            return self._values[(table, key, args)]
        value = self._evaluate(e, env, table, key)
        if plain and len(self._values) < VALUES_KEPT:
            self._values[(table, key, args)] = value
        return value

    def _evaluate(self, e, env: dict, table: str, key: str) -> int:
        nums = {k: v for k, v in env.items() if isinstance(v, int) and not isinstance(v, bool)}
        missing = sorted(set(e.variables()) - set(nums))
        if missing:
            self.fail(table, key, f"{missing[0]!r} is not an integer (value {env.get(missing[0])!r})")
        try:
            return e.evaluate(nums)
        except ZeroDivisionError:
            self.fail(table, key, f"division by zero for {nums}")

    def config(self, i: int, env: dict | None = None) -> dict:
        """The configuration dict of candidate ``i`` (the template with its placeholders replaced)."""
        return _fill(self.template, self.scope(i) if env is None else env)

    def over_budget(self, env: dict) -> tuple[str | None, dict]:
        """(the reason this candidate breaks a constraint or None, the measured amounts)."""
        c, amounts, reason = self.constraints, {}, None
        limits = {"smem_bytes": c["smem_budget"], "registers": c["max_registers"], "tmem_columns": c["tmem_budget"]}
        for k, limit in limits.items():
            if k in c:
                amounts[k] = self.evaluate(c[k], env, "constraints", k)
                if reason is None and amounts[k] > limit:
                    reason = f"{k} {amounts[k]} > {limit} ({c['source'][k]})"
        return reason, amounts


def _strings(t):
    if isinstance(t, str):
        yield t
    elif isinstance(t, dict):
        for v in t.values():
            yield from _strings(v)
    elif isinstance(t, list):
        for v in t:
            yield from _strings(v)


def _fill(t, env: dict):
    if isinstance(t, str):
        m = PLACEHOLDER.fullmatch(t)
        if m:
            return env[m.group(1)]
        return PLACEHOLDER.sub(lambda m: str(env[m.group(1)]), t)
    if isinstance(t, dict):
        return {k: _fill(v, env) for k, v in t.items()}
    if isinstance(t, list):
        return [_fill(v, env) for v in t]
    return t


def loads_spec(text: str, path: str = "<spec>") -> Spec:
    """A :class:`Spec` from TOML text (``path`` names it in messages)."""
    return Spec(text, path)


def load_spec(path) -> Spec:
    """A :class:`Spec` from a file."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    return Spec(text, str(path))
