"""Batches of candidates proved on a Dask distributed cluster.

Dask is an optional dependency (the ``sweep`` extra): it is imported here, at module level, and this module is
imported only when a sweep asks for workers or a scheduler, so ``symlayout prove`` never loads it.

A worker process started by Dask's nanny gets ``MALLOC_TRIM_THRESHOLD_=65536`` (``distributed.nanny.pre-spawn-
environ``: memory handed back to the OS early); setting it turns off glibc's dynamic mmap threshold, so every
numpy array over 128 KiB the prover allocates is mapped and unmapped afresh -- measured: a candidate took 1.5x
(SM80) to 2x (SM90) the CPU time with it, in a worker or in one process alike. The sweep's LocalCluster does not
set it (:func:`local_cluster`); workers started by hand (``--scheduler``) should be started without it
(``dask worker --no-nanny``, or a Dask configuration file: docs/sweep.md).
"""
from __future__ import annotations

import contextlib

import dask
from distributed import Client, LocalCluster, as_completed

from .prover import prove_batch

__all__ = ["run_batches", "local_cluster"]

#: the Dask configuration of the sweep's LocalCluster: the nanny does not set MALLOC_TRIM_THRESHOLD_ (above)
WORKER_CONFIG = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


@contextlib.contextmanager
def local_cluster(workers: int):
    """A LocalCluster of ``workers`` processes of one thread each (the prover holds one Z3 lock per process),
    started without Dask's malloc trim threshold (above), and a Client of it."""
    with dask.config.set(WORKER_CONFIG), \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            Client(cl) as client:
        yield client


def run_batches(spec, batches: list, workers: int = 2, scheduler: str | None = None):
    """Yield each batch's rows as it completes: on the cluster at ``scheduler``, else on a LocalCluster of
    ``workers`` processes of one thread each (the prover holds one Z3 lock per process)."""
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
