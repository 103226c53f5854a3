"""CuTe C++ traits: compile a small host program that prints a traits type's members.

A kernel's tiling lives in a C++ *traits type* (flash-attention's
``Flash_fwd_kernel_traits<...>``, CUTLASS's ``CollectiveMma<...>`` or
``DefaultGemmConfigurationToCutlass3Types<...>``).  :func:`probe_traits`
writes a host-only program that includes the header, instantiates the type and,
for every member path asked for, prints what it is in CuTe's print notation:

====================  =======================================================
member type           printed fields
====================  =======================================================
``TiledMMA``          ``tiled_mma`` (the MMA operation's type), value types,
                      ``atom_layout``, ``perm0..2`` (resolved extents/layouts),
                      ``thr_layout_vmnk``, ``layoutA/B/C_TV`` (cross-checks)
``TiledCopy``         ``tiled_copy`` (the copy operation's type), ``value_type``,
                      ``tv`` (``TiledLayout_TV``), ``tiler`` (``Tiler_MN``)
``Copy_Atom``         ``copy_atom`` (operation type), ``value_type``
``MMA_Atom``          ``mma_atom`` (operation type)
``Layout``            ``layout``;  ``ComposedLayout``: ``composed``
integral value        ``value``;   any other type: ``type``;   absent: ``missing``
====================  =======================================================

Operation and value types are named by ``__PRETTY_FUNCTION__`` of a class
template instantiated with the type (the compiler's own spelling, complete with
namespaces and defaulted template arguments), then normalised to the catalog's
names by :func:`op_name` / :func:`value_type_name`.

The program's output is one line per field, ``@<member path>|<field>|<value>``;
:func:`parse_probe_output` reads it back into :class:`Member` records, so a
recorded output can be turned into a configuration without a compiler.

Headers written for the device (``#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >=
800``, as flash-attention's are) describe their SM80 path only when the macro
is set; a host compiler does not set it.  With ``cuda_arch=80`` the program
includes the header's own ``#include``\\ s first, *then* defines ``__CUDA_ARCH__``
for the header's text alone, so CUTLASS and CuTe stay in their host form.

>>> op_name("const char* symlayout_probe::Name<T>::get() [with T = cute::SM80_CP_ASYNC_CACHEGLOBAL<cutlass::uint128_t, cutlass::uint128_t>]")
'SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>'
>>> op_name("cute::AutoVectorizingCopyWithAssumedAlignment<128>"), value_type_name("signed char")
('AutoVectorizingCopy', 'int8_t')
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...algebra.cute_cpp import split_args as split_top_level
from ...errors import SymlayoutError

__all__ = ["ExtractError", "Member", "Probe", "probe_program", "probe_traits", "parse_probe_output",
           "find_compiler", "cutlass_include_dirs", "op_name", "value_type_name", "pretty_type"]


class ExtractError(SymlayoutError):
    """Extraction failed: no compiler, no headers, a compile error, an unknown member."""


# ---------------------------------------------------------------- type names

_PRETTY = re.compile(r"\[(?:with )?T = (.*)\]\s*$", re.S)

#: C++ spellings of fundamental types -> CuTe's value-type names
_FUNDAMENTAL = {
    "signed char": "int8_t", "char": "int8_t", "unsigned char": "uint8_t",
    "short": "int16_t", "short int": "int16_t", "unsigned short": "uint16_t", "short unsigned int": "uint16_t",
    "int": "int32_t", "unsigned int": "uint32_t", "unsigned": "uint32_t",
    "long": "int64_t", "long int": "int64_t", "long long": "int64_t", "long long int": "int64_t",
    "unsigned long": "uint64_t", "long unsigned int": "uint64_t", "unsigned long long": "uint64_t",
    "long long unsigned int": "uint64_t", "bool": "bool", "float": "float", "double": "double",
}
_NAMESPACES = re.compile(r"\b(?:cute|cutlass|std|SM90|GMMA|SM80|detail)::")


def pretty_type(text: str) -> str:
    """The type named in a ``__PRETTY_FUNCTION__`` string (the text itself if it is not one)."""
    m = _PRETTY.search(text)
    return (m.group(1) if m else text).strip()


def split_args(s: str) -> list[str]:
    """Split a C++ template argument list at top-level commas (``<>`` nest); empty trailing parts dropped."""
    out = split_top_level(s, "<", ">")
    return out[:-1] if out[-1] == "" else out


def value_type_name(text: str) -> str:
    """CuTe's name of a value type spelt by the compiler (``cutlass::half_t`` -> ``half_t``).

    >>> value_type_name("cutlass::bfloat16_t"), value_type_name("long unsigned int"), value_type_name("cutlass::uint128_t")
    ('bfloat16_t', 'uint64_t', 'uint128_t')
    """
    t = " ".join(pretty_type(text).split())
    t = _NAMESPACES.sub("", t)
    t = re.sub(r"^(?:const|volatile)\s+", "", t)
    if t in _FUNDAMENTAL:
        return _FUNDAMENTAL[t]
    if "<" in t:
        head, rest = t.split("<", 1)
        args = split_args(rest[:-1])
        return f"{head}<{','.join(value_type_name(a) for a in args)}>"
    return t


def op_name(text: str) -> str:
    """The catalog name of a CuTe MMA or copy operation type spelt by the compiler.

    Namespaces go; template arguments are value types (``cutlass::uint128_t`` ->
    ``uint128_t``, ``unsigned int`` -> ``uint32_t``); a second argument equal to
    the first (CuTe's defaulted ``class D = S``) goes; CuTe's aliases
    ``AutoVectorizingCopyWithAssumedAlignment<128>`` and ``<8>`` are ``AutoVectorizingCopy``
    and ``DefaultCopy``;
    Hopper's ``SM90::GMMA::MMA_64x128x16_F32F16F16_SS<Major::K, Major::K, One, One>``
    is ``SM90_64x128x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::K>``.

    >>> op_name("cute::SM90::GMMA::MMA_64x64x16_F32F16F16_SS<cute::SM90::GMMA::Major::K, cute::SM90::GMMA::Major::MN, cute::SM90::GMMA::ScaleIn::One, cute::SM90::GMMA::ScaleIn::One>")
    'SM90_64x64x16_F32F16F16_SS<GMMA::Major::K,GMMA::Major::MN>'
    >>> op_name("cute::UniversalCopy<unsigned int, unsigned int>")
    'UniversalCopy<uint32_t>'
    """
    t = " ".join(pretty_type(text).split())
    gmma = re.match(r"(?:cute::)?SM90::GMMA::MMA_(\w+)(?:<(.*)>)?$", t)
    if gmma:
        args = [a for a in split_args(gmma.group(2) or "") if not a.endswith("ScaleIn::One")]
        majors = [re.sub(r".*Major::", "GMMA::Major::", a) for a in args if "Major::" in a]
        base = f"SM90_{gmma.group(1)}"
        return f"{base}<{','.join(majors)}>" if majors else base
    t = _NAMESPACES.sub("", t)
    if "<" not in t:
        return t
    head, rest = t.split("<", 1)
    args = [value_type_name(a) for a in split_args(rest[:-1])]
    if head == "AutoVectorizingCopyWithAssumedAlignment" and args in (["128"], ["8"]):
        return {"128": "AutoVectorizingCopy", "8": "DefaultCopy"}[args[0]]   # CuTe's two aliases
    if len(args) == 2 and args[0] == args[1]:
        args = args[:1]
    return f"{head}<{','.join(args)}>"


# ---------------------------------------------------------------- the program

# a host compiler sees CUTLASS's device code too: declare the CUDA built-ins it names
_HOST_STUB = r"""#if !defined(__CUDACC__)
namespace symlayout_host { struct dim3 { unsigned x = 0, y = 0, z = 0; }; }
static symlayout_host::dim3 threadIdx, blockIdx, blockDim, gridDim;
inline void __syncthreads() {}
inline void __syncwarp(unsigned = 0xffffffffu) {}
inline void __threadfence() {}
inline void __threadfence_block() {}
inline unsigned __activemask() { return 0xffffffffu; }
template <class... A> inline unsigned __ballot_sync(A...) { return 0; }
template <class M, class T, class... A> inline T __shfl_sync(M, T v, A...) { return v; }
template <class M, class T, class... A> inline T __shfl_xor_sync(M, T v, A...) { return v; }
template <class M, class T, class... A> inline T __shfl_up_sync(M, T v, A...) { return v; }
template <class M, class T, class... A> inline T __shfl_down_sync(M, T v, A...) { return v; }
#endif"""

_PRELUDE = r"""
namespace symlayout_probe {
using namespace cute;

template <class T> struct Name { static const char* get() { return __PRETTY_FUNCTION__; } };

template <class T> void name(const char* path, const char* f) { std::printf("@%s|%s|%s\n", path, f, Name<T>::get()); }
template <class X> void field(const char* path, const char* f, X const& x) {
  std::printf("@%s|%s|", path, f); print(x); std::printf("\n");
}

// the operation and value type of a Copy_Atom<Op, T> / Copy_Atom<Copy_Traits<Op, ...>, T>
template <class A> struct CopyAtomParts;
template <class Op_, class V> struct CopyAtomParts<Copy_Atom<Op_, V>> { using Op = Op_; using Val = V; };
template <class Op_, class... As, class V> struct CopyAtomParts<Copy_Atom<Copy_Traits<Op_, As...>, V>> {
  using Op = Op_; using Val = V;
};

template <class T> struct Describe { static void run(const char* p) { name<T>(p, "type"); } };
template <class S, class D> struct Describe<Layout<S, D>> {
  static void run(const char* p) { field(p, "layout", Layout<S, D>{}); }
};
template <class A, class O, class B> struct Describe<ComposedLayout<A, O, B>> {
  static void run(const char* p) { field(p, "composed", ComposedLayout<A, O, B>{}); }
};
template <class... As> struct Describe<MMA_Atom<As...>> {
  static void run(const char* p) { name<typename MMA_Atom<As...>::MMA_Op>(p, "mma_atom"); }
};
template <class... As> struct Describe<Copy_Atom<As...>> {
  static void run(const char* p) {
    using P = CopyAtomParts<Copy_Atom<As...>>;
    name<typename P::Op>(p, "copy_atom"); name<typename P::Val>(p, "value_type");
  }
};
template <class A, class L, class P> struct Describe<TiledMMA<A, L, P>> {
  static void run(const char* p) {
    using TM = TiledMMA<A, L, P>;
    TM tm{};
    name<typename A::MMA_Op>(p, "tiled_mma");
    name<typename A::ValTypeD>(p, "val_d"); name<typename A::ValTypeA>(p, "val_a");
    name<typename A::ValTypeB>(p, "val_b"); name<typename A::ValTypeC>(p, "val_c");
    field(p, "atom_layout", L{});
    field(p, "perm0", tm.template permutation_mnk<0>());
    field(p, "perm1", tm.template permutation_mnk<1>());
    field(p, "perm2", tm.template permutation_mnk<2>());
    field(p, "thr_layout_vmnk", tm.get_thr_layout_vmnk());
    field(p, "layoutA_TV", tm.get_layoutA_TV());
    field(p, "layoutB_TV", tm.get_layoutB_TV());
    field(p, "layoutC_TV", tm.get_layoutC_TV());
  }
};
template <class CA, class TV, class TL> struct Describe<TiledCopy<CA, TV, TL>> {
  static void run(const char* p) {
    using P = CopyAtomParts<CA>;
    name<typename P::Op>(p, "tiled_copy"); name<typename P::Val>(p, "value_type");
    field(p, "tv", TV{}); field(p, "tiler", TL{});
  }
};
}  // namespace symlayout_probe
"""

_PROBE = r"""
template <class T, class = void> struct V{i} {{
  static void run() {{ std::printf("@%s|missing|\n", "{path}"); }}
}};
template <class T> struct V{i}<T, std::enable_if_t<std::is_arithmetic_v<std::decay_t<decltype(T::{path})>>>> {{
  static void run() {{ std::printf("@%s|value|%lld\n", "{path}", static_cast<long long>(T::{path})); }}
}};
template <class T, class = void> struct P{i} : V{i}<T> {{}};
template <class T> struct P{i}<T, std::void_t<typename T::{path}>> {{
  static void run() {{ Describe<typename T::{path}>::run("{path}"); }}
}};
"""

_PATH = re.compile(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*\Z")
_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"][^>"]+[>"])', re.M)


def _check_path(p: str) -> str:
    if not _PATH.match(p):
        raise ExtractError(f"member name {p!r}: expected a C++ member name such as SmemLayoutQ "
                           "or CollectiveMainloop::SmemLayoutA")
    return p


def header_includes(text: str) -> list[str]:
    """The ``#include`` lines of a header's text, in order (``<...>`` / ``"..."`` kept).

    >>> header_includes('#pragma once\\n#include "cute/tensor.hpp"\\n #  include <cutlass/numeric_types.h>\\n')
    ['"cute/tensor.hpp"', '<cutlass/numeric_types.h>']
    """
    return _INCLUDE.findall(text)


def probe_program(header, type_expr: str, paths, cuda_arch: int | None = 80) -> str:
    """The C++ source that prints ``type_expr``'s members named by ``paths``."""
    header = Path(header).resolve()
    if not type_expr or not type_expr.strip() or "\n" in type_expr or ";" in type_expr:
        raise ExtractError(f"--type {type_expr!r}: expected one C++ type expression")
    paths = [_check_path(p) for p in dict.fromkeys(paths)]
    try:
        text = header.read_text(errors="replace")
    except OSError as e:
        raise ExtractError(f"{header}: cannot read: {e.strerror or e}") from None
    lines = ["// generated by symlayout.extract: prints the members of one traits type",
             _HOST_STUB, "#include <cstdio>", "#include <type_traits>", "#include <utility>",
             "#include <cute/tensor.hpp>", "#include <cute/atom/mma_atom.hpp>", "#include <cute/atom/copy_atom.hpp>"]
    if cuda_arch is not None:
        # the header's own includes first, in their host form; then the header's text sees __CUDA_ARCH__
        for inc in header_includes(text):
            if inc.startswith('"'):
                local = header.parent / inc[1:-1]
                inc = f'"{local}"' if local.exists() else inc
            lines.append(f"#include {inc}")
        lines.append(f"#define __CUDA_ARCH__ {int(cuda_arch) * 10}")
    lines.append(f'#include "{header}"')
    if cuda_arch is not None:
        lines.append("#undef __CUDA_ARCH__")
    lines.append(_PRELUDE)
    lines.append("namespace symlayout_probe {")
    for i, p in enumerate(paths):
        lines.append(_PROBE.format(i=i, path=p))
    lines.append("}  // namespace symlayout_probe\n")
    lines.append(f"using SymlayoutTraits = {type_expr.strip()};")
    lines.append("int main() {")
    lines.append(f'  std::printf("@|type|%s\\n", symlayout_probe::Name<SymlayoutTraits>::get());')
    for i in range(len(paths)):
        lines.append(f"  symlayout_probe::P{i}<SymlayoutTraits>::run();")
    lines.append("  return 0;\n}\n")
    return "\n".join(lines)


# ---------------------------------------------------------------- parsing the output


@dataclass
class Member:
    """One member of the traits type: its kind (``layout``, ``tiled_copy``, ...) and fields."""
    path: str
    kind: str
    fields: dict = field(default_factory=dict)

    def __getitem__(self, k):
        return self.fields[k]

    def get(self, k, default=None):
        return self.fields.get(k, default)


_NAME_FIELDS = ("tiled_mma", "tiled_copy", "copy_atom", "mma_atom", "value_type", "type", "val_a", "val_b", "val_c",
                "val_d")
_KINDS = ("tiled_mma", "tiled_copy", "copy_atom", "mma_atom", "layout", "composed", "value", "type", "missing")


@dataclass
class Probe:
    """Everything the probe program printed: the traits type's name and its members by path."""
    traits: str
    members: dict
    seconds: float = 0.0
    compiler: str = ""
    output: str = ""      # the program's output as printed

    def has(self, path: str) -> bool:
        m = self.members.get(path)
        return m is not None and m.kind != "missing"

    def __getitem__(self, path) -> Member:
        return self.members[path]


def parse_probe_output(text: str) -> Probe:
    """Read the probe program's output (see the module doc) into a :class:`Probe`.

    >>> p = parse_probe_output("@|type|x [with T = Foo<1>]\\n@SmemLayoutQ|layout|(_8,_64):(_64,_1)\\n@kNWarps|value|4\\n@Nope|missing|\\n")
    >>> p.traits, p["SmemLayoutQ"].kind, p["SmemLayoutQ"]["layout"], p["kNWarps"]["value"], p.has("Nope")
    ('Foo<1>', 'layout', '(_8,_64):(_64,_1)', 4, False)
    """
    traits, members = "", {}
    for ln in text.splitlines():
        if not ln.startswith("@"):
            continue
        path, _, rest = ln[1:].partition("|")
        f, _, value = rest.partition("|")
        if not path:
            traits = pretty_type(value)
            continue
        m = members.get(path)
        if m is None:
            m = members[path] = Member(path, f if f in _KINDS else "type")
        if f == "value":
            m.fields["value"] = int(value)
        elif f in _NAME_FIELDS:
            m.fields[f] = pretty_type(value)
        elif f != "missing":
            m.fields[f] = value
    return Probe(traits, members)


# ---------------------------------------------------------------- headers and compilers


def _site_include_dirs(site: Path) -> tuple[list[str], list[str]]:
    cutlass = [str(site / "cutlass_library/source/include")] if (site / "cutlass_library/source/include").is_dir() else []
    cuda = [str(site / sub) for sub in ("nvidia/cuda_runtime/include", "nvidia/cuda_cccl/include", "nvidia/cuda_nvcc/include")
            if (site / sub).is_dir()]
    return cutlass, cuda


def cutlass_include_dirs() -> tuple[list[str], list[str]]:
    """``(cutlass_dirs, cuda_dirs)``: include directories for CuTe/CUTLASS and for the CUDA
    headers they include (a host compiler needs both; ``nvcc`` brings its own CUDA headers).

    Looked for in ``$SYMLAYOUT_CUTE_SITE`` (a ``pip install --target`` directory
    holding ``nvidia-cutlass``), then in the installed ``cutlass_library``
    package (the ``nvidia-cutlass`` wheel) with the ``nvidia-cuda-*`` header
    wheels beside it; CUDA headers otherwise from ``$CUDA_HOME/include`` (and its ``cccl/``
    directory, where CUDA 13 keeps libcu++).
    ``([], [])`` when CuTe is nowhere.
    """
    env = os.environ.get("SYMLAYOUT_CUTE_SITE")
    cutlass, cuda = _site_include_dirs(Path(env)) if env else ([], [])
    if not cutlass:
        try:
            spec = importlib.util.find_spec("cutlass_library")
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            cutlass, cuda = _site_include_dirs(Path(list(spec.submodule_search_locations)[0]).parent)
    if not any(Path(d, "cute", "tensor.hpp").exists() for d in cutlass):
        return [], []
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    if not any(Path(d, "cuda_runtime.h").exists() for d in cuda) and Path(home, "include", "cuda_runtime.h").exists():
        cuda.append(str(Path(home, "include")))
    # CUDA 13 keeps libcu++ (<cuda/std/...>, which CUTLASS includes) under include/cccl
    if not any(Path(d, "cuda", "std", "utility").exists() for d in cuda) and Path(home, "include", "cccl", "cuda", "std").is_dir():
        cuda.append(str(Path(home, "include", "cccl")))
    return cutlass, cuda


def find_compiler(prefer: str | None = None) -> list[str]:
    """The C++ compiler command: ``prefer``, ``$CXX``, ``g++``, ``clang++`` or ``nvcc``, whichever is present."""
    cands = [prefer] if prefer else [os.environ.get("CXX"), "g++", "clang++", "nvcc"]
    for c in cands:
        if not c:
            continue
        exe = shutil.which(c)
        if exe:
            return [exe, "-x", "cu"] if Path(exe).name == "nvcc" else [exe]
    tried = ", ".join(c for c in cands if c)
    raise ExtractError(f"no C++ compiler found (tried {tried}); install g++ or nvcc, or set CXX")


def _host_flags(cxx) -> list[str]:
    """Flags that let a host compiler build a program that includes device-side CUTLASS headers:
    calls to device built-ins in templates are accepted (``-fpermissive``, g++), and the
    CUDA runtime functions that non-template CUTLASS code names are left unresolved (the
    probe never calls them).  CUTLASS's SM90 collective builders refuse to build unless the CUDA
    toolkit is 12 or later (``__CUDACC_VER_MAJOR__``, which only nvcc defines): a host compiler gets
    ``CUTLASS_SM90_COLLECTIVE_BUILDER_SUPPORTED`` defined instead (the types are the same; no device
    code is generated)."""
    name = Path(cxx[0]).name
    if name == "nvcc":
        return []
    return (["-fpermissive"] if "clang" not in name else []) + ["-ffunction-sections", "-Wl,--gc-sections",
                                                               "-DCUTLASS_SM90_COLLECTIVE_BUILDER_SUPPORTED"]


_UNDEFINED = re.compile(r"undefined reference to [`'\u2018]([A-Za-z_]\w*)['\u2019]")


def _c_stubs(output: str) -> str:
    """C definitions for the C functions a link could not find (CUDA runtime calls in
    non-template CUTLASS code that the probe never runs), or ``""``."""
    names = sorted(set(_UNDEFINED.findall(output)))
    return "".join(f"void {n}(void) {{}}\n" for n in names)


def first_error(output: str) -> str:
    """The compiler's first error, on one line (the first ``error:`` line; else the first undefined reference).

    >>> first_error("In file included from x/error.h:1,\\na.cpp:3:5: error: 'Foo' was not declared in this scope\\n")
    "a.cpp:3:5: error: 'Foo' was not declared in this scope"
    >>> first_error("k.cu(12): error: identifier \\"Foo\\" is undefined\\n")   # nvcc
    'k.cu(12): error: identifier "Foo" is undefined'
    """
    lines = output.splitlines()
    for pat in (r"\berror\b\s*:", r"undefined reference to"):
        for ln in lines:
            if re.search(pat, ln):
                return " ".join(ln.split())[:400]
    lines = [ln for ln in lines if ln.strip()]
    return " ".join(lines[0].split())[:400] if lines else "(no output)"


def _run_compiler(cmd, timeout_s, header, type_expr):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise ExtractError(f"{header}: compiling the probe of {type_expr} took over {timeout_s:g} s") from None
    except OSError as e:
        raise ExtractError(f"{header}: cannot run {cmd[0]}: {e.strerror or e}") from None


def probe_traits(header, type_expr: str, paths, include_dirs=(), cuda_arch: int | None = 80, defines=(),
                 compiler: str | None = None, timeout_s: float = 600, keep_dir: str | None = None) -> Probe:
    """Compile and run the probe program; return what it printed.

    ``include_dirs`` come before the CUTLASS headers found by
    :func:`cutlass_include_dirs`; ``defines`` are ``NAME`` or ``NAME=VALUE``
    (passed as ``-D``).  Any failure is an :class:`ExtractError` whose message
    is one line (the compiler's first error for a compile failure).
    """
    header = Path(header)
    if not header.is_file():
        raise ExtractError(f"{header}: no such header")
    cxx = find_compiler(compiler)
    cutlass, cuda = cutlass_include_dirs()
    nvcc = Path(cxx[0]).name == "nvcc"
    incs = [str(Path(d)) for d in include_dirs] + cutlass + ([] if nvcc else cuda)
    if not any(Path(d, "cute", "tensor.hpp").exists() for d in incs):
        raise ExtractError("CuTe headers not found: pip install nvidia-cutlass, set SYMLAYOUT_CUTE_SITE, or pass -I")
    src = probe_program(header, type_expr, paths, cuda_arch)
    work = Path(keep_dir) if keep_dir else Path(tempfile.mkdtemp(prefix="symlayout_extract_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        cpp, exe = work / "probe.cpp", work / "probe"
        cpp.write_text(src)
        cmd = cxx + ["-std=c++17", "-O0", "-w"] + _host_flags(cxx) + [f"-I{d}" for d in incs] \
            + [f"-D{d}" for d in defines] + [str(cpp), "-o", str(exe)]
        t0 = time.perf_counter()
        r = _run_compiler(cmd, timeout_s, header, type_expr)
        stubs = _c_stubs(r.stderr + r.stdout) if r.returncode != 0 and not nvcc else ""
        if stubs:  # link again with stub definitions of the missing C functions
            (work / "stubs.c").write_text(stubs)
            r = _run_compiler(cmd[:-3] + ["-x", "c", str(work / "stubs.c"), "-x", "c++"] + cmd[-3:], timeout_s,
                              header, type_expr)
        if r.returncode != 0:
            err = first_error(r.stderr + r.stdout).replace(str(cpp), "<generated probe>")
            raise ExtractError(f"{header}: {Path(cxx[0]).name} could not compile {type_expr}: {err}")
        try:
            run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            raise ExtractError(f"{header}: the probe program of {type_expr} did not finish") from None
        if run.returncode != 0:
            raise ExtractError(f"{header}: the probe program of {type_expr} failed (exit {run.returncode}): "
                               f"{first_error(run.stderr)}")
        probe = parse_probe_output(run.stdout)
        probe.output = run.stdout
        probe.seconds = time.perf_counter() - t0
        probe.compiler = Path(cxx[0]).name
        return probe
    finally:
        if not keep_dir:
            shutil.rmtree(work, ignore_errors=True)
