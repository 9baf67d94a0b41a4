"""`trajscope scan` against the loopback mock: prompts as specified, verdicts and citations stored, the cache,
rejected citations, error verdicts, and a rubric as an outcome of `compare` (McNemar recomputed here)."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from fixtures.forensics.builders import final, read, search, trajectory
from statsmodels.stats.contingency_tables import mcnemar

from trajscope.cli import main
from trajscope.engine.llm import ResponseCache, resolve_model
from trajscope.engine.mock_llm import MockLLMServer, reply_json, reply_text
from trajscope.engine.scanners import (
    GOLD_MARK,
    StepView,
    TrajectoryView,
    read_views,
    render_trajectory,
    scan,
    slice_sql,
)
from trajscope.format import Run
from trajscope.warehouse import ingest_trajectories, open_readonly
from trajscope.warehouse.verdicts import VerdictRow, rubric_hash, store_verdicts

RUBRIC = "The agent read a gold passage and still answered wrong."
N = 12


def _records(run_id: str, wrong: set[int]) -> list:
    run = Run(run_id=run_id, dataset="fx", condition=run_id)
    out = []
    for i in range(N):
        gold = (f"g{i}", f"Person {i} was born in City{i}.")
        steps = [search(gold, (f"x{i}", "a distractor")), read(gold), final(f"Town{i}" if i in wrong else f"City{i}")]
        out.append(trajectory(run, f"q{i:02d}", f"Where was Person {i} born?", f"City{i}", steps,
                              gold_chunks=(gold[0],)))
    return out


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, _records("base", {0, 1, 2, 3, 4, 5}) + _records("gate", {0, 1, 6}))
    return path


def _question(request) -> int:
    return int(re.search(r"Where was Person (\d+) born", request.text()).group(1))


def _answer_from_prompt(request):
    """Match exactly when the prompt's final answer is a Town (the agent read the gold and answered wrong)."""
    text = request.text()
    wrong = "Final answer: Town" in text
    return reply_json({"verdict": "match" if wrong else "no_match", "explanation": "final differs from gold read",
                       "cited_steps": ["1", "2"] if wrong else []})


def test_prompt_marks_gold_numbers_steps_and_shows_the_cut(db):
    views = read_views(db, [r.trajectory_id for r in _records("base", set())[:1]])
    full = render_trajectory(views[0], 2000)
    assert not full.truncated
    assert "Question: Where was Person 0 born?" in full.text and "Gold answer: City0" in full.text
    assert "Final answer: Town0" in full.text  # q00 of base is planted wrong
    assert "[0] search" in full.text and "[1] read" in full.text and "[2] final" in full.text
    assert f"1. g0 {GOLD_MARK}" in full.text and "2. x0:" in full.text  # the distractor is not marked
    assert f"passage g0 {GOLD_MARK}: Person 0 was born in City0." in full.text
    long = TrajectoryView(**{**views[0].__dict__, "steps": [
        StepView(step_index=k, kind="tool", label=str(k), tool_name="calc", observation="y" * 396)
        for k in range(20)]})  # 20 steps of about 105 estimated tokens each
    cut = render_trajectory(long, 700)
    assert cut.truncated and cut.tokens <= 700
    marker = re.search(r"\[\.\.\. steps \[(\d+)\] to \[(\d+)\] cut: (\d+) step\(s\), about ([\d,]+) tokens, "
                       r"over the 700-token budget \(1 token = 4 characters\) \.\.\.\]", cut.text)
    assert marker, cut.text
    first, last, n = int(marker[1]), int(marker[2]), int(marker[3])
    assert n == last - first + 1 and cut.shown == [k for k in range(20) if not first <= k <= last]
    assert 0 in cut.shown and 19 in cut.shown  # the ends are kept, the middle goes


def test_scan_stores_verdicts_and_citations_and_a_rerun_comes_from_the_cache(db, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with MockLLMServer(_answer_from_prompt) as server:
        config = resolve_model(server.model_spec)
        report = scan(db, RUBRIC, ["base"], config=config, cache=cache, concurrency=4)
        first_calls = len(server.chat_requests)
        again = scan(db, RUBRIC, ["base"], config=config, cache=cache, concurrency=4)
        assert len(server.chat_requests) == first_calls == N  # the re-run asked nothing
    assert report.counts == {"match": 6, "no_match": 6} and again.counts == report.counts
    assert again.cache_hits == N and again.requests == 0
    body = server.chat_requests[0].body
    assert body["response_format"]["json_schema"]["schema"]["properties"]["verdict"]["enum"] == \
        ["match", "no_match", "unsure"]
    assert RUBRIC in server.chat_requests[0].text()
    with open_readonly(db) as con:
        rows = con.execute("SELECT question_id, verdict, matches, cited_steps, model, prompt_version, rubric_text, "
                           "cached FROM rubric_verdicts ORDER BY question_id").fetchall()
        n_rows = con.execute("SELECT count(*) FROM scan_verdicts").fetchone()[0]
    assert n_rows == N  # the re-run replaced its verdicts, it did not add
    assert [r[1] for r in rows[:6]] == ["match"] * 6 and rows[0][2] == 1 and rows[7][2] == 0
    assert rows[0][3] == [1, 2] and rows[7][3] == []
    assert rows[0][4] == "mock" and rows[0][5] == "rubric-v1" and rows[0][6] == RUBRIC and rows[0][7] is True


def test_citations_outside_the_trajectory_are_rejected_and_a_malformed_reply_is_an_error(db, tmp_path):
    def respond(request):
        i = _question(request)
        if i == 0:
            return reply_json({"verdict": "match", "explanation": "x", "cited_steps": ["2", "9", "step 1"]})
        if i == 1:
            return reply_text('{"verdict": "match", "explanation": ')  # truncated JSON
        if i == 2:
            return reply_json({"verdict": "maybe", "explanation": "x", "cited_steps": []})
        return reply_json({"verdict": "unsure", "explanation": "hard to say", "cited_steps": []})

    with MockLLMServer(respond) as server:
        report = scan(db, RUBRIC, ["base"], config=resolve_model(server.model_spec), where="question_id < 'q04'")
    assert report.n_trajectories == 4 and report.rejected_citations == 1
    with open_readonly(db) as con:
        rows = con.execute("SELECT question_id, verdict, cited_steps, rejected_citations, error, matches "
                           "FROM rubric_verdicts ORDER BY question_id").fetchall()
    assert rows[0][1:4] == ("match", [2, 1], ["9"])
    assert rows[1][1] == "error" and "malformed reply" in rows[1][4] and rows[1][5] is None
    assert rows[2][1] == "error" and "no verdict" in rows[2][4]
    assert rows[3][1] == "unsure" and rows[3][5] is None


def test_the_slice_runs_through_the_read_path_and_refuses_a_write(db):
    assert "AND (any_gold_read AND NOT correct)" in slice_sql(["base"], "any_gold_read AND NOT correct")
    runner = CliRunner()
    bad = runner.invoke(main, ["scan", RUBRIC, "--runs", "base", "--where", "1=1; DROP TABLE runs",
                               "--db", str(db), "--model", "mock:http://127.0.0.1:9"])
    assert bad.exit_code != 0 and "Traceback" not in bad.output
    with open_readonly(db) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2


def test_a_bad_verdict_row_writes_nothing(db):
    good = VerdictRow(scanner="rubric", trajectory_id=_records("base", set())[0].trajectory_id,
                      record_hash="x", model="m", prompt_version="p", verdict="match", rubric_hash=rubric_hash(RUBRIC))
    bad = VerdictRow(**{**good.__dict__, "verdict": "perhaps"})
    with pytest.raises(ValueError, match="field verdict"):
        store_verdicts(db, [good, bad], rubric_text=RUBRIC)
    with open_readonly(db) as con:
        assert con.execute("SELECT count(*) FROM scan_verdicts").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM rubrics").fetchone()[0] == 0


def test_compare_on_a_rubric_equals_mcnemar_computed_from_the_verdicts(db, tmp_path):
    with MockLLMServer(_answer_from_prompt) as server:
        spec = server.model_spec
        for run in ("base", "gate"):
            result = CliRunner().invoke(main, ["scan", RUBRIC, "--runs", run, "--db", str(db), "--model", spec,
                                               "--no-cache"])
            assert result.exit_code == 0, result.output
    out = CliRunner().invoke(main, ["compare", "base", "gate", "--rubric", rubric_hash(RUBRIC)[:8], "--format", "csv",
                                    "--db", str(db)])
    assert out.exit_code == 0, out.output
    lines = [line for line in out.output.splitlines() if line and not line.startswith("gate vs")]
    header, row = lines[0].split(","), lines[1].split(",")
    got = dict(zip(header, row, strict=True))
    # Independent: base matches for q00-q05, gate for q00, q01, q06 (the wrong answers planted above).
    a = [1 if i in {0, 1, 2, 3, 4, 5} else 0 for i in range(N)]
    b = [1 if i in {0, 1, 6} else 0 for i in range(N)]
    a_only = sum(x == 1 and y == 0 for x, y in zip(a, b, strict=True))
    b_only = sum(x == 0 and y == 1 for x, y in zip(a, b, strict=True))
    assert (a_only, b_only) == (4, 1)
    expected = mcnemar([[0, a_only], [b_only, 0]], exact=True).pvalue
    assert float(got["acc_a"]) == pytest.approx(6 / N) and float(got["acc_b"]) == pytest.approx(3 / N)
    assert int(got["a_only"]) == a_only and int(got["b_only"]) == b_only
    assert float(got["mcnemar_exact_p"]) == pytest.approx(expected)
