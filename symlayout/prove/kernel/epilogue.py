"""The epilogue's TMA store (``[tma.C]`` with ``[epilogue]``): one subtile from its smem buffer to gmem.

``make_tma_copy(SM90_TMA_STORE, gD, smem layout of one subtile, EpilogueTile)`` cuts the subtile into boxes
exactly as a load does, and the hardware reads box element ``c`` from the smem byte a load would write it
to (the same tensor map, the same swizzle): so ``tma`` (the map is legal, its swizzle is the smem layout's,
every box element is read from where the subtile's layout keeps that element), ``coverage`` (every element
of the subtile is stored), ``exactly_once`` and ``in_bounds`` are the load's obligations
(:func:`symlayout.prove.hopper.obligations.tma_results`) on the subtile buffer, told as a store.  The
store's tile must be the epilogue's subtile (the subtile loop then stores the whole C tile once, as
``[copy.C]`` over the whole tile proves for the registers -> smem half).
"""
from __future__ import annotations

import re
import time

from ..hopper.obligations import tma_results
from ..verdict.result import Counterexample, PROVED, REFUTED, Result

#: the properties of the epilogue's TMA store
EPILOGUE_PROPERTIES = ("tma", "coverage", "exactly_once", "in_bounds")


def _as_store(r: Result) -> Result:
    cex = r.counterexample
    if cex is not None:
        cex.message = re.sub(r"C\(n=(\d+),k=(\d+)\)", r"C(m=\1,n=\2)", cex.message)     # (the subtile is (M,N))
        cex.message = (cex.message.replace("written by the TMA loads", "read by the TMA store")
                       .replace("TMA writes", "the TMA store reads").replace("is written twice", "is read twice")
                       .replace("is written to smem byte", "is read from smem byte")
                       .replace("the load does not run", "the store does not run"))
    r.detail = r.detail.replace("box loads", "box stores").replace("the load does not run", "the store does not run")
    return r


def box_result(epi, tc) -> Result | None:
    """The store's tile against the epilogue's subtile (None when they agree)."""
    if tuple(tc.box) == tuple(epi.tile):
        return None
    cex = Counterexample(f"[tma.C] box {tuple(tc.box)} is not the [epilogue] tile {tuple(epi.tile)}: each store of the "
                         "subtile loop moves another tile than the one [copy.C] wrote to smem",
                         extra={"box": list(tc.box), "tile": list(epi.tile)})
    return Result("tma", REFUTED, operand="C", checked=1, method="exhaustive", counterexample=cex, via="tma")


def prove_epilogue(cfg, props, refuted=frozenset()) -> list:
    """The results of the epilogue's ``[tma.C]`` (none without it)."""
    epi = cfg.epilogue
    if epi is None or epi.tma is None:
        return []
    props = [p for p in props if p in EPILOGUE_PROPERTIES]
    t0 = time.perf_counter()
    bad = box_result(epi, epi.tma)
    out = [bad] if bad is not None else [_as_store(r) for r in tma_results(cfg, epi.smem_table(), epi.tma, props)
                                         if r.property in props or r.method == "cute"]
    for r in out:
        r.seconds = r.seconds or time.perf_counter() - t0
        r.expected = REFUTED if r.property in refuted else PROVED
    return out
