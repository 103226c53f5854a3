"""Kernel sources: a file of a published kernel package, found without importing or installing it.

``symlayout dsl --package quack-kernels==0.6.5 quack/rmsnorm.py`` reads a kernel file of a
distribution on the package index (a *distribution* is what ``pip`` installs: ``quack-kernels``
holds the import package ``quack``, ``flash-attn-4`` holds ``flash_attn/cute``).  The file is
looked for, in this order:

1. in the installed distribution of that name (``importlib.metadata``: its files and the
   directory they are installed under; nothing of it is imported), of the version asked for if one
   is given;
2. in the distribution's wheel of that exact version, downloaded with ``pip download --no-deps
   --only-binary=:all: DIST==VERSION`` (the index of the user's pip configuration; a short network
   timeout, no retries) into a cache directory (``$SYMLAYOUT_CACHE``, else
   ``$XDG_CACHE_HOME/symlayout`` or ``~/.cache/symlayout``) and unpacked there.  A wheel is a zip
   file: unpacking runs none of its code.  An sdist is not used: ``pip`` would run its build to
   read its metadata;
3. else :class:`KernelNotFound`, saying why (not installed and no version to download, the download
   failed: pip's last line, no such file in the distribution).

The directory a distribution is found under goes first on ``sys.path`` while its kernel is traced,
so the kernel's own imports (``from quack import ...``) find it.  CUTLASS's CuTe DSL examples are in
no wheel (``nvidia-cutlass`` ships only their notebooks, ``nvidia-cutlass-dsl`` none): a CUTLASS
checkout is read as a file.
"""
from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

__all__ = ["KernelNotFound", "Located", "PackageSpec", "parse_package", "cache_dir", "locate", "package_root"]

#: seconds pip waits for the index (``--timeout``), and for the whole download
NET_TIMEOUT_S = 10
DOWNLOAD_TIMEOUT_S = 120


class KernelNotFound(Exception):
    """The kernel file could not be found; the message says why."""


@dataclasses.dataclass(frozen=True)
class PackageSpec:
    """``DIST`` or ``DIST==VERSION``, as given to ``--package``."""
    dist: str
    version: str | None = None

    def __str__(self) -> str:
        return f"{self.dist}=={self.version}" if self.version else self.dist


@dataclasses.dataclass(frozen=True)
class Located:
    """A kernel file: its path, the directory its distribution lies under, and where that came from
    (``"installed"``, ``"cache"`` or ``"downloaded"``)."""
    path: Path
    root: Path
    source: str


_SPEC = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==\s*([A-Za-z0-9][A-Za-z0-9.+!_-]*))?\s*")


def parse_package(text: str) -> PackageSpec:
    """``"quack-kernels==0.6.5"`` -> ``PackageSpec("quack-kernels", "0.6.5")``; ``ValueError`` if malformed.

    >>> parse_package("flash-attn-4==4.0.0b29"), parse_package("quack-kernels")
    (PackageSpec(dist='flash-attn-4', version='4.0.0b29'), PackageSpec(dist='quack-kernels', version=None))
    """
    m = _SPEC.fullmatch(text)
    if not m:
        raise ValueError(f"{text!r}: expected DIST or DIST==VERSION (e.g. quack-kernels==0.6.5)")
    return PackageSpec(m.group(1), m.group(2))


def _normal(name: str) -> str:
    """A distribution name in its normal form (PEP 503: ``Flash_Attn.4`` -> ``flash-attn-4``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def cache_dir() -> Path:
    """Where downloaded releases are unpacked."""
    if os.environ.get("SYMLAYOUT_CACHE"):
        return Path(os.environ["SYMLAYOUT_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "symlayout"


def _installed(spec: PackageSpec) -> Path | None:
    """The directory the installed distribution's files lie under, if it is installed (of ``spec.version``)."""
    try:
        dist = importlib.metadata.distribution(spec.dist)
    except importlib.metadata.PackageNotFoundError:
        return None
    if spec.version and dist.version != spec.version:
        return None
    return Path(str(dist.locate_file("")))


def _release_dir(spec: PackageSpec, cache: Path) -> Path:
    return cache / "kernels" / f"{_normal(spec.dist)}-{spec.version}"


def _safe_members(zf: zipfile.ZipFile) -> list:
    """The wheel's member names, refused if any would land outside the directory it is unpacked in."""
    names = zf.namelist()
    for n in names:
        p = PurePosixPath(n)
        if p.is_absolute() or ".." in p.parts or "\\" in n:
            raise KernelNotFound(f"{zf.filename}: member {n!r} is outside the wheel's directory: not unpacked")
    return names


def _unpack(wheel: Path, dest: Path) -> None:
    """Unpack ``wheel`` into ``dest`` (whole or not at all: a temporary directory renamed at the end)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(tmp, _safe_members(zf))
        try:
            tmp.rename(dest)
        except OSError:          # unpacked meanwhile by another process: keep theirs
            if not dest.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _pip_failure(text: str) -> str:
    """The line of pip's output that says why it failed (its last ``ERROR:`` line, else its last line)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR:")]
    return (errors or lines or ["no output"])[-1][:300]


def _download(spec: PackageSpec, cache: Path, timeout_s: float) -> Path:
    """The unpacked wheel of ``spec`` (downloaded with pip into ``cache`` unless it is there already)."""
    dest = _release_dir(spec, cache)
    if dest.is_dir():
        return dest
    with tempfile.TemporaryDirectory(prefix="symlayout-pip-") as d:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "--no-input", "--retries", "0", "--timeout", str(NET_TIMEOUT_S),
               "-q", "-d", d, str(spec)]
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise KernelNotFound(f"{spec}: pip download took more than {timeout_s:g} s (offline?)") from None
        wheels = sorted(Path(d).glob("*.whl"))
        if run.returncode != 0 or not wheels:
            why = _pip_failure(run.stderr + run.stdout) if run.returncode != 0 else "no wheel"
            raise KernelNotFound(f"{spec}: not installed, and pip download failed: {why}")
        _unpack(wheels[0], dest)
    return dest


def package_root(spec: PackageSpec, *, cache: Path | None = None, download: bool = True,
                 timeout_s: float = DOWNLOAD_TIMEOUT_S) -> tuple[Path, str]:
    """``(directory, source)`` of the distribution ``spec``: installed, cached or downloaded (see the module)."""
    root = _installed(spec)
    if root is not None:
        return root, "installed"
    if not spec.version:
        raise KernelNotFound(f"{spec.dist} is not installed: install it, or give the version to download "
                             f"({spec.dist}==VERSION)")
    cache = cache or cache_dir()
    if _release_dir(spec, cache).is_dir():
        return _release_dir(spec, cache), "cache"
    if not download:
        raise KernelNotFound(f"{spec} is neither installed nor in {cache}")
    return _download(spec, cache, timeout_s), "downloaded"


def locate(spec: PackageSpec | str, file: str, **kw) -> Located:
    """The kernel ``file`` (a path inside the distribution: ``quack/rmsnorm.py``) of ``spec``."""
    spec = parse_package(spec) if isinstance(spec, str) else spec
    root, source = package_root(spec, **kw)
    path = root / file
    if not path.is_file():
        raise KernelNotFound(f"{spec} ({source}, {root}): no file {file}")
    return Located(path, root, source)
