"""The sweep's table: one row per candidate, in a CSV file that is appended per batch and is the resume point.

Columns: ``id``, the candidate's variables, the constraint amounts (``smem_bytes``, ``registers``,
``tmem_columns``, when the spec states them), the verdict counts and measures (:data:`prover.STATS`) and
``spec`` (a hash of the spec's values: a rerun refuses an output written by another spec).  A rerun reads the ids
already in the file and proves only the others; at the end the file is rewritten sorted by id, so the table
is the same for any worker count and any number of interruptions.
"""
from __future__ import annotations

import csv
import io
import json
import os

from ..errors import printable
from .prover import STATS
from .spec import SpecError

__all__ = ["columns", "read_done", "remove_table", "append_rows", "write_sorted", "typed", "write_json", "write_parquet"]

AMOUNTS = ["smem_bytes", "registers", "tmem_columns"]
#: a candidate's status (:mod:`.prover`)
STATUSES = ("legal", "illegal", "unknown", "pruned", "invalid")
NUMERIC = set(AMOUNTS) | {"id", "proved", "refuted", "vacuous", "unknown", "errors", "bank_degree"}


def columns(spec) -> list:
    return ["id", *spec.names, *[k for k in AMOUNTS if k in spec.constraints], *STATS, "spec"]


def read_done(path: str, spec) -> dict:
    """id -> row (strings) of the candidates already in ``path``; a last line cut by a kill is dropped.

    A file that is not this spec's table (another header, a row of another spec, an id outside the space, a
    status no sweep writes, bytes that are not UTF-8) is refused, untouched: a resume never truncates a file
    it did not write."""
    if not os.path.exists(path):
        return {}
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SpecError(f"{path}: cannot read the table: {e.strerror or e}") from None
    keep = data.rfind(b"\n") + 1
    cols = columns(spec)
    header = ",".join(cols).encode() + b"\n"
    if keep == 0 and header.startswith(data):
        _truncate(path, 0)              # only part of the header was written: an empty table
        return {}
    try:
        rows = list(csv.reader(io.StringIO(data[:keep].decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error):
        rows = [["<not a CSV table>"]]
    if not rows or rows[0] != cols:
        first = printable(data.split(b"\n", 1)[0][:60].decode("utf-8", "replace"))
        raise SpecError(f"{path}: not this spec's table (its first line: {first!r}): give another output or --fresh")
    done = {}
    for n, r in enumerate(rows[1:], 2):
        row = _done_row(path, n, r, cols, spec)
        done[int(row["id"])] = row
    if keep < len(data):
        _truncate(path, keep)           # a row half written when the sweep was killed
    return done


def remove_table(path: str) -> None:
    """``--fresh``: remove the sweep table at ``path`` (a file that is not one -- the spec itself, another CSV --
    is refused, untouched)."""
    if not os.path.exists(path):
        return
    try:
        with open(path, "rb") as f:
            first = f.readline(100_000).rstrip(b"\r\n")
    except OSError as e:
        raise SpecError(f"{path}: cannot read the table: {e.strerror or e}") from None
    if not (first.startswith(b"id,") and first.endswith(b",reason,spec")) and first:
        shown = printable(first[:60].decode("utf-8", "replace"))
        raise SpecError(f"{path}: --fresh removes a sweep's table, and this is none (its first line: {shown!r})")
    os.remove(path)


def _done_row(path: str, n: int, r: list, cols: list, spec) -> dict:
    """Line ``n`` of the table as a row of ``spec``, else a one-line error naming the line."""
    row = dict(zip(cols, r))
    if len(r) != len(cols) or row["spec"] != spec.hash:
        raise SpecError(f"{path}:{n}: written by another spec (spec {row.get('spec')!r}, this one "
                        f"{spec.hash!r}): give another output or --fresh")
    if not (row["id"].isdigit() and int(row["id"]) < len(spec)):
        raise SpecError(f"{path}:{n}: id {row['id']!r} is not a candidate of this spec (0..{len(spec) - 1}): "
                        f"give another output or --fresh")
    if row["status"] not in STATUSES:
        raise SpecError(f"{path}:{n}: status {row['status']!r} is not a sweep's ({', '.join(STATUSES)}): "
                        f"give another output or --fresh")
    bad = next((c for c in cols if c in NUMERIC and not _integer(row[c])), None)
    if bad is not None:
        raise SpecError(f"{path}:{n}: {bad} {row[bad]!r} is not an integer: give another output or --fresh")
    return row


def _integer(cell: str) -> bool:
    """An integer cell of the table, or an empty one."""
    return cell == "" or cell.removeprefix("-").isdigit()


def _truncate(path: str, size: int) -> None:
    with open(path, "rb+") as f:
        f.truncate(size)


def _cells(cols: list, spec, rows):
    """The CSV cells of ``rows``, in the order of ``cols`` (the ``spec`` column: this spec's hash)."""
    data = cols[:-1]
    return ([r.get(c, "") for c in data] + [spec.hash] for r in rows)


def append_rows(path: str, spec, rows: list) -> None:
    """Append one batch's rows (the header first, into a new file), flushed to the OS."""
    cols = columns(spec)
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if new:
        w.writerow(cols)
    w.writerows(_cells(cols, spec, rows))
    with open(path, "a", encoding="utf-8", newline="") as f:
        f.write(buf.getvalue())


def write_sorted(path: str, spec, rows: dict) -> None:
    """Rewrite ``path`` with ``rows`` (id -> row) sorted by id (atomically: a kill leaves the old file)."""
    cols = columns(spec)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        w.writerows(_cells(cols, spec, (rows[i] for i in sorted(rows))))
    os.replace(tmp, path)


def typed(spec, row: dict, cols: list | None = None) -> dict:
    """A row with its values typed (the variables as the spec gives them, counts as ints); ``cols``:
    :func:`columns` of ``spec``, when the caller types many rows."""
    out = {}
    values = spec.values(int(row["id"]))
    for c in cols or columns(spec):
        v = row.get(c, "")
        if c in values:
            v = values[c]
        elif c in NUMERIC and v != "":
            v = int(v)
        out[c] = v
    out["spec"] = spec.hash
    return out


def summary(rows: list) -> dict:
    out = {s: 0 for s in STATUSES}
    for r in rows:
        out[r["status"]] += 1
    return out


def _nulls(rows: list) -> list:
    """``rows`` with each empty cell (a count of a candidate not proved, no reason, ...) as None."""
    return [{k: None if v == "" else v for k, v in r.items()} for r in rows]


def write_json(spec, rows: list, file) -> None:
    """The table as one JSON document; an empty cell is ``null`` (as in the Parquet table)."""
    json.dump({"spec": spec.path, "name": spec.name, "candidates": len(spec), "rows": _nulls(rows),
               "summary": summary(rows)}, file, indent=1)
    file.write("\n")


def write_parquet(path: str, spec, rows: list) -> None:
    """The table as Parquet (pyarrow, an optional dependency: imported only here)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise SpecError(f"{path}: writing Parquet needs pyarrow (pip install pyarrow)") from None
    cols, rows = columns(spec), _nulls(rows)
    data = {c: [r[c] for r in rows] for c in cols}
    for c in cols:     # a column mixing ints and strings (a variable with both) is written as strings
        if len({type(v) for v in data[c] if v is not None}) > 1:
            data[c] = [None if v is None else str(v) for v in data[c]]
    arrays = {c: pa.array(v, type=None if any(x is not None for x in v) else _empty_type(pa, c))
              for c, v in data.items()}          # a column with no value keeps its type: counts int64, else string
    try:
        pq.write_table(pa.table(arrays), path)
    except OSError as e:
        raise SpecError(f"{path}: cannot write: {e.strerror or e}") from None


def _empty_type(pa, column: str):
    return pa.int64() if column in NUMERIC else pa.string()
