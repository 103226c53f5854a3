"""Shared test fixtures: where ``shared/`` (conformance cases, seeds, reference) lives."""
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path | None:
    """``$SYMLAYOUT_SHARED`` or the ``shared/`` folder beside the repository."""
    env = os.environ.get("SYMLAYOUT_SHARED")
    for p in ([Path(env)] if env else []) + [REPO.parent / "shared", REPO / "shared"]:
        if (p / "conformance").is_dir():
            return p
    return None


@pytest.fixture(scope="session")
def shared():
    p = shared_dir()
    if p is None:
        pytest.skip("../shared (conformance cases, seeds) is not present; set SYMLAYOUT_SHARED")
    return p


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` (larger property campaigns) run only when asked: ``-m slow`` or ``SYMLAYOUT_SLOW=1``."""
    if "slow" in (config.getoption("-m") or "") or os.environ.get("SYMLAYOUT_SLOW"):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow (or SYMLAYOUT_SLOW=1)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    """With ``$SYMLAYOUT_DSL_SITE`` and pytest-xdist, a worker sends a CuTe DSL warning (its category a class
    of the ``cutlass`` package) to the controller, which imports that class to show it: make the DSL
    importable in the controller too, or the run dies with an INTERNALERROR."""
    if os.environ.get("SYMLAYOUT_DSL_SITE") and not hasattr(config, "workerinput"):
        from symlayout.frontends.cute_dsl import DslError, import_dsl
        try:
            import_dsl()
        except DslError:
            pass
