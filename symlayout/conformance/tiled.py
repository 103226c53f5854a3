"""Conformance handlers for TiledMMA and TiledCopy ops."""
from __future__ import annotations

from ..algebra.notation import parse, parse_layout
from ..atoms.copy import make_copy_atom
from ..tiled.copy import copy_calls, make_tiled_copy_X
from ..tiled.mma import make_tiled_mma


def _mma(a):
    return make_tiled_mma(a[0], parse(a[1]), parse(a[2]))


def _tiled_mma(a):
    m = _mma(a)
    return {"ThrLayoutVMNK": m.thr_layout_vmnk, "layoutA_TV": m.get_layoutA_TV(), "layoutB_TV": m.get_layoutB_TV(),
            "layoutC_TV": m.get_layoutC_TV(), "tile_size": m.tile_shape(), "size": m.size()}


def _tiled_mma_partition(a):
    m = _mma(a)
    op, L, t = a[3], parse_layout(a[4]), a[5]
    thr = m.get_slice(t)
    p, off = thr.partition(op, L)
    return {"partition": p, "partition_offset": int(off), "fragment": thr.partition_fragment(op, L)}


def _copy_atom(name, vt):
    return make_copy_atom(name, vt)


def _tiled_copy_obj(a):
    m = make_tiled_mma(a[2], parse(a[3]), parse(a[4]))
    return m, make_tiled_copy_X(_copy_atom(a[0], a[1]), m, a[5])


def _tiled_copy(a):
    m, tc = _tiled_copy_obj(a)
    return {"Tiler_MN": tc.tiler_mn, "TiledLayout_TV": tc.tiled_layout_tv, "layoutS_TV": tc.get_layoutS_TV(),
            "layoutD_TV": tc.get_layoutD_TV(), "size": tc.tiled_num_thr}


def _tiled_copy_partition(a):
    m, tc = _tiled_copy_obj(a)
    op, L, t = a[5], parse_layout(a[6]), a[7]
    thr = tc.get_slice(t)
    ps, pso = thr.partition_S(L)
    pd, pdo = thr.partition_D(L)
    frag = m.get_slice(t).partition_fragment(op, L)
    ret = thr.retile_D(frag)
    if op == "C":
        calls = copy_calls(tc.atom, (ret, 0), (pd, pdo))
    else:
        calls = copy_calls(tc.atom, (ps, pso), (ret, 0))
    return {"partition_S": ps, "partition_S_offset": int(pso), "partition_D": pd, "partition_D_offset": int(pdo),
            "fragment": frag, "retile": ret, "calls": [[list(c.src_regs), list(c.dst_regs)] for c in calls]}


OPS = {
    "tiled_mma": _tiled_mma,
    "tiled_mma_partition": _tiled_mma_partition,
    "tiled_copy": _tiled_copy,
    "tiled_copy_partition": _tiled_copy_partition,
}
