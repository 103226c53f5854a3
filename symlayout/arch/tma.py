"""TMA (``cp.async.bulk.tensor``) and the ``CUtensorMap`` as NVIDIA documents them.

Written from the CUDA driver API reference of ``cuTensorMapEncodeTiled`` (the
parameter requirements in ``cuda.h``) and the PTX ISA sections "Tensors"
("Tensor-copy swizzling modes", "Bounding box") and ``cp.async.bulk.tensor``;
not from CuTe (CuTe's ``make_tma_copy`` is :mod:`symlayout.atoms.tma`).

Conventions: dimension 0 is the innermost (contiguous) one, as in the driver
API; ``global_strides`` are the byte strides of dimensions ``1 .. rank-1``;
box coordinates ``(c0, c1, ...)`` count elements inside the box.

What a tiled load does (the model :mod:`symlayout.harness.probe_sm90` checks on
the GPU): the box at global coordinates ``(x0, x1, ...)`` is written to shared
memory row by row, dimension 0 fastest.  A row (the ``b0`` elements of
dimension 0) takes ``b0*e`` bytes without swizzle and a whole swizzle span with
one (the inner box must not exceed the span; a narrower row is padded, and the
padding bytes are not written), so box element ``c`` has the byte offset
``e*c0 + P*(c1 + b1*(c2 + ...))`` with row pitch ``P``.  The swizzle mode then
permutes 16-byte chunks by the *absolute* shared address: bits
``[4, 4+log2 W)`` XOR bits ``[7, 7+log2 W)`` with ``W = span/16`` (span 32, 64,
128 bytes), so the pattern repeats every ``8*span`` bytes.  Elements outside the
global tensor are written as zeros (``OOB_FILL_NONE``) and count as transferred
bytes.  (Measured on an H200: ``docs/hardware/sm90-probe-2026-12-01.md``; the
padding of narrow rows is not in the driver documentation.)

>>> box_smem_offset((64, 8), 2, (5, 3))
394
>>> box_smem_offset((32, 8), 2, (5, 3), "128B")     # 64-byte rows padded to the 128-byte span
394
>>> smem_address(1024 + 394, "128B")
1466
>>> encode_tiled_problems("FLOAT16", (256, 256), (512,), (128, 64), swizzle="64B")
['inner box dimension 256 bytes exceeds the 64B swizzle span']
"""
from __future__ import annotations

#: ``CUtensorMapDataType`` values and their element sizes in bytes (the packed types: see :data:`PACKED_TYPES`).
DATA_TYPES = {"UINT8": (0, 1), "UINT16": (1, 2), "UINT32": (2, 4), "INT32": (3, 4), "UINT64": (4, 8),
              "INT64": (5, 8), "FLOAT16": (6, 2), "FLOAT32": (7, 4), "FLOAT64": (8, 8), "BFLOAT16": (9, 2),
              "FLOAT32_FTZ": (10, 4), "TFLOAT32": (11, 4), "TFLOAT32_FTZ": (12, 4)}
#: The packed data types (``cuda.h`` of CUDA >= 12.8, ``cuTensorMapEncodeTiled``): value, bits of one element in
#: global memory, bits it takes in shared memory.  ``16U4_ALIGN8B`` copies 16 4-bit values to 8 bytes (no gaps);
#: ``16U4_ALIGN16B`` / ``16U6_ALIGN16B`` copy 16 4-/6-bit values to 16 bytes ("8 byte gaps between every 8 byte
#: chunk", "4 byte gaps between every 12 byte chunk"): a 16-element chunk takes 16 bytes, one byte slot an element.
PACKED_TYPES = {"16U4_ALIGN8B": (13, 4, 4), "16U4_ALIGN16B": (14, 4, 8), "16U6_ALIGN16B": (15, 6, 8)}
#: The swizzle modes a 16-byte-aligned packed type supports (loads; ``cuTensorMapEncodeTiled``).
PACKED_SWIZZLES = {"16U4_ALIGN16B": ("none", "128B"), "16U6_ALIGN16B": ("none", "128B")}
#: ``CUtensorMapSwizzle`` values (the SM90 ones; the ``128B_ATOM_*`` variants are later architectures').
SWIZZLE_ENUM = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
#: Bytes of the span the 16-byte chunks are permuted in.
SWIZZLE_SPAN_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128}
#: ``CUtensorMapInterleave`` values.
INTERLEAVE_ENUM = {"none": 0, "16B": 1, "32B": 2}
#: Largest rank of a tensor map.
MAX_RANK = 5
#: Largest extent of a box dimension.
MAX_BOX = 256
#: Largest element stride (traversal stride).
MAX_ELEMENT_STRIDE = 8
#: Alignment of the shared-memory destination of ``cp.async.bulk.tensor`` (bytes).
SMEM_ALIGN = 128
#: Alignment of the global base address (bytes); 32 with 32-byte interleave.
GLOBAL_ALIGN = 16

_ALIASES = {"none": "none", "0": "none", "disable": "none", "interleave": "none",
            "32b": "32B", "b32": "32B", "sw32": "32B", "1": "32B",
            "64b": "64B", "b64": "64B", "sw64": "64B", "2": "64B",
            "128b": "128B", "b128": "128B", "sw128": "128B", "3": "128B"}


def swizzle_mode(name) -> str:
    """Normalize a TMA swizzle name or ``CUtensorMapSwizzle`` value.

    >>> swizzle_mode("CU_TENSOR_MAP_SWIZZLE_128B"), swizzle_mode(1), swizzle_mode("none")
    ('128B', '32B', 'none')
    """
    key = str(name).strip().lower().replace("cu_tensor_map_swizzle_", "")
    if key not in _ALIASES:
        raise ValueError(f"unknown TMA swizzle {name!r}; expected one of {sorted(SWIZZLE_ENUM)}")
    return _ALIASES[key]


def element_size(dtype: str) -> int:
    """Bytes of one element of a ``CUtensorMapDataType`` name.

    >>> element_size("BFLOAT16"), element_size("CU_TENSOR_MAP_DATA_TYPE_UINT8")
    (2, 1)
    """
    key = str(dtype).upper().replace("CU_TENSOR_MAP_DATA_TYPE_", "")
    if key not in DATA_TYPES:
        raise ValueError(f"unknown tensor-map data type {dtype!r}")
    return DATA_TYPES[key][1]


def _dtype_key(dtype) -> str:
    return str(dtype).upper().replace("CU_TENSOR_MAP_DATA_TYPE_", "")


def data_type_value(dtype) -> int:
    """The ``CUtensorMapDataType`` enum value of a name.

    >>> data_type_value("FLOAT16"), data_type_value("CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B")
    (6, 13)
    """
    key = _dtype_key(dtype)
    if key in PACKED_TYPES:
        return PACKED_TYPES[key][0]
    if key not in DATA_TYPES:
        raise ValueError(f"unknown tensor-map data type {dtype!r}")
    return DATA_TYPES[key][0]


def element_bits(dtype) -> tuple[int, int]:
    """(bits of one element in global memory, bits it takes in shared memory) of a data type.

    >>> element_bits("BFLOAT16"), element_bits("16U4_ALIGN8B"), element_bits("16U6_ALIGN16B")
    ((16, 16), (4, 4), (6, 8))
    """
    key = _dtype_key(dtype)
    if key in PACKED_TYPES:
        return PACKED_TYPES[key][1:]
    b = 8 * element_size(key)
    return b, b


def stride_multiple(dtype) -> int:
    """Bytes every global stride must be a multiple of (no interleave): 16, 32 for the 16-byte-aligned packed types.

    >>> stride_multiple("UINT8"), stride_multiple("16U6_ALIGN16B")
    (16, 32)
    """
    return 32 if _dtype_key(dtype) in PACKED_SWIZZLES else 16


def dim0_multiple(dtype) -> int:
    """What global dimension 0 must be a multiple of: 128 (16-byte-aligned packed types), 2 (``16U4_ALIGN8B``), 1.

    >>> dim0_multiple("16U4_ALIGN16B"), dim0_multiple("16U4_ALIGN8B"), dim0_multiple("FLOAT16")
    (128, 2, 1)
    """
    key = _dtype_key(dtype)
    return 128 if key in PACKED_SWIZZLES else 2 if key == "16U4_ALIGN8B" else 1


def packed_problems(dtype, global_dim, global_strides, box_dim, swizzle, interleave, global_address) -> list[str]:
    """The extra requirements ``cuTensorMapEncodeTiled`` puts on the packed data types (``cuda.h``).

    >>> packed_problems("16U4_ALIGN16B", (100, 8), (64,), (64, 8), "64B", "none", 16)
    ['global address 16 is not 32-byte aligned (16U4_ALIGN16B)', 'global dimension 0 is 100, not a multiple of 128 (16U4_ALIGN16B)', 'box dimension 0 is 64, not 128 (16U4_ALIGN16B)', 'swizzle 64B is not supported with 16U4_ALIGN16B loads (only none, 128B)']
    """
    key = _dtype_key(dtype)
    if key not in PACKED_TYPES:
        return []
    out = []
    if key == "16U4_ALIGN8B":
        if global_dim and global_dim[0] % 2:
            out.append(f"global dimension 0 is {global_dim[0]}, not a multiple of 2 ({key})")
        return out
    if global_address % 32:
        out.append(f"global address {global_address} is not 32-byte aligned ({key})")
    if global_dim and global_dim[0] % 128:
        out.append(f"global dimension 0 is {global_dim[0]}, not a multiple of 128 ({key})")
    for i, st in enumerate(global_strides, start=1):
        if st % 32:
            out.append(f"global stride {st} (dimension {i}) is not a multiple of 32 ({key})")
    if box_dim and box_dim[0] != 128:
        out.append(f"box dimension 0 is {box_dim[0]}, not 128 ({key})")
    if swizzle_mode(swizzle) not in PACKED_SWIZZLES[key]:
        out.append(f"swizzle {swizzle_mode(swizzle)} is not supported with {key} loads (only "
                   f"{', '.join(PACKED_SWIZZLES[key])})")
    if key == "16U6_ALIGN16B" and str(interleave).lower() != "none":
        out.append(f"{key} needs interleave none")
    return out


def encode_tiled_problems(dtype: str, global_dim, global_strides, box_dim, element_strides=None, *,
                          swizzle="none", interleave="none", global_address: int = 0) -> list[str]:
    """The requirements of ``cuTensorMapEncodeTiled`` that these arguments break
    (empty: the driver accepts them).  ``global_strides`` has ``rank-1`` byte
    strides (dimensions 1..rank-1).

    >>> encode_tiled_problems("FLOAT16", (64, 64), (128,), (64, 64), swizzle="128B")
    []
    >>> encode_tiled_problems("UINT8", (100, 7), (100,), (4, 300), global_address=8)
    ['global address 8 is not 16-byte aligned', 'global stride 100 (dimension 1) is not a multiple of 16', 'box dimension 1 is 300, not in [1, 256]', 'inner box dimension 4 bytes is not a multiple of 16']
    """
    out: list[str] = []
    _gbits, sbits = element_bits(dtype)
    swz = swizzle_mode(swizzle)
    il = str(interleave).lower()
    rank = len(global_dim)
    if not 1 <= rank <= MAX_RANK:
        out.append(f"rank {rank} is not in [1, {MAX_RANK}]")
    if il != "none" and rank < 3:
        out.append("interleaved layouts need rank >= 3")
    if len(box_dim) != rank or len(global_strides) != rank - 1:
        out.append(f"rank {rank} needs {rank} box dimensions and {rank - 1} global strides")
        return out
    align = 32 if il == "32b" else GLOBAL_ALIGN
    if global_address % align:
        out.append(f"global address {global_address} is not {align}-byte aligned")
    for i, g in enumerate(global_dim):
        if not 1 <= g <= 1 << 32:
            out.append(f"global dimension {i} is {g}, not in [1, 2^32]")
    for i, s in enumerate(global_strides, start=1):
        mult = 32 if il == "32b" else 16
        if s % mult:
            out.append(f"global stride {s} (dimension {i}) is not a multiple of {mult}")
        if not 0 <= s < 1 << 40:
            out.append(f"global stride {s} (dimension {i}) is not below 2^40")
    for i, b in enumerate(box_dim):
        if not 1 <= b <= MAX_BOX:
            out.append(f"box dimension {i} is {b}, not in [1, {MAX_BOX}]")
    inner = box_dim[0] * sbits / 8              # (the packed types: bytes of the box's row in shared memory)
    inner = int(inner) if inner == int(inner) else inner
    if il == "none":
        if inner % 16:
            out.append(f"inner box dimension {inner} bytes is not a multiple of 16")
        if swz != "none" and inner > SWIZZLE_SPAN_BYTES[swz]:
            out.append(f"inner box dimension {inner} bytes exceeds the {swz} swizzle span")
    elif il == "32b" and swz != "32B":
        out.append("32-byte interleave needs the 32B swizzle")
    es = element_strides if element_strides is not None else (1,) * rank
    for i, s in enumerate(es):
        if not 1 <= s <= MAX_ELEMENT_STRIDE:
            out.append(f"element stride {i} is {s}, not in [1, {MAX_ELEMENT_STRIDE}]")
    return out + packed_problems(dtype, global_dim, global_strides, box_dim, swz, il, global_address)


def box_elements(box_dim, element_strides=None) -> tuple[int, ...]:
    """Elements actually transferred per dimension: ``ceil(box/elementStride)``
    (the stride of dimension 0 is ignored without interleave).

    >>> box_elements((64, 8, 6), (1, 2, 4))
    (64, 4, 2)
    """
    es = list(element_strides) if element_strides is not None else [1] * len(box_dim)
    es[0] = 1
    return tuple(-(-b // s) for b, s in zip(box_dim, es))


def box_bytes(box_dim, elem_bytes: int, element_strides=None) -> int:
    """Bytes one load writes to shared memory (out-of-bounds elements included):
    what the mbarrier's transaction count must expect.

    >>> box_bytes((64, 128), 2)
    16384
    """
    n = elem_bytes
    for b in box_elements(box_dim, element_strides):
        n *= b
    return n


def row_pitch(box_dim, elem_bytes: int, swizzle="none") -> int:
    """Bytes from one box row (dimension 0) to the next in shared memory: the
    inner box bytes without swizzle, the swizzle span with one.

    >>> row_pitch((32, 8), 2), row_pitch((32, 8), 2, "128B"), row_pitch((16, 8), 4, "64B")
    (64, 128, 64)
    """
    s = swizzle_mode(swizzle)
    inner = box_dim[0] * elem_bytes
    return inner if s == "none" else max(inner, SWIZZLE_SPAN_BYTES[s])


def box_smem_bytes(box_dim, elem_bytes: int, swizzle="none") -> int:
    """Shared-memory footprint of a box (rows padded to the swizzle span).

    >>> box_smem_bytes((32, 16), 2, "128B"), box_bytes((32, 16), 2)
    (2048, 1024)
    """
    n = row_pitch(box_dim, elem_bytes, swizzle)
    for b in box_dim[1:]:
        n *= b
    return n


def box_smem_offset(box_dim, elem_bytes: int, coord, swizzle="none") -> int:
    """Unswizzled byte offset of box element ``coord`` (dimension 0 fastest; rows
    at :func:`row_pitch`).

    >>> box_smem_offset((32, 4), 4, (1, 2)), box_smem_offset((16, 4, 2), 2, (1, 2, 1), "32B")
    (260, 194)
    """
    for c, b in zip(coord, box_dim):
        if not 0 <= c < b:
            raise ValueError(f"box coordinate {tuple(coord)} is outside the box {tuple(box_dim)}")
    off, pitch = coord[0] * elem_bytes, row_pitch(box_dim, elem_bytes, swizzle)
    for c, b in zip(coord[1:], box_dim[1:]):
        off += c * pitch
        pitch *= b
    return off


def smem_address(addr: int, swizzle) -> int:
    """The shared byte address TMA writes for the unswizzled address ``addr``:
    16-byte chunk bits ``[4, 4+log2 W)`` XOR bits ``[7, 7+log2 W)``
    (CuTe ``Swizzle<log2 W, 4, 3>`` on byte addresses).

    >>> [smem_address(a, "64B") for a in (0x80, 0x100, 0x180, 0x1B0)]
    [144, 288, 432, 384]
    """
    w = SWIZZLE_SPAN_BYTES[swizzle_mode(swizzle)] // 16
    if w == 1:
        return addr
    return addr ^ (((addr >> 7) & (w - 1)) << 4)


def pattern_bytes(swizzle) -> int:
    """Bytes after which the swizzle pattern repeats (8 x span; 16 without swizzle).

    >>> pattern_bytes("128B"), pattern_bytes("32B"), pattern_bytes("none")
    (1024, 256, 16)
    """
    s = swizzle_mode(swizzle)
    return 16 if s == "none" else 8 * SWIZZLE_SPAN_BYTES[s]


def box_landing(smem_dst: int, box_dim, elem_bytes: int, swizzle="none") -> dict[tuple, int]:
    """Box coordinate -> shared byte address of its first byte, for a load whose
    destination is ``smem_dst`` (must be 128-byte aligned).

    >>> land = box_landing(0x400, (64, 8), 2, "128B")
    >>> land[(0, 1)], land[(8, 1)], land[(0, 0)]
    (1168, 1152, 1024)
    """
    if smem_dst % SMEM_ALIGN:
        raise ValueError(f"cp.async.bulk.tensor: shared destination {smem_dst} is not {SMEM_ALIGN}-byte aligned")
    out = {}
    for flat in range(_prod(box_dim)):
        c, r = [], flat
        for b in box_dim:
            c.append(r % b)
            r //= b
        c = tuple(c)
        out[c] = smem_address(smem_dst + box_smem_offset(box_dim, elem_bytes, c, swizzle), swizzle)
    return out


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def global_element(origin, coord, global_dim) -> tuple | None:
    """The global coordinate box element ``coord`` reads for a load at ``origin``
    (``None`` outside the tensor: the element is zero-filled).  Origins may be
    negative (the coordinate operands of ``cp.async.bulk.tensor`` are signed).

    >>> global_element((60, 0), (3, 1), (64, 8)), global_element((62, 0), (3, 1), (64, 8))
    ((63, 1), None)
    """
    g = tuple(o + c for o, c in zip(origin, coord))
    return g if all(0 <= x < d for x, d in zip(g, global_dim)) else None
