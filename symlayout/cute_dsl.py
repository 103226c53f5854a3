"""``symlayout.cute_dsl``: the public name of the CuTe DSL front end, :mod:`symlayout.frontends.cute_dsl`.

Kernel scripts and tests write ``from symlayout.cute_dsl import DslConfig, trace``
(docs/frontends.md); the front end itself lives with the C++ one in
:mod:`symlayout.frontends`.  This module re-exports its public names.
"""
from __future__ import annotations

from .frontends.cute_dsl import (DslConfig, DslError, DslReport, copy_name, dtype_name, import_dsl, mma_name,
                                 trace)

__all__ = ["DslError", "DslConfig", "DslReport", "mma_name", "copy_name", "dtype_name", "import_dsl", "trace"]
