"""CUTLASS 2.x pitch-linear thread maps: :mod:`.maps` (the maps), :mod:`.formula` (the safe
offset-formula language of user-written maps) and :mod:`.layout` (a map as a CuTe layout)."""
