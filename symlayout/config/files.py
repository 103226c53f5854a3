"""Configuration files: reading one (size, encoding), finding them below directories, telling them from other TOML."""

from __future__ import annotations

import difflib
import os
import tomllib
from pathlib import Path

from ..errors import ConfigError, SymlayoutError
from .messages import _one_line
from .keys import MAX_FILE_BYTES, TOP

#: top-level tables that make a TOML file a configuration (a directory's other TOML files are skipped)
CONFIG_TABLES = ("mma", "copy", "threadmap", "g2s", "s2g", "smem", "tma", "stages", "tmem", "tmem_copy", "sf")


def read_text(path: str) -> str:
    p = Path(path)
    try:
        if p.is_dir():
            raise ConfigError(f"{path}: is a directory, not a configuration file")
        with open(p, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except ConfigError:
        raise
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except PermissionError:
        raise ConfigError(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a configuration file") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {_one_line(e.strerror or e)}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: too large for a configuration file (over {MAX_FILE_BYTES} bytes)")
    if b"\x00" in raw:
        off = raw.index(b"\x00")
        line = raw[:off].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not a text file (NUL byte at offset {off})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not a UTF-8 text file (byte 0x{raw[e.start]:02x} at offset {e.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def not_a_configuration(path) -> str | None:
    """Why a TOML file found in a directory is not a configuration (None: it is one).

    A file that is not valid TOML, is empty, or has a top-level key a configuration
    has (or one close to it: a mistyped ``[mmma]``) counts as a configuration (its
    error is reported); a solve input (``[unknowns]``) or a file whose top-level
    keys are all foreign (``pyproject.toml``, ...) is not.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "pyproject.toml").write_text('[project]\\nname = "x"\\n')
    >>> not_a_configuration(d / "pyproject.toml")
    'no [mma], [copy.X] or [threadmap] table (top level: project)'
    """
    try:
        data = tomllib.loads(read_text(str(path)))
    except (SymlayoutError, tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None
    if "unknowns" in data:
        return "a solve input ([unknowns]): use 'symlayout solve'"
    ours = set(CONFIG_TABLES) | set(TOP.names)
    if not data or any(k in ours or difflib.get_close_matches(k, ours, n=1, cutoff=0.75) for k in data):
        return None
    return f"no [mma], [copy.X] or [threadmap] table (top level: {', '.join(sorted(data))})"


def find_config_files(paths, skipped: list | None = None) -> list[str]:
    """Expand files and directories (every ``*.toml`` below a directory, sorted).

    A file named explicitly is always returned; in a directory, TOML files that
    are not configurations (:func:`not_a_configuration`) are left out, and
    appended to ``skipped`` as ``(path, reason)`` when a list is given.  A
    directory without any ``*.toml`` below it, or a missing path, is an error.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp()); (d / "b").mkdir(); _ = (d / "b" / "x.toml").write_text("")
    >>> _ = (d / "a.toml").write_text(""); [pathlib.Path(p).name for p in find_config_files([d])]
    ['a.toml', 'x.toml']
    """
    out: list[str] = []
    for p in paths:
        p = str(p)
        if os.path.isdir(p):
            found = sorted(str(q) for q in Path(p).rglob("*.toml") if q.is_file())
            if not found:
                raise ConfigError(f"{p}: no *.toml configuration files in this directory")
            for q in found:
                why = not_a_configuration(q)
                if why is None:
                    out.append(q)
                elif skipped is not None:
                    skipped.append((q, why))
        elif os.path.exists(p):
            out.append(p)
        else:
            raise ConfigError(f"{p}: no such file or directory")
    return out
