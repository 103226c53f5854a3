"""``wgmma.mma_async`` (SM90 warpgroup MMA) as the PTX ISA states it.

Written from the PTX ISA, chapter "Asynchronous Warpgroup Level Matrix Multiply-
Accumulate Instructions" (sections "Register Fragments and Shared Memory Matrix
Layouts", "Shared Memory Matrix Layout", "Strides", "Matrix Descriptor Format"
and "wgmma.mma_async"), not from CuTe; :mod:`symlayout.atoms.gmma` holds CuTe's
view and the tests check one against the other.  The GPU probe
(:mod:`symlayout.harness.probe_sm90`) checks this module against the H200.

Conventions
-----------
* An operand is read as a matrix ``(row, k)``: ``row`` is ``m`` for A
  (``64 x K``) and ``n`` for B (``N x K``), ``k`` the reduction index.
* ``atype`` is the PTX type name: ``f16``, ``bf16``, ``tf32``, ``e4m3``,
  ``e5m2``, ``s8``, ``u8``.  One instruction reduces over 32 bytes of K:
  ``K = 16`` (16-bit), ``8`` (tf32), ``32`` (8-bit).
* *K-major* (``imm-trans = 0``) stores consecutive ``k`` of one row
  contiguously; *MN-major* (``imm-trans = 1``, only for ``f16``/``bf16``)
  stores consecutive rows of one ``k`` contiguously.
* Addresses are byte addresses in the shared window (what ``cvta.to.shared``
  gives); every byte quantity in a descriptor is a multiple of 16.
* A swizzle mode is ``"none"`` (CuTe's INTERLEAVE), ``"32B"``, ``"64B"`` or
  ``"128B"``; its *span* is the bytes of one row of a swizzle atom (16 for
  ``"none"``: the 8 x 16-byte "core matrix").

The canonical layouts (PTX "swizzle layout atom", in bytes, before the swizzle):

=========  ==========================================  =========================================
major      mode ``"none"``                             swizzled (``W = span/16`` chunks per row)
=========  ==========================================  =========================================
K          ``((8, R/8), (T, 2)) : ((16, SBO), (e, LBO))``  ``((8, R/8), K) : ((span, SBO), e)``
MN         ``((T, R/T), (8, K/8)) : ((e, SBO), (16, LBO))`` ``((T, W, R/(TW)), (8, K/8)) : ((e, 16, LBO), (span, SBO))``
=========  ==========================================  =========================================

with ``R`` the rows (64 or N), ``e`` the element bytes and ``T = 16/e`` elements
per 16-byte chunk.  The address read is ``swizzle(start + offset)``, where the
swizzle XORs address bits ``[4, 4+log2 W)`` with bits ``[7, 7+log2 W)``: a
function of the *absolute* shared address, so a pattern repeats every
``8*span`` bytes (``pattern_bytes``) and a layout whose pattern starts elsewhere
needs the descriptor's base offset.

>>> d = MatrixDescriptor(start_address=0x400, leading_byte_offset=16, stride_byte_offset=1024, swizzle="128B")
>>> hex(d.encode())
'0x4000004000010040'
>>> MatrixDescriptor.decode(d.encode()) == d
True
>>> element_address(d, "K", "f16", 1, 0), element_address(d, "K", "f16", 0, 8)   # row 1 chunk 0 -> chunk 1
(1168, 1040)
>>> accumulator_elem(37, 5), a_fragment_elem("f16", 37, 5)
((17, 11), (17, 11))
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

WARPGROUP_SIZE = 128
#: Rows of A (the M of every wgmma shape).
M = 64
#: Bytes of K one dense wgmma reduces over.
K_BYTES = 32

#: Bits of each PTX multiplicand type.
ELEMENT_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}
#: Accumulator (``.dtype``) types allowed for each multiplicand type.
ACCUMULATOR_TYPES = {"f16": ("f16", "f32"), "bf16": ("f32",), "tf32": ("f32",), "e4m3": ("f16", "f32"),
                     "e5m2": ("f16", "f32"), "s8": ("s32",), "u8": ("s32",)}

#: Swizzle modes, PTX names by span.
SWIZZLE_MODES = ("none", "32B", "64B", "128B")
#: The descriptor's 2-bit "swizzling mode" field (bits 62-63).
LAYOUT_TYPE_CODE = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
#: Bytes in one row of a swizzle atom (16 for no swizzle: a core-matrix row).
SWIZZLE_SPAN = {"none": 16, "32B": 32, "64B": 64, "128B": 128}
_ALIASES = {"none": "none", "interleave": "none", "inter": "none", "0": "none", "no": "none",
            "32b": "32B", "b32": "32B", "sw32": "32B", "32": "32B",
            "64b": "64B", "b64": "64B", "sw64": "64B", "64": "64B",
            "128b": "128B", "b128": "128B", "sw128": "128B", "128": "128B"}

#: Mask of the 18-bit shared address space the descriptor fields encode.
ENCODE_MASK = 0x3FFFF


# ---------------------------------------------------------------------------
# Types and shapes (PTX ISA, "wgmma.mma_async": "Matrix Shape", type tables)
# ---------------------------------------------------------------------------


def _check_type(atype: str) -> None:
    if atype not in ELEMENT_BITS:
        raise ValueError(f"unknown wgmma multiplicand type {atype!r}; expected one of {sorted(ELEMENT_BITS)}")


def element_bytes(atype: str) -> int:
    """Bytes of one element of ``atype``.

    >>> element_bytes("tf32"), element_bytes("e4m3")
    (4, 1)
    """
    _check_type(atype)
    return ELEMENT_BITS[atype] // 8


def instruction_k(atype: str) -> int:
    """The K of ``wgmma.mma_async.m64nNkK`` for ``atype``: 32 bytes of elements.

    >>> [instruction_k(t) for t in ("f16", "bf16", "tf32", "e4m3", "s8")]
    [16, 16, 8, 32, 32]
    """
    return K_BYTES // element_bytes(atype)


def supports_mn_major(atype: str) -> bool:
    """Only ``.f16``/``.bf16`` accept ``imm-trans-a/b`` (MN-major smem operands).

    >>> supports_mn_major("bf16"), supports_mn_major("tf32")
    (True, False)
    """
    _check_type(atype)
    return atype in ("f16", "bf16")


def valid_n(atype: str) -> tuple[int, ...]:
    """The N of ``m64nNkK``: multiples of 8 up to 256; for 8-bit integers
    8, 16, 24 and then multiples of 16.

    >>> valid_n("f16")[:4], len(valid_n("f16")), valid_n("s8")[:6]
    ((8, 16, 24, 32), 32, (8, 16, 24, 32, 48, 64))
    """
    _check_type(atype)
    if atype in ("s8", "u8"):
        return (8, 16, 24) + tuple(range(32, 257, 16))
    return tuple(range(8, 257, 8))


def wgmma_ptx(n: int, dtype: str, atype: str, btype: str | None = None, a_in_registers: bool = False) -> str:
    """The instruction text (without operands); raises on an invalid shape/type.

    >>> wgmma_ptx(128, "f32", "bf16")
    'wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16'
    >>> wgmma_ptx(64, "f32", "e4m3", "e5m2")
    'wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2'
    """
    btype = btype or atype
    if n not in valid_n(atype):
        raise ValueError(f"wgmma: N={n} is not valid for .{atype}")
    if dtype not in ACCUMULATOR_TYPES[atype]:
        raise ValueError(f"wgmma: .{dtype} accumulators are not allowed for .{atype}")
    fp8 = ("e4m3", "e5m2")
    ints = ("s8", "u8")
    if btype != atype and not ((atype in fp8 and btype in fp8) or (atype in ints and btype in ints)):
        raise ValueError(f"wgmma: .{atype} x .{btype} is not a valid type pair")
    return f"wgmma.mma_async.sync.aligned.m64n{n}k{instruction_k(atype)}.{dtype}.{atype}.{btype}"


# ---------------------------------------------------------------------------
# Swizzle modes (PTX ISA, "Shared Memory Matrix Layout", "Matrix Descriptor Format")
# ---------------------------------------------------------------------------


def swizzle_mode(name) -> str:
    """Normalize a swizzle-mode name (``"INTERLEAVE"``, ``"B128"``, ``"SW64"``, ``32``...).

    >>> swizzle_mode("INTERLEAVE"), swizzle_mode("B128"), swizzle_mode(32)
    ('none', '128B', '32B')
    """
    key = str(name).strip().lower()
    if key not in _ALIASES:
        raise ValueError(f"unknown swizzle mode {name!r}; expected one of {SWIZZLE_MODES}")
    return _ALIASES[key]


def swizzle_chunks(mode) -> int:
    """``W``: 16-byte chunks in one row of the swizzle atom (1, 2, 4, 8).

    >>> [swizzle_chunks(m) for m in SWIZZLE_MODES]
    [1, 2, 4, 8]
    """
    return SWIZZLE_SPAN[swizzle_mode(mode)] // 16


def pattern_bytes(mode) -> int:
    """Bytes after which the swizzle pattern repeats (8 rows of the span):
    the alignment of a pattern start for base offset 0.

    >>> [pattern_bytes(m) for m in SWIZZLE_MODES]
    [128, 256, 512, 1024]
    """
    return 8 * SWIZZLE_SPAN[swizzle_mode(mode)]


def swizzle_address(mode, addr: int, base_offset: int = 0) -> int:
    """The byte address the hardware accesses for the unswizzled address ``addr``.

    The 16-byte chunk index (bits ``[4, 4+log2 W)``) is XOR-ed with the row phase
    (bits ``[7, 7+log2 W)``), taken from the absolute address; a non-zero base
    offset ``b`` (the pattern started at a 128-byte row ``b`` of the 1024-byte
    period) shifts the phase: ``((addr >> 7) - b)``.  In CuTe's notation the
    base-offset-0 function is ``Swizzle<log2 W, 4, 3>`` on byte addresses.

    >>> [swizzle_address("128B", a) for a in (0x000, 0x080, 0x090, 0x3F0)]
    [0, 144, 128, 896]
    >>> swizzle_address("32B", 0x080), swizzle_address("none", 0x090)
    (144, 144)
    >>> swizzle_address("128B", 0x080, base_offset=1)
    128
    """
    w = swizzle_chunks(mode)
    if w == 1:
        return addr
    phase = ((addr >> 7) - base_offset) & (w - 1)
    return addr ^ (phase << 4)


# ---------------------------------------------------------------------------
# The matrix descriptor (PTX ISA, "Matrix Descriptor Format")
# ---------------------------------------------------------------------------


def descriptor_encode(x: int) -> int:
    """``matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4``.

    >>> descriptor_encode(0x1_0410), descriptor_encode(1024)
    (4161, 64)
    """
    return (x & ENCODE_MASK) >> 4



def address_problems(desc) -> list[str]:
    """The three byte fields of a shared-memory matrix descriptor (wgmma's or tcgen05's), stored ``>> 4`` in
    14 bits: each a multiple of 16 below 2**18.

    >>> address_problems(MatrixDescriptor(0x18, 0, 1 << 18))
    ['start_address 24 is not a multiple of 16', 'stride_byte_offset 262144 does not fit the 18-bit encoding']
    """
    out = []
    for name in ("start_address", "leading_byte_offset", "stride_byte_offset"):
        v = getattr(desc, name)
        if v % 16:
            out.append(f"{name} {v} is not a multiple of 16")
        if not 0 <= v <= ENCODE_MASK:
            out.append(f"{name} {v} does not fit the 18-bit encoding")
    return out

@dataclass(frozen=True)
class MatrixDescriptor:
    """The 64-bit shared-memory matrix descriptor of ``wgmma.mma_async``.

    Fields in bytes (``start_address``, ``leading_byte_offset``,
    ``stride_byte_offset``; each encoded as ``(x & 0x3FFFF) >> 4`` in 14 bits at
    bits 0, 16, 32), ``base_offset`` (3 bits at 49) and ``swizzle`` (the mode,
    2 bits at 62: none 0, 128B 1, 64B 2, 32B 3).

    >>> MatrixDescriptor(0x20, 0x100, 0x80, swizzle="none").fields()
    {'start_address': 2, 'leading_byte_offset': 16, 'stride_byte_offset': 8, 'base_offset': 0, 'layout_type': 0}
    """
    start_address: int
    leading_byte_offset: int
    stride_byte_offset: int
    base_offset: int = 0
    swizzle: str = "none"

    def __post_init__(self):
        object.__setattr__(self, "swizzle", swizzle_mode(self.swizzle))

    def fields(self) -> dict[str, int]:
        """The raw bit fields, as CuTe's ``GmmaDescriptor::bitfield`` names them."""
        return {"start_address": descriptor_encode(self.start_address),
                "leading_byte_offset": descriptor_encode(self.leading_byte_offset),
                "stride_byte_offset": descriptor_encode(self.stride_byte_offset),
                "base_offset": self.base_offset & 0x7,
                "layout_type": LAYOUT_TYPE_CODE[self.swizzle]}

    def encode(self) -> int:
        """The 64-bit value.

        >>> hex(MatrixDescriptor(0x10, 0x20, 0x30, base_offset=5, swizzle="32B").encode())
        '0xc00a000300020001'
        """
        f = self.fields()
        return (f["start_address"] | f["leading_byte_offset"] << 16 | f["stride_byte_offset"] << 32
                | f["base_offset"] << 49 | f["layout_type"] << 62)

    @classmethod
    def decode(cls, value: int) -> "MatrixDescriptor":
        """The descriptor of a 64-bit value (byte fields are the encoded fields times 16).

        >>> MatrixDescriptor.decode(0x4000004000010040).stride_byte_offset
        1024
        """
        if not 0 <= value < 1 << 64:
            raise ValueError(f"a matrix descriptor is a 64-bit value, got {value!r}")
        code = value >> 62
        mode = {c: m for m, c in LAYOUT_TYPE_CODE.items()}[code]
        return cls(start_address=(value & 0x3FFF) << 4, leading_byte_offset=((value >> 16) & 0x3FFF) << 4,
                   stride_byte_offset=((value >> 32) & 0x3FFF) << 4, base_offset=(value >> 49) & 0x7,
                   swizzle=mode)

    def problems(self) -> list[str]:
        """What the PTX ISA forbids in this descriptor (empty when it is well formed).

        >>> MatrixDescriptor(0x18, 0, 1 << 18, swizzle="none", base_offset=2).problems()
        ['start_address 24 is not a multiple of 16', 'stride_byte_offset 262144 does not fit the 18-bit encoding', 'base_offset must be 0 without swizzle']
        """
        out = address_problems(self)
        if not 0 <= self.base_offset <= 7:
            out.append(f"base_offset {self.base_offset} is not in [0, 8)")
        if self.swizzle == "none" and self.base_offset:
            out.append("base_offset must be 0 without swizzle")
        return out


def base_offset_for(pattern_start: int) -> int:
    """``base offset = (pattern start addr >> 7) & 7`` (0 when the pattern starts on
    its own boundary).

    >>> base_offset_for(0x400), base_offset_for(0x480), base_offset_for(0x580)
    (0, 1, 3)
    """
    return (pattern_start >> 7) & 0x7


# ---------------------------------------------------------------------------
# Canonical layouts and the address read for each element
# ---------------------------------------------------------------------------


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@functools.lru_cache(maxsize=4096)
def canonical_layout(major: str, mode, atype: str, rows: int, k: int | None = None,
                     lbo: int = 0, sbo: int = 0) -> tuple[tuple, tuple]:
    """``(shape, stride)`` in bytes, before the swizzle: ``(row, k) -> offset``.

    ``rows`` is 64 for A, N for B; ``k`` defaults to the instruction's K.  The
    row mode comes first, the k mode second; both are hierarchical, evaluated
    colexicographically (:func:`layout_offset`).

    >>> canonical_layout("K", "128B", "f16", 64, lbo=16, sbo=1024)
    (((8, 8), 16), ((128, 1024), 2))
    >>> canonical_layout("K", "none", "f16", 64, lbo=128, sbo=256)
    (((8, 8), (8, 2)), ((16, 256), (2, 128)))
    >>> canonical_layout("MN", "64B", "bf16", 128, lbo=4096, sbo=512)
    (((8, 4, 4), (8, 2)), ((2, 16, 4096), (64, 512)))
    """
    major = _major(major)
    mode = swizzle_mode(mode)
    e = element_bytes(atype)
    k = instruction_k(atype) if k is None else k
    t = 16 // e
    span = SWIZZLE_SPAN[mode]
    if major == "K":
        row_mode = ((8, _ceil_div(rows, 8)), (span, sbo))
        if mode == "none":
            k_mode = ((t, _ceil_div(k, t)), (e, lbo))
        else:
            k_mode = (k, e)
    else:
        if not supports_mn_major(atype):
            raise ValueError(f"MN-major operands are not supported for .{atype} (only .f16/.bf16)")
        k_mode = ((8, _ceil_div(k, 8)), (span, sbo)) if mode != "none" else ((8, _ceil_div(k, 8)), (16, lbo))
        if mode == "none":
            row_mode = ((t, _ceil_div(rows, t)), (e, sbo))
        else:
            w = span // 16
            row_mode = ((t, w, _ceil_div(rows, t * w)), (e, 16, lbo))
    return (row_mode[0], k_mode[0]), (row_mode[1], k_mode[1])


def layout_offset(shape, stride, coord: int) -> int:
    """Evaluate a (nested) shape/stride at a 1-D coordinate, colexicographically.

    >>> layout_offset((8, 8), (128, 1024), 11)
    1408
    """
    if isinstance(shape, tuple):
        off = 0
        for s, d in zip(shape, stride):
            n = _size(s)
            off += layout_offset(s, d, coord % n)
            coord //= n
        return off
    return coord * stride


def _size(shape) -> int:
    if isinstance(shape, tuple):
        p = 1
        for s in shape:
            p *= _size(s)
        return p
    return shape


def _major(major: str) -> str:
    m = str(major).strip().upper().replace("GMMA::MAJOR::", "").replace("MAJOR::", "")
    if m not in ("K", "MN"):
        raise ValueError(f"major must be 'K' or 'MN', got {major!r}")
    return m


def element_offset(major: str, mode, atype: str, row: int, k: int, lbo: int, sbo: int, rows: int = 256) -> int:
    """The unswizzled byte offset of element ``(row, k)`` from the start address.

    >>> element_offset("K", "128B", "f16", 9, 3, 0, 1024)
    1158
    >>> element_offset("MN", "none", "f16", 9, 3, 128, 256)
    306
    """
    shape, stride = canonical_layout(major, mode, atype, rows, lbo=lbo, sbo=sbo)
    return layout_offset(shape[0], stride[0], row) + layout_offset(shape[1], stride[1], k)


def element_address(desc: MatrixDescriptor, major: str, atype: str, row: int, k: int) -> int:
    """The shared byte address ``wgmma.mma_async`` reads for element ``(row, k)``
    of an operand described by ``desc`` (the element's first byte; an element
    never straddles a 16-byte chunk, so its bytes follow it).

    For swizzled K-major operands the leading byte offset is not used (PTX:
    "assumed 1"): one instruction's 32 bytes of K sit inside one swizzle row.

    >>> d = MatrixDescriptor(0x2000, 0, 64, swizzle="32B")
    >>> [element_address(d, "K", "tf32", r, 0) for r in range(4)]
    [8192, 8224, 8256, 8288]
    """
    off = element_offset(major, desc.swizzle, atype, row, k, desc.leading_byte_offset, desc.stride_byte_offset)
    return swizzle_address(desc.swizzle, desc.start_address + off, desc.base_offset)


def operand_addresses(desc: MatrixDescriptor, major: str, atype: str, rows: int) -> list[list[int]]:
    """``[row][k]``: the byte address read for every element of a ``rows x K``
    operand (A: ``rows = 64``; B: ``rows = N``).

    >>> a = operand_addresses(MatrixDescriptor(0, 0, 1024, swizzle="128B"), "K", "f16", 64)
    >>> len(a), len(a[0]), a[8][0], a[1][8]
    (64, 16, 1024, 128)
    """
    kk = instruction_k(atype)
    return [[element_address(desc, major, atype, r, k) for k in range(kk)] for r in range(rows)]


def swizzle_atom_shape(major: str, mode, atype: str) -> tuple[int, int]:
    """``(rows, k)`` in elements of one swizzle layout atom (PTX table "swizzle atom
    layout", given there for 128-bit elements: K-major 8 x W, MN-major W x 8).

    >>> swizzle_atom_shape("K", "128B", "f16"), swizzle_atom_shape("MN", "32B", "bf16"), swizzle_atom_shape("K", "none", "tf32")
    ((8, 64), (16, 8), (8, 4))
    """
    span_elems = SWIZZLE_SPAN[swizzle_mode(mode)] // element_bytes(atype)
    return (8, span_elems) if _major(major) == "K" else (span_elems, 8)


# ---------------------------------------------------------------------------
# Register fragments (PTX ISA, "Register Fragments": "Matrix Fragments for
# wgmma.mma_async.m64nNk16 / k8 / k32")
# ---------------------------------------------------------------------------


def _check_thread(t: int) -> None:
    if not (isinstance(t, int) and 0 <= t < WARPGROUP_SIZE):
        raise ValueError(f"thread must be an int in [0, 128), got {t!r}")


def accumulator_count(n: int) -> int:
    """Accumulator elements per thread: ``N/2`` (``d0 .. d(N/2-1)``).

    >>> accumulator_count(256)
    128
    """
    return n // 2


def accumulator_elem(t: int, i: int) -> tuple[int, int]:
    """``(m, n)`` of accumulator element ``d_i`` of warpgroup thread ``t``.

    Warp ``w = t/32`` owns rows ``16w .. 16w+15``; inside it the layout repeats
    the ``mma.m16n8`` accumulator every 8 columns:
    ``m = 16w + lane/4 + 8*((i/2)%2)``, ``n = 8*(i/4) + 2*(lane%4) + i%2``.
    (For ``.f16`` accumulators element ``i`` is half ``i%2`` of register ``i/2``.)

    >>> [accumulator_elem(0, i) for i in range(5)]
    [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8)]
    """
    _check_thread(t)
    w, lane = divmod(t, 32)
    return 16 * w + lane // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2


def a_fragment_count(atype: str) -> int:
    """Elements of A per thread in the RS form (4 x .b32 registers): ``K/2``.

    >>> a_fragment_count("f16"), a_fragment_count("tf32"), a_fragment_count("e5m2")
    (8, 4, 16)
    """
    return M * instruction_k(atype) // WARPGROUP_SIZE


def a_fragment_elem(atype: str, t: int, i: int) -> tuple[int, int]:
    """``(m, k)`` of element ``a_i`` of the A register fragment of thread ``t``.

    Per warp (rows ``16w..16w+15``) this is the ``mma.m16n8kK`` A fragment of the
    same type: 16-bit ``m = g + 8*((i/2)%2)``, ``k = 2*tig + i%2 + 8*(i/4)``;
    tf32 ``m = g + 8*(i%2)``, ``k = tig + 4*(i/2)``; 8-bit
    ``m = g + 8*((i/4)%2)``, ``k = 4*tig + i%4 + 16*(i/8)``
    (``g = lane/4``, ``tig = lane%4``).

    >>> a_fragment_elem("f16", 5, 7), a_fragment_elem("tf32", 5, 3), a_fragment_elem("e4m3", 5, 13)
    ((9, 11), (9, 5), (9, 21))
    """
    _check_thread(t)
    n = a_fragment_count(atype)
    if not (isinstance(i, int) and 0 <= i < n):
        raise ValueError(f"A fragment element must be in [0, {n}) for .{atype}, got {i!r}")
    w, lane = divmod(t, 32)
    g, tig = lane // 4, lane % 4
    bits = ELEMENT_BITS[atype]
    if bits == 16:
        m, k = g + 8 * ((i // 2) % 2), 2 * tig + i % 2 + 8 * (i // 4)
    elif bits == 32:
        m, k = g + 8 * (i % 2), tig + 4 * (i // 2)
    else:
        m, k = g + 8 * ((i // 4) % 2), 4 * tig + i % 4 + 16 * (i // 8)
    return 16 * w + m, k
