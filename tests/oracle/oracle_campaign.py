"""The soundness campaign: mutated concrete configurations checked against CuTe C++ (issue 12).

:func:`campaign` returns the configurations (dicts, see ``cute_oracle.case_toml``), deterministically.
Families (``family`` key):

* ``swizzle-offset``: ``Sw<B,M,S> o OFF o L`` with offsets that are and are not multiples of the swizzle
  period (0, 8, 16, 24, 64, 128, 512, 520) for A, B and C, through LDSM x1/x2/x4, STSM and vector copies;
* ``swizzle-nonpow2``: swizzles over extents that are not powers of two (K = 192, 96, 48, padded 72) and
  the proper ``tile_to_shape`` form of the same tile;
* ``mixed-types``: value types the MMA does not read (bf16 into f16, int8 vs uint8, e4m3 vs e5m2, half or
  float into tf32, half C stored from float accumulators) next to the right ones;
* ``ldsm``: LDSM x1/x2/x4 .N and .T on K-major and M/N-major A and B, several atom layouts and permutations;
* ``stsm``: STSM x1/x2/x4 .N and .T for C, row- and column-major, swizzled, padded;
* ``padded``: padded pitches (bank conflicts, misaligned rows);
* ``vector``: UniversalCopy<uint32/64/128>, AutoVectorizingCopy, DefaultCopy for A, B and C;
* ``align``: base alignments below the vector width;
* ``permuted``: ``Tile<_32,_32,_16>`` so that B through LDSM x4 and C through STSM x4 compile.

Shapes come from the small atom table below (independent of symlayout's catalog).
"""
from __future__ import annotations

import random

# atom -> (M, N, K, A type, B type, C type)
ATOMS = {
    "SM80_16x8x16_F16F16F16F16_TN": (16, 8, 16, "half_t", "half_t", "half_t"),
    "SM80_16x8x16_F32F16F16F32_TN": (16, 8, 16, "half_t", "half_t", "float"),
    "SM80_16x8x8_F16F16F16F16_TN": (16, 8, 8, "half_t", "half_t", "half_t"),
    "SM75_16x8x8_F32F16F16F32_TN": (16, 8, 8, "half_t", "half_t", "float"),
    "SM80_16x8x16_F32BF16BF16F32_TN": (16, 8, 16, "bfloat16_t", "bfloat16_t", "float"),
    "SM80_16x8x8_F32TF32TF32F32_TN": (16, 8, 8, "tfloat32_t", "tfloat32_t", "float"),
    "SM80_16x8x32_S32S8S8S32_TN": (16, 8, 32, "int8_t", "int8_t", "int32_t"),
    "SM80_16x8x32_S32U8U8S32_TN": (16, 8, 32, "uint8_t", "uint8_t", "int32_t"),
    "SM80_16x8x32_S32S8U8S32_TN": (16, 8, 32, "int8_t", "uint8_t", "int32_t"),
    "SM80_8x8x16_S32S8S8S32_TN": (8, 8, 16, "int8_t", "int8_t", "int32_t"),
    "SM89_16x8x32_F32E4M3E4M3F32_TN": (16, 8, 32, "float_e4m3_t", "float_e4m3_t", "float"),
    "SM89_16x8x32_F32E5M2E5M2F32_TN": (16, 8, 32, "float_e5m2_t", "float_e5m2_t", "float"),
    "SM89_16x8x32_F32E4M3E5M2F32_TN": (16, 8, 32, "float_e4m3_t", "float_e5m2_t", "float"),
}

F16 = "SM80_16x8x16_F16F16F16F16_TN"
F16F32 = "SM80_16x8x16_F32F16F16F32_TN"
BF16 = "SM80_16x8x16_F32BF16BF16F32_TN"
TF32 = "SM80_16x8x8_F32TF32TF32F32_TN"
S8 = "SM80_16x8x32_S32S8S8S32_TN"

LDSM_N = ["SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N"]
LDSM_T = ["SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T"]
STSM_N = ["SM90_U32x1_STSM_N", "SM90_U32x2_STSM_N", "SM90_U32x4_STSM_N"]
STSM_T = ["SM90_U16x2_STSM_T", "SM90_U16x4_STSM_T", "SM90_U16x8_STSM_T"]
VEC = ["UniversalCopy<uint32_t>", "UniversalCopy<uint64_t>", "UniversalCopy<uint128_t>", "AutoVectorizingCopy",
       "DefaultCopy"]


def _layout_dims(layout: str):
    inner = layout.split(":")[0].strip("()")
    return tuple(int(x) for x in inner.split(","))


def tile(atom: str, layout: str = "(2,2,1)", perm=None):
    """(M, N, K) of the TiledMMA tile."""
    m, n, k = ATOMS[atom][:3]
    lm, ln, lk = _layout_dims(layout)
    t = [m * lm, n * ln, k * lk]
    for i, p in enumerate(perm or ()):
        if p not in ("_", None):
            t[i] = int(p) if p.lstrip("-").isdigit() else _perm_size(p)
    return tuple(t)


def _perm_size(p: str) -> int:
    shape = p.split(":")[0].strip("()").split(",")
    r = 1
    for s in shape:
        r *= int(s)
    return r


class _Cases:
    def __init__(self):
        self.out, self.ids = [], set()

    def add(self, family, atom, layout, perm, operand, copy_atom, vtype, smem, align=128, note=""):
        cid = f"{family}:{operand}:{atom.split('_')[1]}{''.join(_layout_dims(layout).__repr__().split())}:" \
              f"{copy_atom}:{vtype}:{smem}" + (f":p{perm}" if perm else "") + (f":a{align}" if align != 128 else "")
        cid = cid.replace(" ", "")
        if cid in self.ids:
            return
        self.ids.add(cid)
        self.out.append({"id": cid, "family": family, "note": note,
                         "mma": {"atom": atom, "layout": layout, "permutation": list(perm) if perm else None},
                         "operand": operand,
                         "copy": {"atom": copy_atom, "type": vtype, "smem": smem, "align": align}})


def _op_type(atom, operand):
    return ATOMS[atom][3 + "ABC".index(operand)]


def _kmajor(rows, cols):
    return f"({rows},{cols}):({cols},1)"


def _mnmajor(rows, cols):
    return f"({rows},{cols}):(1,{rows})"


def swizzle_offset(c: _Cases):
    offsets = [0, 8, 16, 24, 64, 128, 512, 520]
    for atom, lay, sw, kdim, copies in [
            (F16, "(2,2,1)", "Sw<3,3,3>", 64, ["SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x1_LDSM_N",
                                              "UniversalCopy<uint128_t>"]),
            (BF16, "(1,4,1)", "Sw<3,3,3>", 64, ["SM75_U32x4_LDSM_N"]),
            (TF32, "(2,2,1)", "Sw<3,2,3>", 32, ["SM75_U32x4_LDSM_N", "UniversalCopy<uint64_t>"]),
            (S8, "(2,2,1)", "Sw<3,4,3>", 128, ["SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N"])]:
        M, N, K = tile(atom, lay)
        vt = _op_type(atom, "A")
        if atom == TF32:
            vt = "float"
        for cp in copies:
            offs = offsets if cp == "SM75_U32x4_LDSM_N" else [0, 16, 64, 520]
            for off in offs:
                c.add("swizzle-offset", atom, lay, None, "A", cp, vt, f"{sw} o {off} o {_kmajor(32 if M <= 32 else M, kdim)}")
                if cp in ("SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N") and off in (0, 8, 16, 64, 520):
                    c.add("swizzle-offset", atom, lay, None, "B", cp, vt, f"{sw} o {off} o {_kmajor(max(N, 16), kdim)}")
    # MN-major operands through .T with offsets (the swizzle runs along M / N)
    for off in [0, 8, 16, 64, 520]:
        c.add("swizzle-offset", F16, "(2,2,1)", None, "A", "SM75_U16x8_LDSM_T", "half_t", f"Sw<3,3,3> o {off} o {_mnmajor(64, 32)}")
        c.add("swizzle-offset", F16, "(2,2,1)", None, "B", "SM75_U16x8_LDSM_T", "half_t", f"Sw<3,3,3> o {off} o {_mnmajor(64, 32)}")
    # C stores onto swizzled tiles with offsets
    for off in [0, 8, 16, 64, 520]:
        for cp in ["SM90_U32x2_STSM_N", "SM90_U32x1_STSM_N", "UniversalCopy<uint32_t>"]:
            c.add("swizzle-offset", F16, "(2,2,1)", None, "C", cp, "half_t", f"Sw<3,3,3> o {off} o {_kmajor(32, 64)}")
        c.add("swizzle-offset", F16, "(2,4,1)", None, "C", "SM90_U32x4_STSM_N", "half_t", f"Sw<3,3,3> o {off} o {_kmajor(32, 64)}")
    # swizzle with a larger atom (Sw<2,3,3> over 32 columns), offsets inside and outside its period
    for off in [0, 8, 32, 256, 264]:
        c.add("swizzle-offset", F16, "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "half_t", f"Sw<2,3,3> o {off} o {_kmajor(32, 32)}")
        c.add("swizzle-offset", F16, "(2,2,1)", None, "A", "AutoVectorizingCopy", "half_t", f"Sw<2,3,3> o {off} o {_kmajor(32, 32)}")


def swizzle_nonpow2(c: _Cases):
    for cp in ["SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N", "UniversalCopy<uint128_t>"]:
        for smem in ["Sw<3,3,3> o (32,192):(192,1)", "Sw<3,3,3> o (32,96):(96,1)", "Sw<2,3,3> o (32,48):(48,1)",
                     "Sw<3,3,3> o (32,64):(72,1)", "Sw<3,3,3> o (32,80):(80,1)",
                     "Sw<3,3,3> o ((8,4),(64,3)):((64,512),(1,2048))",
                     "Sw<3,3,3> o ((8,4),(64,3)):((64,1536),(1,512))"]:
            c.add("swizzle-nonpow2", F16, "(2,2,1)", None, "A", cp, "half_t", smem)
    for smem in ["Sw<3,3,3> o (16,192):(192,1)", "Sw<3,3,3> o ((8,2),(64,3)):((64,512),(1,1024))"]:
        c.add("swizzle-nonpow2", F16, "(2,2,1)", None, "B", "SM75_U32x4_LDSM_N", "half_t", smem)
    c.add("swizzle-nonpow2", F16, "(2,2,1)", None, "C", "SM90_U32x2_STSM_N", "half_t", "Sw<3,3,3> o (32,96):(96,1)")
    c.add("swizzle-nonpow2", TF32, "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "float", "Sw<3,2,3> o (32,96):(96,1)")
    c.add("swizzle-nonpow2", S8, "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "int8_t", "Sw<3,4,3> o (32,192):(192,1)")


def mixed_types(c: _Cases):
    groups = [
        (F16, ["half_t", "bfloat16_t", "int16_t", "uint16_t", "float"], 16, "SM75_U32x4_LDSM_N"),
        (BF16, ["bfloat16_t", "half_t"], 16, "SM75_U32x4_LDSM_N"),
        (TF32, ["tfloat32_t", "float", "half_t", "int32_t"], 32, "SM75_U32x4_LDSM_N"),
        (S8, ["int8_t", "uint8_t", "float_e4m3_t"], 64, "SM75_U32x4_LDSM_N"),
        ("SM80_16x8x32_S32U8U8S32_TN", ["uint8_t", "int8_t"], 64, "SM75_U32x4_LDSM_N"),
        ("SM80_16x8x32_S32S8U8S32_TN", ["int8_t", "uint8_t"], 64, "SM75_U32x4_LDSM_N"),
        ("SM89_16x8x32_F32E4M3E4M3F32_TN", ["float_e4m3_t", "float_e5m2_t", "int8_t"], 64, "SM75_U32x4_LDSM_N"),
        ("SM89_16x8x32_F32E5M2E5M2F32_TN", ["float_e5m2_t", "float_e4m3_t"], 64, "SM75_U32x4_LDSM_N"),
        ("SM89_16x8x32_F32E4M3E5M2F32_TN", ["float_e4m3_t", "float_e5m2_t"], 64, "SM75_U32x4_LDSM_N"),
    ]
    for atom, types, kdim, cp in groups:
        M, N, K = tile(atom, "(2,2,1)")
        for vt in types:
            for op, rows in (("A", M), ("B", max(N, 16))):
                c.add("mixed-types", atom, "(2,2,1)", None, op, cp, vt, _kmajor(rows, kdim))
            c.add("mixed-types", atom, "(2,2,1)", None, "A", "UniversalCopy<uint32_t>", vt, _kmajor(M, kdim))
    # C: the stored type against the accumulator type
    for atom, types in [(F16, ["half_t", "bfloat16_t"]), (F16F32, ["float", "half_t"]), (BF16, ["float", "bfloat16_t"]),
                        (S8, ["int32_t", "uint32_t", "float"])]:
        for vt in types:
            c.add("mixed-types", atom, "(2,2,1)", None, "C", "UniversalCopy<uint32_t>", vt, _kmajor(32, 32))
            c.add("mixed-types", atom, "(2,2,1)", None, "C", "SM90_U32x2_STSM_N", vt, _kmajor(32, 32))


def ldsm(c: _Cases):
    layouts = [("(2,2,1)", None), ("(1,4,1)", None), ("(4,1,1)", None), ("(2,1,1)", None), ("(1,2,1)", None),
               ("(2,2,1)", ("32", "32", "16")), ("(2,2,1)", ("32", "(8,2,2):(1,16,8)", "16")),
               ("(2,2,1):(2,1,0)", None), ("(1,1,1)", None)]
    for n, (lay, perm) in enumerate(layouts):
        M, N, K = tile(F16, lay.split(":")[0], perm)
        # every x1/x2/x4 .N/.T on the first layouts; the widest of each on the others
        if n < 2:
            copies = LDSM_N + LDSM_T
        elif perm:
            copies = ["SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U16x8_LDSM_T", "SM75_U16x4_LDSM_T"]
        else:
            copies = ["SM75_U32x4_LDSM_N", "SM75_U16x8_LDSM_T"]
        for cp in copies:
            # A: K-major and M-major; B: K-major and N-major
            c.add("ldsm", F16, lay, perm, "A", cp, "half_t", _kmajor(M, 32))
            c.add("ldsm", F16, lay, perm, "A", cp, "half_t", _mnmajor(max(M, 32), 32))
            c.add("ldsm", F16, lay, perm, "B", cp, "half_t", _kmajor(max(N, 16), 32))
            c.add("ldsm", F16, lay, perm, "B", cp, "half_t", _mnmajor(max(N, 32), 32))
    # swizzled M/N-major through .T and .N
    for cp in LDSM_T + ["SM75_U32x4_LDSM_N"]:
        c.add("ldsm", F16, "(2,2,1)", None, "A", cp, "half_t", "Sw<3,3,3> o (64,32):(1,64)")
        c.add("ldsm", F16, "(2,2,1)", None, "B", cp, "half_t", "Sw<3,3,3> o (64,32):(1,64)")
        c.add("ldsm", F16, "(2,2,1)", None, "A", cp, "half_t", "Sw<3,3,3> o (32,64):(64,1)")
    # 8-bit and tf32 through ldmatrix
    for cp in LDSM_N:
        c.add("ldsm", S8, "(2,2,1)", None, "A", cp, "int8_t", _kmajor(32, 64))
        c.add("ldsm", S8, "(2,2,1)", None, "B", cp, "int8_t", _kmajor(16, 64))
        c.add("ldsm", TF32, "(2,2,1)", None, "A", cp, "tfloat32_t", _kmajor(32, 16))
        c.add("ldsm", TF32, "(2,2,1)", None, "B", cp, "tfloat32_t", _kmajor(16, 16))
    c.add("ldsm", S8, "(2,2,1)", None, "B", "SM75_U32x4_LDSM_N", "int8_t", _mnmajor(16, 64))
    c.add("ldsm", TF32, "(2,2,1)", None, "B", "SM75_U32x4_LDSM_N", "tfloat32_t", _mnmajor(16, 16))


def stsm(c: _Cases):
    for lay in ["(2,2,1)", "(2,4,1)", "(1,4,1)", "(4,1,1)"]:
        M, N, K = tile(F16, lay)
        for cp in STSM_N + STSM_T:
            c.add("stsm", F16, lay, None, "C", cp, "half_t", _kmajor(M, max(N, 32)))
            c.add("stsm", F16, lay, None, "C", cp, "half_t", _mnmajor(max(M, 32), max(N, 32)))
    for cp in STSM_N:
        c.add("stsm", F16, "(2,2,1)", None, "C", cp, "half_t", "Sw<3,3,3> o (32,64):(64,1)")
        c.add("stsm", F16, "(2,2,1)", None, "C", cp, "half_t", "(32,32):(40,1)")
        c.add("stsm", F16F32, "(2,2,1)", None, "C", cp, "float", _kmajor(32, 32))
    for cp in STSM_T:
        c.add("stsm", F16, "(2,2,1)", None, "C", cp, "half_t", "Sw<3,3,3> o (64,32):(1,64)")


def padded(c: _Cases):
    for pitch in [16, 20, 24, 36, 40, 56, 72]:
        for cp in ["SM75_U32x4_LDSM_N", "SM75_U32x1_LDSM_N"]:
            c.add("padded", F16, "(2,2,1)", None, "A", cp, "half_t", f"(32,16):({pitch},1)")
        c.add("padded", F16, "(2,2,1)", None, "B", "SM75_U32x2_LDSM_N", "half_t", f"(16,16):({pitch},1)")
        c.add("padded", F16, "(2,2,1)", None, "A", "UniversalCopy<uint128_t>", "half_t", f"(32,16):({pitch},1)")
        c.add("padded", F16, "(2,2,1)", None, "B", "SM75_U16x8_LDSM_T", "half_t", f"(32,16):(1,{pitch + 16})")
    for pitch in [32, 36, 40, 64, 72]:
        c.add("padded", F16, "(2,2,1)", None, "C", "SM90_U32x2_STSM_N", "half_t", f"(32,32):({pitch},1)")
        c.add("padded", F16, "(2,2,1)", None, "C", "UniversalCopy<uint32_t>", "half_t", f"(32,32):({pitch},1)")
        c.add("padded", S8, "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "int8_t", f"(32,64):({pitch * 2},1)")


def vector(c: _Cases):
    for cp in VEC:
        for op, smem in [("A", _kmajor(32, 16)), ("A", _mnmajor(32, 16)), ("B", _kmajor(16, 16)),
                         ("B", _mnmajor(16, 16)), ("A", "Sw<3,3,3> o (32,64):(64,1)"), ("C", _kmajor(32, 16)),
                         ("C", _mnmajor(32, 16)), ("C", "Sw<3,3,3> o (32,64):(64,1)")]:
            c.add("vector", F16, "(2,2,1)", None, op, cp, "half_t", smem)
        c.add("vector", TF32, "(2,2,1)", None, "A", cp, "float", _kmajor(32, 8))
        c.add("vector", F16F32, "(2,2,1)", None, "C", cp, "float", _kmajor(32, 16))
        c.add("vector", S8, "(2,2,1)", None, "A", cp, "int8_t", _kmajor(32, 32))
    for n in (32, 64):
        c.add("vector", F16, "(2,2,1)", None, "C", f"AutoVectorizingCopyWithAssumedAlignment<{n}>", "half_t", _kmajor(32, 16))
        c.add("vector", F16, "(2,2,1)", None, "A", f"AutoVectorizingCopyWithAssumedAlignment<{n}>", "half_t", _kmajor(32, 16))


def align(c: _Cases):
    for a in (4, 8, 16, 64):
        c.add("align", F16, "(2,2,1)", None, "A", "SM75_U32x4_LDSM_N", "half_t", _kmajor(32, 16), align=a)
        c.add("align", F16, "(2,2,1)", None, "A", "UniversalCopy<uint128_t>", "half_t", _kmajor(32, 16), align=a)
        c.add("align", F16, "(2,2,1)", None, "C", "SM90_U32x2_STSM_N", "half_t", _kmajor(32, 16), align=a)
        c.add("align", F16, "(2,2,1)", None, "A", "AutoVectorizingCopy", "half_t", _kmajor(32, 16), align=a)


def permuted(c: _Cases):
    """Tile<_32,_32,_16> over (2,2,1): each warp owns 16 N, so B through LDSM x4/.T x8 and C through STSM
    x4/.T x8 compile (the SM80 kernels' setup), with swizzles, offsets and M/N-major tiles."""
    perm = ("32", "32", "16")
    for off in (0, 8, 16, 64):
        c.add("permuted", F16, "(2,2,1)", perm, "B", "SM75_U32x4_LDSM_N", "half_t", f"Sw<3,3,3> o {off} o (32,64):(64,1)")
        c.add("permuted", F16, "(2,2,1)", perm, "B", "SM75_U16x8_LDSM_T", "half_t", f"Sw<3,3,3> o {off} o (64,32):(1,64)")
        c.add("permuted", F16, "(2,2,1)", perm, "C", "SM90_U32x4_STSM_N", "half_t", f"Sw<3,3,3> o {off} o (32,64):(64,1)")
        c.add("permuted", F16, "(2,2,1)", perm, "C", "SM90_U16x8_STSM_T", "half_t", f"Sw<3,3,3> o {off} o (64,32):(1,64)")
    for smem in ["(32,32):(32,1)", "(32,32):(40,1)", "(32,32):(1,32)"]:
        for op, cp in (("B", "SM75_U32x4_LDSM_N"), ("B", "SM75_U16x8_LDSM_T"), ("C", "SM90_U32x4_STSM_N"),
                       ("C", "SM90_U16x8_STSM_T"), ("C", "AutoVectorizingCopy")):
            c.add("permuted", F16, "(2,2,1)", perm, op, cp, "half_t", smem)
    c.add("permuted", BF16, "(2,2,1)", perm, "B", "SM75_U32x4_LDSM_N", "bfloat16_t", "Sw<3,3,3> o 16 o (32,64):(64,1)")
    c.add("permuted", BF16, "(2,2,1)", perm, "B", "SM75_U32x4_LDSM_N", "half_t", "Sw<3,3,3> o (32,64):(64,1)")


FAMILIES = [swizzle_offset, swizzle_nonpow2, mixed_types, ldsm, stsm, padded, vector, align, permuted]


def campaign() -> list:
    """Every configuration of the campaign, in a fixed order."""
    c = _Cases()
    for f in FAMILIES:
        f(c)
    return c.out


def sample(cases, n: int, seed: int = 12) -> list:
    """A deterministic sample touching every family (for the compiler test)."""
    rng = random.Random(seed)
    fams = {}
    for x in cases:
        fams.setdefault(x["family"], []).append(x)
    out = [rng.choice(v) for _, v in sorted(fams.items())]
    rest = [x for x in cases if x not in out]
    return out + rng.sample(rest, max(0, n - len(out)))
