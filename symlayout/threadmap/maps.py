"""Models of the CUTLASS 2.x pitch-linear thread maps.

Each class reproduces, with plain Python ints, what
``cutlass/transform/pitch_linear_thread_map.h`` computes at compile time:
``Iterations``, ``Delta`` and ``initial_offset(thread_id)``.  Coordinates are
``(contiguous, strided)`` in elements.  Every ``static_assert`` of the header
and every compile-time division by zero becomes a
:class:`~symlayout.errors.TilingError` whose one-line message names the map
and the condition.

All maps share the :class:`ThreadMap` interface.  Thread ``t`` makes
``Iterations.C * Iterations.S`` accesses; access ``(c, s)`` starts at element
``initial_offset(t) + (c * Delta.C, s * Delta.S)`` and covers
``elements_per_access`` contiguous elements (CUTLASS's "RegularThreadMapping"
concept, as ``PredicatedTileAccessIterator`` walks it: ``c`` fastest).

>>> m = PitchLinearStripminedThreadMap((64, 8), 32, 4)
>>> m.iterations, m.delta, m.initial_offset(17)
((1, 4), (1, 2), (4, 1))
>>> list(m.accesses())[:2]
[(0, 0, (0, 0)), (0, 1, (0, 2))]
>>> m.element_offsets(pitch=64)[:4]
[0, 128, 256, 384]

The module also reproduces the ``get_offset`` formula of seed article 003
(:func:`seed003_get_offset`) and checks that article's claim about it
(:func:`check_seed003_strips1_claim`).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from ..errors import ConfigError, SymlayoutError, TilingError
from .formula import Expr, parse_expr

__all__ = [
    "ThreadMap",
    "PitchLinearStripminedThreadMap",
    "PitchLinearTilePolicyStripminedThreadContiguous",
    "PitchLinearTilePolicyStripminedThreadStrided",
    "PitchLinearWarpRakedThreadMap",
    "PitchLinearStridedWarpRakedThreadMap",
    "PitchLinearWarpStripedThreadMap",
    "TransposePitchLinearThreadMap",
    "TransposePitchLinearThreadMapSimt",
    "PitchLinear2DThreadTileStripminedThreadMap",
    "TransposePitchLinearThreadMap2DThreadTile",
    "OffsetThreadMap",
    "THREAD_MAPS",
    "make_thread_map",
    "seed003_get_offset",
    "pitch_linear_thread_map_offset",
    "seed003_strips1_difference",
    "check_seed003_strips1_claim",
    "Strips1Check",
]

Pair = tuple[int, int]


# --------------------------------------------------------------------------
# parameter checking helpers
# --------------------------------------------------------------------------

def _fmt(v: Any) -> str:
    if isinstance(v, tuple):
        return "(" + ",".join(str(x) for x in v) + ")"
    return str(v)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _pos_int(owner: str, what: str, v: Any) -> int:
    if not _is_int(v):
        raise TilingError(f"{owner}: {what} must be an integer, got {v!r}")
    if v <= 0:
        raise TilingError(f"{owner}: {what} must be positive, got {v}")
    return v


def _pos_pair(owner: str, what: str, v: Any) -> Pair:
    if not isinstance(v, (tuple, list)) or len(v) != 2:
        raise TilingError(f"{owner}: {what} must be a (contiguous, strided) pair, got {v!r}")
    return (_pos_int(owner, f"{what}.contiguous", v[0]), _pos_int(owner, f"{what}.strided", v[1]))


def _require(owner: str, ok: bool, condition: str) -> None:
    if not ok:
        raise TilingError(f"{owner}: static_assert fails: {condition}")


def _div(owner: str, a: int, b: int, what: str) -> int:
    """Compile-time integer division ``a / b``; ``b == 0`` does not compile."""
    if b == 0:
        raise TilingError(f"{owner}: does not compile: division by zero in {what}")
    return a // b


# --------------------------------------------------------------------------
# common interface
# --------------------------------------------------------------------------

class ThreadMap:
    """Common interface of every thread map.

    Attributes (all plain ints / pairs of ints):

    * ``threads`` -- number of participating threads (``kThreads``);
    * ``iterations`` -- ``(C, S)`` accesses per thread (``Iterations``);
    * ``delta`` -- ``(C, S)`` element distance between a thread's accesses
      (``Delta``); ``None`` for :class:`OffsetThreadMap`;
    * ``elements_per_access`` -- contiguous elements per access
      (``kElementsPerAccess``);
    * ``thread_access_shape`` -- ``(C, S)`` elements one access covers
      (``ThreadAccessShape``; ``(E, 1)`` except for the 2-D thread-tile maps);
    * ``shape`` -- ``(C, S)`` extent of the coordinate space the offsets
      address (for a non-transposed map: CUTLASS's ``Shape``);
    * ``cutlass_shape`` -- CUTLASS's ``Shape`` typedef (differs from
      ``shape`` only for the transposed maps).

    >>> m = PitchLinearWarpRakedThreadMap((64, 8), 64, (8, 4), 8)
    >>> m.num_accesses, m.iterations, m.delta
    (64, (1, 1), (64, 4))
    """

    name: str = "ThreadMap"
    #: whether the CUTLASS class has the ``Shape`` / ``ThreadAccessShape``
    #: typedefs a transposing wrapper needs
    _has_shape_typedef = True
    #: whether the CUTLASS class has ``Detail::kWarpsStrided`` / ``kWarpsContiguous``
    _has_warp_detail = False

    threads: int
    iterations: Pair
    delta: Pair | None
    elements_per_access: int
    shape: Pair

    def _take(self, shape, threads, elements_per_access) -> None:
        """The arguments every policy has: ``Shape`` (two positive sizes), ``Threads``, ``ElementsPerAccess``."""
        self.shape = _pos_pair(self.name, "shape", shape)
        self.threads = _pos_int(self.name, "threads", threads)
        self.elements_per_access = _pos_int(self.name, "elements_per_access", elements_per_access)

    @property
    def thread_access_shape(self) -> Pair:
        """``(C, S)`` elements covered by one access.

        >>> PitchLinearStripminedThreadMap((64, 8), 32, 4).thread_access_shape
        (4, 1)
        """
        return (self.elements_per_access, 1)

    @property
    def cutlass_shape(self) -> Pair:
        """CUTLASS's ``Shape`` typedef of the map.

        >>> PitchLinearStripminedThreadMap((64, 8), 32, 4).cutlass_shape
        (64, 8)
        """
        return self.shape

    @property
    def num_accesses(self) -> int:
        """Total number of accesses, ``threads * Iterations.C * Iterations.S``.

        >>> PitchLinearStripminedThreadMap((64, 8), 32, 4).num_accesses
        128
        """
        return self.threads * self.iterations[0] * self.iterations[1]

    def _initial(self, t: int) -> Pair:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_thread(self, t: Any) -> int:
        if not _is_int(t) or not 0 <= t < self.threads:
            raise TilingError(f"{self}: thread id {t!r} out of range 0..{self.threads - 1}")
        return t

    def initial_offset(self, t: int) -> Pair:
        """``(c, s)`` element coordinate of thread ``t``'s first access.

        >>> PitchLinearStripminedThreadMap((64, 8), 32, 4).initial_offset(16)
        (0, 1)
        """
        return self._initial(self._check_thread(t))

    def initial_offsets(self) -> list[Pair]:
        """``initial_offset(t)`` for every thread ``0 .. threads-1`` (cached).

        >>> PitchLinearStripminedThreadMap((8, 2), 4, 2).initial_offsets()
        [(0, 0), (2, 0), (4, 0), (6, 0)]
        """
        cache = self.__dict__.get("_offsets_cache")
        if cache is None:
            cache = [self._initial(t) for t in range(self.threads)]
            self.__dict__["_offsets_cache"] = cache
        return list(cache)

    def accesses(self) -> Iterator[tuple[int, int, Pair]]:
        """Every access as ``(thread, iteration_index, (c, s))``.

        Threads in order; for each thread the iterations as CUTLASS's
        ``PredicatedTileAccessIterator`` walks them (``c`` inner, ``s``
        outer), ``iteration_index = c + s * Iterations.C``.

        >>> list(PitchLinearStripminedThreadMap((4, 2), 2, 1).accesses())[:3]
        [(0, 0, (0, 0)), (0, 1, (2, 0)), (0, 2, (0, 1))]
        """
        ic, is_ = self.iterations
        dc, ds = self.delta  # type: ignore[misc]
        offs = self.__dict__.get("_offsets_cache") or self.initial_offsets()
        for t, (c0, s0) in enumerate(offs):
            idx = 0
            for si in range(is_):
                s = s0 + si * ds
                for ci in range(ic):
                    yield t, idx, (c0 + ci * dc, s)
                    idx += 1

    def element_offsets(self, pitch: int) -> list[int]:
        """Linear element offset ``c + s * pitch`` of each access's first
        element, in :meth:`accesses` order.

        >>> PitchLinearStripminedThreadMap((4, 2), 2, 1).element_offsets(pitch=4)
        [0, 2, 4, 6, 1, 3, 5, 7]
        """
        if not _is_int(pitch) or pitch <= 0:
            raise TilingError(f"{self}: pitch must be a positive integer, got {pitch!r}")
        return [c + s * pitch for _, _, (c, s) in self.accesses()]

    # -- symbolic form -----------------------------------------------------
    def _initial_texts(self) -> tuple[str, str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def offset_exprs(self) -> tuple[Expr, Expr]:
        """``(c, s)`` of access ``i`` of thread ``t`` as :class:`~symlayout.threadmap.formula.Expr`
        trees in the variables ``t`` and ``i`` (constant divisors only, so they
        translate to Z3 with :meth:`~symlayout.threadmap.formula.Expr.to_z3`).

        >>> c, s = PitchLinearStripminedThreadMap((64, 8), 32, 4).offset_exprs()
        >>> str(c), str(s)
        ('t % 16 * 4 + i % 1 * 1', 't // 16 + i // 1 * 2')
        >>> c.evaluate({"t": 17, "i": 3}), s.evaluate({"t": 17, "i": 3})
        (4, 7)
        """
        ic0, is0 = self._initial_texts()
        ic = max(self.iterations[0], 1)
        dc, ds = self.delta  # type: ignore[misc]
        c = parse_expr(f"({ic0}) + (i % {ic}) * {dc}", {"t", "i"})
        s = parse_expr(f"({is0}) + (i // {ic}) * {ds}", {"t", "i"})
        return c, s

    def element_offset_expr(self, pitch: int) -> Expr:
        """The linear element offset ``c + s * pitch`` as an expression in ``t``, ``i``.

        >>> e = PitchLinearStripminedThreadMap((4, 2), 2, 1).element_offset_expr(4)
        >>> [e.evaluate({"t": 1, "i": i}) for i in range(4)]
        [1, 3, 5, 7]
        """
        if not _is_int(pitch) or pitch <= 0:
            raise TilingError(f"{self}: pitch must be a positive integer, got {pitch!r}")
        c, s = self.offset_exprs()
        return parse_expr(f"({c}) + ({s}) * {pitch}", {"t", "i"})

    def _params(self) -> str:  # pragma: no cover - overridden
        return ""

    def __str__(self) -> str:
        return f"{self.name}<{self._params()}>"

    def __repr__(self) -> str:
        return f"<{self}: Iterations {_fmt(self.iterations)}, Delta {_fmt(self.delta)}>"


# --------------------------------------------------------------------------
# PitchLinearStripminedThreadMap
# --------------------------------------------------------------------------

class PitchLinearStripminedThreadMap(ThreadMap):
    """``PitchLinearStripminedThreadMap<PitchLinearShape<C,S>, Threads, E>``.

    ``Cv = C / E``; requires ``C % E == 0`` and
    ``(T < Cv and Cv % T == 0) or T % Cv == 0``.  If ``T >= Cv``:
    ``Iterations = (1, ceil(S / (T / Cv)))``, ``Delta = (1, T / Cv)`` (the
    threads may over-cover the tile: ``storage_shape`` is CUTLASS's
    ``StorageShape``); otherwise ``Iterations = (Cv / T, S)``,
    ``Delta = (T * E, 1)``.  ``initial_offset(t) = ((t % Cv) * E, t / Cv)``.

    Note: CUTLASS's class has exactly these three parameters; the ``Pitch``
    and ``Strips`` parameters of seed article 003 do not exist in CUTLASS.

    >>> m = PitchLinearStripminedThreadMap((32, 6), 64)
    >>> m.iterations, m.delta, m.storage_shape, m.initial_offset(32)
    ((1, 3), (1, 2), (32, 6), (0, 1))
    >>> PitchLinearStripminedThreadMap((64, 8), 24)
    Traceback (most recent call last):
    ...
    symlayout.errors.TilingError: PitchLinearStripminedThreadMap<(64,8),24,1>: static_assert fails: (Threads < ShapeVec::kContiguous && ShapeVec::kContiguous % Threads == 0) || Threads % ShapeVec::kContiguous == 0 (Threads = 24, ShapeVec::kContiguous = 64)
    """

    name = "PitchLinearStripminedThreadMap"

    def __init__(self, shape: Sequence[int], threads: int, elements_per_access: int = 1):
        self._take(shape, threads, elements_per_access)
        shape, threads, e = self.shape, self.threads, self.elements_per_access
        owner = str(self)
        c, s = shape
        _require(owner, c % e == 0,
                 f"Shape::kContiguous % kElementsPerAccess == 0 ({c} % {e} = {c % e})")
        cv = c // e
        self.shape_vec: Pair = (cv, s)
        _require(owner, (threads < cv and cv % threads == 0) or threads % cv == 0,
                 "(Threads < ShapeVec::kContiguous && ShapeVec::kContiguous % Threads == 0) || "
                 f"Threads % ShapeVec::kContiguous == 0 (Threads = {threads}, ShapeVec::kContiguous = {cv})")
        if threads >= cv:
            rows = threads // cv
            self.iterations = (1, (s + rows - 1) // rows)
            self.delta = (1, rows)
            self.storage_shape: Pair = (c, self.iterations[1] * rows)
        else:
            self.iterations = (cv // threads, s)
            self.delta = (threads * e, 1)
            self.storage_shape = (c, s)

    def _params(self) -> str:
        return f"{_fmt(self.shape)},{self.threads},{self.elements_per_access}"

    def _initial(self, t: int) -> Pair:
        cv = self.shape_vec[0]
        return ((t % cv) * self.elements_per_access, t // cv)

    def _initial_texts(self) -> tuple[str, str]:
        cv = self.shape_vec[0]
        return f"(t % {cv}) * {self.elements_per_access}", f"t // {cv}"


# --------------------------------------------------------------------------
# PitchLinearTilePolicyStripminedThread{Contiguous,Strided}
# --------------------------------------------------------------------------

class PitchLinearTilePolicyStripminedThreadContiguous(ThreadMap):
    """``PitchLinearTilePolicyStripminedThreadContiguous<Shape, Threads, E>``.

    Requires ``C % (T * E) == 0``; ``Iterations = (C / (T * E), S)``,
    ``Delta = (1, 1)``, ``initial_offset(t) = (t * Iterations.C * E, 0)``.
    (CUTLASS's ``Delta`` really is ``(1, 1)``: with ``E > 1`` consecutive
    contiguous accesses of a thread overlap under the RegularThreadMapping
    reading.)

    >>> m = PitchLinearTilePolicyStripminedThreadContiguous((256, 4), 32, 2)
    >>> m.iterations, m.delta, m.initial_offset(3)
    ((4, 4), (1, 1), (24, 0))
    """

    name = "PitchLinearTilePolicyStripminedThreadContiguous"
    _has_shape_typedef = False  # the CUTLASS class has no Shape / ThreadAccessShape typedefs

    def __init__(self, shape: Sequence[int], threads: int, elements_per_access: int = 1):
        self._take(shape, threads, elements_per_access)
        c, s = self.shape
        te = self.threads * self.elements_per_access
        _require(str(self), c % te == 0,
                 f"Shape::kContiguous % (Threads * ElementsPerAccess) == 0 ({c} % {te} = {c % te})")
        self.iterations = (c // te, s)
        self.delta = (1, 1)

    def _params(self) -> str:
        return f"{_fmt(self.shape)},{self.threads},{self.elements_per_access}"

    def _initial(self, t: int) -> Pair:
        return (t * self.iterations[0] * self.elements_per_access, 0)

    def _initial_texts(self) -> tuple[str, str]:
        return f"t * {self.iterations[0] * self.elements_per_access}", "0"


class PitchLinearTilePolicyStripminedThreadStrided(ThreadMap):
    """``PitchLinearTilePolicyStripminedThreadStrided<Shape, Threads, E>``.

    Requires ``S % T == 0``; ``Iterations = (C / E, S / T)`` (CUTLASS does not
    check ``C % E``: the division truncates), ``Delta = (1, 1)``,
    ``initial_offset(t) = (0, t * Iterations.S)``.

    >>> m = PitchLinearTilePolicyStripminedThreadStrided((8, 64), 32, 2)
    >>> m.iterations, m.delta, m.initial_offset(5)
    ((4, 2), (1, 1), (0, 10))
    """

    name = "PitchLinearTilePolicyStripminedThreadStrided"
    _has_shape_typedef = False

    def __init__(self, shape: Sequence[int], threads: int, elements_per_access: int = 1):
        self._take(shape, threads, elements_per_access)
        c, s = self.shape
        _require(str(self), s % self.threads == 0,
                 f"Shape::kStrided % Threads == 0 ({s} % {self.threads} = {s % self.threads})")
        self.iterations = (c // self.elements_per_access, s // self.threads)
        self.delta = (1, 1)

    def _params(self) -> str:
        return f"{_fmt(self.shape)},{self.threads},{self.elements_per_access}"

    def _initial(self, t: int) -> Pair:
        return (0, t * self.iterations[1])

    def _initial_texts(self) -> tuple[str, str]:
        return "0", f"t * {self.iterations[1]}"


# --------------------------------------------------------------------------
# warp-based maps
# --------------------------------------------------------------------------

class WarpMap(ThreadMap):
    """Shared parts of the warp-raked / warp-striped maps."""

    _has_warp_detail = True
    _check_arrangement_divides = True

    warps_contiguous: int
    warps_strided: int

    def _setup(self, shape, threads, warp_thread_arrangement, elements_per_access) -> None:
        owner = self.name
        self.shape = _pos_pair(owner, "shape", shape)
        self.threads = _pos_int(owner, "threads", threads)
        self.warp_thread_arrangement = _pos_pair(owner, "warp_thread_arrangement", warp_thread_arrangement)
        self.elements_per_access = _pos_int(owner, "elements_per_access", elements_per_access)
        owner = str(self)
        c, s = self.shape
        e = self.elements_per_access
        wc, ws = self.warp_thread_arrangement
        self.warp_size = wc * ws
        self.warp_count = self.threads // self.warp_size
        _require(owner, c % e == 0, f"Shape::kContiguous % kElementsPerAccess == 0 ({c} % {e} = {c % e})")
        sia = (c // e, s)
        self.shape_in_accesses: Pair = sia
        if self._check_arrangement_divides:
            _require(owner, sia[0] % wc == 0,
                     f"ShapeInAccesses::kContiguous % WarpThreadArrangement::kContiguous == 0 "
                     f"({sia[0]} % {wc} = {sia[0] % wc})")
            _require(owner, sia[1] % ws == 0,
                     f"ShapeInAccesses::kStrided % WarpThreadArrangement::kStrided == 0 "
                     f"({sia[1]} % {ws} = {sia[1] % ws})")
        self.warp_access_iterations: Pair = (sia[0] // wc, sia[1] // ws)

    def _finish(self, owner: str) -> None:
        wai = self.warp_access_iterations
        self.iterations = (
            _div(owner, wai[0], self.warps_contiguous,
                 f"Iterations::kContiguous = WarpAccessIterations::kContiguous / kWarpsContiguous "
                 f"(kWarpCount = {self.warp_count})"),
            _div(owner, wai[1], self.warps_strided,
                 f"Iterations::kStrided = WarpAccessIterations::kStrided / kWarpsStrided "
                 f"(kWarpCount = {self.warp_count})"),
        )
        _require(owner, self.iterations[0] * self.iterations[1] != 0,
                 f"Iterations::kCount != 0 (Iterations = {_fmt(self.iterations)})")

    @property
    def warp_arrangement(self) -> Pair:
        """``Detail::WarpArrangement`` = ``(kWarpsContiguous, kWarpsStrided)``.

        >>> PitchLinearWarpRakedThreadMap((128, 32), 256, (4, 8), 8).warp_arrangement
        (2, 4)
        """
        return (self.warps_contiguous, self.warps_strided)

    def _footprint(self) -> Pair:
        wc, ws = self.warp_thread_arrangement
        return (wc * self.iterations[0], ws * self.iterations[1])

    def _initial(self, t: int) -> Pair:
        wc, _ = self.warp_thread_arrangement
        w, lane = divmod(t, self.warp_size)
        fc, fs = self._footprint()
        kwc = self.warps_contiguous
        vc = fc * (w % kwc) + lane % wc
        vs = fs * (w // kwc) + lane // wc
        return (vc * self.elements_per_access, vs)

    def _initial_texts(self) -> tuple[str, str]:
        wc, _ = self.warp_thread_arrangement
        fc, fs = self._footprint()
        kwc, n = self.warps_contiguous, self.warp_size
        return (f"({fc} * ((t // {n}) % {kwc}) + (t % {n}) % {wc}) * {self.elements_per_access}",
                f"{fs} * ((t // {n}) // {kwc}) + (t % {n}) // {wc}")

    def _params(self) -> str:
        return (f"{_fmt(self.shape)},{self.threads},{_fmt(self.warp_thread_arrangement)},"
                f"{self.elements_per_access}")


class PitchLinearWarpRakedThreadMap(WarpMap):
    """``PitchLinearWarpRakedThreadMap<Shape, Threads, WarpThreadArrangement (Wc,Ws), E>``.

    ``kWarpCount = T / (Wc*Ws)``; ``ShapeInAccesses = (C/E, S)`` must be
    divisible by ``(Wc, Ws)``; ``WAI = ShapeInAccesses / (Wc, Ws)``; warps go
    to the strided dimension first:
    ``kWarpsStrided = kWarpCount if WAI.S >= kWarpCount else WAI.S``,
    ``kWarpsContiguous = kWarpCount / kWarpsStrided if kWarpCount > WAI.S else 1``;
    ``Iterations = WAI / (kWarpsContiguous, kWarpsStrided)`` (non-zero),
    ``Delta = (Wc * E, Ws)``.

    >>> m = PitchLinearWarpRakedThreadMap((64, 32), 128, (8, 4), 8)
    >>> m.iterations, m.delta, m.warp_arrangement, m.initial_offset(127)
    ((1, 2), (64, 4), (1, 4), (56, 27))
    >>> PitchLinearWarpRakedThreadMap((64, 4), 128, (8, 4), 8)
    Traceback (most recent call last):
    ...
    symlayout.errors.TilingError: PitchLinearWarpRakedThreadMap<(64,4),128,(8,4),8>: static_assert fails: Iterations::kCount != 0 (Iterations = (0,1))
    """

    name = "PitchLinearWarpRakedThreadMap"

    def __init__(self, shape: Sequence[int], threads: int, warp_thread_arrangement: Sequence[int],
                 elements_per_access: int = 1):
        self._setup(shape, threads, warp_thread_arrangement, elements_per_access)
        wai, n = self.warp_access_iterations, self.warp_count
        self.warps_strided = n if wai[1] >= n else wai[1]
        self.warps_contiguous = _div(str(self), n, self.warps_strided,
                                     "kWarpsContiguous = kWarpCount / kWarpsStrided") if n > wai[1] else 1
        self._finish(str(self))
        self.delta = (self.warp_thread_arrangement[0] * self.elements_per_access,
                      self.warp_thread_arrangement[1])


class PitchLinearStridedWarpRakedThreadMap(WarpMap):
    """``PitchLinearStridedWarpRakedThreadMap<Shape, Threads, WarpThreadArrangement, E>``.

    As :class:`PitchLinearWarpRakedThreadMap` (which CUTLASS instantiates as
    ``BaseThreadMap``, so its conditions must hold too) but the warps go to the
    contiguous dimension first:
    ``kWarpsContiguous = kWarpCount if WAI.C >= kWarpCount else WAI.C``,
    ``kWarpsStrided = kWarpCount / kWarpsContiguous if kWarpCount > WAI.C else 1``.
    ``Delta`` is the base map's.

    >>> m = PitchLinearStridedWarpRakedThreadMap((128, 32), 256, (4, 8), 8)
    >>> m.iterations, m.delta, m.warp_arrangement
    ((1, 2), (32, 8), (4, 2))
    """

    name = "PitchLinearStridedWarpRakedThreadMap"

    def __init__(self, shape: Sequence[int], threads: int, warp_thread_arrangement: Sequence[int],
                 elements_per_access: int = 1):
        self._setup(shape, threads, warp_thread_arrangement, elements_per_access)
        owner = str(self)
        try:
            self.base = PitchLinearWarpRakedThreadMap(shape, threads, warp_thread_arrangement,
                                                      elements_per_access)
        except TilingError as e:
            raise TilingError(f"{owner}: its BaseThreadMap does not compile: {e}") from None
        wai, n = self.warp_access_iterations, self.warp_count
        self.warps_contiguous = n if wai[0] >= n else wai[0]
        self.warps_strided = _div(owner, n, self.warps_contiguous,
                                  "kWarpsStrided = kWarpCount / kWarpsContiguous") if n > wai[0] else 1
        self._finish(owner)
        self.delta = self.base.delta


class PitchLinearWarpStripedThreadMap(WarpMap):
    """``PitchLinearWarpStripedThreadMap<Shape, Threads, WarpThreadArrangement, E>``.

    Only ``C % E == 0`` is asserted (not the divisibility by the warp
    arrangement).  ``kWarpsStrided = kWarpCount if WAI.S >= kWarpCount else
    kWarpCount / WAI.S``; ``kWarpsContiguous = WAI.C / kWarpsStrided if
    kWarpCount > WAI.S else 1``; ``Iterations = WAI / (kWarpsContiguous,
    kWarpsStrided)`` (non-zero); ``Delta = (Wc * E, Ws * kWarpsStrided)``; the
    warp footprint is ``(Wc * Iterations.C, Ws)``.

    >>> m = PitchLinearWarpStripedThreadMap((256, 8), 128, (8, 4), 8)
    >>> m.iterations, m.delta, m.warp_arrangement, m.initial_offset(96)
    ((2, 1), (64, 8), (2, 2), (128, 4))
    >>> PitchLinearWarpStripedThreadMap((64, 4), 128, (8, 4), 8)
    Traceback (most recent call last):
    ...
    symlayout.errors.TilingError: PitchLinearWarpStripedThreadMap<(64,4),128,(8,4),8>: does not compile: division by zero in Iterations::kContiguous = WarpAccessIterations::kContiguous / kWarpsContiguous (kWarpCount = 4)
    """

    name = "PitchLinearWarpStripedThreadMap"
    _check_arrangement_divides = False

    def __init__(self, shape: Sequence[int], threads: int, warp_thread_arrangement: Sequence[int],
                 elements_per_access: int = 1):
        self._setup(shape, threads, warp_thread_arrangement, elements_per_access)
        owner = str(self)
        wai, n = self.warp_access_iterations, self.warp_count
        self.warps_strided = n if wai[1] >= n else _div(owner, n, wai[1],
                                                          "kWarpsStrided = kWarpCount / WarpAccessIterations::kStrided")
        self.warps_contiguous = _div(owner, wai[0], self.warps_strided,
                                     "kWarpsContiguous = WarpAccessIterations::kContiguous / kWarpsStrided") \
            if n > wai[1] else 1
        self._finish(owner)
        wc, ws = self.warp_thread_arrangement
        self.delta = (wc * self.elements_per_access, ws * self.warps_strided)

    def _footprint(self) -> Pair:
        wc, ws = self.warp_thread_arrangement
        return (wc * self.iterations[0], ws)


# --------------------------------------------------------------------------
# transposed maps
# --------------------------------------------------------------------------

def _check_wrapped(owner: str, tm: Any, need_warp_detail: bool = False) -> ThreadMap:
    if not isinstance(tm, ThreadMap) or isinstance(tm, OffsetThreadMap):
        raise TilingError(f"{owner}: the wrapped map must be a CUTLASS thread map, got {tm!r}")
    if not tm._has_shape_typedef:
        raise TilingError(f"{owner}: does not compile: {tm.name} has no Shape/ThreadAccessShape typedef")
    if need_warp_detail and not tm._has_warp_detail:
        raise TilingError(f"{owner}: does not compile: {tm.name} has no Detail::kWarpsStrided "
                          "(needs a warp-raked or warp-striped map)")
    return tm


class TransposePitchLinearThreadMap(ThreadMap):
    """``TransposePitchLinearThreadMap<ThreadMap, WarpThreadArrangement (Wc,Ws)>``.

    The wrapped map must be warp-based (it reads ``Detail::kWarpsStrided``).
    ``Iterations = (TM.Iterations.S, TM.Iterations.C)`` with
    ``Iterations.C == 1`` asserted; ``Delta = (Wc * E, Ws)``;
    ``WarpArrangement = (TM.kWarpsStrided, TM.kWarpsContiguous)``; warp ``w``
    sits at ``(w / WarpArrangement.S, w % WarpArrangement.S)`` warp footprints.
    ``shape`` is the transposed region the warps tile,
    ``(WarpArrangement.C * Wc * Iterations.C * E, WarpArrangement.S * Ws * Iterations.S)``;
    CUTLASS's ``Shape`` (the wrapped map's) is ``cutlass_shape``.

    >>> wr = PitchLinearWarpRakedThreadMap((64, 8), 64, (8, 4), 8)
    >>> m = TransposePitchLinearThreadMap(wr, (8, 4))
    >>> m.iterations, m.delta, m.warp_arrangement, m.initial_offset(63), m.shape
    ((1, 1), (64, 4), (2, 1), (120, 3), (128, 4))
    """

    name = "TransposePitchLinearThreadMap"

    def __init__(self, thread_map: ThreadMap, warp_thread_arrangement: Sequence[int]):
        tm = _check_wrapped(self.name, thread_map, need_warp_detail=True)
        self.base = tm
        self.warp_thread_arrangement = _pos_pair(self.name, "warp_thread_arrangement",
                                                 warp_thread_arrangement)
        owner = str(self)
        self.threads = tm.threads
        self.elements_per_access = e = tm.elements_per_access
        wc, ws = self.warp_thread_arrangement
        self.warp_size = wc * ws
        self.warp_count = self.threads // self.warp_size
        c = tm.cutlass_shape[0]
        _require(owner, c % e == 0, f"Shape::kContiguous % kElementsPerAccess == 0 ({c} % {e} = {c % e})")
        self.warp_arrangement: Pair = (tm.warps_strided, tm.warps_contiguous)  # type: ignore[attr-defined]
        self.iterations = (tm.iterations[1], tm.iterations[0])
        _require(owner, self.iterations[0] == 1,
                 f"Iterations::kContiguous == 1 (Iterations = {_fmt(self.iterations)})")
        _require(owner, self.iterations[0] * self.iterations[1] != 0,
                 f"Iterations::kCount != 0 (Iterations = {_fmt(self.iterations)})")
        self.delta = (wc * e, ws)
        wac, was = self.warp_arrangement
        self.shape = (wac * wc * self.iterations[0] * e, was * ws * self.iterations[1])

    @property
    def cutlass_shape(self) -> Pair:
        """The wrapped map's ``Shape`` (CUTLASS's ``Shape`` typedef).

        >>> wr = PitchLinearWarpRakedThreadMap((64, 8), 64, (8, 4), 8)
        >>> TransposePitchLinearThreadMap(wr, (8, 4)).cutlass_shape
        (64, 8)
        """
        return self.base.cutlass_shape

    def _params(self) -> str:
        return f"{self.base},{_fmt(self.warp_thread_arrangement)}"

    def _initial(self, t: int) -> Pair:
        wc, ws = self.warp_thread_arrangement
        w, lane = divmod(t, self.warp_size)
        was = self.warp_arrangement[1]
        if was == 0:  # pragma: no cover - a valid wrapped map never has 0 warps contiguous
            raise TilingError(f"{self}: division by zero in initial_offset (WarpArrangement::kStrided = 0)")
        fc, fs = wc * self.iterations[0], ws * self.iterations[1]
        vc = fc * (w // was) + lane % wc
        vs = fs * (w % was) + lane // wc
        return (vc * self.elements_per_access, vs)

    def _initial_texts(self) -> tuple[str, str]:
        wc, ws = self.warp_thread_arrangement
        n, was = self.warp_size, self.warp_arrangement[1]
        fc, fs = wc * self.iterations[0], ws * self.iterations[1]
        return (f"({fc} * ((t // {n}) // {was}) + (t % {n}) % {wc}) * {self.elements_per_access}",
                f"{fs} * ((t // {n}) % {was}) + (t % {n}) // {wc}")


class SwapMap(ThreadMap):
    """Transpose wrappers that swap the wrapped map's coordinates."""

    def _wrap(self, thread_map: ThreadMap) -> str:
        tm = _check_wrapped(self.name, thread_map)
        self.base = tm
        self.threads = tm.threads
        self.elements_per_access = tm.elements_per_access
        self.iterations = (tm.iterations[1], tm.iterations[0])
        self.delta = (tm.delta[1], tm.delta[0])  # type: ignore[index]
        self.shape = (tm.shape[1], tm.shape[0])
        return str(self)

    @property
    def thread_access_shape(self) -> Pair:
        """The wrapped map's ``ThreadAccessShape`` (CUTLASS does not swap it).

        >>> TransposePitchLinearThreadMap2DThreadTile(
        ...     PitchLinear2DThreadTileStripminedThreadMap((64, 16), 32)).thread_access_shape
        (4, 4)
        """
        return self.base.thread_access_shape

    @property
    def cutlass_shape(self) -> Pair:
        """The wrapped map's ``Shape`` (CUTLASS's ``Shape`` typedef, not swapped).

        >>> TransposePitchLinearThreadMapSimt(PitchLinearStripminedThreadMap((8, 64), 64)).cutlass_shape
        (8, 64)
        """
        return self.base.cutlass_shape

    def _params(self) -> str:
        return str(self.base)

    def _initial(self, t: int) -> Pair:
        c, s = self.base._initial(t)
        return (s, c)

    def _initial_texts(self) -> tuple[str, str]:
        c, s = self.base._initial_texts()
        return s, c


class TransposePitchLinearThreadMapSimt(SwapMap):
    """``TransposePitchLinearThreadMapSimt<ThreadMap>``: swaps ``Iterations``,
    ``Delta`` and ``initial_offset``; asserts ``kElementsPerAccess == 1``,
    ``Iterations::kCount != 0`` and ``Iterations.S == 1`` (i.e. the wrapped
    map's ``Iterations.C == 1``).  ``shape`` is the wrapped map's, swapped.

    >>> m = TransposePitchLinearThreadMapSimt(PitchLinearStripminedThreadMap((8, 64), 64))
    >>> m.iterations, m.delta, m.initial_offset(8), m.shape
    ((8, 1), (8, 1), (1, 0), (64, 8))
    """

    name = "TransposePitchLinearThreadMapSimt"

    def __init__(self, thread_map: ThreadMap):
        owner = self._wrap(thread_map)
        e = self.elements_per_access
        _require(owner, e == 1, f"kElementsPerAccess == 1 (kElementsPerAccess = {e})")
        _require(owner, self.iterations[0] * self.iterations[1] != 0,
                 f"Iterations::kCount != 0 (Iterations = {_fmt(self.iterations)})")
        _require(owner, self.iterations[1] == 1,
                 f"Iterations::kStrided == 1 (Iterations = {_fmt(self.iterations)})")


class PitchLinear2DThreadTileStripminedThreadMap(ThreadMap):
    """``PitchLinear2DThreadTileStripminedThreadMap<Shape, Threads, PitchLinearShape<4,4>>``.

    CUTLASS only defines the ``ThreadTileShape = PitchLinearShape<4,4>``
    specialization, so ``elements_per_access = 4`` and each access covers a
    4x4 block (``thread_access_shape``).  With ``Cv, Sv = C/4, S/4``: asserts
    ``C % 4 == 0``, ``(C*S) % (T*16) == 0`` and
    ``(T < Cv and Cv % T == 0) or (T % Cv == 0 and Sv % (T/Cv) == 0)``.
    If ``T >= Cv``: ``Iterations = (1, Sv / (T/Cv))``, ``Delta = (C, T*4/Cv)``;
    else ``Iterations = (Cv/T, Sv)``, ``Delta = (T*4, 1)``.
    ``initial_offset(t) = ((t % Cv) * 4, (t / Cv) * 4)``.

    >>> m = PitchLinear2DThreadTileStripminedThreadMap((64, 16), 32)
    >>> m.iterations, m.delta, m.initial_offset(16), m.thread_access_shape
    ((1, 2), (64, 8), (0, 4), (4, 4))
    """

    name = "PitchLinear2DThreadTileStripminedThreadMap"

    def __init__(self, shape: Sequence[int], threads: int, thread_tile_shape: Sequence[int] = (4, 4)):
        owner = self.name
        self.shape = _pos_pair(owner, "shape", shape)
        self.threads = _pos_int(owner, "threads", threads)
        tts = _pos_pair(owner, "thread_tile_shape", thread_tile_shape)
        if tts != (4, 4):
            raise TilingError(f"{self}: does not compile: only ThreadTileShape PitchLinearShape<4,4> "
                              f"is defined, got {_fmt(tts)}")
        self._tts = tts
        self.elements_per_access = 4
        owner = str(self)
        c, s = self.shape
        t = self.threads
        _require(owner, c % 4 == 0, f"Shape::kContiguous % ThreadAccessShape::kContiguous == 0 ({c} % 4 = {c % 4})")
        _require(owner, (c * s) % (t * 16) == 0,
                 f"(Shape::kContiguous * Shape::kStrided) % (kThreads * ThreadAccessShape::kCount) == 0 "
                 f"({c * s} % {t * 16} = {(c * s) % (t * 16)})")
        cv, sv = c // 4, s // 4
        self.shape_vec: Pair = (cv, sv)
        _require(owner, (t < cv and cv % t == 0) or (t % cv == 0 and sv % (t // cv) == 0),
                 "(Threads < ShapeVec::kContiguous && ShapeVec::kContiguous % Threads == 0) || "
                 "(Threads % ShapeVec::kContiguous == 0 && ShapeVec::kStrided % (Threads / "
                 f"ShapeVec::kContiguous) == 0) (Threads = {t}, ShapeVec = {_fmt(self.shape_vec)})")
        if t >= cv:
            self.iterations = (1, sv // (t // cv))
            self.delta = (c, t * 4 // cv)
        else:
            self.iterations = (cv // t, sv)
            self.delta = (t * 4, 1)

    @property
    def thread_access_shape(self) -> Pair:
        """``ThreadAccessShape`` = ``(4, 4)``.

        >>> PitchLinear2DThreadTileStripminedThreadMap((64, 16), 32).thread_access_shape
        (4, 4)
        """
        return self._tts

    def _params(self) -> str:
        return f"{_fmt(self.shape)},{self.threads},(4,4)"

    def _initial(self, t: int) -> Pair:
        cv = self.shape_vec[0]
        return ((t % cv) * 4, (t // cv) * 4)

    def _initial_texts(self) -> tuple[str, str]:
        cv = self.shape_vec[0]
        return f"(t % {cv}) * 4", f"(t // {cv}) * 4"


class TransposePitchLinearThreadMap2DThreadTile(SwapMap):
    """``TransposePitchLinearThreadMap2DThreadTile<ThreadMap>``: swaps
    ``Iterations``, ``Delta`` and ``initial_offset``; asserts
    ``kElementsPerAccess > 1`` and ``Iterations::kCount != 0``.

    >>> m = TransposePitchLinearThreadMap2DThreadTile(
    ...     PitchLinear2DThreadTileStripminedThreadMap((64, 16), 32))
    >>> m.iterations, m.delta, m.initial_offset(16)
    ((2, 1), (8, 64), (4, 0))
    """

    name = "TransposePitchLinearThreadMap2DThreadTile"

    def __init__(self, thread_map: ThreadMap):
        owner = self._wrap(thread_map)
        e = self.elements_per_access
        _require(owner, e > 1, f"kElementsPerAccess > 1 (kElementsPerAccess = {e})")
        _require(owner, self.iterations[0] * self.iterations[1] != 0,
                 f"Iterations::kCount != 0 (Iterations = {_fmt(self.iterations)})")


# --------------------------------------------------------------------------
# custom formula maps
# --------------------------------------------------------------------------

class OffsetThreadMap(ThreadMap):
    """A custom map given by a linear element offset formula in ``t`` (thread
    id) and ``i`` (iteration index), e.g. the ``kind = "offset"`` maps of a
    configuration file.

    ``iterations`` is an int ``n`` (meaning ``(n, 1)``) or a ``(C, S)`` pair;
    ``i`` runs over ``0 .. C*S-1``.  Offsets are 1-D: access ``i`` of thread
    ``t`` is at coordinate ``(formula(t, i), 0)``, ``shape = (extent, 1)``,
    and ``delta`` is ``None`` (positions come from the formula).  The formula
    is parsed by :func:`symlayout.threadmap.formula.parse_expr` (no ``eval``) and evaluated
    for every access at construction, so a division by zero is reported here.

    >>> m = OffsetThreadMap("t % 8 + ((t // 8) % 2) * 16 + (t // 16) * 256", 32, 1, 128)
    >>> [m.initial_offset(t) for t in (0, 9, 17)]
    [(0, 0), (17, 0), (257, 0)]
    >>> m.element_offsets(pitch=1000)[15:18]
    [23, 256, 257]
    """

    name = "OffsetThreadMap"
    _has_shape_typedef = False

    def __init__(self, formula: str | Expr, threads: int, iterations: int | Sequence[int] = 1,
                 extent: int | None = None, elements_per_access: int = 1):
        owner = self.name
        if isinstance(formula, Expr):
            unknown = formula.variables() - {"t", "i"}
            if unknown:
                raise ConfigError(f"{owner}: formula uses unknown variable(s) {', '.join(sorted(unknown))} "
                                  "(only t and i are defined)")
            self.formula = formula
        else:
            self.formula = parse_expr(formula, {"t", "i"})
        self.threads = _pos_int(owner, "threads", threads)
        if _is_int(iterations):
            self.iterations = (_pos_int(owner, "iterations", iterations), 1)
        else:
            self.iterations = _pos_pair(owner, "iterations", iterations)
        self.elements_per_access = _pos_int(owner, "elements_per_access", elements_per_access)
        if extent is None:
            raise ConfigError(f"{owner}: extent (number of elements of the tile) is required")
        self.extent = _pos_int(owner, "extent", extent)
        self.shape = (self.extent, 1)
        self.delta = None
        f = self.formula.compile("t", "i")
        n = self.iterations[0] * self.iterations[1]
        try:
            self._table = [[f(t, i) for i in range(n)] for t in range(self.threads)]
        except SymlayoutError as e:
            raise TilingError(f"{owner}: {e}") from None

    def _params(self) -> str:
        return f'"{self.formula}",{self.threads},{_fmt(self.iterations)},{self.extent}'

    def _initial(self, t: int) -> Pair:
        return (self._table[t][0], 0)

    def offset(self, t: int, i: int) -> int:
        """The formula's value for thread ``t`` and iteration ``i``.

        >>> OffsetThreadMap("t * 4 + i", 8, 4, 32).offset(2, 3)
        11
        """
        self._check_thread(t)
        n = self.iterations[0] * self.iterations[1]
        if not _is_int(i) or not 0 <= i < n:
            raise TilingError(f"{self}: iteration {i!r} out of range 0..{n - 1}")
        return self._table[t][i]

    def accesses(self) -> Iterator[tuple[int, int, Pair]]:
        """Every access as ``(thread, i, (formula(t, i), 0))``.

        >>> list(OffsetThreadMap("t * 2 + i", 2, 2, 4).accesses())
        [(0, 0, (0, 0)), (0, 1, (1, 0)), (1, 0, (2, 0)), (1, 1, (3, 0))]
        """
        for t, row in enumerate(self._table):
            for i, v in enumerate(row):
                yield t, i, (v, 0)

    def offset_exprs(self) -> tuple[Expr, Expr]:
        """``(formula, 0)`` as expressions in ``t`` and ``i``.

        >>> c, s = OffsetThreadMap("t * 2 + i", 2, 2, 4).offset_exprs()
        >>> str(c), str(s)
        ('t * 2 + i', '0')
        """
        return self.formula, parse_expr("0")


# --------------------------------------------------------------------------
# construction by name
# --------------------------------------------------------------------------

#: CUTLASS class name (and ``"offset"``) -> model class.
THREAD_MAPS: dict[str, type[ThreadMap]] = {
    cls.name: cls for cls in (
        PitchLinearStripminedThreadMap,
        PitchLinearTilePolicyStripminedThreadContiguous,
        PitchLinearTilePolicyStripminedThreadStrided,
        PitchLinearWarpRakedThreadMap,
        PitchLinearStridedWarpRakedThreadMap,
        PitchLinearWarpStripedThreadMap,
        TransposePitchLinearThreadMap,
        TransposePitchLinearThreadMapSimt,
        PitchLinear2DThreadTileStripminedThreadMap,
        TransposePitchLinearThreadMap2DThreadTile,
    )
}
THREAD_MAPS["offset"] = OffsetThreadMap


def make_thread_map(kind: str, *args: Any, **kwargs: Any) -> ThreadMap:
    """Build a thread map from its CUTLASS class name (or ``"offset"``).

    >>> make_thread_map("PitchLinearWarpStripedThreadMap", (64, 32), 128, (8, 4), 8).delta
    (64, 16)
    >>> make_thread_map("PitchLinearStripMinedThreadMap", (64, 8), 32)
    Traceback (most recent call last):
    ...
    symlayout.errors.ConfigError: unknown thread map kind 'PitchLinearStripMinedThreadMap' (did you mean 'PitchLinearStripminedThreadMap'?)
    """
    cls = THREAD_MAPS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        close = difflib.get_close_matches(str(kind), list(THREAD_MAPS), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(THREAD_MAPS)})"
        raise ConfigError(f"unknown thread map kind {kind!r}{hint}")
    try:
        return cls(*args, **kwargs)
    except TypeError as e:
        raise ConfigError(f"{kind}: bad parameters: {e}") from None


# --------------------------------------------------------------------------
# seed article 003
# --------------------------------------------------------------------------

def _seed_check(pitch: Any, strips: Any, k_row: Any) -> None:
    _pos_int("seed003_get_offset", "pitch", pitch)
    _pos_int("seed003_get_offset", "strips", strips)
    if not _is_int(k_row):
        raise TilingError(f"seed003_get_offset: k_row must be an integer, got {k_row!r}")


def seed003_get_offset(thread_id: int, pitch: int, strips: int, k_row: int) -> int:
    """The ``get_offset(thread_id)`` formula of seed article 003, verbatim::

        div = thread_id / kPitch;  mod = thread_id % kPitch
        strip_id = div % kStrips;  strip_offset = div / kStrips
        return mod + strip_id * kRow + strip_offset * (kPitch * kStrips * kRow)

    (The article's ``PitchLinearStripminedThreadMap<Shape, Threads, Pitch,
    Strips>`` is not CUTLASS's class, whose parameters are ``<Shape, Threads,
    ElementsPerAccess>``; see :class:`PitchLinearStripminedThreadMap`.)

    >>> [seed003_get_offset(t, 8, 4, 16) for t in (0, 7, 8, 16, 24, 31, 32)]
    [0, 7, 16, 32, 48, 55, 512]
    >>> [seed003_get_offset(t, 8, 2, 16) for t in (8, 16, 24, 31)]
    [16, 256, 272, 279]
    """
    _seed_check(pitch, strips, k_row)
    if not _is_int(thread_id) or thread_id < 0:
        raise TilingError(f"seed003_get_offset: thread_id must be a non-negative integer, got {thread_id!r}")
    div, mod = thread_id // pitch, thread_id % pitch
    strip_id, strip_offset = div % strips, div // strips
    return mod + strip_id * k_row + strip_offset * (pitch * strips * k_row)


def pitch_linear_thread_map_offset(thread_id: int, pitch: int, k_row: int) -> int:
    """The article's "PitchLinearThreadMap" formula ``t % Pitch + (t / Pitch) * kRow``.

    >>> [pitch_linear_thread_map_offset(t, 8, 16) for t in (0, 7, 8, 17)]
    [0, 7, 16, 33]
    """
    _seed_check(pitch, 1, k_row)
    if not _is_int(thread_id) or thread_id < 0:
        raise TilingError(f"pitch_linear_thread_map_offset: thread_id must be a non-negative integer, "
                          f"got {thread_id!r}")
    return thread_id % pitch + (thread_id // pitch) * k_row


def seed003_strips1_difference():
    """``seed003_get_offset(t, P, 1, k) - pitch_linear_thread_map_offset(t, P, k)``,
    simplified by sympy for symbolic positive integers ``t, P, k``.

    The article claims that with ``Strips = 1`` its formula "degenerates to"
    ``t % Pitch + (t / Pitch) * kRow``.  The difference is
    ``k * (P - 1) * floor(t / P)``: the claim holds only when ``Pitch == 1``,
    ``kRow == 0`` or for the first ``Pitch`` threads.

    >>> seed003_strips1_difference()
    k*(P - 1)*floor(t/P)
    """
    import sympy
    t, p, k = sympy.symbols("t P k", integer=True, positive=True)
    div = sympy.floor(t / p)
    seed = sympy.Mod(t, p) + sympy.Mod(div, 1) * k + sympy.floor(div / 1) * (p * 1 * k)
    plain = sympy.Mod(t, p) + div * k
    return sympy.factor(sympy.simplify(seed - plain))


@dataclass(frozen=True)
class Strips1Check:
    """Result of :func:`check_seed003_strips1_claim`.

    ``holds`` is True when Z3 proved the two formulas equal for every thread
    in range; otherwise ``counterexample`` is the smallest thread id where they
    differ, with both values.

    >>> Strips1Check(True, None, None, None).holds
    True
    """
    holds: bool
    counterexample: int | None
    seed_value: int | None
    plain_value: int | None

    def __str__(self) -> str:
        if self.holds:
            return "proved: equal for every thread"
        return (f"refuted: thread {self.counterexample}: seed 003 gives {self.seed_value}, "
                f"t % Pitch + (t / Pitch) * kRow gives {self.plain_value}")


def check_seed003_strips1_claim(pitch: int, k_row: int, threads: int | None = None) -> Strips1Check:
    """Check, with Z3, the article's claim that with ``Strips = 1``
    ``seed003_get_offset(t, pitch, 1, k_row) == t % pitch + (t / pitch) * k_row``
    for every thread ``0 <= t < threads`` (every ``t >= 0`` if ``threads`` is None).

    The claim is false in general (see :func:`seed003_strips1_difference`):

    >>> print(check_seed003_strips1_claim(8, 16))
    refuted: thread 8: seed 003 gives 128, t % Pitch + (t / Pitch) * kRow gives 16
    >>> print(check_seed003_strips1_claim(1, 16))
    proved: equal for every thread
    >>> check_seed003_strips1_claim(8, 16, threads=8).holds
    True
    """
    import z3
    _seed_check(pitch, 1, k_row)
    if threads is not None:
        _pos_int("check_seed003_strips1_claim", "threads", threads)
    p, k = pitch, k_row
    seed = parse_expr(f"t % {p} + ((t // {p}) % 1) * {k} + ((t // {p}) // 1) * ({p} * 1 * {k})", {"t"})
    plain = parse_expr(f"t % {p} + (t // {p}) * {k}", {"t"})
    t = z3.Int("t")
    opt = z3.Optimize()
    opt.add(t >= 0)
    if threads is not None:
        opt.add(t < threads)
    opt.add(seed.to_z3({"t": t}) != plain.to_z3({"t": t}))
    opt.minimize(t)
    if opt.check() == z3.unsat:
        return Strips1Check(True, None, None, None)
    tv = opt.model()[t].as_long()
    return Strips1Check(False, tv, seed003_get_offset(tv, p, 1, k), pitch_linear_thread_map_offset(tv, p, k))


def seed003_formula(pitch: int, strips: int, k_row: int) -> str:
    """Seed 003's ``get_offset`` as an ``offset`` formula for a ``[threadmap]``.

    >>> seed003_formula(8, 2, 16)
    't % 8 + ((t // 8) % 2) * 16 + ((t // 8) // 2) * 256'
    """
    for v in (pitch, strips):
        if not isinstance(v, int) or v <= 0:
            raise TilingError(f"seed003_formula: pitch and strips must be positive integers, got {v!r}")
    return (f"t % {pitch} + ((t // {pitch}) % {strips}) * {k_row} + "
            f"((t // {pitch}) // {strips}) * {pitch * strips * k_row}")


def seed003_table(pitch: int, strips: int, k_row: int, threads: int) -> list:
    """Seed 003's walkthrough table: per thread ``(t, mod, strip_id, strip_offset, offset, row, col)``
    with ``row, col = divmod(offset, k_row)``.

    >>> seed003_table(8, 4, 16, 32)[8]
    (8, 0, 1, 0, 16, 1, 0)
    >>> seed003_table(8, 2, 16, 32)[16]
    (16, 0, 0, 1, 256, 16, 0)
    """
    out = []
    for t in range(threads):
        off = seed003_get_offset(t, pitch, strips, k_row)
        div = t // pitch
        out.append((t, t % pitch, div % strips, div // strips, off, off // k_row, off % k_row))
    return out
