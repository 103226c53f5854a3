"""The version-2 data path of a configuration: ``[g2s.X]``, ``[s2g.C]`` and ``[stages]``.

:func:`prove_datapath` is what the engine calls after the ``[copy.X]`` results: one model per
global-memory copy (:mod:`symlayout.prove.datapath.g2s`), the whole route of an operand when its
``[copy.X]`` is there too (a ``slot_agreement`` counterexample follows the element on into the
register slot), and the stage results (:mod:`symlayout.prove.datapath.stages`).

>>> from symlayout.config import loads_config
>>> cfg = loads_config('''[mma]
... atom = "SM80_16x8x16_F32F16F16F32_TN"
... layout = "(2,2,1)"
... [copy.A]
... atom = "SM75_U32x4_LDSM_N"
... type = "half_t"
... smem = "Sw<3,3,3> o (32,64):(64,1)"
... [g2s.A]
... atom = "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"
... type = "half_t"
... thr = "(16,8):(8,1)"
... val = "(1,8)"
... gmem = "(32,64):(256,1)"
... gmem_align = 128
... ''')
>>> sorted({r.status for r in prove_datapath(cfg)})
['proved']
"""
from __future__ import annotations

from ...errors import CuteStaticAssert, SymlayoutError
from ...tiled.mma import make_tiled_mma
from ...atoms.copy import width_mismatch
from ..copy.model import build_operand_model
from .g2s import GLOBAL_PROPERTIES, NotModelled, build_global_model, prove_global, rejection
from ..verdict.result import ERROR, PROVED, REFUTED, Counterexample, Result
from ..verdict.shared import shared
from .stages import prove_stages


def width_refutation(why: str, name: str, refuted) -> Result:
    """``type_agreement`` of a bit-moving copy whose atom's value type is not the elements' width
    (contract 2.1); the copy's other properties are not checked."""
    return Result("type_agreement", REFUTED, operand=name, checked=1, method="exhaustive",
                  counterexample=Counterexample(why), detail="the other properties of this copy are not checked",
                  expected=REFUTED if "type_agreement" in refuted else PROVED)


def _operand_model(cfg, op):
    """The ``[copy.X]`` route model of operand ``op`` (None when there is none or it does not build)."""
    cc = cfg.copies.get(op)
    if cc is None or cfg.mma is None:
        return None
    try:
        mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
        return build_operand_model(mma, None, None, op, cc.atom, cc.route_type, cc.smem, cc.align, convert=cc.convert,
                                   tiled=cc.tiled)
    except SymlayoutError:
        return None


def prove_datapath(cfg, properties=None, memo: dict | None = None) -> list:
    """Results of the global-memory copies and the stages of ``cfg`` (``properties``: default
    ``[prove] properties`` or all); ``memo``: each global-memory copy proved once for every configuration
    with the same :func:`global_key`, each staged buffer once per :func:`~.stages.stage_key`
    (:mod:`symlayout.prove.verdict.shared`)."""
    props = list(properties or cfg.prove.properties or GLOBAL_PROPERTIES)
    refuted = cfg.expect.refuted
    out = []
    for table in (cfg.g2s, cfg.s2g):
        for op, gc in sorted(table.items()):
            out.extend(shared(memo, global_key(cfg, op, gc, props),
                              lambda op=op, gc=gc: prove_global_copy(cfg, op, gc, props),
                              keep=lambda rs: all(r.status != ERROR for r in rs)))
    out.extend(prove_stages(cfg, props, refuted, memo))
    return out


def global_key(cfg, op, gc, props) -> tuple:
    """Everything :func:`prove_global_copy` reads: the ``[g2s.X]`` / ``[s2g.C]`` table, ``[params]``, the
    properties and the refuted ``[expect]`` names, and the operand's ``[copy.X]`` with the TiledMMA (the
    route and the partner's checks)."""
    cc, m = cfg.copies.get(op), cfg.mma
    mma = None if m is None else (m.atom, repr(m.layout), repr(m.permutation))
    return ("global", op, repr(gc), repr(sorted(cfg.params.items())), tuple(props), tuple(sorted(cfg.expect.refuted)),
            repr(cc), mma)


def prove_global_copy(cfg, op, gc, props) -> list:
    """The results of one ``[g2s.X]`` or ``[s2g.C]``."""
    refuted = cfg.expect.refuted
    name = f"{gc.kind}.{op}"
    why = width_mismatch(gc.atom, gc.type, gc.element_type)
    if why is not None:
        return [width_refutation(why, name, refuted)]
    try:
        m = build_global_model(gc, cfg.params)
    except CuteStaticAssert as e:
        return [rejection(e, gc, refuted)]
    except (NotModelled, SymlayoutError) as e:
        return [Result(props[0] if props else "coverage", ERROR, operand=name, detail=str(e),
                       expected=REFUTED if props and props[0] in refuted else PROVED)]
    memo = {}

    def route():
        if "m" not in memo:
            memo["m"] = _operand_model(cfg, op)
        return memo["m"]
    return prove_global(m, props, partner=cfg.copies.get(op), operand_model=route, refuted=refuted)
