"""Plan for docs/hardware/fp8-ldsm-run.sh: one ldmatrix.x4 of warp 0 of CUTLASS's CuTe DSL Ampere fp8 GEMM (its
first s2r copy instruction of A), at the byte addresses CuTe C++ gives its 32 lanes (docs/hardware/
fp8-ldsm-banks.cpp: lane l reads row l % 16, bytes 16 * (l // 16) of the 128x64-byte tile), under the kernel's
Sw<2,4,4> and under the conflict-free Sw<2,4,3>; the prediction is the prover's phase rule.

    python docs/hardware/fp8-ldsm-plan.py PLAN.json
"""
import json
import sys

from symlayout.algebra.notation import parse
from symlayout.harness.datapath_run import predicted_wavefronts


def lane_bytes(shift: int) -> list:
    tile = parse(f"Sw<2,4,{shift}> o 0 o (128,64):(64,1)")
    return [int(tile(lane % 16, 16 * (lane // 16))) for lane in range(32)]


def main(path: str) -> None:
    items = []
    for shift in (4, 3):
        addrs = lane_bytes(shift)
        items.append({"name": f"fp8_tensorop_A_ldsm_x4_Sw<2,4,{shift}>", "kind": "ldsm", "vb": 16, "addrs": addrs,
                      "predicted": predicted_wavefronts("ldsm", 16, addrs)})
    with open(path, "w") as f:
        json.dump({"items": items}, f)
    for it in items:
        print(it["name"], "predicted wavefronts", it["predicted"], "addresses", it["addrs"])


if __name__ == "__main__":
    main(sys.argv[1])
