"""The sweep's table: one row per candidate, in a CSV file that is appended per batch and is the resume point.

Columns: ``id``, the candidate's variables, the constraint amounts (``smem_bytes``, ``registers``,
``tmem_columns``, when the spec states them), the verdict counts and measures (:data:`prover.STATS`) and
``spec`` (a hash of the spec text: a rerun refuses an output written by another spec).  A rerun reads the ids
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

from .prover import STATS, prove_batch, spec_of
from .spec import SpecError

__all__ = ["columns", "read_done", "records", "append_rows", "write_sorted", "typed", "write_json", "write_parquet",
           "Part", "prove_part", "render", "Table", "STATUSES"]

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
    quoted cell holds a newline); a last line cut by a kill is dropped (the file truncated), a file of another
    spec refused."""
    if not os.path.exists(path):
        return []
    with open(path, "rb+") as f:
        data = f.read()
        keep = data.rfind(b"\n") + 1
        if keep < len(data):
            f.truncate(keep)        # a row half written when the sweep was killed
    lines = [line + "\n" for line in data[:keep].decode("utf-8").split("\n")[:-1]]
    reader, cols = csv.reader(lines), columns(spec)
    header = next(reader, None)
    if header is None:
        return []
    if header != cols:
        raise SpecError(f"{path}: its columns are not this spec's ({','.join(header[:6])}...): "
                        f"give another output or --fresh")
    out, at, width = [], reader.line_num, len(cols)
    for cells in reader:
        if len(cells) != width or cells[-1] != spec.hash:
            raise SpecError(f"{path}:{at + 1}: written by another spec (spec "
                            f"{cells[-1] if len(cells) == width else None!r}, this one {spec.hash!r}): "
                            f"give another output or --fresh")
        n = reader.line_num
        out.append((cells, lines[at] if n == at + 1 else "".join(lines[at:n])))
        at = n
    return out


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
    rows = prove_batch(spec_text, spec_path, ids)
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


def write_json(spec, rows: list, file) -> None:
    json.dump({"spec": spec.path, "name": spec.name, "candidates": len(spec), "rows": rows,
               "summary": summary(rows)}, file, indent=1)
    file.write("\n")


def write_parquet(path: str, spec, rows: list) -> None:
    """The table as Parquet (pyarrow, an optional dependency: imported only here)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise SpecError(f"{path}: writing Parquet needs pyarrow (pip install pyarrow)") from None
    cols = columns(spec)
    data = {c: [r[c] if r[c] != "" else None for r in rows] for c in cols}
    for c in cols:     # a column mixing ints and strings (a variable with both) is written as strings
        if len({type(v) for v in data[c] if v is not None}) > 1:
            data[c] = [None if v is None else str(v) for v in data[c]]
    pq.write_table(pa.table(data), path)
