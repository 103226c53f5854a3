"""``python -m symlayout.conformance FILE.jsonl...``: see :mod:`symlayout.conformance.runner`."""
import sys

from .runner import main

sys.exit(main())
