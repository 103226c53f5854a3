"""The baseline: enumerate every value of the unknowns and run the ordinary prover on each
(``symlayout solve --brute-force``, the reference the symbolic search is tested against)."""
from __future__ import annotations

import time

from ..config import loads_config
from ..errors import SymlayoutError
from ..prove.engine import prove_config
from .spec import SolveSpec, parse_objective

# ---------------------------------------------------------------- the baseline: enumeration


def candidates(spec: SolveSpec):
    """Every candidate of the declared space, ``(values, combo)``, in lexicographic order
    (swizzles with ``|S| >= B``; ``B = 0`` once).  The baseline the symbolic search is
    measured and cross-checked against -- :func:`solve` never enumerates.

    >>> from symlayout.solve.spec import loads_spec
    >>> spec = loads_spec('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\n'
    ...                   'type = "half_t"\\nsmem = "Sw<?,3,3> o (32,16):(16,1)"\\n')
    >>> [v for v, _c in candidates(spec)]
    [{'B': 0}, {'B': 1}, {'B': 2}, {'B': 3}]
    """
    import itertools
    names = list(spec.unknowns)
    sws = [c.smem.swizzle for c in spec.copies.values() if c.smem.swizzle is not None]
    for combo in spec.combos():
        for vals in itertools.product(*[spec.unknowns[n].values() for n in names]):
            values = dict(zip(names, vals))
            ok = True
            for sw in sws:
                b, _m, s_ = sw.concrete(values)
                if abs(s_) < b or (b == 0 and isinstance(sw.b, str) and any(
                        isinstance(x, str) and values[x] != spec.unknowns[x].min for x in (sw.m, sw.s))):
                    ok = False
            if ok:
                yield values, combo


def brute_force(spec: SolveSpec, minimize: str | None = None, first_only: bool = False, timeout_s: float = 600.0):
    """Enumerate the space through the ordinary prover (the baseline of ``bench/solve.py``).

    Candidates are proved one by one (``prove_config`` on the completed
    configuration); with ``minimize`` they are visited in objective order (then
    lexicographic), so ``first_only`` stops at the optimum.  Returns
    ``(solutions, checked, seconds, complete)``; ``solutions`` is a list of ``(values, combo)``.

    >>> from symlayout.solve.spec import loads_spec
    >>> spec = loads_spec('[unknowns]\\npad = { max = 16, multiple_of = 8 }\\n[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n'
    ...                   'layout = "(2,2,1)"\\n[copy.A]\\natom = "SM75_U32x4_LDSM_N"\\ntype = "half_t"\\n'
    ...                   'smem = "(32,64):(64+?pad,1)"\\n')
    >>> sols, checked, _s, complete = brute_force(spec)
    >>> [v for v, _c in sols], checked, complete
    ([{'pad': 8}], 3, True)
    """
    t0 = time.perf_counter()
    cands = list(candidates(spec))
    if minimize:
        e = parse_objective(minimize, spec.unknowns)
        cands.sort(key=lambda vc: (e.evaluate(vc[0]), tuple(vc[0].values())))
    sols, checked = [], 0
    for values, combo in cands:
        if time.perf_counter() - t0 > timeout_s:
            return sols, checked, time.perf_counter() - t0, False
        checked += 1
        try:
            cfg = loads_config(spec.complete(values, combo), f"{spec.path} (candidate)")
            rep = prove_config(cfg, properties=list(spec.properties))
        except SymlayoutError:
            continue
        if rep.error is None and all(r.status == "proved" for r in rep.results):
            sols.append((values, combo))
            if first_only:
                break
    return sols, checked, time.perf_counter() - t0, True
