"""What the engine calls for the tables of issue 31 (after the copies and the data path)."""
from __future__ import annotations

from ..datapath.g2s import GLOBAL_PROPERTIES
from ..datapath.path import prove_datapath
from ..verdict.result import PROVED, REFUTED
from .copyonly import REGCOPY_PROPERTIES, prove_register_copy
from .epilogue import EPILOGUE_PROPERTIES, prove_epilogue
from .reuse import REUSE_PROPERTIES, prove_reuse
from .tma_residue import tma_residue_results


def prove_kernel(cfg, properties=None) -> list:
    """The results of every ``[g2r.X]``, ``[r2g.X]`` and ``[reuse.X]`` of ``cfg`` (``properties``: default
    ``[prove] properties`` or all)."""
    props = list(dict.fromkeys(properties or cfg.prove.properties
                               or REGCOPY_PROPERTIES + REUSE_PROPERTIES + EPILOGUE_PROPERTIES + GLOBAL_PROPERTIES))
    refuted = cfg.expect.refuted
    out = []
    if cfg.mma is None and (cfg.g2s or cfg.s2g):  # a copy-only kernel staging through smem: the data path's model
        out.extend(prove_datapath(cfg, [p for p in props if p in GLOBAL_PROPERTIES]))
    for _name, gc in sorted(cfg.regcopies.items()):
        out.extend(prove_register_copy(gc, cfg.params, props, refuted, cfg.mma))
    out.extend(prove_epilogue(cfg, props, refuted))
    if "in_bounds" in props:                      # predicated tails through TMA's bounds check
        tails = [(tc, False) for _op, tc in sorted(cfg.tma.items()) if tc.residue]
        epi = cfg.epilogue
        if epi is not None and epi.tma is not None and epi.tma.residue:
            tails.append((epi.tma, True))
        for tc, store in tails:
            for r in tma_residue_results(cfg, tc, store):
                r.expected = REFUTED if r.property in refuted else PROVED
                out.append(r)
    for _name, rc in sorted(cfg.reuse.items()):
        for r in prove_reuse(cfg, rc, props):
            r.expected = REFUTED if r.property in refuted else PROVED
            out.append(r)
    return out
