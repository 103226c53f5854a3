"""How a sweep hands out its candidates (issue 32): batches are blocks of the space, so the pieces of proofs a
block's candidates share are proved on one worker; the last blocks are cut so the workers finish together; the
LocalCluster's workers run without distributed's MALLOC_TRIM_THRESHOLD_ and profiler; the table is the same."""
import collections
import contextlib
import os
import pickle
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from symlayout.sweep import MAX_BATCH, batches_of, load_spec, loads_spec, radices_of, sweep

ROOT = Path(__file__).resolve().parents[1]

SPACE = '''name = "blocks"
[space]
atom = ["SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N"]
smem = ["(32,16):(16,1)", "Sw<1,3,3> o (32,16):(16,1)", "(32,16):(20,1)"]
rows = [32, 64]
stages = { min = 2, max = 9 }
[config.mma]
atom = "SM80_16x8x16_F16F16F16F16_TN"
layout = "(2,2,1)"
[config.copy.A]
atom = "{atom}"
type = "half_t"
smem = "{smem}"
[config.stages]
count = "{stages}"
'''


def _flat(batches):
    return [i for b in batches for i in b]


def test_radices_are_the_variables_sizes_in_order():
    assert radices_of(loads_spec(SPACE)) == [2, 3, 2, 8]
    assert radices_of(load_spec(ROOT / "bench" / "sweep_1m.toml")) == [4, 8, 3, 7, 3, 8, 8, 8]


def test_a_batch_is_a_block_of_the_space_on_one_worker():
    r = [4, 8, 3, 7, 3, 8, 8, 8]                    # bench/sweep_1m.toml
    ids = list(range(64 * 512))
    batches = batches_of(ids, 1, radices=r)         # target 256: the smallest block of >= 256 is 8*8*8
    assert _flat(batches) == ids
    assert all(len(b) == 512 and b[0] % 512 == 0 for b in batches)
    assert {b[0] // 512 for b in batches} == set(range(64))


def test_a_block_holds_only_ids_of_one_prefix_when_some_are_done():
    r = [2, 3, 2, 8]
    ids = [i for i in range(96) if i % 5]           # a resumed sweep: some done
    batches = batches_of(ids, 1, radices=r)         # 77 ids: target 9, the smallest block of >= 9 is 2*8
    assert _flat(batches) == ids
    assert [{i // 16 for i in b} for b in batches] == [{k} for k in range(6)]


def test_lanes_are_contiguous_and_their_last_batch_is_cut():
    cluster = pytest.importorskip("symlayout.sweep.cluster")
    batches = [list(range(k * 512, (k + 1) * 512)) for k in range(40)]
    lanes = cluster.lanes(batches, 4)
    parts = cluster.TAIL_PARTS
    assert [len(lane) for lane in lanes] == [9 + parts] * 4
    assert [lane[0][0] for lane in lanes] == [0, 10 * 512, 20 * 512, 30 * 512]
    assert [len(b) for b in lanes[0]] == [512] * 9 + [512 // parts] * parts
    assert _flat(b for lane in lanes for b in lane) == list(range(40 * 512))


def test_a_worker_with_an_empty_lane_takes_the_last_batch_of_the_longest():
    cluster = pytest.importorskip("symlayout.sweep.cluster")
    lanes = cluster.lanes([[0, 1], [2, 3], [4, 5, 6, 7, 8, 9, 10, 11]], 2)
    assert [list(lane) for lane in lanes] == [[[0, 1], [2], [3]], [[4, 5], [6, 7], [8, 9], [10, 11]]]
    got = [cluster.next_batch(lanes, 0) for _ in range(4)]
    assert got == [[0, 1], [2], [3], [10, 11]]
    assert [cluster.next_batch(lanes, 1) for _ in range(4)] == [[4, 5], [6, 7], [8, 9], None]


def test_no_block_of_the_space_fits_then_the_target_size():
    assert [len(b) for b in batches_of(list(range(4096)), 1, radices=[2, 2048])] == [256] * 16
    assert MAX_BATCH < 2048
    assert [len(b) for b in batches_of(list(range(20)), 1)] == [2] * 10          # no radices: the target, 20 // 8


def test_an_explicit_batch_size_is_kept():
    assert [len(b) for b in batches_of(list(range(10)), 2, batch=4, radices=[2, 5])] == [4, 4, 2]


def test_the_table_is_the_same_for_blocks_on_two_workers(tmp_path):
    pytest.importorskip("distributed")
    spec_path = tmp_path / "blocks.toml"
    spec_path.write_text(SPACE)
    spec = load_spec(spec_path)
    serial = sweep(spec, str(tmp_path / "serial.csv"))
    on_two = sweep(spec, str(tmp_path / "two.csv"), workers=2)
    assert on_two == serial
    assert (tmp_path / "two.csv").read_bytes() == (tmp_path / "serial.csv").read_bytes()


def test_the_local_cluster_workers_run_without_distributed_s_trim_and_profiler():
    pytest.importorskip("distributed")
    busy = socket.socket()                          # distributed's default HTTP port taken: no warning either
    with contextlib.suppress(OSError):
        busy.bind(("", 8787))
        busy.listen()
    probe = ("import os, dask\n"
             "from symlayout.sweep.cluster import local_cluster\n"
             "with local_cluster(1) as c:\n"
             "    print(list(c.run(lambda: (os.environ.get('MALLOC_TRIM_THRESHOLD_'),\n"
             "                              dask.config.get('distributed.worker.profile.enabled'))).values()))\n"
             "print(os.environ.get('MALLOC_TRIM_THRESHOLD_'))\n")
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    try:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    finally:
        busy.close()
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[:2] == ["[(None, False)]", "None"]
    assert "Traceback" not in out.stderr and "Warning" not in out.stderr, out.stderr[-2000:]


def test_a_task_is_a_run_of_the_lane_s_batches_shrinking_as_the_lane_ends():
    cluster = pytest.importorskip("symlayout.sweep.cluster")
    batches = [list(range(k * 512, (k + 1) * 512)) for k in range(64)]
    lanes = cluster.lanes(batches, 1)
    tasks = []
    while (t := cluster.next_batch(lanes, 0)) is not None:
        tasks.append(t)
    assert _flat(tasks) == list(range(64 * 512))                 # every id once, in order
    sizes = [len(t) for t in tasks]
    assert sizes[0] == cluster.TASK_MAX                          # 8 blocks: a quarter of the lane is more
    assert sizes == sorted(sizes, reverse=True)                  # smaller as the lane ends
    assert sizes[-cluster.TAIL_PARTS:] == [512 // cluster.TAIL_PARTS] * cluster.TAIL_PARTS
    assert all(t[-1] - t[0] == len(t) - 1 for t in tasks)        # consecutive blocks
    assert len(tasks) < 64 // 2


def test_a_task_holds_at_most_a_share_of_its_lane():
    cluster = pytest.importorskip("symlayout.sweep.cluster")
    lane = collections.deque([[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11], [12, 13], [14, 15]])
    assert cluster.TASK_SHARE == 4
    assert cluster.first_batches(lane) == [0, 1, 2, 3]           # 8 batches of 2 left: at most 16 // 4
    assert cluster.first_batches(lane) == [4, 5]                 # 6 left: at most 3
    assert cluster.first_batches(lane) == [6, 7]
    assert [list(b) for b in lane] == [[8, 9], [10, 11], [12, 13], [14, 15]]


def test_an_explicit_batch_size_is_the_most_a_task_holds_on_workers(tmp_path):
    pytest.importorskip("distributed")
    spec_path = tmp_path / "blocks.toml"
    spec_path.write_text(SPACE)
    seen = []
    sweep(load_spec(spec_path), str(tmp_path / "t.csv"), workers=2, batch=3,
          progress=lambda done, total, rate: seen.append(done))
    steps = [b - a for a, b in zip([0, *seen], seen)]
    assert seen[-1] == 96 and max(steps) <= 3, steps


def test_a_task_of_at_most_most_candidates_is_one_batch_of_that_size():
    cluster = pytest.importorskip("symlayout.sweep.cluster")
    lanes = cluster.lanes([list(range(k * 3, k * 3 + 3)) for k in range(32)], 2)
    tasks = [t for w in (0, 1) for t in iter(lambda w=w: cluster.next_batch(lanes, w, 3), None)]
    assert max(map(len, tasks)) == 3 and _flat(sorted(tasks)) == list(range(96))


def test_a_relay_hands_a_kind_of_pieces_around_once_other_workers_proved_them_again():
    cluster = pytest.importorskip("symlayout.sweep.cluster")
    relay = cluster.Relay()
    relay.take(0, {("stages", 1): b"s1", ("copy", 1): b"c1"})
    assert relay.seed(1) == {}                      # nothing recurred yet: nothing is sent around
    relay.take(1, {("stages", 1): b"s1", ("stages", 2): b"s2", ("copy", 2): b"c2"})
    assert relay.relayed("stages") and not relay.relayed("copy")
    assert relay.seed(0) == {("stages", 2): b"s2"}  # the other's stage piece; not its own, not a copy
    assert relay.seed(0) == {}                      # each piece once per worker
    relay.take(0, {("stages", 3): b"s3"})
    assert relay.seed(1) == {("stages", 3): b"s3"}  # (s1 it proved itself)
    assert relay.seed(2) == {("stages", 1): b"s1", ("stages", 2): b"s2", ("stages", 3): b"s3"}
    assert relay.sent == {"stages": 5}


def test_pieces_relayed_from_another_worker_give_the_same_rows_and_are_not_proved_again():
    from symlayout.sweep import prover
    spec = loads_spec(SPACE)
    memo = prover._MEMO
    try:
        prover._MEMO = {}
        rows, pieces = prover.prove_relayed(spec.text, spec.path, list(range(16)), {})
        assert pieces and all(isinstance(v, bytes) for v in pieces.values())
        prover._MEMO = {}                           # another worker, seeded with those pieces
        again, proved = prover.prove_relayed(spec.text, spec.path, list(range(16)), pieces)
        assert again == rows and proved == {}
        prover._MEMO = {}                           # seeded as a sweep sends it: pickled
        assert prover.prove_relayed(spec.text, spec.path, list(range(16)), pickle.dumps(pieces)) == (rows, {})
        prover._MEMO = {}                           # and one that proves them itself
        assert prover.prove_relayed(spec.text, spec.path, list(range(16)), None)[0] == rows
    finally:
        prover._MEMO = memo
