"""The epilogue's stmatrix phase against CUTLASS 3 (issue 31): ``[copy.C]`` over the whole C tile (each subtile
its own buffer, ``make_tiled_copy_C``) issues, per warp, the same stmatrix instructions into a subtile as CUTLASS's
``make_tiled_copy_S(Copy_Atom<SM90_U32x4_STSM_N, half_t>, make_tiled_copy_C_atom(CopyAtomC, tiled_mma))``
partitioned over the subtile's smem (``tRS_sD``), so its bank conflicts are CUTLASS's.

Ground truth: a host program built with g++ against the CuTe headers prints, per thread and per ``copy_unpack``
call of CUTLASS's tiled_r2s over one subtile, the smem element offsets the call writes.  The digest is stored
(default run: no compiler); ``pytest -m slow`` with the headers recompiles it.
"""
import hashlib
import pathlib
from collections import Counter

import pytest

from cute_cpp import Compiler, needs_cute
from symlayout.config import load_config
from symlayout.prove.copy.model import build_operand_model
from symlayout.tiled.mma import make_tiled_mma

ROOT = pathlib.Path(__file__).resolve().parents[1] / "proofs" / "kernel"
EPI = ROOT / "cutlass3_sm90_epilogue_128x128_f16_tma_store.toml"
SUBTILE = 128 * 32
TRUTH = "2ad2c7ecf05557a1"

PROGRAM = r'''#include "cute_all.hpp"
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/atom/copy_traits_sm90.hpp>
#include <cstdio>
using namespace cute;
int main() {
  auto mma = make_tiled_mma(SM90_64x128x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::K>{}, Layout<Shape<_2,_1,_1>>{});
  using CopyAtomC = Copy_Atom<SM90_U32x4_STSM_N, half_t>;
  auto c_atom = make_tiled_copy_C_atom(CopyAtomC{}, mma);
  auto r2s = make_tiled_copy_S(Copy_Atom<SM90_U32x4_STSM_N, half_t>{}, c_atom);
  auto sD = make_layout(make_shape(make_shape(_8{}, _16{}), make_shape(_32{}, _1{})),
                        make_stride(make_stride(_32{}, _256{}), make_stride(_1{}, _0{})));   // one subtile, unswizzled
  auto epi = make_layout(make_shape(_128{}, _32{}));
  auto D = make_tensor(counting_iterator<int>(0), composition(sD, epi));
  for (int t = 0; t < int(size(mma)); ++t) {
    auto tRS_sD = r2s.get_slice(t).partition_D(D);            // (R2S, R2S_M, R2S_N)
    for (int m = 0; m < size<1>(tRS_sD); ++m)
      for (int n = 0; n < size<2>(tRS_sD); ++n) {
        printf("T %d", t);
        for (int v = 0; v < size<0>(tRS_sD); ++v) printf(" %d", int(tRS_sD(v, m, n)));
        printf("\n");
      }
  }
}
'''


def instructions(lines):
    """Per warp, the multiset of instructions: an instruction is the 32 lanes' offset tuples of one call."""
    per_thread = {}
    for line in lines:
        parts = line.split()
        per_thread.setdefault(int(parts[1]), []).append(tuple(sorted(int(x) for x in parts[2:])))
    out = Counter()
    for w in range(len(per_thread) // 32):
        calls = [per_thread[32 * w + lane] for lane in range(32)]
        for j in range(len(calls[0])):
            out[(w, tuple(calls[lane][j] for lane in range(32)))] += 1
    return out


def model_lines():
    """The ``[copy.C]`` model's calls into subtile 0 (unswizzled, as the program's layout), as the program prints."""
    cfg = load_config(EPI)
    cc = cfg.copies["C"]
    smem = cc.smem.inner                                    # (the swizzle moves addresses, not the grouping)
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, None)
    m = build_operand_model(mma, None, None, "C", cc.atom, cc.element_type, smem, cc.align, convert=cc.convert)
    k = max(1, m.reg_bits_smem // m.value_bits)
    lines = []
    for t in range(m.threads):
        for call in m.calls[t]:
            offs = [m.addr_table[call.smem[a - a % k]] + a % k for a in range(len(call.reg))]
            if all(o < SUBTILE for o in offs):
                lines.append(f"T {t} " + " ".join(map(str, offs)))
    return lines


def digest(counter) -> str:
    return hashlib.sha1(repr(sorted(counter.items())).encode()).hexdigest()[:16]


def test_model_issues_cutlass_instructions():
    assert TRUTH, "no stored ground truth: run pytest -m slow with the CuTe headers"
    assert digest(instructions(model_lines())) == TRUTH


@pytest.mark.slow
@needs_cute
def test_truth_is_cutlass(tmp_path):
    out, asserts = Compiler(tmp_path).run(PROGRAM)
    assert not asserts, asserts
    cutlass = instructions(out.splitlines())
    assert cutlass == instructions(model_lines())
    assert digest(cutlass) == TRUTH
