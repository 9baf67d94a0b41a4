"""A lake refuses two benchmarks' unnamed question '0' with the warehouse's hint; --dataset keys them apart."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from fixtures.forensics.builders import final, trajectory

from trajscope.cli import main as cli
from trajscope.format import Run, write_jsonl
from trajscope.warehouse import run_read_query
from trajscope.warehouse.lake import create_lake, lake_catalog


def _log(path: Path, run_id: str, text: str, gold: str) -> Path:
    """One trajectory of question '0' in a run and question that name no dataset."""
    with open(path, "wb") as fh:
        write_jsonl([trajectory(Run(run_id=run_id), "0", text, gold, [final(gold)])], fh)
    return path


def _ingest(lake: Path, log: Path, *args: str):
    return CliRunner().invoke(cli, ["ingest", "--lake", str(lake), "--no-progress", "--format", "canonical",
                                    *args, str(log)])


def _logs(tmp_path: Path) -> tuple[Path, Path]:
    return (_log(tmp_path / "hotpot.jsonl", "hotpot_run", "Who wrote Hamlet?", "Shakespeare"),
            _log(tmp_path / "tau.jsonl", "tau_run", "Cancel my flight.", "cancelled"))


def test_the_lake_refuses_an_unnamed_question_with_the_dataset_hint(tmp_path):
    lake = tmp_path / "lake"
    create_lake(lake)
    first, second = _logs(tmp_path)
    assert _ingest(lake, first).exit_code == 0
    refused = _ingest(lake, second)
    assert refused.exit_code != 0
    assert "question '0' (no dataset): conflicting text" in refused.output
    assert "these questions name no dataset: pass --dataset NAME to key them by their benchmark" in refused.output
    assert "nothing was written" in refused.output
    assert len(list((lake / "_committed").iterdir())) == 1


def test_with_dataset_on_each_log_both_land_in_the_lake(tmp_path):
    lake = tmp_path / "lake"
    create_lake(lake)
    first, second = _logs(tmp_path)
    for log, name in ((first, "hotpotqa_dev"), (second, "tau_bench_airline")):
        done = _ingest(lake, log, "--dataset", name)
        assert done.exit_code == 0, done.output
    rows = run_read_query(lake_catalog(lake), "SELECT dataset, question_id, gold_answer FROM questions "
                          "ORDER BY dataset").df.rows()
    assert rows == [("hotpotqa_dev", "0", "Shakespeare"), ("tau_bench_airline", "0", "cancelled")]
