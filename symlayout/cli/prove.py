"""The ``prove``, ``show``, ``explain`` and ``cute`` commands.

Exit codes of ``prove`` (``shared/spec/configs.md``): 0 every result as
expected, 1 some expectation unmet (a property refuted unexpectedly, an
expected refutation proved, or a ``vacuous`` result where ``proved`` was
expected), 2 bad input, 3 some result unknown and none wrong.
"""
from __future__ import annotations

import json
import sys
import time

from ..errors import ConfigError, SymlayoutError
from ..prove.result import ERROR, PROVED, REFUTED, UNKNOWN, VACUOUS


def _load_all(paths):
    from ..config import find_config_files, load_config
    out = []
    try:
        files = find_config_files(paths)
    except SymlayoutError as e:
        return [(None, str(e))]
    if not files:
        return [(None, f"no *.toml configuration found under {', '.join(map(str, paths))}")]
    for f in files:
        try:
            out.append((load_config(f), None))
        except SymlayoutError as e:
            out.append((f, str(e)))
    return out


def _prove_one(item):
    cfg, props, timeout, method = item
    from ..prove.engine import prove_config
    return prove_config(cfg, props, method=method, timeout_s=timeout)


def prove_paths(paths, properties=None, jobs: int = 1, timeout_s=None, method="auto"):
    """Load and prove every config under ``paths``; returns a list of ConfigReport (or error entries)."""
    from ..prove.engine import ConfigReport
    loaded = _load_all(paths)
    work, reports = [], []
    for cfg, err in loaded:
        if err is not None:
            reports.append(ConfigReport(str(cfg) if cfg else "", "", error=err))
        else:
            work.append((cfg, properties, timeout_s, method))
    if jobs > 1 and len(work) > 1:
        import multiprocessing as mp
        ctx = mp.get_context("fork") if hasattr(mp, "get_context") else mp
        with ctx.Pool(min(jobs, len(work))) as pool:
            done = pool.map(_prove_one, work, chunksize=max(1, len(work) // (4 * jobs)))
    else:
        done = [_prove_one(w) for w in work]
    return reports + done


def exit_code(reports) -> int:
    """0 as expected, 1 unmet (wrong or vacuous), 2 input error, 3 unknown (and none unmet)."""
    if any(r.error for r in reports):
        return 2
    wrong = unknown = False
    for rep in reports:
        for r in rep.results:
            if r.status == ERROR:
                return 2
            if r.status == UNKNOWN:
                unknown = True
            elif r.status != r.expected:
                wrong = True
    return 1 if wrong else 3 if unknown else 0


def summary(reports) -> dict:
    """Results counted by status (``vacuous`` apart from ``proved``), plus ``unmet``:
    decided results (proved, refuted, vacuous) that are not what was expected."""
    s = {"proved": 0, "refuted": 0, "vacuous": 0, "unknown": 0, "errors": 0, "unmet": 0}
    for rep in reports:
        if rep.error:
            s["errors"] += 1
        for r in rep.results:
            key = {PROVED: "proved", REFUTED: "refuted", VACUOUS: "vacuous", UNKNOWN: "unknown"}.get(r.status, "errors")
            s[key] += 1
            if key in ("proved", "refuted", "vacuous") and not r.as_expected:
                s["unmet"] += 1
    return s


def format_text(reports, verbose: bool = False) -> str:
    """The human report: one line per config and property, counterexamples under it."""
    from ..prove.story import format_route
    lines = []
    for rep in reports:
        title = rep.path + (f"  ({rep.name})" if rep.name else "")
        if rep.error:
            lines.append(f"ERROR    {rep.error}")
            continue
        lines.append(title)
        for r in rep.results:
            tag = r.status.upper()
            note = ""
            if r.status != r.expected:
                note = f"  <-- expected {r.expected.upper()}"
            elif r.expected == REFUTED:
                note = "  (expected)"
            extra = []
            if r.method:
                extra.append(r.method)
            if r.checked is not None:
                extra.append(f"{r.checked} checked")
            for k, v in (r.stats or {}).items():
                extra.append(f"{v} {k.replace('_', ' ')}")
            op = f"[{r.operand}]" if r.operand else ""
            lines.append(f"  {tag:8s} {r.property + op:20s} {r.seconds * 1000:8.1f} ms  {', '.join(extra)}{note}")
            if r.detail:
                lines.append(f"           {r.detail}")
            if r.counterexample is not None:
                cx = r.counterexample
                lines.append(f"           {cx.message}")
                if cx.params:
                    lines.append(f"           with {', '.join(f'{k} = {v}' for k, v in cx.params.items())}")
                if cx.route:
                    lines.append(f"           route: {format_route(cx.route)}")
    s = summary(reports)
    lines.append(f"{s['proved']} proved, {s['refuted']} refuted, {s['vacuous']} vacuous, {s['unknown']} unknown, "
                 f"{s['errors']} errors, {s['unmet']} unmet")
    return "\n".join(lines)


def run_prove(args) -> int:
    """``symlayout prove PATH... [--json] [--jobs N] [--timeout S] [--property P]``."""
    t0 = time.perf_counter()
    props = getattr(args, "property", None) or None
    reports = prove_paths(args.paths, props, getattr(args, "jobs", 1) or 1, getattr(args, "timeout", None),
                          getattr(args, "method", "auto") or "auto")
    code = exit_code(reports)
    if getattr(args, "json", False):
        doc = {"configs": [r.to_json() for r in reports], "summary": summary(reports)}
        print(json.dumps(doc, indent=1))
    else:
        print(format_text(reports))
        print(f"# {time.perf_counter() - t0:.2f} s, exit {code}")
    return code


# ---------------------------------------------------------------- show / explain / cute


def _load_one(path):
    from ..config import load_config
    return load_config(path)


def _models(cfg, operand=None):
    from ..prove.model import build_operand_model
    from ..tiled.mma import make_tiled_mma
    if cfg.mma is None:
        raise ConfigError(f"{cfg.path}: has no [mma] table")
    if cfg.params:
        raise ConfigError(f"{cfg.path}: show/explain need a concrete configuration (it has [params])")
    from ..prove.engine import EXHAUSTIVE_LIMIT
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
    out = {}
    for op, cc in sorted(cfg.copies.items()):
        if operand and op != operand:
            continue
        n = cc.smem.size()
        if isinstance(n, int) and n > EXHAUSTIVE_LIMIT:
            raise ConfigError(f"{cfg.path}: [copy.{op}] smem has {n} elements; show/explain list every element "
                              f"and stop at {EXHAUSTIVE_LIMIT} (prove decides larger tiles with Z3)")
        out[op] = build_operand_model(mma, None, None, op, cc.atom, cc.type, cc.smem, cc.align,
                                      convert=getattr(cc, "convert", False))
    return mma, out


def _write_svg(path, svg):
    """Write a picture; an unwritable path is a one-line input error (exit 2)."""
    try:
        with open(path, "w") as f:
            f.write(svg)
    except OSError as e:
        raise ConfigError(f"--svg {path}: cannot write: {e.strerror or e}") from None


def run_show(args) -> int:
    """``symlayout show CONFIG [--operand X] [--svg FILE] [--thread T]``."""
    from ..prove import pictures
    import os
    svg_path = getattr(args, "svg", None)
    if svg_path:                      # fail before printing anything
        parent = os.path.dirname(os.path.abspath(svg_path))
        if not os.path.isdir(parent):
            raise ConfigError(f"--svg {svg_path}: cannot write: no such directory {parent}")
        if os.path.isdir(svg_path):
            raise ConfigError(f"--svg {svg_path}: cannot write: is a directory")
    cfg = _load_one(args.config)
    if cfg.threadmap is not None:
        from ..prove.threadmaps import show_threadmap
        text, svg = show_threadmap(cfg)
        print(text)
        if getattr(args, "svg", None):
            _write_svg(args.svg, svg)
        return 0
    mma, models = _models(cfg, getattr(args, "operand", None))
    ops = [args.operand] if getattr(args, "operand", None) else (sorted(models) or ["A", "B", "C"])
    parts = []
    for op in ops:
        parts.append(pictures.tv_table(mma, op, models.get(op)))
    print("\n\n".join(parts))
    if getattr(args, "svg", None):
        op = ops[0]
        m = models.get(op)
        hl = None
        if m is not None:
            from ..prove.engine import run_checks
            from ..prove.obligations import PROPERTIES
            for r in run_checks(m, PROPERTIES, method="auto"):
                if r.status == REFUTED and r.counterexample and r.counterexample.element is not None:
                    hl = {tuple(r.counterexample.element): r.property}
                    break
        svg = pictures.tv_svg(mma, op, m, highlight=hl, title=cfg.name or cfg.path)
        _write_svg(args.svg, svg)
        print(f"wrote {args.svg}")
    return 0


def run_explain(args) -> int:
    """``symlayout explain CONFIG --operand A --thread 0 --slot 2``: the route of one element."""
    from ..prove.story import slot_story
    cfg = _load_one(args.config)
    op = args.operand or (sorted(cfg.copies)[0] if cfg.copies else "A")
    mma, models = _models(cfg, op)
    if op not in models:
        raise ConfigError(f"{cfg.path}: no [copy.{op}] table to explain")
    m = models[op]
    t, s = args.thread, args.slot
    if not (0 <= t < m.threads):
        raise ConfigError(f"--thread {t}: the TiledMMA has threads 0..{m.threads - 1}")
    if not (0 <= s < m.frag_size):
        raise ConfigError(f"--slot {s}: thread {t}'s fragment has slots 0..{m.frag_size - 1}")
    w, l = divmod(t, 32)
    for c, call in enumerate(m.calls[t]):
        if s in call.reg:
            a = call.reg.index(s)
            steps = slot_story(m, w, c, l, a)
            want = m.expected[t][s]
            p, e = m.hw.provider(l, a, m.value_bits, m.reg_bits_frag)
            got = m.delivered_address(32 * w + p, c, e)
            print(f"{cfg.name or cfg.path}: operand {op}, thread {t} (warp {w}, lane {l}), fragment slot {s}")
            smem_addr = int(m.addr_table[want] * m.elem_bytes)
            print(f"  smem layout {m.smem}; {m.name(want)} is element offset {m.addr_table[want]} = byte {smem_addr}")
            for i, st in enumerate(steps):
                print(f"  {i + 1}. {st}")
            ok = got == m.addr_table[want]
            print(f"  => {'agrees' if ok else 'DISAGREES'}: delivered {m.name(m.index_of_address(got)) if m.index_of_address(got) is not None else got}, expected {m.name(want)}")
            return 0 if ok else 1
    raise ConfigError(f"thread {t} slot {s} is not written by any copy call")


def run_cute(args) -> int:
    """``symlayout cute CONFIG``: the same configuration as a CuTe C++ snippet."""
    from ..prove.cute_snippet import snippet
    cfg = _load_one(args.config)
    print(snippet(cfg))
    return 0
