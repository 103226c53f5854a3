"""Run a configuration's copies and MMA on the GPU and compare with the route model.

For every configuration with ``[copy.A]`` / ``[copy.B]`` / ``[copy.C]`` this
module generates CUDA C++ with inline PTX for the instructions the atoms name
(``ldmatrix`` / ``stmatrix`` ``.x1/.x2/.x4`` [``.trans``], ``cp.async``, plain
``ld.shared`` / ``st.shared`` vectors for ``UniversalCopy``, and the MMA atom's
``mma.sync``).  Nothing here computes a layout: every thread's shared-memory
addresses and fragment slots come from the prover's model
(:func:`symlayout.prove.model.build_operand_model`: ``calls``, ``addr_table``,
``expected``) and the TiledMMA's own partitions (``get_slice(t).partition``,
``partition_fragment``), passed to the kernels as device tables.

Two checks per configuration:

* **marker mode** (per copied operand): shared memory holds element *ids*
  (the id of element index ``i`` at element offset ``addr_table[i]``; ids are
  digits in base ``2**bits - 1`` of the value type, so 8-bit types take two
  passes when the tile has more than 255 elements and the all-ones pattern is
  free to be the poison).  Loads (A, B): each thread's fragment slots are read
  back and compared slot by slot with ``expected`` -- the prediction that
  ``slot_agreement`` proves.  Stores (C): the fragment slots hold the ids of
  ``expected`` and the shared-memory image must hold id ``i`` at
  ``addr_table[i]`` and poison everywhere else.
* **compute mode**: random small integers (exact in the types) for A, B and C
  go through the copies (or, for an operand without a copy, straight into the
  fragment by the TiledMMA's partition) and through ``mma.sync``, issued for
  every ``(m, n, k)`` rest coordinate of the fragments (k outer, then n, then
  m serpentine, as CuTe's ``gemm``) with the atom's registers taken from the
  fragment slots ``frag(v, rest)``.  D is stored through ``[copy.C]`` (or the
  thread's C partition) and compared exactly with ``A @ B^T + C``.

Outputs are poisoned before each launch, every fragment slot counts how often
a copy wrote it, and every launch is followed by a synchronize and an error
check.  A misaligned ``ldmatrix`` row or ``cp.async`` source raises
``cudaErrorMisalignedAddress`` and poisons the CUDA context, so
:func:`run_paths` runs each configuration that expects a refutation (other
than ``bank_conflicts``) in its own subprocess, after the others, and restarts
the worker process whenever a configuration poisons the context.

GPU side imports: :mod:`symlayout.prove.model`, :mod:`symlayout.config`,
:mod:`symlayout.tiled`, :mod:`symlayout.atoms` (no z3), numpy and CuPy (inside
functions).

>>> from symlayout.config import load_config
>>> plan = plan_config(load_config("proofs/seeds/seed_000_A_x2.toml"))   # doctest: +SKIP
>>> "ldmatrix.sync.aligned.m8n8.x2.shared.b16" in plan.source             # doctest: +SKIP
True
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..atoms.types import canonical_type, value_type_bits, value_type_info

#: properties whose expected refutation cannot fault the GPU (run in the shared worker)
SAFE_REFUTATIONS = frozenset({"bank_conflicts", "coalescing"})
#: shared-memory region alignment inside the dynamic buffer (the tile sits at ``align`` past it)
REGION_ALIGN = 1024
#: slack after each tile (bytes), so a misaligned or overrunning vector stays inside the buffer
REGION_PAD = 512
#: seed of the compute-mode operands
SEED = 20261129


class HarnessError(RuntimeError):
    """A configuration the harness cannot run (the reason is the message)."""


# ---------------------------------------------------------------------------
# value types
# ---------------------------------------------------------------------------

#: the PTX element types (``types.json``'s ``ptx``) the value codec below encodes and decodes
CODEC_KINDS = frozenset({"f16", "bf16", "tf32", "f32", "f64", "s8", "u8", "s16", "u16", "s32", "u32"})


def canonical(t: str) -> str:
    return canonical_type(t)


def type_bits(t: str) -> int:
    return value_type_bits(t)


def type_kind(t: str) -> str | None:
    """``"f16"``, ``"bf16"``, ... for value types the harness can encode, else None.

    >>> type_kind("cute::half_t"), type_kind("float_e4m3_t")
    ('f16', None)
    """
    kind = value_type_info(t)["ptx"]
    return kind if kind in CODEC_KINDS else None


def exact_limit(t: str) -> int:
    """The integers up to this magnitude are exact in ``t`` (``2^(mantissa+1)`` for a float, the largest
    value for an integer; 0 for types the codec does not handle).

    >>> exact_limit("half_t"), exact_limit("bfloat16_t"), exact_limit("int8_t"), exact_limit("float_e4m3_t")
    (2048, 256, 127, 0)
    """
    if type_kind(t) is None:
        return 0
    info = value_type_info(t)
    if info["class"] == "float":
        return 1 << (info["mantissa_bits"] + 1)
    return (1 << (info["bits"] - (info["class"] == "int"))) - 1


def uint_c(bits: int) -> str:
    """C type holding ``bits`` raw bits."""
    return {8: "unsigned char", 16: "unsigned short", 32: "unsigned int", 64: "unsigned long long"}[bits]


def uint_np(bits: int):
    import numpy as np
    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]


def encode(vals, t: str):
    """Bit patterns of integer values ``vals`` in value type ``t`` (numpy uint of its width)."""
    import numpy as np
    k = type_kind(t)
    v = np.asarray(vals)
    if k == "f16":
        return v.astype(np.float16).view(np.uint16)
    if k == "bf16":
        return (v.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    if k in ("tf32", "f32"):
        return v.astype(np.float32).view(np.uint32)
    if k == "f64":
        return v.astype(np.float64).view(np.uint64)
    if k in ("s8", "u8", "s16", "u16", "s32", "u32"):
        bits = int(k[1:])
        return (v.astype(np.int64) & ((1 << bits) - 1)).astype(uint_np(bits))
    raise HarnessError(f"no integer encoding for value type {t!r}")


def decode(bits, t: str):
    """Numeric values (float64 or int64 numpy array) of raw bit patterns in value type ``t``."""
    import numpy as np
    k = type_kind(t)
    b = np.asarray(bits)
    if k == "f16":
        return b.astype(np.uint16).view(np.float16).astype(np.float64)
    if k == "bf16":
        return (b.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if k in ("tf32", "f32"):
        return b.astype(np.uint32).view(np.float32).astype(np.float64)
    if k == "f64":
        return b.astype(np.uint64).view(np.float64)
    if k in ("s8", "s16", "s32"):
        bits = int(k[1:])
        x = b.astype(np.int64) & ((1 << bits) - 1)
        return np.where(x >= (1 << (bits - 1)), x - (1 << bits), x)
    if k in ("u8", "u16", "u32"):
        return b.astype(np.int64)
    raise HarnessError(f"no decoding for value type {t!r}")


def compute_poison(t: str) -> int:
    """Poison bits for compute-mode outputs: a NaN for floating types, the largest
    positive value for integers (never a result of the small products used)."""
    k = type_kind(t)
    bits = type_bits(t)
    if k and k[0] in "su":
        return (1 << (bits - 1)) - 1
    return (1 << bits) - 1


# ---------------------------------------------------------------------------
# the plan: tables from the model (pure Python; no GPU)
# ---------------------------------------------------------------------------


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
    from ..algebra.layout import Layout
    return mma.get_slice(0).partition_fragment(op, Layout(tuple(shape2)))


def partition_map(mma, op: str, shape2) -> dict:
    """``{t: [element index of fragment slot q]}`` of an operand held without a copy,
    from the TiledMMA's partition of the ``shape2`` index tile (the same construction
    as the model's ``expected``); index ``e`` is ``(e % rows, e // rows)``."""
    from ..algebra.layout import Layout, function_table
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
    from ..algebra import int_tuple as it
    s = layout.shape
    return tuple(it.product_each(s)) if it.is_tuple(s) else (s,)


def _regs_of(atom, op: str):
    r = {"A": atom.a_regs, "B": atom.b_regs, "C": atom.c_regs}[op]
    return r


def _reg_bits(rtype: str) -> int:
    return {"uint32_t": 32, "float": 32, "int32_t": 32, "double": 64, "uint64_t": 64}.get(rtype, 0)


def plan_compute(mma, operands: dict) -> tuple[ComputePlan | None, str | None]:
    """The compute-mode plan, or ``(None, reason)`` when compute mode does not apply."""
    from ..algebra.layout import function_table
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
        rb = _reg_bits(r.type)
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
                       out_type=out_type, convert=convert, regs=regs), None


#: a parametric instance larger than this (shared-memory bytes of one tile) is not run
MAX_INSTANCE_TILE_BYTES = 32 * 1024


def instance_text(cfg, values: dict) -> str:
    """The configuration's text with ``[params]`` removed and the symbols of its
    ``smem``/``layout``/``permutation`` strings replaced by ``values``."""
    import re
    out, skip = [], False
    for line in cfg.text.splitlines():
        st = line.strip()
        if st.startswith("["):
            skip = st.replace(" ", "").startswith("[params]")
        if skip:
            continue
        if re.match(r"\s*(smem|layout|permutation)\s*=", line):
            for k, v in values.items():
                line = re.sub(rf"\b{re.escape(k)}\b", str(int(v)), line)
        out.append(line)
    return "\n".join(out) + "\n"


def load_spec(spec: str):
    """A configuration from ``path`` or ``path@sym=value,sym=value`` (a parametric instance)."""
    from ..config import load_config, loads_config
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
    from ..config import loads_config
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
        return all(cc.smem.cosize() * type_bits(cc.type) // 8 <= MAX_INSTANCE_TILE_BYTES for cc in c.copies.values())

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
    from ..errors import SymlayoutError
    from ..prove.model import build_operand_model
    from ..tiled.mma import make_tiled_mma
    if isinstance(cfg, (str, os.PathLike)):
        cfg = load_spec(str(cfg))
    if cfg.mma is None:
        raise HarnessError("no [mma] table (thread maps have no GPU check)")
    if getattr(cfg, "params", None):
        raise HarnessError("parametric configuration ([params]): give the symbols values to run it")
    if not cfg.copies:
        raise HarnessError("no [copy.*] table: nothing moves through shared memory")
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
    operands, errors = {}, {}
    for op, cc in sorted(cfg.copies.items()):
        try:
            m = build_operand_model(mma, None, None, op, cc.atom, cc.type, cc.smem, cc.align)
            operands[op] = plan_operand(m)
        except (SymlayoutError, HarnessError) as e:
            errors[op] = str(e)
    plan = ConfigPlan(path=str(cfg.path), name=cfg.name or "", cfg=cfg, mma=mma, threads=mma.size(),
                      operands=operands, compute=None, compute_skip=None,
                      expect_refuted=tuple(sorted(cfg.expect.refuted)), model_errors=errors)
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
        base = _round_up(off, REGION_ALIGN)
        lay[op] = base + (p.align % REGION_ALIGN)
        off = lay[op] + p.span * p.bits // 8 + REGION_PAD
    for op, p in plan.operands.items():
        if p.kind == "cp_async":
            base = _round_up(off, REGION_ALIGN)
            lay[f"stage_{op}"] = base
            off = base + plan.threads * _round_up(p.nvec * p.vec_bytes, 16)
    plan.smem_layout = lay
    plan.smem_bytes = _round_up(max(off, 16), 16)


def _round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


def global_offset(p: OperandPlan) -> int:
    """Byte offset of a cp.async operand's global tile image inside its allocation
    (``align`` past a 1024-byte boundary, as the shared tiles)."""
    return REGION_ALIGN + p.align % REGION_ALIGN


# ---------------------------------------------------------------------------
# CUDA source generation
# ---------------------------------------------------------------------------

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


def _copy_function(plan: ConfigPlan, p: OperandPlan) -> str:
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
        slot_bytes = _round_up(p.nvec * vbytes, 16)
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


def _marker_kernel(plan: ConfigPlan, p: OperandPlan) -> str:
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


def _compute_kernel(plan: ConfigPlan) -> str:
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
    # issue tables
    NI = len(cpl.issues)
    VA, VB, VC = (len(cpl.issues[0][i]) for i in range(3))
    tabs = []
    for name, idx, v in (("IA", 0, VA), ("IB", 1, VB), ("IC", 2, VC)):
        flat = ", ".join(str(x) for iss in cpl.issues for x in iss[idx])
        tabs.append(f"__device__ const short {name}[{NI * v}] = {{{flat}}};")
    # registers
    (_ta, na, _pa), (_tb, nb, _pb), (tc, nc, _pc) = cpl.regs["A"], cpl.regs["B"], cpl.regs["C"]
    body = ["#pragma unroll 1", f"  for (int i = 0; i < {NI}; ++i) {{"]
    cons = {}
    for op, (rt, n, per), V in (("A", cpl.regs["A"], VA), ("B", cpl.regs["B"], VB), ("C", cpl.regs["C"], VC)):
        decl, letter = _c_reg_decl(rt)
        cons[op] = letter
        bits = cpl.frag_bits[op]
        tab = "I" + op
        body.append(f"    u32 w{op}[{max(1, n * _reg_bits(rt) // 32)}];")
        body.append(f"    for (int w = 0; w < {max(1, n * _reg_bits(rt) // 32)}; ++w) w{op}[w] = 0u;")
        body.append(f"    for (int v = 0; v < {V}; ++v) sl_put(w{op}, v, {bits}, (u64)f{op}[{tab}[i * {V} + v]]);")
        body.append(f"    {decl} r{op}[{n}];")
        if decl == "u32":
            body.append(f"    for (int j = 0; j < {n}; ++j) r{op}[j] = w{op}[j];")
        elif decl == "float":
            body.append(f"    for (int j = 0; j < {n}; ++j) r{op}[j] = __uint_as_float(w{op}[j]);")
        else:
            body.append(f"    for (int j = 0; j < {n}; ++j) r{op}[j] = __longlong_as_double((long long)((u64)w{op}[2 * j] | ((u64)w{op}[2 * j + 1] << 32)));")
    declc, letc = _c_reg_decl(tc)
    body.append(f"    {declc} rD[{nc}];")
    idx = 0
    groups = []
    for n in (nc, na, nb, nc):
        groups.append(_regs_list(n, idx))
        idx += n
    outs = ", ".join(f'"={letc}"(rD[{j}])' for j in range(nc))
    ins = ", ".join([f'"{cons["A"]}"(rA[{j}])' for j in range(na)] + [f'"{cons["B"]}"(rB[{j}])' for j in range(nb)]
                    + [f'"{cons["C"]}"(rC[{j}])' for j in range(nc)])
    body.append(f'    asm volatile("{atom.ptx} {groups[0]}, {groups[1]}, {groups[2]}, {groups[3]};\\n" : {outs} : {ins});')
    # unpack D into the C fragment
    wn = max(1, nc * _reg_bits(tc) // 32)
    body.append(f"    u32 wD[{wn}];")
    if declc == "u32":
        body.append(f"    for (int j = 0; j < {nc}; ++j) wD[j] = rD[j];")
    elif declc == "float":
        body.append(f"    for (int j = 0; j < {nc}; ++j) wD[j] = __float_as_uint(rD[j]);")
    else:
        body.append(f"    for (int j = 0; j < {nc}; ++j) {{ u64 x = (u64)__double_as_longlong(rD[j]); wD[2 * j] = (u32)x; wD[2 * j + 1] = (u32)(x >> 32); }}")
    body.append(f"    for (int v = 0; v < {VC}; ++v) fC[IC[i * {VC} + v]] = ({E['C']})sl_get(wD, v, {cpl.frag_bits['C']});")
    body.append("  }")
    lines += body
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


def generate_source(plan: ConfigPlan) -> str:
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


# ---------------------------------------------------------------------------
# marker ids
# ---------------------------------------------------------------------------


def id_passes(n: int, bits: int) -> int:
    """Passes needed to name ``n`` elements with digits in base ``2**bits - 1``.

    >>> id_passes(512, 16), id_passes(512, 8), id_passes(255, 8)
    (1, 2, 1)
    """
    base = (1 << min(bits, 32)) - 1
    p, cap = 1, base
    while cap < n:
        p += 1
        cap *= base
    return p


def id_digit(i, p: int, bits: int):
    base = (1 << min(bits, 32)) - 1
    return (i // base ** p) % base


# ---------------------------------------------------------------------------
# GPU execution
# ---------------------------------------------------------------------------


def _dev(cp, arr, dtype):
    import numpy as np
    return cp.asarray(np.ascontiguousarray(np.asarray(arr, dtype=dtype)))


def _image(p: OperandPlan, values_by_index, poison: int):
    """The tile image: ``img[addr_table[i]] = values_by_index[i]``, poison elsewhere."""
    import numpy as np
    img = np.full(p.span, poison, dtype=uint_np(p.bits))
    img[np.asarray(p.model.addr_table, dtype=np.int64)] = values_by_index
    return img


def _gtile(cp, p: OperandPlan, img):
    """A cp.async operand's global image, ``global_offset(p)`` bytes into its allocation."""
    import numpy as np
    off = global_offset(p)
    raw = np.zeros(off + img.nbytes + REGION_PAD, dtype=np.uint8)
    raw[off:off + img.nbytes] = img.view(np.uint8)
    d = cp.asarray(raw)
    return d, d[off:]


class _Runner:
    def __init__(self, plan: ConfigPlan, cuda, cp):
        self.plan, self.cuda, self.cp = plan, cuda, cp
        self.module = cuda.compile_module(plan.source, name=os.path.basename(plan.path) + ".cu")
        self.launches = 0
        self._fns = {}

    def launch(self, kernel: str, args: tuple):
        fn = self.module.function(kernel)
        if self.plan.smem_bytes > 48 * 1024 and kernel not in self._fns:
            try:
                fn.max_dynamic_shared_size_bytes = self.plan.smem_bytes
            except Exception as e:  # pragma: no cover
                raise self.cuda.CudaError(f"cannot allow {self.plan.smem_bytes} B of dynamic shared memory: {e}")
            self._fns[kernel] = fn
        self.launches += 1
        self.cuda.launch(self.module, kernel, 1, self.plan.threads, args, shared_mem=self.plan.smem_bytes)

    def tables(self, p: OperandPlan):
        import numpy as np
        return (_dev(self.cp, p.addr, np.int32).ravel(), _dev(self.cp, p.slot, np.int32).ravel())


def marker_images(p: OperandPlan):
    """Per id pass: the load tile image (A/B) or the fragment table ``[T][FS]`` (C), raw bits."""
    import numpy as np
    m = p.model
    n = len(m.addr_table)
    U = uint_np(p.bits)
    poison = (1 << p.bits) - 1
    out = []
    for q in range(id_passes(n, p.bits)):
        if p.direction == "load":
            out.append(_image(p, id_digit(np.arange(n, dtype=np.int64), q, p.bits).astype(U), poison))
        else:
            out.append(np.array([[id_digit(m.expected[t][s], q, p.bits) for s in range(p.frag_size)]
                                 for t in range(p.threads)], dtype=U))
    return out


def run_marker(r: _Runner, p: OperandPlan) -> dict:
    """Marker mode for one copied operand on the GPU (see the module docstring)."""
    import numpy as np
    cp = r.cp
    T, fs = p.threads, p.frag_size
    U = uint_np(p.bits)
    poison = (1 << p.bits) - 1
    taddr, tslot = r.tables(p)
    outs, cnts = [], []
    for data in marker_images(p):
        d = _dev(cp, data, U).ravel()
        g = _gtile(cp, p, data)[1] if p.kind == "cp_async" else cp.zeros(16, dtype=cp.uint8)
        cnt = cp.full(T * fs, -7, dtype=cp.int32)
        if p.direction == "load":
            out = cp.full(T * fs, poison, dtype=U)
            r.launch(f"marker_{p.op}", (d, np.int32(p.span), taddr, tslot, out, cnt, out, U(poison), g))
            outs.append(cp.asnumpy(out).reshape(T, fs))
        else:
            out = cp.full(p.span, 0, dtype=U)       # the kernel poisons the shared tile itself
            r.launch(f"marker_{p.op}", (d, np.int32(p.span), taddr, tslot, d, cnt, out, U(poison), g))
            outs.append(cp.asnumpy(out))
        cnts.append(cp.asnumpy(cnt).reshape(T, fs))
    return marker_check(p, outs, cnts)


def marker_check(p: OperandPlan, outs: list, cnts: list) -> dict:
    """Compare marker-mode outputs (one per id pass) with the model.

    Loads: ``outs[q]`` is ``[T][FS]`` fragment bits, compared slot by slot with
    ``expected``; stores: ``outs[q]`` is the shared tile image, which must hold
    element ``i``'s id at ``addr_table[i]`` and poison elsewhere.  ``cnts[q]`` is
    how many times the copies wrote (loads) or read (stores) each fragment slot.
    """
    import numpy as np
    m = p.model
    n = len(m.addr_table)
    T, fs = p.threads, p.frag_size
    poison = (1 << p.bits) - 1
    base = (1 << min(p.bits, 32)) - 1
    res: dict[str, Any] = {"operand": p.op, "instruction": p.ptx, "kind": p.kind, "passes": len(outs),
                           "calls_per_thread": p.ncalls}
    if p.note:
        res["note"] = p.note
    cnt_all = cnts[0]
    for c in cnts[1:]:
        if not np.array_equal(c, cnt_all):
            res["problem"] = "the copies' per-slot counts differ between id passes"
    idx = np.arange(n, dtype=np.int64)
    if p.direction == "load":
        got = np.zeros((T, fs), dtype=np.int64)
        unwritten = np.zeros((T, fs), dtype=bool)
        for q, o in enumerate(outs):
            o = np.asarray(o).astype(np.int64).reshape(T, fs)
            unwritten |= (o == poison)
            got += np.where(o == poison, 0, o) * base ** q
        exp = np.array([m.expected[t] for t in range(T)], dtype=np.int64)
        bad = (got != exp) | unwritten
        res["slots_checked"] = int(bad.size)
        res["unwritten"] = int(unwritten.sum())
        res["copy_writes"] = {str(k): int(v) for k, v in zip(*np.unique(cnt_all, return_counts=True))}
        res["mismatches"] = int(bad.sum())
        ex = []
        for t, s in zip(*np.nonzero(bad)):
            if len(ex) >= 8:
                break
            g_ = int(got[t, s])
            ok_ = 0 <= g_ < n and not unwritten[t, s]
            ex.append({"thread": int(t), "slot": int(s), "model": m.name(int(exp[t, s])),
                       "gpu": ("unwritten (poison)" if unwritten[t, s] else m.name(g_) if ok_ else f"id {g_} (not an element)"),
                       "model_offset": int(m.addr_table[int(exp[t, s])]),
                       "gpu_offset": int(m.addr_table[g_]) if ok_ else None})
        res["examples"] = ex
        if bad.any():
            res["masked"] = _masked_summary(p, got, unwritten, bad)
        once = bool((cnt_all == 1).all())
        res["status"] = "pass" if not bad.any() and once and "problem" not in res else "fail"
        if not bad.any() and not once:
            res["problem"] = "some fragment slot was written by the copies a number of times other than once"
    else:
        span = len(outs[0])
        got_img = np.zeros(span, dtype=np.int64)
        unwritten = np.zeros(span, dtype=bool)
        for q, o in enumerate(outs):
            o = np.asarray(o).astype(np.int64)
            unwritten |= (o == poison)
            got_img += np.where(o == poison, 0, o) * base ** q
        offs = np.asarray(m.addr_table, dtype=np.int64)
        gv = got_img[offs]
        uw = unwritten[offs]
        bad = (gv != idx) | uw
        stray = ~unwritten
        stray[offs] = False
        res["slots_checked"] = int(n)
        res["unwritten"] = int(uw.sum())
        res["stray_writes"] = int(stray.sum())
        res["copy_reads"] = {str(k): int(v) for k, v in zip(*np.unique(cnt_all, return_counts=True))}
        res["mismatches"] = int(bad.sum())
        ex = []
        for i in np.nonzero(bad)[0][:8]:
            g_ = int(gv[i])
            ex.append({"element": m.name(int(i)), "offset": int(offs[i]),
                       "gpu": "unwritten (poison)" if uw[i] else (m.name(g_) if 0 <= g_ < n else f"id {g_}")})
        res["examples"] = ex
        ok = not bad.any() and not stray.any() and bool((cnt_all == 1).all()) and "problem" not in res
        res["status"] = "pass" if ok else "fail"
    return res


def _masked_summary(p: OperandPlan, got, unwritten, bad) -> dict:
    """For mismatching slots: how far (bytes) the element that arrived lies from the
    model's, and whether that is the model's address with the vector's low address
    bits cleared (a silently masked misalignment)."""
    import numpy as np
    from collections import Counter
    m = p.model
    n = len(m.addr_table)
    eb = p.bits // 8
    deltas = Counter()
    masked = 0
    total = 0
    slot_call = {}
    for c, call in enumerate(m.calls[0]):
        for v, s in enumerate(call.reg):
            slot_call[s] = (c, v)
    for t, s in zip(*np.nonzero(bad)):
        if unwritten[t, s]:
            continue
        g = int(got[t, s])
        if not (0 <= g < n):
            continue
        e = int(m.expected[int(t)][int(s)])
        total += 1
        deltas[(int(m.addr_table[g]) - int(m.addr_table[e])) * eb] += 1
        cv = slot_call.get(int(s))
        if cv is None:
            continue
        c, v = cv
        try:
            if p.kind in ("ldsm", "stsm"):
                lane = int(t) % 32
                plane, ev = m.hw.provider(lane, v, m.value_bits, m.reg_bits_frag)
                tp = int(t) - lane + plane
                a = p.addr[tp][c][0]
            else:
                ev = v
                a = p.addr[int(t)][c][v // p.vec_vals]
                ev = v % p.vec_vals
            want = ((a // p.vec_bytes) * p.vec_bytes + ev * eb)
            if want % eb == 0 and int(m.addr_table[g]) * eb == want:
                masked += 1
        except Exception:
            pass
    return {"compared": total, "byte_deltas": {str(k): v for k, v in sorted(deltas.items())[:12]},
            "explained_by_masked_address": masked}


def _rand(rng, shape, t: str, r: int):
    k = type_kind(t)
    lo = 0 if k and k.startswith("u") else -r
    return rng.integers(lo, r + 1, size=shape)


def compute_inputs(plan: ConfigPlan) -> dict:
    """Random small integers A (M,K), B (N,K), C (M,N), exact in every type on the
    way (inputs, accumulator, the C copy's type), and ``ref = A @ B^T + C``."""
    import numpy as np
    cpl = plan.compute
    M, N, K = cpl.M, cpl.N, cpl.K
    limit = min(exact_limit(cpl.ctype), exact_limit(cpl.out_type))
    cr = 2 if limit > 64 else 0
    rv = max(1, min(3, int(math.isqrt(max(1, (limit - cr) // max(1, K))))))
    rng = np.random.default_rng(SEED)
    A = _rand(rng, (M, K), cpl.atype, rv)
    B = _rand(rng, (N, K), cpl.btype, rv)
    C0 = _rand(rng, (M, N), cpl.ctype, cr)
    ref = A.astype(np.int64) @ B.astype(np.int64).T + C0
    return {"A": A, "B": B, "C": C0, "ref": ref, "rv": rv, "cr": cr}


def compute_operand_data(plan: ConfigPlan, inp: dict) -> dict:
    """Host data of the compute kernel: for a copied A/B the tile image (raw bits),
    for a direct operand (and C's initial value) the ``[T][FS]`` fragment bits."""
    import numpy as np
    cpl = plan.compute
    T = plan.threads
    types = {"A": cpl.atype, "B": cpl.btype, "C": cpl.ctype}
    out = {}
    for op in ("A", "B", "C"):
        X = inp[op]
        rows = X.shape[0]
        if op in plan.operands and op != "C":
            p = plan.operands[op]
            n = len(p.model.addr_table)
            idx = np.arange(n)
            out[op] = _image(p, encode(X[idx % rows, idx // rows], types[op]), compute_poison(types[op]))
        else:
            dm = cpl.direct[op]
            fr = np.array([[X[e % rows, e // rows] for e in dm[t]] for t in range(T)])
            out[op] = encode(fr, types[op]).astype(uint_np(cpl.frag_bits[op]))
    return out


def run_compute(r: _Runner) -> dict:
    """Compute mode on the GPU (see the module docstring)."""
    import numpy as np
    plan, cp = r.plan, r.cp
    cpl = plan.compute
    T = plan.threads
    inp = compute_inputs(plan)
    data = compute_operand_data(plan, inp)
    args = []
    for op in ("A", "B"):
        if op in plan.operands:
            p = plan.operands[op]
            dimg = _dev(cp, data[op], uint_np(p.bits))
            taddr, tslot = r.tables(p)
            g = _gtile(cp, p, data[op])[1] if p.kind == "cp_async" else cp.zeros(16, dtype=cp.uint8)
            args += [dimg, np.int32(p.span), taddr, tslot, g]
        else:
            args.append(_dev(cp, data[op], uint_np(cpl.frag_bits[op])).ravel())
    args.append(_dev(cp, data["C"], uint_np(cpl.frag_bits["C"])).ravel())
    fsc = cpl.frag["C"]
    cntc = None
    if "C" in plan.operands:
        p = plan.operands["C"]
        taddr, tslot = r.tables(p)
        pz = compute_poison(p.model.value_type)
        out = cp.full(p.span, (pz + 1) // 2, dtype=uint_np(p.bits))     # the kernel poisons the tile itself
        cntc = cp.full(T * fsc, -7, dtype=cp.int32)
        args += [taddr, tslot, np.int32(p.span), out, cntc, uint_np(p.bits)(pz)]
    else:
        pz = compute_poison(cpl.ctype)
        out = cp.full(T * fsc, pz, dtype=uint_np(cpl.frag_bits["C"]))
        args.append(out)
    fab = cpl.frag["A"] + cpl.frag["B"]
    cnt = cp.full(T * fab, -7, dtype=cp.int32)
    args.append(cnt)
    r.launch("compute", tuple(args))
    return compute_check(plan, inp, cp.asnumpy(out), cp.asnumpy(cnt).reshape(T, fab),
                         None if cntc is None else cp.asnumpy(cntc))


def compute_check(plan: ConfigPlan, inp: dict, out, cnt_ab, cnt_c=None) -> dict:
    """Compare the compute kernel's output (the C tile image, or ``[T][FS]`` C
    fragment bits without ``[copy.C]``) exactly with ``inp["ref"]``."""
    import numpy as np
    cpl = plan.compute
    M = cpl.M
    T = plan.threads
    fsc = cpl.frag["C"]
    ref = inp["ref"]
    res: dict[str, Any] = {"M": cpl.M, "N": cpl.N, "K": cpl.K, "issues_per_thread": len(cpl.issues),
                           "mma": plan.mma.atom.ptx, "value_range": inp["rv"], "c_range": inp["cr"],
                           "order": "k outer, then n, m serpentine (CuTe gemm)"}
    res["fragment_writes"] = {str(k): int(v) for k, v in zip(*np.unique(cnt_ab, return_counts=True))}
    o = np.asarray(out)
    if "C" in plan.operands:
        p = plan.operands["C"]
        pz = compute_poison(p.model.value_type)
        offs = np.asarray(p.model.addr_table, dtype=np.int64)
        n = len(offs)
        raw = o[offs].astype(np.int64)
        unw = raw == pz
        vals = decode(raw, p.model.value_type)
        idx = np.arange(n)
        exp = ref[idx % M, idx // M]
        names = [p.model.name(int(i)) for i in range(n)]
        res["stored_through"] = f"[copy.C] {p.ptx}" + (f" after {cpl.convert}" if cpl.convert else "")
    else:
        pz = compute_poison(cpl.ctype)
        dmc = cpl.direct["C"]
        raw = o.reshape(T, fsc).ravel().astype(np.int64)
        unw = raw == pz
        vals = decode(raw, cpl.ctype)
        els = np.array([e for t in range(T) for e in dmc[t]])
        exp = ref[els % M, els // M]
        names = [f"C({e % M},{e // M}) t{t} slot{s}" for t in range(T) for s, e in enumerate(dmc[t])]
        res["stored_through"] = "the thread's C partition (no [copy.C])"
    vals = np.asarray(vals, dtype=np.float64)
    bad = unw | ~np.isfinite(vals) | (vals != exp)
    res["checked"] = int(bad.size)
    res["unwritten"] = int(unw.sum())
    res["mismatches"] = int(bad.sum())
    res["examples"] = [{"at": names[i], "gpu": ("unwritten (poison)" if unw[i] else float(vals[i])),
                        "numpy": int(exp[i])} for i in np.nonzero(bad)[0][:8]]
    ok = not bad.any() and bool((np.asarray(cnt_ab) == 1).all())
    if cnt_c is not None:
        res["c_copy_reads"] = {str(k): int(v) for k, v in zip(*np.unique(cnt_c, return_counts=True))}
        ok = ok and bool((np.asarray(cnt_c) == 1).all())
    res["status"] = "pass" if ok else "fail"
    return res


_STICKY = ("misaligned", "illegal", "launch failure", "unspecified launch", "700", "716", "719",
           "hardware stack", "illegal instruction", "exception", "poison")


def is_sticky(msg: str) -> bool:
    """Whether a CUDA error message names an error that poisons the context."""
    low = msg.lower()
    return any(s in low for s in _STICKY)


def run_config(cfg_or_path) -> dict:
    """Run one configuration on the GPU (marker per copied operand, then compute)."""
    from . import cuda
    t0 = time.perf_counter()
    path = str(getattr(cfg_or_path, "path", cfg_or_path))
    res: dict[str, Any] = {"path": path, "marker": {}, "compute": None}
    try:
        plan = plan_config(cfg_or_path)
    except Exception as e:
        res.update(status="skipped", reason=f"{type(e).__name__}: {e}", seconds=time.perf_counter() - t0)
        return res
    res.update(name=plan.name, expect_refuted=list(plan.expect_refuted), threads=plan.threads,
               mma=plan.mma.atom.name, smem_bytes=plan.smem_bytes, smem_offsets=plan.smem_layout,
               copies={op: {"atom": p.model.atom.op.name, "type": p.model.value_type, "smem": str(p.model.smem),
                            "align": p.align, "instruction": p.ptx} for op, p in plan.operands.items()})
    if plan.model_errors:
        res["model_errors"] = plan.model_errors
    if plan.compute_skip:
        res["compute_skip"] = plan.compute_skip
    cp = cuda.load_cupy()
    stage = "compile"
    r = None
    try:
        tc = time.perf_counter()
        r = _Runner(plan, cuda, cp)
        res["compile_seconds"] = round(time.perf_counter() - tc, 3)
        res["compile"] = r.module.how
        for op, p in plan.operands.items():
            stage = f"marker {op}"
            res["marker"][op] = run_marker(r, p)
        if plan.compute is not None:
            stage = "compute"
            res["compute"] = run_compute(r)
    except cuda.CudaError as e:
        msg = " ".join(str(e).split())
        res["error"] = {"stage": stage, "message": msg[:2000], "sticky": is_sticky(msg)}
    except HarnessError as e:
        res["error"] = {"stage": stage, "message": str(e), "sticky": False}
    except Exception as e:       # e.g. a CuPy error raised outside cuda.launch: report it, never lose the run
        msg = f"{type(e).__name__}: " + " ".join(str(e).split())
        res["error"] = {"stage": stage, "message": msg[:2000], "sticky": is_sticky(msg)}
    res["launches"] = r.launches if r is not None else 0
    res["status"] = _status(res, plan)
    res["seconds"] = round(time.perf_counter() - t0, 3)
    return res


def _status(res: dict, plan: ConfigPlan) -> str:
    if res.get("error"):
        return "error"
    parts = list(res["marker"].values()) + ([res["compute"]] if res.get("compute") else [])
    if plan.model_errors:
        return "partial" if parts and all(p["status"] == "pass" for p in parts) else "fail"
    if any(p["status"] != "pass" for p in parts):
        return "fail"
    return "pass" if res.get("compute") else "pass (marker only)"


# ---------------------------------------------------------------------------
# process isolation
# ---------------------------------------------------------------------------


def isolated(cfg) -> bool:
    """Whether a configuration runs in its own process: it expects a refutation
    that can fault the GPU (anything but ``bank_conflicts``/``coalescing``)."""
    return bool(set(cfg.expect.refuted) - SAFE_REFUTATIONS)


def _child_main(paths: Sequence[str]) -> int:
    """Worker: print ``INFO``/``RESULT`` JSON lines; exit 3 once the context is poisoned."""
    from . import cuda
    try:
        info = cuda.device_info()
    except Exception as e:
        info = {"error": str(e)}
    print("INFO " + json.dumps(info, default=str), flush=True)
    for path in paths:
        print("START " + json.dumps(path), flush=True)
        res = run_config(path)
        print("RESULT " + json.dumps(res, default=str), flush=True)
        if res.get("error", {}).get("sticky"):
            return 3
    return 0


def _spawn(paths: list, timeout: float) -> tuple[list, dict | None, str, int]:
    cmd = [sys.executable, "-m", "symlayout.harness.config_run", "--child", *paths]
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        out, err, rc = cp.stdout, cp.stderr, cp.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = (e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")) + "\n(timed out)"
        rc = -9
    results, info = [], None
    for line in out.splitlines():
        if line.startswith("RESULT "):
            results.append(json.loads(line[7:]))
        elif line.startswith("INFO "):
            info = json.loads(line[5:])
    return results, info, err, rc


def _run_group(paths: list, where: str, timeout: float) -> tuple[list, dict | None]:
    """Run ``paths`` in one worker process, starting a fresh one after a
    context-poisoning error or a crash (the configuration that caused it is
    recorded and not retried)."""
    todo, results, info = list(paths), [], None
    while todo:
        got, inf, err, rc = _spawn(todo, timeout)
        info = info or inf
        for r in got:
            r["process"] = where
        results += got
        done = {r["path"] for r in got}
        rest = [p for p in todo if p not in done]
        if rest and rc not in (0, 3):
            results.append({"path": rest[0], "status": "error", "marker": {}, "process": where,
                            "error": {"stage": "worker", "message": f"worker exited {rc}: "
                                      + " ".join(err.split())[-1500:], "sticky": True}})
            rest = rest[1:]
        todo = rest
    return results, info


def run_paths(paths: Sequence[str], *, isolate: bool = True, jobs: int | None = None, timeout: float = 300.0,
              log=None) -> dict:
    """Run every configuration under ``paths`` and return ``{"meta": ..., "results": [...]}``.

    The ordinary configurations are split over ``jobs`` worker processes that
    run at once (each restarted after a context-poisoning error); then, last,
    every configuration expecting a fault-prone refutation (and every instance
    of such a parametric family) runs in a process of its own -- those processes
    also run concurrently: a CUDA fault poisons only its own process's context.
    Parametric configurations run at a few admissible instances
    (:func:`instance_values`), named ``path@sym=value``.
    """
    from concurrent.futures import ThreadPoolExecutor
    from ..config import find_config_files, load_config
    t0 = time.perf_counter()
    files = find_config_files(list(paths))
    normal, alone, results = [], [], []
    for f in files:
        try:
            cfg = load_config(f)
        except Exception as e:
            results.append({"path": f, "status": "skipped", "reason": f"cannot load: {e}", "marker": {}})
            continue
        if cfg.mma is None or not cfg.copies:
            why = ("thread map: no GPU check" if cfg.mma is None else
                   "no [copy.*] table: TiledMMA only (coverage is the prover's)")
            results.append({"path": f, "name": cfg.name, "status": "skipped", "reason": why, "marker": {},
                            "expect_refuted": sorted(cfg.expect.refuted)})
            continue
        specs = [f]
        if cfg.params:
            specs = [f + "@" + ",".join(f"{k}={v}" for k, v in d.items()) for d in instance_values(cfg)]
            if not specs:
                results.append({"path": f, "name": cfg.name, "status": "skipped", "marker": {},
                                "reason": "parametric: no admissible instance", "expect_refuted": sorted(cfg.expect.refuted)})
        for sp in specs:
            (alone if (isolate and isolated(cfg)) else normal).append(sp)
    jobs = max(1, jobs or min(8, os.cpu_count() or 1))
    # balance the shared workers by tile size (compile and launch time grow with it)
    def cost(sp):
        try:
            return os.path.getsize(sp.split("@")[0]) + 1000 * len(sp)
        except OSError:
            return 0
    chunks = [[] for _ in range(min(jobs, max(1, len(normal))))]
    for i, sp in enumerate(sorted(normal, key=cost, reverse=True)):
        chunks[i % len(chunks)].append(sp)
    info = None
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for got, inf in ex.map(lambda c: _run_group(c, "shared worker", timeout), [c for c in chunks if c]):
            results += got
            info = info or inf
        if log:
            log(f"shared workers done: {len(results)} results ({time.perf_counter() - t0:.1f} s)")
        for got, inf in ex.map(lambda sp: _run_group([sp], "own process", timeout), alone):
            results += got
            info = info or inf
    if log:
        log(f"all done: {len(results)} results ({time.perf_counter() - t0:.1f} s)")
    order = {f: i for i, f in enumerate(files)}
    results.sort(key=lambda r: (r.get("process") == "own process", order.get(r["path"].split("@")[0], 1 << 30),
                                r["path"]))
    return {"meta": {"device": info, "date": time.strftime("%Y-%m-%d"), "seconds": round(time.perf_counter() - t0, 2),
                     "files": len(files), "workers": len([c for c in chunks if c]), "isolated": alone,
                     "python": sys.version.split()[0]},
            "results": results}


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------


def _mark(x: dict | None) -> str:
    if not x:
        return "-"
    s = x.get("status", "?")
    n = x.get("slots_checked", x.get("checked", 0))
    if s == "pass":
        return f"pass ({n})"
    return f"**{s.upper()}** ({x.get('mismatches', '?')}/{n} differ)"


GATE_PROPERTIES = ("coverage", "alignment", "exactly_once", "slot_agreement")


def prover_verdicts(prover: dict | None) -> dict:
    """``{path: {property: status}}`` from ``symlayout prove --json`` (a property
    counts as refuted if any operand refutes it)."""
    out: dict = {}
    for c in (prover or {}).get("configs", []):
        v: dict = {}
        for r in c.get("results", []):
            k = r.get("property")
            if r.get("status") == "refuted" or k not in v:
                v[k] = r.get("status")
        out[c.get("path")] = v
    return out


def outcome(r: dict) -> str:
    """One phrase: what the GPU did with a configuration."""
    st = r.get("status", "?")
    if st == "skipped":
        return f"not run: {r.get('reason', '')}"
    err = r.get("error")
    if err:
        msg = err.get("message", "")
        name = next((w.rstrip(":") for w in msg.split() if w.startswith("cudaError")), msg[:80])
        return f"fault: {name} at {err.get('stage', '?')}" + (" (context poisoned)" if err.get("sticky") else "")
    bad = [f"marker {op}" for op, x in sorted(r.get("marker", {}).items()) if x.get("status") != "pass"]
    if r.get("compute") and r["compute"].get("status") != "pass":
        bad.append("compute")
    if bad:
        masked = any((x.get("masked") or {}).get("explained_by_masked_address") for x in r.get("marker", {}).values())
        return "data differs from the model in " + ", ".join(bad) + (" (silently masked address)" if masked else "")
    return "as the model says" + ("" if r.get("compute") else " (marker only)")


def report_markdown(results: dict, prover: dict | None = None) -> str:
    """Markdown of a :func:`run_paths` result.  ``prover`` (``symlayout prove
    --json``) adds the model's verdicts and the gate: a configuration whose
    coverage, alignment, exactly_once and slot_agreement are proved must pass
    marker and compute mode."""
    meta = results.get("meta", {})
    dev = meta.get("device") or {}
    rs = results.get("results", [])
    verdict = prover_verdicts(prover)
    L = ["# Configurations on the GPU: the route model vs. the hardware", ""]
    L.append(f"- GPU: {dev.get('name', '?')} (compute capability {dev.get('compute_capability', '?')}, "
             f"{dev.get('multiprocessors', '?')} SMs); driver {dev.get('driver_version', '?')}, CUDA driver API "
             f"{dev.get('cuda_driver_api_version', '?')}, runtime {dev.get('cuda_runtime_version', '?')}, "
             f"NVRTC {dev.get('nvrtc_version', '?')}, CuPy {dev.get('cupy_version', '?')}, Python {meta.get('python', '?')}")
    ran = [r for r in rs if r.get("status") != "skipped"]
    L.append(f"- date: {meta.get('date', '?')}; {meta.get('files', '?')} configuration files, {len(ran)} runs "
             f"(parametric families at a few instances, `path@sym=value`), {len(rs) - len(ran)} not run; "
             f"whole run {meta.get('seconds', '?')} s wall with {meta.get('workers', '?')} worker processes at once, "
             f"then {len(meta.get('isolated', []))} refutation runs each in its own process")
    L.append("")
    L.append("| configuration | [expect] refuted | model: coverage/alignment/exactly_once/slot_agreement | marker | compute | GPU | s |")
    L.append("| --- | --- | --- | --- | --- | --- | --- |")
    gate_fail, n_must = [], 0
    for r in rs:
        v = verdict.get(r["path"]) or verdict.get(r["path"].split("@")[0], {})   # a family's proof covers its instances
        mv = "/".join(("**refuted**" if v.get(p) == "refuted" else (v.get(p) or "-")) for p in GATE_PROPERTIES) if v else "-"
        must = bool(v) and all(v.get(p) == "proved" for p in GATE_PROPERTIES) and r.get("status") != "skipped"
        n_must += must
        mk = "; ".join(f"{op}: {_mark(x)}" for op, x in sorted(r.get("marker", {}).items())) or "-"
        comp = _mark(r.get("compute")) if r.get("compute") else ("not run" if r.get("compute_skip") else "-")
        oc = outcome(r)
        if must and r.get("status") != "pass":
            gate_fail.append(r["path"])
            oc = f"**MODEL AND HARDWARE DISAGREE: {oc}**"
        L.append(f"| `{r['path']}` | {', '.join(r.get('expect_refuted') or []) or '-'} | {mv} | {mk} | {comp} | "
                 f"{oc} | {r.get('seconds', '-')} |")
    L.append("")
    if prover:
        L.append(f"**Gate**: {n_must} runs have coverage, alignment, exactly_once and slot_agreement proved by the "
                 f"prover; " + ("every one of them passed marker and compute mode." if not gate_fail else
                                f"{len(gate_fail)} did not: {', '.join(gate_fail)}."))
        L.append("")
    L.append("## Details")
    L.append("")
    for r in rs:
        if r.get("status") == "skipped":
            continue
        L.append(f"### `{r['path']}`")
        if r.get("name"):
            L.append(r["name"])
        L.append("")
        L.append(f"- GPU: {outcome(r)}")
        if "@" in r["path"] and r.get("expect_refuted"):
            L.append(f"- an instance of a parametric family; the family's [expect] refuted = "
                     f"{', '.join(r['expect_refuted'])} holds for some values of the range, not necessarily this one")
        for op, c in sorted((r.get("copies") or {}).items()):
            L.append(f"- [copy.{op}] `{c['atom']}` {c['type']}, smem `{c['smem']}`, align {c['align']}: "
                     f"`{c['instruction']}`; tile at byte {r.get('smem_offsets', {}).get(op, '-')} of the dynamic shared buffer")
        if r.get("process"):
            L.append(f"- ran in: {r['process']}; {r.get('launches', '?')} launches, NVRTC compile "
                     f"{r.get('compile_seconds', '-')} s ({r.get('compile', '-')}), {r.get('seconds', '-')} s in all")
        for op, x in sorted(r.get("marker", {}).items()):
            extra = ""
            if "copy_writes" in x:
                extra = f"; copy writes per fragment slot {x['copy_writes']}"
            if "copy_reads" in x:
                extra = f"; copy reads per fragment slot {x['copy_reads']}, stray writes {x.get('stray_writes', 0)}"
            L.append(f"- marker {op}: {x.get('status')}: {x.get('mismatches', '?')} of {x.get('slots_checked', '?')} "
                     f"differ, {x.get('unwritten', 0)} unwritten, {x.get('passes', 1)} id pass(es){extra}")
            if x.get("note"):
                L.append(f"  - note: {x['note']}")
            for e in x.get("examples", [])[:4]:
                L.append(f"  - {json.dumps(e)}")
            if x.get("masked"):
                L.append(f"  - where the arrived elements lie (bytes from the model's): {json.dumps(x['masked'])}")
            if x.get("problem"):
                L.append(f"  - {x['problem']}")
        c = r.get("compute")
        if c:
            L.append(f"- compute: {c.get('status')}: {c.get('M')}x{c.get('N')}x{c.get('K')}, {c.get('issues_per_thread')} "
                     f"`{c.get('mma')}` per thread ({c.get('order')}), A and B in [-{c.get('value_range')}, "
                     f"{c.get('value_range')}], C in [-{c.get('c_range')}, {c.get('c_range')}]; D stored through "
                     f"{c.get('stored_through')}; {c.get('mismatches')} of {c.get('checked')} differ from numpy's "
                     f"A @ B^T + C, {c.get('unwritten')} unwritten; fragment writes {c.get('fragment_writes')}")
            for e in c.get("examples", [])[:4]:
                L.append(f"  - {json.dumps(e)}")
        elif r.get("compute_skip"):
            L.append(f"- compute: not run: {r['compute_skip']}")
        for op, msg in (r.get("model_errors") or {}).items():
            L.append(f"- [copy.{op}]: the model could not be built: {msg}")
        if r.get("error"):
            e = r["error"]
            L.append(f"- **CUDA error** at {e.get('stage', '?')}: {str(e.get('message', ''))[:600]}"
                     + (" -- this error poisons the CUDA context, so nothing else ran in that process" if e.get("sticky") else ""))
        L.append("")
    skipped = [r for r in rs if r.get("status") == "skipped"]
    if skipped:
        L.append("## Not run")
        L.append("")
        for r in skipped:
            L.append(f"- `{r['path']}`: {r.get('reason', '')}")
        L.append("")
    return "\n".join(L) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """The worker process of :func:`run_paths` (``python -m symlayout.harness.config_run --child CONFIG...``);
    users run ``symlayout gpu``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "--child":
        print("usage: python -m symlayout.harness.config_run --child CONFIG... (the worker of `symlayout gpu`)",
              file=sys.stderr)
        return 2
    return _child_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
