"""Batches of candidates proved on a Dask distributed cluster.

Dask is an optional dependency (the ``sweep`` extra): it is imported here, at module level, and this module is
imported only when a sweep asks for workers or a scheduler, so ``symlayout prove`` never loads it.

Each worker has a *lane*: a contiguous range of the batches (blocks of the space, in id order), which it proves
in order, so the pieces of proofs neighbouring blocks share (a spec lists the variables they depend on first)
stay on one worker.  A task is a run of consecutive batches of the lane, at most a :data:`TASK_SHARE` th of
what is left in the lane and :data:`TASK_MAX` candidates (a Dask task costs the client and the scheduler
milliseconds: fewer tasks while a lane is long, single batches as it ends).  Pieces whose keys recur in other
lanes (they depend on a spec's later variables only: the staged buffers of every warp layout) are handed
between the workers by a :class:`Relay`.  A worker whose lane is empty takes
the last batch of the longest lane; the last batch of each lane is cut in :data:`TAIL_PARTS`, so the workers
finish together.  A worker holds at most its threads and one more task of its lane (the next one is there when
it finishes one).

The LocalCluster a sweep starts differs from distributed's defaults in what :data:`WORKER_CONFIG` lists, each
measured (bench/RESULTS.md, issue 32): a worker then proves a batch in the CPU time this process takes for it.
Workers started by hand for ``--scheduler`` should be started the same way (``dask worker --no-nanny``, or
a Dask configuration file: docs/sweep.md); an environment variable ``DASK_...`` does not reach the nanny's
``pre-spawn-environ`` (Dask lowercases the name).
"""
from __future__ import annotations

import contextlib
import logging
import pickle
from collections import Counter, deque

import dask
from distributed import Client, LocalCluster, as_completed

from ..errors import SymlayoutError
from .prover import Relayed, prove_batch
from .table import prove_part_relayed

__all__ = ["run_batches", "local_cluster", "warm_up", "in_lanes", "lanes", "next_batch", "first_batches",
           "Relay", "WORKER_CONFIG", "TAIL_PARTS", "TASK_MAX", "TASK_SHARE", "SchedulerError", "or_error"]

#: the last batch of each lane is cut in this many parts
TAIL_PARTS = 4
#: a task holds at most this many candidates ...
TASK_MAX = 4096
#: ... and at most this part of what is left in its lane
TASK_SHARE = 4

#: distributed's settings changed for the workers of a sweep's LocalCluster
WORKER_CONFIG = {
    # The Nanny spawns each worker with MALLOC_TRIM_THRESHOLD_=65536 (to hand freed memory back to the OS at
    # once).  Any fixed value turns glibc's adaptive trim and mmap thresholds off (131072 is as slow): memory is
    # handed back and faulted in again all the time -- for the prover's many short-lived objects 1.2-1.4 s of
    # system time per 2,000 candidates, a worker 40-60 % slower than the same batches in one process.  None
    # leaves the variable out: glibc's default, or the value the user set in the environment.
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    # The statistical profiler walks the task thread's stack every 10 ms for the dashboard, which a sweep
    # does not start.
    "distributed.worker.profile.enabled": False,
}


@contextlib.contextmanager
def local_cluster(workers: int):
    """A Client of a LocalCluster of ``workers`` processes of one thread each (the prover holds one Z3 lock per
    process), with :data:`WORKER_CONFIG`; on leaving, the workers stop their heartbeats before the cluster closes
    (a heartbeat in flight when the scheduler closed printed a worker's traceback on stderr).  No dashboard; the
    scheduler's HTTP server on a free port (on 8787 by default: "Port 8787 is already in use" on stderr when
    another cluster runs)."""
    with dask.config.set(WORKER_CONFIG):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               scheduler_kwargs={"dashboard_address": ":0"})   # its HTTP server: any free port
    with cluster, Client(cluster) as client:
        try:
            yield client
        finally:
            _quiet_shutdown(client)


def _quiet_shutdown(client) -> None:
    with contextlib.suppress(Exception):       # a worker already gone has nothing to stop
        client.run(_stop_heartbeat)


def _stop_heartbeat(dask_worker=None) -> None:
    """On a worker (``client.run``): no more heartbeats to a scheduler about to close."""
    dask_worker.periodic_callbacks["heartbeat"].stop()
    logging.getLogger("distributed.worker").setLevel(logging.CRITICAL)


def run_batches(spec, batches: list, workers: int = 2, scheduler: str | None = None, most: int | None = None):
    """Yield each task's part of the table (:class:`.table.Part`) as it completes: on the cluster at
    ``scheduler``, else on a :func:`local_cluster` of ``workers`` processes; a task of at most ``most``
    candidates (None: :data:`TASK_MAX`; a sweep's ``--batch N``: N)."""
    most = TASK_MAX if most is None else most
    if scheduler:
        with _client(scheduler) as client:
            yield from _gather(client, spec, batches, most)
        return
    with local_cluster(workers) as client:
        yield from _gather(client, spec, batches, most)


class SchedulerError(SymlayoutError):
    """No Dask scheduler answers at the address given (exit 2)."""


def _client(address: str):
    """A Client of the running scheduler at ``address`` (a wrong address or no answer within Dask's connect
    timeout, ``distributed.comm.timeouts.connect``: a one-line :class:`SchedulerError`)."""
    try:
        return Client(address)
    except (OSError, ValueError, TypeError) as e:
        raise SchedulerError(f"--scheduler {address}: no Dask scheduler there: {' '.join(str(e).split())}") from None


def lanes(batches: list, workers: int) -> list:
    """``batches`` split into ``workers`` contiguous lanes (deques, in order) of about the same number of
    candidates, the last batch of each cut in :data:`TAIL_PARTS`."""
    total, out, at = sum(map(len, batches)), [deque() for _ in range(max(1, workers))], 0
    for b in batches:
        out[min(len(out) - 1, (2 * at + len(b)) * len(out) // (2 * total))].append(b)     # by its middle
        at += len(b)
    for lane in out:
        if lane:
            lane.extend(_cut(lane.pop(), TAIL_PARTS))
    return out


def _cut(ids: list, parts: int) -> list:
    step = -(-len(ids) // parts)
    return [ids[k:k + step] for k in range(0, len(ids), step)]


def next_batch(lanes_: list, w: int, most: int = TASK_MAX):
    """The next task for worker ``w``: the first batches of its lane (:func:`first_batches`, at most ``most``
    candidates), else the last batch of the lane with the most candidates left; None when every lane is
    empty."""
    if lanes_[w]:
        return first_batches(lanes_[w], most)
    victim = max(lanes_, key=lambda lane: sum(map(len, lane)))
    return victim.pop() if victim else None


def first_batches(lane, most: int = TASK_MAX) -> list:
    """The ids of the first batches of ``lane`` (taken off it): one batch, and the next ones while they make
    at most ``most`` candidates and a :data:`TASK_SHARE` th of the lane (counted only when the lane is short:
    a lane's batches are blocks of one size but its cut last one)."""
    long = len(lane) * len(lane[0]) >= TASK_SHARE * most
    limit = most if long else sum(map(len, lane)) // TASK_SHARE
    ids = list(lane.popleft())
    while lane and len(ids) + len(lane[0]) <= limit:
        ids += lane.popleft()
    return ids


def _gather(client, spec, batches, most):
    warm_up(client, spec, batches)
    for part in in_lanes(client, batches, or_error, prove_part_relayed, spec.text, spec.path, most=most,
                         relay=Relay()):
        yield _raised(part)


def or_error(task, *args):
    """A worker's task: ``task(*args)``, or the one-line error of a spec that fails on these candidates (an
    expression dividing by zero), returned for the client to raise: a failed task would print the worker's
    traceback on stderr."""
    try:
        return task(*args)
    except SymlayoutError as e:
        return e


def _raised(result):
    if isinstance(result, SymlayoutError):
        raise result
    return result


def warm_up(client, spec, batches: list) -> None:
    """Every worker proves the first candidate of ``batches`` (its row is dropped) before the batches are handed
    out: the spec parsed and the modules a proof imports loaded (about 0.3 s: numpy, the configuration loader),
    part of the start-up like the workers' imports, not of the first batch.  A task, not ``client.run`` (the
    event loop's thread): one thread of a worker proves, so the Z3 lock never pauses its collector."""
    if not (batches and batches[0]):
        return
    client.wait_for_workers(1)
    for rows in client.gather([client.submit(or_error, prove_batch, spec.text, spec.path, batches[0][:1],
                                             pure=False, workers=[a], allow_other_workers=True)
                               for a in client.scheduler_info(n_workers=-1)["workers"]]):   # in the task thread
        _raised(rows)


class Relay:
    """Pieces of proofs handed from the worker that proved them to the others.

    Each batch returns the pieces it proved (key -> pickled answer: :func:`.prover.prove_relayed`); the next
    batch a worker gets carries the pieces the *other* workers proved and it has not had yet, of the kinds
    (a key's first item: ``"copy"``, ``"stages"``, ...) that recur on several workers: a kind is relayed once
    at least :data:`SHARED` of its arrivals were keys another worker had already proved (then its earlier
    pieces go too).  Pieces that stay in one lane (a ``[copy.X]`` of one warp layout) are so never sent around.
    The answers are the same wherever a piece is proved (its key is everything the answer depends on):
    relaying changes the time, not the rows.
    """

    #: the part of a kind's arrivals, proved before on another worker, from which the kind is relayed
    SHARED = 0.25

    def __init__(self):
        self.entries: dict = {}                    # kind -> [(key, pickled answer)], in arrival order
        self.holders: dict = {}                    # key -> the workers that have it
        self.arrived, self.again = Counter(), Counter()
        self.cursor: dict = {}                     # (worker, kind) -> entries of the kind already had
        self.sent = Counter()                      # kind -> pieces handed to a worker

    def take(self, w, pieces: dict) -> None:
        """The pieces a batch of worker ``w`` proved."""
        for k, v in pieces.items():
            kind = _kind(k)
            self.arrived[kind] += 1
            if k in self.holders:
                self.again[kind] += 1
                self.holders[k].add(w)
                continue
            self.holders[k] = {w}
            self.entries.setdefault(kind, []).append((k, v))

    def relayed(self, kind) -> bool:
        return self.again[kind] > 0 and self.again[kind] >= self.SHARED * self.arrived[kind]

    def seed(self, w) -> dict:
        """The pieces of relayed kinds the other workers proved that worker ``w`` has not had yet."""
        out = {}
        for kind, entries in self.entries.items():
            if self.relayed(kind):
                start, self.cursor[w, kind] = self.cursor.get((w, kind), 0), len(entries)
                for k, v in entries[start:]:
                    if w not in self.holders[k]:
                        self.holders[k].add(w)
                        out[k] = v
                        self.sent[kind] += 1
        return out


def _kind(key):
    return key[0] if isinstance(key, tuple) and key else None


def in_lanes(client, batches: list, task, *args, most: int = TASK_MAX, relay: Relay | None = None):
    """Yield ``task(*args, ids)`` of every task as it completes, the batches handed out in lanes, a task
    :func:`next_batch` of at most ``most`` candidates; with a ``relay``, ``task(*args, ids, seed)`` (``seed``:
    the pieces of proofs for the worker, pickled, or None) returns a :class:`~.prover.Relayed`, whose pieces go
    to the relay and whose result is yielded.  The results are fetched as the tasks end, in the background (the
    loop that hands out the next tasks does not wait for each)."""
    client.wait_for_workers(1)                  # a scheduler with no worker yet: wait for the first
    info = client.scheduler_info(n_workers=-1)["workers"]
    addresses = sorted(info)
    todo = lanes(batches, len(addresses))
    owner, pending = {}, as_completed(with_results=True)

    def submit(w):
        b = next_batch(todo, w, most)
        if b is not None:
            extra = () if relay is None else (_pickled(relay.seed(w)),)
            fut = client.submit(task, *args, b, *extra, pure=False, workers=[addresses[w]],
                                allow_other_workers=True)       # a worker gone: another proves its batches
            owner[fut] = w
            pending.add(fut)

    for w, address in enumerate(addresses):
        for _ in range(info[address].get("nthreads", 1) + 1):
            submit(w)
    try:
        for fut, out in pending:
            w = owner.pop(fut)
            if isinstance(out, Relayed):
                if relay is not None:
                    relay.take(w, out.pieces)
                out = out.result
            submit(w)
            yield out
    finally:
        for fut in owner:
            fut.cancel()


def _pickled(seed: dict):
    """A seed as one bytes object (the scheduler passes it on without unpickling its many keys), None if empty."""
    return pickle.dumps(seed, pickle.HIGHEST_PROTOCOL) if seed else None
