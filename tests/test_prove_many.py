"""prove_many: configurations proved in worker processes, piece by piece (a parametric copy split per
property), give the same reports, in the same order, as proving them one after another."""
from __future__ import annotations

from pathlib import Path

from symlayout.config import find_config_files, load_config, loads_config
from symlayout.prove.engine import config_parts, prove_config, prove_many

PROOFS = Path(__file__).resolve().parents[1] / "proofs"


def _json(reports):
    out = []
    for r in reports:
        d = r.to_json()
        for x in d["results"]:
            x.pop("seconds", None)
        out.append(d)
    return out


def test_parallel_pieces_give_the_serial_reports():
    files = [f for f in find_config_files([PROOFS / "parametric", PROOFS / "pitfalls", PROOFS / "threadmaps"])
             if "k_family" not in str(f)][:12]
    cfgs = [load_config(f) for f in files]
    assert any(c.params for c in cfgs) and any(not c.params for c in cfgs)
    serial = [prove_config(c) for c in cfgs]
    assert _json(prove_many(cfgs, jobs=2)) == _json(serial)
    assert any(r.status == "refuted" for rep in serial for r in rep.results)


def test_an_error_in_one_piece_ends_the_report_where_the_serial_one_ends():
    text = ('[params]\nm = { min = 1, max = 4 }\n[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\n'
            '[copy.A]\natom = "SM75_U32x2_LDSM_N"\ntype = "half_t"\nsmem = "(16*m,16):(16,1)"\n'
            '[copy.C]\natom = "AutoVectorizingCopy"\ntype = "half_t"\nsmem = "(16*m,8):(8,1)"\n'
            '[prove]\nproperties = ["alignment", "in_bounds"]\n')
    cfg = loads_config(text, "inline.toml")
    serial = prove_config(cfg)
    assert serial.error and "AutoVectorizingCopy" in serial.error and serial.results
    assert _json(prove_many([cfg, cfg], jobs=2)) == _json([serial, serial])


def test_a_parametric_copy_is_split_per_property():
    cfg = load_config(PROOFS / "parametric" / "row_pitch.toml")
    parts = config_parts(cfg, ["coverage", "alignment"], split=True)
    assert [p[2] for p in parts if p[0] == "copy"] == [["coverage"], ["alignment"]] * len(cfg.copies)
    assert len([p for p in config_parts(cfg, ["coverage", "alignment"]) if p[0] == "copy"]) == len(cfg.copies)
    assert parts[-1][0] == "datapath"          # (the data path after the copies, as one piece)
