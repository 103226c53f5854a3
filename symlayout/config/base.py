"""The loader's generic checks: one-line messages at a key's line, unknown and missing keys, values of
the form their :mod:`.keys` description gives, CuTe notation, value types and atom names."""

from __future__ import annotations

from ..algebra.cute_cpp import is_cpp_spelling, is_expression, to_notation
from ..algebra.notation import parse
from ..atoms.copy import get_copy_op
from ..atoms.mma import get_mma_atom
from ..atoms.types import value_type_bits
from ..errors import AtomError, ConfigError, SymlayoutError
from .keys import MAX_ALIGN, MAX_EXTENT, MAX_STRING, TOP
from .lines import KeyLines
from .messages import _one_line, _short, _suggest, _type_name

_UNSET = object()

# value type names that could mean several types (the error names each)
_AMBIGUOUS_TYPES = {"fp8": ("float_e4m3_t (e4m3)", "float_e5m2_t (e5m2)"),
                    "float8": ("float_e4m3_t (e4m3)", "float_e5m2_t (e5m2)"),
                    "int4": ("int4_t (int4b_t)", "uint4_t (uint4b_t)")}


class LoaderBase:
    """A configuration text, its key lines, and the checks every section uses."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.lines = KeyLines(text)

    def fail(self, keys, problem: str):
        raise ConfigError(f"{self.path}:{self.lines.line(*keys)}: {_one_line(problem)}")

    @staticmethod
    def where(keys) -> str:
        """``[copy.A] smem`` style name of a key path."""
        keys = tuple(keys)
        if len(keys) == 1:
            return f"[{keys[0]}]" if keys[0] in TOP.names[1:] else keys[0]
        if keys[0] in ("copy", "g2s", "s2g", "g2r", "r2g", "reuse") and len(keys) >= 2:   # (g2r, r2g, reuse: issue 31)
            t, rest = f"[{keys[0]}.{keys[1]}]", keys[2:]
        else:
            t, rest = f"[{keys[0]}]", keys[1:]
        return t + (" " + ".".join(str(k) for k in rest) if rest else "")

    def check_keys(self, table: dict, keys, known, what: str | None = None):
        for k in table:
            if k not in known:
                self.fail(tuple(keys) + (k,), f"{what or self.where(keys)}: unknown key {k!r}{_suggest(k, known)}")

    def operand_table(self, spec, keys, described) -> dict:
        """``[copy.A]`` and its kin (``keys`` = (table, operand)): a table of the described keys only."""
        name, op = keys
        if not isinstance(spec, dict):
            self.fail(keys, f"{name}.{op} must be a table [{name}.{op}], not {_type_name(spec)} {_short(spec)}")
        self.check_keys(spec, keys, described.names)
        return spec

    def table(self, data, keys) -> dict:
        v = data
        if not isinstance(v, dict):
            self.fail(keys, f"{self.where(keys)} must be a table, not {_type_name(v)} {_short(v)}")
        return v

    def value(self, d, keys, key, default=_UNSET, form=None):
        """The value of ``key`` (a :class:`~.keys.Key`) in the table ``d`` at ``keys``, checked as its
        description says: present if required, of its form, within its range (``default`` when absent)."""
        at = tuple(keys) + (key.name,)
        default = key.default if default is _UNSET else default
        form = form or key.form
        if form == "string":
            return self.get_str(d, at, key.required, default, key.max_length)
        if form in ("integer", "count"):
            return self.get_int(d, at, key.required, default, key.minimum, key.maximum)
        if form == "align":
            return self.get_align(d, at, default)
        if form == "pair":
            return self.get_pair(d, at, key.required, key.maximum)
        raise ValueError(f"{key.name}: no generic reader for the form {form!r}")

    def load_predicate(self, spec, keys, names, residue):
        """issue 31: ``predicate``, the modes (of ``names``) the kernel's predicate tests; None: every residue mode."""
        if "predicate" not in spec:
            return None
        v = spec["predicate"]
        w = self.where(keys)
        if not isinstance(v, list) or any(x not in names for x in v) or len(set(v)) != len(v):
            self.fail(keys + ("predicate",), f"{w} predicate must name modes of the tile {list(names)}, each at most "
                                             f"once, got {_short(v)}")
        if not residue:
            self.fail(keys + ("predicate",), f"{w} predicate without residue: nothing cuts the tile")
        return tuple(v)

    # -- scalar getters
    def absent(self, d, keys, required) -> bool:
        """Whether the key ``keys[-1]`` is not in the table ``d`` (an error when it is required)."""
        if keys[-1] in d:
            return False
        if required:
            self.fail(keys[:-1], f"{self.where(keys[:-1])}: missing required key {keys[-1]!r}")
        return True

    def get_str(self, d, keys, required=False, default=None, max_len=MAX_STRING):
        if self.absent(d, keys, required):
            return default
        v = d[keys[-1]]
        if not isinstance(v, str):
            self.fail(keys, f"{self.where(keys)} must be a string, not {_type_name(v)} {_short(v)}")
        if len(v) > max_len:
            self.fail(keys, f"{self.where(keys)} is too long ({len(v)} characters; limit {max_len})")
        return v

    def get_int(self, d, keys, required=False, default=None, lo=None, hi=None):
        if self.absent(d, keys, required):
            return default
        v = d[keys[-1]]
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(keys, f"{self.where(keys)} must be an integer, not {_type_name(v)} {_short(v)}")
        if lo is not None and v < lo:
            self.fail(keys, f"{self.where(keys)} must be >= {lo}, got {v}")
        if hi is not None and v > hi:
            self.fail(keys, f"{self.where(keys)} must be <= {hi}, got {v}")
        return v

    def get_pair(self, d, keys, required=False, hi=MAX_EXTENT):
        if self.absent(d, keys, required):
            return None
        v = d[keys[-1]]
        if not isinstance(v, list) or len(v) != 2 or any(isinstance(x, bool) or not isinstance(x, int) for x in v):
            self.fail(keys, f"{self.where(keys)} must be an array of two integers [contiguous, strided], "
                            f"not {_type_name(v)} {_short(v)}")
        for x in v:
            if x <= 0:
                self.fail(keys, f"{self.where(keys)} entries must be positive, got {x}")
            if x > hi:
                self.fail(keys, f"{self.where(keys)} entry {x} is too large (limit {hi})")
        return (v[0], v[1])

    def get_align(self, d, keys, default):
        a = self.get_int(d, keys, default=default)
        if a is None:
            return None
        if a <= 0 or a & (a - 1):
            self.fail(keys, f"{self.where(keys)} must be a positive power of two (bytes), got {a}")
        if a > MAX_ALIGN:
            self.fail(keys, f"{self.where(keys)} = {a} is too large (limit {MAX_ALIGN} bytes)")
        return a

    def notation(self, text, keys, symbols, what):
        """Parse CuTe notation; errors keep the column inside the string.  C++ spellings
        (``Layout<Shape<_64,_64>,Stride<_64,_1>>``, ``Swizzle<3,3,3>``) and layout functions
        (``tile_to_shape(...)``, ``composition(...)``) are evaluated as ``symlayout layout`` does."""
        self.check_ascii(text, keys)
        if is_cpp_spelling(text) or is_expression(text):
            return self.cpp_layout(text, keys, symbols, what)
        try:
            return parse(text, symbols)
        except SymlayoutError as e:
            self.fail(keys, f"{self.where(keys)}: {e}")
        except (RecursionError, MemoryError, OverflowError, ValueError):
            self.fail(keys, f"{self.where(keys)}: cannot read {_short(text)} as {what}")

    def cpp_layout(self, text, keys, symbols, what):
        """A layout written with C++ spellings or layout functions (concrete extents only)."""
        try:
            # lazy: the calculator (3-4 ms of start-up) only for a layout written as an expression
            from ..algebra.calculator import evaluate
            value = evaluate(to_notation(text) if is_cpp_spelling(text) else text).value
        except SymlayoutError as e:
            self.fail(keys, f"{self.where(keys)}: {e}")
        except (RecursionError, MemoryError, OverflowError, ValueError, TypeError):
            self.fail(keys, f"{self.where(keys)}: cannot read {_short(text)} as {what}")
        if not hasattr(value, "shape") and not getattr(value, "is_swizzle", False):
            self.fail(keys, f"{self.where(keys)}: {_short(text)} is not {what}")
        free = getattr(value, "free_symbols", None)
        if free:
            self.fail(keys, f"{self.where(keys)}: layout functions need concrete extents here; write a parametric "
                            "layout in CuTe notation (shape:stride)")
        return value

    def check_ascii(self, text, keys):
        for i, c in enumerate(text):
            if not (c.isascii() and (c.isprintable() or c in " \t")):
                t = text if len(text) <= 60 else text[:57] + "..."
                self.fail(keys, f"{self.where(keys)}: {t!r}: column {i + 1}: unexpected character {c!r} "
                                "(CuTe notation is ASCII)")

    def check_type(self, typ, keys):
        try:
            return value_type_bits(typ)
        except SymlayoutError as e:
            amb = _AMBIGUOUS_TYPES.get(typ.strip().lower())
            if amb:
                self.fail(keys, f"{self.where(keys)}: {typ!r} is ambiguous: write {' or '.join(amb)}")
            self.fail(keys, f"{self.where(keys)}: {e}")

    def check_atom(self, atom, keys, kind):
        if not atom.strip():
            self.fail(keys, f"{self.where(keys)} is empty")
        fn = get_mma_atom if kind == "mma" else get_copy_op
        try:
            fn(atom)
        except AtomError as e:
            self.fail(keys, f"{self.where(keys)}: {e}")
        except SymlayoutError as e:
            self.fail(keys, f"{self.where(keys)}: {e}")
