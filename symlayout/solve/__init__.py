"""Layout synthesis: solve for the unknown parts of a configuration (``symlayout solve``).

A solve file is a configuration with unknowns -- a swizzle ``Sw<?,?,?>``, an
smem entry ``?pad`` with a declared range, a copy atom or a permutation mode
chosen from a list (format: :mod:`symlayout.solve.spec`, ``docs/solve.md``).
:func:`solve` searches the values symbolically with Z3 (CEGIS over the rest
tiles; :mod:`symlayout.solve.search` drives :mod:`~symlayout.solve.cegis` over the queries of
:mod:`~symlayout.solve.queries`), and every answer is proved by the
ordinary prover before it is reported.

>>> from symlayout.solve import loads_spec, solve
>>> spec = loads_spec('''
... [mma]
... atom = "SM80_16x8x16_F16F16F16F16_TN"
... layout = "(2,2,1)"
... [copy.A]
... atom = "SM75_U32x4_LDSM_N"
... type = "half_t"
... smem = "Sw<?,?,?> o (64,32):(32,1)"
... ''')
>>> out = solve(spec, minimize="B")
>>> out.solutions[0].values, out.solutions[0].proved
({'B': 2, 'M': 3, 'S': 3}, True)
"""
from .brute import brute_force, candidates
from .search import Solution, SolveOutcome, solve
from .spec import SolveSpec, load_spec, loads_spec

__all__ = ["solve", "load_spec", "loads_spec", "SolveSpec", "Solution", "SolveOutcome", "brute_force", "candidates"]
