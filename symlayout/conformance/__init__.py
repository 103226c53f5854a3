"""Conformance with CuTe C++: :mod:`.runner` runs cases generated from CuTe C++
(``python -m symlayout.conformance FILE.jsonl...``); :mod:`.algebra`, :mod:`.atoms`, :mod:`.tiled`
and :mod:`.threadmap` hold the op handlers."""
