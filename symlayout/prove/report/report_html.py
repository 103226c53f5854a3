"""A self-contained HTML report of proved configurations (``symlayout prove DIR --html FILE``).

One file, no network: inline CSS, the verdict table of every configuration and,
under each refuted or unmet result, the picture that explains it (``banks`` for a
bank conflict, ``tv`` with the counterexample framed for the others; a thread
map's own picture).  Also the Jupyter rendering of :class:`symlayout.Report`.
"""
from __future__ import annotations

from html import escape

from ...errors import ConfigError
from ..verdict.result import REFUTED
from ..verdict.summary import summary, unmet
from . import pictures
from .tmem_pictures import tmem_svg
from .explain import operand_models

CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: .4em 0 1em 0; }
td, th { border: 1px solid #ccc; padding: 2px 8px; font-size: 13px; text-align: left; }
th { background: #f3f3f3; }
.proved { color: #176317; } .refuted { color: #b00; } .unknown { color: #a60; }
.vacuous { color: #806; } .error { color: #b00; font-weight: bold; }
.unmet { background: #fde2e2; }
.cex { font-family: monospace; font-size: 12px; color: #444; }
.picture { overflow-x: auto; border: 1px solid #eee; margin: .3em 0; }
h2 { font-size: 16px; margin-top: 1.6em; } .summary { font-size: 15px; }
"""

#: which picture explains a refutation of each property
VIEW_OF = {"bank_conflicts": "banks"}


def _pictures(cfg, results) -> list:
    """``(caption, svg)`` for the refuted / unmet results of a concrete configuration."""
    want = [r for r in results if r.status == REFUTED or not r.as_expected]
    if not want or cfg is None or cfg.params:
        return []
    try:
        if cfg.threadmap is not None:
            # lazy: the thread-map pictures import the threadmap solver (~0.3 s); only a thread map's report needs them
            from .threadmap_pictures import show_threadmap
            return [("thread map", show_threadmap(cfg)[1])]
        tmem = [r for r in want if r.operand in ("tmem", "tmem_copy.C")]
        if tmem and not tmem[0].detail.startswith("CuTe rejects"):         # Version 3: a TMEM plan or copy
            return [(f"{tmem[0].property}[{tmem[0].operand}]: tmem view", tmem_svg(cfg))]
        mma, models = operand_models(cfg)
    except Exception as e:  # noqa: BLE001 (a picture is an extra: say why it is missing)
        return [(f"no picture: {type(e).__name__}: {e}", "")]
    out, seen = [], set()
    for r in want:
        op = r.operand
        view = VIEW_OF.get(r.property, "tv")
        if op not in models or (op, view) in seen or r.detail.startswith("CuTe rejects"):
            continue
        seen.add((op, view))
        out.append((f"{r.property}[{op}]: {view} view",
                    pictures.view_svg(view, cfg, mma, op, models[op], results=[r])))
    return out


def _rows(rep) -> str:
    rows = []
    for r in rep.results:
        name = r.property + (f"[{r.operand}]" if r.operand else "")
        cls = "" if r.as_expected else " class=\"unmet\""
        cx = r.counterexample.message if r.counterexample is not None else r.detail
        exp = "" if r.as_expected else f" (expected {r.expected})"
        rows.append(f"<tr{cls}><td class=\"{r.status}\">{r.status.upper()}</td><td>{escape(name)}</td>"
                    f"<td>{escape(r.method or '')}</td><td>{r.checked if r.checked is not None else ''}</td>"
                    f"<td class=\"cex\">{escape(cx or '')}{escape(exp)}</td></tr>")
    return ("<table><tr><th>verdict</th><th>property</th><th>method</th><th>checked</th>"
            "<th>counterexample / detail</th></tr>" + "".join(rows) + "</table>")


def config_section(rep, cfg=None) -> str:
    """The HTML of one configuration's report (``cfg``: its Config, for pictures)."""
    head = f"<h2>{escape(rep.path)}" + (f" <small>({escape(rep.name)})</small>" if rep.name else "") + "</h2>"
    if rep.error:
        return head + f"<p class=\"error\">ERROR {escape(rep.error)}</p>"
    parts = [head, _rows(rep)]
    for caption, svg in _pictures(cfg, rep.results):
        parts.append(f"<details open><summary>{escape(caption)}</summary><div class=\"picture\">{svg}</div></details>")
    return "\n".join(parts)


def report_section(report) -> str:
    """The Jupyter rendering of a :class:`symlayout.Report`."""
    return f"<div><style>{CSS}</style>{config_section(report.report, report.config)}</div>"


def html_document(reports, configs=None, skipped=()) -> str:
    """The whole report: summary, one section per configuration, skipped files."""
    by_path = {c.path: c for c in (configs or [])}
    s = summary(reports)
    line = ", ".join(f"{v} {k}" for k, v in s.items())
    parts = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\"><title>symlayout report</title>",
             f"<style>{CSS}</style></head><body>", "<h1>symlayout report</h1>",
             f"<p class=\"summary\">{escape(line)}</p>"]
    um = unmet(reports)
    if um:
        parts.append("<ul>" + "".join(f"<li class=\"unmet\">UNMET {escape(p)}: {escape(n)} {st}, expected {ex}</li>"
                                      for p, n, st, ex in um) + "</ul>")
    parts.append("<table><tr><th>configuration</th><th>proved</th><th>refuted</th><th>unmet</th></tr>" + "".join(
        f"<tr><td><a href=\"#c{i}\">{escape(r.path)}</a></td><td>{sum(x.status == 'proved' for x in r.results)}</td>"
        f"<td>{sum(x.status == 'refuted' for x in r.results)}</td>"
        f"<td>{'ERROR' if r.error else sum(not x.as_expected for x in r.results)}</td></tr>"
        for i, r in enumerate(reports)) + "</table>")
    for i, rep in enumerate(reports):
        parts.append(f"<section id=\"c{i}\">{config_section(rep, by_path.get(rep.path))}</section>")
    if skipped:
        parts.append("<h2>Not configurations (skipped)</h2><ul>" +
                     "".join(f"<li>{escape(p)}: {escape(w)}</li>" for p, w in skipped) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_html(path, reports, configs=None, skipped=()) -> None:
    """Write :func:`html_document` to ``path`` (an unwritable path is a one-line input error)."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(html_document(reports, configs, skipped))
    except OSError as e:
        raise ConfigError(f"--html {path}: cannot write: {e.strerror or e}") from None
