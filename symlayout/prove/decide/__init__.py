"""The deciders every path model shares: enumeration tables over whole index arrays
(:mod:`.tables`), and the Z3 encoding of layouts as bit-vector terms (:mod:`.bvterms`)
with the queries built on it (:mod:`.z3problem`), shared with ``symlayout solve``."""
