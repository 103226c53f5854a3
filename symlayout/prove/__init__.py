"""The prover, one subpackage per concept: a configuration's path model and the obligations it must meet
(``copy/``: the shared-memory <-> register copy; ``datapath/``: global copies and stages; ``hopper/``: GMMA and
TMA; ``threadmaps/``: thread -> element formulas) -> decided exhaustively or by Z3 (``decide/``: enumeration
tables, the bit-vector encoding shared with ``solve``) -> verdicts (``verdict/``) with counterexamples in the
user's terms and reports for people (``report/``); ``campaigns/`` prove random configurations.  engine.py
routes a configuration to its paths; schedule.py hands files to worker processes."""
