"""Hardware facts about warp-level data-movement and MMA instructions, from the PTX ISA.

Written from the PTX ISA (NVIDIA, "Parallel Thread Execution ISA", 8.x/9.x; sections are
cited by title because their numbers move between releases), *not*
from CuTe/CUTLASS traits, so that symlayout's atom tables can be checked against
an independent statement of what the hardware does (and :mod:`symlayout.harness`
checks *this* module against the GPU, model-free).

Pure Python, integers only: no sympy, z3 or numpy import, so the GPU harness can
import it on a machine without z3.

Conventions
-----------
* ``lane`` is ``%laneid`` in ``[0, 32)``.
* PTX names ``groupID = %laneid >> 2`` and ``threadID_in_group = %laneid % 4``
  (PTX ISA, "Warp-level Matrix Fragment" sections of ``mma``); :func:`group_id`
  and :func:`thread_id_in_group` are those two formulas.
* ldmatrix / stmatrix (``.m8n8``, ``.b16``): a matrix element is
  ``(matrix j, row r, col c)`` of the 8x8 matrix ``j`` *as laid out in shared
  memory*: row ``r`` is the 16-byte row whose address lane ``8*j + r`` supplies,
  ``c`` the b16 element inside that row.  A destination/source register slot is
  ``(lane, reg, half)`` with ``reg`` the index in the register vector (= ``j``)
  and ``half`` 0 for the low 16 bits, 1 for the high 16 bits.
* mma: a fragment element is ``(lane, i)`` where ``i`` counts the *elements* of
  the operand vector in register order: register ``i // elems_per_reg``, position
  ``i % elems_per_reg`` inside it, position 0 in the lowest bits.  The PTX ISA
  names these ``a0, a1, ...``, ``b0, ...``, ``c0, ...``.  A is M x K (``(m, k)``),
  B is K x N (``(k, n)``), C and D are M x N (``(m, n)``); C and D share one
  layout.  Only ``.row.col`` (A row-major, B column-major) exists for all shapes
  but ``m8n8k4``.

>>> ldmatrix_dest(4, False, 5, 2, 1)     # lane 5, register 2, high half
(2, 1, 3)
>>> mma_a_elem("m16n8k16", "f16", 5, 2)  # groupID 1, threadID_in_group 1, a2
(9, 2)
"""
from __future__ import annotations

from typing import NamedTuple

WARP_SIZE = 32

# ---------------------------------------------------------------------------
# Common lane decompositions
# ---------------------------------------------------------------------------


def _check_lane(lane: int) -> None:
    if not (isinstance(lane, int) and 0 <= lane < WARP_SIZE):
        raise ValueError(f"lane must be an int in [0, 32), got {lane!r}")


def group_id(lane: int) -> int:
    """PTX ISA ``groupID = %laneid >> 2`` (the mma fragment sections).

    >>> [group_id(l) for l in (0, 3, 4, 31)]
    [0, 0, 1, 7]
    """
    _check_lane(lane)
    return lane >> 2


def thread_id_in_group(lane: int) -> int:
    """PTX ISA ``threadID_in_group = %laneid % 4`` (the mma fragment sections).

    >>> [thread_id_in_group(l) for l in (0, 3, 4, 31)]
    [0, 3, 0, 3]
    """
    _check_lane(lane)
    return lane % 4


# ---------------------------------------------------------------------------
# ldmatrix / stmatrix  (PTX ISA, "Warp Level Matrix Multiply-Accumulate
# Instructions" chapter: "Warp-level matrix load instruction: ldmatrix" and
# "Warp-level matrix store instruction: stmatrix"; .m8n8 .b16 only)
# ---------------------------------------------------------------------------

#: Valid ``.num`` values (.x1, .x2, .x4).
LDMATRIX_NUMS = (1, 2, 4)
#: Bytes in one row of an 8x8 b16 matrix; each row address must be aligned to it.
LDMATRIX_ROW_BYTES = 16
#: b16 elements in one row.
LDMATRIX_ROW_ELEMS = 8


def _check_num(num: int) -> None:
    if num not in LDMATRIX_NUMS:
        raise ValueError(f"ldmatrix/stmatrix .num must be 1, 2 or 4 (.x1/.x2/.x4), got {num!r}")


def ldmatrix_address_lanes(num: int) -> list[list[int]]:
    """Lanes whose addresses are used, per matrix: lanes ``8j..8j+7`` give the
    row addresses of matrix ``j`` (row ``r`` from lane ``8j + r``).

    For ``.x1`` only lanes 0-7 and for ``.x2`` only lanes 0-15 supply addresses;
    the other lanes' addresses are not read (PTX ISA, ldmatrix, table "threads
    that hold the addresses").

    >>> ldmatrix_address_lanes(2)
    [[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]]
    """
    _check_num(num)
    return [[8 * j + r for r in range(8)] for j in range(num)]


def ldmatrix_row_provider(num: int, matrix: int, row: int) -> int:
    """The lane whose address is the start of ``row`` of ``matrix``: ``8*matrix + row``.

    >>> ldmatrix_row_provider(4, 3, 5)
    29
    """
    _check_num(num)
    if not (0 <= matrix < num and 0 <= row < 8):
        raise ValueError(f"matrix must be in [0, {num}) and row in [0, 8), got {(matrix, row)}")
    return 8 * matrix + row


def ldmatrix_row_aligned(address: int) -> bool:
    """Whether ``address`` may start an ldmatrix/stmatrix row (16-byte aligned).

    >>> ldmatrix_row_aligned(0x130), ldmatrix_row_aligned(0x138)
    (True, False)
    """
    return address % LDMATRIX_ROW_BYTES == 0


def ldmatrix_dest(num: int, trans: bool, lane: int, reg: int, half: int) -> tuple[int, int, int]:
    """Which ``(matrix, row, col)`` lands in register ``reg``, 16-bit ``half`` of ``lane``.

    Register ``reg`` receives matrix ``j = reg``.  Without ``.trans`` a lane gets
    row ``lane // 4``, columns ``2*(lane % 4)`` (low half) and ``+1`` (high half);
    ``.trans`` delivers the transposed matrix, i.e. row and column swap.

    >>> ldmatrix_dest(1, False, 1, 0, 1)
    (0, 0, 3)
    >>> ldmatrix_dest(1, True, 1, 0, 1)
    (0, 3, 0)
    """
    _check_num(num)
    _check_lane(lane)
    if not (0 <= reg < num and half in (0, 1)):
        raise ValueError(f"reg must be in [0, {num}) and half in (0, 1), got {(reg, half)}")
    r, c = lane // 4, 2 * (lane % 4) + half
    if trans:
        r, c = c, r
    return reg, r, c


def ldmatrix_source(num: int, trans: bool, matrix: int, row: int, col: int) -> tuple[int, int, int]:
    """Inverse of :func:`ldmatrix_dest`: the ``(lane, reg, half)`` that receives
    element ``(row, col)`` of ``matrix``.

    >>> ldmatrix_source(4, False, 2, 1, 3)
    (5, 2, 1)
    >>> ldmatrix_source(4, True, 0, 3, 0)
    (1, 0, 1)
    """
    _check_num(num)
    if not (0 <= matrix < num and 0 <= row < 8 and 0 <= col < 8):
        raise ValueError(f"bad element {(matrix, row, col)} for .x{num}")
    if trans:
        row, col = col, row
    return 4 * row + col // 2, matrix, col % 2


def stmatrix_address_lanes(num: int) -> list[list[int]]:
    """Lanes supplying the row addresses stmatrix stores to (same rule as ldmatrix).

    >>> stmatrix_address_lanes(1)
    [[0, 1, 2, 3, 4, 5, 6, 7]]
    """
    return ldmatrix_address_lanes(num)


def stmatrix_dest(num: int, trans: bool, lane: int, reg: int, half: int) -> tuple[int, int, int]:
    """Where stmatrix (sm_90) writes register ``reg``, ``half`` of ``lane``: the
    ``(matrix, row, col)`` of the 8x8 matrix in shared memory, row ``row`` being
    the address of lane ``8*matrix + row``.  The fragment is ldmatrix's, mirrored.

    >>> stmatrix_dest(2, False, 9, 1, 1)
    (1, 2, 3)
    >>> stmatrix_dest(2, True, 9, 1, 1)
    (1, 3, 2)
    """
    return ldmatrix_dest(num, trans, lane, reg, half)


def stmatrix_source(num: int, trans: bool, matrix: int, row: int, col: int) -> tuple[int, int, int]:
    """Inverse of :func:`stmatrix_dest`: the register slot ``(lane, reg, half)``
    whose value stmatrix writes to ``(matrix, row, col)``.

    >>> stmatrix_source(1, False, 0, 7, 7)
    (31, 0, 1)
    """
    return ldmatrix_source(num, trans, matrix, row, col)


# ---------------------------------------------------------------------------
# mma.sync fragments (PTX ISA, "Matrix multiply-accumulate operation using mma
# instruction" -> "Matrix Fragments for mma.mMnNkK ..." subsections; the
# formulas below are transcribed in the ISA's own groupID/threadID_in_group terms)
# ---------------------------------------------------------------------------

#: Element bit widths of the PTX types used here.
TYPE_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64,
             "s8": 8, "u8": 8, "s32": 32, "e4m3": 8, "e5m2": 8}


class MmaSpec(NamedTuple):
    """Shape and per-lane fragment sizes of one ``mma.sync`` variant.

    ``*_regs`` count PTX operand registers per lane (32-bit, or 64-bit for f64),
    ``*_elems`` the matrix elements per lane, ``batches`` the number of
    independent products a warp computes (4 for sm_70 ``m8n8k4`` f16, else 1).

    >>> s = mma_spec("m16n8k16", "f16")
    >>> (s.m, s.n, s.k, s.a_regs, s.b_regs, s.c_regs, s.ctype)
    (16, 8, 16, 4, 2, 4, 'f32')
    """
    shape: str
    atype: str
    ctype: str
    m: int
    n: int
    k: int
    a_regs: int
    b_regs: int
    c_regs: int
    a_elems: int
    b_elems: int
    c_elems: int
    batches: int
    min_sm: int
    ptx_section: str


# (shape, atype) -> (allowed ctypes (first = default), min sm, PTX ISA section title)
_MMA_TABLE: dict[tuple[str, str], tuple[tuple[str, ...], int, str]] = {
    ("m16n8k16", "f16"): (("f32", "f16"), 80, "Matrix Fragments for mma.m16n8k16 with floating point type"),
    ("m16n8k16", "bf16"): (("f32",), 80, "Matrix Fragments for mma.m16n8k16 with floating point type"),
    ("m16n8k8", "f16"): (("f32", "f16"), 75, "Matrix Fragments for mma.m16n8k8 (.f16/.bf16)"),
    ("m16n8k8", "bf16"): (("f32",), 80, "Matrix Fragments for mma.m16n8k8 (.f16/.bf16)"),
    ("m16n8k8", "tf32"): (("f32",), 80, "Matrix Fragments for mma.m16n8k8 (.tf32)"),
    ("m16n8k4", "tf32"): (("f32",), 80, "Matrix Fragments for mma.m16n8k4"),
    ("m16n8k16", "s8"): (("s32",), 80, "Matrix Fragments for mma.m16n8k16 with integer type"),
    ("m16n8k16", "u8"): (("s32",), 80, "Matrix Fragments for mma.m16n8k16 with integer type"),
    ("m16n8k32", "s8"): (("s32",), 80, "Matrix Fragments for mma.m16n8k32"),
    ("m16n8k32", "u8"): (("s32",), 80, "Matrix Fragments for mma.m16n8k32"),
    # .f16 accumulators for FP8 were added in PTX ISA 8.7 (sm_89); same C fragment as .f32, packed
    ("m16n8k32", "e4m3"): (("f32", "f16"), 89, "Matrix Fragments for mma.m16n8k32"),
    ("m16n8k32", "e5m2"): (("f32", "f16"), 89, "Matrix Fragments for mma.m16n8k32"),
    ("m8n8k16", "s8"): (("s32",), 75, "Matrix Fragments for mma.m8n8k16"),
    ("m8n8k16", "u8"): (("s32",), 75, "Matrix Fragments for mma.m8n8k16"),
    ("m8n8k4", "f64"): (("f64",), 80, "Matrix Fragments for mma.m8n8k4 with .f64 floating point type"),
    ("m8n8k4", "f16"): (("f32", "f16"), 70, "Matrix Fragments for mma.m8n8k4 with .f16 floating point type"),
}

#: Every (shape, atype, ctype) combination this module describes.
MMA_VARIANTS: tuple[tuple[str, str, str], ...] = tuple(
    (shape, atype, ct) for (shape, atype), (cts, _, _) in _MMA_TABLE.items() for ct in cts)


def _parse_shape(shape: str) -> tuple[int, int, int]:
    s = shape.lstrip("m")
    m, rest = s.split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


def mma_spec(shape: str, atype: str, ctype: str | None = None) -> MmaSpec:
    """The :class:`MmaSpec` of ``mma.sync.aligned.<shape>`` with A/B type ``atype``.

    ``ctype`` (the C/D type) defaults to f32 for floating A/B (f64 for f64) and
    s32 for integer A/B.

    >>> mma_spec("m16n8k32", "e4m3").a_regs, mma_spec("m8n8k4", "f64").c_regs
    (4, 2)
    """
    try:
        cts, min_sm, section = _MMA_TABLE[(shape, atype)]
    except KeyError:
        raise ValueError(f"no mma.sync variant {shape} with A/B type {atype!r} "
                         f"(known: {sorted(_MMA_TABLE)})") from None
    ctype = cts[0] if ctype is None else ctype
    if ctype not in cts:
        raise ValueError(f"mma {shape}.{atype}: C/D type must be one of {cts}, got {ctype!r}")
    m, n, k = _parse_shape(shape)
    batches = 4 if (shape, atype) == ("m8n8k4", "f16") else 1
    lanes_per_batch = WARP_SIZE // batches
    a_elems = m * k // lanes_per_batch
    b_elems = k * n // lanes_per_batch
    c_elems = m * n // lanes_per_batch
    ab_bits = TYPE_BITS[atype]
    c_bits = TYPE_BITS[ctype]
    a_regs = a_elems * ab_bits // 32 if ab_bits < 64 else a_elems
    b_regs = b_elems * ab_bits // 32 if ab_bits < 64 else b_elems
    c_regs = c_elems * c_bits // 32 if c_bits < 64 else c_elems
    return MmaSpec(shape, atype, ctype, m, n, k, a_regs, b_regs, c_regs,
                   a_elems, b_elems, c_elems, batches, min_sm, section)


def mma_reg_counts(shape: str, atype: str, ctype: str | None = None) -> tuple[int, int, int]:
    """Registers per lane for A, B and C (=D): ``(a_regs, b_regs, c_regs)``.

    >>> mma_reg_counts("m16n8k16", "f16", "f16")
    (4, 2, 2)
    >>> mma_reg_counts("m16n8k8", "tf32")
    (4, 2, 4)
    """
    s = mma_spec(shape, atype, ctype)
    return s.a_regs, s.b_regs, s.c_regs


def mma_elems_per_reg(atype_or_ctype: str) -> int:
    """Elements packed in one operand register (low bits first); f64 uses 64-bit registers.

    >>> mma_elems_per_reg("f16"), mma_elems_per_reg("e4m3"), mma_elems_per_reg("f64")
    (2, 4, 1)
    """
    bits = TYPE_BITS[atype_or_ctype]
    return 1 if bits >= 32 else 32 // bits


def _check_i(i: int, count: int, what: str) -> None:
    if not (isinstance(i, int) and 0 <= i < count):
        raise ValueError(f"{what} element index must be in [0, {count}), got {i!r}")


def mma_batch(shape: str, atype: str, lane: int) -> int:
    """Which independent product ``lane`` takes part in: the quad-pair index for
    sm_70 ``m8n8k4`` f16 (lanes 0-3 with 16-19 are quad-pair 0, 4-7 with 20-23
    quad-pair 1, ...), else 0.

    >>> [mma_batch("m8n8k4", "f16", l) for l in (0, 5, 17, 31)]
    [0, 1, 0, 3]
    """
    _check_lane(lane)
    if (shape, atype) == ("m8n8k4", "f16"):
        return (lane % 16) // 4
    mma_spec(shape, atype)
    return 0


def mma_a_elem(shape: str, atype: str, lane: int, i: int, *, alayout: str = "row") -> tuple[int, int]:
    """``(m, k)`` of A held by element ``a_i`` of ``lane``.

    ``alayout`` matters only for ``m8n8k4`` f16 (``"row"`` or ``"col"``); for
    that shape the coordinates are inside the lane's quad-pair product
    (:func:`mma_batch`).

    >>> [mma_a_elem("m16n8k16", "f16", 0, i) for i in range(8)]
    [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]
    >>> [mma_a_elem("m16n8k8", "tf32", 0, i) for i in range(4)]
    [(0, 0), (8, 0), (0, 4), (8, 4)]
    """
    spec = mma_spec(shape, atype)
    _check_lane(lane)
    _check_i(i, spec.a_elems, "A")
    g, t = lane >> 2, lane % 4  # groupID, threadID_in_group
    key = (shape, atype)
    if shape == "m16n8k16" and atype in ("f16", "bf16"):
        # row = groupID for a_i, 0<=i<2 || 4<=i<6; groupID+8 otherwise
        # col = threadID_in_group*2 + (i & 0x1) for i<4; ... + 8 for i>=4
        return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)
    if shape == "m16n8k8" and atype in ("f16", "bf16"):
        # row = groupID for a0,a1; groupID+8 for a2,a3; col = threadID_in_group*2 + (i & 0x1)
        return g + 8 * (i >> 1), 2 * t + (i & 1)
    if key == ("m16n8k8", "tf32"):
        # row = groupID for a0,a2; groupID+8 for a1,a3
        # col = threadID_in_group for a0,a1; threadID_in_group+4 for a2,a3
        return g + 8 * (i & 1), t + 4 * (i >> 1)
    if key == ("m16n8k4", "tf32"):
        # row = groupID for a0; groupID+8 for a1; col = threadID_in_group
        return g + 8 * i, t
    if key == ("m8n8k4", "f64"):
        # row = groupID; col = threadID_in_group
        return g, t
    if shape == "m8n8k16":
        # row = groupID; col = threadID_in_group*4 + i
        return g, 4 * t + i
    if shape == "m16n8k16":  # s8/u8
        # row = groupID for a0..a3, groupID+8 for a4..a7; col = threadID_in_group*4 + (i & 0x3)
        return g + 8 * (i >> 2), 4 * t + (i & 3)
    if shape == "m16n8k32":  # s8/u8/e4m3/e5m2
        # row = groupID for 0<=i<4 || 8<=i<12; groupID+8 otherwise
        # col = threadID_in_group*4 + (i & 0x3) for i<8; + 16 for i>=8
        return g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)
    if key == ("m8n8k4", "f16"):
        hi = 4 * (lane >= 16)
        if alayout == "row":   # row = %laneid % 4 (+4 for lanes >= 16), col = i
            return lane % 4 + hi, i
        if alayout == "col":   # row = i % 4 (+4 for lanes >= 16), col = %laneid % 4
            return i + hi, lane % 4
        raise ValueError(f"alayout must be 'row' or 'col', got {alayout!r}")
    raise AssertionError(key)  # pragma: no cover - table and formulas out of sync


def mma_b_elem(shape: str, atype: str, lane: int, i: int, *, blayout: str = "col") -> tuple[int, int]:
    """``(k, n)`` of B held by element ``b_i`` of ``lane`` (``atype`` is the B type too).

    ``blayout`` matters only for ``m8n8k4`` f16 (``"col"`` or ``"row"``).

    >>> [mma_b_elem("m16n8k16", "bf16", 5, i) for i in range(4)]
    [(2, 1), (3, 1), (10, 1), (11, 1)]
    >>> [mma_b_elem("m16n8k8", "tf32", 5, i) for i in range(2)]
    [(1, 1), (5, 1)]
    """
    spec = mma_spec(shape, atype)
    _check_lane(lane)
    _check_i(i, spec.b_elems, "B")
    g, t = lane >> 2, lane % 4
    key = (shape, atype)
    if shape == "m16n8k16" and atype in ("f16", "bf16"):
        # row = threadID_in_group*2 + (i & 0x1) for i<2; +8 for i>=2; col = groupID
        return 2 * t + (i & 1) + 8 * (i >> 1), g
    if shape == "m16n8k8" and atype in ("f16", "bf16"):
        # row = threadID_in_group*2 + i; col = groupID
        return 2 * t + i, g
    if key == ("m16n8k8", "tf32"):
        # row = threadID_in_group for b0; threadID_in_group+4 for b1; col = groupID
        return t + 4 * i, g
    if key in (("m16n8k4", "tf32"), ("m8n8k4", "f64")):
        # row = threadID_in_group; col = groupID
        return t, g
    if shape in ("m8n8k16", "m16n8k16"):  # s8/u8
        # row = threadID_in_group*4 + i; col = groupID
        return 4 * t + i, g
    if shape == "m16n8k32":
        # row = threadID_in_group*4 + (i & 0x3) for i<4; +16 for i>=4; col = groupID
        return 4 * t + (i & 3) + 16 * (i >> 2), g
    if key == ("m8n8k4", "f16"):
        hi = 4 * (lane >= 16)
        if blayout == "col":   # row = i, col = %laneid % 4 (+4 for lanes >= 16)
            return i, lane % 4 + hi
        if blayout == "row":   # row = %laneid % 4, col = i (+4 for lanes >= 16)
            return lane % 4, i + hi
        raise ValueError(f"blayout must be 'row' or 'col', got {blayout!r}")
    raise AssertionError(key)  # pragma: no cover


def mma_c_elem(shape: str, atype: str, lane: int, i: int, *, ctype: str | None = None) -> tuple[int, int]:
    """``(m, n)`` of C (and D) held by element ``c_i`` of ``lane``.

    >>> [mma_c_elem("m16n8k16", "f16", 6, i) for i in range(4)]
    [(1, 4), (1, 5), (9, 4), (9, 5)]
    >>> [mma_c_elem("m8n8k4", "f64", 6, i) for i in range(2)]
    [(1, 4), (1, 5)]
    """
    spec = mma_spec(shape, atype, ctype)
    _check_lane(lane)
    _check_i(i, spec.c_elems, "C/D")
    g, t = lane >> 2, lane % 4
    if (shape, atype) == ("m8n8k4", "f16"):
        hi = 4 * (lane >= 16)
        if spec.ctype == "f16":
            # row = %laneid % 4 (+4 for lanes >= 16); col = i
            return lane % 4 + hi, i
        # .f32: row = X (+4 for lanes >= 16), X = (%laneid & 0b1) + (i & 0b10)
        #       col = (i & 0b100) + (%laneid & 0b10) + (i & 0b1)
        return (lane & 1) + (i & 2) + hi, (i & 4) + (lane & 2) + (i & 1)
    if spec.m == 16:
        # row = groupID for c0,c1; groupID+8 for c2,c3; col = threadID_in_group*2 + (i & 0x1)
        return g + 8 * (i >> 1), 2 * t + (i & 1)
    # m8n8k4 f64, m8n8k16: row = groupID; col = threadID_in_group*2 + i
    return g, 2 * t + i


def mma_fragment_table(shape: str, atype: str, operand: str, ctype: str | None = None,
                       *, alayout: str = "row", blayout: str = "col") -> dict[tuple[int, int], tuple[int, ...]]:
    """The whole fragment of ``operand`` ("A", "B" or "C") as
    ``{(lane, i): (batch, row, col)}``.

    >>> t = mma_fragment_table("m16n8k8", "f16", "B")
    >>> len(t), t[(0, 1)]
    (64, (0, 1, 0))
    """
    spec = mma_spec(shape, atype, ctype)
    out: dict[tuple[int, int], tuple[int, ...]] = {}
    count = {"A": spec.a_elems, "B": spec.b_elems, "C": spec.c_elems}[operand]
    for lane in range(WARP_SIZE):
        b = mma_batch(shape, atype, lane)
        for i in range(count):
            if operand == "A":
                rc = mma_a_elem(shape, atype, lane, i, alayout=alayout)
            elif operand == "B":
                rc = mma_b_elem(shape, atype, lane, i, blayout=blayout)
            else:
                rc = mma_c_elem(shape, atype, lane, i, ctype=spec.ctype)
            out[(lane, i)] = (b,) + tuple(rc)
    return out


# ---------------------------------------------------------------------------
# cp.async (PTX ISA, "Data Movement and Conversion Instructions: cp.async";
# cp-size is 4, 8 or 16, .cg only with 16; alignment per "Addresses as Operands")
# ---------------------------------------------------------------------------

#: Valid ``cp-size`` values in bytes.
CP_ASYNC_SIZES = (4, 8, 16)


def cp_async_aligned(src: int, dst: int, cp_size: int) -> bool:
    """Whether a ``cp.async`` of ``cp_size`` bytes may use these addresses:
    both must be multiples of ``cp_size`` (naturally aligned).

    >>> cp_async_aligned(0x100, 0x40, 16), cp_async_aligned(0x104, 0x40, 8)
    (True, False)
    """
    if cp_size not in CP_ASYNC_SIZES:
        raise ValueError(f"cp.async cp-size must be 4, 8 or 16, got {cp_size!r}")
    return src % cp_size == 0 and dst % cp_size == 0


def cp_async_cache_ops(cp_size: int) -> tuple[str, ...]:
    """Cache operators allowed for ``cp_size``: ``.ca`` always, ``.cg`` only for 16 bytes.

    >>> cp_async_cache_ops(8), cp_async_cache_ops(16)
    (('ca',), ('ca', 'cg'))
    """
    if cp_size not in CP_ASYNC_SIZES:
        raise ValueError(f"cp.async cp-size must be 4, 8 or 16, got {cp_size!r}")
    return ("ca", "cg") if cp_size == 16 else ("ca",)


def cp_async_fill(cp_size: int, src_size: int | None = None) -> tuple[int, int]:
    """``(bytes copied from src, bytes zero-filled)`` for ``cp.async ... cp-size, src-size``:
    the first ``src_size`` bytes are copied and the rest of the ``cp_size`` bytes
    of ``dst`` are zero (``src_size > cp_size`` is undefined behaviour).

    >>> cp_async_fill(16), cp_async_fill(16, 4), cp_async_fill(8, 0)
    ((16, 0), (4, 12), (0, 8))
    """
    if cp_size not in CP_ASYNC_SIZES:
        raise ValueError(f"cp.async cp-size must be 4, 8 or 16, got {cp_size!r}")
    if src_size is None:
        return cp_size, 0
    if not (0 <= src_size <= cp_size):
        raise ValueError(f"cp.async src-size must be in [0, {cp_size}], got {src_size!r}")
    return src_size, cp_size - src_size
