"""The shared-memory <-> register copy: the operand model a TiledCopy and a TiledMMA build
(:mod:`.model`), the properties it must meet (:mod:`.obligations`, :mod:`.contiguity`),
their Z3 encoding for parametric layouts (:mod:`.z3backend`, :mod:`.parametric`), and the
route of a fragment slot told step by step (:mod:`.story`) or the fix a rejected copy needs
(:mod:`.suggest`)."""
