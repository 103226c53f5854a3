"""CUTLASS 2.x pitch-linear thread maps: :mod:`.maps` (the maps) and :mod:`.formula` (the safe
offset-formula language of user-written maps)."""
