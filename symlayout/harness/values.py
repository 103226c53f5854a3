"""The harness's value codec: value types (from :mod:`symlayout.atoms.types`) as raw bits on the device
(encode/decode, poison, the C types of raw words, the integers every type holds exactly)."""
from __future__ import annotations

import math

from ..atoms.types import canonical_type, value_type_bits, value_type_info


class HarnessError(RuntimeError):
    """A configuration the harness cannot run (the reason is the message)."""


class NeedsArch(HarnessError):
    """An instruction that runs only on another architecture than the GPU's (e.g. an sm_100a form
    on the sm_90 H200): not run, never a disagreement."""



#: the PTX element types (``types.json``'s ``ptx``) the value codec below encodes and decodes
CODEC_KINDS = frozenset({"f16", "bf16", "tf32", "f32", "f64", "s8", "u8", "s16", "u16", "s32", "u32"})


def canonical(t: str) -> str:
    return canonical_type(t)


def type_bits(t: str) -> int:
    return value_type_bits(t)


def type_kind(t: str) -> str | None:
    """``"f16"``, ``"bf16"``, ... for value types the harness can encode, else None.

    >>> type_kind("cute::half_t"), type_kind("float_e4m3_t")
    ('f16', None)
    """
    kind = value_type_info(t)["ptx"]
    return kind if kind in CODEC_KINDS else None


def exact_limit(t: str) -> int:
    """The integers up to this magnitude are exact in ``t`` (``2^(mantissa+1)`` for a float, the largest
    value for an integer; 0 for types the codec does not handle).

    >>> exact_limit("half_t"), exact_limit("bfloat16_t"), exact_limit("int8_t"), exact_limit("float_e4m3_t")
    (2048, 256, 127, 0)
    """
    if type_kind(t) is None:
        return 0
    info = value_type_info(t)
    if info["class"] == "float":
        return 1 << (info["mantissa_bits"] + 1)
    return (1 << (info["bits"] - (info["class"] == "int"))) - 1


def uint_c(bits: int) -> str:
    """C type holding ``bits`` raw bits."""
    return {8: "unsigned char", 16: "unsigned short", 32: "unsigned int", 64: "unsigned long long"}[bits]


def uint_np(bits: int):
    import numpy as np
    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]


def as_int64(bits: int) -> int:
    """A bit pattern of up to 64 bits as the int64 the checks read it as (``astype(np.int64)`` wraps): the
    64-bit poison ``2**64 - 1`` is ``-1`` there, and numpy >= 2 does not mix a Python int past int64 with
    an int64 array.

    >>> as_int64((1 << 64) - 1), as_int64((1 << 32) - 1)
    (-1, 4294967295)
    """
    return bits - (1 << 64) if bits >= 1 << 63 else bits


def encode(vals, t: str):
    """Bit patterns of integer values ``vals`` in value type ``t`` (numpy uint of its width)."""
    import numpy as np
    k = type_kind(t)
    v = np.asarray(vals)
    if k == "f16":
        return v.astype(np.float16).view(np.uint16)
    if k == "bf16":
        return (v.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    if k in ("tf32", "f32"):
        return v.astype(np.float32).view(np.uint32)
    if k == "f64":
        return v.astype(np.float64).view(np.uint64)
    if k in ("s8", "u8", "s16", "u16", "s32", "u32"):
        bits = int(k[1:])
        return (v.astype(np.int64) & ((1 << bits) - 1)).astype(uint_np(bits))
    raise HarnessError(f"no integer encoding for value type {t!r}")


def decode(bits, t: str):
    """Numeric values (float64 or int64 numpy array) of raw bit patterns in value type ``t``."""
    import numpy as np
    k = type_kind(t)
    b = np.asarray(bits)
    if k == "f16":
        return b.astype(np.uint16).view(np.float16).astype(np.float64)
    if k == "bf16":
        return (b.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if k in ("tf32", "f32"):
        return b.astype(np.uint32).view(np.float32).astype(np.float64)
    if k == "f64":
        return b.astype(np.uint64).view(np.float64)
    if k in ("s8", "s16", "s32"):
        bits = int(k[1:])
        x = b.astype(np.int64) & ((1 << bits) - 1)
        return np.where(x >= (1 << (bits - 1)), x - (1 << bits), x)
    if k in ("u8", "u16", "u32"):
        return b.astype(np.int64)
    raise HarnessError(f"no decoding for value type {t!r}")


def compute_poison(t: str) -> int:
    """Poison bits for compute-mode outputs: a NaN for floating types, the largest
    positive value for integers (never a result of the small products used)."""
    k = type_kind(t)
    bits = type_bits(t)
    if k and k[0] in "su":
        return (1 << (bits - 1)) - 1
    return (1 << bits) - 1


def reg_bits(rtype: str) -> int:
    """Width of an MMA register type (0 for the types the compute kernel does not declare)."""
    return {"uint32_t": 32, "float": 32, "int32_t": 32, "double": 64, "uint64_t": 64}.get(rtype, 0)



def id_passes(n: int, bits: int) -> int:
    """Passes needed to name ``n`` elements with digits in base ``2**bits - 1``.

    >>> id_passes(512, 16), id_passes(512, 8), id_passes(255, 8)
    (1, 2, 1)
    """
    base = (1 << min(bits, 32)) - 1
    p, cap = 1, base
    while cap < n:
        p += 1
        cap *= base
    return p


def id_digit(i, p: int, bits: int):
    base = (1 << min(bits, 32)) - 1
    return (i // base ** p) % base


def round_up(x: int, m: int) -> int:
    """``x`` rounded up to a multiple of ``m``."""
    return (x + m - 1) // m * m


def random_gemm_inputs(cpl, K: int, seed: int) -> dict:
    """Random small integers ``A`` (M, K), ``B`` (N, K), ``C`` (M, N) in the compute plan ``cpl``'s types,
    small enough that ``A @ B^T + C`` is exact in every type on the way (inputs, accumulator, the C copy's
    type): entries of A and B in ``[-rv, rv]``, of C in ``[-cr, cr]`` (unsigned types from 0)."""
    import numpy as np
    limit = min(exact_limit(cpl.ctype), exact_limit(cpl.out_type))
    cr = 2 if limit > 64 else 0
    rv = max(1, min(3, int(math.isqrt(max(1, (limit - cr) // max(1, K))))))
    rng = np.random.default_rng(seed)

    def rand(shape, t, r):
        k = type_kind(t)
        return rng.integers(0 if k and k.startswith("u") else -r, r + 1, size=shape)
    A = rand((cpl.M, K), cpl.atype, rv)
    B = rand((cpl.N, K), cpl.btype, rv)
    C = rand((cpl.M, cpl.N), cpl.ctype, cr)
    return {"A": A, "B": B, "C": C, "rv": rv, "cr": cr}
