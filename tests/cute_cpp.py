"""Compile small CuTe C++ programs for a configuration (host-only g++), as ground truth.

The headers come from an installed package, never from this repository: ``$SYMLAYOUT_CUTE_SITE``
(a ``pip install --target`` site holding ``cutlass_library`` and the ``nvidia`` CUDA header
packages, e.g. of the ``nvidia-cutlass`` wheel) or an importable ``cutlass_library``.
:func:`cute_site` returns None when neither is there (tests then skip).

A configuration is a tuple ``(mma atom, AtomLayoutMNK, permutation or None, operand, copy atom,
value type, smem layout)``, the route of ``shared/spec/configs.md``: for A/B
``copy(tiled_copy, thr.partition_S(sX), thr.retile_D(partition_fragment_X(sX)))``, for C
``copy(tiled_copy, thr.retile_S(partition_fragment_C(sX)), thr.partition_D(sX))``.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import pytest

from symlayout.algebra.notation import parse


@lru_cache(maxsize=None)
def cute_site():
    """``(include dirs)`` for CuTe + CUDA headers, or None."""
    roots = []
    env = os.environ.get("SYMLAYOUT_CUTE_SITE")
    if env:
        roots.append(Path(env))
    try:
        import cutlass_library  # noqa: F401
        roots.append(Path(cutlass_library.__file__).resolve().parents[1])
    except ImportError:
        pass
    for r in roots:
        inc = r / "cutlass_library" / "source" / "include"
        if (inc / "cute" / "tensor.hpp").is_file():
            dirs = [inc] + [r / "nvidia" / p / "include" for p in ("cuda_runtime", "cuda_cccl", "cuda_nvcc")]
            if shutil.which("g++"):
                return tuple(str(d) for d in dirs if d.is_dir())
    return None



#: the mark of a test that compiles CuTe: skipped where :func:`cute_site` finds no headers
needs_cute = pytest.mark.skipif(cute_site() is None, reason="CuTe headers not found: set SYMLAYOUT_CUTE_SITE "
                                                            "(a site with cutlass_library and the nvidia CUDA headers)")

def _int_tuple(t, f):
    if isinstance(t, tuple):
        return f"make_{f}(" + ", ".join(_int_tuple(e, f) for e in t) + ")"
    return f"Int<{t}>{{}}"


def cpp_layout(text: str) -> str:
    L = parse(text)
    if getattr(L, "is_composed", False):
        sw, inner = L.swizzle, L.inner
        return (f"composition(Swizzle<{sw.b},{sw.m},{sw.s}>{{}}, Int<{L.offset}>{{}}, "
                f"make_layout({_int_tuple(inner.shape, 'shape')}, {_int_tuple(inner.stride, 'stride')}))")
    return f"make_layout({_int_tuple(L.shape, 'shape')}, {_int_tuple(L.stride, 'stride')})"


def _mma_expr(mma, mlay, perm):
    L = parse(mlay)
    lay = (f"make_layout({_int_tuple(L.shape, 'shape')}, {_int_tuple(L.stride, 'stride')})" if hasattr(L, "shape")
           else f"Layout<Shape<{', '.join(f'_{x}' for x in (L if isinstance(L, tuple) else (L,)))}>>{{}}")
    pm = (", Tile<" + ", ".join(f"Int<{p}>" for p in perm) + ">{}") if perm else ""
    return f"make_tiled_mma({mma}{{}}, {lay}{pm})"


def tiled_copy_expr(cfg, tiled=None) -> str:
    """The TiledCopy of ``cfg``: ``make_tiled_copy_X(Copy_Atom<atom, T>{}, mma)``, or with ``tiled``
    (``("thr", thr, val)`` or ``("tv", tv, tiler)``, CuTe notation) the hand-built one of a version-2
    ``[copy.X]``: ``make_tiled_copy(atom, thr, val)`` / ``make_tiled_copy_impl(atom, tv, tiler)``."""
    op, atom = cfg[3], cfg[4]
    if tiled is None:
        return f"make_tiled_copy_{op}(Copy_Atom<{atom}, T>{{}}, mma)"

    def lay(text):
        if ":" in text:
            return cpp_layout(text)
        return f"make_layout({_int_tuple(parse(text), 'shape')})"
    if tiled[0] == "tv":
        t = parse(tiled[2])
        return (f"make_tiled_copy_impl(Copy_Atom<{atom}, T>{{}}, {lay(tiled[1])}, "
                f"Shape<Int<{t[0]}>, Int<{t[1]}>>{{}})")
    return f"make_tiled_copy(Copy_Atom<{atom}, T>{{}}, {lay(tiled[1])}, {lay(tiled[2])})"


def build_program(cfg, tiled=None) -> str:
    """The route of ``cfg`` for one thread (static_asserts fire at compile time)."""
    mma, mlay, perm, op, atom, ty, smem = cfg
    if op == "C":
        route = ("  auto src = thr.retile_S(tmma.partition_fragment_C(sX));\n"
                 "  auto dst = thr.partition_D(sX);\n")
    else:
        route = ("  auto src = thr.partition_S(sX);\n"
                 f"  auto fr = tmma.partition_fragment_{op}(sX);\n"
                 "  auto dst = thr.retile_D(fr);\n")
    return (f'#include "cute_all.hpp"\nusing namespace cute;\nint thread_idx = 0;\nint main() {{\n'
            f"  auto mma = {_mma_expr(mma, mlay, perm)};\n"
            f"  auto sL = {cpp_layout(smem)};\n"
            f"  using T = {ty};\n"
            f"  static T buf[cosize_v<decltype(sL)>];\n"
            f"  auto sX = make_tensor(make_smem_ptr(buf), sL);\n"
            f"  auto cp = {tiled_copy_expr(cfg, tiled)};\n"
            f"  auto thr = cp.get_slice(thread_idx);\n"
            f"  auto tmma = mma.get_slice(thread_idx);\n"
            f"{route}"
            f"  copy(cp, src, dst);\n}}\n")


def vec_elems_cpp(max_vec_bits: int) -> str:
    """``vec_elems(src, dst)``: the elements per access CuTe's auto-vectorizing copy picks (its own
    max_common_vector / max_alignment), in C++."""
    return f'''template <class TS, class TD>
int vec_elems(TS const& s, TD const& d) {{
  using VT = typename TD::value_type;
  constexpr int ce = decltype(max_common_vector(s, d))::value;
  if constexpr (ce > 1) {{
    constexpr int ab = decltype(gcd(max_alignment(s), max_alignment(d), Int<{max_vec_bits}>{{}}))::value;
    constexpr int vb = gcd(ce * int(sizeof_bits_v<VT>), ab);
    if constexpr (vb % 8 == 0 && int(sizeof_bits_v<VT>) < vb) return vb / int(sizeof_bits_v<VT>);
  }}
  return 1;
}}'''


def movement_program(cfg, max_vec_bits: int, tiled=None) -> str:
    """Runs the copy of ``cfg`` on the host for every thread, A/B one k-block at a time, and
    prints what moved: ``W <elements per access>`` (CuTe's auto-vectorizing choice, from its own
    max_common_vector / max_alignment), then per thread ``T t v0 v1 ...`` -- A/B: the smem element
    index (mod 2^bits) in each fragment storage slot; C: ``index:slot`` of every smem element written."""
    mma, mlay, perm, op, atom, ty, smem = cfg
    head = f'''#include "cute_all.hpp"
#include <cstdio>
#include <cstring>
using namespace cute;
{vec_elems_cpp(max_vec_bits)}
int main() {{
  auto mma = {_mma_expr(mma, mlay, perm)};
  auto sL = {cpp_layout(smem)};
  using T = {ty};
  using U = uint_bit_t<sizeof_bits_v<T>>;
  static T buf[cosize_v<decltype(sL)>];
  auto sX = make_tensor(make_smem_ptr(buf), sL);
  auto cp = {tiled_copy_expr(cfg, tiled)};
  for (int t = 0; t < int(size(mma)); ++t) {{
    auto thr = cp.get_slice(t);
    auto tmma = mma.get_slice(t);
'''
    if op == "C":
        body = '''    auto fr = tmma.partition_fragment_C(sX);
    using F = typename decltype(fr)::value_type;
    using UF = uint_bit_t<sizeof_bits_v<F>>;
    for (int i = 0; i < int(size(fr)); ++i) { UF u = UF(i + 1); std::memcpy((void*)&fr.data()[i], &u, sizeof(F)); }
    for (int i = 0; i < int(size(sX)); ++i) { U z = 0; std::memcpy((void*)&sX(i), &z, sizeof(T)); }
    auto src = thr.retile_S(fr);
    auto dst = thr.partition_D(sX);
    if (t == 0) printf("W %d\\n", vec_elems(src, dst));
    copy(cp, src, dst);
    printf("T %d", t);
    for (int i = 0; i < int(size(sX)); ++i) { U u; std::memcpy(&u, (void*)&sX(i), sizeof(T)); if (u) printf(" %d:%d", i, int(u) - 1); }
    printf("\\n");
'''
    else:
        body = f'''    for (int i = 0; i < int(size(sX)); ++i) {{ U u = U(i); std::memcpy((void*)&sX(i), &u, sizeof(T)); }}
    auto src = thr.partition_S(sX);
    auto fr = tmma.partition_fragment_{op}(sX);
    using F = typename decltype(fr)::value_type;
    auto dst = thr.retile_D(fr);
    if (t == 0) printf("W %d\\n", vec_elems(src(_,_,0), dst(_,_,0)));
    for (int k = 0; k < size<2>(src); ++k) copy(cp, src(_,_,k), dst(_,_,k));
    printf("T %d", t);
    for (int i = 0; i < int(size(fr)); ++i) {{
      T v; auto& f = fr.data()[i];
      if constexpr (is_same_v<F, T>) std::memcpy(&v, (void*)&f, sizeof(T)); else v = T(float(f));
      U u; std::memcpy(&u, &v, sizeof(T)); printf(" %d", int(u));
    }}
    printf("\\n");
'''
    return head + body + "  }\n}\n"


class Compiler:
    """g++ with a precompiled CuTe header in a scratch directory."""

    def __init__(self, workdir: Path):
        self.inc = cute_site()
        self.dir = Path(workdir)
        hdr = self.dir / "cute_all.hpp"
        hdr.write_text("#include <cute/tensor.hpp>\n#include <cute/atom/mma_atom.hpp>\n#include <cute/atom/copy_atom.hpp>\n")
        subprocess.run(["g++", "-std=c++17", *self._flags(), "-x", "c++-header", str(hdr), "-o", str(hdr) + ".gch"],
                       check=True, capture_output=True)

    def _flags(self):
        return [f"-I{d}" for d in self.inc]

    def _src(self, text):
        d = Path(tempfile.mkdtemp(dir=self.dir))
        (d / "p.cpp").write_text(text)
        return d

    def static_asserts(self, cfg, tiled=None) -> list:
        """CuTe's static_assert messages for ``cfg`` (empty: CuTe compiles it)."""
        d = self._src(build_program(cfg, tiled))
        p = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", f"-I{self.dir}", *self._flags(), str(d / "p.cpp")],
                           capture_output=True, text=True)
        out = []
        for line in p.stderr.splitlines():
            if "static assertion failed" in line:
                out.append(line.split("static assertion failed", 1)[1].lstrip(": ").strip())
            elif "error:" in line and not out:
                out.append("error: " + line.split("error:", 1)[1].strip())
        return out

    def movement(self, cfg, max_vec_bits: int, tiled=None) -> str:
        d = self._src(movement_program(cfg, max_vec_bits, tiled))
        subprocess.run(["g++", "-std=c++17", "-O0", f"-I{self.dir}", *self._flags(), str(d / "p.cpp"), "-o",
                        str(d / "p")], check=True, capture_output=True)
        return subprocess.run([str(d / "p")], check=True, capture_output=True, text=True).stdout

    def run(self, text: str) -> tuple[str, list]:
        """Compile and run a whole program: ``(stdout, [])``, or ``("", static_assert messages)`` when
        CuTe does not compile it."""
        d = self._src(text)
        p = subprocess.run(["g++", "-std=c++17", "-O0", f"-I{self.dir}", *self._flags(), str(d / "p.cpp"), "-o",
                            str(d / "p")], capture_output=True, text=True)
        if p.returncode:
            out = [line.split("static assertion failed", 1)[1].lstrip(": ").strip()
                   for line in p.stderr.splitlines() if "static assertion failed" in line]
            return "", out or ["error: " + next((ln for ln in p.stderr.splitlines() if "error:" in ln), "?")]
        return subprocess.run([str(d / "p")], check=True, capture_output=True, text=True).stdout, []

    def map(self, fn, items, jobs=2):
        with ThreadPoolExecutor(jobs) as ex:
            return list(ex.map(fn, items))


def model_movement(m) -> str:
    """What the route model says the hardware moves, in :func:`movement_program`'s format."""
    k = max(1, m.reg_bits_smem // m.value_bits)
    lines = [f"W {max(1, m.vector_width)}"]
    mod = 1 << m.value_bits
    for t in range(m.threads):
        if m.direction == "load":
            got = [None] * m.frag_size
            for call in m.calls[t]:
                for a, s in enumerate(call.reg):
                    got[s] = m.index_of_address(m.addr_table[call.smem[a - a % k]] + a % k)
            lines.append(f"T {t} " + " ".join(str(g % mod) for g in got))
        else:
            put = {}
            for call in m.calls[t]:
                for a, s in enumerate(call.reg):
                    put[m.index_of_address(m.addr_table[call.smem[a - a % k]] + a % k)] = s
            lines.append(f"T {t} " + " ".join(f"{i}:{put[i]}" for i in sorted(put)))
    return "\n".join(lines) + "\n"
