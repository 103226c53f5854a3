"""Pipeline stages: the PIPE mode of a staged shared-memory buffer ``(M,K,PIPE)``.

A kernel with ``[stages] count = n`` (or an smem layout that carries its PIPE mode, as
``tile_to_shape(atom, (M,K,PIPE))`` prints it) copies stage ``s`` of the buffer while the MMA reads
another.  Every property of ``[copy.X]`` and ``[g2s.X]`` is proved on stage 0; this module proves
that the others inherit them and that the stages do not overlap:

* ``in_bounds`` (operand ``stages.X``): every stage is stage 0 moved by a whole number of 128-byte
  rows (so each address keeps its bank and its alignment: every stage-0 verdict holds for it; a
  stage that is not such a translate is UNKNOWN, never assumed), and the shared-memory buffers of
  the mainloop (A and B, all stages) fit in what one block may use on the MMA's architecture;
* ``exactly_once`` (operand ``stages.X``): no byte belongs to two stages.

>>> from symlayout.config import loads_config
>>> cfg = loads_config('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n[copy.A]\\natom = "SM75_U32x4_LDSM_N"\\n'
...                    'type = "half_t"\\nsmem = "Sw<3,3,3> o (16,64,3):(64,1,1024)"\\n')
>>> [(r.property, r.operand, r.status) for r in prove_stages(cfg, ["exactly_once", "in_bounds"])]
[('exactly_once', 'stages.A', 'proved'), ('in_bounds', 'stages.A', 'proved')]
"""
from __future__ import annotations

import time

from ..algebra import int_tuple as it
from ..atoms import value_type_bits
from .tables import index_table, lazy_np as np
from .result import PROVED, REFUTED, UNKNOWN, Counterexample, Result, verdict

#: bytes of shared memory one block may use (opt-in maximum), by the MMA atom's architecture
SMEM_CAPACITY = {"SM80": 166912, "SM86": 101376, "SM89": 101376, "SM90": 232448}


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
                out[op] = (c.smem_staged, c.stages, value_type_bits(c.type))
                break
        sc = getattr(cfg, "smem", {}).get(op)       # Hopper: a GMMA operand's [smem.X] tile with its PIPE mode
        if op not in out and sc is not None:
            inner = getattr(sc.layout, "layout", None) or getattr(sc.layout, "inner", sc.layout)
            n = it.product(inner.shape[2]) if inner.rank() == 3 else 1
            if isinstance(n, int) and n > 1 and all(isinstance(x, int) for x in it.flatten(inner.shape)):
                out[op] = (inner, n, value_type_bits(sc.type))
    return out


def _name(i, M, s):
    return f"({i % M},{i // M}) of stage {s}"


def prove_stages(cfg, props, refuted=frozenset()) -> list:
    """The stage results of a configuration (nothing when it has no stages)."""
    out = []
    bufs = staged_buffers(cfg)
    if not bufs:
        return out
    total = 0
    for op, (staged, n, bits) in sorted(bufs.items()):
        eb = bits / 8
        t0 = time.perf_counter()
        table = index_table(staged)               # (every stage's element offsets, stage-major)
        S = len(table) // n
        M = it.product(staged.shape[0])
        total += int(staged.cosize() * eb)
        label = f"stages.{op}"
        if "exactly_once" in props:
            # the first (stage, element) whose address an earlier stage already holds
            _u, first, inv = np.unique(table[:n * S], return_index=True, return_inverse=True)
            f = first[inv.ravel()]
            bad = f // S != np.arange(n * S) // S
            cex = None
            if bad.any():
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
            status, cex, detail = None, None, ""
            base = table[:S]
            for s in range(1, n):
                d = int(table[s * S] - base[0])
                if (d * eb) % 128 or not np.array_equal(table[s * S:(s + 1) * S], base + d):
                    status = UNKNOWN
                    detail = (f"stage {s} of the {op} buffer is not stage 0 moved by a whole number of 128-byte rows: "
                              "its own copies are not proved (not supported)")
                    break
            r = Result("in_bounds", status or verdict(None, n * S), operand=label, checked=n * S, method="exhaustive",
                       detail=detail or f"{n} stages of {int(S * eb)} bytes, each stage 0 moved by a multiple of 128 "
                                        "bytes (every stage-0 verdict holds for it)",
                       expected=REFUTED if "in_bounds" in refuted else PROVED)
            out.append(r)
    if "in_bounds" in props:
        arch, cap = _capacity(cfg.mma.atom if cfg.mma else "")
        if total > cap:
            cex = Counterexample(f"the staged shared-memory buffers ({', '.join(f'{op}: {n} stages' for op, (_, n, _) in sorted(bufs.items()))}) "
                                 f"take {total} bytes; an {arch} block may use at most {cap}",
                                 extra={"bytes": total, "capacity": cap})
            for r in out:                     # every staged buffer takes its part of the total
                if r.property == "in_bounds" and r.status != UNKNOWN:
                    r.status, r.counterexample = REFUTED, cex
    return out
