"""Issue 32's GPU check of swept survivors, prepared on the CPU: a seeded random sample of the legal
candidates of each runnable bundled space, as configuration files, and the prover's verdicts on them.

    python bench/sweep_gpu_sample.py DIR [--n 8] [--seed 32] [--spaces sm80_gemm,attention_sm80,...]

For each space of ``examples/sweep/`` named in ``--spaces`` (default: the four that ``symlayout gpu`` runs, the
SM80 and SM90 GEMM and attention spaces; the Blackwell ones have no GPU harness yet), candidates are drawn in a
seeded random order and proved one by one (as ``symlayout sweep`` proves them, pieces shared) until ``--n`` are
legal; those are written by the sweep's own ``--emit toml`` (:func:`symlayout.sweep.emit`) into
``DIR/configs/<space>/``.  A survivor with ``[params]`` and no Hopper ``[smem.X]`` (the SM80 attention space's
row strides) is replaced by its smallest instance (``symlayout.harness.plan.instance_text``: the SM80 harness
runs concrete configurations; the SM90 harness picks its own instance).  Then ``symlayout prove --json`` of
``DIR/configs`` is written to ``DIR/prove.json`` (the gate ``symlayout gpu --prover`` reads) and the ids to
``DIR/sample.json``.

On the GPU machine (docs/hardware/issue32-run.sh)::

    python -m symlayout.cli.gpu --jobs 14 -v DIR/configs --prover DIR/prove.json --out $OUT/issue32
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from symlayout.cli import main as cli_main  # noqa: E402
from symlayout.config import load_config  # noqa: E402
from symlayout.harness.plan import instance_text, instance_values  # noqa: E402
from symlayout.sweep import emit, load_spec  # noqa: E402
from symlayout.sweep.prover import prove_candidate  # noqa: E402

SPACES = ["sm80_gemm", "attention_sm80", "sm90_gemm", "attention_sm90"]


def survivors(spec, n: int, seed: int) -> list:
    """The rows of the first ``n`` legal candidates of ``spec`` in a seeded random order, and how many were
    proved to find them."""
    order = list(range(len(spec)))
    random.Random(seed).shuffle(order)
    memo, rows, tried = {}, [], 0
    for i in order:
        row = prove_candidate(spec, i, memo)
        tried += row["status"] != "pruned"
        if row["status"] == "legal":
            rows.append(row)
            if len(rows) == n:
                break
    return sorted(rows, key=lambda r: r["id"]), tried


def concrete(path: Path) -> str | None:
    """A survivor with ``[params]`` and no ``[smem.X]`` rewritten as its smallest instance (the SM80 harness
    runs concrete configurations); returns the instance's values, None when the file is left as it is."""
    cfg = load_config(path)
    if not cfg.params or cfg.smem:
        return None
    values = instance_values(cfg)[0]
    text = instance_text(cfg, values).replace(f'name = "{cfg.name}"',
                                              f'name = "{cfg.name} (instance {_values(values)})"', 1)
    path.write_text(text)
    return _values(values)


def _values(values: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in values.items())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=8, help="survivors per space")
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--spaces", default=",".join(SPACES))
    a = ap.parse_args()
    out = Path(a.out)
    sample = {"seed": a.seed, "n": a.n, "spaces": {}}
    for name in a.spaces.split(","):
        spec = load_spec(common.REPO / "examples" / "sweep" / f"{name}.toml")
        rows, tried = survivors(spec, a.n, a.seed)
        d = out / "configs" / name
        if d.exists():
            for f in d.glob("*.toml"):
                f.unlink()
        emit(spec, rows, "toml", str(d))
        stem = Path(spec.path).stem
        instances = {r["id"]: concrete(d / f"{stem}_{r['id']:07d}.toml") for r in rows}
        sample["spaces"][name] = {"candidates": len(spec), "proved": tried, "legal_ids": [r["id"] for r in rows],
                                  "instances": {i: v for i, v in instances.items() if v}}
        print(f"{name}: {len(rows)} legal of {tried} proved (seed {a.seed}) -> {d}", file=sys.stderr)
    with open(out / "prove.json", "w") as f, contextlib.redirect_stdout(f):
        rc = cli_main(["prove", "--json", str(out / "configs")])
    if rc != 0:
        raise SystemExit(f"symlayout prove of the sample: exit {rc} (every survivor should prove: see {out}/prove.json)")
    (out / "sample.json").write_text(json.dumps(sample, indent=1) + "\n")
    print(f"{sum(len(s['legal_ids']) for s in sample['spaces'].values())} configurations in {out}/configs, "
          f"prover verdicts in {out}/prove.json", file=sys.stderr)


if __name__ == "__main__":
    main()
