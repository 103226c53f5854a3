"""pytest configuration of the repository (the README's test command): doctests are collected from
``symlayout/`` (``--doctest-modules`` in pyproject.toml); the helper scripts beside the tests and the
proofs (generators, oracles) are imported by the tests that need them, never collected."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path, config):
    p = Path(collection_path)
    if p.suffix != ".py" or p.name == "conftest.py" or p.name.startswith("test_"):
        return None
    if (ROOT / "symlayout") in p.parents:
        return None
    return True
