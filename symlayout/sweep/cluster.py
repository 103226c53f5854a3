"""Batches of candidates proved on a Dask distributed cluster.

Dask is an optional dependency (the ``sweep`` extra): it is imported here, at module level, and this module is
imported only when a sweep asks for workers or a scheduler, so ``symlayout prove`` never loads it.

The LocalCluster a sweep starts differs from distributed's defaults in what :data:`WORKER_CONFIG` lists, each
measured (bench/RESULTS.md, issue 32): a worker then proves a batch in the CPU time this process takes for it.
Workers started by hand for ``--scheduler`` should be started the same way (``dask worker --no-nanny``, or
a Dask configuration file: docs/sweep.md); an environment variable ``DASK_...`` does not reach the nanny's
``pre-spawn-environ`` (Dask lowercases the name).
"""
from __future__ import annotations

import contextlib
import logging

import dask
from distributed import Client, LocalCluster, as_completed

from .prover import prove_batch

__all__ = ["run_batches", "local_cluster", "WORKER_CONFIG"]

#: distributed's settings changed for the workers of a sweep's LocalCluster
WORKER_CONFIG = {
    # The Nanny spawns each worker with MALLOC_TRIM_THRESHOLD_=65536 (to hand freed memory back to the OS at
    # once): glibc then trims the heap on most frees of a large block and the next allocation faults the pages
    # back in -- the prover's many short-lived dicts and lists made that 1.2-1.4 s of system time per 2,000
    # candidates, a worker 40-60 % slower than the same batches in one process.  None leaves the variable out:
    # glibc's own (adaptive) threshold, or the one the user set in the environment.
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    # The statistical profiler walks the task thread's stack every 10 ms for the dashboard, which a sweep
    # does not start.
    "distributed.worker.profile.enabled": False,
}


@contextlib.contextmanager
def local_cluster(workers: int):
    """A Client of a LocalCluster of ``workers`` processes of one thread each (the prover holds one Z3 lock per
    process), with :data:`WORKER_CONFIG`; on leaving, the workers stop their heartbeats before the cluster closes
    (a heartbeat in flight when the scheduler closed printed a worker's traceback on stderr)."""
    with dask.config.set(WORKER_CONFIG):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
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


def run_batches(spec, batches: list, workers: int = 2, scheduler: str | None = None):
    """Yield each batch's rows as it completes: on the cluster at ``scheduler``, else on a
    :func:`local_cluster` of ``workers`` processes."""
    if scheduler:
        with Client(scheduler) as client:
            yield from _gather(client, spec, batches)
        return
    with local_cluster(workers) as client:
        yield from _gather(client, spec, batches)


def _gather(client, spec, batches):
    futures = [client.submit(prove_batch, spec.text, spec.path, b, pure=False) for b in batches]
    try:
        for fut in as_completed(futures):
            yield fut.result()
    finally:
        for fut in futures:
            fut.cancel()
