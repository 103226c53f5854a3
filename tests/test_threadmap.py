"""Tests of symlayout.threadmap.maps (CUTLASS 2.x pitch-linear thread maps).

Sources of the expected values:
* shared/conformance/public/threadmap.jsonl (CUTLASS compiled on the host);
* shared/reference/cute-semantics.md section 8 (host-compiled examples);
* shared/seeds/003_*.txt (the article's get_offset formula and its tables).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import z3

import symlayout.conformance.threadmap as ops_mod
from symlayout.errors import ConfigError, NotationError, SymlayoutError, TilingError
from symlayout.threadmap.maps import (
    OffsetThreadMap,
    PitchLinear2DThreadTileStripminedThreadMap,
    PitchLinearStridedWarpRakedThreadMap,
    PitchLinearStripminedThreadMap,
    PitchLinearTilePolicyStripminedThreadContiguous,
    PitchLinearTilePolicyStripminedThreadStrided,
    PitchLinearWarpRakedThreadMap,
    PitchLinearWarpStripedThreadMap,
    TransposePitchLinearThreadMap,
    TransposePitchLinearThreadMap2DThreadTile,
    TransposePitchLinearThreadMapSimt,
    check_seed003_strips1_claim,
    make_thread_map,
    pitch_linear_thread_map_offset,
    seed003_get_offset,
    seed003_strips1_difference,
)


def _shared() -> Path | None:
    env = os.environ.get("SYMLAYOUT_SHARED")
    cands = [Path(env)] if env else []
    cands.append(Path(__file__).resolve().parents[2] / "shared")
    for c in cands:
        if c.is_dir():
            return c
    return None


SHARED = _shared()
CASES_FILE = SHARED / "conformance" / "public" / "threadmap.jsonl" if SHARED else None


def _load_cases() -> list:
    if CASES_FILE is None or not CASES_FILE.is_file():
        return [pytest.param(None, marks=pytest.mark.skip(
            reason="shared/conformance/public/threadmap.jsonl not found "
                   "(set SYMLAYOUT_SHARED to the shared/ directory)"), id="no-shared")]
    out = []
    with CASES_FILE.open() as f:
        for line in f:
            if line.strip():
                case = json.loads(line)
                out.append(pytest.param(case, id=case["id"]))
    return out


CASES = _load_cases()


def _fmt(pair) -> str:
    return "(" + ",".join(str(v) for v in pair) + ")"


# ---------------------------------------------------------------- conformance

def test_public_case_count():
    if CASES_FILE is None or not CASES_FILE.is_file():
        pytest.skip("shared/ not found (set SYMLAYOUT_SHARED)")
    assert len(CASES) == 142


@pytest.mark.parametrize("case", CASES)
def test_conformance_case(case):
    got = ops_mod.OPS[case["op"]](case["args"])
    exp = case["expect"]
    assert _fmt(got["Iterations"]) == exp["Iterations"]
    assert _fmt(got["Delta"]) == exp["Delta"]
    assert [list(o) for o in got["initial_offset"]] == exp["initial_offset"]
    assert isinstance(got["Iterations"], tuple) and isinstance(got["Delta"], tuple)


def test_ops_table_and_parse_pair():
    assert set(ops_mod.OPS) == {"pitch_linear_stripmined", "pitch_linear_warp_raked",
                                "pitch_linear_warp_striped"}
    assert ops_mod.parse_pair(" ( 4 , -2 ) ") == (4, -2)
    for bad in ("(4)", "4,2", "(a,2)", "((4,2),1)", None):
        with pytest.raises(NotationError):
            ops_mod.parse_pair(bad)
    with pytest.raises(TilingError):
        ops_mod.OPS["pitch_linear_stripmined"](["(64,8)", 24, 1])


# ---------------------------------------------------------------- section 8 examples

def _check(m, iterations, delta, offsets):
    assert m.iterations == iterations
    assert m.delta == delta
    for t, off in offsets.items():
        assert m.initial_offset(t) == off, (str(m), t)


# 8.1 PitchLinearStripminedThreadMap
def test_8_1_stripmined():
    m = PitchLinearStripminedThreadMap((64, 8), 32, 4)
    _check(m, (1, 4), (1, 2), {0: (0, 0), 1: (4, 0), 15: (60, 0), 16: (0, 1), 31: (60, 1)})
    assert m.storage_shape == (64, 8)
    m = PitchLinearStripminedThreadMap((64, 8), 32, 1)
    _check(m, (2, 8), (32, 1), {t: (t, 0) for t in range(32)})
    _check(PitchLinearStripminedThreadMap((8, 64), 32, 1), (1, 16), (1, 4),
           {8: (0, 1), 15: (7, 1), 31: (7, 3)})
    _check(PitchLinearStripminedThreadMap((128, 8), 256, 1), (1, 4), (1, 2),
           {128: (0, 1), 255: (127, 1)})
    m = PitchLinearStripminedThreadMap((32, 6), 64, 1)  # the ceiling
    _check(m, (1, 3), (1, 2), {32: (0, 1)})


def test_8_1_stripmined_overcover_storage_shape():
    m = PitchLinearStripminedThreadMap((32, 5), 64)
    assert m.iterations == (1, 3) and m.storage_shape == (32, 6)
    assert max(s for _, _, (_, s) in m.accesses()) == 5  # one row past the tile


# 8.2 tile policies
def test_8_2_tile_policies():
    m = PitchLinearTilePolicyStripminedThreadContiguous((256, 4), 32, 2)
    _check(m, (4, 4), (1, 1), {t: (8 * t, 0) for t in range(32)})
    m = PitchLinearTilePolicyStripminedThreadStrided((8, 64), 32, 2)
    _check(m, (4, 2), (1, 1), {t: (0, 2 * t) for t in range(32)})
    with pytest.raises(TilingError, match=r"Shape::kContiguous % \(Threads \* ElementsPerAccess\)"):
        PitchLinearTilePolicyStripminedThreadContiguous((96, 4), 32, 2)
    with pytest.raises(TilingError, match=r"Shape::kStrided % Threads == 0"):
        PitchLinearTilePolicyStripminedThreadStrided((8, 48), 32, 2)


# 8.3 PitchLinearWarpRakedThreadMap
@pytest.mark.parametrize("params, wai, warps, iterations, delta, offsets", [
    (((64, 32), 128, (8, 4), 8), (1, 8), (1, 4), (1, 2), (64, 4),
     {1: (8, 0), 8: (0, 1), 31: (56, 3), 32: (0, 8), 64: (0, 16), 127: (56, 27)}),
    (((128, 32), 256, (4, 8), 8), (4, 4), (2, 4), (2, 1), (32, 8),
     {4: (0, 1), 32: (64, 0), 64: (0, 8), 96: (64, 8), 255: (88, 31)}),
    (((256, 8), 128, (32, 1), 4), (2, 8), (1, 4), (2, 2), (128, 1),
     {31: (124, 0), 32: (0, 2), 127: (124, 6)}),
    (((256, 4), 128, (8, 4), 8), (4, 1), (4, 1), (1, 1), (64, 4),
     {32: (64, 0), 64: (128, 0), 127: (248, 3)}),
])
def test_8_3_warp_raked(params, wai, warps, iterations, delta, offsets):
    m = PitchLinearWarpRakedThreadMap(*params)
    assert m.warp_access_iterations == wai
    assert m.warp_arrangement == warps
    _check(m, iterations, delta, offsets)


def test_8_3_warp_raked_does_not_compile():
    with pytest.raises(TilingError) as ei:
        PitchLinearWarpRakedThreadMap((64, 4), 128, (8, 4), 8)
    msg = str(ei.value)
    assert msg.startswith("PitchLinearWarpRakedThreadMap<") and "Iterations::kCount != 0" in msg
    assert "\n" not in msg


def test_warp_raked_static_asserts():
    with pytest.raises(TilingError, match=r"Shape::kContiguous % kElementsPerAccess"):
        PitchLinearWarpRakedThreadMap((60, 32), 128, (8, 4), 8)
    with pytest.raises(TilingError, match=r"ShapeInAccesses::kContiguous % WarpThreadArrangement"):
        PitchLinearWarpRakedThreadMap((32, 32), 128, (8, 4), 8)
    with pytest.raises(TilingError, match=r"ShapeInAccesses::kStrided % WarpThreadArrangement"):
        PitchLinearWarpRakedThreadMap((64, 6), 128, (8, 4), 8)
    # fewer threads than one warp: kWarpCount = 0 divides by zero
    with pytest.raises(TilingError, match="division by zero"):
        PitchLinearWarpRakedThreadMap((64, 8), 16, (8, 4), 8)


# 8.4 PitchLinearStridedWarpRakedThreadMap
def test_8_4_strided_warp_raked_equals_raked_when_wai_c_is_1():
    a = PitchLinearStridedWarpRakedThreadMap((64, 32), 128, (8, 4), 8)
    b = PitchLinearWarpRakedThreadMap((64, 32), 128, (8, 4), 8)
    assert (a.iterations, a.delta, a.initial_offsets()) == (b.iterations, b.delta, b.initial_offsets())


def test_8_4_strided_warp_raked_splits_contiguous_first():
    m = PitchLinearStridedWarpRakedThreadMap((128, 32), 256, (4, 8), 8)
    # WAI = (4,4), 8 warps: kWarpsContiguous = 4, kWarpsStrided = 2
    assert m.warp_arrangement == (4, 2)
    _check(m, (1, 2), (32, 8), {32: (32, 0), 128: (0, 16), 255: (120, 23)})


# 8.5 PitchLinearWarpStripedThreadMap
@pytest.mark.parametrize("params, warps, iterations, delta, offsets", [
    (((64, 32), 128, (8, 4), 8), (1, 4), (1, 2), (64, 16),
     {32: (0, 4), 64: (0, 8), 96: (0, 12), 127: (56, 15)}),
    (((128, 64), 256, (8, 4), 8), (1, 8), (2, 2), (64, 32), {128: (0, 16), 255: (56, 31)}),
    (((256, 8), 128, (8, 4), 8), (2, 2), (2, 1), (64, 8), {32: (128, 0), 64: (0, 4), 96: (128, 4)}),
])
def test_8_5_warp_striped(params, warps, iterations, delta, offsets):
    m = PitchLinearWarpStripedThreadMap(*params)
    assert m.warp_arrangement == warps
    _check(m, iterations, delta, offsets)


def test_8_5_warp_striped_divides_by_zero():
    with pytest.raises(TilingError, match="does not compile: division by zero"):
        PitchLinearWarpStripedThreadMap((64, 4), 128, (8, 4), 8)


# 8.6 transposed maps
def test_8_6_transpose_simt():
    base = PitchLinearStripminedThreadMap((8, 64), 64, 1)
    _check(base, (1, 8), (1, 8), {})
    m = TransposePitchLinearThreadMapSimt(base)
    _check(m, (8, 1), (8, 1), {1: (0, 1), 8: (1, 0), 63: (7, 7)})
    assert m.shape == (64, 8) and m.cutlass_shape == (8, 64)


def test_8_6_transpose_warp_raked():
    wr = PitchLinearWarpRakedThreadMap((64, 8), 64, (8, 4), 8)
    _check(wr, (1, 1), (64, 4), {32: (0, 4)})
    assert wr.warp_arrangement == (1, 2)
    m = TransposePitchLinearThreadMap(wr, (8, 4))
    assert m.warp_arrangement == (2, 1)
    _check(m, (1, 1), (64, 4), {32: (64, 0), 63: (120, 3)})


def test_8_6_2d_thread_tile_and_transpose():
    m = PitchLinear2DThreadTileStripminedThreadMap((64, 16), 32)
    _check(m, (1, 2), (64, 8), {16: (0, 4)})
    assert m.thread_access_shape == (4, 4) and m.elements_per_access == 4
    t = TransposePitchLinearThreadMap2DThreadTile(m)
    _check(t, (2, 1), (8, 64), {16: (4, 0)})


def test_transpose_static_asserts():
    with pytest.raises(TilingError, match=r"kElementsPerAccess == 1"):
        TransposePitchLinearThreadMapSimt(PitchLinearStripminedThreadMap((64, 8), 32, 4))
    with pytest.raises(TilingError, match=r"Iterations::kStrided == 1"):
        TransposePitchLinearThreadMapSimt(PitchLinearStripminedThreadMap((64, 8), 32, 1))
    with pytest.raises(TilingError, match=r"Iterations::kContiguous == 1"):
        TransposePitchLinearThreadMap(PitchLinearWarpRakedThreadMap((64, 32), 128, (8, 4), 8), (8, 4))
    with pytest.raises(TilingError, match="no Detail::kWarpsStrided"):
        TransposePitchLinearThreadMap(PitchLinearStripminedThreadMap((64, 8), 32, 4), (8, 4))
    with pytest.raises(TilingError, match="no Shape/ThreadAccessShape"):
        TransposePitchLinearThreadMapSimt(PitchLinearTilePolicyStripminedThreadStrided((8, 64), 32, 1))
    with pytest.raises(TilingError, match=r"kElementsPerAccess > 1"):
        TransposePitchLinearThreadMap2DThreadTile(PitchLinearStripminedThreadMap((8, 64), 64, 1))
    with pytest.raises(TilingError, match="must be a CUTLASS thread map"):
        TransposePitchLinearThreadMapSimt("PitchLinearStripminedThreadMap")  # type: ignore[arg-type]


def test_2d_thread_tile_static_asserts():
    with pytest.raises(TilingError, match="only ThreadTileShape PitchLinearShape<4,4>"):
        PitchLinear2DThreadTileStripminedThreadMap((64, 16), 32, (2, 2))
    with pytest.raises(TilingError, match=r"\(Shape::kContiguous \* Shape::kStrided\) %"):
        PitchLinear2DThreadTileStripminedThreadMap((64, 4), 32)
    with pytest.raises(TilingError, match=r"ShapeVec::kContiguous % Threads == 0"):
        PitchLinear2DThreadTileStripminedThreadMap((48, 32), 8)


def test_transpose_warp_raked_shape_is_transposed_region():
    # SM80 interleaved A: WarpRaked<(M*IK, K/IK)=(4096,2), 256, (32,1), 16>,
    # transposed with (IK/E, 32/(IK/E)) = (2,16) into the (K, M) = (64, 128) tile
    base = PitchLinearWarpRakedThreadMap((4096, 2), 256, (32, 1), 16)
    m = TransposePitchLinearThreadMap(base, (2, 16))
    assert m.shape == (64, 128)
    cs = {(c, s) for _, _, (c, s) in m.accesses()}
    assert max(c for c, _ in cs) < 64 and max(s for _, s in cs) < 128
    # every 16-element vector of the 64x128 tile is accessed exactly once
    assert sorted(cs) == sorted((c, s) for s in range(128) for c in range(0, 64, 16))


# ---------------------------------------------------------------- common interface

def _all_maps():
    wr = PitchLinearWarpRakedThreadMap((64, 8), 64, (8, 4), 8)
    tile2d = PitchLinear2DThreadTileStripminedThreadMap((64, 16), 32)
    return [
        PitchLinearStripminedThreadMap((64, 8), 32, 4),
        PitchLinearStripminedThreadMap((64, 8), 32, 1),
        PitchLinearStripminedThreadMap((32, 5), 64, 1),
        PitchLinearTilePolicyStripminedThreadContiguous((256, 4), 32, 2),
        PitchLinearTilePolicyStripminedThreadStrided((8, 64), 32, 2),
        PitchLinearWarpRakedThreadMap((128, 32), 256, (4, 8), 8),
        PitchLinearStridedWarpRakedThreadMap((128, 32), 256, (4, 8), 8),
        PitchLinearWarpStripedThreadMap((256, 8), 128, (8, 4), 8),
        TransposePitchLinearThreadMap(wr, (8, 4)),
        TransposePitchLinearThreadMapSimt(PitchLinearStripminedThreadMap((8, 64), 64, 1)),
        tile2d,
        TransposePitchLinearThreadMap2DThreadTile(tile2d),
        OffsetThreadMap("t % 8 + ((t // 8) % 2) * 16 + (t // 16) * 256 + i * 32", 32, 2, 512),
    ]


@pytest.mark.parametrize("m", _all_maps(), ids=str)
def test_accesses_order_and_consistency(m):
    acc = list(m.accesses())
    ic, is_ = m.iterations
    assert len(acc) == m.num_accesses == m.threads * ic * is_
    assert [a[0] for a in acc] == [t for t in range(m.threads) for _ in range(ic * is_)]
    assert [a[1] for a in acc] == list(range(ic * is_)) * m.threads
    for t, idx, (c, s) in acc:
        assert type(c) is int and type(s) is int
        if m.delta is not None:
            c0, s0 = m.initial_offset(t)
            ci, si = idx % ic, idx // ic     # contiguous fastest
            assert (c, s) == (c0 + ci * m.delta[0], s0 + si * m.delta[1])
        if idx == 0:
            assert (c, s) == m.initial_offset(t)
    for pitch in (1, 64, 1000):
        assert m.element_offsets(pitch) == [c + s * pitch for _, _, (c, s) in acc]
    # the symbolic form agrees with the enumeration
    ce, se = m.offset_exprs()
    fc, fs = ce.compile("t", "i"), se.compile("t", "i")
    assert [(fc(t, i), fs(t, i)) for t, i, _ in acc] == [cs for _, _, cs in acc]
    eo = m.element_offset_expr(64).compile("t", "i")
    assert [eo(t, i) for t, i, _ in acc] == m.element_offsets(64)
    assert m.shape[0] > 0 and m.shape[1] > 0
    assert len(m.thread_access_shape) == 2


def test_offset_exprs_translate_to_z3():
    # prove with Z3, for all threads, that WarpRaked<(64,32),128,(8,4),8> stays in its tile
    m = PitchLinearWarpRakedThreadMap((64, 32), 128, (8, 4), 8)
    ce, se = m.offset_exprs()
    t, i = z3.Ints("t i")
    zc, zs = ce.to_z3({"t": t, "i": i}), se.to_z3({"t": t, "i": i})
    s = z3.Solver()
    s.add(t >= 0, t < m.threads, i >= 0, i < m.iterations[0] * m.iterations[1])
    s.add(z3.Or(zc < 0, zc + m.elements_per_access > m.shape[0], zs < 0, zs >= m.shape[1]))
    assert s.check() == z3.unsat


def test_interface_errors():
    m = PitchLinearStripminedThreadMap((64, 8), 32, 4)
    for bad in (-1, 32, 1.5, True):
        with pytest.raises(TilingError, match="out of range"):
            m.initial_offset(bad)
    for bad in (0, -8, "64"):
        with pytest.raises(TilingError, match="pitch"):
            m.element_offsets(bad)
    with pytest.raises(TilingError, match="threads must be positive"):
        PitchLinearStripminedThreadMap((64, 8), 0)
    with pytest.raises(TilingError, match="must be an integer"):
        PitchLinearStripminedThreadMap((64, 8), "32")
    with pytest.raises(TilingError, match="pair"):
        PitchLinearStripminedThreadMap((64, 8, 1), 32)
    with pytest.raises(TilingError, match="shape.strided must be positive"):
        PitchLinearWarpRakedThreadMap((64, 0), 32, (8, 4))


def test_make_thread_map():
    m = make_thread_map("PitchLinearStripminedThreadMap", (64, 8), 32, elements_per_access=8)
    assert m.iterations == (1, 2)
    assert isinstance(make_thread_map("offset", "t", 32, 1, 32), OffsetThreadMap)
    with pytest.raises(ConfigError, match="did you mean 'PitchLinearWarpRakedThreadMap'"):
        make_thread_map("PitchLinearWarpRakedThreadmap", (64, 8), 32, (8, 4))
    with pytest.raises(ConfigError, match="bad parameters"):
        make_thread_map("PitchLinearStripminedThreadMap", (64, 8), 32, bogus=1)


# ---------------------------------------------------------------- custom offset maps

def test_offset_map_spec_example():
    m = OffsetThreadMap("t % 8 + ((t // 8) % 2) * 16 + (t // 16) * 256", threads=32,
                        iterations=1, extent=128, elements_per_access=1)
    offs = m.element_offsets(pitch=128)
    assert offs[:8] == list(range(8)) and offs[8:16] == list(range(16, 24))
    assert offs[16:] == list(range(256, 264)) + list(range(272, 280))
    assert m.shape == (128, 1) and m.delta is None and m.extent == 128
    # half the threads fall outside the 128-element tile (the in_bounds prover's job to report)
    assert sum(o >= 128 for o in offs) == 16


def test_offset_map_errors():
    with pytest.raises(NotationError, match="unknown variable 'x'"):
        OffsetThreadMap("x + 1", 32, 1, 32)
    with pytest.raises(NotationError, match="column"):
        OffsetThreadMap("t.__class__", 32, 1, 32)
    with pytest.raises(TilingError, match="division by zero"):
        OffsetThreadMap("t // (t - 5)", 32, 1, 32)
    with pytest.raises(ConfigError, match="extent"):
        OffsetThreadMap("t", 32, 1)
    with pytest.raises(TilingError, match="iterations must be positive"):
        OffsetThreadMap("t", 32, 0, 32)
    m = OffsetThreadMap("t * 4 + i", 8, (2, 2), 32)
    assert m.iterations == (2, 2) and m.offset(7, 3) == 31
    with pytest.raises(TilingError, match="iteration 4 out of range"):
        m.offset(0, 4)


# ---------------------------------------------------------------- seed 003

def test_seed003_four_strip_example():
    # kRow = 16, Threads = 32, Pitch = 8, Strips = 4: threads 0-7 row 0, 8-15 row 1, ...
    offs = [seed003_get_offset(t, 8, 4, 16) for t in range(32)]
    assert offs == [r * 16 + c for r in range(4) for c in range(8)]
    # with 64 threads, threads 32..63 are shifted by 8 * 4 * 16 = 512
    assert [seed003_get_offset(t, 8, 4, 16) for t in range(32, 64)] == [o + 512 for o in offs]


def test_seed003_16x8_a_tile_example():
    # Pitch 8, Strips 2, kRow 16; a 16x8 A tile has 128 elements
    offs = {t: seed003_get_offset(t, 8, 2, 16) for t in range(32)}
    assert [offs[t] for t in range(0, 8)] == list(range(0, 8))
    assert [offs[t] for t in range(8, 16)] == list(range(16, 24))
    assert [offs[t] for t in range(16, 24)] == list(range(256, 264))
    assert [offs[t] for t in range(24, 32)] == list(range(272, 280))
    outside = [t for t, o in offs.items() if not 0 <= o < 128]
    assert outside == list(range(16, 32))  # as the article admits, not a valid mapping of the tile
    # the same formula as a custom offset map: the extent makes the overflow visible
    m = OffsetThreadMap("t % 8 + ((t // 8) % 2) * 16 + (t // 8 // 2) * (8 * 2 * 16)", 32, 1, 128)
    assert m.element_offsets(pitch=128) == [offs[t] for t in range(32)]


def test_seed003_strips1_claim_is_false_in_general():
    # exhaustive over a range: equal iff Pitch == 1 or the thread is in the first Pitch threads
    for p in range(1, 9):
        for k in range(1, 9):
            for t in range(64):
                same = seed003_get_offset(t, p, 1, k) == pitch_linear_thread_map_offset(t, p, k)
                assert same == (p == 1 or t < p), (t, p, k)
    r = check_seed003_strips1_claim(8, 16)
    assert not r.holds and r.counterexample == 8
    assert (r.seed_value, r.plain_value) == (128, 16)
    assert check_seed003_strips1_claim(1, 16).holds
    assert check_seed003_strips1_claim(8, 16, threads=8).holds
    assert not check_seed003_strips1_claim(8, 16, threads=9).holds
    assert str(seed003_strips1_difference()) == "k*(P - 1)*floor(t/P)"


def test_seed003_argument_errors():
    with pytest.raises(TilingError, match="pitch must be positive"):
        seed003_get_offset(0, 0, 1, 16)
    with pytest.raises(TilingError, match="strips must be positive"):
        seed003_get_offset(0, 8, 0, 16)
    with pytest.raises(TilingError, match="thread_id"):
        seed003_get_offset(-1, 8, 1, 16)
    assert issubclass(TilingError, SymlayoutError)
