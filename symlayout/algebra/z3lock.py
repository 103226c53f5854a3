"""One thread in Z3 at a time: the process-wide lock around symlayout's use of Z3.

Z3's Python API builds every term in one global context (``z3.main_ctx()``), and a
Z3 context is not thread-safe: two threads proving parametric configurations at once
corrupt it (a Z3 assertion aborts the process).  symlayout also memoizes Z3 terms
and models in process-wide caches.  So the entry points that may use Z3 (proving a
configuration, a report's explanations and pictures, ``solve``) run under
:func:`serialized`: from several threads the results are the same as one after the
other, and the threads wait for each other.  (Processes do not share a context:
``--jobs`` and ``pytest -n`` run side by side.)

A Z3 term is freed (``Z3_dec_ref``) by whichever thread drops it, and the cyclic
garbage collector runs in whichever thread allocates; so, while another thread is
alive, automatic collection is paused inside the lock and the call's garbage is
collected before the lock is released: no term is freed outside it.  A process forked
while another thread holds the lock (``prove_many`` called from a thread) starts with
a fresh one.

>>> @serialized
... def f(x):
...     return g(x) + 1
>>> @serialized
... def g(x):
...     return 2 * x
>>> f(3)
7
"""
from __future__ import annotations

import functools
import gc
import os
import threading

#: the lock (re-entrant: a serialized function may call another)
LOCK = threading.RLock()
_held = [0, False]          # [depth of the holder's calls, whether it paused the collector]


def _enter() -> None:
    LOCK.acquire()
    _held[0] += 1
    if _held[0] == 1 and threading.active_count() > 1 and gc.isenabled():
        gc.disable()
        _held[1] = True


def _exit() -> None:
    try:
        _held[0] -= 1
        if _held[0] == 0 and _held[1]:
            _held[1] = False
            gc.collect()
            gc.enable()
    finally:
        LOCK.release()


def _after_fork_in_child() -> None:
    """A forked child (a ``--jobs`` worker) has one thread: a fresh lock, the collector as it was."""
    global LOCK
    LOCK = threading.RLock()
    if _held[1]:
        gc.enable()
    _held[:] = [0, False]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def serialized(fn):
    """``fn`` run under :data:`LOCK` (see the module's docstring)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _enter()
        try:
            return fn(*args, **kwargs)
        finally:
            _exit()
    return wrapper
