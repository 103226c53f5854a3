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

from ..errors import AtomError, CuteStaticAssert
from ..algebra.layout import Layout
from .mma import MMAAtom
from .types import Registers, canonical_type, value_type_bits

#: The families modelled: (``tcgen05.mma`` kind, the A/B element width CuTe's traits require;
#: ``None``: at most 8 bits).
FAMILIES = {"F16BF16": ("f16", 16), "TF32": ("tf32", 32), "S8": ("i8", 8), "F8F6F4": ("f8f6f4", None)}

#: ``UMMA::to_UMMAFormat<T>`` (the A/B format codes of the instruction descriptor) for the
#: types ``types.json`` knows; kind::f8f6f4's fp6/fp4 8-bit containers are not modelled yet.
UMMA_FORMATS = {"half_t": 0, "bfloat16_t": 1, "tfloat32_t": 2, "uint8_t": 0, "int8_t": 1,
                "float_e4m3_t": 0, "float_e5m2_t": 1}
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


def _major(text: str, name: str) -> str:
    m = text.strip().replace("cute::", "").replace("UMMA::Major::", "").replace("Major::", "")
    if m not in ("K", "MN"):
        raise UmmaAtomError(f"{name}: a major must be UMMA::Major::K or UMMA::Major::MN, got {text.strip()!r}")
    return m


def _int_arg(text: str, what: str, name: str) -> int:
    t = text.strip()
    if not re.fullmatch(r"-?\d+", t):
        raise UmmaAtomError(f"{name}: {what} must be an integer, got {t!r}")
    return int(t)


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
                  a_type=types[0], b_type=types[1], c_type=types[2], m=_int_arg(args[3], "M", name),
                  n=_int_arg(args[4], "N", name), a_major=_major(args[5], name), b_major=_major(args[6], name))


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
    op = name if isinstance(name, UmmaOp) else parse_umma_name(name)
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
