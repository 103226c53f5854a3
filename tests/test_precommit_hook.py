"""The pre-commit hook (``.pre-commit-hooks.yaml``): its entry is the package's console script, its
``files`` pattern picks configuration folders (never ``pyproject.toml``), and its command, run as pre-commit
runs it (entry + args + the matching file names), passes on the repository's proofs and fails on a
configuration refuted unexpectedly.  ``pre-commit try-repo`` runs when pre-commit is installed and can
build the hook's environment (it may need the network)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from symlayout.config import load_config

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / ".pre-commit-hooks.yaml"

#: a configuration whose bank conflict is not expected: ``prove`` exits 1 on it
REFUTED = '''
[mma]
atom = "SM80_16x8x16_F16F16F16F16_TN"
layout = "(2,2,1)"
[copy.A]
atom = "SM75_U32x2_LDSM_N"
type = "half_t"
smem = "(32,16):(16,1)"
'''
#: cheap configurations of the repository the hook is run on
GOOD = ["proofs/seeds/seed_000_A_x2.toml", "proofs/seeds/seed_001_B_x1.toml"]


def _hooks() -> list[dict]:
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load(HOOKS.read_text())
    assert isinstance(hooks, list) and hooks
    return hooks


def _hook(hook_id: str) -> dict:
    return next(h for h in _hooks() if h["id"] == hook_id)


def _env() -> dict:
    """The environment with this checkout first on the import path (the tests' copy of the package)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _command(hook: dict, files: list[str]) -> list[str]:
    """The hook's command line as pre-commit builds it, the console script ``symlayout`` run as
    ``python -m symlayout`` (the same ``symlayout.cli:main``, test_entries_are_console_scripts)."""
    entry = hook["entry"].split()
    return [sys.executable, "-m", "symlayout", *entry[1:], *hook.get("args", []), *files]


def test_hooks_are_well_formed():
    for h in _hooks():
        assert {"id", "name", "entry", "language"} <= set(h), h
        assert h["language"] == "python"
        assert h.get("pass_filenames", True) is True
        re.compile(h["files"])


def test_entries_are_console_scripts():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for h in _hooks():
        assert h["entry"].split()[0] in scripts, h["entry"]
    assert scripts["symlayout"] == "symlayout.cli:main"
    assert "from .cli import main" in (ROOT / "symlayout" / "__main__.py").read_text()


@pytest.mark.parametrize("path, picked", [
    ("proofs/seeds/seed_000_A_x2.toml", True),
    ("kernels/gemm/proof/tile_128x128.toml", True),
    ("proofs/grid/generate.py", False),
    ("pyproject.toml", False),
    ("ruff.toml", False),
    ("examples/sweep/sm80_gemm.toml", False),       # a sweep space, not a configuration
    ("myproofs/a.toml", False),
])
def test_files_pattern(path, picked):
    assert bool(re.search(_hook("symlayout-prove")["files"], path)) is picked


def test_every_picked_file_of_this_repository_is_a_configuration():
    """Run on this repository with the default pattern, the hook hands ``prove`` only configurations: each
    file it picks loads (prove would exit 2 on any other TOML, e.g. a sweep space under examples/)."""
    pattern = re.compile(_hook("symlayout-prove")["files"])
    picked = [p for p in ROOT.rglob("*.toml") if pattern.search(p.relative_to(ROOT).as_posix())]
    assert picked and all(p.relative_to(ROOT).parts[0] == "proofs" for p in picked)
    for p in picked:
        load_config(p)


def test_hook_passes_on_proofs():
    hook = _hook("symlayout-prove")
    assert all(re.search(hook["files"], f) for f in GOOD)
    r = subprocess.run(_command(hook, GOOD), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_hook_fails_on_an_unexpected_refutation(tmp_path):
    hook = _hook("symlayout-prove")
    bad = tmp_path / "proofs" / "seed_refuted.toml"
    bad.parent.mkdir()
    bad.write_text(REFUTED)
    files = [str(ROOT / GOOD[0]), "proofs/seed_refuted.toml"]
    assert re.search(hook["files"], files[1])
    r = subprocess.run(_command(hook, files), cwd=tmp_path, env=_env(), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "bank_conflicts[A]" in r.stdout


#: pre-commit's failures to build the hook's environment offline
OFFLINE = re.compile(r"Could not find a version|No matching distribution|Failed to establish|NewConnectionError|"
                     r"Temporary failure in name resolution|Network is unreachable|ConnectionError|ProxyError",
                     re.I)


def test_pre_commit_try_repo(tmp_path):
    """``pre-commit try-repo`` of this checkout in a fresh git repository holding one passing and one
    unexpectedly refuted configuration: the hook fails and names the refutation."""
    exe = shutil.which("pre-commit")
    if exe is None:
        pytest.skip("pre-commit is not installed")
    repo = tmp_path / "kernel_project"
    (repo / "proofs").mkdir(parents=True)
    shutil.copy(ROOT / GOOD[0], repo / "proofs" / "good.toml")
    (repo / "proofs" / "bad.toml").write_text(REFUTED)
    (repo / "pyproject.toml").write_text('[project]\nname = "kernel_project"\n')
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "configs"], cwd=repo, check=True)
    env = {**_env(), "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    r = subprocess.run([exe, "try-repo", str(ROOT), "symlayout-prove", "--all-files", "--verbose"], cwd=repo,
                       env=env, capture_output=True, text=True, timeout=900)
    out = r.stdout + r.stderr
    if r.returncode != 0 and OFFLINE.search(out):
        pytest.skip("pre-commit could not build the hook's environment (no network)")
    assert r.returncode == 1, out
    assert "bank_conflicts[A]" in out and "UNMET" in out
