"""The sweep's table on the client (issue 32): a worker sends a batch as lines of the table and statuses, the
client appends the lines, counts the statuses and sorts the lines by id; the rows are typed only when asked for.
The file, the rows, the summary and the legal ids are the ones of the rows themselves."""
import contextlib
import csv
import io

import pytest

from symlayout.cli import main
from symlayout.sweep import SpecError, loads_spec, summary, sweep, sweep_table
from symlayout.sweep.prover import prove_batch
from symlayout.sweep.table import Part, Table, columns, prove_part, read_done, render, typed

from test_sweep import SMALL


@pytest.fixture
def spec(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return loads_spec(SMALL, str(p))


def _csv_rows(spec, rows) -> str:
    """The rows as csv.writer writes them: the reference for the lines."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerows([[r.get(c, "") for c in columns(spec)[:-1]] + [spec.hash] for r in rows])
    return buf.getvalue()


def test_a_part_is_the_batch_s_rows_as_lines_and_statuses(spec):
    rows = prove_batch(spec.text, spec.path, [0, 1, 2, 5])
    part = prove_part(spec.text, spec.path, [0, 1, 2, 5])
    assert part.ids == [0, 1, 2, 5]
    assert part.statuses == [r["status"] for r in rows] == ["illegal", "pruned", "legal", "pruned"]
    assert part.lines == render(spec, rows)
    assert "".join(part.lines) == _csv_rows(spec, rows)
    assert all(line.startswith(f"{i},") and line.endswith("\n") for i, line in zip(part.ids, part.lines))


def test_a_line_holding_a_quoted_newline_stays_one_row(spec, tmp_path):
    rows = [dict(r) for r in prove_batch(spec.text, spec.path, [0, 1])]
    rows[0]["reason"] = 'two\nlines, "quoted"'
    lines = render(spec, rows)
    assert len(lines) == 2 and lines[0].count("\n") == 2
    table = Table(spec, str(tmp_path / "t.csv"))
    table.add(Part([1], lines[1:], ["pruned"]))
    table.add(Part([0], lines[:1], ["illegal"]))
    table.write_sorted()
    back = read_done(str(tmp_path / "t.csv"), spec)
    assert list(back) == [0, 1] and back[0]["reason"] == 'two\nlines, "quoted"'
    again = Table(spec, str(tmp_path / "t.csv"))                # resumed: each row's text as written
    assert again.lines == {0: lines[0], 1: lines[1]} and again.summary()["illegal"] == 1


def test_a_row_of_another_spec_is_refused_at_its_line(spec, tmp_path):
    out = tmp_path / "t.csv"
    rows = [dict(r) for r in prove_batch(spec.text, spec.path, [0, 1, 2])]
    rows[0]["reason"] = "two\nlines"
    Table(spec, str(out)).add(Part([0, 1, 2], render(spec, rows), ["illegal", "pruned", "legal"]))
    out.write_text(out.read_text().replace(f",{spec.hash}\n2,", ",0123456789ab\n2,"))   # row 1, line 4
    with pytest.raises(SpecError, match=r"t\.csv:4: written by another spec \(spec '0123456789ab'"):
        Table(spec, str(out))


def test_parts_out_of_order_are_written_sorted_with_their_counts(spec, tmp_path):
    out = tmp_path / "t.csv"
    table = Table(spec, str(out))
    for ids in ([8, 9, 10, 11], [0, 1, 2, 3], [4, 5, 6, 7]):    # as workers finish
        table.add(prove_part(spec.text, spec.path, ids))
    assert [int(r["id"]) for r in csv.DictReader(open(out, newline=""))] == [8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7]
    table.write_sorted()
    rows = prove_batch(spec.text, spec.path, list(range(12)))
    assert out.read_text() == ",".join(columns(spec)) + "\n" + _csv_rows(spec, rows)
    assert len(table) == 12 and sorted(table.legal) == [2, 8]
    assert table.summary() == {"legal": 2, "illegal": 4, "unknown": 0, "pruned": 6, "invalid": 0}
    cols = columns(spec)
    assert table.rows() == [typed(spec, {k: str(v) for k, v in r.items()}, cols) for r in rows]


def test_sweep_table_is_sweep_s_rows_summary_and_legal_ids(spec, tmp_path):
    table = sweep_table(spec, str(tmp_path / "a.csv"), batch=5)
    rows = sweep(spec, str(tmp_path / "b.csv"))
    assert table.rows() == rows and table.summary() == summary(rows)
    assert sorted(table.legal) == [r["id"] for r in rows if r["status"] == "legal"]
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_a_resumed_table_counts_the_rows_read_back(spec, tmp_path):
    out = str(tmp_path / "t.csv")
    first = Table(spec, out)
    first.add(prove_part(spec.text, spec.path, [2, 3, 4]))       # a killed sweep: 3 rows in the file
    resumed = sweep_table(spec, out, batch=4)
    assert resumed.summary() == summary(sweep(spec, str(tmp_path / "fresh.csv")))
    assert sorted(resumed.legal) == [2, 8]
    assert open(out, "rb").read() == (tmp_path / "fresh.csv").read_bytes()


def test_the_cli_types_rows_only_for_json_or_parquet(spec, tmp_path, monkeypatch):
    def no_rows(self):
        raise AssertionError("rows typed for a summary")
    monkeypatch.setattr(Table, "rows", no_rows)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rc = main(["sweep", spec.path, "-o", str(tmp_path / "t.csv"), "-q", "--emit", "toml", str(tmp_path / "ok")])
    assert rc == 0
    assert "12 candidates: 2 legal, 4 illegal, 0 unknown, 6 pruned, 0 invalid" in out.getvalue()
    assert sorted(p.name for p in (tmp_path / "ok").iterdir()) == ["small_0000002.toml", "small_0000008.toml"]
