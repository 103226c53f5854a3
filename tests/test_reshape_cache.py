"""copy()'s reshape memo must not mix a static layout with the dynamic one that prints the same (CuTe
treats a DynInt stride apart: vectorisation, static_asserts)."""
from symlayout.algebra.layout import Layout
from symlayout.algebra.symbolic import DynInt
from symlayout.tiled import copy as C


def test_static_and_dynamic_layouts_are_memoised_apart():
    static, dynamic = Layout((8, 2), (1, 8)), Layout((8, 2), (1, DynInt(8)))
    assert str(static) == str(dynamic)
    got = [C._reshaped(L, "test-key", lambda L: L) for L in (static, dynamic)]
    assert got[0] is static and got[1] is dynamic
