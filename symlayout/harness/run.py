"""Run a configuration's copies and MMA on the GPU and compare with the route model.

For every configuration with ``[copy.A]`` / ``[copy.B]`` / ``[copy.C]`` this
module generates CUDA C++ with inline PTX for the instructions the atoms name
(``ldmatrix`` / ``stmatrix`` ``.x1/.x2/.x4`` [``.trans``], ``cp.async``, plain
``ld.shared`` / ``st.shared`` vectors for ``UniversalCopy``, and the MMA atom's
``mma.sync``).  Nothing here computes a layout: every thread's shared-memory
addresses and fragment slots come from the prover's model
(:func:`symlayout.prove.copy.model.build_operand_model`: ``calls``, ``addr_table``,
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
  thread's C partition) and compared exactly with ``A @ B^T + C`` -- with what each accumulator
  holds: the sum over its own atom's K columns when the TiledMMA splits K over atoms (``(2,1,2)``;
  CuTe's ``gemm`` reduces nothing), and for a stored element any value a store at its address writes.

Aliased elements (a smem layout with a stride-0 mode) share one address, so both checks compare by
address: a marker slot may hold any element stored where the model's element is, and the compute
operands give aliased elements the one value their address holds.

Outputs are poisoned before each launch, every fragment slot counts how often
a copy wrote it, and every launch is followed by a synchronize and an error
check.  A misaligned ``ldmatrix`` row or ``cp.async`` source raises
``cudaErrorMisalignedAddress`` and poisons the CUDA context, so
:func:`run_paths` runs each configuration that expects a refutation (other
than ``bank_conflicts``) in its own subprocess, after the others, and restarts
the worker process whenever a configuration poisons the context.

GPU side imports: :mod:`symlayout.prove.copy.model`, :mod:`symlayout.config`,
:mod:`symlayout.tiled`, :mod:`symlayout.atoms` (no z3), numpy and CuPy (inside
functions).

>>> from symlayout.config import load_config
>>> plan = plan_config(load_config("proofs/seeds/seed_000_A_x2.toml"))   # doctest: +SKIP
>>> "ldmatrix.sync.aligned.m8n8.x2.shared.b16" in plan.source             # doctest: +SKIP
True
"""
from __future__ import annotations

import os
import time
from typing import Any

from .plan import REGION_PAD, ConfigPlan, OperandPlan, accepted_values, alias_resolved, global_offset, \
    load_spec, partial_products, plan_config, store_pairs
from .cuda import is_sticky  # noqa: F401 - the harness's public name for it stays here too
from .values import HarnessError, as_int64, compute_poison, decode, encode, id_digit, id_passes, random_gemm_inputs, \
    uint_np
from . import cuda
from .wholepath import applies, run_whole


#: seed of the compute-mode operands
SEED = 20261129


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
    poison = as_int64((1 << p.bits) - 1)     # as the int64 the outputs are read as
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
        bad = ~same_address(m.addr_table, got, exp) | unwritten
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
        bad = ~same_address(offs, gv, idx) | uw
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


def same_address(addr_table, got, want):
    """Whether id ``got`` names an element stored at the offset of element ``want`` (elementwise): the
    marker compares what lies at an address, so an aliased element (a stride-0 mode) is as good as the
    element the model names.

    >>> same_address([0, 0, 1], [1, 2, 5], [0, 0, 0]).tolist()
    [True, False, False]
    """
    import numpy as np
    offs = np.asarray(addr_table, dtype=np.int64)
    g, w = np.asarray(got, dtype=np.int64), np.asarray(want, dtype=np.int64)
    ok = (g >= 0) & (g < len(offs))
    return ok & (offs[np.where(ok, g, 0)] == offs[w])


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


def compute_inputs(plan: ConfigPlan) -> dict:
    """Random small integers A (M,K), B (N,K), C (M,N), exact in every type on the
    way (inputs, accumulator, the C copy's type), and ``ref = A @ B^T + C``.  Elements of a copied
    operand that share a shared-memory offset (a stride-0 mode) hold one value: the one at the address.
    ``parts[t]``: what thread ``t``'s accumulators hold (its atom's partial sum when K is split)."""
    import numpy as np
    inp = random_gemm_inputs(plan.compute, plan.compute.K, SEED)
    for op in ("A", "B"):
        if op in plan.operands:
            inp[op] = alias_resolved(inp[op], plan.operands[op].model.addr_table)
    inp["ref"] = inp["A"].astype(np.int64) @ inp["B"].astype(np.int64).T + inp["C"]
    inp["parts"] = partial_products(plan.compute, inp["A"], inp["B"], inp["C"])
    return inp


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
    fragment bits without ``[copy.C]``) exactly with ``inp["ref"]``: each accumulator with its atom's
    (partial) sum, each stored element with a value some store at its address writes."""
    import numpy as np
    cpl = plan.compute
    M = cpl.M
    T = plan.threads
    fsc = cpl.frag["C"]
    res: dict[str, Any] = {"M": cpl.M, "N": cpl.N, "K": cpl.K, "issues_per_thread": len(cpl.issues),
                           "mma": plan.mma.atom.ptx, "value_range": inp["rv"], "c_range": inp["cr"],
                           "order": "k outer, then n, m serpentine (CuTe gemm)"}
    res["fragment_writes"] = {str(k): int(v) for k, v in zip(*np.unique(cnt_ab, return_counts=True))}
    o = np.asarray(out)
    if "C" in plan.operands:
        p = plan.operands["C"]
        pz = as_int64(compute_poison(p.model.value_type))
        offs = np.asarray(p.model.addr_table, dtype=np.int64)
        n = len(offs)
        raw = o[offs].astype(np.int64)
        unw = raw == pz
        vals = decode(raw, p.model.value_type)
        allowed = accepted_values(inp["parts"], M, store_pairs(cpl.direct["C"], offs))
        names = [p.model.name(int(i)) for i in range(n)]
        res["stored_through"] = f"[copy.C] {p.ptx}" + (f" after {cpl.convert}" if cpl.convert else "")
    else:
        pz = as_int64(compute_poison(cpl.ctype))
        dmc = cpl.direct["C"]
        raw = o.reshape(T, fsc).ravel().astype(np.int64)
        unw = raw == pz
        vals = decode(raw, cpl.ctype)
        allowed = accepted_values(inp["parts"], M, [[(t, e)] for t in range(T) for e in dmc[t]])
        names = [f"C({e % M},{e // M}) t{t} slot{s}" for t in range(T) for s, e in enumerate(dmc[t])]
        res["stored_through"] = "the thread's C partition (no [copy.C])"
    vals = np.asarray(vals, dtype=np.float64)
    bad = unw | ~np.isfinite(vals) | ~(vals[:, None] == allowed).any(axis=1)
    exp = allowed[:, 0]
    if allowed.shape[1] > 1:
        res["positions_with_several_allowed_values"] = int((~np.isnan(allowed[:, 1])).sum())
    if any(len(set(k)) != plan.compute.K for k in plan.compute.ksets):
        res["k_split"] = "each atom's accumulators hold the sum over its own K columns (CuTe's gemm reduces nothing)"
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


def run_config(cfg_or_path) -> dict:
    """Run one configuration on the GPU (marker per copied operand, then compute)."""
    t0 = time.perf_counter()
    path = str(getattr(cfg_or_path, "path", cfg_or_path))
    res: dict[str, Any] = {"path": path, "marker": {}, "compute": None}
    try:
        plan = plan_config(cfg_or_path)
    except Exception as e:
        res.update(status="skipped", reason=f"{type(e).__name__}: {e}", seconds=time.perf_counter() - t0)
        try:                                  # no [copy.X] to run alone: the whole data path may still run
            cfg = load_spec(path) if isinstance(cfg_or_path, (str, os.PathLike)) else cfg_or_path
        except Exception:
            return res
        if applies(cfg):
            res.update(status="pass", name=cfg.name or "", expect_refuted=sorted(cfg.expect.refuted_somewhere))
            res["copy_skip"] = res.pop("reason")
            _run_whole_path(cfg, res)
            if res["whole"]["status"] == "skipped":
                res.update(status="skipped", reason=res["whole"].get("reason", ""))
            res["seconds"] = round(time.perf_counter() - t0, 3)
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
        res["error"] = {"stage": stage, "message": msg[:2000], "sticky": is_sticky(msg), "where": cuda.error_site(e)}
    res["launches"] = r.launches if r is not None else 0
    res["status"] = _status(res, plan)
    if not (res.get("error") or {}).get("sticky"):
        _run_whole_path(plan.cfg, res)
    res["seconds"] = round(time.perf_counter() - t0, 3)
    return res


def _run_whole_path(cfg, res: dict) -> None:
    """A configuration with global-memory copies also runs its whole data path as one kernel
    (:mod:`.wholepath`); its outcome joins the status (``res["whole"]``)."""
    if not applies(cfg):
        return
    w = run_whole(cfg)
    res["whole"] = w
    if w["status"] == "error":
        res["status"] = "error"
        res.setdefault("error", w["error"])
    elif w["status"] == "fail" and res["status"] != "error":
        res["status"] = "fail"


def _status(res: dict, plan: ConfigPlan) -> str:
    if res.get("error"):
        return "error"
    parts = list(res["marker"].values()) + ([res["compute"]] if res.get("compute") else [])
    if plan.model_errors:
        return "partial" if parts and all(p["status"] == "pass" for p in parts) else "fail"
    if any(p["status"] != "pass" for p in parts):
        return "fail"
    return "pass" if res.get("compute") else "pass (marker only)"
