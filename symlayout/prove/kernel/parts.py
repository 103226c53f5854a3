"""What the engine calls for the tables of issue 31 (after the copies and the data path)."""
from __future__ import annotations

from ..verdict.result import PROVED, REFUTED
from .reuse import REUSE_PROPERTIES, prove_reuse


def prove_kernel(cfg, properties=None) -> list:
    """The results of every ``[reuse.X]`` of ``cfg`` (``properties``: default ``[prove] properties`` or all)."""
    props = list(properties or cfg.prove.properties or REUSE_PROPERTIES)
    refuted = cfg.expect.refuted
    out = []
    for _name, rc in sorted(cfg.reuse.items()):
        for r in prove_reuse(cfg, rc, props):
            r.expected = REFUTED if r.property in refuted else PROVED
            out.append(r)
    return out
