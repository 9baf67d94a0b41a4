"""The reports' LaTeX compiles with pdflatex (installed by `make test`), and its numbers equal the CSV's."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner
from fixtures.report.read_gate import RUNS, build, run_id

from trajscope.analysis.report import csv_cells
from trajscope.cli import main
from trajscope.engine.judge_pass import judge_run
from trajscope.warehouse import ingest_trajectories

NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")


@pytest.fixture(scope="module")
def read_gate_db(tmp_path_factory):
    built = build()
    path = tmp_path_factory.mktemp("latex") / "wh.duckdb"
    ingest_trajectories(path, built.records)
    for spec in RUNS:
        judge_run(path, run_id(*spec[:4]), extractors=("regex",))
    return path


def _report(db, paper, fmt, out, *extra):
    result = CliRunner().invoke(main, ["report", paper, *extra, "--format", fmt, "--out", str(out), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return out


def _compile(folder, stem):
    engine = shutil.which("pdflatex")
    assert engine, "pdflatex is missing: `make test` installs texlive-latex-base and texlive-latex-recommended"
    done = subprocess.run(
        [engine, "-interaction=nonstopmode", "-halt-on-error", f"{stem}.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert (folder / f"{stem}.pdf").stat().st_size > 0


def _latex_rows(tex):
    body = tex.split(r"\midrule", 1)[1].split(r"\bottomrule", 1)[0]
    return [
        [cell.strip() for cell in line.strip().removesuffix(r"\\").strip().split(" & ")]
        for line in body.strip().splitlines()
        if line.strip() and not line.startswith(r"\multicolumn")
    ]


def _csv_rows(text):
    lines = [line for line in text.splitlines() if not line.startswith("# ")]
    return list(csv.reader(io.StringIO("\n".join(lines))))


def _check_numbers_equal(tex_file, csv_file, columns):
    latex_rows = _latex_rows(tex_file.read_text())
    header, *rows = _csv_rows(csv_file.read_text())
    assert len(latex_rows) == len(rows)
    for latex_row, csv_row in zip(latex_rows, rows, strict=False):
        values = dict(zip(header, csv_row, strict=False))
        for column, cell in zip(columns, latex_row, strict=False):
            if column.kind == "text":
                continue
            fields = [values[k] for k in csv_cells(None, column)]
            printed = cell.replace("$-$", "-").replace("$<$", "<")
            if printed == "--":
                assert fields[0] == "", (column.key, fields)
                continue
            if printed.startswith("<"):
                assert float(fields[0]) < float(printed[1:]), (column.key, fields)
                continue
            tokens = NUMBER.findall(printed)
            digits = 0 if column.kind == "int" else column.digits
            for token, field in zip(tokens, [f for f in fields if f != ""], strict=False):
                shown = float(token.replace(",", ""))
                assert (
                    abs(shown - float(field)) <= 0.5 * 10 ** -max(digits, 3 if column.kind == "p" else digits) + 1e-12
                ), (column.key, token, field)


def test_read_gate_latex_compiles_and_matches_csv(read_gate_db, tmp_path):
    runs = sum((["--runs", run_id(*s[:4])] for s in RUNS), [])
    tex = _report(read_gate_db, "read-gate", "latex", tmp_path / "tex", *runs, "--sweep", "reasoning_effort")
    data = _report(read_gate_db, "read-gate", "csv", tmp_path / "csv", *runs, "--sweep", "reasoning_effort")
    _compile(tex, "read-gate")
    from trajscope.analysis.report import build_report
    from trajscope.warehouse import open_readonly

    with open_readonly(read_gate_db) as con:
        tables = build_report(con, "read-gate", [run_id(*s[:4]) for s in RUNS], sweep="reasoning_effort")
    checked = 0
    for table in tables:
        if table.not_applicable:
            assert "Does not apply" in (tex / f"{table.name}.tex").read_text()
            continue
        _check_numbers_equal(tex / f"{table.name}.tex", data / f"{table.name}.csv", table.columns)
        checked += 1
    assert checked >= 7


# Audit tables whose inputs the fixture lacks: one reader per dataset (no sweep; test_paper_definitions has one),
# one verification mode (test_report_audit_checks has several), no identity re-run.
AUDIT_ABSENT = {"au_t4", "au_t5", "au_identity"}


def test_audit_latex_compiles_and_matches_csv(tmp_path):
    from fixtures.report.audit import build as build_audit

    from trajscope.analysis.report import build_report
    from trajscope.warehouse import open_readonly
    from trajscope.warehouse.audit import load_audit_records

    db = tmp_path / "audit.duckdb"
    load_audit_records(db, build_audit())
    tex = _report(db, "audit", "latex", tmp_path / "tex")
    data = _report(db, "audit", "csv", tmp_path / "csv")
    _compile(tex, "audit")
    with open_readonly(db) as con:
        tables = build_report(con, "audit", [])
    for table in tables:
        if table.name in AUDIT_ABSENT:
            assert table.not_applicable and "Does not apply" in (tex / f"{table.name}.tex").read_text()
            continue
        assert not table.not_applicable, table.name
        _check_numbers_equal(tex / f"{table.name}.tex", data / f"{table.name}.csv", table.columns)


def test_execution_rag_latex_compiles_and_matches_csv(tmp_path):
    from fixtures.report.execution_rag import RUNS as ER_RUNS
    from fixtures.report.execution_rag import build as build_er
    from fixtures.report.execution_rag import run_id as er_run_id

    from trajscope.analysis.report import build_report
    from trajscope.warehouse import open_readonly

    db = tmp_path / "er.duckdb"
    ingest_trajectories(db, build_er())
    ids = [er_run_id(*s[:4]) for s in ER_RUNS]
    tex = _report(db, "execution-rag", "latex", tmp_path / "tex", *ids)
    data = _report(db, "execution-rag", "csv", tmp_path / "csv", *ids)
    _compile(tex, "execution-rag")
    with open_readonly(db) as con:
        tables = build_report(con, "execution-rag", ids)
    assert len(tables) >= 14
    for table in tables:
        if table.name in AUDIT_ABSENT:
            assert table.not_applicable and "Does not apply" in (tex / f"{table.name}.tex").read_text()
            continue
        assert not table.not_applicable, table.name
        _check_numbers_equal(tex / f"{table.name}.tex", data / f"{table.name}.csv", table.columns)
