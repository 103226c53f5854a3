"""The whole-array paths of the data path checks (prove/datapath/g2s.py, prove/datapath/stages.py) and of the copy
models' shared routes (prove/copy/model.py) against the point-by-point reference: every configuration of
proofs/sm80_datapath and proofs/hopper gives the same results -- status, count, counterexample,
detail -- with the arrays on and off (``SYMLAYOUT_NO_TABLES=1``), and a copy model built from a
shared route (a second model over the same tile shape) is the model built afresh."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("numpy")

from symlayout.config import load_config  # noqa: E402
from symlayout.prove.engine import prove_config  # noqa: E402
from symlayout.prove.copy.model import build_operand_model  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent / "proofs"
FILES = sorted(str(p.relative_to(ROOT)) for d in ("sm80_datapath", "hopper/pitfalls") for p in (ROOT / d).rglob("*.toml"))


def _strip(d):
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items() if k not in ("seconds", "time_s", "ms")}
    if isinstance(d, list):
        return [_strip(x) for x in d]
    return d


@pytest.mark.parametrize("name", FILES)
def test_arrays_and_reference_agree(name, monkeypatch):
    fast = _strip(prove_config(load_config(ROOT / name)).to_json())
    monkeypatch.setenv("SYMLAYOUT_NO_TABLES", "1")
    slow = _strip(prove_config(load_config(ROOT / name)).to_json())
    assert fast == slow
    assert fast["results"]


def test_shared_route_is_the_fresh_route():
    args = ("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "half_t")
    a = build_operand_model(*args, "(64,32):(32,1)")
    b = build_operand_model(*args, "Sw<2,3,3> o 0 o (64,32):(32,1)")      # same shape: the route is shared
    from symlayout.prove.copy import model as M
    assert a.tiled_copy is b.tiled_copy and any(v[0] is a.tiled_copy for v in M._ROUTES.values())
    M._ROUTES.clear()
    c = build_operand_model(*args, "Sw<2,3,3> o 0 o (64,32):(32,1)")      # built afresh
    for t in range(b.threads):
        assert [(x.smem, x.reg) for x in b.calls[t]] == [(x.smem, x.reg) for x in c.calls[t]]
        assert b.expected[t] == c.expected[t]
    assert dict(b.calls).keys() == dict(c.calls).keys() and b.threads == c.threads == 128
