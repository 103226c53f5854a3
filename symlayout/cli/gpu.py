"""``symlayout gpu CONFIG... [--atoms] [--json]`` and ``python -m symlayout.cli.gpu``.

``run_gpu(args)`` is what the ``symlayout`` CLI dispatches to: ``args.configs``
(loaded :class:`~symlayout.config.Config` objects, or paths), ``args.atoms``,
``args.json``.  Configurations run through
:func:`symlayout.harness.isolation.run_paths` (worker processes; the ones
expecting a fault-prone refutation last, each alone); a configuration with
global-memory copies (``[g2s.X]`` / ``[s2g.C]``) also runs its whole data path as
one kernel -- cp.async, ldmatrix, mma.sync, conversion, R2S, S2G -- compared
exactly with numpy and in marker mode (:mod:`symlayout.harness.wholepath`);
``--atoms`` runs the model-free atom probe (:mod:`symlayout.harness.atoms_probe`).

The module's own ``main`` adds ``--out DIR`` (write ``configs.json``,
``configs.md`` and, with ``--atoms``, ``atoms.json`` / ``atoms.md``) and
``--prover FILE`` (``symlayout prove --json`` output, for the report's gate)::

    python -m symlayout.cli.gpu proofs --atoms --out $OUT

Exit status: 0 when every configuration that ran gave ``pass`` (or, expecting
a refutation, ran at all) and every atom agreed; 1 otherwise; 2 without a GPU.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Sequence
from .common import UsageError, print_error


def _paths(configs) -> list:
    out = []
    for c in configs or []:
        out.append(str(getattr(c, "path", c)))
    return out


def _config_ok(r: dict) -> bool:
    st = r.get("status", "")
    if set(r.get("expect_refuted") or ()) - {"bank_conflicts", "coalescing"}:
        return True          # what the hardware did with an expected refutation is reported, not judged
    return st in ("pass", "pass (marker only)", "skipped")


def _emit(out_dir: str | None, name: str, res: dict, md: str, as_json: bool) -> None:
    """Write ``name.json`` / ``name.md`` to ``out_dir`` (when given); print the markdown unless ``as_json``."""
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
            json.dump(res, f, indent=1, default=str)
        with open(os.path.join(out_dir, f"{name}.md"), "w") as f:
            f.write(md)
    if not as_json:
        print(md)


def run_on_gpu(paths: Sequence[str], *, atoms: bool = False, out_dir: str | None = None, prover: str | None = None,
        as_json: bool = False, isolate: bool = True, jobs: int | None = None, log=None) -> int:
    """Run configurations (and optionally the atom probe); print a report; write files to ``out_dir``."""
    # lazy: the GPU harness only for 'symlayout gpu'; other commands start without it
    from ..harness import have_gpu
    if not have_gpu():
        print("symlayout: error: gpu: CuPy with a CUDA GPU is needed (none found)", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    rc = 0
    doc: dict = {}
    prov = None
    if prover:
        with open(prover) as f:
            prov = json.load(f)
    hopper = []
    if paths:                                 # SM90 GMMA/TMA configurations run through the SM90 probe machinery
        # lazy: the GPU harness only for 'symlayout gpu'; other commands start without it
        from ..harness.hopper_run import split_hopper
        paths, hopper = split_hopper(paths)
    if hopper:
        # lazy: the GPU harness only for 'symlayout gpu'; other commands start without it
        from ..harness import hopper_run as H
        hres = H.run_hopper(hopper, log=sys.stderr if log else None)
        doc["hopper"] = hres
        hmd = H.report_markdown(hres)
        _emit(out_dir, "hopper_configs", hres, hmd, as_json)
        if not H.hopper_ok(hres):
            rc = 1
    if paths:
        # lazy: the GPU harness only for 'symlayout gpu'; other commands start without it
        from ..harness.isolation import run_paths
        # lazy: the GPU harness only for 'symlayout gpu'; other commands start without it
        from ..harness.report import report_markdown
        res = run_paths(list(paths), isolate=isolate, jobs=jobs, log=log)
        doc["configs"] = res
        md = report_markdown(res, prov)
        _emit(out_dir, "configs", res, md, as_json)
        if not all(_config_ok(r) for r in res["results"]):
            rc = 1
    if atoms:
        # lazy: the GPU harness only for 'symlayout gpu'; other commands start without it
        from ..harness import atoms_probe as P
        ta = time.perf_counter()
        ares = P.run_atom_probe(log=sys.stderr if log else None)
        ares.setdefault("meta", {})["seconds"] = round(time.perf_counter() - ta, 2)
        doc["atoms"] = ares
        amd = P.report_markdown(ares)
        _emit(out_dir, "atoms", ares, amd, as_json)
        summ = P.summarize(ares)
        if summ.get("disagree", 0) or summ.get("error", 0):
            rc = 1
        # lazy: the GPU harness only for 'symlayout gpu'; other commands start without it
        from ..harness.cuda import compute_capability
        if tuple(compute_capability()) >= (9, 0):   # wgmma and TMA, model-free, with negative controls
            # lazy: the GPU harness only for 'symlayout gpu'; other commands start without it
            from ..harness import probe_sm90 as S
            sres = S.run_sm90_probe(log=sys.stderr if log else None)
            doc["sm90"] = sres
            smd = S.report_markdown(sres)
            _emit(out_dir, "sm90", sres, smd, as_json)
            if any(r.get("status") != "agree" for r in sres["results"]) or \
                    any(c.get("status") != "agree" for c in sres.get("encode", [])):
                rc = 1
    doc["seconds"] = round(time.perf_counter() - t0, 2)
    if as_json:
        print(json.dumps(doc, indent=1, default=str))
    return rc


HELP = "run configurations on the GPU (CuPy) and compare with the model"
EXIT_CODES = {0: "every configuration that ran passed (an expected refutation: ran at all) and every atom agreed",
              1: "the GPU disagrees with the model somewhere (see the report)",
              2: "bad input, or no GPU / CuPy here"}
LOADS = "many"


def add_arguments(sp) -> None:
    sp.add_argument("paths", nargs="*", metavar="CONFIG", help="configuration files or directories")
    sp.add_argument("--atoms", action="store_true", help="check every catalog atom on the GPU")
    sp.add_argument("--json", action="store_true", help="print the report as JSON")
    sp.add_argument("--out", default=None, metavar="DIR", help="write configs.json/.md (and atoms.json/.md) here")
    sp.add_argument("--prover", default=None, metavar="FILE", help="'symlayout prove --json' output for the gate")


def run_gpu(args) -> int:
    """Entry point of ``symlayout gpu`` (see the module docstring)."""
    if not args.paths and not args.atoms:
        raise UsageError("gpu: give at least one CONFIG, or --atoms (see 'symlayout gpu --help')")
    if getattr(args, "load_errors", None):
        for _p, msg in args.load_errors:
            print_error(msg)
        return 2
    paths = _paths(getattr(args, "configs", None)) or list(getattr(args, "paths", []) or [])
    return run_on_gpu(paths, atoms=bool(getattr(args, "atoms", False)), as_json=bool(getattr(args, "json", False)),
               out_dir=getattr(args, "out", None), prover=getattr(args, "prover", None))


#: the command entry point :mod:`symlayout.cli` calls
run = run_gpu


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m symlayout.cli.gpu",
                                description="run configurations (and atoms) on the GPU and compare with the model")
    p.add_argument("paths", nargs="*", metavar="CONFIG", help="configuration files or directories")
    p.add_argument("--all", dest="all_dirs", action="append", default=[], metavar="DIR",
                   help="every *.toml under DIR (same as giving DIR)")
    p.add_argument("--atoms", action="store_true", help="also run the model-free atom probe")
    p.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    p.add_argument("--out", default=None, metavar="DIR", help="write configs.json/.md (and atoms.json/.md) here")
    p.add_argument("--prover", default=None, metavar="FILE", help="'symlayout prove --json' output for the gate")
    p.add_argument("--no-isolate", dest="isolate", action="store_false",
                   help="run refutation configurations in the shared worker too")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="worker processes at once (default: min(8, CPUs))")
    p.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m symlayout.cli.gpu``: ``symlayout gpu`` plus ``--all``, ``--no-isolate``, ``--jobs``, ``-v``."""
    a = build_parser().parse_args(argv)
    paths = list(a.paths) + list(a.all_dirs)
    if not paths and not a.atoms:
        print("symlayout: error: give at least one CONFIG, or --atoms", file=sys.stderr)
        return 2
    log = (lambda m: print(m, file=sys.stderr, flush=True)) if a.verbose else None
    return run_on_gpu(paths, atoms=a.atoms, out_dir=a.out, prover=a.prover, as_json=a.json, isolate=a.isolate,
               jobs=a.jobs, log=log)


if __name__ == "__main__":
    sys.exit(main())
