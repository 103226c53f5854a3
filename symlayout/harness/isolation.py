"""Process isolation of GPU runs: configurations that may fault the device (a misaligned ``ldmatrix`` poisons
the CUDA context) run in worker processes (``python -m symlayout.harness.isolation --child CONFIG...``),
after the others; a worker is restarted whenever a configuration poisons its context."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Sequence

from .plan import instance_values
from .run import run_config
from . import cuda
from ..config import find_config_files, load_config


#: properties whose expected refutation cannot fault the GPU (run in the shared worker)
SAFE_REFUTATIONS = frozenset({"bank_conflicts", "coalescing"})




def isolated(cfg) -> bool:
    """Whether a configuration runs in its own process: it expects a refutation
    that can fault the GPU (anything but ``bank_conflicts``/``coalescing``)."""
    return bool(set(cfg.expect.refuted_somewhere) - SAFE_REFUTATIONS)


def _child_main(paths: Sequence[str]) -> int:
    """Worker: print ``INFO``/``RESULT`` JSON lines; exit 3 once the context is poisoned."""
    try:
        info = cuda.device_info()
    except Exception as e:
        info = {"error": str(e)}
    print("INFO " + json.dumps(info, default=str), flush=True)
    for path in paths:
        print("START " + json.dumps(path), flush=True)
        res = run_config(path)
        print("RESULT " + json.dumps(res, default=str), flush=True)
        if res.get("error", {}).get("sticky"):
            return 3
    return 0


def _spawn(paths: list, timeout: float) -> tuple[list, dict | None, str, int]:
    cmd = [sys.executable, "-m", "symlayout.harness.isolation", "--child", *paths]
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        out, err, rc = cp.stdout, cp.stderr, cp.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = (e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")) + "\n(timed out)"
        rc = -9
    results, info = [], None
    for line in out.splitlines():
        if line.startswith("RESULT "):
            results.append(json.loads(line[7:]))
        elif line.startswith("INFO "):
            info = json.loads(line[5:])
    return results, info, err, rc


def _run_group(paths: list, where: str, timeout: float) -> tuple[list, dict | None]:
    """Run ``paths`` in one worker process, starting a fresh one after a
    context-poisoning error or a crash (the configuration that caused it is
    recorded and not retried)."""
    todo, results, info = list(paths), [], None
    while todo:
        got, inf, err, rc = _spawn(todo, timeout)
        info = info or inf
        for r in got:
            r["process"] = where
        results += got
        done = {r["path"] for r in got}
        rest = [p for p in todo if p not in done]
        if rest and rc not in (0, 3):
            results.append({"path": rest[0], "status": "error", "marker": {}, "process": where,
                            "error": {"stage": "worker", "message": f"worker exited {rc}: "
                                      + " ".join(err.split())[-1500:], "sticky": True}})
            rest = rest[1:]
        todo = rest
    return results, info


def run_paths(paths: Sequence[str], *, isolate: bool = True, jobs: int | None = None, timeout: float = 300.0,
              log=None) -> dict:
    """Run every configuration under ``paths`` and return ``{"meta": ..., "results": [...]}``.

    The ordinary configurations are split over ``jobs`` worker processes that
    run at once (each restarted after a context-poisoning error); then, last,
    every configuration expecting a fault-prone refutation (and every instance
    of such a parametric family) runs in a process of its own -- those processes
    also run concurrently: a CUDA fault poisons only its own process's context.
    Parametric configurations run at a few admissible instances
    (:func:`instance_values`), named ``path@sym=value``.
    """
    from concurrent.futures import ThreadPoolExecutor
    t0 = time.perf_counter()
    files = find_config_files(list(paths))
    normal, alone, results = [], [], []
    for f in files:
        try:
            cfg = load_config(f)
        except Exception as e:
            results.append({"path": f, "status": "skipped", "reason": f"cannot load: {e}", "marker": {}})
            continue
        if cfg.mma is None or not (cfg.copies or cfg.g2s or cfg.s2g):
            why = ("thread map: no GPU check" if cfg.mma is None else
                   "no [copy.*] table: TiledMMA only (coverage is the prover's)")
            results.append({"path": f, "name": cfg.name, "status": "skipped", "reason": why, "marker": {},
                            "expect_refuted": sorted(cfg.expect.refuted_somewhere)})
            continue
        specs = [f]
        if cfg.params:
            specs = [f + "@" + ",".join(f"{k}={v}" for k, v in d.items()) for d in instance_values(cfg)]
            if not specs:
                results.append({"path": f, "name": cfg.name, "status": "skipped", "marker": {},
                                "reason": "parametric: no admissible instance", "expect_refuted": sorted(cfg.expect.refuted_somewhere)})
        for sp in specs:
            (alone if (isolate and isolated(cfg)) else normal).append(sp)
    jobs = max(1, jobs or min(8, os.cpu_count() or 1))
    # balance the shared workers by tile size (compile and launch time grow with it)
    def cost(sp):
        try:
            return os.path.getsize(sp.split("@")[0]) + 1000 * len(sp)
        except OSError:
            return 0
    chunks = [[] for _ in range(min(jobs, max(1, len(normal))))]
    for i, sp in enumerate(sorted(normal, key=cost, reverse=True)):
        chunks[i % len(chunks)].append(sp)
    info = None
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for got, inf in ex.map(lambda c: _run_group(c, "shared worker", timeout), [c for c in chunks if c]):
            results += got
            info = info or inf
        if log:
            log(f"shared workers done: {len(results)} results ({time.perf_counter() - t0:.1f} s)")
        for got, inf in ex.map(lambda sp: _run_group([sp], "own process", timeout), alone):
            results += got
            info = info or inf
    if log:
        log(f"all done: {len(results)} results ({time.perf_counter() - t0:.1f} s)")
    order = {f: i for i, f in enumerate(files)}
    results.sort(key=lambda r: (r.get("process") == "own process", order.get(r["path"].split("@")[0], 1 << 30),
                                r["path"]))
    return {"meta": {"device": info, "date": time.strftime("%Y-%m-%d"), "seconds": round(time.perf_counter() - t0, 2),
                     "files": len(files), "workers": len([c for c in chunks if c]), "isolated": alone,
                     "python": sys.version.split()[0]},
            "results": results}


def main(argv: Sequence[str] | None = None) -> int:
    """The worker process of :func:`run_paths` (``python -m symlayout.harness.isolation --child CONFIG...``);
    users run ``symlayout gpu``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "--child":
        print("usage: python -m symlayout.harness.isolation --child CONFIG... (the worker of `symlayout gpu`)",
              file=sys.stderr)
        return 2
    return _child_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
