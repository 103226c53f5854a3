"""CuTe's narrow ``ldmatrix`` / ``stmatrix`` atoms of SM100 (``cute/arch/copy_sm100.hpp``,
``cute/atom/copy_traits_sm100.hpp``) as data: 8-bit transposed loads and stores
(``ldmatrix.m16n16.trans.shared.b8``, ``stmatrix.m16n8.trans.shared.b8``) and the fp4/fp6 loads that widen
each element into a byte (``ldmatrix.m8n16.shared.b8x16.b4x16_p64`` / ``.b6x16_p32``: 16 elements and 64 / 32
bits of padding per 16-byte row, the source format kind::f8f6f4 reads).  Layouts are in bits, as in
``Copy_Traits`` (the 8-bit ``_T`` loads include CuTe's byte shuffle after the instruction).

These instructions need sm_100a / sm_120a (CuTe guards them with ``CUTE_ARCH_LDSM_SM100A_ENABLED``): none
runs on the project's H200, so there is no atom-probe measurement.  Every atom's lanes and bytes are also
written here from the PTX ISA as data independent of CuTe's traits: the widening loads (:func:`m8n16_dest`,
:func:`m8n16_row_lane`, :func:`source_bits`; tests/test_narrow_copy_config.py checks they agree) and the 8-bit
transposed forms (:func:`m16n16_dest`, :func:`m16n8_src`, :func:`isa_route`; tests/test_narrow_ptx.py).  ``[copy.X] atom``
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


# ---------------------------------------------------------------- the PTX ISA's 8-bit transposed forms, as data
#
# PTX ISA 9.x, 9.7.14.5.15 "Warp-level matrix load instruction: ldmatrix": "For matrix shape 16x16, two destination
# registers r0 and r1 of type .b32 must be specified and in each register four 8-bit elements are loaded"; "An
# entire row of the matrix can be loaded by a group of four consecutive and aligned threads. Each thread in a warp
# loads 4 consecutive columns across 2 rows" (Figure 105, "ldmatrix fragment layout for one 16x16 matrix with 8-bit
# elements": lane t holds row t/4 in r0 and row t/4 + 8 in r1, columns 4*(t%4) .. +3 -- the figure is an image, this
# is our reading of it); "Optional qualifier .trans indicates that the matrix is loaded in column-major format.
# However, for 16x16 matrices, .trans is mandatory" (element (row, col) lies at byte ``row`` of the 16-byte smem row
# ``col``); "Each component of the vector expression holds a fragment from the corresponding matrix" (matrix i: r2i,
# r2i+1); its 16 smem rows are addressed by lanes 16i .. 16i+15 (the rows of the first matrix come first, as in the
# address table: our reading for 16 rows per matrix).
# 9.7.14.5.16 "Warp-level matrix store instruction: stmatrix": "For 16x8 matrix shape, each of the 32 threads in the
# warp provides four elements of data per matrix. Each element in the source operand r is of type .b32 and contains
# four 8 bit elements e0, e1, e2, e3 with e0 and e3 containing the LSB and MSB respectively of register r" (Figure
# 108, "stmatrix fragment layout for one 16x8 matrix with 8 bit elements": lane t's e0, e1 at row t/4, columns
# 2*(t%4), +1; e2, e3 at row t/4 + 8 -- our reading of the image); ".trans is mandatory" for 16x8 (column-major:
# the 8 columns are the 8 smem rows, addressed by lanes 8i .. 8i+7, "addr0-addr7 correspond to the rows of the first
# matrix").  Nothing here was measured: the instructions need sm_100a (no such device in the project).


def m16n16_dest(lane: int, reg: int, byte: int) -> tuple[int, int, int]:
    """``(matrix, row, col)`` of the 16x16 matrix element ``ldmatrix.m16n16.b8`` puts in ``byte`` of
    destination register ``reg`` of ``lane`` (PTX ISA 9.7.14.5.15, Figure 105).

    >>> m16n16_dest(5, 3, 2)
    (1, 9, 6)
    """
    return reg // 2, lane // 4 + 8 * (reg % 2), 4 * (lane % 4) + byte


def m16n16_row_lane(matrix: int, row: int) -> int:
    """The lane whose address names smem row ``row`` of ``matrix`` in ``ldmatrix.m16n16`` (16 rows each)."""
    return 16 * matrix + row


def m16n8_src(lane: int, reg: int, byte: int) -> tuple[int, int, int]:
    """``(matrix, row, col)`` of the 16x8 matrix element that ``stmatrix.m16n8.b8`` takes from ``byte``
    (``e0`` .. ``e3``) of source register ``reg`` of ``lane`` (PTX ISA 9.7.14.5.16, Figure 108).

    >>> m16n8_src(5, 3, 2)
    (3, 9, 2)
    """
    return reg, lane // 4 + 8 * (byte // 2), 2 * (lane % 4) + byte % 2


def transposed(row_lane, matrix: int, row: int, col: int) -> tuple[int, int]:
    """``.trans`` (column-major): element ``(row, col)`` lies at byte ``row`` of smem row ``col``, whose
    address lane is ``row_lane(matrix, col)``; returns ``(address lane, byte in the row)``."""
    return row_lane(matrix, col), row


def u8_ldsm_t_shuffle(reg: int, byte: int) -> tuple[int, int]:
    """CuTe's byte shuffle after ``ldmatrix.m16n16.trans.b8`` in ``SM100_U8x{8,16}_LDSM_T``
    (``dst0 = {tmp0.x, tmp0.y, tmp1.x, tmp1.y}``, ``dst1 = {tmp0.z, tmp0.w, tmp1.z, tmp1.w}``, per matrix):
    the ``(instruction register, byte)`` that byte ``byte`` of CuTe's register ``reg`` holds.

    >>> u8_ldsm_t_shuffle(1, 2)
    (1, 2)
    """
    return 2 * (reg // 2) + byte // 2, 2 * (reg % 2) + byte % 2


def isa_route(name: str, lane: int, reg: int, byte: int) -> tuple[int, int]:
    """The PTX-ISA model of an 8-bit ``SM100_U8*_LDSM_T`` / ``_STSM_T`` atom: ``(address lane, byte in its
    16-byte smem row)`` of ``byte`` of register ``reg`` of ``lane`` (CuTe's registers: after its shuffle)."""
    e = _BY_NAME[name]
    if e["kind"] == "ldsm":
        return transposed(m16n16_row_lane, *m16n16_dest(lane, *u8_ldsm_t_shuffle(reg, byte)))
    return transposed(m8n16_row_lane, *m16n8_src(lane, reg, byte))


def narrow_copy_names() -> list[str]:
    return list(_BY_NAME)


def narrow_entry(name: str) -> dict | None:
    """A fresh catalog entry of one of these atoms (CuTe's name), None for another name."""
    e = _BY_NAME.get(name.replace("cute::", "").strip())
    return None if e is None else dict(e)
