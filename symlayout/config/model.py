"""The validated configuration: frozen dataclasses, one per table, and :class:`Config` holding them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..atoms.narrow_matrix import source_bits
from ..atoms.types import smem_slot_bits, value_type_bits
from ..errors import ConfigError
from .keys import TM_PLAIN, TM_WARP, TM_WRAPPERS
from .lines import KeyLines


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
        # lazy: `import symlayout` imports this module but no algebra (start-up: see config/__init__)
        from ..algebra.symbolic import symbols
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
    # --- Version 3 (SM100) ---
    #: the cluster shape ``(x, y, z)`` (``[mma] cluster``)
    cluster: tuple = (1, 1, 1)
    #: CuTe's static_assert messages for an SM100 atom it does not compile (refuted by the prover, never PROVED)
    cute_rejections: tuple = ()

    @property
    def is_sm100(self) -> bool:
        """An SM100 UMMA (``tcgen05.mma``) atom: the configuration is proved by ``prove/blackwell``."""
        return self.atom.replace("cute::", "").lstrip().startswith("SM100_MMA_")
    # --- end of Version 3 ---

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

    @property
    def route_type(self) -> str:
        """The type the copy's route is built over: ``element_type``, except for fp4/fp6 in the padded
        source format (container storage, or a widening ``ldmatrix``), which CuTe addresses one byte per
        element: then the atom's ``type`` (``uint8_t``; prove/copy/widening.py checks the bits)."""
        e = self.element_type
        padded = source_bits(self.atom) is not None or smem_slot_bits(e) != value_type_bits(e)
        return self.type if padded else e


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
        # lazy: `import symlayout` imports this module but not the tiled layer (start-up: see config/__init__)
        from ..tiled.copy import make_tiled_copy, make_tiled_copy_impl
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
    predicate: tuple | None = None  # issue 31: the modes the kernel's predicate tests (None: every residue mode)
    reduce: str = ""              # issue 31, [r2g.X]: "add" (atomic accumulation)
    contributors: Any = 1         # issue 31: CTAs adding into the tile (int or a [params] name)
    fragment: str = ""            # issue 31: "C": the values are [mma]'s accumulator fragment

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
    desc: int | None = None       # version 3 (SM100): a hand-encoded 64-bit UMMA descriptor

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
    residue: tuple = ()           # issue 31: the modes the problem may cut (TMA's bounds check: zeros / dropped)


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
        # lazy: `import symlayout` imports this module but not the thread maps (start-up: see config/__init__)
        from ..threadmap.maps import make_thread_map
        k = self.kind
        epa = self.elements_per_access if self.elements_per_access is not None else 1
        if k in TM_PLAIN:
            return make_thread_map(k, self.shape, self.threads, epa)
        if k in TM_WARP:
            return make_thread_map(k, self.shape, self.threads, self.warp_arrangement, epa)
        if k == "PitchLinear2DThreadTileStripminedThreadMap":
            return make_thread_map(k, self.shape, self.threads, self.thread_tile_shape or (4, 4))
        if k == "TransposePitchLinearThreadMap":
            return make_thread_map(k, self.base.build(), self.warp_arrangement)
        if k in TM_WRAPPERS:
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
class SfConfig:
    """``[sf.X]`` (Version 3, block-scaled formats): the scale factors of operand X."""
    operand: str
    type: str
    vec: int
    smem: Any                     # Layout: one CTA's staged factor buffer (bytes: one factor each)
    raw_smem: str
    placement: str = "tmem"
    tmem_column: int | None = None
    gmem: Any = None              # Layout over the data's (MN, K, L) coordinates, or None
    raw_gmem: str | None = None
    line: int = 0
    registers: Any = None         # placement = "registers" (SM120): TV layout (T32,V) -> (MN,K) of one atom, or None
    raw_registers: str | None = None
    thread_id: int = 0            # mma.sync's thread-id-a/b and byte-id-a/b selectors
    byte_id: int = 0


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
    #: ``[stages] barrier_bytes``: the pipeline's barrier bytes per stage (None: the configuration states none)
    stage_barrier_bytes: int | None = field(default=None, compare=False)
    lines: KeyLines | None = field(default=None, repr=False, compare=False)
    smem: dict = field(default_factory=dict)          # [smem.A|B] -> SmemConfig (Version 2, Hopper)
    tma: dict = field(default_factory=dict)           # [tma.A|B] -> TmaConfig
    tmem: Any = None                                  # Version 3: [tmem] -> config.tmem.TmemConfig
    tmem_copies: dict = field(default_factory=dict)   # Version 3: [tmem_copy.C] -> config.tmem.TmemCopyConfig
    sf: dict = field(default_factory=dict)            # [sf.A|B] -> SfConfig (Version 3, block-scaled)
    # --- issue 31 (kernelrest): the rest of the kernel
    reuse: dict = field(default_factory=dict, compare=False)   # [reuse.X] -> config.reuse.ReuseConfig
    regcopies: dict = field(default_factory=dict, compare=False)   # "g2r.X" / "r2g.X" -> GlobalCopyConfig
    epilogue: Any = field(default=None, compare=False)            # [epilogue] -> config.epilogue.EpilogueConfig

    @property
    def kernel_tables(self) -> bool:
        """Whether the configuration has tables of issue 31 (``[reuse.X]``, ``[g2r.X]``, ``[r2g.X]``,
        ``[epilogue]``)."""
        return bool(self.reuse or self.regcopies or self.epilogue is not None
                    or any(t.residue for t in self.tma.values()) or (self.mma is None and (self.g2s or self.s2g)))

    @property
    def kind(self) -> str:
        """``"mma"`` (a TiledMMA with copies), ``"threadmap"``, ``"copies"`` (copy-only: issue 31) or ``"empty"``."""
        if self.mma is not None:
            return "mma"
        if self.regcopies or self.g2s or self.s2g:
            return "copies"
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
