"""CuTe's ``make_tma_copy`` (``copy_traits_sm90_tma.hpp``): the TMA box and swizzle it
derives from the shared-memory layout, the global tensor and the CTA tile, and
the arguments it passes to ``cuTensorMapEncodeTiled`` (what the driver then
checks is :mod:`symlayout.arch.tma`).

The derivation, as CuTe does it (``construct_tma_gbasis``):

1. invert the smem layout (its non-swizzle part): smem index -> tile coordinate;
2. compose with the CTA tile's identity map (each global mode ``j`` a basis
   ``E<j>``) and coalesce: smem index -> global basis;
3. keep the leading modes whose basis has multiplier 1 (contiguous in smem *and*
   a unit step of one global mode); these are the box's vector;
4. replace the bases by the global strides and coalesce modes whose strides
   chain (static values only) while the extent stays <= 256: the box modes;
5. global modes the box does not touch are appended with extent 1; modes past
   the fifth are grouped.

The box is then divided among the CTAs of a multicast, from the last mode; the
swizzle is ``get_tma_swizzle_bits`` of the layout's swizzle (``Sw<B,4,3>`` on
byte addresses: B = 0, 1, 2, 3 -> none, 32B, 64B, 128B).  CuTe's failures are
raised as :class:`TmaCopyError` with CuTe's message: a swizzle that is not
``Sw<B,4,3>`` (a compile error), a box extent above 256, a global stride that is
not a multiple of 16 bytes, smem and gmem of different majorness (run-time
asserts).  Global shapes and strides may be run-time values
(:class:`~symlayout.algebra.symbolic.DynInt` or symbols): CuTe merges modes only on
static values.

>>> from symlayout.atoms.gmma import layout_atom
>>> from symlayout.algebra.symbolic import DynInt
>>> sA = layout_atom("K_SW128", "half_t").tile_to_shape((128, 64))
>>> t = make_tma_copy("half_t", ((DynInt(1024), DynInt(512)), (DynInt(512), 1)), sA)
>>> t.box_dim, t.global_dim, t.global_strides, t.swizzle, t.data_type
((64, 128), (512, 1024), (1024,), '128B', 'FLOAT16')
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import AtomError
from ..algebra.layout import Layout, coalesce, composition, is_layout, right_inverse
from ..algebra.composed import Swizzle
from .types import canonical_type, value_type_bits
from ..arch import tma as arch_tma
from .gmma import GmmaSmemLayout

#: ``to_CUtensorMapDataType<T>`` (cute/arch/copy_sm90_desc.hpp); the sub-byte types under CUDA >= 12.7 (nvcc 13
#: here): packed ``float_e2m1_t`` -> ``16U4_ALIGN8B``, the fp6 types and the 16-byte containers ->
#: ``16U4_ALIGN16B`` / ``16U6_ALIGN16B``.  Any other type (``float_ue4m3_t`` among them) is CuTe's
#: ``static_assert "Unknown TMA Format!"``.
DATA_TYPE = {"int8_t": "UINT8", "uint8_t": "UINT8", "float_e4m3_t": "UINT8", "float_e5m2_t": "UINT8",
             "float_ue8m0_t": "UINT8",
             "uint16_t": "UINT16", "uint32_t": "UINT32", "uint64_t": "UINT64", "int32_t": "INT32",
             "int64_t": "INT64", "half_t": "FLOAT16", "float": "FLOAT32", "double": "FLOAT64",
             "bfloat16_t": "BFLOAT16", "tfloat32_t": "TFLOAT32",
             "float_e2m1_t": "16U4_ALIGN8B", "float_e2m3_t": "16U6_ALIGN16B", "float_e3m2_t": "16U6_ALIGN16B",
             "float_e2m1_unpacksmem_t": "16U4_ALIGN16B", "float_e2m3_unpacksmem_t": "16U6_ALIGN16B",
             "float_e3m2_unpacksmem_t": "16U6_ALIGN16B"}
_BIG = 1 << 40          # the basis E<j> is emulated by the integer _BIG**j


class TmaCopyError(AtomError):
    """``make_tma_copy`` would not compile or would fail one of CuTe's asserts."""


@dataclass(frozen=True)
class TmaCopy:
    """What ``make_tma_copy`` builds: the ``cuTensorMapEncodeTiled`` arguments
    (``global_strides`` in bytes, dimensions 1..rank-1), the box's global modes
    (``basis[i]``: the global modes box dimension ``i`` walks), and CuTe's tiler."""
    value_type: str
    data_type: str
    rank: int
    global_dim: tuple
    global_strides: tuple
    box_dim: tuple
    element_strides: tuple
    swizzle: str
    basis: tuple
    tiler: tuple
    multicast: int = 1
    interleave: str = "none"
    l2_promotion: str = "L2_128B"
    oob_fill: str = "none"
    notes: tuple = field(default=())

    def encode_problems(self, global_address: int = 0) -> list[str]:
        """What the driver would reject (:func:`symlayout.arch.tma.encode_tiled_problems`).  A run-time extent or
        stride is replaced by a value every rule accepts (256 elements, 512 bytes): the rules on the box, the
        swizzle and the static values are checked; the run-time values' own rules are the prover's, for every
        parameter value (``prove.hopper.obligations``)."""
        dims = tuple(x if isinstance(x, int) else 256 for x in self.global_dim)
        strides = tuple(x if isinstance(x, int) else 512 for x in self.global_strides)
        return arch_tma.encode_tiled_problems(self.data_type, dims, strides, self.box_dim,
                                              self.element_strides, swizzle=self.swizzle,
                                              global_address=global_address)


def tma_swizzle(sw: Swizzle | None) -> str:
    """``get_tma_swizzle_bits`` + ``get_tma_swizzle_base`` -> the ``CUtensorMapSwizzle`` name.

    >>> tma_swizzle(Swizzle(3, 4, 3)), tma_swizzle(Swizzle(0, 4, 3)), tma_swizzle(Swizzle(2, 5, 2))
    ('128B', 'none', '128B_ATOM_32B')
    >>> tma_swizzle(Swizzle(3, 3, 3))
    Traceback (most recent call last):
     ...
    symlayout.atoms.tma.TmaCopyError: make_tma_copy: Unsupported layout swizzle Sw<3,3,3> (TMA needs Sw<B,4,3> on byte addresses: a GMMA layout atom, not an element-offset swizzle)
    """
    if sw is None:
        return "none"
    b, m, s = sw.b, sw.m, sw.s
    if m == 4:
        if not 0 <= b <= 3:
            raise TmaCopyError(f"make_tma_copy: Expected B = 0,1,2, or 3 when M == 4. Unsupported layout swizzle {sw}")
        if s != 3 and b:
            raise TmaCopyError(f"make_tma_copy: Expected S = 3 when M == 4. Unsupported layout swizzle {sw}")
        return {0: "none", 1: "32B", 2: "64B", 3: "128B"}[b]
    if m in (5, 6):
        if b != 2:
            raise TmaCopyError(f"make_tma_copy: Expected B = 2 when M == 5 or 6. Unsupported layout swizzle {sw}")
        return "128B_ATOM_32B" if m == 5 else "128B_ATOM_64B"
    raise TmaCopyError(f"make_tma_copy: Unsupported layout swizzle {sw} (TMA needs Sw<B,4,3> on byte addresses: a "
                       "GMMA layout atom, not an element-offset swizzle)")


def _split_smem(slayout):
    """(swizzle portion, non-swizzle portion) as CuTe's get_swizzle_portion / get_nonswizzle_portion."""
    if isinstance(slayout, GmmaSmemLayout):
        return slayout.swizzle, slayout.layout
    if getattr(slayout, "is_composed", False):
        if slayout.offset != 0:
            raise TmaCopyError(f"make_tma_copy: {slayout} has a non-zero offset")
        return slayout.swizzle, slayout.inner
    if is_layout(slayout):
        return Swizzle(0, 4, 3), slayout
    raise TmaCopyError(f"make_tma_copy: not an smem layout: {slayout!r}")


def _is_static(x) -> bool:
    return type(x) is int


def _basis(d: int) -> tuple[int, int]:
    """(mode j, multiplier v) of an emulated basis stride ``v * E<j>``."""
    if d == 0:
        return -1, 0
    j = 0
    while d % _BIG == 0:
        d //= _BIG
        j += 1
    return j, d


def _coalesce_256(modes):
    """CuTe's ``coalesce_256``: merge (s0:d0)(s1:d1) when d1 == s0*d0 (static) and s0*s1 <= 256."""
    out: list[list] = []                     # [shape, stride, [input indices]]
    for i, (s, d) in enumerate(modes):
        if s == 1:
            continue
        if not out:
            out.append([s, d, [i]])
            continue
        bs, bd, idx = out[-1]
        if _is_static(bs) and _is_static(bd) and _is_static(d) and bs * bd == d and bs * s <= 256:
            out[-1] = [bs * s, bd, idx + [i]]
        else:
            out.append([s, d, [i]])
    return out


def make_tma_copy(value_type: str, gmem, slayout, cta_tiler=None, multicast: int = 1,
                  op: str = "SM90_TMA_LOAD") -> TmaCopy:
    """``make_tma_copy(op, gtensor, slayout, cta_tiler, cluster_size)`` for a global
    tensor of ``value_type`` with the flat layout ``gmem`` (a Layout or a
    ``(shape, stride)`` pair; entries plain ints are static, DynInt/symbols are
    run-time values) and an smem layout (a GMMA layout, a plain layout, or an
    element-swizzled ComposedLayout, which CuTe refuses).

    >>> from symlayout.atoms.gmma import layout_atom
    >>> sB = layout_atom("MN_SW128", "half_t").tile_to_shape((128, 64), (2, 1))
    >>> make_tma_copy("half_t", ((1024, 512), (1, 1024)), sB, multicast=2).box_dim
    (64, 32)
    """
    vt = canonical_type(value_type)
    bits = value_type_bits(vt)
    if vt not in DATA_TYPE:
        raise TmaCopyError(f"make_tma_copy: static_assert \"Unknown TMA Format!\": no CUtensorMapDataType for {vt} "
                           "(to_CUtensorMapDataType)")
    if op not in ("SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST", "SM90_TMA_STORE"):
        raise TmaCopyError(f"make_tma_copy: unsupported copy op {op!r}")
    gshape, gstride = (tuple(gmem.shape), tuple(gmem.stride)) if is_layout(gmem) else (tuple(gmem[0]), tuple(gmem[1]))
    if any(isinstance(x, tuple) for x in gshape + gstride):
        raise TmaCopyError("make_tma_copy: hierarchical global modes are not supported by symlayout yet")
    sw, L = _split_smem(slayout)
    swizzle = tma_swizzle(sw)
    # CTA tile -> global basis (the identity layout of the global shape composed with the tiler)
    tiler = cta_tiler if cta_tiler is not None else tuple(_prod_each(L.shape))
    tiler = tuple(tiler) if isinstance(tiler, (tuple, list)) else (tiler,)
    tmodes = []
    for j, t in enumerate(tiler):
        tl = t if is_layout(t) else Layout(t, 1)
        tmodes.append(Layout(tl.shape, _scale(tl.stride, _BIG ** j)))
    cta_v_map = Layout(tuple(m.shape for m in tmodes), tuple(m.stride for m in tmodes))
    if L.size() != cta_v_map.size():
        raise TmaCopyError(f"make_tma_copy: TMA requires CTA_Tile and SLayout top-level size equivalence "
                           f"({cta_v_map.size()} vs {L.size()})")
    inv = right_inverse(L)                                     # smem idx -> smem coord
    full = coalesce(composition(cta_v_map, inv))               # smem idx -> global basis
    fs, fd = _flat(full.shape), _flat(full.stride)
    rank_s = 0
    for d in fd:
        if _basis(d)[1] != 1:
            break
        rank_s += 1
    if rank_s == 0:
        raise TmaCopyError("make_tma_copy: Could not find a common tile-gmem vectorization. Does the Tile select out "
                           "major GMEM modes?")
    sidx2g = [(fs[i], _basis(fd[i])[0]) for i in range(rank_s)]
    tile_gstride = [(s, gstride[j]) for s, j in sidx2g]
    boxes = _coalesce_256(tile_gstride)
    modes = [(bs, [sidx2g[i][1] for i in idx]) for bs, _bd, idx in boxes]
    used = {j for _, js in modes for j in js}
    for j, (s, d) in enumerate(zip(gshape, gstride)):
        if (_is_static(s) and s == 1) or (_is_static(d) and d == 0) or j in used:
            continue
        modes.append((1, [j]))
    if len(modes) > 5:                                         # group<4,-1>
        rest = modes[4:]
        modes = modes[:4] + [(math.prod(s for s, _ in rest), [j for _, js in rest for j in js])]
    # global shape/stride of each box mode (fill_tma_gmem_shape_stride), in elements
    gdim, gstr = [], []
    for _, js in modes:
        if len(js) == 1:
            gdim.append(gshape[js[0]])
            gstr.append(gstride[js[0]])
            continue
        sh, st = 1, 0
        for j in js:
            old = st
            st = math.gcd(st, gstride[j])
            sh = (sh - 1) * (old // st) + (gshape[j] - 1) * (gstride[j] // st) + 1 if st else gshape[j]
        gdim.append(sh)
        gstr.append(st)
    if not (_is_static_value(gstr[0]) and int(gstr[0]) == 1):
        raise TmaCopyError("make_tma_copy: gmem_prob_stride[0] == 1 && \"Majorness of smem doesn't match majorness "
                           f"of gmem\" (the box's first mode walks global strides {gstr[0]})")
    # (whole bytes per element: d * (bits / 8), the same value and expression as floor(d * bits / 8) for an
    # integer d, without asking sympy to simplify a floor of a run-time extent)
    bstr = [d * (bits // 8) if bits % 8 == 0 and _is_integer(d) else d * bits // 8 for d in gstr]
    for i, b in enumerate(bstr[1:], start=1):
        if _is_static_value(b) and int(b) % 16:
            raise TmaCopyError(f"make_tma_copy: (gmem_prob_stride[{i}] & 0b1111) == 0 failed: Stride must be multiple of "
                               f"16B (128b) (global stride {i} is {b} bytes)")
        if _is_static_value(b) and int(b) >= 1 << 40:
            raise TmaCopyError(f"make_tma_copy: (gmem_prob_stride[{i}]) < (uint64_t(1) << 40) failed: Stride must be "
                               f"max 2^40 (global stride {i} is {b} bytes)")
    box = [s for s, _ in modes]
    m, i = multicast, len(box) - 1
    while m > 1 and i >= 0:                                    # truncate the box by the multicast
        if box[i] % m and m % box[i]:
            raise TmaCopyError(f"make_tma_copy: smem_box_shape[{i}] % multicast == 0 || multicast % "
                               f"smem_box_shape[{i}] == 0 ({box[i]} and {m})")
        new_m = -(-m // box[i])
        box[i] = -(-box[i] // m)
        m = new_m
        i -= 1
    for i, b in enumerate(box):
        if not 1 <= b <= 256:
            raise TmaCopyError(f"make_tma_copy: smem_box_shape[{i}] <= (uint32_t(1) << 8) (box dimension {i} is {b})")
    return TmaCopy(value_type=vt, data_type=DATA_TYPE[vt], rank=len(box), global_dim=tuple(map(_val, gdim)),
                   global_strides=tuple(map(_val, bstr[1:])), box_dim=tuple(box), element_strides=(1,) * len(box),
                   swizzle=swizzle, basis=tuple(tuple(js) for _, js in modes),
                   tiler=tuple(_prod_each(cta_v_map.shape)), multicast=multicast)


def _val(x):
    """A run-time integer as a plain int (symbols stay symbolic)."""
    return int(x) if isinstance(x, int) else x


def _is_integer(x) -> bool:
    """An int (static or run-time) or a sympy expression known to be an integer."""
    return isinstance(x, int) or getattr(x, "is_integer", None) is True


def _is_static_value(x) -> bool:
    try:
        int(x)
        return True
    except TypeError:
        return False


def _scale(stride, k):
    if isinstance(stride, tuple):
        return tuple(_scale(s, k) for s in stride)
    return stride * k


def _flat(t):
    if isinstance(t, tuple):
        out = []
        for x in t:
            out.extend(_flat(x))
        return out
    return [t]


def _prod_each(shape):
    shape = shape if isinstance(shape, tuple) else (shape,)
    return [math.prod(_flat(s)) for s in shape]
