"""Prove a configuration: config -> models -> obligations -> verdicts.

>>> from symlayout.prove.engine import prove_operand
>>> rs = prove_operand("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A", "SM75_U32x2_LDSM_N",
...                    "half_t", "(32,16):(16,1)", properties=["alignment", "slot_agreement"])
>>> [(r.property, r.status) for r in rs]
[('alignment', 'proved'), ('slot_agreement', 'proved')]
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..errors import SymlayoutError
from .model import OperandModel, build_operand_model
from .properties import CHECKS, PROPERTIES
from .result import ERROR, PROVED, REFUTED, UNKNOWN, VACUOUS, Counterexample, Result, verdict

#: properties that apply to a TiledMMA with copies (``coalescing`` is for thread maps)
COPY_PROPERTIES = PROPERTIES


@dataclass
class ConfigReport:
    """All results for one configuration file."""
    path: str
    name: str
    results: list = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and all(r.as_expected for r in self.results)

    def to_json(self) -> dict:
        d = {"path": self.path, "name": self.name, "ok": self.ok}
        if self.error:
            d["error"] = self.error
        d["results"] = [r.to_json() for r in self.results]
        return d


def counted(r: Result, model: OperandModel | None) -> Result:
    """Never a PROVED without obligations: a proof that reports no count (Z3) is
    given the count of its obligations on ``model`` (for a parametric
    configuration, the tile model: per rest tile), and 0 obligations is VACUOUS."""
    if r.status == PROVED and r.checked is None and model is not None:
        from .properties import obligations
        r.checked = obligations(model, r.property)
    if r.status == PROVED and r.checked == 0:
        r.status = VACUOUS
    return r


def run_checks(model: OperandModel, properties, expect_refuted=frozenset(), method: str = "auto",
               timeout_s: float | None = None) -> list:
    """Run the named obligations on one operand model."""
    out = []
    for p in properties:
        if p not in CHECKS:
            continue
        if method == "z3":
            from .z3backend import check_z3
            r = check_z3(p, model, timeout_s=timeout_s)
        else:
            r = CHECKS[p](model)
        r = counted(r, model)
        r.expected = REFUTED if p in expect_refuted else PROVED
        out.append(r)
    return out


def prove_operand(mma, atom_layout, permutation, operand, copy_op, value_type, smem, align=128,
                  properties=None, expect_refuted=frozenset(), method="auto", timeout_s=None) -> list:
    """Build one operand's model and prove ``properties`` (default: all)."""
    m = build_operand_model(mma, atom_layout, permutation, operand, copy_op, value_type, smem, align)
    return run_checks(m, properties or COPY_PROPERTIES, expect_refuted, method, timeout_s)


def mma_coverage(mma, operand: str) -> Result:
    """``coverage`` of a TiledMMA operand without a copy (TV layout ownership)."""
    from .properties import tv_coverage
    t0 = time.perf_counter()
    checked, cex = tv_coverage(mma, operand)
    return Result("coverage", verdict(cex, checked), operand=operand, checked=checked, method="exhaustive",
                  counterexample=cex, seconds=time.perf_counter() - t0)


def prove_config(cfg, properties=None, method: str = "auto", timeout_s: float | None = None) -> ConfigReport:
    """Prove every requested property of a loaded :class:`~symlayout.config.Config`."""
    t0 = time.perf_counter()
    rep = ConfigReport(cfg.path, cfg.name or "")
    props = list(properties or cfg.prove.properties or PROPERTIES)
    refuted = cfg.expect.refuted
    timeout_s = timeout_s if timeout_s is not None else cfg.prove.timeout_s
    try:
        if cfg.threadmap is not None:
            from .threadmaps import prove_threadmap
            rep.results.extend(prove_threadmap(cfg, props, method=method, timeout_s=timeout_s))
        elif cfg.mma is not None:
            from ..tiled.mma import make_tiled_mma
            mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
            if not cfg.copies:
                if "coverage" in props:
                    for op in ("A", "B", "C"):
                        r = mma_coverage(mma, op)
                        r.expected = REFUTED if "coverage" in refuted else PROVED
                        rep.results.append(r)
            for op, cc in sorted(cfg.copies.items()):
                if cfg.params:
                    from .parametric import prove_parametric
                    from .z3backend import tile_model_for
                    rs = prove_parametric(cfg, mma, cc, props, refuted, timeout_s=timeout_s)
                    if any(r.status == PROVED for r in rs):
                        tm = tile_model_for(mma, cc.operand, cc.atom, cc.type, cc.align)
                        rs = [counted(r, tm) for r in rs]
                    rep.results.extend(rs)
                    continue
                m = build_operand_model(mma, None, None, op, cc.atom, cc.type, cc.smem, cc.align)
                rep.results.extend(run_checks(m, props, refuted, method, timeout_s))
        for r in rep.results:                 # the last guard: no PROVED without obligations
            if r.status == PROVED and r.checked == 0:
                r.status = VACUOUS
        for p in refuted:
            if not any(r.property == p for r in rep.results):
                rep.results.append(Result(p, ERROR, detail=f"[expect] names {p!r}, which does not apply here",
                                          expected=REFUTED))
    except SymlayoutError as e:
        rep.error = f"{cfg.path}: {e}"
    rep.seconds = time.perf_counter() - t0
    return rep
