"""Prove a configuration: config -> models -> obligations -> verdicts.

>>> from symlayout.prove.engine import prove_operand
>>> rs = prove_operand("SM80_16x8x16_F16F16F16F16_TN", "(2,2,1)", None, "A", "SM75_U32x2_LDSM_N",
...                    "half_t", "(32,16):(16,1)", properties=["alignment", "slot_agreement"])
>>> [(r.property, r.status) for r in rs]
[('alignment', 'proved'), ('slot_agreement', 'proved')]
"""
from __future__ import annotations

import dataclasses
import itertools
import signal
import time
from dataclasses import dataclass, field

from ..errors import SymlayoutError
from ..atoms import value_type_bits
from ..atoms.copy import make_copy_atom, moves_bits, width_mismatch
from ..atoms.narrow_matrix import source_bits
from ..atoms.sm120 import operand_element_type
from ..algebra import int_tuple as it
from ..algebra.composed import ComposedLayout
from ..algebra.layout import Layout
from ..algebra.symbolic import collect_conditions
from ..algebra.z3terms import condition_z3
from ..algebra.z3lock import serialized
from ..tiled.copy import make_tiled_copy_X
from ..tiled.mma import make_tiled_mma
from .copy.model import (CuteRejects, OperandModel, build_operand_model, copy_vector_width,
                         cute_build_check, fragment_type, stand_in_tile)
from .copy.obligations import CHECKS, PROPERTIES, fragment_width_mismatch, obligations, tv_coverage
from .copy.widening import agreement_detail, element_route, involved, smem_slot, widening_problem     # issue 29: padded fp4/fp6 smem
from .hopper.obligations import HOPPER_PROPERTIES, is_gmma_atom, prove_hopper
from .blackwell.obligations import BLACKWELL_PROPERTIES, prove_blackwell      # Version 3: SM100 (issue 28)
from .blackwell.tmem import TMEM_PROPERTIES, prove_tmem                         # Version 3: TMEM (issue 28)
from .blackwell.sf_registers import SF_REGISTER_PROPERTIES, sf_register_results  # issue 29: SM120 [sf.X]
from .datapath.path import prove_datapath, width_refutation
from .kernel.parts import prove_kernel                     # issue 31: [reuse.X] and the rest of the kernel
from .verdict.expect import apply_expectations
from .copy.suggest import TOO_FEW_VALS, too_few_vals_fix
from .verdict.shared import shared
from .verdict.result import ERROR, PROVED, REFUTED, UNKNOWN, VACUOUS, Counterexample, Result, verdict

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
    rejected: set = field(default_factory=set)    # operands whose copy CuTe does not compile
    internal: bool = False                         # ``error`` is a bug in symlayout, not bad input

    @property
    def ok(self) -> bool:
        return self.error is None and all(r.as_expected for r in self.results)

    def to_json(self) -> dict:
        d = {"path": self.path, "name": self.name, "ok": self.ok}
        if self.error:
            d["error"] = self.error
        if self.internal:
            d["internal"] = True
        d["results"] = [r.to_json() for r in self.results]
        return d


def counted(r: Result, model: OperandModel | None) -> Result:
    """Never a PROVED without obligations: a proof that reports no count (Z3) is
    given the count of its obligations on ``model`` (for a parametric
    configuration, the tile model: per rest tile), and 0 obligations is VACUOUS."""
    if r.status == PROVED and r.checked is None and model is not None:
        r.checked = obligations(model, r.property)
    if r.status == PROVED and r.checked == 0:
        r.status = VACUOUS
    return r


def run_checks(model: OperandModel, properties, expect_refuted=frozenset(), method: str = "auto",
               timeout_s: float | None = None) -> list:
    """Run the named obligations on one operand model."""
    out = []
    tm = None
    for p in properties:
        if p not in CHECKS:
            continue
        r = fragment_width_mismatch(model, p)        # (the fragment's bytes, whatever the smem layout)
        if r is not None:
            pass
        elif method == "z3" and not model.cute_routes:   # (else not a layout function: exhaustive)
            from .copy.z3backend import decide     # lazy: the Z3 decider's start-up, see _prove_by_z3
            tm = tm or stand_in_tile(model)
            r = decide(p, tm, model.smem, {}, timeout_s)
        else:
            r = CHECKS[p](model)
        r = counted(r, model)
        r.expected = REFUTED if p in expect_refuted else PROVED
        out.append(r)
    return out


def prove_operand(mma, atom_layout, permutation, operand, copy_op, value_type, smem, align=128,
                  properties=None, expect_refuted=frozenset(), method="auto", timeout_s=None) -> list:
    """Build one operand's model and prove ``properties`` (default: all); a configuration
    CuTe does not compile gives the one refutation that explains it."""
    if not hasattr(mma, "thrfrg_A"):
        mma = make_tiled_mma(mma, atom_layout, permutation)
    try:
        cute_build_check(mma, operand, copy_op, value_type, smem)
        m = build_operand_model(mma, None, None, operand, copy_op, value_type, smem, align)
    except CuteRejects as e:
        return [rejection_result(e, operand, expect_refuted, mma, copy_op, value_type)]
    return run_checks(m, properties or COPY_PROPERTIES, expect_refuted, method, timeout_s)


def mma_coverage(mma, operand: str) -> Result:
    """``coverage`` of a TiledMMA operand without a copy (TV layout ownership)."""
    t0 = time.perf_counter()
    checked, cex = tv_coverage(mma, operand)
    return Result("coverage", verdict(cex, checked), operand=operand, checked=checked, method="exhaustive",
                  counterexample=cex, seconds=time.perf_counter() - t0)


def rejection_result(e: CuteRejects, operand: str, refuted, mma=None, copy_op=None, value_type=None) -> Result:
    """The refutation of a configuration CuTe does not compile: the property that
    explains it, CuTe's static_assert as the reason (re-derived by replaying what
    CuTe instantiates, :func:`~symlayout.prove.copy.model.cute_build_check`)."""
    why = ""
    if e.property == "type_agreement" and mma is not None:
        ft = fragment_type(mma, operand, value_type)
        if ft and ft != value_type:
            why = f"the copy moves {value_type} but {mma.atom.name} {'accumulates' if operand == 'C' else 'reads'} " \
                  f"{operand} as {ft}; "
    cex = Counterexample(f"{why}CuTe does not compile this configuration: static_assert \"{e.assertion}\" ({e})",
                         extra={"cute_static_assert": e.assertion})
    return Result(e.property, REFUTED, operand=operand, checked=1, method="cute", counterexample=cex,
                  detail="CuTe rejects the configuration at compile time; the other properties are not checked",
                  expected=REFUTED if e.property in refuted else PROVED)


def prove_copy(cfg, mma, cc, props, refuted, method="auto", timeout_s=None):
    """Results for one ``[copy.X]`` and whether CuTe rejects it: CuTe's compile-time checks
    first (a rejection is the refutation of the property that explains it, nothing else is
    checked), then the obligations -- exhaustively, or with Z3 for parametric configurations
    and for tiles beyond :data:`EXHAUSTIVE_LIMIT` elements."""
    op = cc.operand
    convert = getattr(cc, "convert", False)
    if involved(cc.atom, cc.element_type):
        return _prove_padded_copy(cfg, mma, cc, props, refuted, method, timeout_s)
    why = width_mismatch(cc.atom, cc.type, cc.element_type)
    if why is not None:
        return [width_refutation(why, op, refuted)], {op}
    rs, rejected = _prove_copy(cfg, mma, cc, props, refuted, method, timeout_s, convert)
    return element_hint(rs, cc), rejected


def _prove_padded_copy(cfg, mma, cc, props, refuted, method, timeout_s):
    """A copy of fp4/fp6 in the padded source format (a widening ldmatrix, or container storage): the
    route in CuTe's view of the buffer, one byte per element (``Copy_Atom<atom, uint8_t>``, as CUTLASS
    writes it), and ``type_agreement`` from the bits each side keeps the elements in (:mod:`.copy.widening`)."""
    op = cc.operand
    if value_type_bits(cc.type) != 8 and not _packed_read(cc):
        why = (f"Copy_Atom<{cc.atom}, {cc.type}> moves {value_type_bits(cc.type)}-bit values, but a buffer of "
               f"{cc.element_type} is addressed one byte per element: type = \"uint8_t\" (as CUTLASS writes it)")
        return [width_refutation(why, op, refuted)], {op}
    bytes_cc = dataclasses.replace(cc, element=cc.type)
    rs, rejected = _prove_copy(cfg, mma, bytes_cc, props, refuted, method, timeout_s, False)
    return [_padded_agreement(r, cc, mma) if r.property == "type_agreement" and r.method != "cute" else r
            for r in rs], rejected


def _packed_read(cc) -> bool:
    """A bit-moving ``ldmatrix`` of 4-bit values (``Copy_Atom<SM75_U32x4_LDSM_N, uint4_t>``, SM120's NVFP4
    copy) over a buffer of containers: it reads the buffer packed, so only the bits can disagree."""
    return value_type_bits(cc.type) == 4 and source_bits(cc.atom) is None


def _padded_agreement(r: Result, cc, mma) -> Result:
    frag = fragment_type(mma, cc.operand, cc.type)
    want = operand_element_type(mma.atom.name, cc.operand, frag)
    moved = value_type_bits(cc.type)
    why = widening_problem(cc.atom, cc.element_type, cc.operand, want, frag, moved)
    if why is None:
        return dataclasses.replace(r, status=PROVED, counterexample=None,
                                   detail=agreement_detail(cc.atom, cc.element_type, want))
    cex = Counterexample(why, extra={"copy_type": cc.element_type, "mma_type": want})
    bad = smem_slot(cc.atom, cc.element_type, moved=moved)
    if bad is not None and _concrete(cc.smem):
        m = build_operand_model(mma, None, None, cc.operand, cc.atom, cc.type, cc.smem, cc.align)
        where, cex.route = element_route(m, bad[0], cc.element_type, cc.atom)
        for k, v in where.items():
            setattr(cex, k, v)
    return dataclasses.replace(r, status=REFUTED, counterexample=cex, detail="")


def element_hint(results: list, cc) -> list:
    """A ``type_agreement`` refutation that a missing ``element`` may explain says how to state it:
    the MMA reads a type the atom's ``type`` can carry (same width for a bit-moving atom; any for an
    auto-vectorizing copy, whose tensors' types decide) and no ``element`` was given."""
    if cc.element:
        return results
    for r in results:
        cex = r.counterexample
        held = cex.extra.get("mma_type") if r.property == "type_agreement" and r.status == REFUTED and cex else None
        if not held or (moves_bits(cc.atom) and value_type_bits(held) != value_type_bits(cc.type)):
            continue
        hint = f"; if the smem holds {held}, say element = \"{held}\""
        if not cex.message.endswith(hint):          # (a family's members were proved by prove_copy already)
            cex.message += hint
    return results


def _prove_copy(cfg, mma, cc, props, refuted, method, timeout_s, convert):
    op = cc.operand
    if getattr(cc, "tiled", None) is not None and cfg.params and not _concrete(cc.smem) and not _too_large(cc.smem):
        return _prove_members(cfg, mma, cc, props, refuted, method, timeout_s)    # CuTe's checks per member
    try:
        family = bool(cfg.params) and not _concrete(cc.smem)
        decided = True                    # the symbolic replay decided CuTe's checks for every member
        with collect_conditions() as conds:
            try:
                cute_build_check(mma, op, cc.atom, cc.element_type, cc.smem, convert, tiled=getattr(cc, "tiled", None),
                                 atom_type=cc.type)
            except CuteRejects:
                if not family:
                    raise
                decided = False           # a rejection of the symbolic tile: re-validated on its members
            except SymlayoutError:
                if not cfg.params:
                    raise
                decided = False           # symbolic extents the replay cannot slice: replayed member by member
        if family and (conds or not decided):
            hit = _member_rejection(cfg, mma, cc, conds if decided else None, timeout_s)
            if hit is not None:
                if isinstance(hit, str):
                    return [Result(p, UNKNOWN, operand=op, detail=hit) for p in props], set()
                e, at, total = hit
                r = rejection_result(e, op, refuted, mma, cc.atom, cc.element_type)
                r.counterexample.params = at
                r.detail = f"{r.detail}; member {at} of {total}"
                return [r], {op}
        if (cfg.params and not _concrete(cc.smem)) or _too_large(cc.smem):
            if getattr(cc, "tiled", None) is not None:
                raise SymlayoutError(f"[copy.{op}]: not supported: a hand-built TiledCopy (thr/val, tv/tiler) "
                                     "over a very large smem tile")
            return _prove_by_z3(cfg, mma, cc, props, refuted, timeout_s), set()
        m = build_operand_model(mma, None, None, op, cc.atom, cc.element_type, cc.smem, cc.align, convert=convert,
                                tiled=getattr(cc, "tiled", None), atom_type=cc.type)
    except CuteRejects as e:
        r = rejection_result(e, op, refuted, mma, cc.atom, cc.element_type)
        if e.assertion == TOO_FEW_VALS and not cfg.params:     # name the table and suggest what compiles
            r.detail = "; ".join(x for x in (r.detail, too_few_vals_fix(cfg, cc)) if x)
        return [r], {op}
    return run_checks(m, props, refuted, method, timeout_s), set()


#: most members of a parametric smem tile proved one by one (a hand-built [copy.X] over it)
MEMBER_LIMIT = 64

#: most members of a parametric smem tile whose CuTe compile-time checks are replayed one by one, where the
#: symbolic replay cannot decide them (about a millisecond each), and most members at which the side
#: conditions the symbolic replay leaves are evaluated (microseconds each)
REPLAY_LIMIT = 4096
EVAL_LIMIT = 1 << 16


#: Z3's resource limit for deciding the symbolic replay's side conditions over the parameters' ranges
#: (deterministic, unlike a time-out; beyond it the members are enumerated)
CONDITION_RLIMIT = 2_000_000


def _conditions_everywhere(syms, params, conds):
    """Whether every condition of ``conds`` holds at every member (``params`` of ``syms``: ranges and
    ``multiple_of``), by Z3: True; a member (``{name: value}``) where one fails; None if Z3 does not say."""
    try:
        import z3
    except ImportError:
        return None
    try:
        env: dict = {}
        goal = z3.And(*[condition_z3(c, env) for c in conds])
        s = z3.Solver()
        s.set("rlimit", CONDITION_RLIMIT)
        for x, p in zip(syms, params):
            v = env.setdefault(str(x), z3.Int(str(x)))
            lo = -(-p.min // p.multiple_of) * p.multiple_of
            s.add(v >= lo, v <= p.max, v % p.multiple_of == 0)
        s.add(z3.Not(goal))
        r = s.check()
    except Exception:                               # noqa: BLE001 - (not translated: enumerated instead)
        return None
    if r == z3.unsat:
        return True
    if r == z3.sat:
        m = s.model()
        return {str(x): m.eval(env[str(x)], model_completion=True).as_long() for x in syms}
    return None


def _condition_test(syms, conds):
    """``holds(values)``: every condition of ``conds`` is true at the member ``syms = values`` (the
    conditions as Python functions of integers: exact; False where one cannot be evaluated)."""
    import sympy
    from sympy.printing.pycode import pycode
    fns = []
    for c in conds:
        try:
            if "/" in pycode(c.expr):               # (true division, floats: evaluated exactly by sympy)
                fns.append(lambda *v, e=c.expr: e.subs(dict(zip(syms, v))))
            else:
                fns.append(sympy.lambdify(syms, c.expr, modules=["math"]))
        except Exception:                           # noqa: BLE001 - (not printable as Python: never holds)
            return lambda vals: False

    def holds(vals):
        try:
            return all(bool(f(*vals)) for f in fns)
        except Exception:                           # noqa: BLE001 - (not evaluated at this member: replayed)
            return False
    return holds


def _member_rejection(cfg, mma, cc, conds, timeout_s=None):
    """CuTe's compile-time checks of a parametric ``[copy.X]`` for every member of its family, where the
    symbolic replay (:func:`~symlayout.prove.copy.model.cute_build_check` on the symbolic smem) left side
    conditions ``conds`` it could not decide, or could not run at all or rejected the symbolic tile
    (``conds`` None: a symbolic rejection names no member and may not hold for any).

    With conditions: a member where every condition holds compiles as the symbolic replay says; the others
    are replayed concretely.  Without: every member is replayed.  ``None`` when CuTe compiles every member;
    ``(CuteRejects, member, count)`` for the least member it rejects; a string (the reason) when more than
    :data:`REPLAY_LIMIT` members would have to be replayed (or :data:`EVAL_LIMIT` evaluated) before one is
    rejected, or the replays outlast ``timeout_s``: then nothing is proved."""
    op = cc.operand
    syms = _smem_symbols(cc.smem)
    params = [cfg.params.get(str(x)) for x in syms]
    what = "were not decided on the symbolic smem" if conds is None else \
        "left side conditions on the parameters (" + "; ".join(c.text for c in conds[:3]) + ")"
    if any(p is None for p in params):
        return f"not decided: CuTe's compile-time checks of [copy.{op}] {what}, over symbols not in [params]"
    total = 1
    for p in params:
        total *= p.count()
    unknown = (f"not decided: CuTe's compile-time checks of [copy.{op}] {what}; of its {total} members, more "
               f"than {REPLAY_LIMIT} would be replayed one by one: whether CuTe compiles every member is unknown")
    convert = getattr(cc, "convert", False)
    if conds is not None:
        every = _conditions_everywhere(syms, params, conds)
        if every is True:
            return None                             # (Z3: every condition holds at every member)
        if isinstance(every, dict) and total > EVAL_LIMIT:
            env = {x: every[str(x)] for x in syms}  # (a member where one fails: CuTe's verdict there)
            try:
                cute_build_check(mma, op, cc.atom, cc.element_type, _member_smem(cc.smem, env), convert,
                                 tiled=getattr(cc, "tiled", None))
            except CuteRejects as e:
                return e, dict(every), total
    if total > EVAL_LIMIT:
        return unknown
    holds = _condition_test(syms, conds) if conds is not None else None
    replays = 0
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    for vals in itertools.product(*(p.values() for p in params)):
        if holds is not None and holds(vals):
            continue                                # (the symbolic replay holds at this member)
        replays += 1
        if replays > REPLAY_LIMIT:
            return unknown
        if deadline is not None and time.monotonic() > deadline:
            return (f"not decided: CuTe's compile-time checks of [copy.{op}] {what}; the time budget "
                    f"(timeout_s = {timeout_s:g}) was spent after {replays - 1} of its {total} members were "
                    "replayed one by one: whether CuTe compiles every member is unknown")
        env = dict(zip(syms, vals))
        try:
            cute_build_check(mma, op, cc.atom, cc.element_type, _member_smem(cc.smem, env), convert,
                             tiled=getattr(cc, "tiled", None))
        except CuteRejects as e:
            return e, {str(x): v for x, v in env.items()}, total
    return None


def _smem_symbols(smem) -> list:
    inner = smem.inner if getattr(smem, "is_composed", False) else smem
    leaves = list(it.flatten_leaves(inner.shape)) + list(it.flatten_leaves(inner.stride))
    leaves.append(getattr(smem, "offset", 0))
    syms = set()
    for x in leaves:
        syms |= set(getattr(x, "free_symbols", ()))
    return sorted(syms, key=str)


def _member_smem(smem, env: dict):
    """``smem`` with its symbols replaced by the integers of ``env`` (symbol -> int)."""

    def sub(t):
        if isinstance(t, tuple):
            return tuple(sub(x) for x in t)
        return t if isinstance(t, int) else int(t.subs(env))
    inner = smem.inner if getattr(smem, "is_composed", False) else smem
    new = Layout(sub(inner.shape), sub(inner.stride))
    if getattr(smem, "is_composed", False):
        return ComposedLayout(smem.swizzle, sub(smem.offset), new)
    return new


def _prove_members(cfg, mma, cc, props, refuted, method, timeout_s):
    """A hand-built ``[copy.X]`` over a parametric smem tile: every member of the family (every
    admissible assignment of the tile's ``[params]`` symbols, at most :data:`MEMBER_LIMIT`) proved
    concretely, the results merged (a refutation names its member in ``params``).  A member CuTe
    does not compile makes the family's result that rejection, as for one configuration."""
    op = cc.operand
    syms = _smem_symbols(cc.smem)
    missing = [str(x) for x in syms if str(x) not in cfg.params]
    if missing:
        raise SymlayoutError(f"[copy.{op}] smem: symbol {missing[0]} is not in [params]")
    params = [cfg.params[str(x)] for x in syms]
    total = 1
    for p in params:
        total *= p.count()
    if total > MEMBER_LIMIT:
        raise SymlayoutError(f"[copy.{op}]: not supported: a hand-built TiledCopy (thr/val, tv/tiler) over a "
                             f"parametric smem tile of {total} members (at most {MEMBER_LIMIT} are proved one by one)")
    merged: dict = {}
    bare = dataclasses.replace(cfg, params={})
    for vals in itertools.product(*(p.values() for p in params)):
        env = dict(zip(syms, vals))
        at = {str(x): v for x, v in env.items()}
        try:
            smem = _member_smem(cc.smem, env)
        except (ValueError, TypeError, SymlayoutError) as e:
            raise SymlayoutError(f"[copy.{op}] smem: the member {at} is not a layout ({e})") from None
        rs, rejected = prove_copy(bare, mma, dataclasses.replace(cc, smem=smem), props, refuted, method, timeout_s)
        if rejected:
            for r in rs:
                if r.counterexample is not None:
                    r.counterexample.params = at
                r.detail = (r.detail + "; " if r.detail else "") + f"member {at} of {total}"
            return rs, rejected
        for r in rs:
            prev = merged.get(r.property)
            if r.counterexample is not None:
                r.counterexample.params = at
            if prev is None or (prev.status != REFUTED and r.status == REFUTED):
                if prev is not None and prev.checked is not None and r.checked is not None and r.status != REFUTED:
                    r.checked += prev.checked
                merged[r.property] = r
            elif prev.status == PROVED and r.status != PROVED and r.status != REFUTED:
                merged[r.property] = r            # unknown / vacuous / error of one member: not proved
            elif prev.status != REFUTED and prev.checked is not None and r.checked is not None:
                prev.checked += r.checked
    out = [merged[p] for p in props if p in merged]
    names = ", ".join(str(x) for x in syms)
    for r in out:
        r.detail = (r.detail + "; " if r.detail else "") + f"each of the {total} members ({names})"
    return out, set()


#: largest shared-memory tile (elements) decided by enumeration: beyond it (about a second and
#: 400 MB per property at this size) every obligation is decided by Z3 on one copy tile
#: (docs/prover.md, "Limits")
EXHAUSTIVE_LIMIT = 1 << 20


def _concrete(smem) -> bool:
    """No symbol in the smem layout (its shape, strides or offset): ``[params]`` used elsewhere only
    (a gmem leading dimension) leave the copy to the exhaustive check."""
    inner = smem.inner if getattr(smem, "is_composed", False) else smem
    leaves = list(it.flatten_leaves(inner.shape)) + list(it.flatten_leaves(inner.stride))
    leaves.append(getattr(smem, "offset", 0))
    return all(isinstance(x, int) for x in leaves)


def _too_large(smem) -> bool:
    n = smem.size()
    return isinstance(n, int) and n > EXHAUSTIVE_LIMIT


def _prove_by_z3(cfg, mma, cc, props, refuted, timeout_s):
    """Parametric or very large tiles: Z3 over one copy tile and every rest tile."""
    # the Z3 decider's modules are ~3.5 ms of start-up (python -X importtime) that a concrete
    # configuration proved exhaustively never needs
    from .copy.parametric import PARAMETRIC_PROPERTIES  # lazy: the Z3 decider's start-up (above)
    from .copy.z3backend import decide                  # lazy: the Z3 decider's start-up (above)
    op = cc.operand
    convert = getattr(cc, "convert", False)
    atom = make_copy_atom(cc.atom, cc.element_type)
    tiler = make_tiled_copy_X(atom, mma, op).tiler_mn
    width = None
    if atom.op.kind == "default":
        if cfg.params:
            raise SymlayoutError(f"[copy.{op}] {cc.atom}: not supported with [params]: the vector width CuTe's "
                                 "auto-vectorizing copy picks depends on which strides are static")
        width = copy_vector_width(mma, op, cc.atom, cc.element_type, cc.smem, convert)
    tm = build_operand_model(mma, None, None, op, atom, cc.element_type, Layout(tuple(tiler)), cc.align,
                             convert=convert, vector_width=width)
    tm.stand_in = True
    out = []
    problems: dict = {}                # the properties share one Z3 problem (address terms, tiling checks)
    for p in props:
        if p not in PARAMETRIC_PROPERTIES:
            continue
        r = fragment_width_mismatch(tm, p) or \
            decide(p, tm, cc.smem, cfg.params, timeout_s, problems=problems)
        if not cfg.params and r.method == "z3":
            r.detail = (r.detail + "; " if r.detail else "") + \
                f"smem tile of {cc.smem.size()} elements is beyond the enumeration limit {EXHAUSTIVE_LIMIT}"
        r = counted(r, tm)
        r.expected = REFUTED if p in refuted else PROVED
        out.append(r)
    return out


def config_parts(cfg, props, split: bool = False, properties=None) -> list:
    """The independent pieces of one configuration's proof, in report order: the thread map, the
    TiledMMA's coverage (no copies), one ``[copy.X]`` with its properties -- with ``split``, one
    piece per property of a copy of a parametric configuration, so that a pool runs its queries side
    by side (each query is independent: :func:`_prove_by_z3`) -- and the data path (``[g2s.X]``,
    ``[s2g.C]``, ``[stages]``: :func:`~symlayout.prove.datapath.path.prove_datapath` of the requested
    ``properties``)."""
    if cfg.threadmap is not None:
        return [("threadmap", None, props)]
    if cfg.mma is None:                          # issue 31: a copy-only kernel ([g2r.X], [r2g.X])
        return [("kernel", None, properties)] if cfg.kernel_tables else []
    if cfg.mma.is_sm100:                     # --- Version 3: SM100 UMMA, CTA pairs, SM100 TMA (prove/blackwell/) ---
        out = [("blackwell", None, list(properties or cfg.prove.properties or BLACKWELL_PROPERTIES))]
        if cfg.tmem is not None or cfg.tmem_copies:                     # TMEM (prove/blackwell/tmem.py)
            out.append(("tmem", None, list(properties or cfg.prove.properties or TMEM_PROPERTIES)))
        if not cfg.mma.cute_rejections:      # the [smem.X] buffers' stages (nothing of an atom CuTe rejects)
            out.append(("datapath", None, properties))
        return out
    if is_gmma_atom(cfg.mma.atom):           # SM90 GMMA: descriptor operands, TMA, accumulators (prove/hopper/obligations.py)
        out = [("hopper", None, list(properties or cfg.prove.properties or HOPPER_PROPERTIES))]
    else:
        out = [] if cfg.copies else [("mma", None, props)]
    for op, cc in sorted(cfg.copies.items()):
        if split and cfg.params:
            out += [("copy", op, [p]) for p in props]
        else:
            out.append(("copy", op, props))
    out.append(("datapath", None, properties))
    if cfg.sf:                                   # issue 29: SM120's factors in registers (prove/blackwell/sf_registers.py)
        out.append(("sf", None, [p for p in (properties or cfg.prove.properties or SF_REGISTER_PROPERTIES)
                                 if p in SF_REGISTER_PROPERTIES]))
    if cfg.kernel_tables:                        # issue 31: the rest of the kernel
        out.append(("kernel", None, properties))
    return out


@serialized
def prove_part(cfg, part, method="auto", timeout_s=None, memo: dict | None = None):
    """``(results, rejected operands, error or None, seconds)`` of one piece (:func:`config_parts`);
    ``memo``: the data path's global-memory copies and stages, and the SM90 pieces, shared with other
    configurations."""
    t0 = time.perf_counter()
    kind, op, props = part
    refuted = cfg.expect.refuted
    results, rejected = [], set()
    try:
        if kind == "threadmap":
            # lazy: ~6 ms of start-up (python -X importtime) that a copy-only configuration never needs
            from .threadmaps.obligations import prove_threadmap
            results = prove_threadmap(cfg, props, method=method, timeout_s=timeout_s)
        elif kind == "blackwell":             # (before the TiledMMA: CuTe may reject the SM100 atom itself)
            results, rejected = prove_blackwell(cfg, props, refuted)
        elif kind == "tmem":                  # (nothing of TMEM is checked over an atom CuTe rejects)
            results = [] if cfg.mma.cute_rejections else \
                prove_tmem(cfg, make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation), props, refuted)
        elif kind == "sf":                       # issue 29: SM120
            results = sf_register_results(cfg, props)
            for r in results:
                r.expected = REFUTED if r.property in refuted else PROVED
        elif kind == "kernel":                   # issue 31
            results = prove_kernel(cfg, props)
        elif kind == "datapath":                 # (global-memory copies and stages: no TiledMMA)
            results = prove_datapath(cfg, props, memo)
        else:
            mma = make_tiled_mma(cfg.mma.atom, cfg.mma.layout, cfg.mma.permutation)
            if kind == "hopper":
                results = prove_hopper(cfg, mma, props, refuted, memo)
            elif kind == "mma":
                if "coverage" in props:
                    for o in ("A", "B", "C"):
                        r = mma_coverage(mma, o)
                        r.expected = REFUTED if "coverage" in refuted else PROVED
                        results.append(r)
            else:
                results, rejected = prove_copy(cfg, mma, cfg.copies[op], props, refuted, method, timeout_s)
    except SymlayoutError as e:
        return results, rejected, f"{cfg.path}: {e}", time.perf_counter() - t0
    return results, rejected, None, time.perf_counter() - t0


def assemble(cfg, parts, done) -> ConfigReport:
    """The report of ``cfg`` from its pieces' answers (``done``, in the order of ``parts``): results
    in report order up to the first error; a copy that CuTe rejects reported once."""
    rep = ConfigReport(cfg.path, cfg.name or "")
    refuted = cfg.expect.refuted
    seen_rejected = set()
    for (kind, op, _props), (results, rejected, error, seconds) in zip(parts, done):
        rep.seconds += seconds
        if rejected:
            if op in seen_rejected:            # (every property piece of a rejected copy says the same)
                continue
            seen_rejected |= rejected
        rep.results.extend(results)
        rep.rejected |= rejected
        if error is not None:
            rep.error = error
            return rep
    for r in rep.results:                     # the last guard: no PROVED without obligations
        if r.status == PROVED and r.checked == 0:
            r.status = VACUOUS
    try:
        apply_expectations(rep.results, cfg.expect, rep.rejected)    # [expect], per operand, max_bank_degree
    except SymlayoutError as e:
        rep.error = f"{cfg.path}: {e}"
        return rep
    for p in refuted:
        if rep.rejected:                      # CuTe refused the configuration: the rest is not checked
            continue
        if not any(r.property == p for r in rep.results):
            rep.results.append(Result(p, ERROR, detail=f"[expect] names {p!r}, which does not apply here",
                                      expected=REFUTED))
    return rep


def part_key(cfg, part, method="auto", timeout_s=None):
    """Everything the answer of one piece (:func:`config_parts`) depends on, as a hashable key, for the
    pieces shared between configurations (a sweep's candidates): two configurations whose pieces have the
    same key get the same answer.  A ``[copy.X]`` piece reads the TiledMMA (atom, layout, permutation), that
    copy's table except its stages (``smem`` is stage 0), ``[params]``, the refuted ``[expect]`` names and
    the copy's line (the too-few-values fix names it). The SM100 MMA-side piece (``blackwell``) reads every
    table but ``[tmem]`` (the ``tmem`` piece's) and the name: its key is the rest of the configuration and
    where each key is (so candidates that differ only in their accumulator stages share it). None for every
    other piece (not shared)."""
    kind, op, props = part
    if kind == "blackwell":
        if not cfg.data or cfg.lines is None:          # (a configuration built in code, not read: not shared)
            return None
        rest = {k: v for k, v in cfg.data.items() if k not in ("name", "tmem")}
        return ("blackwell", repr(rest), repr(sorted(cfg.lines.pos.items())), tuple(props),
                tuple(sorted(cfg.expect.refuted)), method, timeout_s)
    if kind != "copy":
        return None
    m, cc = cfg.mma, cfg.copies[op]
    return ("copy", m.atom, repr(m.layout), repr(m.permutation), op, cc.atom, cc.type, cc.element,
            cc.raw_smem, repr(cc.smem), cc.align, cc.convert, repr(cc.tiled), cfg.line("copy", op), tuple(props),
            tuple(sorted(cfg.expect.refuted)), repr(sorted(cfg.params.items())), method, timeout_s)


@serialized
def prove_config(cfg, properties=None, method: str = "auto", timeout_s: float | None = None,
                 memo: dict | None = None) -> ConfigReport:
    """Prove every requested property of a loaded :class:`~symlayout.config.Config` (from any thread:
    one at a time, :mod:`symlayout.algebra.z3lock`).  ``memo``: a dict shared by many calls, in which
    the pieces :func:`part_key` names, and the data path's global-memory copies, are proved once
    (:mod:`symlayout.prove.verdict.shared`; an answer with an error names its file: not shared)."""
    props = list(properties or cfg.prove.properties or PROPERTIES)
    timeout_s = timeout_s if timeout_s is not None else cfg.prove.timeout_s
    parts = config_parts(cfg, props, properties=properties)
    done = []
    for part in parts:
        done.append(shared(memo, part_key(cfg, part, method, timeout_s),
                           lambda part=part: prove_part(cfg, part, method, timeout_s, memo), keep=lambda a: a[2] is None))
        if done[-1][2] is not None:
            break
    return assemble(cfg, parts[:len(done)], done)


_POOL_WORK: list = []


def worker_init() -> None:
    """A forked worker: SIGTERM ends it at once (the parent's handler, which raises between bytecodes,
    would wait for a long Z3 query; the parent's pool sends SIGTERM when it is torn down), and Ctrl-C is
    the parent's to handle (it tears the pool down), not a traceback in every worker."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _pool_part(job):
    i, part, method, timeout_s = job
    cfg = _POOL_WORK[i]
    return i, part, prove_part(cfg, part, method, timeout_s)


def prove_many(configs, properties=None, jobs: int = 1, timeout_s=None, method="auto") -> list:
    """Prove loaded configurations, one ConfigReport each in their order, in ``jobs`` worker processes.

    The work is the configurations' pieces (:func:`config_parts`; a parametric copy split per
    property), handed out one at a time, largest first (parametric pieces, then by tile size), so
    no Z3 query waits behind another file's.  Reports are the same as :func:`prove_config`'s."""
    if jobs <= 1 or len(configs) == 0:
        return [prove_config(c, properties, method, timeout_s) for c in configs]
    plans = []
    for cfg in configs:
        props = list(properties or cfg.prove.properties or PROPERTIES)
        tmo = timeout_s if timeout_s is not None else cfg.prove.timeout_s
        plans.append((config_parts(cfg, props, split=True, properties=properties), tmo))
    jobs_list = [(i, part, method, tmo) for i, (parts, tmo) in enumerate(plans) for part in parts]
    if len(jobs_list) <= 1:
        return [prove_config(c, properties, method, timeout_s) for c in configs]
    jobs_list.sort(key=lambda j: -_cost(configs[j[0]], j[1]))
    if any(c.params for c in configs):       # import the solver once, before the workers fork
        from .copy import z3backend  # noqa: F401  # lazy: the Z3 decider's start-up, only for parametric ones
        try:
            import z3  # noqa: F401
        except ImportError:
            pass
    global _POOL_WORK
    _POOL_WORK = list(configs)               # (inherited by the forked workers)
    answers = {}
    import multiprocessing as mp      # lazily: 7-14 ms of start-up (pickle, socket; -X importtime) one process never needs
    try:
        with mp.get_context("fork").Pool(min(jobs, len(jobs_list)), worker_init) as pool:
            for i, part, ans in pool.imap_unordered(_pool_part, jobs_list, chunksize=1):
                answers[(i, repr(part))] = ans
    finally:
        _POOL_WORK = []
    out = []
    for cfg, (parts, _tmo) in zip(configs, plans):
        done = []
        for part in parts:
            done.append(answers[(len(out), repr(part))])
            if done[-1][2] is not None:
                break
        out.append(assemble(cfg, parts[:len(done)], done))
    return out


def _cost(cfg, part) -> float:
    """A rough size of a piece, for the order pieces are handed out (largest first)."""
    if cfg.params or part[0] == "threadmap":
        return 1e12
    if part[0] == "datapath":
        return 1e6
    cc = cfg.copies.get(part[1]) if part[1] else None
    try:
        n = cc.smem.size() if cc is not None else 0
        return float(n) if isinstance(n, int) else 1e12
    except Exception:                         # (a size that is not a number: order only)
        return 0.0
