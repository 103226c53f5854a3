"""Hopper: warpgroup MMA (GMMA) operands read from shared memory through descriptors,
and TMA boxes that fill that shared memory (:mod:`.obligations`)."""
