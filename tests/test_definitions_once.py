"""Each measure's definition exists once in the source: scanned with ast and regexes."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from trajscope.format import COMPARE_METRICS, DEFAULT_COMPARE_METRIC, ENTITY_EXTRACTORS, SEARCH_KINDS

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("trajscope", "engine", "warehouse", "ingest", "app")


def _sources(suffix: str) -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text()
            for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob(f"*{suffix}"))}


PY = _sources(".py")
SQL = _sources(".sql")


def _assigned(name: str) -> list[str]:
    """Files that bind name to a literal (not to another name), at any level."""
    found = []
    for path, text in PY.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Assign):
                targets = node.targets
            else:
                targets = [node.target] if isinstance(node, ast.AnnAssign) else []
            value = getattr(node, "value", None)
            names_it = any(isinstance(t, ast.Name) and t.id == name for t in targets)
            if names_it and isinstance(value, (ast.Constant, ast.Tuple, ast.List)):
                found.append(path)
    return found


def _string_tuples(values: tuple[str, ...]) -> list[str]:
    """Files with a tuple / list / set literal of exactly these strings (in any order)."""
    found = []
    for path, text in PY.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                if sorted(e.value for e in node.elts) == sorted(values):
                    found.append(path)
    return found


def _functions(pattern: str) -> list[str]:
    return [f"{path}:{node.name}" for path, text in PY.items() for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.FunctionDef) and re.fullmatch(pattern, node.name)]


def test_low_evidence_threshold_is_one_constant_the_sql_reads():
    assert _assigned("LOW_EVIDENCE_THRESHOLD") == ["trajscope/format/_definitions.py"]
    for path, text in SQL.items():
        assert not re.search(r"coverage\s*<\s*0?\.\d", text), f"{path}: a literal low-evidence threshold"
    assert "is_low_evidence(ec.coverage)" in SQL["warehouse/views/failure_rg.sql"]


def test_one_regex_entity_extractor_and_one_matching_rule():
    assert _functions(r"extract_\w*entities") == [
        "engine/entities/_regex.py:extract_regex_entities", "engine/entities/_spacy.py:extract_spacy_entities"]
    assert [p for p, t in PY.items() if "_NAME_RE = re.compile" in t] == ["engine/entities/_regex.py"]
    assert _functions(r"normalize_(entity|text)") == ["engine/entities/_coverage.py:normalize_entity"]
    assert not (ROOT / "engine/controllers/_entities.py").exists()


def test_correctness_rule_is_one_macro():
    rule = re.compile(r"(llm|contain|score)\s*>=\s*0?\.5")
    offenders = [p for p, t in {**SQL, **PY}.items() if rule.search(t)]
    assert offenders == [], f"the correctness threshold written out in {offenders}; use answer_correct()"
    assert [p for p, t in SQL.items() if "MACRO answer_correct(" in t] == ["warehouse/definitions/measures.sql"]
    py_rule = re.compile(r"""\[["']llm["']\]\s+if\s+.*\[["']llm["']\]\s+is not None""")
    assert [p for p, t in PY.items() if py_rule.search(t)] == []


def test_extractor_list_is_one_tuple():
    assert _string_tuples(ENTITY_EXTRACTORS) == ["trajscope/format/_definitions.py"]
    listed = [p for p, t in SQL.items() if re.search(r"VALUES\s*\(\s*'regex'\s*\)", t)]
    assert listed == [], f"{listed}: use entity_extractors()"
    # failure_breakdown keeps one UNION branch per extractor so a filter on taxonomy prunes branches;
    # its branches must be exactly the extractors.
    branches = re.findall(r"'read_gate:(\w+)' AS taxonomy", SQL["warehouse/views/failure_breakdown.sql"])
    assert tuple(branches) == ENTITY_EXTRACTORS


def test_one_paired_bootstrap():
    # A random generator that resamples: the embedded runtime's token sampler draws from one too, not a bootstrap.
    resamplers = [p for p, t in PY.items() if "default_rng" in t and re.search(r"bootstrap|resampl", t, re.I)]
    assert resamplers == ["trajscope/analysis/stats/_bootstrap.py"]
    assert "bootstrap_differences" in PY["trajscope/analysis/audit/_bootstrap.py"]


def test_step_kind_lists_are_defined_once():
    assert _string_tuples(SEARCH_KINDS) == ["trajscope/format/_steps.py"]
    for path, text in {**PY, **SQL}.items():
        assert not re.search(r"'search',\s*'keyword_search'", text), f"{path}: use search_kinds()"


def test_compare_metrics_and_default_are_one_definition():
    assert _string_tuples(COMPARE_METRICS) == ["trajscope/format/_definitions.py"]
    assert _assigned("DEFAULT_COMPARE_METRIC") == ["trajscope/format/_definitions.py"]
    assert DEFAULT_COMPARE_METRIC == "correct"
    for path in ("trajscope/cli/compare_cmd.py", "app/page_scripts/compare.py",
                 "trajscope/analysis/queries/_compare.py"):
        assert "DEFAULT_COMPARE_METRIC" in PY[path]
        assert not re.search(r"""metric[^\n]*(default=|or |: str = )["'](contain|correct)["']""", PY[path]), path


# Read-Gate Table 4, §5.1 co-occurrence with regex-vs-spaCy kappa, Table 18 and the audit's pipeline F1 are each
# computed in one place: trajscope/analysis/report/ and the app call these, never recompute them.
FORENSICS = "trajscope/analysis/queries/_forensics.py"


def _calls(name: str) -> list[str]:
    """Files (outside analysis/stats, where the statistics live) that call name(...)."""
    return sorted({path for path, text in PY.items() if not path.startswith("trajscope/analysis/stats/")
                   for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Call)
                   and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)})


def _function_source(path: str, name: str) -> str:
    text = PY[path]
    node = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_source_segment(text, node) or ""


def test_table4_odds_ratios_are_one_function():
    assert _calls("mantel_haenszel") == [FORENSICS]
    assert _calls("odds_ratio") == [FORENSICS]
    assert "post_read_odds_ratio(" in _function_source("trajscope/analysis/report/_read_gate.py",
                                                       "stratified_odds_ratio")
    # The CLI's compare runs through the Python API (trajscope.api), which the notebook calls too.
    for path in ("trajscope/api/_compare.py", "app/page_scripts/compare.py"):
        assert "post_read_odds_ratio(" in PY[path], path


def test_cooccurrence_and_extractor_kappa_are_one_definition():
    cells = re.compile(r"is_discipline\s+AND\s+NOT\s+\w*\.?is_post_gold_read", re.I)
    assert [p for p, t in {**SQL, **PY}.items() if cells.search(t)] == ["warehouse/views/failure_rg_cooccurrence.sql"]
    pair = re.compile(r"JOIN\s+failure_rg\s+\w+\s+ON[^\n]*extractor\s*=\s*'spacy'", re.I)
    assert [p for p, t in {**SQL, **PY}.items() if pair.search(t)] == [
        "trajscope/analysis/queries/extractor_agreement.sql"]
    # The other callers are different measures: attribution categories against human ones, and a judge's answer
    # verdict against people's final label (both agreement --human).
    assert _calls("cohen_kappa") == sorted([FORENSICS, "trajscope/analysis/queries/_answer_agreement.py",
                                            "trajscope/analysis/queries/_attribution.py"])
    builder = _function_source("trajscope/analysis/report/_read_gate.py", "cooccurrence")
    assert "pooled_cooccurrence(" in builder and "extractor_agreement(" in builder
    assert not (ROOT / "trajscope/analysis/report/rg_extractor_pairs.sql").exists()


def test_judge_robustness_is_one_function():
    assert [p for p, t in PY.items() if "JUDGE_ROBUSTNESS_SQL = " in t] == [FORENSICS]
    builder = _function_source("trajscope/analysis/report/_read_gate.py", "judge_robustness")
    assert "judge_robustness_table(" in builder
    assert not re.search(r"\.mean\(|np\.mean|cohen_kappa|sum\(", builder), "Table 18 recomputed in the report"
    assert "judge_robustness(" in PY["trajscope/api/_agreement.py"]  # what agreement_cmd and the notebook call


def test_pipeline_f1_is_one_view():
    unperturbed_mean = [p for p, t in SQL.items()
                        if re.search(r"intervention\s*=\s*'none'", t) and re.search(r"avg\(\s*\w*\.?f1\s*\)", t)]
    assert unperturbed_mean == ["warehouse/views/audit_pipeline_f1.sql"]
    assert not (ROOT / "trajscope/analysis/report/au_pipeline_f1.sql").exists()
    assert "FROM audit_pipeline_f1" in PY["trajscope/analysis/report/_audit.py"]


def test_the_cache_folder_is_read_from_the_environment_in_one_place():
    readers = [path for path, text in PY.items() if re.search(r"environ[^\n]*TRAJSCOPE_CACHE", text)]
    assert readers == ["trajscope/runtime/_cache_dir.py"]
