"""CuTe's narrow ``ldmatrix`` / ``stmatrix`` atoms of SM100 (``cute/arch/copy_sm100.hpp``,
``cute/atom/copy_traits_sm100.hpp``) as data: 8-bit transposed loads and stores
(``ldmatrix.m16n16.trans.shared.b8``, ``stmatrix.m16n8.trans.shared.b8``) and the fp4/fp6 loads that widen
each element into a byte (``ldmatrix.m8n16.shared.b8x16.b4x16_p64`` / ``.b6x16_p32``: 16 elements and 64 / 32
bits of padding per 16-byte row, the source format kind::f8f6f4 reads).  Layouts are in bits, as in
``Copy_Traits`` (the 8-bit ``_T`` loads include CuTe's byte shuffle after the instruction).

These instructions need sm_100a / sm_120a (CuTe guards them with ``CUTE_ARCH_LDSM_SM100A_ENABLED``): none
runs on the project's H200, so there is no atom-probe measurement.  The widening loads' lanes and bytes
are also written here from the PTX ISA (:func:`m8n16_dest`, :func:`m8n16_row_lane`, :func:`source_bits`) as
data independent of CuTe's traits (tests/test_narrow_copy_config.py checks they agree).  ``[copy.X] atom``
accepts them
(:func:`~symlayout.atoms.copy.get_copy_op`); their ``ptx_model`` says ``"route": "traits"``: the prover's
lane-to-lane route of the instruction is CuTe's Copy_Traits (the row a value comes from is the SrcLayout
position holding the same reference coordinate), not the PTX-ISA model of the 16-bit forms.

>>> [e["name"] for e in ENTRIES][:2]
['SM100_U8x8_LDSM_T', 'SM100_U8x16_LDSM_T']
"""
from __future__ import annotations


def _model(ptx):
    instr, _, _, shape, xn = ptx.split(".")[:5]
    return {"instr": instr, "shape": shape, "type": "b8", "num": int(xn[1:]), "trans": ".trans." in ptx,
            "route": "traits"}


def _ld(name, src, dst, d_regs, ptx):
    return {"name": name, "kind": "ldsm", "thr_id": "32:1", "src": src, "dst": dst, "ref": "dst",
            "regs": {"S": ["uint128_t", 1], "D": ["uint32_t", d_regs]}, "ptx": ptx, "ptx_model": _model(ptx),
            "arch": "sm_100a"}


def _st(name, src, dst, s_regs, ptx):
    return {"name": name, "kind": "stsm", "thr_id": "32:1", "src": src, "dst": dst, "ref": "src",
            "regs": {"S": ["uint32_t", s_regs], "D": ["uint128_t", 1]}, "ptx": ptx, "ptx_model": _model(ptx),
            "arch": "sm_100a"}


_T8 = "((4,8),(8,2,2{})):((256,8),(1,128,64{}))"
ENTRIES = [
    _ld("SM100_U8x8_LDSM_T", "((2,2,4,2),128):((128,1024,256,0),1)", _T8.format(",2", ",1024"), 2,
        "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8"),
    _ld("SM100_U8x16_LDSM_T", "((2,2,4,2),128):((128,1024,256,2048),1)", _T8.format(",4", ",1024"), 4,
        "ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8"),
] + [
    _ld(f"SM100_SU{b}_DU8x16_x{n}_LDSM_N", src, dst, n,
        f"ldmatrix.sync.aligned.m8n16.x{n}.shared.b8x16.b{b}x16_p{64 if b == 4 else 32}")
    for n, src, dst in [(1, "((8,4),128):((128,0),1)", "(32,32):(32,1)"),
                        (2, "((16,2),128):((128,0),1)", "(32,(32,2)):(32,(1,1024))"),
                        (4, "(32,128):(128,1)", "(32,(32,4)):(32,(1,1024))")]
    for b in (4, 6)
] + [
    _st("SM100_U8x4_STSM_T", _T8.format("", ""), "((8,4),128):((128,0),1)", 1,
        "stmatrix.sync.aligned.m16n8.x1.trans.shared.b8"),
    _st("SM100_U8x8_STSM_T", _T8.format(",2", ",1024"), "((16,2),128):((128,0),1)", 2,
        "stmatrix.sync.aligned.m16n8.x2.trans.shared.b8"),
    _st("SM100_U8x16_STSM_T", _T8.format(",4", ",1024"), "(32,128):(128,1)", 4,
        "stmatrix.sync.aligned.m16n8.x4.trans.shared.b8"),
]
_BY_NAME = {e["name"]: e for e in ENTRIES}


# ---------------------------------------------------------------- the PTX ISA's widening loads, as data
#
# PTX ISA, "Warp-level matrix load instruction: ldmatrix" (ldmatrix.sync.aligned.m8n16.num.b8x16.src_fmt), read
# as data: ".b6x16_p32 format source data is 16 unsigned 6-bit elements with 32 bits padding", ".b4x16_p64 ... 16
# unsigned 4-bit elements with 64 bits padding" per 16-byte row (the elements first is our reading, the order of
# CUDA's CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B / 16U6_ALIGN16B; the sentence does not say); "for matrix shape 8x16, one
# destination register r0 of type .b32 ... where four 8-bit elements are loaded ... For 4-bit or 6-bit data, 8-bit
# element will have 4 bits or 2 bits of padding"; "a group of four consecutive and aligned threads" loads a row,
# "each thread ... loads 4 consecutive columns" (lane ``t``: row ``t/4``, elements ``4*(t%4)`` .. ``+3``); the
# ``i``-th matrix goes to the ``i``-th destination register; "addresses addr0-addr7 correspond to the rows of the
# first matrix, addresses addr8-addr15 ... the second matrix, and so on" (lane ``8i + row``).  CUTLASS
# (cute/atom/mma_traits_sm120.hpp, fp4_shift_A/B): the 4-bit value lands in the low bits of its byte,
# kind::f8f6f4 reads it from bits 2..5, so the collective shifts it after the copy.

_SOURCE_FORMAT = {4: ".b4x16_p64", 6: ".b6x16_p32"}


def source_bits(name: str) -> int | None:
    """The element width a widening ``ldmatrix`` reads from shared memory (4: ``.b4x16_p64``, 6:
    ``.b6x16_p32``), None for every other atom.

    >>> source_bits("SM100_SU6_DU8x16_x2_LDSM_N"), source_bits("SM75_U32x4_LDSM_N")
    (6, None)
    """
    e = narrow_entry(name)
    if e is None or ".b8x16.b" not in e["ptx"]:
        return None
    return int(e["ptx"].split(".b8x16.b")[1][0])


def source_format(bits: int) -> str:
    """The PTX source format of a widening load of ``bits``-bit elements."""
    return _SOURCE_FORMAT[bits]


def source_bit(bits: int, slot: int) -> int:
    """The shared-memory bit a widening load of ``bits``-bit elements reads element ``slot`` of a row
    sequence from: row ``slot/16`` of 16 bytes (128 bits), then ``bits*(slot%16)`` inside it.

    >>> source_bit(4, 17), source_bit(6, 1)
    (132, 6)
    """
    return 128 * (slot // 16) + bits * (slot % 16)


def m8n16_dest(lane: int, reg: int, byte: int) -> tuple[int, int, int]:
    """``(matrix, row, element)`` of the 8x16 matrices whose element lands in ``byte`` of destination
    register ``reg`` of ``lane`` (``ldmatrix.m8n16``, PTX ISA fragment figure)."""
    return reg, lane // 4, 4 * (lane % 4) + byte


def m8n16_row_lane(matrix: int, row: int) -> int:
    """The lane whose address names ``row`` of ``matrix`` (lanes ``8*matrix`` .. ``+7``)."""
    return 8 * matrix + row


def narrow_copy_names() -> list[str]:
    return list(_BY_NAME)


def narrow_entry(name: str) -> dict | None:
    """A fresh catalog entry of one of these atoms (CuTe's name), None for another name."""
    e = _BY_NAME.get(name.replace("cute::", "").strip())
    return None if e is None else dict(e)
