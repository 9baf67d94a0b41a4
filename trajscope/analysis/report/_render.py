"""Rendering report tables: LaTeX booktabs, Markdown and CSV."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence

import numpy as np
import polars as pl

from trajscope.warehouse.export import latex_escape

from ._table import ReportTable, csv_cells, format_cell

FORMATS = ("latex", "markdown", "csv")
EXTENSIONS = {"latex": "tex", "markdown": "md", "csv": "csv"}

# Characters the captions and labels use that pdflatex's default fonts cannot print as text.
_LATEX_SYMBOLS = {
    "Δ": r"$\Delta$",
    "κ": r"$\kappa$",
    "−": "$-$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "→": r"$\rightarrow$",
    "×": r"$\times$",
    "·": r"$\cdot$",
    "±": r"$\pm$",
    "–": "--",
    "—": "---",
    "§": r"\S{}",
    "<": "$<$",
    ">": "$>$",
    "β": r"$\beta$",
    "≈": r"$\approx$",
    "’": "'",
}
_TABLE_NUMBER = re.compile(r"^Table (\d+)$")


def _tex(text: str) -> str:
    return "".join(_LATEX_SYMBOLS.get(ch, ch) for ch in latex_escape(text))


def to_latex(table: ReportTable) -> str:
    """A booktabs `table` float; numbered as in the paper when the title is "Table N"."""
    spec = "".join("l" if c.kind == "text" else "r" for c in table.columns)
    lines = [f"% {table.title}: {table.name}", r"\begin{table}[t]", r"\centering", r"\small"]
    number = _TABLE_NUMBER.match(table.title)
    if number:
        lines.append(rf"\setcounter{{table}}{{{int(number.group(1)) - 1}}}")
        lines.append(rf"\caption{{{_tex(table.caption)}}}")
    else:
        lines.append(rf"\caption{{{_tex(table.title)}. {_tex(table.caption)}}}")
    lines += [
        rf"\label{{tab:{table.name.replace('_', '-')}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(_tex(c.label) for c in table.columns) + r" \\",
        r"\midrule",
    ]
    if table.not_applicable:
        lines.append(rf"\multicolumn{{{len(table.columns)}}}{{l}}{{Does not apply: {_tex(table.not_applicable)}}} \\")
    for row in table.rows:
        lines.append(" & ".join(_tex(format_cell(v, c)) for v, c in zip(row, table.columns, strict=False)) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    for text in (*table.notes, table.footnote):
        if text:
            lines.append(rf"\par\smallskip{{\footnotesize {_tex(text)}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def latex_document(tables: Sequence[ReportTable], title: str) -> str:
    """A standalone LaTeX document holding every table (compiles with booktabs alone)."""
    body = "\n".join(to_latex(t) for t in tables)
    return (
        r"\documentclass{article}"
        "\n"
        r"\usepackage[T1]{fontenc}"
        "\n"
        r"\usepackage{booktabs}"
        "\n"
        r"\usepackage[margin=1.5cm,landscape]{geometry}"
        "\n"
        r"\begin{document}"
        "\n"
        rf"\section*{{{_tex(title)}}}"
        "\n" + body + r"\end{document}"
        "\n"
    )


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(table: ReportTable) -> str:
    """A Markdown section: heading with the paper's title and caption, the table, the footnote."""
    out = [f"### {table.title}. {table.caption}", ""]
    if table.not_applicable:
        out += [f"_Does not apply: {table.not_applicable}_", ""]
    else:
        out.append("| " + " | ".join(_md(c.label) for c in table.columns) + " |")
        out.append("|" + "|".join(":---" if c.kind == "text" else "---:" for c in table.columns) + "|")
        out += [
            "| " + " | ".join(_md(format_cell(v, c)) for v, c in zip(row, table.columns, strict=False)) + " |"
            for row in table.rows
        ]
        out.append("")
    out += [f"_{text}_" for text in (*table.notes, table.footnote) if text]
    return "\n".join(out).rstrip() + "\n"


def csv_header(table: ReportTable) -> list[str]:
    """CSV column keys: an interval column spreads over key, key_low, key_high."""
    keys: list[str] = []
    for column in table.columns:
        keys += list(csv_cells(None, column))
    return keys


def _csv_value(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else repr(float(value))
    if isinstance(value, np.integer):
        return int(value)
    return value


def to_csv(table: ReportTable) -> str:
    """CSV with full-precision numbers in the printed units; '# ' lines carry the caption and footnote."""
    buf = io.StringIO()
    buf.write(f"# {table.name} ({table.title}): {table.caption}\n")
    if table.not_applicable:
        buf.write(f"# does not apply: {table.not_applicable}\n")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(csv_header(table))
    for row in table.rows:
        cells: dict[str, object] = {}
        for value, column in zip(row, table.columns, strict=False):
            cells.update(csv_cells(value, column))
        writer.writerow([_csv_value(v) for v in cells.values()])
    for text in (*table.notes, table.footnote):
        if text:
            buf.write(f"# {text}\n")
    return buf.getvalue()


def to_frame(table: ReportTable) -> pl.DataFrame:
    """The table's CSV columns and full-precision values as a frame (what a page shows and charts)."""
    keys = csv_header(table)
    rows = []
    for row in table.rows:
        cells: dict[str, object] = {}
        for value, column in zip(row, table.columns, strict=False):
            cells.update(csv_cells(value, column))
        rows.append(list(cells.values()))
    if not rows:
        return pl.DataFrame(schema={k: pl.String for k in keys})
    return pl.DataFrame(rows, schema=keys, orient="row", infer_schema_length=None)


def render(table: ReportTable, fmt: str) -> str:
    """One table in fmt."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return {"latex": to_latex, "markdown": to_markdown, "csv": to_csv}[fmt](table)


def render_all(tables: Sequence[ReportTable], fmt: str) -> str:
    """Every table in fmt, in report order, separated by a blank line."""
    return "\n".join(render(t, fmt) for t in tables)


__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "csv_header",
    "latex_document",
    "render",
    "render_all",
    "to_csv",
    "to_frame",
    "to_latex",
    "to_markdown",
]
