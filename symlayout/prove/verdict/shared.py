"""Pieces of proofs shared between configurations: a memo from a key -- everything a piece's answer depends
on, built next to the code that proves it -- to its answer.

A sweep proves thousands of configurations that differ in a few keys; a piece (one ``[copy.X]``, one
``[g2s.X]``) whose key two configurations share is proved once.  Answers are stored pickled and every use
gets a fresh copy (a report's assembly marks its results).

>>> memo, calls = {}, []
>>> prove = lambda: calls.append(1) or ["proved"]
>>> shared(memo, ("copy", "A"), prove), shared(memo, ("copy", "A"), prove), len(calls)
(['proved'], ['proved'], 1)
"""
from __future__ import annotations

import pickle

__all__ = ["shared", "reused", "MODELS_KEPT"]

#: the most intermediate models :func:`reused` keeps in one memo (models hold large arrays)
MODELS_KEPT = 16


def shared(memo: dict | None, key, prove, keep=lambda answer: True):
    """``prove()``'s answer, proved once per ``key`` in ``memo`` (None: not shared; a ``key`` of None: this
    piece is not shared); an answer that ``keep`` refuses (e.g. one naming its configuration's file) is not
    stored."""
    if memo is None or key is None:
        return prove()
    if key not in memo:
        answer = prove()
        if not keep(answer):
            return answer
        memo[key] = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
    return pickle.loads(memo[key])


def reused(memo: dict | None, key, build, limit: int = MODELS_KEPT):
    """``build()``'s object, built once per ``key`` among the last ``limit`` keys of ``memo`` (None: built
    each time): an intermediate model that pieces with different keys read alike (e.g. two smem base
    alignments of one tile); used as it is, not copied, so its readers must not change it."""
    if memo is None:
        return build()
    kept = memo.setdefault(("models",), {})
    if key not in kept:
        kept[key] = build()
        if len(kept) > limit:
            del kept[next(iter(kept))]              # (the oldest first)
    return kept[key]
