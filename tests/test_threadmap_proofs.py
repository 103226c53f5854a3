"""Tests of symlayout.prove.threadmaps.obligations: thread-map properties, Z3 vs exhaustive,
the map as a layout, seed 003, the proofs/threadmaps files and ``show``.

Sources of expected values:
* shared/seeds/003_*.txt (the article's get_offset and its tables);
* shared/conformance/public/threadmap.jsonl (CUTLASS 4.2 compiled on the host;
  p-threadmap-0053 / -0145 are the PR #3131 bug class);
* cutlass_library/.../default_mma_core_sm80.h (the SM80 loaders' thread maps).
"""
from __future__ import annotations

import json
import os
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from symlayout.config import load_config, loads_config
from symlayout.errors import TilingError
from symlayout.prove.verdict.result import ERROR, PROVED, REFUTED, UNKNOWN
from symlayout.prove.report.threadmap_pictures import show_map, show_threadmap
from symlayout.prove.threadmaps.obligations import (
    THREADMAP_PROPERTIES, MapModel, alignment, coalescing, coverage, exactly_once, in_bounds, prove_map,
    prove_offset_formula, prove_threadmap,
)
from symlayout.threadmap.layout import threadmap_layout
from symlayout.threadmap.maps import (
    THREAD_MAPS, OffsetThreadMap, PitchLinear2DThreadTileStripminedThreadMap, PitchLinearStridedWarpRakedThreadMap,
    PitchLinearStripminedThreadMap, PitchLinearTilePolicyStripminedThreadContiguous,
    PitchLinearTilePolicyStripminedThreadStrided, PitchLinearWarpRakedThreadMap, PitchLinearWarpStripedThreadMap,
    TransposePitchLinearThreadMap, TransposePitchLinearThreadMap2DThreadTile, TransposePitchLinearThreadMapSimt,
    check_seed003_strips1_claim, make_thread_map, pitch_linear_thread_map_offset, seed003_formula, seed003_get_offset,
    seed003_strips1_difference, seed003_table,
)

ROOT = Path(__file__).resolve().parents[1]
PROOFS = ROOT / "proofs" / "threadmaps"


def _shared() -> Path | None:
    env = os.environ.get("SYMLAYOUT_SHARED")
    for c in ([Path(env)] if env else []) + [ROOT.parent / "shared"]:
        if c.is_dir():
            return c
    return None


SHARED = _shared()

SM80_A_128x128x32 = PitchLinearWarpRakedThreadMap((32, 128), 128, (4, 8), 8)
PR3131 = PitchLinearWarpStripedThreadMap((512, 8), 256, (16, 2), 8)
SEED_16x8 = OffsetThreadMap(seed003_formula(8, 2, 16), 32, 1, 128)
SEED_4STRIP = OffsetThreadMap(seed003_formula(8, 4, 16), 32, 1, 64)


def _st(results):
    return {r.property: r.status for r in results}


# ---------------------------------------------------------------- each property: proved and refuted

@pytest.mark.parametrize("method", ["exhaustive", "z3"])
def test_good_map_proves_everything(method):
    rs = prove_map(SM80_A_128x128x32, type="half_t", align=16, method=method)
    assert [r.property for r in rs] == list(THREADMAP_PROPERTIES)
    assert all(r.status == PROVED for r in rs), [(r.property, r.status, r.detail) for r in rs]
    assert {r.property: r.method for r in rs}["coverage"] == method


@pytest.mark.parametrize("method", ["exhaustive", "z3"])
def test_coverage_refuted(method):
    m = MapModel.of(OffsetThreadMap("t * 2", 4, 1, 8))
    r = coverage(m, method)
    assert r.status == REFUTED
    c, s = r.counterexample.element
    assert s == 0 and c % 2 == 1 and 0 <= c < 8
    if method == "exhaustive":
        assert r.counterexample.element == (1, 0)
        assert "4 of 8 elements" in r.counterexample.message
    # a CUTLASS map with a hole: TilePolicyContiguous with E = 2 and Delta (1,1) skips every 4th element
    r = coverage(MapModel.of(PitchLinearTilePolicyStripminedThreadContiguous((8, 2), 2, 2)), method)
    assert r.status == REFUTED and r.counterexample.element[0] % 4 == 3


@pytest.mark.parametrize("method", ["exhaustive", "z3"])
def test_exactly_once_refuted(method):
    r = exactly_once(MapModel.of(OffsetThreadMap("t % 4", 8, 1, 4)), method)
    assert r.status == REFUTED
    cx = r.counterexample
    assert cx.element[0] == cx.thread % 4 and cx.extra["first_thread"] % 4 == cx.thread % 4
    assert cx.extra["first_thread"] != cx.thread
    # vector accesses overlapping: CUTLASS's TilePolicyStripminedThreadContiguous Delta (1,1) with E = 2
    r = exactly_once(MapModel.of(PitchLinearTilePolicyStripminedThreadContiguous((8, 2), 2, 2)), method)
    assert r.status == REFUTED
    cx = r.counterexample
    assert cx.thread == cx.extra["first_thread"] and cx.value != cx.extra["first_iteration"]
    # overlapping 4-element vectors of different threads
    r = exactly_once(MapModel.of(OffsetThreadMap("t * 2", 4, 1, 16, 4)), method)
    assert r.status == REFUTED


@pytest.mark.parametrize("method", ["exhaustive", "z3"])
def test_in_bounds_seed003_16x8(method):
    r = in_bounds(MapModel.of(SEED_16x8), method)
    assert r.status == REFUTED
    cx = r.counterexample
    assert 16 <= cx.thread < 32 and cx.value == 0
    assert cx.element[0] in set(range(256, 264)) | set(range(272, 280))
    assert cx.element[0] == seed003_get_offset(cx.thread, 8, 2, 16)
    assert f"thread {cx.thread}" in cx.message and f"offset {cx.element[0]}" in cx.message
    assert "128-element tile" in cx.message
    if method == "exhaustive":
        assert (cx.thread, cx.element) == (16, (256, 0))
        assert "16 of 32 element accesses fall outside: offsets 256..263, 272..279" in cx.message


@pytest.mark.parametrize("method", ["exhaustive", "z3"])
def test_in_bounds_overcovering_stripmined(method):
    # conformance p-threadmap-0014: StorageShape exceeds the tile; CUTLASS relies on predicates
    r = in_bounds(MapModel.of(PitchLinearStripminedThreadMap((16, 8), 128, 2)), method)
    assert r.status == REFUTED and r.counterexample.element[1] >= 8


@pytest.mark.parametrize("method", ["exhaustive", "z3"])
def test_alignment_refuted(method):
    m = MapModel.of(OffsetThreadMap("t * 8 + 2", 4, 1, 64, 4), type="half_t", align=16)
    r = alignment(m, method)
    assert r.status == REFUTED and r.counterexample.address_bytes % 8 == 4
    # base alignment weaker than the 16-byte access
    r = alignment(MapModel.of(SM80_A_128x128x32, type="half_t", align=8), method)
    assert r.status == REFUTED and r.counterexample.address_bytes == 8 and "8-byte aligned" in r.counterexample.message
    # a 6-byte "vector" is no CUDA access width
    r = alignment(MapModel.of(OffsetThreadMap("t * 3", 4, 1, 12, 3), type="half_t", align=16), method)
    assert r.status == REFUTED and "power-of-two" in r.counterexample.message
    # float vectors of 4 whose second iteration starts 6 floats further
    r = alignment(MapModel.of(OffsetThreadMap("t * 32 + i * 6", 4, 2, 128, 4), type="float", align=128), method)
    assert r.status == REFUTED and r.counterexample.value == 1 and r.counterexample.address_bytes % 16 == 8
    if method == "exhaustive":
        assert (r.counterexample.thread, r.counterexample.element) == (0, (6, 0))
    # with pitch = the contiguous extent, CUTLASS's maps (Shape::kContiguous % E == 0) are always aligned
    assert alignment(MapModel.of(PitchLinearStripminedThreadMap((16, 4), 4, 4), type="float"), method).status == PROVED


def test_alignment_needs_type():
    r = alignment(MapModel.of(SM80_A_128x128x32))
    assert r.status == ERROR and "type" in r.detail


def test_coalescing():
    r = coalescing(MapModel.of(SEED_4STRIP, type="half_t", align=16))
    assert r.status == REFUTED
    cx = r.counterexample
    assert (cx.extra["warp"], cx.value, cx.extra["sectors"], cx.extra["minimum"]) == (0, 0, 4, 2)
    assert "warp 0, iteration 0" in cx.message and "4 sectors" in cx.message and "minimum is 2" in cx.message
    # the same strips with 4-byte elements fill whole sectors
    assert coalescing(MapModel.of(SEED_4STRIP, type="float")).status == PROVED
    # a strided warp: every lane in its own sector
    r = coalescing(MapModel.of(OffsetThreadMap("t * 16", 64, 1, 1024), type="float"))
    assert r.status == REFUTED and r.counterexample.extra["sectors"] == 32 and r.counterexample.extra["minimum"] == 4
    # second warp, later iteration found
    r = coalescing(MapModel.of(OffsetThreadMap("t + i * 64 + (t // 32) * i * 100", 64, 2, 512), type="float"))
    assert r.status == REFUTED and (r.counterexample.extra["warp"], r.counterexample.value) == (1, 1)
    assert r.counterexample.thread == 32
    # z3 method falls back to exhaustive for coalescing (no Z3 encoding of sector counting)
    r = coalescing(MapModel.of(SEED_4STRIP, type="half_t"), method="z3")
    assert r.status == REFUTED and r.method == "exhaustive" and "exhaustively" in r.detail


def test_pr3131_bug_class():
    rs = _st(prove_map(PR3131, type="half_t", align=16))
    assert rs == {"coverage": PROVED, "exactly_once": REFUTED, "in_bounds": REFUTED,
                  "alignment": PROVED, "coalescing": PROVED}
    assert PR3131.warp_arrangement == (2, 2) and PR3131.warp_count == 8
    r = in_bounds(MapModel.of(PR3131))
    assert r.counterexample.thread == 128 and r.counterexample.element == (0, 8)
    # the same tile with PR #3131's kWarpsContiguous = kWarpCount / kWarpsStrided (see proofs/threadmaps)
    cfg = load_config(PROOFS / "pr3131_fixed_512x8.toml")
    assert all(r.status == PROVED for r in prove_threadmap(cfg, None))


def _conformance_maps():
    if SHARED is None:
        return []
    names = {"pitch_linear_stripmined": "PitchLinearStripminedThreadMap",
             "pitch_linear_warp_raked": "PitchLinearWarpRakedThreadMap",
             "pitch_linear_warp_striped": "PitchLinearWarpStripedThreadMap"}
    out = []
    for line in (SHARED / "conformance" / "public" / "threadmap.jsonl").read_text().splitlines():
        d = json.loads(line)
        a = d["args"]
        pair = lambda s: tuple(int(x) for x in s.strip("()").split(","))  # noqa: E731
        try:
            if d["op"] == "pitch_linear_stripmined":
                out.append((d["id"], make_thread_map(names[d["op"]], pair(a[0]), a[1], a[2])))
            else:
                out.append((d["id"], make_thread_map(names[d["op"]], pair(a[0]), a[1], pair(a[2]), a[3])))
        except TilingError:
            pass
    return out


def test_pr3131_cases_in_conformance():
    maps = dict(_conformance_maps())
    if not maps:
        pytest.skip("shared/ not found")
    striped_bad = sorted(k for k, m in maps.items() if isinstance(m, PitchLinearWarpStripedThreadMap)
                         and in_bounds(MapModel.of(m)).status == REFUTED)
    assert striped_bad == ["p-threadmap-0033", "p-threadmap-0053", "p-threadmap-0145"]
    # warp-raked maps from CUTLASS 4.2 never leave the tile or overlap
    for k, m in maps.items():
        if isinstance(m, PitchLinearWarpRakedThreadMap):
            assert _st(prove_map(m, ["coverage", "exactly_once", "in_bounds"])) == dict.fromkeys(
                ["coverage", "exactly_once", "in_bounds"], PROVED), k


# ---------------------------------------------------------------- timeouts

def test_timeout_is_unknown_never_proved():
    big = MapModel.of(PitchLinearStripminedThreadMap((1024, 1024), 32, 1))
    r = exactly_once(big, "exhaustive", timeout_s=0)
    assert r.status == UNKNOWN and "timed out" in r.detail
    # a non-injective map sends coverage to the quantified query; without time it is UNKNOWN, although
    # enumeration refutes it (so a timeout never turns into either verdict)
    hard = MapModel.of(OffsetThreadMap("(t * 7919 + i * 104729) % 65521", 1024, 64, 65521))
    r = coverage(hard, "z3", timeout_s=0)
    assert r.status == UNKNOWN and "timeout" in r.detail
    assert coverage(hard, "exhaustive").status == REFUTED


# ---------------------------------------------------------------- Z3 agrees with exhaustive

_P2 = [1, 2, 4, 8, 16, 32, 64]
_ARR = [(1, 32), (2, 16), (4, 8), (8, 4), (16, 2), (32, 1)]


def _random_map(r: random.Random):
    kind = r.choice(sorted(THREAD_MAPS))
    shape = (r.choice(_P2), r.choice(_P2))
    T = r.choice([4, 8, 16, 32, 64, 128])
    E = r.choice([1, 2, 4, 8])
    arr = r.choice(_ARR)
    if kind in ("PitchLinearStripminedThreadMap", "PitchLinearTilePolicyStripminedThreadContiguous",
                "PitchLinearTilePolicyStripminedThreadStrided"):
        return make_thread_map(kind, shape, T, E)
    if kind in ("PitchLinearWarpRakedThreadMap", "PitchLinearStridedWarpRakedThreadMap",
                "PitchLinearWarpStripedThreadMap"):
        return make_thread_map(kind, shape, max(T, 32), arr, E)
    if kind == "PitchLinear2DThreadTileStripminedThreadMap":
        return make_thread_map(kind, (shape[0] * 4, shape[1] * 4), T)
    if kind == "TransposePitchLinearThreadMap":
        base = r.choice(["PitchLinearWarpRakedThreadMap", "PitchLinearWarpStripedThreadMap"])
        return make_thread_map(kind, make_thread_map(base, shape, max(T, 32), arr, E), arr)
    if kind == "TransposePitchLinearThreadMapSimt":
        return make_thread_map(kind, make_thread_map("PitchLinearStripminedThreadMap", shape, T, 1))
    if kind == "TransposePitchLinearThreadMap2DThreadTile":
        return make_thread_map(kind, make_thread_map("PitchLinear2DThreadTileStripminedThreadMap",
                                                     (shape[0] * 4, shape[1] * 4), T))
    a, b = r.choice([1, 2, 4, 8]), r.choice([1, 2, 3, 4, 8, 16])
    f = r.choice([f"t % {a} + (t // {a}) * {b} + i * {a * b}", f"t * {b} + i", f"(t * {b}) % {a * 8} + i * {a}",
                  f"t % {a} * {b} + t // {a} + i * 3", f"{b * 4} - t - i"])
    return OffsetThreadMap(f, r.choice([4, 8, 16, 32]), r.choice([1, 2, 4]), r.choice([16, 32, 64, 128, 256]),
                           r.choice([1, 1, 2]))


def _random_maps(n: int, seed: int = 20240607):
    r = random.Random(seed)
    out = []
    while len(out) < n:
        try:
            m = _random_map(r)
        except TilingError:
            continue
        if m.num_accesses * m.elements_per_access <= 1 << 14:
            out.append((m, r.choice(["half_t", "float", "int8_t", "double"]), r.choice([8, 16, 128])))
    return out


RANDOM_MAPS = _random_maps(220)


def test_random_maps_cover_every_kind_and_both_outcomes():
    kinds = {type(m).__name__ for m, _, _ in RANDOM_MAPS}
    assert kinds >= {c.__name__ for c in THREAD_MAPS.values()}


def test_z3_agrees_with_exhaustive_on_random_maps():
    props = ["coverage", "exactly_once", "in_bounds", "alignment"]
    seen = set()
    for m, ty, al in RANDOM_MAPS:
        ex = prove_map(m, props, type=ty, align=al, method="exhaustive")
        zz = prove_map(m, props, type=ty, align=al, method="z3", timeout_s=30)
        for a, b in zip(ex, zz):
            assert a.method == "exhaustive" and b.method == "z3"
            assert a.status == b.status, (str(m), a.property, a.status, b.status, b.detail)
            seen.add((a.property, a.status))
            if b.status == REFUTED and a.property != "coverage":
                assert b.counterexample.thread is not None and b.counterexample.element is not None
            if a.status == "vacuous":           # maps with no access at all: nothing to prove, never PROVED
                assert a.checked == 0 == b.checked and m.num_accesses == 0
    assert seen >= {(p, s) for p in props for s in (PROVED, REFUTED)}
    assert seen - {(p, s) for p in props for s in (PROVED, REFUTED)} <= {(p, "vacuous") for p in props}


# ---------------------------------------------------------------- parametric formulas

def test_parametric_offset_formula():
    rs = prove_offset_formula("t % p + (t // p) * p + i * p * q", "p * q", 2, "2 * p * q",
                              {"p": (1, 64), "q": {"min": 1, "max": 16}},
                              properties=["coverage", "exactly_once", "in_bounds"])
    assert _st(rs) == {"coverage": PROVED, "exactly_once": PROVED, "in_bounds": PROVED}
    assert all(r.method == "z3" for r in rs)
    # seed 003's formula with symbolic Pitch: leaves a tile of Pitch * Strips rows of kRow = 16 as soon as
    # there is more than one strip group
    rs = prove_offset_formula("t % p + ((t // p) % 2) * 16 + ((t // p) // 2) * (p * 2 * 16)", 32, 1, 128,
                              {"p": (1, 16)}, properties=["in_bounds", "exactly_once"])
    st = _st(rs)
    assert st["in_bounds"] == REFUTED
    p = rs[0].counterexample.params["p"]
    assert "p = " in rs[0].counterexample.message and 1 <= p <= 16
    m = OffsetThreadMap(seed003_formula(p, 2, 16), 32, 1, 128)
    assert in_bounds(MapModel.of(m)).status == REFUTED
    # multiple_of is honoured; alignment with a symbolic stride
    rs = prove_offset_formula("t * k", 32, 1, "32 * k", {"k": (8, 64, 8)}, elements_per_access=8,
                              type="half_t", align=16, properties=["alignment", "in_bounds", "coalescing"])
    assert _st(rs) == {"alignment": PROVED, "in_bounds": PROVED, "coalescing": REFUTED}
    assert rs[2].method == "enumeration" and rs[2].counterexample.params["k"] >= 16
    rs = prove_offset_formula("t * k", 32, 1, "32 * k", {"k": (4, 64)}, elements_per_access=8,
                              type="half_t", align=16, properties=["alignment"])
    assert rs[0].status == REFUTED and rs[0].counterexample.params["k"] % 8 != 0


def test_parametric_division_by_zero_is_an_error():
    rs = prove_offset_formula("t // (p - 2)", 4, 1, 64, {"p": (1, 8)}, properties=["in_bounds"])
    assert rs[0].status == ERROR and "p = 2" in rs[0].detail


# ---------------------------------------------------------------- the map as a layout

def test_layout_stripmined_shape():
    m = PitchLinearStripminedThreadMap((64, 8), 32, 8)
    L = threadmap_layout(m)
    assert str(L) == "((8,4),(1,2),8):((8,64),(1,256),1)"
    m = PitchLinearStripminedThreadMap((256, 2), 8, 4)       # Threads < Cv
    assert str(threadmap_layout(m)) == "(8,(8,2),4):(4,(32,256),1)"


def test_layout_warp_raked_and_2d():
    assert str(threadmap_layout(SM80_A_128x128x32)) == "(((4,8),(1,4)),(1,4),8):(((8,32),(32,1024)),(32,256),1)"
    m = PitchLinear2DThreadTileStripminedThreadMap((64, 16), 32)
    assert str(threadmap_layout(m)) == "((16,2),(1,2),(4,4)):((4,256),(64,512),(1,64))"


def _check_layout(m):
    L = threadmap_layout(m)
    P = m.shape[0]
    vc, vs = m.thread_access_shape
    assert L.size() == m.threads * m.iterations[0] * m.iterations[1] * vc * vs
    for t, i, (c, s) in m.accesses():
        e = 0
        for es in range(vs):
            for ec in range(vc):
                assert L(t, i, e) == c + ec + (s + es) * P
                e += 1
    return L


def test_layout_matches_accesses_on_random_maps():
    n_ok = 0
    for m, _, _ in RANDOM_MAPS:
        try:
            _check_layout(m)
            n_ok += 1
        except TilingError:
            assert isinstance(m, OffsetThreadMap)     # only custom formulas may fail to be layouts
    assert n_ok >= 200


def test_layout_matches_accesses_on_conformance_maps():
    maps = _conformance_maps()
    if not maps:
        pytest.skip("shared/ not found")
    for _, m in maps:
        _check_layout(m)


def test_layout_of_all_kinds():
    wr = PitchLinearWarpRakedThreadMap((64, 8), 64, (8, 4), 8)
    for m in (PitchLinearTilePolicyStripminedThreadContiguous((256, 4), 32, 2),
              PitchLinearTilePolicyStripminedThreadStrided((8, 64), 32, 2),
              PitchLinearStridedWarpRakedThreadMap((128, 32), 256, (4, 8), 8),
              PitchLinearWarpStripedThreadMap((256, 8), 128, (8, 4), 8), PR3131,
              TransposePitchLinearThreadMap(wr, (8, 4)),
              TransposePitchLinearThreadMapSimt(PitchLinearStripminedThreadMap((8, 64), 64)),
              TransposePitchLinearThreadMap2DThreadTile(PitchLinear2DThreadTileStripminedThreadMap((64, 16), 32)),
              SEED_16x8, SEED_4STRIP):
        _check_layout(m)
    assert str(threadmap_layout(SEED_16x8)) == "((8,2,2),1,1):((1,16,256),0,1)"


def test_layout_refuses_non_layouts():
    with pytest.raises(TilingError, match="not a layout"):
        threadmap_layout(OffsetThreadMap("t * 3 % 16 + i * 2", 8, 2, 16))
    with pytest.raises(TilingError, match="not a layout"):
        threadmap_layout(OffsetThreadMap("t + 1", 8, 1, 16))


# ---------------------------------------------------------------- seed 003

def test_seed003_four_strip_table():
    rows = seed003_table(8, 4, 16, 32)
    offs = [r[4] for r in rows]
    assert offs[0:8] == list(range(0, 8))       # row 0, columns 0..7
    assert offs[8:16] == list(range(16, 24))    # row 1
    assert offs[16:24] == list(range(32, 40))   # row 2
    assert offs[24:32] == list(range(48, 56))   # row 3
    assert {(r[5], r[6]) for r in rows} == {(row, col) for row in range(4) for col in range(8)}
    # 64 threads: threads 32..63 have strip_offset 1 and move by 8 * 4 * 16 = 512
    assert [seed003_get_offset(t, 8, 4, 16) - seed003_get_offset(t - 32, 8, 4, 16) for t in range(32, 64)] == [512] * 32
    assert all(r[3] == 0 for r in rows)


def test_seed003_16x8_table():
    offs = [seed003_get_offset(t, 8, 2, 16) for t in range(32)]
    assert offs == list(range(0, 8)) + list(range(16, 24)) + list(range(256, 264)) + list(range(272, 280))
    assert [o for o in offs if o >= 128] == list(range(256, 264)) + list(range(272, 280))
    m = OffsetThreadMap(seed003_formula(8, 2, 16), 32, 1, 128)
    assert [m.offset(t, 0) for t in range(32)] == offs


def test_seed003_strips1_claim_is_false():
    chk = check_seed003_strips1_claim(8, 16)
    assert not chk.holds
    assert (chk.counterexample, chk.seed_value, chk.plain_value) == (8, 128, 16)
    assert seed003_get_offset(8, 8, 1, 16) == 128 and pitch_linear_thread_map_offset(8, 8, 16) == 16
    assert check_seed003_strips1_claim(1, 16).holds          # Pitch = 1: equal as functions
    assert check_seed003_strips1_claim(8, 16, threads=8).holds  # and for the first Pitch threads
    assert str(seed003_strips1_difference()) == "k*(P - 1)*floor(t/P)"
    # in configuration form: the article's Strips = 1 formula leaves the 64 elements PitchLinearThreadMap stays in
    a = prove_threadmap(load_config(PROOFS / "seed_003_strips1_article_formula.toml"), None)
    b = prove_threadmap(load_config(PROOFS / "seed_003_strips1_pitchlinear_formula.toml"), None)
    assert _st(a) == {"in_bounds": REFUTED, "exactly_once": PROVED}
    assert a[0].counterexample.thread == 8 and a[0].counterexample.element == (128, 0)
    assert _st(b) == {"in_bounds": PROVED, "exactly_once": PROVED}


# ---------------------------------------------------------------- proofs/threadmaps and the engine

EXPECTED_FILES = {
    "sm80_f16_128x128x32_AB_kmajor.toml": set(),
    "sm80_f16_128x128x32_AB_mnmajor.toml": set(),
    "sm80_f16_128x256x64_A_kmajor.toml": set(),
    "sm80_f16_128x256x64_B_kmajor.toml": set(),
    "sm80_f16_128x256x64_A_mmajor.toml": set(),
    "sm80_f16_128x256x64_B_nmajor.toml": set(),
    "seed_003_four_strips.toml": {"coverage", "coalescing"},
    "seed_003_a_tile_16x8.toml": {"in_bounds", "coverage", "coalescing"},
    "seed_003_strips1_article_formula.toml": {"in_bounds"},
    "seed_003_strips1_pitchlinear_formula.toml": set(),
    "pr3131_warp_striped_512x8.toml": {"exactly_once", "in_bounds"},
    "pr3131_warp_striped_256x4.toml": {"in_bounds"},
    "pr3131_fixed_512x8.toml": set(),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_FILES))
def test_proof_files(name):
    path = PROOFS / name
    text = path.read_text()
    assert text.startswith("# Source:"), "each file names its source"
    cfg = load_config(path)
    assert cfg.expect.refuted == frozenset(EXPECTED_FILES[name])
    for method in ("auto", "z3"):
        rs = prove_threadmap(cfg, None, method=method, timeout_s=60)
        assert rs and all(r.status == r.expected for r in rs), [(r.property, r.status, r.detail) for r in rs]
        assert {r.property for r in rs if r.status == REFUTED} == EXPECTED_FILES[name]
    if "sm80" in name:
        assert {r.property for r in rs} == set(THREADMAP_PROPERTIES)


def test_proof_dir_complete():
    assert {p.name for p in PROOFS.glob("*.toml")} == set(EXPECTED_FILES)


def test_sm80_files_match_default_mma_core():
    # DefaultMmaCore (sm80, TensorOp, 128-bit accesses): row-major A -> PitchLinearShape<kK, kM>,
    # WarpThreadArrangement <kK/8, 32/(kK/8)>; column-major A -> <kM, kK>, <min(kM/8, 8), 32/that>
    def expect(contig, strided, threads, k_major):
        wc = contig // 8 if k_major else min(contig // 8, 8)
        return {"shape": (contig, strided), "threads": threads, "warp_arrangement": (wc, 32 // wc),
                "elements_per_access": 8, "type": "half_t"}
    want = {"sm80_f16_128x128x32_AB_kmajor.toml": expect(32, 128, 128, True),
            "sm80_f16_128x128x32_AB_mnmajor.toml": expect(128, 32, 128, False),
            "sm80_f16_128x256x64_A_kmajor.toml": expect(64, 128, 256, True),
            "sm80_f16_128x256x64_B_kmajor.toml": expect(64, 256, 256, True),
            "sm80_f16_128x256x64_A_mmajor.toml": expect(128, 64, 256, False),
            "sm80_f16_128x256x64_B_nmajor.toml": expect(256, 64, 256, False)}
    for name, w in want.items():
        tm = load_config(PROOFS / name).threadmap
        assert tm.kind == "PitchLinearWarpRakedThreadMap"
        got = {k: getattr(tm, k) for k in w}
        got["shape"], got["warp_arrangement"] = tuple(got["shape"]), tuple(got["warp_arrangement"])
        assert got == w, name


def test_cli_prove_threadmaps_exit_0(capsys):
    from symlayout.cli import main
    assert main(["prove", str(PROOFS), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["errors"] == 0 and doc["summary"]["unknown"] == 0
    entry = next(c for c in doc["configs"] if c["path"].endswith("seed_003_a_tile_16x8.toml"))
    r = next(r for r in entry["results"] if r["property"] == "in_bounds")
    assert r["status"] == "refuted" and r["expected"] == "refuted" and "operand" not in r
    cx = r["counterexample"]
    assert (cx["thread"], cx["value"], cx["element"]) == (16, 0, [256, 0]) and "offset 256" in cx["message"]
    assert cx["address_bytes"] == 512


def test_prove_threadmap_property_selection():
    cfg = loads_config('[threadmap]\nkind = "offset"\nthreads = 4\noffset = "t"\nextent = 4\n')
    # default: no type -> alignment and coalescing do not apply; TiledMMA properties skipped
    assert [r.property for r in prove_threadmap(cfg, None)] == ["coverage", "exactly_once", "in_bounds"]
    assert [r.property for r in prove_threadmap(cfg, ["in_bounds", "bank_conflicts"])] == ["in_bounds"]
    cfg = loads_config('[threadmap]\nkind = "offset"\nthreads = 4\noffset = "t"\nextent = 4\n'
                       '[prove]\nproperties = ["alignment", "bank_conflicts"]\n')
    rs = prove_threadmap(cfg, None)
    assert [(r.property, r.status) for r in rs] == [("alignment", ERROR), ("bank_conflicts", ERROR)]


def test_engine_sets_expectations():
    from symlayout.prove.engine import prove_config
    rep = prove_config(load_config(PROOFS / "pr3131_warp_striped_512x8.toml"))
    assert rep.ok and rep.error is None
    assert {r.property: r.expected for r in rep.results}["in_bounds"] == REFUTED


# ---------------------------------------------------------------- show

def test_show_text_grid():
    text, _ = show_map(PitchLinearWarpRakedThreadMap((16, 16), 32, (2, 16), 8))
    lines = text.splitlines()
    assert lines[0] == ("PitchLinearWarpRakedThreadMap<(16,16),32,(2,16),8>: thread over the 16x16 tile "
                        "(c across, s down)")
    assert lines[1].split() == ["0-7", "8-15"]
    assert lines[2] == "     +------+------+"
    assert lines[3] == "   0 |    0 |    1 |"
    assert lines[5] == "   1 |    2 |    3 |"
    assert lines[33] == "  15 |   30 |   31 |"
    assert len(lines) == 35
    text, _ = show_map(PitchLinearWarpRakedThreadMap((16, 32), 32, (2, 16), 8))
    assert "thread.iteration" in text.splitlines()[0]
    assert text.splitlines()[3] == "   0 |  0.0 |  1.0 |" and text.splitlines()[35] == "  16 |  0.1 |  1.1 |"


def test_show_marks_duplicates_holes_and_outside():
    text, svg = show_map(PR3131)
    assert "! 2048 elements accessed more than once" in text
    assert "element accesses outside the tile (threads 128..255): offsets 4096..6143" in text
    text, _ = show_map(SEED_16x8)
    assert "0 |  0 |  1 |" in text and ". 112 elements never accessed" in text
    assert "offsets 256..263, 272..279" in text


def test_show_svg_is_wellformed_and_coloured_by_thread():
    _, svg = show_map(PitchLinearStripminedThreadMap((8, 2), 4, 2))
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    rects = root.findall(f"{ns}rect")
    assert len(rects) == 8                       # 4 vector columns x 2 rows
    fills = [r.get("fill") for r in rects]
    assert fills[:4] == fills[4:] and len(set(fills[:4])) == 4    # one colour per thread
    assert [r.find(f"{ns}title").text for r in rects][:2] == ["thread 0 iteration 0", "thread 1 iteration 0"]


def test_show_threadmap_cli(tmp_path, capsys):
    from symlayout.cli import main
    out = tmp_path / "m.svg"
    assert main(["show", str(PROOFS / "seed_003_four_strips.toml"), "--svg", str(out)]) == 0
    text = capsys.readouterr().out
    assert "seed 003: the article's 4-strip example" in text
    assert "16 |  8 |  9 | 10 |" in text
    ET.fromstring(out.read_text())
    cfg = load_config(PROOFS / "seed_003_four_strips.toml")
    assert show_threadmap(cfg)[0] == text.rstrip("\n")
