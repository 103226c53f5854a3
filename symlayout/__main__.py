"""``python -m symlayout ...`` is the ``symlayout`` command (:mod:`symlayout.cli`)."""
import sys

from .cli import main

sys.exit(main())
