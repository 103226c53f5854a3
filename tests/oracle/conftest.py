"""The oracle tests import their helpers (``cute_oracle``, ``oracle_campaign``, ``oracle_compare``) from
this folder.  Tests marked ``slow`` (they run g++ on CuTe) follow tests/conftest.py: ``-m slow`` or
``SYMLAYOUT_SLOW=1``."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
