"""CuTe's SM100 UMMA (``tcgen05.mma``) traits as data: the ``SM100_MMA_*`` atoms of
``cute/arch/mma_sm100_umma.hpp`` and ``cute/atom/mma_traits_sm100.hpp`` (families
F16BF16, TF32, S8 and F8F6F4; A from shared memory (SS) or Tensor Memory (TS); one
CTA or a CTA pair, ``2x1SM``), the ``static_assert``-s that decide which M/N/types
CuTe compiles, the instruction descriptor ``UMMA::make_instr_desc`` builds, and
the shared-memory side: the layout atoms ``UMMA::Layout_*_Atom<T>``,
``UMMA::tile_to_mma_shape`` and ``UMMA::make_umma_desc``.

An atom is issued by one thread (``ThrID = 1``) or by one thread in each CTA of a
pair (``ThrID = 2``); its TV layouts are ``(peer, (MN, K)) -> mn + MN*k``: the
whole ``M x K`` tile for one CTA, and for a pair peer ``p`` holds rows
``p*M/2 .. p*M/2 + M/2 - 1`` (the same for B's columns and C's rows).  K is always
256 bits of A's element type (32 elements for kind::f8f6f4).

A config names an atom as CuTe's template-id, types and M/N and majors as arguments:

>>> op = parse_umma_name("SM100_MMA_F16BF16_SS<half_t,half_t,float,128,256,UMMA::Major::K,UMMA::Major::K>")
>>> op.family, op.cta_group, op.a_source, op.shape_mnk, (op.a_major, op.b_major)
('F16BF16', 1, 'smem', (128, 256, 16), ('K', 'K'))
>>> a = umma_mma_atom("SM100_MMA_TF32_2x1SM_SS<tfloat32_t,tfloat32_t,float,256,128,UMMA::Major::K,UMMA::Major::MN>")
>>> str(a.thr_id), str(a.a_layout), str(a.c_layout)
('2:1', '(2,(128,8)):(128,(1,256))', '(2,(128,128)):(128,(1,256))')
>>> cute_rejections(parse_umma_name("SM100_MMA_F16BF16_SS<half_t,half_t,float,256,64,UMMA::Major::K,UMMA::Major::K>"))
['SM100_MMA_F16BF16 M-mode size should be 64 or 128 for 1 CTA cluster MMA.']
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from ..errors import AtomError, CuteStaticAssert
from ..algebra import int_tuple as it
from ..algebra.composed import Swizzle
from ..algebra.layout import Layout, logical_divide, tile_to_shape, tiled_divide, upcast
from ..arch import tcgen05 as arch_tcgen05
from .gmma import GmmaSmemLayout, layout_atom as gmma_layout_atom
from .blockscaled import (BlockScaledOp, blockscaled_mma_atom, cute_rejections as blockscaled_rejections,
                          is_blockscaled_name, parse_blockscaled_name, parse_int, parse_major)
from .mma import MMAAtom, register_family
from .types import Registers, canonical_type, value_type_bits

#: The families modelled: (``tcgen05.mma`` kind, the A/B element width CuTe's traits require;
#: ``None``: at most 8 bits).
FAMILIES = {"F16BF16": ("f16", 16), "TF32": ("tf32", 32), "S8": ("i8", 8), "F8F6F4": ("f8f6f4", None)}

#: ``UMMA::to_UMMAFormat<T>`` (the A/B format codes of the instruction descriptor) for the
#: types ``types.json`` knows.
UMMA_FORMATS = {"half_t": 0, "bfloat16_t": 1, "tfloat32_t": 2, "uint8_t": 0, "int8_t": 1,
                "float_e4m3_t": 0, "float_e5m2_t": 1,
                # issue 29: fp6/fp4 (the 8-bit containers kind::f8f6f4 reads; packed e2m1 is MXF4Format's 1)
                "float_e2m3_t": 3, "float_e3m2_t": 4, "float_e2m3_unpacksmem_t": 3, "float_e3m2_unpacksmem_t": 4,
                "float_e2m1_unpacksmem_t": 5, "float_e2m1_t": 1}
#: ``UMMA::to_CFormat<T>``.
C_FORMATS = {"half_t": 0, "float": 1, "int32_t": 2}

_NAME_RE = re.compile(r"^\s*(?:cute::)?SM100_MMA_(TF32|F16BF16|S8|F8F6F4)(_2x1SM)?_(SS|TS)\s*<(.*)>\s*$")


class UmmaAtomError(AtomError):
    """Not an SM100 UMMA atom name this module models (a malformed name or arguments)."""


@dataclass(frozen=True)
class UmmaOp:
    """One ``SM100_MMA_<family>[_2x1SM]_<SS|TS><a,b,c,M,N,a_major,b_major>``."""
    family: str
    cta_group: int          # 1, or 2 for a 2x1SM atom (a CTA pair)
    a_source: str           # "smem" (SS) or "tmem" (TS)
    a_type: str
    b_type: str
    c_type: str
    m: int
    n: int
    a_major: str            # "K" or "MN"
    b_major: str

    @property
    def name(self) -> str:
        pair = "_2x1SM" if self.cta_group == 2 else ""
        src = "SS" if self.a_source == "smem" else "TS"
        return (f"SM100_MMA_{self.family}{pair}_{src}<{self.a_type},{self.b_type},{self.c_type},{self.m},{self.n},"
                f"UMMA::Major::{self.a_major},UMMA::Major::{self.b_major}>")

    @property
    def kind(self) -> str:
        return FAMILIES[self.family][0]

    @property
    def k(self) -> int:
        """``K = 256 / sizeof_bits<A>`` (kind::f8f6f4: always 32)."""
        return 32 if self.family == "F8F6F4" else 256 // value_type_bits(self.a_type)

    @property
    def shape_mnk(self) -> tuple:
        return (self.m, self.n, self.k)


#: CuTe's traits spelling ``MMA_Traits<SM100_MMA_X_SS, a, b, c, C<M>, C<N>,
#: integral_constant<UMMA::Major, a_major>, integral_constant<UMMA::Major, b_major>[, ...]>`` (the
#: kind::f8f6f4 SS atoms are named so) and the wrapped template-id ``MMA_Traits<SM100_MMA_X<...>>``
_TRAITS_RE = re.compile(r"^\s*(?:cute::)?MMA_Traits\s*<\s*(.*)>\s*$", re.S)
_OP_RE = re.compile(r"^\s*(?:cute::)?(SM100_MMA_\w+)\s*$")


def _template_args(text: str) -> list:
    """Split ``text`` at the commas outside angle brackets."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "<") - (ch == ">")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def _traits_arg(text: str) -> str:
    """``cute::C<128>`` -> ``128``; ``cute::integral_constant<UMMA::Major, UMMA::Major::K>`` -> ``UMMA::Major::K``."""
    t = text.strip()
    m = re.fullmatch(r"(?:cute::)?(?:C|Int)\s*<\s*(-?\d+)\s*>", t)
    if m:
        return m.group(1)
    m = re.fullmatch(r"(?:cute::)?integral_constant\s*<[^,]*,\s*(.*)>", t)
    return m.group(1).strip() if m else t


def normalize_umma_name(name: str) -> str:
    """The template-id spelling of an SM100 UMMA atom written either way CuTe writes it.

    >>> normalize_umma_name("MMA_Traits<SM100_MMA_F8F6F4_SS, float_e4m3_t, float_e4m3_t, float, cute::C<128>, "
    ...                     "cute::C<64>, cute::integral_constant<UMMA::Major, UMMA::Major::K>, "
    ...                     "cute::integral_constant<UMMA::Major, UMMA::Major::MN>>")
    'SM100_MMA_F8F6F4_SS<float_e4m3_t,float_e4m3_t,float,128,64,UMMA::Major::K,UMMA::Major::MN>'
    """
    m = _TRAITS_RE.match(name)
    if not m:
        return name
    args = _template_args(m.group(1))
    op = _OP_RE.match(args[0])
    if op is None:
        return args[0].strip() if len(args) == 1 else name
    return f"{op.group(1)}<{','.join(_traits_arg(a) for a in args[1:])}>"


def is_umma_name(name: str) -> bool:
    """True for a name spelled as an SM100 UMMA atom (well formed or not: the parser says why not).

    >>> is_umma_name("SM100_MMA_F16BF16_SS<half_t>"), is_umma_name("SM90_64x64x16_F16F16F16_SS")
    (True, False)
    """
    return normalize_umma_name(name).strip().replace("cute::", "").startswith("SM100_MMA_")


def parse_umma_name(name: str) -> UmmaOp:
    """The :class:`UmmaOp` of a CuTe spelling (types canonicalized; the optional ScaleIn /
    Saturate arguments after the majors are accepted and do not change any layout).

    >>> parse_umma_name("SM100_MMA_S8_TS<int8_t,int8_t,int32_t,64,8,UMMA::Major::K,UMMA::Major::MN>").b_major
    'MN'
    >>> parse_umma_name("SM100_MMA_BF16_SS<half_t>")
    Traceback (most recent call last):
     ...
    symlayout.atoms.umma.UmmaAtomError: not an SM100 UMMA atom name (SM100_MMA_{TF32,F16BF16,S8,F8F6F4}[_2x1SM]_{SS,TS}<a,b,c,M,N,a_major,b_major>): 'SM100_MMA_BF16_SS<half_t>'
    """
    name = normalize_umma_name(name)
    if is_blockscaled_name(name):                  # issue 29: SM100_MMA_MXF8F6F4 / MXF4 (atoms/blockscaled.py)
        return parse_blockscaled_name(name)
    m = _NAME_RE.match(name)
    if not m:
        raise UmmaAtomError("not an SM100 UMMA atom name (SM100_MMA_{TF32,F16BF16,S8,F8F6F4}[_2x1SM]_{SS,TS}"
                            f"<a,b,c,M,N,a_major,b_major>): {name!r}")
    args = [a for a in m.group(4).split(",")]
    if len(args) < 7:
        raise UmmaAtomError(f"{name}: expected <a_type,b_type,c_type,M,N,a_major,b_major>, got {len(args)} arguments")
    try:
        types = [canonical_type(a.strip()) for a in args[:3]]
    except AtomError as e:
        raise UmmaAtomError(f"{name}: {e}") from None
    return UmmaOp(family=m.group(1), cta_group=2 if m.group(2) else 1, a_source="smem" if m.group(3) == "SS" else "tmem",
                  a_type=types[0], b_type=types[1], c_type=types[2], m=parse_int(args[3], "M", name, UmmaAtomError),
                  n=parse_int(args[4], "N", name, UmmaAtomError), a_major=parse_major(args[5], name, UmmaAtomError),
                  b_major=parse_major(args[6], name, UmmaAtomError))


# ---------------------------------------------------------------------------
# CuTe's static_asserts (mma_sm100_umma.hpp, then mma_traits_sm100.hpp, then make_instr_desc)
# ---------------------------------------------------------------------------


def _n_ok(n: int, step: int, low: int) -> bool:
    return n % step == 0 and low <= n <= 256


def _arch_asserts(op: UmmaOp) -> list:
    """The ``(holds, message)`` pairs of the operation struct (``mma_sm100_umma.hpp``)."""
    f, m, n = op.family, op.m, op.n
    ts = op.a_source == "tmem"
    pair = op.cta_group == 2
    out = []
    if f == "F8F6F4" and not ts:
        return out                                     # SM100_MMA_F8F6F4[_2x1SM]_SS asserts in its traits
    tag = f"SM100_MMA_{f}" + ("_2x1SM" if pair else "") + ("_TS" if ts else "_SS")
    short = tag if (f == "S8" or pair or f == "F8F6F4") else f"SM100_MMA_{f}"
    if f == "S8" and not pair:
        n_rule = n == 8 or _n_ok(n, 16, 16)
        n_text = f"{tag} N-mode size should be 8 or a multiple of 16 between 16 and 256."
    elif pair:
        step = 32 if (ts or f == "S8") else 16
        n_rule = _n_ok(n, step, step)
        n_text = f"{tag} N-mode size should be a multiple of {step} between {step} and 256."
    elif ts:
        n_rule = (m == 64 and _n_ok(n, 8, 8)) or (m == 128 and _n_ok(n, 16, 16))
        n_text = (f"{short} N-mode size should be a multiple of 8 between 8 and 256 for M=64, "
                  "or a multiple of 16 between 16 and 256 for M=128.")
    else:
        n_rule = _n_ok(n, 8, 8)
        n_text = f"{short} N-mode size should be a multiple of 8 between 8 and 256."
    if f == "S8" and not pair and not ts:
        out.append((op.c_type == "int32_t", f"{tag} result type can only be int32_t."))
    if pair:
        m_text = (f"{tag} M-mode size should be 64 or 128 for 1 CTA cluster MMA." if f == "F8F6F4"
                  else f"{tag} M-mode size should be 128 or 256 for 2 CTA cluster MMA.")
        out.append((m in (128, 256), m_text))
    else:
        out.append((m in (64, 128), f"{short} M-mode size should be 64 or 128 for 1 CTA cluster MMA."))
    out.append((n_rule, n_text))
    if ts:
        out.append((op.a_major == "K", f"{short} A from TMEM can't be transposed"))
    return out


def _traits_asserts(op: UmmaOp) -> list:
    """The ``(holds, message)`` pairs of ``MMA_Traits<...>`` (``mma_traits_sm100.hpp``)."""
    f, m, n = op.family, op.m, op.n
    pair = op.cta_group == 2
    tag = f"SM100_MMA_{f}" + ("_2x1SM" if pair else "") + ("_TS" if op.a_source == "tmem" else "_SS")
    ab, bb = value_type_bits(op.a_type), value_type_bits(op.b_type)
    width = FAMILIES[f][1]
    if width is not None:
        return [(ab == bb == width, f"{tag} supports {width}bit types")]
    out = [(ab <= 8 and bb <= 8, f"{tag} supports types with leq 8bit types")]
    if op.a_source == "smem":
        lo_k, lo_mn = (16, 32) if pair else (8, 16)
        out.append((m in ((128, 256) if pair else (64, 128)),
                    f"{tag} M-mode size should be 64 or 128 for 1 CTA cluster MMA."))
        out.append(((op.b_major == "K" and _n_ok(n, lo_k, lo_k)) or (op.b_major == "MN" and _n_ok(n, lo_mn, lo_mn)),
                    f"{tag} N-mode size should be a multiple of {lo_k} between {lo_k} and 256 when B is K major. "
                    f"{tag} N-mode size should be a multiple of {lo_mn} between {lo_mn} and 256 when B is MN major."))
    out.append((ab <= 8 and bb <= 8, ""))                  # the second, message-less assert of the F8F6F4 traits
    return out


def _desc_asserts(op: UmmaOp) -> list:
    """``make_instr_desc``'s format conversions (``to_UMMAFormat``, ``to_CFormat``)."""
    return ([(t in UMMA_FORMATS, "Unknown type for UMMAFormat") for t in (op.a_type, op.b_type)]
            + [(op.c_type in C_FORMATS, "Unknown type for CFormat")])


def cute_rejections(op: UmmaOp) -> list[str]:
    """CuTe's ``static_assert`` messages that fire for ``make_tiled_mma(op{})`` (empty: it compiles).

    >>> cute_rejections(parse_umma_name("SM100_MMA_F16BF16_TS<half_t,half_t,float,128,24,UMMA::Major::MN,UMMA::Major::K>"))
    ['SM100_MMA_F16BF16 N-mode size should be a multiple of 8 between 8 and 256 for M=64, or a multiple of 16 between 16 and 256 for M=128.', "SM100_MMA_F16BF16 A from TMEM can't be transposed"]
    """
    if isinstance(op, BlockScaledOp):
        return blockscaled_rejections(op)
    return [msg for ok, msg in _arch_asserts(op) + _traits_asserts(op) + _desc_asserts(op) if not ok]


# ---------------------------------------------------------------------------
# The atom
# ---------------------------------------------------------------------------


def _tv(peers: int, rows: int, cols: int) -> Layout:
    """``(peer, (rows/peers, cols)) : (rows/peers, (1, rows))``."""
    half = rows // peers
    return Layout((peers, (half, cols)), (half if peers > 1 else 0, (1, rows)))


def instr_desc(op: UmmaOp) -> int:
    """``UMMA::make_instr_desc<a,b,c,M,N,a_major,b_major>()`` (the 32-bit instruction descriptor;
    no negation, saturation or sparsity).

    >>> hex(instr_desc(parse_umma_name("SM100_MMA_F16BF16_SS<half_t,half_t,float,128,256,UMMA::Major::K,UMMA::Major::K>")))
    '0x8400010'
    """
    return (C_FORMATS[op.c_type] << 4 | UMMA_FORMATS[op.a_type] << 7 | UMMA_FORMATS[op.b_type] << 10
            | (op.a_major == "MN") << 15 | (op.b_major == "MN") << 16 | (op.n >> 3) << 17 | (op.m >> 4) << 24)


def umma_mma_atom(name) -> MMAAtom:
    """The :class:`~symlayout.atoms.mma.MMAAtom` of an SM100 UMMA atom (``name`` or a :class:`UmmaOp`).
    Raises :class:`~symlayout.errors.CuteStaticAssert` with CuTe's first message where CuTe
    does not compile it.

    >>> a = umma_mma_atom("SM100_MMA_S8_SS<int8_t,int8_t,int32_t,64,8,UMMA::Major::K,UMMA::Major::K>")
    >>> a.shape_mnk, str(a.b_layout), a.frg_type_a, a.c_regs
    ((64, 8, 32), '(1,(8,32)):(0,(1,8))', 'UMMA::smem_desc<UMMA::Major::K>', Registers(type='uint32_t', count=1))
    """
    op = name if isinstance(name, (UmmaOp, BlockScaledOp)) else parse_umma_name(name)
    if isinstance(op, BlockScaledOp):
        return blockscaled_mma_atom(op)
    bad = cute_rejections(op)
    if bad:
        raise CuteStaticAssert(f"{op.name}: CuTe does not compile it: {bad[0]}", bad[0])
    p = op.cta_group
    m, n, k = op.shape_mnk
    frg_c = f"UMMA::tmem_frg_{p}sm<{op.c_type}>"
    frg_a = (f"UMMA::smem_desc<UMMA::Major::{op.a_major}>" if op.a_source == "smem"
             else f"UMMA::tmem_frg_{p}sm<{op.a_type}>")
    return MMAAtom(
        name=op.name, shape_mnk=(m, n, k), thr_id=Layout(p, 1 if p > 1 else 0),
        a_layout=_tv(p, m, k), b_layout=_tv(p, n, k), c_layout=_tv(p, m, n),
        val_type_d=op.c_type, val_type_a=op.a_type, val_type_b=op.b_type, val_type_c=op.c_type,
        frg_type_a=frg_a, frg_type_b=f"UMMA::smem_desc<UMMA::Major::{op.b_major}>",
        d_regs=None, a_regs=Registers("uint64_t" if op.a_source == "smem" else "uint32_t", 1),
        b_regs=Registers("uint64_t", 1), c_regs=Registers("uint32_t", 1),
        ptx=f"tcgen05.mma.cta_group::{p}.kind::{op.kind}", arch="sm_100a")


def cpp_spelling(op: UmmaOp) -> str:
    """The C++ expression of the atom, as CuTe spells it: the template-id, or for the kind::f8f6f4 SS atoms
    (which CuTe defines through their traits' parameters) ``MMA_Atom<MMA_Traits<SM100_MMA_F8F6F4_SS, ...>>``.

    >>> cpp_spelling(parse_umma_name("SM100_MMA_F8F6F4_SS<float_e4m3_t,float_e4m3_t,float,128,64,UMMA::Major::K,UMMA::Major::K>"))[:53]
    'MMA_Atom<MMA_Traits<SM100_MMA_F8F6F4_SS, float_e4m3_t'
    """
    if op.family == "F8F6F4" and op.a_source == "smem":
        pair = "_2x1SM" if op.cta_group == 2 else ""
        one = "integral_constant<UMMA::ScaleIn,UMMA::ScaleIn::One>"
        return (f"MMA_Atom<MMA_Traits<SM100_MMA_F8F6F4{pair}_SS, {op.a_type}, {op.b_type}, {op.c_type}, C<{op.m}>, "
                f"C<{op.n}>, integral_constant<UMMA::Major,UMMA::Major::{op.a_major}>, "
                f"integral_constant<UMMA::Major,UMMA::Major::{op.b_major}>, {one}, {one}>>")
    return op.name


register_family(is_umma_name, umma_mma_atom)      # get_mma_atom("SM100_MMA_...") builds it here


# ---------------------------------------------------------------------------
# Shared memory: layout atoms, tile_to_mma_shape, make_umma_desc (mma_traits_sm100.hpp)
# ---------------------------------------------------------------------------


class UmmaDescriptorError(AtomError):
    """``UMMA::make_umma_desc`` would not compile (a CuTe ``static_assert``, CuTe's message first)."""


def layout_atom(kind: str, value_type) -> GmmaSmemLayout:
    """``UMMA::Layout_<kind>_Atom<value_type>``: the eight GMMA atoms (UMMA reuses them) and
    ``MN_SW128_32B`` (``Swizzle<2,5,2>`` on bytes over ``(1024,4):(1,1024)`` bits).

    >>> print(layout_atom("MN_SW128_32B", "half_t")), print(layout_atom("K_SW128", "tfloat32_t"))
    Sw<2,5,2> o smem_ptr[16b](unset) o (64,4):(1,64)
    Sw<3,4,3> o smem_ptr[32b](unset) o (8,32):(32,1)
    (None, None)
    """
    key = kind.upper().replace("UMMA::", "").replace("LAYOUT_", "").replace("_ATOM", "")
    if key == "MN_SW128_32B":
        bits = value_type if isinstance(value_type, int) else value_type_bits(value_type)
        return GmmaSmemLayout(Swizzle(2, 5, 2), bits, upcast(Layout((1024, 4), (1, 1024)), bits))
    try:
        return gmma_layout_atom(key, value_type)
    except AtomError as e:
        raise UmmaDescriptorError(str(e).replace("GMMA", "UMMA") + " or MN_SW128_32B") from None


def tile_to_mma_shape(atom: GmmaSmemLayout, mma_tile_shape, order=None) -> GmmaSmemLayout:
    """``UMMA::tile_to_mma_shape(atom, ((MMA_MN,MMA_K), MMAs_MN, MMAs_K, ...))``: tile the atom to
    ``(MMA_MN*MMAs_MN, MMA_K*MMAs_K, ...)`` and divide by the instruction tile, giving the smem
    tensor already in the MMA-partitioned form ``((MMA_MN,MMA_K), MMAs_MN, MMAs_K, ...)``.

    >>> print(tile_to_mma_shape(layout_atom("K_SW128", "half_t"), ((128, 16), 1, 4, 2)))
    Sw<3,4,3> o smem_ptr[16b](unset) o ((128,16),1,4,(1,2)):((64,1),0,16,(0,8192))
    """
    (mn, k), *rest = mma_tile_shape
    mn_shape = ((mn, rest[0]), (k, rest[1])) + tuple(rest[2:])
    tiled = tile_to_shape(atom.layout, mn_shape, order)
    return GmmaSmemLayout(atom.swizzle, atom.bits, tiled_divide(tiled, (mn, k)))


def mn_k_view(lay):
    """The ``(MN, K, PIPE)`` view of a ``((MMA_MN,MMA_K),MMAs_MN,MMAs_K[,PIPE])`` buffer (the same bytes): the
    instruction's rows and the blocks along MN as one mode, the same along K (a Layout, an element-swizzled
    ComposedLayout or a GmmaSmemLayout, kept as it is).

    >>> print(mn_k_view(tile_to_mma_shape(layout_atom("K_SW128", "half_t"), ((128, 16), 1, 4, 2))))
    Sw<3,4,3> o smem_ptr[16b](unset) o ((128,1),(16,4),(1,2)):((64,0),(1,16),(0,8192))
    """
    L = lay.layout if isinstance(lay, GmmaSmemLayout) else lay.inner if getattr(lay, "is_composed", False) else lay
    (s0, s1), (d0, d1) = L.shape[0], L.stride[0]
    view = Layout(((s0, L.shape[1]), (s1, L.shape[2])) + tuple(L.shape[3:]),
                  ((d0, L.stride[1]), (d1, L.stride[2])) + tuple(L.stride[3:]))
    if isinstance(lay, GmmaSmemLayout):
        return GmmaSmemLayout(lay.swizzle, lay.bits, view)
    if getattr(lay, "is_composed", False):
        return lay.map_inner(lambda _L: view)
    return view


class UmmaDesc(NamedTuple):
    """What ``make_umma_desc<Major>`` computes: the layout type, the byte fields and the
    canonical layout it checked (in ``uint128_t`` units); version 1, base offset 0, LBO mode 0."""
    major: str
    layout_type: str
    start_address: int
    leading_byte_offset: int
    stride_byte_offset: int
    canonical: Layout

    def arch(self):
        """The same descriptor as :class:`symlayout.arch.tcgen05.SmemDescriptor` (the 14-bit fields
        truncated as CuTe's bit fields truncate them)."""
        f = {k: (getattr(self, k) >> 4 & 0x3FFF) << 4
             for k in ("start_address", "leading_byte_offset", "stride_byte_offset")}
        return arch_tcgen05.SmemDescriptor(layout_type=self.layout_type, **f)

    @property
    def value(self) -> int:
        """``desc.desc_``.

        >>> hex(make_umma_desc("K", tile_to_mma_shape(layout_atom("K_SW128", "half_t"), ((128, 16), 1, 4))).value)
        '0x4000404000010000'
        """
        return self.arch().encode()


def _umma_layout_type(sw: Swizzle, major: str) -> str:
    """``UMMA::layout_type``: the layout type of the pointer's swizzle, or CuTe's assert message."""
    b, m, s = sw.b, sw.m, sw.s
    if m == 4:
        if s != 3:
            raise UmmaDescriptorError(f"make_umma_desc<{major}>: Expected S = 3 when M == 4. Unsupported layout "
                                      f"swizzle. (got {sw})")
        if not 0 <= b <= 3:
            raise UmmaDescriptorError(f"make_umma_desc<{major}>: Expected B = 0,1,2, or 3 when M == 4. Unsupported "
                                      f"layout swizzle. (got {sw})")
        return ("SWIZZLE_NONE", "SWIZZLE_32B", "SWIZZLE_64B", "SWIZZLE_128B")[b]
    if m == 5:
        if b != 2 or s != 2:
            raise UmmaDescriptorError(f"make_umma_desc<{major}>: Expected B = 2 when M == 5. Unsupported layout "
                                      f"swizzle. (got {sw})" if b != 2 else
                                      f"make_umma_desc<{major}>: Expected S = 2 when M == 5. Unsupported layout "
                                      f"swizzle. (got {sw})")
        return "SWIZZLE_128B_BASE32B"
    raise UmmaDescriptorError(f"make_umma_desc<{major}>: Only 16B and 32B Atoms are supported for UMMA. "
                              f"Unsupported layout swizzle. (got {sw})")


def _fail(major: str, what: str, detail: str) -> UmmaDescriptorError:
    kind = "UMMA_MN" if major == "MN" else "UMMA_K"
    return UmmaDescriptorError(f"make_umma_desc<{major}>: Not a canonical {kind} Layout: {what} ({detail})")


def make_umma_desc(major: str, smem, start_address: int = 0) -> UmmaDesc:
    """``UMMA::make_umma_desc<Major>(tensor)`` for a rank-2 smem tensor ``(MN, K)`` given as a
    :class:`~symlayout.atoms.gmma.GmmaSmemLayout` (the swizzle on the pointer), or a
    tile_to_mma_shape result (its mode 0 is taken, as ``make_fragment_A/B`` does); ``start_address``
    in bytes.  Raises :class:`UmmaDescriptorError` with CuTe's ``static_assert`` message.

    >>> d = make_umma_desc("MN", tile_to_mma_shape(layout_atom("MN_SW128_32B", "half_t"), ((128, 16), 1, 1)))
    >>> d.layout_type, d.leading_byte_offset, d.stride_byte_offset
    ('SWIZZLE_128B_BASE32B', 512, 1024)
    >>> make_umma_desc("K", tile_to_mma_shape(layout_atom("MN_SW128_32B", "half_t"), ((128, 16), 1, 1)))
    Traceback (most recent call last):
     ...
    symlayout.atoms.umma.UmmaDescriptorError: make_umma_desc<K>: SWIZZLE_128B_BASE32B is invalid for Major-K
    """
    major = str(major).upper().replace("UMMA::MAJOR::", "").replace("MAJOR::", "")
    if major not in ("K", "MN"):
        raise UmmaDescriptorError(f"make_umma_desc: major must be K or MN, got {major!r}")
    if getattr(smem, "is_composed", False) or not isinstance(smem, GmmaSmemLayout):
        raise UmmaDescriptorError(f"make_umma_desc<{major}>: {smem} is not a swizzled smem pointer layout "
                                  "('Sw<B,M,S> o smem_ptr[..b](unset) o L'): UMMA Descriptors can only be constructed "
                                  "on smem.")
    L = smem.layout
    if L.rank() > 2:
        L = L[0]                                              # tensor<0> of an MMA-partitioned tensor
    if L.rank() != 2:
        raise UmmaDescriptorError(f"make_umma_desc<{major}>: UMMA Descriptors can only be constructed on rank-2 "
                                  f"tensors. (got {L})")
    lt = _umma_layout_type(smem.swizzle, major)
    u = upcast(L, 128 // smem.bits)                            # recast<uint128_t>
    w, ka = arch_tcgen05._atom(lt)
    if major == "MN":
        canon = logical_divide(u, (Layout(w), Layout(ka)))
        _profile(canon, major, u)
        s00, s01, s10, s11 = canon.stride[0][0], canon.stride[0][1], canon.stride[1][0], canon.stride[1][1]
        if lt != "SWIZZLE_NONE" and s00 != 1:
            raise _fail(major, "Expected stride failure.", f"stride<0,0> {s00}, expected 1, of {canon} in uint128_t")
        if s10 != w:
            raise _fail(major, "Expected stride failure.", f"stride<1,0> {s10}, expected {w}, of {canon} in uint128_t")
        sbo, lbo = (s01, s11) if lt == "SWIZZLE_NONE" else (s11, s01)
    else:
        if lt == "SWIZZLE_128B_BASE32B":
            raise UmmaDescriptorError("make_umma_desc<K>: SWIZZLE_128B_BASE32B is invalid for Major-K")
        if it.product(u.shape[0]) % 8:
            raise _fail(major, "Expected MN-size multiple of 8.", f"MN-size {it.product(u.shape[0])} in uint128_t")
        canon = logical_divide(u, (Layout(8, 1), Layout(2, 1)))
        _profile(canon, major, u)
        s00, s01, s10 = canon.stride[0][0], canon.stride[0][1], canon.stride[1][0]
        if s00 != w:
            raise _fail(major, "Expected stride failure.", f"stride<0,0> {s00}, expected {w}, of {canon} in uint128_t")
        if lt != "SWIZZLE_NONE" and s10 != 1:
            raise _fail(major, "Expected stride failure.", f"stride<1,0> {s10}, expected 1, of {canon} in uint128_t")
        sbo, lbo = s01, s10
    return UmmaDesc(major, lt, start_address, 16 * lbo, 16 * sbo, canon)


def _profile(canon: Layout, major: str, u: Layout) -> None:
    if not it.congruent(canon.shape, ((1, 1), (1, 1))):
        raise _fail(major, "Expected profile failure.", f"canonical layout {canon} of {u} in uint128_t")


def descriptor_fragment(smem: GmmaSmemLayout, major: str, start_address: int = 0) -> tuple[UmmaDesc, Layout]:
    """``make_fragment_A/B`` of an MMA-partitioned smem tensor ``((MMA_MN,MMA_K), MMAs_MN, MMAs_K, ...)``
    (``MakeTensor<UMMA::smem_desc<Major>>``): the descriptor of mode 0 and the fragment layout
    ``replace<0>(recast<uint128_t>(tensor).layout(), 1:0)``; fragment element ``c`` reads through
    ``desc.arch().advanced(layout(c))``.

    >>> d, frag = descriptor_fragment(tile_to_mma_shape(layout_atom("K_SW128", "half_t"), ((128, 16), 1, 4, 2)), "K")
    >>> str(frag), [hex(d.arch().advanced(frag(0, 0, k, (0, 1))).encode()) for k in range(2)]
    ('(1,1,4,(1,2)):(0,0,2,(0,1024))', ['0x4000404000010400', '0x4000404000010402'])
    """
    desc = make_umma_desc(major, smem, start_address)
    u = upcast(smem.layout, 128 // smem.bits)
    return desc, Layout((1,) + tuple(u.shape[1:]), (0,) + tuple(u.stride[1:]))
