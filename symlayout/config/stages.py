"""``[stages]``: the pipeline depth; the PIPE mode ``(M,K,PIPE)`` of staged smem tiles."""

from __future__ import annotations

import dataclasses

from ..algebra.composed import ComposedLayout
from ..algebra.int_tuple import product
from ..algebra.layout import Layout, slice_and_offset
from ..algebra.notation import _
from ..atoms.gmma import GmmaSmemLayout
from ..errors import SymlayoutError
from .keys import MAX_STAGES, STAGES


def staged_layout(smem, count: int):
    """The pipelined buffer of ``count`` stages of ``smem``: a PIPE mode of stride
    ``cosize(smem)`` appended (as ``tile_to_shape(atom, (M,K,PIPE))`` builds it; a swizzle
    acts on the whole buffer).

    >>> from symlayout.algebra.notation import parse
    >>> str(staged_layout(parse("Sw<3,3,3> o (64,64):(64,1)"), 3))
    'Sw<3,3,3> o 0 o (64,64,3):(64,1,4096)'
    """
    inner = smem.inner if getattr(smem, "is_composed", False) else smem
    shape = inner.shape if inner.rank() > 1 else (inner.shape,)
    stride = inner.stride if inner.rank() > 1 else (inner.stride,)
    staged = Layout(tuple(shape) + (count,), tuple(stride) + (inner.cosize(),))
    if getattr(smem, "is_composed", False):
        return smem.map_inner(lambda _L: staged)
    return staged


def _append_pipe(lay, stages: int):
    """``lay`` with a PIPE mode ``stages : cosize`` appended (stages laid out one after another)."""
    inner = lay.layout if isinstance(lay, GmmaSmemLayout) else lay.inner if getattr(lay, "is_composed", False) else lay
    piped = Layout(tuple(inner.shape) + (stages,), tuple(inner.stride) + (int(inner.cosize()),))
    if isinstance(lay, GmmaSmemLayout):
        return GmmaSmemLayout(lay.swizzle, lay.bits, piped)
    if getattr(lay, "is_composed", False):
        return ComposedLayout(lay.swizzle, lay.offset, piped)
    return piped


class StagesSection:
    """``[stages]`` and the stages of smem layouts."""

    def load_stages(self, data, params=None):
        """``[stages] count``: an integer, or the name of a ``[params]`` symbol (a family of stage counts)."""
        if "stages" not in data:
            return None
        keys = ("stages",)
        t = self.table(data["stages"], keys)
        self.check_keys(t, keys, STAGES.names)
        raw = t.get("count")
        if isinstance(raw, str) and raw.strip().isdigit():
            t = dict(t, count=int(raw))          # a member of a family written out ("s" replaced by its value)
            raw = t["count"]
        if isinstance(raw, str):
            w = self.where(keys + ("count",))
            p = (params or {}).get(raw)
            if p is None:
                self.fail(keys + ("count",), f"{w}: {raw!r} is not a [params] symbol (a stage count is an integer "
                                             "or the name of a parameter)")
            if p.min < 1 or p.count() < 1:
                self.fail(keys + ("count",), f"{w}: the stage counts of {raw!r} must be at least 1 "
                                             f"(min = {p.min})")
            return raw
        return self.value(t, keys, STAGES["count"])

    def load_stage_barriers(self, data):
        """``[stages] barrier_bytes``: the pipeline's barrier bytes per stage, or None when not stated."""
        t = data.get("stages")
        if not isinstance(t, dict) or "barrier_bytes" not in t:
            return None
        return self.value(t, ("stages",), STAGES["barrier_bytes"])

    def split_stages(self, smem, keys):
        """A rank-3 ``(M,K,PIPE)`` smem layout: ``(stage 0, whole buffer, PIPE size)``; rank 2: ``(smem, None, 1)``."""
        if smem.rank() != 3:
            return smem, None, 1
        n = product(smem.shape[2])
        if not isinstance(n, int):
            self.fail(keys, f"{self.where(keys)}: the PIPE mode must be concrete")
        if n > MAX_STAGES:
            self.fail(keys, f"{self.where(keys)}: {n} stages (limit {MAX_STAGES})")
        try:
            s0, off = slice_and_offset((_, _, 0), smem)
        except SymlayoutError as e:               # CuTe's slice of the stage fails to compile as well
            self.fail(keys, f"{self.where(keys)}: a stage of this staged layout cannot be sliced (CuTe's sX(_,_,s) "
                            f"does not compile: {str(e).splitlines()[0]})")
        if off != 0:
            self.fail(keys, f"{self.where(keys)}: stage 0 of the PIPE mode does not start at offset 0")
        return s0, smem, n

    def apply_stages(self, copies, stages, family=None):
        """``[stages] count``: the PIPE mode of every A/B smem layout (a staged layout's own PIPE size must agree)."""
        for op, c in list(copies.items()):
            if c.smem_staged is not None and family is not None:
                self.fail(("stages", "count"), f"[stages] count = {family!r} is a family of stage counts, but "
                                               f"[copy.{op}] smem has a PIPE mode of {c.stages}: give one or the other")
            if c.smem_staged is not None:
                if stages is not None and stages != c.stages:
                    self.fail(("stages", "count"), f"[stages] count = {stages}, but [copy.{op}] smem has a PIPE mode "
                                                   f"of {c.stages}")
                stages = c.stages
        if stages is None:
            return None
        for op, c in list(copies.items()):
            if op != "C" and c.smem_staged is None:
                copies[op] = dataclasses.replace(c, smem_staged=staged_layout(c.smem, stages), stages=stages)
        return stages
