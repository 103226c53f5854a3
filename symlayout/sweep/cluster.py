"""Batches of candidates proved on a Dask distributed cluster.

Dask is an optional dependency (the ``sweep`` extra): it is imported here, at module level, and this module is
imported only when a sweep asks for workers or a scheduler, so ``symlayout prove`` never loads it.
"""
from __future__ import annotations

from distributed import Client, LocalCluster, as_completed

from .prover import prove_batch

__all__ = ["run_batches"]


def run_batches(spec, batches: list, workers: int = 2, scheduler: str | None = None):
    """Yield each batch's rows as it completes: on the cluster at ``scheduler``, else on a LocalCluster of
    ``workers`` processes of one thread each (the prover holds one Z3 lock per process)."""
    if scheduler:
        with Client(scheduler) as client:
            yield from _gather(client, spec, batches)
        return
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            Client(cl) as client:
        yield from _gather(client, spec, batches)


def _gather(client, spec, batches):
    futures = [client.submit(prove_batch, spec.text, spec.path, b, pure=False) for b in batches]
    try:
        for fut in as_completed(futures):
            yield fut.result()
    finally:
        for fut in futures:
            fut.cancel()
