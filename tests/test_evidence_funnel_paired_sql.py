"""The paired funnel query lists the stages itself (a .sql file, no template): it must list FUNNEL_STAGES, in order;
and pairing questions before the unpivot counts exactly what pairing the unpivoted rows did."""
from __future__ import annotations

import itertools
import re
from pathlib import Path

from funnel_records import CHUNKS, DATASET, cases, correct_trajectory

from bench.synthetic import write_synthetic_log
from trajscope.analysis.queries import FUNNEL_PAIRED_SQL, FUNNEL_STAGES
from trajscope.warehouse import ingest_paths, ingest_trajectories, load_chunks, open_readonly

BEFORE = Path(__file__).parent / "fixtures" / "funnel" / "funnel_paired_before.sql"


def test_the_paired_funnel_sql_unpivots_exactly_the_funnel_stages_in_order():
    selects = re.findall(r"SELECT question_id, dataset, scope, hop, ([a-z_, ]+) FROM", FUNNEL_PAIRED_SQL)
    paired = re.findall(r"\ba\.([a-z_]+) AS a_\1, b\.\1 AS b_\1\b", FUNNEL_PAIRED_SQL)
    unpivoted = re.findall(r"\(a_([a-z_]+), b_\1\) AS \1\b", FUNNEL_PAIRED_SQL)
    assert len(selects) == 2
    for found in selects:
        assert tuple(s.strip() for s in found.split(",")) == FUNNEL_STAGES
    assert tuple(paired) == FUNNEL_STAGES and tuple(unpivoted) == FUNNEL_STAGES


def _same_as_before(db: Path) -> int:
    """Every ordered pair of the warehouse's runs gets the old query's rows; returns the rows compared."""
    n = 0
    with open_readonly(db) as con:
        runs = [r[0] for r in con.execute("SELECT DISTINCT run_id FROM trajectories ORDER BY 1").fetchall()]
        for a, b in itertools.permutations(runs, 2):
            p = {"run_a": a, "run_b": b}
            now = sorted(con.execute(FUNNEL_PAIRED_SQL, p).fetchall(), key=repr)
            assert now == sorted(con.execute(BEFORE.read_text(), p).fetchall(), key=repr), (a, b)
            n += len(now)
    return n


def test_same_rows_as_before_on_the_synthetic_bench_log(tmp_path):
    log, db = tmp_path / "s.jsonl", tmp_path / "w.duckdb"
    write_synthetic_log(log, 400, seed=7)
    ingest_paths(db, [log], progress=False)
    assert _same_as_before(db) > 4 * 3 * 10


def test_same_rows_as_before_where_a_stage_does_not_apply_to_one_run(tmp_path):
    # funnel_noread has no read action: its read stage is NULL, so paired against funnel it has no read pairs.
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, [t for t, *_ in cases().values()] + [correct_trajectory()])
    load_chunks(db, CHUNKS, DATASET)
    assert _same_as_before(db) > 0
    with open_readonly(db) as con:
        rows = con.execute(FUNNEL_PAIRED_SQL, {"run_a": "funnel", "run_b": "funnel_noread"}).fetchall()
    stages = {r[2] for r in rows}
    assert "read" not in stages and "retrieved" in stages
