"""Front ends: a kernel's tiling read where the kernel declares it, written as configurations.

A *front end* reads a kernel as its author wrote it -- a CuTe C++ traits type, or the
CuTe DSL objects a Python kernel builds at trace time -- finds the objects of its
tiling (one TiledMMA, the copies that feed and drain its operands, the copies between
global and shared memory, the smem layouts and their stages) and produces the
configurations of ``shared/spec/configs.md`` that ``symlayout prove`` reads, with
comments that name where every table came from.

* :mod:`~symlayout.frontends.cute_cpp` -- CuTe C++ traits headers (``symlayout extract``):
  a probe program prints the traits type's members, conventions say which member
  plays which role;
* :mod:`~symlayout.frontends.cute_dsl` -- CuTe DSL objects (``symlayout dsl``,
  :class:`~symlayout.frontends.cute_dsl.DslConfig`);
* the step both share, recovered objects -> configuration:
  :mod:`~symlayout.frontends.tables` (the ``[mma]``, ``[copy.X]``, ``[g2s.X]``/``[s2g.C]``
  and ``[stages]`` tables, checked against symlayout's own model),
  :mod:`~symlayout.frontends.recover` (``make_tiled_copy`` arguments read back from a
  TiledCopy) and :mod:`~symlayout.frontends.document` (the document and its TOML).

The public names stay where users import them: :mod:`symlayout.cute_dsl` and
:mod:`symlayout.extract` re-export the two front ends.
"""
