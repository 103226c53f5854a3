"""``symlayout show CONFIG``: TV layouts and partitions as tables, and pictures that explain a verdict.

``--svg FILE`` writes one picture (``--view``, default ``tv``); ``--thread T``
highlights thread T in it:

* ``tv``: the operand tile coloured by the thread that holds each element in the
  MMA fragment, labelled thread/value; elements the copy delivers elsewhere than
  the MMA expects are outlined red;
* ``copy``: the copy's source and destination TV layouts side by side (as CuTe's
  ``print_latex`` of a TiledCopy);
* ``banks``: the lanes of one instruction over the shared-memory tile, banks coloured,
  one panel per phase, conflicting lanes marked;
* ``swizzle``: the tile's element offsets without and with the swizzle;
* ``tmem`` (Blackwell, an SM100 ``[mma]``): Tensor Memory, lanes x columns, each cell coloured by the
  accumulator stage or ``[tmem]`` region that owns it (overlaps marked), the lanes by the warp of
  ``[tmem_copy.C]`` that reads them; printed as text, and drawn with ``--svg``.
"""
from __future__ import annotations

import os

from ..errors import ConfigError
from .common import EXIT_OK, nonneg_int, operand

HELP = "print TV layouts, partitions and thread maps as tables (and SVG pictures: tv, copy, banks, swizzle, tmem)"
EXIT_CODES = {EXIT_OK: "printed (and written)"}
LOADS = "one"
VIEWS = ("tv", "copy", "banks", "swizzle", "tmem")


def add_arguments(sp) -> None:
    sp.add_argument("config_path", metavar="CONFIG")
    sp.add_argument("--operand", type=operand, default=None, metavar="A|B|C")
    sp.add_argument("--svg", default=None, metavar="FILE", help="also write an SVG picture to FILE")
    sp.add_argument("--view", choices=VIEWS, default="tv", help="which picture --svg draws (default tv)")
    sp.add_argument("--thread", type=nonneg_int, default=None, metavar="T", help="highlight thread T")


def _check_writable(path) -> None:
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ConfigError(f"--svg {path}: cannot write: no such directory {parent}")
    if os.path.isdir(path):
        raise ConfigError(f"--svg {path}: cannot write: is a directory")


def write_svg(path, svg) -> None:
    """Write a picture; an unwritable path is a one-line input error (exit 2)."""
    try:
        with open(path, "w") as f:
            f.write(svg)
    except OSError as e:
        raise ConfigError(f"--svg {path}: cannot write: {e.strerror or e}") from None


def run(args) -> int:
    # lazy: only 'symlayout show' draws; other commands start without the pictures
    from ..prove.report import pictures
    # lazy: only the 'explain'/'show' commands need it; 'symlayout prove FILE' starts without it
    from ..prove.report.explain import operand_models
    if args.svg:
        _check_writable(args.svg)                 # fail before printing anything
    cfg = args.cfg
    if cfg.threadmap is not None:
        # lazy: the thread-map pictures import the threadmap solver (~0.3 s); only 'show --view threadmap' needs them
        from ..prove.report.threadmap_pictures import show_threadmap
        text, svg = show_threadmap(cfg)
        print(text)
        if args.svg:
            write_svg(args.svg, svg)
        return EXIT_OK
    if args.view == "tmem":
        return show_tmem(args, cfg)
    mma, models = operand_models(cfg, args.operand)
    ops = [args.operand] if args.operand else (sorted(models) or ["A", "B", "C"])
    print("\n\n".join(pictures.tv_table(mma, op, models.get(op)) for op in ops))
    if args.svg:
        op = ops[0]
        svg = pictures.view_svg(args.view, cfg, mma, op, models.get(op), thread=args.thread)
        write_svg(args.svg, svg)
        print(f"wrote {args.svg}")
    return EXIT_OK


def show_tmem(args, cfg) -> int:
    """``--view tmem``: the Tensor Memory grid as text (and SVG with ``--svg``)."""
    # lazy: only 'show --view tmem' draws Tensor Memory
    from ..prove.report.tmem_pictures import tmem_svg, tmem_text
    if cfg.mma is None or not getattr(cfg.mma, "is_sm100", False):
        raise ConfigError(f"{cfg.path}: --view tmem draws the Tensor Memory of an SM100 [mma] atom; this file has none")
    print(tmem_text(cfg))
    if args.svg:
        write_svg(args.svg, tmem_svg(cfg))
        print(f"wrote {args.svg}")
    return EXIT_OK
