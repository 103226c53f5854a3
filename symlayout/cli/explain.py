"""``symlayout explain CONFIG [--operand X] [--thread T --slot S]``: the route of one element.

With ``--thread`` and ``--slot``: that fragment slot, from shared memory to the
register the MMA reads (or back, for C).  Without them: the first counterexample
of the configuration (of ``--operand`` when given), explained.
"""
from __future__ import annotations

from ..errors import printable
from .common import EXIT_OK, EXIT_REFUTED, UsageError, nonneg_int, operand
from ..prove.engine import prove_config

HELP = "the route of one fragment element, step by step (default: the first counterexample)"
EXIT_CODES = {EXIT_OK: "the element arrives where the MMA expects it (or nothing is refuted)",
              EXIT_REFUTED: "it does not: the route shows where it goes wrong"}
LOADS = "one"


def add_arguments(sp) -> None:
    sp.add_argument("config_path", metavar="CONFIG")
    sp.add_argument("--operand", type=operand, default=None, metavar="A|B|C")
    sp.add_argument("--thread", type=nonneg_int, default=None, metavar="T",
                    help="thread of the TiledMMA (with --slot; default: the first counterexample's)")
    sp.add_argument("--slot", type=nonneg_int, default=None, metavar="S", help="fragment slot of that thread")


def run(args) -> int:
    # lazy: only the 'explain'/'show' commands need it; 'symlayout prove FILE' starts without it
    from ..prove.report.explain import SLOT_PROPERTIES, explain_result, explain_slot, first_refutation, operand_models
    cfg = args.cfg
    if cfg.kind != "mma":
        raise UsageError(f"{cfg.path}: explain follows an element through a copy; this file has no [mma] table")
    if args.operand is not None and args.operand not in cfg.copies:
        have = ", ".join(f"[copy.{k}]" for k in cfg.copies) or "none"
        raise UsageError(f"{cfg.path}:{cfg.line('copy')}: explain --operand {args.operand}: the file has no "
                         f"[copy.{args.operand}] table (copies: {have})")
    if (args.thread is None) != (args.slot is None):
        raise UsageError("explain: give --thread and --slot together (or neither: the first counterexample)")
    if args.thread is not None:
        op = args.operand or (sorted(cfg.copies)[0] if cfg.copies else None)
        if op is None:
            raise UsageError(f"{cfg.path}: explain needs a [copy.X] table")
        _, models = operand_models(cfg, op)
        text, ok = explain_slot(cfg, models[op], args.thread, args.slot)
        print(text)
        return EXIT_OK if ok else EXIT_REFUTED
    rep = prove_config(cfg)
    if rep.error:
        raise UsageError(rep.error)
    r = first_refutation(rep.results, args.operand)
    if r is None:
        where = f" on operand {args.operand}" if args.operand else ""
        print(f"{printable(cfg.name or cfg.path)}: nothing is refuted{where}; give --thread T --slot S to follow one element")
        return EXIT_OK
    models = None
    if r.property in SLOT_PROPERTIES and r.counterexample.slot is not None and not cfg.params:
        _, models = operand_models(cfg, r.operand)
    text, _ = explain_result(cfg, r, models)
    print(text)
    return EXIT_REFUTED
