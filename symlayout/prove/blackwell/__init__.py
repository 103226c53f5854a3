"""Blackwell (SM100): a configuration of a ``tcgen05.mma`` (UMMA) atom proved end to end (contract Version 3)."""
