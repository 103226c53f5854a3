"""The CuTe C++ front end: configurations from a kernel's own traits header.

``extract(header, type_expr)`` compiles a small host program against the
CUTLASS headers (:mod:`symlayout.frontends.cute_cpp.probe`), reads the traits type's
members by the conventions of :mod:`symlayout.frontends.cute_cpp.conventions` (overridable
role by role) and returns the configuration documents
(:mod:`symlayout.frontends.document`), ready to write as TOML for
``symlayout prove``.  ``symlayout extract HEADER --type TYPE`` (or ``python -m
symlayout.extract``) does the same from a shell; :mod:`symlayout.extract` re-exports
this module's public names.

The CuTe DSL front end is :mod:`symlayout.frontends.cute_dsl`; both build their tables
through :mod:`symlayout.frontends.tables`.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..document import ConfigDoc
from .conventions import apply_overrides, build_documents, detect_profile, probe_paths, profile_docs
from .probe import ExtractError, Probe, parse_probe_output, probe_traits

__all__ = ["ExtractError", "Extraction", "extract", "documents_from_output", "ConfigDoc"]


@dataclass
class Extraction:
    """The result of :func:`extract`: the probe's output and one document per GEMM found."""
    header: str
    type_expr: str
    probe: Probe
    docs: list = field(default_factory=list)
    seconds: float = 0.0

    def file_names(self, out) -> list[Path]:
        """Where :meth:`write` puts each document: ``out`` itself for one document,
        ``<stem>_<key>.toml`` beside it (or inside it, when ``out`` is a directory) for several."""
        out = Path(out)
        if out.is_dir():
            stem = re.sub(r"\W+", "_", self.type_expr.split("<")[0]).strip("_") or "traits"
            return [out / f"{stem}_{d.key}.toml" for d in self.docs]
        if len(self.docs) == 1:
            return [out]
        return [out.with_name(f"{out.stem}_{d.key}{out.suffix or '.toml'}") for d in self.docs]

    def write(self, out) -> list[Path]:
        paths = self.file_names(out)
        for p, d in zip(paths, self.docs):
            p.write_text(d.to_toml())
        return paths


def documents_from_output(text: str, header: str, type_expr: str, profile: str | None = None,
                          members: dict | None = None, verify: bool = True) -> list:
    """The configuration documents of a probe program's recorded output (no compiler needed)."""
    probe = parse_probe_output(text)
    docs = build_documents(probe, str(header), type_expr, profile, members, verify)
    _key_docs(docs, profile, probe, members)
    return docs


def _key_docs(docs, profile, probe, members):
    roles = apply_overrides(profile_docs(profile or detect_profile(probe)), members or {})
    for d, r in zip(docs, roles):
        d.key = r.key


def extract(header, type_expr: str, include_dirs=(), profile: str | None = None, members: dict | None = None,
            cuda_arch: int | None = 80, defines=(), compiler: str | None = None, verify: bool = True) -> Extraction:
    """Extract the configuration(s) of ``type_expr`` declared in ``header``.

    ``members`` overrides roles (``{"A.smem": "SmemLayoutQ", "pv:C.copy": "MyAtom"}``,
    see :mod:`~symlayout.frontends.cute_cpp.conventions`); ``profile`` forces a convention
    (``fa2_fwd``, ``cutlass_sm80``, ``cutlass_sm80_collective``, ``generic``);
    ``cuda_arch`` is the ``__CUDA_ARCH__/10`` the header's own text sees (``None``: unset).
    """
    t0 = time.perf_counter()
    probe = probe_traits(header, type_expr, probe_paths(members), include_dirs, cuda_arch, defines, compiler)
    docs = build_documents(probe, str(header), type_expr, profile, members, verify)
    _key_docs(docs, profile, probe, members)
    if cuda_arch is not None:
        for d in docs:
            d.comments.append(f"the header's text compiled with __CUDA_ARCH__ = {int(cuda_arch) * 10} "
                              f"({probe.compiler}, host only)")
    return Extraction(str(header), type_expr, probe, docs, time.perf_counter() - t0)
