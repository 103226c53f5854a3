"""The sweep's table: one row per candidate, in a CSV file that is appended per batch and is the resume point.

Columns: ``id``, the candidate's variables, the constraint amounts (``smem_bytes``, ``registers``,
``tmem_columns``, when the spec states them), the verdict counts and measures (:data:`prover.STATS`) and
``spec`` (a hash of the spec's values: a rerun refuses an output written by another spec).  A rerun reads the ids
already in the file and proves only the others; at the end the file is rewritten sorted by id, so the table
is the same for any worker count and any number of interruptions.

A worker sends a batch's part of the table as text (:func:`prove_part`: each row's CSV line and its status),
not the rows: the client of a sweep on many workers appends lines, counts statuses and sorts lines by id, a
few microseconds a candidate (:class:`Table`).  The rows, typed, are read back from the file when a caller
needs them (``--json``, Parquet, :func:`symlayout.sweep.sweep`'s value).
"""
from __future__ import annotations

import collections
import csv
import io
import itertools
import json
import os
from typing import NamedTuple

from ..errors import printable
from .prover import STATS, Relayed, prove_batch, prove_relayed, spec_of
from .spec import SpecError

__all__ = ["columns", "read_done", "records", "remove_table", "append_rows", "write_sorted", "typed", "write_json",
           "write_parquet", "Part", "prove_part", "prove_part_relayed", "render", "Table", "STATUSES"]

#: a candidate's statuses (:mod:`.prover`), in the order a summary lists them
STATUSES = ("legal", "illegal", "unknown", "pruned", "invalid")

AMOUNTS = ["smem_bytes", "registers", "tmem_columns"]
NUMERIC = set(AMOUNTS) | {"id", "proved", "refuted", "vacuous", "unknown", "errors", "bank_degree"}


def columns(spec) -> list:
    return ["id", *spec.names, *[k for k in AMOUNTS if k in spec.constraints], *STATS, "spec"]


def read_done(path: str, spec) -> dict:
    """id -> row (strings) of the candidates already in ``path``; a last line cut by a kill is dropped."""
    cols = columns(spec)
    return {int(cells[0]): dict(zip(cols, cells)) for cells, _ in records(path, spec)}


def records(path: str, spec) -> list:
    """(cells, text) of each row in ``path``: its strings and its lines as written (one line, or more where a
    quoted cell holds a newline); a last line cut by a kill is dropped (the file truncated).

    A file that is not this spec's table (another header, a row of another spec, an id outside the space, a
    status no sweep writes, bytes that are not UTF-8) is refused, untouched: a resume never truncates a file
    it did not write."""
    if not os.path.exists(path):
        return []
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SpecError(f"{path}: cannot read the table: {e.strerror or e}") from None
    keep = data.rfind(b"\n") + 1
    cols = columns(spec)
    if keep == 0 and _header(spec).encode().startswith(data):
        _truncate(path, 0)              # only part of the header was written: an empty table
        return []
    try:
        lines = [line + "\n" for line in data[:keep].decode("utf-8").split("\n")[:-1]]
        reader = csv.reader(lines)
        header = next(reader, None)
    except (UnicodeDecodeError, csv.Error):
        header = None
    if header != cols:
        first = printable(data.split(b"\n", 1)[0][:60].decode("utf-8", "replace"))
        raise SpecError(f"{path}: not this spec's table (its first line: {first!r}): give another output or --fresh")
    out, at = [], reader.line_num
    try:
        for cells in reader:
            _done_row(path, at + 1, cells, cols, spec)
            n = reader.line_num
            out.append((cells, lines[at] if n == at + 1 else "".join(lines[at:n])))
            at = n
    except csv.Error as e:
        raise SpecError(f"{path}:{at + 1}: not a row of a sweep's table ({e}): give another output or --fresh") from None
    if keep < len(data):
        _truncate(path, keep)           # a row half written when the sweep was killed
    return out


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
        raise SpecError(f"{path}:{n}: written by another spec (spec {row.get('spec') if len(r) == len(cols) else None!r}, "
                        f"this one {spec.hash!r}): give another output or --fresh")
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


def render(spec, rows) -> list:
    """Each row's CSV line, ``\n``-ended (a cell holding a newline is quoted: a line may hold one)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    ends = list(itertools.accumulate(map(w.writerow, _cells(columns(spec), spec, rows))))
    text = buf.getvalue()
    return [text[a:b] for a, b in zip([0, *ends], ends)]


def _header(spec) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(columns(spec))
    return buf.getvalue()


def append_lines(path: str, spec, lines: list) -> None:
    """Append one batch's lines (the header first, into a new file), flushed to the OS."""
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", encoding="utf-8", newline="") as f:
        f.write((_header(spec) if new else "") + "".join(lines))


def append_rows(path: str, spec, rows: list) -> None:
    """Append one batch's rows (the header first, into a new file), flushed to the OS."""
    append_lines(path, spec, render(spec, rows))


class Part(NamedTuple):
    """A batch's part of the table as a worker sends it: the ids, each row's CSV line, each row's status."""
    ids: list
    lines: list
    statuses: list


def prove_part(spec_text: str, spec_path: str, ids) -> Part:
    """A worker's task: the rows of ``ids`` (:func:`.prover.prove_batch`) as lines of the table."""
    return _part(spec_text, spec_path, ids, prove_batch(spec_text, spec_path, ids))


def prove_part_relayed(spec_text: str, spec_path: str, ids, seed=None) -> Relayed:
    """:func:`prove_part` with the pieces of proofs other workers proved (``seed``) and the ones this batch
    proved (:func:`.prover.prove_relayed`)."""
    rows, pieces = prove_relayed(spec_text, spec_path, ids, seed)
    return Relayed(_part(spec_text, spec_path, ids, rows), pieces)


def _part(spec_text: str, spec_path: str, ids, rows: list) -> Part:
    return Part(list(ids), render(spec_of(spec_text, spec_path), rows), [r["status"] for r in rows])


class Table:
    """The table of a sweep into ``path``: the line of each row done (read back from a killed sweep's file, or
    added by :meth:`add` as the parts come, and appended to the file), the statuses counted, the legal ids;
    :meth:`write_sorted` at the end, :meth:`rows` for the rows themselves."""

    def __init__(self, spec, path: str):
        self.spec, self.path = spec, path
        done = {int(cells[0]): (cells, text) for cells, text in records(path, spec)}
        self.lines = {i: text for i, (_, text) in done.items()}
        status = columns(spec).index("status")
        self.counts = collections.Counter(cells[status] for cells, _ in done.values())
        self.legal = [i for i, (cells, _) in done.items() if cells[status] == "legal"]

    def __len__(self) -> int:
        return len(self.lines)

    def add(self, part: Part) -> None:
        append_lines(self.path, self.spec, part.lines)
        self.lines.update(zip(part.ids, part.lines))
        self.counts.update(part.statuses)
        self.legal.extend(i for i, s in zip(part.ids, part.statuses) if s == "legal")

    def write_sorted(self) -> None:
        """Rewrite the file with the lines sorted by id (atomically: a kill leaves the old file)."""
        tmp = f"{self.path}.tmp"
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(_header(self.spec))
            f.writelines(self.lines[i] for i in sorted(self.lines))
        os.replace(tmp, self.path)

    def summary(self) -> dict:
        return {s: self.counts[s] for s in STATUSES}

    def rows(self) -> list:
        """Every row of the file (typed), in its order: by id after :meth:`write_sorted`."""
        cols = columns(self.spec)
        return [typed(self.spec, r, cols) for r in read_done(self.path, self.spec).values()]


def write_sorted(path: str, spec, rows: dict) -> None:
    """Rewrite ``path`` with ``rows`` (id -> row) sorted by id (atomically: a kill leaves the old file)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(_header(spec))
        f.writelines(render(spec, [rows[i] for i in sorted(rows)]))
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
