"""Configuration files: load and validate the TOML of ``shared/spec/configs.md``.

A configuration describes a TiledMMA and the copies that feed or drain it
(``[mma]``, ``[copy.A]``, ``[copy.B]``, ``[copy.C]``) or a CUTLASS 2.x thread
map (``[threadmap]``), plus optional ``[params]`` (integer symbols with
ranges), ``[prove]`` and ``[expect]``.  :func:`load_config` reads one file
into frozen dataclasses, validating every value; any problem is a
:class:`~symlayout.errors.ConfigError` whose one-line message is
``"<path>:<line>: <problem>"`` (``"<path>:<line>:<col>: invalid TOML: ..."``
for TOML syntax errors).  Unknown keys suggest the closest known key;
notation errors keep the column inside the string.

The package holds one module per section (:mod:`.mma`, :mod:`.copy`, :mod:`.globalcopy`,
:mod:`.smem`, :mod:`.tma`, :mod:`.stages`, :mod:`.params`, :mod:`.prove_expect`, :mod:`.threadmap`,
:mod:`.elements`); :mod:`.keys` describes every table's keys once, for the loader's generic
checks and for the JSON Schema of :mod:`.schema` (``docs/config.schema.json``).

Keys added by symlayout beyond the spec (documented here, meanings of the
spec's keys unchanged):

* ``[threadmap]``: ``thread_tile_shape`` (``PitchLinear2DThreadTileStripminedThreadMap``),
  and, for the transposing wrappers (``TransposePitchLinearThreadMap``,
  ``...Simt``, ``...2DThreadTile``), a sub-table ``[threadmap.base]`` holding
  the wrapped map's keys (``kind``, ``shape``, ``threads``, ...).

>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp()); p = d / "seed.toml"
>>> _ = p.write_text('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\nlayout = "(2,2,1)"\\n'
...                  '[copy.A]\\natom = "SM75_U32x2_LDSM_N"\\ntype = "half_t"\\nsmem = "(32,16):(16,1)"\\n')
>>> cfg = load_config(p)
>>> cfg.mma.atom, str(cfg.copies["A"].smem), cfg.copies["A"].align
('SM80_16x8x16_F16F16F16F16_TN', '(32,16):(16,1)', 128)
>>> _ = p.write_text('[copy.A]\\nsmme = "(32,16):(16,1)"\\n')
>>> load_config(p)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
symlayout.errors.ConfigError: ...seed.toml:2: [copy.A]: unknown key 'smme' (did you mean 'smem'?)
"""
from __future__ import annotations

from ..errors import ConfigError
from .files import CONFIG_TABLES, find_config_files, not_a_configuration, read_text  # noqa: F401
from .keys import (MAX_ALIGN, MAX_EXTENT, MAX_FILE_BYTES, MAX_GMEM_BYTES, MAX_PARAM, MAX_PERMUTATION,  # noqa: F401
                   MAX_SMEM_BYTES, MAX_STAGES, MAX_STRING, MAX_THREADS, MAX_TIMEOUT_S, OPERAND_MODES, OPERANDS,
                   PROPERTIES)
from .lines import KeyLines
from .model import (Config, CopyConfig, ExpectConfig, GlobalCopyConfig, MMAConfig, Param, ProveConfig,  # noqa: F401
                    SmemConfig, ThreadMapConfig, TiledCopySpec, TmaConfig)

# Start-up: ``import symlayout`` imports this package (``symlayout.config`` is callable), and the loader
# brings the whole layout algebra, the atoms and the tiled layer. `python -X importtime`, minimum of 7 runs
# on 2 busy cores: ``import symlayout`` 37 ms with this package's light modules (55 ms with the former
# config.py), and importing the loader another 135-157 ms. So the loader (and, in model.py, what the
# dataclasses build) is imported when a configuration is first read; every other import is at module level.


__all__ = [
    "PROPERTIES", "Config", "MMAConfig", "CopyConfig", "GlobalCopyConfig", "TiledCopySpec", "ThreadMapConfig",
    "Param", "ProveConfig", "ExpectConfig", "KeyLines", "load_config", "load_configs", "find_config_files",
    "not_a_configuration",
]


def load_config(path) -> Config:
    """Read and validate one configuration file.

    Raises :class:`ConfigError` (``"<path>:<line>: <problem>"``) for anything
    malformed: TOML syntax, types, unknown/missing keys, notation, undefined
    symbols, parameter ranges, property names, atom/type names (when the atoms
    package is importable).

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tm.toml"
    >>> _ = p.write_text('[threadmap]\\nkind = "offset"\\nthreads = 4\\noffset = "t * 2"\\nextent = 8\\n')
    >>> load_config(p).threadmap.raw_offset
    't * 2'
    """
    # lazy: the loader brings the algebra, atoms and tiled layer (135-157 ms) that `import symlayout` skips
    from .loader import _Loader
    path = str(path)
    text = read_text(path)
    return _Loader(path, text).load()


def loads_config(text: str, path: str = "<string>", parsed: dict | None = None) -> Config:
    """Validate configuration text (``path`` only names it in messages; ``parsed``: the dict
    ``tomllib.loads(text)`` gives, when the caller already holds it -- a sweep writes its candidates' text
    from their dicts -- so the text is not read again).

    >>> loads_config('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n').mma.raw_layout
    '(1,1,1)'
    """
    if not isinstance(text, str):
        raise ConfigError(f"{path}: configuration text must be a string")
    # lazy: the loader brings the algebra, atoms and tiled layer (135-157 ms) that `import symlayout` skips
    from .loader import _Loader
    return _Loader(path, text).load(parsed)


def load_configs(paths, errors: str = "raise", skipped: list | None = None):
    """Load every configuration named by ``paths`` (files and directories).

    ``errors="raise"`` (default): return ``list[Config]``, raising the first
    ConfigError.  ``errors="collect"``: return ``(configs, failures)`` where
    ``failures`` is a list of ``(path, message)`` for files that could not be
    read (the others still load).  ``skipped`` collects the TOML files of a
    directory that are not configurations (:func:`find_config_files`).

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "ok.toml").write_text('[mma]\\natom = "SM80_16x8x16_F16F16F16F16_TN"\\n')
    >>> _ = (d / "bad.toml").write_text('[mma]\\n')
    >>> cfgs, bad = load_configs([d], errors="collect")
    >>> [c.name for c in cfgs], [m.split(": ", 1)[1] for _, m in bad]
    (['ok'], ["[mma]: missing required key 'atom'"])
    """
    if errors not in ("raise", "collect"):
        raise ValueError("errors must be 'raise' or 'collect'")
    if errors == "raise":
        return [load_config(p) for p in find_config_files(paths, skipped)]
    configs, failures = [], []
    files = []
    for p in paths:
        try:
            files.extend(find_config_files([p], skipped))
        except ConfigError as e:
            failures.append((str(p), str(e)))
    for f in files:
        try:
            configs.append(load_config(f))
        except ConfigError as e:
            failures.append((f, str(e)))
    return configs, failures
