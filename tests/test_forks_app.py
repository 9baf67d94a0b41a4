"""The Replay page's fork section: the exact `trajscope fork` command, and parent and fork side by side."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner
from streamlit.testing.v1 import AppTest
from test_controllers_support import mock_server
from test_forks import fork, run_parent, stopping_register_agent
from test_forks_warehouse import QUESTIONS, agent

from trajscope.app.replay import fork_command
from trajscope.cli import main as cli
from trajscope.engine.forks import INTERVENTIONS
from trajscope.format import FORK_INTERVENTIONS

ROOT = Path(__file__).resolve().parents[1]


def test_the_engine_the_dashboard_and_the_docs_name_one_set_of_interventions():
    assert INTERVENTIONS is FORK_INTERVENTIONS  # one definition: trajscope/format/fork_interventions.json
    table = (ROOT / "docs" / "forks.md").read_text().split("## Interventions", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| `(\w+)` \|", table, flags=re.M) == list(FORK_INTERVENTIONS)
    assert {k.hook for k in FORK_INTERVENTIONS.values()} == {"reply", "environment", "review"}


def test_fork_command_is_quoted_and_parses_back_to_the_fork_arguments():
    command = fork_command("run a::q'1", 3, "replace_query", "who wrote it?")
    assert shlex.split(command) == ["trajscope", "fork", "run a::q'1", "--at", "3", "--intervention",
                                    "replace_query:who wrote it?"]
    assert fork_command("r::q", 0, "reject_final") == "trajscope fork r::q --at 0 --intervention reject_final"
    parsed = CliRunner().invoke(cli, shlex.split(command)[1:] + ["--help"])
    assert parsed.exit_code == 0  # the command's options exist as written


def test_replay_shows_the_fork_command_and_the_pair_side_by_side_from_the_fork_step(tmp_path, monkeypatch):
    db = tmp_path / "w.duckdb"
    with mock_server(agent) as server:
        (parent,) = run_parent(server, tmp_path, questions=QUESTIONS[:1], db_path=db)
        _, (child,) = fork(server, tmp_path, [parent], "1", "force_read:c2", db_path=db)
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "replay.py"), default_timeout=60)
    at.query_params.update(trajectory=parent.trajectory_id)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    at.selectbox(key="fork-step").set_value(1)
    at.selectbox(key="fork-intervention").set_value("force_read")
    at.run()
    at.text_input(key="fork-argument").set_value("c2")
    at.run()
    commands = [c.value for c in at.code if c.language == "bash"]
    assert commands == [fork_command(parent.trajectory_id, 1, "force_read", "c2")]
    forks = [d.value for d in at.dataframe if "intervention" in d.value.columns][0]
    assert forks["trajectory_id"].to_list() == [child.trajectory_id] and forks["step_index"].to_list() == [1]
    at.selectbox(key="fork-vs").set_value(child.trajectory_id)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    notes = [c.value for c in at.caption if "are the same in parent and fork" in c.value]
    assert len(notes) == 2 and "shown from step 1" in notes[0]
    markdown = " ".join(m.value for m in at.markdown)
    assert "read `c2`" in markdown and "read `c1`" in markdown  # the fork's read beside the parent's


def test_replay_says_reject_final_does_not_apply_to_a_final_the_register_composed(tmp_path, monkeypatch):
    db = tmp_path / "w.duckdb"
    with mock_server(lambda request: stopping_register_agent(request, clears=True)) as server:
        (parent,) = run_parent(server, tmp_path, "execution_rag", "composed", questions=QUESTIONS[:1], db_path=db)
    final = len(parent.steps) - 1
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "replay.py"), default_timeout=60)
    at.query_params.update(trajectory=parent.trajectory_id)
    at.run()
    at.selectbox(key="fork-step").set_value(final)
    at.selectbox(key="fork-intervention").set_value("reject_final")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    notes = [i.value for i in at.info if "does not apply" in i.value]
    assert notes == [f"reject_final does not apply at step {final}: this ExecutionRAG final was composed from the "
                     "requirement register when it cleared (or by the composed variant), not answered by the "
                     "agent, so there is no agent's final for the Read-Gate corrective observation to reject."]
    assert not [c for c in at.code if c.language == "bash"]  # no command that the CLI would refuse
    at.selectbox(key="fork-intervention").set_value("swap_model")  # another intervention there: the command
    at.run()
    assert [c for c in at.code if c.language == "bash"] and not [i for i in at.info if "does not apply" in i.value]
