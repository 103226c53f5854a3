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
import time

from ...algebra.int_tuple import product
from ...algebra.layout import Layout, composition, function_table, right_inverse
from ...atoms.copy import make_copy_atom, width_mismatch
from ...errors import CuteStaticAssert, SymlayoutError
from ..datapath.g2s import NotModelled, build_global_model, prove_global, rejection
from ..datapath.path import width_refutation
from ...tiled.mma import make_tiled_mma
from ..decide.tables import lazy_np as np
from ..verdict.result import ERROR, PROVED, REFUTED, UNKNOWN, Counterexample, Result

#: the properties of a register copy (in the spec's order); an atomic accumulation has ``contributions`` for
#: ``exactly_once``
REGCOPY_PROPERTIES = ("coverage", "alignment", "exactly_once", "in_bounds", "coalescing", "contributions")


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


def prove_register_copy(gc, params, properties=None, refuted=frozenset(), mma=None) -> list:
    """The results of one ``[g2r.X]`` / ``[r2g.X]`` (``mma``: the MMAConfig a ``fragment = "C"`` names)."""
    props = [p for p in (properties or REGCOPY_PROPERTIES) if p in REGCOPY_PROPERTIES]
    props = [p for p in props if p != ("exactly_once" if gc.reduce else "contributions")]
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
    out = [_renamed(r, gc) for r in prove_global(m, props, refuted=refuted)]
    if "contributions" in props:
        r = contributions(m, gc, params, mma)
        r.expected = REFUTED if "contributions" in refuted else PROVED
        out.append(r)
    return out


# ---------------------------------------------------------------- atomic accumulation

def _contributors_text(gc, params) -> str:
    c = gc.contributors
    return f"{c}" if isinstance(c, int) else f"{c} (every value of [params] {c})"


def fragment_mismatch(m, gc, mma):
    """``fragment = "C"``: the accumulator's values per thread against the copy's.  ``(message, compiles)`` or None:
    flash-attention's loop ``atomicAdd(&tdQgdQaccum(i), acc_dq(i))`` sits behind CUTE_STATIC_ASSERT_V(size(acc_dq) ==
    size(tdQgdQaccum))."""
    if gc.fragment != "C" or mma is None:
        return None
    tm = make_tiled_mma(mma.atom, mma.layout, list(mma.permutation) if mma.permutation else None)
    acc = int(tm.get_slice(0).partition_fragment_C(Layout(m.shape)).size())
    vals = {len(accs) * m.k for accs in m.accesses.values()}
    if vals != {acc}:
        return (f"each thread holds {acc} accumulator values but the copy's partition has {sorted(vals)[0]}: "
                "static_assert size(acc) == size(partition) fails", False)
    return None                     # (equal values per thread over one tile: equal thread counts)


def contributions(m, gc, params, mma=None) -> Result:
    """Every address of the tile receives every contribution once: one add from each contributing CTA (they run
    the same partition on the same tile), so each address is added to by exactly one (thread, value) of a CTA;
    a missing or duplicated contribution is the counterexample, for every admissible value of the symbols."""
    t0 = time.perf_counter()
    why = fragment_mismatch(m, gc, mma)
    if why is not None:
        text, compiles = why
        return Result("contributions", REFUTED, operand=gc.table, checked=1, method="exhaustive" if compiles else "cute",
                      counterexample=Counterexample(text if compiles else f"CuTe does not compile the accumulation: "
                                                                          f"{text}"),
                      seconds=time.perf_counter() - t0)
    arrays = m.gmem_arrays()
    if arrays is None:
        return Result("contributions", UNKNOWN, operand=gc.table, seconds=time.perf_counter() - t0,
                      detail="the gmem tile's symbols have too many combinations to enumerate")
    who = [(t, c, e) for t, accs in m.accesses.items() for c, _a in enumerate(accs) for e in range(m.k)]
    starts = np.array([a[0] for accs in m.accesses.values() for a in accs], dtype=np.int64)
    checked = 0
    for asg, G in arrays:
        G = np.asarray(G, dtype=np.int64)
        written = (G[starts][:, None] + np.arange(m.k)).ravel()
        tile = G[:m.n]
        u, cnt = np.unique(written, return_counts=True)
        pos = np.minimum(np.searchsorted(u, tile), len(u) - 1)
        got = np.where(u[pos] == tile, cnt[pos], 0)
        bad = np.flatnonzero(got != 1)
        outside = np.setdiff1d(u, tile)
        if len(bad) == 0 and len(outside) == 0:
            checked += m.n
            continue
        if len(bad):
            i = int(bad[0])
            checked += i + 1
            return Result("contributions", REFUTED, operand=gc.table, checked=checked, method="exhaustive",
                          counterexample=_contribution_cex(m, gc, params, asg, i, int(got[i]), written, who),
                          seconds=time.perf_counter() - t0)
        j = int(np.flatnonzero(np.isin(written, outside))[0])
        t, c, e = who[j]
        cex = Counterexample(f"thread {t} adds value {e} of access {c} at gmem offset {int(written[j])}, outside the "
                             f"{m.shape[0]}x{m.shape[1]} tile{_at(asg)}", thread=t, value=e, params=asg or None)
        return Result("contributions", REFUTED, operand=gc.table, checked=checked + 1, method="exhaustive",
                      counterexample=cex, seconds=time.perf_counter() - t0)
    return Result("contributions", PROVED, operand=gc.table, checked=checked, method="exhaustive",
                  seconds=time.perf_counter() - t0,
                  detail=f"each address: one atomic add from each of the {_contributors_text(gc, params)} CTAs")


def _at(asg) -> str:
    return (" (at " + ", ".join(f"{k} = {v}" for k, v in asg.items()) + ")") if asg else ""


def _contribution_cex(m, gc, params, asg, i, count, written, who) -> Counterexample:
    g = int(np.asarray(m.gmem_arrays()[[a for a, _G in m.gmem_arrays()].index(asg)][1])[i])
    adders = [who[j] for j in np.flatnonzero(written == g)[:3].tolist()]
    el = m.el(i)
    c = _contributors_text(gc, params)
    if count == 0:
        msg = (f"missing contribution: {el} (gmem offset {g}) receives no add from any thread of a CTA, so none of "
               f"the {c} contributions it needs{_at(asg)}")
    else:
        by = " and ".join(f"thread {t} value {e} of access {a}" for t, a, e in adders)
        msg = (f"duplicated contribution: {el} (gmem offset {g}) receives {count} adds from each CTA ({by}), "
               f"{count} x {c} in all instead of {c}{_at(asg)}")
    return Counterexample(msg, thread=adders[0][0] if adders else None, value=adders[0][2] if adders else None,
                          element=m.coord(i), params=asg or None,
                          extra={"contributions_per_cta": count, "adders": [list(a) for a in adders]})
