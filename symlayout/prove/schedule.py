"""Scheduling: which process proves which configuration file.

``symlayout prove PATH...`` proves files side by side: a pool of forked workers
(they inherit the imported prover, nothing is imported twice) each *load and
prove* whole files, so reading, validating and building the models runs in
parallel too, not only the solver.  Files are handed out one at a time, the
most expensive first (a cheap look at the file's tables: a Hopper family, a
parametric family or a data path before a 16x8 tile), so that a long Z3 or
Hopper proof starts at once instead of waiting behind the small ones.

A single parametric file is split the other way: its properties are
independent Z3 queries, proved side by side by
:func:`symlayout.prove.engine.prove_many`.

``--shard I/N`` picks the I-th of N disjoint parts of the files (balanced by
the same cost estimate, identical in every shard), so that a CI matrix or any
job array proves a large directory without a scheduler: every file lands in
exactly one shard.

>>> shard_files(["a.toml", "b.toml", "c.toml"], 2, 3)
['b.toml']
>>> sorted(f for i in range(1, 3) for f in shard_files(["a", "b", "c", "d", "e"], i, 2))
['a', 'b', 'c', 'd', 'e']
"""
from __future__ import annotations

import errno
import os

from .. import config
from ..errors import SymlayoutError
from . import engine

#: above this many files, no cost estimate is read (each file would be opened twice) and files go in their
#: order, a few at a time per hand-out (the tail of a large sweep is short anyway)
ESTIMATE_LIMIT = 2000

#: below this estimated total (about twenty single-tile files, or a few families) one process is quicker than
#: starting workers (each would import numpy / sympy / z3 again)
POOL_MIN_COST = 24.0

#: what a configuration's tables say about its cost, in relative units (about 15 ms each: measured per file of
#: proofs/ after the array fast paths; a parametric [copy.X] outside a data path is decided by Z3: the largest)
_TABLE_COST = ((b"[tma", 4.0), (b"[smem", 2.0), (b"[params]", 1.0), (b"[g2s", 1.0), (b"[stages", 1.0),
               (b"[copy", 0.5), (b"[threadmap", 0.5))
_Z3_COPY = 20.0


def default_jobs() -> int:
    """The number of processes a plain ``symlayout prove`` uses: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def file_cost(path: str) -> float:
    """A rough, cheap estimate of the time to prove a file (its tables; its size breaks ties)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(1 << 16)
    except OSError:
        return 0.0
    cost = 0.2 + sum(w for key, w in _TABLE_COST if key in raw) + len(raw) / 4096
    if b"[params]" in raw and b"[copy" in raw and b"[g2s" not in raw:
        cost += _Z3_COPY
    return cost


def shard_files(files, index: int, count: int, costs=None) -> list:
    """The files of shard ``index`` of ``count`` (1-based), in their given order: the files sorted by cost
    (most expensive first, then by name), each given to the shard with the least cost so far.

    Deterministic, so every shard computes the same split; ``costs`` defaults to :func:`file_cost`
    (unit costs above :data:`ESTIMATE_LIMIT` files: then the split is round-robin)."""
    files = list(files)
    if count <= 1:
        return files
    if count > len(files):                      # (then shard k gets the k-th file: the same split, counted once)
        return shard_files(files, index, len(files), costs) if index <= len(files) else []
    if costs is None:
        costs = [file_cost(f) for f in files] if len(files) <= ESTIMATE_LIMIT else [1.0] * len(files)
    load, held = [0.0] * count, [0] * count
    mine = set()
    for i in sorted(range(len(files)), key=lambda i: (-costs[i], str(files[i]))):
        s = min(range(count), key=lambda k: (load[k], held[k], k))
        load[s] += costs[i]
        held[s] += 1
        if s == index - 1:
            mine.add(i)
    return [f for i, f in enumerate(files) if i in mine]


# ---------------------------------------------------------------- one file, in whichever process


def list_files(paths):
    """``(files, errors)``: every ``*.toml`` below the directories named (sorted, ``explicit`` False: each is
    checked to be a configuration where it is proved) and every file named (``explicit`` True) as
    ``(path, explicit)`` pairs in order; ``(path, message)`` for a path that cannot be proved: missing, a
    dangling link, not a regular file (a FIFO is never opened), a name the OS refuses (too long), a
    subdirectory that cannot be read, a directory without TOML files.  The reading is left to the
    process that proves each file."""
    files, errors = [], []
    for p in map(str, paths):
        for path, why in path_entries(p):
            if why is None:
                files.append((path, p == path))
            else:
                errors.append((path, why))
    return files, errors


def path_entries(p: str) -> list:
    """``(path, None)`` for each file to prove under ``p`` (``p`` itself, or every ``*.toml`` below the
    directory ``p``) and ``(path, message)`` for each that cannot be, sorted by path."""
    try:
        is_dir = os.path.isdir(p)
    except ValueError:                           # (a NUL in the name)
        return [(p, f"{p!r}: not a valid path")]
    if not is_dir:
        why = not_regular(p)
        return [(p, None if why is None else f"{p}: {why}")]
    found = sorted(_walk(p))
    if not found:
        return [(p, f"{p}: no *.toml configuration files in this directory")]
    return found


def not_regular(path: str) -> str | None:
    """Why ``path`` cannot be read as a configuration file (None: a regular file), without opening it."""
    import stat
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        if os.path.islink(path):
            return f"a dangling symbolic link (to {os.readlink(path)})"
        if e.errno == errno.ENOENT:
            return "no such file or directory"
        return f"cannot be read: {e.strerror or e}"
    if not stat.S_ISREG(mode):
        return "not a regular file (a FIFO, socket or device is never read)"
    return None


def _walk(d: str):
    """``(path, None | message)`` for every ``*.toml`` entry below directory ``d`` (symbolic links to
    directories are not followed) and for every subdirectory that cannot be listed."""
    try:
        with os.scandir(d) as it:
            entries = list(it)
    except OSError as e:
        yield d, f"{d}: cannot read this directory: {e.strerror or e}"
        return
    for e in entries:
        try:
            is_dir = e.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir:
            yield from _walk(e.path)
        elif e.name.endswith(".toml"):
            why = not_regular(e.path)
            yield e.path, None if why is None else f"{e.path}: {why}"


def prove_file(path: str, explicit: bool, properties, method, timeout_s, jobs: int = 1):
    """``("skip", reason)`` for a TOML file of a directory that is not a configuration,
    ``("error", message)`` for one that cannot be read (any input error, the file named), ``("report",
    ConfigReport)`` otherwise (a parametric configuration's Z3 queries in ``jobs`` processes); an internal
    error (a bug) while reading or proving the file is that file's report, with ``internal`` set: never
    lost, and the other files are still proved."""
    try:
        return _prove_file(path, explicit, properties, method, timeout_s, jobs)
    except SymlayoutError as e:
        return "error", _naming(path, str(e))
    except Exception as e:  # noqa: BLE001 (a bug: reported as this file's result)
        return "report", internal_report(path, e)


def _prove_file(path, explicit, properties, method, timeout_s, jobs):
    if not explicit:
        why = config.not_a_configuration(path)
        if why is not None:
            return "skip", why
    cfg = config.load_config(path)
    if jobs > 1 and cfg.params:
        return "report", engine.prove_many([cfg], properties, jobs, timeout_s, method)[0]
    return "report", engine.prove_config(cfg, properties, method, timeout_s)


def _naming(path: str, msg: str) -> str:
    """An error message that names its file."""
    return msg if msg.startswith(path) else f"{path}: {msg}"


def internal_report(path: str, e: BaseException):
    """The report of a file whose reading or proving hit a bug (``SYMLAYOUT_DEBUG=1``: the traceback on
    stderr)."""
    if os.environ.get("SYMLAYOUT_DEBUG") == "1":
        import traceback
        traceback.print_exception(e)
    msg = " / ".join(s.strip() for s in str(e).splitlines() if s.strip())[:300]
    return engine.ConfigReport(path, "", internal=True,
                               error=f"{path}: internal error (a bug in symlayout): {type(e).__name__}: {msg}")


_TASK_ARGS: tuple = ()


def preload(paths) -> None:
    """Import, before the workers fork, what proving ``paths`` will import in every worker anyway (numpy for
    the whole-tile tables, sympy for parameters, z3 for a parametric copy, the Hopper prover for [smem]
    tables): once here instead of once per worker (the same wall time on an idle machine, half the CPU)."""
    need = {"numpy"}
    for p in paths[:ESTIMATE_LIMIT]:
        try:
            with open(p, "rb") as f:
                raw = f.read(1 << 16)
        except OSError:
            continue
        if b"[params]" in raw:
            need.add("sympy")
            if b"[copy" in raw and b"[g2s" not in raw:
                need.add("symlayout.prove.copy.z3backend")
                need.add("z3")
        if b"[smem" in raw:
            need.add("symlayout.prove.hopper.obligations")
        if b"[g2s" in raw:
            need.add("symlayout.prove.datapath.g2s")
    import importlib
    for m in sorted(need):
        try:
            importlib.import_module(m)
        except ImportError:
            pass


def _ordered(files, jobs):
    """``(tasks, chunk size)`` for the pool: most expensive first, one at a time (large sweeps: in order, a few
    at a time); None when the estimated total is too small to be worth the workers."""
    tasks = [(i, p, e) for i, (p, e) in enumerate(files)]
    if len(tasks) > ESTIMATE_LIMIT:
        return tasks, max(1, min(32, len(tasks) // (jobs * 64)))
    costs = [file_cost(p) for _, p, _ in tasks]
    if sum(costs) < POOL_MIN_COST:
        return None
    tasks.sort(key=lambda t: -costs[t[0]])
    return tasks, 1


def _pool_file(task):
    i, path, explicit = task
    return i, prove_file(path, explicit, *_TASK_ARGS)


def prove_files(files, properties=None, jobs: int = 1, timeout_s=None, method="auto", on_result=None) -> list:
    """Prove ``files`` (``(path, explicit)`` pairs: ``explicit`` False for a file found in a directory,
    which is skipped when it is not a configuration) in ``jobs`` processes.

    One answer per file, in their order, as :func:`prove_file` gives it; the same answers whatever
    ``jobs`` is.  ``on_result(i, answer)`` is called as each file is done (in completion order)."""
    files = [(str(p), bool(e)) for p, e in files]
    out: list = [None] * len(files)
    if len(files) == 1:                        # one file: its Z3 queries side by side
        out[0] = prove_file(*files[0], properties, method, timeout_s, jobs)
        if on_result is not None:
            on_result(0, out[0])
        return out
    import multiprocessing as mp
    jobs = max(1, min(jobs, len(files)))
    if "fork" not in mp.get_all_start_methods():   # (no fork, e.g. Windows: one process)
        jobs = 1
    if jobs > 1:
        tasks = _ordered(files, jobs)
        if tasks is None:
            jobs = 1
    if jobs == 1:
        for i, (p, e) in enumerate(files):
            out[i] = prove_file(p, e, properties, method, timeout_s)
            if on_result is not None:
                on_result(i, out[i])
        return out
    tasks, chunk = tasks
    preload([p for _i, p, _e in tasks])
    global _TASK_ARGS
    _TASK_ARGS = (properties, method, timeout_s)
    import gc
    gc.freeze()          # the parent's objects so far: left out of collections (the workers' and the parent's)
    try:
        with mp.get_context("fork").Pool(jobs, engine.worker_init) as pool:
            for i, ans in pool.imap_unordered(_pool_file, tasks, chunksize=chunk):
                out[i] = ans
                if on_result is not None:
                    on_result(i, ans)
    finally:
        _TASK_ARGS = ()
        gc.unfreeze()
    return out
