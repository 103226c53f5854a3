"""SM100's narrow ldmatrix / stmatrix atoms (8-bit transposed, fp4/fp6 widening loads) against CuTe C++
(host-only g++, one program): Copy_Traits Src/Dst/Ref layouts and the register arrays; the PTX each issues
against the header's asm text."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from cute_cpp import cute_site
from sm100_cpp import compiler
from symlayout.atoms.copy import get_copy_op as narrow_copy_op
from symlayout.atoms.narrow_matrix import narrow_copy_names


def _program():
    out = ["int main() {"]
    for n in narrow_copy_names():
        out += [f"  {{ using Tr = Copy_Traits<{n}>;",
                "    print(typename Tr::SrcLayout{}); printf(\" \"); print(typename Tr::DstLayout{}); printf(\" \");"
                " print(typename Tr::RefLayout{});",
                f"    printf(\" %d %d %d %d\\n\", int(sizeof_bits_v<std::remove_extent_t<{n}::SRegisters>>), "
                f"int(std::extent_v<{n}::SRegisters>), int(sizeof_bits_v<std::remove_extent_t<{n}::DRegisters>>), "
                f"int(std::extent_v<{n}::DRegisters>)); }}"]
    return "\n".join(out) + "\n}\n"


def test_narrow_matrix_traits_equal_cute():
    c = compiler()
    if c is None:
        pytest.skip("CuTe headers / g++ not available")
    lines = c.run(_program()).splitlines()
    for n, line in zip(narrow_copy_names(), lines):
        op = narrow_copy_op(n)
        want = (f"{op.src_layout} {op.dst_layout} {op.ref_layout} {op.s_regs.bits} {op.s_regs.count} "
                f"{op.d_regs.bits} {op.d_regs.count}")
        assert line.replace("_", "") == want, n
    assert len(lines) == len(narrow_copy_names()) == 11


def test_ptx_is_the_headers():
    inc = cute_site()
    if inc is None:
        pytest.skip("CuTe headers not available")
    text = (Path(inc[0]) / "cute" / "arch" / "copy_sm100.hpp").read_text()
    for n in narrow_copy_names():
        body = text[text.index(f"struct {n}\n"):]
        body = body[:body.index("\n};")]
        ptx = re.search(r'asm volatile \("(\S+)', body).group(1)
        assert ptx == narrow_copy_op(n).ptx, n
