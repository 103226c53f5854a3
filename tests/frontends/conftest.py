"""Fixtures of the front-end tests: third-party headers located at test time, never committed.

* CuTe/CUTLASS headers: the ``nvidia-cutlass`` package (``cutlass_library``) or
  ``$SYMLAYOUT_CUTE_SITE`` (a ``pip install --target`` directory holding it).
* flash-attention 2's ``kernel_traits.h``: ``$SYMLAYOUT_FLASH_ATTN``, a
  flash-attention source tree, its ``csrc/flash_attn/src`` directory, or the
  ``flash_attn-*.tar.gz`` sdist from PyPI.
* CUTLASS's ``test/unit/gemm/device/default_gemm_configuration.hpp`` (not in the
  wheel): ``$SYMLAYOUT_CUTLASS_SRC``, a CUTLASS source tree.
* The CuTe DSL: ``import cutlass.cute`` (``nvidia-cutlass-dsl``), or a
  ``pip install --target`` directory in ``$SYMLAYOUT_DSL_SITE``.

Tests marked ``slow`` (compiles of whole traits headers) run only with ``-m slow``.
"""
from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

FA2_TRAITS = "csrc/flash_attn/src/kernel_traits.h"
CUTLASS_DEFAULT_CONFIG = "test/unit/gemm/device/default_gemm_configuration.hpp"


def pytest_collection_modifyitems(config, items):
    if "slow" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="slow (a whole traits header compiled): run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cute_headers():
    from symlayout.frontends.cute_cpp.probe import cutlass_include_dirs, find_compiler, ExtractError
    cutlass, _ = cutlass_include_dirs()
    if not cutlass:
        pytest.skip("CuTe headers not found: pip install nvidia-cutlass or set SYMLAYOUT_CUTE_SITE")
    try:
        find_compiler()
    except ExtractError as e:
        pytest.skip(str(e))
    return cutlass


@pytest.fixture(scope="session")
def fa2_traits_header(tmp_path_factory):
    env = os.environ.get("SYMLAYOUT_FLASH_ATTN")
    if not env:
        pytest.skip("set SYMLAYOUT_FLASH_ATTN to a flash-attention source tree or its PyPI sdist (flash_attn-*.tar.gz)")
    p = Path(env)
    for cand in (p / FA2_TRAITS, p / "kernel_traits.h"):
        if cand.is_file():
            return cand
    if p.is_file() and p.name.endswith((".tar.gz", ".tgz")):
        out = tmp_path_factory.mktemp("flash_attn")
        with tarfile.open(p) as tf:
            for m in tf.getmembers():
                if m.isfile() and m.name.endswith(FA2_TRAITS):
                    m.name = "kernel_traits.h"
                    tf.extract(m, out, filter="data")
                    return out / "kernel_traits.h"
    pytest.skip(f"SYMLAYOUT_FLASH_ATTN={env}: no {FA2_TRAITS} there")


@pytest.fixture(scope="session")
def cutlass_default_config_header():
    env = os.environ.get("SYMLAYOUT_CUTLASS_SRC")
    if not env:
        pytest.skip("set SYMLAYOUT_CUTLASS_SRC to a CUTLASS source tree (its test/ directory is not in the wheel)")
    p = Path(env) / CUTLASS_DEFAULT_CONFIG
    if not p.is_file():
        pytest.skip(f"SYMLAYOUT_CUTLASS_SRC={env}: no {CUTLASS_DEFAULT_CONFIG} there")
    return p


@pytest.fixture(scope="session")
def cute():
    """``cutlass.cute`` of the CuTe DSL, or skip."""
    from symlayout.frontends.cute_dsl import DslError, import_dsl
    try:
        return import_dsl()
    except DslError as e:
        pytest.skip(str(e))
