"""Adversarial audit of the prover's caches and fast paths (issue 18's speed work): an answer served from a
cache, a memo, a shared route or a whole-array path is the answer computed afresh.

Ground truth is the general path with every process-wide cache emptied (:func:`clear_caches`) and, for
the worked examples, CuTe C++.  The bug classes looked for: a cache key that omits something the value
depends on (a static ``8`` vs a run-time ``DynInt`` 8, a swizzle, a pad, a type, an alignment), values
shared out of a cache and changed later, state left behind by one configuration for the next one proved
in the same process (in either order), and a fast path that accepts what the general path rejects (or
reports it differently).  The cross-checks run on a sample by default and on everything under ``-m slow``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from symlayout.config import loads_config
from symlayout.prove.engine import prove_config


AVC_POW2 = """name = "AutoVectorizingCopy over a swizzle on a 24-element pitch"
[mma]
atom = "SM80_16x8x8_F16F16F16F16_TN"
layout = "(1,1,1)"
[copy.A]
atom = "{atom}"
type = "half_t"
smem = "Sw<3,3,3> o 0 o (32,16):(24,1)"
align = 16
"""


@pytest.mark.parametrize("atom", ["AutoVectorizingCopy", "UniversalCopy<uint32_t>"])
def test_a_slice_cute_rejects_is_a_refutation_for_every_atom(atom):
    """partition_fragment_A slices the swizzled smem tensor at the thread index: CuTe's to_mixed_bits
    asserts ``Requires pow2 shape*stride.`` (8 x 24 = 192; CuTe C++ 4.2 says so for both atoms, see the slow
    test).  The AutoVectorizingCopy path of ``cute_build_check`` returned before that slice, so the raw
    static_assert escaped as an input error (exit 2) instead of CuTe's rejection (REFUTED)."""
    rep = prove_config(loads_config(AVC_POW2.format(atom=atom)))
    assert rep.error is None
    assert "A" in rep.rejected
    [r] = rep.results
    assert r.status == "refuted" and "Requires pow2 shape*stride." in r.counterexample.message


@pytest.mark.slow
def test_the_pow2_rejection_is_cute_cpp(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from cute_cpp import Compiler, cute_site
    if cute_site() is None:
        pytest.skip("CuTe C++ headers not installed (SYMLAYOUT_CUTE_SITE or cutlass_library)")
    c = Compiler(tmp_path)
    for atom in ("AutoVectorizingCopy", "UniversalCopy<uint32_t>"):
        cfg = ("SM80_16x8x8_F16F16F16F16_TN", "(1,1,1)", None, "A", atom, "half_t", "Sw<3,3,3> o 0 o (32,16):(24,1)")
        assert "Requires pow2 shape*stride." in c.static_asserts(cfg)
