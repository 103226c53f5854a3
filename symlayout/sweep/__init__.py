"""``symlayout sweep``: prune a tuning space to the candidates proved legal.

A spec (:mod:`.spec`) names a space of configurations; every candidate is checked against the spec's
constraints and, if within them, proved (:mod:`.prover`); the rows go to a CSV table (:mod:`.table`) appended
per batch (per task on workers: a run of batches), which is also the point a killed sweep resumes from.
Batches run in this process (``workers=1``) or on Dask distributed (:mod:`.cluster`: a LocalCluster of
``workers`` processes, or a running ``scheduler``); either way they come back as lines of the table
(:func:`.table.prove_part`), so the client's work per candidate is small.  The table is sorted by candidate id at the end: the same for any worker count.
"""
from __future__ import annotations

import itertools
import os
import sys
import time

from .prover import cute_snippet, load_candidate
from .spec import Spec, SpecError, load_spec, loads_spec
from .table import Table, prove_part, remove_table, summary
from .toml import to_toml

__all__ = ["Spec", "SpecError", "load_spec", "loads_spec", "sweep", "sweep_table", "batches_of", "radices_of",
           "emit", "emit_ids", "summary", "Table"]


#: the most candidates in a default batch (a block of the space: :func:`batches_of`)
MAX_BATCH = 1024


def batches_of(ids: list, workers: int, batch: int | None = None, radices=()) -> list:
    """``ids`` (ascending) cut into batches: ``batch`` each, else *blocks* of the space.

    The target is about 8 batches per worker, 1 to 256 candidates (large enough that scheduling is a small part
    of a batch, small enough to balance and to resume).  A block is the candidates that share the values of the
    first variables of ``[space]`` (``radices``: each variable's number of values, in order): ``B`` ids from a
    multiple of ``B``, ``B`` a product of the last radices, the smallest one of at least the target (at most
    :data:`MAX_BATCH`; else the target).  A worker proves a whole block, so the pieces of proofs that depend on
    the first variables only (a spec lists them first) are proved on one worker, not once on each worker that
    gets a part of the block (on several workers, :func:`.cluster.lanes` hands them out)."""
    if batch:
        return [ids[k:k + batch] for k in range(0, len(ids), batch)]
    target = max(1, min(256, len(ids) // (8 * max(1, workers)) or 1))
    size = _block(radices, target)
    return [list(g) for _, g in itertools.groupby(ids, key=lambda i: i // size)]


def _block(radices, target: int) -> int:
    """The smallest product of the last ``radices`` of at least ``target`` candidates, at most :data:`MAX_BATCH`
    (else ``target``)."""
    size = 1
    for r in reversed(list(radices)):
        if size >= target:
            break
        size *= r
    return size if target <= size <= MAX_BATCH else target


def radices_of(spec: Spec) -> list:
    """Each variable of ``[space]``'s number of values, in order (the mixed radix of candidate ids)."""
    return [len(ax[2]) for ax in spec.axes]


def sweep(spec: Spec, out: str, workers: int = 1, scheduler: str | None = None, batch: int | None = None,
          fresh: bool = False, progress=None) -> list:
    """Prove every candidate of ``spec`` not yet in ``out``; return every row (typed), sorted by id.

    ``progress(done, total, rate)`` is called after each batch (on workers: each task)."""
    return sweep_table(spec, out, workers, scheduler, batch, fresh, progress).rows()


def sweep_table(spec: Spec, out: str, workers: int = 1, scheduler: str | None = None, batch: int | None = None,
                fresh: bool = False, progress=None) -> Table:
    """:func:`sweep`, returning the :class:`~.table.Table` (its statuses counted, its legal ids): the rows are
    read back from ``out`` only by ``Table.rows()``."""
    if fresh:
        remove_table(out)
    table = Table(spec, out)
    todo = [i for i in range(len(spec)) if i not in table.lines]
    batches = batches_of(todo, 1 if scheduler is None and workers <= 1 else workers, batch, radices_of(spec))
    start, count = time.perf_counter(), 0
    for part in _run(spec, batches, workers, scheduler, batch):
        table.add(part)
        count += len(part.ids)
        if progress is not None:
            progress(len(table), len(spec), count / max(time.perf_counter() - start, 1e-9))
    table.write_sorted()
    return table


def _run(spec, batches, workers, scheduler, batch):
    if scheduler is None and workers <= 1:
        for b in batches:
            yield prove_part(spec.text, spec.path, b)
        return
    from .cluster import run_batches       # lazy: Dask (optional) only when asked for
    yield from run_batches(spec, batches, workers, scheduler, most=batch)     # --batch N: N a task


def emit(spec: Spec, rows: list, kind: str, directory: str) -> int:
    """Write every legal candidate as a configuration file (``toml``) or a CuTe C++ program (``cute``)
    into ``directory``; return how many."""
    return emit_ids(spec, [r["id"] for r in rows if r["status"] == "legal"], kind, directory)


def emit_ids(spec: Spec, ids: list, kind: str, directory: str) -> int:
    """:func:`emit` of the candidates ``ids``."""
    os.makedirs(directory, exist_ok=True)
    stem = os.path.splitext(os.path.basename(spec.path))[0]
    n = 0
    for i in ids:
        if kind == "toml":
            text, ext = to_toml(spec.config(i)), "toml"
        else:
            text, ext = cute_snippet(load_candidate(spec, i)), "cpp"
        with open(os.path.join(directory, f"{stem}_{i:07d}.{ext}"), "w", encoding="utf-8") as f:
            f.write(text)
        n += 1
    return n


def plain_progress(file=sys.stderr, every_s: float = 2.0):
    """A progress callback printing one line at most every ``every_s`` seconds (and the last one)."""
    last = [0.0]

    def report(done, total, rate):
        now = time.perf_counter()
        if now - last[0] >= every_s or done == total:
            last[0] = now
            print(f"sweep: {done}/{total} candidates, {rate:.1f} candidates/s", file=file, flush=True)
    return report
