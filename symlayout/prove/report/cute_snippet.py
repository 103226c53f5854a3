"""``symlayout cute``: the configuration as a CuTe C++ program that compiles as is.

The program includes CuTe's headers, declares the TiledMMA, each shared-memory
tile as a tensor over a static layout (``Layout<Shape<_64,_64>, Stride<_64,_1>>``,
swizzles through ``composition(Swizzle<B,M,S>{}, ...)``; a layout written with
``tile_to_shape(...)`` / ``composition(...)`` keeps that form), each TiledCopy,
and a ``CUTE_HOST_DEVICE`` function with the copy as the kernel writes it for one
thread (the fragment declared, then copied into: no temporary).  ``main`` prints
the TiledCopies and the thread-0 partitions, so ``g++ -std=c++17`` (host only)
compiles and runs it; on a GPU the copy function is the kernel's body.

>>> from symlayout.config import loads_config
>>> cfg = loads_config('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\nlayout = "(2,2,1)"\\n'
...                    '[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\ntype = "half_t"\\nsmem = "(32,16):(16,1)"\\n')
>>> src = snippet(cfg)
>>> "using SmemLayoutA = Layout<Shape<_32,_16>, Stride<_16,_1>>;" in src, "Layout<Shape<_2,_2,_1>>{}" in src
(True, True)
"""
from __future__ import annotations

import re

from ...algebra import int_tuple as it
from ...algebra.cute_cpp import is_cpp_spelling, is_expression, split_args, to_notation
from ...algebra.notation import parse
from ...atoms import canonical_type
from ...atoms.gmma import _SMEM_RE
from ...atoms.umma import cpp_spelling, parse_umma_name
from ...errors import printable

HEADERS = ("cute/tensor.hpp", "cute/atom/mma_atom.hpp", "cute/atom/copy_atom.hpp", "cstdio")


# ---------------------------------------------------------------- layouts in C++


def _static(t, kind: str) -> str:
    """``Shape<_8,Shape<_2,_4>>`` for a static IntTuple (``kind``: Shape / Stride / Tile)."""
    if isinstance(t, tuple):
        return f"{kind}<" + ",".join(_static(e, kind) for e in t) + ">"
    return f"_{t}"


def _dynamic(t, kind: str) -> str:
    """``make_shape(Int<32>{}, 32*m)`` for an IntTuple with run-time extents."""
    if isinstance(t, tuple):
        return f"make_{kind}(" + ", ".join(_dynamic(e, kind) for e in t) + ")"
    if isinstance(t, int):
        return f"Int<{t}>{{}}"
    return f"int({str(t).replace('**', '^')})"


def _is_static(L) -> bool:
    return all(isinstance(x, int) for x in it.flatten_leaves(L.shape)) and \
        all(isinstance(x, int) for x in it.flatten_leaves(L.stride))


def cpp_layout(L) -> str:
    """A CuTe C++ expression of layout ``L``: a static ``Layout<Shape<...>, Stride<...>>{}`` when every
    extent and stride is static, ``make_layout(make_shape(...), make_stride(...))`` otherwise; swizzles
    via ``composition`` (keeping the offset of ``Sw o OFF o L``: CuTe's partitions depend on it).

    >>> from symlayout.algebra.notation import parse_layout
    >>> cpp_layout(parse_layout("Sw<3,3,3> o (8,64):(64,1)"))
    'composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{})'
    >>> cpp_layout(parse_layout("Sw<3,3,3> o 16 o (32,64):(64,1)"))
    'composition(Swizzle<3,3,3>{}, Int<16>{}, Layout<Shape<_32,_64>, Stride<_64,_1>>{})'
    """
    if getattr(L, "is_composed", False):
        sw, off = L.swizzle, L.offset
        mid = "" if off == 0 else (f"Int<{off}>{{}}, " if isinstance(off, int) else f"int({off}), ")
        return f"composition(Swizzle<{sw.b},{sw.m},{sw.s}>{{}}, {mid}{cpp_layout(L.inner)})"
    if _is_static(L):
        return f"Layout<{_static(L.shape, 'Shape')}, {_static(L.stride, 'Stride')}>{{}}"
    return f"make_layout({_dynamic(L.shape, 'shape')}, {_dynamic(L.stride, 'stride')})"


def cpp_from_spelling(raw: str) -> str | None:
    """The user's own function spelling (``tile_to_shape(...)``, ``composition(...)``) in C++, or None
    when the layout is plain notation (then :func:`cpp_layout` writes it).

    >>> cpp_from_spelling("tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (64,64))")
    'tile_to_shape(composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{}), Shape<_64,_64>{})'
    >>> cpp_from_spelling("(32,16):(16,1)") is None
    True
    """
    ptr = _SMEM_RE.match(raw) if "smem_ptr" in raw else None
    if ptr:                 # Sw o smem_ptr[Nb] o L: the swizzle on the pointer, as CuTe's layout atoms build it
        b, m, s, bits = ptr.group(1, 2, 3, 4)
        return (f"composition(Swizzle<{b},{m},{s}>{{}}, smem_ptr_flag_bits<{bits}>{{}}, "
                f"{cpp_layout(parse(ptr.group(5)))})")
    if not (is_cpp_spelling(raw) or is_expression(raw)):
        return None
    text = to_notation(raw) if is_cpp_spelling(raw) else raw
    m = re.fullmatch(r"\s*(\w+)\s*\((.*)\)\s*", text, re.S)
    if not m:
        return cpp_layout(parse(text))
    args = [_cpp_arg(a) for a in split_args(m.group(2))]
    return f"{m.group(1)}({', '.join(args)})"


def _cpp_arg(a: str) -> str:
    m = re.fullmatch(r"\s*(\w+)\s*\((.*)\)\s*", a, re.S)
    if m:
        return f"{m.group(1)}({', '.join(_cpp_arg(x) for x in split_args(m.group(2)))})"
    v = parse(a)
    if hasattr(v, "shape") or getattr(v, "is_composed", False):
        return cpp_layout(v)
    if getattr(v, "is_swizzle", False):
        return f"Swizzle<{v.b},{v.m},{v.s}>{{}}"
    if isinstance(v, (tuple, int)):
        return _static(v if isinstance(v, tuple) else (v,), "Shape") + "{}"
    return a


def _ctype(name: str) -> str:
    """CuTe's C++ name of a value type (aliases such as ``fp16`` or ``cutlass::half_t`` resolved)."""
    try:
        return canonical_type(name)
    except Exception:  # noqa: BLE001 (no atom catalog: the name as written)
        return name


def _atom_layout(cfg) -> str:
    lay = cfg.mma.layout
    if hasattr(lay, "shape"):
        return cpp_layout(lay)
    t = lay if isinstance(lay, tuple) else (lay,)
    return f"Layout<{_static(t, 'Shape')}>{{}}"


def _permutation(cfg) -> str:
    if cfg.mma.permutation is None:
        return ""
    ents = []
    for p in cfg.mma.permutation:
        if isinstance(p, int):
            ents.append(f"_{p}")
        elif hasattr(p, "shape"):
            ents.append(f"decltype({cpp_layout(p)})")
        else:
            ents.append("Underscore")
    return f", Tile<{', '.join(ents)}>{{}}"


# ---------------------------------------------------------------- the program


def snippet(cfg) -> str:
    """A C++ program for the TiledMMA, the smem tiles and the tiled copies of ``cfg``."""
    out = [f"// {printable(cfg.name)}" if cfg.name else "// symlayout configuration",
           f"// generated by: symlayout cute {getattr(cfg, 'path', '')}".rstrip(),
           "// compile (host): g++ -std=c++17 -I<cutlass>/include -I<cuda>/include prog.cpp",
           *[f"#include <{h}>" for h in HEADERS], "", "using namespace cute;", ""]
    sm100 = cfg.mma is not None and cfg.mma.is_sm100          # Version 3: the SM100 traits header, CuTe's spelling
    if sm100:
        out.insert(out.index("#include <cstdio>"), "#include <cute/atom/mma_traits_sm100.hpp>")
    if cfg.mma is None:
        out.append("// (a copy-only configuration, [g2r.X] / [r2g.X]: not written as C++ by this version)"
                   if getattr(cfg, "kind", "") == "copies" else
                   "// (a thread-map configuration: see CUTLASS's pitch_linear_thread_map.h)")
        out.append("int main() { return 0; }")
        return "\n".join(out)
    params = list(getattr(cfg, "params", {}) or {})
    for name in params:
        p = cfg.params[name]
        out.append(f"int {name} = {p.min};                 // [params] {name} = {p.min}..{p.max}")
    atom = cpp_spelling(parse_umma_name(cfg.mma.atom)) if sm100 else cfg.mma.atom
    out.append(f"using TiledMma = decltype(make_tiled_mma({atom}{{}}, {_atom_layout(cfg)}{_permutation(cfg)}));")
    for op, cc in sorted(cfg.copies.items()):
        expr = cpp_from_spelling(cc.raw_smem) or cpp_layout(cc.smem)
        static = not params
        if static:
            out.append(f"using SmemLayout{op} = {expr[:-2] if expr.startswith('Layout<') else f'decltype({expr})'};"
                       f"   // {cc.raw_smem}")
        out.append(f"using SmemCopyAtom{op} = Copy_Atom<{cc.atom}, {_ctype(cc.type)}>;")
    out.append("")
    for op, cc in sorted(cfg.copies.items()):
        lay = f"SmemLayout{op}{{}}" if not params else (cpp_from_spelling(cc.raw_smem) or cpp_layout(cc.smem))
        frag = "C" if op == "C" else op
        out.append(f"// operand {op}: what the kernel does for thread `tid` (smem: the tile's shared memory)")
        out.append(f"template <class Smem>\nCUTE_HOST_DEVICE void copy_{op}(int tid, Smem* smem) {{")
        out.append("  TiledMma mma;")
        out.append(f"  Tensor s{op} = make_tensor(make_smem_ptr(smem), {lay});")
        out.append(f"  auto tiled_copy = make_tiled_copy_{op}(SmemCopyAtom{op}{{}}, mma);")
        out.append("  auto thr_copy = tiled_copy.get_slice(tid);")
        if op == "C":
            out.append(f"  Tensor tCrC = mma.get_slice(tid).partition_fragment_C(s{op});   // the accumulators")
            if getattr(cc, "convert", False):
                out.append(f"  Tensor tCrD = make_fragment_like<{_ctype(cc.element_type)}>(tCrC);   // converted (convert_type)")
                out.append("  Tensor tSrC = thr_copy.retile_S(tCrD);")
            else:
                out.append("  Tensor tSrC = thr_copy.retile_S(tCrC);")
            out.append(f"  Tensor tSs{op} = thr_copy.partition_D(s{op});")
            out.append(f"  copy(tiled_copy, tSrC, tSs{op});")
        else:
            out.append(f"  Tensor tCr{frag} = mma.get_slice(tid).partition_fragment_{frag}(s{op});   // the MMA's fragment")
            out.append(f"  Tensor tSs{op} = thr_copy.partition_S(s{op});")
            out.append(f"  Tensor tSr{op} = thr_copy.retile_D(tCr{frag});")
            out.append(f"  copy(tiled_copy, tSs{op}, tSr{op});")
        out.append("}")
        out.append("")
    out.append("int main() {")
    out.append("  TiledMma mma;")
    out.append("  print(mma); print(\"\\n\");")
    for op, cc in sorted(cfg.copies.items()):
        if params:
            continue
        out.append(f"  auto copy{op} = make_tiled_copy_{op}(SmemCopyAtom{op}{{}}, mma);")
        out.append(f"  print(copy{op}); print(\"\\n\");")
        out.append(f"  print(\"s{op}: \"); print(SmemLayout{op}{{}}); print(\"\\n\");")
        ptr = _ctype(getattr(cc, "route_type", cc.element_type))    # (padded fp4/fp6: CuTe's uint8_t buffer)
        out.append(f"  if (0) copy_{op}(0, ({ptr}*)nullptr);   // instantiate the kernel-side "
                   "copy over the tile's element type (ldmatrix runs on the device only)")
    out.append("  return 0;")
    out.append("}")
    return "\n".join(out)
