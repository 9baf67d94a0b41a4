"""What every importer is given (file, run id, tool table, questions) and the trajectory it assembles."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajscope.format import (
    FinalStep,
    Judgment,
    Question,
    Run,
    Step,
    Trajectory,
    make_trajectory_id,
)

from ._actions import canonical_action
from ._episodes import TextPatterns
from ._fields import Where
from ._questions import QuestionBook, plain_question


@dataclass
class ImportNotes:
    """What an import noticed besides its records: duplicates dropped, malformed records skipped, warnings,
    questions joined."""

    duplicates: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    questions_joined: int = 0
    skipped: list[str] = field(default_factory=list)  # malformed records left out, one line each (file:line field)
    not_logs: list[str] = field(default_factory=list)  # a directory's documentation and code, not read


@dataclass(frozen=True)
class ImportContext:
    """One import: the source file, its format, the run id, the tool table and the question file."""

    path: Path
    format: str
    run_id: str
    tool_map: dict[str, str]
    questions: QuestionBook | None = None
    patterns: TextPatterns = field(default_factory=TextPatterns)
    declared: dict[str, bool] = field(default_factory=dict)  # capabilities a mapping file states
    mapping_path: Path | None = None
    notes: ImportNotes = field(default_factory=ImportNotes)

    def where(self, line: int, prefix: str = "") -> Where:
        """A location in the source file."""
        return Where(self.path, line, prefix)

    def action(self, tool_name: str | None) -> str | None:
        """Canonical action of a source tool name."""
        return canonical_action(tool_name, self.tool_map)

    def run(self, run_id: str | None = None, **fields: Any) -> Run:
        """The Run of this import (or of one of its trials); only settings the source states are filled."""
        return Run(run_id=run_id or self.run_id, source=f"import:{self.format}", **fields)

    def question(self, where: Where, *, source_id: str | None, index: int | None = None,
                 text: str | None = None, gold: str | None = None, by_text: bool = False) -> Question:
        """The question, joined from the companion file when one was given (by text when `by_text`)."""
        if self.questions is not None:
            self.notes.questions_joined += 1
            if by_text:
                return self.questions.question_by_text(where, text=text, gold=gold)
            return self.questions.question(where, source_id=source_id, index=index, text=text, gold=gold)
        qid = source_id if source_id is not None else (None if index is None else str(index))
        if qid is None:
            raise where.error("record has no question id", "id")
        return plain_question(where, qid, text, gold)


def default_run_id(format_name: str, path: Path) -> str:
    """Deterministic: the same file imported twice gets the same run id (ingest replaces, not duplicates)."""
    return f"{format_name}:{path.name}"


def assemble(
    ctx: ImportContext,
    *,
    run: Run,
    question: Question,
    steps: list[Step],
    final_answer: str | None = None,
    end_reason: str | None = None,
    judgments: list[Judgment] | None = None,
    **fields: Any,
) -> Trajectory:
    """A trajectory; the final answer and end reason come from an accepted final step when present."""
    finals = [s for s in steps if isinstance(s, FinalStep)]
    if finals:
        final_answer = final_answer if final_answer is not None else finals[-1].answer
        end_reason = end_reason or "final"
    return Trajectory(
        trajectory_id=make_trajectory_id(run.run_id, question.question_id),
        run=run,
        question=question,
        steps=steps,
        final_answer=final_answer,
        end_reason=end_reason,  # type: ignore[arg-type]
        judgments=judgments or [],
        **fields,
    )
