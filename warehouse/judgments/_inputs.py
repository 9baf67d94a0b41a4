"""What judging a run reads: each trajectory's question, gold, answer, existing judgments, snippets and reads."""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from trajscope.format import answer_invalidity

from .._connection import open_warehouse

# A named query beside the views: run id as $run.
INPUTS_SQL = (resources.files(__package__) / "judge_inputs.sql").read_text()


@dataclass(frozen=True)
class JudgeInput:
    """What judging one trajectory needs, read from the warehouse."""

    trajectory_id: str
    record_hash: str
    question: str
    gold: str | None
    aliases: list[str]
    final_answer: str | None
    judges: list[str]
    llm_models: list[str]
    snippets: list[str]
    read_texts: list[str]
    messages: list[str] = field(default_factory=list)  # the controller's own texts shown to the agent
    end_reason: str | None = None

    @property
    def invalidity(self) -> str | None:
        """'echo' / 'hedge' when no judge may count the answer correct (trajscope.format.answer_invalidity)."""
        return answer_invalidity(self.final_answer, self.question, self.messages)


@dataclass(frozen=True)
class RunInputs:
    """A run's judge inputs, and whether the run exists at all (a run without trajectories still does)."""

    run_exists: bool
    inputs: list[JudgeInput]


def load_judge_inputs(db_path: str | Path | None, run_id: str) -> RunInputs:
    """Every trajectory of a run with what judging it needs, read in one short open (migrating an old file).

    A write open, not the bounded read path: a run's inputs carry every passage read, far past a read's
    row and byte caps, and the SQL is fixed with the run id bound as a parameter.
    """
    with open_warehouse(db_path) as con:
        exists = con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0] > 0
        rows = con.execute(INPUTS_SQL, {"run": run_id}).fetchall()
    return RunInputs(exists, [JudgeInput(*row) for row in rows])


__all__ = ["INPUTS_SQL", "JudgeInput", "RunInputs", "load_judge_inputs"]
