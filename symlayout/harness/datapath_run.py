"""Run the global-memory copies of a configuration on the GPU, and measure shared-memory bank
conflicts against the prover's model (issue 14).

* **marker mode** for every ``[g2s.X]`` / ``[s2g.C]``: global memory (g2s) or shared memory (s2g)
  holds element ids (``i + 1`` at the element's address, poison everywhere else); every thread
  issues the instructions of its accesses (``cp.async.cg/ca``, or vector ``ld``/``st``), with the
  addresses taken from the prover's model (:func:`symlayout.prove.datapath.g2s.build_global_model`: nothing
  here computes a layout); the destination image must hold id ``i + 1`` at the address of every
  element ``i`` and poison everywhere else.
* **bank-conflict patterns**: one warp issues one shared-memory instruction (``ld``/``st`` of 4, 8
  or 16 bytes, ``ldmatrix`` ``.x1``/``.x4``) at per-lane byte addresses; Nsight Compute counts the
  wavefronts (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st/ldsm``) and the prover's
  phase rule (:func:`symlayout.prove.datapath.g2s.wavefronts`: 16-byte accesses served per 8 lanes, 8-byte
  per 16 lanes, ldmatrix per 8-row matrix) predicts them.  Patterns: contiguous, strided, the
  half-warp case of 8-byte accesses, random permutations.
* **data-path kernels** under Nsight Compute: the shared-memory side of each configuration's copy,
  wavefronts measured vs the model's sum over its phases.

Commands (``python -m symlayout.harness.datapath_run``): ``markers FILE...`` (JSON to stdout),
``plan OUT.json FILE...`` (the kernels to profile and the predictions), ``kernels PLAN.json`` (launch
them, for ``ncu``), ``compare PLAN.json NCU.csv`` (the table).

GPU side imports: the prover's model modules (no z3), numpy and CuPy (inside functions).
"""
from __future__ import annotations

import json
import random
import sys
from .cuda import compile_module, launch
from ..config import load_config
from ..prove.datapath.g2s import build_global_model, phase_of, wavefronts

#: bytes -> CUDA vector type of that width
_VEC = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "uint2", 16: "uint4"}
_UINT = {8: "unsigned char", 16: "unsigned short", 32: "unsigned int", 64: "unsigned long long"}


def _np_uint(bits):
    import numpy as np
    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]


# ---------------------------------------------------------------- kernels of a global-memory copy


def copy_source(m, measure: bool = False) -> str:
    """CUDA C++ of one ``[g2s.X]``/``[s2g.C]`` model: kernel ``dp_copy`` (marker run; with
    ``nfill = 0`` only the copy's own instructions touch shared memory)."""
    U = _UINT[m.value_bits]
    V = _VEC[m.vb]
    if m.kind == "g2s" and m.atom.op.kind == "cp_async":
        cg = "cg" if "CACHEGLOBAL" in m.atom.op.name else "ca"
        body = (f'    unsigned sa = (unsigned)__cvta_generic_to_shared(s + soff[j]);\n'
                f'    asm volatile("cp.async.{cg}.shared.global [%0], [%1], {m.vb};\\n" :: "r"(sa), "l"(g + goff[j]));\n')
        tail = '  asm volatile("cp.async.commit_group;\\n" ::);\n  asm volatile("cp.async.wait_all;\\n" ::);\n'
    elif m.kind == "g2s":
        body = f"    *({V}*)(s + soff[j]) = *(const {V}*)(g + goff[j]);\n"
        tail = ""
    else:
        body = f"    *({V}*)(g + goff[j]) = *(const {V}*)(s + soff[j]);\n"
        tail = ""
    return f'''
extern "C" __global__ void dp_copy({U}* g, {U}* out, const {U}* simg, const int* goff, const int* soff,
                                   int nacc, int nfill) {{
  extern __shared__ __align__(1024) unsigned char raw[];
  {U}* s = ({U}*)raw;
  int t = threadIdx.x;
  for (int i = t; i < nfill; i += blockDim.x) s[i] = simg[i];
  __syncthreads();
  for (int c = 0; c < nacc; ++c) {{
    int j = t * nacc + c;
{body}  }}
{tail}  __syncthreads();
  for (int i = t; i < nfill; i += blockDim.x) out[i] = s[i];
}}
'''


def copy_tables(m, asg):
    """``(gmem table, goff, soff)``: element offsets of every access's first element, thread-major."""
    G = m.gmem.table(asg)
    goff, soff = [], []
    for t in range(m.threads):
        for a in m.accesses[t]:
            goff.append(G[a[0]])
            soff.append(m.smem_addr[a[0]])
    return G, goff, soff


def run_markers(m, asg) -> dict:
    """Marker run of one model at one assignment of the gmem symbols: ``{"ok": bool, ...}``."""
    import cupy as cp
    import numpy as np
    dt = _np_uint(m.value_bits)
    poison = np.iinfo(dt).max
    G, goff, soff = copy_tables(m, asg)
    n = m.shape[0] * m.shape[1]
    nsm = int(m.smem.cosize()) + 64
    ng = max(G) + 64
    ids = np.arange(1, n + 1, dtype=dt)
    gimg = np.full(ng, poison, dtype=dt)
    simg = np.full(nsm, poison, dtype=dt)
    if m.kind == "g2s":
        gimg[np.array(G)] = ids
    else:
        simg[np.array(m.smem_addr)] = ids
    mod = compile_module(copy_source(m))
    d_g, d_s = cp.asarray(gimg), cp.asarray(simg)
    d_out = cp.full(nsm, poison, dtype=dt)
    d_go, d_so = cp.asarray(np.array(goff, dtype=np.int32)), cp.asarray(np.array(soff, dtype=np.int32))
    nacc = len(m.accesses[0])
    launch(mod, "dp_copy", 1, m.threads, (d_g, d_out, d_s, d_go, d_so, np.int32(nacc), np.int32(nsm)),
           shared_mem=nsm * m.value_bits // 8)
    if m.kind == "g2s":
        got, want = cp.asnumpy(d_out), simg.copy()
        want[:] = poison
        want[np.array(m.smem_addr)] = ids
    else:
        got, want = cp.asnumpy(d_g), np.full(ng, poison, dtype=dt)
        want[np.array(G)] = ids
    bad = np.nonzero(got != want)[0]
    out = {"copy": m.name, "params": asg, "elements": n, "accesses": len(goff), "ok": bad.size == 0}
    if bad.size:
        i = int(bad[0])
        out["first_mismatch"] = {"offset": i, "got": int(got[i]), "want": int(want[i]), "count": int(bad.size)}
    return out


def models_of(path):
    """``[(model, assignment)]`` of a configuration's global-memory copies (the least admissible
    value of every symbol); copies CuTe rejects or that may fault (expected alignment/in_bounds
    refutations) are left out."""
    cfg = load_config(path)
    if cfg.expect.refuted_somewhere & {"alignment", "in_bounds", "exactly_once", "coverage"}:
        return []
    out = []
    for gc in list(cfg.g2s.values()) + list(cfg.s2g.values()):
        try:
            m = build_global_model(gc, cfg.params)
        except Exception:  # noqa: BLE001 - rejected or not modelled: nothing to run
            continue
        if m.past:                          # it writes past its tile (in_bounds refutes it): may fault
            continue
        asg = {s.name: cfg.params[s.name].values()[0] for s in m.gmem.symbols}
        out.append((m, asg))
    return out


# ---------------------------------------------------------------- bank-conflict patterns


def predicted_wavefronts(kind: str, vb: int, addrs) -> int:
    """The model's wavefronts for one warp instruction at byte addresses ``addrs`` (one per lane;
    ldmatrix: the row addresses of the lanes that give them)."""
    groups = {}
    for l, a in enumerate(addrs):
        ph = l // 8 if kind == "ldsm" else phase_of(l, vb)
        groups.setdefault(ph, []).append(a)
    return sum(wavefronts(g, 16 if kind == "ldsm" else vb)[0] for g in groups.values())


def patterns(seed: int = 14) -> list:
    """``[(name, kind, vb, addresses)]``: kind ``ld``/``st`` (vb 4, 8, 16) or ``ldsm`` (x1: 8 row
    addresses, x4: 32)."""
    rng = random.Random(seed)
    out = []
    for vb in (4, 8, 16):
        for k in (1, 2, 4, 8, 16, 32):
            out.append((f"stride{k}", vb, [(l * k * vb) % 16384 for l in range(32)]))
        out.append(("halfwarp_same_banks", vb, [(l % 16) * vb + (l // 16) * 128 * 4 for l in range(32)]))
        out.append(("pairs_two_words", vb, [(l % 2) * 128 + (l // 2) * vb for l in range(32)]))
        for r in range(4):
            slots = rng.sample(range(4096 // vb), 32)
            out.append((f"random{r}", vb, [s * vb for s in slots]))
    pats = []
    for name, vb, addrs in out:
        for kind in ("ld", "st"):
            pats.append((f"{kind}{vb}_{name}", kind, vb, addrs))
    for k in (1, 2, 4, 8, 9):
        pats.append((f"ldsm_x4_rows{k}", "ldsm", 16, [(l * k * 16) % 16384 for l in range(32)]))
    for r in range(4):
        slots = rng.sample(range(256), 32)
        pats.append((f"ldsm_x4_random{r}", "ldsm", 16, [s * 16 for s in slots]))
    return pats


#: wavefronts the total counter ``l1tex__data_pipe_lsu_wavefronts_mem_shared`` reads beyond the instructions'
#: in every one-warp measuring kernel (ld, st and ldmatrix alike: 99 of 99, run 2026-12-01 07:26); the "+1 per
#: ldmatrix" of the 06:20 run was this constant, which the per-op / ``cmd_read`` counters do not have
KERNEL_CONSTANT = 1
#: ldmatrix variants: (num, reps, rows per bank group).  (Repeating the instruction in one kernel does not
#: measure anything: ptxas merges identical ldmatrix of one address, run 2026-12-01 07:26.)
LDSM_VARIANTS = [(num, 1, k) for num in (1, 2) for k in (1, 2, 8)]


def ldsm_variant_items() -> list:
    """``.x1/.x2`` ldmatrix, conflict-free (one row per 16 bytes), 2 and 8 rows per bank group; plus
    ``ld.shared.v4`` under the total counter (its constant is the kernel's, not ldmatrix's)."""
    items = []
    for num, reps, k in LDSM_VARIANTS:
        addrs = [(l * k * 16) % 16384 for l in range(32)]
        per = predicted_wavefronts("ldsm", 16, addrs[:8 * num])
        items.append({"name": f"ldsmv_x{num}_r{reps}_rows{k}", "kind": "ldsm", "vb": 16, "addrs": addrs, "num": num,
                      "reps": reps, "per_instruction": per, "predicted": per * reps})
    for reps in (1,):
        addrs = [l * 16 for l in range(32)]
        per = predicted_wavefronts("ld", 16, addrs)
        # the total counter: the instructions' wavefronts plus one per kernel (KERNEL_CONSTANT)
        items.append({"name": f"ld16v_r{reps}", "kind": "ldtotal", "vb": 16, "addrs": addrs, "num": 0, "reps": reps,
                      "per_instruction": per, "predicted": per * reps + KERNEL_CONSTANT})
    return items


def ldsm_variant_source() -> str:
    ks = []
    for num in (1, 2):
        outs = ", ".join(f'"=r"(r[{i}])' for i in range(num))
        regs = "{" + ",".join(f"%{i}" for i in range(num)) + "}"
        for reps in (1,):
            body = "\n".join(f'  asm volatile("ldmatrix.sync.aligned.m8n8.x{num}.shared.b16 {regs}, [%{num}];\\n" : {outs} : "r"(a));'
                             f"\n  for (int i = 0; i < {num}; ++i) acc ^= r[i];" for _ in range(reps))
            ks.append(f'''
extern "C" __global__ void pat_ldsmv_x{num}_r{reps}(const int* addr, unsigned* sink) {{
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned a = (unsigned)__cvta_generic_to_shared(raw + addr[threadIdx.x]);
  unsigned r[{num}], acc = 0;
{body}
  sink[threadIdx.x] = acc;
}}''')
    for reps in (1,):
        body = "\n".join('  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\\n" : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3]) : "r"(a));'
                         "\n  acc ^= x[0] ^ x[1] ^ x[2] ^ x[3];" for _ in range(reps))
        ks.append(f'''
extern "C" __global__ void pat_ld16v_r{reps}(const int* addr, unsigned* sink) {{
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned a = (unsigned)__cvta_generic_to_shared(raw + addr[threadIdx.x]);
  unsigned x[4], acc = 0;
{body}
  sink[threadIdx.x] = acc;
}}''')
    return "\n".join(ks)


def pattern_source() -> str:
    """One kernel per instruction kind: lane ``l`` accesses shared memory at byte ``addr[l]``."""
    regs = {4: ("%0", 1), 8: ("{%0,%1}", 2), 16: ("{%0,%1,%2,%3}", 4)}
    sfx = {4: "u32", 8: "v2.u32", 16: "v4.u32"}
    ks = []
    for vb in (4, 8, 16):
        r, n = regs[vb]
        outs = ", ".join(f'"=r"(x[{i}])' for i in range(n))
        ins = ", ".join(f'"r"(x[{i}])' for i in range(n))
        st_regs = "{" + ",".join(f"%{i + 1}" for i in range(n)) + "}" if n > 1 else "%1"
        ks.append(f'''
extern "C" __global__ void pat_ld{vb}(const int* addr, unsigned* sink) {{
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned a = (unsigned)__cvta_generic_to_shared(raw + addr[threadIdx.x]);
  unsigned x[{n}];
  asm volatile("ld.shared.{sfx[vb]} {r}, [%{n}];\\n" : {outs} : "r"(a));
  unsigned acc = 0;
  for (int i = 0; i < {n}; ++i) acc ^= x[i];
  sink[threadIdx.x] = acc;
}}
extern "C" __global__ void pat_st{vb}(const int* addr, unsigned* sink) {{
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned a = (unsigned)__cvta_generic_to_shared(raw + addr[threadIdx.x]);
  unsigned x[{n}];
  for (int i = 0; i < {n}; ++i) x[i] = threadIdx.x + i;
  asm volatile("st.shared.{sfx[vb]} [%0], {st_regs};\\n" :: "r"(a), {ins} : "memory");
}}''')
    ks.append('''
extern "C" __global__ void pat_ldgsts(const int* addr, unsigned* sink) {
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned a = (unsigned)__cvta_generic_to_shared(raw + addr[threadIdx.x]);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\\n" :: "r"(a), "l"(sink + 4 * threadIdx.x) : "memory");
  asm volatile("cp.async.commit_group;\\n" ::: "memory");
  asm volatile("cp.async.wait_all;\\n" ::: "memory");
}''')
    ks.append('''
extern "C" __global__ void pat_ldsm(const int* addr, unsigned* sink) {
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned a = (unsigned)__cvta_generic_to_shared(raw + addr[threadIdx.x]);
  unsigned r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
  sink[threadIdx.x] = r0 ^ r1 ^ r2 ^ r3;
}''')
    return "\n".join(ks)


def plan(paths) -> dict:
    """The kernels to profile, in launch order, with the model's predictions."""
    items = []
    for name, kind, vb, addrs in patterns():
        items.append({"name": name, "kind": kind, "vb": vb, "addrs": addrs,
                      "predicted": predicted_wavefronts(kind, vb, addrs)})
    items += ldsm_variant_items()
    for name, kind, vb, addrs in patterns():
        if kind == "st" and vb == 16:            # the same 16-byte patterns written by cp.async (LDGSTS)
            items.append({"name": "ldgsts" + name[4:], "kind": "ldgsts", "vb": 16, "addrs": addrs,
                          "predicted": predicted_wavefronts("st", 16, addrs)})
    for p in paths:
        for m, asg in models_of(p):
            if m.kind == "g2s" and m.atom.op.kind == "cp_async":
                kind = "ldgsts"
            else:
                kind = "st" if m.kind == "g2s" else "ld"
            total = 0
            for w, c in m.requests():
                groups = {}
                for l in range(32):
                    t = 32 * w + l
                    if t < m.threads:
                        groups.setdefault(phase_of(l, m.vb), []).append(m.smem_addr[m.accesses[t][c][0]] * m.eb)
                total += sum(wavefronts(g, m.vb)[0] for g in groups.values())
            items.append({"name": f"{p}:{m.name}", "kind": kind, "path": str(p), "copy": m.name, "params": asg,
                          "predicted": total})
    return {"items": items}


def launch_all(pl: dict) -> None:
    """Launch every planned kernel once (under ``ncu``)."""
    import cupy as cp
    import numpy as np
    pm = compile_module(pattern_source())
    vm = compile_module(ldsm_variant_source())
    sink = cp.zeros(32, dtype=cp.uint32)
    sink2 = cp.zeros(32 * 4, dtype=cp.uint32)         # cp.async sources: 16 bytes per lane
    for it in pl["items"]:
        if "reps" in it:
            k = (f"pat_ldsmv_x{it['num']}_r{it['reps']}" if it["kind"] == "ldsm" else f"pat_ld16v_r{it['reps']}")
            launch(vm, k, 1, 32, (cp.asarray(np.array(it["addrs"], dtype=np.int32)), sink), shared_mem=20480)
            continue
        if "addrs" in it:
            k = "pat_ldsm" if it["kind"] == "ldsm" else "pat_ldgsts" if it["kind"] == "ldgsts" else f"pat_{it['kind']}{it['vb']}"
            launch(pm, k, 1, 32, (cp.asarray(np.array(it["addrs"], dtype=np.int32)), sink2 if k == "pat_ldgsts" else sink),
                   shared_mem=20480)
            continue
        for m, asg in models_of(it["path"]):
            if m.name != it["copy"]:
                continue
            dt = _np_uint(m.value_bits)
            G, goff, soff = copy_tables(m, asg)
            mod = compile_module(copy_source(m))
            nsm = int(m.smem.cosize()) + 64
            d_g = cp.zeros(max(G) + 64, dtype=dt)
            d_s = cp.zeros(nsm, dtype=dt)
            launch(mod, "dp_copy", 1, m.threads,
                   (d_g, d_s, d_s, cp.asarray(np.array(goff, dtype=np.int32)), cp.asarray(np.array(soff, dtype=np.int32)),
                    np.int32(len(m.accesses[0])), np.int32(0)), shared_mem=nsm * m.value_bits // 8)


# ---------------------------------------------------------------- cp.async bank conflicts by timing


#: repetitions of a timed access sequence, and launches per measurement (the median is kept)
TIMING_REPS = 256
TIMING_RUNS = 7


def timing_items(paths, seed: int = 14) -> list:
    """Timed shared-memory writes: ``{name, kind ("ldgsts" | "st16"), threads, saddr [T][n], gaddr [T][n],
    predicted (wavefronts of one pass), twin}``.  Each 16-byte pattern of :func:`patterns` (one warp, one
    access), as a ``cp.async`` and as an ``st.shared.v4`` (whose wavefronts Nsight Compute confirms, the
    calibration), and every ``[g2s.X]`` cp.async copy of ``paths`` with its conflict-free twin (the same
    accesses, each warp instruction's 32 destinations made contiguous)."""
    items = []
    for name, kind, vb, addrs in patterns(seed):
        if kind != "st" or vb != 16:
            continue
        pred = predicted_wavefronts("st", 16, addrs)
        # 4 warps, each issuing the pattern 8 times per pass: enough in flight that the shared-memory
        # side, not the latency of one instruction, sets the time (one warp, one instruction: latency-bound,
        # the same time for every pattern, run 2026-12-01 07:26)
        for k in ("ldgsts", "st16"):
            items.append({"name": f"{k}_{name[4:]}", "kind": k, "threads": 128,
                          "saddr": [[addrs[t % 32]] * 8 for t in range(128)],
                          "gaddr": [[16 * (c * 128 + t) for c in range(8)] for t in range(128)], "predicted": 32 * pred})
    for p in paths:
        for m, asg in models_of(p):
            if not (m.kind == "g2s" and m.atom.op.kind == "cp_async" and m.vb == 16):
                continue
            n = len(m.accesses[0])
            T = m.threads
            sa = [[m.smem_addr[m.accesses[t][c][0]] * m.eb for c in range(n)] for t in range(T)]
            twin = [[((c * ((T + 31) // 32) + t // 32) * 32 + t % 32) * 16 for c in range(n)] for t in range(T)]
            ga = [[(c * T + t) * 16 for c in range(n)] for t in range(T)]

            def pred_of(tab):
                tot = 0
                for w, c in m.requests():
                    groups = {}
                    for l in range(32):
                        t = 32 * w + l
                        if t < T:
                            groups.setdefault(phase_of(l, 16), []).append(tab[t][c])
                    tot += sum(wavefronts(g, 16)[0] for g in groups.values())
                return tot
            for tag, tab in (("", sa), (" (twin)", twin)):
                items.append({"name": f"{p}:{m.name}{tag}", "kind": "ldgsts", "threads": T, "saddr": tab, "gaddr": ga,
                              "predicted": pred_of(tab)})
    return items


def timing_source() -> str:
    """``tim_ldgsts`` / ``tim_st16``: every thread issues its ``n`` 16-byte shared-memory writes ``reps`` times
    (cp.async: one commit group per pass, all waited for at the end); thread 0 reads ``clock64`` around it."""
    return r'''
#define MAXN 16
extern "C" __global__ void tim_ldgsts(const unsigned char* g, const int* saddr, const int* gaddr, int n, int reps,
                                      long long* cyc) {
  extern __shared__ __align__(1024) unsigned char raw[];
  const int t = threadIdx.x;
  const unsigned sb = (unsigned)__cvta_generic_to_shared(raw);
  unsigned sa[MAXN]; const unsigned char* ga[MAXN];
  #pragma unroll
  for (int c = 0; c < MAXN; ++c) if (c < n) { sa[c] = sb + saddr[t * n + c]; ga[c] = g + gaddr[t * n + c]; }
  #pragma unroll
  for (int c = 0; c < MAXN; ++c) if (c < n)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" :: "r"(sa[c]), "l"(ga[c]) : "memory");
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
  long long t0 = clock64();
  for (int r = 0; r < reps; ++r) {
    #pragma unroll
    for (int c = 0; c < MAXN; ++c) if (c < n)
      asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" :: "r"(sa[c]), "l"(ga[c]) : "memory");
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
  long long t1 = clock64();
  if (t == 0) cyc[0] = t1 - t0;
}
extern "C" __global__ void tim_st16(const unsigned char* g, const int* saddr, const int* gaddr, int n, int reps,
                                    long long* cyc) {
  extern __shared__ __align__(1024) unsigned char raw[];
  const int t = threadIdx.x;
  const unsigned sb = (unsigned)__cvta_generic_to_shared(raw);
  unsigned sa[MAXN];
  #pragma unroll
  for (int c = 0; c < MAXN; ++c) if (c < n) sa[c] = sb + saddr[t * n + c];
  __syncthreads();
  long long t0 = clock64();
  for (int r = 0; r < reps; ++r) {
    #pragma unroll
    for (int c = 0; c < MAXN; ++c) if (c < n)
      asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};\n" :: "r"(sa[c]), "r"(r), "r"(t), "r"(c), "r"(r ^ t) : "memory");
  }
  __syncthreads();
  long long t1 = clock64();
  if (t == 0) cyc[0] = t1 - t0;
}
'''


def run_timing(items: list) -> list:
    """Cycles of every timed item (median of :data:`TIMING_RUNS` launches), per pass and per predicted
    wavefront."""
    import cupy as cp
    import numpy as np
    mod = compile_module(timing_source())
    g = cp.zeros(1 << 20, dtype=cp.uint8)
    cyc = cp.zeros(1, dtype=cp.int64)
    out = []
    for it in items:
        n = len(it["saddr"][0])
        if n > 16:
            out.append({**{k: it[k] for k in ("name", "kind", "predicted")}, "error": "more than 16 accesses"})
            continue
        sa = cp.asarray(np.array(it["saddr"], dtype=np.int32).ravel())
        ga = cp.asarray(np.array(it["gaddr"], dtype=np.int32).ravel())
        smem = max(max(r) for r in it["saddr"]) + 64
        vals = []
        for _ in range(TIMING_RUNS):
            launch(mod, f"tim_{it['kind']}", 1, it["threads"], (g, sa, ga, np.int32(n), np.int32(TIMING_REPS), cyc),
                   shared_mem=int(smem))
            vals.append(int(cp.asnumpy(cyc)[0]))
        med = sorted(vals)[len(vals) // 2]
        out.append({"name": it["name"], "kind": it["kind"], "threads": it["threads"], "predicted": it["predicted"],
                    "cycles": med, "cycles_per_pass": med / TIMING_REPS, "runs": vals})
    return out


#: the timed ratio to the conflict-free twin agrees with the predicted wavefront ratio within this factor
TIMING_TOLERANCE = 0.10


def timing_compare(res: list) -> list:
    """Rows ``(name, predicted wavefronts, twin's, predicted ratio, measured time ratio, agree)`` of the
    cp.async items: each 16-byte pattern against the contiguous pattern (``stride1``), each configuration's
    copy against its twin.  LDGSTS is throughput-bound on the shared-memory side (about 1.6 cycles per
    wavefront on the H200 for every pattern), so the time ratio measures the wavefront ratio."""
    by = {r["name"]: r for r in res}
    rows = []
    for r in res:
        if r["kind"] != "ldgsts" or r["name"].endswith("(twin)") or "cycles" not in r:
            continue
        twin = by.get(r["name"] + " (twin)") or (by.get("ldgsts__stride1") if r["name"].startswith("ldgsts__") else None)
        if twin is None or twin is r:
            continue
        pr = r["predicted"] / twin["predicted"]
        mr = r["cycles"] / twin["cycles"]
        rows.append((r["name"], r["predicted"], twin["predicted"], round(pr, 3), round(mr, 3),
                     abs(mr / pr - 1) <= TIMING_TOLERANCE))
    return rows


#: the Nsight Compute counter of each instruction kind's shared-memory wavefronts (Nsight Compute 2025.3.1,
#: H200; `ncu --query-metrics`): ld/st have per-op counters; ldmatrix is counted by the read wavefronts
#: (``cmd_read``: the total counter reads one more wavefront per kernel, ld.shared kernels included, run
#: 2026-12-01 07:26); LDGSTS shared-memory writes are in neither the total nor ``cmd_write`` -- only the
#: SASS-attributed counter ``sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts`` names them
METRICS = {
    "ld": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "st": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "ldsm": "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_read.sum",
    "ldgsts": "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    "ldtotal": "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
}
#: more counters read for every kernel (reported next to the one compared): the total (every shared-memory
#: wavefront of the kernel: one more than the instructions' in every kernel measured, ld.shared included),
#: the SASS-attributed ldmatrix / LDGSTS wavefronts and bank conflicts
EXTRA_METRICS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_write.sum",
                 "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
                 "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
                 "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum",
                 "sm__sass_inst_executed_op_ldgsts.sum",
                 "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum")


def parse_ncu_csv(text: str) -> list:
    """``[{metric: value}]`` per profiled kernel, in launch order, from ``ncu --csv --page raw``."""
    import csv
    import io
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if not rows:
        return []
    head = rows[0]
    out = []
    for r in rows[1:]:
        if len(r) != len(head) or not r[0].strip().isdigit():
            continue                              # the units row
        d = {}
        for k, v in zip(head, r):
            if k.startswith(("l1tex", "smsp", "sm__")):
                try:
                    d[k] = float(v.replace(",", ""))
                except ValueError:
                    d[k] = None
            elif k == "Kernel Name":
                d["kernel"] = v
        out.append(d)
    return out


def compare(pl: dict, measured: list) -> list:
    """Rows ``(name, kind, predicted, measured, agree, every counter read)``; ``agree`` is None for LDGSTS (the
    counters do not measure its bank wavefronts: :func:`timing_compare` judges it)."""
    rows = []
    for it, m in zip(pl["items"], measured):
        v = m.get(METRICS[it["kind"]])
        agree = v is not None and int(v) == it["predicted"]
        if it["kind"] == "ldgsts":
            agree = None          # no counter measures LDGSTS bank wavefronts: judged by timing (timing_compare)
        rows.append((it["name"], it["kind"], it["predicted"], None if v is None else int(v), agree,
                     {k: (None if x is None else int(x)) for k, x in m.items() if k != "kernel"}))
    return rows


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd, rest = argv[0], argv[1:]
    if cmd == "markers":
        res = []
        for p in rest:
            for m, asg in models_of(p):
                try:
                    res.append({"path": p, **run_markers(m, asg)})
                except Exception as e:  # noqa: BLE001 - report and go on
                    res.append({"path": p, "copy": m.name, "ok": False, "error": str(e).splitlines()[0]})
        print(json.dumps(res, indent=1))
        return 0 if all(r["ok"] for r in res) else 1
    if cmd == "plan":
        with open(rest[0], "w") as f:
            json.dump(plan(rest[1:]), f)
        return 0
    if cmd == "kernels":
        with open(rest[0]) as f:
            launch_all(json.load(f))
        return 0
    if cmd == "metrics":
        print(",".join(dict.fromkeys(list(METRICS.values()) + list(EXTRA_METRICS))))
        return 0
    if cmd == "timing":
        res = run_timing(timing_items(rest[1:]))
        with open(rest[0], "w") as f:
            json.dump(res, f, indent=1)
        for r in res:
            print(r["name"], r["kind"], r["predicted"], r.get("cycles_per_pass"), sep=" | ")
        rows = timing_compare(res)
        print("cp.async vs conflict-free twin: name | predicted wavefronts | twin's | predicted ratio | time ratio | agree")
        for r in rows:
            print(" | ".join(str(x) for x in r))
        print(f"cp.async timing: {sum(r[5] for r in rows)} of {len(rows)} agree within {TIMING_TOLERANCE:.0%}")
        return 0 if all(r[5] for r in rows) else 1
    if cmd == "compare":
        with open(rest[0]) as f:
            pl = json.load(f)
        with open(rest[1]) as f:
            meas = parse_ncu_csv(f.read())
        rows = compare(pl, meas)
        short = {"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": "total",
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_read.sum": "read",
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_write.sum": "write",
                 "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum": "sass_ldsm",
                 "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum": "sass_ldsm_conflicts",
                 "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum": "sass_ldgsts",
                 "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum": "sass_ldgsts_conflicts",
                 "sm__sass_inst_executed_op_ldgsts.sum": "ldgsts_inst",
                 "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum": "ldgsts_conflicts"}
        for r in rows:
            ex = " ".join(f"{short[k]}={v}" for k, v in r[5].items() if k in short)
            print(" | ".join(str(x) for x in r[:5]) + " | " + ex)
        judged = [r for r in rows if r[4] is not None]
        print(f"counters: {sum(bool(r[4]) for r in judged)} of {len(judged)} measured = predicted "
              f"({len(rows) - len(judged)} LDGSTS rows reported, judged by timing)")
        return 0 if all(r[4] for r in judged) else 1
    raise SystemExit(f"unknown command {cmd!r}")


if __name__ == "__main__":
    raise SystemExit(main())
