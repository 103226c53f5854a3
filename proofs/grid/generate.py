"""Write the grid of CUTLASS-typical SM80 GEMM configurations (run by hand: python proofs/grid/generate.py).

Types f16/bf16/tf32/int8, 2x2 and 4x2 warps, two K-tile widths each with the swizzle CUTLASS's SM80
collectives use for that row width (Sw<log2(row bytes/16), log2(16/sizeof T), 3> over an 8-row atom,
tiled to the block: cutlass/gemm/collective/builders/sm80 / DefaultGemmConfigurationToCutlass3Types),
A and B K-major (TN) through Copy_Atom<SM75_U32x4_LDSM_N, T>, block tile 128x128, permutation
(16*warpsM, 32, atomK) as in the sm80 collective configurations.
"""
from pathlib import Path

TYPES = {
    # name: (mma atom, value type, bytes, atom K, [(K tile, swizzle)])
    "f16": ("SM80_16x8x16_F32F16F16F32_TN", "half_t", 2, 16, [(64, "Sw<3,3,3>"), (32, "Sw<2,3,3>")]),
    "bf16": ("SM80_16x8x16_F32BF16BF16F32_TN", "bfloat16_t", 2, 16, [(64, "Sw<3,3,3>"), (32, "Sw<2,3,3>")]),
    "tf32": ("SM80_16x8x8_F32TF32TF32F32_TN", "tfloat32_t", 4, 8, [(32, "Sw<3,2,3>"), (16, "Sw<2,2,3>")]),
    "int8": ("SM80_16x8x32_S32S8S8S32_TN", "int8_t", 1, 32, [(128, "Sw<3,4,3>"), (64, "Sw<2,4,3>")]),
}
WARPS = [(2, 2), (4, 2)]

here = Path(__file__).parent
for tname, (atom, vt, nbytes, ak, ks) in TYPES.items():
    for (wm, wn) in WARPS:
        for K, sw in ks:
            name = f"sm80_{tname}_{wm}x{wn}_k{K}"
            perm = [str(16 * wm), "32", str(ak)]
            text = f'''# Grid (proofs/grid/generate.py): CUTLASS-typical SM80 {tname} GEMM, {wm}x{wn} warps, 128x128x{K} block tile,
# K-major A and B through Copy_Atom<SM75_U32x4_LDSM_N, {vt}> from {sw}-swizzled smem ({K * nbytes}-byte rows).
name = "grid: {name}"

[mma]
atom = "{atom}"
layout = "({wm},{wn},1)"
permutation = {perm!r}

[copy.A]
atom = "SM75_U32x4_LDSM_N"
type = "{vt}"
smem = "{sw} o 0 o (128,{K}):({K},1)"

[copy.B]
atom = "SM75_U32x4_LDSM_N"
type = "{vt}"
smem = "{sw} o 0 o (128,{K}):({K},1)"
'''.replace("'", '"')
            (here / f"{name}.toml").write_text(text)
print("written")
