"""CuTe's SM120 (GeForce / RTX PRO Blackwell) ``mma.sync`` atoms as data (``cute/arch/mma_sm120.hpp``,
``cute/atom/mma_traits_sm120.hpp``): no Tensor Memory, warp-level MMAs on narrow types.

* ``SM120_16x8x32_TN<a,b,c>``: ``mma.sync.aligned.kind::f8f6f4.m16n8k32``, every pair of
  e2m1/e3m2/e2m3/e4m3/e5m2 with a ``float`` or ``half_t`` accumulator; CuTe's traits are those of
  ``SM80_16x8x32_S32S8S8S32_TN`` with ``ValTypeA = ValTypeB = uint8_t`` (each element in a byte).
* ``SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<a,b,float,float_ue8m0_t,VS>``: the same, block-scaled
  (``kind::mxf8f6f4.block_scale.scale_vec::1X``), one ue8m0 factor register per thread.
* ``SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<e2m1,e2m1,float,sf,VS>``: ``kind::mxf4nvf4`` m16n8k64 (packed
  fp4, ``ValTypeA = uint4_t``), ue8m0 with ``scale_vec::2X`` or ue4m3 with ``scale_vec::4X``; the factor
  register is ``uint_bit_t<K/VS * 8>`` (VS 32: 16 bits, 16: 32 bits).

The factors' TV layouts (``SFALayout``: ``(T32,V) -> (M16,K)``, 16 threads effectively, the ``2:0`` mode;
``SFBLayout``: ``(T32,V) -> (N8,K)``, 8 threads) are CuTe's.  CuTe issues every block-scaled atom with
byte and thread selectors ``bidA = tidA = bidB = tidB = 0``.

>>> a = sm120_mma_atom("SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue4m3_t,16>")
>>> a.shape_mnk, str(a.a_layout), a.val_type_a, sm120_sf_layouts(a.name)[2]
((16, 8, 64), '((4,8),(8,2,2)):((128,1),(16,8,512))', 'uint4_t', 16)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..algebra.layout import Layout
from ..errors import AtomError, CuteStaticAssert
from .mma import MMAAtom, get_mma_atom, register_family
from .types import Registers, canonical_type

#: the element types of kind::f8f6f4 (PTX names of CuTe's types)
F8F6F4_TYPES = {"float_e2m1_t": "e2m1", "float_e3m2_t": "e3m2", "float_e2m3_t": "e2m3", "float_e4m3_t": "e4m3",
                "float_e5m2_t": "e5m2"}
_RE = re.compile(r"^\s*(?:cute::)?(?:SM120::BLOCKSCALED::)?SM120_16x8x(32|64)_TN(_VS)?\s*<(.*)>\s*$")


class Sm120AtomError(AtomError):
    """Not an SM120 atom name this module models."""


@dataclass(frozen=True)
class Sm120Op:
    k: int                  # 32 or 64
    scaled: bool
    a_type: str
    b_type: str
    c_type: str
    sf_type: str | None = None
    vs: int | None = None

    @property
    def name(self) -> str:
        if not self.scaled:
            return f"SM120_16x8x32_TN<{self.a_type},{self.b_type},{self.c_type}>"
        return (f"SM120::BLOCKSCALED::SM120_16x8x{self.k}_TN_VS<{self.a_type},{self.b_type},{self.c_type},"
                f"{self.sf_type},{self.vs}>")


def is_sm120_name(name) -> bool:
    return isinstance(name, str) and _RE.match(name) is not None


def parse_sm120_name(name: str) -> Sm120Op:
    m = _RE.match(name) if isinstance(name, str) else None
    if not m:
        raise Sm120AtomError(f"not an SM120 atom name (SM120_16x8x32_TN<a,b,c>, SM120::BLOCKSCALED::"
                             f"SM120_16x8x{{32,64}}_TN_VS<a,b,c,sf,VS>): {name!r}")
    args = [a.strip() for a in m.group(3).split(",")]
    scaled = m.group(2) is not None
    if (not scaled and m.group(1) == "64") or len(args) != (5 if scaled else 3):
        raise Sm120AtomError(f"{name}: expected <a,b,c> (SM120_16x8x32_TN) or <a,b,c,sf,VS> (the _VS atoms)")
    try:
        types = [canonical_type(a) for a in args[:4 if scaled else 3]]
    except AtomError as e:
        raise Sm120AtomError(f"{name}: {e}") from None
    if scaled:
        if not re.fullmatch(r"\d+", args[4]):
            raise Sm120AtomError(f"{name}: VS must be an integer, got {args[4]!r}")
        return Sm120Op(int(m.group(1)), True, *types, int(args[4]))
    return Sm120Op(32, False, *types)


def cute_rejections(op: Sm120Op) -> list[str]:
    """CuTe's ``static_assert``s: the primary templates match no other types (``dependent_false``), and
    the m16n8k64 atom's vector size."""
    tag = "SM120_16x8x32_TN" if not op.scaled else f"SM120_16x8x{op.k}_TN_VS"
    f8 = op.a_type in F8F6F4_TYPES and op.b_type in F8F6F4_TYPES
    if not op.scaled:
        ok = f8 and op.c_type in ("float", "half_t")
    elif op.k == 32:
        ok = f8 and op.c_type == "float" and op.sf_type == "float_ue8m0_t"
    else:
        ok = (op.a_type == op.b_type == "float_e2m1_t" and op.c_type == "float"
              and op.sf_type in ("float_ue8m0_t", "float_ue4m3_t"))
    if not ok:
        return [f"No MMA matches {tag} for given data types."]
    if op.scaled and op.k == 64 and op.vs not in (16, 32):
        return ["Scaling factor vector size has to be 16 or 32 for MXF4NVF4 MMA."]
    return []


def sm120_mma_atom(name) -> MMAAtom:
    op = name if isinstance(name, Sm120Op) else parse_sm120_name(name)
    bad = cute_rejections(op)
    if bad:
        raise CuteStaticAssert(f"{op.name}: CuTe does not compile it: {bad[0]}", bad[0])
    c_regs = Registers("float", 4) if op.c_type == "float" else Registers("uint32_t", 2)
    if op.k == 32:
        base = get_mma_atom("SM80_16x8x32_S32S8S8S32_TN")
        a, b, c = base.a_layout, base.b_layout, base.c_layout
        vt = "uint8_t"
    else:
        a = Layout(((4, 8), (8, 2, 2)), ((128, 1), (16, 8, 512)))
        b = Layout(((4, 8), (8, 2)), ((64, 1), (8, 256)))
        c = get_mma_atom("SM80_16x8x32_S32S8S8S32_TN").c_layout
        vt = "uint4_t"
    if not op.scaled:
        ptx = f"mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col.{_ptx(op.c_type)}.{F8F6F4_TYPES[op.a_type]}." \
              f"{F8F6F4_TYPES[op.b_type]}.{_ptx(op.c_type)}"
    else:
        kind, vec = ("mxf8f6f4", "1X") if op.k == 32 else ("mxf4nvf4", "2X" if op.sf_type == "float_ue8m0_t" else "4X")
        ptx = (f"mma.sync.aligned.kind::{kind}.block_scale.scale_vec::{vec}.m16n8k{op.k}.row.col.f32."
               f"{F8F6F4_TYPES[op.a_type]}.{F8F6F4_TYPES[op.b_type]}.f32.{op.sf_type[6:-2]}")
    return MMAAtom(name=op.name, shape_mnk=(16, 8, op.k), thr_id=Layout(32, 1), a_layout=a, b_layout=b,
                   c_layout=c, val_type_d=op.c_type, val_type_a=vt, val_type_b=vt, val_type_c=op.c_type,
                   frg_type_a=vt, frg_type_b=vt, d_regs=c_regs, a_regs=Registers("uint32_t", 4),
                   b_regs=Registers("uint32_t", 2), c_regs=c_regs, ptx=ptx, arch="sm_120a")


def operand_element_type(name, operand: str, container: str) -> str:
    """The element type an SM120 atom's ``operand`` (A or B) reads from its ``container`` fragment
    (CuTe's ``ValTypeA/B`` ``uint8_t`` / ``uint4_t``: the bits of the PTX ``.e4m3`` ... type the name
    gives); ``container`` itself for any other atom or operand."""
    if operand not in ("A", "B") or not is_sm120_name(name):
        return container
    op = parse_sm120_name(name)
    return op.a_type if operand == "A" else op.b_type


def _ptx(t: str) -> str:
    return "f32" if t == "float" else "f16"


def sm120_sf_layouts(name) -> tuple:
    """``(SFALayout, SFBLayout, SFVecSize, the factor register)`` of a block-scaled SM120 atom."""
    op = name if isinstance(name, Sm120Op) else parse_sm120_name(name)
    if not op.scaled:
        raise Sm120AtomError(f"{op.name} is not block-scaled")
    k = op.k
    sfa = Layout(((2, 2, 8), k), ((8, 0, 1), 16))
    sfb = Layout(((4, 8), k), ((0, 1), 8))
    reg = "uint8_t" if k == 32 else ("uint16_t" if op.vs == 32 else "uint32_t")
    return sfa, sfb, op.vs, Registers(reg, 1)


def scale_vec(op: Sm120Op) -> int:
    """Elements per factor the instruction CuTe issues reads (``.scale_vec::NX``: N factors per row of the
    K extent): m16n8k32 ``1X`` -> 32; m16n8k64 ue8m0 ``2X`` -> 32, ue4m3 ``4X`` -> 16 (PTX ISA, mma.sync
    block scaling; CuTe picks the qualifier by the factor type alone)."""
    if op.k == 32:
        return 32
    return 32 if op.sf_type == "float_ue8m0_t" else 16


#: PTX ISA, ``mma`` with ``.block_scale`` (section "Warp-level Matrix Multiply-Accumulate Instructions", the
#: scale-factor operands ``scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b, thread-id-b}``
#: and the figures of the scale-factor layouts of A and B), as data: each of ``scale-a-data`` /
#: ``scale-b-data`` is one 32-bit register per thread; the ``N`` factors of a row (``.scale_vec::NX``) are
#: ``N`` consecutive bytes starting at ``byte-id``; thread-id-a picks the pair of each quad that supplies
#: A's factors (lane ``4*(m%8) + 2*thread-id-a + m/8`` holds row ``m``), thread-id-b the one thread of each
#: quad that supplies B's (lane ``4*n + thread-id-b`` holds column ``n``).  The ranges are section 9.7.14.3
#: "Block Scaling for mma.sync", table "Valid values for various selector components" (any other value is
#: undefined behavior): thread-id-a 0..1, thread-id-b 0..3, byte-id 0..3 (1X), 0 or 2 (2X), 0 (4X).
#: CUTLASS 4.2 issues every SM120 block-scaled atom with constant selectors 0 (tests/test_sm120_config.py).
SF_THREAD_IDS = {"A": 2, "B": 4}
SF_REGISTER_BYTES = 4


def scale_factor_source(op: Sm120Op, operand: str, mn: int, kblock: int, thread_id: int = 0,
                        byte_id: int = 0) -> tuple:
    """``(lane, register byte)`` the instruction reads the factor of (row ``mn``, K-block ``kblock``) of
    ``operand`` from, under the selectors (PTX ISA; see :data:`SF_THREAD_IDS`).

    >>> op = parse_sm120_name("SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue4m3_t,16>")
    >>> scale_factor_source(op, "A", 9, 3), scale_factor_source(op, "B", 2, 1, thread_id=3)
    ((5, 3), (11, 1))
    """
    lane = 4 * (mn % 8) + 2 * thread_id + mn // 8 if operand == "A" else 4 * mn + thread_id
    return lane, byte_id + kblock


def selector_problems(op: Sm120Op, operand: str, thread_id: int, byte_id: int) -> list[str]:
    """The selector values the PTX ISA does not allow for ``op``: thread-id-a below 2, thread-id-b below 4,
    byte-id a multiple of the ``N`` of ``.scale_vec::NX`` whose ``N`` bytes fit the 32-bit register."""
    n = op.k // scale_vec(op)
    x = operand.lower()
    out = []
    if thread_id >= SF_THREAD_IDS[operand]:
        out.append(f"thread-id-{x} {thread_id}: the PTX ISA allows 0..{SF_THREAD_IDS[operand] - 1}")
    if byte_id % n or byte_id + n > SF_REGISTER_BYTES:
        ok = ", ".join(str(b) for b in range(0, SF_REGISTER_BYTES, n))
        out.append(f"byte-id-{x} {byte_id}: with .scale_vec::{n}X ({n} factor byte(s) per row) the PTX ISA allows {ok}")
    return out


def smem_layout_sf(op: Sm120Op, mn: int, k: int, stages: int = 1) -> Layout:
    """The staged factor buffer of CUTLASS's SM120 block-scaled collective (``CollectiveBuilder<Sm120,
    OpClassBlockScaledTensorOp>``'s ``SmemLayoutSFA/SFB``: the 128x4 blocks of ``Sm1xxBlkScaledConfig``
    over the CTA tile's ``(MN, K)`` coordinates, ``NSF = K_atom / VS`` factors of an atom adjacent, then
    the stage mode): ``(((32,4),MN/128),((VS,NSF),(4/NSF,K/VS/4)),stages)``.

    >>> op = parse_sm120_name("SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue4m3_t,16>")
    >>> print(smem_layout_sf(op, 128, 256, 3))
    (((32,4),1),((16,4),(1,4)),3):(((16,4),512),((0,1),(4,512)),2048)
    """
    vs = op.vs
    nsf = op.k // vs
    blocks_mn, blocks_k = mn // 128, k // vs // 4
    return Layout((((32, 4), blocks_mn), ((vs, nsf), (4 // nsf, blocks_k)), stages),
                  (((16, 4), 512), ((0, 1), (nsf, blocks_mn * 512)), 512 * blocks_mn * blocks_k))


def kind_problems(op: Sm120Op) -> list[str]:
    """What the hardware reads differently from the atom's ``SFVecSize``, though CuTe compiles it: CuTe's
    m16n8k64 atoms choose ``scale_vec::2X`` / ``4X`` by the factor type, and size the factor register by
    ``VS`` (``uint_bit_t<K/VS*8>``).

    >>> kind_problems(parse_sm120_name("SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue8m0_t,16>"))[0][:96]
    'SFVecSize 16, but CuTe issues mma.sync ... .scale_vec::2X with float_ue8m0_t: one factor per 32 '
    """
    if not op.scaled or cute_rejections(op):
        return []
    v = scale_vec(op)
    if v == op.vs:
        return []
    n = op.k // v
    return [f"SFVecSize {op.vs}, but CuTe issues mma.sync ... .scale_vec::{n}X with {op.sf_type}: one factor per {v} "
            f"elements, {n} per row, while the {op.k // op.vs} factors of each thread's {op.k // op.vs * 8}-bit "
            "scale register are laid out for one per " + str(op.vs)]


register_family(is_sm120_name, sm120_mma_atom)        # get_mma_atom("SM120_...") builds it here
