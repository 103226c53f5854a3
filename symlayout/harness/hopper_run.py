"""``symlayout gpu`` for Hopper configurations: the configuration's own wgmma reads and TMA
loads, run on an SM90 GPU through the probe machinery of :mod:`symlayout.harness.probe_sm90`.

For each descriptor operand the experiments take two of the configuration's wgmma
operand reads (warpgroup 0's first fragment element and the last warpgroup's last one:
the last K-block of the last stage), with the descriptors CuTe builds for them
(:mod:`symlayout.tiled.gmma`), relocated by a multiple of 1024 bytes (the swizzle is a
function of the address modulo 1024).  The probe's kernel scans every A position of
the regions with one-hot values and records which accumulator slots and B positions
each feeds.  Two predictions are compared with what the GPU did:

* **CuTe's**: each element is where the TiledMMA's partition of the smem tensor keeps
  it (the element the kernel author means): ``pass`` when the GPU agrees, ``fail``
  (wrong data) otherwise -- what the prover's ``slot_agreement`` decides;
* **the PTX model's** (what the descriptor reads, :mod:`symlayout.arch.gmma`): must
  agree always (a disagreement is a bug in the model).

Each ``[tma.X]`` runs its first and last box load (a tensor map encoded with CuTe's
``make_tma_copy`` arguments, symbols replaced by small admissible values) into a
shared region filled with a poison value, compared byte for byte with CuTe's smem
layout (``pass``/``fail``) and with the TMA model.  Loads the prover says cannot run
(a destination off the 128-byte grid, a map the driver rejects) are not launched.

Not run here: multicast (needs a cluster launch; the first CTA's slice is loaded
alone), stage-overlap and coverage questions (the prover's), RS A fragments (the
probe's RS experiments cover the fragment; the B operand is run).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from ..arch import gmma as arch
from ..arch import tma as arch_tma
from ..atoms import value_type_info
from ..atoms.gmma import arch_descriptor
from . import probe_sm90 as P, cuda
from ..prove.hopper.obligations import _bases, is_gmma, _substitute, _symbols_of
from ..tiled.gmma import gmma_operand_model
from ..tiled.mma import make_tiled_mma
from ..tiled.tma import tma_model
from ..algebra.layout import Layout
from ..config import find_config_files, load_config, load_configs

_TMA_DTYPE = {1: "UINT8", 2: "UINT16", 4: "UINT32"}


@dataclass
class HopperPlan:
    """The experiments of one configuration, with CuTe's predictions."""
    path: str
    name: str
    wgmma: list = field(default_factory=list)      # (WgmmaConfig, cute addr function, note)
    tma: list = field(default_factory=list)        # (TmaExperiment, cute landing dict, note)
    skipped: list = field(default_factory=list)    # (what, why)


def _round_down(x: int, to: int) -> int:
    return x // to * to


def _operand_read(m, rd, base: int, rows: int):
    """(relocated descriptor, cute address per (row, k), lowest 1024-aligned byte, region bytes)."""
    e = m.bytes
    ptx = m.ptx_addresses(rd, base)
    cute = [m.cute_address(base, o) for o in rd.offsets]
    lo = _round_down(min(min(ptx), min(cute)), 1024)
    hi = max(max(ptx), max(cute)) + e
    d = arch_descriptor(rd.desc._replace(start_address=((base + rd.desc.start_address) & ~15) - lo))
    return d, [a - lo for a in cute], hi - lo


def _record(rec: dict, x: dict, t: float, log) -> None:
    """One experiment's result ``x`` (started at ``t``) into the configuration's record, and its log line."""
    x["seconds"] = round(time.time() - t, 3)
    rec["experiments"].append(x)
    if log:
        print(f"{x['name']:<60} {x['status']} model={x.get('model')} cute_mism={x.get('cute_mismatches')}",
              file=log, flush=True)


def plan(cfg) -> HopperPlan:
    """The GPU experiments of a loaded Hopper configuration."""
    from dataclasses import replace

    out = HopperPlan(cfg.path, cfg.name or "")
    syms = _symbols_of(cfg)
    if syms:                                   # a family: its smallest member runs
        env = {x: cfg.params[str(x)].values()[0] for x in syms if str(x) in cfg.params}
        cfg = replace(cfg, smem={op: replace(sc, layout=_substitute(sc.layout, env)) for op, sc in cfg.smem.items()})
        out.skipped.append(("family", "the member with " + ", ".join(f"{k} = {v}" for k, v in env.items()) + " runs"))
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
    if not is_gmma(mma):
        out.skipped.append(("config", "not an SM90 GMMA configuration"))
        return out
    atom = mma.atom
    pm = atom.ptx_model or {}
    atype = value_type_info(atom.val_type_a)["ptx"]
    btype = value_type_info(atom.val_type_b)["ptx"]
    dtype = pm.get("ctype", "f32")
    n = atom.shape_mnk[1]
    models = {}
    for op, sc in cfg.smem.items():
        m = gmma_operand_model(mma, op, sc.element_type, sc.layout)
        if m.error is not None:
            out.skipped.append((f"wgmma {op}", f"CuTe does not compile the descriptor operand: {m.error}"))
            continue
        models[op] = (m, _bases(sc.align, 16)[-1] if sc.align < 16 else (sc.align if sc.align < 1024 else 0))
    a_regs = pm.get("a_source") == "reg"
    if "B" in models and (a_regs or "A" in models):
        mb, base_b = models["B"]
        picks = sorted({0, len(mb.reads) - 1})
        for i in picks:
            rb = mb.reads[i]
            db, cb, nbb = _operand_read(mb, rb, base_b, mb.rows)
            if a_regs:
                da, ca, nab, la = None, None, 0, 0
            else:
                ma, base_a = models["A"]
                ra = ma.reads[min(i, len(ma.reads) - 1)]
                da, ca, nab = _operand_read(ma, ra, base_a, ma.rows)
            ob = -(-nab // 1024) * 1024
            db = arch.MatrixDescriptor(db.start_address + ob, db.leading_byte_offset, db.stride_byte_offset,
                                       db.base_offset, db.swizzle)
            eb = arch.element_bytes(btype)
            ea = arch.element_bytes(atype)
            name = f"{cfg.name or cfg.path} #{i}"
            wc = P.WgmmaConfig(name, atype, btype, dtype, n, a_regs, "K" if a_regs else models["A"][0].major,
                               mb.major, da, db, 0, nab // ea if not a_regs else 0, ob,
                               -(-nbb // 256) * 256 // eb, note=f"read {i} of {len(mb.reads)}")
            cute_b = [a + ob for a in cb]

            def cute_addr(desc, major, t, row, k, _wc=wc, _ca=ca, _cb=cute_b, _rows_a=64, _rows_b=n):
                if desc is _wc.desc_a:
                    return _ca[row + _rows_a * k]
                return _cb[row + _rows_b * k]
            out.wgmma.append((wc, cute_addr, wc.note))
    elif models:
        out.skipped.append(("wgmma", "both descriptor operands are needed for a wgmma experiment"))
    for op, tc in cfg.tma.items():
        sc = cfg.smem[op]
        t = tma_model(sc.element_type, _concrete(tc.gmem, cfg), sc.layout, tc.box, tc.multicast, tc.atom, tc.swizzle)
        if t.error is not None or t.copy is None:
            out.skipped.append((f"tma {op}", f"CuTe's make_tma_copy fails: {t.error}"))
            continue
        if any(len(js) != 1 for js in t.copy.basis):
            out.skipped.append((f"tma {op}", "merged global modes: not run"))
            continue
        base = sc.align if sc.align < 1024 else 0
        probs = t.copy.encode_problems()
        if probs:
            out.skipped.append((f"tma {op}", f"the driver rejects the map: {'; '.join(probs)}"))
            continue
        for w in sorted({0, len(t.writes) - 1}, key=int):
            wr = t.writes[w]
            if (base + wr.dst) % arch_tma.SMEM_ALIGN:
                out.skipped.append((f"tma {op} box {w}", f"destination {base + wr.dst} is not 128-byte aligned "
                                                         "(cp.async.bulk.tensor would fault)"))
                continue
            lo = _round_down(base + wr.dst, 1024)
            land = {}
            for c, tco, a in t.elements(wr):
                if tco is not None:
                    land[c] = t.cute_address(base, wr.stage, tco) - lo
            origin = []
            for d, js in enumerate(t.copy.basis):
                j = js[0]
                origin.append(wr.origin[j] if j < len(wr.origin) else 0)
            e = t.bytes
            exp = P.TmaExperiment(f"{cfg.name or cfg.path} [tma.{op}] box {w}", _TMA_DTYPE[e],
                                  tuple(int(x) for x in t.copy.global_dim),
                                  tuple(int(x) for x in t.copy.global_strides), tuple(t.copy.box_dim), t.swizzle,
                                  tuple(origin), base + wr.dst - lo, note=f"box {w} of {len(t.writes)}")
            if exp.rank > 3:
                out.skipped.append((exp.name, "rank > 3 tensor map: the probe kernel loads 2-D and 3-D boxes"))
                continue
            out.tma.append((exp, land, exp.note))
    return out


def _concrete(gmem, cfg):
    """The gmem layout with every symbol replaced by a small admissible value (>= 256)."""
    if gmem is None or not cfg.params:
        return gmem
    subs = {}
    for p in cfg.params.values():
        v = max(p.min, 256)
        v = -(-v // p.multiple_of) * p.multiple_of
        subs[p.symbol] = min(v, p.max) if v <= p.max else p.max
    def ev(x):
        if isinstance(x, tuple):
            return tuple(ev(y) for y in x)
        return int(x.subs(subs)) if hasattr(x, "subs") else int(x)
    return Layout(ev(tuple(gmem.shape)), ev(tuple(gmem.stride)))


def split_hopper(paths) -> tuple[list, list]:
    """(other configuration files, Hopper configuration files) of ``paths`` (files or directories)."""
    other, hopper = [], []
    for f in find_config_files(paths):
        try:
            cfg = load_config(f)
        except Exception:
            other.append(f)               # the configuration runner reports it
            continue
        (hopper if getattr(cfg, "smem", None) else other).append(f)
    return other, hopper


def hopper_ok(res: dict) -> bool:
    """Every experiment ran, the PTX model agreed with the GPU everywhere, and configurations
    that expect no refutation passed (CuTe's layout is what the GPU did)."""
    for r in res["results"]:
        try:
            e = load_config(r["path"]).expect
            expects = bool(e.refuted or getattr(e, "refuted_operands", None))
        except Exception:
            expects = False
        for x in r["experiments"]:
            if x["status"] == "error" or x.get("model") == "disagree":
                return False
            if x["status"] == "fail" and not expects:
                return False
    return True


def run_hopper(paths, *, log=None) -> dict:
    """Plan every Hopper configuration of ``paths``, run the experiments on the GPU, compare."""
    import ctypes

    cp = cuda.load_cupy()
    t0 = time.time()
    cfgs = [c for c in load_configs(paths) if getattr(c, "smem", None)]
    plans = [plan(c) for c in cfgs]
    wcs = [w for p in plans for w, _f, _n in p.wgmma]
    cc = cuda.compute_capability()
    mods, errs = P._compile(cuda, cc, wcs) if wcs else ({}, {})
    if not wcs:
        mods["tma_load"] = cuda.compile_module(P._PRELUDE + P._TMA_SOURCE, cc=cc, suffix="a")
    lib = ctypes.CDLL("libcuda.so.1")
    results = []
    for p in plans:
        rec = {"path": p.path, "name": p.name, "experiments": [], "skipped": [list(s) for s in p.skipped]}
        for wc, fn, note in p.wgmma:
            t = time.time()
            try:
                r = P._run_wgmma(cuda, cp, mods[P.kernel_name(wc.kernel_key())], wc)
                obs = r["observed"]
                bad_model = P.compare_wgmma(P.predict_wgmma(wc), obs)
                bad_cute = P.compare_wgmma(P.predict_wgmma(wc, addr=fn), obs)
                x = {"kind": "wgmma", "name": wc.name, "ptx": wc.ptx, "desc_a": P._desc_json(wc.desc_a),
                     "desc_b": P._desc_json(wc.desc_b), "positions": wc.nq,
                     "model": "agree" if not bad_model and not r["overflow"] else "disagree",
                     "model_mismatches": len(bad_model), "cute_mismatches": len(bad_cute),
                     "status": "pass" if not bad_cute and not r["overflow"] else "fail",
                     "first_mismatches": bad_cute[:3], "note": note}
            except Exception as ex:
                x = {"kind": "wgmma", "name": wc.name, "status": "error", "note": f"{type(ex).__name__}: {str(ex)[:500]}"}
            _record(rec, x, t, log)
        for exp, land, note in p.tma:
            t = time.time()
            try:
                x = _tma_loads(cuda, cp, mods["tma_load"], lib, ctypes, exp, land)
                x["note"] = f"{note}; {x['note']}" if x.get("rejected") else note   # the driver's refusal stays said
            except Exception as ex:
                x = {"kind": "tma", "name": exp.name, "status": "error", "note": f"{type(ex).__name__}: {str(ex)[:500]}"}
            _record(rec, x, t, log)
        results.append(rec)
    info = cuda.device_info()
    return {"meta": dict(info, seconds=round(time.time() - t0, 2), compile_errors=errs), "results": results}


def _tma_loads(cuda, cp, mod, lib, ctypes, exp, land: dict) -> dict:
    """Every load of a TMA experiment (one per label digit, :func:`probe_sm90.tma_passes`), each compared
    with the TMA model and with CuTe's landing ``land``; the experiment passes when every load does."""
    passes = P.tma_passes(exp)
    model_bad = cute_bad = 0
    status, mbar = set(), set()
    for q in range(passes):
        r = P._run_tma(cuda, cp, mod, lib, ctypes, exp, digit=q)
        if r.get("rejected"):   # the driver's refusal is the answer: CuTe's landing cannot happen
            return {"kind": "tma", "name": exp.name, "box": list(exp.box_dim), "swizzle": exp.swizzle,
                    "global_dim": list(exp.global_dim), "loads": 0, "status": "fail", "rejected": True,
                    "model": r["status"], "note": r["note"]}
        img = r.get("image")
        if img is None:
            raise RuntimeError(r.get("note", "no image"))
        pred = P.predict_tma(exp, landing=lambda dst, box, e, swz, _l=land: dict(_l), digit=q)
        cute_bad += sum(1 for a, b in zip(pred, img) if a != b)
        model_bad += r["n_mismatches"]
        status.add(r["status"])
        mbar.add(r["mbarrier"])
    ok_bar = mbar == {1}
    return {"kind": "tma", "name": exp.name, "box": list(exp.box_dim), "swizzle": exp.swizzle,
            "dst_off": exp.dst_off, "global_dim": list(exp.global_dim), "loads": passes,
            "model": "agree" if status == {"agree"} else "disagree", "model_mismatches": model_bad,
            "cute_mismatches": cute_bad, "mbarrier": min(mbar) if ok_bar else -1,
            "status": "pass" if not cute_bad and ok_bar else "fail"}


def report_markdown(res: dict) -> str:
    lines = ["| configuration | experiment | GPU vs CuTe's layout | GPU vs PTX model | mismatching positions | note |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in res["results"]:
        for x in r["experiments"]:
            label = x["name"][len(r["name"]):].strip() or x["name"]
            lines.append(f"| {r['name']} | {x['kind']} {label} | {x['status']} | {x.get('model', '-')} "
                         f"| {x.get('cute_mismatches', '-')} | {x.get('note', '')} |")
        for what, why in r["skipped"]:
            lines.append(f"| {r['name']} | {what} | {'(family)' if what == 'family' else 'not run'} | - | - | {why} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    import argparse
    import json
    import os
    ap = argparse.ArgumentParser(prog="python -m symlayout.harness.hopper_run")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    res = run_hopper(a.paths, log=sys.stderr)
    md = report_markdown(res)
    print(md)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "hopper_configs.json"), "w") as f:
            json.dump(res, f, indent=1, default=str)
        with open(os.path.join(a.out, "hopper_configs.md"), "w") as f:
            f.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
