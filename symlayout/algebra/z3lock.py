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
garbage collector runs in whichever thread allocates; so, from the moment a second
thread comes to the lock (threads that prove side by side), automatic collection is
paused while the lock is held and the call's garbage is collected before it is
released: no term is freed outside it.  A process where one thread proves (the CLI, a
pytest-xdist worker beside its I/O threads) is spared that collection of the whole heap
per call (it made the test suite run 2x slower).  A process forked
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
_held = [0, False]          # [depth of the holder's calls, whether the collector is paused]
_users: set = set()         # the threads that have come to the lock


def _pause() -> None:
    if gc.isenabled():
        gc.disable()
        _held[1] = True


def _enter() -> None:
    me = threading.get_ident()
    if me not in _users:
        _users.add(me)
        if len(_users) > 1:
            _pause()            # a second thread: no automatic collection until the holder's release
    LOCK.acquire()
    _held[0] += 1
    if _held[0] == 1 and len(_users) > 1 and threading.active_count() > 1:
        _pause()


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
    _users.clear()


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
