"""A CUTLASS 2.x thread map as a CuTe layout: ``(thread, iteration, vector element) -> element offset``
of the pitch-linear tile (contiguous dimension first), where the map's offsets are affine in each mode.

>>> from symlayout.threadmap.maps import PitchLinearWarpRakedThreadMap
>>> print(threadmap_layout(PitchLinearWarpRakedThreadMap((32, 128), 128, (4, 8), 8)))
(((4,8),(1,4)),(1,4),8):(((8,32),(32,1024)),(32,256),1)
"""
from __future__ import annotations

import math

from ..algebra.layout import Layout
from ..errors import TilingError
from .maps import (OffsetThreadMap, PitchLinear2DThreadTileStripminedThreadMap, PitchLinearStripminedThreadMap,
                   PitchLinearTilePolicyStripminedThreadContiguous, PitchLinearTilePolicyStripminedThreadStrided,
                   SwapMap, ThreadMap, TransposePitchLinearThreadMap, WarpMap)


def _thread_modes(tm: ThreadMap):
    """``(shape, c_strides, s_strides)`` of the thread mode, or None."""
    T = tm.threads
    if isinstance(tm, (PitchLinearStripminedThreadMap, PitchLinear2DThreadTileStripminedThreadMap)):
        cv = tm.shape_vec[0]
        step_c = tm.elements_per_access
        step_s = 4 if isinstance(tm, PitchLinear2DThreadTileStripminedThreadMap) else 1
        if T >= cv:
            return (cv, T // cv), (step_c, 0), (0, step_s)
        return T, step_c, 0
    if isinstance(tm, PitchLinearTilePolicyStripminedThreadContiguous):
        return T, tm.iterations[0] * tm.elements_per_access, 0
    if isinstance(tm, PitchLinearTilePolicyStripminedThreadStrided):
        return T, 0, tm.iterations[1]
    if isinstance(tm, WarpMap):
        wc, ws = tm.warp_thread_arrangement
        kwc = tm.warps_contiguous
        n = tm.warp_count
        if T != wc * ws * n or kwc <= 0 or n % kwc:
            return None
        fc, fs = tm._footprint()
        e = tm.elements_per_access
        return ((wc, ws), (kwc, n // kwc)), ((e, 0), (fc * e, 0)), ((0, 1), (0, fs))
    if isinstance(tm, TransposePitchLinearThreadMap):
        wc, ws = tm.warp_thread_arrangement
        was = tm.warp_arrangement[1]
        n = tm.warp_count
        if T != wc * ws * n or was <= 0 or n % was:
            return None
        e = tm.elements_per_access
        fc, fs = wc * tm.iterations[0], ws * tm.iterations[1]
        return ((wc, ws), (was, n // was)), ((e, 0), (0, fc * e)), ((0, 1), (fs, 0))
    if isinstance(tm, SwapMap):
        base = _thread_modes(tm.base)
        return None if base is None else (base[0], base[2], base[1])
    return None


def _fit_mode(values: list) -> tuple | None:
    """Fit ``values[k] = L(k)`` for a layout ``L`` (greedy mixed radix), or None."""
    n = len(values)
    if n == 0 or values[0] != 0:
        return None
    shape, stride, p = [], [], 1
    while p < n:
        d = values[p]
        k = 1
        while p * (k + 1) <= n and all(values[j + p * k] == values[j] + k * d for j in range(p)):
            k += 1
        while k > 1 and n % (p * k):
            k -= 1
        if k == 1:
            return None
        shape.append(k)
        stride.append(d)
        p *= k
    if not shape:
        return 1, 0
    ok = all(values[j] == sum(((j // math.prod(shape[:q])) % shape[q]) * stride[q] for q in range(len(shape)))
             for j in range(n))
    if not ok:
        return None
    if len(shape) == 1:
        return shape[0], stride[0]
    return tuple(shape), tuple(stride)


def _lin(sc, ss, pitch):
    if isinstance(sc, tuple):
        return tuple(_lin(a, b, pitch) for a, b in zip(sc, ss))
    return sc + ss * pitch


def threadmap_layout(tm: ThreadMap, pitch: int | None = None):
    """The map as a CuTe :class:`~symlayout.algebra.layout.Layout` ``(thread, iteration,
    vector element) -> element offset`` in the pitch-linear tile (pitch: the
    contiguous extent unless given).

    The iteration index is CUTLASS's ``c + s * Iterations.C`` (mode
    ``(Iterations.C, Iterations.S):(Delta.C, Delta.S * pitch)``); the vector
    mode is ``E:1`` (``(4,4):(1,pitch)`` for the 2-D thread tiles).  The
    thread mode follows the map's construction, e.g. ``(Cv, T/Cv):(E, pitch)``
    for the stripmined map and ``((Wc, Ws), (kWarpsC, kWarps/kWarpsC))`` for
    the warp maps; custom offset maps are fitted.  The result is checked
    against :meth:`~symlayout.threadmap.maps.ThreadMap.accesses`; a map that is not
    a layout (e.g. a non-zero offset for thread 0, or a formula that is not
    affine in mixed-radix digits) raises :class:`~symlayout.errors.TilingError`.

    >>> from symlayout.threadmap.maps import PitchLinearStripminedThreadMap
    >>> L = threadmap_layout(PitchLinearStripminedThreadMap((64, 8), 32, 8))
    >>> print(L)
    ((8,4),(1,2),8):((8,64),(1,256),1)
    >>> L(9, 1, 3)   # thread 9 = (c 8..15, s 1), iteration 1 (s + 4), element 3
    331
    """
    P = tm.shape[0] if pitch is None else int(pitch)
    ic, is_ = tm.iterations
    vc, vs = tm.thread_access_shape
    if isinstance(tm, OffsetThreadMap):
        nI = ic * is_
        thr = _fit_mode([tm.offset(t, 0) for t in range(tm.threads)])
        itr = _fit_mode([tm.offset(0, i) - tm.offset(0, 0) for i in range(nI)])
        if thr is None or itr is None:
            raise TilingError(f"{tm}: the offsets are not a layout of (thread, iteration)")
        L = Layout((thr[0], itr[0], vc), (thr[1], itr[1], 1))
    else:
        modes = _thread_modes(tm)
        if modes is None:
            thr = _fit_mode([c + s * P for c, s in tm.initial_offsets()])
            if thr is None:
                raise TilingError(f"{tm}: the thread offsets are not a layout")
            tshape, tstride = thr
        else:
            tshape, tstride = modes[0], _lin(modes[1], modes[2], P)
        dc, ds = tm.delta
        vshape, vstride = (vc, 1) if vs == 1 else ((vc, vs), (1, P))
        L = Layout((tshape, (ic, is_), vshape), (tstride, (dc, ds * P), vstride))
    # check against the model
    for t, i, (c, s) in tm.accesses():
        e = 0
        for es in range(vs):
            for ec in range(vc):
                want = c + ec + (s + es) * P
                if L(t, i, e) != want:
                    raise TilingError(f"{tm}: layout {L} gives {L(t, i, e)} for thread {t} iteration {i} "
                                      f"element {e}, the map {want}")
                e += 1
    return L