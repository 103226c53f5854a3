"""The whole SM80 data path of a configuration as ONE kernel (issue 14, "Hardware confirmation").

For a configuration with an ``[mma]`` and global-memory copies (``[g2s.A|B]``, ``[s2g.C]``), one
kernel runs what the kernel's author wrote, instruction by instruction:

1. **G2S** -- every thread issues its ``cp.async`` (or vector ``ld.global`` + ``st.shared``) from a
   global tile (poison everywhere else in the allocation) to the shared buffer, for every pipeline
   stage (``[stages] count``), committed as one group per stage;
2. per stage: ``cp.async.wait_group`` of that stage, then **S2R** -- the ``[copy.X]`` instruction
   (``ldmatrix`` [``.trans``], vector ``ld.shared``) fills the fragment slots, then ``mma.sync`` for
   every ``(m, n, k)`` rest coordinate of the fragments (CuTe's ``gemm`` order);
3. **epilogue** -- the accumulators converted to the stored type (``[copy.C] convert``), **R2S** by
   ``[copy.C]``'s instruction, then **S2G** by ``[s2g.C]``'s vector ``ld.shared`` + ``st.global``.

Compute mode puts random small integers (exact in every type on the way) in A ``(M, stages*K)``,
B ``(N, stages*K)`` and C; the global output image must hold ``D = A @ B^T + C`` in the stored type
at every element's offset and poison everywhere else (numpy computes ``D``).  Marker mode runs the
same kernel without the MMA: the global tiles hold element ids, every fragment slot of every stage
is read back and compared with the slot the MMA expects (``expected`` of the ``[copy.X]`` model),
and the C fragment's ids must land at the gmem offset of their element.

**Partial tiles** (``residue``): after the full tile the kernel runs the tile cut by the problem size,
predicated as CuTe predicates it (CUTLASS's SM80 mainloop, flash-attention): each G2S instruction executes
iff ``elem_less`` of the identity coordinate of its first element and the residue holds, and otherwise
zero-fills its destination (``cp.async`` with src-size 0, CuTe's ``*_ZFILL`` atoms); each S2G instruction
stores iff its first element is inside the problem.  The residues are the prover's
(:func:`symlayout.prove.datapath.g2s.residues`: the family's ``M``/``N``/``K`` parameters), and every ``in_bounds``
counterexample of the instance runs last, at the prover's residue.  Global memory holds the problem's
elements only, poison everywhere else; every shared-memory element and every output word is compared
with what the predicate predicts -- the element, a zero, or (where an executing instruction reaches
outside the problem, the refutation) the word it reads from outside -- and numpy computes ``D`` from
the zero-filled operands.  ``exact=True`` ends every global buffer at the problem's last element (its
own ``cudaMalloc``) so that ``compute-sanitizer --tool memcheck`` sees any byte past it
(``python -m symlayout.harness.wholepath --exact``).

Nothing here computes a layout: the G2S/S2G accesses are :func:`symlayout.prove.datapath.g2s.build_global_model`'s,
the shared-memory addresses and fragment slots of ``[copy.X]`` are
:func:`symlayout.prove.copy.model.build_operand_model`'s (through :func:`symlayout.harness.plan.plan_operand`),
the stage addresses are the staged smem layout's (``smem_staged``), the MMA's issue tables are
:func:`symlayout.harness.plan.plan_compute`'s.  Stage ``s`` of an operand reads the ``s``-th
K block of A/B from its own copy of the gmem tile (at ``s`` times the tile's span, so every leading
dimension the configuration admits can run).

Parametric configurations run at an instance (``path@ldA=64``, :func:`symlayout.harness.plan.load_spec`).

GPU side imports: the prover's model modules (no z3), numpy, CuPy (inside functions).

>>> from symlayout.harness.wholepath import applies
>>> from symlayout.config import load_config
>>> applies(load_config("proofs/sm80_datapath/fa2_fwd_hd64_pv.toml"))
True
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from .plan import accepted_values, partial_products, store_pairs
from .values import HarnessError, as_int64, compute_poison, decode, encode, id_digit, id_passes, random_gemm_inputs, reg_bits, round_up, uint_c, \
    uint_np
from ..algebra.layout import function_table
from ..errors import SymlayoutError
from ..prove.datapath.g2s import build_global_model, residues, in_bounds
from ..prove.copy.model import build_operand_model
from ..tiled.mma import make_tiled_mma
from .plan import load_spec, plan_compute, plan_operand, instance_values
from ..config import load_config
from ..prove.verdict.result import REFUTED
from .codegen import _issue_tables, _mma_issue_loop, _PRELUDE, _copy_function
from . import cuda as _cuda, cuda
from .cuda import is_sticky

#: seed of the compute-mode operands
SEED = 20261201
#: shared-memory regions start on this boundary (plus the copy's ``align`` modulo it)
REGION_ALIGN = 1024
#: bytes of poison after each global tile and between the tiles of two stages
GMEM_PAD = 1024


def applies(cfg) -> bool:
    """A configuration whose data path runs as one kernel: an ``[mma]`` and a global-memory copy."""
    return cfg.mma is not None and bool(cfg.g2s or cfg.s2g)


@dataclass
class OperandPath:
    """The route of operand A or B: its G2S copy (or none), its S2R copy (or none: the fragment comes
    from the TiledMMA's partition, as FA2's P), and the stage addresses of both."""
    op: str
    g2s: Any = None               # GlobalCopyModel
    copy: Any = None              # OperandPlan of [copy.X]
    rows: int = 0                 # M or N of the tile
    kt: int = 0                   # K of one stage's tile
    stage_table: list = field(default_factory=list)   # staged smem layout: element offset of (i, stage s) at s*S + i
    span: int = 0                 # elements of the staged smem image
    g_table: list = field(default_factory=list)       # gmem element offset of tile element i
    g_span: int = 0               # elements between two stages' gmem tiles
    g_base: int = 0               # bytes from a 1024-byte boundary to the tile's base (``gmem_align``)
    bits: int = 0

    @property
    def size(self) -> int:
        return self.rows * self.kt


@dataclass
class WholePlan:
    path: str
    name: str
    cfg: Any
    mma: Any
    threads: int
    stages: int
    compute: Any                  # ComputePlan
    ops: dict                     # "A"/"B" -> OperandPath
    c_copy: Any = None            # OperandPlan of [copy.C]
    s2g: Any = None               # GlobalCopyModel of [s2g.C]
    smem_layout: dict = field(default_factory=dict)
    smem_bytes: int = 0
    source: str = ""
    expect_refuted: tuple = ()
    marker_only: str = ""         # why compute mode does not apply (empty: it does)
    dims: dict = field(default_factory=dict)     # "M"/"N"/"K" a copy's residue cuts -> (extent, residues)
    cases: list = field(default_factory=list)    # (label, {dim: residue}) of the partial-tile runs


# ---------------------------------------------------------------------------------------- plan


def _staged_table(cc, gc):
    """Element offsets of the whole staged buffer (stage 0 alone without stages), and the stage count."""
    for c in (cc, gc):
        if c is not None and getattr(c, "smem_staged", None) is not None and c.stages > 1:
            return [int(x) for x in function_table(c.smem_staged)], int(c.stages)
    src = cc if cc is not None else gc
    return [int(x) for x in function_table(src.smem)], 1


def plan_whole(cfg) -> WholePlan:
    """The whole-path plan of ``cfg`` (a :class:`~symlayout.config.Config`, a path or ``path@sym=v``).
    Raises :class:`HarnessError` for what the kernel does not run (the reason is the message)."""
    if isinstance(cfg, (str, os.PathLike)):
        cfg = load_spec(str(cfg))
    if not applies(cfg):
        raise HarnessError("no [mma] with a [g2s.X] / [s2g.C]: no whole data path to run")
    if getattr(cfg, "params", None):
        raise HarnessError("parametric configuration ([params]): run an instance (path@sym=value)")
    fam = family_params(cfg)
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
    T = mma.size()
    operands = {}
    try:
        for op, cc in sorted(cfg.copies.items()):
            m = build_operand_model(mma, None, None, op, cc.atom, cc.route_type, cc.smem, cc.align, convert=cc.convert,
                                    tiled=cc.tiled)
            operands[op] = plan_operand(m)
        # the instance's tiles (no symbols left) with the family's [params]: the prover's residues (a
        # parameter named M / N / K) are the family's
        globals_ = {op: build_global_model(gc, fam) for op, gc in cfg.g2s.items()}
        s2g = build_global_model(cfg.s2g["C"], fam) if "C" in cfg.s2g else None
        past = [m.name for m in list(globals_.values()) + [s2g] if m is not None and m.past]
        if past:
            raise SymlayoutError(f"[{past[0]}] reaches past its tile (its TiledCopy's tile does not divide it)")
    except SymlayoutError as e:
        raise HarnessError(f"the model does not build: {e}") from None
    compute, why = plan_compute(mma, operands)
    if compute is None:
        raise HarnessError(why)
    stages = 1
    ops = {}
    marker_only = []
    for op in ("A", "B"):
        cc, gc, gm = cfg.copies.get(op), cfg.g2s.get(op), globals_.get(op)
        rows = compute.M if op == "A" else compute.N
        path = OperandPath(op=op, g2s=gm, copy=operands.get(op), rows=rows, kt=compute.K,
                           bits=compute.frag_bits[op])
        if gm is not None and cc is None:          # nothing reads the tile into registers: marker mode only
            path.rows, path.kt = gm.shape
            path.stage_table, n = _staged_table(None, gc)
            stages = max(stages, n)
            path.span = max(path.stage_table) + 1
            marker_only.append(f"[g2s.{op}] without [copy.{op}]: nothing reads the tile into registers, so the "
                               "kernel copies it to shared memory and reads the image back (marker mode only)")
        if cc is not None:
            path.stage_table, n = _staged_table(cc, gc)
            stages = max(stages, n)
            S = path.size
            if path.stage_table[:S] != [int(x) for x in path.copy.model.addr_table]:
                raise HarnessError(f"[copy.{op}]: stage 0 of the staged buffer is not the copy's smem layout")
            path.span = max(path.stage_table) + 1
        if gm is not None:
            if gm.threads > T:
                raise HarnessError(f"[g2s.{op}] has {gm.threads} threads, the TiledMMA {T}")
            if gm.shape != (path.rows, path.kt):
                raise HarnessError(f"[g2s.{op}] tile {gm.shape} is not the [copy.{op}] tile {(rows, compute.K)}")
            if gm.value_bits != path.bits:
                raise HarnessError(f"[g2s.{op}] moves {gm.value_bits}-bit values into a {path.bits}-bit operand")
            path.g_table = [int(x) for x in gm.gmem.table({})]
            if min(path.g_table) < 0:
                raise HarnessError(f"[g2s.{op}] gmem has negative offsets")
            path.g_span = round_up(max(path.g_table) + gm.k + GMEM_PAD * 8 // gm.value_bits, REGION_ALIGN)
            path.g_base = gm.gmem_align % REGION_ALIGN   # the least-aligned base the configuration admits
        ops[op] = path
    for op, path in ops.items():
        if path.stage_table and len(path.stage_table) != stages * path.size:
            raise HarnessError(f"[copy.{op}] has {len(path.stage_table) // path.size} stages, the configuration {stages}")
    cpl = operands.get("C")
    if s2g is not None:
        if cpl is None:
            raise HarnessError("[s2g.C] without [copy.C]: nothing stores the accumulators to shared memory")
        if [int(x) for x in s2g.smem_addr] != [int(x) for x in cpl.model.addr_table]:
            raise HarnessError("[s2g.C] and [copy.C] give different smem layouts (slot_agreement refutes it)")
        if s2g.threads > T:
            raise HarnessError(f"[s2g.C] has {s2g.threads} threads, the TiledMMA {T}")
        if s2g.atom.op.kind == "cp_async":
            raise HarnessError("[s2g.C] with a cp.async atom: cp.async copies global -> shared only")
    wp = WholePlan(path=str(cfg.path), name=cfg.name or "", cfg=cfg, mma=mma, threads=T, stages=stages,
                   compute=compute, ops=ops, c_copy=cpl, s2g=s2g,
                   expect_refuted=tuple(sorted(cfg.expect.refuted_somewhere)), marker_only="; ".join(marker_only))
    _layout_smem(wp)
    wp.dims = residue_dims(wp)
    wp.cases = residue_cases(wp)
    wp.source = whole_source(wp)
    return wp


def family_params(cfg) -> dict:
    """The ``[params]`` of the family an instance (``path@sym=value``) was taken from ({} otherwise)."""
    path = str(getattr(cfg, "path", "") or "")
    if "@" not in path:
        return dict(getattr(cfg, "params", None) or {})
    try:
        return dict(load_config(path.rpartition("@")[0]).params or {})
    except Exception:  # noqa: BLE001 - a configuration built in memory: no family to read
        return {}


def _layout_smem(wp: WholePlan) -> None:
    """Region byte offsets: A, B (all stages), C; each ``align`` past a 1024-byte boundary."""
    off, lay = 0, {}
    for op, path in wp.ops.items():
        if not path.stage_table:
            continue
        align = path.copy.align if path.copy is not None else path.g2s.smem_align
        lay[op] = round_up(off, REGION_ALIGN) + align % REGION_ALIGN
        off = lay[op] + path.span * path.bits // 8 + 512
    if wp.c_copy is not None:
        lay["C"] = round_up(off, REGION_ALIGN) + wp.c_copy.align % REGION_ALIGN
        off = lay["C"] + wp.c_copy.span * wp.c_copy.bits // 8 + 512
    wp.smem_layout = lay
    wp.smem_bytes = round_up(max(off, 16), 16)


# ---------------------------------------------------------------------------------------- residue predication

#: the dimensions of a copy's two tile modes (A is (M, K), B (N, K), C (M, N))
MODE_NAMES = {"A": "MK", "B": "NK", "C": "MN"}


def global_copies(wp: WholePlan) -> list:
    """``(name, model)`` of every global-memory copy of the plan (``g2s.A``, ``g2s.B``, ``s2g.C``)."""
    out = [(f"g2s.{op}", p.g2s) for op, p in wp.ops.items() if p.g2s is not None]
    if wp.s2g is not None:
        out.append(("s2g.C", wp.s2g))
    return out


def residue_dims(wp: WholePlan) -> dict:
    """``{dim: (extent, residues)}`` for every problem dimension (``M``/``N``/``K``) a copy's ``residue``
    cuts: the residues the prover's ``in_bounds`` quantifies over (:func:`symlayout.prove.datapath.g2s.residues`;
    those every copy cutting the dimension admits)."""
    dims: dict = {}
    for name, m in global_copies(wp):
        for d in m.residue:
            dim = MODE_NAMES[m.operand][d]
            ext, rs = m.shape[d], residues(m, d)
            if dim in dims:
                if dims[dim][0] != ext:
                    raise HarnessError(f"[{name}] cuts {dim} of extent {ext}, another copy {dims[dim][0]}")
                rs = sorted(set(rs) & set(dims[dim][1]))
            dims[dim] = (ext, rs)
    return dims


def residue_cases(wp: WholePlan) -> list:
    """``(label, {dim: residue})`` of the partial tiles the kernel runs besides the full one: every cut
    dimension at its least, middle (odd where one is admissible) and last partial admissible residue at
    once, each dimension alone at its middle one, and last, the residue of every ``in_bounds`` counterexample the prover finds
    for this instance (the runs that read or write outside the problem)."""
    cases: list = []

    def add(label, r):
        r = {d: int(v) for d, v in r.items() if d in wp.dims and int(v) != wp.dims[d][0]}
        if r and all(r != c[1] for c in cases):
            cases.append((label, r))
    part = {d: [r for r in rs if r != ext] for d, (ext, rs) in wp.dims.items()}
    part = {d: rs for d, rs in part.items() if rs}
    mid = {d: next((r for r in rs[len(rs) // 2:] if r % 2), rs[len(rs) // 2]) for d, rs in part.items()}
    add("least residue", {d: rs[0] for d, rs in part.items()})
    add("middle residue", mid)
    add("last partial residue", {d: rs[-1] for d, rs in part.items()})
    if len(part) > 1:
        for d in part:
            add(f"{d} alone", {d: mid[d]})
    for name, m in global_copies(wp):             # last: the runs that read or write out of bounds
        if not m.residue:
            continue
        res = in_bounds(m)
        cex = res.counterexample
        if res.status == REFUTED and cex is not None and cex.extra.get("residue"):
            r = {d: v for d, v in cex.extra["residue"].items() if d in wp.dims}
            cases[:] = [c for c in cases if c[1] != {d: v for d, v in r.items() if v != wp.dims[d][0]}]
            add(f"in_bounds[{name}] counterexample", r)
    return cases


@dataclass
class Case:
    """One problem size the kernel runs: the residue of every cut dimension (absent: a full tile), what
    the prover's predicate makes of it per copy, and how the global buffers are sized.

    Per G2S operand ``ops[X]``: ``r`` (the residue along the tile's two modes, the extent where the copy
    does not cut it), ``inside`` (tile element inside the problem), ``zero`` (outside it, in an
    instruction the predicate turns off: ``cp.async`` with src-size 0 zero-fills it), ``oob`` (outside
    it, in an instruction that executes: the hardware reads memory outside the problem into it -- the
    ``in_bounds`` refutation), ``alloc`` (elements of the global buffer).  ``c``: the same for
    ``[s2g.C]``, ``oob`` being written outside the problem.  ``exact``: every global buffer ends at the
    last element inside the problem (its own ``cudaMalloc``, for compute-sanitizer); otherwise
    ``GMEM_PAD`` bytes of poison follow it."""
    label: str
    residue: dict
    ops: dict
    c: dict | None = None
    exact: bool = False
    zclamp: bool = False

    @property
    def full(self) -> bool:
        return not self.residue

    @property
    def oob_reads(self) -> int:
        return sum(int(o["oob"].sum()) for o in self.ops.values())

    @property
    def oob_writes(self) -> int:
        return 0 if self.c is None else int(self.c["oob"].sum())

    def text(self) -> str:
        return ", ".join(f"{d} = {r}" for d, r in sorted(self.residue.items())) or "full tile"


def _cut(m, residue: dict) -> tuple:
    """The residue along each mode of a copy's tile (the extent where the copy does not cut it)."""
    names = MODE_NAMES[m.operand]
    return tuple(int(residue.get(names[d], m.shape[d])) if d in m.residue else int(m.shape[d]) for d in range(2))


def _predicate_split(m, r):
    """``(inside, zero, oob)`` over the tile's elements under CuTe's predicate (``elem_less`` of the
    identity coordinate of each instruction's first element and the residue ``r``)."""
    import numpy as np
    n = m.shape[0] * m.shape[1]
    crd = np.array([m.coord(i) for i in range(n)], dtype=np.int64).reshape(n, 2)
    inside = (crd[:, 0] < r[0]) & (crd[:, 1] < r[1])
    run = np.zeros(n, dtype=bool)
    covered = np.zeros(n, dtype=bool)
    for accs in m.accesses.values():
        for a in accs:
            covered[a] = True
            if inside[a[0]]:
                run[a] = True
    return inside, covered & ~run & ~inside, run & ~inside


def make_case(wp: WholePlan, residue: dict | None = None, label: str = "full tile", exact: bool = False,
              zclamp: bool = False) -> Case:
    """The :class:`Case` of ``residue`` (``{dim: r}``; None or {}: the full tile)."""
    import numpy as np
    residue = {d: int(r) for d, r in (residue or {}).items()}
    for d, r in residue.items():
        if d not in wp.dims:
            raise HarnessError(f"no copy of this configuration cuts {d} (residue modes: {sorted(wp.dims) or 'none'})")
        if not 1 <= r <= wp.dims[d][0]:
            raise HarnessError(f"residue {d} = {r} is not in 1..{wp.dims[d][0]}")
    ops = {}
    for op, path in wp.ops.items():
        m = path.g2s
        if m is None:
            continue
        r = _cut(m, residue)
        inside, zero, oob = _predicate_split(m, r)
        G = np.asarray(path.g_table, dtype=np.int64)
        alloc = ((wp.stages - 1) * path.g_span + int(G[inside].max()) + 1 if exact
                 else wp.stages * path.g_span + GMEM_PAD)
        src = np.full(len(inside), -1, dtype=np.int64)       # gmem offset whose value lands on element i
        for accs in m.accesses.values():
            for a in accs:
                src[a] = G[a[0]] + np.arange(len(a))
        ops[op] = {"r": r, "inside": inside, "zero": zero, "oob": oob, "alloc": alloc, "src": src}
    c = None
    if wp.s2g is not None:
        m = wp.s2g
        r = _cut(m, residue)
        inside, zero, oob = _predicate_split(m, r)
        G = np.asarray(m.gmem.table({}), dtype=np.int64)
        alloc = int(G[inside].max()) + 1 if exact else int(G.max()) + m.k + GMEM_PAD
        c = {"r": r, "inside": inside, "zero": zero, "oob": oob, "alloc": alloc}
    return Case(label=label, residue=residue, ops=ops, c=c, exact=exact, zclamp=zclamp)


def coord_table(m) -> list:
    """Per thread and access (thread-major, one stage), the identity coordinate of the access's first
    element packed as ``row | col << 16``: the kernel compares it with the residue (CuTe's ``tAcA``)."""
    out = []
    for t in range(m.threads):
        for a in m.accesses[t]:
            r, c = m.coord(a[0])
            if r >= 1 << 16 or c >= 1 << 15:
                raise HarnessError(f"[{m.name}] tile coordinate {(r, c)} does not fit the kernel's 16-bit packing")
            out.append(r | c << 16)
    return out


# ---------------------------------------------------------------------------------------- tables


def g2s_tables(path: OperandPath, stages: int):
    """``(goff, soff)``: per stage, thread and access, the gmem and smem element offsets of the
    access's first element (thread-major; threads past the copy's issue nothing)."""
    m = path.g2s
    S = path.size
    goff, soff = [], []
    for s in range(stages):
        for t in range(m.threads):
            for a in m.accesses[t]:
                goff.append(s * path.g_span + path.g_table[a[0]])
                soff.append(path.stage_table[s * S + a[0]])
    return goff, soff


def copy_tables(path: OperandPath, stages: int):
    """``(addr, slot)`` of ``[copy.X]`` per stage: byte addresses in the staged buffer of every vector of
    every call (the model's calls, read through the staged layout), and the calls' fragment slots."""
    p = path.copy
    m = p.model
    S = path.size
    eb = p.bits // 8
    addr = []
    for s in range(stages):
        for t in range(p.threads):
            for c in m.calls[t]:
                addr.append([path.stage_table[s * S + c.smem[j * p.vec_vals]] * eb for j in range(p.nvec)])
    slot = [list(x) for t in range(p.threads) for x in p.slot[t]]
    return addr, slot


def s2g_tables(wp: WholePlan):
    """``(goff, soff)`` of ``[s2g.C]`` (element offsets of each access's first element)."""
    m = wp.s2g
    G = m.gmem.table({})
    goff, soff = [], []
    for t in range(m.threads):
        for a in m.accesses[t]:
            goff.append(int(G[a[0]]))
            soff.append(int(m.smem_addr[a[0]]))
    return goff, soff


# ---------------------------------------------------------------------------------------- CUDA source


def _g2s_function(wp: WholePlan, path: OperandPath) -> str:
    """``g2s_X(t, tile, g, goff, soff, ...)``: every access of thread ``t`` for one stage.  With ``residue``
    each access is predicated as CuTe predicates it: ``elem_less(crd, residue)`` of the identity
    coordinate of its first element; an access turned off zero-fills its destination (``cp.async`` with
    src-size 0, CuTe's ``SM80_CP_ASYNC_*_ZFILL``, from the same source address unless ``zclamp``; a
    vector copy stores zeros, flash-attention's ``clear``)."""
    m = path.g2s
    eb, vb = m.eb, m.vb
    nacc = len(m.accesses[0])
    pred = bool(m.residue)
    if m.atom.op.kind == "cp_async":
        cg = "cg" if "CACHEGLOBAL" in m.atom.op.name else "ca"
        if pred:
            body = ("    const int q = crd[j];\n"
                    "    const bool p = (q & 0xffff) < r0 && (q >> 16) < r1;   // elem_less(first coordinate, residue)\n"
                    f"    const unsigned char* src = (p || !zclamp) ? g + (long long)goff[j] * {eb} : g;\n"
                    f'    asm volatile("cp.async.{cg}.shared.global [%0], [%1], {vb}, %2;\\n" :: "r"(tile + soff[j] * {eb}), '
                    f'"l"(src), "r"(p ? {vb} : 0) : "memory");')
        else:
            body = (f'    asm volatile("cp.async.{cg}.shared.global [%0], [%1], {vb};\\n" :: "r"(tile + soff[j] * {eb}), '
                    f'"l"(g + (long long)goff[j] * {eb}) : "memory");')
    else:
        V = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "uint2", 16: "uint4"}[vb]
        store = f"*({V}*)(dyn_base + (tile - sbase0) + soff[j] * {eb})"
        if pred:
            body = ("    const int q = crd[j];\n"
                    f"    if ((q & 0xffff) < r0 && (q >> 16) < r1) {{ {V} v = *(const {V}*)(g + (long long)goff[j] * {eb}); "
                    f"{store} = v; }}\n"
                    f"    else {{ {V} z = {{}}; {store} = z; }}")
        else:
            body = (f"    {{ {V} v = *(const {V}*)(g + (long long)goff[j] * {eb});\n"
                    f"      {store} = v; }}")
    extra = ", const int* __restrict__ crd, int r0, int r1, int zclamp" if pred else ""
    return "\n".join([
        f"__device__ __forceinline__ void g2s_{path.op}(int t, u32 tile, const unsigned char* __restrict__ g, "
        f"const int* __restrict__ goff, const int* __restrict__ soff, unsigned char* dyn_base, u32 sbase0{extra}) {{",
        f"  if (t >= {m.threads}) return;",
        "#pragma unroll 1",
        f"  for (int c = 0; c < {nacc}; ++c) {{",
        f"    const int j = t * {nacc} + c;",
        body,
        "  }",
        "}"])


def _s2g_function(wp: WholePlan) -> str:
    """``s2g_C``: ``ld.shared`` + ``st.global`` of every access of thread ``t``; with ``residue``
    predicated on the identity coordinate of its first element (an access turned off stores nothing)."""
    m = wp.s2g
    eb, vb = m.eb, m.vb
    nacc = len(m.accesses[0])
    V = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "uint2", 16: "uint4"}[vb]
    pred = bool(m.residue)
    guard = ["    const int q = crd[j];", "    if (!((q & 0xffff) < r0 && (q >> 16) < r1)) continue;"] if pred else []
    extra = ", const int* __restrict__ crd, int r0, int r1" if pred else ""
    return "\n".join([
        "__device__ __forceinline__ void s2g_C(int t, const unsigned char* tile, unsigned char* __restrict__ g, "
        f"const int* __restrict__ goff, const int* __restrict__ soff{extra}) {{",
        f"  if (t >= {m.threads}) return;",
        "#pragma unroll 1",
        f"  for (int c = 0; c < {nacc}; ++c) {{",
        f"    const int j = t * {nacc} + c;",
        *guard,
        f"    *({V}*)(g + (long long)goff[j] * {eb}) = *(const {V}*)(tile + soff[j] * {eb});",
        "  }",
        "}"])


def _pred_params(path: OperandPath) -> list:
    """The predicate's kernel parameters of a G2S operand with ``residue``: the coordinate table, the
    residue along both tile modes, whether a turned-off access reads from the tile's base."""
    op = path.op
    if not path.g2s.residue:
        return []
    return [f"const int* __restrict__ crd{op}", f"int r{op}0", f"int r{op}1", f"int zclamp{op}"]


def _kernel(wp: WholePlan, marker: bool) -> str:
    """``whole_compute`` / ``whole_marker``: the kernel of the module docstring."""
    cpl = wp.compute
    T, n = wp.threads, wp.stages
    E = {o: uint_c(cpl.frag_bits[o]) for o in ("A", "B", "C")}
    params, lines = [], []
    lines += ["  extern __shared__ __align__(1024) unsigned char dyn[];",
              "  const int t = threadIdx.x;",
              "  const u32 sbase = (u32)__cvta_generic_to_shared(dyn);"]
    for op, path in wp.ops.items():
        fs = cpl.frag[op]
        lines.append(f"  {E[op]} f{op}[{fs}]; int n{op}[{fs}];")
        if path.copy is None and path.g2s is not None:          # G2S only: poison the region, read it back
            params += [f"const unsigned char* __restrict__ g{op}", f"const int* __restrict__ goff{op}",
                       f"const int* __restrict__ soff{op}"] + _pred_params(path) + [f"{E[op]}* __restrict__ simg{op}_out"]
            lines.append(f"  {{ {E[op]}* s = ({E[op]}*)(dyn + {wp.smem_layout[op]}); "
                         f"for (int i = t; i < {path.span}; i += blockDim.x) s[i] = ({E[op]})~0u; }}")
        elif path.copy is not None:
            params += [f"const int* __restrict__ addr{op}", f"const int* __restrict__ slot{op}"]
            if path.g2s is not None:
                params += [f"const unsigned char* __restrict__ g{op}", f"const int* __restrict__ goff{op}",
                           f"const int* __restrict__ soff{op}"] + _pred_params(path)
                # poison the staged buffer: a destination neither copied nor zero-filled shows
                lines.append(f"  {{ {E[op]}* s = ({E[op]}*)(dyn + {wp.smem_layout[op]}); "
                             f"for (int i = t; i < {path.span}; i += blockDim.x) s[i] = ({E[op]})~0u; }}")
            else:
                params += [f"const {E[op]}* __restrict__ img{op}"]
                lines.append(f"  {{ {E[op]}* s = ({E[op]}*)(dyn + {wp.smem_layout[op]}); "
                             f"for (int i = t; i < {path.span}; i += blockDim.x) s[i] = img{op}[i]; }}")
        else:
            params.append(f"const {E[op]}* __restrict__ dir{op}")
        if marker and path.copy is not None:
            params.append(f"{E[op]}* __restrict__ frag{op}_out")
    lines.append("  __syncthreads();")
    # G2S: one commit group per stage, all in flight at once
    for s in range(n):
        for op, path in wp.ops.items():
            if path.g2s is not None:
                na = len(path.g2s.accesses[0])
                pa = f", crd{op}, r{op}0, r{op}1, zclamp{op}" if path.g2s.residue else ""
                lines.append(f"  g2s_{op}(t, sbase + {wp.smem_layout[op]}, g{op}, goff{op} + {s * path.g2s.threads * na}, "
                             f"soff{op} + {s * path.g2s.threads * na}, dyn, sbase{pa});")
        lines.append('  asm volatile("cp.async.commit_group;\\n" ::: "memory");')
    fsc = cpl.frag["C"]
    params.append(f"const {E['C']}* __restrict__ dirC")
    lines.append(f"  {E['C']} fC[{fsc}];")
    lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fsc}; ++q) fC[q] = dirC[t * {fsc} + q];")
    tabs = _issue_tables(cpl, "WI")
    params.append("int* __restrict__ cntAB")
    fa, fb = cpl.frag["A"], cpl.frag["B"]
    for s in range(n):
        lines.append(f"  // ---- stage {s}")
        lines.append(f'  asm volatile("cp.async.wait_group {n - 1 - s};\\n" ::: "memory");')
        lines.append("  __syncthreads();")
        for op, path in wp.ops.items():
            fs = cpl.frag[op]
            lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fs}; ++q) n{op}[q] = 0;")
            if path.copy is not None:
                p = path.copy
                lines.append(f"  copy_{op}(t, sbase + {wp.smem_layout[op]}, 0u, addr{op} + {s * p.threads * p.ncalls * p.nvec}, "
                             f"slot{op}, f{op}, n{op}, 0);")
            elif path.g2s is not None:
                lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fs}; ++q) n{op}[q] = 1;")
            else:
                lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fs}; ++q) "
                             f"{{ f{op}[q] = dir{op}[({s} * {T} + t) * {fs} + q]; n{op}[q] = 1; }}")
        lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fa}; ++q) cntAB[({s} * {T} + t) * {fa + fb} + q] = nA[q];")
        lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fb}; ++q) cntAB[({s} * {T} + t) * {fa + fb} + {fa} + q] = nB[q];")
        if marker:
            for op, path in wp.ops.items():
                if path.copy is not None:
                    fs = cpl.frag[op]
                    lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fs}; ++q) frag{op}_out[({s} * {T} + t) * {fs} + q] = f{op}[q];")
        else:
            lines += _mma_loop(wp)
        lines.append("  __syncthreads();")
    for op, path in wp.ops.items():
        if path.copy is None and path.g2s is not None:
            lines.append(f"  {{ const {E[op]}* s = (const {E[op]}*)(dyn + {wp.smem_layout[op]}); "
                         f"for (int i = t; i < {path.span}; i += blockDim.x) simg{op}_out[i] = s[i]; }}")
    # epilogue
    if wp.c_copy is not None:
        p = wp.c_copy
        EO = uint_c(p.bits)
        params += ["const int* __restrict__ addrC", "const int* __restrict__ slotC", f"{EO} poisonC",
                   "int* __restrict__ cntC"]
        lines.append(f"  {EO} fO[{fsc}]; int nO[{fsc}];")
        if marker or cpl.convert is None:
            conv = f"fO[q] = ({EO})fC[q];"
        else:
            conv = {"f32->f16": ('{ unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(__uint_as_float(fC[q]))); '
                                 'fO[q] = h; }'),
                    "f32->bf16": ('{ unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(__uint_as_float(fC[q]))); '
                                  'fO[q] = h; }'),
                    "f16->f32": ('{ float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)fC[q])); '
                                 'fO[q] = __float_as_uint(f); }'),
                    "s32->f32": "fO[q] = __float_as_uint((float)(int)fC[q]);"}[cpl.convert]
        lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fsc}; ++q) {{ {conv} nO[q] = 0; }}")
        lines.append(f"  {{ {EO}* s = ({EO}*)(dyn + {wp.smem_layout['C']}); for (int i = t; i < {p.span}; i += blockDim.x) s[i] = poisonC; }}")
        lines.append("  __syncthreads();")
        lines.append(f"  copy_C(t, sbase + {wp.smem_layout['C']}, 0u, addrC, slotC, fO, nO, 0);")
        lines.append("  __syncthreads();")
        if wp.s2g is not None:
            params += ["unsigned char* __restrict__ gC", "const int* __restrict__ goffC", "const int* __restrict__ soffC"]
            pa = ""
            if wp.s2g.residue:
                params += ["const int* __restrict__ crdC", "int rC0", "int rC1"]
                pa = ", crdC, rC0, rC1"
            lines.append(f"  s2g_C(t, dyn + {wp.smem_layout['C']}, gC, goffC, soffC{pa});")
        else:
            params.append(f"{EO}* __restrict__ outC")
            lines.append(f"  {{ {EO}* s = ({EO}*)(dyn + {wp.smem_layout['C']}); for (int i = t; i < {p.span}; i += blockDim.x) outC[i] = s[i]; }}")
        lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fsc}; ++q) cntC[t * {fsc} + q] = nO[q];")
    else:
        params.append(f"{E['C']}* __restrict__ outC")
        lines.append(f"  _Pragma(\"unroll 1\") for (int q = 0; q < {fsc}; ++q) outC[t * {fsc} + q] = fC[q];")
    kname = "whole_marker" if marker else "whole_compute"
    head = f'extern "C" __global__ void __launch_bounds__({T}) {kname}({", ".join(params)}) {{'
    return ("\n".join(tabs) if not marker else "") + "\n" + head + "\n" + "\n".join(lines) + "\n}"


def _mma_loop(wp: WholePlan) -> list:
    """The ``mma.sync`` issue loop over one stage's fragments (the registers from the fragment slots)."""
    return _mma_issue_loop(wp.compute, wp.mma.atom, "WI")


def whole_source(wp: WholePlan) -> str:
    """The CUDA C++ of the whole path: the ``[copy.X]`` device functions (the harness's own, see
    :mod:`.codegen`), ``g2s_X`` / ``s2g_C``, and the kernels ``whole_compute`` and ``whole_marker``."""
    parts = [f"// symlayout whole data path: {wp.path}\n// {wp.name}\n", _PRELUDE]
    for op, path in wp.ops.items():
        if path.copy is not None:
            parts.append(_copy_function(wp, path.copy))
        if path.g2s is not None:
            parts.append(_g2s_function(wp, path))
    if wp.c_copy is not None:
        parts.append(_copy_function(wp, wp.c_copy))
    if wp.s2g is not None:
        parts.append(_s2g_function(wp))
    if not wp.marker_only:
        parts.append(_kernel(wp, marker=False))
    parts.append(_kernel(wp, marker=True))
    return "\n\n".join(parts) + "\n"


# ---------------------------------------------------------------------------------------- host data


def compute_inputs(wp: WholePlan, case: Case | None = None) -> dict:
    """Random small integers A ``(M, stages*K)``, B ``(N, stages*K)``, C ``(M, N)``, exact in every
    type on the way, and ``ref = A @ B^T + C`` (int64).  Under a partial-tile ``case`` the reference
    takes the elements of a G2S operand outside the problem as the zeros the predicated copy fills in
    (every stage's tile is cut alike)."""
    import numpy as np
    cpl = wp.compute
    inp = random_gemm_inputs(cpl, cpl.K * wp.stages, SEED)
    eff = {"A": inp["A"], "B": inp["B"]}
    for op, co in ((case.ops if case is not None else {}).items()):
        path, X = wp.ops[op], eff[op]
        if (path.rows, path.kt) != (X.shape[0], cpl.K):
            continue                                   # a G2S-only operand (marker mode): not in the product
        i = np.arange(path.size)
        mask = np.ones(X.shape, dtype=bool)
        for s_ in range(wp.stages):
            mask[i % path.rows, s_ * path.kt + i // path.rows] = co["inside"]
        eff[op] = np.where(mask, X, 0)
    inp["ref"] = eff["A"].astype(np.int64) @ eff["B"].astype(np.int64).T + inp["C"]
    inp["parts"] = partial_products(cpl, eff["A"], eff["B"], inp["C"])     # [t]: its atom's (K-split) sums
    return inp


def id_passes_of(wp: WholePlan) -> int:
    """Marker launches needed so that every operand's ids ``s*S + i`` are told apart: a pass carries one
    digit in base ``2**bits - 1`` of each id (the all-ones word stays the poison), so 8-bit data with more
    than 254 elements takes several passes."""
    return max([id_passes(wp.stages * p.size, p.bits) for p in wp.ops.values() if p.size] or [1])


def marker_digit(wp: WholePlan, op: str, ids, q: int):
    """Digit ``q`` of operand ``op``'s marker ids (digit 0 again past the passes the operand needs)."""
    path = wp.ops[op]
    return id_digit(ids, q if q < id_passes(wp.stages * path.size, path.bits) else 0, path.bits)


def operand_values(wp: WholePlan, op: str, X, marker: bool, digit: int = 0):
    """Raw bits of tile element ``i`` of stage ``s`` at ``[s][i]``: ``X[i % rows, s*K + i // rows]``
    encoded in the operand's type, or (marker) digit ``digit`` of the id ``s*S + i``."""
    import numpy as np
    path = wp.ops[op]
    S, rows, kt = path.size, path.rows, path.kt
    U = uint_np(path.bits)
    i = np.arange(S, dtype=np.int64)
    if marker:
        return np.array([marker_digit(wp, op, s * S + i, digit) for s in range(wp.stages)]).astype(U)
    t = wp.compute.atype if op == "A" else wp.compute.btype
    return np.array([encode(X[i % rows, s * kt + i // rows], t) for s in range(wp.stages)]).astype(U)


def gmem_image(path: OperandPath, vals, stages: int, poison: int, inside=None, alloc: int | None = None):
    """The global allocation of a G2S operand: stage ``s``'s tile at ``s * g_span`` elements, poison elsewhere.
    With ``inside`` (a partial tile) only the elements inside the problem hold values; ``alloc``: the
    allocation's length in elements (default: the stages and ``GMEM_PAD`` of poison)."""
    import numpy as np
    img = np.full(alloc if alloc is not None else stages * path.g_span + GMEM_PAD, poison, dtype=uint_np(path.bits))
    g = np.asarray(path.g_table, dtype=np.int64)
    sel = np.ones(len(g), dtype=bool) if inside is None else np.asarray(inside, dtype=bool)
    for s in range(stages):
        img[s * path.g_span + g[sel]] = np.asarray(vals[s])[sel]
    return img


def smem_image(path: OperandPath, vals, stages: int, poison: int):
    """The staged shared image of an operand without G2S (filled by the kernel's first loop)."""
    import numpy as np
    img = np.full(path.span, poison, dtype=uint_np(path.bits))
    S = path.size
    for s in range(stages):
        img[np.asarray(path.stage_table[s * S:(s + 1) * S], dtype=np.int64)] = vals[s]
    return img


def direct_fragments(wp: WholePlan, op: str, X, marker: bool):
    """``[stages][T][FS]`` fragment bits of an operand without a copy (the TiledMMA's partition)."""
    import numpy as np
    cpl = wp.compute
    dm = cpl.direct[op]
    T = wp.threads
    rows = X.shape[0]
    kt = cpl.K
    t_ = {"A": cpl.atype, "B": cpl.btype}[op]
    fr = np.array([[[X[e % rows, s * kt + e // rows] for e in dm[t]] for t in range(T)] for s in range(wp.stages)])
    return encode(fr, t_).astype(uint_np(cpl.frag_bits[op]))


def c_fragments(wp: WholePlan, C0, marker: bool):
    """``[T][FS]`` initial accumulator bits: ``C`` by the C partition, or (marker) the element ids."""
    import numpy as np
    cpl = wp.compute
    dm = cpl.direct["C"]
    T, M = wp.threads, cpl.M
    if marker:
        return np.array([dm[t] for t in range(T)], dtype=uint_np(cpl.frag_bits["C"]))
    fr = np.array([[C0[e % M, e // M] for e in dm[t]] for t in range(T)])
    return encode(fr, cpl.ctype).astype(uint_np(cpl.frag_bits["C"]))


# ---------------------------------------------------------------------------------------- run and check


def _exact_buffer(cp, nbytes: int):
    """A ``uint8`` device array that is its own ``cudaMalloc`` of exactly ``nbytes`` (not a block of CuPy's
    memory pool): compute-sanitizer's memcheck reports any access past it."""
    try:
        mem = cp.cuda.memory.Memory(int(nbytes))
    except (AttributeError, TypeError):            # a CuPy without the RAII class: cudaMalloc by hand
        import weakref
        ptr = cp.cuda.runtime.malloc(int(nbytes))
        mem = cp.cuda.memory.UnownedMemory(ptr, int(nbytes), None)
        weakref.finalize(mem, cp.cuda.runtime.free, ptr)
    return cp.ndarray((int(nbytes),), dtype=cp.uint8, memptr=cp.cuda.memory.MemoryPointer(mem, 0))


def _global_input(cp, raw, case: Case | None, g_base: int):
    """The device copy of a gmem image (``g_base`` leading bytes of alignment, then the image), and the
    pointer the kernel reads from (``g_base`` bytes in)."""
    import numpy as np
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    if case is not None and case.exact:
        buf = _exact_buffer(cp, raw.size)
        buf[:] = cp.asarray(raw)
    else:
        buf = cp.asarray(raw)
    return buf[g_base:]


def host_images(wp: WholePlan, case: Case, inp: dict, marker: bool) -> dict:
    """``{op: gmem image}`` of every G2S operand (element ids in marker mode and for an operand nothing
    reads into registers, values otherwise; poison outside the problem)."""
    imgs = {}
    for op, path in wp.ops.items():
        if path.g2s is None:
            continue
        ids = marker or path.copy is None
        vals = operand_values(wp, op, inp[op], ids, inp.get("digit", 0))
        co = case.ops[op]
        imgs[op] = gmem_image(path, vals, wp.stages, (1 << path.bits) - 1, co["inside"], co["alloc"])
    return imgs


def run_marker(wp: WholePlan, cuda=None, module=None, case: Case | None = None) -> dict:
    """Marker mode in as many launches as the ids need (:func:`id_passes_of`), each checked alone;
    the result is the first failing pass's (or the last), with every pass's mismatches counted."""
    n = id_passes_of(wp)
    runs = [run_plan(wp, True, cuda, module, case, digit=q) for q in range(n)]
    return merge_passes(runs)


def merge_passes(runs: list) -> dict:
    """One marker result of several id passes (see :func:`run_marker`)."""
    if len(runs) == 1:
        return runs[0]
    res = dict(next((r for r in runs if r["status"] != "pass"), runs[-1]))
    for k in [k for k in res if k.startswith("mismatches")]:
        res[k] = sum(r.get(k, 0) for r in runs)
    res["problems"] = [f"id pass {q}: {p}" for q, r in enumerate(runs) for p in r["problems"]]
    res["passes"] = len(runs)
    res["status"] = "pass" if all(r["status"] == "pass" for r in runs) else "fail"
    return res


def run_plan(wp: WholePlan, marker: bool, cuda=None, module=None, case: Case | None = None, digit: int = 0) -> dict:
    """Launch the whole-path kernel once (compute or marker mode; ``digit``: the marker ids' digit this
    launch carries) on ``case`` (default: the full tile) and check its outputs."""
    import numpy as np
    cuda = cuda or _cuda
    cp = cuda.load_cupy()
    if module is None:
        module = cuda.compile_module(wp.source, name=os.path.basename(wp.path.split("@")[0]) + ".whole.cu")
    case = case or make_case(wp)
    cpl = wp.compute
    T, n = wp.threads, wp.stages
    memo = wp.__dict__.setdefault("_tables", {})      # the tables do not depend on the case: built once

    def once(key, f, *a):
        if key not in memo:
            memo[key] = f(*a)
        return memo[key]
    inp = compute_inputs(wp, case)
    inp["digit"] = digit
    inp["gimg"] = host_images(wp, case, inp, marker)
    args, keep = [], {}

    def dev(a, dt):
        x = np.asarray(a)
        if x.size and dt is np.int32 and (x.min() < -(1 << 31) or x.max() >= 1 << 31):
            raise HarnessError("an offset or index table does not fit the kernel's 32-bit ints "
                               f"(values {int(x.min())}..{int(x.max())}): run a smaller instance")
        return cp.asarray(np.ascontiguousarray(x.astype(dt))).ravel()

    def g2s_args(op, path):
        goff, soff = once(("g2s", op), g2s_tables, path, n)
        raw = np.concatenate([np.zeros(path.g_base, np.uint8), inp["gimg"][op].view(np.uint8)])
        out = [_global_input(cp, raw, case, path.g_base), dev(goff, np.int32), dev(soff, np.int32)]
        if path.g2s.residue:
            r0, r1 = case.ops[op]["r"]
            out += [dev(once(("crd", op), coord_table, path.g2s), np.int32), np.int32(r0), np.int32(r1), np.int32(bool(case.zclamp))]
        return out
    for op, path in wp.ops.items():
        X = inp[op]
        if path.copy is None and path.g2s is not None:
            keep["img_" + op] = cp.zeros(path.span, dtype=uint_np(path.bits))
            args += g2s_args(op, path) + [keep["img_" + op]]
        elif path.copy is not None:
            addr, slot = once(("copy", op), copy_tables, path, n)
            args += [dev(addr, np.int32), dev(slot, np.int32)]
            if path.g2s is not None:
                args += g2s_args(op, path)
            else:
                vals = operand_values(wp, op, X, marker, digit)
                args.append(dev(smem_image(path, vals, n, (1 << path.bits) - 1), uint_np(path.bits)))
        else:
            args.append(dev(once(("direct", op, marker), direct_fragments, wp, op, X, marker), uint_np(cpl.frag_bits[op])))
        if marker and path.copy is not None:
            keep[op] = cp.full(n * T * cpl.frag[op], (1 << path.bits) - 1, dtype=uint_np(path.bits))
            args.append(keep[op])
    args.append(dev(once(("cfrag", marker), c_fragments, wp, inp["C"], marker), uint_np(cpl.frag_bits["C"])))
    fab = cpl.frag["A"] + cpl.frag["B"]
    cnt = cp.full(n * T * fab, -7, dtype=cp.int32)
    args.append(cnt)
    fsc = cpl.frag["C"]
    cntc = gout = None
    if wp.c_copy is not None:
        p = wp.c_copy
        U = uint_np(p.bits)
        pz = (1 << p.bits) - 1 if marker else compute_poison(p.model.value_type)
        addr = [x for t in range(T) for x in p.addr[t]]
        slot = [x for t in range(T) for x in p.slot[t]]
        cntc = cp.full(T * fsc, -7, dtype=cp.int32)
        args += [dev(addr, np.int32), dev(slot, np.int32), U(pz), cntc]
        if wp.s2g is not None:
            goff, soff = once(("s2g",), s2g_tables, wp)
            ng = case.c["alloc"]
            gb = wp.s2g.gmem_align % REGION_ALIGN
            lead = gb * 8 // p.bits
            if case.exact:
                graw = _exact_buffer(cp, (lead + ng) * p.bits // 8).view(U)
                graw.fill(U(pz))
            else:
                graw = cp.full(lead + ng + 1, pz, dtype=U)
            gout = graw[lead:lead + ng]
            args += [gout.view(cp.uint8), dev(goff, np.int32), dev(soff, np.int32)]
            if wp.s2g.residue:
                r0, r1 = case.c["r"]
                args += [dev(once(("crd", "C"), coord_table, wp.s2g), np.int32), np.int32(r0), np.int32(r1)]
        else:
            gout = cp.full(p.span, (pz + 1) // 2, dtype=U)
            args.append(gout)
    else:
        pz = compute_poison(cpl.ctype)
        gout = cp.full(T * fsc, pz, dtype=uint_np(cpl.frag_bits["C"]))
        args.append(gout)
    if wp.smem_bytes > 48 * 1024:
        module.function("whole_marker" if marker else "whole_compute").max_dynamic_shared_size_bytes = wp.smem_bytes
    cuda.launch(module, "whole_marker" if marker else "whole_compute", 1, T, tuple(args), shared_mem=wp.smem_bytes)
    got = {op: (cp.asnumpy(k) if op.startswith("img_") else cp.asnumpy(k).reshape(n, T, cpl.frag[op]))
           for op, k in keep.items()}
    return check(wp, marker, inp, got, cp.asnumpy(cnt).reshape(n, T, fab), cp.asnumpy(gout),
                 None if cntc is None else cp.asnumpy(cntc), case)


def _out_targets(wp: WholePlan):
    """``(offsets, element index)`` of every C element in the output: gmem offsets (S2G), smem offsets
    (R2S alone) or ``[T][FS]`` slots (no C copy)."""
    import numpy as np
    if wp.s2g is not None:
        G = np.asarray(wp.s2g.gmem.table({}), dtype=np.int64)
        return G, np.arange(len(G)), "gmem (through [copy.C] and [s2g.C])"
    if wp.c_copy is not None:
        offs = np.asarray(wp.c_copy.model.addr_table, dtype=np.int64)
        return offs, np.arange(len(offs)), "smem (through [copy.C])"
    dm = wp.compute.direct["C"]
    els = np.array([e for t in range(wp.threads) for e in dm[t]], dtype=np.int64)
    return np.arange(len(els)), els, "the thread's C partition (no [copy.C])"


def _expected_ids(wp: WholePlan, op: str, case: Case, S: int, img, digit: int = 0):
    """``(want, known)`` over ``[stage * S + i]``: what the shared image of G2S operand ``op`` holds for
    tile element ``i`` of each stage in marker mode -- its id inside the problem, 0 where the predicate
    zero-fills it, and where an executing instruction reads outside the problem, the gmem image's word
    at the address it reads (``known`` False past the allocation: memcheck's part)."""
    import numpy as np
    co, path = case.ops[op], wp.ops[op]
    img = np.asarray(img).astype(np.int64)
    want = np.zeros(wp.stages * S, dtype=np.int64)
    known = np.ones(wp.stages * S, dtype=bool)
    oobm = np.tile(co["oob"], wp.stages)
    i = np.arange(S)
    for s in range(wp.stages):
        w = np.where(co["inside"], marker_digit(wp, op, s * S + i, digit), 0)
        at = s * path.g_span + co["src"]
        ok = (at >= 0) & (at < len(img))
        oob = co["oob"]
        w[oob & ok] = img[at[oob & ok]]
        want[s * S:(s + 1) * S] = w
        known[s * S:(s + 1) * S] = ~oob | ok
    return want, known, oobm


def check(wp: WholePlan, marker: bool, inp: dict, frags: dict, cnt, out, cntc, case: Case | None = None) -> dict:
    """Compare one launch's outputs with the model (marker) or numpy (compute).  Under a partial-tile
    ``case``, what the prover's predicate says: elements outside the problem zero-filled or (an executing
    instruction's) read from outside it, C elements outside the problem left as poison or written."""
    import numpy as np
    case = case or make_case(wp)
    gimg = inp.get("gimg") or host_images(wp, case, inp, marker)
    cpl = wp.compute
    M = cpl.M
    res: dict[str, Any] = {"mode": "marker" if marker else "compute", "stages": wp.stages, "case": case.text()}
    if not case.full:
        res.update(residue=dict(case.residue), label=case.label, zero_filled=sum(int(o["zero"].sum()) for o in case.ops.values()),
                   oob_reads=case.oob_reads, oob_writes=case.oob_writes)
    if case.exact:
        res["exact_allocation"] = True
    unchecked = seen = 0
    problems = []
    fa = cpl.frag["A"]
    for op, path in wp.ops.items():
        c = cnt[:, :, :fa] if op == "A" else cnt[:, :, fa:]
        if not (c == 1).all():
            problems.append(f"{op}: some fragment slot written {sorted(set(np.unique(c).tolist()) - {1})} times")
    if cntc is not None and not (cntc == 1).all():
        problems.append("C: some fragment slot read by [copy.C] other than once")
    if marker:
        for key in [k for k in frags if k.startswith("img_")]:
            op = key[4:]
            path = wp.ops[op]
            img = frags.pop(key).astype(np.int64)
            S = path.size
            pos = np.asarray(path.stage_table, dtype=np.int64)
            want, known, oobm = _expected_ids(wp, op, case, S, gimg[op], inp.get("digit", 0))
            bad = (img[pos] != want) & known
            seen += int(((img[pos] == want) & known & oobm).sum())
            unchecked += int((~known).sum())
            stray = np.ones(img.shape, dtype=bool)
            stray[pos] = False
            res[f"smem_{op}"] = int(bad.size)
            res[f"mismatches_smem_{op}"] = int(bad.sum())
            res[f"stray_smem_{op}"] = int((img[stray] != as_int64((1 << path.bits) - 1)).sum())
            if bad.any() or res[f"stray_smem_{op}"]:
                i = int(np.nonzero(bad)[0][0]) if bad.any() else -1
                problems.append(f"{op}: the shared image after G2S differs from the model at "
                                f"{int(bad.sum())} of {bad.size} elements" + (f" (first: element {i % S} of stage {i // S} "
                                f"at offset {int(pos[i])} holds {int(img[pos[i]])}, want {int(want[i])})" if i >= 0 else "")
                                + f", {res[f'stray_smem_{op}']} stray writes")
        for op, got in frags.items():
            path = wp.ops[op]
            m = path.copy.model
            S = path.size
            e = np.array([[m.expected[t] for t in range(wp.threads)]] * wp.stages, dtype=np.int64)
            st = np.arange(wp.stages).reshape(-1, 1, 1)
            if path.g2s is not None:
                want, known, oobm = _expected_ids(wp, op, case, S, gimg[op], inp.get("digit", 0))
                exp, kn, om = want[st * S + e], known[st * S + e], oobm[st * S + e]
            else:
                exp, kn, om = (marker_digit(wp, op, st * S + e, inp.get("digit", 0)), np.ones(e.shape, dtype=bool),
                               np.zeros(e.shape, dtype=bool))
            g = got.astype(np.int64)
            bad = (g != exp) & kn
            seen += int(((g == exp) & kn & om).sum())
            unchecked += int((~kn).sum())
            res[f"slots_{op}"] = int(bad.size)
            res[f"mismatches_{op}"] = int(bad.sum())
            if bad.any():
                s, t, q = (int(x[0]) for x in np.nonzero(bad))
                gi = int(g[s, t, q])
                ex = int(exp[s, t, q])
                problems.append(f"{op}: stage {s} thread {t} slot {q} holds "
                                f"{'poison' if gi == as_int64((1 << path.bits) - 1) else m.name(gi % S) + f' of stage {gi // S}'}, "
                                f"the MMA expects {m.name(int(e[s, t, q]))}"
                                + ("" if ex == s * S + int(e[s, t, q]) else f" (under the predicate: {ex})"))
    offs, els, where = _out_targets(wp)
    res["output"] = where
    o = out.astype(np.int64)
    written = np.ones(len(offs), dtype=bool)
    if wp.s2g is not None and case.c is not None:
        written = case.c["inside"] | case.c["oob"]
    inbuf = offs < len(o)
    unchecked += int((~inbuf).sum())
    if marker:
        pz = as_int64((1 << (wp.c_copy.bits if wp.c_copy is not None else cpl.frag_bits["C"])) - 1)
        want = els
        got = np.where(inbuf, o[np.minimum(offs, len(o) - 1)], pz)
        bad = np.where(written, got != want, got != pz) & inbuf
    else:
        pz = as_int64(compute_poison(cpl.out_type if wp.c_copy is not None else cpl.ctype))
        t = cpl.out_type if wp.c_copy is not None else cpl.ctype
        raw = np.where(inbuf, o[np.minimum(offs, len(o) - 1)], pz)
        vals = np.asarray(decode(raw, t), dtype=np.float64)
        if wp.c_copy is None:
            allowed = accepted_values(inp["parts"], M, [[(t, e)] for t in range(wp.threads) for e in cpl.direct["C"][t]])
        else:
            allowed = accepted_values(inp["parts"], M, store_pairs(cpl.direct["C"], offs))
        want = allowed[:, 0]
        ok = (vals[:, None] == allowed).any(axis=1)
        bad = np.where(written, (raw == pz) | ~np.isfinite(vals) | ~ok, raw != pz) & inbuf
        res["value_range"], res["c_range"] = inp["rv"], inp["cr"]
        res["K_total"] = cpl.K * wp.stages
    res["elements"] = int(bad.size)
    res["mismatches"] = int(bad.sum())
    if case.oob_reads:
        res["oob_read_seen"] = seen           # values read from outside the problem, where the prover says
    if case.oob_writes:
        res["oob_written_seen"] = int((~bad & inbuf & case.c["oob"]).sum())
    if not written.all():
        res["left_unwritten"] = int((~written).sum())
    if bad.any():
        i = int(np.nonzero(bad)[0][0])
        problems.append(f"C element ({els[i] % M},{els[i] // M}) at offset {int(offs[i])}: gpu {int(o[offs[i]])} "
                        f"(raw), want " + (f"{int(want[i])}" if written[i] else "poison (outside the problem, not written)"))
    if wp.c_copy is not None:
        stray = np.ones(o.shape, dtype=bool)
        stray[offs[inbuf]] = False
        nstray = int((o[stray] != pz).sum())
        res["stray_writes"] = nstray
        if nstray:
            problems.append(f"{nstray} output words outside the tile's offsets are not poison")
    if unchecked:
        res["unchecked_past_allocation"] = unchecked
    res["problems"] = problems
    res["status"] = "pass" if not problems else "fail"
    return res


def run_whole(spec, *, exact: bool = False, zclamp: bool = False, cases=None) -> dict:
    """Plan, compile and run one configuration instance: the full tile (marker mode, then compute mode),
    then every partial tile of :func:`residue_cases` (``cases``: a list of ``(label, {dim: r})`` instead).
    ``exact``: global buffers end at the problem's last element (for compute-sanitizer's memcheck);
    ``zclamp``: a predicated-off ``cp.async`` reads from the tile's base instead of its own address."""
    t0 = time.perf_counter()
    out: dict[str, Any] = {"path": str(getattr(spec, "path", spec))}
    try:
        wp = plan_whole(spec)
    except HarnessError as e:
        out.update(status="skipped", reason=str(e))
        return out
    limit = cuda.max_dynamic_shared_memory()
    if wp.smem_bytes > limit:       # a launch would be refused: the capacity is the prover's in_bounds[stages]
        out.update(status="skipped", smem_bytes=wp.smem_bytes,
                   reason=f"the whole path needs {wp.smem_bytes} bytes of shared memory; this GPU gives a block "
                          f"at most {limit}")
        return out
    a, b = wp.ops["A"], wp.ops["B"]
    out.update(stages=wp.stages, threads=wp.threads, smem_bytes=wp.smem_bytes, M=a.rows or wp.compute.M,
               N=b.rows or wp.compute.N, K=a.kt or b.kt or wp.compute.K, route=route_text(wp))
    if wp.dims:
        out["residue_dims"] = {d: {"extent": e, "residues": _span_text(rs)} for d, (e, rs) in wp.dims.items()}
    if exact:
        out["exact_allocation"] = True
    stage = "compile"
    parts = []
    try:
        mod = cuda.compile_module(wp.source, name=os.path.basename(out["path"].split("@")[0]) + ".whole.cu")
        if cases is None or any(not r for _l, r in cases):
            full = make_case(wp, exact=exact, zclamp=zclamp)
            for marker in ((True,) if wp.marker_only else (True, False)):
                stage = "marker" if marker else "compute"
                out[stage] = run_marker(wp, cuda, mod, full) if marker else run_plan(wp, False, cuda, mod, full)
                parts.append(out[stage])
            if wp.marker_only:
                out["compute_skip"] = wp.marker_only
        for label, r in (wp.cases if cases is None else [c for c in cases if c[1]]):
            c = make_case(wp, r, label, exact=exact, zclamp=zclamp)
            e: dict[str, Any] = {"label": label, "residue": dict(c.residue), "oob_reads": c.oob_reads,
                                 "oob_writes": c.oob_writes}
            out.setdefault("residue", []).append(e)
            stage = f"residue {c.text()} marker"
            e["marker"] = run_marker(wp, cuda, mod, c)
            parts.append(e["marker"])
            if wp.marker_only:
                pass
            elif c.oob_reads:
                e["compute_skip"] = "the predicate lets instructions read outside the problem: marker mode shows what they read"
            else:
                stage = f"residue {c.text()} compute"
                e["compute"] = run_plan(wp, False, cuda, mod, c)
                parts.append(e["compute"])
            e["status"] = "pass" if all(x["status"] == "pass" for x in (e["marker"], e.get("compute")) if x) else "fail"
    except Exception as e:  # noqa: BLE001 - a fault is a result (refutations that fault run in their own process)
        msg = f"{type(e).__name__}: " + " ".join(str(e).split())
        out["error"] = {"stage": stage, "message": msg[:1500], "sticky": is_sticky(msg)}
        if not isinstance(e, cuda.CudaError):
            out["error"]["where"] = cuda.error_site(e)
    out["status"] = ("error" if out.get("error") else
                     "pass" if parts and all(p["status"] == "pass" for p in parts) else "fail")
    out["seconds"] = round(time.perf_counter() - t0, 3)
    return out


def _span_text(rs) -> str:
    return f"{rs[0]}..{rs[-1]}" if len(rs) > 3 and rs == list(range(rs[0], rs[-1] + 1)) else ", ".join(map(str, rs))


def residue_summary(w: dict) -> str:
    """One line on a :func:`run_whole` result's partial tiles (empty without any)."""
    rs = w.get("residue") or []
    if not rs:
        return ""
    ok = sum(1 for e in rs if e.get("status") == "pass")
    oob = [e for e in rs if e.get("oob_reads") or e.get("oob_writes")]
    txt = f"{ok}/{len(rs)} partial tiles as the predicate says"
    for e in oob:
        m = e.get("marker") or {}
        txt += (f"; {e['label']} ({', '.join(f'{d} = {v}' for d, v in sorted(e['residue'].items()))}): "
                f"{e['oob_reads']} elements read and {e['oob_writes']} written outside the problem predicted, "
                f"{m.get('oob_read_seen', 0) + m.get('oob_written_seen', 0)} seen")
    return txt


def route_text(wp: WholePlan) -> str:
    """One line naming the instructions of the path, in order."""
    steps = []
    for op, path in wp.ops.items():
        if path.g2s is not None:
            m = path.g2s
            ins = f"cp.async.{'cg' if 'CACHEGLOBAL' in m.atom.op.name else 'ca'} {m.vb}B" if m.atom.op.kind == "cp_async" \
                else f"ld.global+st.shared {m.vb}B"
            steps.append(f"{op}: {ins}")
        if path.copy is not None:
            steps.append(f"{op}: {path.copy.ptx}")
        elif path.g2s is not None:
            steps.append(f"{op}: shared image read back (no [copy.{op}])")
        else:
            steps.append(f"{op}: registers (TiledMMA partition)")
    if not wp.marker_only:
        steps.append(wp.mma.atom.ptx.split()[0] if wp.mma.atom.ptx else wp.mma.atom.name)
    if wp.c_copy is not None:
        if wp.compute.convert:
            steps.append(f"cvt {wp.compute.convert}")
        steps.append(f"C: {wp.c_copy.ptx}")
    if wp.s2g is not None:
        steps.append(f"C: ld.shared+st.global {wp.s2g.vb}B")
    return " -> ".join(steps) + (f" ({wp.stages} stages)" if wp.stages > 1 else "")


def memcheck_summary(text: str) -> dict:
    """What ``compute-sanitizer --tool memcheck`` reported: the error count of its summary, the kinds of
    errors (``Invalid __global__ read of size 16 bytes``: count), the threads, and for each access how many
    of its bytes lay past the end of the nearest allocation (from ``Access to 0x..`` and ``allocation at
    0x.. of size N bytes``; older versions say ``N bytes after the nearest allocation``)."""
    import re
    kinds: dict = {}
    threads, past = [], []
    errors = None
    size = addr = None
    for line in text.splitlines():
        body = line.lstrip("= ").strip()
        m = re.match(r"(Invalid __\w+__ (?:read|write|atomic) of size (\d+) bytes?)", body)
        if m:
            kinds[m.group(1)] = kinds.get(m.group(1), 0) + 1
            size, addr = int(m.group(2)), None
        m = re.match(r"by thread \((\d+),", body)
        if m:
            threads.append(int(m.group(1)))
        m = re.match(r"(?:Access to|Address) (0x[0-9a-fA-F]+)", body)
        if m:
            addr = int(m.group(1), 16)
        m = re.search(r"is (\d+) bytes? after the nearest allocation", body)
        if m:
            past.append(int(m.group(1)) + (size or 1) if "inside" not in body else None)
        else:
            m = re.search(r"allocation at (0x[0-9a-fA-F]+) of size ([\d,]+) bytes", body)
            if m and addr is not None and size is not None:
                past.append(addr + size - int(m.group(1), 16) - int(m.group(2).replace(",", "")))
        m = re.match(r"ERROR SUMMARY: (\d+) errors?", body)
        if m:
            errors = (errors or 0) + int(m.group(1))
    return {"errors": errors, "kinds": kinds, "threads": threads, "bytes_past_allocation": past}


def main(argv=None) -> int:
    """``python -m symlayout.harness.wholepath [--exact] [--zclamp] [--cases all|full|counterexample] SPEC...``:
    run the whole path of configuration instances, one JSON line per instance (``RESULT {...}``); exit 0
    when every run did what the prover predicts, 1 otherwise (an expected out-of-bounds access is a
    prediction).  ``--exact`` sizes every global buffer to the problem (its own ``cudaMalloc``), so that
    ``compute-sanitizer --tool memcheck`` reports any byte read or written past it."""
    import argparse
    import json
    ap = argparse.ArgumentParser(prog="python -m symlayout.harness.wholepath")
    ap.add_argument("specs", nargs="+", metavar="SPEC",
                    help="path@sym=value,... (a configuration instance; a parametric path: its first instance)")
    ap.add_argument("--exact", action="store_true", help="global buffers end at the problem's last element")
    ap.add_argument("--zclamp", action="store_true", help="predicated-off cp.async read from the tile's base")
    ap.add_argument("--cases", choices=("all", "full", "partial", "counterexample"), default="all")
    a = ap.parse_args(argv)
    rc = 0
    for spec in a.specs:
        if "@" not in spec:                        # a parametric family: its first instance
            vals = instance_values(load_config(spec))
            if vals and vals[0]:
                spec = spec + "@" + ",".join(f"{k}={v}" for k, v in vals[0].items())
        cases = None
        if a.cases != "all":
            try:
                wp = plan_whole(spec)
            except HarnessError as e:
                print("RESULT " + json.dumps({"path": spec, "status": "skipped", "reason": str(e)}), flush=True)
                continue
            sel = {"full": lambda lab: False, "partial": lambda lab: "counterexample" not in lab,
                   "counterexample": lambda lab: "counterexample" in lab}[a.cases]
            cases = ([("full tile", {})] if a.cases in ("full", "partial") else []) + [c for c in wp.cases if sel(c[0])]
        w = run_whole(spec, exact=a.exact, zclamp=a.zclamp, cases=cases)
        print("RESULT " + json.dumps(w, default=str), flush=True)
        line = f"{spec}: {w['status']}" + (f" ({w.get('reason') or (w.get('error') or {}).get('message', '')})"
                                           if w["status"] in ("skipped", "error") else "")
        summ = residue_summary(w)
        print(line + (f"; {summ}" if summ else ""), flush=True)
        rc |= w["status"] not in ("pass", "skipped")
    return int(rc)


if __name__ == "__main__":
    import sys
    sys.exit(main())
