"""The prover: a configuration's model (prove/model.py) -> its obligations (obligations.py, tables.py, and the
data-path/Hopper modules) -> decided exhaustively or by Z3 (z3problem.py, z3backend.py, bvterms.py) -> verdicts
(result.py) with counterexamples in the user's terms (story.py, pictures.py); engine.py runs a configuration."""
