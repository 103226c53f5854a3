"""Conformance handlers for the atom ops ``mma_atom`` and ``copy_atom``.

Keys as in ``shared/conformance/README.md``: ``mma_atom [atom]`` gives ``ThrID``,
``LayoutA_TV``, ``LayoutB_TV``, ``LayoutC_TV`` (Layouts) and ``Shape_MNK`` (a
tuple); ``copy_atom [copy_op, value_type]`` gives ``ThrID``, ``ValLayoutSrc``,
``ValLayoutDst``, ``ValLayoutRef`` (Layouts), ``NumValSrc``, ``NumValDst`` (ints).

>>> r = OPS["mma_atom"](["SM80_16x8x8_F16F16F16F16_TN"])
>>> str(r["LayoutB_TV"]), r["Shape_MNK"]
('((4,8),2):((16,1),8)', (16, 8, 8))
>>> r = OPS["copy_atom"](["SM75_U32x2_LDSM_N", "half_t"])
>>> str(r["ValLayoutDst"]), r["NumValSrc"], r["NumValDst"]
('(32,(2,2)):(2,(1,64))', 8, 4)
"""
from __future__ import annotations

from ..atoms.copy import make_copy_atom
from ..atoms.mma import get_mma_atom


def _mma_atom(args):
    a = get_mma_atom(args[0])
    return {"ThrID": a.thr_id, "LayoutA_TV": a.a_layout, "LayoutB_TV": a.b_layout,
            "LayoutC_TV": a.c_layout, "Shape_MNK": tuple(a.shape_mnk)}


def _copy_atom(args):
    c = make_copy_atom(args[0], args[1])
    return {"ThrID": c.thr_id, "ValLayoutSrc": c.val_layout_src, "ValLayoutDst": c.val_layout_dst,
            "ValLayoutRef": c.val_layout_ref, "NumValSrc": c.num_val_src, "NumValDst": c.num_val_dst}


OPS = {"mma_atom": _mma_atom, "copy_atom": _copy_atom}
