"""One candidate proved: its configuration loaded, its constraints checked, its verdicts in one table row.

The only module of the sweep that reaches into the prover (``prove_config``, the CuTe snippet), so a move of
those modules is one line here.

A candidate's ``status``:

* ``legal`` -- every result as expected (PROVED, or within the template's ``[expect]``);
* ``illegal`` -- some result refuted or vacuous (``reason``: the first, ``property[operand]: message``);
* ``unknown`` -- some result unknown (a timeout) and none refuted;
* ``pruned`` -- a constraint fails (``reason`` names it); not proved;
* ``invalid`` -- the configuration does not load (``reason``: the loader's one-line message), or a result is
  an input error (``[expect]`` naming a property that does not apply: ``symlayout prove`` exits 2), not a verdict.
"""
from __future__ import annotations

import itertools
import pickle
from typing import NamedTuple

from ..algebra.z3lock import serialized
from ..config import loads_config
from ..errors import ConfigError
from ..prove.report.cute_snippet import snippet
from ..prove.engine import prove_config
from .spec import Spec
from .toml import read_back, to_toml

__all__ = ["prove_candidate", "prove_batch", "prove_relayed", "Relayed", "spec_of", "load_candidate", "cute_snippet",
           "STATS"]

#: the counts and measures every row carries, after the candidate's variables
STATS = ["status", "proved", "refuted", "vacuous", "unknown", "errors", "bank_degree", "coalescing", "reason"]

_SPECS: dict = {}
#: the pieces of proofs shared between the candidates this process proves (``engine.part_key -> answer``),
#: emptied when the spec changes or it holds :data:`MEMO_LIMIT` pieces
_MEMO: dict = {}
MEMO_LIMIT = 200_000


def load_candidate(spec, i: int, env: dict | None = None):
    """The loaded :class:`~symlayout.config.Config` of candidate ``i`` (loaded from its dict: the TOML text it
    is written as, kept for messages, is not read back)."""
    d = spec.config(i, env)
    return loads_config(to_toml(d), f"{spec.path}#{i}", parsed=read_back(d))


def cute_snippet(cfg) -> str:
    return snippet(cfg)


def prove_candidate(spec, i: int, memo: dict | None = None) -> dict:
    """The table row of candidate ``i``; ``memo``: pieces of proofs shared with other candidates
    (:func:`~symlayout.prove.engine.part_key`: a copy proved once for every candidate with the same TiledMMA
    and copy table), None to prove it on its own."""
    env = spec.scope(i)
    row = {"id": i, **{n: env[n] for n in spec.names}}
    reason, amounts = spec.over_budget(env)
    row.update(amounts)
    if reason is not None:
        return _row(row, "pruned", reason=reason)
    try:
        cfg = load_candidate(spec, i, env)
    except ConfigError as e:
        return _row(row, "invalid", reason=spec.in_spec(str(e), i))
    rep = prove_config(cfg, memo=memo)
    if rep.error:
        return _row(row, "invalid", reason=rep.error)
    error = next((r for r in rep.results if r.status == "error"), None)   # bad input, as prove's exit 2: no verdict
    if error is not None:
        return _row(row, "invalid", reason=f"{_name(error)}: error: {error.detail}", **_counts(rep.results))
    return _row(row, _status(rep.results), reason=_first_unmet(rep.results), **_counts(rep.results))


def _row(row: dict, status: str, reason: str = "", **stats) -> dict:
    counts = {k: stats.get(k, "") for k in STATS}
    return {**row, **counts, "status": status, "reason": reason}


def _status(results) -> str:
    if all(r.as_expected for r in results):
        return "legal"
    if any(r.status in ("refuted", "vacuous") and not r.as_expected for r in results):
        return "illegal"
    return "unknown"


def _name(r) -> str:
    return f"{r.property}[{r.operand}]" if r.operand else r.property


def _first_unmet(results) -> str:
    r = next((r for r in results if not r.as_expected and r.status != "unknown"), None)
    r = r or next((r for r in results if not r.as_expected), None)
    if r is None:
        return ""
    why = r.counterexample.message if r.counterexample is not None else (r.detail or f"{r.status}")
    return f"{_name(r)}: {r.status}: {why}"


def _counts(results) -> dict:
    out = {s: sum(r.status == s for r in results) for s in ("proved", "refuted", "vacuous", "unknown")}
    out["errors"] = sum(r.status == "error" for r in results)
    out["bank_degree"] = _bank_degree(results)
    out["coalescing"] = _worst([r.status for r in results if r.property == "coalescing"])
    return out


def _bank_degree(results):
    """The worst bank-conflict degree over the operands (1: conflict-free), '' when not known."""
    degrees = []
    for r in (r for r in results if r.property == "bank_conflicts"):
        if r.status == "proved" and "bank_degree" not in (r.stats or {}):
            degrees.append(1)
        elif (r.stats or {}).get("bank_degree") is not None:
            degrees.append(int(r.stats["bank_degree"]))
        elif r.counterexample is not None and (r.counterexample.extra or {}).get("degree") is not None:
            degrees.append(int(r.counterexample.extra["degree"]))
        else:
            return ""
    return max(degrees) if degrees else ""


def _worst(statuses) -> str:
    for s in ("error", "refuted", "unknown", "vacuous", "proved"):
        if s in statuses:
            return s
    return ""


def spec_of(spec_text: str, spec_path: str) -> Spec:
    """The spec of this text, parsed once per process (the shared pieces are dropped when it changes)."""
    key = (spec_path, spec_text)
    if key not in _SPECS:
        _SPECS.clear()
        _MEMO.clear()
        _SPECS[key] = Spec(spec_text, spec_path)
    return _SPECS[key]


def _batch_spec(spec_text: str, spec_path: str) -> Spec:
    """:func:`spec_of` at the start of a batch, the memo emptied first when it holds :data:`MEMO_LIMIT` pieces."""
    if len(_MEMO) > MEMO_LIMIT:
        _MEMO.clear()
    return spec_of(spec_text, spec_path)


@serialized
def prove_batch(spec_text: str, spec_path: str, ids, share: bool = True) -> list:
    """The rows of candidates ``ids`` (a worker's task: the spec travels as text, parsed once per process);
    ``share``: pieces of proofs shared with the candidates this process proved before (the same rows).

    The whole batch holds the Z3 lock: in a Dask worker (a process with several threads) the lock pauses the
    cyclic collector and collects once when released, so once per batch rather than once per candidate
    (measured: a full collection per candidate made a worker 5-10x slower than the same batch in one thread)."""
    spec = _batch_spec(spec_text, spec_path)
    return [prove_candidate(spec, i, _MEMO if share else None) for i in ids]


class Relayed(NamedTuple):
    """A worker's result with the pieces of proofs its batch proved (key -> pickled answer, as the memo holds
    them), for a :class:`~.cluster.Relay` to hand to the other workers."""
    result: object
    pieces: dict


@serialized
def prove_relayed(spec_text: str, spec_path: str, ids, seed=None) -> Relayed:
    """:func:`prove_batch`'s rows of ``ids`` with the pieces of proofs this batch proved, after ``seed`` -- pieces
    other workers proved (a dict, or it pickled) -- joined this process's memo.  A piece's key is everything its
    answer depends on (:func:`~symlayout.prove.engine.part_key`), so an answer proved on another worker is the
    answer this one would prove: the rows are the same with or without a seed."""
    spec = _batch_spec(spec_text, spec_path)
    for k, v in (pickle.loads(seed) if isinstance(seed, bytes) else seed or {}).items():
        _MEMO.setdefault(k, v)
    known = len(_MEMO)
    rows = [prove_candidate(spec, i, _MEMO) for i in ids]
    return Relayed(rows, {k: v for k, v in itertools.islice(_MEMO.items(), known, None) if isinstance(v, bytes)})
