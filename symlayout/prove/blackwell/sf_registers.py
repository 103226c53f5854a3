"""SM120 block-scale factors in registers (issue 29): ``sf`` and ``sf_kind`` of ``[sf.X] placement = "registers"``.

``mma.sync ... .block_scale`` reads the factor of (row ``m``, K-block ``j``) of A from byte ``byte-id-a + j`` of
the ``scale-a-data`` register of one lane, the lane the thread-id-a selector picks (PTX ISA, as data in
:func:`symlayout.atoms.sm120.scale_factor_source`; B alike with thread-id-b).  The kernel fills those registers
through the factors' per-thread fragment: a TV layout ``(T32,V) -> (MN,K)`` over one atom (CuTe's
``SFALayout`` / ``SFBLayout``, or ``[sf.X] registers``), value ``v`` in register byte ``v / vec``.

``sf`` [sf.X], decided by enumerating every (row, K-block) of the atom (every warp of the TiledMMA issues the
same atom with the same selectors):

* the selectors are ones the ISA allows;
* the byte the instruction reads exists in the fragment (the register holds ``V / vec`` factor bytes);
* it holds the factor of that (row, K-block) and of nothing else: every value of the byte is an element of
  that row and K-block (the instruction's K-blocks: ``.scale_vec``'s elements per factor).

So every (row, K-block) gets exactly one factor (the instruction reads one byte per point; the points are
distinct), the one the thread and byte it reads hold.  ``smem`` (over (MN, K[, stages])), when given, is checked
for one slot per (row, K-block, stage), exactly once, where the SM120 collective's ``SmemLayoutSFA/SFB`` puts it.

``sf_kind``: the factor type and vector size are the atom's (``ValTypeSF``, ``SFVecSize``), and the instruction
CuTe issues reads one factor per ``vec`` elements (:func:`symlayout.atoms.sm120.kind_problems`).

Every refutation is re-derived (CuTe's ``crd2idx`` on the TV layout's hierarchical coordinate) before it is
reported.
"""
from __future__ import annotations

import time

from ...algebra import int_tuple as it
from ...algebra.layout import function_table
from ...atoms.sm120 import (kind_problems, parse_sm120_name, scale_factor_source, scale_vec, selector_problems,
                            sm120_sf_layouts, smem_layout_sf)
from ..decide.tables import lazy_np as np
from ..verdict.result import Counterexample, Result, verdict
from .sf import Offsets, _decide, each_sf

#: the properties of a ``[sf.X]`` table
SF_REGISTER_PROPERTIES = ("sf_kind", "sf")


def _res(prop, x, t0, cex=None, checked=None, detail=""):
    return Result(prop, verdict(cex, checked), operand=f"sf.{x}", checked=checked, method="exhaustive",
                  counterexample=cex, via="mma.sync", detail=detail, seconds=time.perf_counter() - t0)


def sf_register_results(cfg, props) -> list:
    """``sf_kind`` and ``sf`` of every ``[sf.X]`` of an SM120 configuration."""
    op = parse_sm120_name(cfg.mma.atom)
    return each_sf(cfg, props, lambda sc: sf_kind_result(op, sc), lambda x, sc: sf_result(op, sc))


def sf_kind_result(op, sc) -> Result:
    t0 = time.perf_counter()
    x = sc.operand
    cex = None
    if (sc.type, sc.vec) != (op.sf_type, op.vs):
        cex = Counterexample(f"[sf.{x}] holds {sc.type} factors, one per {sc.vec} elements, but {op.name} reads "
                             f"{op.sf_type} factors, one per {op.vs} elements (ValTypeSF, SFVecSize)",
                             extra={"sf_type": sc.type, "vec": sc.vec, "mma_sf_type": op.sf_type, "mma_vec": op.vs})
    elif kind_problems(op):
        cex = Counterexample(f"{op.name}: {kind_problems(op)[0]}", extra={"ptx": op.name})
    return _res("sf_kind", x, t0, cex, 2, detail=f"{sc.type}/{sc.vec}: the atom's, and the .scale_vec CuTe issues")


def fragment(op, sc):
    """The factors' TV layout of one atom: ``[sf.X] registers`` or CuTe's ``SFALayout`` / ``SFBLayout``."""
    if sc.registers is not None:
        return sc.registers
    sfa, sfb, _vs, _reg = sm120_sf_layouts(op)
    return sfa if sc.operand == "A" else sfb


def byte_points(L, mn: int, lane: int, byte: int, vec: int, hw_vec: int) -> list:
    """The (row, K-block) of every value of register byte ``byte`` of ``lane`` (values ``byte*vec`` ..),
    each through CuTe's ``crd2idx`` of the TV coordinate; K-blocks of the instruction's ``hw_vec``."""
    T = int(it.product(L.shape[0]))
    V = int(it.product(L.shape[1]))
    pts = []
    for v in range(byte * vec, min((byte + 1) * vec, V)):
        idx = int(it.crd2idx(lane + T * v, L.shape, L.stride))
        pts.append((idx % mn, idx // mn // hw_vec))
    return pts


def sf_result(op, sc) -> Result:
    t0 = time.perf_counter()
    x = sc.operand
    mn = 16 if x == "A" else 8
    hw = scale_vec(op)
    L = fragment(op, sc)
    nbytes = -(-int(it.product(L.shape[1])) // sc.vec)
    sel = f"thread-id-{x.lower()} {sc.thread_id}, byte-id-{x.lower()} {sc.byte_id}"
    bad = selector_problems(op, x, sc.thread_id, sc.byte_id)
    if bad:
        return _res("sf", x, t0, Counterexample(f"[sf.{x}]: {op.name} issued with {sel}: {bad[0]}",
                                                extra={"thread_id": sc.thread_id, "byte_id": sc.byte_id}), 1)
    row = "row" if x == "A" else "column"
    checked = 0
    for j in range(op.k // hw):
        for r in range(mn):
            lane, byte = scale_factor_source(op, x, r, j, sc.thread_id, sc.byte_id)
            checked += 1
            where = f"({row} {r}, K-block {j}) of {x}: mma.sync ({sel}) reads its factor from thread {lane}, register byte {byte}"
            if byte >= nbytes:
                return _res("sf", x, t0, Counterexample(
                    f"{where}, but that thread's scale register holds {nbytes} factor byte(s) (fragment {L}, one byte "
                    f"per {sc.vec} values)", thread=lane, element=(r, j * hw),
                    route=[f"logical {x}({'m' if x == 'A' else 'n'}={r},k={j * hw}..{j * hw + hw - 1}), K-block {j}",
                           f"mma.sync {sel} -> thread {lane}, byte {byte}", f"fragment: no byte {byte}"],
                    extra={"byte": byte}), checked)
            pts = byte_points(L, mn, lane, byte, sc.vec, hw)
            other = next((p for p in pts if p != (r, j)), None)
            if other is not None:
                return _res("sf", x, t0, Counterexample(
                    f"{where}, which holds the factor of ({row} {other[0]}, K-block {other[1]}) (fragment {L})",
                    thread=lane, element=(r, j * hw),
                    route=[f"logical {x}({'m' if x == 'A' else 'n'}={r},k={j * hw}..{j * hw + hw - 1}), K-block {j}",
                           f"mma.sync {sel} -> thread {lane}, byte {byte}",
                           f"fragment {L}: thread {lane}, byte {byte} -> ({row} {other[0]}, K-block {other[1]})"],
                    extra={"byte": byte, "holds": list(other)}), checked)
    cex, more = _smem_check(op, sc) if sc.smem is not None else (None, 0)
    return _res("sf", x, t0, cex, checked + more,
                detail=f"every ({row}, K-block) of the {mn}x{op.k // hw} factors of one atom: read by mma.sync ({sel}) "
                       f"from the thread and byte that hold it" + (", smem: one slot each, where the collective's SmemLayoutSF puts it" if sc.smem is not None else ""))


def _smem_check(op, sc):
    """``[sf.X] smem`` over (MN, K[, stages]): one slot per (row, K-block, stage), exactly once, at the byte the
    SM120 collective's ``SmemLayoutSF`` (:func:`symlayout.atoms.sm120.smem_layout_sf`) gives."""
    L = sc.smem
    mn, k = (int(it.product(m)) for m in L.shape[:2])
    stages = int(it.product(L.shape[2])) if L.rank() == 3 else 1
    want_l = smem_layout_sf(op, mn, k, stages)
    have, hidx = _offsets(L, mn, k, stages)
    want, widx = _offsets(want_l, mn, k, stages)
    x = sc.operand

    def at(lay, idx):
        return lambda p: int(it.crd2idx(int(idx[p]), lay.shape, lay.stride))

    have, want = (Offsets(a.shape, lambda p, i=i: i[p], dense=a) for a, i in ((have, hidx), (want, widx)))
    return _decide(x, sc.vec, have, want, ("row" if x == "A" else "column", "stage"), f"[sf.{x}] smem",
                   "the kernel's shared-to-register copy reads it", f"the SM120 collective's SmemLayoutSF{x}: {want_l}",
                   at(L, hidx), at(want_l, widx))


def _offsets(L, mn: int, k: int, stages: int):
    """``off[r, kk, s]`` through a layout over (MN, K, stages), and the 1-D index of each point."""
    r = np.arange(mn)[:, None, None]
    kk = np.arange(k)[None, :, None]
    s = np.arange(stages)[None, None, :]
    idx = r + mn * (kk + k * s)
    return np.asarray(function_table(L), dtype=np.int64)[idx], idx
