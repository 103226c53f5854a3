"""CUDA C++ with inline PTX for a plan: per copied operand a marker kernel (ldmatrix/stmatrix/cp.async/vector
ld/st as the atom names them) and the compute kernel (copies and ``mma.sync``).  ``plan`` arguments are :class:`~symlayout.harness.plan.ConfigPlan`
objects, ``p`` their :class:`~symlayout.harness.plan.OperandPlan` s."""
from __future__ import annotations

from .values import HarnessError, reg_bits, round_up, uint_c


_PRELUDE = """typedef unsigned int u32;
typedef unsigned long long u64;
__device__ __forceinline__ u64 sl_get(const u32* r, int v, int bits) {
  if (bits == 64) return (u64)r[2 * v] | ((u64)r[2 * v + 1] << 32);
  const int b = v * bits;
  const u32 w = r[b >> 5] >> (b & 31);
  return bits == 32 ? (u64)w : (u64)(w & ((1u << bits) - 1u));
}
__device__ __forceinline__ void sl_put(u32* r, int v, int bits, u64 x) {
  if (bits == 64) { r[2 * v] = (u32)x; r[2 * v + 1] = (u32)(x >> 32); return; }
  const int b = v * bits;
  r[b >> 5] |= (u32)x << (b & 31);
}
"""


def _regs_list(n: int, start: int = 0) -> str:
    return "{" + ", ".join(f"%{start + i}" for i in range(n)) + "}"


def _copy_function(plan, p) -> str:
    """``copy_X(t, tile, tab_addr, tab_slot, frag, cnt, gtile)``: every call of thread ``t``."""
    E = uint_c(p.bits)
    W = p.words
    body = []
    if p.kind == "ldsm":
        outs = ", ".join(f'"=r"(r[{j}])' for j in range(W))
        body.append(f'asm volatile("{p.ptx} {_regs_list(W)}, [%{W}];\\n" : {outs} : "r"(tile + ad[0]) : "memory");')
    elif p.kind == "stsm":
        ins = ", ".join(f'"r"(r[{j}])' for j in range(W))
        body.append(f'asm volatile("{p.ptx} [%0], {_regs_list(W, 1)};\\n" :: "r"(tile + ad[0]), {ins} : "memory");')
    elif p.kind in ("vld", "vst"):
        vb = p.vec_vals * p.bits
        wv = max(1, vb // 32)
        for j in range(p.nvec):
            a = f"tile + ad[{j}]"
            if p.kind == "vld":
                outs = ", ".join(f'"=r"(r[{j * wv + q}])' for q in range(wv))
                regs = _regs_list(wv) if wv > 1 else "%0"
                body.append(f'asm volatile("{p.ptx} {regs}, [%{wv}];\\n" : {outs} : "r"({a}) : "memory");')
            else:
                ins = ", ".join(f'"r"(r[{j * wv + q}])' for q in range(wv))
                regs = _regs_list(wv, 1) if wv > 1 else "%1"
                body.append(f'asm volatile("{p.ptx} [%0], {regs};\\n" :: "r"({a}), {ins} : "memory");')
    elif p.kind == "cp_async":
        vbytes = p.vec_bytes
        slot_bytes = round_up(p.nvec * vbytes, 16)
        wv = max(1, vbytes // 4)
        for j in range(p.nvec):
            body.append(f'asm volatile("{p.ptx} [%0], [%1], {vbytes};\\n" :: "r"(stage + {slot_bytes} * t + {j * vbytes}), '
                        f'"l"(__cvta_generic_to_global(gtile + ad[{j}])) : "memory");')
        body.append('asm volatile("cp.async.commit_group;\\n" ::: "memory");')
        body.append('asm volatile("cp.async.wait_group 0;\\n" ::: "memory");')
        for q in range(max(1, p.nvec * vbytes // 4)):
            body.append(f'asm volatile("ld.shared.u32 %0, [%1];\\n" : "=r"(r[{q}]) : "r"(stage + {slot_bytes} * t + {4 * q}) : "memory");')
        if vbytes < 4:
            raise HarnessError("cp.async moves 4, 8 or 16 bytes")
    else:  # pragma: no cover
        raise HarnessError(p.kind)
    load = p.direction == "load"
    lines = [f"__device__ __forceinline__ void copy_{p.op}(int t, u32 tile, u32 stage, const int* __restrict__ taddr, "
             f"const int* __restrict__ tslot, {E}* frag, int* cnt, const unsigned char* gtile) {{",
             "#pragma unroll 1",
             f"  for (int c = 0; c < {p.ncalls}; ++c) {{",
             f"    const int* ad = taddr + (t * {p.ncalls} + c) * {p.nvec};",
             f"    const int* sl = tslot + (t * {p.ncalls} + c) * {p.nreg};",
             f"    u32 r[{W}];"]
    if load:
        lines += ["    " + b for b in body]
        lines += [f"    for (int v = 0; v < {p.nreg}; ++v) {{ const int q = sl[v]; frag[q] = ({E})sl_get(r, v, {p.bits}); cnt[q] += 1; }}"]
    else:
        lines += [f"    for (int w = 0; w < {W}; ++w) r[w] = 0u;",
                  f"    for (int v = 0; v < {p.nreg}; ++v) {{ const int q = sl[v]; sl_put(r, v, {p.bits}, (u64)frag[q]); cnt[q] += 1; }}"]
        lines += ["    " + b for b in body]
    lines += ["  }", "}"]
    return "\n".join(lines)


def _marker_kernel(plan, p) -> str:
    E = uint_c(p.bits)
    op = p.op
    fs = p.frag_size
    stage = plan.smem_layout.get(f"stage_{op}", 0)
    tile_expr = f"(u32)__cvta_generic_to_shared(dyn + {plan.smem_layout[op]})" if p.kind != "cp_async" else "0u"
    head = (f'extern "C" __global__ void __launch_bounds__({plan.threads}) marker_{op}('
            f"const {E}* __restrict__ img, int img_n, const int* __restrict__ taddr, const int* __restrict__ tslot, "
            f"{E}* __restrict__ frag_in_out, int* __restrict__ cnt_out, {E}* __restrict__ img_out, {E} poison, "
            f"const unsigned char* __restrict__ gtile) {{")
    lines = [head,
             "  extern __shared__ __align__(1024) unsigned char dyn[];",
             "  const int t = threadIdx.x;",
             f"  const u32 stage = (u32)__cvta_generic_to_shared(dyn) + {stage};",
             f"  {E} frag[{fs}]; int cnt[{fs}];",
             f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fs}; ++q) cnt[q] = 0;"]
    if p.kind != "cp_async":
        lines += [f"  {E}* s = ({E}*)(dyn + {plan.smem_layout[op]});"]
    if p.direction == "load":
        if p.kind != "cp_async":
            lines += ["  for (int i = t; i < img_n; i += blockDim.x) s[i] = img[i];"]
        lines += ["  __syncthreads();",
                  f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fs}; ++q) frag[q] = poison;",
                  f"  copy_{op}(t, {tile_expr}, stage, taddr, tslot, frag, cnt, gtile);",
                  f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fs}; ++q) {{ frag_in_out[t * {fs} + q] = frag[q]; cnt_out[t * {fs} + q] = cnt[q]; }}"]
    else:
        lines += ["  for (int i = t; i < img_n; i += blockDim.x) s[i] = poison;",
                  f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fs}; ++q) frag[q] = frag_in_out[t * {fs} + q];",
                  "  __syncthreads();",
                  f"  copy_{op}(t, {tile_expr}, stage, taddr, tslot, frag, cnt, gtile);",
                  "  __syncthreads();",
                  "  for (int i = t; i < img_n; i += blockDim.x) img_out[i] = s[i];",
                  f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fs}; ++q) cnt_out[t * {fs} + q] = cnt[q];"]
    lines.append("}")
    return "\n".join(lines)


def _c_reg_decl(rtype: str) -> tuple[str, str]:
    """(C declaration type, asm constraint letter) of an MMA register type."""
    return {"uint32_t": ("u32", "r"), "int32_t": ("u32", "r"), "float": ("float", "f"),
            "double": ("double", "d")}[rtype]


def _from_words(decl: str, r: str, w: str) -> str:
    """The C statement that sets register ``r[j]`` (of C type ``decl``) from the 32-bit words ``w`` (a double:
    two words, low first); :func:`_to_words` is its inverse."""
    return {"u32": f"{r}[j] = {w}[j];",
            "float": f"{r}[j] = __uint_as_float({w}[j]);",
            "double": f"{r}[j] = __longlong_as_double((long long)((u64){w}[2 * j] | "
                      f"((u64){w}[2 * j + 1] << 32)));",
            }[decl]


def _to_words(decl: str, r: str, w: str) -> str:
    """The C statement that stores register ``r[j]`` (of C type ``decl``) into the 32-bit words ``w``."""
    return {"u32": f"{w}[j] = {r}[j];",
            "float": f"{w}[j] = __float_as_uint({r}[j]);",
            "double": f"{{ u64 x = (u64)__double_as_longlong({r}[j]); {w}[2 * j] = (u32)x; "
                      f"{w}[2 * j + 1] = (u32)(x >> 32); }}",
            }[decl]


def _issue_tables(cpl, tab: str) -> list:
    """The index tables ``{tab}A/B/C`` of :func:`_mma_issue_loop`: per issue, the fragment slot of each
    register value of A, B and C (``cpl.issues``), flattened issue by issue."""
    n = len(cpl.issues)
    out = []
    for op, k in (("A", 0), ("B", 1), ("C", 2)):
        flat = ", ".join(str(x) for iss in cpl.issues for x in iss[k])
        out.append(f"__device__ const short {tab}{op}[{n * len(cpl.issues[0][k])}] = {{{flat}}};")
    return out


def _mma_issue_loop(cpl, atom, tab: str) -> list:
    """The ``mma.sync`` issue loop: per issue ``i``, pack the fragment slots named by the index tables
    ``{tab}A/B/C`` into the A, B, C registers, issue ``atom.ptx``, and unpack D into ``fC``."""
    NI = len(cpl.issues)
    VA, VB, VC = (len(cpl.issues[0][i]) for i in range(3))
    body = ["#pragma unroll 1", f"  for (int i = 0; i < {NI}; ++i) {{"]
    cons = {}
    for op, (rt, n, per), V in (("A", cpl.regs["A"], VA), ("B", cpl.regs["B"], VB), ("C", cpl.regs["C"], VC)):
        decl, letter = _c_reg_decl(rt)
        cons[op] = letter
        bits = cpl.frag_bits[op]
        nw = max(1, n * reg_bits(rt) // 32)
        body.append(f"    u32 w{op}[{nw}];")
        body.append(f"    for (int w = 0; w < {nw}; ++w) w{op}[w] = 0u;")
        body.append(f"    for (int v = 0; v < {V}; ++v) sl_put(w{op}, v, {bits}, (u64)f{op}[{tab}{op}[i * {V} + v]]);")
        body.append(f"    {decl} r{op}[{n}];")
        body.append(f"    for (int j = 0; j < {n}; ++j) " + _from_words(decl, f"r{op}", f"w{op}"))
    (_, na, _), (_, nb, _), (tc, nc, _) = cpl.regs["A"], cpl.regs["B"], cpl.regs["C"]
    declc, letc = _c_reg_decl(tc)
    body.append(f"    {declc} rD[{nc}];")
    idx, groups = 0, []
    for k in (nc, na, nb, nc):
        groups.append(_regs_list(k, idx))
        idx += k
    outs = ", ".join(f'"={letc}"(rD[{j}])' for j in range(nc))
    ins = ", ".join([f'"{cons["A"]}"(rA[{j}])' for j in range(na)] + [f'"{cons["B"]}"(rB[{j}])' for j in range(nb)]
                    + [f'"{cons["C"]}"(rC[{j}])' for j in range(nc)])
    body.append(f'    asm volatile("{atom.ptx} {groups[0]}, {groups[1]}, {groups[2]}, {groups[3]};\\n" : {outs} : {ins});')
    # unpack D into the C fragment
    wn = max(1, nc * reg_bits(tc) // 32)
    body.append(f"    u32 wD[{wn}];")
    body.append(f"    for (int j = 0; j < {nc}; ++j) " + _to_words(declc, "rD", "wD"))
    body.append(f"    for (int v = 0; v < {VC}; ++v) fC[{tab}C[i * {VC} + v]] = ({uint_c(cpl.frag_bits['C'])})sl_get(wD, v, {cpl.frag_bits['C']});")
    body.append("  }")
    return body


def _compute_kernel(plan) -> str:
    cpl = plan.compute
    atom = plan.mma.atom
    T = plan.threads
    E = {o: uint_c(cpl.frag_bits[o]) for o in ("A", "B", "C")}
    params, lines = [], []
    lines += ["  extern __shared__ __align__(1024) unsigned char dyn[];",
              "  const int t = threadIdx.x;",
              "  const u32 sbase = (u32)__cvta_generic_to_shared(dyn);"]
    for op in ("A", "B"):
        fs = cpl.frag[op]
        lines.append(f"  {E[op]} f{op}[{fs}]; int n{op}[{fs}];")
        lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fs}; ++q) n{op}[q] = 0;")
        if op in plan.operands:
            p = plan.operands[op]
            params += [f"const {E[op]}* __restrict__ img{op}", f"int n_img{op}", f"const int* __restrict__ addr{op}",
                       f"const int* __restrict__ slot{op}", f"const unsigned char* __restrict__ g{op}"]
            if p.kind != "cp_async":
                lines.append(f"  {{ {E[op]}* s = ({E[op]}*)(dyn + {plan.smem_layout[op]}); "
                             f"for (int i = t; i < n_img{op}; i += blockDim.x) s[i] = img{op}[i]; }}")
        else:
            params.append(f"const {E[op]}* __restrict__ dir{op}")
            lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fs}; ++q) {{ f{op}[q] = dir{op}[t * {fs} + q]; n{op}[q] = 1; }}")
    lines.append("  __syncthreads();")
    for op in ("A", "B"):
        if op in plan.operands:
            p = plan.operands[op]
            tile = f"sbase + {plan.smem_layout[op]}" if p.kind != "cp_async" else "0u"
            stage = f"sbase + {plan.smem_layout.get(f'stage_{op}', 0)}"
            lines.append(f"  copy_{op}(t, {tile}, {stage}, addr{op}, slot{op}, f{op}, n{op}, g{op});")
    fsc = cpl.frag["C"]
    params.append(f"const {E['C']}* __restrict__ dirC")
    lines.append(f"  {E['C']} fC[{fsc}];")
    lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fsc}; ++q) fC[q] = dirC[t * {fsc} + q];")
    tabs = _issue_tables(cpl, "I")
    lines += _mma_issue_loop(cpl, atom, "I")
    # output
    if "C" in plan.operands:
        p = plan.operands["C"]
        EO = uint_c(p.bits)
        params += [f"const int* __restrict__ addrC", f"const int* __restrict__ slotC", f"int n_imgC",
                   f"{EO}* __restrict__ outC", f"int* __restrict__ cntC", f"{EO} poisonC"]
        lines.append(f"  {EO} fO[{fsc}]; int nO[{fsc}];")
        conv = {None: "fO[q] = ({EO})fC[q];",
                "f32->f16": ('{ unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(__uint_as_float(fC[q]))); '
                             'fO[q] = h; }'),
                "f32->bf16": "fO[q] = (unsigned short)(fC[q] >> 16);",
                "f16->f32": ('{ float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)fC[q])); '
                             'fO[q] = __float_as_uint(f); }'),
                "s32->f32": "fO[q] = __float_as_uint((float)(int)fC[q]);"}[cpl.convert].replace("{EO}", EO)
        lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fsc}; ++q) {{ {conv} nO[q] = 0; }}")
        lines.append(f"  {{ {EO}* s = ({EO}*)(dyn + {plan.smem_layout['C']}); for (int i = t; i < n_imgC; i += blockDim.x) s[i] = poisonC; }}")
        lines.append("  __syncthreads();")
        lines.append(f"  copy_C(t, sbase + {plan.smem_layout['C']}, 0u, addrC, slotC, fO, nO, 0);")
        lines.append("  __syncthreads();")
        lines.append(f"  {{ {EO}* s = ({EO}*)(dyn + {plan.smem_layout['C']}); for (int i = t; i < n_imgC; i += blockDim.x) outC[i] = s[i]; }}")
        lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fsc}; ++q) cntC[t * {fsc} + q] = nO[q];")
    else:
        params.append(f"{E['C']}* __restrict__ outC")
        lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fsc}; ++q) outC[t * {fsc} + q] = fC[q];")
    params += ["int* __restrict__ cntAB"]
    fa, fb = cpl.frag["A"], cpl.frag["B"]
    lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fa}; ++q) cntAB[t * {fa + fb} + q] = nA[q];")
    lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fb}; ++q) cntAB[t * {fa + fb} + {fa} + q] = nB[q];")
    head = f'extern "C" __global__ void __launch_bounds__({T}) compute({", ".join(params)}) {{'
    return "\n".join(tabs) + "\n" + head + "\n" + "\n".join(lines) + "\n}"


def generate_source(plan) -> str:
    """The CUDA C++ of a configuration: ``copy_X`` device functions, ``marker_X``
    kernels for each copied operand and (when it applies) the ``compute`` kernel."""
    parts = [f"// symlayout harness: {plan.path}\n// {plan.name}\n", _PRELUDE]
    cpl = plan.compute
    for op, p in plan.operands.items():
        parts.append(_copy_function(plan, p))
    for op, p in plan.operands.items():
        parts.append(_marker_kernel(plan, p))
    if cpl is not None:
        parts.append(_compute_kernel(plan))
    return "\n\n".join(parts) + "\n"
