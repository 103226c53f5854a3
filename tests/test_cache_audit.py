"""Adversarial audit of the prover's caches and fast paths (issue 18's speed work): an answer served from a
cache, a memo, a shared route or a whole-array path is the answer computed afresh.

Ground truth is the general path with every process-wide cache emptied (:func:`clear_caches`) and, for
the worked examples, CuTe C++.  The bug classes looked for: a cache key that omits something the value
depends on (a static ``8`` vs a run-time ``DynInt`` 8, a swizzle, a pad, a type, an alignment), values
shared out of a cache and changed later, state left behind by one configuration for the next one proved
in the same process (in either order), and a fast path that accepts what the general path rejects (or
reports it differently).  The cross-checks run on a sample by default and on everything under ``-m slow``.
"""
from __future__ import annotations

import functools
import gc
import itertools
import json
import random
import sys
from pathlib import Path

import pytest

from symlayout.algebra.composed import ComposedLayout, Swizzle
from symlayout.algebra.int_tuple import _
from symlayout.algebra.layout import Layout
from symlayout.algebra.symbolic import DynInt
from symlayout.config import load_config, loads_config
from symlayout.prove.engine import prove_config

ROOT = Path(__file__).resolve().parent.parent
PROOFS = sorted(str(p.relative_to(ROOT / "proofs")) for p in (ROOT / "proofs").rglob("*.toml"))


def clear_caches() -> None:
    """Empty every process-wide cache and memo the prover keeps (the per-object memos live on objects
    these caches hand out -- TiledMMAs, atoms, TiledCopies -- so they go with them)."""
    from symlayout.algebra import composed, layout
    from symlayout.prove.copy import model, obligations, z3backend
    from symlayout.prove.decide import tables
    from symlayout.prove.hopper import obligations as hopper
    from symlayout.tiled import copy, mma
    layout.clear_caches()
    for d in (model._ROUTES, tables._PROVIDERS, obligations._MMA_ROUTE_OK, hopper._PTX_TABLES,
              z3backend._TILE_CACHE, mma._NAMED, copy._RESHAPED, copy._SLICED, hopper._STRIDE_DECIDED,
              composed._SLICERS, composed._DECAYED):
        d.clear()
    for f in gc.get_objects():
        if isinstance(f, functools._lru_cache_wrapper) and getattr(f, "__module__", "").startswith("symlayout"):
            f.cache_clear()


def _strip(d):
    """A report without its timings and its path (the same text in another file is the same proof)."""
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items()
                if k != "path" and not any(s in k for s in ("time", "seconds", "ms"))}
    if isinstance(d, list):
        return [_strip(x) for x in d]
    if isinstance(d, str):
        return d.split(": ", 1)[1] if d.startswith(("/", str(ROOT))) and ".toml" in d.split(": ", 1)[0] else d
    return d


def _prove(cfg) -> dict:
    return _strip(prove_config(cfg).to_json())


# ---------------------------------------------------------------- worked examples (bugs found)


def _kinds(r):
    """A slice's result with every leaf's kind: ``(type, shape, stride, offset kind and value)``."""
    L, off = r
    inner = getattr(L, "inner", L)
    return type(L).__name__, repr(inner.shape), repr(inner.stride), repr(getattr(L, "offset", None)), repr(off)


def test_swizzle_slicer_keeps_static_and_dynamic_strides_apart():
    """``slice_and_offset`` of ``Sw o off o inner`` memoised its coordinate-independent part by
    ``str(inner)``: a static stride 64 and a ``DynInt`` 64 print alike, so slicing the dynamic layout after
    the static one returned the static layout's modes (and the other way round)."""
    from symlayout.algebra import composed
    layouts = [ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1))),
               ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (DynInt(64), 1))),
               ComposedLayout(Swizzle(3, 3, 3), 16, Layout((8, 64), (64, 1))),
               ComposedLayout(Swizzle(3, 3, 3), DynInt(0), Layout((8, 64), (64, 1))),
               ComposedLayout(Swizzle(2, 3, 3), 0, Layout((8, 32), (DynInt(32), 1)))]
    crds = [(_, DynInt(3)), (_, 3), (DynInt(2), _), (2, _)]
    cases = list(itertools.product(range(len(layouts)), range(len(crds))))
    fresh = {}
    for i, c in cases:
        composed._SLICERS.clear()
        composed._DECAYED.clear()
        fresh[i, c] = _kinds(layouts[i].slice_and_offset(crds[c]))
    assert fresh[0, 0] != fresh[1, 0]          # (the static and the dynamic layout do differ)
    for (i1, c1), (i2, c2) in itertools.product(cases, cases):
        composed._SLICERS.clear()
        composed._DECAYED.clear()
        layouts[i1].slice_and_offset(crds[c1])
        assert _kinds(layouts[i2].slice_and_offset(crds[c2])) == fresh[i2, c2], (i1, c1, i2, c2)


AVC_POW2 = """name = "AutoVectorizingCopy over a swizzle on a 24-element pitch"
[mma]
atom = "SM80_16x8x8_F16F16F16F16_TN"
layout = "(1,1,1)"
[copy.A]
atom = "{atom}"
type = "half_t"
smem = "Sw<3,3,3> o 0 o (32,16):(24,1)"
align = 16
"""


@pytest.mark.parametrize("atom", ["AutoVectorizingCopy", "UniversalCopy<uint32_t>"])
def test_a_slice_cute_rejects_is_a_refutation_for_every_atom(atom):
    """partition_fragment_A slices the swizzled smem tensor at the thread index: CuTe's to_mixed_bits
    asserts ``Requires pow2 shape*stride.`` (8 x 24 = 192; CuTe C++ 4.2 says so for both atoms, see the slow
    test).  The AutoVectorizingCopy path of ``cute_build_check`` returned before that slice, so the raw
    static_assert escaped as an input error (exit 2) instead of CuTe's rejection (REFUTED)."""
    rep = prove_config(loads_config(AVC_POW2.format(atom=atom)))
    assert rep.error is None
    assert "A" in rep.rejected
    [r] = rep.results
    assert r.status == "refuted" and "Requires pow2 shape*stride." in r.counterexample.message


@pytest.mark.slow
def test_the_pow2_rejection_is_cute_cpp(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from cute_cpp import Compiler, cute_site
    if cute_site() is None:
        pytest.skip("CuTe C++ headers not installed (SYMLAYOUT_CUTE_SITE or cutlass_library)")
    c = Compiler(tmp_path)
    for atom in ("AutoVectorizingCopy", "UniversalCopy<uint32_t>"):
        cfg = ("SM80_16x8x8_F16F16F16F16_TN", "(1,1,1)", None, "A", atom, "half_t", "Sw<3,3,3> o 0 o (32,16):(24,1)")
        assert "Requires pow2 shape*stride." in c.static_asserts(cfg)


# ---------------------------------------------------------------- shared routes, field by field


ROUTE_VARIANTS = [  # one tile shape (64,32), fields the route must not depend on, or that its key holds
    ("A", "SM75_U32x4_LDSM_N", "half_t", "(64,32):(32,1)", 128),
    ("A", "SM75_U32x4_LDSM_N", "half_t", "(64,32):(40,1)", 128),
    ("A", "SM75_U32x4_LDSM_N", "half_t", "Sw<2,3,3> o 0 o (64,32):(32,1)", 128),
    ("A", "SM75_U32x4_LDSM_N", "half_t", "Sw<2,3,3> o 16 o (64,32):(32,1)", 128),
    ("A", "SM75_U32x4_LDSM_N", "half_t", "(64,32):(1,64)", 128),
    ("A", "SM75_U32x4_LDSM_N", "half_t", "(64,32):(32,1)", 4),
    ("A", "SM75_U32x4_LDSM_N", "bfloat16_t", "(64,32):(32,1)", 128),
    ("A", "SM75_U32x2_LDSM_N", "half_t", "(64,32):(32,1)", 128),
    ("A", "SM75_U16x8_LDSM_T", "half_t", "(64,32):(1,64)", 128),
    ("A", "AutoVectorizingCopy", "half_t", "(64,32):(32,1)", 128),
    ("A", "AutoVectorizingCopy", "half_t", "(64,32):(34,1)", 128),
    ("A", "AutoVectorizingCopy", "half_t", "(64,32):(36,1)", 128),
    ("A", "AutoVectorizingCopy", "half_t", "(64,32):(33,1)", 128),
    ("A", "AutoVectorizingCopy", "half_t", "Sw<3,3,3> o 0 o (64,32):(32,1)", 128),
    ("A", "UniversalCopy<uint32_t>", "half_t", "(64,32):(32,1)", 8),
    ("A", "UniversalCopy<uint128_t>", "half_t", "(64,32):(36,1)", 16),
    ("C", "SM90_U32x4_STSM_N", "half_t", "(64,32):(32,1)", 128),
    ("C", "SM90_U32x4_STSM_N", "half_t", "Sw<3,3,3> o 0 o (64,32):(32,1)", 128),
    ("C", "UniversalCopy<uint32_t>", "half_t", "(64,32):(34,1)", 128),
    ("C", "AutoVectorizingCopy", "half_t", "(64,32):(32,1)", 128),
    ("C", "AutoVectorizingCopy", "half_t", "(64,32):(1,64)", 128),
    ("C", "AutoVectorizingCopy", "half_t", "(64,32):(34,1)", 128),
    # other element widths under other MMAs (the PTX provider tables are shared across MMAs)
    ("A", "SM75_U32x4_LDSM_N", "tfloat32_t", "(64,32):(32,1)", 128, "SM80_16x8x8_F32TF32TF32F32_TN"),
    ("A", "SM75_U32x4_LDSM_N", "tfloat32_t", "Sw<3,2,3> o 0 o (64,32):(32,1)", 128, "SM80_16x8x8_F32TF32TF32F32_TN"),
    ("A", "SM75_U32x4_LDSM_N", "int8_t", "(64,64):(64,1)", 128, "SM80_16x8x32_S32S8S8S32_TN"),
    ("A", "SM75_U32x2_LDSM_N", "int8_t", "Sw<2,4,3> o 0 o (64,64):(64,1)", 128, "SM80_16x8x32_S32S8S8S32_TN"),
]


def _route_config(op, atom, vt, smem, align, mma="SM80_16x8x16_F16F16F16F16_TN"):
    return loads_config(f'[mma]\natom = "{mma}"\nlayout = "(2,2,1)"\n'
                        f'[copy.{op}]\natom = "{atom}"\ntype = "{vt}"\nsmem = "{smem}"\nalign = {align}\n')


def test_configurations_sharing_a_tile_shape_prove_as_when_alone():
    """Every variant proved after others in one process (routes, TiledCopies and tables are shared by
    tile shape), in six random orders, reports what it reports with every cache emptied first."""
    pytest.importorskip("numpy")
    cfgs = [_route_config(*v) for v in ROUTE_VARIANTS]
    fresh = []
    for c in cfgs:
        clear_caches()
        fresh.append(_prove(c))
    assert {r["status"] for f in fresh for r in f["results"]} >= {"proved", "refuted"}
    rng = random.Random(18)
    for _rnd in range(6):                       # six orders in one process each (caches kept between)
        clear_caches()
        order = list(range(len(cfgs)))
        rng.shuffle(order)
        for k, i in enumerate(order):
            assert _prove(cfgs[i]) == fresh[i], (ROUTE_VARIANTS[i], "after", [ROUTE_VARIANTS[j] for j in order[:k]])


def _reference(m, prop):
    """The obligation decided point by point on the same model (its tables put back afterwards)."""
    from symlayout.prove.copy import obligations as ob
    saved = m.__dict__.pop("_tables", None)
    m.__dict__["_tables"] = None
    try:
        return ob.CHECKS[prop](m).status
    finally:
        m.__dict__["_tables"] = saved


def test_whole_table_answers_from_shared_routes_match_the_reference():
    """The ``*_holds`` fast paths answer True only where the point-by-point check proves the property,
    also on models built from routes and provider tables another variant left in the caches (a wrong
    True would be a PROVED nobody checked; the verdict cross-checks above cannot see it, since a wrong
    False only sends the property to the reference)."""
    pytest.importorskip("numpy")
    from symlayout.errors import SymlayoutError
    from symlayout.prove.decide import tables
    from symlayout.prove.copy.model import build_operand_model, cute_build_check
    holds = {"coverage": tables.coverage_holds, "alignment": tables.alignment_holds,
             "exactly_once": tables.exactly_once_holds, "slot_agreement": tables.slot_agreement_holds,
             "bank_conflicts": tables.bank_conflicts_holds, "in_bounds": tables.in_bounds_holds}
    clear_caches()
    seen = 0
    for op, atom, vt, smem, align, *mma in ROUTE_VARIANTS + ROUTE_VARIANTS[::-1]:
        args = (mma[0] if mma else "SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, op, atom, vt, smem)
        try:
            cute_build_check(args[0], op, atom, vt, smem)
            m = build_operand_model(*args, align=align)
        except SymlayoutError:
            continue
        tb = tables.of(m)
        if tb is None:
            continue
        for prop, f in holds.items():
            seen += 1
            assert f(m, tb) == (_reference(m, prop) == "proved"), (prop, op, atom, vt, smem, align)
    assert seen >= 100


# ---------------------------------------------------------------- proofs/ and the sweep's space


def _proofs_campaign(names):
    fresh = {}
    for n in names:
        clear_caches()
        fresh[n] = _prove(load_config(ROOT / "proofs" / n))
    clear_caches()
    for order in (names, names[::-1]):
        for n in order:
            assert _prove(load_config(ROOT / "proofs" / n)) == fresh[n], n
    return fresh


def test_proofs_in_one_process_prove_as_each_alone():
    """A sample of proofs/ (one file in six, every kind of directory) proved one after another in one
    process, forwards and backwards, reports what each file reports after emptying every cache."""
    pytest.importorskip("numpy")
    _proofs_campaign(PROOFS[::6])


@pytest.mark.slow
def test_every_proof_in_one_process_proves_as_alone(monkeypatch):
    fresh = _proofs_campaign(PROOFS)
    monkeypatch.setenv("SYMLAYOUT_NO_TABLES", "1")
    clear_caches()
    for n in PROOFS:
        assert _prove(load_config(ROOT / "proofs" / n)) == fresh[n], n


def _sweep_points(n, seed):
    sys.path.insert(0, str(ROOT / "bench"))
    import sweep
    pts = list(sweep.space())
    random.Random(seed).shuffle(pts)
    pts = pts[:n]
    pts.sort(key=lambda p: p[:5])               # neighbours differ only in pad, swizzle and alignment
    return [sweep.config_text(0, *p) for p in pts]


def _sweep_campaign(texts, no_tables=False, monkeypatch=None):
    fresh = []
    for t in texts:
        clear_caches()
        fresh.append(_prove(loads_config(t)))
    clear_caches()
    if no_tables:
        monkeypatch.setenv("SYMLAYOUT_NO_TABLES", "1")
    for i, t in enumerate(texts):
        assert _prove(loads_config(t)) == fresh[i], t
    return fresh


def test_sweep_neighbours_prove_as_each_alone():
    """Points of bench/sweep.py's space that differ only in row pitch, swizzle and base alignment, proved
    one after another (sharing routes, TiledCopies and partitions), report what each reports alone."""
    pytest.importorskip("numpy")
    fresh = _sweep_campaign(_sweep_points(60, 18))
    assert all("error" not in f for f in fresh)
    assert {r["status"] for f in fresh for r in f["results"]} >= {"proved", "refuted"}


@pytest.mark.slow
@pytest.mark.parametrize("no_tables", [False, True])
def test_sweep_space_sample_prove_as_each_alone(no_tables, monkeypatch):
    fresh = _sweep_campaign(_sweep_points(1500, 1), no_tables, monkeypatch)
    assert all("error" not in f for f in fresh), [f for f in fresh if "error" in f][:3]


# ---------------------------------------------------------------- 64-bit arrays


def _s2g_with_pitch(pitch: int) -> str:
    text = (ROOT / "proofs" / "sm80_datapath" / "fa2_fwd_hd128_pv.toml").read_text()
    assert 'gmem = "(128,128):(ldO,1)"' in text
    return text.replace('gmem = "(128,128):(ldO,1)"', f'gmem = "(128,128):({pitch},1)"')


def test_a_gmem_tile_beyond_64_bit_offsets_is_an_input_error():
    """The global-memory checks compute offsets in int64 arrays (there is no point-by-point twin): a row
    pitch of 2^61 half_t wrapped them, and rows 0, 4, 8, ... of the O store 'aliased' -- a false
    exactly_once[s2g.C] refutation ('C(0,0) is written 16 times').  Such a tile spans more than the 64-bit
    address space: an input error naming the key; just inside the bound every check is exact."""
    from symlayout.errors import ConfigError
    with pytest.raises(ConfigError, match=r"\[s2g\.C\] gmem .* beyond the 64-bit global address space"):
        loads_config(_s2g_with_pitch(1 << 61))
    rep = prove_config(loads_config(_s2g_with_pitch(1 << 54)))
    assert rep.error is None
    assert {r.status for r in rep.results if r.operand == "s2g.C"} == {"proved"}


# ---------------------------------------------------------------- configurations with CuTe ground truth


def _oracle_texts():
    """Every configuration of the CuTe C++ campaigns (tests/oracle, tests/data/sm90) as TOML text."""
    out = []
    for name in ("tests/oracle/cases.jsonl", "tests/oracle/datapath_cases.jsonl", "tests/data/sm90/configs.jsonl",
                 "tests/data/sm90/configs_tma.jsonl"):
        for line in (ROOT / name).read_text().splitlines():
            c = json.loads(line)
            if "toml" in c:
                out.append(c["toml"])
                continue
            cfg = c["config"]
            m, cp = cfg["mma"], cfg["copy"]
            t = f'[mma]\natom = "{m["atom"]}"\nlayout = "{m["layout"]}"\n'
            if m.get("permutation"):
                t += f'permutation = {json.dumps(m["permutation"])}\n'
            out.append(t + f'[copy.{cfg["operand"]}]\natom = "{cp["atom"]}"\ntype = "{cp["type"]}"\n'
                           f'smem = "{cp["smem"]}"\nalign = {cp["align"]}\n')
    return out


def _outcome(text):
    try:
        return _prove(loads_config(text))
    except Exception as e:                     # noqa: BLE001 -- an input error is an outcome too
        return {"exception": f"{type(e).__name__}: {e}"}


@pytest.mark.slow
@pytest.mark.parametrize("no_tables", [False, True])
def test_oracle_configurations_prove_as_each_alone(no_tables, monkeypatch):
    """The 800 configurations of the CuTe C++ campaigns (SM80 copies, whole data paths, GMMA and TMA),
    proved one after another forwards and backwards (and without the tables), report what each reports
    after emptying every cache."""
    texts = _oracle_texts()
    assert len(texts) > 700
    fresh = []
    for t in texts:
        clear_caches()
        fresh.append(_outcome(t))
    clear_caches()
    if no_tables:
        monkeypatch.setenv("SYMLAYOUT_NO_TABLES", "1")
    for i in list(range(len(texts))) + list(range(len(texts)))[::-1]:
        assert _outcome(texts[i]) == fresh[i], texts[i]
