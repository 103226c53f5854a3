"""Copy-only kernels: TiledCopies between global memory and registers (``[g2r.X]``, ``[r2g.X]``).

``copy(tiled_copy, thr.partition_S(gX), tXrX)`` moves every element of the gmem tile into the register
fragment ``tXrX = make_fragment_like(...)`` of the thread that owns it; the registers are private to the
thread and compact, so every property of the copy is a property of its gmem side, decided by the
global-memory copy model of :mod:`symlayout.prove.datapath.g2s` with the register fragment in the place
of the shared-memory tile: register ``v`` of thread ``t`` is the element offset ``t * V + v`` (``V``
values per thread), so each access is contiguous and aligned there as it is in registers.

``coverage`` (every element of the tile is read, or written), ``exactly_once`` (by one access),
``alignment`` (the gmem side: each access starts at its width and is contiguous), ``coalescing``
(32-byte sectors per warp request) and ``in_bounds`` (with ``residue``: every executed access inside
the problem, for every residue) are proved for every admissible value of the gmem tile's symbols.

>>> from symlayout.config import loads_config
>>> cfg = loads_config('''[params]
... ldx = { min = 256, max = 65536, multiple_of = 16 }
... [g2r.x]
... atom = "UniversalCopy<uint128_t>"
... type = "bfloat16_t"
... thr = "(4,32):(32,1)"
... val = "(1,8)"
... gmem = "(4,256):(ldx,1)"
... gmem_align = 16
... ''')
>>> [(r.property, r.status) for r in prove_register_copy(cfg.regcopies["g2r.x"], cfg.params)]
[('coverage', 'proved'), ('alignment', 'proved'), ('exactly_once', 'proved'), ('in_bounds', 'proved'), ('coalescing', 'proved')]
"""
from __future__ import annotations

import dataclasses

from ...algebra.int_tuple import product
from ...algebra.layout import Layout, composition, function_table, right_inverse
from ...atoms.copy import make_copy_atom, width_mismatch
from ...errors import CuteStaticAssert, SymlayoutError
from ..datapath.g2s import NotModelled, build_global_model, prove_global, rejection
from ..datapath.path import width_refutation
from ..verdict.result import ERROR, PROVED, REFUTED, Result

#: the properties of a register copy (in the spec's order)
REGCOPY_PROPERTIES = ("coverage", "alignment", "exactly_once", "in_bounds", "coalescing")


def register_layout(gc) -> Layout:
    """The thread-private register fragment as an element offset of the (M,N) tile: element ``i``, held in
    value ``v`` of thread ``t`` (``tidfrg_S(i) = (t, v)``), at ``t * V + v``.  A TiledCopy whose threads do not
    hold each element exactly once has no such layout: then the gmem layout itself (its symbols at their
    first admissible value) stands in for the registers, contiguous wherever the gmem side is."""
    M, N = (int(product(gc.gmem.shape[i])) for i in range(2))
    tc = gc.tiled.build(make_copy_atom(gc.atom, gc.element_type))
    tf = tc.tidfrg_S(Layout((M, N)))
    T = int(product(tf.shape[0]))
    V = int(tf.size()) // T
    flat = composition(tf, Layout((T, V)))
    try:
        R = composition(composition(Layout((T, V), (V, 1)), right_inverse(flat)), Layout((M, N)))
        table = function_table(R)
    except SymlayoutError:
        return None
    if len(table) == M * N and sorted(table) == list(range(M * N)) and \
            sorted(function_table(flat)) == list(range(M * N)):
        return R
    return None


def _stand_in(gc, params):
    """The gmem layout with its symbols at their first admissible values (see :func:`register_layout`)."""
    def sub(x):
        if isinstance(x, tuple):
            return tuple(sub(e) for e in x)
        if isinstance(x, int):
            return x
        return int(x.subs({s: params[s.name].first_value() for s in x.free_symbols}))
    return Layout(gc.gmem.shape, sub(gc.gmem.stride))


def _renamed(r: Result, gc) -> Result:
    """A result of the global-copy model told as the register copy it is (a load reads, a store writes)."""
    r.operand = gc.table
    r.detail = r.detail.replace(f"s2g.{gc.operand}", gc.table)
    cex = r.counterexample
    if cex is not None and gc.kind == "g2r":
        cex.message = cex.message.replace("is never written", "is never read").replace(
            "is written", "is read")
    if cex is not None:
        cex.message = cex.message.replace(f"s2g.{gc.operand}", gc.table).replace("smem", "register")
    return r


def prove_register_copy(gc, params, properties=None, refuted=frozenset()) -> list:
    """The results of one ``[g2r.X]`` / ``[r2g.X]``."""
    props = [p for p in (properties or REGCOPY_PROPERTIES) if p in REGCOPY_PROPERTIES]
    why = width_mismatch(gc.atom, gc.type, gc.element_type)
    if why is not None:
        return [width_refutation(why, gc.table, refuted)]
    try:
        regs = register_layout(gc)
        if regs is None:
            regs = _stand_in(gc, params)
        # the register side in smem's place; "s2g" puts every check on the gmem side (the loads read there)
        model_cfg = dataclasses.replace(gc, kind="s2g", smem=regs, raw_smem=str(regs), align=1 << 16)
        m = build_global_model(model_cfg, params)
    except CuteStaticAssert as e:
        r = rejection(e, gc, refuted)
        r.operand = gc.table
        return [r]
    except (NotModelled, SymlayoutError) as e:
        return [Result(p, ERROR, operand=gc.table, detail=str(e), expected=REFUTED if p in refuted else PROVED)
                for p in props[:1]]
    return [_renamed(r, gc) for r in prove_global(m, props, refuted=refuted)]
