"""``tcgen05`` (SM100 fifth-generation tensor core) as the PTX ISA states it: the shared-memory
matrix descriptor, the address the MMA reads for each operand element, and Tensor Memory.

Written from the PTX ISA, chapter "TensorCore 5th Generation Family Instructions" (``tcgen05``),
not from CuTe (the ``tcgen05.ld/st`` per-thread maps, which the ISA gives as figures, were read off
CuTe's traits and are checked against them); :mod:`symlayout.atoms.umma` holds CuTe's view and the
tests check one against the other.  Sections:

* "Shared Memory Descriptor" (``#tcgen05-shared-memory-descriptor``, the table "Shared memory
  descriptor layout"): the 64-bit descriptor of ``tcgen05.mma``'s A/B operands;
* "Shared Memory Matrix Layouts" / the canonical layouts shared with ``wgmma``
  (:mod:`symlayout.arch.gmma`), plus the 128-byte swizzle with 32-byte atomicity;
* "Tensor Memory" ("Tensor Memory Addressing", "Allocation", "Access restrictions"):
  128 lanes x 512 columns of 32-bit cells per CTA, ``tcgen05.alloc`` column counts, and which
  lanes a warp may reach (:func:`warp_lanes`).

No Blackwell GPU was available: nothing here is hardware-confirmed; CuTe C++ is the oracle.

>>> d = SmemDescriptor(start_address=0x400, leading_byte_offset=16, stride_byte_offset=1024, layout_type="SWIZZLE_128B")
>>> hex(d.encode())
'0x4000404000010040'
>>> SmemDescriptor.decode(d.encode()) == (d, [])
True
>>> SmemDescriptor.decode(0x4000004000010040)[1]          # a Hopper descriptor: no version bits
['version (bits 46-48) is 0, must be 0b001 (a descriptor without the Blackwell version, e.g. ported from wgmma)']
"""
from __future__ import annotations

from dataclasses import dataclass

from .gmma import address_problems

# ---------------------------------------------------------------------------
# The shared memory descriptor (PTX ISA, tcgen05 "Shared Memory Descriptor")
# ---------------------------------------------------------------------------

#: The 3-bit "swizzling mode" field (bits 61-63); 3, 5 and 7 are not defined.
LAYOUT_TYPES = {"SWIZZLE_NONE": 0, "SWIZZLE_128B_BASE32B": 1, "SWIZZLE_128B": 2, "SWIZZLE_64B": 4,
                "SWIZZLE_32B": 6}
_LT_NAME = {v: k for k, v in LAYOUT_TYPES.items()}
#: Byte swizzle ``(B, M, S)`` of each mode (CuTe's ``Swizzle<B,M,S>`` on byte addresses): bits
#: ``[M, M+B)`` XOR-ed with bits ``[M+S, M+S+B)``; 32-byte atomicity moves 32-byte units.
SWIZZLE_BITS = {"SWIZZLE_NONE": (0, 4, 3), "SWIZZLE_32B": (1, 4, 3), "SWIZZLE_64B": (2, 4, 3),
                "SWIZZLE_128B": (3, 4, 3), "SWIZZLE_128B_BASE32B": (2, 5, 2)}
#: ``(name, first bit, width)`` of every field; the bits in no field are reserved (must be 0).
FIELDS = (("start_address", 0, 14), ("leading_byte_offset", 16, 14), ("stride_byte_offset", 32, 14),
          ("version", 46, 3), ("base_offset", 49, 3), ("lbo_mode", 52, 1), ("layout_type", 61, 3))
#: The fixed value of bits 46-48 ("fixed constant value of 0b001").
VERSION = 1
#: Byte quantities are encoded as ``(x & 0x3FFFF) >> 4`` (18-bit shared addresses, 16-byte units).
ENCODE_MASK = 0x3FFFF


def layout_type_name(x) -> str:
    """Normalize a layout type (CuTe's ``UMMA::LayoutType`` name, its code, or a short form).

    >>> layout_type_name(2), layout_type_name("128B_BASE32B"), layout_type_name("UMMA::LayoutType::SWIZZLE_32B")
    ('SWIZZLE_128B', 'SWIZZLE_128B_BASE32B', 'SWIZZLE_32B')
    """
    if isinstance(x, int):
        if x not in _LT_NAME:
            raise ValueError(f"layout type code {x} is not defined (0, 1, 2, 4, 6)")
        return _LT_NAME[x]
    key = str(x).strip().upper().replace("UMMA::LAYOUTTYPE::", "")
    key = key if key.startswith("SWIZZLE_") else "SWIZZLE_" + key
    if key not in LAYOUT_TYPES:
        raise ValueError(f"unknown layout type {x!r}; expected one of {sorted(LAYOUT_TYPES)}")
    return key


def reserved_mask() -> int:
    """The bits of the descriptor in no field (14-15, 30-31, 53-60).

    >>> hex(reserved_mask())
    '0x1fe00000c000c000'
    """
    used = 0
    for _name, lo, w in FIELDS:
        used |= ((1 << w) - 1) << lo
    return ~used & (1 << 64) - 1


@dataclass(frozen=True)
class SmemDescriptor:
    """The 64-bit ``tcgen05`` shared-memory matrix descriptor, byte quantities in bytes.

    ``start_address``, ``leading_byte_offset``, ``stride_byte_offset`` (14 bits each at 0, 16, 32,
    in 16-byte units); ``version`` (3 bits at 46, must be 1); ``base_offset`` (3 bits at 49);
    ``lbo_mode`` (bit 52: 0 relative byte offset, 1 absolute address); ``layout_type`` (3 bits at 61).
    """
    start_address: int
    leading_byte_offset: int
    stride_byte_offset: int
    layout_type: str = "SWIZZLE_NONE"
    base_offset: int = 0
    lbo_mode: int = 0
    version: int = VERSION

    def __post_init__(self):
        object.__setattr__(self, "layout_type", layout_type_name(self.layout_type))

    def fields(self) -> dict:
        """The raw field values (byte quantities ``>> 4``), named as CuTe's ``SmemDescriptor`` names them.

        >>> SmemDescriptor(0x20, 0x100, 0x80).fields()["leading_byte_offset"]
        16
        """
        return {"start_address": (self.start_address & ENCODE_MASK) >> 4,
                "leading_byte_offset": (self.leading_byte_offset & ENCODE_MASK) >> 4,
                "stride_byte_offset": (self.stride_byte_offset & ENCODE_MASK) >> 4,
                "version": self.version, "base_offset": self.base_offset, "lbo_mode": self.lbo_mode,
                "layout_type": LAYOUT_TYPES[self.layout_type]}

    def encode(self) -> int:
        """The 64-bit value; a field wider than its bits is refused (it would overlap the next field).

        >>> hex(SmemDescriptor(0, 0, 64, "SWIZZLE_32B").encode())
        '0xc000400400000000'
        """
        f = self.fields()
        value = 0
        for name, lo, w in FIELDS:
            if not 0 <= f[name] < 1 << w:
                raise ValueError(f"descriptor field {name} = {f[name]} does not fit its {w} bits "
                                 f"[{lo}, {lo + w}): it would overlap the next field")
            value |= f[name] << lo
        return value

    @classmethod
    def decode(cls, value: int) -> tuple["SmemDescriptor", list]:
        """``(descriptor, problems)`` of a hand-written 64-bit value, field by field; ``problems`` names
        every reserved bit set, a wrong version, an undefined layout type and the other PTX rules
        (:meth:`problems`).

        >>> d, bad = SmemDescriptor.decode(0x4000404000010040 | 1 << 30)
        >>> d.layout_type, bad
        ('SWIZZLE_128B', ['reserved bits set: 30'])
        >>> SmemDescriptor.decode(0xE000404000010040)[1]
        ['layout type (bits 61-63) is 7, not a defined swizzling mode (0, 1, 2, 4, 6)']
        """
        if not 0 <= value < 1 << 64:
            raise ValueError(f"a shared memory descriptor is a 64-bit value, got {value!r}")
        raw = {name: (value >> lo) & ((1 << w) - 1) for name, lo, w in FIELDS}
        problems = []
        stray = value & reserved_mask()
        if stray:
            problems.append("reserved bits set: " + ", ".join(str(b) for b in range(64) if stray >> b & 1))
        lt = raw["layout_type"]
        if lt not in _LT_NAME:
            problems.append(f"layout type (bits 61-63) is {lt}, not a defined swizzling mode (0, 1, 2, 4, 6)")
            lt = 0
        d = cls(start_address=raw["start_address"] << 4, leading_byte_offset=raw["leading_byte_offset"] << 4,
                stride_byte_offset=raw["stride_byte_offset"] << 4, layout_type=_LT_NAME[lt],
                base_offset=raw["base_offset"], lbo_mode=raw["lbo_mode"], version=raw["version"])
        return d, problems + d.problems()

    def problems(self) -> list:
        """What the PTX ISA forbids in this descriptor (empty when it is well formed).

        >>> SmemDescriptor(0x18, 0, 1 << 18, version=0).problems()
        ['start_address 24 is not a multiple of 16', 'stride_byte_offset 262144 does not fit the 18-bit encoding', 'version (bits 46-48) is 0, must be 0b001 (a descriptor without the Blackwell version, e.g. ported from wgmma)']
        """
        out = address_problems(self)
        if self.version != VERSION:
            out.append(f"version (bits 46-48) is {self.version}, must be 0b001 (a descriptor without the "
                       "Blackwell version, e.g. ported from wgmma)")
        if not 0 <= self.base_offset <= 7:
            out.append(f"base_offset {self.base_offset} is not in [0, 8)")
        if self.layout_type == "SWIZZLE_NONE" and self.base_offset:
            out.append("base_offset must be 0 without swizzle")
        if self.lbo_mode:
            out.append("lbo_mode 1 (absolute leading-dimension address) is not modelled")
        return out

    def advanced(self, units: int) -> "SmemDescriptor":
        """CuTe's ``DescriptorIterator + units``: ``units`` (16-byte) added to the low 32 bits of the
        value, so a start address past 14 bits carries into the leading byte offset."""
        value = self.encode()
        lo = (value + units) & 0xFFFFFFFF
        d, _ = SmemDescriptor.decode((value & ~0xFFFFFFFF) | lo)
        return d


def swizzle_address(layout_type, addr: int, base_offset: int = 0) -> int:
    """The byte address read for the unswizzled address ``addr``: bits ``[M, M+B)`` XOR the row
    phase, bits ``[M+S, M+S+B)`` of the absolute address less the base offset (the 128-byte row the
    pattern starts at).

    >>> swizzle_address("SWIZZLE_128B", 0x090), swizzle_address("SWIZZLE_128B_BASE32B", 0x0A0)
    (128, 128)
    >>> swizzle_address("SWIZZLE_128B_BASE32B", 0x080), swizzle_address("SWIZZLE_NONE", 0x090)
    (160, 144)
    """
    b, m, s = SWIZZLE_BITS[layout_type_name(layout_type)]
    if b == 0:
        return addr
    phase = ((addr >> (m + s)) - base_offset) & ((1 << b) - 1)
    return addr ^ (phase << m)


# ---------------------------------------------------------------------------
# Canonical layouts: the byte offset the MMA reads for operand element (row, k)
# ---------------------------------------------------------------------------


def _atom(layout_type: str) -> tuple[int, int]:
    """``(W, KA)``: 16-byte chunks in one swizzle row, and rows (of k) in one MN-major atom."""
    b, m, _s = SWIZZLE_BITS[layout_type]
    if layout_type == "SWIZZLE_128B_BASE32B":
        return 8, 4
    return 1 << b, 8


def element_offset(desc: SmemDescriptor, major: str, elem_bytes: int, row: int, k: int) -> int:
    """The unswizzled byte offset from the start address of operand element ``(row, k)`` (row: m
    of A, n of B), ``T = 16/elem_bytes`` elements per 16-byte chunk, ``W`` chunks per swizzle row:

    * K-major, no swizzle: ``(row%8)*16 + (row/8)*SBO + (k%T)*e + (k/T)*LBO``;
    * K-major, swizzled: ``(row%8)*16W + (row/8)*SBO + k*e``;
    * MN-major, no swizzle: ``(row%T)*e + (row/T)*SBO + (k%8)*16 + (k/8)*LBO``;
    * MN-major, swizzled: ``(row%T)*e + ((row/T)%W)*16 + (row/(TW))*LBO + (k%KA)*16W + (k/KA)*SBO``
      (``KA = 4`` rows for the 32-byte-atomic 128-byte swizzle, else 8).

    >>> d = SmemDescriptor(0, 128, 256)
    >>> element_offset(d, "K", 2, 9, 3), element_offset(d, "MN", 2, 9, 3)
    (278, 306)
    """
    lt = desc.layout_type
    lbo, sbo = desc.leading_byte_offset, desc.stride_byte_offset
    e = elem_bytes
    t = 16 // e
    w, ka = _atom(lt)
    if major == "K":
        if lt == "SWIZZLE_128B_BASE32B":
            raise ValueError("SWIZZLE_128B_BASE32B is only defined for MN-major operands")
        if lt == "SWIZZLE_NONE":
            return (row % 8) * 16 + (row // 8) * sbo + (k % t) * e + (k // t) * lbo
        return (row % 8) * 16 * w + (row // 8) * sbo + k * e
    if major != "MN":
        raise ValueError(f"major must be 'K' or 'MN', got {major!r}")
    if lt == "SWIZZLE_NONE":
        return (row % t) * e + (row // t) * sbo + (k % 8) * 16 + (k // 8) * lbo
    return (row % t) * e + ((row // t) % w) * 16 + (row // (t * w)) * lbo + (k % ka) * 16 * w + (k // ka) * sbo


def element_address(desc: SmemDescriptor, major: str, elem_bytes: int, row: int, k: int) -> int:
    """The shared byte address ``tcgen05.mma`` reads for operand element ``(row, k)`` through ``desc``.

    >>> d = SmemDescriptor(0x2000, 16, 1024, "SWIZZLE_128B")
    >>> [element_address(d, "K", 2, r, 0) for r in range(3)], element_address(d, "K", 2, 1, 8)
    ([8192, 8336, 8480], 8320)
    """
    off = element_offset(desc, major, elem_bytes, row, k)
    return swizzle_address(desc.layout_type, desc.start_address + off, desc.base_offset)


# ---------------------------------------------------------------------------
# Tensor Memory (PTX ISA, tcgen05 "Tensor Memory": addressing, allocation, access restrictions)
# ---------------------------------------------------------------------------

#: Lanes (rows, "data-path lanes") of a CTA's Tensor Memory; every cell is 32 bits.
LANES = 128
#: Columns of a CTA's Tensor Memory per architecture: the capacity is data.  sm_100/sm_103:
#: 512 (PTX ISA "Tensor Memory"; CUTLASS ``Sm100TmemCapacityColumns``).  sm_107: 576 as issue 28
#: states it -- not confirmed by a primary source here.
CAPACITY_COLUMNS = {"sm_100": 512, "sm_100a": 512, "sm_103": 512, "sm_103a": 512, "sm_107": 576}
#: ``tcgen05.alloc``/``dealloc`` ``nCols``: a power of two in [32, 512] (PTX ISA "tcgen05.alloc").
ALLOC_MIN, ALLOC_MAX = 32, 512


def tmem_address(lane: int, column: int) -> int:
    """A Tensor Memory address: lane in bits 31-16, column in bits 15-0 ("Tensor Memory Addressing").

    >>> hex(tmem_address(32, 128)), split_tmem_address(0x200080)
    ('0x200080', (32, 128))
    """
    return lane << 16 | column


def split_tmem_address(addr: int) -> tuple[int, int]:
    """``(lane, column)`` of a Tensor Memory address."""
    return addr >> 16, addr & 0xFFFF


def alloc_problems(columns, arch: str = "sm_100") -> list:
    """What ``tcgen05.alloc`` forbids for ``nCols = columns`` on ``arch`` (empty: legal).

    >>> alloc_problems(384), alloc_problems(512), alloc_problems(16)
    (['nCols 384 is not a power of two'], [], ['nCols 16 is below the minimum 32'])
    """
    if isinstance(columns, bool) or not isinstance(columns, int):
        return [f"nCols must be an integer, got {columns!r}"]
    if arch not in CAPACITY_COLUMNS:
        raise ValueError(f"unknown architecture {arch!r}; known: {sorted(CAPACITY_COLUMNS)}")
    out = []
    if columns < ALLOC_MIN:
        out.append(f"nCols {columns} is below the minimum {ALLOC_MIN}")
    if columns > ALLOC_MAX:
        out.append(f"nCols {columns} is above the maximum {ALLOC_MAX}")
    if columns > 0 and columns & (columns - 1):
        out.append(f"nCols {columns} is not a power of two")
    if columns > CAPACITY_COLUMNS[arch]:
        out.append(f"nCols {columns} exceeds the {CAPACITY_COLUMNS[arch]} columns of {arch}")
    return out


def warp_lanes(warp: int) -> range:
    """The lanes warp ``warp`` may access with ``tcgen05.ld/st``: warp ``w`` of a warpgroup reaches
    lanes ``32*(w%4) .. 32*(w%4)+31`` (PTX ISA "Access restrictions": the Tensor Memory is split in
    four 32-lane chunks, one per warp of the warpgroup).

    >>> warp_lanes(5)
    range(32, 64)
    """
    base = 32 * (warp % 4)
    return range(base, base + 32)


# ---------------------------------------------------------------------------
# tcgen05.ld / tcgen05.st: which lane and column each register of each thread holds
# (PTX ISA "Data Movement Shape" and "Matrix fragments for shape .32x32b / .16x64b / .16x128b /
# .16x256b / .16x32bx2"; the per-thread maps are checked against CuTe's Copy_Traits)
# ---------------------------------------------------------------------------

#: ``shape -> (lanes accessed, .b32 registers per .num)``.
LD_SHAPES = {"32x32b": (32, 1), "16x64b": (16, 1), "16x128b": (16, 2), "16x256b": (16, 4), "16x32bx2": (16, 1)}
#: ``.num`` values: ``.x1 .. .x128``.
NUMS = (1, 2, 4, 8, 16, 32, 64, 128)
#: At most 128 registers per thread.
MAX_REGISTERS = 128


def ld_registers(shape: str, num: int) -> int:
    """``.b32`` registers per thread of ``tcgen05.ld/st.<shape>.x<num>`` (the same with ``.pack::16b``:
    two 16-bit columns share a register).

    >>> ld_registers("16x256b", 32), ld_registers("32x32b", 128)
    (128, 128)
    """
    if shape not in LD_SHAPES:
        raise ValueError(f"unknown tcgen05.ld/st shape {shape!r}; expected one of {sorted(LD_SHAPES)}")
    if num not in NUMS:
        raise ValueError(f".num must be one of x1..x128, got x{num}")
    regs = LD_SHAPES[shape][1] * num
    if regs > MAX_REGISTERS:
        raise ValueError(f"tcgen05.ld/st.{shape}.x{num} needs {regs} registers per thread (at most 128)")
    return regs


def ld_cell(shape: str, num: int, thread: int, reg: int, half: int = 0, pack16: bool = False,
            half_split: int | None = None) -> tuple[int, int]:
    """``(lane, column)`` relative to the instruction's address of register ``reg`` of warp thread
    ``thread`` (with ``.pack::16b``: the column of 16-bit half ``half``; each 32-bit register packs
    two adjacent columns).  ``half_split`` is ``.16x32bx2``'s column offset of the upper half-warp
    (CuTe uses ``num``).

    * ``32x32b``: lane ``t``, column ``r``;
    * ``16x64b``: lane ``t/4 + 8*(t%2)``, column ``(t/2)%2 + 2r``;
    * ``16x128b``: lane ``t/4 + 8*(r%2)``, column ``t%4 + 4*(r/2)``;
    * ``16x256b``: lane ``t/4 + 8*((r/2)%2)``, column ``2*(t%4) + r%2 + 8*(r/4)``;
    * ``16x32bx2``: lane ``t%16``, column ``r + half_split*(t/16)``.

    >>> ld_cell("16x64b", 1, 1, 0), ld_cell("16x256b", 1, 5, 3), ld_cell("32x32b", 1, 7, 0, half=1, pack16=True)
    ((8, 0), (9, 3), (7, 1))
    """
    regs = ld_registers(shape, num)
    if not (0 <= thread < 32 and 0 <= reg < regs and half in (0, 1)):
        raise ValueError(f"thread {thread}, register {reg}, half {half} out of range for {shape}.x{num}")
    return ld_cells(shape, num, thread, reg, half, pack16, half_split)


def ld_cells(shape: str, num: int, t, r, half=0, pack16: bool = False, half_split: int | None = None):
    """:func:`ld_cell` without the range checks, on integers or element by element on integer arrays
    (the same arithmetic).

    >>> ld_cells("16x256b", 1, 5, 3)
    (9, 3)
    """
    if shape == "32x32b":
        lane, col = t, r
    elif shape == "16x64b":
        lane, col = t // 4 + 8 * (t % 2), (t // 2) % 2 + 2 * r
    elif shape == "16x128b":
        lane, col = t // 4 + 8 * (r % 2), t % 4 + 4 * (r // 2)
    elif shape == "16x256b":
        lane, col = t // 4 + 8 * ((r // 2) % 2), 2 * (t % 4) + r % 2 + 8 * (r // 4)
    else:
        lane, col = t % 16, r + (num if half_split is None else half_split) * (t // 16)
    return (lane, 2 * col + half) if pack16 else (lane, col)


def ld_columns(shape: str, num: int, pack16: bool = False) -> int:
    """Columns one ``tcgen05.ld/st`` covers (per lane).

    >>> ld_columns("32x32b", 16), ld_columns("16x256b", 4), ld_columns("16x64b", 2, pack16=True)
    (16, 32, 8)
    """
    regs = ld_registers(shape, num)
    cols = {cell[1] for t in range(32) for r in range(regs)
            for cell in [ld_cell(shape, num, t, r, h, pack16) for h in ((0, 1) if pack16 else (0,))]}
    return max(cols) + 1


def access_problems(warp: int, lane: int, shape: str) -> list:
    """The access rule for warp ``warp`` issuing a ``tcgen05.ld/st.<shape>`` at lane ``lane``: every
    lane it touches must be in the warp's 32-lane chunk (:func:`warp_lanes`).

    >>> access_problems(4, 0, "32x32b"), access_problems(5, 0, "32x32b")
    ([], ['warp 5 reaches lanes 32..63 only; 32x32b at lane 0 touches lanes 0..31'])
    >>> access_problems(1, 48, "16x64b"), access_problems(1, 56, "16x64b")
    ([], ['warp 1 reaches lanes 32..63 only; 16x64b at lane 56 touches lanes 56..71'])
    """
    n = LD_SHAPES[shape][0]
    ok = warp_lanes(warp)
    if lane < ok.start or lane + n > ok.stop:
        return [f"warp {warp} reaches lanes {ok.start}..{ok.stop - 1} only; {shape} at lane {lane} touches "
                f"lanes {lane}..{lane + n - 1}"]
    return []


# ---------------------------------------------------------------------------
# The accumulator D of tcgen05.mma in Tensor Memory (PTX ISA, tcgen05 "Data Path Layout
# Organization", Layouts A-G: which lane and column holds D(m, n) of one instruction, per CTA)
# ---------------------------------------------------------------------------

#: ``(M of the instruction, cta_group, .ws) -> layout letter`` (dense A; the sparse ``M = 128``,
#: ``cta_group::2`` form is Layout C, organised as F).
DATAPATHS = {(256, 2, False): "A", (128, 2, False): "B", (128, 1, False): "D", (64, 1, True): "E",
             (64, 1, False): "F", (32, 1, True): "G"}
#: Rows of D each CTA holds, per layout.
DATAPATH_ROWS = {"A": 128, "B": 64, "C": 64, "D": 128, "E": 64, "F": 64, "G": 32}


def datapath(m: int, cta_group: int, ws: bool = False, sparse: bool = False) -> str:
    """The data-path layout letter of a ``tcgen05.mma`` of ``M = m`` on ``cta_group`` CTAs.

    >>> datapath(128, 1), datapath(64, 1), datapath(256, 2), datapath(128, 2), datapath(128, 2, sparse=True)
    ('D', 'F', 'A', 'B', 'C')
    """
    if sparse and (m, cta_group) == (128, 2):
        return "C"
    key = (m, cta_group, ws)
    if key not in DATAPATHS:
        raise ValueError(f"no tcgen05.mma data-path layout for M = {m}, cta_group::{cta_group}{', .ws' if ws else ''}")
    return DATAPATHS[key]


def datapath_cell(layout: str, cols: int, m: int, n: int) -> tuple[int, int]:
    """``(lane, column)`` relative to the instruction's D address of ``D(m, n)`` (``m``: the CTA's row,
    ``n < cols``, ``cols`` = N) in data-path layout ``layout``:

    * A, D: one row per lane, ``(m, n)``;
    * B, E: 64 rows, the column halves folded onto the two 64-lane halves, ``(m + 64*(n / (N/2)), n % (N/2))``;
    * C, F: 64 rows, 16 per warp on the half data path, ``(m%16 + 32*(m/16), n)``;
    * G: 32 rows, the column quarters folded onto the four 32-lane chunks, ``(m + 32*(n / (N/4)), n % (N/4))``.

    >>> datapath_cell("D", 64, 5, 7), datapath_cell("F", 64, 17, 3), datapath_cell("B", 128, 3, 70)
    ((5, 7), (33, 3), (67, 6))
    """
    rows = DATAPATH_ROWS[layout]
    if not (0 <= m < rows and 0 <= n < cols):
        raise ValueError(f"D({m}, {n}) is outside the {rows} x {cols} of data-path layout {layout}")
    return datapath_cells(layout, cols, m, n)


#: The copies of a row of A each data-path layout reads (the lane groups D's columns are folded onto).
A_ROW_COPIES = {"A": 1, "B": 2, "C": 1, "D": 1, "E": 2, "F": 1, "G": 4}


def a_lanes(layout: str, m, copy=0):
    """The lane (relative to the instruction's A address) from which ``tcgen05.mma`` with A in Tensor
    Memory (``.kind::* [d], [a], b-desc``, the TS form) reads row ``m`` of A, for the ``copy``-th lane
    group of the data-path layout: each data-path lane multiplies the row of A it holds into the row of
    D it holds, so row ``m`` of A sits on every lane that holds a cell of row ``m`` of D (PTX ISA,
    tcgen05 "Data Path Layout Organization": the layouts are drawn for A and D alike). Layouts B and E
    fold D's two column halves onto the two 64-lane halves, so A's 64 rows are read from both halves
    (CuTe: ``TmemAllocMode::Duplicated``); G from all four 32-lane chunks.

    >>> a_lanes("D", 5), a_lanes("F", 17), a_lanes("B", 3, 1), a_lanes("G", 3, 2)
    (5, 33, 67, 67)
    """
    if layout in ("A", "D"):
        return m
    if layout in ("C", "F"):
        return m % 16 + 32 * (m // 16)
    return m + (64 if layout in ("B", "E") else 32) * copy


def datapath_cells(layout: str, cols: int, m, n):
    """:func:`datapath_cell` without the range check, on integers or element by element on integer arrays.

    >>> datapath_cells("F", 64, 17, 3)
    (33, 3)
    """
    if layout in ("A", "D"):
        return m, n
    if layout in ("B", "E"):
        half = cols // 2
        return m + 64 * (n // half), n % half
    if layout in ("C", "F"):
        return m % 16 + 32 * (m // 16), n
    quarter = cols // 4
    return m + 32 * (n // quarter), n % quarter
