"""CuTe's ``slice_and_offset`` of swizzled ComposedLayouts with offsets (issue 12 item 10), compared with
symlayout's on random swizzles, offsets and coordinates by compiling a CuTe host program (``slow``)."""
import random
import re
import subprocess

import pytest

import cute_oracle
from symlayout.algebra.layout import Layout
from symlayout.algebra.int_tuple import _
from symlayout.algebra.composed import ComposedLayout, Swizzle
from symlayout.algebra.symbolic import DynInt as D


def _random_slices(n, seed=10):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        b, m = rng.randint(1, 3), rng.randint(0, 4)
        s = b + rng.randint(0, 2)
        period = 1 << (b + m + s)
        cols = 1 << rng.randint(m + b, m + b + 3)
        rows = 1 << rng.randint(1, 4)
        inner = Layout((rows, cols), (cols, 1)) if rng.random() < 0.7 else Layout((cols, rows), (1, cols))
        off = rng.choice([0, 1 << m, 2 << m, 1 << (m + s), period, period + (1 << m), rng.randrange(0, 2 * period, 1 << m)])
        r0, c0 = rng.randrange(inner.shape[0]), rng.randrange(inner.shape[1])
        crd = rng.choice([(D(r0), _), (_, D(c0)), (r0, _), (_, c0)])
        out.append((ComposedLayout(Swizzle(b, m, s), off, inner), crd))
    return out


@pytest.mark.slow
def test_slice_and_offset_matches_cute_on_random_offsets(tmp_path):
    incs = cute_oracle.include_dirs()
    if incs is None:
        pytest.skip("CuTe headers or g++ not available (set SYMLAYOUT_CUTE_SITE)")
    cases = _random_slices(40)

    def cc(c):
        if c is _:
            return "_"
        return f"{int(c)}*one" if isinstance(c, D) else f"Int<{c}>{{}}"
    lines = []
    for L, crd in cases:
        sw = L.swizzle
        lay = (f"composition(Swizzle<{sw.b},{sw.m},{sw.s}>{{}}, Int<{L.offset}>{{}}, make_layout(make_shape("
               f"Int<{L.inner.shape[0]}>{{}}, Int<{L.inner.shape[1]}>{{}}), make_stride(Int<{L.inner.stride[0]}>{{}}, "
               f"Int<{L.inner.stride[1]}>{{}})))")
        lines.append(f"  show({lay}, make_coord({cc(crd[0])}, {cc(crd[1])}));")
    src = tmp_path / "slices.cpp"
    src.write_text("#include <cute/tensor.hpp>\n#include <cstdio>\nusing namespace cute;\n"
                   "template <class L, class C> void show(L const& l, C const& c) {\n"
                   "  auto r = slice_and_offset(c, l); print(get<0>(r)); printf(\" | %d\\n\", int(get<1>(r))); }\n"
                   "int main(int argc, char**) {\n  int one = argc;\n" + "\n".join(lines) + "\n}\n")
    exe = tmp_path / "slices"
    subprocess.run(["g++", "-std=c++17", "-w", *[f"-I{d}" for d in incs], str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    for (L, crd), line in zip(cases, out):
        lay, off = line.rsplit(" | ", 1)
        got, goff = L.slice_and_offset(crd)
        # the contract's notation: static underscores stripped, a MixedBits offset written as its value
        want = re.sub(r"M_\d+\|\(\d+&\d+\)=(\d+)", r"\1", lay).replace("_", "")
        assert (str(got), int(goff)) == (want, int(off)), (str(L), crd)
