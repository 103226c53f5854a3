"""``symlayout cute``: the configuration as CuTe C++ to paste into a kernel.

>>> from types import SimpleNamespace as NS
>>> cfg = NS(name="seed", mma=NS(atom="SM80_16x8x16_F16F16F16F16_TN", raw_layout="(2,2,1)", raw_permutation=None),
...          copies={"A": NS(atom="SM75_U32x2_LDSM_N", type="half_t", raw_smem="(32,16):(16,1)", smem=None)}, params={})
>>> print(snippet(cfg).splitlines()[2])
auto mma = make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN{},
"""
from __future__ import annotations

import re

from ..algebra.notation import parse


def _cpp_int_tuple(t) -> str:
    if isinstance(t, tuple):
        return "make_shape(" + ", ".join(_cpp_int_tuple(e) for e in t) + ")"
    if isinstance(t, int):
        return f"Int<{t}>{{}}"
    return f"/* {t} */ {t}"


def _cpp_stride(t) -> str:
    if isinstance(t, tuple):
        return "make_stride(" + ", ".join(_cpp_stride(e) for e in t) + ")"
    if isinstance(t, int):
        return f"Int<{t}>{{}}"
    return str(t)


def cpp_layout(L) -> str:
    """A CuTe C++ expression building layout ``L`` (swizzles via ``composition``, keeping the offset of
    ``Sw o OFF o L``: CuTe's partitions depend on it).

    >>> from symlayout.algebra.notation import parse_layout
    >>> cpp_layout(parse_layout("Sw<3,3,3> o 16 o (32,64):(64,1)"))
    'composition(Swizzle<3,3,3>{}, Int<16>{}, make_layout(make_shape(Int<32>{}, Int<64>{}), make_stride(Int<64>{}, Int<1>{})))'
    """
    if getattr(L, "is_composed", False):
        sw = L.swizzle
        off = L.offset
        off_cpp = f"Int<{off}>{{}}" if isinstance(off, int) else f"/* {off} */ {off}"
        return f"composition(Swizzle<{sw.b},{sw.m},{sw.s}>{{}}, {off_cpp}, {cpp_layout(L.inner)})"
    return f"make_layout({_cpp_int_tuple(L.shape)}, {_cpp_stride(L.stride)})"


def snippet(cfg) -> str:
    """C++ for the TiledMMA, the smem layouts and the tiled copies of ``cfg``."""
    out = [f"// {cfg.name}" if cfg.name else "// symlayout configuration", "using namespace cute;"]
    if cfg.mma is None:
        return "\n".join(out + ["// (thread-map configuration: see CUTLASS's pitch_linear_thread_map.h)"])
    lay = cfg.mma.raw_layout or "(1,1,1)"
    L = parse(lay)
    lay_cpp = cpp_layout(L) if hasattr(L, "shape") else f"Layout<Shape<{', '.join(f'_{x}' for x in (L if isinstance(L, tuple) else (L,)))}>>{{}}"
    perm = ""
    if cfg.mma.raw_permutation:
        ents = []
        for p in cfg.mma.raw_permutation:
            p = str(p).strip()
            if p in ("_", ""):
                ents.append("Underscore")
            elif re.fullmatch(r"_?\d+", p):
                ents.append(f"Int<{p.lstrip('_')}>")
            else:
                ents.append(f"decltype({cpp_layout(parse(p))})")
        perm = f",\n                          Tile<{', '.join(ents)}>{{}}"
    out.append(f"auto mma = make_tiled_mma({cfg.mma.atom}{{}},\n                          {lay_cpp}{perm});")
    for op, cc in sorted(cfg.copies.items()):
        smem = cc.raw_smem
        try:
            Ls = parse(smem)
            expr = cpp_layout(Ls)
        except Exception:
            expr = f"/* {smem} */"
        out.append(f"auto s{op}_layout = {expr};  // {smem}")
        out.append(f"auto copy_{op} = make_tiled_copy_{op}(Copy_Atom<{cc.atom}, {cc.type}>{{}}, mma);")
        if op in ("A", "B"):
            out.append(f"// per thread: auto thr = copy_{op}.get_slice(threadIdx.x);\n"
                       f"//   copy(copy_{op}, thr.partition_S(s{op}), thr.retile_D(mma.get_slice(threadIdx.x).partition_fragment_{op}(s{op})));")
        else:
            out.append(f"// per thread: auto thr = copy_C.get_slice(threadIdx.x);\n"
                       f"//   copy(copy_C, thr.retile_S(tCrC), thr.partition_D(sC));")
    if cfg.params:
        out.append("// parameters: " + ", ".join(f"{k}" for k in cfg.params) + " (symbolic in this configuration)")
    return "\n".join(out)
