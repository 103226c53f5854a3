"""CuTe's compile-time checks on every member of a parametric ``[copy.X]`` (``[params]`` in the smem layout).

A family is proved for every member at once (Z3), so CuTe's static_asserts must hold for every member too:
what CuTe rejects at compile time is never PROVED.  The replay of those checks on the symbolic smem
(``prove.model.cute_build_check``) either decides them for every member, or leaves side conditions on the
parameters, or cannot slice the symbolic layout, or rejects the symbolic tile; in the last three cases the
members are replayed one by one (``prove.engine._member_rejection``) and the family's result is CuTe's
rejection of the least member it rejects, named in the counterexample.

``family_members.json`` holds CuTe C++'s verdict on each member (m = 1..M) of each family below, compiled
with g++ and the CuTe headers (``python tests/oracle/test_family_members.py`` regenerates it; the ``slow``
test re-derives it).  The default tests compare symlayout with that stored ground truth, no compiler needed.
Before this check, the first family was PROVED for m = 1..16 although CuTe rejects m = 3, 5, 6, ...
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
STORE = HERE / "family_members.json"
MEMBERS = 6
MMA = {"atom": "SM80_16x8x16_F16F16F16F16_TN", "layout": "(2,2,1)", "permutation": None}

#: (smem with the parameter m, copy atom) of operand A, half_t
FAMILIES = [
    ("Sw<3,3,3> o 0 o (64,16*m):(16*m,1)", "SM75_U32x4_LDSM_N"),
    ("Sw<1,3,3> o 0 o (32,16*m):(16*m,1)", "SM75_U32x4_LDSM_N"),
    ("Sw<2,3,3> o 0 o (32,8*m):(8*m,1)", "SM75_U32x4_LDSM_N"),
    ("Sw<3,3,3> o 0 o (64,64):(64*m,1)", "SM75_U32x4_LDSM_N"),
    ("(64,16):(16,m)", "SM75_U32x4_LDSM_N"),
    ("Sw<2,3,3> o 0 o (32*m,16):(16,1)", "SM75_U32x4_LDSM_N"),
    ("Sw<3,3,3> o 0 o (64*m,64):(64,1)", "SM75_U32x4_LDSM_N"),
    ("(32,16):(16*m,1)", "UniversalCopy<uint32_t>"),
    ("(64,16):(16,m)", "UniversalCopy<uint32_t>"),
    ("Sw<3,3,3> o 0 o (64,64):(64*m,1)", "UniversalCopy<uint32_t>"),
    ("(16*m,32):(1,16*m)", "SM75_U16x8_LDSM_T"),
    ("Sw<2,3,3> o 0 o (32*m,32):(32,1)", "SM75_U16x8_LDSM_T"),
]


def _family_toml(smem: str, atom: str) -> str:
    return (f'name = "family {smem} {atom}"\n[params]\nm = {{ min = 1, max = {MEMBERS} }}\n'
            f'[mma]\natom = "{MMA["atom"]}"\nlayout = "{MMA["layout"]}"\n'
            f'[copy.A]\natom = "{atom}"\ntype = "half_t"\nsmem = "{smem}"\n')


def _cases():
    from symlayout.config import loads_config
    out = []
    for k, (smem, atom) in enumerate(FAMILIES):
        fam = loads_config(_family_toml(smem, atom), "family").copies["A"].smem
        from symlayout.prove.engine import _member_smem, _smem_symbols
        (s,) = _smem_symbols(fam)
        for m in range(1, MEMBERS + 1):
            out.append({"id": f"family{k}:m={m}", "mma": MMA, "operand": "A",
                        "copy": {"atom": atom, "type": "half_t", "smem": str(_member_smem(fam, {s: m})), "align": 128}})
    return out


def cute_verdicts(log=print) -> dict:
    """``{family index: {m: CuTe's rejection text or None}}`` by g++ (needs the CuTe headers)."""
    sys.path.insert(0, str(HERE))
    import cute_oracle
    import os
    res = cute_oracle.run_cases(_cases(), jobs=max(2, os.cpu_count() or 2), batch=6, log=log)
    out: dict = {}
    for cid, r in res.items():
        fam, m = cid.split(":m=")
        v = r.get("rejected")          # (None: compiled; an "error" is the verdict program failing after it)
        out.setdefault(str(int(fam[len("family"):])), {})[str(int(m))] = v
    return out


def load_store() -> dict:
    return json.loads(STORE.read_text())


def _prove_family(k: int):
    from symlayout.config import loads_config
    from symlayout.prove.engine import prove_config
    smem, atom = FAMILIES[k]
    return prove_config(loads_config(_family_toml(smem, atom), f"family{k}"))


@pytest.mark.parametrize("k", range(len(FAMILIES)), ids=[f"{s} {a}" for s, a in FAMILIES])
def test_family_result_is_cute_verdict_on_its_members(k):
    """Rejected by CuTe at some member: the family's only result is CuTe's rejection at the least such member
    (the same static_assert); compiled for every member: no rejection (every property decided)."""
    cute = load_store()["verdicts"][str(k)]
    rejected = sorted(int(m) for m, why in cute.items() if why)
    rep = prove_config_cached(k)
    assert rep.error is None
    if rejected:
        (r,) = rep.results
        assert r.status == "refuted" and r.method == "cute"
        assert r.counterexample.params == {"m": rejected[0]}
        ours, theirs = r.counterexample.extra["cute_static_assert"], cute[str(rejected[0])]
        # the same static_assert, or both a divisibility condition of the same slice (which of the shape and
        # stride conditions fires first follows the order the program instantiates its partitions in)
        assert ours.split(".")[0] in theirs or ("Divisibility" in ours and "Divisibility" in theirs), (ours, theirs)
    else:
        assert rep.results and all(r.method != "cute" for r in rep.results)
        assert all(r.status in ("proved", "refuted") for r in rep.results)


_REPORTS: dict = {}


def prove_config_cached(k):
    if k not in _REPORTS:
        _REPORTS[k] = _prove_family(k)
    return _REPORTS[k]


def test_every_family_kind_is_exercised():
    """The store has families CuTe rejects somewhere but not at m = 1 (the case the symbolic replay missed),
    families it rejects at m = 1, and families it compiles for every member."""
    v = load_store()["verdicts"]
    first = [min((int(m) for m, w in fam.items() if w), default=None) for fam in v.values()]
    assert any(f is not None and f > 1 for f in first)
    assert any(f == 1 for f in first)
    assert any(f is None for f in first)


def test_too_many_members_to_replay_is_unknown(monkeypatch):
    """Beyond the replay limit, before a rejection is found, nothing is proved: every result UNKNOWN."""
    from symlayout.prove import engine
    monkeypatch.setattr(engine, "REPLAY_LIMIT", 2)
    rep = _prove_family(0)                            # CuTe rejects m = 3 first: a third replay
    assert rep.results and all(r.status == "unknown" for r in rep.results)
    assert "not decided: CuTe's compile-time checks" in rep.results[0].detail


def test_symbolic_replay_decides_the_swizzled_k_family(monkeypatch):
    """Sw<3,3,3> o (64*m,64):(64,1) (proofs/parametric/k_family_swizzled.toml) is decided on the symbolic
    smem: the member-by-member replay is not needed (it would be a second per m = 1..1024)."""
    from symlayout.prove import engine
    from symlayout.config import load_config

    def fail(*a, **k):
        raise AssertionError("replayed member by member")
    monkeypatch.setattr(engine, "_member_rejection", fail)
    proofs = HERE.parent.parent / "proofs" / "parametric" / "k_family_swizzled.toml"
    rep = engine.prove_config(load_config(str(proofs)))
    assert rep.results and all(r.status == "proved" for r in rep.results)


@pytest.mark.slow
def test_stored_verdicts_are_cute():
    cute_oracle = pytest.importorskip("cute_oracle")
    if cute_oracle.include_dirs() is None:
        pytest.skip("CuTe headers or g++ not found (set SYMLAYOUT_CUTE_SITE)")
    assert cute_verdicts(log=lambda *a: None) == load_store()["verdicts"]


if __name__ == "__main__":
    v = cute_verdicts()
    STORE.write_text(json.dumps({"families": [list(f) for f in FAMILIES], "members": MEMBERS, "verdicts": v},
                                indent=1, sort_keys=True) + "\n")
    print(json.dumps(v, indent=1))
