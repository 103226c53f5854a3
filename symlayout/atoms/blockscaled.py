"""Block-scaled formats on SM100: the ``tcgen05.mma`` kinds that read scale factors, CuTe's
block-scaled UMMA atoms (``SM100_MMA_MXF8F6F4[_2x1SM]_SS``, ``SM100_MMA_MXF4[_2x1SM]_SS``) with
their ``static_assert``-s and block-scaled instruction descriptor, and the scale-factor layouts of
CUTLASS's ``Sm1xxBlockScaledConfig<SFVecSize>`` (``cutlass/detail/sm100_blockscaled_layout.hpp``).

A scale factor multiplies ``vec`` consecutive K elements of one row of A (one column of B): the
factor of data element ``(mn, k)`` is ``SF(mn, k)``, a layout over the data's own coordinates whose
K mode has stride 0 across the ``vec`` elements of a block.  CUTLASS stores the factors in
"128x4" blocks: 128 rows by 4 K-blocks, 512 bytes, row ``r`` of the block at byte
``16*(r%32) + 4*(r/32)``, K-block ``j`` at ``+j`` (the ``SfAtom``), so that one 32-bit TMEM word holds
the four factors of one row.

The kinds (PTX ISA, ``tcgen05.mma`` "block scaling": ``.kind::mxf8f6f4`` with ``.block32``
(``.scale_vec::1X``), ``.kind::mxf4`` with ``.block32`` (``.scale_vec::2X``), ``.kind::mxf4nvf4``
with ``.block32`` or ``.block16`` (``.scale_vec::4X``)) and the factor type each block size takes:

>>> sorted(KINDS["mxf4nvf4"].factors)
[('float_ue4m3_t', 16), ('float_ue8m0_t', 16), ('float_ue8m0_t', 32)]
>>> op = parse_blockscaled_name("SM100_MMA_MXF4_SS<float_e2m1_t,float_e2m1_t,float,float_ue4m3_t,128,256,16,UMMA::Major::K,UMMA::Major::K>")
>>> op.kind, op.vec, op.shape_mnk, hex(instr_desc_block_scaled(op))
('mxf4nvf4', 16, (128, 256, 64), '0x8400480')
>>> print(sf_atom(16)), print(tile_atom_to_shape_sf(16, 256, 512))
((32,4),(16,4)):((16,4),(0,1))
(((32,4),2),((16,4),8),(1,1)):(((16,4),4096),((0,1),512),(0,0))
(None, None)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from ..algebra.layout import Layout, filter_zeros, tile_to_shape, tiled_product
from ..algebra.int_tuple import flatten, product
from ..errors import AtomError, CuteStaticAssert
from .mma import MMAAtom
from .types import Registers, canonical_type, value_type_bits, value_type_info


class Kind(NamedTuple):
    """A block-scaled ``tcgen05.mma`` kind: the data element types it reads (PTX names), how
    sub-byte data lies in shared memory (``"container"``: 16 elements in each 16-byte chunk,
    PTX ``.b4x16_p64`` / ``.b6x16_p32``; ``"packed"``: two fp4 per byte), and the (factor type,
    vector size) pairs its block sizes take."""
    data: tuple
    storage: str
    factors: frozenset


#: PTX ISA, tcgen05.mma "Block Scaling" (the kinds, their block sizes and scale types)
KINDS = {
    "mxf8f6f4": Kind(("e4m3", "e5m2", "e2m3", "e3m2", "e2m1"), "container",
                     frozenset({("float_ue8m0_t", 32)})),
    "mxf4": Kind(("e2m1",), "packed", frozenset({("float_ue8m0_t", 32)})),
    "mxf4nvf4": Kind(("e2m1",), "packed",
                     frozenset({("float_ue8m0_t", 32), ("float_ue8m0_t", 16), ("float_ue4m3_t", 16)})),
}

#: ``UMMA::to_UMMAFormat<T>`` (all its types) (``mma_sm100_desc.hpp``); the packed
#: ``float_e2m1_t`` is ``MXF4Format::E2M1`` = 1, which a kind::mxf8f6f4 descriptor reads as E5M2
UMMA_FORMATS = {"half_t": 0, "bfloat16_t": 1, "tfloat32_t": 2, "uint8_t": 0, "int8_t": 1, "float_e4m3_t": 0,
                "float_e5m2_t": 1, "float_e2m3_unpacksmem_t": 3, "float_e3m2_unpacksmem_t": 4,
                "float_e2m3_t": 3, "float_e3m2_t": 4, "float_e2m1_unpacksmem_t": 5, "float_e2m1_t": 1}
#: the formats of the instruction descriptor's a/b fields, by kind (PTX ISA, "Instruction descriptor")
KIND_FORMATS = {"mxf8f6f4": {0: "e4m3", 1: "e5m2", 3: "e2m3", 4: "e3m2", 5: "e2m1"},
                "mxf4": {1: "e2m1"}, "mxf4nvf4": {1: "e2m1"}}
#: ``UMMA::to_ScaleFormat<T>``
SCALE_FORMATS = {"float_ue4m3_t": 0, "float_ue8m0_t": 1}

_NAME_RE = re.compile(r"^\s*(?:cute::)?SM100_MMA_(MXF8F6F4|MXF4)(_2x1SM)?_SS\s*<(.*)>\s*$")


class BlockScaledAtomError(AtomError):
    """Not a block-scaled SM100 UMMA atom name this module models."""


@dataclass(frozen=True)
class BlockScaledOp:
    """``SM100_MMA_MXF8F6F4[_2x1SM]_SS<a,b,c,sf,M,N,a_major,b_major>`` or
    ``SM100_MMA_MXF4[_2x1SM]_SS<a,b,c,sf,M,N,VS,a_major,b_major>``."""
    family: str             # "MXF8F6F4" or "MXF4"
    cta_group: int
    a_type: str
    b_type: str
    c_type: str
    sf_type: str
    m: int
    n: int
    vs: int                 # SFVecSize: 32 for MXF8F6F4, the VS argument for MXF4
    a_major: str
    b_major: str

    #: A is read from shared memory (the block-scaled atoms CuTe has are all SS)
    a_source = "smem"

    @property
    def tag(self) -> str:
        return f"SM100_MMA_{self.family}" + ("_2x1SM" if self.cta_group == 2 else "") + "_SS"

    @property
    def name(self) -> str:
        vs = f",{self.vs}" if self.family == "MXF4" else ""
        return (f"{self.tag}<{self.a_type},{self.b_type},{self.c_type},{self.sf_type},{self.m},{self.n}{vs},"
                f"UMMA::Major::{self.a_major},UMMA::Major::{self.b_major}>")

    @property
    def kind(self) -> str:
        """The ``tcgen05.mma`` kind CuTe's ``fma`` issues (MXF4: VS 16 -> mxf4nvf4 ``.block16``)."""
        if self.family == "MXF8F6F4":
            return "mxf8f6f4"
        return "mxf4nvf4" if self.vs == 16 else "mxf4"

    @property
    def vec(self) -> int:
        """``MMA_Traits::SFVecSize``."""
        return self.vs

    @property
    def k(self) -> int:
        """``MMA_Traits::K``: 256 bits of 8-bit containers (32) or of packed fp4 (64)."""
        return 32 if self.family == "MXF8F6F4" else 64

    @property
    def shape_mnk(self) -> tuple:
        return (self.m, self.n, self.k)


def parse_major(text: str, name: str, error=None) -> str:
    """``UMMA::Major::K|MN`` of an atom's template argument (``error``: the atom family's error class)."""
    m = text.strip().replace("cute::", "").replace("UMMA::Major::", "").replace("Major::", "")
    if m not in ("K", "MN"):
        raise (error or BlockScaledAtomError)(f"{name}: a major must be UMMA::Major::K or UMMA::Major::MN, "
                                              f"got {text.strip()!r}")
    return m


def parse_int(text: str, what: str, name: str, error=None) -> int:
    """An integer template argument of an atom (``error``: the atom family's error class)."""
    if not re.fullmatch(r"-?\d+", text.strip()):
        raise (error or BlockScaledAtomError)(f"{name}: {what} must be an integer, got {text.strip()!r}")
    return int(text.strip())


def is_blockscaled_name(name: str) -> bool:
    """Whether ``name`` spells a block-scaled SM100 atom (parsed or not)."""
    return isinstance(name, str) and _NAME_RE.match(name) is not None


def parse_blockscaled_name(name: str) -> BlockScaledOp:
    """The :class:`BlockScaledOp` of a CuTe spelling (types canonicalized; trailing ScaleIn
    arguments accepted).

    >>> parse_blockscaled_name("SM100_MMA_MXF8F6F4_2x1SM_SS<float_e4m3_t,float_e4m3_t,float,float_ue8m0_t,256,128,UMMA::Major::K,UMMA::Major::MN>").vec
    32
    """
    m = _NAME_RE.match(name) if isinstance(name, str) else None
    if not m:
        raise BlockScaledAtomError("not a block-scaled SM100 UMMA atom name (SM100_MMA_MXF8F6F4[_2x1SM]_SS<a,b,c,sf,"
                                   "M,N,a_major,b_major> or SM100_MMA_MXF4[_2x1SM]_SS<a,b,c,sf,M,N,VS,a_major,"
                                   f"b_major>): {name!r}")
    fam = m.group(1)
    args = [a.strip() for a in m.group(3).split(",")]
    need = 8 if fam == "MXF8F6F4" else 9
    if len(args) < need:
        raise BlockScaledAtomError(f"{name}: expected {need} template arguments, got {len(args)}")
    try:
        types = [canonical_type(a) for a in args[:4]]
    except AtomError as e:
        raise BlockScaledAtomError(f"{name}: {e}") from None
    vs = 32 if fam == "MXF8F6F4" else parse_int(args[6], "VS", name)
    j = 6 if fam == "MXF8F6F4" else 7
    return BlockScaledOp(fam, 2 if m.group(2) else 1, *types, parse_int(args[4], "M", name),
                         parse_int(args[5], "N", name), vs,
                         parse_major(args[j], name), parse_major(args[j + 1], name))


# ---------------------------------------------------------------------------- CuTe's static_asserts


def _arch_asserts(op: BlockScaledOp) -> list:
    """``mma_sm100_umma.hpp``: the operation struct's M / N / VS asserts."""
    t, m, n = op.tag, op.m, op.n
    pair = op.cta_group == 2
    out = []
    if op.family == "MXF8F6F4":
        out.append((m == 256, f"{t} M-mode size should be 128 or 256 for 2 CTA cluster MMA.") if pair
                   else (m == 128, f"{t} M-mode size should be 64 or 128 for 1 CTA cluster MMA."))
    else:
        out.append((m in (128, 256), f"{t} M-mode size should be 128 or 256 for 2 CTA cluster MMA.") if pair
                   else (m == 128, f"{t} M-mode size should be 128 for 1 CTA cluster MMA."))
    step = 16 if pair else 8
    out.append((n % step == 0 and step <= n <= 256,
                f"{t} N-mode size should be a multiple of {step} between {step} and 256."))
    if op.family == "MXF4":
        out.append((op.vs in (16, 32), f"{t} Vector size can only be 16 or 32."))
    return out


def _traits_asserts(op: BlockScaledOp) -> list:
    """``mma_traits_sm100.hpp``: the element widths, and VS 32 only for e2m1 with ue8m0."""
    ab, bb = value_type_bits(op.a_type), value_type_bits(op.b_type)
    if op.family == "MXF8F6F4":
        return [(ab <= 8 and bb <= 8, f"{op.tag} supports types with leq 8bit types"), (ab <= 8 and bb <= 8, "")]
    e2m1 = op.a_type == op.b_type == "float_e2m1_t"
    return [(ab == 4 and bb == 4, f"{op.tag} supports 4bit types"),
            ((op.vs == 32 and e2m1 and op.sf_type == "float_ue8m0_t") or op.vs == 16,
             "2x mode (VectorSize=32) only supports a_type and b_type=float_e2m1_t or "
             "cutlass::type_erased_dynamic_float4_t and sf_type=ue8m0_t")]


def _desc_asserts(op: BlockScaledOp) -> list:
    """``make_instr_desc_block_scaled``'s conversions (``to_UMMAFormat``, ``to_ScaleFormat``)."""
    return ([(t in UMMA_FORMATS, "Unknown type for UMMAFormat") for t in (op.a_type, op.b_type)]
            + [(op.sf_type in SCALE_FORMATS, "Unknown type for ScaleFormat")])


def cute_rejections(op: BlockScaledOp) -> list[str]:
    """CuTe's ``static_assert`` messages for ``make_tiled_mma(op{})`` (empty: it compiles).

    >>> cute_rejections(parse_blockscaled_name("SM100_MMA_MXF4_SS<float_e2m1_t,float_e2m1_t,float,float_ue4m3_t,128,256,32,UMMA::Major::K,UMMA::Major::K>"))
    ['2x mode (VectorSize=32) only supports a_type and b_type=float_e2m1_t or cutlass::type_erased_dynamic_float4_t and sf_type=ue8m0_t']
    """
    return [msg for ok, msg in _arch_asserts(op) + _traits_asserts(op) + _desc_asserts(op) if not ok]


def instr_desc_block_scaled(op: BlockScaledOp, sfa_id: int = 0, sfb_id: int = 0) -> int:
    """``UMMA::make_instr_desc_block_scaled`` (32 bits: b_sf_id 4-5, a/b format 7-9/10-12, majors 15/16,
    N>>3 at 17, scale format 23, M>>4 at 24, a_sf_id 29-30); ``sf*_id`` are the byte selectors CuTe's
    runtime descriptor takes from bits 30-31 of the factors' TMEM addresses."""
    return (sfb_id << 4 | UMMA_FORMATS[op.a_type] << 7 | UMMA_FORMATS[op.b_type] << 10 | (op.a_major == "MN") << 15
            | (op.b_major == "MN") << 16 | (op.n >> 3) << 17 | SCALE_FORMATS[op.sf_type] << 23 | (op.m >> 4) << 24
            | sfa_id << 29)


def _tv(peers: int, rows: int, cols: int) -> Layout:
    half = rows // peers
    return Layout((peers, (half, cols)), (half if peers > 1 else 0, (1, rows)))


def blockscaled_mma_atom(name) -> MMAAtom:
    """The :class:`~symlayout.atoms.mma.MMAAtom` of a block-scaled atom (CuTe's first rejection raised
    as :class:`~symlayout.errors.CuteStaticAssert`).

    >>> a = blockscaled_mma_atom("SM100_MMA_MXF4_2x1SM_SS<float_e2m1_t,float_e2m1_t,float,float_ue8m0_t,256,128,32,UMMA::Major::K,UMMA::Major::K>")
    >>> str(a.a_layout), a.ptx
    ('(2,(128,64)):(128,(1,256))', 'tcgen05.mma.cta_group::2.kind::mxf4.block_scale.block32')
    """
    op = name if isinstance(name, BlockScaledOp) else parse_blockscaled_name(name)
    bad = cute_rejections(op)
    if bad:
        raise CuteStaticAssert(f"{op.name}: CuTe does not compile it: {bad[0] or 'static assertion failed'}", bad[0])
    p = op.cta_group
    m, n, k = op.shape_mnk
    return MMAAtom(
        name=op.name, shape_mnk=(m, n, k), thr_id=Layout(p, 1 if p > 1 else 0),
        a_layout=_tv(p, m, k), b_layout=_tv(p, n, k), c_layout=_tv(p, m, n),
        val_type_d=op.c_type, val_type_a=op.a_type, val_type_b=op.b_type, val_type_c=op.c_type,
        frg_type_a=f"UMMA::smem_desc<UMMA::Major::{op.a_major}>", frg_type_b=f"UMMA::smem_desc<UMMA::Major::{op.b_major}>",
        d_regs=None, a_regs=Registers("uint64_t", 1), b_regs=Registers("uint64_t", 1), c_regs=Registers("uint32_t", 1),
        ptx=f"tcgen05.mma.cta_group::{p}.kind::{op.kind}.block_scale.block{op.vs}", arch="sm_100a")


# ---------------------------------------------------------------------------- what the kind reads


def kind_type_problems(op: BlockScaledOp) -> list[str]:
    """What the hardware reads differently from what the atom's types say, though CuTe compiles it:
    the descriptor's format code read under the kind, the data types and the factor (type, vec)
    against :data:`KINDS`, and packed vs container storage of sub-byte data.

    >>> kind_type_problems(parse_blockscaled_name("SM100_MMA_MXF8F6F4_SS<float_e2m1_t,float_e4m3_t,float,float_ue8m0_t,128,128,UMMA::Major::K,UMMA::Major::K>"))[0]
    'A: float_e2m1_t has format code 1, which kind::mxf8f6f4 reads as e5m2 (the fp4 data must be float_e2m1_unpacksmem_t: 8-bit containers)'
    """
    kind = KINDS[op.kind]
    out = []
    for X, t in (("A", op.a_type), ("B", op.b_type)):
        code = UMMA_FORMATS.get(t)
        read = KIND_FORMATS[op.kind].get(code)
        ptx = value_type_info(t)["ptx"]
        if read != ptx:
            want = "float_e2m1_unpacksmem_t: 8-bit containers" if op.kind == "mxf8f6f4" else "float_e2m1_t: packed"
            out.append(f"{X}: {t} has format code {code}, which kind::{op.kind} reads as {read or 'no format'} "
                       f"(the fp4 data must be {want})")
        elif storage(t) not in ("byte", kind.storage):
            out.append(f"{X}: {t} is {storage(t)} in shared memory, kind::{op.kind} reads {kind.storage} data")
    for X, t, major in (("A", op.a_type, op.a_major), ("B", op.b_type, op.b_major)):
        if major == "MN" and value_type_bits(t) < 8:
            out.append(f"{X}: {t} is MN-major: the instruction descriptor's major bit 1 is valid only for 8- and "
                       "16-bit types (e4m3, e5m2, int8, f16, bf16, tf32), not fp6/fp4 (mma_sm100_desc.hpp, PTX ISA)")
    if (op.sf_type, op.vs) not in kind.factors:
        out.append(f"scale factors {op.sf_type}/{op.vs}: kind::{op.kind} takes " + " or ".join(
            f"{t}/{v}" for t, v in sorted(kind.factors)))
    return out


def storage(t: str) -> str:
    """How a type lies in shared memory: ``"byte"`` (8 bits or more), ``"container"`` (CUTLASS's
    ``*_unpacksmem_t``: 16 elements per 16-byte chunk) or ``"packed"`` (sub-byte, back to back)."""
    info = value_type_info(t)
    if info["bits"] >= 8:
        return "byte"
    return info.get("storage", "packed")


def smem_bit(t: str, slot: int, as_storage: str | None = None) -> int:
    """The bit of shared memory where element ``slot`` of a buffer of ``t`` begins, ``slot`` being the
    element offset CuTe's layout gives: packed, ``slot*bits``; containers (PTX ``.b4x16_p64`` /
    ``.b6x16_p32``), chunk ``slot/16`` of 16 bytes, then ``bits*(slot%16)`` inside it.

    >>> smem_bit("float_e2m1_t", 17), smem_bit("float_e2m1_unpacksmem_t", 17), smem_bit("float_e2m3_unpacksmem_t", 17)
    (68, 132, 134)
    """
    return _bit(value_type_bits(t), slot, as_storage or storage(t))


# ---------------------------------------------------------------------------- scale-factor layouts


def sf_atom(vec: int, major: str = "K") -> Layout:
    """``Sm1xxBlockScaledBasicChunk<vec, major>::SfAtom``: one 128x4 block over ``(MN, K)`` data
    coordinates (K-major; the MN-major atom swaps the modes)."""
    mn = ((32, 4), (16, 4))
    k = ((vec, 4), (0, 1))
    return Layout((mn[0], k[0]), (mn[1], k[1])) if major == "K" else Layout((k[0], mn[0]), (k[1], mn[1]))


def tile_atom_to_shape_sf(vec: int, mn: int, k: int, batches: int = 1) -> Layout:
    """``Sm1xxBlockScaledConfig<vec>::tile_atom_to_shape_SFA/SFB``: the global scale-factor layout of
    an ``mn x k (x batches)`` operand (SFA: ``mn = M``; SFB: ``mn = N``), 128x4 blocks K first."""
    return tile_to_shape(sf_atom(vec), (mn, k, batches), (2, 1, 3))


def linear_sf_layout(vec: int, mn: int, k: int, batches: int = 1) -> Layout:
    """A plain row-major factor buffer (``mn x k/vec``, one factor per K-block), as a quantizer that
    ignores the 128x4 blocks writes it."""
    kb = k // vec
    return Layout((mn, (vec, kb), batches), (kb, (0, 1), mn * kb))


def deduce_smem_layout_sf(operand: str, vec: int, mma_k: int, tile_mnk, peers: int = 1) -> Layout:
    """``Sm1xxBlockScaledConfig<vec>::deduce_smem_layoutSFA/SFB(TiledMma, TileShape_MNK)``: one CTA's
    ``((((32,4),MN/128),(vec,NSF)),1,(4/NSF, K/vec/4))`` scale-factor tile in shared memory
    (``NSF = mma_k/vec``).  SFA takes the M tile per peer (``tile_M / peers``); SFB takes the whole N
    tile, rounded up to 128 (UTCCP and TMA move SFB as if N were a multiple of 128)."""
    nsf = mma_k // vec
    if operand == "A":
        mma_mn = tile_mnk[0] // peers
    else:
        mma_mn = -(-tile_mnk[1] // 128) * 128
    blocks = mma_mn // 128
    kblocks = tile_mnk[2] // vec // 4
    shape = ((((32, 4), blocks), (vec, nsf)), 1, (4 // nsf, kblocks))     # CuTe's prepend(blocks, (32,4))
    stride = ((((16, 4), 512), (0, 1)), 0, (nsf, blocks * 512))
    return Layout(shape, stride)


def staged_smem_layout_sf(tile: Layout, stages: int) -> Layout:
    """The collective's ``SmemLayoutSFA/SFB``: the tile with a stage mode of stride ``size(filter_zeros(tile))``."""
    return Layout(tuple(tile.shape) + (stages,), tuple(tile.stride) + (product(filter_zeros(tile).shape),))


# ---------------------------------------------------------------------------- type_agreement of A / B


_CHUNK_FORMAT = {4: ".b4x16_p64", 6: ".b6x16_p32"}


def operand_type_problems(op: BlockScaledOp, operand: str, smem_type: str, slot_bits: int) -> list[str]:
    """``type_agreement`` of a block-scaled operand: the format the descriptor names under the kind
    (:func:`kind_type_problems`), and packed vs container storage of sub-byte data, with the first
    element the MMA reads from another byte than the one the buffer keeps it in.

    >>> op = parse_blockscaled_name("SM100_MMA_MXF8F6F4_SS<float_e2m1_unpacksmem_t,float_e4m3_t,float,float_ue8m0_t,128,128,UMMA::Major::K,UMMA::Major::K>")
    >>> operand_type_problems(op, "A", "float_e2m1_t", 4)[0].split("chunk): ")[1]
    'the element at offset 16 of the buffer lies at smem byte 8, the MMA reads it from byte 16'
    """
    out = [p[3:] for p in kind_type_problems(op) if p.startswith(operand + ": ")]
    bits = value_type_bits(smem_type)
    if bits >= 8:
        return out
    kind = KINDS[op.kind]
    have = "packed" if slot_bits < 8 else "container"
    if have != kind.storage:
        slot = next(s for s in range(64) if _bit(bits, s, have) // 8 != _bit(bits, s, kind.storage) // 8)
        fmt = _CHUNK_FORMAT.get(bits, "")
        how = {"packed": f"packed ({8 // bits if 8 % bits == 0 else '8/' + str(bits)} per byte)",
               "container": f"in 8-bit containers (PTX {fmt}: 16 elements in each 16-byte chunk)"}
        out.append(f"[smem.{operand}] holds {smem_type} {how[have]}, but kind::{op.kind} reads {operand} "
                   f"{how[kind.storage]}: the element at offset {slot} of the buffer lies at smem byte "
                   f"{_bit(bits, slot, have) // 8}, the MMA reads it from byte {_bit(bits, slot, kind.storage) // 8}")
    return out


def _bit(bits: int, slot: int, how: str) -> int:
    return 128 * (slot // 16) + bits * (slot % 16) if how == "container" else slot * bits


# ---------------------------------------------------------------------------- the factors in Tensor Memory


def tmem_sf_layout(tile: Layout, peers: int = 1, operand: str = "A", duplicated_2by2: bool = False) -> Layout:
    """CuTe's ``UMMA::tmem_sf_frg<sf, vec, peers, A?>::make(shape(tile))`` over the CTA's factor tile
    (``deduce_smem_layoutSF``'s shape): factor -> ``lane + 128 * column`` in factor units (four factors
    to a 32-bit column).  Row ``r`` of an MMA block goes to lane ``r % 32`` of every subpartition (the
    factors are replicated four times, ``32*rep``), rows 32 apart and K-blocks to the next factors of the
    row's word; SFB of a 2SM ``ScaleFactorDuplicated2by2`` atom splits the rows over two halves."""
    s = tile.shape
    mma_mn = int(product(s[0][0]))
    vec, nsf = (int(product(x)) for x in s[0][1])
    if operand == "B" and duplicated_2by2:
        atom = Layout((((32, mma_mn // 2 // 32), 2, 2), (vec, nsf)), (((1, 512), 64, 32), (0, 128)))
    else:
        atom = Layout((((32, mma_mn // 32), 4), (vec, nsf)), (((1, 512), 32), (0, 128)))
    return tiled_product(atom, Layout(tuple(s[1:])))


def tmem_sf_columns(tile: Layout, peers: int = 1, operand: str = "A", duplicated_2by2: bool = False) -> int:
    """The 32-bit TMEM columns the factors take: CUTLASS's ``find_tmem_tensor_col_offset`` of the
    ``tmem_sf_frg`` tensor (where the collective places the next tensor: SFB after SFA after the
    accumulators)."""
    frg = tmem_sf_layout(tile, peers, operand, duplicated_2by2)
    assert all(d >= 0 for d in flatten(frg.stride))     # (so the largest offset is cosize - 1)
    return (frg.cosize() - 1) // 128 // 4 + 1
