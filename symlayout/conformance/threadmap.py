"""Conformance handlers for the CUTLASS 2.x thread-map ops (``threadmap.jsonl``).

Each handler takes a case's ``args`` list and returns
``{"Iterations": (c, s), "Delta": (c, s), "initial_offset": [[c, s], ...]}``
(one ``[c, s]`` per thread ``0 .. threads-1``).

>>> r = OPS["pitch_linear_stripmined"](["(64,8)", 32, 4])
>>> r["Iterations"], r["Delta"], r["initial_offset"][16]
((1, 4), (1, 2), [0, 1])
"""
from __future__ import annotations

from typing import Any, Callable

from ..errors import NotationError
from ..threadmap.maps import (PitchLinearStripminedThreadMap, PitchLinearWarpRakedThreadMap,
                         PitchLinearWarpStripedThreadMap, ThreadMap)

__all__ = ["OPS", "parse_pair"]


def parse_pair(text: Any) -> tuple[int, int]:
    """Parse a flat IntTuple of two ints such as ``"(64,8)"``.

    (A tiny local helper; the full notation parser lives in
    ``symlayout.algebra.notation``.)

    >>> parse_pair("(64, 8)")
    (64, 8)
    >>> parse_pair("(64,8,2)")
    Traceback (most recent call last):
    ...
    symlayout.errors.NotationError: "(64,8,2)": expected a pair "(c,s)" of integers
    """
    if isinstance(text, (list, tuple)) and len(text) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in text):
        return (text[0], text[1])
    bad = NotationError(f'"{text}": expected a pair "(c,s)" of integers')
    if not isinstance(text, str):
        raise bad
    s = text.strip()
    if not (s.startswith("(") and s.endswith(")")):
        raise bad
    parts = [p.strip() for p in s[1:-1].split(",")]
    if len(parts) != 2:
        raise bad
    try:
        return (int(parts[0]), int(parts[1]))
    except ValueError:
        raise bad from None


def _int(v: Any) -> int:
    if isinstance(v, bool):
        raise NotationError(f"expected an integer, got {v!r}")
    if isinstance(v, int):
        return v
    try:
        return int(str(v).strip())
    except ValueError:
        raise NotationError(f"expected an integer, got {v!r}") from None


def _result(m: ThreadMap) -> dict[str, Any]:
    return {"Iterations": tuple(m.iterations), "Delta": tuple(m.delta),  # type: ignore[arg-type]
            "initial_offset": [list(o) for o in m.initial_offsets()]}


def _stripmined(args: list) -> dict[str, Any]:
    """``[shape, threads, elements_per_access]``.

    >>> _stripmined(["(8,64)", 32, 1])["Delta"]
    (1, 4)
    """
    shape, threads, epa = args
    return _result(PitchLinearStripminedThreadMap(parse_pair(shape), _int(threads), _int(epa)))


def _warp_raked(args: list) -> dict[str, Any]:
    """``[shape, threads, warp_thread_arrangement, elements_per_access]``.

    >>> _warp_raked(["(64,32)", 128, "(8,4)", 8])["Iterations"]
    (1, 2)
    """
    shape, threads, warp, epa = args
    return _result(PitchLinearWarpRakedThreadMap(parse_pair(shape), _int(threads), parse_pair(warp), _int(epa)))


def _warp_striped(args: list) -> dict[str, Any]:
    """``[shape, threads, warp_thread_arrangement, elements_per_access]``.

    >>> _warp_striped(["(64,32)", 128, "(8,4)", 8])["Delta"]
    (64, 16)
    """
    shape, threads, warp, epa = args
    return _result(PitchLinearWarpStripedThreadMap(parse_pair(shape), _int(threads), parse_pair(warp), _int(epa)))


OPS: dict[str, Callable[[list], Any]] = {
    "pitch_linear_stripmined": _stripmined,
    "pitch_linear_warp_raked": _warp_raked,
    "pitch_linear_warp_striped": _warp_striped,
}
