"""Pipeline stages: the PIPE mode of a staged shared-memory buffer ``(M,K,PIPE)``.

A kernel with ``[stages] count = n`` (or an smem layout that carries its PIPE mode, as
``tile_to_shape(atom, (M,K,PIPE))`` prints it; an SM100 ``[smem.X]`` buffer
``((MMA_MN,MMA_K),MMAs_MN,MMAs_K,PIPE)`` through its ``(MN, K, PIPE)`` view) copies stage ``s`` of the
buffer while the MMA reads another.  Every property of ``[copy.X]`` and ``[g2s.X]`` is proved on stage 0; this module proves
that the others inherit them and that the stages do not overlap:

* ``in_bounds`` (operand ``stages.X``): every stage is stage 0 moved by a whole number of 128-byte
  rows (so each address keeps its bank and its alignment: every stage-0 verdict holds for it; a
  stage that is not such a translate is UNKNOWN, never assumed), and the shared memory of the
  mainloop as the configuration states it (A and B, all stages; the ``[sf.X]`` factor buffers;
  ``[stages] barrier_bytes`` per stage) fits in what one block may use on the MMA's architecture
  (the result's detail says what was counted and what was not);
* ``exactly_once`` (operand ``stages.X``): no byte belongs to two stages.

>>> from symlayout.config import loads_config
>>> cfg = loads_config('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n[copy.A]\\natom = "SM75_U32x4_LDSM_N"\\n'
...                    'type = "half_t"\\nsmem = "Sw<3,3,3> o (16,64,3):(64,1,1024)"\\n')
>>> [(r.property, r.operand, r.status) for r in prove_stages(cfg, ["exactly_once", "in_bounds"])]
[('exactly_once', 'stages.A', 'proved'), ('in_bounds', 'stages.A', 'proved')]
"""
from __future__ import annotations

import time

from ...algebra import int_tuple as it
from ...atoms import value_type_bits
from ...atoms.types import smem_slot_bits
from ...atoms.umma import mn_k_view
from ..decide.tables import index_table, lazy_np as np, one_owner
from ..verdict.result import PROVED, REFUTED, UNKNOWN, Counterexample, Result, verdict
from ..verdict.shared import shared

#: bytes of shared memory one block may use (opt-in maximum), by the MMA atom's architecture (SM100, SM120:
#: CUTLASS's cutlass/arch/arch.h sm100_smem_capacity_bytes / sm120_smem_capacity_bytes)
SMEM_CAPACITY = {"SM80": 166912, "SM86": 101376, "SM89": 101376, "SM90": 232448, "SM100": 232448, "SM120": 101376}


def _capacity(mma_atom: str) -> tuple[str, int]:
    for arch, cap in SMEM_CAPACITY.items():
        if mma_atom.startswith(arch):
            return arch, cap
    return "SM80", SMEM_CAPACITY["SM80"]


def staged_buffers(cfg) -> dict:
    """``operand -> (staged layout, stages, value bits)`` for the A/B buffers that have stages
    (a ``[g2s.X]`` with its own smem counts when no ``[copy.X]`` gives one)."""
    out = {}
    for op in ("A", "B"):
        for table in (cfg.copies, cfg.g2s):
            c = table.get(op)
            if c is not None and getattr(c, "smem_staged", None) is not None:
                out[op] = (c.smem_staged, c.stages, _slot_bits(c))
                break
        sc = getattr(cfg, "smem", {}).get(op)       # a GMMA / UMMA operand's [smem.X] tile with its PIPE mode
        if op not in out and sc is not None:
            inner = descriptor_tile(sc.layout, cfg.mma is not None and cfg.mma.is_sm100)
            n = it.product(inner.shape[2]) if inner.rank() == 3 else 1
            if isinstance(n, int) and n > 1 and all(isinstance(x, int) for x in it.flatten(inner.shape)):
                out[op] = (inner, n, smem_slot_bits(sc.type))
    return out


def descriptor_tile(lay, sm100: bool):
    """The ``(MN, K[, PIPE])`` layout (without its swizzle) of an ``[smem.X]`` buffer: a GMMA tile as written;
    an SM100 buffer in ``UMMA::tile_to_mma_shape``'s form ``((MMA_MN,MMA_K),MMAs_MN,MMAs_K[,PIPE])`` seen
    through :func:`~symlayout.atoms.umma.mn_k_view` (one CTA's share: a pair's peer holds MN/2)."""
    inner = getattr(lay, "layout", None) or getattr(lay, "inner", lay)
    return mn_k_view(inner) if sm100 and inner.rank() >= 3 else inner


def _slot_bits(c) -> int:
    """Bits of one element offset of a copy's buffer (CuTe's byte view of padded fp4/fp6: [copy.X] route_type)."""
    return value_type_bits(getattr(c, "route_type", c.element_type))


def _name(i, M, s):
    return f"({i % M},{i // M}) of stage {s}"


def stage0_buffers(cfg) -> dict:
    """``operand -> (stage-0 layout, value bits)`` of the A/B buffers a family of stage counts stages."""
    out = {}
    for op in ("A", "B"):
        for table in (cfg.copies, cfg.g2s):
            c = table.get(op)
            if c is not None and getattr(c, "smem", None) is not None:
                out[op] = (c.smem, _slot_bits(c))
                break
    return out


def first_overlap(addrs, d: int):
    """The least ``k >= 1`` such that stage 0 (element offsets ``addrs``) and stage 0 moved by ``k * d``
    share an offset, or None when no translate ever meets it.  Only ``k * d <= span`` can meet it (the
    difference of two offsets is at most the span), so the answer holds for every stage count: a buffer
    of ``n`` stages overlaps exactly when ``n > k``."""
    have = set(addrs)
    span = max(addrs) - min(addrs)
    if d <= 0:
        return 1
    for k in range(1, span // d + 1):
        if any(a + k * d in have for a in addrs):
            return k
    return None


def prove_stage_family(cfg, props, refuted=frozenset()) -> list:
    """``[stages] count = "s"``: the stage results for every count ``s`` of ``[params]``, by the
    translation argument: the buffer of ``s`` stages is stage 0 and its translates by ``k * C``
    elements (``C`` = cosize of stage 0, ``k < s``), so

    * ``exactly_once``: no two stages share a byte, for every member: stage 0 lies in ``[0, C)`` (the
      translates meet only if some ``k * C`` is a difference of two stage-0 offsets, see
      :func:`first_overlap`: decided for the whole family at once);
    * ``in_bounds``: every stage inherits stage 0's verdicts when ``C`` bytes are a multiple of 128 (each
      address keeps its bank and alignment; otherwise UNKNOWN as for a concrete count), and the buffers
      fit the block's shared memory: their size grows with ``s``, so the largest member decides, and the
      counterexample is the least count that does not fit.
    """
    name = cfg.stages_param
    p = cfg.params[name]
    counts = p.values() if p.count() <= 1_000_000 else None
    lo = counts[0] if counts else -(-p.min // p.multiple_of) * p.multiple_of
    hi = counts[-1] if counts else p.max // p.multiple_of * p.multiple_of
    bufs = stage0_buffers(cfg)
    out = []
    per_stage = 0
    members = f"{name} in {{{lo}..{hi}}}" + (f" (multiples of {p.multiple_of})" if p.multiple_of > 1 else "")
    for op, (s0, bits) in sorted(bufs.items()):
        eb = bits / 8
        t0 = time.perf_counter()
        table = [int(x) for x in index_table(s0).tolist()]
        C = int(s0.cosize())
        per_stage += int(C * eb)
        label = f"stages.{op}"
        if "exactly_once" in props:
            k = first_overlap(table, C)
            cex = None
            if k is not None and k + 1 <= hi:
                n = min(v for v in (counts or [k + 1, hi]) if v >= k + 1)
                a = next(x for x in table if x + k * C in set(table))
                cex = Counterexample(f"with {name} = {n}: stage {k} and stage 0 of the {op} buffer overlap at byte "
                                     f"{int((a + k * C) * eb)}", address_bytes=int((a + k * C) * eb),
                                     params={name: n}, extra={"stages": [0, k]})
            out.append(Result("exactly_once", verdict(cex, len(table)), operand=label, checked=len(table),
                              method="translation", counterexample=cex, seconds=time.perf_counter() - t0,
                              detail=f"every member {members}: stage k is stage 0 moved by k*{int(C * eb)} bytes",
                              expected=REFUTED if "exactly_once" in refuted else PROVED))
        if "in_bounds" in props:
            if (C * eb) % 128 and hi >= 2:
                r = Result("in_bounds", UNKNOWN, operand=label, method="translation",
                           detail=f"stage 1 of the {op} buffer is stage 0 moved by {int(C * eb)} bytes, not a whole "
                                  "number of 128-byte rows: its own copies are not proved (not supported)")
            else:
                r = Result("in_bounds", verdict(None, len(table)), operand=label, checked=len(table),
                           method="translation",
                           detail=f"every member {members}: stage k is stage 0 moved by k*{int(C * eb)} bytes, a "
                                  "multiple of 128 (every stage-0 verdict holds for it)")
            r.expected = REFUTED if "in_bounds" in refuted else PROVED
            r.seconds = time.perf_counter() - t0
            out.append(r)
    if "in_bounds" in props and per_stage:
        names = sorted(bufs)
        if getattr(cfg, "stage_barrier_bytes", None):
            per_stage += cfg.stage_barrier_bytes
            names.append("barriers")
        arch, cap = _capacity(cfg.mma.atom if cfg.mma else "")
        missing = uncounted(cfg) + (" and the [sf.X] factor buffers (a family's factor stages are not modelled)"
                                    if any(f.smem is not None for f in getattr(cfg, "sf", {}).values()) else "")
        for r in out:
            if r.property == "in_bounds" and r.status != UNKNOWN:
                r.detail = "; ".join(x for x in (r.detail, f"counted: {', '.join(names)}, {per_stage} bytes a stage",
                                                 missing) if x)
        if hi * per_stage > cap:
            n = next(v for v in (counts or range(lo, hi + 1)) if v * per_stage > cap)
            cex = Counterexample(f"with {name} = {n}: the staged shared-memory buffers ({', '.join(names)}: "
                                 f"{per_stage} bytes a stage) take {n * per_stage} bytes; an {arch} block may use at "
                                 f"most {cap}", params={name: n},
                                 extra={"bytes": n * per_stage, "capacity": cap, "stages": n})
            for r in out:
                if r.property == "in_bounds" and r.status != UNKNOWN:
                    r.status, r.counterexample = REFUTED, cex
    return out


def stage_key(op, buffer, props, refuted=frozenset()) -> tuple:
    """Everything :func:`buffer_stages` reads of one staged buffer (``buffer``: its staged layout, stage count
    and value bits), as a hashable key, for configurations that share it (:mod:`symlayout.prove.verdict.shared`):
    a buffer's results do not depend on the other operand's buffer (only the capacity check does, done after)."""
    staged, n, bits = buffer
    return ("stages", op, repr(staged), n, bits, tuple(props), tuple(sorted(refuted)))


def prove_stages(cfg, props, refuted=frozenset(), memo: dict | None = None) -> list:
    """The stage results of a configuration (nothing when it has no stages); ``memo``: each staged buffer's
    results proved once per :func:`stage_key` (a family of stage counts is not shared)."""
    if getattr(cfg, "stages_param", None):
        return prove_stage_family(cfg, props, refuted)
    out = []
    bufs = staged_buffers(cfg)
    if not bufs:
        return out
    sizes = {}
    for op, buf in sorted(bufs.items()):
        results, size = shared(memo, stage_key(op, buf, props, refuted),
                               lambda op=op, buf=buf: buffer_stages(op, buf, props, refuted))
        out.extend(results)
        sizes[op] = size
    if "in_bounds" in props:
        n = max(b[1] for b in bufs.values())
        parts = [(op, sizes[op], f" ({b[1]} stages)") for op, b in sorted(bufs.items())] + side_buffers(cfg, n)
        total = sum(b for _, b, _ in parts)
        arch, cap = _capacity(cfg.mma.atom if cfg.mma else "")
        told = "counted: " + ", ".join(f"{name} {b}" for name, b, _ in parts) + f" = {total} bytes"
        missing = uncounted(cfg)
        cex = None
        if total > cap:
            cex = Counterexample(f"the shared memory of the mainloop ({', '.join(f'{name}: {b} bytes{how}' for name, b, how in parts)}) "
                                 f"takes {total} bytes; an {arch} block may use at most {cap}",
                                 extra={"bytes": total, "capacity": cap, "buffers": {k: b for k, b, _ in parts}})
        for r in out:                         # every staged buffer takes its part of the total
            if r.property == "in_bounds" and r.status != UNKNOWN:
                r.detail = "; ".join(x for x in (r.detail, told, missing) if x)
                if cex is not None:
                    r.status, r.counterexample = REFUTED, cex
    return out


def side_buffers(cfg, n: int) -> list:
    """``(name, bytes, how)`` of what shares the block's shared memory with the A/B stages, as the configuration
    states it: each ``[sf.X]`` factor buffer (its ``smem``, every stage) and ``[stages] barrier_bytes`` per stage
    (``n`` stages)."""
    out = []
    for op, sf in sorted(getattr(cfg, "sf", {}).items()):
        if sf.smem is not None:
            out.append((f"SF{op}", int(sf.smem.cosize()) * value_type_bits(sf.type) // 8, ""))
    per = getattr(cfg, "stage_barrier_bytes", None)
    if per:
        out.append(("barriers", n * per, f" ({n} x {per})"))
    return out


def uncounted(cfg) -> str:
    """What a capacity check cannot count because the configuration does not state it."""
    if getattr(cfg, "stage_barrier_bytes", None) is None:
        return "not counted: the pipeline's barriers (no [stages] barrier_bytes) and the epilogue's buffers"
    return "not counted: the epilogue's buffers"


def buffer_stages(op, buffer, props, refuted=frozenset()) -> tuple[list, int]:
    """(the ``exactly_once`` and ``in_bounds`` results of operand ``op``'s staged buffer, its bytes)."""
    staged, n, bits = buffer
    out = []
    eb = bits / 8
    t0 = time.perf_counter()
    table = index_table(staged)               # (every stage's element offsets, stage-major)
    S = len(table) // n
    M = it.product(staged.shape[0])
    size = int(staged.cosize() * eb)
    label = f"stages.{op}"
    if "exactly_once" in props:
        # the first (stage, element) whose address an earlier stage already holds (none when every
        # address belongs to one stage: decided at once)
        cex = None
        if one_owner(table[:n * S], np.arange(n * S) // S):
            bad = None
        else:
            _u, first, inv = np.unique(table[:n * S], return_index=True, return_inverse=True)
            f = first[inv.ravel()]
            bad = f // S != np.arange(n * S) // S
        if bad is not None and bad.any():
            j = int(np.argmax(bad))
            s, i, o = j // S, j % S, (int(f[j]) // S, int(f[j]) % S)
            a = int(table[j])
            cex = Counterexample(f"stage {s} and stage {o[0]} of the {op} buffer overlap: byte "
                                 f"{int(a * eb)} holds {op}{_name(i, M, s)} and {op}{_name(o[1], M, o[0])}",
                                 element=(i % M, i // M), address_bytes=int(a * eb),
                                 extra={"stages": [o[0], s]})
        out.append(Result("exactly_once", verdict(cex, n * S), operand=label, checked=n * S, method="exhaustive",
                          counterexample=cex, seconds=time.perf_counter() - t0,
                          expected=REFUTED if "exactly_once" in refuted else PROVED))
    if "in_bounds" in props:
        t0 = time.perf_counter()
        status, detail = None, ""
        base = table[:S]
        for s in range(1, n):
            d = int(table[s * S] - base[0])
            if (d * eb) % 128 or not np.array_equal(table[s * S:(s + 1) * S], base + d):
                status = UNKNOWN
                detail = (f"stage {s} of the {op} buffer is not stage 0 moved by a whole number of 128-byte rows: "
                          "its own copies are not proved (not supported)")
                break
        out.append(Result("in_bounds", status or verdict(None, n * S), operand=label, checked=n * S,
                          method="exhaustive",
                          detail=detail or f"{n} stages of {int(S * eb)} bytes, each stage 0 moved by a multiple of "
                                           "128 bytes (every stage-0 verdict holds for it)",
                          expected=REFUTED if "in_bounds" in refuted else PROVED))
    return out, size
