"""Replay's side-by-side view of one trajectory: at each step, people's labels and the methods naming it first."""
from __future__ import annotations

from trajscope.app.access import sql_literal


def replay_step_methods_sql(trajectory_id: str) -> str:
    """Per step: people's labels in source order, and every method (rules with the rule that fired, each model
    protocol, each imported method) that names the step as the trajectory's first error; baselines left out."""
    tid = sql_literal(trajectory_id)
    return f"""SELECT s.step_index, s.source_ref, s.kind,
       (SELECT string_agg(h.label, ', ' ORDER BY h.ordinal) FROM human_step_labels h
        WHERE h.trajectory_id = s.trajectory_id AND h.step_index = s.step_index) AS people,
       (SELECT string_agg(a.method || CASE WHEN a.method = 'rules' THEN ' (' || a.reason || ')' ELSE '' END, ', '
                          ORDER BY a.method)
        FROM step_attributions a
        WHERE a.trajectory_id = s.trajectory_id AND a.step_index = s.step_index
          AND NOT starts_with(a.method, 'baseline:')) AS first_error_named_by
FROM steps s
WHERE s.trajectory_id = {tid}
ORDER BY s.step_index"""


__all__ = ["replay_step_methods_sql"]
