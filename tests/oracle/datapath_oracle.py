"""Whole-path configurations (``[g2s.X]``/``[s2g.C]`` + ``[copy.X]`` + ``[stages]``) against CuTe C++ (issue 14).

The campaign (:func:`campaign`, deterministic) writes configurations that are not in the repository: tile
shapes, thread/value layouts, swizzles ``Sw<2,3,3>``/``<3,3,3>``/``<3,4,3>``/``<2,4,3>`` (and wrong ones),
K-major and MN-major tiles, f16/bf16/tf32/f64/int8, padded pitches, leading-dimension ranges, base
alignments, residues, stage counts (appended PIPE modes and hand-written rank-3 buffers, overlapping ones),
hand-built ``[copy.X]`` copies, cp.async/UniversalCopy atoms of 128/64/32 bits moving narrower types,
auto-vectorizing copies, C stores.

Ground truth (``datapath_oracle.hpp``): the real ``make_tiled_copy`` partitions and ``cute::copy`` /
``copy_if`` of every thread, for every admissible leading dimension, every stage and every residue; the
properties are computed in C++ from the addresses CuTe hands the atoms (nothing from symlayout). The
``[copy.X]`` table of a case (when MMA-derived) goes through ``oracle.hpp``'s ``run_case`` as well.
CuTe's compile-time rejections are recorded with their ``static_assert``.

Stored truth: ``datapath_cases.jsonl``. Commands::

    SYMLAYOUT_CUTE_SITE=/path/to/site python tests/oracle/datapath_oracle.py regenerate [--missing]   # g++ + CuTe
    python tests/oracle/datapath_oracle.py compare                                         # symlayout vs truth
"""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import cute_oracle as co  # noqa: E402
import oracle_campaign as oc  # noqa: E402

STORE = HERE / "datapath_cases.jsonl"
GLOBAL_PROPS = ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
                "coalescing")
CAPACITY_SM80 = 166912

EB = {"half_t": 2, "bfloat16_t": 2, "tfloat32_t": 4, "float": 4, "double": 8, "int8_t": 1, "uint8_t": 1}
# dtype -> (MMA atom, k of the atom, [copy.A] atom (K-major), [copy.A] atom (MN-major) or None)
MMAS = {
    "half_t": ("SM80_16x8x16_F32F16F16F32_TN", 16, "SM75_U32x4_LDSM_N", "SM75_U16x8_LDSM_T"),
    "bfloat16_t": ("SM80_16x8x16_F32BF16BF16F32_TN", 16, "SM75_U32x4_LDSM_N", "SM75_U16x8_LDSM_T"),
    "tfloat32_t": ("SM80_16x8x8_F32TF32TF32F32_TN", 8, "SM75_U32x4_LDSM_N", None),
    "int8_t": ("SM80_16x8x32_S32S8S8S32_TN", 32, "SM75_U32x4_LDSM_N", None),
    "double": ("SM80_8x8x4_F64F64F64F64_TN", 4, "DefaultCopy", None),
}
MMA_M = {"double": 8}
CP_ATOMS = {16: ["SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>",
                 "UniversalCopy<uint128_t>"],
            8: ["SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", "UniversalCopy<uint64_t>"],
            4: ["SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", "UniversalCopy<uint32_t>"]}
# swizzles on element offsets that keep 16-byte vectors whole, by element bytes
SWIZZLES = {2: ["Sw<2,3,3>", "Sw<3,3,3>", "Sw<3,4,3>", "Sw<2,4,3>"], 1: ["Sw<3,4,3>", "Sw<2,4,3>", "Sw<3,4,4>"],
            4: ["Sw<3,2,3>", "Sw<2,2,3>", "Sw<3,3,3>"], 8: ["Sw<3,1,3>", "Sw<2,1,3>", "Sw<2,2,3>"]}
WRONG_SWIZZLE = {2: "Sw<3,2,3>", 1: "Sw<3,3,3>", 4: "Sw<3,1,3>", 8: "Sw<3,0,3>"}


# ---------------------------------------------------------------- the campaign


def _smem_k(rng, R, K, eb, style, sw=None):
    """An (R,K) K-major smem tile: plain, padded, swizzled, or a swizzle atom tiled over the tile."""
    if style == "plain":
        return f"({R},{K}):({K},1)"
    if style == "padded":
        return f"({R},{K}):({K + 16 // eb},1)"
    if style == "wrong":
        return f"{WRONG_SWIZZLE[eb]} o ({R},{K}):({K},1)"
    b, m, s = (int(x) for x in sw[3:-1].split(","))
    ka = 1 << (m + b)                                  # the atom's K extent (one swizzle row group)
    if style == "atom" and K > ka and K % ka == 0 and R % 8 == 0:
        return f"{sw} o ((8,{R // 8}),({ka},{K // ka})):(({ka},{8 * ka}),(1,{R * ka}))"
    return f"{sw} o ({R},{K}):({K},1)"


def _smem_m(R, K, eb, style, sw=None):
    if style == "plain":
        return f"({R},{K}):(1,{R})"
    if style == "padded":
        return f"({R},{K}):(1,{R + 16 // eb})"
    return f"{sw} o ({R},{K}):(1,{R})"


class _Cases:
    def __init__(self):
        self.out, self.ids = [], set()

    def add(self, family, **c):
        base = f"{family}-{len(self.out):03d}"
        c = {"id": base, "family": family, **c}
        key = json.dumps({k: v for k, v in c.items() if k not in ("id", "family", "note")}, sort_keys=True)
        if key in self.ids:
            return
        self.ids.add(key)
        self.out.append(c)


def _g2s_case(c, rng, family, dtype, major, T, R, K, style, sw=None, cp_bytes=16, vmul=1, thr_order="row",
              ld_mult=None, galign=None, align=128, residue=(), stages=None, atom=None, operand="A", note="",
              copy="mma", pipe=None, smem_text=None):
    eb = EB[dtype]
    mma, _k, ldsm_k, ldsm_m = MMAS[dtype]
    vec = max(1, cp_bytes // eb) * vmul
    if atom is None:
        atom = rng.choice(CP_ATOMS[cp_bytes]) if cp_bytes in CP_ATOMS else "AutoVectorizingCopy"
    if major == "k":
        smem = smem_text or _smem_k(rng, R, K, eb, style, sw)
        cols = max(1, K // vec)
        rows = max(1, T // cols)
        thr = f"({rows},{cols}):({cols},1)" if thr_order == "row" else f"({rows},{cols}):(1,{rows})"
        val = f"(1,{vec})"
        gmem = f"({R},{K}):(ld,1)"
        lo = K
    else:
        smem = _smem_m(R, K, eb, style, sw)
        rws = max(1, R // vec)
        cl = max(1, T // rws)
        thr = f"({rws},{cl}):(1,{rws})" if thr_order == "row" else f"({rws},{cl}):({cl},1)"
        val = f"({vec},1)"
        gmem = f"({R},{K}):(1,ld)"
        lo = R
    mult = ld_mult or max(1, 16 // eb)
    lo = -(-lo // mult) * mult
    nm = MMA_M.get(dtype, 16)
    lay = f"({max(1, T // 32)},1,1)" if operand == "A" else f"(1,{max(1, T // 32)},1)"
    cp_atom = ldsm_k if major == "k" else ldsm_m
    if operand == "B" and cp_atom == "SM75_U32x4_LDSM_N":
        cp_atom = "SM75_U32x2_LDSM_N"
    if cp_atom is None:
        cp_atom = "UniversalCopy<uint32_t>" if eb == 4 else "AutoVectorizingCopy"
    mma_rows = nm * max(1, T // 32) if operand == "A" else 8 * max(1, T // 32)
    if copy == "mma" and (R % mma_rows or K % _k):
        copy = None                                   # the MMA tile does not divide this smem tile
    case = {"note": note, "operand": operand, "mma": {"atom": mma, "layout": lay, "permutation": None},
            "copy": None if copy is None else
            ({"atom": cp_atom, "type": dtype, "smem": smem, "align": align} if copy == "mma" else copy),
            "g": {"kind": "g2s", "atom": atom, "type": dtype, "thr": thr, "val": val, "gmem": gmem,
                  "major": major, "R": R, "K": K, "ld": [lo, lo + 3 * mult, mult],
                  "gmem_align": galign or 16, "align": align, "residue": list(residue),
                  "smem": None if copy is not None else smem},
            "stages": stages, "pipe": pipe}
    if pipe:                                      # a hand-written rank-3 buffer: the smem keys carry it
        case["g"]["smem"] = pipe
        case["copy"] = None
    c.add(family, **case)


def _s2g_case(c, rng, family, major, R, N, cp_bytes=16, vmul=1, thr_order="row", style="plain", sw=None,
              ld_mult=8, galign=16, residue=(), copy_atom="UniversalCopy<uint32_t>", note="", atom=None, T=128,
              layout="(2,2,1)", smem_text=None):
    eb = 2
    vec = cp_bytes // eb * vmul
    smem = _smem_k(rng, R, N, eb, style, sw) if major == "k" else _smem_m(R, N, eb, style, sw)
    smem = smem_text or smem
    if major == "k":
        cols = max(1, N // vec)
        rows = max(1, T // cols)
        thr = f"({rows},{cols}):({cols},1)" if thr_order == "row" else f"({rows},{cols}):(1,{rows})"
        val, gmem, lo = f"(1,{vec})", f"({R},{N}):(ld,1)", N
    else:
        rws = max(1, R // vec)
        cl = max(1, T // rws)
        thr, val, gmem, lo = f"({rws},{cl}):(1,{rws})", f"({vec},1)", f"({R},{N}):(1,ld)", R
    lo = -(-lo // ld_mult) * ld_mult
    atom = atom or (rng.choice(["UniversalCopy<uint128_t>", "AutoVectorizingCopy"]) if cp_bytes == 16 else
                    f"UniversalCopy<uint{cp_bytes * 8}_t>")
    c.add(family, note=note, operand="C",
          mma={"atom": "SM80_16x8x16_F16F16F16F16_TN", "layout": layout, "permutation": None},
          copy={"atom": copy_atom, "type": "half_t", "smem": smem, "align": 128},
          g={"kind": "s2g", "atom": atom, "type": "half_t", "thr": thr, "val": val, "gmem": gmem, "major": major,
             "R": R, "K": N, "ld": [lo, lo + 3 * ld_mult, ld_mult], "gmem_align": galign, "align": 128,
             "residue": list(residue), "smem": None},
          stages=None, pipe=None)


def campaign() -> list:
    """Every configuration, in a fixed order (seeded)."""
    rng = random.Random(14)
    c = _Cases()
    # 1. K-major operands of every type: tile shapes, swizzles, atoms of 128/64/32 bits, thread orders
    for dtype in ("half_t", "bfloat16_t", "tfloat32_t", "int8_t", "double"):
        eb = EB[dtype]
        for i in range(7):
            T = rng.choice([64, 128, 128, 256])
            K = rng.choice([k for k in (16, 32, 64, 128) if k * eb >= 32 and k * eb <= 256])
            R = rng.choice([r for r in (32, 64, 128) if r * K * eb <= 32768])
            style = rng.choice(["sw", "atom", "atom", "plain", "padded"])
            cpb = rng.choice([16, 16, 16, 8, 4]) if eb < 8 else rng.choice([16, 8])
            _g2s_case(c, rng, "kmajor", dtype, "k", T, R, K, style, sw=rng.choice(SWIZZLES[eb]), cp_bytes=cpb,
                      thr_order=rng.choice(["row", "row", "col"]), galign=rng.choice([16, 16, 128, 8]),
                      residue=rng.choice([(), ("M",), ("K",), ("M", "K")]))
    # 2. MN-major operands (16-bit types through ldmatrix .trans)
    for dtype in ("half_t", "bfloat16_t"):
        for i in range(6):
            T = rng.choice([64, 128])
            R = rng.choice([64, 128])
            K = rng.choice([16, 32, 64])
            style = rng.choice(["sw", "sw", "plain", "padded"])
            _g2s_case(c, rng, "mnmajor", dtype, "m", T, R, K, style, sw=rng.choice(SWIZZLES[2]),
                      thr_order=rng.choice(["row", "col"]), residue=rng.choice([(), ("M",), ("K",)]))
    # 3. pitfalls: wrong swizzles, misaligned leading dimensions and bases, narrow values, overruns
    for dtype in ("half_t", "int8_t", "tfloat32_t"):
        eb = EB[dtype]
        _g2s_case(c, rng, "pitfall", dtype, "k", 128, 64, 64 if eb < 4 else 32, "wrong", note="swizzle splits vectors")
        _g2s_case(c, rng, "pitfall", dtype, "k", 128, 64, 64 if eb < 4 else 32, "sw", sw=SWIZZLES[eb][0],
                  ld_mult=max(1, 8 // eb), note="ld a multiple of 8 bytes only")
        _g2s_case(c, rng, "pitfall", dtype, "k", 128, 64, 64 if eb < 4 else 32, "sw", sw=SWIZZLES[eb][0],
                  galign=8, note="gmem base 8-byte aligned")
        _g2s_case(c, rng, "pitfall", dtype, "k", 128, 64, 64 if eb < 4 else 32, "sw", sw=SWIZZLES[eb][0],
                  align=8, note="smem base 8-byte aligned")
        _g2s_case(c, rng, "pitfall", dtype, "k", 128, 48, 64 if eb < 4 else 32, "plain", note="tile not divided")
        _g2s_case(c, rng, "pitfall", dtype, "k", 128, 64, 64 if eb < 4 else 32, "sw", sw=SWIZZLES[eb][0],
                  atom=CP_ATOMS[16][0], cp_bytes=8, note="128-bit atom, values of 8 bytes")
        _g2s_case(c, rng, "pitfall", dtype, "k", 128, 64, 64 if eb < 4 else 32, "sw", sw=SWIZZLES[eb][0],
                  vmul=2, residue=("K",), note="two atoms per value group, K residue")
        _g2s_case(c, rng, "pitfall", dtype, "k", 128, 64, 64 if eb < 4 else 32, "padded", thr_order="col",
                  note="padded pitch, column-ordered threads")
    _g2s_case(c, rng, "pitfall", "half_t", "k", 128, 64, 64, "sw", sw="Sw<3,3,3>", ld_mult=8,
              note="ld may be below the tile width? no: min is the width; rows overlap never")
    # 4. stages: appended PIPE modes, hand-written rank-3 buffers (overlapping, not translates), capacity
    for n in (2, 3, 4):
        _g2s_case(c, rng, "stages", "half_t", "k", 128, 128, 32, "atom", sw="Sw<2,3,3>", stages=n, residue=("M", "K"))
        _g2s_case(c, rng, "stages", "half_t", "k", 128, 64, 64, "sw", sw="Sw<3,3,3>", stages=n)
        _g2s_case(c, rng, "stages", "tfloat32_t", "k", 128, 64, 32, "sw", sw="Sw<3,2,3>", stages=n)
    _g2s_case(c, rng, "stages", "half_t", "k", 128, 128, 128, "sw", sw="Sw<3,3,3>", stages=6, note="over capacity")
    _g2s_case(c, rng, "stages", "half_t", "k", 128, 64, 40, "padded", stages=3, note="stage bytes not 128-multiples")
    for stride, note in ((4096, "stages one after another"), (2048, "stages overlap"), (4608, "gap between stages"),
                         (4104, "stage 1 off the bank grid")):
        _g2s_case(c, rng, "stages", "half_t", "k", 128, 64, 64, "plain", note=note,
                  pipe=f"Sw<3,3,3> o 0 o (64,64,3):(64,1,{stride})")
    _g2s_case(c, rng, "stages", "half_t", "k", 128, 128, 32, "plain", note="CUTLASS's staged atom form",
              pipe="Sw<2,3,3> o 0 o ((8,16),(32,1),(1,3)):((32,256),(1,0),(0,4096))")
    # 5. hand-built [copy.X] and a [copy.X] smem the global copy does not write
    FA2_Q = "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))"
    for tv in (("tv", "((4,8,4),((2,2,2),(1,1))):((128,1,16),((64,8,512),(0,0)))", "(64,16)"),
               ("thr", "(32,4):(1,32)", "(1,8)")):
        cp = {"atom": "SM75_U32x4_LDSM_N", "type": "half_t", "smem": FA2_Q, "align": 128,
              ("tv" if tv[0] == "tv" else "thr"): tv[1], ("tiler" if tv[0] == "tv" else "val"): tv[2]}
        _g2s_case(c, rng, "handbuilt", "half_t", "k", 128, 128, 64, "sw", sw="Sw<3,3,3>", copy=cp,
                  note="hand-built [copy.A]")
        c.out[-1]["g"]["smem"] = None
    for other in ("Sw<3,3,3> o (128,64):(64,1)", "(128,64):(64,1)"):
        _g2s_case(c, rng, "mismatch", "half_t", "k", 128, 128, 64, "atom", sw="Sw<3,3,3>",
                  note=f"[copy.A] reads {other}")
        c.out[-1]["g"]["smem"] = c.out[-1]["copy"]["smem"]
        c.out[-1]["copy"]["smem"] = other
    # 6. C stores: [copy.C] + [s2g.C]
    for i in range(10):
        R = rng.choice([32, 64])
        N = rng.choice([32, 64, 128])
        style = rng.choice(["plain", "sw", "padded"])
        _s2g_case(c, rng, "s2g", rng.choice(["k", "k", "m"]), R, N, cp_bytes=rng.choice([16, 16, 8, 4]),
                  thr_order=rng.choice(["row", "col"]), style=style, sw=rng.choice(SWIZZLES[2]),
                  ld_mult=rng.choice([8, 8, 4]), galign=rng.choice([16, 16, 4]),
                  residue=rng.choice([(), ("M",), ("N",), ("M", "N")]),
                  copy_atom=rng.choice(["UniversalCopy<uint32_t>", "SM90_U32x2_STSM_N"]))
    # 7. swizzles with offsets on the g2s / s2g side (on and off the swizzle period)
    for off in (512, 1024, 8, 64, 520):
        _g2s_case(c, rng, "swizzle-offset", "half_t", "k", 128, 64, 64, "sw", note=f"offset {off}",
                  smem_text=f"Sw<3,3,3> o {off} o (64,64):(64,1)")
    for off in (256, 16):
        _g2s_case(c, rng, "swizzle-offset", "half_t", "k", 128, 64, 32, "sw", note=f"offset {off}",
                  smem_text=f"Sw<2,3,3> o {off} o (64,32):(32,1)")
    for off in (512, 24):
        _s2g_case(c, rng, "swizzle-offset", "k", 32, 64, note=f"offset {off}", atom="UniversalCopy<uint128_t>",
                  smem_text=f"Sw<3,3,3> o {off} o (32,64):(64,1)")
    # 8. leading dimensions on the sector grid (coalesced requests), and one off it by 16 bytes
    for dtype, K, mult in (("half_t", 64, 64), ("int8_t", 128, 128), ("tfloat32_t", 32, 32), ("bfloat16_t", 64, 16),
                           ("double", 16, 16)):
        eb = EB[dtype]
        _g2s_case(c, rng, "coalesced", dtype, "k", 128, 64, K, "sw", sw=SWIZZLES[eb][0], ld_mult=mult,
                  atom=CP_ATOMS[16][0], note=f"ld a multiple of {mult * eb} bytes", residue=("M",))
    _g2s_case(c, rng, "coalesced", "half_t", "m", 128, 128, 32, "sw", sw="Sw<3,3,3>", ld_mult=64,
              atom=CP_ATOMS[16][1], note="MN-major, ld a multiple of 128 bytes")
    _s2g_case(c, rng, "coalesced", "k", 64, 64, ld_mult=64, atom="UniversalCopy<uint128_t>", note="C rows of 128 bytes")
    # 9. a swizzle inside one 16-byte vector: CuTe's recast rounds the address the instruction gets
    for dtype, sw, atom, order in (("int8_t", "Sw<2,1,2>", CP_ATOMS[16][0], "row"),
                                   ("int8_t", "Sw<2,1,2>", "UniversalCopy<uint128_t>", "col"),
                                   ("half_t", "Sw<1,2,3>", CP_ATOMS[16][1], "row"),
                                   ("half_t", "Sw<2,2,3>", CP_ATOMS[16][0], "row")):
        _g2s_case(c, rng, "recast", dtype, "k", 64, 32, 64, "sw", atom=atom, thr_order=order, copy=None,
                  smem_text=f"{sw} o (32,64):(64,1)", note=f"{sw} over {dtype} inside the 16-byte vector")
    _s2g_case(c, rng, "recast", "k", 32, 64, atom="UniversalCopy<uint128_t>", smem_text="Sw<1,2,3> o (32,64):(64,1)",
              note="Sw<1,2,3> over half_t inside the 16-byte vector")
    return c.out


def sample(cases, n: int, seed: int = 14) -> list:
    """A deterministic subset touching every family (the default test and the compiler sample)."""
    return oc.sample(cases, min(n, len(cases)), seed)


# ---------------------------------------------------------------- the configuration file


def _ld_param(g):
    lo, hi, m = g["ld"]
    return f"ld = {{ min = {lo}, max = {hi}, multiple_of = {m} }}"


def case_toml(case: dict) -> str:
    g, cp, mma = case["g"], case["copy"], case["mma"]
    out = [f'name = "{case["id"]}"', "[params]", _ld_param(g), "[mma]", f'atom = "{mma["atom"]}"',
           f'layout = "{mma["layout"]}"']
    op = case["operand"]
    if cp is not None:
        out += [f"[copy.{op}]", f'atom = "{cp["atom"]}"', f'type = "{cp["type"]}"', f'smem = "{cp["smem"]}"',
                f"align = {cp.get('align', 128)}"]
        for k in ("thr", "val", "tv", "tiler"):
            if k in cp:
                out.append(f'{k} = "{cp[k]}"')
    out += [f"[{g['kind']}.{op}]", f'atom = "{g["atom"]}"', f'type = "{g["type"]}"', f'thr = "{g["thr"]}"',
            f'val = "{g["val"]}"', f'gmem = "{g["gmem"]}"', f"gmem_align = {g['gmem_align']}"]
    if g.get("smem"):
        out += [f'smem = "{g["smem"]}"', f"align = {g['align']}"]
    if g["residue"]:
        out.append("residue = [" + ", ".join(f'"{r}"' for r in g["residue"]) + "]")
    if case.get("stages"):
        out += ["[stages]", f"count = {case['stages']}"]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- C++


def _cpp_shape(text):
    p = co.parse(text)
    return co.cpp_layout(text) if p[0] == "layout" else f"make_layout({co._cpp_tuple(p[1], 'Shape')}{{}})"


def _atom_cpp(atom):
    if atom.startswith("AutoVectorizingCopy") or atom == "DefaultCopy":
        return atom
    return f"oracle::Rec<{atom}>"


def _staged_cpp(smem, n):
    return f"dpo_append_pipe<{n}>({co.cpp_layout(smem)})" if n else co.cpp_layout(smem)


def case_cpp(case: dict, fn: str) -> str:
    g, cp = case["g"], case["copy"]
    T = co._CPP_TYPES[g["type"]]
    smem = g["smem"] or cp["smem"]
    n = case.get("stages") or 0
    sl = _staged_cpp(smem, n)
    cl = sl
    if cp is not None and g.get("smem") and cp["smem"] != smem:
        cl = _staged_cpp(cp["smem"], n)
    tc = f"make_tiled_copy(Copy_Atom<{_atom_cpp(g['atom'])}, {T}>{{}}, {_cpp_shape(g['thr'])}, {_cpp_shape(g['val'])})"
    lo, hi, m = g["ld"]
    lds = "{" + ", ".join(str(x) for x in range(lo, hi + 1, m)) + "}"
    R, K = g["R"], g["K"]
    res = {d: ("{" + ", ".join(str(r) for r in range(1, ext + 1)) + "}" if d in g["residue"] else "{}")
           for d, ext in zip("MN" if case["operand"] == "C" else ("M" if case["operand"] == "A" else "N") + "K", (R, K))}
    rm, rk = list(res.values())
    body = (f"void {fn}() {{  // {case['id']}\n"
            f"  auto tc = {tc};\n"
            f"  dpo::run_global<{'true' if g['kind'] == 'g2s' else 'false'}, {0 if g['major'] == 'k' else 1}, {R}, {K}, "
            f"{T}>(\"{case['id']}\", tc, {sl}, {cl}, {lds}, {g['gmem_align']}, {g['align']}, {rm}, {rk}, "
            f"{'true' if g['atom'].startswith('AutoVectorizing') else 'false'});\n")
    if cp is not None and "thr" not in cp and "tv" not in cp:
        sub = {"id": case["id"] + "/copy", "mma": case["mma"], "operand": case["operand"],
               "copy": {"atom": cp["atom"], "type": cp["type"], "smem": cp["smem"], "align": cp.get("align", 128)}}
        inner = co.case_cpp(sub, fn + "_copy")
        body = inner + body + f"  {fn}_copy();\n"
    return body + "}\n"


PRELUDE = '''#include "datapath_oracle.hpp"
using namespace cute;
template <int P, class L> auto dpo_append_pipe_l(L const& l) {
  return make_layout(append(l.shape(), Int<P>{}), append(l.stride(), cosize(l)));
}
template <int P, class L> auto dpo_append_pipe(L const& l) { return dpo_append_pipe_l<P>(l); }
template <int P, class A, class O, class B> auto dpo_append_pipe(ComposedLayout<A, O, B> const& c) {
  return composition(c.layout_a(), c.offset(), dpo_append_pipe_l<P>(c.layout_b()));
}
'''


def program(cases) -> tuple[str, dict]:
    head = f"// generated by tests/oracle/datapath_oracle.py: {len(cases)} configuration(s)\n" + PRELUDE
    return co.assemble(head, cases, case_cpp)


def _gxx(incs, src, exe=None):
    out = ["-fsyntax-only"] if exe is None else ["-o", str(exe)]
    r = subprocess.run(["g++", *co.FLAGS, "-fmax-errors=50", *[f"-I{d}" for d in incs], str(src), *out],
                       capture_output=True, text=True)
    return r.returncode == 0, r.stderr


def _parse(out: str) -> dict:
    res = {}
    for line in out.splitlines():
        for tag in ("DPV ", "VERDICT "):
            if line.startswith(tag):
                d = json.loads(line[len(tag):])
                res[d.pop("id")] = d
    return res


def _run_batch(cases, incs, work: Path, tag: str, log) -> dict:
    results, todo = {}, list(cases)
    for attempt in range(3):
        src, exe = work / f"{tag}_{attempt}.cpp", work / f"{tag}_{attempt}"
        src.write_text(program(todo)[0])
        ok, err = _gxx(incs, src, exe)
        if ok:
            break
        keep = []
        for j, c in enumerate(todo):                 # compile each alone: CuTe's reason is its own
            s1 = work / f"{tag}_{attempt}_{j}.cpp"
            s1.write_text(program([c])[0])
            ok1, err1 = _gxx(incs, s1)
            if ok1:
                keep.append(c)
            else:
                results[c["id"]] = {"rejected": co.rejection_text(err1)}
                log(f"  rejected {c['id']}: {results[c['id']]['rejected'][:100]}")
        if len(keep) == len(todo):
            raise RuntimeError(f"{src} does not compile, but every case compiles alone:\n{err[-3000:]}")
        todo = keep
        if not todo:
            return results
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    got = _parse(r.stdout)
    for c in todo:
        d = got.get(c["id"], {"error": f"the oracle program failed (exit {r.returncode}) {r.stderr[-300:]}"})
        if c["id"] + "/copy" in got:
            d["copy"] = got[c["id"] + "/copy"]
        results[c["id"]] = d
    return results


def run_cases(cases, incs=None, jobs=2, batch=9, workdir=None, log=print, on_batch=None) -> dict:
    incs = co.headers(incs)
    with co.work_folder(workdir, "symlayout-dpo-") as work:
        for f in ("oracle.hpp", "datapath_oracle.hpp"):
            shutil.copyfile(HERE / f, work / f)
        subprocess.run(["g++", *co.FLAGS, *[f"-I{d}" for d in incs], "-x", "c++-header",
                        str(work / "datapath_oracle.hpp"), "-o", str(work / "datapath_oracle.hpp.gch")],
                       capture_output=True, text=True)
        incs = [str(work), *incs]
        return co.run_batches(cases, batch, lambda chunk, tag: _run_batch(chunk, incs, work, tag, log), jobs, log,
                              on_batch)


# ---------------------------------------------------------------- the oracle's verdict vs symlayout's


def truth_of(case, cute: dict) -> dict:
    """``{(operand, property): status}`` (+ ``("g", "bank_degree")``) CuTe's ground truth says."""
    if "rejected" in cute or "error" in cute:
        return {}
    g = case["g"]
    name = f"{g['kind']}.{case['operand']}"
    out = {(name, p): cute[p] for p in GLOBAL_PROPS}
    out[(name, "bank_degree")] = cute["bank_degree"]
    if cute.get("stages", 1) > 1:
        st = f"stages.{case['operand']}"
        out[(st, "exactly_once")] = cute["stages_exactly_once"]
        cap = "refuted" if cute["smem_bytes"] > CAPACITY_SM80 else "proved"
        out[(st, "in_bounds")] = cap
    cp = cute.get("copy")
    if cp is not None and "rejected" not in cp:
        for p in co.PROPERTIES:
            out[(case["operand"], p)] = cp[p]
        out[(case["operand"], "bank_degree")] = cp.get("bank_degree")
    return out


def symlayout_results(toml_text: str, name="<datapath case>") -> dict:
    from symlayout.config import loads_config
    from symlayout.errors import SymlayoutError
    from symlayout.prove.engine import prove_config
    try:
        rep = prove_config(loads_config(toml_text, path=name))
    except SymlayoutError as e:
        return {"error": str(e)}
    except Exception as e:  # noqa: BLE001 - an internal error is a disagreement
        return {"error": f"internal: {type(e).__name__}: {e}"}
    if rep.error:
        return {"error": rep.error}
    out = {}
    for r in rep.results:
        out[(r.operand, r.property)] = r.status
        if r.property == "bank_conflicts" and r.counterexample is not None:
            out[(r.operand, "bank_degree")] = (r.counterexample.extra or {}).get("degree")
        if r.detail and r.status in ("unknown", "error"):
            out[(r.operand, r.property + ":detail")] = r.detail
    return out


def differences(case, cute: dict, sym: dict) -> list:
    """``[(what, CuTe, symlayout)]``; empty when they agree.  A rejected configuration must not be built
    and proved (something refuted, nothing in error).  Otherwise each property CuTe decides must have
    the same status (``unknown`` is listed apart: not a wrong verdict); a refuted bank_conflicts has
    CuTe's degree."""
    if "error" in cute:
        return [("oracle", cute["error"], "")]
    if "rejected" in cute:
        if "error" in sym:
            return [("build", f"rejected: {cute['rejected'][:80]}", f"error: {sym['error']}")]
        if not any(v == "refuted" for k, v in sym.items() if not k[1].endswith(("degree", "detail"))):
            return [("build", f"rejected: {cute['rejected'][:80]}", "nothing refuted")]
        return []
    if "error" in sym:
        return [("build", "compiles", f"error: {sym['error']}")]
    truth = truth_of(case, cute)
    out = []
    g = f"{case['g']['kind']}.{case['operand']}"
    # a copy CuTe compiles but whose tile the TiledCopy does not divide: symlayout refutes in_bounds alone
    overrun = sym.get((g, "in_bounds")) == "refuted" and (g, "coverage") not in sym
    for (op, p), v in truth.items():
        if p == "bank_degree":
            continue
        s = sym.get((op, p), "absent")
        if overrun and op == g:
            if p == "in_bounds" and v != "refuted":
                out.append(((op, p), v, s))
            continue
        if s != v:
            out.append(((op, p), v, s))
        elif p == "bank_conflicts" and s == "refuted" and sym.get((op, "bank_degree")) != truth.get((op, "bank_degree")):
            out.append(((op, p), f"refuted (degree {truth.get((op, 'bank_degree'))})",
                        f"refuted (degree {sym.get((op, 'bank_degree'))})"))
    return out


def wrong(diffs) -> list:
    """The differences that are wrong verdicts; the rest are gaps (symlayout ``unknown``, or an ``error``
    where it does not model the configuration or CuTe does not compile it either)."""
    return [d for d in diffs if not str(d[2]).startswith(("unknown", "error", "absent"))]


def load_store(path=STORE) -> list:
    if not Path(path).exists():
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["regenerate", "compare", "list"])
    ap.add_argument("--only", help="comma-separated case ids")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--missing", action="store_true", help="regenerate only cases not stored (or changed)")
    ap.add_argument("--out", default=str(STORE))
    a = ap.parse_args(argv)
    cases = campaign()
    if a.only:
        ids = set(a.only.split(","))
        cases = [c for c in cases if c["id"] in ids]
    if a.what == "list":
        for c in cases:
            print(c["id"], c.get("note", ""))
            print(case_toml(c))
        return 0
    if a.what == "regenerate":
        incs = co.include_dirs()
        version = co.cute_version(incs)
        old = {c["id"]: c for c in load_store(a.out)}
        if a.missing:                       # only cases not stored, or stored for another configuration
            cases = [c for c in cases if c["id"] not in old or old[c["id"]]["toml"] != case_toml(c)]
        byid = {c["id"]: c for c in cases}

        def save(res):
            for cid, r in res.items():
                c = byid[cid]
                old[cid] = {"id": cid, "family": c["family"], "toml": case_toml(c), "case": c,
                            "cute": {"version": version, **r}}
            keep = {c["id"] for c in campaign()}
            with open(a.out, "w") as f:
                for cid in sorted(old):
                    if cid in keep:
                        f.write(json.dumps(old[cid], sort_keys=True) + "\n")
        run_cases(cases, jobs=a.jobs, on_batch=save)
        print(f"stored {len(old)} cases in {a.out}")
        return 0
    stored = {c["id"]: c for c in load_store(a.out)}
    ndiff = nunk = 0
    checked = 0
    for c in cases:
        s = stored.get(c["id"])
        if s is None:
            print(f"{c['id']}: no stored truth")
            continue
        sym = symlayout_results(s["toml"], c["id"])
        d = differences(c, s["cute"], sym)
        checked += len(truth_of(c, s["cute"])) or 1
        bad = wrong(d)
        nunk += len(d) - len(bad)
        ndiff += len(bad)
        for x in d:
            print(f"{c['id']} ({c.get('note', '')}): {x[0]}: CuTe {x[1]}, symlayout {x[2]}"
                  + ("  <-- WRONG" if x in bad else "  (gap)"))
    rej = sum(1 for c in cases if "rejected" in stored.get(c["id"], {}).get("cute", {}))
    print(f"{len(cases)} cases ({rej} rejected by CuTe), {checked} verdicts compared, {ndiff} wrong verdicts, "
          f"{nunk} gaps (unknown / not modelled)")
    return 1 if ndiff else 0


if __name__ == "__main__":
    sys.exit(main())
