"""Explain a verdict: the route of one fragment slot, or of a result's counterexample.

The operand models are built once per configuration (:func:`operand_models`) and
shared by ``symlayout show``, ``symlayout explain`` and :class:`symlayout.Report`.

>>> from symlayout.config import loads_config
>>> cfg = loads_config('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\nlayout = "(2,2,1)"\\n'
...                    '[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\ntype = "half_t"\\nsmem = "(32,16):(16,1)"\\n')
>>> mma, models = operand_models(cfg)
>>> text, ok = explain_slot(cfg, models["A"], 0, 2)
>>> ok, text.splitlines()[-1]
(True, '  => agrees: delivered A(8,0), expected A(8,0)')
"""
from __future__ import annotations

from ...errors import ConfigError
from ...tiled.mma import make_tiled_mma
from ..copy.model import build_operand_model
from ..copy.story import slot_story
from ..engine import EXHAUSTIVE_LIMIT
from ..verdict.result import REFUTED


#: properties whose counterexample is a fragment slot (explained by its route)
SLOT_PROPERTIES = ("slot_agreement", "exactly_once")


def operand_models(cfg, operand=None):
    """``(tiled_mma, {operand: OperandModel})`` of a concrete ``[mma]`` configuration."""
    if cfg.mma is None:
        raise ConfigError(f"{cfg.path}: has no [mma] table")
    if cfg.params:
        raise ConfigError(f"{cfg.path}: show/explain need a concrete configuration (it has [params])")
    mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
    out = {}
    for op, cc in sorted(cfg.copies.items()):
        if operand and op != operand:
            continue
        n = cc.smem.size()
        if isinstance(n, int) and n > EXHAUSTIVE_LIMIT:
            raise ConfigError(f"{cfg.path}: [copy.{op}] smem has {n} elements; show/explain list every element "
                              f"and stop at {EXHAUSTIVE_LIMIT} (prove decides larger tiles with Z3)")
        out[op] = build_operand_model(mma, None, None, op, cc.atom, cc.route_type, cc.smem, cc.align,
                                      convert=getattr(cc, "convert", False))
    return mma, out


def explain_slot(cfg, m, t: int, s: int):
    """``(text, agrees)``: fragment slot ``s`` of thread ``t`` followed from shared memory."""
    op = m.operand
    if not (0 <= t < m.threads):
        raise ConfigError(f"--thread {t}: the TiledMMA has threads 0..{m.threads - 1}")
    if not (0 <= s < m.frag_size):
        raise ConfigError(f"--slot {s}: thread {t}'s fragment has slots 0..{m.frag_size - 1}")
    w, l = divmod(t, 32)
    for c, call in enumerate(m.calls[t]):
        if s not in call.reg:
            continue
        a = call.reg.index(s)
        want = m.expected[t][s]
        p, e = m.hw.provider(l, a, m.value_bits, m.reg_bits_frag)
        got = m.delivered_address(32 * w + p, c, e)
        smem_addr = int(m.addr_table[want] * m.elem_bytes)
        lines = [f"{cfg.name or cfg.path}: operand {op}, thread {t} (warp {w}, lane {l}), fragment slot {s}",
                 f"  smem layout {m.smem}; {m.name(want)} is element offset {m.addr_table[want]} = byte {smem_addr}"]
        lines += [f"  {i + 1}. {st}" for i, st in enumerate(slot_story(m, w, c, l, a))]
        ok = got == m.addr_table[want]
        idx = m.index_of_address(got)
        lines.append(f"  => {'agrees' if ok else 'DISAGREES'}: delivered {m.name(idx) if idx is not None else got}, "
                     f"expected {m.name(want)}")
        return "\n".join(lines), ok
    raise ConfigError(f"thread {t} slot {s} is not written by any copy call")


def first_refutation(results, operand=None):
    """The refuted result to explain (on ``operand`` when given): the first whose counterexample
    is a fragment slot (:data:`SLOT_PROPERTIES`: its route is the story), else the first
    refutation with a counterexample; None when nothing is refuted."""
    refuted = [r for r in results if r.status == REFUTED and r.counterexample is not None
               and (operand is None or r.operand == operand)]
    slots = [r for r in refuted if r.property in SLOT_PROPERTIES and r.counterexample.slot is not None]
    return (slots or refuted or [None])[0]


def explain_result(cfg, r, models=None):
    """``(text, agrees)`` for a result: its slot's route when the counterexample is a
    fragment slot (:data:`SLOT_PROPERTIES`), else the counterexample's message and route."""
    cx = r.counterexample
    op = r.operand
    name = r.property + (f"[{op}]" if op else "")
    if r.property in SLOT_PROPERTIES and cx.thread is not None and cx.slot is not None and models and op in models:
        text, ok = explain_slot(cfg, models[op], cx.thread, cx.slot)
        return f"{name} is refuted; its counterexample, thread {cx.thread} slot {cx.slot}:\n{text}", ok
    lines = [f"{cfg.name or cfg.path}: {name} is refuted", f"  {cx.message}"]
    if cx.params:
        lines.append("  with " + ", ".join(f"{k} = {v}" for k, v in cx.params.items()))
    for i, st in enumerate(cx.route or []):
        lines.append(f"  {i + 1}. {st}")
    if not cx.route and r.detail:
        lines.append(f"  {r.detail}")
    return "\n".join(lines), False
