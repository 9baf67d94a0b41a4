"""A finding bundle as one static HTML file: no script, no server, nothing fetched (a CSP forbids it)."""
from __future__ import annotations

import json
from datetime import UTC, datetime
from html import escape
from typing import Any

import polars as pl

from ._collect import Bundle, Replay, Table

MAX_TABLE_ROWS = 500  # shown per table; the SQL beside it gives the rest
_CELL_CHARS = 400
_TEXT_CHARS = 4000

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1rem 1.5rem;color:#222}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}h3{font-size:1rem}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dl.meta dt{font-weight:600}
code,pre{font-family:ui-monospace,monospace;font-size:12px}pre{background:#f6f6f6;padding:.5rem;overflow:auto;
white-space:pre-wrap;max-height:24rem}table{border-collapse:collapse;margin:.5rem 0;font-size:12px}
td,th{border:1px solid #ddd;padding:2px 6px;vertical-align:top;text-align:left}th{background:#f0f0f0}
.gold{background:#fff3c4}.step{border-left:3px solid #9ab;padding:.2rem .8rem;margin:.6rem 0;list-style:none}
.step:target{background:#eef6ff}.kind{font-weight:600}.note{color:#666}nav ul{columns:2}
"""


def _cell(value: Any) -> str:
    if value is None:
        return '<span class="note">NULL</span>'
    if isinstance(value, float):
        return f"{value:.4g}"
    text = json.dumps(value, default=str, ensure_ascii=False) if isinstance(value, (list, dict, tuple)) else str(value)
    return escape(text if len(text) <= _CELL_CHARS else text[:_CELL_CHARS] + "…")


def _table(df: pl.DataFrame, *, table_id: str | None = None, links: dict[str, str] | None = None,
           gold_column: str | None = None, max_rows: int = MAX_TABLE_ROWS) -> str:
    rows = []
    for row in df.head(max_rows).iter_rows(named=True):
        cls = ' class="gold"' if gold_column and row.get(gold_column) else ""
        cells = []
        for name, value in row.items():
            cell = _cell(value)
            if links and name == "trajectory_id" and value in links:
                cell = f'<a href="#{links[value]}">{cell}</a>'
            cells.append(f"<td>{cell}</td>")
        rows.append(f"<tr{cls}>{''.join(cells)}</tr>")
    head = "".join(f"<th>{escape(c)}</th>" for c in df.columns)
    ident = f' id="{table_id}"' if table_id else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _sql(sql: str) -> str:
    return f'<details open><summary>SQL</summary><pre class="sql">{escape(sql)}</pre></details>'


def _long(text: Any) -> str:
    text = "" if text is None else str(text)
    return escape(text if len(text) <= _TEXT_CHARS else text[:_TEXT_CHARS] + "…")


def _step(replay_id: str, step: dict[str, Any], replay: Replay) -> str:
    index = step["step_index"]
    anchor = f"{replay_id}-step-{index}"
    parts = [f'<li class="step kind-{escape(str(step["kind"]))}" id="{anchor}">',
             f'<a href="#{anchor}">step {index}</a> <span class="kind">{escape(str(step["kind"]))}</span>']
    if step.get("tool_name"):
        parts.append(f" <code>{escape(str(step['tool_name']))}</code>")
    for key in ("query", "answer", "gate", "reason", "rejected_answer", "message", "error_type"):
        if step.get(key) is not None:
            parts.append(f"<div><b>{key}</b>: {_long(step[key])}</div>")
    if step.get("args") not in (None, "{}"):
        parts.append(f"<div><b>args</b> <code>{_long(step['args'])}</code></div>")
    if step.get("thought"):
        parts.append(f"<div><b>thought</b><pre>{_long(step['thought'])}</pre></div>")
    candidates = replay.candidates.filter(pl.col("step_index") == index) if replay.candidates.height else None
    if candidates is not None and candidates.height:
        parts.append("<div><b>candidates</b> (gold highlighted)</div>"
                     + _table(candidates.drop("step_index"), gold_column="is_gold"))
    reads = replay.reads.filter(pl.col("step_index") == index) if replay.reads.height else None
    if reads is not None and reads.height:
        parts.append("<div><b>passages in context</b></div>" + _table(reads.drop("step_index"), gold_column="is_gold"))
    if step.get("observation"):
        parts.append(f"<details><summary>observation</summary><pre>{_long(step['observation'])}</pre></details>")
    parts.append("</li>")
    return "".join(parts)


def _replay(replay_id: str, replay: Replay) -> str:
    h = replay.header
    facts = [("trajectory", h["trajectory_id"]), ("run", f"{h['run_id']} ({h['controller']}/{h['condition']})"),
             ("model", h["model"]), ("question", f"{h['question_id']}: {h['question']}"),
             ("gold answer", h["gold_answer"]), ("gold passages", h["gold_chunk_ids"]),
             ("final answer", h["final_answer"]), ("end reason", h["end_reason"]), ("correct", h["correct"])]
    meta = "".join(f"<dt>{escape(k)}</dt><dd>{_cell(v)}</dd>" for k, v in facts)
    out = [f'<section class="replay" id="{replay_id}" data-trajectory="{escape(replay.trajectory_id)}" '
           f'data-steps="{len(replay.steps)}"><h3>Replay: {escape(replay.trajectory_id)}</h3>',
           f'<dl class="meta">{meta}</dl>']
    if replay.labels.height:
        out.append("<div><b>labels</b></div>" + _table(replay.labels))
    if replay.judgments.height:
        out.append("<div><b>verdicts</b></div>" + _table(replay.judgments))
    out.append('<ol class="steps">' + "".join(_step(replay_id, s, replay) for s in replay.steps) + "</ol>")
    if replay.register.height:
        out.append("<div><b>requirement register</b></div>" + _table(replay.register))
    out.append("</section>")
    return "".join(out)


def _table_section(table_id: str, table: Table, links: dict[str, str]) -> str:
    shown = min(table.df.height, MAX_TABLE_ROWS)
    note = ""
    if table.df.height > shown or table.truncated:
        note = f'<p class="note">{shown} rows shown; the query returns more: run its SQL on the warehouse.</p>'
    return (f'<section class="table" id="{table_id}" data-rows="{shown}"><h3>{escape(table.title)}</h3>'
            f"{_sql(table.sql)}{_table(table.df, table_id=f'{table_id}-data', links=links)}{note}</section>")


def render_bundle(bundle: Bundle) -> str:
    """The whole HTML document; `bundle-manifest` (JSON) names every table, figure and replay with its anchor."""
    replay_ids = {r.trajectory_id: f"replay-{i}" for i, r in enumerate(bundle.replays, start=1)}
    tables = [(f"table-{i}", t) for i, t in enumerate(bundle.tables, start=1)]
    figures = [(f"figure-{i}", f) for i, f in enumerate(bundle.figures, start=1)]
    manifest = {
        "title": bundle.title, "warehouse": bundle.db_name, "warehouse_sha256": bundle.db_sha256,
        "warehouse_bytes": bundle.db_bytes, "trajscope_version": bundle.version,
        "tables": [{"id": i, "title": t.title, "rows": min(t.df.height, MAX_TABLE_ROWS), "sql": t.sql}
                   for i, t in tables],
        "figures": [{"id": i, "title": f.title, "sql": f.sql} for i, f in figures],
        "replays": [{"id": replay_ids[r.trajectory_id], "trajectory_id": r.trajectory_id,
                     "steps": [f"{replay_ids[r.trajectory_id]}-step-{s['step_index']}" for s in r.steps]}
                    for r in bundle.replays],
        "not_replayed": bundle.not_replayed,
    }
    created = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    toc = "".join(f'<li><a href="#{i}">{escape(t.title)}</a></li>' for i, t in tables)
    toc += "".join(f'<li><a href="#{i}">{escape(f.title)}</a></li>' for i, f in figures)
    toc += "".join(f'<li><a href="#{replay_ids[r.trajectory_id]}">replay {escape(r.trajectory_id)}</a></li>'
                   for r in bundle.replays)
    body = [f"<h1>{escape(bundle.title)}</h1>",
            '<dl class="meta">'
            f'<dt>warehouse</dt><dd><code>{escape(bundle.db_name)}</code> ({bundle.db_bytes:,} bytes)</dd>'
            f'<dt>sha256</dt><dd><code id="warehouse-sha256">{bundle.db_sha256}</code></dd>'
            f'<dt>trajscope</dt><dd><code id="trajscope-version">{escape(bundle.version)}</code></dd>'
            f"<dt>written</dt><dd>{created}</dd></dl>",
            f"<nav><h2>Contents</h2><ul>{toc}</ul></nav>", "<h2>Tables</h2>"]
    body += [_table_section(i, t, replay_ids) for i, t in tables]
    if figures:
        body.append("<h2>Figures</h2>")
        body += [f'<section class="figure" id="{i}"><h3>{escape(f.title)}</h3>{_sql(f.sql)}'
                 f'<div class="svg">{f.svg}</div></section>' for i, f in figures]
    body.append("<h2>Replays</h2>")
    body += [_replay(replay_ids[r.trajectory_id], r) for r in bundle.replays]
    if bundle.not_replayed:
        body.append(f'<p class="note">{len(bundle.not_replayed)} more trajectories are involved but not replayed '
                    f"here (listed in the manifest).</p>")
    data = json.dumps(manifest, ensure_ascii=False).replace("</", "<\\/")
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            # Nothing may load: no script, no font, no image but inline data.
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">"
            f"<title>{escape(bundle.title)}</title><style>{_CSS}</style></head><body>"
            + "\n".join(body)
            + f'<script type="application/json" id="bundle-manifest">{data}</script></body></html>\n')
