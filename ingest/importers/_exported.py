"""Trajectories that trajscope itself exported: the `trajscope.export` attachment restores every canonical field."""
from __future__ import annotations

import json
from typing import Any

import msgspec

from trajscope.format import EXPORT_KEY, RecordError, Trajectory, decode_exported, make_trajectory_id

from ._context import ImportContext
from ._fields import Where


def restore_exported(ctx: ImportContext, value: Any, where: Where) -> Trajectory | None:
    """The attached canonical trajectory under this import's run id (None when the source has no attachment).

    The run keeps its settings (controller, condition, model, ...) but takes the import's run id and
    source; a --questions file, when given, still supplies the question.
    """
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value)
    try:
        record = decode_exported(text, path=str(where.path), line=where.line)
    except RecordError as exc:  # name the field inside the attachment from the source record's root
        inner = f"{EXPORT_KEY}.{exc.field}" if exc.field else EXPORT_KEY
        raise where.at(inner).error(exc.message) from None
    t = record.trajectory
    question = t.question
    if ctx.questions is not None:
        question = ctx.question(where, source_id=question.question_id, text=question.text, gold=question.gold_answer)
    run = msgspec.structs.replace(t.run, run_id=ctx.run_id, source=f"import:{ctx.format}")
    return msgspec.structs.replace(t, run=run, question=question,
                                   trajectory_id=make_trajectory_id(run.run_id, question.question_id))
