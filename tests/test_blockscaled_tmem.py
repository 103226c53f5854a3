"""``tmem_alloc`` with block-scaled MMAs (issues 28 + 29): the scale factors' TMEM column blocks
(``prove.blackwell.sf.sf_tmem_blocks``) are owners of the allocation like the accumulator stages: at
``[sf.X] tmem_column`` when given, else where CUTLASS's collective puts them (SFA after the accumulator
stages, SFB after SFA); inside ``tcgen05.alloc``'s columns and disjoint from every other owner."""
from __future__ import annotations

import re
from pathlib import Path

from symlayout.config import load_config, loads_config
from symlayout.prove.blackwell.obligations import cta_tile
from symlayout.prove.blackwell.sf import sf_tmem_blocks
from symlayout.prove.blackwell.tmem import sf_blocks
from symlayout.prove.blackwell.tmem_model import accumulator_plan
from symlayout.prove.engine import prove_config
from symlayout.prove.report.tmem_pictures import tmem_map, tmem_text
from symlayout.prove.verdict.result import PROVED, REFUTED
from symlayout.tiled.mma import make_tiled_mma

PROOFS = Path(__file__).resolve().parents[1] / "proofs" / "blackwell" / "blockscaled"
NVFP4 = (PROOFS / "nvfp4_1sm_128x128x256_tmem.toml").read_text()


def _alloc(cfg):
    (r,) = [r for r in prove_config(cfg).results if r.property == "tmem_alloc"]
    return r


def _blocks(cfg):
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
    return dict(sf_blocks(cfg, accumulator_plan(mma, cfg.tmem.accumulator_stages, cfg.tmem.accumulator_column)))


def _with(text, table, line):
    """``text`` with ``line`` added at the end of ``[table]``."""
    out, n = re.subn(rf"(\[{re.escape(table)}\]\n(?:[^\[\n][^\n]*\n)*)", lambda m: m.group(1) + line + "\n", text)
    assert n == 1
    return out


def test_default_placement_is_cutlass_order():
    cfg = loads_config(NVFP4, "t.toml")
    widths = dict(sf_tmem_blocks(cfg, cta_tile))
    blocks = _blocks(cfg)
    a, b = blocks["[sf.A] scale factors"], blocks["[sf.B] scale factors"]
    assert a == (256, 256 + widths["sf.A"])          # after the 2 accumulator stages of 128 columns
    assert b == (a[1], a[1] + widths["sf.B"])        # right after SFA
    r = _alloc(cfg)
    assert r.status == PROVED and r.checked > 128 * (a[1] - a[0] + b[1] - b[0])


def test_tmem_column_places_the_block():
    cfg = loads_config(_with(NVFP4, "sf.B", "tmem_column = 320"), "t.toml")
    blocks = _blocks(cfg)
    assert blocks["[sf.A] scale factors"][0] == 256 and blocks["[sf.B] scale factors"][0] == 320
    assert _alloc(cfg).status == PROVED


def test_sf_over_the_accumulator_is_refuted_with_the_cell_and_owners():
    cfg = load_config(str(PROOFS / "pitfalls" / "sf_over_accumulator.toml"))
    r = _alloc(cfg)
    assert r.status == REFUTED
    cex = r.counterexample
    assert (cex.extra["lane"], cex.extra["column"]) == (0, 128)
    assert cex.extra["owners"] == ["accumulator stage 1", "[sf.A] scale factors"]
    assert "element (m=0, n=0)" in cex.message and "tmem_column" in cex.message


def test_sfb_over_sfa_is_refuted():
    cfg = loads_config(_with(NVFP4, "sf.B", "tmem_column = 260"), "t.toml")
    cex = _alloc(cfg).counterexample
    assert cex is not None and cex.extra["owners"] == ["[sf.A] scale factors", "[sf.B] scale factors"]
    assert cex.extra["column"] == 260


def test_sf_outside_the_allocation_is_refuted():
    cfg = load_config(str(PROOFS / "pitfalls" / "sf_outside_allocation.toml"))
    cex = _alloc(cfg).counterexample
    assert cex is not None and cex.extra["owner"] == "[sf.A] scale factors"
    assert "outside the 512 columns" in cex.message


def test_256_columns_leave_no_room_for_the_factors():
    cfg = loads_config(NVFP4.replace("columns = 512", "columns = 256"), "t.toml")
    cex = _alloc(cfg).counterexample
    assert cex is not None and cex.extra["owner"] == "[sf.A] scale factors"


def test_show_view_tmem_draws_the_factor_blocks():
    cfg = load_config(str(PROOFS / "pitfalls" / "sf_over_accumulator.toml"))
    owners = dict(tmem_map(cfg)["owners"])
    assert {c for _lane, c in owners["[sf.A] scale factors"]} == set(range(128, 144))
    assert len(owners["[sf.A] scale factors"]) == 128 * 16
    assert "A = [sf.A] scale factors" in tmem_text(cfg)
