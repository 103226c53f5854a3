"""Conformance handlers for the IntTuple, Layout and Swizzle ops."""
from __future__ import annotations

from ..algebra import int_tuple as it
from ..algebra import layout as L
from ..algebra.composed import compose_left
from ..algebra.notation import parse, parse_int_tuple, parse_layout
from ..atoms.types import value_type_bits


def _p(x):
    return parse(x) if isinstance(x, str) else x


def _t(x):
    return parse_int_tuple(x) if isinstance(x, str) else x


def _idx2crd(a):
    return it.idx2crd(a[0], _t(a[1]), _t(a[2]) if len(a) > 2 else None)


def _crd2idx(a):
    return it.crd2idx(_t(a[0]), _t(a[1]), _t(a[2]) if len(a) > 2 else None)


def _swizzle(a):
    return {"table": parse(a[0]).table()}


def _swizzle_layout(a):
    C = parse_layout(a[0])
    if getattr(C, "is_composed", False):
        return compose_left(C.swizzle, C.inner) if C.offset == 0 else C
    return C


def _complement(a):
    return L.complement(_p(a[0]), _p(a[1]) if len(a) > 1 else None)


def _coalesce(a):
    return L.coalesce(_p(a[0]), _t(a[1]) if len(a) > 1 else None)


def _tile_to_shape(a):
    return L.tile_to_shape(_p(a[0]), _t(a[1]), _t(a[2]) if len(a) > 2 else None)


def _make_layout_tv(a):
    tiler, tv = L.make_layout_tv(_p(a[0]), _p(a[1]))
    return {"tiler": tiler, "layout_tv": tv}


def _binary(f):
    return lambda a: f(_p(a[0]), _p(a[1]))


OPS = {
    "product": lambda a: it.product(_t(a[0])),
    "product_each": lambda a: it.product_each(_t(a[0])),
    "prefix_product": lambda a: it.prefix_product(_t(a[0]), _t(a[1]) if len(a) > 1 else 1),
    "shape_div": lambda a: it.shape_div(_t(a[0]), _t(a[1])),
    "ceil_div": lambda a: it.ceil_div(_t(a[0]), _t(a[1])),
    "idx2crd": _idx2crd,
    "crd2idx": _crd2idx,
    "flatten": lambda a: it.flatten(_t(a[0])),
    "congruent": lambda a: it.congruent(_t(a[0]), _t(a[1])),
    "weakly_congruent": lambda a: it.weakly_congruent(_t(a[0]), _t(a[1])),
    "compatible": lambda a: it.compatible(_t(a[0]), _t(a[1])),
    "layout": lambda a: parse_layout(a[0]),
    "size": lambda a: parse_layout(a[0]).size(),
    "cosize": lambda a: parse_layout(a[0]).cosize(),
    "coalesce": _coalesce,
    "filter": lambda a: L.filter(_p(a[0])),
    "composition": _binary(L.composition),
    "complement": _complement,
    "left_inverse": lambda a: L.left_inverse(_p(a[0])),
    "right_inverse": lambda a: L.right_inverse(_p(a[0])),
    "logical_divide": _binary(L.logical_divide),
    "zipped_divide": _binary(L.zipped_divide),
    "tiled_divide": _binary(L.tiled_divide),
    "flat_divide": _binary(L.flat_divide),
    "logical_product": _binary(L.logical_product),
    "zipped_product": _binary(L.zipped_product),
    "tiled_product": _binary(L.tiled_product),
    "blocked_product": _binary(L.blocked_product),
    "raked_product": _binary(L.raked_product),
    "tile_to_shape": _tile_to_shape,
    "upcast": lambda a: L.upcast(_p(a[0]), a[1]),
    "downcast": lambda a: L.downcast(_p(a[0]), a[1]),
    # issue 29: recast_layout<Old, New>(layout) with CuTe's value types (sub-byte ones included)
    "recast_layout": lambda a: L.recast_layout(_p(a[0]), value_type_bits(a[1]), value_type_bits(a[2])),
    "max_common_vector": _binary(L.max_common_vector),
    "max_common_layout": _binary(L.max_common_layout),
    "make_layout_tv": _make_layout_tv,
    "swizzle": _swizzle,
    "swizzle_layout": _swizzle_layout,
}
