"""pytest plugin placeholder (replaced by the proofs collector)."""
