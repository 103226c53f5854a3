"""Run the global-memory copies of a configuration on the GPU, and measure shared-memory bank
conflicts against the prover's model (issue 14).

* **marker mode** for every ``[g2s.X]`` / ``[s2g.C]``: global memory (g2s) or shared memory (s2g)
  holds element ids (``i + 1`` at the element's address, poison everywhere else); every thread
  issues the instructions of its accesses (``cp.async.cg/ca``, or vector ``ld``/``st``), with the
  addresses taken from the prover's model (:func:`symlayout.prove.g2s.build_global_model`: nothing
  here computes a layout); the destination image must hold id ``i + 1`` at the address of every
  element ``i`` and poison everywhere else.
* **bank-conflict patterns**: one warp issues one shared-memory instruction (``ld``/``st`` of 4, 8
  or 16 bytes, ``ldmatrix`` ``.x1``/``.x4``) at per-lane byte addresses; Nsight Compute counts the
  wavefronts (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st/ldsm``) and the prover's
  phase rule (:func:`symlayout.prove.g2s.wavefronts`: 16-byte accesses served per 8 lanes, 8-byte
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
    from .cuda import compile_module, launch
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
    from ..config import load_config
    from ..prove.g2s import build_global_model
    cfg = load_config(path)
    if cfg.expect.refuted_somewhere & {"alignment", "in_bounds", "exactly_once", "coverage"}:
        return []
    out = []
    for gc in list(cfg.g2s.values()) + list(cfg.s2g.values()):
        try:
            m = build_global_model(gc, cfg.params)
        except Exception:  # noqa: BLE001 - rejected or not modelled: nothing to run
            continue
        asg = {s.name: cfg.params[s.name].values()[0] for s in m.gmem.symbols}
        out.append((m, asg))
    return out


# ---------------------------------------------------------------- bank-conflict patterns


def predicted_wavefronts(kind: str, vb: int, addrs) -> int:
    """The model's wavefronts for one warp instruction at byte addresses ``addrs`` (one per lane;
    ldmatrix: the row addresses of the lanes that give them)."""
    from ..prove.g2s import phase_of, wavefronts
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
    for p in paths:
        for m, asg in models_of(p):
            if m.kind == "g2s" and m.atom.op.kind == "cp_async":
                kind = "ldgsts"
            else:
                kind = "st" if m.kind == "g2s" else "ld"
            from ..prove.g2s import phase_of, wavefronts
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
    from .cuda import compile_module, launch
    pm = compile_module(pattern_source())
    sink = cp.zeros(32, dtype=cp.uint32)
    for it in pl["items"]:
        if "addrs" in it:
            k = "pat_ldsm" if it["kind"] == "ldsm" else f"pat_{it['kind']}{it['vb']}"
            launch(pm, k, 1, 32, (cp.asarray(np.array(it["addrs"], dtype=np.int32)), sink), shared_mem=20480)
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


#: the Nsight Compute counter of each instruction kind's shared-memory wavefronts.  Nsight Compute
#: 2025.3 on the H200 has per-op wavefront counters for ld/st only; ldmatrix (LDSM) and cp.async
#: (LDGSTS) are counted in the total, which the measuring kernels make theirs alone (``nfill = 0``:
#: no other shared-memory instruction runs)
METRICS = {
    "ld": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "st": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "ldsm": "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "ldgsts": "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
}


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
            if k.startswith(("l1tex", "smsp")):
                try:
                    d[k] = float(v.replace(",", ""))
                except ValueError:
                    d[k] = None
            elif k == "Kernel Name":
                d["kernel"] = v
        out.append(d)
    return out


def compare(pl: dict, measured: list) -> list:
    """Rows ``(name, kind, predicted, measured, agree)``."""
    rows = []
    for it, m in zip(pl["items"], measured):
        v = m.get(METRICS[it["kind"]])
        rows.append((it["name"], it["kind"], it["predicted"], None if v is None else int(v),
                     v is not None and int(v) == it["predicted"]))
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
    if cmd == "compare":
        with open(rest[0]) as f:
            pl = json.load(f)
        with open(rest[1]) as f:
            meas = parse_ncu_csv(f.read())
        rows = compare(pl, meas)
        for r in rows:
            print(" | ".join(str(x) for x in r))
        return 0 if all(r[4] for r in rows) else 1
    raise SystemExit(f"unknown command {cmd!r}")


if __name__ == "__main__":
    raise SystemExit(main())
