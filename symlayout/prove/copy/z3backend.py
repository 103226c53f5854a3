"""Z3 decision of the copy obligations, for parametric and concrete configurations.

The route of one copy tile (who reads/writes which tile element, which slot,
which instruction phase) is finite and concrete: it comes from the same
CuTe-exact :class:`~symlayout.prove.copy.model.OperandModel`, built on one tile of
the operand.  What may be symbolic is *where* each element lives: the smem
layout ``S`` (``[params]`` in shapes or strides) and which rest tile
``u = (u_0, u_1, ...)`` the copy is working on.  Each obligation becomes one
Z3 query "exists an entry of the route table, a rest tile and parameter
values violating it".

Terms are :mod:`symlayout.prove.decide.bvterms` terms: each carries an interval
valid over the whole parameter box, and the query is lowered to bit-vectors
one bit wider than its widest term, so nothing wraps; ``//`` and ``%`` are
floor division and Python's modulo.  ``unsat`` proves the obligation for
every parameter value and every rest tile.  ``sat`` gives a witness that is
minimised (within the time budget) and **re-validated** before it is
printed: the obligation's entries are evaluated with exact integers on the
layout instantiated at the witness (the layout's own evaluation, no Z3), and
when the instantiated configuration is small enough the whole configuration
is built and checked exhaustively.  A witness that does not reproduce is
excluded and the query asked again; a solver timeout, an untranslatable term
or a witness that never reproduces is UNKNOWN with a detail.  The whole
property -- queries, minimisation, re-validation -- stays inside
``timeout_s``.

Rest tiles are disjoint translates of the first one, and ``copy()`` runs the
same atom-call plan on each (``make_tiled_copy_A/B/C`` tile by the TiledMMA's
tile), so the fragment-side facts (``exactly_once`` of loads, packed register
bindings) are decided on one tile by exhaustive evaluation.
"""
from __future__ import annotations

import os
import time

from ...algebra import int_tuple as it
from ...algebra.layout import Layout
from ...atoms.copy import make_copy_atom
from ...errors import SymlayoutError
from ...tiled.copy import make_tiled_copy_X
from ..decide.bvterms import And, Or, Untranslatable, const, var
from .contiguity import contiguous, hardware_link, vectors
from .model import build_operand_model, cute_addresses_differ, instantiated_model, stand_in_tile
from .obligations import CHECKS, access_vectors, bank_phases
from ..verdict.result import PROVED, REFUTED, UNKNOWN, Counterexample, Result
from ..decide.z3problem import (MINIMIZE_STEP_RLIMIT, Instance, OutOfTime, Problem, Query, check_time, first_decided, queries,
                        time_left, z3_module)
from ..decide import bvterms as bt
from . import obligations as props

#: instantiated smem tiles up to this many elements are re-validated by building the whole
#: configuration and checking it exhaustively (larger ones entry by entry)
FULL_REVALIDATION_MAX = 1 << 16
#: witnesses that fail re-validation are excluded and the query asked again this many times
RETRIES = 3


_TILE_CACHE: dict = {}


def tile_model_for(mma, operand, atom, value_type, align):
    """The OperandModel of one copy tile (a compact stand-in smem of the tile's shape), cached."""
    key = (id(mma), operand, atom, value_type, align)
    hit = _TILE_CACHE.get(key)
    if hit is not None and hit[0] is mma:
        return hit[1]
    tm = _tile_model(mma, operand, atom, value_type, align)
    if len(_TILE_CACHE) > 256:
        _TILE_CACHE.clear()
    _TILE_CACHE[key] = (mma, tm)
    return tm


def _tile_model(mma, operand, atom, value_type, align):
    a = make_copy_atom(atom, value_type)          # one atom and TiledCopy: the model's own
    tm = build_operand_model(mma, None, None, operand, a, value_type,
                             Layout(tuple(make_tiled_copy_X(a, mma, operand).tiler_mn)), align)
    tm.stand_in = True          # its indices are right, its addresses are not (see prove/copy/contiguity.py)
    return tm



# ---------------------------------------------------------------- obligations
#
# Each query returns ``(entries, info)``: ``entries`` is a list of ``(label, condition)``, the
# condition saying that entry is violated (a Bool on a Problem, a Python bool on an Instance);
# ``entries is None`` means the property fails for every parameter value (``info`` says why).


def q_alignment(P, contiguous=False):
    """Each vector starts on a multiple of its width and its elements are consecutive (``contiguous``, or
    a function telling it: the latter is proved, see :func:`~symlayout.prove.copy.contiguity.contiguity`, and
    left out)."""
    tm = P.tm
    vb = max(tm.reg_bits_smem, tm.value_bits) // 8
    if P.align % vb and vb > 1:
        return None, f"smem base alignment {P.align} B is less than the {vb}-byte vector width"
    contiguous = contiguous() if callable(contiguous) else contiguous
    out = []
    for ent in vectors(tm):
        a0 = P.addr(ent[0])
        terms = [(a0 * P.eb) % vb != 0] if vb > 1 else []
        if not contiguous:
            terms += [P.addr(i) != a0 + e for e, i in enumerate(ent) if e]
        if terms:
            out.append((("vector", ent, vb), Or(*terms)))
    return out, None


def q_in_bounds(P):
    tm = P.tm
    vb = max(tm.reg_bits_smem, tm.value_bits) // 8
    ents = {tm.calls[t][c].smem[idx[0]] for (w, c, l, t, r, idx) in access_vectors(tm)}
    limit = P.cosize * P.eb
    out = []
    for i in sorted(ents):
        a0 = P.addr(i) * P.eb
        out.append((("bounds", i, vb), Or(a0 < 0, a0 + vb > limit)))
    return out, None


def q_slot_agreement(P, contiguous=False):
    """The element the hardware moves into each register slot is the one the MMA expects there
    (``contiguous``: every vector is proved contiguous, so an entry that is a vector's own
    ``row + offset`` holds and is left out)."""
    tm = P.tm
    k = max(1, tm.reg_bits_smem // tm.value_bits)
    ents = set()
    for w, c in tm.instructions():
        for l in range(32):
            t = 32 * w + l
            if t >= tm.threads:
                continue
            for a, s in enumerate(tm.calls[t][c].reg):
                p, e = tm.hw.provider(l, a, tm.value_bits, tm.reg_bits_frag)
                sm = tm.calls[32 * w + p][c].smem
                ents.add((sm[e - e % k], e % k, tm.expected[t][s]))
    contiguous = contiguous() if callable(contiguous) else contiguous
    implied = {(ent[0], o, x) for ent in vectors(tm) for o, x in enumerate(ent)} if contiguous else ()
    out = [(("slot", r, o, x), P.addr(r) + o != P.addr(x)) for r, o, x in sorted(ents)
           if not (o == 0 and r == x) and (r, o, x) not in implied]
    return out, None


def _bank_clash(Fa, na, Fb, nb):
    """Vectors covering words ``Fa .. Fa+na-1`` and ``Fb .. Fb+nb-1`` touch two
    different words in one bank.  With ``d = Fa - Fb`` and ``r = d mod 32``, some
    word pair shares a bank iff a difference ``delta = q_b - q_a`` in ``(-na, nb)``
    has ``delta == d (mod 32)``, i.e. ``delta = r`` (``r < nb``) or ``delta = r - 32``
    (``r > 32 - na``); the words differ iff ``delta != d``."""
    d = Fa - Fb
    r = d & 31
    return Or(And(r < nb, d != r), And(r + na > 32, d != r - 32))


def q_bank_conflicts(P, pairwise: bool = False):
    """Two vectors of one phase touch different 4-byte words in the same bank
    (on a Problem, unless ``pairwise``: two selector variables pick the two rows,
    O(rows) terms)."""
    tm = P.tm
    vb, groups = bank_phases(tm)
    phases = sorted({tuple(sorted({tm.calls[t][key[1]].smem[idx[0]] for l, t, idx in items}))
                     for key, items in groups.items()})
    phases = [ph for ph in phases if len(ph) > 1]
    rows = {}
    for ph in phases:
        for i in ph:
            if i not in rows:
                byte = P.addr(i) * P.eb
                F = byte >> 2
                rows[i] = (F, ((byte + (vb - 1)) >> 2) - F + 1)
    concrete = P.concrete or all(isinstance(x, int) or x.op == "const" for r in rows.values() for x in r)
    if concrete or pairwise:
        out = []
        for pid, ph in enumerate(phases):
            for x in range(len(ph)):
                for y in range(x + 1, len(ph)):
                    out.append((("banks", pid, ph[x], ph[y], vb), _bank_clash(*rows[ph[x]], *rows[ph[y]])))
        return out, None
    flat = [(pid, i) for pid, ph in enumerate(phases) for i in ph]
    if not flat:
        return [], None
    n = len(flat)
    s1, s2 = var("s1", 0, n - 1), var("s2", 0, n - 1)

    def pick(sel, f):
        acc = f(flat[-1])
        for k in range(n - 2, -1, -1):
            acc = bt.If(sel == k, f(flat[k]), acc)
        return acc
    ph1, ph2 = pick(s1, lambda e: const(e[0])), pick(s2, lambda e: const(e[0]))
    Fa, na = pick(s1, lambda e: rows[e[1]][0]), pick(s1, lambda e: rows[e[1]][1])
    Fb, nb = pick(s2, lambda e: rows[e[1]][0]), pick(s2, lambda e: rows[e[1]][1])
    return [(("banks-selected",), And(s1 < s2, ph1 == ph2, _bank_clash(Fa, na, Fb, nb)))], None


def q_exactly_once_store(P):
    """Stores write every tile element once (checked on the tile); across the
    whole smem tile they are disjoint iff S is injective on its domain."""
    xs, cx = P.coords("x")
    ys, cy = P.coords("y")
    f = And(*cx, *cy, Or(*[a != b for a, b in zip(xs, ys)]), P.layout(xs) == P.layout(ys))
    return [(("store", tuple(xs), tuple(ys)), f)], None


def q_divisibility(P):
    """An smem extent that is not a whole number of tiles."""
    return [(("extent", k, t), e % t != 0) for k, (e, t) in enumerate(zip(P.ext, P.tile)) if t > 1], None


QUERIES = {"alignment": q_alignment, "in_bounds": q_in_bounds, "slot_agreement": q_slot_agreement,
           "bank_conflicts": q_bank_conflicts, "exactly_once": q_exactly_once_store}


# ---------------------------------------------------------------- decide


def decide(prop: str, tm, S, params: dict, timeout_s=None, problems: dict | None = None) -> Result:
    """Decide one obligation with Z3 for every parameter value and rest tile, within ``timeout_s``.

    ``tm``: the tile model the caller built once (:func:`tile_model_for`,
    :func:`~symlayout.prove.copy.model.stand_in_tile`); its TiledMMA, operand, atom, value type and
    alignment are the configuration's, ``S`` is the real smem layout over ``params``.
    ``problems``: a dict the caller keeps while it decides several properties of one copy (the same tile
    model, smem layout, parameters and alignment): they share one :class:`Problem` -- its address terms,
    and the tiling checks (whole tiles, no broadcast mode) once proved."""
    t0 = time.perf_counter()
    deadline = None if timeout_s is None else t0 + timeout_s

    def done(status, cex=None, checked=None, detail="", method="z3"):
        return Result(prop, status, operand=tm.operand, seconds=time.perf_counter() - t0, checked=checked,
                      method=method, counterexample=cex, detail=detail)
    try:
        r = _decide(prop, tm, S, params, deadline, done, problems)
    except OutOfTime:
        return done(UNKNOWN, detail=f"time budget of {timeout_s} s spent")
    except Untranslatable as e:
        return done(UNKNOWN, detail=f"not encoded for Z3: {e}")
    except SymlayoutError as e:
        return done(UNKNOWN, detail=f"not decided: {e}")
    except Exception as e:  # noqa: BLE001 -- one property's internal error must not lose the others
        if os.environ.get("SYMLAYOUT_DEBUG"):
            raise
        return done(UNKNOWN, detail=f"internal error in the Z3 backend (a bug; SYMLAYOUT_DEBUG=1 shows it): "
                                    f"{type(e).__name__}: {e}")
    if deadline is not None and r.status != UNKNOWN and time.perf_counter() > deadline:
        return done(UNKNOWN, detail=f"time budget of {timeout_s} s spent (the {r.status} verdict came late)")
    r.seconds = time.perf_counter() - t0
    return r


def problem_for(problems, tm, S, params, align, deadline) -> Problem:
    """The Problem of ``tm`` over ``S`` (shared through ``problems``, see :func:`decide`), its
    translations bounded by ``deadline``."""
    key = (id(tm), id(S), id(params), align)
    hit = None if problems is None else problems.get(key)
    if hit is not None and hit[0] is tm and hit[1] is S and hit[2] is params:
        P = hit[3]
        P.env.deadline = deadline
        return P
    P = Problem(tm, S, params, tm.value_bits, align, deadline)
    if problems is not None:
        problems[key] = (tm, S, params, P)
    return P


def _decide(prop, tm, S, params, deadline, done, problems=None):
    mma, operand, align = tm.mma, tm.operand, tm.align
    if tm.value_bits % 8:
        return done(UNKNOWN, detail="sub-byte value types are not encoded for Z3")
    if cute_addresses_differ(S):
        return done(UNKNOWN, detail=f"smem {S}: CuTe's partitions of a swizzle whose offset is not a multiple of "
                                    "its period do not follow the layout function; not encoded for Z3")
    P = problem_for(problems, tm, S, params, align, deadline)
    if not P.tiling_proved:
        # the smem extents must be whole tiles for every parameter value
        r = _run(P, "divisibility", q_divisibility(P)[0], params, deadline, done, S=S, operand=operand)
        if r is not None:
            return r
        # a broadcast (stride-0) smem mode changes CuTe's fragment (make_fragment_like filters zeros) and
        # the copy (cute::copy skips the destination's null space): the tile model does not hold then
        r = _broadcast(P, params, deadline, done, S)
        if r is not None:
            return r
        P.tiling_proved = True
    if prop == "type_agreement" or prop in ("coverage",) or (prop == "exactly_once" and tm.direction == "load"):
        r = props.CHECKS[prop](tm)     # parameter-independent: decided on the tile
        r.method = "exhaustive (tile) + z3 (tiling)"
        r.operand = operand
        if prop == "coverage" and r.status == PROVED:     # CuTe's indices are the hardware's bytes?
            r = hardware_link(r, tm, S, params, time_left(deadline), P)
        return r
    if prop == "exactly_once":
        r = props.exactly_once(tm)            # each tile element written once, on the tile
        if r.status == REFUTED:
            r.operand, r.method = operand, "exhaustive (tile)"
            return r
        r = hardware_link(r, tm, S, params, time_left(deadline), P)
        if r.status != PROVED:
            return r
    elif prop == "slot_agreement":
        _n, pk = props.packed_bindings(tm)     # packed bindings: parameter-independent
        if pk is None:
            _n, pk = props.mma_route(mma.atom, operand)
        if pk is not None:
            return done(REFUTED, pk, method="exhaustive (tile)")
    elif prop not in QUERIES:
        return done(UNKNOWN, detail=f"{prop} has no Z3 encoding")
    if prop in ("alignment", "slot_agreement"):
        # when every vector is contiguous (one query, shared with the other properties), the entries that
        # implies are left out
        entries, info = QUERIES[prop](P, contiguous=lambda: contiguous(P, deadline))
    else:
        entries, info = QUERIES[prop](P)
    if entries is None:
        return done(REFUTED, Counterexample(info))
    check_time(deadline)
    r = _run(P, prop, entries, params, deadline, done, S=S, operand=operand, full=True)
    return r if r is not None else done(PROVED)


def _run(P, prop, entries, params, deadline, done, S, operand, full=False):
    """Ask the query; ``None`` when it is proved, else the Result (refuted with a
    re-validated witness, or unknown)."""
    qs = queries(P, entries)
    check_time(deadline)
    q = qs[0]
    if q.guards:
        z3 = z3_module()
        st, mdl = q.solve(deadline, goal=q.base + [z3.Or(*[z3.Not(g) for g in q.guards])])
        if st == "sat":
            vals = q.values(mdl)
            return done(UNKNOWN, detail=f"{prop}: a divisor in the layout {S} is 0 for "
                                        + _fmt({n: vals[n] for n in params}))
        if st == "unknown":
            return done(UNKNOWN, detail=f"solver gave up on the divisors of {S}: {mdl}")
    failures = []
    names = list(params) + [f"u{k}" for k in range(len(P.u))]
    for _attempt in range(RETRIES + 1):
        st, mdl, q = first_decided(qs, deadline)
        if st == "unsat":
            if failures:
                return done(UNKNOWN, detail=f"{prop}: Z3 witnesses that did not reproduce: " + "; ".join(failures))
            return None
        if st == "unknown":
            return done(UNKNOWN, detail=f"solver gave up: {mdl}")
        if params:
            # minimisation may use half of what is left: the rest is kept for re-validation
            soft = None if deadline is None else time.perf_counter() + (deadline - time.perf_counter()) / 2
            q, mdl = _bit_vector_witness(qs, q, mdl, names, soft)
            mdl = q.minimize(mdl, names, soft)
        vals = q.values(mdl)
        cex, why = _revalidate(prop, P, vals, deadline, full)
        if cex is not None:
            return done(REFUTED, cex)
        failures.append(f"{_fmt(vals)} ({why})")
        for qq in qs:                      # exclude the whole point (every entry was re-checked there)
            qq.exclude(vals, [n for n in vals if n not in ("s1", "s2") and not n.startswith("_")])
    return done(UNKNOWN, detail=f"{prop}: Z3 witnesses that did not reproduce: " + "; ".join(failures))


def _bit_vector_witness(qs, q, mdl, names, deadline):
    """A witness the integer query found, as the bit-vector query's model of the same point: minimised
    there, each step a bounded bit-vector query (nonlinear integer steps can run out of resources and leave
    the witness where it was); ``(q, mdl)`` unchanged when that query cannot be asked."""
    bv = qs[-1]
    if not q.integer or bv.integer:
        return q, mdl
    vals = q.values(mdl)
    pin = [bv.L.vars[n] == vals[n] for n in names if n in bv.L.vars and n in vals]
    try:
        st, m2 = bv.solve(deadline, pin, rlimit=MINIMIZE_STEP_RLIMIT)
    except OutOfTime:
        return q, mdl
    return (bv, m2) if st == "sat" else (q, mdl)


def q_broadcast(P):
    """An smem leaf of extent > 1 whose stride is 0 (a broadcast mode)."""
    L = P.S.inner if getattr(P.S, "is_composed", False) else P.S
    out = []
    for k, (sh, d) in enumerate(zip(it.flatten_leaves(L.shape), it.flatten_leaves(L.stride))):
        st, dt = bt.from_sympy(sh, P.env), bt.from_sympy(d, P.env)
        out.append((("leaf", k), And(st > 1, dt == 0)))
    return out, None


def _broadcast(P, params, deadline, done, S):
    """UNKNOWN when some parameter value gives the smem layout a broadcast mode, else None."""
    entries, _ = q_broadcast(P)
    q = Query(P, entries)
    if q.f is bt.FALSE:
        return None
    st, mdl = q.solve(deadline)
    if st == "unsat":
        return None
    where = ""
    if st == "sat":
        vals = q.values(mdl)
        where = " for " + _fmt({n: vals.get(n, P.env[n].lo) for n in params}) if params else ""
    return done(UNKNOWN, detail=f"smem {S} has a stride-0 (broadcast) mode{where}: CuTe's fragment and copy then "
                                "skip its null space, which the Z3 tile model does not encode")


def _fmt(values: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in values.items())


# ---------------------------------------------------------------- re-validation


def _revalidate(prop, P, vals, deadline, full=False):
    """Re-check a witness with exact integers: ``(counterexample, None)`` when it
    reproduces, ``(None, why)`` when it does not (``full``: a small instantiated
    configuration is also built, from the tile model's route, and checked exhaustively)."""
    operand = P.tm.operand
    inst = Instance(P, vals)
    ps = inst.params
    if prop == "divisibility":
        bad = [k for k, (e, t) in enumerate(zip(inst.extents, inst.tile)) if e % t]
        if not bad:
            return None, "every extent is a whole number of tiles there"
        k = bad[0]
        return Counterexample(f"smem {inst.S}: extent {inst.extents[k]} of mode {k} is not a multiple of the tile "
                              f"{tuple(inst.tile)} for " + _fmt(ps), params=ps), None
    if not inst.inside():
        return None, f"rest tile {tuple(inst.u)} is outside the smem tile {tuple(inst.extents)}"
    entries, _info = QUERIES[prop](inst)
    bad = [label for label, c in entries if c]
    if not bad:
        return None, "no entry is violated at the instantiated layout"
    cex = _describe(prop, inst, bad[0], operand)
    size = inst.S.size()
    if full and isinstance(size, int) and size <= FULL_REVALIDATION_MAX:
        check_time(deadline)
        # the same route: the atom, TiledCopy, C conversion and AutoVectorizingCopy width of the tile model
        try:
            m = instantiated_model(P.tm, inst.S, vector_width=P.tm.vector_width or None)
        except SymlayoutError as e:
            # the whole configuration at these values is not built (CuTe would reject it statically);
            # the violated entry above is evaluated exactly, so the refutation stands on it
            cex.message += f" (the configuration at these values cannot be built: {e})"
            return cex, None
        r = CHECKS[prop](m)
        if r.status != REFUTED:
            return None, f"the exhaustive check of the instantiated configuration finds no violation ({r.status})"
        cex = r.counterexample
        cex.params = ps or None
    return cex, None


def _describe(prop, inst: Instance, label, operand) -> Counterexample:
    """A counterexample from one violated entry (exact integers at the witness)."""
    ps = inst.params
    at = (" for " + _fmt(ps)) if ps else ""
    where = f" in rest tile {tuple(inst.u)}" if any(inst.u) else ""
    eb = inst.eb
    name = lambda i: inst.name(i, operand)  # noqa: E731
    kind = label[0]
    if kind == "vector":
        _k, ent, vb = label
        a0 = inst.addr(ent[0])
        if (a0 * eb) % vb:
            msg = f"the {vb}-byte vector at {name(ent[0])} starts at byte {a0 * eb}, not {vb}-byte aligned"
        else:
            e = next(e for e, i in enumerate(ent) if inst.addr(i) != a0 + e)
            msg = (f"element {e} of the {vb}-byte vector at {name(ent[0])} is {name(ent[e])} at byte "
                   f"{inst.addr(ent[e]) * eb}, not contiguous with byte {a0 * eb}")
        return Counterexample(msg + where + at, element=inst.crd(ent[0]), address_bytes=a0 * eb, params=ps or None)
    if kind == "bounds":
        _k, i, vb = label
        a0 = inst.addr(i) * eb
        limit = inst.cosize * eb
        return Counterexample(f"the vector at {name(i)} accesses bytes [{a0}, {a0 + vb}) outside the smem tile "
                              f"[0, {limit})" + where + at, element=inst.crd(i), address_bytes=a0, params=ps or None)
    if kind == "slot":
        _k, r, o, x = label
        got = inst.addr(r) + o
        return Counterexample(f"the hardware moves the element at offset {got} (row {name(r)} + {o}) where the MMA "
                              f"expects {name(x)} at offset {inst.addr(x)}" + where + at,
                              element=inst.crd(x), address_bytes=got * eb, params=ps or None)
    if kind == "banks":
        _k, pid, a, b, vb = label
        ba, bb = inst.addr(a) * eb, inst.addr(b) * eb
        return Counterexample(f"bank conflict: the {vb}-byte vectors at {name(a)} (byte {ba}) and {name(b)} "
                              f"(byte {bb}) of one phase touch different words of one bank" + where + at,
                              element=inst.crd(a), address_bytes=ba, params=ps or None)
    if kind == "store":
        xs, _c = inst.coords("x")
        ys, _c = inst.coords("y")
        a = inst.layout(xs)
        return Counterexample(f"{operand}{tuple(xs)} and {operand}{tuple(ys)} are both stored at offset {a}: "
                              "the smem layout is not injective" + at, element=tuple(xs), address_bytes=a * eb,
                              params=ps or None)
    return Counterexample(f"{prop} fails" + where + at, params=ps or None)


def check_z3(prop, model, timeout_s=None) -> Result:
    """Decide ``prop`` of a concrete model with Z3 (the cross-check of the exhaustive method)."""
    if model.cute_routes:                      # not a layout function (see decide): the exhaustive proof
        return CHECKS[prop](model)
    return decide(prop, stand_in_tile(model), model.smem, {}, timeout_s)
