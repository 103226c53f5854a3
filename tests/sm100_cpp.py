"""Compile small SM100 CuTe programs host-only (g++ -std=c++17, no CUDA), as ground truth for the
Blackwell modules.  The SM100 traits headers (``mma_traits_sm100.hpp``, ``copy_traits_sm100.hpp``)
build on the host without any ``CUTE_ARCH_*`` macro: the instructions themselves sit behind
``CUTE_ARCH_TCGEN05_*`` guards and are never issued here.  Headers come from
``$SYMLAYOUT_CUTE_SITE`` (see :mod:`cute_cpp`); :func:`compiler` returns None without them.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from cute_cpp import cute_site

HEADER = ("#include <cute/tensor.hpp>\n#include <cute/atom/mma_atom.hpp>\n#include <cute/atom/copy_atom.hpp>\n"
          "#include <cute/atom/mma_traits_sm100.hpp>\n#include <cute/atom/copy_traits_sm100.hpp>\n"
          "#include <cstdio>\n")


class Sm100Compiler:
    """g++ with a precompiled SM100 CuTe header in a scratch directory."""

    def __init__(self, workdir: Path):
        self.inc = cute_site()
        self.dir = Path(workdir)
        hdr = self.dir / "sm100_all.hpp"
        hdr.write_text(HEADER)
        subprocess.run(["g++", "-std=c++17", *self._flags(), "-x", "c++-header", str(hdr), "-o", str(hdr) + ".gch"],
                       check=True, capture_output=True)

    def _flags(self):
        return [f"-I{d}" for d in self.inc]

    def _src(self, body: str) -> Path:
        d = Path(tempfile.mkdtemp(dir=self.dir))
        (d / "p.cpp").write_text('#include "sm100_all.hpp"\nusing namespace cute;\n' + body)
        return d

    def run(self, body: str) -> str:
        """Compile and run ``body`` (after the header and ``using namespace cute;``): its stdout."""
        d = self._src(body)
        subprocess.run(["g++", "-std=c++17", "-O0", f"-I{self.dir}", *self._flags(), str(d / "p.cpp"), "-o",
                        str(d / "p")], check=True, capture_output=True, text=True)
        return subprocess.run([str(d / "p")], check=True, capture_output=True, text=True).stdout

    def static_asserts(self, body: str) -> list:
        """The ``static_assert`` messages g++ reports for ``body`` (whitespace collapsed); ``[]`` when it
        compiles; ``["error: ..."]`` for another compile error."""
        d = self._src(body)
        p = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", f"-I{self.dir}", *self._flags(), str(d / "p.cpp")],
                           capture_output=True, text=True)
        out = []
        for line in p.stderr.splitlines():
            if "static assertion failed" in line:
                msg = line.split("static assertion failed", 1)[1].lstrip(": ").strip()
                out.append(re.sub(r"\s+", " ", msg))
        if p.returncode and not out:
            out.append("error: " + next((ln for ln in p.stderr.splitlines() if "error:" in ln), "?"))
        return out


@lru_cache(maxsize=None)
def compiler():
    """One :class:`Sm100Compiler` per test session, or None without CuTe headers / g++."""
    if cute_site() is None:
        return None
    return Sm100Compiler(Path(tempfile.mkdtemp(prefix="symlayout-sm100-")))


def cpp_atom(op) -> str:
    """The C++ MMA atom of ``op`` (kind::f8f6f4 SS atoms are spelled through their traits' parameters)."""
    maj = [f"UMMA::Major::{op.a_major}", f"UMMA::Major::{op.b_major}"]
    pair = "_2x1SM" if op.cta_group == 2 else ""
    if op.family == "F8F6F4" and op.a_source == "smem":
        one = "integral_constant<UMMA::ScaleIn,UMMA::ScaleIn::One>"
        return (f"MMA_Atom<MMA_Traits<SM100_MMA_F8F6F4{pair}_SS, {op.a_type}, {op.b_type}, {op.c_type}, C<{op.m}>, "
                f"C<{op.n}>, integral_constant<UMMA::Major,{maj[0]}>, integral_constant<UMMA::Major,{maj[1]}>, "
                f"{one}, {one}>>{{}}")
    src = "SS" if op.a_source == "smem" else "TS"
    return (f"SM100_MMA_{op.family}{pair}_{src}<{op.a_type},{op.b_type},{op.c_type},{op.m},{op.n},"
            f"{maj[0]},{maj[1]}>{{}}")


def strip(text: str) -> str:
    """CuTe's print without the underscores of static integers."""
    return re.sub(r"_(\d)", r"\1", text.strip())


BUILDER_HEADER = ("#include <cutlass/cutlass.h>\n#include <cute/tensor.hpp>\n"
                  "#include <cutlass/gemm/collective/collective_builder.hpp>\n#include <cstdio>\nusing namespace cute;\n")


def builder_run(body: str, arch: str = "sm_100a") -> str | None:
    """Compile ``body`` after CUTLASS's collective builders (``collective_builder.hpp``, which needs nvcc: its
    older collectives call ``__syncthreads``) for ``arch``, run its host code and return its stdout; None without
    nvcc or the headers."""
    nvcc, inc = shutil.which("nvcc"), cute_site()
    if nvcc is None or inc is None:
        return None
    d = Path(tempfile.mkdtemp(prefix="symlayout-builder-"))
    (d / "p.cu").write_text(BUILDER_HEADER + body)
    subprocess.run([nvcc, "-std=c++17", f"-arch={arch}", f"-I{inc[0]}", str(d / "p.cu"), "-o", str(d / "p")],
                   check=True, capture_output=True)
    return subprocess.run([str(d / "p")], check=True, capture_output=True, text=True).stdout
