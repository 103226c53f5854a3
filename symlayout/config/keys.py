"""The keys of a configuration file, described once: each table's keys with their type, whether they
are required, their default, range and meaning.

The loader's generic checks (unknown key, missing required key, wrong type, out of range) read this
description, and :mod:`symlayout.config.schema` turns it into the published JSON Schema
(``docs/config.schema.json``).  What one key cannot say alone (a layout's notation, an atom's name,
how two tables agree) stays in the section modules.

>>> COPY["smem"].required, COPY["align"].form, COPY["align"].default
(True, 'align', 128)
>>> MMA.names
('atom', 'layout', 'permutation', 'cluster')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: property names of the spec, in the spec's order
PROPERTIES = ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
              "type_agreement", "coalescing")
#: Version 2, Hopper: ``descriptor`` (GMMA shared-memory descriptors) and ``tma`` (TMA boxes)
PROPERTIES = PROPERTIES + ("descriptor", "tma")
# --- Version 3: TMEM (Blackwell Tensor Memory; the tables are at the end of this module) ---
PROPERTIES = PROPERTIES + ("tmem_alloc", "tmem_access")
# --- end Version 3: TMEM ---
#: issue 31: ``contributions`` (an atomic accumulation: every address receives every contribution once)
PROPERTIES = PROPERTIES + ("contributions",)

#: operands a ``[copy.X]`` table may name
OPERANDS = ("A", "B", "C")
#: the modes of each operand's tile, by name (``residue``)
OPERAND_MODES = {"A": ("M", "K"), "B": ("N", "K"), "C": ("M", "N")}

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
#: largest [stages] count
MAX_STAGES = 64
#: largest ``[tma.X] multicast``
MAX_MULTICAST = 16
#: largest ``[expect] max_bank_degree`` (a warp's 32 lanes on one bank)
MAX_BANK_DEGREE = 32

#: the TMA copy atoms of ``[tma.X] atom``
TMA_ATOMS = ("SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST")
#: issue 31: the TMA store of ``[tma.C]`` (the epilogue's subtiles, smem -> gmem)
TMA_STORE_ATOMS = ("SM90_TMA_STORE",)

# CUTLASS thread-map kinds and the keys each takes (required, optional); type/align always optional
TM_PLAIN = ("PitchLinearStripminedThreadMap", "PitchLinearTilePolicyStripminedThreadContiguous",
            "PitchLinearTilePolicyStripminedThreadStrided")
TM_WARP = ("PitchLinearWarpRakedThreadMap", "PitchLinearStridedWarpRakedThreadMap",
           "PitchLinearWarpStripedThreadMap")
TM_WRAPPERS = ("TransposePitchLinearThreadMap", "TransposePitchLinearThreadMapSimt",
               "TransposePitchLinearThreadMap2DThreadTile")
TM_KIND_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    **{k: (("shape", "threads"), ("elements_per_access",)) for k in TM_PLAIN},
    **{k: (("shape", "threads", "warp_arrangement"), ("elements_per_access",)) for k in TM_WARP},
    "PitchLinear2DThreadTileStripminedThreadMap": (("shape", "threads"), ("thread_tile_shape",)),
    "TransposePitchLinearThreadMap": (("base", "warp_arrangement"), ()),
    "TransposePitchLinearThreadMapSimt": (("base",), ()),
    "TransposePitchLinearThreadMap2DThreadTile": (("base",), ()),
    "offset": (("threads", "offset", "extent"), ("iterations", "elements_per_access")),
}


@dataclass(frozen=True)
class Key:
    """One key of a table.

    ``form`` is how its value is read: ``string``; ``integer``; ``number`` (a positive integer or float);
    ``boolean``; ``align`` (a power of two of bytes, at most :data:`MAX_ALIGN`); ``pair`` (``[contiguous,
    strided]``, positive integers); ``strings`` (an array of strings); ``extents`` (an array of strings or
    integers); ``count`` (an integer or a ``[params]`` name); ``iterations`` (an integer or a pair);
    ``table`` (a table described elsewhere: a section, or ``[threadmap.base]``).  ``minimum`` and
    ``maximum`` bound a number or every entry of a pair.
    """
    name: str
    form: str
    doc: str
    required: bool = False
    default: Any = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    max_length: int = MAX_STRING
    enum: tuple | None = None
    min_items: int | None = None
    max_items: int | None = None
    #: a regular expression every string (or every entry of ``strings``) matches
    pattern: str | None = None


@dataclass(frozen=True)
class Table:
    """A table's keys (``operands``: the ``[name.X]`` sub-tables it comes in, one per operand)."""
    name: str
    doc: str
    keys: tuple
    operands: tuple = ()

    @property
    def names(self) -> tuple:
        return tuple(k.name for k in self.keys)

    def __getitem__(self, name: str) -> Key:
        return next(k for k in self.keys if k.name == name)


def _atom(doc):
    return Key("atom", "string", doc, required=True, max_length=200)


def _type(doc="the value type of Copy_Atom<atom, type> (half_t, bfloat16_t, float, uint8_t, ...)", required=True):
    return Key("type", "string", doc, required=required, max_length=100)


_ELEMENT = Key("element", "string", "version 2.1: the element type the operand's tensors hold (default: type); the "
                                    "same on every table of the operand", max_length=100)
_SMEM_ALIGN = Key("align", "align", "byte alignment of the smem tile's base address", default=128)
_TILED = (Key("thr", "string", "version 2: make_tiled_copy(atom, thr, val): the thread layout"),
          Key("val", "string", "version 2: make_tiled_copy(atom, thr, val): the value layout"),
          Key("tv", "string", "version 2: make_tiled_copy_impl(atom, tv, tiler): the (thread,value) layout"),
          Key("tiler", "string", "version 2: make_tiled_copy_impl(atom, tv, tiler): the tile, e.g. \"(64,16)\""))

MMA = Table("mma", "the TiledMMA make_tiled_mma(atom, layout, permutation)", (
    _atom("the MMA atom, e.g. SM80_16x8x16_F16F16F16F16_TN"),
    Key("layout", "string", "AtomLayoutMNK: an IntTuple \"(2,2,1)\" or a layout \"(2,2,1):(1,2,0)\"",
        default="(1,1,1)"),
    Key("permutation", "extents", "PermutationMNK: 1 to 3 entries, each an extent (\"32\"), a layout or \"_\"",
        min_items=1, max_items=3),
))

COPY = Table("copy", "make_tiled_copy_X(Copy_Atom<atom, type>, mma) over an smem tile: A and B load shared memory "
                     "into registers, C stores the accumulator", (
    _atom("the copy atom, e.g. SM75_U32x4_LDSM_N"),
    _type(),
    Key("smem", "string", "the smem tile in elements, CuTe notation: (M,K) for A, (N,K) for B, (M,N) for C "
                          "(or (M,K,PIPE) with stages)", required=True),
    _SMEM_ALIGN,
    Key("convert", "boolean", "[copy.C] only: convert_type<type>(accumulator) before the copy", default=False),
    *_TILED,
    _ELEMENT,
), OPERANDS)

_GLOBAL_KEYS = (
    _atom("the copy atom, e.g. SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"),
    _type(),
    Key("smem", "string", "the smem tile (default: the [copy.X] table's)"),
    Key("align", "align", "byte alignment of the smem tile's base address (default: the [copy.X] table's when "
                          "smem is not given here, else 128)", default=128),
    *_TILED,
    Key("gmem", "string", "the gmem tile, a layout of the smem tile's shape; strides may be [params] symbols",
        required=True),
    Key("gmem_align", "align", "byte alignment of the gmem tile's first element (default: one element)"),
    Key("residue", "strings", "the modes (M, N, K) along which the problem may cut the tile (the copy is then "
                              "predicated)", enum=("M", "N", "K")),
    _ELEMENT,
    Key("predicate", "strings", "issue 31: the modes the kernel's predicate tests (default: every residue mode); a "
                                "residue mode left out is not predicated", enum=("M", "N", "K")),
)
G2S = Table("g2s", "version 2: a TiledCopy from global to shared memory", _GLOBAL_KEYS, ("A", "B"))
S2G = Table("s2g", "version 2: the TiledCopy of C from shared to global memory", _GLOBAL_KEYS, ("C",))

STAGES = Table("stages", "version 2: the pipeline depth of the A/B smem buffers", (
    Key("count", "count", "the number of stages, or the name of a [params] symbol (a family of stage counts)",
        required=True, minimum=1, maximum=MAX_STAGES, pattern=r"^(\s*[0-9]+\s*|[A-Za-z][A-Za-z0-9_]*)$"),
    Key("barrier_bytes", "integer", "extension: bytes of the mainloop pipeline's barriers per stage, held in the same "
                                    "shared memory (CUTLASS's block-scaled builders count 16: a full and an empty "
                                    "mbarrier); counted by in_bounds[stages.X]", default=0, minimum=0, maximum=4096),
))

SMEM = Table("smem", "version 2 (Hopper): the smem tile a GMMA atom reads an operand from through descriptors", (
    _type("the element type of the tile"),
    Key("layout", "string", "'Sw<B,M,S> o smem_ptr[Nb](unset) o L' or a layout; (MN,K) or (MN,K,PIPE)",
        required=True),
    _SMEM_ALIGN,
    _ELEMENT,
), ("A", "B"))

TMA = Table("tma", "version 2 (Hopper): make_tma_copy(atom, gmem, smem layout of one stage, box, multicast)", (
    Key("atom", "string", "the TMA atom ([tma.C]: SM90_TMA_STORE, issue 31)", default="SM90_TMA_LOAD", max_length=100,
        enum=TMA_ATOMS + TMA_STORE_ATOMS),
    Key("multicast", "integer", "CTAs receiving each box (needs SM90_TMA_LOAD_MULTICAST when > 1)", default=1,
        minimum=1, maximum=MAX_MULTICAST),
    Key("gmem", "string", "the global tensor's layout 'shape:stride' (symbols allowed)", required=True),
    Key("box", "string", "the CTA tile, a tuple of positive integers like \"(128,64)\"", required=True),
    Key("swizzle", "string", "a hand-encoded TMA swizzle 'Sw<B,M,S>' (default: the [smem.X] layout's)"),
    _ELEMENT,
    Key("residue", "strings", "issue 31: the modes the problem may cut (A: M,K; B: N,K; C: M,N); each needs a "
                              "[params] symbol of that name, the problem's extent, which TMA's bounds check uses",
        enum=("M", "N", "K")),
), ("A", "B", "C"))

# --- Version 3 (Blackwell, issue 28): [mma] cluster, [smem.X] desc, the SM100 TMA atoms, cta_pair --------
#: Version 3 properties of the MMA side (UMMA descriptors, CTA pairs)
PROPERTIES = PROPERTIES + ("cta_pair",)
#: the SM100 TMA atoms (``SM100_TMA_2SM_LOAD*``: the pair's box, each peer loads its half)
TMA_ATOMS_SM100 = ("SM100_TMA_2SM_LOAD", "SM100_TMA_2SM_LOAD_MULTICAST")
TMA_ATOMS = TMA_ATOMS + TMA_ATOMS_SM100
#: largest cluster (CTAs; CUDA's non-portable cluster size)
MAX_CLUSTER = 16
MMA = Table(MMA.name, MMA.doc, tuple(
    Key("atom", "string", "the MMA atom, e.g. SM80_16x8x16_F16F16F16F16_TN, or an SM100 UMMA atom (its template-id "
                          "or CuTe's MMA_Traits<...> spelling)", required=True, max_length=400)
    if k.name == "atom" else k for k in MMA.keys) + (
    Key("cluster", "string", "version 3 (SM100): the cluster shape \"(x,y,z)\"; the CTA pair's peer mode is "
                             "tiled_divide(cluster, AtomThrID)", default="(1,1,1)", max_length=100),
))
SMEM = Table(SMEM.name, "the smem tile an SM90 GMMA or SM100 UMMA atom reads an operand from through descriptors "
                        "(SM100: one CTA's buffer as UMMA::tile_to_mma_shape prints it)", SMEM.keys + (
    Key("desc", "string", "version 3 (SM100): a 64-bit UMMA descriptor encoded by hand, \"0x...\", checked instead "
                          "of the one make_umma_desc builds", max_length=100, pattern=r"^\s*(0[xX][0-9a-fA-F]{1,16}|[0-9]{1,20})\s*$"),
), SMEM.operands)
TMA = Table(TMA.name, TMA.doc, tuple(
    Key("atom", "string", "the TMA atom (SM100: SM100_TMA_2SM_LOAD[_MULTICAST] load the pair's box)",
        default="SM90_TMA_LOAD", max_length=100, enum=TMA_ATOMS) if k.name == "atom" else
    Key("multicast", "integer", "CTAs receiving each box (needs a _MULTICAST atom when > 1)", default=1, minimum=1,
        maximum=MAX_MULTICAST) if k.name == "multicast" else k for k in TMA.keys), TMA.operands)
# --- end of Version 3 ----------------------------------------------------------------------------------------

# --- Version 3, block-scaled formats (issue 29): [sf.A] / [sf.B], properties sf and sf_kind -------------------
PROPERTIES = PROPERTIES + ("sf", "sf_kind")
#: where the MMA reads the scale factors from
SF_PLACEMENTS = ("tmem", "registers")
SF = Table("sf", "version 3: the block-scale factors of an operand (Sm1xxBlockScaledConfig<vec>)", (
    _type("the factor type: float_ue4m3_t or float_ue8m0_t"),
    Key("vec", "integer", "data elements (along K) per scale factor", required=True, minimum=1, maximum=1024),
    Key("smem", "string", "one CTA's staged factor buffer in shared memory as the collective prints SmemLayoutSF "
                          "(deduce_smem_layoutSFA/SFB with a stage mode); required with placement = \"tmem\""),
    Key("placement", "string", "tcgen05.cp into TMEM (SM100) or registers (SM120 mma.sync)", default="tmem",
        enum=SF_PLACEMENTS),
    Key("tmem_column", "integer", "the TMEM column the factors are copied to", minimum=0, maximum=1023),
    Key("gmem", "string", "extension: the layout over the data's (MN, K, L) coordinates the factor buffer in global "
                          "memory was written with (checked against tile_atom_to_shape_SFA/SFB)"),
    Key("registers", "string", "placement = \"registers\" (SM120): the factors' per-thread fragment of one atom, a TV "
                               "layout (T32,V) -> (MN,K) as CuTe's SFALayout/SFBLayout (register byte of value v: "
                               "v / vec); default the atom's"),
    Key("thread_id", "integer", "placement = \"registers\": the mma.sync thread-id-a/b selector (CuTe issues 0)",
        default=0, minimum=0, maximum=3),
    Key("byte_id", "integer", "placement = \"registers\": the mma.sync byte-id-a/b selector (CuTe issues 0)",
        default=0, minimum=0, maximum=3),
), ("A", "B"))
# --- end of Version 3, block-scaled formats --------------------------------------------------------------------

PARAM = Table("params", "an integer symbol: min <= value <= max, a multiple of multiple_of", (
    Key("min", "integer", "smallest value", default=1, minimum=1, maximum=MAX_PARAM),
    Key("max", "integer", "largest value", required=True, minimum=1, maximum=MAX_PARAM),
    Key("multiple_of", "integer", "every value is a multiple of this", default=1, minimum=1, maximum=MAX_PARAM),
))

PROVE = Table("prove", "which properties to prove and the per-property timeout", (
    Key("properties", "strings", "the properties to prove (default: every one that applies)", enum=PROPERTIES,
        min_items=1),
    Key("timeout_s", "number", "seconds per property (a timeout is UNKNOWN), positive", default=10.0,
        maximum=MAX_TIMEOUT_S),
))

EXPECT = Table("expect", "results that must come out REFUTED (all others PROVED)", (
    Key("refuted", "strings", "property names (every operand) or \"property[operand]\", e.g. \"bank_conflicts[A]\"",
        pattern=rf"^\s*({'|'.join(PROPERTIES)})\s*(\[\s*[A-Za-z0-9_.]+\s*\])?\s*$"),
    Key("max_bank_degree", "integer", "bank_conflicts counts as proved up to this many ways", minimum=1,
        maximum=MAX_BANK_DEGREE),
))

# --- issue 31 (kernelrest): the rest of the kernel ---------------------------------------------------
REUSE = Table("reuse", "issue 31: the accumulator of [mma] converted and re-viewed as the A operand of a second "
                       "TiledMMA in registers (flash-attention's P)", (
    Key("from", "string", "the operand of [mma] reused: \"C\" (its accumulator)", required=True, enum=("C",)),
    Key("tile", "string", "the accumulator tile (M,N) given to partition_fragment_C, e.g. \"(64,128)\"",
        required=True),
    Key("convert", "string", "convert_type<convert>(accumulator) before the re-view (default: kept)", max_length=100),
    Key("view", "string", "the register re-view: \"acc_Aregs\" (flash-attention's convert_layout_acc_Aregs), "
                          "\"none\", or a layout (A fragment coordinate -> register)", default="acc_Aregs"),
    Key("mma", "string", "the second TiledMMA's atom (default: [mma]'s)", max_length=200),
    Key("layout", "string", "the second TiledMMA's AtomLayoutMNK (default: [mma]'s)"),
    Key("permutation", "extents", "the second TiledMMA's PermutationMNK (default: [mma]'s)", min_items=1,
        max_items=3),
))
REGCOPY = Table("g2r", "issue 31: a TiledCopy between global memory and registers, no MMA needed (copy-only "
                       "kernels): [g2r.X] loads the tensor X, [r2g.X] stores it", (
    _atom("the copy atom, e.g. UniversalCopy<uint128_t> or AutoVectorizingCopy"),
    _type(),
    *_TILED,
    Key("gmem", "string", "the gmem tile (M,N), a layout; strides may be [params] symbols", required=True),
    Key("gmem_align", "align", "byte alignment of the gmem tile's first element (default: one element)"),
    Key("residue", "strings", "the modes (M, N) along which the problem may cut the tile (the copy is then "
                              "predicated)", enum=("M", "N")),
    _ELEMENT,
    Key("predicate", "strings", "the modes the kernel's predicate tests (default: every residue mode); a residue "
                                "mode left out is not predicated", enum=("M", "N")),
    Key("reduce", "string", "[r2g.X] only: \"add\", each value added atomically (atomicAdd / red.add) instead of "
                            "stored", enum=("add",)),
    Key("contributors", "count", "with reduce: the CTAs adding into the same tile (an integer or a [params] name), "
                                 "default 1", minimum=1, maximum=1 << 20, pattern=r"^(\s*[0-9]+\s*|[A-Za-z][A-Za-z0-9_]*)$"),
    Key("fragment", "string", "with reduce: \"C\", the registers are [mma]'s accumulator, value i added at the "
                              "copy's value i (size(acc) == size(partition) as a static_assert)", enum=("C",)),
))
R2G = Table("r2g", REGCOPY.doc, REGCOPY.keys)
EPILOGUE = Table("epilogue", "issue 31: the C tile stored subtile by subtile (CUTLASS 3's EpilogueTile): [copy.C] "
                             "describes one subtile, [tma.C] its TMA store", (
    Key("tile", "string", "the subtile (M,N), e.g. \"(128,32)\"; [copy.C] smem is one subtile's buffer", required=True),
    Key("cta_tile", "string", "the C tile (M,N) the subtiles cover (default: the TiledMMA's C tile)"),
))
# --- end issue 31 -------------------------------------------------------------------------------------

THREADMAP = Table("threadmap", "a CUTLASS 2.x thread map, or a custom offset formula (kind = \"offset\")", (
    Key("kind", "string", "the thread map", required=True, max_length=200, enum=tuple(TM_KIND_KEYS)),
    Key("shape", "pair", "the tile [contiguous, strided]", maximum=MAX_EXTENT),
    Key("threads", "integer", "number of threads", minimum=1, maximum=MAX_THREADS),
    Key("elements_per_access", "integer", "elements per vector access", minimum=1, maximum=1024),
    Key("warp_arrangement", "pair", "warps [contiguous, strided]", maximum=MAX_THREADS),
    Key("thread_tile_shape", "pair", "each thread's tile [contiguous, strided] (default [4, 4])", maximum=1024),
    Key("iterations", "iterations", "iterations of the offset formula: an integer or a pair", minimum=1,
        maximum=1 << 16),
    Key("offset", "string", "the element offset of access i of thread t, a formula in t and i"),
    Key("extent", "integer", "number of elements of the tile", minimum=1, maximum=1 << 31),
    _type("the element type", required=False),
    Key("align", "align", "byte alignment of the tile's base address"),
    Key("base", "table", "the wrapped thread map of a Transpose* kind"),
))

TOP = Table("", "a configuration file", (
    Key("name", "string", "the configuration's name (default: the file's stem)", max_length=500),
    Key("mma", "table", MMA.doc), Key("copy", "table", COPY.doc), Key("g2s", "table", G2S.doc),
    Key("s2g", "table", S2G.doc), Key("stages", "table", STAGES.doc), Key("threadmap", "table", THREADMAP.doc),
    Key("params", "table", "integer symbols with ranges, used in layouts"), Key("prove", "table", PROVE.doc),
    Key("expect", "table", EXPECT.doc), Key("smem", "table", SMEM.doc), Key("tma", "table", TMA.doc),
    Key("sf", "table", SF.doc),
    Key("reuse", "table", REUSE.doc),                                   # issue 31
    Key("g2r", "table", REGCOPY.doc), Key("r2g", "table", REGCOPY.doc),  # issue 31
    Key("epilogue", "table", EPILOGUE.doc),                             # issue 31
))

#: every table below the top level, by name
TABLES = {t.name: t for t in (MMA, COPY, G2S, S2G, STAGES, SMEM, TMA, PARAM, PROVE, EXPECT, THREADMAP, SF,
                              REUSE, REGCOPY, R2G, EPILOGUE)}

# --- Version 3: TMEM ([tmem], [tmem_copy.C]; config/tmem.py) ---
#: largest column a [tmem] value may name (the 16-bit column field of a TMEM address)
TMEM_MAX_COLUMNS = 1 << 16

TMEM = Table("tmem", "version 3 (Blackwell): the Tensor Memory the CTA allocates (tcgen05.alloc) and what lives "
                     "in it", (
    Key("columns", "integer", "tcgen05.alloc nCols (legal: a power of two in [32, 512]; property tmem_alloc)",
        required=True, minimum=1, maximum=TMEM_MAX_COLUMNS),
    Key("accumulator_stages", "integer", "partition_fragment_C(mma, (M,N,stages)): the accumulator's stages",
        default=1, minimum=1, maximum=MAX_STAGES),
    Key("accumulator_column", "integer", "the TMEM column of the first accumulator stage", default=0, minimum=0,
        maximum=TMEM_MAX_COLUMNS - 1),
    Key("regions", "regions", "live regions placed by hand: { NAME = [first column, columns], ... }"),
    Key("accumulator_regions", "names", "symlayout extension: the regions holding the accumulator's stages, one "
                                        "per stage (e.g. [\"S0\", \"S1\"]); a stage may share cells with its own "
                                        "region only"),
    Key("aliases", "aliases", "symlayout extension: { REGION = \"REGION\" }: the first region overlays the second "
                              "on purpose (FMHA's P written over S); other overlaps are refuted"),
    Key("arch", "string", "symlayout extension: the architecture whose TMEM capacity applies", default="sm_100",
        max_length=20),
    Key("a_region", "string", "symlayout extension: the region whose first column is the TMEM address of A of a TS "
                              "atom (FMHA's P, e.g. \"P0\"); A must lie inside it", max_length=64),
))

TMEM_COPY = Table("tmem_copy", "version 3 (Blackwell): make_tmem_copy(atom, tile of the accumulator), tcgen05.ld/st "
                               "of the accumulator and registers", (
    _atom("the tcgen05.ld/st atom, SM100_TMEM_LOAD_* or SM100_TMEM_STORE_*"),
    Key("tile", "string", "the accumulator subtile the copy is made for, \"(M,N)\" (default: the whole MMA tile)"),
    Key("warps", "warps", "the hardware warps that run slices 0-31, 32-63, 64-95, 96-127", default=(0, 1, 2, 3)),
), ("C",))

TOP = Table(TOP.name, TOP.doc, TOP.keys + (Key("tmem", "table", TMEM.doc), Key("tmem_copy", "table", TMEM_COPY.doc)))
TABLES = {**TABLES, "tmem": TMEM, "tmem_copy": TMEM_COPY}
# --- end Version 3: TMEM ---
