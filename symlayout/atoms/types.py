"""Value types (CuTe's ``half_t``, ``bfloat16_t``, ``float_e4m3_t``, ``int4b_t``, ...): THE table of
widths, numeric classes, PTX element types and register classes is ``data/types.json``; this module
reads it (aliases such as ``cutlass::half_t`` accepted) and states what the hardware reads one type
as another (:data:`REINTERPRETATIONS`) and which conversions are exact.

Pure Python (no sympy), so the GPU harness and the configuration loader use it directly.

>>> value_type_bits("half_t"), value_type_bits("cutlass::bfloat16_t"), canonical_type("int4b_t")
(16, 16, 'int4_t')
"""
from __future__ import annotations

import functools
from typing import NamedTuple

from ..errors import AtomError
from .datafiles import load_data, normalize_spelling, suggest


@functools.lru_cache(maxsize=None)
def _type_index() -> dict[str, str]:
    idx: dict[str, str] = {}
    for canon, info in load_data("types")["types"].items():
        idx[canon] = canon
        for a in info.get("aliases", []):
            idx[a] = canon
    return idx


def canonical_type(name: str) -> str:
    """The canonical spelling of a value type (aliases such as ``cutlass::half_t``
    or ``int4b_t`` accepted); unknown names raise :class:`AtomError`.

    >>> canonical_type("cutlass::half_t"), canonical_type("int4b_t")
    ('half_t', 'int4_t')
    """
    if not isinstance(name, str):
        raise AtomError(f"value type must be a string, got {name!r}")
    key = normalize_spelling(name)
    idx = _type_index()
    if key in idx:
        return idx[key]
    if key.startswith("cute::") and key[6:] in idx:
        return idx[key[6:]]
    raise AtomError(f"unknown value type {name!r}{suggest(key, load_data('types')['types'])}")


def value_type_bits(name: str) -> int:
    """Width in bits of a value type (CuTe ``sizeof_bits``).

    >>> value_type_bits("float_e4m3_t"), value_type_bits("uint128_t"), value_type_bits("tfloat32_t")
    (8, 128, 32)
    """
    return load_data("types")["types"][canonical_type(name)]["bits"]


def smem_slot_bits(name: str) -> int:
    """The bits one element takes in a shared-memory layout: ``sizeof_bits``, except CUTLASS's
    ``*_unpacksmem_t`` containers (kind::f8f6f4 reads fp4/fp6 16 to a 16-byte chunk; CUTLASS lays
    such a buffer out over ``uint8_t``).

    >>> smem_slot_bits("float_e2m1_t"), smem_slot_bits("float_e2m1_unpacksmem_t"), smem_slot_bits("half_t")
    (4, 8, 16)
    """
    info = load_data("types")["types"][canonical_type(name)]
    return 8 if info.get("storage") == "container" else info["bits"]


def value_type_info(name: str) -> dict:
    """The ``types.json`` record of a value type (bits, class, ptx, reg_class).

    >>> value_type_info("half_t")["ptx"]
    'f16'
    """
    return dict(load_data("types")["types"][canonical_type(name)])


def value_type_names() -> list[str]:
    """Canonical names of all known value types, narrowest first.

    >>> value_type_names()[:3]
    ['uint1_t', 'int4_t', 'uint4_t']
    """
    t = load_data("types")["types"]
    return sorted(t, key=lambda k: (t[k]["bits"], list(t).index(k)))


# --------------------------------------------------------------------------- element types an MMA reads

#: storage types the MMA hardware itself reads as another element type (copy type, MMA type) -> why;
#: a copy that moves raw bits (ldmatrix, stmatrix, UniversalCopy) must deliver exactly the MMA's
#: element type or one of these
REINTERPRETATIONS = {
    ("float", "tfloat32_t"): "float storage read as tf32: mma.sync .tf32 takes 32-bit registers and uses "
                             "the sign, exponent and upper 10 mantissa bits of an fp32 value",
}



def reinterpretation(copy_type: str, mma_type: str) -> str | None:
    """Why raw ``copy_type`` bits are the ``mma_type`` elements the MMA reads, or
    ``None`` when they are not: the same type, or a reinterpretation the hardware
    defines (:data:`REINTERPRETATIONS`).  Equal widths are not enough.

    >>> reinterpretation("half_t", "half_t"), reinterpretation("bfloat16_t", "half_t")
    ('the same element type', None)
    >>> reinterpretation("int8_t", "uint8_t"), reinterpretation("float_e5m2_t", "float_e4m3_t")
    (None, None)
    >>> reinterpretation("float", "tfloat32_t")[:28]
    'float storage read as tf32: '
    """
    a, b = canonical_type(copy_type), canonical_type(mma_type)
    if a == b:
        return "the same element type"
    return REINTERPRETATIONS.get((a, b))


def exact_conversion(src: str, dst: str) -> bool:
    """Every ``src`` value converts to ``dst`` exactly (C++ conversion, as CuTe's
    element-wise copy of mismatched types performs it).

    >>> exact_conversion("half_t", "tfloat32_t"), exact_conversion("bfloat16_t", "half_t")
    (True, False)
    >>> exact_conversion("int8_t", "uint8_t"), exact_conversion("int8_t", "half_t"), exact_conversion("uint8_t", "int8_t")
    (False, True, False)
    >>> exact_conversion("float_e2m1_t", "float_e4m3_t"), exact_conversion("float_ue8m0_t", "float"), exact_conversion("float_e2m1_t", "float_ue4m3_t")
    (True, True, False)
    """
    a, b = canonical_type(src), canonical_type(dst)
    if a == b:
        return True
    ia, ib = value_type_info(a), value_type_info(b)
    ca, cb = ia["class"], ib["class"]
    fa, fb = _float_format(ia), _float_format(ib)
    if ca in _FLOATS:
        signs_fit = cb == "float" or ca == "ufloat"             # an unsigned float holds no negative value
        return cb in _FLOATS and signs_fit and fb[0] >= fa[0] and fb[1] >= fa[1]
    magnitude = ia["bits"] - (1 if ca == "int" else 0)          # value bits of the integer
    if cb == "ufloat" and ca == "int":
        return False
    if cb in _FLOATS:
        return fb is not None and fb[1] + 1 >= magnitude and 2 ** (fb[0] - 1) > ia["bits"]
    if ca == "int" and cb == "uint":
        return False
    return ib["bits"] - (1 if cb == "int" else 0) >= magnitude


#: the numeric classes of floating-point types: signed, and unsigned (the scale factors ue4m3, ue8m0)
_FLOATS = ("float", "ufloat")


def _float_format(info: dict) -> tuple[int, int] | None:
    """(exponent bits, mantissa bits) of a floating-point type's record, None for others."""
    if "exponent_bits" not in info:
        return None
    return info["exponent_bits"], info["mantissa_bits"]


class Registers(NamedTuple):
    """A register array ``type[count]`` of an MMA/copy operation struct.

    >>> r = Registers("uint32_t", 4)
    >>> r, r.bits, r.total_bits
    (Registers(type='uint32_t', count=4), 32, 128)
    """
    type: str
    count: int

    @property
    def bits(self) -> int:
        """Width of one register in bits."""
        return value_type_bits(self.type)

    @property
    def total_bits(self) -> int:
        """``count * bits``."""
        return self.count * self.bits

    def __str__(self) -> str:
        return f"{self.type}[{self.count}]"
