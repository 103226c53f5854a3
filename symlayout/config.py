"""Configuration files: load and validate the TOML of ``shared/spec/configs.md``.

A configuration describes a TiledMMA and the copies that feed or drain it
(``[mma]``, ``[copy.A]``, ``[copy.B]``, ``[copy.C]``) or a CUTLASS 2.x thread
map (``[threadmap]``), plus optional ``[params]`` (integer symbols with
ranges), ``[prove]`` and ``[expect]``.  :func:`load_config` reads one file
into frozen dataclasses, validating every value; any problem is a
:class:`~symlayout.errors.ConfigError` whose one-line message is
``"<path>:<line>: <problem>"`` (``"<path>:<line>:<col>: invalid TOML: ..."``
for TOML syntax errors).  Unknown keys suggest the closest known key;
notation errors keep the column inside the string.

Keys added by symlayout beyond the spec (documented here, meanings of the
spec's keys unchanged):

* ``[threadmap]``: ``thread_tile_shape`` (``PitchLinear2DThreadTileStripminedThreadMap``),
  and, for the transposing wrappers (``TransposePitchLinearThreadMap``,
  ``...Simt``, ``...2DThreadTile``), a sub-table ``[threadmap.base]`` holding
  the wrapped map's keys (``kind``, ``shape``, ``threads``, ...).

>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp()); p = d / "seed.toml"
>>> _ = p.write_text('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\nlayout = "(2,2,1)"\\n'
...                  '[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\ntype = "half_t"\\nsmem = "(32,16):(16,1)"\\n')
>>> cfg = load_config(p)
>>> cfg.mma.atom, str(cfg.copies["A"].smem), cfg.copies["A"].align
('SM80_16x8x16_F16F16F16F16_TN', '(32,16):(16,1)', 128)
>>> _ = p.write_text('[copy.A]\\nsmme = "(32,16):(16,1)"\\n')
>>> load_config(p)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
symlayout.errors.ConfigError: ...seed.toml:2: [copy.A]: unknown key 'smme' (did you mean 'smem'?)
"""
from __future__ import annotations

import difflib
import importlib
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .atoms.types import value_type_bits
from .errors import ConfigError, SymlayoutError

__all__ = [
    "PROPERTIES", "Config", "MMAConfig", "CopyConfig", "GlobalCopyConfig", "TiledCopySpec", "ThreadMapConfig",
    "Param", "ProveConfig", "ExpectConfig", "KeyLines", "load_config", "load_configs", "find_config_files",
    "not_a_configuration",
]

#: property names of the spec, in the spec's order
PROPERTIES = ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
              "type_agreement", "coalescing")
#: Version 2, Hopper: ``descriptor`` (GMMA shared-memory descriptors) and ``tma`` (TMA boxes)
PROPERTIES = PROPERTIES + ("descriptor", "tma")

#: operands a ``[copy.X]`` table may name
OPERANDS = ("A", "B", "C")

#: largest configuration file read (bytes)
MAX_FILE_BYTES = 1 << 20
#: longest layout / formula string accepted in a configuration (characters)
MAX_STRING = 4096
#: largest value of a ``[params]`` symbol
MAX_PARAM = (1 << 31) - 1
#: largest concrete shared-memory tile, in bytes (the 32-bit shared address space)
MAX_SMEM_BYTES = 1 << 32
#: largest concrete global-memory tile span, in bytes (its offsets are computed in 64-bit arrays)
MAX_GMEM_BYTES = 1 << 62
#: largest number of threads of a TiledMMA or thread map (a CUDA block)
MAX_THREADS = 1024
#: largest extent of a thread map tile or permutation mode
MAX_EXTENT = 1 << 24
#: largest extent of a PermutationMNK mode
MAX_PERMUTATION = 1 << 16
#: largest accepted ``align`` (bytes)
MAX_ALIGN = 1 << 16
#: largest accepted ``[prove] timeout_s``
MAX_TIMEOUT_S = 7 * 24 * 3600.0

_TOP_KEYS = ("name", "mma", "copy", "g2s", "s2g", "stages", "threadmap", "params", "prove", "expect")
_TOP_KEYS = _TOP_KEYS + ("smem", "tma")                    # Version 2, Hopper
_SMEM_KEYS = ("type", "layout", "align", "element")
_TMA_KEYS = ("atom", "multicast", "gmem", "box", "swizzle", "element")
_TMA_ATOMS = ("SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST")
_MMA_KEYS = ("atom", "layout", "permutation")
_COPY_KEYS = ("atom", "type", "smem", "align", "convert", "thr", "val", "tv", "tiler", "element")
# [g2s.X] / [s2g.C] (version 2): a TiledCopy between global and shared memory
_GLOBAL_KEYS = ("atom", "type", "smem", "align", "thr", "val", "tv", "tiler", "gmem", "gmem_align", "residue",
                "element")
#: version 2.1: the tables of one operand that may state its element type (``element``)
_ELEMENT_TABLES = ("copy", "g2s", "s2g", "smem", "tma")
_STAGES_KEYS = ("count",)
#: the modes of each operand's tile, by name (``residue``)
OPERAND_MODES = {"A": ("M", "K"), "B": ("N", "K"), "C": ("M", "N")}
#: largest [stages] count
MAX_STAGES = 64
_PARAM_KEYS = ("min", "max", "multiple_of")
_PROVE_KEYS = ("properties", "timeout_s")
_EXPECT_KEYS = ("refuted", "max_bank_degree")
_TM_KEYS = ("kind", "shape", "threads", "elements_per_access", "warp_arrangement", "thread_tile_shape",
            "iterations", "offset", "extent", "type", "align", "base")

# CUTLASS thread-map kinds and the keys each takes (required, optional); type/align always optional
_TM_PLAIN = ("PitchLinearStripminedThreadMap", "PitchLinearTilePolicyStripminedThreadContiguous",
             "PitchLinearTilePolicyStripminedThreadStrided")
_TM_WARP = ("PitchLinearWarpRakedThreadMap", "PitchLinearStridedWarpRakedThreadMap",
            "PitchLinearWarpStripedThreadMap")
_TM_KIND_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
for _k in _TM_PLAIN:
    _TM_KIND_KEYS[_k] = (("shape", "threads"), ("elements_per_access",))
for _k in _TM_WARP:
    _TM_KIND_KEYS[_k] = (("shape", "threads", "warp_arrangement"), ("elements_per_access",))
_TM_KIND_KEYS["PitchLinear2DThreadTileStripminedThreadMap"] = (("shape", "threads"), ("thread_tile_shape",))
_TM_KIND_KEYS["TransposePitchLinearThreadMap"] = (("base", "warp_arrangement"), ())
_TM_KIND_KEYS["TransposePitchLinearThreadMapSimt"] = (("base",), ())
_TM_KIND_KEYS["TransposePitchLinearThreadMap2DThreadTile"] = (("base",), ())
_TM_KIND_KEYS["offset"] = (("threads", "offset", "extent"), ("iterations", "elements_per_access"))
_TM_WRAPPERS = ("TransposePitchLinearThreadMap", "TransposePitchLinearThreadMapSimt",
                "TransposePitchLinearThreadMap2DThreadTile")

# value type names that could mean several types (the error names each)
_AMBIGUOUS_TYPES = {"fp8": ("float_e4m3_t (e4m3)", "float_e5m2_t (e5m2)"),
                    "float8": ("float_e4m3_t (e4m3)", "float_e5m2_t (e5m2)"),
                    "int4": ("int4_t (int4b_t)", "uint4_t (uint4b_t)")}

# names a [params] symbol may not take (they mean something else in CuTe notation)
_RESERVED_SYMBOLS = {"o", "Sw"}
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


# ---------------------------------------------------------------- line locator


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
                import json
                k = json.loads(k)
            except ValueError:
                k = k[1:-1]
        parts.append(k)
    return tuple(parts)


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
            m = _HEADER_RE.match(line)
            if m and not _KEYVAL_RE.match(line):
                table = _split_dotted(m.group(2))
                self._add(table, lineno, m.start(2) + 1)
                continue
            m = _KEYVAL_RE.match(line)
            if not m:
                continue
            path = table + _split_dotted(m.group(1))
            vcol = m.end()
            while vcol < len(line) and line[vcol] in " \t":
                vcol += 1
            self._add(path, lineno, vcol + 1)
            rest = line[m.end():]
            for delim in ('"""', "'''"):
                if rest.count(delim) % 2 == 1:
                    in_ml = delim
            # keys of an inline table on the same line
            if rest.lstrip().startswith("{"):
                for im in re.finditer(rf"[{{,]\s*({_DOTTED})\s*=\s*", rest):
                    self._add(path + _split_dotted(im.group(1)), lineno, m.end() + im.end() + 1)

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


# ---------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class Param:
    """An integer symbol of ``[params]``: ``min <= value <= max``, a multiple of ``multiple_of``.

    >>> p = Param("m", 1, 64, 2); p.symbol, p.values()[:3], p.count()
    (m, [2, 4, 6], 32)
    """
    name: str
    min: int
    max: int
    multiple_of: int = 1
    line: int = 0

    @property
    def symbol(self):
        """The positive-integer sympy symbol of this parameter."""
        from .algebra.symbolic import symbols
        return symbols(self.name)[0]

    def values(self) -> list[int]:
        """Every admissible value (only for small ranges: at most 1,000,000 values)."""
        n = self.count()
        if n > 1_000_000:
            raise ConfigError(f"[params] {self.name}: {n} values are too many to list")
        lo = -(-self.min // self.multiple_of) * self.multiple_of
        return list(range(lo, self.max + 1, self.multiple_of))

    def first_value(self) -> int:
        """``values()[0]`` without listing every value (the same errors where there is none, or too many)."""
        n = self.count()
        if n == 0 or n > 1_000_000:
            return self.values()[0]
        return -(-self.min // self.multiple_of) * self.multiple_of

    def count(self) -> int:
        """Number of admissible values."""
        lo = -(-self.min // self.multiple_of)
        hi = self.max // self.multiple_of
        return max(0, hi - lo + 1)


@dataclass(frozen=True)
class MMAConfig:
    """``[mma]``: the TiledMMA ``make_tiled_mma(atom, layout, permutation)``.

    ``layout`` is the parsed AtomLayoutMNK (an IntTuple or a Layout);
    ``permutation`` is None or a tuple of 1..3 entries, each an int extent, a
    Layout or ``_`` (:data:`symlayout.algebra.notation._`).  The ``raw_*`` fields keep
    the strings as written.

    >>> MMAConfig("SM80_16x8x16_F16F16F16F16_TN", (2, 2, 1), None, "(2,2,1)", None).atom_threads_layout
    (2, 2, 1)
    """
    atom: str
    layout: Any
    permutation: tuple | None
    raw_layout: str
    raw_permutation: tuple | None
    line: int = 0

    @property
    def atom_threads_layout(self):
        """The AtomLayoutMNK as parsed (alias of ``layout``)."""
        return self.layout


@dataclass(frozen=True)
class CopyConfig:
    """``[copy.X]``: ``make_tiled_copy_X(Copy_Atom<atom, type>, mma)`` over ``smem``.

    ``smem`` is a Layout or ComposedLayout (possibly symbolic), in elements:
    (M,K) for A, (N,K) for B, (M,N) for C; ``align`` is the byte alignment
    of its base address; ``raw_smem`` the string as written.

    >>> from symlayout.algebra.notation import parse
    >>> c = CopyConfig("A", "SM75_U32x2_LDSM_N", "half_t", parse("(32,16):(16,1)"), 128, "(32,16):(16,1)")
    >>> c.operand, c.smem.size()
    ('A', 512)
    """
    operand: str
    atom: str
    type: str
    smem: Any
    align: int
    raw_smem: str
    line: int = 0
    convert: bool = False         # [copy.C] convert = true: convert_type<type>(accumulator) before the copy
    #: version 2: a hand-built TiledCopy (``make_tiled_copy(atom, thr, val)`` or
    #: ``make_tiled_copy_impl(atom, tv, tiler)``) instead of ``make_tiled_copy_X(atom, mma)``
    tiled: "TiledCopySpec | None" = None
    #: the whole pipelined buffer ``(M,K,PIPE)`` when the operand has stages (``smem`` is stage 0)
    smem_staged: Any = None
    stages: int = 1
    #: version 2.1: the element type of the operand's tensors ("" = ``type``)
    element: str = ""

    @property
    def element_type(self) -> str:
        """The type the data is stored as: ``element``, or the atom's ``type`` when none is given."""
        return self.element or self.type


@dataclass(frozen=True)
class TiledCopySpec:
    """A hand-built TiledCopy of a version-2 table: ``thr``/``val`` (``make_tiled_copy(atom, thr, val)``)
    or ``tv``/``tiler`` (``make_tiled_copy_impl(atom, tv, tiler)``), as parsed Layouts.

    >>> from symlayout.algebra.notation import parse
    >>> from symlayout.algebra.layout import Layout
    >>> TiledCopySpec(thr=parse("(16,8):(8,1)"), val=Layout((1, 8))).how
    'make_tiled_copy(atom, (16,8):(8,1), (1,8):(0,1))'
    """
    thr: Any = None
    val: Any = None
    tv: Any = None
    tiler: Any = None

    @property
    def how(self) -> str:
        if self.tv is not None:
            return f"make_tiled_copy_impl(atom, {self.tv}, {self.tiler})"
        return f"make_tiled_copy(atom, {self.thr}, {self.val})"

    def build(self, atom):
        """The :class:`~symlayout.tiled.copy.TiledCopy` (CuTe's static_asserts as CuteStaticAssert)."""
        from .tiled.copy import make_tiled_copy, make_tiled_copy_impl
        if self.tv is not None:
            return make_tiled_copy_impl(atom, self.tv, tuple(self.tiler))
        return make_tiled_copy(atom, self.thr, self.val)


@dataclass(frozen=True)
class GlobalCopyConfig:
    """``[g2s.X]`` (global -> shared, X = A or B) or ``[s2g.C]`` (shared -> global) of version 2.

    ``gmem`` is the gmem tile (a Layout of the same shape as the smem tile, strides may be
    ``[params]`` symbols), ``gmem_align`` the byte alignment of its first element; ``smem``
    the smem tile (stage 0; default: the ``[copy.X]`` table's), ``smem_staged`` the whole
    buffer when there are stages; ``residue`` the modes (by name, ``M``/``N``/``K``) along
    which the problem may cut the tile (the copy is then predicated).
    """
    kind: str                     # "g2s" or "s2g"
    operand: str
    atom: str
    type: str
    tiled: TiledCopySpec
    gmem: Any
    raw_gmem: str
    gmem_align: int
    smem: Any = None
    raw_smem: str | None = None
    align: int = 128
    residue: tuple = ()
    smem_staged: Any = None
    stages: int = 1
    line: int = 0
    element: str = ""             # version 2.1: the element type of the operand's tensors ("" = ``type``)

    @property
    def table(self) -> str:
        return f"{self.kind}.{self.operand}"

    @property
    def element_type(self) -> str:
        return self.element or self.type


@dataclass(frozen=True)
class SmemConfig:
    """``[smem.A|B]``: the shared-memory tile a GMMA operand is read from by descriptors.

    ``layout`` is a :class:`~symlayout.atoms.gmma.GmmaSmemLayout` (the swizzle on byte
    addresses, CuTe's ``smem_ptr`` form), or a Layout / element-swizzled ComposedLayout
    as written without the pointer marker; rank 2 ``(MN,K)`` or 3 ``(MN,K,PIPE)``, the
    PIPE mode of ``[stages] count`` already appended.
    """
    operand: str
    type: str
    layout: Any
    align: int
    raw_layout: str
    line: int = 0
    element: str = ""             # version 2.1: the element type the smem holds ("" = ``type``)

    @property
    def element_type(self) -> str:
        return self.element or self.type


@dataclass(frozen=True)
class TmaConfig:
    """``[tma.A|B]``: ``make_tma_copy(atom, gmem tensor, smem layout of one stage, box, multicast)``.

    ``gmem`` is the parsed global layout (symbols allowed), ``box`` the CTA tile (a
    tuple of ints), ``swizzle`` a hand-encoded TMA swizzle (a Swizzle) or None.
    """
    operand: str
    atom: str
    multicast: int
    gmem: Any
    box: tuple
    swizzle: Any
    raw_gmem: str
    line: int = 0


@dataclass(frozen=True)
class ThreadMapConfig:
    """``[threadmap]``: a CUTLASS 2.x thread map (or a custom ``offset`` formula).

    Fields not used by ``kind`` are None.  ``offset`` is the parsed
    :class:`symlayout.threadmap.formula.Expr` (``raw_offset`` the text); ``base`` the
    wrapped map of a ``Transpose*`` kind.  :meth:`build` makes the model.

    >>> tm = ThreadMapConfig("PitchLinearStripminedThreadMap", shape=(64, 8), threads=32, elements_per_access=8)
    >>> tm.build().iterations
    (1, 2)
    """
    kind: str
    shape: tuple | None = None
    threads: int | None = None
    elements_per_access: int | None = None
    warp_arrangement: tuple | None = None
    thread_tile_shape: tuple | None = None
    iterations: Any = None
    offset: Any = None
    raw_offset: str | None = None
    extent: int | None = None
    type: str | None = None
    align: int | None = None
    base: "ThreadMapConfig | None" = None
    line: int = 0

    def build(self):
        """The :mod:`symlayout.threadmap.maps` model of this map (a fresh object)."""
        from .threadmap.maps import make_thread_map
        k = self.kind
        epa = self.elements_per_access if self.elements_per_access is not None else 1
        if k in _TM_PLAIN:
            return make_thread_map(k, self.shape, self.threads, epa)
        if k in _TM_WARP:
            return make_thread_map(k, self.shape, self.threads, self.warp_arrangement, epa)
        if k == "PitchLinear2DThreadTileStripminedThreadMap":
            return make_thread_map(k, self.shape, self.threads, self.thread_tile_shape or (4, 4))
        if k == "TransposePitchLinearThreadMap":
            return make_thread_map(k, self.base.build(), self.warp_arrangement)
        if k in _TM_WRAPPERS:
            return make_thread_map(k, self.base.build())
        if k == "offset":
            return make_thread_map(k, self.offset, self.threads, self.iterations if self.iterations is not None else 1,
                                   self.extent, epa)
        return make_thread_map(k)


@dataclass(frozen=True)
class ProveConfig:
    """``[prove]``: which properties (None: every one that applies) and the per-property timeout.

    >>> ProveConfig().timeout_s, ProveConfig().properties is None
    (10.0, True)
    """
    properties: tuple | None = None
    timeout_s: float = 10.0


@dataclass(frozen=True)
class ExpectConfig:
    """``[expect]``: results that must come out REFUTED (all others PROVED).

    ``refuted`` holds the property names given alone (every operand: version 1),
    ``refuted_operands`` the ``(property, operand)`` pairs given as
    ``"bank_conflicts[A]"`` (version 2); ``max_bank_degree`` lets
    ``bank_conflicts`` count as proved up to that many ways.

    >>> e = ExpectConfig(frozenset({"alignment"}), frozenset({("bank_conflicts", "A")}))
    >>> e.refutes("alignment", "B"), e.refutes("bank_conflicts", "A"), e.refutes("bank_conflicts", "B")
    (True, True, False)
    """
    refuted: frozenset = frozenset()
    refuted_operands: frozenset = frozenset()
    max_bank_degree: int | None = None

    def refutes(self, prop: str, operand: str | None = None) -> bool:
        """Whether the result of ``prop`` on ``operand`` is expected REFUTED."""
        return prop in self.refuted or (prop, operand) in self.refuted_operands

    @property
    def refuted_somewhere(self) -> frozenset:
        """The properties expected REFUTED on some operand (version 1 and 2 entries).

        >>> sorted(ExpectConfig(frozenset({"alignment"}), frozenset({("coverage", "A")})).refuted_somewhere)
        ['alignment', 'coverage']
        """
        return self.refuted | {p for p, _op in self.refuted_operands}


@dataclass(frozen=True)
class Config:
    """A validated configuration file.

    ``copies`` maps "A"/"B"/"C" to :class:`CopyConfig`; ``params`` maps symbol
    names to :class:`Param`; ``text`` is the file's text, ``data`` the raw
    tomllib dict and ``lines`` a :class:`KeyLines` (``cfg.line("copy", "A",
    "smem")`` gives a line number for messages).

    >>> Config("x.toml", "x", None, {}, None, {}, ProveConfig(), ExpectConfig()).kind
    'empty'
    """
    path: str
    name: str
    mma: MMAConfig | None
    copies: dict
    threadmap: ThreadMapConfig | None
    params: dict
    prove: ProveConfig
    expect: ExpectConfig
    text: str = field(default="", repr=False, compare=False)
    data: dict = field(default_factory=dict, repr=False, compare=False)
    #: version 2: ``"A"``/``"B"`` -> ``[g2s.X]``, ``"C"`` -> ``[s2g.C]`` (:class:`GlobalCopyConfig`)
    g2s: dict = field(default_factory=dict, compare=False)
    s2g: dict = field(default_factory=dict, compare=False)
    #: version 2: ``[stages] count`` (or the PIPE size of staged smem layouts); None when absent
    stages: int | None = field(default=None, compare=False)
    #: ``[stages] count = "s"``: the ``[params]`` symbol whose values are the stage counts of a family
    #: (then ``stages`` is None: every copy is proved on stage 0; prove/datapath/stages.py proves the family)
    stages_param: str | None = field(default=None, compare=False)
    lines: KeyLines | None = field(default=None, repr=False, compare=False)
    smem: dict = field(default_factory=dict)          # [smem.A|B] -> SmemConfig (Version 2, Hopper)
    tma: dict = field(default_factory=dict)           # [tma.A|B] -> TmaConfig

    @property
    def kind(self) -> str:
        """``"mma"`` (a TiledMMA with copies), ``"threadmap"`` or ``"empty"``."""
        if self.mma is not None:
            return "mma"
        if self.threadmap is not None:
            return "threadmap"
        return "empty"

    @property
    def symbols(self) -> dict:
        """``{name: sympy Symbol}`` of the parameters."""
        return {n: p.symbol for n, p in self.params.items()}

    @property
    def is_parametric(self) -> bool:
        """True when the configuration declares ``[params]``."""
        return bool(self.params)

    def line(self, *keys) -> int:
        """Line of a key path in the file (1 if unknown)."""
        return self.lines.line(*keys) if self.lines else 1

    def error(self, keys, problem: str) -> ConfigError:
        """A ConfigError ``"<path>:<line>: <problem>"`` located at a key path."""
        return ConfigError(f"{self.path}:{self.line(*keys)}: {problem}")


# ---------------------------------------------------------------- the loader


def _one_line(msg: str) -> str:
    return " ".join(str(msg).split("\n")).strip()


def _type_name(v) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a float"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    if hasattr(v, "isoformat"):
        return "a date/time"
    return f"a {type(v).__name__}"


def _short(v, n=40) -> str:
    s = repr(v) if isinstance(v, (str, int, float, list, dict)) else str(v)
    return s if len(s) <= n else s[:n - 3] + "..."


def _suggest(key: str, known) -> str:
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    return f" (known: {', '.join(known)})"


class _Loader:
    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.lines = KeyLines(text)

    # -- errors
    def fail(self, keys, problem: str):
        raise ConfigError(f"{self.path}:{self.lines.line(*keys)}: {_one_line(problem)}")

    @staticmethod
    def where(keys) -> str:
        """``[copy.A] smem`` style name of a key path."""
        keys = tuple(keys)
        if len(keys) == 1:
            return f"[{keys[0]}]" if keys[0] in _TOP_KEYS[1:] else keys[0]
        if keys[0] in ("copy", "g2s", "s2g") and len(keys) >= 2:
            t, rest = f"[{keys[0]}.{keys[1]}]", keys[2:]
        else:
            t, rest = f"[{keys[0]}]", keys[1:]
        return t + (" " + ".".join(str(k) for k in rest) if rest else "")

    def check_keys(self, table: dict, keys, known, what: str | None = None):
        for k in table:
            if k not in known:
                self.fail(tuple(keys) + (k,), f"{what or self.where(keys)}: unknown key {k!r}{_suggest(k, known)}")

    def table(self, data, keys) -> dict:
        v = data
        if not isinstance(v, dict):
            self.fail(keys, f"{self.where(keys)} must be a table, not {_type_name(v)} {_short(v)}")
        return v

    # -- scalar getters
    def get_str(self, d, keys, required=False, default=None, max_len=MAX_STRING):
        k = keys[-1]
        if k not in d:
            if required:
                self.fail(keys[:-1], f"{self.where(keys[:-1])}: missing required key {k!r}")
            return default
        v = d[k]
        if not isinstance(v, str):
            self.fail(keys, f"{self.where(keys)} must be a string, not {_type_name(v)} {_short(v)}")
        if len(v) > max_len:
            self.fail(keys, f"{self.where(keys)} is too long ({len(v)} characters; limit {max_len})")
        return v

    def get_int(self, d, keys, required=False, default=None, lo=None, hi=None):
        k = keys[-1]
        if k not in d:
            if required:
                self.fail(keys[:-1], f"{self.where(keys[:-1])}: missing required key {k!r}")
            return default
        v = d[k]
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(keys, f"{self.where(keys)} must be an integer, not {_type_name(v)} {_short(v)}")
        if lo is not None and v < lo:
            self.fail(keys, f"{self.where(keys)} must be >= {lo}, got {v}")
        if hi is not None and v > hi:
            self.fail(keys, f"{self.where(keys)} must be <= {hi}, got {v}")
        return v

    def get_pair(self, d, keys, required=False, hi=MAX_EXTENT):
        k = keys[-1]
        if k not in d:
            if required:
                self.fail(keys[:-1], f"{self.where(keys[:-1])}: missing required key {k!r}")
            return None
        v = d[k]
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
        from .algebra.notation import parse
        self.check_ascii(text, keys)
        from .algebra.cute_cpp import is_cpp_spelling, is_expression
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
        from .algebra.calculator import evaluate
        from .algebra.cute_cpp import is_cpp_spelling, to_notation
        try:
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

    # -- sections
    def load(self) -> Config:
        try:
            data = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(self.toml_error(str(e))) from None
        except RecursionError:
            line, col = self.deep_nesting_position()
            raise ConfigError(f"{self.path}:{line}:{col}: invalid TOML: arrays or tables nested too deeply") from None
        self.check_keys(data, (), _TOP_KEYS, what="top level")
        name = self.get_str(data, ("name",), default=None, max_len=500)
        if name is None:
            name = Path(self.path).stem
        elif "\n" in name or "\r" in name:
            self.fail(("name",), "name must be a single line")
        params = self.params = self.load_params(data)
        symbols = {n: p.symbol for n, p in params.items()}
        mma = self.load_mma(data, symbols) if "mma" in data else None
        stages = self.load_stages(data, params)
        stages_param = stages if isinstance(stages, str) else None
        stages = None if stages_param else stages
        self.stages_family = stages_param
        copies = self.load_copies(data, symbols, mma)
        stages = self.apply_stages(copies, stages, stages_param)
        g2s, s2g = self.load_global_copies(data, symbols, copies, stages)
        if (g2s or s2g) and mma is None:
            self.fail(("g2s",) if g2s else ("s2g",), "[g2s.X] / [s2g.C] need an [mma] table (the TiledMMA whose "
                                                     "operands they load or store)")
        threadmap = self.load_threadmap(data["threadmap"], ("threadmap",)) if "threadmap" in data else None
        if mma is None and threadmap is None:
            if copies:
                self.fail(("copy",), "[copy.*] needs an [mma] table (make_tiled_copy_A/B/C are built from the TiledMMA)")
            self.fail((), "nothing to prove: a configuration needs an [mma] or a [threadmap] table")
        if mma is not None and threadmap is not None:
            self.fail(("threadmap",), "a configuration describes either a TiledMMA ([mma], [copy.*]) or a thread "
                                      "map ([threadmap]), not both: split it into two files")
        prove = self.load_prove(data)
        expect = self.load_expect(data, prove)
        smem = self.load_smem_tables(data, symbols, mma, stages)
        tma = self.load_tma_tables(data, symbols, smem)
        copies, g2s, s2g, smem = self.apply_elements(data, copies, g2s, s2g, smem)
        cfg = Config(path=self.path, name=name, mma=mma, copies=copies, threadmap=threadmap, params=params,
                     prove=prove, expect=expect, text=self.text, data=data, lines=self.lines,
                     g2s=g2s, s2g=s2g, stages=stages, smem=smem, tma=tma, stages_param=stages_param)
        if mma is not None:
            self.check_tiles(cfg)
        if threadmap is not None:
            self.check_threadmap_model(threadmap)
        return cfg

    def toml_error(self, msg: str) -> str:
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        core = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", msg)
        if m:
            return f"{self.path}:{m.group(1)}:{m.group(2)}: invalid TOML: {_one_line(core)}"
        lines = self.text.split("\n")
        if lines and lines[-1] == "" and len(lines) > 1:
            lines = lines[:-1]
        return f"{self.path}:{len(lines)}:{len(lines[-1]) + 1}: invalid TOML: {_one_line(core)} (at the end of the file)"

    def deep_nesting_position(self):
        depth, line, col = 0, 1, 0
        for ch in self.text:
            col += 1
            if ch == "\n":
                line, col = line + 1, 0
            elif ch in "[{":
                depth += 1
                if depth > 100:
                    return line, col
            elif ch in "]}":
                depth = max(0, depth - 1)
        return 1, 1

    def load_params(self, data) -> dict:
        if "params" not in data:
            return {}
        t = self.table(data["params"], ("params",))
        out = {}
        for name, spec in t.items():
            keys = ("params", name)
            if not _IDENT.match(name) or name in _RESERVED_SYMBOLS:
                self.fail(keys, f"[params]: {name!r} is not a valid symbol name (a letter, then letters, digits "
                                "or '_'; not 'o' or 'Sw')")
            if not isinstance(spec, dict):
                self.fail(keys, f"[params] {name} must be a table like {{ min = 1, max = 64 }}, not "
                                f"{_type_name(spec)} {_short(spec)}")
            self.check_keys(spec, keys, _PARAM_KEYS, what=f"[params] {name}")
            lo = self.get_int(spec, keys + ("min",), default=1, lo=1, hi=MAX_PARAM)
            hi = self.get_int(spec, keys + ("max",), required=True, lo=1, hi=MAX_PARAM)
            mult = self.get_int(spec, keys + ("multiple_of",), default=1, lo=1, hi=MAX_PARAM)
            if lo > hi:
                self.fail(keys, f"[params] {name}: min = {lo} is greater than max = {hi}")
            p = Param(name, lo, hi, mult, self.lines.line(*keys))
            if p.count() == 0:
                self.fail(keys, f"[params] {name}: no multiple of {mult} lies in [{lo}, {hi}]")
            out[name] = p
        return out

    def load_mma(self, data, symbols) -> MMAConfig:
        keys = ("mma",)
        t = self.table(data["mma"], keys)
        self.check_keys(t, keys, _MMA_KEYS)
        atom = self.get_str(t, keys + ("atom",), required=True, max_len=200)
        self.check_atom(atom, keys + ("atom",), "mma")
        raw_layout = self.get_str(t, keys + ("layout",), default="(1,1,1)")
        lay = self.notation(raw_layout, keys + ("layout",), symbols, "an AtomLayoutMNK")
        atom_threads = self.atoms_module("mma").get_mma_atom(atom).num_threads
        self.check_atom_layout(lay, raw_layout, keys + ("layout",), atom_threads)
        perm, raw_perm = None, None
        if "permutation" in t:
            perm, raw_perm = self.load_permutation(t["permutation"], keys + ("permutation",), symbols)
        return MMAConfig(atom, lay, perm, raw_layout, raw_perm, self.lines.line(*keys))

    # -- Version 2, Hopper: [smem.X], [tma.X] ([stages] count: load_stages, shared with the data path)
    def gmma_sources(self, atom) -> dict | None:
        """``{"A": "smem"|"reg", "B": "smem"}`` of a GMMA atom, None for other atoms."""
        mod = self.atoms_module("mma")
        pm = getattr(mod.get_mma_atom(atom), "ptx_model", None) or {}
        if pm.get("instr") != "wgmma":
            return None
        return {"A": "smem" if pm.get("a_source") == "smem" else "reg", "B": "smem"}

    def check_supported_mma(self, mma, copies, smem):
        """GMMA atoms read A (SS) and B from shared memory through descriptors: those
        operands need ``[smem.X]``; ``[smem.X]`` needs a GMMA atom reading X from smem."""
        src = self.gmma_sources(mma.atom) if mma is not None else None
        for op in ("A", "B"):
            reads_smem = src is not None and src[op] == "smem"
            if reads_smem and op in copies:
                self.fail(("copy", op), f"[copy.{op}]: not supported: {mma.atom} reads {op} from shared memory "
                                        f"through a GMMA descriptor, not through a copy; describe the tile in "
                                        f"[smem.{op}]")
            if reads_smem and op not in smem:
                self.fail(("mma", "atom"), f"[mma] atom {mma.atom!r} reads {op} from shared memory through a GMMA "
                                           f"descriptor: the configuration needs an [smem.{op}] table (type, layout)")
            if op in smem and not reads_smem:
                what = "is not an SM90 GMMA atom" if src is None else f"reads {op} from registers (RS)"
                self.fail(("smem", op), f"[smem.{op}]: [mma] atom {mma.atom if mma else None!r} {what}; [smem.X] "
                                        "describes an operand a GMMA atom reads from shared memory")

    def load_smem_tables(self, data, symbols, mma, stages) -> dict:
        out = {}
        if "smem" in data and getattr(self, "stages_family", None):
            self.fail(("stages", "count"), f"[stages] count = {self.stages_family!r}: not supported with [smem.X] "
                                           "tables (write the PIPE extent of the [smem.X] layout as the parameter)")
        if "smem" in data:
            t = self.table(data["smem"], ("smem",))
            for op, spec in t.items():
                keys = ("smem", op)
                if op not in ("A", "B"):
                    self.fail(keys, f"[smem.{op}]: unknown operand {op!r}; GMMA reads [smem.A] and [smem.B]")
                if not isinstance(spec, dict):
                    self.fail(keys, f"smem.{op} must be a table [smem.{op}], not {_type_name(spec)} {_short(spec)}")
                self.check_keys(spec, keys, _SMEM_KEYS)
                typ = self.get_str(spec, keys + ("type",), required=True, max_len=100)
                raw = self.get_str(spec, keys + ("layout",), required=True)
                align = self.get_align(spec, keys + ("align",), 128)
                bits = self.check_type(typ, keys + ("type",))
                layout = self.smem_layout(raw, keys + ("layout",), symbols, bits, stages)
                out[op] = SmemConfig(op, typ, layout, align, raw, self.lines.line(*keys))
        if mma is not None:
            self.check_supported_mma(mma, self.copies_seen, out)
        return out

    def smem_layout(self, raw, keys, symbols, bits, stages):
        """``Sw<B,M,S> o smem_ptr[Nb](unset) o L`` (a GmmaSmemLayout) or a plain / element-swizzled layout."""
        from .errors import AtomError
        w = self.where(keys)
        self.check_ascii(raw, keys)
        if "smem_ptr" in raw:
            from .atoms.gmma import _SMEM_RE, GmmaSmemLayout
            from .algebra.composed import Swizzle
            mm = _SMEM_RE.match(raw)
            if not mm:
                self.fail(keys, f"{w}: not a GMMA smem layout (expected 'Sw<B,M,S> o smem_ptr[Nb](unset) o L'): "
                                f"{raw!r}")
            if any(len(mm.group(i)) > 12 for i in range(1, 5)):
                self.fail(keys, f"{w}: integer too large in {raw[:60]!r}")
            b, m_, s_, lbits = (int(mm.group(i)) for i in range(1, 5))
            try:
                sw = Swizzle(b, m_, s_)
            except SymlayoutError as e:
                self.fail(keys, f"{w}: {e}")
            if lbits != bits:
                self.fail(keys, f"{w}: the layout is for {lbits}-bit elements (smem_ptr[{lbits}b]) but the "
                                f"type has {bits} bits")
            inner = self.notation(mm.group(5), keys, symbols, "a layout")
            if not hasattr(inner, "shape") or getattr(inner, "is_composed", False) or \
                    getattr(inner, "is_swizzle", False):
                self.fail(keys, f"{w}: after 'smem_ptr[{lbits}b](unset) o' a layout 'shape:stride' is expected")
            lay = GmmaSmemLayout(sw, bits, inner)
        else:
            lay = self.notation(raw, keys, symbols, "a layout")
            if not hasattr(lay, "shape") or getattr(lay, "is_swizzle", False):
                self.fail(keys, f"{w} must be a layout, got {raw!r}")
            inner = lay.inner if getattr(lay, "is_composed", False) else lay
        from .algebra.int_tuple import flatten_leaves, product
        if not all(isinstance(x, int) for x in flatten_leaves(inner.stride)):
            self.fail(keys, f"{w}: not supported: symbols in the strides of a GMMA shared-memory layout (the "
                            "descriptor fields are compile-time constants in CuTe)")
        syms = [x for x in flatten_leaves(inner.shape) if not isinstance(x, int)]
        if any(not getattr(x, "is_Symbol", False) for x in syms) or len(set(syms)) != len(syms):
            self.fail(keys, f"{w}: not supported: a GMMA shared-memory layout takes a parameter only as the whole "
                            "extent of a mode, each parameter once (a family over stages or K tiles)")
        rank = inner.rank()
        if rank not in (2, 3):
            self.fail(keys, f"{w} {raw!r} has rank {rank}; a GMMA operand tile is (MN,K) or (MN,K,PIPE)")
        if stages is not None:
            if rank == 3:
                pipe = product(inner.shape[2])
                if not isinstance(pipe, int) or pipe != stages:
                    self.fail(keys, f"{w}: its PIPE mode has {pipe} stages but [stages] count = {stages}")
            else:
                lay = _append_pipe(lay, stages)
        # (a family: at the parameters' largest values, each a whole extent of a mode of concrete strides)
        top = {x: self.params[str(x)].max for x in syms if str(x) in getattr(self, "params", {})}
        if len(top) == len(syms):
            from .algebra.layout import Layout
            from .algebra.int_tuple import flatten_leaves as leaves, unflatten
            widest = Layout(unflatten(tuple(top.get(x, x) for x in leaves(inner.shape)), inner.shape), inner.stride)
            nbytes = int(widest.cosize()) * bits // 8 * (stages if stages and rank == 2 else 1)
            if nbytes > MAX_SMEM_BYTES:
                at = f" (at {', '.join(f'{x} = {v}' for x, v in top.items())})" if top else ""
                self.fail(keys, f"{w} {raw!r} spans {nbytes} bytes{at}, beyond the 32-bit shared-memory address "
                                "space")
        return lay

    def load_tma_tables(self, data, symbols, smem) -> dict:
        if "tma" not in data:
            return {}
        t = self.table(data["tma"], ("tma",))
        out = {}
        for op, spec in t.items():
            keys = ("tma", op)
            if op not in ("A", "B"):
                self.fail(keys, f"[tma.{op}]: unknown operand {op!r}; TMA loads [tma.A] and [tma.B]")
            if not isinstance(spec, dict):
                self.fail(keys, f"tma.{op} must be a table [tma.{op}], not {_type_name(spec)} {_short(spec)}")
            if op not in smem:
                self.fail(keys, f"[tma.{op}] loads the tile of [smem.{op}], which the configuration does not have")
            self.check_keys(spec, keys, _TMA_KEYS)
            atom = self.get_str(spec, keys + ("atom",), default="SM90_TMA_LOAD", max_len=100)
            if atom not in _TMA_ATOMS:
                self.fail(keys + ("atom",), f"[tma.{op}] atom {atom!r}: expected one of {', '.join(_TMA_ATOMS)}"
                                            f"{_suggest(atom, _TMA_ATOMS)}")
            mc = self.get_int(spec, keys + ("multicast",), default=1, lo=1, hi=16)
            if mc > 1 and atom != "SM90_TMA_LOAD_MULTICAST":
                self.fail(keys + ("multicast",), f"[tma.{op}] multicast = {mc} needs atom = 'SM90_TMA_LOAD_MULTICAST'")
            raw_g = self.get_str(spec, keys + ("gmem",), required=True)
            gmem = self.notation(raw_g, keys + ("gmem",), symbols, "a layout")
            if not hasattr(gmem, "shape") or getattr(gmem, "is_composed", False) or getattr(gmem, "is_swizzle", False):
                self.fail(keys + ("gmem",), f"[tma.{op}] gmem must be a layout 'shape:stride', got {raw_g!r}")
            raw_b = self.get_str(spec, keys + ("box",), required=True)
            box = self.notation(raw_b, keys + ("box",), {}, "an int tuple")
            box = box.shape if hasattr(box, "shape") and not isinstance(box, tuple) else box
            box = box if isinstance(box, tuple) else (box,)
            if not all(isinstance(x, int) and x > 0 for x in box):
                self.fail(keys + ("box",), f"[tma.{op}] box must be a tuple of positive integers like '(128,64)', "
                                           f"got {raw_b!r}")
            sw = None
            if "swizzle" in spec:
                raw_s = self.get_str(spec, keys + ("swizzle",))
                sw = self.notation(raw_s, keys + ("swizzle",), {}, "a swizzle")
                if not getattr(sw, "is_swizzle", False):
                    self.fail(keys + ("swizzle",), f"[tma.{op}] swizzle must be written 'Sw<B,M,S>', got {raw_s!r}")
            self.check_tma_swizzle(sw, keys + ("swizzle",)) if sw is not None else \
                self.check_tma_swizzle(getattr(smem[op].layout, "swizzle", None), ("smem", op, "layout"))
            out[op] = TmaConfig(op, atom, mc, gmem, tuple(box), sw, raw_g, self.lines.line(*keys))
        return out

    def check_tma_swizzle(self, sw, keys):
        """A tensor-map swizzle symlayout models: CuTe maps ``Sw<2,5,2>`` / ``Sw<2,6,2>`` to the ``128B_ATOM_32B``
        / ``128B_ATOM_64B`` modes (``CU_TENSOR_MAP_SWIZZLE_128B_ATOM_*``: 32- or 64-byte chunks permuted in a
        128-byte span), which ``symlayout.arch.tma`` does not model: an input error, not a crash."""
        from .atoms.tma import TmaCopyError, tma_swizzle
        from .arch.tma import SWIZZLE_ENUM
        try:
            mode = tma_swizzle(sw) if sw is not None else "none"
        except TmaCopyError:
            return                                  # (CuTe's make_tma_copy refuses it: refuted as `tma`)
        if mode not in SWIZZLE_ENUM:
            self.fail(keys, f"{self.where(keys)}: not supported: {sw} is the TMA swizzle mode {mode} (32- or 64-byte "
                            f"chunks); symlayout models the tensor-map swizzles {', '.join(SWIZZLE_ENUM)} only")

    def check_atom_layout(self, lay, raw, keys, atom_threads=1):
        from .algebra.int_tuple import flatten_leaves, is_tuple
        from .algebra.layout import Layout
        from .algebra.int_tuple import _
        if getattr(lay, "is_composed", False) or getattr(lay, "is_swizzle", False) or lay is _:
            self.fail(keys, f"[mma] layout must be an IntTuple like \"(2,2,1)\" or a layout like "
                            f"\"(2,2,1):(1,2,0)\", got {raw!r}")
        shape = lay.shape if isinstance(lay, Layout) else lay
        if is_tuple(shape) and len(shape) > 3:
            self.fail(keys, f"[mma] layout {raw!r} has rank {len(shape)}; AtomLayoutMNK has at most 3 modes (M,N,K)")
        leaves = flatten_leaves(shape) if is_tuple(shape) else (shape,)
        n = 1
        for x in leaves:
            if not isinstance(x, int):
                self.fail(keys, f"[mma] layout {raw!r} must be concrete (no parameters)")
            if x <= 0:
                self.fail(keys, f"[mma] layout {raw!r}: entries must be positive, got {x}")
            n *= x
        if n * atom_threads > MAX_THREADS:       # CuTe's size(TiledMMA) = atoms x the atom's threads
            self.fail(keys, f"[mma] layout {raw!r} tiles {n} atoms of {atom_threads} threads = "
                            f"{n * atom_threads} threads; a block has at most {MAX_THREADS}")
        if isinstance(lay, Layout):
            for x in flatten_leaves(lay.stride) if is_tuple(lay.stride) else (lay.stride,):
                if not isinstance(x, int):
                    self.fail(keys, f"[mma] layout {raw!r} must be concrete (no parameters)")
            # CuTe numbers the TiledMMA's threads by this layout (size(mma) = atoms x atom threads):
            # it must number the n atoms 0..n-1, each once, or threads are duplicated or missing
            img = sorted(int(lay(i)) for i in range(n))
            if img != list(range(n)):
                dup = next((a for a, b in zip(img, img[1:]) if a == b), None)
                why = f"atom {dup} is used twice" if dup is not None else f"it reaches atom {max(img)}"
                self.fail(keys, f"[mma] layout {raw!r}: not supported: AtomLayoutMNK must number its {n} atoms "
                                f"0..{n - 1} once each ({why}); a TiledMMA of size {n} x the atom's threads "
                                "would leave threads without an atom or give two threads the same one")

    def load_permutation(self, v, keys, symbols):
        from .algebra.int_tuple import flatten_leaves, is_tuple
        from .algebra.int_tuple import _
        if not isinstance(v, list):
            self.fail(keys, f"[mma] permutation must be an array of 1 to 3 entries like [\"32\", \"32\", \"16\"], "
                            f"not {_type_name(v)} {_short(v)}")
        if not 1 <= len(v) <= 3:
            self.fail(keys, f"[mma] permutation must have 1 to 3 entries (M, N, K), got {len(v)}")
        out, raw = [], []
        for i, e in enumerate(v):
            what = f"[mma] permutation[{i}]"
            if isinstance(e, bool) or not isinstance(e, (str, int)):
                self.fail(keys, f"{what} must be an extent (\"32\"), a layout (\"(4,4,2):(1,8,4)\") or \"_\", not "
                                f"{_type_name(e)} {_short(e)}")
            text = str(e)
            if len(text) > MAX_STRING:
                self.fail(keys, f"{what} is too long ({len(text)} characters)")
            if not text.strip():
                self.fail(keys, f"{what} is blank: write \"_\" for no permutation of that mode")
            if text.strip() == "_":
                out.append(_)
                raw.append("_")
                continue
            self.check_ascii(text, keys)
            try:
                from .algebra.notation import parse
                node = parse(text, symbols)
            except SymlayoutError as err:
                self.fail(keys, f"{what}: {err}")
            if getattr(node, "is_composed", False) or getattr(node, "is_swizzle", False) or is_tuple(node):
                self.fail(keys, f"{what} must be an extent or a layout, got {text!r}")
            leaves = []
            if hasattr(node, "shape"):
                leaves = list(flatten_leaves(node.shape)) + list(flatten_leaves(node.stride))
                size = node.size()
            else:
                leaves = [node]
                size = node
            if any(not isinstance(x, int) for x in leaves):
                self.fail(keys, f"{what} {text!r} must be concrete (no parameters)")
            if not hasattr(node, "shape") and node <= 0:
                self.fail(keys, f"{what}: the extent must be positive, got {node}")
            if size > MAX_PERMUTATION:
                self.fail(keys, f"{what}: extent {size} is too large (limit {MAX_PERMUTATION})")
            out.append(node)
            raw.append(text)
        return tuple(out), tuple(raw)

    def load_copies(self, data, symbols, mma) -> dict:
        self.copies_seen = {}
        if "copy" not in data:
            return {}
        t = self.table(data["copy"], ("copy",))
        out = self.copies_seen = {}
        for op, spec in t.items():
            keys = ("copy", op)
            if op not in OPERANDS:
                self.fail(keys, f"[copy.{op}]: unknown operand {op!r}; copies are [copy.A], [copy.B] or [copy.C]"
                                f"{_suggest(op.upper(), OPERANDS) if op.upper() in OPERANDS else ''}")
            if not isinstance(spec, dict):
                self.fail(keys, f"copy.{op} must be a table [copy.{op}], not {_type_name(spec)} {_short(spec)}")
            self.check_keys(spec, keys, _COPY_KEYS)
            atom = self.get_str(spec, keys + ("atom",), required=True, max_len=200)
            typ = self.get_str(spec, keys + ("type",), required=True, max_len=100)
            raw = self.get_str(spec, keys + ("smem",), required=True)
            align = self.get_align(spec, keys + ("align",), 128)
            self.check_atom(atom, keys + ("atom",), "copy")
            self.check_copy_direction(atom, op, keys + ("atom",))
            bits = self.check_type(typ, keys + ("type",))
            self.check_copy_atom_type(atom, typ, keys)
            smem = self.notation(raw, keys + ("smem",), symbols, "a layout")
            self.check_smem(smem, raw, keys + ("smem",), op, bits, staged=op != "C")
            smem, staged, nst = self.split_stages(smem, keys + ("smem",))
            tiled = self.load_tiled(spec, keys, symbols, required=False)
            convert = spec.get("convert", False)
            if not isinstance(convert, bool):
                self.fail(keys + ("convert",), f"[copy.{op}] convert must be true or false, not "
                                               f"{_type_name(convert)} {_short(convert)}")
            if convert and op != "C":
                self.fail(keys + ("convert",), f"[copy.{op}] convert applies to [copy.C] only (the accumulator is "
                                               "converted to the stored type before the copy)")
            out[op] = CopyConfig(op, atom, typ, smem, align, raw, self.lines.line(*keys), convert, tiled, staged, nst)
        return out

    # -- version 2: hand-built copies, global-memory copies, stages
    def load_tiled(self, spec, keys, symbols, required):
        """``thr``/``val`` or ``tv``/``tiler`` of a table (None when neither is given and not required)."""
        have = [k for k in ("thr", "val", "tv", "tiler") if k in spec]
        w = self.where(keys)
        if not have:
            if required:
                self.fail(keys, f"{w}: needs the TiledCopy: 'thr' and 'val' (make_tiled_copy(atom, thr, val)) or "
                                "'tv' and 'tiler' (make_tiled_copy_impl(atom, tv, tiler))")
            return None
        if ("thr" in have or "val" in have) and ("tv" in have or "tiler" in have):
            self.fail(keys + (have[-1],), f"{w}: give either thr/val or tv/tiler, not both")
        parsed = {}
        for k in have:
            raw = self.get_str(spec, keys + (k,))
            v = self.notation(raw, keys + (k,), {}, "a layout")
            from .algebra.int_tuple import is_tuple
            if k == "tiler":
                from .algebra.int_tuple import flatten_leaves
                ext = v.shape if hasattr(v, "shape") and not getattr(v, "is_composed", False) else v
                if hasattr(v, "shape") and not getattr(v, "is_composed", False):
                    ext = tuple(v[i].size() for i in range(v.rank())) if is_tuple(v.shape) else (v.size(),)
                elif not is_tuple(ext):
                    ext = (ext,)
                if len(ext) != 2 or any(not isinstance(e, int) or e <= 0 for e in flatten_leaves(ext)):
                    self.fail(keys + (k,), f"{w} tiler {raw!r} must be two positive extents like \"(64,16)\"")
                from .algebra.int_tuple import product
                v = tuple(product(e) for e in ext)
            else:
                from .algebra.layout import Layout
                if getattr(v, "is_composed", False) or getattr(v, "is_swizzle", False):
                    self.fail(keys + (k,), f"{w} {k} must be a plain layout, got {raw!r}")
                if not hasattr(v, "shape"):
                    v = Layout(v)
                from .algebra.int_tuple import flatten_leaves
                leaves = list(flatten_leaves(v.shape)) + list(flatten_leaves(v.stride))
                if any(not isinstance(x, int) for x in leaves):
                    self.fail(keys + (k,), f"{w} {k} {raw!r} must be concrete (no parameters)")
                if v.size() > MAX_THREADS * 1024:
                    self.fail(keys + (k,), f"{w} {k} {raw!r} is too large")
                if k == "thr" and v.size() > MAX_THREADS:
                    self.fail(keys + (k,), f"{w} thr {raw!r} has {v.size()} threads; a block has at most {MAX_THREADS}")
            parsed[k] = v
        if "thr" in parsed or "val" in parsed:
            if "thr" not in parsed:
                self.fail(keys, f"{w}: 'val' needs 'thr' (make_tiled_copy(atom, thr, val))")
            from .algebra.layout import Layout
            spec_ = TiledCopySpec(thr=parsed["thr"], val=parsed.get("val", Layout(1, 0)))
        else:
            if "tv" not in parsed or "tiler" not in parsed:
                self.fail(keys, f"{w}: 'tv' and 'tiler' go together (make_tiled_copy_impl(atom, tv, tiler))")
            spec_ = TiledCopySpec(tv=parsed["tv"], tiler=parsed["tiler"])
        return spec_

    def load_stages(self, data, params=None):
        """``[stages] count``: an integer, or the name of a ``[params]`` symbol (a family of stage counts)."""
        if "stages" not in data:
            return None
        keys = ("stages",)
        t = self.table(data["stages"], keys)
        self.check_keys(t, keys, _STAGES_KEYS)
        raw = t.get("count")
        if isinstance(raw, str) and raw.strip().isdigit():
            t = dict(t, count=int(raw))          # a member of a family written out ("s" replaced by its value)
            raw = t["count"]
        if isinstance(raw, str):
            w = self.where(keys + ("count",))
            p = (params or {}).get(raw)
            if p is None:
                self.fail(keys + ("count",), f"{w}: {raw!r} is not a [params] symbol (a stage count is an integer "
                                             "or the name of a parameter)")
            if p.min < 1 or p.count() < 1:
                self.fail(keys + ("count",), f"{w}: the stage counts of {raw!r} must be at least 1 "
                                             f"(min = {p.min})")
            return raw
        return self.get_int(t, keys + ("count",), required=True, lo=1, hi=MAX_STAGES)

    def split_stages(self, smem, keys):
        """A rank-3 ``(M,K,PIPE)`` smem layout: ``(stage 0, whole buffer, PIPE size)``; rank 2: ``(smem, None, 1)``."""
        if smem.rank() != 3:
            return smem, None, 1
        from .algebra.layout import slice_and_offset
        from .algebra.notation import _
        from .algebra.int_tuple import product
        n = product(smem.shape[2])
        if not isinstance(n, int):
            self.fail(keys, f"{self.where(keys)}: the PIPE mode must be concrete")
        if n > MAX_STAGES:
            self.fail(keys, f"{self.where(keys)}: {n} stages (limit {MAX_STAGES})")
        from .errors import SymlayoutError
        try:
            s0, off = slice_and_offset((_, _, 0), smem)
        except SymlayoutError as e:               # CuTe's slice of the stage fails to compile as well
            self.fail(keys, f"{self.where(keys)}: a stage of this staged layout cannot be sliced (CuTe's sX(_,_,s) "
                            f"does not compile: {str(e).splitlines()[0]})")
        if off != 0:
            self.fail(keys, f"{self.where(keys)}: stage 0 of the PIPE mode does not start at offset 0")
        return s0, smem, n

    def apply_elements(self, data, copies, g2s, s2g, smem):
        """Version 2.1: each operand's ``element`` (the type its tensors hold), stated on any of its
        tables (``[copy.X]``, ``[g2s.X]``, ``[s2g.X]``, ``[smem.X]``, ``[tma.X]``) and the same
        wherever it is stated, given to every table of the operand."""
        from dataclasses import replace
        from .atoms.types import canonical_type
        stated = {}
        for kind in _ELEMENT_TABLES:
            for op, spec in (data.get(kind) or {}).items():
                if not isinstance(spec, dict) or "element" not in spec:
                    continue
                keys = (kind, op, "element")
                if op not in OPERANDS:
                    continue                   # (the table's own loader names the unknown operand)
                el = self.get_str(spec, keys, max_len=100)
                bits = self.check_type(el, keys)
                if op in stated:
                    el0, keys0 = stated[op]
                    if canonical_type(el0) != canonical_type(el):
                        self.fail(keys, f"[{kind}.{op}] element = {el!r} disagrees with [{keys0[0]}.{op}] element = "
                                        f"{el0!r} "
                                        f"(line {self.lines.line(*keys0)}): operand {op}'s tensors hold one "
                                        "element type")
                    continue
                if op in smem and bits != value_type_bits(smem[op].type):
                    self.fail(keys, f"[{kind}.{op}] element = {el!r} has {bits} bits, but [smem.{op}] type = "
                                    f"{smem[op].type!r} has {value_type_bits(smem[op].type)}: the smem layout "
                                    "counts elements of that width")
                stated[op] = (el, keys)

        def given(tables):
            return {op: replace(t, element=stated[op][0]) if op in stated else t for op, t in tables.items()}
        return given(copies), given(g2s), given(s2g), given(smem)

    def apply_stages(self, copies, stages, family=None):
        """``[stages] count``: the PIPE mode of every A/B smem layout (a staged layout's own PIPE size must agree)."""
        import dataclasses
        for op, c in list(copies.items()):
            if c.smem_staged is not None and family is not None:
                self.fail(("stages", "count"), f"[stages] count = {family!r} is a family of stage counts, but "
                                               f"[copy.{op}] smem has a PIPE mode of {c.stages}: give one or the other")
            if c.smem_staged is not None:
                if stages is not None and stages != c.stages:
                    self.fail(("stages", "count"), f"[stages] count = {stages}, but [copy.{op}] smem has a PIPE mode "
                                                   f"of {c.stages}")
                stages = c.stages
        if stages is None:
            return None
        for op, c in list(copies.items()):
            if op != "C" and c.smem_staged is None:
                copies[op] = dataclasses.replace(c, smem_staged=staged_layout(c.smem, stages), stages=stages)
        return stages

    def load_global_copies(self, data, symbols, copies, stages):
        out = {"g2s": {}, "s2g": {}}
        for kind in ("g2s", "s2g"):
            if kind not in data:
                continue
            t = self.table(data[kind], (kind,))
            for op, spec in t.items():
                keys = (kind, op)
                allowed = ("A", "B") if kind == "g2s" else ("C",)
                if op not in allowed:
                    self.fail(keys, f"[{kind}.{op}]: {'global -> shared copies are [g2s.A] or [g2s.B]' if kind == 'g2s' else 'the shared -> global copy is [s2g.C]'}")
                if not isinstance(spec, dict):
                    self.fail(keys, f"{kind}.{op} must be a table [{kind}.{op}], not {_type_name(spec)} {_short(spec)}")
                self.check_keys(spec, keys, _GLOBAL_KEYS)
                w = f"[{kind}.{op}]"
                atom = self.get_str(spec, keys + ("atom",), required=True, max_len=200)
                typ = self.get_str(spec, keys + ("type",), required=True, max_len=100)
                self.check_atom(atom, keys + ("atom",), "copy")
                self.check_global_direction(atom, kind, op, keys + ("atom",))
                bits = self.check_type(typ, keys + ("type",))
                self.check_copy_atom_type(atom, typ, keys)
                tiled = self.load_tiled(spec, keys, symbols, required=True)
                cc = copies.get(op)
                if "smem" in spec:
                    raw_smem = self.get_str(spec, keys + ("smem",))
                    smem = self.notation(raw_smem, keys + ("smem",), symbols, "a layout")
                    self.check_smem(smem, raw_smem, keys + ("smem",), op, bits, staged=op != "C")
                    smem, staged, nst = self.split_stages(smem, keys + ("smem",))
                    if staged is not None and getattr(self, "stages_family", None):
                        self.fail(keys + ("smem",), f"{w} smem has a PIPE mode of {nst}, but [stages] count = "
                                                    f"{self.stages_family!r} is a family of stage counts: give one "
                                                    "or the other")
                    if staged is None and stages is not None and op != "C":
                        staged, nst = staged_layout(smem, stages), stages
                    elif staged is not None and stages is not None and nst != stages:
                        self.fail(keys + ("smem",), f"{w} smem has a PIPE mode of {nst}, [stages] count is {stages}")
                elif cc is not None:
                    raw_smem, smem, staged, nst = cc.raw_smem, cc.smem, cc.smem_staged, cc.stages
                else:
                    self.fail(keys, f"{w}: missing required key 'smem' (no [copy.{op}] table gives the smem tile)")
                align = self.get_align(spec, keys + ("align",), cc.align if cc is not None and "smem" not in spec else 128)
                raw_g = self.get_str(spec, keys + ("gmem",), required=True)
                gmem = self.notation(raw_g, keys + ("gmem",), symbols, "a layout")
                self.check_gmem(gmem, raw_g, smem, keys + ("gmem",), bits)
                galign = self.get_align(spec, keys + ("gmem_align",), None)
                if galign is None:
                    galign = max(1, (bits or 8) // 8)
                residue = spec.get("residue", [])
                names = OPERAND_MODES[op]
                if not isinstance(residue, list) or any(not isinstance(r, str) for r in residue):
                    self.fail(keys + ("residue",), f"{w} residue must be an array of mode names like {list(names)}")
                for r in residue:
                    if r not in names:
                        self.fail(keys + ("residue",), f"{w} residue: {r!r} is not a mode of the {op} tile "
                                                       f"{'(' + ','.join(names) + ')'}")
                if len(set(residue)) != len(residue):
                    self.fail(keys + ("residue",), f"{w} residue names a mode twice")
                out[kind][op] = GlobalCopyConfig(kind, op, atom, typ, tiled, gmem, raw_g, galign, smem, raw_smem,
                                                 align, tuple(residue), staged, nst, self.lines.line(*keys))
        return out["g2s"], out["s2g"]

    def check_global_direction(self, atom, kind, op, keys):
        """ldmatrix/stmatrix move data between shared memory and registers, never global memory;
        cp.async only copies global into shared memory."""
        mod = self.atoms_module("copy")
        if mod is None:
            return
        k = mod.get_copy_op(atom).kind
        if k in ("ldsm", "stsm"):
            self.fail(keys, f"[{kind}.{op}] atom {atom!r} moves data between shared memory and registers, not "
                            "global memory: use SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, UniversalCopy<...> or "
                            "AutoVectorizingCopy")
        if k == "cp_async" and kind == "s2g":
            self.fail(keys, f"[s2g.{op}] atom {atom!r} (cp.async) copies global memory into shared memory; the "
                            "store of C to global memory needs UniversalCopy<...> or AutoVectorizingCopy")

    def check_gmem(self, gmem, raw, smem, keys, bits=None):
        from .algebra.int_tuple import flatten_leaves, product
        w = self.where(keys)
        if not hasattr(gmem, "shape") or getattr(gmem, "is_composed", False) or getattr(gmem, "is_swizzle", False):
            self.fail(keys, f"{w} must be a layout \"shape:stride\" like \"(64,32):(ldA,1)\", got {raw!r}")
        if gmem.rank() != 2:
            self.fail(keys, f"{w} {raw!r} has rank {gmem.rank()}; the gmem tile has the smem tile's two modes")
        if any(not isinstance(x, int) for x in flatten_leaves(gmem.shape)):
            self.fail(keys, f"{w} {raw!r}: the tile's shape must be concrete (strides may be [params] symbols)")
        want = tuple(product(smem.shape[i]) for i in range(2))
        have = tuple(product(gmem.shape[i]) for i in range(2))
        if isinstance(want[0], int) and isinstance(want[1], int) and want != have:
            self.fail(keys, f"{w} {raw!r} is a {have[0]}x{have[1]} tile; the smem tile is {want[0]}x{want[1]}")
        for x in flatten_leaves(gmem.stride):
            if isinstance(x, int) and x < 0:
                self.fail(keys, f"{w} {raw!r}: negative strides are not supported")
        shp, std = flatten_leaves(gmem.shape), flatten_leaves(gmem.stride)
        if all(isinstance(x, int) for x in std):
            nbytes = (sum((n - 1) * d for n, d in zip(shp, std)) + 1) * max(bits or 8, 8) // 8
            if nbytes > MAX_GMEM_BYTES:
                self.fail(keys, f"{w} {raw!r} spans {nbytes} bytes, beyond the 64-bit global address space")

    def check_smem(self, smem, raw, keys, op, bits, staged=False):
        from .algebra.int_tuple import flatten_leaves, is_tuple
        w = self.where(keys)
        if not hasattr(smem, "shape") or getattr(smem, "is_swizzle", False):
            self.fail(keys, f"{w} must be a layout \"shape:stride\" (optionally \"Sw<B,M,S> o shape:stride\"), "
                            f"got {raw!r}")
        rank = smem.rank()
        if rank == 3 and staged:
            pass                       # (M,K,PIPE): a pipelined buffer, as tile_to_shape prints it
        elif rank != 2:
            dims = {"A": "(M,K)", "B": "(N,K)", "C": "(M,N)"}[op]
            self.fail(keys, f"{w} {raw!r} has rank {rank}; the {op} tile is {dims}, rank 2"
                            + (" (or (M,K,PIPE) with stages)" if op != "C" else ""))
        inner = smem.inner if getattr(smem, "is_composed", False) else smem
        leaves = list(flatten_leaves(inner.shape)) + list(flatten_leaves(inner.stride))
        if all(isinstance(x, int) for x in leaves):
            nbytes = int(inner.cosize()) * max(bits or 8, 1) // 8
            if nbytes > MAX_SMEM_BYTES:
                self.fail(keys, f"{w} {raw!r} spans {nbytes} bytes, beyond the 32-bit shared-memory address space")
        off = getattr(smem, "offset", 0)
        if not isinstance(off, int):
            self.fail(keys, f"{w}: the offset of a composed layout must be a concrete integer")

    def load_prove(self, data) -> ProveConfig:
        if "prove" not in data:
            return ProveConfig()
        keys = ("prove",)
        t = self.table(data["prove"], keys)
        self.check_keys(t, keys, _PROVE_KEYS)
        props = None
        if "properties" in t:
            props = tuple(self.property_list(t["properties"], keys + ("properties",)))
            if not props:
                self.fail(keys + ("properties",), "[prove] properties is empty (leave it out to prove every property)")
        timeout = 10.0
        if "timeout_s" in t:
            v = t["timeout_s"]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                self.fail(keys + ("timeout_s",), f"[prove] timeout_s must be a number of seconds, not "
                                                 f"{_type_name(v)} {_short(v)}")
            if not math.isfinite(v) or v <= 0:
                self.fail(keys + ("timeout_s",), f"[prove] timeout_s must be positive and finite, got {v}")
            if v > MAX_TIMEOUT_S:
                self.fail(keys + ("timeout_s",), f"[prove] timeout_s = {v} is too large (limit {int(MAX_TIMEOUT_S)})")
            timeout = float(v)
        return ProveConfig(props, timeout)

    def property_list(self, v, keys):
        if not isinstance(v, list):
            self.fail(keys, f"{self.where(keys)} must be an array of property names, not {_type_name(v)} {_short(v)}")
        seen = []
        for p in v:
            if not isinstance(p, str):
                self.fail(keys, f"{self.where(keys)}: entries must be property names (strings), not "
                                f"{_type_name(p)} {_short(p)}")
            if p not in PROPERTIES:
                self.fail(keys, f"{self.where(keys)}: unknown property {p!r}{_suggest(p, PROPERTIES)}")
            if p in seen:
                self.fail(keys, f"{self.where(keys)}: {p!r} is listed twice")
            seen.append(p)
        return seen

    def load_expect(self, data, prove: ProveConfig) -> ExpectConfig:
        if "expect" not in data:
            return ExpectConfig()
        keys = ("expect",)
        t = self.table(data["expect"], keys)
        self.check_keys(t, keys, _EXPECT_KEYS)
        plain, per_op = self.expect_list(t.get("refuted", []), keys + ("refuted",))
        if prove.properties is not None:
            for p in plain + [p for p, _ in per_op]:
                if p not in prove.properties:
                    self.fail(keys + ("refuted",), f"[expect] refuted names {p!r}, which [prove] properties does not check")
        degree = None
        if "max_bank_degree" in t:
            degree = self.get_int(t, keys + ("max_bank_degree",), lo=1, hi=32)
            if "bank_conflicts" in plain or any(p == "bank_conflicts" for p, _ in per_op):
                self.fail(keys + ("max_bank_degree",), "[expect] max_bank_degree lets bank_conflicts count as proved "
                                                       "up to a degree; it contradicts refuted = [\"bank_conflicts...\"]")
        return ExpectConfig(frozenset(plain), frozenset(per_op), degree)

    def expect_list(self, v, keys):
        """``refuted = ["alignment", "bank_conflicts[A]"]``: plain names and (property, operand) pairs."""
        w = self.where(keys)
        if not isinstance(v, list):
            self.fail(keys, f"{w} must be an array of property names, not {_type_name(v)} {_short(v)}")
        plain, per_op, seen = [], [], set()
        for e in v:
            if not isinstance(e, str):
                self.fail(keys, f"{w}: entries must be property names (strings), not {_type_name(e)} {_short(e)}")
            m = re.fullmatch(r"\s*([A-Za-z_]+)\s*(?:\[\s*([A-Za-z0-9_.]+)\s*\])?\s*", e)
            if not m:
                self.fail(keys, f"{w}: {e!r} is not a property name or 'property[operand]' (e.g. \"bank_conflicts[A]\")")
            p, op = m.group(1), m.group(2)
            if p not in PROPERTIES:
                self.fail(keys, f"{w}: unknown property {p!r}{_suggest(p, PROPERTIES)}")
            if op is not None and op.upper() in OPERANDS:
                op = op.upper()
            if (p, op) in seen:
                self.fail(keys, f"{w}: {e!r} is listed twice")
            seen.add((p, op))
            if op is None:
                plain.append(p)
            else:
                per_op.append((p, op))
        for p, op in per_op:
            if (p, None) in seen:
                self.fail(keys, f"{w}: {p!r} already means every operand; {p}[{op}] is redundant")
        return plain, per_op

    def load_threadmap(self, v, keys, nested=False) -> ThreadMapConfig:
        w = self.where(keys) if not nested else "[threadmap.base]"
        t = self.table(v, keys)
        self.check_keys(t, keys, _TM_KEYS, what=w)
        kind = self.get_str(t, keys + ("kind",), required=True, max_len=200)
        if kind not in _TM_KIND_KEYS:
            self.fail(keys + ("kind",), f"{w}: unknown thread map kind {kind!r}{_suggest(kind, list(_TM_KIND_KEYS))}")
        if nested and kind in _TM_WRAPPERS:
            self.fail(keys + ("kind",), f"{w}: a transposing wrapper cannot wrap another wrapper ({kind!r})")
        required, optional = _TM_KIND_KEYS[kind]
        allowed = set(required) | set(optional) | {"kind", "type", "align"}
        for k in t:
            if k not in allowed:
                self.fail(keys + (k,), f"{w}: key {k!r} does not apply to kind {kind!r} (it takes "
                                       f"{', '.join(k2 for k2 in _TM_KEYS if k2 in allowed)})")
        for k in required:
            if k not in t:
                self.fail(keys, f"{w}: kind {kind!r} needs the key {k!r}")
        kw: dict[str, Any] = {"kind": kind, "line": self.lines.line(*keys)}
        kw["shape"] = self.get_pair(t, keys + ("shape",))
        if kw["shape"] is not None and kw["shape"][0] * kw["shape"][1] > MAX_EXTENT:
            self.fail(keys + ("shape",), f"{w} shape {list(kw['shape'])} has more than {MAX_EXTENT} elements")
        kw["threads"] = self.get_int(t, keys + ("threads",), lo=1, hi=MAX_THREADS)
        kw["elements_per_access"] = self.get_int(t, keys + ("elements_per_access",), lo=1, hi=1024)
        kw["warp_arrangement"] = self.get_pair(t, keys + ("warp_arrangement",), hi=MAX_THREADS)
        kw["thread_tile_shape"] = self.get_pair(t, keys + ("thread_tile_shape",), hi=1024)
        if "iterations" in t:
            it = t["iterations"]
            if isinstance(it, list):
                kw["iterations"] = self.get_pair(t, keys + ("iterations",), hi=1 << 16)
                n = kw["iterations"][0] * kw["iterations"][1]
            else:
                kw["iterations"] = n = self.get_int(t, keys + ("iterations",), lo=1, hi=1 << 16)
            if (kw["threads"] or 1) * n > 1 << 20:
                self.fail(keys + ("iterations",), f"{w}: {kw['threads']} threads x {n} iterations is too many "
                                                  f"accesses (limit {1 << 20})")
        if "offset" in t:
            from .threadmap.formula import parse_expr
            raw = self.get_str(t, keys + ("offset",))
            try:
                kw["offset"] = parse_expr(raw, {"t", "i"})
            except SymlayoutError as e:
                self.fail(keys + ("offset",), f"{w} offset: {e}")
            except (RecursionError, MemoryError, ValueError):
                self.fail(keys + ("offset",), f"{w} offset: cannot read {_short(raw)} as a formula in t and i")
            kw["raw_offset"] = raw
        kw["extent"] = self.get_int(t, keys + ("extent",), lo=1, hi=1 << 31)
        if "type" in t:
            kw["type"] = self.get_str(t, keys + ("type",), max_len=100)
            self.check_type(kw["type"], keys + ("type",))
        kw["align"] = self.get_align(t, keys + ("align",), None)
        if "base" in t:
            kw["base"] = self.load_threadmap(t["base"], keys + ("base",), nested=True)
        return ThreadMapConfig(**kw)

    def check_threadmap_model(self, tm: ThreadMapConfig):
        try:
            tm.build()
        except SymlayoutError as e:
            where = ("threadmap", "offset") if tm.kind == "offset" else ("threadmap",)
            self.fail(where, f"[threadmap]: {e}")

    # -- atoms
    @staticmethod
    def atoms_module(name):
        """``symlayout.atoms.mma`` or ``.copy``, imported when a configuration names an atom (they import sympy)."""
        return importlib.import_module(f"symlayout.atoms.{name}")

    def check_atom(self, atom, keys, kind):
        if not atom.strip():
            self.fail(keys, f"{self.where(keys)} is empty")
        from .errors import AtomError
        mod = self.atoms_module("mma" if kind == "mma" else "copy")
        fn = getattr(mod, "get_mma_atom" if kind == "mma" else "get_copy_op")
        try:
            fn(atom)
        except AtomError as e:
            self.fail(keys, f"{self.where(keys)}: {e}")
        except SymlayoutError as e:
            self.fail(keys, f"{self.where(keys)}: {e}")

    def check_copy_direction(self, atom, op, keys):
        """[copy.A]/[copy.B] load shared memory into registers, [copy.C] stores registers
        into shared memory: an atom that moves data the other way (ldmatrix for C,
        stmatrix for A/B) or between global and shared memory (cp.async) is not that copy."""
        mod = self.atoms_module("copy")
        kind = mod.get_copy_op(atom).kind
        store = op == "C"
        if kind == "cp_async":
            self.fail(keys, f"[copy.{op}] atom {atom!r} copies global memory into shared memory (cp.async); "
                            f"[copy.{op}] {'stores the accumulator into' if store else 'loads the MMA operand from'} "
                            "shared memory: use an ldmatrix/stmatrix, UniversalCopy or AutoVectorizingCopy atom")
        if store and kind == "ldsm":
            self.fail(keys, f"[copy.C] atom {atom!r} is a load (ldmatrix: shared memory -> registers); [copy.C] "
                            "stores the accumulator into shared memory: use a store atom such as "
                            "SM90_U32x4_STSM_N, UniversalCopy<uint32_t> or AutoVectorizingCopy")
        if not store and kind == "stsm":
            self.fail(keys, f"[copy.{op}] atom {atom!r} is a store (stmatrix: registers -> shared memory); "
                            f"[copy.{op}] loads the MMA operand from shared memory: use a load atom such as "
                            "SM75_U32x4_LDSM_N, UniversalCopy<uint32_t> or AutoVectorizingCopy")

    def check_type(self, typ, keys):
        try:
            return value_type_bits(typ)
        except SymlayoutError as e:
            amb = _AMBIGUOUS_TYPES.get(typ.strip().lower())
            if amb:
                self.fail(keys, f"{self.where(keys)}: {typ!r} is ambiguous: write {' or '.join(amb)}")
            self.fail(keys, f"{self.where(keys)}: {e}")

    def check_copy_atom_type(self, atom, typ, keys):
        """A value type whose width cannot feed the atom."""
        mod = self.atoms_module("copy")
        fn = mod.make_copy_atom
        from .errors import CuteStaticAssert
        try:
            ca = fn(atom, typ)
        except CuteStaticAssert:
            return                  # CuTe refuses Copy_Atom<atom, type>: the prover refutes it (type_agreement)
        except SymlayoutError as e:
            self.fail(keys + ("type",), f"{self.where(keys + ('type',))}: {e}")
        bits = value_type_bits(typ)
        if getattr(ca.op, "kind", "") == "default" and bits < 8:
            self.fail(keys + ("type",), f"{self.where(keys + ('type',))}: not supported: {atom} of {typ} ({bits}-bit "
                                        "elements): an auto-vectorizing copy may move single sub-byte elements, and "
                                        "symlayout addresses whole bytes")

    def check_tiles(self, cfg: Config):
        """TiledMMA buildable and each smem tile a multiple of its tile."""
        from .tiled.mma import make_tiled_mma
        try:
            mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout,
                                 list(cfg.mma.permutation) if cfg.mma.permutation is not None else None)
            tile = mma.tile_shape()
        except SymlayoutError as e:
            msg = str(e)
            where = ("mma", "permutation") if "permutation" in msg and cfg.mma.permutation is not None else \
                ("mma", "layout") if "layout" in msg and "layout" in cfg.data.get("mma", {}) else ("mma",)
            self.fail(where, f"[mma]: {e}")
        idx = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}
        names = "MNK"
        from .algebra.int_tuple import product
        from .algebra.symbolic import decide
        from .algebra._lazy import sympy
        for op, c in cfg.copies.items():
            for mode, ti in enumerate(idx[op]):
                need = tile[ti]
                have = product(c.smem.shape[mode]) if hasattr(c.smem, "shape") else None
                if have is None or not isinstance(need, int):
                    continue
                if isinstance(have, int):
                    ok = have % need == 0
                else:
                    ok = decide(sympy.Eq(sympy.Mod(have, need), 0)) is not False
                if not ok:
                    self.fail(("copy", op, "smem"),
                              f"[copy.{op}] smem {c.raw_smem!r}: mode {mode} has size {have}, not a multiple of the "
                              f"TiledMMA's {names[ti]} tile {need}")


# ---------------------------------------------------------------- public API


def staged_layout(smem, count: int):
    """The pipelined buffer of ``count`` stages of ``smem``: a PIPE mode of stride
    ``cosize(smem)`` appended (as ``tile_to_shape(atom, (M,K,PIPE))`` builds it; a swizzle
    acts on the whole buffer).

    >>> from symlayout.algebra.notation import parse
    >>> str(staged_layout(parse("Sw<3,3,3> o (64,64):(64,1)"), 3))
    'Sw<3,3,3> o 0 o (64,64,3):(64,1,4096)'
    """
    from .algebra.layout import Layout, make_layout
    inner = smem.inner if getattr(smem, "is_composed", False) else smem
    shape = inner.shape if inner.rank() > 1 else (inner.shape,)
    stride = inner.stride if inner.rank() > 1 else (inner.stride,)
    staged = Layout(tuple(shape) + (count,), tuple(stride) + (inner.cosize(),))
    if getattr(smem, "is_composed", False):
        return smem.map_inner(lambda _L: staged)
    return staged


def _append_pipe(lay, stages: int):
    """``lay`` with a PIPE mode ``stages : cosize`` appended (stages laid out one after another)."""
    from .algebra.layout import Layout
    from .atoms.gmma import GmmaSmemLayout
    inner = lay.layout if isinstance(lay, GmmaSmemLayout) else lay.inner if getattr(lay, "is_composed", False) else lay
    piped = Layout(tuple(inner.shape) + (stages,), tuple(inner.stride) + (int(inner.cosize()),))
    if isinstance(lay, GmmaSmemLayout):
        return GmmaSmemLayout(lay.swizzle, lay.bits, piped)
    if getattr(lay, "is_composed", False):
        from .algebra.composed import ComposedLayout
        return ComposedLayout(lay.swizzle, lay.offset, piped)
    return piped


def read_text(path: str) -> str:
    p = Path(path)
    try:
        if p.is_dir():
            raise ConfigError(f"{path}: is a directory, not a configuration file")
        with open(p, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except ConfigError:
        raise
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except PermissionError:
        raise ConfigError(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a configuration file") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {_one_line(e.strerror or e)}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: too large for a configuration file (over {MAX_FILE_BYTES} bytes)")
    if b"\x00" in raw:
        off = raw.index(b"\x00")
        line = raw[:off].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not a text file (NUL byte at offset {off})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not a UTF-8 text file (byte 0x{raw[e.start]:02x} at offset {e.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def load_config(path) -> Config:
    """Read and validate one configuration file.

    Raises :class:`ConfigError` (``"<path>:<line>: <problem>"``) for anything
    malformed: TOML syntax, types, unknown/missing keys, notation, undefined
    symbols, parameter ranges, property names, atom/type names (when the atoms
    package is importable).

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tm.toml"
    >>> _ = p.write_text('[threadmap]\\nkind = "offset"\\nthreads = 4\\noffset = "t * 2"\\nextent = 8\\n')
    >>> load_config(p).threadmap.raw_offset
    't * 2'
    """
    path = str(path)
    text = read_text(path)
    return _Loader(path, text).load()


def loads_config(text: str, path: str = "<string>") -> Config:
    """Validate configuration text (``path`` only names it in messages).

    >>> loads_config('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n').mma.raw_layout
    '(1,1,1)'
    """
    if not isinstance(text, str):
        raise ConfigError(f"{path}: configuration text must be a string")
    return _Loader(path, text).load()


#: top-level tables that make a TOML file a configuration (a directory's other TOML files are skipped)
CONFIG_TABLES = ("mma", "copy", "threadmap", "g2s", "s2g", "smem", "tma", "stages")


def not_a_configuration(path) -> str | None:
    """Why a TOML file found in a directory is not a configuration (None: it is one).

    A file that is not valid TOML, is empty, or has a top-level key a configuration
    has (or one close to it: a mistyped ``[mmma]``) counts as a configuration (its
    error is reported); a solve input (``[unknowns]``) or a file whose top-level
    keys are all foreign (``pyproject.toml``, ...) is not.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "pyproject.toml").write_text('[project]\\nname = "x"\\n')
    >>> not_a_configuration(d / "pyproject.toml")
    'no [mma], [copy.X] or [threadmap] table (top level: project)'
    """
    try:
        data = tomllib.loads(read_text(str(path)))
    except (SymlayoutError, tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None
    if "unknowns" in data:
        return "a solve input ([unknowns]): use 'symlayout solve'"
    ours = set(CONFIG_TABLES) | set(_TOP_KEYS)
    if not data or any(k in ours or difflib.get_close_matches(k, ours, n=1, cutoff=0.75) for k in data):
        return None
    return f"no [mma], [copy.X] or [threadmap] table (top level: {', '.join(sorted(data))})"


def find_config_files(paths, skipped: list | None = None) -> list[str]:
    """Expand files and directories (every ``*.toml`` below a directory, sorted).

    A file named explicitly is always returned; in a directory, TOML files that
    are not configurations (:func:`not_a_configuration`) are left out, and
    appended to ``skipped`` as ``(path, reason)`` when a list is given.  A
    directory without any ``*.toml`` below it, or a missing path, is an error.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp()); (d / "b").mkdir(); _ = (d / "b" / "x.toml").write_text("")
    >>> _ = (d / "a.toml").write_text(""); [pathlib.Path(p).name for p in find_config_files([d])]
    ['a.toml', 'x.toml']
    """
    out: list[str] = []
    for p in paths:
        p = str(p)
        if os.path.isdir(p):
            found = sorted(str(q) for q in Path(p).rglob("*.toml") if q.is_file())
            if not found:
                raise ConfigError(f"{p}: no *.toml configuration files in this directory")
            for q in found:
                why = not_a_configuration(q)
                if why is None:
                    out.append(q)
                elif skipped is not None:
                    skipped.append((q, why))
        elif os.path.exists(p):
            out.append(p)
        else:
            raise ConfigError(f"{p}: no such file or directory")
    return out


def load_configs(paths, errors: str = "raise", skipped: list | None = None):
    """Load every configuration named by ``paths`` (files and directories).

    ``errors="raise"`` (default): return ``list[Config]``, raising the first
    ConfigError.  ``errors="collect"``: return ``(configs, failures)`` where
    ``failures`` is a list of ``(path, message)`` for files that could not be
    read (the others still load).  ``skipped`` collects the TOML files of a
    directory that are not configurations (:func:`find_config_files`).

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "ok.toml").write_text('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n')
    >>> _ = (d / "bad.toml").write_text('[mma]\\n')
    >>> cfgs, bad = load_configs([d], errors="collect")
    >>> [c.name for c in cfgs], [m.split(": ", 1)[1] for _, m in bad]
    (['ok'], ["[mma]: missing required key 'atom'"])
    """
    if errors not in ("raise", "collect"):
        raise ValueError("errors must be 'raise' or 'collect'")
    if errors == "raise":
        return [load_config(p) for p in find_config_files(paths, skipped)]
    configs, failures = [], []
    files = []
    for p in paths:
        try:
            files.extend(find_config_files([p], skipped))
        except ConfigError as e:
            failures.append((str(p), str(e)))
    for f in files:
        try:
            configs.append(load_config(f))
        except ConfigError as e:
            failures.append((f, str(e)))
    return configs, failures
