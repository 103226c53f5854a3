"""Random concrete configurations for soundness cross-checks (tests and bench).

>>> cfgs = list(random_configs(3, seed=1)); len(cfgs)
3
"""
from __future__ import annotations

import random

from ...errors import SymlayoutError
from ...tiled.mma import make_tiled_mma
from ..copy.model import build_operand_model, cute_build_check

MMA_ATOMS = [("SM80_16x8x16_F16F16F16F16_TN", "half_t", 16), ("SM80_16x8x8_F16F16F16F16_TN", "half_t", 16),
             ("SM80_16x8x16_F32BF16BF16F32_TN", "bfloat16_t", 16), ("SM80_16x8x8_F32TF32TF32F32_TN", "tfloat32_t", 32),
             ("SM80_16x8x32_S32S8S8S32_TN", "int8_t", 8)]
LOADS = ["SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N", "SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T",
         "SM75_U16x8_LDSM_T", "UniversalCopy<uint32_t>", "UniversalCopy<uint16_t>", "AutoVectorizingCopy",
         "AutoVectorizingCopyWithAssumedAlignment<32>", "DefaultCopy"]
STORES = ["SM90_U32x1_STSM_N", "SM90_U32x2_STSM_N", "SM90_U32x4_STSM_N", "SM90_U16x2_STSM_T", "SM90_U16x8_STSM_T",
          "UniversalCopy<uint32_t>", "AutoVectorizingCopy"]
LAYOUTS = ["(1,1,1)", "(2,1,1)", "(1,2,1)"]


def _smem(rng, R, C, grow=True):
    kind = rng.choice(["row", "row", "col", "swz", "swz", "pad"])
    if grow:
        R *= rng.choice([1, 1, 2])
        C *= rng.choice([1, 1, 2])
    if kind == "row":
        return f"({R},{C}):({C},1)"
    if kind == "col":
        return f"({R},{C}):(1,{R})"
    if kind == "pad":
        if rng.random() < 0.5:
            return f"({R},{C}):({C + rng.choice([1, 2, 4, 8, 16])},1)"
        return f"({R},{C}):(1,{R + rng.choice([1, 2, 4, 8])})"
    b, m = rng.choice([1, 2, 3]), rng.choice([2, 3, 4])
    inner = f"({R},{C}):({C},1)" if rng.random() < 0.7 else f"({R},{C}):(1,{R})"
    return f"Sw<{b},{m},3> o 0 o {inner}"


def random_configs(n: int, seed: int = 0, max_tries: int | None = None, small: bool = False):
    """Yield ``n`` OperandModels of random configurations that CuTe accepts
    (``small``: one warp, one tile -- cheap enough for thousands in a test run)."""
    rng = random.Random(seed)
    made = tries = 0
    max_tries = max_tries or 50 * n
    mmas = {}
    while made < n and tries < max_tries:
        tries += 1
        atom, vt, bits = rng.choice(MMA_ATOMS)
        lay = "(1,1,1)" if small else rng.choice(LAYOUTS)
        op = rng.choice("AABC")
        if op == "C":
            if atom != "SM80_16x8x16_F16F16F16F16_TN" and atom != "SM80_16x8x8_F16F16F16F16_TN":
                continue
            copy = rng.choice(STORES)
        else:
            copy = rng.choice(LOADS)
        key = (atom, lay)
        if key not in mmas:
            mmas[key] = make_tiled_mma(atom, lay)
        mma = mmas[key]
        R, C = mma.operand_tile(op)
        smem = _smem(rng, R, C, grow=not small)
        try:
            cute_build_check(mma, op, copy, vt, smem)          # only what CuTe compiles
            m = build_operand_model(mma, None, None, op, copy, vt, smem)
        except SymlayoutError:
            continue
        made += 1
        yield m
