"""Thread maps: a thread -> element formula (``[threadmap]``) and the properties it must
meet (bounds, coverage, coalescing; :mod:`.obligations`)."""
