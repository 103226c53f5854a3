"""Where CuTe's indices are the hardware's bytes: the contiguity link for Z3 proofs.

``coverage`` and the stores' ``exactly_once`` are about the bytes the instructions really read or
write: ``k`` consecutive elements from the address each lane gives (:func:`~symlayout.prove.
obligations.hardware_elements`).  A Z3 proof decides them on one copy tile, whose stand-in layout
only gets CuTe's element *indices* right; the indices are the hardware's bytes exactly when every
dereferenced vector is contiguous in the real layout -- for every parameter value and rest tile,
one Z3 query.  A witness of a non-contiguous vector is instantiated and the property re-checked
exhaustively on the hardware's bytes (without parameters that decides it); when that member is too
large, or the property holds there while other members are undecided, the result is UNKNOWN.
"""
from __future__ import annotations

import time

from ..decide.bvterms import Or
from .model import instantiated_model
from .obligations import CHECKS, access_vectors
from ..verdict.result import REFUTED, UNKNOWN, Result
from ..decide.z3problem import Problem, substitute

#: instantiated witnesses up to this many smem elements are re-checked by enumeration
WITNESS_LIMIT = 1 << 20


def vectors(tm) -> list:
    """The tile's dereferenced vectors: tuples of the tile indices each one reads or writes, in order."""
    return sorted({tuple(tm.calls[t][c].smem[i] for i in idx) for (w, c, l, t, rr, idx) in access_vectors(tm)})


def contiguity(P, deadline=None):
    """Whether every dereferenced vector of ``P``'s tile is contiguous in its smem layout, for every
    parameter value and rest tile: ``("unsat", None)`` (it is: no vector is broken), ``("sat", values)``
    (a witness) or ``("unknown", reason)``; a decided answer is kept on ``P`` (one query for the
    properties that share ``P``: see :func:`~symlayout.prove.copy.z3backend.decide`)."""
    hit = P.memo.get("contiguity")
    if hit is not None:
        return hit
    bad = [P.addr(i) != P.addr(ent[0]) + e for ent in vectors(P.tm) for e, i in enumerate(ent) if e]
    info = {}
    r = P.solve(Or(*bad), None if deadline is None else max(0.0, deadline - time.perf_counter()), info)
    if r[0] != "unknown":
        P.memo["contiguity"] = r
        P.memo["contiguity guarded"] = info.get("guarded", True)
    return r


def contiguous(P, deadline=None) -> bool:
    """:func:`contiguity` proved, on a query without a divisor that may be 0 (which the properties that
    lean on it would have reported: they are asked in full then)."""
    return contiguity(P, deadline)[0] == "unsat" and not P.memo.get("contiguity guarded", True)


def hardware_link(r: Result, tm, S, params, timeout_s, P=None) -> Result:
    """``r`` (PROVED on the tile model ``tm`` over CuTe's indices) made a statement about the bytes
    (``P``: the :class:`~symlayout.prove.decide.z3problem.Problem` of ``tm`` over ``S`` when the caller has it)."""
    t0 = time.perf_counter()
    if P is None:
        P = Problem(tm, S, params, tm.value_bits, tm.align)
    st, mdl = contiguity(P, None if timeout_s is None else t0 + timeout_s)
    r.seconds += time.perf_counter() - t0
    r.method += " + z3 (contiguous vectors)"
    if st == "unsat":
        return r
    if st != "sat":
        r.status, r.detail = UNKNOWN, f"whether every vector is contiguous is undecided: {mdl}"
        return r
    ps, us = P.values(mdl)
    Sc = substitute(S, ps) if ps else S
    where = ", ".join(f"{k} = {v}" for k, v in ps.items())
    if isinstance(Sc.size(), int) and Sc.size() <= WITNESS_LIMIT:
        m = instantiated_model(tm, Sc)
        rr = CHECKS[r.property](m)
        if rr.status == REFUTED or not params:     # without parameters the witness is the configuration
            if rr.counterexample is not None:
                rr.counterexample.params = ps or None
            rr.method = "z3 + exhaustive (witness)" if params else "z3 + exhaustive"
            rr.seconds, rr.expected = r.seconds + rr.seconds, r.expected
            return rr
    r.status = UNKNOWN
    r.detail = (f"some vector is not contiguous ({'for ' + where + ', ' if where else ''}rest tile {tuple(us)}), so the "
                f"bytes the hardware touches are not CuTe's indices; {r.property} of the bytes is not decided")
    return r
