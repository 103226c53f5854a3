"""symlayout against CuTe C++ on what CuTe compiles and what its auto-vectorizing copy moves
(issue 12, items 7 and 9).

Ground truth was produced by compiling each configuration with g++ against the CuTe 4.2 headers
(``tests/cute_cpp.py``: the route of shared/spec/configs.md, static_asserts collected from the
compiler; AutoVectorizingCopy configurations run on the host for every thread, A/B one k-block at a
time) and is stored here, so the default run needs no compiler.  ``pytest -m slow`` with the headers
(``SYMLAYOUT_CUTE_SITE`` or an installed ``cutlass_library``) regenerates it and checks it is unchanged.
"""
import hashlib

import pytest

from cute_cpp import Compiler, model_movement, needs_cute
from symlayout.prove.engine import prove_operand
from symlayout.prove.copy.model import CuteRejects, build_operand_model, cute_build_check
from symlayout.tiled.mma import make_tiled_mma

F16, F32ACC = "SM80_16x8x16_F16F16F16F16_TN", "SM80_16x8x16_F32F16F16F32_TN"
TF32, S8 = "SM80_16x8x8_F32TF32TF32F32_TN", "SM80_16x8x32_S32S8S8S32_TN"

# (configuration, the first static_assert CuTe reports or None when it compiles)
BUILD = [
    ((TF32, '(2,2,1)', None, 'A', 'SM75_U32x4_LDSM_N', 'half_t', '(32,16):(16,1)'),
     'TiledCopy uses too few vals for selected CopyAtom'),
    ((TF32, '(2,2,1)', None, 'A', 'SM75_U32x2_LDSM_N', 'half_t', '(32,16):(16,1)'),
     'Copy_Traits: src failed to vectorize into registers. Layout is incompatible with this CopyOp.'),
    ((F16, '(2,2,1)', None, 'A', 'SM75_U32x4_LDSM_N', 'half_t', 'Sw<3,3,3> o (32,192):(192,1)'),
     'Shape Divisibility Condition'),
    ((F16, '(2,2,1)', None, 'A', 'AutoVectorizingCopy', 'half_t', 'Sw<3,3,3> o (32,192):(192,1)'),
     'Shape Divisibility Condition'),
    ((F16, '(2,2,1)', None, 'A', 'SM75_U32x4_LDSM_N', 'half_t', 'Sw<3,3,3> o (32,64):(64,1)'),
     None),
    ((F16, '(2,2,1)', None, 'A', 'SM75_U32x4_LDSM_N', 'float', '(32,16):(16,1)'),
     'Copy_Traits: src failed to vectorize into registers. Layout is incompatible with this CopyOp.'),
    ((F16, '(2,2,1)', (32, 32, 16), 'B', 'SM75_U32x4_LDSM_N', 'half_t', '(32,16):(1,32)'),
     'Copy_Traits: src failed to vectorize into registers. Layout is incompatible with this CopyOp.'),
    ((F16, '(2,2,1)', (32, 32, 16), 'B', 'SM75_U16x8_LDSM_T', 'half_t', '(32,16):(1,32)'),
     None),
    ((F16, '(2,2,1)', None, 'A', 'SM75_U32x4_LDSM_N', 'bfloat16_t', '(32,16):(16,1)'),
     None),
    ((F16, '(2,2,1)', None, 'A', 'SM75_U32x4_LDSM_N', 'half_t', '(32,16):(1,32)'),
     'Copy_Traits: src failed to vectorize into registers. Layout is incompatible with this CopyOp.'),
    ((F16, '(2,2,1)', None, 'A', 'SM75_U32x2_LDSM_N', 'half_t', '(32,16):(20,1)'),
     None),
    ((F32ACC, '(2,2,1)', (32, 32, 16), 'C', 'SM90_U32x4_STSM_N', 'half_t', '(32,32):(32,1)'),
     'Copy_Traits: src failed to vectorize into registers. Layout is incompatible with this CopyOp.'),
    ((F16, '(2,2,1)', (32, 32, 16), 'C', 'SM90_U32x4_STSM_N', 'half_t', '(32,32):(32,1)'),
     None),
    ((F16, '(2,2,1)', None, 'A', 'UniversalCopy<uint32_t>', 'half_t', '(32,16):(1,32)'),
     'Copy_Traits: src failed to vectorize into registers. Layout is incompatible with this CopyOp.'),
    ((F16, '(2,2,1)', None, 'A', 'UniversalCopy<uint32_t>', 'half_t', '(32,16):(16,1)'),
     None),
    ((F16, '(2,2,1)', None, 'A', 'SM75_U32x4_LDSM_N', 'double', '(32,16):(16,1)'),
     'CopyOperation is not valid for Dst of ValType.'),
    ((F16, '(2,2,1)', None, 'A', 'UniversalCopy<uint8_t>', 'half_t', '(32,16):(16,1)'),
     'Downcast requires adjacent elements'),
    ((TF32, '(2,2,1)', None, 'A', 'SM75_U32x4_LDSM_N', 'float', '(32,8):(8,1)'),
     None),
    ((S8, '(2,2,1)', None, 'A', 'SM75_U32x4_LDSM_N', 'uint8_t', '(32,32):(32,1)'),
     None),
    ((F16, '(2,2,1)', None, 'A', 'SM75_U32x1_LDSM_N', 'half_t', 'Sw<2,3,3> o (32,16):(16,1)'),
     None),
    ((F16, '(2,2,1)', None, 'A', 'SM75_U16x8_LDSM_T', 'half_t', 'Sw<2,3,3> o (32,16):(1,32)'),
     None),
    ((F16, '(2,2,1)', None, 'A', 'SM75_U32x4_LDSM_N', 'half_t', 'Sw<3,3,3> o (32,96):(96,1)'),
     'Shape Divisibility Condition'),
    ((S8, '(1,1,1)', None, 'B', 'SM75_U16x2_LDSM_T', 'int8_t', '(8,32):(1,8)'),
     None),
    ((S8, '(2,2,1)', None, 'B', 'SM75_U16x4_LDSM_T', 'int8_t', '(16,64):(1,16)'),
     'Copy_Traits: src failed to vectorize into registers. Layout is incompatible with this CopyOp.'),
]

# (configuration, MaxVecBits, elements per access CuTe chose, sha1[:16] of what moved)
AVC = [
    ((F16, '(2,2,1)', None, 'A', 'AutoVectorizingCopy', 'half_t', 'Sw<3,3,3> o (32,64):(64,1)'), 128, 2, 'c7ae81f40df11cfe'),
    ((F16, '(2,2,1)', None, 'A', 'AutoVectorizingCopy', 'half_t', '(32,16):(16,1)'), 128, 2, 'f65a0032b6fb8d43'),
    ((F16, '(2,2,1)', None, 'A', 'AutoVectorizingCopy', 'half_t', '(32,16):(1,32)'), 128, 1, '9642d46120ef07f6'),
    ((F16, '(2,2,1)', None, 'A', 'AutoVectorizingCopy', 'half_t', '(32,16):(17,1)'), 128, 2, 'f65a0032b6fb8d43'),
    ((F16, '(2,2,1)', None, 'B', 'AutoVectorizingCopy', 'half_t', '(16,32):(32,1)'), 128, 2, 'a30b1dae28cf7fcf'),
    ((F16, '(2,2,1)', (32, 32, 16), 'B', 'AutoVectorizingCopy', 'half_t', '(32,16):(1,32)'), 128, 1, '74eaa3fe3a4a1fed'),
    ((F32ACC, '(2,2,1)', None, 'C', 'AutoVectorizingCopy', 'float', '(32,16):(16,1)'), 128, 2, 'a6119f5d65dfc2a7'),
    ((F16, '(2,2,1)', (32, 32, 16), 'C', 'AutoVectorizingCopy', 'half_t', 'Sw<3,3,3> o (32,64):(64,1)'), 128, 2, 'cdb276ee579a5e74'),
    ((F16, '(2,2,1)', None, 'C', 'AutoVectorizingCopyWithAssumedAlignment<32>', 'half_t', '(32,16):(1,32)'), 32, 1, '7205de4b2a54a78a'),
    ((F16, '(2,2,1)', None, 'C', 'AutoVectorizingCopyWithAssumedAlignment<16>', 'half_t', '(32,16):(16,1)'), 16, 1, '7205de4b2a54a78a'),
    ((F16, '(2,2,1)', None, 'A', 'DefaultCopy', 'half_t', '(32,16):(16,1)'), 8, 1, '9642d46120ef07f6'),
    ((F16, '(4,1,1)', None, 'A', 'AutoVectorizingCopyWithAssumedAlignment<64>', 'half_t', 'Sw<3,3,3> o (64,64):(64,1)'), 64, 2, '3b29e1934abb9088'),
    ((S8, '(2,2,1)', None, 'A', 'AutoVectorizingCopy', 'int8_t', 'Sw<2,4,3> o (32,64):(64,1)'), 128, 4, '0cba4732b772400e'),
]


def _mma(cfg):
    mma, lay, perm = cfg[:3]
    return make_tiled_mma(mma, lay, [str(p) for p in perm] if perm else None)


def _symlayout_verdict(cfg):
    mma = _mma(cfg)
    _, _, _, op, atom, ty, smem = cfg
    try:
        cute_build_check(mma, op, atom, ty, smem)
        build_operand_model(mma, None, None, op, atom, ty, smem)
    except CuteRejects as e:
        return e.assertion
    return None


@pytest.mark.parametrize("cfg,assertion", BUILD, ids=[f"{c[3]}-{c[4]}-{c[5]}-{c[6]}" for c, _ in BUILD])
def test_cute_rejects_exactly_what_it_rejects(cfg, assertion):
    """A configuration CuTe does not compile is rejected with CuTe's own static_assert; one it
    compiles is not rejected."""
    assert _symlayout_verdict(cfg) == assertion
    if assertion is not None:               # and is never proved: one refutation that explains it
        (r,) = prove_operand(_mma(cfg), None, None, cfg[3], cfg[4], cfg[5], cfg[6])
        assert r.status == "refuted" and assertion in r.counterexample.message


@pytest.mark.parametrize("cfg,max_bits,width,digest", AVC, ids=[f"{c[3]}-{c[4]}-{c[6]}" for c, *_ in AVC])
def test_auto_vectorizing_copy_moves_what_cute_moves(cfg, max_bits, width, digest):
    """Every thread's fragment slots (A/B) or smem elements (C) hold what CuTe's copy() moved,
    read as the hardware reads them (contiguous from each access's first address), with CuTe's
    vector width."""
    m = build_operand_model(_mma(cfg), None, None, cfg[3], cfg[4], cfg[5], cfg[6])
    assert m.vector_width == width
    assert hashlib.sha1(model_movement(m).encode()).hexdigest()[:16] == digest


# ------------------------------------------------------------ regenerate the truth with g++ (slow)

@pytest.fixture(scope="module")
def gxx(tmp_path_factory):
    return Compiler(tmp_path_factory.mktemp("cute"))


@pytest.mark.slow
@needs_cute
def test_build_truth_is_what_gxx_says(gxx):
    got = gxx.map(gxx.static_asserts, [c for c, _ in BUILD])
    assert [g[0] if g else None for g in got] == [a for _, a in BUILD]


@pytest.mark.slow
@needs_cute
def test_movement_truth_is_what_gxx_runs(gxx):
    outs = gxx.map(lambda a: gxx.movement(a[0], a[1]), AVC)
    for (cfg, mb, width, digest), out in zip(AVC, outs):
        assert out.startswith(f"W {width}\n"), cfg
        assert hashlib.sha1(out.encode()).hexdigest()[:16] == digest, cfg
