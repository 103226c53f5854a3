"""Parametric configurations (``[params]``): every obligation decided by Z3 for
every parameter value in the declared ranges (see :mod:`symlayout.prove.copy.z3backend`).

>>> from symlayout.config import loads_config
>>> cfg = loads_config('''[params]
... m = { min = 1, max = 4096 }
... [mma]
... atom = "SM80_16x8x16_F16F16F16F16_TN"
... layout = "(2,2,1)"
... [copy.A]
... atom = "SM75_U32x2_LDSM_N"
... type = "half_t"
... smem = "(32*m,16):(16,1)"
... [prove]
... properties = ["alignment", "slot_agreement"]
... ''')
>>> from symlayout.prove.engine import prove_config
>>> [(r.property, r.status, r.method) for r in prove_config(cfg).results]
[('alignment', 'proved', 'z3'), ('slot_agreement', 'proved', 'z3')]
"""
from __future__ import annotations

from ..verdict.result import PROVED, REFUTED
from .z3backend import decide, tile_model_for

#: obligations decided for parametric configurations
PARAMETRIC_PROPERTIES = ("coverage", "alignment", "exactly_once", "slot_agreement", "bank_conflicts", "in_bounds",
                         "type_agreement")


def prove_parametric(cfg, mma, cc, props, refuted, timeout_s=None) -> list:
    """Results of ``props`` for one ``[copy.X]`` of a parametric configuration."""
    tm = tile_model_for(mma, cc.operand, cc.atom, cc.element_type, cc.align)
    out = []
    problems: dict = {}                # the properties share one Z3 problem (address terms, tiling checks)
    for p in props:
        if p not in PARAMETRIC_PROPERTIES:
            continue
        r = decide(p, tm, cc.smem, cfg.params, timeout_s, problems=problems)
        r.expected = REFUTED if p in refuted else PROVED
        out.append(r)
    return out
