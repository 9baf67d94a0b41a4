"""Table exports for papers: CSV, Parquet, LaTeX (booktabs) and Markdown from a polars DataFrame."""
from __future__ import annotations

import io
import json
import math
from pathlib import Path

import polars as pl

from trajscope.format import FORMULA_STARTS, csv_cell_text, redact, redaction_prefilter, terminal_text

from ._output import write_output

FORMATS = ("csv", "parquet", "latex", "markdown")

_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters."""
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def _cell(value: object, float_digits: int) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return f"{value:.{float_digits}f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def _as_json(df: pl.DataFrame, name: str) -> pl.Series:
    return pl.Series(name, [None if v is None else json.dumps(v, default=str, ensure_ascii=False)
                            for v in df[name].to_list()], dtype=pl.String)


def _flat(df: pl.DataFrame) -> pl.DataFrame:
    # CSV and text tables cannot hold nested or binary values: lists of scalars become comma-joined
    # strings, bytes hex, anything else nested its JSON text; whole-number decimals (HUGEINT) stay whole.
    casts: list[pl.Expr | pl.Series] = []
    for name, dtype in df.schema.items():
        if isinstance(dtype, (pl.List, pl.Array)) and not dtype.inner.is_nested() and dtype.inner != pl.Binary:
            casts.append(pl.col(name).cast(pl.List(pl.String)).list.join(", ").alias(name))
        elif dtype == pl.Binary:
            casts.append(pl.col(name).bin.encode("hex").alias(name))
        elif dtype.is_nested() or dtype == pl.Object:
            casts.append(_as_json(df, name))
        elif isinstance(dtype, pl.Decimal):
            casts.append(pl.col(name).cast(pl.Int128 if dtype.scale == 0 else pl.Float64).alias(name))
    return df.with_columns(casts) if casts else df


def _redacted_strings(df: pl.DataFrame) -> pl.DataFrame:
    # Parquet keeps values typed, so its text columns are redacted one value at a time: only the values
    # the redaction prefilter matches (every value redact could change), or all when it has no pattern.
    pattern = redaction_prefilter()
    casts = []
    for name, dtype in df.schema.items():
        if dtype != pl.String:
            continue
        hits = df[name].str.contains(pattern).fill_null(False) if pattern is not None else None
        if hits is not None and not hits.any():
            continue
        values = df[name].to_list()
        marked = hits.to_list() if hits is not None else [True] * len(values)
        casts.append(pl.Series(name, [redact(v) if hit else v for v, hit in zip(values, marked, strict=True)],
                               dtype=pl.String))
    return df.with_columns(casts) if casts else df


_FORMULA_PATTERN = "^[" + "".join("\\" + c if c in "-\\" else c for c in FORMULA_STARTS) + "]"


def _formula_safe(df: pl.DataFrame) -> pl.DataFrame:
    # A text cell (or column name) a spreadsheet would run as a formula (=, +, -, @, tab, CR first)
    # gets a leading quote; numbers stay numbers (a negative one is no formula).
    casts = [pl.when(pl.col(n).str.contains(_FORMULA_PATTERN)).then(pl.lit("'") + pl.col(n))
             .otherwise(pl.col(n)).alias(n) for n, dtype in df.schema.items() if dtype == pl.String]
    df = df.with_columns(casts) if casts else df
    names = [csv_cell_text(c) for c in df.columns]
    return df.rename(dict(zip(df.columns, names, strict=True))) if len(set(names)) == len(names) else df


def to_csv(df: pl.DataFrame) -> str:
    """CSV text with a header row (keys and key fragments redacted, as in every export; formula-like
    text cells quoted)."""
    return redact(_formula_safe(_flat(df)).write_csv())


def to_parquet(df: pl.DataFrame) -> bytes:
    """Parquet bytes (nested types kept; text columns redacted)."""
    buf = io.BytesIO()
    _redacted_strings(df).write_parquet(buf)
    return buf.getvalue()


def to_markdown(df: pl.DataFrame, *, float_digits: int = 3) -> str:
    """A GitHub-flavoured Markdown table; numeric columns right-aligned."""
    df = _flat(df)
    header = "| " + " | ".join(c.replace("|", "\\|") for c in df.columns) + " |"
    align = "|" + "|".join(
        "---:" if df.schema[c].is_numeric() else ":---" for c in df.columns
    ) + "|"
    rows = [
        "| " + " | ".join(_cell(v, float_digits).replace("|", "\\|") for v in row) + " |"
        for row in df.iter_rows()
    ]
    return redact("\n".join([header, align, *rows]) + "\n")


def to_text(df: pl.DataFrame, *, max_cell: int = 60, float_digits: int = 4) -> str:
    """A plain aligned table for a terminal: every column as wide as its content (cells cut at max_cell);
    control characters are shown as escapes, never sent to the terminal."""
    df = _flat(df)

    def cell(value: object) -> str:
        text = "NULL" if value is None else _cell(value, float_digits).replace("\n", " ").replace("\t", " ")
        text = terminal_text(text)
        return text if len(text) <= max_cell else text[: max_cell - 1] + "…"

    headers = [terminal_text(c) for c in df.columns]
    columns = [[cell(v) for v in df[c].to_list()] for c in df.columns]
    widths = [max([len(c), *(len(v) for v in col)]) for c, col in zip(headers, columns, strict=True)]
    numeric = [df.schema[c].is_numeric() for c in df.columns]

    def line(values: list[str]) -> str:
        cells = (v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric, strict=True))
        return "  ".join(cells).rstrip()

    rows = [line(headers), "  ".join("-" * w for w in widths)]
    rows += [line([col[i] for col in columns]) for i in range(df.height)]
    return redact("\n".join(rows) + f"\n({df.height} row{'s' if df.height != 1 else ''})\n")


def to_latex(df: pl.DataFrame, *, caption: str | None = None, label: str | None = None,
             float_digits: int = 3) -> str:
    """A booktabs `table` environment ready to paste into a paper."""
    df = _flat(df)
    spec = "".join("r" if df.schema[c].is_numeric() else "l" for c in df.columns)
    lines = [r"\begin{table}[t]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in df.columns) + r" \\",
        r"\midrule",
    ]
    for row in df.iter_rows():
        lines.append(" & ".join(latex_escape(_cell(v, float_digits)) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return redact("\n".join(lines) + "\n")


def export_table(df: pl.DataFrame, fmt: str, out: str | Path | None = None, *, db: str | Path | None = None,
                 **options) -> bytes:
    """Render df in fmt; write to out when given (never over the warehouse db: see write_output); returns the bytes."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "parquet":
        data = to_parquet(df)
    elif fmt == "csv":
        data = to_csv(df).encode()
    elif fmt == "latex":
        data = to_latex(df, **options).encode()
    else:
        data = to_markdown(df, **options).encode()
    if out is not None:
        write_output(out, data, db=db)
    return data
