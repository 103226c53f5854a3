"""The whole-tile array form of the obligations (symlayout.prove.decide.tables) against the point-by-point
reference: on random configurations (and offset swizzles, small base alignments) each ``*_holds``
answers True exactly when the reference check proves the property, and a property decided by the
tables reports the same status, count and stats as the reference."""
from __future__ import annotations

import random

import pytest

np = pytest.importorskip("numpy")

from symlayout.errors import SymlayoutError  # noqa: E402
from symlayout.prove.copy import obligations as ob  # noqa: E402
from symlayout.prove.decide import tables  # noqa: E402
from symlayout.prove.copy.model import build_operand_model, cute_build_check  # noqa: E402
from symlayout.prove.campaigns.random_configs import random_configs  # noqa: E402

HOLDS = {
    "coverage": tables.coverage_holds,
    "alignment": tables.alignment_holds,
    "exactly_once": tables.exactly_once_holds,
    "slot_agreement": tables.slot_agreement_holds,
    "bank_conflicts": tables.bank_conflicts_holds,
    "in_bounds": tables.in_bounds_holds,
}


def reference(m, prop):
    """The obligation decided point by point (tables off), the model's table cache left as it was."""
    saved = m.__dict__.pop("_tables", None)
    m.__dict__["_tables"] = None
    try:
        return ob.CHECKS[prop](m)
    finally:
        m.__dict__.pop("_tables", None)
        if saved is not None:
            m.__dict__["_tables"] = saved


def _models():
    out = list(random_configs(60, seed=18))
    rng = random.Random(1818)
    extra = [  # offset swizzles (stray addresses), unaligned bases, padded pitches
        ("A", "SM75_U32x4_LDSM_N", "half_t", "Sw<3,3,3> o 32 o (32,64):(64,1)", 128),
        ("A", "SM75_U32x2_LDSM_N", "half_t", "Sw<2,3,3> o 16 o (32,32):(32,1)", 128),
        ("A", "SM75_U32x4_LDSM_N", "half_t", "Sw<3,3,3> o 8 o (32,64):(64,1)", 128),
        ("A", "SM75_U32x4_LDSM_N", "half_t", "Sw<2,3,3> o 64 o (32,32):(32,1)", 128),
        ("C", "SM90_U32x4_STSM_N", "half_t", "Sw<3,3,3> o 512 o (32,64):(64,1)", 128),
        ("A", "SM75_U32x4_LDSM_N", "half_t", "(32,64):(72,1)", 8),
        ("B", "UniversalCopy<uint128_t>", "half_t", "(16,64):(64,1)", 4),
        ("A", "AutoVectorizingCopy", "half_t", "Sw<3,3,3> o 8 o (32,64):(64,1)", 128),
        ("C", "UniversalCopy<uint32_t>", "half_t", "(32,16):(18,1)", 128),
        ("C", "SM90_U32x2_STSM_N", "half_t", "(32,32):(20,1)", 128),
        ("C", "SM90_U32x2_STSM_N", "half_t", "Sw<3,3,3> o 8 o (32,64):(64,1)", 128),
    ]
    for op, cp, vt, smem, align in extra + [("A", rng.choice(["SM75_U32x4_LDSM_N", "UniversalCopy<uint32_t>"]),
                                             "half_t", f"({32 * rng.choice([1, 2])},{16 * rng.choice([1, 2, 4])})"
                                             f":(1,{32 * rng.choice([1, 2]) + rng.choice([0, 4, 8])})",
                                             rng.choice([4, 16, 128])) for _ in range(8)]:
        try:
            cute_build_check("SM80_16x8x16_F16F16F16F16_TN", op, cp, vt, smem)
            out.append(build_operand_model("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, op, cp, vt, smem,
                                           align=align))
        except SymlayoutError:
            continue
    return out


MODELS = _models()


def test_tables_cover_the_sample():
    covered = [m for m in MODELS if tables.of(m) is not None]
    assert len(covered) >= 0.9 * len(MODELS)
    assert any(m.stray for m in covered), "no offset swizzle with stray addresses in the sample"


@pytest.mark.parametrize("prop", sorted(HOLDS))
def test_holds_iff_reference_proves(prop):
    seen = {True: 0, False: 0}
    for m in MODELS:
        tb = tables.of(m)
        if tb is None:
            continue
        ref = reference(m, prop)
        fast = HOLDS[prop](m, tb)
        # soundness: never "holds" where the reference refutes; completeness: the reference path
        # runs only to tell a counterexample (the catalog's MMA atoms agree with the PTX route)
        assert fast == (ref.status == "proved"), (prop, m.atom.name, str(m.smem), ref.status,
                                                  ref.counterexample and ref.counterexample.message)
        seen[fast] += 1
        got = ob.CHECKS[prop](m)         # the same report either way, counterexample included
        g, r = got.to_json(), ref.to_json()
        g.pop("seconds", None), r.pop("seconds", None)
        assert g == r, (prop, str(m.smem))
    assert seen[True], prop
    if prop != "in_bounds":       # (no accepted configuration reads outside its tile: see the mutation test)
        assert seen[False], f"{prop}: the sample must fail somewhere: {seen}"


def _fresh():
    return build_operand_model("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "half_t",
                               "Sw<3,3,3> o 0 o (32,64):(64,1)")


@pytest.mark.parametrize("mutate, props", [
    (lambda m: m.calls[37][1].reg.__setitem__(0, m.calls[37][1].reg[1]), ("exactly_once", "slot_agreement")),
    (lambda m: m.calls[64][0].reg.__setitem__(2, m.frag_size), ("exactly_once",)),
    (lambda m: m.calls[3][0].smem.__setitem__(0, m.calls[4][0].smem[0]), ("alignment", "slot_agreement")),
    (lambda m: [m.calls[t][0].smem.__setitem__(slice(None), m.calls[0][0].smem) for t in [*range(1, 8), *range(65, 72)]],
     ("coverage",)),
    (lambda m: m.calls[8][1].smem.__setitem__(5, m.calls[8][1].smem[4]), ("alignment",)),
    (lambda m: m.expected[100].__setitem__(3, m.expected[100][4]), ("slot_agreement",)),
    (lambda m: m.calls[40][1].smem.__setitem__(0, max(range(m.smem.size()), key=m.addr_table.__getitem__)),
     ("in_bounds", "alignment")),
])
def test_a_broken_route_is_left_to_the_reference(mutate, props):
    """Each kind of broken route (a slot written twice, outside the fragment, a row address moved, a
    vector not contiguous, a wrong expectation) makes the tables answer False and the reference refute."""
    m = _fresh()
    assert all(HOLDS[p](m, tables.of(m)) for p in props)
    m = _fresh()
    mutate(m)
    tables.forget(m)
    tb = tables.of(m)
    assert tb is not None
    for p in props:
        assert not HOLDS[p](m, tb), p
        assert reference(m, p).status == "refuted", p
        assert ob.CHECKS[p](m).status == "refuted", p


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("SYMLAYOUT_NO_TABLES", "1")
    m = build_operand_model("SM80_16x8x16_F16F16F16F16_TN", "(1,1,1)", None, "A", "SM75_U32x2_LDSM_N", "half_t",
                            "(16,16):(16,1)")
    assert tables.of(m) is None
    assert ob.alignment(m).status == "proved"


def test_one_small_file_is_proved_without_numpy():
    """numpy is imported when it pays: a process proving one small configuration stays point by point."""
    import subprocess
    import sys
    code = ("import sys; from symlayout.cli.prove import prove_paths; "
            "r = prove_paths(['proofs/seeds/seed_000_A_x2.toml']); "
            "print(r[0].ok, 'numpy' in sys.modules)")
    from pathlib import Path
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.split() == ["True", "False"], out.stderr[-800:]
