"""CuTe's layout algebra: IntTuples, Layouts, Swizzles and ComposedLayouts, their print notation,
symbolic (run-time) extents and the ``symlayout layout "EXPR"`` calculator.

Modules, bottom up: :mod:`.symbolic` (DynInt, side conditions), :mod:`.int_tuple` (CuTe's
``int_tuple.hpp``), :mod:`.layout` (``layout.hpp``), :mod:`.composed` (``swizzle.hpp``,
``swizzle_layout.hpp``, ``layout_composed.hpp``), :mod:`.notation` (the print notation),
:mod:`.calculator` (the expression calculator), :mod:`.z3terms` (the symbolic algebra as Z3 terms);
:mod:`.display` (a layout's grid of offsets, as text and the picture Jupyter draws) needs only
:mod:`.int_tuple`.
"""
