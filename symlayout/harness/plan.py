"""The plan of one configuration's GPU run, from the prover's model (pure Python, no GPU): per operand the
instruction, every thread's shared-memory addresses and fragment slots (:class:`OperandPlan`), the MMA's
compute plan, the shared-memory regions, and the CUDA source (:mod:`.codegen`)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from .codegen import generate_source
from .values import HarnessError, NeedsArch, reg_bits, round_up, type_bits, type_kind
from ..algebra.layout import Layout, function_table
from ..algebra import int_tuple as it
from ..config import load_config, loads_config
from ..errors import SymlayoutError
from ..prove.copy.model import build_operand_model
from ..tiled.mma import make_tiled_mma


#: shared-memory region alignment inside the dynamic buffer (the tile sits at ``align`` past it)
REGION_ALIGN = 1024
#: slack after each tile (bytes), so a misaligned or overrunning vector stays inside the buffer
REGION_PAD = 512




@dataclass
class OperandPlan:
    """One copied operand: the model and the device tables derived from it.

    ``addr[t][c][j]``: byte offset (from the tile's base) of vector ``j`` of call
    ``c`` of thread ``t`` -- the address the thread gives the instruction;
    ``slot[t][c][v]``: fragment slot of register-side value ``v`` of that call.
    """
    op: str
    model: Any
    kind: str                 # "ldsm", "stsm", "vld", "vst", "cp_async"
    ptx: str                  # the instruction's PTX (without operands)
    bits: int                 # value bits
    vec_vals: int             # values per smem-side vector
    nvec: int                 # vectors per call
    nreg: int                 # register-side values per call
    ncalls: int
    threads: int
    addr: list
    slot: list
    span: int                 # elements of the smem image (max offset + 1)
    align: int
    words: int                # 32-bit words of the register side of one call
    note: str = ""

    @property
    def vec_bytes(self) -> int:
        return self.vec_vals * self.bits // 8

    @property
    def frag_size(self) -> int:
        return self.model.frag_size

    @property
    def direction(self) -> str:
        return self.model.direction


def _ldst_ptx(instr: str, num: int, trans: bool) -> str:
    """PTX ISA spelling: ``ldmatrix.sync.aligned.m8n8.x2[.trans].shared.b16``."""
    return f"{instr}.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"


def plan_operand(model) -> OperandPlan:
    """Device tables of one operand's copy, read off the model (``calls``, ``addr_table``)."""
    op_kind = getattr(model.atom.op, "kind", "")
    bits = model.value_bits
    if bits not in (8, 16, 32, 64):
        raise HarnessError(f"{model.operand}: value type {model.value_type} ({bits} bits) is not byte-sized")
    vec_vals = max(1, model.reg_bits_smem // bits)
    calls = model.calls
    threads = model.threads
    ncalls = len(calls[0])
    c0 = calls[0][0] if ncalls else None
    nsm = len(c0.smem) if c0 else 0
    nreg = len(c0.reg) if c0 else 0
    if any(len(cs) != ncalls for cs in calls.values()):
        raise HarnessError(f"{model.operand}: threads make different numbers of copy calls")
    if nsm % vec_vals:
        raise HarnessError(f"{model.operand}: a call moves {nsm} values, not a multiple of the {vec_vals}-value vector")
    nvec = nsm // vec_vals
    hw = model.hw
    note = ""
    load = model.direction == "load"
    if op_kind == "ldsm" or op_kind == "stsm":
        if not (op_kind == "ldsm") == load:
            raise HarnessError(f"{model.operand}: {model.atom.op.name} cannot move data in direction {model.direction}")
        kind = op_kind
        if hw.traits is not None:
            raise NeedsArch(f"{model.operand}: {model.atom.op.name} ({hw.ptx}) needs sm_100a; the harness "
                               "emits only the 16-bit ldmatrix/stmatrix forms")
        ptx = _ldst_ptx("ldmatrix" if kind == "ldsm" else "stmatrix", hw.num, hw.trans)
        if nvec != 1:
            raise HarnessError(f"{model.operand}: {kind} call with {nvec} row vectors")
        words = hw.num
    elif op_kind == "cp_async":
        if not load:
            raise HarnessError(f"{model.operand}: cp.async copies global -> shared; it cannot store a fragment")
        kind = "cp_async"
        pm = getattr(model.atom.op, "ptx_model", None) or {}
        ptx = model.atom.op.ptx or f"cp.async.{pm.get('cache', 'ca')}.shared.global"
        note = ("cp.async reads global memory: the tile image lies in global memory with the model's element "
                "offsets (swizzle included) and each vector lands in a 16-byte-aligned shared staging slot of the "
                "thread, from which the fragment slots are filled by the model's slot table")
        words = max(1, nvec * vec_vals * bits // 32)
    elif op_kind in ("universal", "default"):
        kind = "vld" if load else "vst"
        vb = vec_vals * bits
        if vb not in (8, 16, 32, 64, 128):
            raise HarnessError(f"{model.operand}: a {vb}-bit vector has no ld/st.shared form")
        ptx = f"{'ld' if load else 'st'}.shared{_vec_suffix(vb)}"
        if op_kind == "default":
            note = (f"{model.atom.op.name} is CuTe's auto-vectorizing copy; run as the model's "
                    f"{vb}-bit accesses")
        words = max(1, nvec * vb // 32)
    else:
        raise HarnessError(f"{model.operand}: copy atom kind {op_kind!r} ({model.atom.op.name}) is not supported")
    if kind in ("ldsm", "stsm"):
        if nreg * bits != 32 * hw.num:
            raise HarnessError(f"{model.operand}: {nreg} register values of {bits} bits for .x{hw.num}")
    elif nreg != nsm:
        raise HarnessError(f"{model.operand}: vector call with {nsm} smem values but {nreg} register values")
    table = model.addr_table
    eb = bits // 8
    addr, slot = [], []
    for t in range(threads):
        at, st = [], []
        for c in calls[t]:
            at.append([int(table[c.smem[j * vec_vals]]) * eb for j in range(nvec)])
            st.append([int(x) for x in c.reg])
        addr.append(at)
        slot.append(st)
    span = int(max(table)) + 1 if len(table) else 0
    return OperandPlan(op=model.operand, model=model, kind=kind, ptx=ptx, bits=bits, vec_vals=vec_vals,
                       nvec=nvec, nreg=nreg, ncalls=ncalls, threads=threads, addr=addr, slot=slot,
                       span=span, align=int(model.align), words=words, note=note)


def _vec_suffix(vb: int) -> str:
    return {8: ".u8", 16: ".u16", 32: ".u32", 64: ".v2.u32", 128: ".v4.u32"}[vb]


def frag_layout(mma, op: str, shape2):
    """The thread-independent fragment layout ``partition_fragment_X`` of an ``shape2`` tile."""
    return mma.get_slice(0).partition_fragment(op, Layout(tuple(shape2)))


def partition_map(mma, op: str, shape2) -> dict:
    """``{t: [element index of fragment slot q]}`` of an operand held without a copy,
    from the TiledMMA's partition of the ``shape2`` index tile (the same construction
    as the model's ``expected``); index ``e`` is ``(e % rows, e // rows)``."""
    ident = Layout(tuple(shape2))
    thr0 = mma.get_slice(0)
    frag = thr0.partition_fragment(op, ident)
    ft = function_table(frag)
    part0, _o = thr0.partition(op, ident)
    pt = function_table(part0)
    out = {}
    for t in range(mma.size()):
        _s, off = mma.get_slice(t).partition(op, ident)
        off = int(off)
        exp = [0] * frag.size()
        for k in range(frag.size()):
            exp[ft[k]] = off + pt[k]
        out[t] = exp
    return out


@dataclass
class ComputePlan:
    """The compute-mode kernel's shape: problem size, fragment sizes, issue tables."""
    M: int
    N: int
    K: int
    frag: dict                  # op -> fragment size
    frag_bits: dict             # op -> bits of one fragment element (A/B: value type, C: MMA C type)
    direct: dict                # op -> {t: [element index per slot]} for operands without a copy
    issues: list                # [(A slots, B slots, C slots)] in issue order
    atype: str
    btype: str
    ctype: str
    out_type: str               # C copy's value type, or the MMA's C type
    convert: str | None         # conversion of D before the C copy ("f32->f16", ...)
    regs: dict                  # op -> (C register type, count, values per register)
    ksets: list = field(default_factory=list)   # [t] -> the K columns (of one stage) thread t's MMA sums


@dataclass
class ConfigPlan:
    path: str
    name: str
    cfg: Any
    mma: Any
    threads: int
    operands: dict              # op -> OperandPlan (copied operands)
    compute: ComputePlan | None
    compute_skip: str | None
    source: str = ""
    smem_layout: dict = field(default_factory=dict)   # region -> byte offset
    smem_bytes: int = 0
    expect_refuted: tuple = ()
    model_errors: dict = field(default_factory=dict)  # op -> message (model could not be built)


def _shape2(layout) -> tuple:
    s = layout.shape
    return tuple(it.product_each(s)) if it.is_tuple(s) else (s,)


def _regs_of(atom, op: str):
    r = {"A": atom.a_regs, "B": atom.b_regs, "C": atom.c_regs}[op]
    return r


def plan_compute(mma, operands: dict) -> tuple[ComputePlan | None, str | None]:
    """The compute-mode plan, or ``(None, reason)`` when compute mode does not apply."""
    atom = mma.atom
    pm = getattr(atom, "ptx_model", None) or {}
    if pm.get("instr") != "mma" or not atom.ptx or not atom.ptx.startswith("mma.sync"):
        return None, f"MMA atom {atom.name} is not an mma.sync atom"
    M0, N0, K0 = mma.tile_shape()
    shapes = {}
    for op, p in operands.items():
        s = _shape2(p.model.smem)
        if len(s) != 2:
            return None, f"[copy.{op}] smem has rank {len(s)} (stages); compute mode needs a rank-2 tile"
        shapes[op] = s
    M = shapes["A"][0] if "A" in shapes else shapes["C"][0] if "C" in shapes else M0
    N = shapes["B"][0] if "B" in shapes else shapes["C"][1] if "C" in shapes else N0
    K = shapes["A"][1] if "A" in shapes else shapes["B"][1] if "B" in shapes else K0
    want = {"A": (M, K), "B": (N, K), "C": (M, N)}
    for op, s in shapes.items():
        if tuple(s) != want[op]:
            return None, f"operand tiles disagree: [copy.{op}] is {s}, the others make it {want[op]}"
    if M % M0 or N % N0 or K % K0:
        return None, f"problem {M}x{N}x{K} is not a multiple of the TiledMMA tile {M0}x{N0}x{K0}"
    types = {"A": atom.val_type_a, "B": atom.val_type_b, "C": atom.val_type_c}
    for op, t in types.items():
        if type_kind(t) is None:
            return None, f"no integer encoding for the MMA's {op} type {t}"
    for op in ("A", "B"):
        if op in operands and type_bits(operands[op].model.value_type) != type_bits(types[op]):
            return None, (f"[copy.{op}] moves {operands[op].model.value_type} ({operands[op].bits} bits) into an "
                          f"MMA operand of {types[op]} ({type_bits(types[op])} bits): the fragment is not the "
                          f"MMA's (type_agreement)")
    convert = None
    out_type = types["C"]
    if "C" in operands:
        ct = operands["C"].model.value_type
        out_type = ct
        if type_kind(ct) is None:
            return None, f"no integer encoding for the C copy's type {ct}"
        ka, kb = type_kind(types["C"]), type_kind(ct)
        if ka != kb:
            conv = {("f32", "f16"): "f32->f16", ("f32", "bf16"): "f32->bf16", ("f16", "f32"): "f16->f32",
                    ("f32", "tf32"): None, ("s32", "f32"): "s32->f32"}
            if (ka, kb) not in conv:
                return None, f"no conversion from the MMA's C type {types['C']} to the C copy's {ct}"
            convert = conv[(ka, kb)]
    layouts = {}
    direct = {}
    for op, shp in (("A", (M, K)), ("B", (N, K)), ("C", (M, N))):
        # a copied operand's slots are numbered by partition_fragment of its smem layout (the model's);
        # an operand without a copy gets partition_fragment of the plain (rows, cols) tile
        f = (mma.get_slice(0).partition_fragment(op, operands[op].model.smem) if op in operands
             else frag_layout(mma, op, shp))
        if f.rank() != 3:
            return None, f"fragment {op} {f} is not rank 3"
        layouts[op] = f
        if op in operands and operands[op].frag_size != f.size():
            return None, f"[copy.{op}] fragment has {operands[op].frag_size} slots, partition_fragment_{op} {f.size()}"
        if op not in operands:
            direct[op] = partition_map(mma, op, shp)
        elif op == "C":
            direct[op] = {t: list(operands[op].model.expected[t]) for t in range(mma.size())}
    regs = {}
    for op in ("A", "B", "C"):
        r = _regs_of(atom, op)
        rb = reg_bits(r.type)
        vals = layouts[op][0].size()
        vb = type_bits(types[op])
        if not rb or (rb * r.count) != vals * vb:
            return None, f"MMA {op} registers {r.type}[{r.count}] do not hold {vals} values of {vb} bits"
        regs[op] = (r.type, r.count, rb // vb)
    fa, fb, fc = (function_table(layouts[o]) for o in ("A", "B", "C"))
    VA, RM, RK = (layouts["A"][i].size() for i in range(3))
    VB, RN, RK2 = (layouts["B"][i].size() for i in range(3))
    VC, RM2, RN2 = (layouts["C"][i].size() for i in range(3))
    if (RM, RN, RK) != (RM2, RN2, RK2):
        return None, f"fragment rests disagree: A {RM}x{RK}, B {RN}x{RK2}, C {RM2}x{RN2}"
    issues = []
    for k in range(RK):
        for n in range(RN):
            for mm in range(RM):
                m = (RM - 1 - mm) if (n & 1) else mm        # serpentine, as CuTe's gemm
                issues.append(([fa[v + VA * (m + RM * k)] for v in range(VA)],
                               [fb[v + VB * (n + RN * k)] for v in range(VB)],
                               [fc[v + VC * (m + RM * n)] for v in range(VC)]))
    return ComputePlan(M=M, N=N, K=K, frag={o: layouts[o].size() for o in layouts},
                       frag_bits={"A": type_bits(types["A"]), "B": type_bits(types["B"]), "C": type_bits(types["C"])},
                       direct=direct, issues=issues, atype=types["A"], btype=types["B"], ctype=types["C"],
                       out_type=out_type, convert=convert, regs=regs,
                       ksets=k_sets(mma, direct.get("A") or partition_map(mma, "A", (M, K)), M)), None


def k_sets(mma, a_elements: dict, M: int) -> list:
    """``[t]``: the K columns thread ``t``'s accumulators sum over -- those of the A elements its MMA atom
    (the threads with its ``(m, n, k)`` coordinate in the TiledMMA) holds.  A TiledMMA that splits K over
    atoms (``layout = "(2,1,2)"``) leaves each atom a partial sum; CuTe's ``gemm`` reduces nothing."""
    T = mma.size()
    atom_of = [mma.thr_vmnk_ints(t)[1:] for t in range(T)]
    cols: dict = {}
    for t in range(T):
        cols.setdefault(atom_of[t], set()).update(int(e) // M for e in a_elements[t])
    return [tuple(sorted(cols[atom_of[t]])) for t in range(T)]


def partial_products(cpl: ComputePlan, A, B, C) -> list:
    """``[t]``: ``C + A[:, Kt] @ B[:, Kt]^T`` (int64), ``Kt`` the columns of ``cpl.ksets[t]`` in every
    K block of ``A`` (a pipeline's stages repeat the tile's K columns); one matrix per distinct set."""
    import numpy as np
    blocks = A.shape[1] // cpl.K
    memo: dict = {}
    out = []
    for ks in cpl.ksets:
        if ks not in memo:
            cols = np.array([b * cpl.K + k for b in range(blocks) for k in ks], dtype=np.int64)
            memo[ks] = A[:, cols].astype(np.int64) @ B[:, cols].astype(np.int64).T + C
        out.append(memo[ks])
    return out


def accepted_values(parts: list, M: int, pairs: list):
    """``[position][j]`` (float64, NaN-padded): the values the model allows at each output position, from
    its ``(thread, element index)`` pairs -- one pair for a thread's own accumulator; for a shared-memory
    element every thread that stores an element at its address (aliased elements, and the atoms of a
    K split: each stores its own partial sum and the last store wins)."""
    import numpy as np
    vals = [sorted({int(parts[t][e % M, e // M]) for t, e in ps}) for ps in pairs]
    width = max((len(v) for v in vals), default=1)
    out = np.full((len(vals), max(1, width)), np.nan)
    for i, v in enumerate(vals):
        out[i, :len(v)] = v
    return out


def alias_resolved(X, addr_table):
    """``X`` (rows, cols; element ``i`` at ``(i % rows, i // rows)``) with every element that shares its
    shared-memory offset with an earlier one given that one's value: a layout with a stride-0 mode stores
    aliased elements at one address, and what the hardware reads there is one value."""
    import numpy as np
    offs = np.asarray(addr_table, dtype=np.int64)
    _u, first = np.unique(offs, return_index=True)
    canon = first[np.searchsorted(_u, offs)]
    rows = X.shape[0]
    i = np.arange(len(offs))
    out = np.array(X, copy=True)
    out[i % rows, i // rows] = X[canon % rows, canon // rows]
    return out


def store_pairs(direct_c: dict, offsets) -> list:
    """``[i]``: the ``(thread, element)`` pairs whose store lands at element ``i``'s offset (``direct_c``:
    ``{t: [element index of fragment slot q]}``, ``offsets[i]``: element ``i``'s offset)."""
    writers: dict = {}
    for t, els in direct_c.items():
        for e in els:
            writers.setdefault(int(e), []).append(t)
    at: dict = {}
    for i, o in enumerate(offsets):
        at.setdefault(int(o), []).append(i)
    return [[(t, j) for j in at[int(o)] for t in writers.get(j, ())] for o in offsets]


#: a parametric instance larger than this (shared-memory bytes of one tile) is not run
MAX_INSTANCE_TILE_BYTES = 32 * 1024


def instance_text(cfg, values: dict) -> str:
    """The configuration's text with ``[params]`` removed and the symbols of its layout-valued
    keys (``smem``, ``layout``, ``permutation``, the version-2 ``gmem``, ``thr``/``val``,
    ``tv``/``tiler``, ``box``, ``count``) replaced by ``values``."""
    import re
    out, skip = [], False
    for line in cfg.text.splitlines():
        st = line.strip()
        if st.startswith("["):
            skip = st.replace(" ", "").startswith("[params]")
        if skip:
            continue
        if re.match(r"\s*(smem|layout|permutation|gmem|thr|val|tv|tiler|box|count)\s*=", line):
            for k, v in values.items():
                line = re.sub(rf"\b{re.escape(k)}\b", str(int(v)), line)
        out.append(line)
    return "\n".join(out) + "\n"


def load_spec(spec: str):
    """A configuration from ``path`` or ``path@sym=value,sym=value`` (a parametric instance)."""
    if "@" not in spec:
        return load_config(spec)
    path, _at, rest = spec.rpartition("@")
    vals = dict((kv.split("=")[0], int(kv.split("=")[1])) for kv in rest.split(",") if kv)
    base = load_config(path)
    c = loads_config(instance_text(base, vals), spec)
    return c


def instance_values(cfg, max_instances: int = 3) -> list:
    """A few admissible assignments of a parametric configuration's symbols: the
    minimum, the next admissible value and the largest whose tile stays within
    :data:`MAX_INSTANCE_TILE_BYTES` (one symbol varied at a time, the others at
    their minimum)."""
    params = cfg.params
    lo = {k: p.values()[0] if p.count() else None for k, p in params.items()}
    if any(v is None for v in lo.values()):
        return []
    out = [dict(lo)]

    def fits(vals):
        try:
            c = loads_config(instance_text(cfg, vals), "<instance>")
        except Exception:
            return False
        return all(cc.smem.cosize() * type_bits(cc.element_type) // 8 <= MAX_INSTANCE_TILE_BYTES for cc in c.copies.values())

    for k, p in params.items():
        m = p.multiple_of
        first = lo[k]
        cand = [first + m] if first + m <= p.max else []
        hi = p.max - p.max % m if p.max % m else p.max
        while hi > first + m and not fits({**lo, k: hi}):
            hi = max(first + m, (hi // 2) - (hi // 2) % m)
        if hi > first + m:
            cand.append(hi)
        for v in cand:
            d = {**lo, k: v}
            if d not in out and fits(d):
                out.append(d)
    return out[:max_instances * max(1, len(params))]


def plan_config(cfg) -> ConfigPlan:
    """Everything needed to run ``cfg`` (a :class:`~symlayout.config.Config` or a path)."""
    if isinstance(cfg, (str, os.PathLike)):
        cfg = load_spec(str(cfg))
    if cfg.mma is None:
        raise HarnessError("no [mma] table (thread maps have no GPU check)")
    if getattr(cfg, "params", None):
        raise HarnessError("parametric configuration ([params]): give the symbols values to run it")
    if not cfg.copies:
        raise HarnessError("no [copy.*] table: nothing moves through shared memory")
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
    operands, errors, elsewhere = {}, {}, []
    for op, cc in sorted(cfg.copies.items()):
        try:
            m = build_operand_model(mma, None, None, op, cc.atom, cc.route_type, cc.smem, cc.align)
            operands[op] = plan_operand(m)
        except (SymlayoutError, HarnessError) as e:
            errors[op] = str(e)
            elsewhere += [str(e)] if isinstance(e, NeedsArch) else []
    if not operands and errors and len(elsewhere) == len(errors):   # nothing of it runs on this GPU
        raise NeedsArch("; ".join(elsewhere))
    plan = ConfigPlan(path=str(cfg.path), name=cfg.name or "", cfg=cfg, mma=mma, threads=mma.size(),
                      operands=operands, compute=None, compute_skip=None,
                      expect_refuted=tuple(sorted(cfg.expect.refuted_somewhere)), model_errors=errors)
    if errors:
        plan.compute_skip = "the model of " + ", ".join(f"[copy.{o}]" for o in errors) + " could not be built"
    else:
        try:
            plan.compute, plan.compute_skip = plan_compute(mma, operands)
        except (SymlayoutError, HarnessError) as e:
            plan.compute, plan.compute_skip = None, f"compute plan failed: {e}"
    _layout_smem(plan)
    plan.source = generate_source(plan)
    return plan


def _layout_smem(plan: ConfigPlan) -> None:
    """Byte offsets of the regions of the dynamic shared buffer: each tile starts
    ``align`` bytes past a 1024-byte boundary (exactly ``align``-aligned when
    ``align`` < 1024), then the cp.async staging slots."""
    off = 0
    lay = {}
    for op, p in plan.operands.items():
        if p.kind == "cp_async":
            continue
        base = round_up(off, REGION_ALIGN)
        lay[op] = base + (p.align % REGION_ALIGN)
        off = lay[op] + p.span * p.bits // 8 + REGION_PAD
    for op, p in plan.operands.items():
        if p.kind == "cp_async":
            base = round_up(off, REGION_ALIGN)
            lay[f"stage_{op}"] = base
            off = base + plan.threads * round_up(p.nvec * p.vec_bytes, 16)
    plan.smem_layout = lay
    plan.smem_bytes = round_up(max(off, 16), 16)


def global_offset(p: OperandPlan) -> int:
    """Byte offset of a cp.async operand's global tile image inside its allocation
    (``align`` past a 1024-byte boundary, as the shared tiles)."""
    return REGION_ALIGN + p.align % REGION_ALIGN
