"""Campaigns: random configurations and random parametric families, proved and
compared against CuTe (:mod:`.random_configs`, :mod:`.random_families`)."""
