"""``symlayout sweep --emit cute``: a survivor of each bundled space (SM80, SM90 and SM100 GEMM, flash-attention 2
and 3) written as the CuTe C++ program compiles host-only with g++ against the CuTe headers and runs, and the
TiledMMA CuTe prints is symlayout's (its thread layout).  ``-m slow`` (a minute or two of g++); skipped without
the headers (``SYMLAYOUT_CUTE_SITE``)."""
import random
import re
from pathlib import Path

import pytest

from cute_cpp import Compiler, needs_cute
from symlayout.sweep import emit, load_spec
from symlayout.sweep.prover import load_candidate, prove_candidate
from symlayout.tiled.mma import make_tiled_mma

ROOT = Path(__file__).resolve().parents[1]
SPACES = ["sm80_gemm", "attention_sm80", "sm90_gemm", "attention_sm90", "sm100_gemm"]


def _survivor(spec, seed: int = 32) -> dict:
    """The row of the first legal candidate in a seeded random order of the space."""
    ids = list(range(len(spec)))
    random.Random(seed).shuffle(ids)
    return next(r for r in (prove_candidate(spec, i) for i in ids) if r["status"] == "legal")


@pytest.mark.slow
@needs_cute
def test_each_spaces_emitted_survivor_compiles_and_prints_symlayouts_tiled_mma(tmp_path):
    programs = []
    for name in SPACES:
        spec = load_spec(ROOT / "examples" / "sweep" / f"{name}.toml")
        row = _survivor(spec)
        assert emit(spec, [row], "cute", str(tmp_path / name)) == 1
        (path,) = (tmp_path / name).iterdir()
        assert path.name == f"{name}_{row['id']:07d}.cpp"
        cfg = load_candidate(spec, row["id"])
        vmnk = str(make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation).thr_layout_vmnk)
        programs.append((name, row["id"], path.read_text(), vmnk))
    gxx = Compiler(tmp_path)
    results = gxx.map(lambda p: gxx.run(p[2]), programs)
    for (name, i, _, vmnk), (out, asserts) in zip(programs, results):
        assert asserts == [], f"{name} #{i}: CuTe does not compile the emitted program: {asserts}"
        printed = re.search(r"ThrLayoutVMNK:\s*(\S+)", out)
        assert printed and printed.group(1).replace("_", "") == vmnk, (name, i, out[:300])
