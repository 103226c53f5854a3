"""Issue 26 items 5, 6, 9, 10: no crash and no lost result in ``prove DIR``, the API from threads,
SIGTERM, and the pytest plugin.

Each test drives the real entry point (``symlayout.cli.main``, a ``python -m symlayout``
subprocess, ``pytest`` on a ``proofs/`` folder, ``symlayout.prove`` from threads).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_run import run, write

REPO = Path(__file__).resolve().parents[1]
PROOFS = REPO / "proofs"
MMA = '[mma]\natom = "SM80_16x8x16_F16F16F16F16_TN"\nlayout = "(2,2,1)"\n'
COPY_A = '[copy.A]\natom = "SM75_U32x2_LDSM_N"\ntype = "half_t"\nsmem = "(32,16):(16,1)"\n'
GOOD = MMA + COPY_A + '[expect]\nrefuted = ["bank_conflicts"]\n'
REFUTED = MMA + COPY_A                  # bank_conflicts[A] refuted, not expected: exit 1


def edited(proof: str, old: str, new: str) -> str:
    """A configuration of proofs/ with one spelling replaced (the first occurrence)."""
    text = (PROOFS / proof).read_text()
    assert old in text
    return text.replace(old, new, 1)


def configs(doc) -> dict:
    return {Path(c["path"]).name: c for c in doc["configs"]}


# ---------------------------------------------------------------- 6. prove DIR: every file reported in place


BAD_SWIZZLE = ("hopper/rs_a_ldsm_x4_sw128.toml", "Sw<3,4,3> o smem_ptr", "Sw<-1,4,3> o smem_ptr")
NEGATIVE_VAL = ("sm80_datapath/fa2_fwd_hd64_qk.toml", 'val = "(1,8)"', 'val = "(1,-8)"')


@pytest.mark.parametrize("bad", [BAD_SWIZZLE, NEGATIVE_VAL], ids=["smem_swizzle", "negative_val"])
def test_prove_dir_reports_a_bad_file_in_place(bad, tmp_path, capsys):
    write(tmp_path, "a_good.toml", GOOD)
    write(tmp_path, "b_bad.toml", edited(*bad))
    write(tmp_path, "c_good.toml", GOOD)
    rc, out, err = run(capsys, "prove", "--json", "--jobs", "1", tmp_path)
    doc = configs(json.loads(out))
    assert rc == 2 and list(doc) == ["a_good.toml", "b_bad.toml", "c_good.toml"]
    assert doc["a_good.toml"]["results"] and doc["c_good.toml"]["results"]
    assert doc["b_bad.toml"]["error"].startswith(str(tmp_path / "b_bad.toml") + ":")
    assert "b_bad.toml" in err and "Traceback" not in err
    rc, out, _ = run(capsys, "prove", "--jobs", "1", tmp_path)
    assert rc == 2 and re.search(r"^ERROR +\S*b_bad.toml(:\d+)?: ", out, re.M) and "1 errors" in out


def test_prove_dir_internal_error_in_one_file_is_that_files_result(tmp_path, capsys, monkeypatch):
    import symlayout.config as config
    write(tmp_path, "a_good.toml", GOOD)
    write(tmp_path, "b_boom.toml", GOOD)
    load = config.load_config

    def boom(path):
        if str(path).endswith("b_boom.toml"):
            raise MemoryError("simulated")
        return load(path)
    monkeypatch.setattr(config, "load_config", boom)
    rc, out, err = run(capsys, "prove", "--json", "--jobs", "1", tmp_path)
    doc = configs(json.loads(out))
    assert rc == 4 and doc["a_good.toml"]["results"] and doc["a_good.toml"]["ok"]
    assert doc["b_boom.toml"]["internal"] is True
    assert "b_boom.toml: internal error (a bug in symlayout): MemoryError: simulated" in doc["b_boom.toml"]["error"]
    rc, out, _ = run(capsys, "prove", "--jobs", "1", tmp_path)
    assert rc == 4 and "a_good.toml" in out and "MemoryError" in out


def test_prove_dir_reports_dangling_links_and_fifos_without_reading_them(tmp_path, capsys):
    write(tmp_path, "a_good.toml", GOOD)
    os.symlink(tmp_path / "nowhere.toml", tmp_path / "b_dangling.toml")
    os.mkfifo(tmp_path / "c_fifo.toml")              # opening it for reading would block forever
    rc, out, err = run(capsys, "prove", "--json", "--jobs", "1", tmp_path)
    doc = configs(json.loads(out))
    assert rc == 2 and list(doc) == ["a_good.toml", "b_dangling.toml", "c_fifo.toml"]
    assert "dangling symbolic link" in doc["b_dangling.toml"]["error"]
    assert "not a regular file" in doc["c_fifo.toml"]["error"]
    rc, out, err = run(capsys, "prove", tmp_path / "c_fifo.toml", tmp_path / "a_good.toml")   # named: the same
    assert rc == 2 and "c_fifo.toml: not a regular file" in out + err


def test_prove_dir_reports_an_unreadable_subdirectory(tmp_path, capsys, monkeypatch):
    write(tmp_path, "a_good.toml", GOOD)
    sub = tmp_path / "b_locked"
    write(sub, "refuted.toml", REFUTED)
    sub.chmod(0)
    try:
        if os.access(sub, os.R_OK):                   # (root reads it anyway: refuse the listing here)
            scandir = os.scandir
            monkeypatch.setattr(os, "scandir", lambda d: scandir(d) if Path(d) != sub else
                                (_ for _ in ()).throw(PermissionError(13, "Permission denied")))
        rc, out, err = run(capsys, "prove", "--json", "--jobs", "1", tmp_path)
    finally:
        sub.chmod(0o755)
    doc = configs(json.loads(out))
    assert rc == 2 and doc["a_good.toml"]["ok"]
    assert doc["b_locked"]["error"] == f"{sub}: cannot read this directory: Permission denied"


def test_prove_dir_a_path_over_the_os_limit_is_that_paths_error(tmp_path, capsys):
    write(tmp_path, "a_good.toml", GOOD)
    deep, n = "deep", 0
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        os.mkdir(deep)
        os.chdir(deep)
        while n * 201 < 4200:                     # built relative to the cwd: the full path is over PATH_MAX
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
            n += 1
        Path("refuted.toml").write_text(REFUTED)
    finally:
        os.chdir(cwd)
    try:
        rc, out, err = run(capsys, "prove", "--json", "--jobs", "1", tmp_path)
        doc = json.loads(out)
        good = configs(doc)["a_good.toml"]
        assert rc == 2 and good["ok"] and good["results"]
        errors = [c["error"] for c in doc["configs"] if c.get("error")]
        assert len(errors) == 1 and errors[0].endswith(": cannot read this directory: File name too long")
    finally:
        shutil.rmtree(tmp_path / deep, ignore_errors=True)


def test_prove_json_document_even_when_nothing_is_a_configuration(tmp_path, capsys):
    write(tmp_path, "pyproject.toml", '[project]\nname = "kernel"\n')
    rc, out, err = run(capsys, "prove", "--json", tmp_path)
    doc = json.loads(out)
    assert rc == 2 and "no configuration found" in doc["configs"][0]["error"]
    rc, out, err = run(capsys, "prove", tmp_path)
    assert rc == 2 and out == "" and "no configuration found" in err


# ---------------------------------------------------------------- 5. the API from several threads

THREADS = r'''
import sys, threading
import symlayout
files = sys.argv[1:]
def verdicts(f):
    return [(r.property, r.operand, r.status, r.checked) for r in symlayout.prove(f).results]
threaded, errors = {}, []
def work(i):
    try:
        for k in range(len(files)):
            f = files[(i + k) % len(files)]
            threaded.setdefault(f, []).append(verdicts(f))
    except BaseException as e:
        errors.append(repr(e))
ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]
[t.start() for t in ts]
[t.join() for t in ts]
serial = {f: verdicts(f) for f in files}
print(errors, all(v == [serial[f]] * 6 for f, v in threaded.items()), len(threaded),
      sum(len(v) for v in serial.values()))
'''


def test_api_proves_parametric_configurations_from_threads_as_serially():
    files = sorted(str(p) for p in (PROOFS / "parametric").glob("*.toml"))
    assert len(files) >= 4
    r = subprocess.run([sys.executable, "-c", THREADS, *files], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr[-2000:]            # (without the lock: a Z3 assertion aborts it)
    errors, same, n_files, n_results = r.stdout.split()[-4:]
    assert (errors, same, int(n_files)) == ("[]", "True", len(files)) and int(n_results) > 10


FORK_WHILE_HELD = r'''
import sys, threading, time
import symlayout
from symlayout.prove.engine import prove_many
files = sys.argv[1:]
t = threading.Thread(target=lambda: [symlayout.prove(files[0]) for _ in range(3)])
t.start()
time.sleep(0.3)                               # (the thread holds the lock while the workers fork)
print([len(r.results) for r in prove_many([symlayout.load(f) for f in files], jobs=2)])
t.join()
'''


def test_workers_forked_while_a_thread_proves_do_not_deadlock():
    files = sorted(str(p) for p in (PROOFS / "parametric").glob("*.toml"))
    r = subprocess.run([sys.executable, "-c", FORK_WHILE_HELD, *files], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})   # (before: a deadlock)
    assert r.returncode == 0 and len(json.loads(r.stdout)) == len(files), r.stderr[-2000:]


# ---------------------------------------------------------------- 9. SIGTERM stops the workers


def children(pid: int) -> list:
    """The live child processes of ``pid`` (from /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] == str(pid) and fields[0] != "Z":
            out.append(int(d.name))
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("how,code,message", [("SIGTERM", 143, "terminated"), ("SIGINT", 130, "interrupted")])
def test_signals_stop_the_workers_without_tracebacks(how, code, message, tmp_path):
    """``kill PID`` (SIGTERM to the parent alone) and Ctrl-C (SIGINT to the whole process group)."""
    for i in range(15):                                   # parametric files: Z3 queries of a second or more
        for f in (PROOFS / "parametric").glob("*.toml"):
            shutil.copy(f, tmp_path / f"{f.stem}_{i}.toml")
    p = subprocess.Popen([sys.executable, "-m", "symlayout", "prove", str(tmp_path), "--jobs", "2", "-q"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        workers = []
        while len(workers) < 2 and p.poll() is None:
            time.sleep(0.05)
            workers = children(p.pid)
        time.sleep(0.5)                                   # (inside their Z3 queries)
        assert p.poll() is None, "finished before the signal"
        if how == "SIGTERM":
            p.send_signal(signal.SIGTERM)
        else:
            os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=120)
    finally:
        p.kill()
    assert p.returncode == code and err == f"symlayout: {message}\n"
    assert [w for w in workers if Path(f"/proc/{w}").exists()] == []


# ---------------------------------------------------------------- 10. the pytest plugin: items = results

BOOM = '''
import symlayout.config as config
_load = config.load_config
def load_config(path):
    if str(path).endswith("boom.toml"):
        raise MemoryError("simulated")
    return _load(path)
config.load_config = load_config
'''


def _pytest(cwd, *args):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def test_pytest_a_non_symlayout_error_is_one_error_item_and_the_others_run(tmp_path):
    write(tmp_path, "conftest.py", BOOM)
    write(tmp_path, "proofs/a_good.toml", GOOD)
    write(tmp_path, "proofs/boom.toml", GOOD)
    write(tmp_path, "proofs/c_good.toml", GOOD)
    p = _pytest(tmp_path, "proofs")
    assert "ERROR proofs/boom.toml::config" in p.stdout and "MemoryError: simulated" in p.stdout, p.stdout
    assert re.search(r"\b14 passed, 1 error\b", p.stdout), p.stdout


def prove_names(path: Path) -> set:
    """The names ``symlayout prove --json`` gives the results of a file."""
    r = subprocess.run([sys.executable, "-m", "symlayout", "prove", "--json", str(path)], capture_output=True,
                       text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    return {x["property"] + (f"[{x['operand']}]" if x.get("operand") else "")
            for x in json.loads(r.stdout)["configs"][0]["results"]}


def test_pytest_items_are_the_results_one_to_one(tmp_path):
    proofs = tmp_path / "proofs"
    write(proofs, "mismatch.toml", edited("hopper/pitfalls/tma_swizzle_mismatch.toml", 'refuted = ["tma[A]"]',
                                          "refuted = []"))               # tma[A] refuted, unexpectedly
    write(proofs, "overlap.toml", (PROOFS / "hopper/pitfalls/overlapping_stages.toml").read_text())
    p = _pytest(tmp_path, "proofs", "--collect-only")
    items = [l for l in p.stdout.splitlines() if "::" in l]
    for f in ("mismatch.toml", "overlap.toml"):
        mine = [l.split("::", 1)[1] for l in items if l.startswith(f"proofs/{f}::")]
        assert sorted(mine) == sorted(prove_names(proofs / f))
    assert "proofs/mismatch.toml::tma[A]" in items and "proofs/overlap.toml::exactly_once[stages.A]" in items
    p = _pytest(tmp_path, "proofs")
    assert p.stdout.count("FAILED") == 1 and "FAILED proofs/mismatch.toml::tma[A]" in p.stdout, p.stdout
    k = _pytest(tmp_path, "proofs", "-k", "tma")
    n_tma = sum("tma" in l.split("::", 1)[1] for l in items)           # tma[A] of both files
    assert n_tma == 2 and f"1 failed, 1 passed, {len(items) - 2} deselected" in k.stdout, k.stdout


COUNT = '''
import os
import symlayout.prove.schedule as schedule
_prove_file = schedule.prove_file
def prove_file(path, *a, **kw):
    with open(os.environ["PROVE_LOG"], "a") as f:
        f.write(os.path.basename(path) + "\\n")
    return _prove_file(path, *a, **kw)
schedule.prove_file = prove_file
'''


def test_pytest_xdist_proves_each_file_once_with_the_items_of_one_process(tmp_path):
    pytest.importorskip("xdist")
    write(tmp_path, "conftest.py", COUNT)
    (tmp_path / "proofs").mkdir()
    for f in ("pitfalls/k64_unswizzled.toml", "hopper/pitfalls/overlapping_stages.toml", "seeds/seed_000_A_x2.toml"):
        shutil.copy(PROOFS / f, tmp_path / "proofs")
    runs = {}
    for n in ("0", "2"):
        log = tmp_path / f"log{n}"
        os.environ["PROVE_LOG"] = str(log)
        try:
            p = _pytest(tmp_path, "proofs", "-n", n, "-rA")
        finally:
            del os.environ["PROVE_LOG"]
        runs[n] = sorted(l for l in p.stdout.splitlines() if l.startswith(("PASSED", "FAILED", "ERROR")))
        assert sorted(log.read_text().split()) == sorted(p.name for p in (tmp_path / "proofs").iterdir())
    assert runs["0"] == runs["2"] and len(runs["0"]) > 30


def test_one_proving_thread_beside_idle_threads_is_not_collected_per_call(monkeypatch):
    """A pytest-xdist worker or a notebook has I/O threads that never prove: the Z3 lock then neither pauses the
    collector nor collects the whole heap per call (that made the suite 2x slower); a second thread that comes to
    the lock turns both on."""
    import gc
    import threading
    from symlayout.algebra import z3lock
    monkeypatch.setattr(z3lock, "_users", set())
    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    stop, entered = threading.Event(), threading.Event()
    idle = threading.Thread(target=stop.wait)
    idle.start()
    try:
        z3lock.serialized(lambda: None)()
        assert calls == [] and gc.isenabled()
        prover = threading.Thread(target=lambda: (z3lock.serialized(entered.set)(), stop.wait()))
        prover.start()
        entered.wait()
        calls.clear()
        z3lock.serialized(lambda: None)()
        assert len(calls) == 1 and gc.isenabled()
    finally:
        stop.set()
        idle.join()
        prover.join()
