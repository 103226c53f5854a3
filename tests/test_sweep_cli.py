"""``symlayout sweep`` as a kernel author meets it (issue 32's audit): an output that is not the spec's table is
refused untouched, bad outputs and bad specs are one line naming the place before anything is proved, and the
exit code says whether the table is complete."""
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from symlayout.sweep import loads_spec, sweep

from test_sweep import SMALL, _cli

ROOT = Path(__file__).resolve().parents[1]
SPEC = SMALL.replace(', "(32,16):(20,1)"', "")       # test_sweep's space less its third layout


@pytest.fixture
def spec(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SPEC)
    return p


def _one_line_exit_2(result, message):
    rc, out, err = result
    assert rc == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, (rc, out, err)
    assert err.startswith("symlayout: error: ") and message in err, err


# ---------------------------------------------------------------- resuming from a file that is not the table

def _table(spec, tmp_path):
    """This spec's table, complete, as text."""
    assert _cli("sweep", spec, "-o", tmp_path / "t.csv", "-q")[0] == 0
    return (tmp_path / "t.csv").read_text()


@pytest.mark.parametrize("content", [b"my precious data", b"hello,world\n1,2", b"\xff\xfe\x00abc\n\x80\n"],
                         ids=["one-line", "other-csv", "binary"])
def test_a_file_that_is_not_a_table_is_refused_and_left_as_it_was(spec, tmp_path, content):
    out = tmp_path / "mine.csv"
    out.write_bytes(content)
    _one_line_exit_2(_cli("sweep", spec, "-o", out, "-q"), "mine.csv: not this spec's table (its first line: ")
    assert out.read_bytes() == content


@pytest.mark.parametrize("edit, message", [
    (lambda row: ["99"] + row[1:], ":2: id '99' is not a candidate of this spec (0..7)"),
    (lambda row: ["x"] + row[1:], ":2: id 'x' is not a candidate of this spec"),
    (lambda row: row[:5] + ["bogus"] + row[6:], ":2: status 'bogus' is not a sweep's"),
    (lambda row: row[:6] + ["six"] + row[7:], ":2: proved 'six' is not an integer"),
])
def test_a_row_no_sweep_writes_is_refused_naming_its_line(spec, tmp_path, edit, message):
    lines = _table(spec, tmp_path).splitlines()
    row = next(csv.reader([lines[1]]))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(edit(row))
    text = lines[0] + "\n" + buf.getvalue()
    (tmp_path / "t.csv").write_text(text)
    _one_line_exit_2(_cli("sweep", spec, "-o", tmp_path / "t.csv", "-q"), "t.csv" + message)
    assert (tmp_path / "t.csv").read_text() == text


def test_a_header_cut_by_a_kill_is_an_empty_table(spec, tmp_path):
    full = _table(spec, tmp_path)
    (tmp_path / "t.csv").write_text(full[:9])                 # 'id,atom,s'
    assert _cli("sweep", spec, "-o", tmp_path / "t.csv", "-q")[0] == 0
    assert (tmp_path / "t.csv").read_text() == full


# ---------------------------------------------------------------- outputs checked before anything is proved

@pytest.mark.parametrize("argv, message", [
    (["-o", "{tmp}/no/such/dir/t.csv"], "-o {tmp}/no/such/dir/t.csv: cannot write: no directory"),
    (["-o", "{tmp}"], "-o {tmp}: cannot write: is a directory"),
    (["--emit", "toml", "{tmp}/small.toml"], "--emit toml {tmp}/small.toml: cannot make the directory"),
    (["--emit", "cute", "{tmp}/small.toml/x"], "--emit cute {tmp}/small.toml/x: cannot make the directory"),
    (["--parquet", "{tmp}"], "--parquet {tmp}: cannot write: is a directory"),
    (["--parquet", "{tmp}/no/t.parquet"], "--parquet {tmp}/no/t.parquet: cannot write: no directory"),
])
def test_an_output_that_cannot_be_written_is_one_line_before_proving(spec, tmp_path, monkeypatch, argv, message):
    import symlayout.cli.sweep as cli_sweep
    monkeypatch.setattr(cli_sweep, "find_spec", lambda name: object())     # pyarrow "installed": its path checked
    argv = [a.format(tmp=tmp_path) for a in argv]
    table = tmp_path / "t.csv"
    _one_line_exit_2(_cli("sweep", spec, "-q", *(["-o", table] if "-o" not in argv else []), *argv),
                     message.format(tmp=tmp_path))
    assert not table.exists()                               # nothing proved


def test_parquet_without_pyarrow_is_one_line_before_proving(spec, tmp_path, monkeypatch):
    import symlayout.cli.sweep as cli_sweep
    real = cli_sweep.find_spec
    monkeypatch.setattr(cli_sweep, "find_spec", lambda name: None if name == "pyarrow" else real(name))
    _one_line_exit_2(_cli("sweep", spec, "-q", "-o", tmp_path / "t.csv", "--parquet", tmp_path / "t.parquet"),
                     "needs pyarrow (pip install pyarrow)")
    assert not (tmp_path / "t.csv").exists()


def test_parquet_holds_the_table_typed(spec, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    rc, out, _ = _cli("sweep", spec, "-q", "-o", tmp_path / "t.csv", "--parquet", tmp_path / "t.parquet", "--json")
    assert rc == 0
    t = pq.read_table(tmp_path / "t.parquet")
    assert t.to_pylist() == json.loads(out)["rows"]
    assert str(t.schema.field("pitch").type) == "int64" and str(t.schema.field("coalescing").type) == "string"


def test_json_cells_are_typed_and_an_empty_one_is_null(spec, tmp_path):
    rc, out, _ = _cli("sweep", spec, "-q", "-o", tmp_path / "t.csv", "--json")
    rows = {r["id"]: r for r in json.loads(out)["rows"]}
    assert rc == 0 and rows[1]["status"] == "pruned" and rows[2]["status"] == "legal"
    assert rows[1]["proved"] is None and rows[1]["bank_degree"] is None and rows[1]["smem_bytes"] == 4096
    assert rows[2]["proved"] > 0 and rows[2]["bank_degree"] == 1 and rows[2]["reason"] is None


# ---------------------------------------------------------------- a running Dask scheduler

@pytest.mark.parametrize("address, message", [
    ("notanaddress", "--scheduler notanaddress: no Dask scheduler there: missing port number"),
    ("tcp://127.0.0.1:1", "--scheduler tcp://127.0.0.1:1: no Dask scheduler there: Timed out trying to connect"),
])
def test_a_scheduler_address_with_no_scheduler_is_one_line_exit_2(spec, tmp_path, address, message):
    dask = pytest.importorskip("dask")
    pytest.importorskip("distributed")
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        _one_line_exit_2(_cli("sweep", spec, "-q", "-o", tmp_path / "t.csv", "--scheduler", address), message)


def test_a_running_scheduler_gives_the_serial_table(spec, tmp_path):
    distributed = pytest.importorskip("distributed")
    assert _cli("sweep", spec, "-q", "-o", tmp_path / "serial.csv")[0] == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
        rc, out, err = _cli("sweep", spec, "-q", "-o", tmp_path / "t.csv", "--scheduler", cluster.scheduler_address)
    assert (rc, err) == (0, "") and "8 candidates: 2 legal" in out
    assert (tmp_path / "t.csv").read_bytes() == (tmp_path / "serial.csv").read_bytes()


# ---------------------------------------------------------------- bad specs: one line naming the place

@pytest.mark.parametrize("edit, message", [
    (('smem = "{smem}"', 'smem = "{smme}"'), "small.toml:15: [config.copy.A] smem: {smme} names no variable"),
    (('layout = "(2,2,1)"', 'layout = "({wm},2,1)"'), "small.toml:11: [config.mma] layout: {wm} names no variable"),
    (('"32 * pitch * 2"', '"32 // (pitch - 16)"'),
     "small.toml:7: [constraints] smem_bytes: 32 // (pitch - 16): division by zero (pitch=16)"),
    (("[constraints]", '[derived]\nq = "64 % (pitch - 16)"\n[constraints]'),
     "small.toml:7: [derived] q: 64 % (pitch - 16): division by zero (pitch=16)"),
    (("smem_budget = 2048", "smem_budget = true"), "small.toml:8: [constraints] smem_budget: must be a positive int"),
    (("smem_budget = 2048", 'smem_budget = 2048\nregisters = "pitch"\nmax_registers = true'),
     "small.toml:10: [constraints] max_registers: must be a positive int"),
    (('name = "small"', "name = 3"), "small.toml:1: name must be a string"),
    (("pitch = [16, 64]", "pitch = { min = 16, max = 64, step = 0 }"), "small.toml:5: [space] pitch: step must be"),
])
def test_a_bad_spec_names_the_line_and_key(spec, tmp_path, edit, message):
    assert edit[0] in SPEC
    spec.write_text(SPEC.replace(*edit))
    _one_line_exit_2(_cli("sweep", spec, "-q", "-o", tmp_path / "t.csv"), message)


@pytest.mark.parametrize("pitch", [64, 16])     # a later candidate; the first one, which the warm-up proves
def test_a_constraint_failing_on_a_worker_is_one_line_without_the_workers_traceback(spec, tmp_path, pitch):
    pytest.importorskip("distributed")
    spec.write_text(SPEC.replace('"32 * pitch * 2"', f'"32 // (pitch - {pitch})"'))    # fails for that pitch only
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "symlayout", "sweep", spec, "-q", "-o", tmp_path / "t.csv",
                        "--workers", "2", "--batch", "1"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert (p.returncode, p.stdout) == (2, ""), p.stderr
    assert p.stderr == ("symlayout: error: " + str(spec) + f":7: [constraints] smem_bytes: 32 // (pitch - {pitch}): "
                        f"division by zero (pitch={pitch})\n")


# ---------------------------------------------------------------- exit codes

UNKNOWN = '''name = "unknown"
[space]
timeout = [0.0001, 30]
[config.params]
m = { min = 1, max = 1048576 }
[config.mma]
atom = "SM80_16x8x16_F16F16F16F16_TN"
layout = "(2,2,1)"
[config.copy.A]
atom = "SM75_U32x4_LDSM_N"
type = "half_t"
smem = "Sw<3,3,3> o 0 o (64*m,64):(64,1)"
[config.prove]
properties = ["bank_conflicts"]
timeout_s = "{timeout}"
'''


def test_illegal_and_some_invalid_candidates_exit_0(spec, tmp_path):
    spec.write_text(SPEC.replace('"SM75_U32x4_LDSM_N"]', '"SM75_U32x4_LDSM_NX"]'))
    rc, out, err = _cli("sweep", spec, "-q", "-o", tmp_path / "t.csv")
    assert (rc, err) == (0, "") and "8 candidates: 1 legal, 1 illegal, 0 unknown, 4 pruned, 2 invalid" in out


def test_a_candidate_unknown_exits_3(tmp_path):
    (tmp_path / "unknown.toml").write_text(UNKNOWN)
    rc, out, err = _cli("sweep", tmp_path / "unknown.toml", "-q", "-o", tmp_path / "t.csv")
    assert (rc, err) == (3, "") and "2 candidates: 1 legal, 0 illegal, 1 unknown" in out
    assert "bank_conflicts[A]: unknown: time budget of 0.0001 s spent" in (tmp_path / "t.csv").read_text()


def test_a_template_none_of_whose_candidates_loads_is_one_line_exit_2(spec, tmp_path):
    spec.write_text(SPEC.replace('type = "half_t"', 'type = "half_t"\nbogus = 1'))
    rc, out, err = _cli("sweep", spec, "-q", "-o", tmp_path / "t.csv")
    assert rc == 2 and "4 pruned, 4 invalid" in out and err.count("\n") == 1
    assert err == (f"symlayout: error: {spec}: [config]: no candidate within the budgets is a valid configuration; "
                   f"the first: {spec}:12: candidate 0: [config.copy.A]: unknown key 'bogus' (known: atom, type, "
                   f"smem, align, convert, thr, val, tv, tiler, element)\n")


# ---------------------------------------------------------------- progress

def test_the_bar_gives_the_sweeps_rate_and_the_time_left_from_it_after_a_resume(monkeypatch):
    pytest.importorskip("tqdm")
    import symlayout.cli.sweep as cli_sweep

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    report = cli_sweep._progress()
    report(6000, 9000, 100.0)          # resumed at 5,900: 100 proved in 1 s by this run, 3,000 to go
    assert "6000/9000" in err.getvalue() and "100.0 candidates/s, 00:30 left" in err.getvalue()


def test_sm120s_budget_is_its_own():
    s = loads_spec(SPEC.replace("smem_budget = 2048", 'arch = "sm120"').replace("32 * pitch * 2", "1600 * pitch"))
    assert s.over_budget(s.scope(1))[0] == "smem_bytes 102400 > 101376 (sm120: shared memory per block)"


def test_a_result_that_is_an_input_error_makes_the_candidate_invalid_not_illegal(spec, tmp_path):
    spec.write_text(SPEC + '[config.expect]\nrefuted = ["coalescing"]\n')       # applies to no smem copy
    rc, out, err = _cli("sweep", spec, "-q", "-o", tmp_path / "t.csv")
    assert rc == 2 and "0 legal, 0 illegal, 0 unknown, 4 pruned, 4 invalid" in out
    assert err.endswith("; the first: coalescing: error: [expect] names 'coalescing', which does not apply here\n")
    rows = {r["id"]: r for r in sweep(loads_spec(spec.read_text(), str(spec)), str(tmp_path / "t.csv"))}
    assert rows[0]["refuted"] == 1 and rows[0]["errors"] == 1           # a conflict, but no verdict: the input
    assert rows[0]["status"] == rows[2]["status"] == "invalid"


@pytest.mark.parametrize("name, message", [
    ("status", "[space] status: 'status' is a column of the table"),
    ("smem_bytes", "[space] smem_bytes: 'smem_bytes' is a column of the table"),
    ('"tile-m"', "small.toml:2: [space] tile-m: 'tile-m' is not a name (letters, digits, _)"),
])
def test_a_variable_is_a_name_and_not_a_column_of_the_table(spec, tmp_path, name, message):
    spec.write_text(SPEC.replace("pitch = [16, 64]", f"{name} = [16, 64]").replace("32 * pitch * 2", "1024"))
    _one_line_exit_2(_cli("sweep", spec, "-q", "-o", tmp_path / "t.csv"), message)


def test_the_reserved_names_are_the_tables_own_columns():
    from symlayout.sweep.spec import COLUMNS
    from symlayout.sweep.table import columns
    spec = loads_spec(SPEC.replace("smem_budget = 2048", 'arch = "sm100"\nregisters = "pitch"\nmax_registers = 9\n'
                                   'tmem_columns = "pitch"'))
    assert sorted(set(columns(spec)) - set(spec.names)) == sorted(COLUMNS)


@pytest.mark.parametrize("edit, message", [
    (("[constraints]", '[derived]\npitch = "2 * 8"\n[constraints]'),
     "small.toml:7: [derived] pitch: 'pitch' is a variable"),
    (('smem_bytes = "32 * pitch * 2"', 'smem_bytes = "32 * pitch * 2"\nmax_registers = 64'),
     "small.toml:8: [constraints] max_registers: limits registers, which is not given"),
    (('smem_bytes = "32 * pitch * 2"', ""), "small.toml:8: [constraints] smem_budget: limits smem_bytes, which is not"),
])
def test_a_limit_without_its_amount_and_a_derived_value_shadowing_a_variable_are_errors(spec, tmp_path, edit,
                                                                                         message):
    spec.write_text(SPEC.replace(*edit))
    _one_line_exit_2(_cli("sweep", spec, "-q", "-o", tmp_path / "t.csv"), message)


def test_an_invalid_candidates_reason_names_the_specs_line_and_table(spec, tmp_path):
    spec.write_text(SPEC.replace('"SM75_U32x4_LDSM_N"]', '"SM75_U32x4_LDSM_NX"]'))
    rows = {r["id"]: r for r in sweep(loads_spec(spec.read_text(), "small.toml"), str(tmp_path / "t.csv"))}
    assert rows[4]["reason"] == ("small.toml:13: candidate 4: [config.copy.A] atom: unknown copy operation "
                                 "'SM75_U32x4_LDSM_NX'; did you mean 'SM75_U32x4_LDSM_N'?")


# ---------------------------------------------------------------- a real sweep killed and resumed

def _mid_space(tmp_path) -> Path:
    """640 candidates of the bundled SM80 GEMM space (2x2 warps, 64/128 tiles, 2-3 stages)."""
    text = (ROOT / "examples" / "sweep" / "sm80_gemm.toml").read_text()
    for a, b in [("tile_m = [64, 128, 256]", "tile_m = [64, 128]"), ("tile_n = [64, 128, 256]", "tile_n = [64, 128]"),
                 ("warps = [{ wm = 2, wn = 2 }, { wm = 4, wn = 2 }, { wm = 2, wn = 4 }]",
                  "warps = [{ wm = 2, wn = 2 }]"),
                 ("stages = { min = 2, max = 5 }", "stages = { min = 2, max = 3 }")]:
        assert a in text
        text = text.replace(a, b)
    (tmp_path / "mid.toml").write_text(text)
    return tmp_path / "mid.toml"


def _rows_in(path: Path) -> int:
    return max(0, path.read_bytes().count(b"\n") - 1) if path.exists() else 0


@pytest.mark.parametrize("sig", ["SIGINT", "SIGKILL"])
def test_a_sweep_process_killed_mid_run_resumes_without_reproving(tmp_path, sig):
    import signal
    import time
    spec = _mid_space(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "symlayout", "sweep", str(spec), "--batch", "8"]
    assert subprocess.run([*cmd, "-q", "-o", "fresh.csv"], cwd=tmp_path, env=env, timeout=600).returncode == 0
    p = subprocess.Popen([*cmd, "-q", "-o", "t.csv"], cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while _rows_in(tmp_path / "t.csv") < 40 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert p.poll() is None, "the sweep ended before it could be killed"
    p.send_signal(getattr(signal, sig))
    _, err = p.communicate(timeout=120)
    assert p.returncode == (130 if sig == "SIGINT" else -9), err
    done = _rows_in(tmp_path / "t.csv")             # whole rows kept (a row cut by SIGKILL is not counted)
    assert 40 <= done < 640
    again = subprocess.run([*cmd, "-o", "t.csv"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    first = again.stderr.splitlines()[0]            # 'sweep: N/640 candidates, ...' after its first batch:
    assert first.startswith(f"sweep: {done + 8}/640 candidates")     # the rows kept were not proved again
    assert (tmp_path / "t.csv").read_bytes() == (tmp_path / "fresh.csv").read_bytes()


def test_a_spec_edited_in_its_comments_and_spacing_still_resumes(spec, tmp_path):
    assert _cli("sweep", spec, "-q", "-o", tmp_path / "t.csv")[0] == 0
    spec.write_text("# the space of issue 32\n" + SPEC.replace("pitch = [16, 64]", "pitch = [ 16,64 ]   # bytes"))
    rc, out, err = _cli("sweep", spec, "-o", tmp_path / "t.csv")
    assert (rc, err) == (0, "") and "8 candidates" in out      # nothing proved again: no progress line
    spec.write_text(SPEC.replace("pitch = [16, 64]", "pitch = [16, 32]"))
    _one_line_exit_2(_cli("sweep", spec, "-q", "-o", tmp_path / "t.csv"), "written by another spec")


@pytest.mark.parametrize("target", ["spec", "csv"])
def test_fresh_removes_a_sweep_table_only(spec, tmp_path, target):
    other = spec if target == "spec" else tmp_path / "mine.csv"
    if target == "csv":
        other.write_text("name,value\nx,1\n")
    before = other.read_bytes()
    _one_line_exit_2(_cli("sweep", spec, "-q", "-o", other, "--fresh"),
                     "--fresh removes a sweep's table, and this is none (its first line: ")
    assert other.read_bytes() == before
    assert _cli("sweep", spec, "-q", "-o", tmp_path / "t.csv")[0] == 0
    assert _cli("sweep", spec, "-q", "-o", tmp_path / "t.csv", "--fresh")[0] == 0       # a table: removed, swept


def test_workers_and_a_scheduler_are_one_or_the_other(spec, tmp_path):
    _one_line_exit_2(_cli("sweep", spec, "-q", "-o", tmp_path / "t.csv", "--workers", 2, "--scheduler", "tcp://x:1"),
                     "give --workers N (a LocalCluster) or --scheduler ADDRESS (a running cluster), not both")
    assert not (tmp_path / "t.csv").exists()
