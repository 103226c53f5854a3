"""``symlayout layout "EXPR"``: evaluate CuTe layout algebra, printed in CuTe notation."""
from __future__ import annotations

from .common import EXIT_OK, UsageError
from ..algebra.cute_cpp import is_cpp_spelling, to_notation

HELP = "evaluate layout algebra in CuTe notation"
EXIT_CODES = {EXIT_OK: "evaluated"}

#: largest function table ``--table`` prints
MAX_FORCED_TABLE = 1 << 14


def add_arguments(sp) -> None:
    # lazy: the layout calculator only for 'symlayout layout'; other commands start without it
    from ..algebra.calculator import functions_help
    sp.description = HELP + "\n\nfunctions:\n" + functions_help()
    sp.add_argument("expr", metavar="EXPR", help='e.g. "complement((4,2):(1,4), 32)" or "(32*m,16):(16,1)"')
    g = sp.add_mutually_exclusive_group()
    g.add_argument("--table", dest="table", action="store_true", default=None,
                   help=f"print the function table (index -> offset) even when it is large (up to "
                        f"{MAX_FORCED_TABLE} entries)")
    g.add_argument("--no-table", dest="table", action="store_false", help="do not print the function table")


def run(args) -> int:
    # lazy: the layout calculator only for 'symlayout layout'; other commands start without it
    from ..algebra.calculator import evaluate, format_result, format_table
    res = evaluate(to_notation(args.expr) if is_cpp_spelling(args.expr) else args.expr)
    if args.table is not True:
        print(format_result(res, table=args.table is None))
        return EXIT_OK
    text = format_result(res, table=False)
    v = res.value
    lay = v.get("layout_tv") if isinstance(v, dict) else v
    if not hasattr(lay, "shape") and not hasattr(lay, "inner"):
        raise UsageError(f"--table: {args.expr!r} is not a layout")
    table = format_table(lay, max_size=MAX_FORCED_TABLE)
    if table is None:
        n = lay.size()
        why = f"size {n} > {MAX_FORCED_TABLE}" if isinstance(n, int) else "it is not concrete (symbolic extents)"
        raise UsageError(f"--table: cannot print the function table of {args.expr!r}: {why}")
    lines = text.split("\n")
    print("\n".join(lines[:1] + [table] + lines[1:]))
    return EXIT_OK
