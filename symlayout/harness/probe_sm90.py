"""Model-free observation of ``wgmma.mma_async`` and ``cp.async.bulk.tensor`` on SM90,
compared with :mod:`symlayout.arch.gmma` and :mod:`symlayout.arch.tma`.

What the probe observes, without using the model:

* **wgmma (SS and RS)**.  D = A B^T is invariant under renaming k, so k itself
  cannot be observed; what can be is, for every A *position* (an element slot of
  the A region of shared memory, or for RS an element slot ``(thread, i)`` of
  the A registers): which accumulator slots ``(thread, register element)`` it
  feeds, and for each of them which B position (element slot of the B region)
  was multiplied with it.  For every A position ``q`` the kernel sets
  A = one-hot(q) and runs one wgmma per bit ``j`` of the B positions with
  B[p] = 1 + bit_j(p): an accumulator slot is *lit* when its value is non-zero,
  and its bits (value 2 = bit set) spell the B position.  Values 0, 1, 2 are
  exact in every type (f16, bf16, tf32, e4m3, e5m2, s8).  The descriptors are
  built by the probe itself (start address, leading/stride byte offsets, base
  offset, swizzle mode), so only afterwards does the model say, from those
  descriptors, which slots should light up with which codes.
* **TMA**: a global tensor of 16- or 32-bit labels (the element's linear index)
  is loaded by ``cp.async.bulk.tensor`` into a poisoned shared region; the whole
  region (before and after the destination too) is copied back, so every label
  is found where it landed, and stray writes show.  8-bit tensors carry random
  bytes and are compared byte by byte.  Encodings the driver should reject are
  passed to ``cuTensorMapEncodeTiled`` and its return code recorded.
* **Negative controls**: descriptors with a wrong field run on the GPU and must
  differ from the intended layout (visibly wrong data) while agreeing with the
  model evaluated on the wrong descriptor; the observations are also decoded
  against deliberately wrong models, which must disagree.

Run on an SM90 GPU::

    python -m symlayout.harness.probe_sm90 --out sm90.json --md sm90.md

Compile-check without a GPU (writes the CUDA source; ``nvcc -arch=sm_90a -cubin`` it)::

    python -m symlayout.harness.probe_sm90 --emit-source probe_sm90.cu

>>> cfg = wgmma_configs()[0]
>>> cfg.name, cfg.atype, cfg.n
('ss.f16.KK.none', 'f16', 16)
>>> pred = predict_wgmma(cfg)
>>> sum(len(v) for v in pred.values())   # 64*16 A elements, each feeds 16 accumulator slots
16384
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from symlayout.arch import gmma, tma
from symlayout.harness.values import id_digit, id_passes
from . import cuda
from .atoms_probe import run_and_report

WG = gmma.WARPGROUP_SIZE
MAX_LISTED = 12

#: Per PTX type: element bytes, C storage type, bit patterns of 1 and 2.
TYPES = {
    "f16": (2, "u16", 0x3C00, 0x4000), "bf16": (2, "u16", 0x3F80, 0x4000),
    "tf32": (4, "u32", 0x3F800000, 0x40000000), "e4m3": (1, "u8", 0x38, 0x40),
    "e5m2": (1, "u8", 0x3C, 0x40), "s8": (1, "u8", 1, 2),
}

# ---------------------------------------------------------------------------
# wgmma experiments
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WgmmaConfig:
    """One wgmma experiment: instruction, operand majors, descriptors (start
    addresses relative to a 1024-byte aligned shared base), the shared regions
    the probe owns (A at ``oa``, B at ``ob``, sizes in elements) and, for a
    negative control, the ``intended`` descriptor the wrong one replaces."""
    name: str
    atype: str
    btype: str
    dtype: str
    n: int
    a_regs: bool
    major_a: str
    major_b: str
    desc_a: gmma.MatrixDescriptor | None
    desc_b: gmma.MatrixDescriptor
    oa: int
    na: int
    ob: int
    nb: int
    note: str = ""
    intended_a: gmma.MatrixDescriptor | None = None
    intended_b: gmma.MatrixDescriptor | None = None

    @property
    def k(self) -> int:
        return gmma.instruction_k(self.atype)

    @property
    def ptx(self) -> str:
        return gmma.wgmma_ptx(self.n, self.dtype, self.atype, self.btype, self.a_regs)

    def kernel_key(self) -> tuple:
        return (self.atype, self.btype, self.dtype, self.n, self.a_regs,
                0 if self.a_regs else int(self.major_a == "MN"), int(self.major_b == "MN"))

    @property
    def nq(self) -> int:
        """Number of A positions scanned (shared elements, or register slots for RS)."""
        return WG * gmma.a_fragment_count(self.atype) if self.a_regs else self.na

    @property
    def nbits(self) -> int:
        return max(1, (self.nb - 1).bit_length())


def packed_offsets(major: str, mode: str, atype: str, rows: int) -> tuple[int, int]:
    """``(lbo, sbo)`` of a packed canonical operand (the probe's choice of layout).

    >>> packed_offsets("K", "128B", "f16", 64), packed_offsets("K", "none", "f16", 64)
    ((16, 1024), (128, 256))
    >>> packed_offsets("MN", "32B", "f16", 32), packed_offsets("MN", "none", "bf16", 64)
    ((256, 512), (1024, 128))
    """
    span = gmma.SWIZZLE_SPAN[gmma.swizzle_mode(mode)]
    e = gmma.element_bytes(atype)
    if major == "K":
        return (16, 8 * span) if mode != "none" else (128, 256)
    chunks = -(-rows * e // 16)
    if mode == "none":
        return 128 * chunks, 128                  # LBO: k-group stride, SBO: MN chunk stride
    atoms = -(-chunks // (span // 16))
    return 8 * span, 8 * span * atoms             # LBO: MN atom stride, SBO: k-group stride


def _extent(desc: gmma.MatrixDescriptor, major: str, atype: str, rows: int) -> int:
    addrs = gmma.operand_addresses(desc, major, atype, rows)
    return max(max(r) for r in addrs) + gmma.element_bytes(atype)


def _round(x: int, to: int) -> int:
    return -(-x // to) * to


def make_config(name: str, atype: str, n: int, *, major_a="K", major_b="K", mode_a="128B", mode_b="128B",
                a_regs=False, dtype="f32", btype=None, lbo_a=None, sbo_a=None, lbo_b=None, sbo_b=None,
                shift_a=0, base_a=0, note="", wrong_a: dict | None = None, wrong_b: dict | None = None
                ) -> WgmmaConfig:
    """A config with packed canonical operands (overridable fields); ``wrong_*``
    replaces descriptor fields after the regions are sized (a negative control).

    >>> c = make_config("x", "tf32", 8, mode_a="32B", mode_b="none")
    >>> c.desc_a.stride_byte_offset, c.desc_b.leading_byte_offset, c.ob, c.nb
    (256, 128, 2048, 64)
    """
    btype = btype or atype
    la, sa = packed_offsets(major_a, mode_a, atype, gmma.M)
    lb, sb = packed_offsets(major_b, mode_b, btype, n)
    desc_a = intended_a = None
    extent_a = 16
    if not a_regs:
        desc_a = gmma.MatrixDescriptor(shift_a, la if lbo_a is None else lbo_a, sa if sbo_a is None else sbo_a,
                                       base_a, mode_a)
        if wrong_a:
            intended_a, desc_a = desc_a, replace(desc_a, **wrong_a)
        extent_a = max(_extent(d, major_a, atype, gmma.M) for d in (desc_a, intended_a) if d is not None)
    oa = 0
    na_bytes = _round(extent_a, 1024) if not a_regs else 0
    ob = _round(oa + na_bytes, 1024)
    desc_b = gmma.MatrixDescriptor(ob, lb if lbo_b is None else lbo_b, sb if sbo_b is None else sbo_b, 0, mode_b)
    intended_b = None
    if wrong_b:
        intended_b, desc_b = desc_b, replace(desc_b, **wrong_b)
    extent_b = max(_extent(d, major_b, btype, n) for d in (desc_b, intended_b) if d is not None)
    nb_bytes = _round(extent_b - ob, 256)
    return WgmmaConfig(name, atype, btype, dtype, n, a_regs, major_a, major_b, desc_a, desc_b,
                       oa, na_bytes // gmma.element_bytes(atype), ob, nb_bytes // gmma.element_bytes(btype),
                       note, intended_a, intended_b)


def wgmma_configs() -> list[WgmmaConfig]:
    """The experiments: every type x swizzle mode (K-major), MN-major for 16-bit
    types, mixed majors, RS forms, k-block advances of the start address, base
    offsets, an ignored LBO, an f16 accumulator, and wrong-descriptor controls."""
    out: list[WgmmaConfig] = []
    modes = ("none", "32B", "64B", "128B")
    for t in ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8"):
        d = "s32" if t == "s8" else "f32"
        n = 16
        for m in modes:
            out.append(make_config(f"ss.{t}.KK.{m}", t, n, mode_a=m, mode_b=m, dtype=d))
    for t in ("f16", "bf16"):
        for m in modes:
            out.append(make_config(f"ss.{t}.MNMN.{m}", t, 32, major_a="MN", major_b="MN", mode_a=m, mode_b=m))
    out.append(make_config("ss.f16.MNMN.128B.n128", "f16", 128, major_a="MN", major_b="MN",
                           note="B spans two 128B atoms along N: LBO used"))
    out.append(make_config("ss.bf16.KK.128B.n256", "bf16", 256, note="N = 256: 32 row groups of B (SBO)"))
    out.append(make_config("ss.f16.KMN.64B", "f16", 32, major_b="MN", mode_a="64B", mode_b="64B"))
    out.append(make_config("ss.bf16.MNK.32B", "bf16", 16, major_a="MN", mode_a="32B", mode_b="128B"))
    out.append(make_config("ss.f16.KK.none.cute", "f16", 16, mode_a="none", mode_b="none", lbo_a=1024, sbo_a=128,
                           lbo_b=256, sbo_b=128, note="CuTe's INTERLEAVE tiling (LBO between K core matrices)"))
    out.append(make_config("ss.f16.KK.128B.f16acc", "f16", 16, dtype="f16", note="f16 accumulators (f16x2 registers)"))
    for s in (32, 64, 96):
        out.append(make_config(f"ss.f16.KK.128B.start+{s}", "f16", 16, shift_a=s,
                               note="k-block advance inside the 128-byte swizzle row (CuTe's DescriptorIterator)"))
    out.append(make_config("ss.e4m3.KK.64B.start+32", "e4m3", 16, mode_a="64B", mode_b="64B", shift_a=32))
    out.append(make_config("ss.f16.KK.64B.lbo-ignored", "f16", 16, mode_a="64B", mode_b="64B", lbo_a=0x3A50,
                           note="K-major swizzled: the leading byte offset is not used"))
    for s, b in ((128, 0), (128, 1), (384, 3), (384, 5), (640, 1)):
        out.append(make_config(f"ss.f16.KK.128B.start+{s}.base{b}", "f16", 16, shift_a=s, base_a=b,
                               note="pattern not 1024-aligned; base offset field"))
    out.append(make_config("ss.f16.KK.64B.start+128.base1", "f16", 16, mode_a="64B", mode_b="64B", shift_a=128,
                           base_a=1))
    for t in ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8"):
        d = "s32" if t == "s8" else "f32"
        out.append(make_config(f"rs.{t}.K.128B", t, 16, a_regs=True, mode_b="128B", dtype=d))
    out.append(make_config("rs.f16.MN.32B", "f16", 32, a_regs=True, major_b="MN", mode_b="32B"))
    out.append(make_config("rs.bf16.K.none", "bf16", 16, a_regs=True, mode_b="none"))
    # wrong descriptor fields, run on the GPU (negative controls)
    out.append(make_config("neg.f16.KK.128B.sbo", "f16", 16, wrong_a={"stride_byte_offset": 1024 + 128},
                           note="A's SBO off by one 128-byte row"))
    out.append(make_config("neg.f16.KK.128B.as64B", "f16", 16, wrong_a={"swizzle": "64B"},
                           note="A stored for 128B swizzle, descriptor says 64B"))
    out.append(make_config("neg.f16.MNMN.64B.lbo", "f16", 64, major_a="MN", major_b="MN", mode_a="64B",
                           mode_b="64B", wrong_b={"leading_byte_offset": 0},
                           note="B's LBO (MN atom stride) zeroed"))
    out.append(make_config("neg.tf32.KK.32B.start", "tf32", 16, mode_a="32B", mode_b="32B",
                           wrong_a={"start_address": 16}, note="A's start address off by 16 bytes"))
    return out


# -- model prediction ---------------------------------------------------------

AddrFn = Callable[[gmma.MatrixDescriptor, str, str, int, int], int]


def _accum_slot(dtype: str, n: int):
    inv = {}
    for t in range(WG):
        for i in range(gmma.accumulator_count(n)):
            inv[gmma.accumulator_elem(t, i)] = t * 256 + i
    return inv


def _b_value(p: int, j: int) -> int:
    return 1 + ((p >> j) & 1)


def predict_wgmma(cfg: WgmmaConfig, addr: AddrFn = gmma.element_address, accum=None,
                  a_frag=None) -> dict[int, list[tuple[int, int]]]:
    """The model's prediction: A position -> sorted ``[(slot, code)]`` where
    ``slot = 256*thread + accumulator element`` and ``code`` is the B position
    spelled by the bits, with bit 30 (lit) and bit 29 (a value other than 0, 1, 2).

    ``addr``/``accum``/``a_frag`` replace the model's functions (for the
    negative controls and the base-offset hypotheses).
    """
    accum = accum or gmma.accumulator_elem
    a_frag = a_frag or gmma.a_fragment_elem
    inv = {}
    for t in range(WG):
        for i in range(gmma.accumulator_count(cfg.n)):
            inv[accum(t, i)] = t * 256 + i
    kk = cfg.k
    ea, eb = gmma.element_bytes(cfg.atype), gmma.element_bytes(cfg.btype)
    posb = {}
    for nn in range(cfg.n):
        for k in range(kk):
            a = addr(cfg.desc_b, cfg.major_b, cfg.btype, nn, k) - cfg.ob
            if a % eb or not 0 <= a // eb < cfg.nb:
                raise ValueError(f"{cfg.name}: the model reads B({nn},{k}) outside the probe's B region")
            posb[nn, k] = a // eb
    feeds: dict[int, dict[int, list[int]]] = {}     # q -> m -> [k]
    if cfg.a_regs:
        for t in range(WG):
            for i in range(gmma.a_fragment_count(cfg.atype)):
                m, k = a_frag(cfg.atype, t, i)
                feeds.setdefault(t * gmma.a_fragment_count(cfg.atype) + i, {}).setdefault(m, []).append(k)
    else:
        for m in range(gmma.M):
            for k in range(kk):
                a = addr(cfg.desc_a, cfg.major_a, cfg.atype, m, k) - cfg.oa
                if a % ea or not 0 <= a // ea < cfg.na:
                    raise ValueError(f"{cfg.name}: the model reads A({m},{k}) outside the probe's A region")
                feeds.setdefault(a // ea, {}).setdefault(m, []).append(k)
    out: dict[int, list[tuple[int, int]]] = {}
    for q, rows in feeds.items():
        ent = []
        for m, ks in rows.items():
            for nn in range(cfg.n):
                if len(ks) == 1:           # one product: the bits spell the B position exactly
                    ent.append((inv[m, nn], posb[nn, ks[0]] | 1 << 30))
                    continue
                code, weird = 0, 0
                for j in range(cfg.nbits):
                    v = sum(_b_value(posb[nn, k], j) for k in ks)
                    if v == 2:
                        code |= 1 << j
                    elif v not in (0, 1):
                        weird = 1
                ent.append((inv[m, nn], code | 1 << 30 | weird << 29))
        out[q] = sorted(ent)
    return out


def compare_wgmma(pred: dict, obs: dict) -> list[dict]:
    """A positions whose lit slots/codes differ (model vs observed), as records.

    >>> compare_wgmma({0: [(1, 5)]}, {0: [(1, 5)], 3: [(2, 1)]})
    [{'q': 3, 'model': [], 'observed': [[2, 1]]}]
    """
    bad = []
    for q in sorted(set(pred) | set(obs)):
        p, o = pred.get(q, []), obs.get(q, [])
        if p != o:
            bad.append({"q": q, "model": [list(x) for x in p[:4]], "observed": [list(x) for x in o[:4]]})
    return bad


def _alt_address(phase: str) -> AddrFn:
    """Hypotheses for the swizzle phase: ``sub`` (the model: absolute address,
    base offset subtracted), ``add``, ``xor``, ``ignored`` (base offset has no
    effect), ``relative`` (phase from the offset to the start address)."""
    def fn(desc, major, atype, row, k):
        off = gmma.element_offset(major, desc.swizzle, atype, row, k, desc.leading_byte_offset,
                                  desc.stride_byte_offset)
        a = desc.start_address + off
        w = gmma.swizzle_chunks(desc.swizzle)
        if w == 1:
            return a
        b = desc.base_offset
        if phase == "relative":        # swizzle on the offset from the start address, not the address
            return desc.start_address + (off ^ ((((off >> 7) - b) & (w - 1)) << 4))
        ph = {"sub": (a >> 7) - b, "add": (a >> 7) + b, "xor": (a >> 7) ^ b, "ignored": a >> 7}[phase]
        return a ^ ((ph & (w - 1)) << 4)
    return fn


def _wrong_models(cfg: WgmmaConfig) -> list[tuple[str, dict]]:
    """Deliberately wrong models (name, keyword arguments of predict_wgmma)."""
    out = []

    def no_swizzle(desc, major, atype, row, k):
        return gmma.element_address(replace(desc, swizzle="none"), major, atype, row, k)
    if cfg.desc_b.swizzle != "none" or (cfg.desc_a and cfg.desc_a.swizzle != "none"):
        out.append(("swizzle ignored", {"addr": no_swizzle}))

    def swapped_offsets(desc, major, atype, row, k):
        return gmma.element_address(replace(desc, leading_byte_offset=desc.stride_byte_offset,
                                            stride_byte_offset=desc.leading_byte_offset), major, atype, row, k)
    if any(d is not None and d.leading_byte_offset != d.stride_byte_offset for d in (cfg.desc_a, cfg.desc_b)):
        out.append(("LBO and SBO swapped", {"addr": swapped_offsets}))

    def acc_rows_swapped(t, i):
        m, n = gmma.accumulator_elem(t, i)
        return (m ^ 8, n)
    out.append(("accumulator rows m and m^8 swapped", {"accum": acc_rows_swapped}))
    if cfg.a_regs:
        def frag_k_swapped(atype, t, i):
            m, k = gmma.a_fragment_elem(atype, t, i)
            return m, k ^ 1
        out.append(("A fragment k and k^1 swapped", {"a_frag": frag_k_swapped}))
    return out


# -- CUDA source ----------------------------------------------------------------

_PRELUDE = r"""
typedef unsigned long long u64; typedef unsigned int u32; typedef unsigned short u16; typedef unsigned char u8;
__device__ __forceinline__ u32 smem_addr(const void* p) {
  u32 r; asm("{\n.reg .u64 a;\ncvta.to.shared.u64 a, %1;\ncvt.u32.u64 %0, a;\n}\n" : "=r"(r) : "l"(p)); return r;
}
__device__ __forceinline__ int vclass_f32(float v) { return v == 0.f ? 0 : (v == 1.f ? 1 : (v == 2.f ? 2 : 3)); }
__device__ __forceinline__ int vclass_s32(int v) { return v == 0 ? 0 : (v == 1 ? 1 : (v == 2 ? 2 : 3)); }
__device__ __forceinline__ int vclass_f16(u32 h) { h &= 0xFFFFu; return (h == 0u || h == 0x8000u) ? 0 : (h == 0x3C00u ? 1 : (h == 0x4000u ? 2 : 3)); }
"""


def kernel_name(key: tuple) -> str:
    """Kernel symbol of a kernel key.

    >>> kernel_name(("f16", "f16", "f32", 16, False, 1, 0))
    'wg_ss_f16_f16_f32_n16_t10'
    """
    at, bt, dt, n, regs, ta, tb = key
    return f"wg_{'rs' if regs else 'ss'}_{at}_{bt}_{dt}_n{n}_t{ta}{tb}"


def wgmma_kernel_source(key: tuple) -> str:
    """CUDA C++ (inline PTX) of one wgmma probe kernel."""
    at, bt, dt, n, regs, ta, tb = key
    ea, ca, one_a, _ = TYPES[at]
    eb, cb, one_b, two_b = TYPES[bt]
    k = gmma.instruction_k(at)
    ns = gmma.accumulator_count(n)
    if dt == "f16":
        nr, acc_t, cons = n // 4, "u32", "+r"
        vexpr = "vclass_f16(d[{r}] >> (16 * ({s} % 2)))"
        rexpr = "{s} / 2"
    else:
        nr, acc_t, cons = n // 2, ("int" if dt == "s32" else "float"), ("+r" if dt == "s32" else "+f")
        vexpr = "vclass_" + ("s32" if dt == "s32" else "f32") + "(d[{r}])"
        rexpr = "{s}"
    dlist = ", ".join(f"%{i}" for i in range(nr))
    ops_out = ", ".join(f'"{cons}"(d[{i}])' for i in range(nr))
    i0 = nr
    if regs:
        a_op = "{" + ", ".join(f"%{i0 + i}" for i in range(4)) + "}"
        ins = [f'"r"(a[{i}])' for i in range(4)]
        i_b = i0 + 4
    else:
        a_op = f"%{i0}"
        ins = ['"l"(dA)']
        i_b = i0 + 1
    ins.append('"l"(dB)')
    i_s = i_b + 1
    ins.append('"r"(0)')
    ptx = gmma.wgmma_ptx(n, dt, at, bt, regs)
    if at in ("f16", "bf16"):
        tail = f", p, 1, 1, {tb}" if regs else f", p, 1, 1, {ta}, {tb}"
    elif at in ("s8", "u8"):
        tail = ", p"
    else:
        tail = ", p, 1, 1"
    asm = (f'asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{i_s}, 0;\\n'
           f'{ptx} {{{dlist}}}, {a_op}, %{i_b}{tail};\\n}}\\n" : {ops_out} : {", ".join(ins)} : "memory");')
    nfrag = gmma.a_fragment_count(at)
    per_reg = 4 // ea
    decode = "\n".join(
        f"        {{ int c = {vexpr.format(r=rexpr.format(s=s), s=s)}; if (c) fl[{s}] |= 1; "
        f"if (c == 2) code[{s}] |= 1 << j; if (c == 3) fl[{s}] |= 2; }}"
        for s in range(ns))
    if regs:
        a_setup = f"""
      u32 a[4] = {{0u, 0u, 0u, 0u}};
      if (q / {nfrag} == t) {{ int i = q % {nfrag}; a[i / {per_reg}] = (u32){one_a}u << ({8 * ea} * (i % {per_reg})); }}"""
        a_fill = ""
        desc_a = ""
    else:
        a_setup = ""
        a_fill = f"      for (int i = t; i < na; i += 128) sA[i] = ({ca})((i == q) ? {one_a}u : 0u);"
        desc_a = "  const u64 dA = descA + (u64)(sbase >> 4);"
    return f"""
extern "C" __global__ void __launch_bounds__(128, 1) {kernel_name(key)}(
    u64 descA, u64 descB, int oa, int na, int ob, int nb, int nbits, int nq, int q_per_cta,
    int* counts, int2* entries, int cap) {{
  extern __shared__ __align__(1024) u8 smem_raw[];
  const u32 raw = smem_addr(smem_raw);
  const u32 pad = (1024u - (raw & 1023u)) & 1023u;
  u8* sm = smem_raw + pad;
  const u32 sbase = raw + pad;
  const int t = threadIdx.x;
  {ca}* sA = ({ca}*)(sm + oa);
  {cb}* sB = ({cb}*)(sm + ob);
  (void)sA;
  const int total = ob + nb * {eb};
  for (int i = t; i < total; i += 128) sm[i] = 0;
{desc_a}
  const u64 dB = descB + (u64)(sbase >> 4);
  const int q0 = blockIdx.x * q_per_cta;
  const int q1 = min(nq, q0 + q_per_cta);
  for (int q = q0; q < q1; ++q) {{
{a_fill}{a_setup}
    int code[{ns}]; int fl[{ns}];
#pragma unroll
    for (int s = 0; s < {ns}; ++s) {{ code[s] = 0; fl[s] = 0; }}
    for (int j = 0; j < nbits; ++j) {{
      for (int p = t; p < nb; p += 128) sB[p] = ({cb})(((p >> j) & 1) ? {two_b}u : {one_b}u);
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncthreads();
      {acc_t} d[{nr}];
#pragma unroll
      for (int r = 0; r < {nr}; ++r) d[r] = 0;
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      {asm}
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
{decode}
      __syncthreads();
    }}
#pragma unroll
    for (int s = 0; s < {ns}; ++s) {{
      if (fl[s]) {{
        int idx = atomicAdd(&counts[q], 1);
        if (idx < cap) entries[q * cap + idx] = make_int2(t * 256 + s, code[s] | ((fl[s] & 1) << 30) | ((fl[s] >> 1) << 29));
      }}
    }}
  }}
}}
"""


# ---------------------------------------------------------------------------
# TMA experiments
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TmaExperiment:
    """One tiled TMA load: tensor-map arguments, load origin, destination offset
    (from a 1024-byte aligned shared base) and the shared region dumped."""
    name: str
    dtype: str
    global_dim: tuple
    global_strides: tuple          # bytes, dimensions 1..rank-1
    box_dim: tuple
    swizzle: str
    origin: tuple
    dst_off: int = 0
    note: str = ""
    tx_bytes: int | None = None       # expect_tx of the mbarrier; None: what the model says TMA transfers

    @property
    def expect_tx(self) -> int:
        return tma.box_bytes(self.box_dim, self.elem) if self.tx_bytes is None else self.tx_bytes

    @property
    def expect_complete(self) -> bool:
        """The model: the barrier completes iff expect_tx is the bytes TMA transfers
        (elements x size; the padding of narrow rows is not counted)."""
        return self.expect_tx == tma.box_bytes(self.box_dim, self.elem)

    @property
    def rank(self) -> int:
        return len(self.global_dim)

    @property
    def elem(self) -> int:
        return tma.element_size(self.dtype)

    @property
    def region(self) -> int:
        return _round(self.dst_off + tma.box_smem_bytes(self.box_dim, self.elem, self.swizzle) + 1024, 1024)

    def global_elems(self) -> int:
        """Elements of the global allocation (strides include padding)."""
        if self.rank == 1:
            return self.global_dim[0]
        return self.global_strides[-1] // self.elem * self.global_dim[-1]


def tma_experiments() -> list[TmaExperiment]:
    """Swizzle modes x element sizes, destinations off the swizzle pattern,
    inner boxes narrower than the span, a box reaching out of bounds, negative
    origins and a 3-D box."""
    E = TmaExperiment
    g16 = ((256, 64), (512,))
    return [
        E("u16.none.64x8", "UINT16", *g16, (64, 8), "none", (8, 3)),
        E("u16.32B.16x16", "UINT16", *g16, (16, 16), "32B", (16, 5)),
        E("u16.64B.32x16", "UINT16", *g16, (32, 16), "64B", (32, 7)),
        E("u16.128B.64x16", "UINT16", *g16, (64, 16), "128B", (64, 9)),
        E("u16.128B.64x16.dst+128", "UINT16", *g16, (64, 16), "128B", (64, 9), 128,
          "destination 128-byte aligned, not 1024"),
        E("u16.128B.64x16.dst+384", "UINT16", *g16, (64, 16), "128B", (0, 0), 384),
        E("u16.64B.32x8.dst+128", "UINT16", *g16, (32, 8), "64B", (0, 0), 128),
        E("u16.128B.32x16.narrow", "UINT16", *g16, (32, 16), "128B", (40, 2), 0,
          "inner box 64 bytes < 128-byte span"),
        E("u16.64B.16x8.narrow", "UINT16", *g16, (16, 8), "64B", (0, 1), 0, "inner box 32 bytes < 64-byte span"),
        E("u16.128B.32x16.narrow.tx-padded", "UINT16", *g16, (32, 16), "128B", (40, 2), 0,
          "expect_tx = the padded footprint (2048): the barrier must not complete", tx_bytes=2048),
        E("u32.128B.32x8", "UINT32", (64, 32), (256,), (32, 8), "128B", (32, 4)),
        E("u32.32B.8x8", "UINT32", (64, 32), (256,), (8, 8), "32B", (8, 8)),
        E("u8.128B.128x8", "UINT8", (256, 32), (256,), (128, 8), "128B", (128, 8)),
        E("u16.128B.oob", "UINT16", (96, 64), (512,), (64, 8), "128B", (40, 60), 0, "box reaches out of bounds"),
        E("u16.none.neg-origin", "UINT16", *g16, (64, 4), "none", (-8, -2), 0, "negative origin"),
        E("u16.32B.3d", "UINT16", (32, 6, 4), (64, 384), (16, 4, 2), "32B", (8, 1, 1), 0, "3-D box"),
    ]


def encode_cases() -> list[dict]:
    """Argument sets for ``cuTensorMapEncodeTiled`` (no load): the model says
    which the driver rejects."""
    base = {"dtype": "UINT16", "global_dim": (256, 64), "global_strides": (512,), "box_dim": (64, 8),
            "element_strides": (1, 1), "swizzle": "128B", "address_offset": 0}
    cases = [("legal 128B", {}), ("box 256", {"box_dim": (64, 256), "global_dim": (256, 300)}),
             ("box 257", {"box_dim": (64, 257), "global_dim": (256, 300)}),
             ("inner 136 bytes > 128B span", {"box_dim": (68, 8)}),
             ("inner 128 bytes, 64B swizzle", {"swizzle": "64B"}),
             ("inner 64 bytes, 64B swizzle", {"swizzle": "64B", "box_dim": (32, 8)}),
             ("inner 8 bytes", {"swizzle": "none", "box_dim": (4, 8)}),
             ("stride 520", {"global_strides": (520,)}),
             ("address +8", {"address_offset": 8}),
             ("element stride 8", {"element_strides": (1, 8)}),
             ("element stride 9", {"element_strides": (1, 9)}),
             ("box 0", {"box_dim": (64, 0)})]
    out = []
    for name, over in cases:
        c = dict(base)
        c.update(over)
        c["name"] = name
        c["model_problems"] = tma.encode_tiled_problems(c["dtype"], c["global_dim"], c["global_strides"],
                                                        c["box_dim"], c["element_strides"], swizzle=c["swizzle"],
                                                        global_address=c["address_offset"])
        out.append(c)
    return out


def tma_passes(exp: TmaExperiment) -> int:
    """Loads of one experiment needed to label every global element apart: each load's tensor holds one
    digit (base ``2**bits - 1``, the all-ones poison left free) of the linear index, so a 2048x2048
    16-bit tensor takes two; 8-bit tensors hold seeded random bytes (one load)."""
    return 1 if exp.elem == 1 else id_passes(exp.global_elems(), 8 * exp.elem)


def tma_global_values(exp: TmaExperiment, digit: int = 0):
    """The global tensor: digit ``digit`` of the linear index for 16/32-bit (:func:`tma_passes`), seeded
    random bytes for 8-bit."""
    import numpy as np
    n = exp.global_elems()
    if exp.elem == 1:
        return np.random.default_rng(90).integers(0, 256, size=n)
    return id_digit(np.arange(n, dtype=np.int64), digit, 8 * exp.elem)


def predict_tma(exp: TmaExperiment, landing=None, poison: int | None = None, digit: int = 0) -> list[int]:
    """The model's image of the dumped shared region, in elements (the labels of load ``digit``).

    ``landing(smem_dst, box_dim, elem, swizzle)`` replaces :func:`tma.box_landing`
    (for the negative controls).
    """
    landing = landing or tma.box_landing
    e = exp.elem
    poison = poison if poison is not None else (1 << (8 * e)) - 1 if e > 1 else 0xA5
    img = [poison] * (exp.region // e)
    gvals = tma_global_values(exp, digit)
    pitch = [1]
    for s in exp.global_strides:
        pitch.append(s // e)
    for c, a in landing(exp.dst_off, exp.box_dim, e, exp.swizzle).items():
        g = tma.global_element(exp.origin, c, exp.global_dim)
        v = 0 if g is None else int(gvals[sum(x * p for x, p in zip(g, pitch))])
        img[a // e] = v
    return img


def _tma_wrong_landings(exp: TmaExperiment):
    def unswizzled(dst, box, e, swz):
        return tma.box_landing(dst, box, e, "none")

    def phase_from_destination(dst, box, e, swz):
        land = tma.box_landing(0, box, e, swz)
        return {c: a + dst for c, a in land.items()}

    def rows_packed(dst, box, e, swz):
        out = {}
        for c in tma.box_landing(0, box, e, "none"):
            out[c] = tma.smem_address(dst + tma.box_smem_offset(box, e, c, "none"), swz)
        return out
    out = []
    if exp.swizzle != "none":
        out.append(("swizzle ignored", unswizzled))
    if exp.dst_off % tma.pattern_bytes(exp.swizzle):
        out.append(("swizzle phase from the destination, not the address", phase_from_destination))
    if exp.swizzle != "none" and exp.box_dim[0] * exp.elem < tma.SWIZZLE_SPAN_BYTES[exp.swizzle]:
        out.append(("narrow box rows packed densely (not padded to the span)", rows_packed))
    return out


_TMA_SOURCE = r"""
__device__ __forceinline__ u32 mbar_try_wait(u32 mb, u32 phase) {
  u32 ok;
  asm volatile("{\n.reg .pred P;\nmbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\nselp.u32 %0, 1, 0, P;\n}\n"
               : "=r"(ok) : "r"(mb), "r"(phase) : "memory");
  return ok;
}
extern "C" __global__ void tma_load(const void* tmap, int rank, int c0, int c1, int c2, int dst_off, int region,
                                    int tx, int poison, u8* out, int* status) {
  extern __shared__ __align__(1024) u8 smem_raw[];
  const u32 raw = smem_addr(smem_raw);
  const u32 pad = (1024u - (raw & 1023u)) & 1023u;
  u8* sm = smem_raw + pad;
  const u32 sbase = raw + pad;
  const u32 mb = sbase + region;
  for (int i = threadIdx.x; i < region; i += blockDim.x) sm[i] = (u8)poison;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(mb) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(tmap) : "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(mb), "r"(tx) : "memory");
    if (rank == 2) {
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                   :: "r"(sbase + dst_off), "l"(tmap), "r"(c0), "r"(c1), "r"(mb) : "memory");
    } else {
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                   :: "r"(sbase + dst_off), "l"(tmap), "r"(c0), "r"(c1), "r"(c2), "r"(mb) : "memory");
    }
  }
  int done = 0;
  const long long t0 = clock64();                  // give up after about one second
  while (!done && clock64() - t0 < 2000000000LL) done = mbar_try_wait(mb, 0);
  if (threadIdx.x == 0) status[0] = done ? 1 : -1;
  __syncthreads();
  for (int i = threadIdx.x; i < region; i += blockDim.x) out[i] = sm[i];
}
"""


def module_source(configs: Sequence[WgmmaConfig] | None = None) -> str:
    """The whole probe module: every wgmma kernel the configs need, and the TMA kernel."""
    configs = wgmma_configs() if configs is None else configs
    keys = sorted({c.kernel_key() for c in configs}, key=str)
    return _PRELUDE + "".join(wgmma_kernel_source(k) for k in keys) + _TMA_SOURCE


# ---------------------------------------------------------------------------
# Running on the GPU
# ---------------------------------------------------------------------------


def _encode_tensor_map(lib, ctypes, exp_or_case: dict, gaddr: int):
    buf = (ctypes.c_uint8 * (128 + 64))()
    base = ctypes.addressof(buf)
    aligned = (base + 63) // 64 * 64
    rank = len(exp_or_case["global_dim"])
    u64s, u32s = ctypes.c_uint64 * rank, ctypes.c_uint32 * rank
    gdim = u64s(*exp_or_case["global_dim"])
    gstr = (ctypes.c_uint64 * max(1, rank - 1))(*(exp_or_case["global_strides"] or (0,)))
    box = u32s(*exp_or_case["box_dim"])
    es = u32s(*exp_or_case.get("element_strides", (1,) * rank))
    dtype = tma.DATA_TYPES[exp_or_case["dtype"]][0]
    res = lib.cuTensorMapEncodeTiled(ctypes.c_void_p(aligned), ctypes.c_int(dtype), ctypes.c_uint32(rank),
                                     ctypes.c_void_p(gaddr), gdim, gstr, box, es, ctypes.c_int(0),
                                     ctypes.c_int(tma.SWIZZLE_ENUM[exp_or_case["swizzle"]]), ctypes.c_int(2),
                                     ctypes.c_int(0))
    return int(res), bytes((ctypes.c_uint8 * 128).from_address(aligned))


def _compile(cuda, cc, cfgs) -> tuple[dict, dict]:
    """Kernel name -> loaded module: one NVRTC compile of the whole module, or, if
    that fails, one per kernel (so one bad kernel costs only its experiments)."""
    keys = sorted({c.kernel_key() for c in cfgs}, key=str)
    names = [kernel_name(k) for k in keys] + ["tma_load"]
    try:
        mod = cuda.compile_module(module_source(cfgs), cc=cc, suffix="a", name="probe_sm90.cu")
        return {n: mod for n in names}, {}
    except Exception as e:
        first = str(e)[:2000]
    mods, errs = {}, {"<module>": first}
    for k in keys:
        try:
            mods[kernel_name(k)] = cuda.compile_module(_PRELUDE + wgmma_kernel_source(k), cc=cc, suffix="a")
        except Exception as e:
            errs[kernel_name(k)] = str(e)[:1000]
    try:
        mods["tma_load"] = cuda.compile_module(_PRELUDE + _TMA_SOURCE, cc=cc, suffix="a")
    except Exception as e:
        errs["tma_load"] = str(e)[:1000]
    return mods, errs


def _run_wgmma(cuda, cp, mod, cfg: WgmmaConfig) -> dict:
    import numpy as np
    fn = kernel_name(cfg.kernel_key())
    cap = 2 * cfg.n * 2
    nq = cfg.nq
    counts = cp.zeros(nq, dtype=cp.int32)
    entries = cp.zeros((nq * cap, 2), dtype=cp.int32)
    ctas = min(132, nq)
    qpc = -(-nq // ctas)
    smem = cfg.ob + cfg.nb * gmma.element_bytes(cfg.btype) + 1024
    desc_a = cfg.desc_a.encode() if cfg.desc_a else 0
    cuda.launch(mod, fn, ctas, 128,
                (np.uint64(desc_a), np.uint64(cfg.desc_b.encode()), np.int32(cfg.oa), np.int32(cfg.na),
                 np.int32(cfg.ob), np.int32(cfg.nb), np.int32(cfg.nbits), np.int32(nq), np.int32(qpc),
                 counts, entries, np.int32(cap)), shared_mem=smem)
    cnt = counts.get()
    ent = entries.get().reshape(nq, cap, 2)
    obs: dict[int, list[tuple[int, int]]] = {}
    overflow = 0
    for q in np.nonzero(cnt)[0].tolist():
        c = int(cnt[q])
        if c > cap:
            overflow += 1
            c = cap
        obs[q] = sorted((int(a), int(b)) for a, b in ent[q, :c].tolist())
    return {"observed": obs, "overflow": overflow, "ctas": ctas}


def _wgmma_record(cfg: WgmmaConfig, obs: dict, overflow: int) -> dict:
    pred = predict_wgmma(cfg)
    bad = compare_wgmma(pred, obs)
    rec = {"name": cfg.name, "kind": "wgmma", "ptx": cfg.ptx, "a": "registers" if cfg.a_regs else cfg.major_a,
           "b": cfg.major_b, "desc_a": _desc_json(cfg.desc_a), "desc_b": _desc_json(cfg.desc_b),
           "positions_scanned": cfg.nq, "b_bits": cfg.nbits, "slots_checked": sum(len(v) for v in pred.values()),
           "observed_slots": sum(len(v) for v in obs.values()), "overflow": overflow,
           "status": "agree" if not bad and not overflow else "disagree", "n_mismatches": len(bad),
           "mismatches": bad[:MAX_LISTED], "note": cfg.note}
    if cfg.intended_a is not None or cfg.intended_b is not None:
        intended = replace(cfg, desc_a=cfg.intended_a or cfg.desc_a, desc_b=cfg.intended_b or cfg.desc_b)
        try:
            ib = compare_wgmma(predict_wgmma(intended), obs)
            rec["vs_intended_layout"] = {"n_mismatches": len(ib), "of": len(set(obs) | set(predict_wgmma(intended)))}
        except ValueError as e:
            rec["vs_intended_layout"] = {"error": str(e)}
    if cfg.desc_a is not None and cfg.desc_a.base_offset or "start+" in cfg.name:
        hyp = {}
        for h in ("sub", "add", "xor", "ignored", "relative"):
            try:
                hyp[h] = len(compare_wgmma(predict_wgmma(cfg, addr=_alt_address(h)), obs))
            except ValueError:
                hyp[h] = None
        rec["base_offset_hypotheses"] = hyp
    ctrl = []
    for label, kw in _wrong_models(cfg):
        try:
            nbad = len(compare_wgmma(predict_wgmma(cfg, **kw), obs))
        except ValueError:
            nbad = -1          # the wrong model reads outside the regions: certainly different
        ctrl.append({"control": label, "n_mismatches": nbad})
    rec["negative_controls"] = ctrl
    return rec


def _desc_json(d: gmma.MatrixDescriptor | None):
    if d is None:
        return None
    return {"start": d.start_address, "lbo": d.leading_byte_offset, "sbo": d.stride_byte_offset,
            "base_offset": d.base_offset, "swizzle": d.swizzle, "value": hex(d.encode())}


def rejected_tensor_map(exp: TmaExperiment, res: int, address: int = 0) -> dict:
    """The record of a tensor map the driver would not encode (``cuTensorMapEncodeTiled`` returned ``res``).
    The driver's refusal is the hardware's answer: the model agrees when :func:`tma.encode_tiled_problems`
    names a rule these arguments break, and disagrees when it accepts them.

    >>> e = TmaExperiment("x", "BFLOAT16", (512, 384), (1024,), (128, 128), "32B", origin=(0, 0))
    >>> r = rejected_tensor_map(e, 1)
    >>> r["status"], r["note"]
    ('agree', 'the driver rejects the tensor map (cuTensorMapEncodeTiled returned 1): inner box dimension 256 bytes exceeds the 32B swizzle span')
    """
    why = tma.encode_tiled_problems(exp.dtype, exp.global_dim, exp.global_strides, exp.box_dim,
                                    swizzle=exp.swizzle, global_address=address % 16)
    note = f"the driver rejects the tensor map (cuTensorMapEncodeTiled returned {res})"
    return {"name": exp.name, "kind": "tma", "status": "agree" if why else "disagree", "rejected": True,
            "note": note + (": " + "; ".join(why) if why else ": the model accepts these arguments")}


def _run_tma(cuda, cp, mod, lib, ctypes, exp: TmaExperiment, digit: int = 0) -> dict:
    """One load of ``exp`` (its global tensor holding the labels of load ``digit``), compared with the model."""
    import numpy as np
    e = exp.elem
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[e]
    g = cp.asarray(np.asarray(tma_global_values(exp, digit), dtype=dt))
    args = {"dtype": exp.dtype, "global_dim": exp.global_dim, "global_strides": exp.global_strides,
            "box_dim": exp.box_dim, "swizzle": exp.swizzle}
    res, tmap = _encode_tensor_map(lib, ctypes, args, int(g.data.ptr))
    if res != 0:
        return rejected_tensor_map(exp, res, int(g.data.ptr))
    dmap = cp.asarray(np.frombuffer(tmap, dtype=np.uint8))
    out = cp.zeros(exp.region, dtype=cp.uint8)
    status = cp.zeros(1, dtype=cp.int32)
    poison = 0xA5 if e == 1 else 0xFF
    org = list(exp.origin) + [0] * (3 - exp.rank)
    cuda.launch(mod, "tma_load", 1, 128,
                (dmap, np.int32(exp.rank), np.int32(org[0]), np.int32(org[1]), np.int32(org[2]),
                 np.int32(exp.dst_off), np.int32(exp.region), np.int32(exp.expect_tx),
                 np.int32(poison), out, status), shared_mem=exp.region + 1024 + 64)
    img = out.get().view(dt).tolist()
    st = int(status.get()[0])
    pred = predict_tma(exp, digit=digit)
    bad = [{"offset": i * e, "model": p, "observed": o} for i, (p, o) in enumerate(zip(pred, img)) if p != o]
    ctrl = []
    for label, fn in _tma_wrong_landings(exp):
        wp = predict_tma(exp, landing=fn, digit=digit)
        ctrl.append({"control": label, "n_mismatches": sum(1 for p, o in zip(wp, img) if p != o)})
    landed = {}
    if e > 1 and tma_passes(exp) == 1:
        gl = tma_global_values(exp).tolist()
        where = {v: i for i, v in enumerate(gl)}
        for i, v in enumerate(img):
            if v in where and v != (1 << 8 * e) - 1:
                landed[where[v]] = i * e
    return {"name": exp.name, "kind": "tma", "dtype": exp.dtype, "box": list(exp.box_dim), "swizzle": exp.swizzle,
            "origin": list(exp.origin), "dst_off": exp.dst_off, "tensor_map_status": res, "mbarrier": st,
            "expect_tx": exp.expect_tx, "barrier_model": 1 if exp.expect_complete else -1,
            "bytes_checked": exp.region,
            "status": "agree" if not bad and st == (1 if exp.expect_complete else -1) else "disagree",
            "n_mismatches": len(bad), "mismatches": bad[:MAX_LISTED], "negative_controls": ctrl, "note": exp.note,
            "first_landings": sorted(landed.items())[:16], "image": img}


def _run_encode_cases(cp, lib, ctypes) -> list[dict]:
    out = []
    g = cp.zeros(1 << 20, dtype=cp.uint8)
    for c in encode_cases():
        res, _ = _encode_tensor_map(lib, ctypes, c, int(g.data.ptr) + c["address_offset"])
        model_rejects = bool(c["model_problems"])
        out.append({"name": c["name"], "driver_result": res, "driver_rejects": res != 0,
                    "model_problems": c["model_problems"],
                    "status": "agree" if (res != 0) == model_rejects else "disagree"})
    return out


def run_sm90_probe(*, log=None, only: Sequence[str] | None = None) -> dict:
    """Compile the module for ``sm_90a`` (NVRTC), run every experiment, compare."""
    import ctypes
    cp = cuda.load_cupy()
    t0 = time.time()
    info = cuda.device_info()
    cc = cuda.compute_capability()
    cfgs = [c for c in wgmma_configs() if not only or c.name.startswith(tuple(only))]
    tc = time.time()
    mods, compile_errors = _compile(cuda, cc, cfgs)
    compile_s = round(time.time() - tc, 2)
    mod = mods.get("tma_load")
    results = []
    for cfg in cfgs:
        t = time.time()
        try:
            kname = kernel_name(cfg.kernel_key())
            if kname not in mods:
                raise RuntimeError(f"kernel not compiled: {compile_errors.get(kname, '?')}")
            r = _run_wgmma(cuda, cp, mods[kname], cfg)
            rec = _wgmma_record(cfg, r["observed"], r["overflow"])
            rec["ctas"] = r["ctas"]
        except Exception as ex:  # recorded; the run continues
            rec = {"name": cfg.name, "kind": "wgmma", "ptx": cfg.ptx, "status": "error",
                   "note": f"{type(ex).__name__}: {str(ex)[:800]}"}
        rec["seconds"] = round(time.time() - t, 3)
        results.append(rec)
        if log:
            print(f"{rec['name']:<36} {rec['status']:<9} mism={rec.get('n_mismatches')} {rec['seconds']}s "
                  f"{rec.get('base_offset_hypotheses', '')} {rec.get('vs_intended_layout', '')}", file=log, flush=True)
    lib = ctypes.CDLL("libcuda.so.1")
    for exp in tma_experiments():
        if only and not exp.name.startswith(tuple(only)):
            continue
        t = time.time()
        try:
            if mod is None:
                raise RuntimeError(f"tma_load not compiled: {compile_errors.get('tma_load', '?')}")
            rec = _run_tma(cuda, cp, mod, lib, ctypes, exp)
        except Exception as ex:
            rec = {"name": exp.name, "kind": "tma", "status": "error", "note": f"{type(ex).__name__}: {str(ex)[:800]}"}
        rec["seconds"] = round(time.time() - t, 3)
        results.append(rec)
        if log:
            print(f"{rec['name']:<36} {rec['status']:<9} mism={rec.get('n_mismatches')} "
                  f"{[c['n_mismatches'] for c in rec.get('negative_controls', [])]}", file=log, flush=True)
    enc = _run_encode_cases(cp, lib, ctypes)
    if log:
        for c in enc:
            print(f"encode {c['name']:<30} driver={c['driver_result']} model={c['model_problems']} {c['status']}",
                  file=log, flush=True)
    meta = dict(info)
    meta.update({"date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
                 "arch": f"sm_{cc[0]}{cc[1]}a", "compile": sorted({m.how for m in mods.values()}),
                 "compile_seconds": compile_s, "compile_errors": compile_errors,
                 "seconds": round(time.time() - t0, 2), "python": sys.version.split()[0]})
    return {"meta": meta, "results": results, "encode": enc}


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def report_markdown(res: dict) -> str:
    """Markdown tables of the observations vs the model.

    >>> md = report_markdown({"meta": {"name": "GPU"}, "results": [], "encode": []})
    >>> md.splitlines()[0]
    '# SM90 probe: PTX model vs. observed hardware'
    """
    meta = res.get("meta", {})
    lines = ["# SM90 probe: PTX model vs. observed hardware", ""]
    for k in ("name", "compute_capability", "arch", "driver_version", "cuda_runtime_version", "nvrtc_version",
              "cupy_version", "compile", "compile_seconds", "date", "seconds"):
        if k in meta:
            lines.append(f"- {k}: {meta[k]}")
    wg = [r for r in res["results"] if r.get("kind") == "wgmma"]
    tm = [r for r in res["results"] if r.get("kind") == "tma"]
    lines += ["", "## wgmma.mma_async", "",
              "| experiment | instruction | A | B | descriptors (A; B) | positions | slots | result | wrong models detected | note |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in wg:
        if r["status"] == "error":
            lines.append(f"| {r['name']} | `{r.get('ptx', '')}` | | | | | | error | | {r.get('note', '')[:200]} |")
            continue
        da = _fmt_desc(r["desc_a"])
        db = _fmt_desc(r["desc_b"])
        ctrl = r.get("negative_controls", [])
        det = sum(1 for c in ctrl if c["n_mismatches"] != 0)
        extra = ""
        if "vs_intended_layout" in r:
            extra += f" vs intended layout: {r['vs_intended_layout']}."
        if "base_offset_hypotheses" in r:
            extra += f" mismatching positions per base-offset hypothesis: {r['base_offset_hypotheses']}."
        res_word = "agrees" if r["status"] == "agree" else f"**disagrees** ({r['n_mismatches']})"
        lines.append(f"| {r['name']} | `{r['ptx']}` | {r['a']} | {r['b']} | {da}; {db} | {r['positions_scanned']} | "
                     f"{r['slots_checked']} | {res_word} | {det}/{len(ctrl)} | {(r.get('note', '') + extra).strip()} |")
    lines += ["", "## cp.async.bulk.tensor (TMA)", "",
              "| experiment | type | box | swizzle | origin | dst offset | expect_tx: barrier (model) | bytes checked | result | wrong models detected | note |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in tm:
        if r["status"] == "error":
            lines.append(f"| {r['name']} | | | | | | | | error | | {r.get('note', '')[:200]} |")
            continue
        ctrl = r.get("negative_controls", [])
        det = sum(1 for c in ctrl if c["n_mismatches"])
        res_word = "agrees" if r["status"] == "agree" else f"**disagrees** ({r['n_mismatches']})"
        bar = {1: "completed", -1: "timed out"}
        lines.append(f"| {r['name']} | {r['dtype']} | {tuple(r['box'])} | {r['swizzle']} | {tuple(r['origin'])} | "
                     f"{r['dst_off']} | {r.get('expect_tx')}: {bar.get(r['mbarrier'], r['mbarrier'])} "
                     f"({bar.get(r.get('barrier_model'), '?')}) | {r['bytes_checked']} | {res_word} | "
                     f"{det}/{len(ctrl)} | {r.get('note', '')} |")
    lines += ["", "## cuTensorMapEncodeTiled: accepted or rejected", "",
              "| case | driver result | model's problems | agree |", "| --- | --- | --- | --- |"]
    for c in res.get("encode", []):
        lines.append(f"| {c['name']} | {c['driver_result']} | {'; '.join(c['model_problems']) or '-'} | "
                     f"{c['status']} |")
    return "\n".join(lines) + "\n"


def _fmt_desc(d) -> str:
    if d is None:
        return "registers"
    return f"{d['swizzle']} start {d['start']} lbo {d['lbo']} sbo {d['sbo']}" + (
        f" base {d['base_offset']}" if d["base_offset"] else "")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m symlayout.harness.probe_sm90 [--out JSON] [--md MD] [--only PREFIX...] [--emit-source FILE]``.

    Exit status 0 iff every experiment agreed; 2 without a GPU.
    """
    ap = argparse.ArgumentParser(prog="symlayout.harness.probe_sm90", description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--md")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--emit-source", help="write the CUDA source of the probe module and exit")
    args = ap.parse_args(argv)
    if args.emit_source:
        with open(args.emit_source, "w") as f:
            f.write(module_source())
        return 0
    res = run_and_report(lambda log: run_sm90_probe(log=log, only=args.only), report_markdown, args.out, args.md)
    if res is None:
        return 2
    ok = all(r["status"] == "agree" for r in res["results"])
    ok = ok and all(r.get("vs_intended_layout", {}).get("n_mismatches", 1) > 0 for r in res["results"])
    return 0 if ok and all(c["status"] == "agree" for c in res["encode"]) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
