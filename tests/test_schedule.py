"""symlayout/prove/schedule.py: files proved side by side (each worker reads and proves whole files) and
``--shard I/N`` give the reports one process gives; every file is in exactly one shard."""
from __future__ import annotations

import json
import os
from pathlib import Path

from symlayout.cli import main
from symlayout.prove import schedule
from symlayout.prove.schedule import file_cost, list_files, prove_files, shard_files

PROOFS = Path(__file__).resolve().parents[1] / "proofs"


def _doc(capsys, argv):
    rc = main(argv)
    doc = json.loads(capsys.readouterr().out)
    for c in doc["configs"]:
        for r in c["results"]:
            r.pop("seconds", None)
    return rc, doc


def _some_files(tmp_path):
    """A directory of a few configurations, one unreadable file and one TOML file that is not a configuration."""
    d = tmp_path / "proofs"
    d.mkdir()
    for sub in ("seeds", "pitfalls", "parametric"):
        for f in sorted((PROOFS / sub).glob("*.toml"))[:3]:
            (d / f"{sub}_{f.name}").write_text(f.read_text())
    (d / "broken.toml").write_text("[mma]\n")
    (d / "pyproject.toml").write_text('[project]\nname = "x"\n')
    return d


def test_workers_and_shards_give_the_serial_reports(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(schedule, "POOL_MIN_COST", 0.0)        # (workers even for this little work)
    d = _some_files(tmp_path)
    rc1, serial = _doc(capsys, ["prove", "--json", "--jobs", "1", str(d)])
    assert rc1 == 2 and serial["summary"]["errors"] == 1 and serial["skipped"]
    assert any(r["status"] == "refuted" for c in serial["configs"] for r in c["results"])
    rc2, par = _doc(capsys, ["prove", "--json", "--jobs", "2", str(d)])
    assert (rc2, par) == (rc1, serial)
    seen, skipped = [], []
    for i in (1, 2, 3):
        _rc, part = _doc(capsys, ["prove", "--json", "--jobs", "2", "--shard", f"{i}/3", str(d)])
        seen += part["configs"]
        skipped += part.get("skipped", [])        # (a file is found not to be a configuration in its shard)
    assert sorted(seen, key=lambda c: c["path"]) == sorted(serial["configs"], key=lambda c: c["path"])
    assert skipped == serial["skipped"]


def test_a_shard_that_is_out_of_range_is_a_usage_error(capsys):
    assert main(["prove", "--shard", "3/2", str(PROOFS / "seeds")]) == 2
    assert "1 <= I <= N" in capsys.readouterr().err
    assert main(["prove", "--shard", "x", str(PROOFS / "seeds")]) == 2


def test_shards_partition_the_files_and_balance_their_cost():
    files = [p for p, _ in list_files([PROOFS])[0]]
    parts = [shard_files(files, i, 4) for i in range(1, 5)]
    assert sorted(f for p in parts for f in p) == sorted(files)
    assert all(p == [f for f in files if f in set(p)] for p in parts)        # (each in the given order)
    costs = [sum(file_cost(f) for f in p) for p in parts]
    assert max(costs) - min(costs) <= max(file_cost(f) for f in files)


def test_files_are_listed_without_being_read(tmp_path, monkeypatch):
    monkeypatch.setattr(schedule, "POOL_MIN_COST", 0.0)
    d = _some_files(tmp_path)
    files, errors = list_files([d, tmp_path / "missing.toml", d / "broken.toml"])
    assert [Path(p).name for p, e in files if e] == ["broken.toml"]
    assert sum(1 for _p, e in files if not e) == len(list(d.glob("*.toml")))
    assert errors == [(str(tmp_path / "missing.toml"), f"{tmp_path / 'missing.toml'}: no such file or directory")]
    answers = prove_files(files, jobs=2)
    kinds = [a[0] for a in answers]
    assert kinds.count("skip") == 1 and kinds.count("error") == 2        # (broken.toml twice: found and named)


def _in_a_worker(task):
    """A pool's task that only says which process ran it (with a task raising in the workers, a CI run hung:
    the parent waiting in ``Pool._terminate_pool`` to join one of the pool's threads, py-spy)."""
    return task[0], ("worker", os.getpid())


def test_little_work_stays_in_this_process(tmp_path, monkeypatch):
    d = _some_files(tmp_path)
    files = [f for f in list_files([d])[0] if "seeds" in f[0]]
    assert sum(file_cost(p) for p, _ in files) < schedule.POOL_MIN_COST
    monkeypatch.setattr(schedule, "_pool_file", _in_a_worker)
    assert [a[0] for a in prove_files(files, jobs=2)] == ["report"] * len(files)
    monkeypatch.setattr(schedule, "POOL_MIN_COST", 0.0)
    answers = prove_files(files, jobs=2)
    assert {a[0] for a in answers} == {"worker"} and os.getpid() not in {a[1] for a in answers}, \
        "the pool was not used"
