"""The oracle tests import their helpers (``cute_oracle``, ``oracle_campaign``, ``oracle_compare``) from
this folder; tests marked ``slow`` (the ones that run g++ on CuTe) only run when selected with
``-m slow``."""
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def pytest_collection_modifyitems(config, items):
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow (compiles CuTe C++): run with -m slow")
    for item in items:
        if "slow" in item.keywords and Path(str(item.fspath)).resolve().is_relative_to(HERE):
            item.add_marker(skip)
