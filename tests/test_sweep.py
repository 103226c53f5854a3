"""``symlayout sweep``: a small space (12 candidates, 2 legal) swept serially, on a 2-worker Dask LocalCluster,
interrupted and resumed; constraints prune with their reason; bad specs are one line and exit 2."""
import contextlib
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from symlayout.cli import main
from symlayout.sweep import emit, loads_spec, sweep
from symlayout.sweep.table import columns

ROOT = Path(__file__).resolve().parents[1]

SMALL = '''name = "small"
[space]
atom = ["SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N"]
smem = ["(32,16):(16,1)", "Sw<1,3,3> o (32,16):(16,1)", "(32,16):(20,1)"]
pitch = [16, 64]
[constraints]
smem_bytes = "32 * pitch * 2"
smem_budget = 2048
[config.mma]
atom = "SM80_16x8x16_F16F16F16F16_TN"
layout = "(2,2,1)"
[config.copy.A]
atom = "{atom}"
type = "half_t"
smem = "{smem}"
'''


def _cli(*argv):
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def small(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


def _rows(path):
    return list(csv.DictReader(open(path, newline="")))


def test_candidates_are_the_product_in_order_with_stable_ids():
    s = loads_spec(SMALL)
    assert len(s) == 12
    assert s.values(0) == {"atom": "SM75_U32x2_LDSM_N", "smem": "(32,16):(16,1)", "pitch": 16}
    assert s.values(11) == {"atom": "SM75_U32x4_LDSM_N", "smem": "(32,16):(20,1)", "pitch": 64}
    assert s.config(3)["copy"]["A"]["smem"] == "Sw<1,3,3> o (32,16):(16,1)"


def test_serial_sweep_verdicts_and_reasons(small, tmp_path):
    rc, out, err = _cli("sweep", small, "-o", tmp_path / "t.csv", "-q")
    assert (rc, err) == (0, "")
    assert "12 candidates: 2 legal, 4 illegal, 0 unknown, 6 pruned, 0 invalid" in out
    rows = {int(r["id"]): r for r in _rows(tmp_path / "t.csv")}
    assert [i for i, r in rows.items() if r["status"] == "legal"] == [2, 8]      # the swizzled tiles
    assert rows[2]["bank_degree"] == "1" and rows[2]["reason"] == ""
    assert rows[0]["status"] == "illegal" and rows[0]["bank_degree"] == "2"
    assert rows[0]["reason"].startswith("bank_conflicts[A]: refuted: 2-way bank conflict")
    assert rows[4]["reason"].startswith("alignment[A]: refuted: lane 1 (thread 1) gives row address 40 B")


def test_a_constraint_prunes_with_its_reason(small, tmp_path):
    rows = sweep(loads_spec(SMALL, str(small)), str(tmp_path / "t.csv"))
    pruned = [r for r in rows if r["status"] == "pruned"]
    assert [r["id"] for r in pruned] == [1, 3, 5, 7, 9, 11]                     # pitch 64: 4096 bytes
    assert all(r["reason"] == "smem_bytes 4096 > 2048 (smem_budget)" and r["proved"] == "" for r in pruned)
    assert rows[0]["smem_bytes"] == 1024 and rows[0]["status"] != "pruned"


def test_arch_budget_and_register_limit():
    s = loads_spec(SMALL.replace("smem_budget = 2048", 'arch = "sm80"\nregisters = "pitch * 4"\nmax_registers = 128'))
    assert s.over_budget(s.scope(0)) == (None, {"smem_bytes": 1024, "registers": 64})
    assert s.over_budget(s.scope(1))[0] == "registers 256 > 128 (max_registers)"
    s = loads_spec(SMALL.replace("smem_budget = 2048", 'arch = "sm86"').replace("32 * pitch * 2", "1600 * pitch"))
    assert s.over_budget(s.scope(1))[0] == "smem_bytes 102400 > 101376 (sm86: shared memory per block)"


def test_two_worker_local_cluster_equals_serial(small, tmp_path):
    pytest.importorskip("distributed")
    assert _cli("sweep", small, "-o", tmp_path / "serial.csv", "-q")[0] == 0
    rc, out, err = _cli("sweep", small, "-o", tmp_path / "dask.csv", "-q", "--workers", 2, "--batch", 2)
    assert rc == 0, err
    assert (tmp_path / "dask.csv").read_bytes() == (tmp_path / "serial.csv").read_bytes()


def test_a_killed_sweep_resumes_without_reproving(small, tmp_path):
    spec, out = loads_spec(SMALL, str(small)), str(tmp_path / "t.csv")
    fresh = sweep(spec, str(tmp_path / "fresh.csv"))

    def killed(done, total, rate):
        if done >= 4:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        sweep(spec, out, batch=2, progress=killed)
    with open(out, "a") as f:
        f.write("4,SM75_U32x2_LDSM_N,(32,16)")            # a row cut by the kill
    assert len(_rows(out)) == 4 + 1
    seen = []
    again = sweep(spec, out, batch=2, progress=lambda done, total, rate: seen.append(done))
    assert seen == [6, 8, 10, 12]                          # the 4 done before the kill are not proved again
    assert again == fresh
    assert Path(out).read_bytes() == (tmp_path / "fresh.csv").read_bytes()


def test_an_output_of_another_spec_is_refused(small, tmp_path):
    out = tmp_path / "t.csv"
    assert _cli("sweep", small, "-o", out, "-q")[0] == 0
    small.write_text(SMALL.replace("layout = \"(2,2,1)\"", "layout = \"(2,1,1)\""))
    rc, _, err = _cli("sweep", small, "-o", out, "-q")
    assert rc == 2 and err.count("\n") == 1 and "written by another spec" in err
    assert _cli("sweep", small, "-o", out, "-q", "--fresh")[0] == 0


@pytest.mark.parametrize("edit, message", [
    (("pitch = [16, 64]", "pitch = []"), "small.toml:5: [space] pitch: a variable is a non-empty list or a range"),
    (("pitch = [16, 64]", "pitch = { min = 4, max = 1 }"), "[space] pitch: range 4..1 is empty"),
    (('smem = "{smem}"', 'smem = "{smme}"'), "{smme} names no variable of [space] or [derived]"),
    (("smem_budget = 2048", ""), "[constraints] smem_bytes: needs arch or smem_budget"),
    (('smem_bytes = "32 * pitch * 2"', 'smem_bytes = "32 * pitch ** 2"'), ":7: [constraints] smem_bytes: \"32 * pitch ** 2\": column 12"),
    (("[constraints]", "[constraint]"), "unknown key 'constraint'"),
    (("[space]", "[space"), "small.toml: "),
    (("pitch = [16, 64]", "pitch = { min = 1, max = 999999 }\nq = { min = 1, max = 999 }"),
     "small.toml:2: [space]: 5,993,994,006 candidates: more than one sweep takes (100,000,000)"),
])
def test_a_bad_spec_is_one_line_and_exit_2(small, tmp_path, edit, message):
    small.write_text(SMALL.replace(*edit))
    rc, out, err = _cli("sweep", small, "-o", tmp_path / "t.csv", "-q")
    assert rc == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("symlayout: error: ") and message in err, err


def test_a_candidate_that_does_not_load_is_invalid_with_the_loaders_message(tmp_path):
    spec = loads_spec(SMALL.replace('type = "half_t"', 'type = "{atom}"'), "bad.toml")
    rows = sweep(spec, str(tmp_path / "t.csv"))
    assert {r["status"] for r in rows} == {"invalid", "pruned"}
    assert rows[0]["reason"].startswith("bad.toml:14: candidate 0: [config.copy.A] type: ")   # the spec's line


def test_json_parquet_and_emit(small, tmp_path):
    rc, out, _ = _cli("sweep", small, "-o", tmp_path / "t.csv", "-q", "--json", "--emit", "toml", tmp_path / "ok")
    doc = json.loads(out)
    assert doc["summary"]["legal"] == 2 and [r["id"] for r in doc["rows"]] == list(range(12))
    assert list(doc["rows"][0]) == columns(loads_spec(SMALL)) and doc["rows"][0]["pitch"] == 16
    emitted = sorted((tmp_path / "ok").iterdir())
    assert [p.name for p in emitted] == ["small_0000002.toml", "small_0000008.toml"]
    assert _cli("prove", "-q", *emitted)[0] == 0                 # the survivors prove as files
    spec = loads_spec(SMALL, str(small))
    rows = sweep(spec, str(tmp_path / "t.csv"))
    assert emit(spec, rows, "cute", str(tmp_path / "cpp")) == 2
    assert "SM75_U32x4_LDSM_N" in (tmp_path / "cpp" / "small_0000008.cpp").read_text()
    try:
        import pyarrow.parquet as pq
    except ImportError:
        rc, _, err = _cli("sweep", small, "-o", tmp_path / "t.csv", "-q", "--parquet", tmp_path / "t.parquet")
        assert rc == 2 and "needs pyarrow" in err
    else:
        assert _cli("sweep", small, "-o", tmp_path / "t.csv", "-q", "--parquet", tmp_path / "t.parquet")[0] == 0
        assert pq.read_table(tmp_path / "t.parquet").num_rows == 12


def test_prove_does_not_import_dask():
    code = ("import sys; from symlayout.cli import main; "
            "rc = main(['prove', '-q', 'proofs/seeds/seed_000_A_x2.toml']); "
            "print(rc, sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'tqdm')))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 []"


def test_a_batch_collects_garbage_once_in_a_threaded_worker(monkeypatch):
    """A Dask worker has several threads proving, so the Z3 lock pauses the collector and collects when
    released: a batch holds the lock throughout, one collection per batch, not one per candidate."""
    import gc
    import threading
    from symlayout.algebra.z3lock import serialized
    from symlayout.sweep.prover import prove_batch
    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    stop, entered = threading.Event(), threading.Event()
    other = threading.Thread(target=lambda: (serialized(entered.set)(), stop.wait()))   # a second thread that proves
    other.start()
    entered.wait()
    calls.clear()
    try:
        rows = prove_batch(SMALL, "small.toml", [0, 2, 4, 6])
    finally:
        stop.set()
        other.join()
    assert [r["status"] for r in rows] == ["illegal", "legal", "illegal", "illegal"]
    assert len(calls) == 1


def test_derived_values_use_the_ones_above_them():
    s = loads_spec(SMALL.replace("[constraints]", '[derived]\nrows = "pitch // 8"\nrows2 = "2 * rows"\n[constraints]'))
    assert s.scope(1)["rows2"] == 16
    with pytest.raises(Exception, match=r"\[derived\] rows: .*unknown variable 'rows2'"):
        loads_spec(SMALL.replace("[constraints]", '[derived]\nrows = "rows2 // 8"\nrows2 = "2 * pitch"\n[constraints]'))


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "sweep").glob("*.toml")), ids=lambda p: p.name)
def test_bundled_spaces_load_and_their_first_candidate_proves(path):
    from symlayout.sweep import load_spec
    from symlayout.sweep.prover import prove_candidate
    spec = load_spec(path)
    assert len(spec) > 100
    row = prove_candidate(spec, 0)
    assert row["status"] == "legal" and row["proved"] > 0, row


def _sm80():
    from symlayout.sweep import load_spec
    return load_spec(ROOT / "examples" / "sweep" / "sm80_gemm.toml")


def _report(spec, i, memo=None):
    """Every result of candidate ``i`` as JSON (counts, methods, messages, details; not the seconds)."""
    from symlayout.prove.engine import prove_config
    from symlayout.sweep.prover import load_candidate
    rep = prove_config(load_candidate(spec, i), memo=memo)
    return rep.error, [{k: v for k, v in r.to_json().items() if k != "seconds"} for r in rep.results]


def _shared_equals_unshared(spec, ids, order_seed=1):
    """Every candidate of ``ids`` proved on its own and with pieces shared (in a shuffled order): the same
    rows and the same results to the last message; returns (copies proved, copies answered) of the shared run."""
    import random
    from symlayout.sweep.prover import prove_candidate
    alone = {i: prove_candidate(spec, i) for i in ids}
    memo, shuffled = {}, list(ids)
    random.Random(order_seed).shuffle(shuffled)
    shared = {i: prove_candidate(spec, i, memo) for i in shuffled}
    assert shared == alone
    proved = [i for i in ids if alone[i]["status"] not in ("pruned", "invalid")]
    assert {i: _report(spec, i, memo) for i in proved} == {i: _report(spec, i) for i in proved}
    pieces = len(proved) * len(spec.template.get("copy", {}))
    return sum(k[0] == "copy" for k in memo), pieces


def test_shared_copy_proofs_give_the_rows_of_unshared_ones():
    """The SM80 space's first TiledMMA and 64-row block tile (240 candidates, 20 distinct copies of A and 60 of
    B): 60 of them proved alone and with their copies shared give the same results, and copies came from
    the memo."""
    import random
    spec = _sm80()
    ids = sorted(random.Random(32).sample(range(240), 60))
    proved, pieces = _shared_equals_unshared(spec, ids)
    assert proved <= 20 + 60 and proved < pieces


def test_shared_global_copies_give_the_rows_of_unshared_ones():
    """The attention space's first head (64 candidates: [g2s.A] does not depend on kBlockN, [g2s.B] not on
    kBlockM): 24 of them proved alone and with their copies and global-memory copies shared, the same results."""
    import random
    from symlayout.sweep import load_spec
    from symlayout.sweep.prover import prove_candidate
    spec = load_spec(ROOT / "examples" / "sweep" / "attention_sm80.toml")
    ids = sorted(random.Random(5).sample(range(64), 24))
    memo, alone = {}, {i: prove_candidate(spec, i) for i in ids}
    assert {i: prove_candidate(spec, i, memo) for i in ids} == alone
    loaded = [i for i in ids if alone[i]["status"] not in ("pruned", "invalid")]
    assert {i: _report(spec, i, memo) for i in loaded} == {i: _report(spec, i) for i in loaded}
    assert 0 < sum(k[0] == "global" for k in memo) < 2 * len(loaded)


def test_the_shared_key_holds_what_a_copy_depends_on_and_not_its_stages():
    from symlayout.config import loads_config
    from symlayout.prove.engine import config_parts, part_key
    spec = _sm80()
    base = to_toml_of(spec, 1)
    other_stages = to_toml_of(spec, 2)                              # ids 1 and 2: stages 3 and 4

    def key(text, op="A"):
        cfg = loads_config(text)
        part = next(p for p in config_parts(cfg, ["coverage", "alignment"]) if p[:2] == ("copy", op))
        return part_key(cfg, part)
    assert key(base) == key(other_stages)
    assert key(base) != key(base + '[expect]\nrefuted = ["alignment"]\n')
    assert key(base) != key(base.replace("Sw<2,3,3>", "Sw<3,3,3>"))
    assert key(base) != key(base.replace('type = "half_t"', 'type = "half_t"\nelement = "half_t"', 1))
    assert key(base) != key("# a line before\n" + base)          # (a too-few-values fix names the copy's line)
    assert key(base, "A") != key(base, "B")


def test_each_staged_buffer_is_shared_between_candidates_with_the_same_buffer():
    """A staged buffer's results are keyed by that buffer alone: candidates 0 and 80 differ only in tile_n, so
    they share A's stages and not B's (before, one key held both buffers and nothing was shared here)."""
    from symlayout.config import loads_config
    from symlayout.prove.datapath.stages import stage_key, staged_buffers
    spec = _sm80()

    def key(i, op="A"):
        cfg = loads_config(to_toml_of(spec, i))
        return stage_key(op, staged_buffers(cfg)[op], ["exactly_once", "in_bounds"])
    assert spec.values(0)["ldsm"] != spec.values(4)["ldsm"] and key(0) == key(4)     # only the ldmatrix differs
    assert key(0) != key(1)                                                           # 2 and 3 stages
    assert key(0) != key(len(spec) - 1)
    assert {k: v for k, v in spec.values(0).items() if v != spec.values(80)[k]} == {"tile_n": 64}
    assert key(0, "A") == key(80, "A") and key(0, "B") != key(80, "B")
    assert key(0, "A") != key(0, "B")
    rows, memo = {}, {}
    from symlayout.sweep.prover import prove_candidate
    for i in (0, 80):
        rows[i] = prove_candidate(spec, i, memo)
        assert rows[i] == prove_candidate(spec, i)
    assert sum(k[0] == "stages" for k in memo) == 3                                 # A once, B twice


def to_toml_of(spec, i):
    from symlayout.sweep.toml import to_toml
    return to_toml(spec.config(i))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sm80_gemm.toml", "attention_sm80.toml", "sm90_gemm.toml", "attention_sm90.toml",
                                  "sm100_gemm.toml", "sm100_blockscaled.toml"])
def test_shared_equals_unshared_on_two_thousand_random_candidates(name):
    import random
    from symlayout.sweep import load_spec
    spec = load_spec(ROOT / "examples" / "sweep" / name)
    ids = sorted(random.Random(7).sample(range(len(spec)), min(2000, len(spec))))
    proved, pieces = _shared_equals_unshared(spec, ids)
    assert proved < pieces or not spec.template.get("copy")          # (SM90/SM100 spaces: no [copy.X])


def _ordered(x):
    """``x`` with every dict's key order made visible (dict equality ignores it)."""
    if isinstance(x, dict):
        return [(k, _ordered(v)) for k, v in x.items()]
    if isinstance(x, list):
        return [_ordered(v) for v in x]
    return (type(x).__name__, x)


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "sweep").glob("*.toml")) + [ROOT / "bench" / "sweep_1m.toml"],
                         ids=lambda p: p.name)
def test_a_candidate_loaded_from_its_dict_is_the_one_loaded_from_its_text(path):
    """A sweep loads each candidate from its dict (``read_back``), not from the TOML text written of it: for 40
    seeded candidates of each space the dict is what tomllib reads from the text, key order included, and the
    configuration, its key lines and its proof are the same."""
    import random
    import tomllib
    from symlayout.config import loads_config
    from symlayout.prove.engine import prove_config
    from symlayout.sweep import load_spec
    from symlayout.sweep.prover import load_candidate
    from symlayout.sweep.toml import read_back, to_toml
    spec = load_spec(path)
    for i in random.Random(11).sample(range(len(spec)), 40):
        d = spec.config(i)
        assert _ordered(read_back(d)) == _ordered(tomllib.loads(to_toml(d)))
        fast = _loaded(lambda: load_candidate(spec, i))
        slow = _loaded(lambda: loads_config(to_toml(d), f"{spec.path}#{i}"))
        if isinstance(slow, str):
            assert fast == slow                                       # an invalid candidate: the same message
            continue
        assert fast == slow and fast.data == slow.data and fast.text == slow.text
        assert fast.lines.pos == slow.lines.pos
        if spec.over_budget(spec.scope(i))[0] is None:
            assert _report_of(prove_config(fast)) == _report_of(prove_config(slow))


def _loaded(load):
    from symlayout.errors import ConfigError
    try:
        return load()
    except ConfigError as e:
        return str(e)


def _report_of(rep):
    return rep.error, [{k: v for k, v in r.to_json().items() if k != "seconds"} for r in rep.results]


def test_read_back_leaves_to_tomllib_what_json_escapes_would_not_write_as_toml():
    import tomllib
    from symlayout.sweep.toml import read_back, to_toml
    params = {"m": {"min": 1, "max": 8}, "e": {}}
    d = {"copy": {"A": {"align": 16, "x": [1.5, True, [{"k": "v"}]]}}, "name": "n", "params": params}
    assert _ordered(read_back(d)) == _ordered(tomllib.loads(to_toml(d)))
    assert list(read_back(d)) == ["name", "copy", "params"] and read_back(d)["params"] is not params
    for bad in ("caf\u00e9", "a\x7fb", float("nan"), float("inf"), {"\u00e9": 1}, None):
        assert read_back({"mma": {"atom": bad}}) is None, bad


def test_an_expression_is_evaluated_once_per_value_of_its_variables_and_a_bool_is_not_an_int():
    from symlayout.sweep.spec import SpecError
    s = loads_spec(SMALL.replace('pitch = [16, 64]', 'pitch = [16, 64]\nflag = [1, true]')
                   .replace('"32 * pitch * 2"', '"32 * pitch * flag"'))
    assert s.over_budget(s.scope(0)) == (None, {"smem_bytes": 512})
    assert s.over_budget(s.scope(2)) == (None, {"smem_bytes": 2048})
    assert len(s._values) == 2 and s.over_budget(s.scope(0))[1] == {"smem_bytes": 512}
    with pytest.raises(SpecError, match=r"smem_bytes: 'flag' is not an integer \(value True\)"):
        s.over_budget(s.scope(1))                     # flag = true: the memo of flag = 1 is not its value


@pytest.mark.parametrize("name,stride", [("sm90_gemm.toml", 84), ("attention_sm90.toml", 1)])
def test_shared_sm90_pieces_give_the_rows_of_unshared_ones(name, stride):
    """40 SM90 candidates (two runs of 20 ``stride`` ids apart: in the GEMM space, the same tiles under two GMMA
    atoms of another N) proved alone and with their descriptor, TMA, accumulator and stage pieces shared (in a
    shuffled order): the same rows and results to the last message, and pieces came from the memo."""
    import random
    from symlayout.sweep import load_spec
    from symlayout.sweep.prover import prove_candidate
    spec = load_spec(ROOT / "examples" / "sweep" / name)
    start = random.Random(3).randrange(0, len(spec) - stride - 40)
    ids = list(range(start, start + 20)) + list(range(start + stride + 20 * (stride == 1), start + stride + 20 + 20 * (stride == 1)))
    _shared_equals_unshared(spec, ids)
    memo = {}
    proved = [i for i in ids if prove_candidate(spec, i, memo)["status"] != "pruned"]
    assert proved and sum(k[0] == "accumulators" for k in memo) < len(proved)
    assert sum(k[0] == "tma" for k in memo) < 2 * len(proved)
    assert sum(k[0] == "descriptor" for k in memo) <= 2 * len(proved)


def test_the_sm90_keys_hold_what_each_piece_reads():
    """In the SM90 space, candidates 0 and 1 differ only in the smem base alignment (which the descriptor and
    TMA messages name: not shared, but the operand models are), and candidates 0 and 84 only in the GMMA atom's
    N (the TMA load of A does not read the TiledMMA: shared; its descriptors do: not)."""
    from symlayout.prove.hopper.obligations import piece_keys
    from symlayout.sweep import load_spec
    from symlayout.sweep.prover import load_candidate
    spec = load_spec(ROOT / "examples" / "sweep" / "sm90_gemm.toml")
    props = ["descriptor", "tma"]

    def keys(i):
        return piece_keys(load_candidate(spec, i), props, memo={})
    diff = {k: v for k, v in spec.values(0).items() if v != spec.values(84)[k]}
    assert set(diff) == {"atom", "tile_n"} and spec.values(1)["align"] != spec.values(0)["align"]
    assert keys(0)[("descriptor", "A")] != keys(1)[("descriptor", "A")]
    assert keys(0)[("tma", "A")] != keys(1)[("tma", "A")]
    assert keys(0)[("tma", "A")] == keys(84)[("tma", "A")] and keys(0)[("tma", "B")] != keys(84)[("tma", "B")]
    assert keys(0)[("descriptor", "A")] != keys(84)[("descriptor", "A")]
    assert keys(0)["accumulators"] == keys(1)["accumulators"] != keys(84)["accumulators"]
    assert piece_keys(load_candidate(spec, 0), props).keys() == {"mma"}           # no memo: nothing shared


def test_a_reused_model_is_built_once_per_key_among_the_last_ones():
    from symlayout.prove.verdict.shared import reused
    memo, built = {}, []
    build = lambda k: lambda: built.append(k) or [k]      # noqa: E731
    assert reused(memo, 1, build(1), limit=2) is reused(memo, 1, build(1), limit=2) and built == [1]
    reused(memo, 2, build(2), limit=2), reused(memo, 3, build(3), limit=2), reused(memo, 1, build(1), limit=2)
    assert built == [1, 2, 3, 1] and reused(None, 1, build(1)) == [1] and built[-1] == 1 and len(built) == 5


def test_the_sweeps_local_cluster_workers_run_without_dasks_malloc_trim_threshold():
    """Dask's nanny starts its workers with MALLOC_TRIM_THRESHOLD_=65536, which turns off glibc's dynamic mmap
    threshold: the prover took 1.5x (SM80) to 2x (SM90) the CPU time in a worker than in one process.  The
    sweep's LocalCluster (and bench/sweep_space.py's) starts them without it."""
    from symlayout.sweep.cluster import local_cluster
    if os.environ.get("MALLOC_TRIM_THRESHOLD_") is not None:
        pytest.skip("MALLOC_TRIM_THRESHOLD_ is set in this environment (the workers inherit it)")
    with local_cluster(1) as client:
        envs = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
    assert list(envs.values()) == [None]
    assert os.environ.get("MALLOC_TRIM_THRESHOLD_") is None        # (nor is this process's environment changed)
