"""The Replay page's fork section: the exact `trajscope fork` command for a step and an intervention
(the dashboard stays read-only: it never runs it), and a parent and its fork side by side from the fork step."""
from __future__ import annotations

import json
import shlex

import polars as pl
import streamlit as st

from trajscope.app.access import sql_literal
from trajscope.app.ui import fetch, sql_expander
from trajscope.format import FORK_INTERVENTIONS, fork_step_refusal

from ._render import load_trajectory, render_trajectory


def fork_command(trajectory_id: str, step: int, intervention: str, argument: str | None = None) -> str:
    """The command line that forks trajectory_id at step with the intervention, quoted for a POSIX shell."""
    if intervention not in FORK_INTERVENTIONS:
        raise ValueError(f"unknown intervention {intervention!r}")
    value = intervention if not argument else f"{intervention}:{argument}"
    return shlex.join(["trajscope", "fork", trajectory_id, "--at", str(step), "--intervention", value])


def forks_sql(trajectory_id: str) -> str:
    """The forks of a trajectory (as parent) and its own fork record (as child), from fork_pairs."""
    tid = sql_literal(trajectory_id)
    return f"""SELECT trajectory_id, parent_trajectory_id, step_index, intervention, argument, rule, placebo,
       fork_failed, parent_correct, child_correct, rescued, broke,
       CASE WHEN parent_trajectory_id = {tid} THEN 'child' ELSE 'parent' END AS role
FROM fork_pairs
WHERE parent_trajectory_id = {tid} OR trajectory_id = {tid}
ORDER BY step_index, intervention, trajectory_id"""


def step_refusal(steps: pl.DataFrame, step: int, intervention: str, controller: str | None) -> str | None:
    """Why the intervention does not apply at this step of the replayed trajectory (the engine's own rule)."""
    rows = steps.filter(pl.col("step_index") == step) if steps.height else steps
    if not rows.height:
        return None
    row = rows.row(0, named=True)
    try:
        args = json.loads(row.get("args") or "{}")
    except ValueError:
        args = {}
    return fork_step_refusal(intervention, row.get("kind") or "", args=args if isinstance(args, dict) else {},
                             phase=row.get("phase"), controller=controller)


def render_fork_command(trajectory_id: str, steps: pl.DataFrame, controller: str | None = None) -> None:
    """Step and intervention pickers and the command they make, ready to copy (or why it does not apply)."""
    with st.expander("Fork this trajectory (counterfactual re-run)"):
        st.caption("Steps before the fork step are replayed from the response cache at no cost; the "
                   "intervention applies at the step; the rest runs live. Run the command in a shell: the "
                   "dashboard never starts a run. See docs/forks.md.")
        indices = steps["step_index"].to_list() if steps.height else [0]
        kinds = dict(zip(indices, steps["kind"].to_list(), strict=False)) if steps.height else {}
        step = st.selectbox("Fork step", indices, index=len(indices) - 1, key="fork-step",
                            format_func=lambda i: f"{i}. {kinds.get(i, '')}")
        names = list(FORK_INTERVENTIONS)
        intervention = st.selectbox("Intervention", names, key="fork-intervention")
        hint = FORK_INTERVENTIONS[intervention].argument
        refusal = step_refusal(steps, int(step), intervention, controller)
        if refusal is not None:
            st.info(f"{intervention} does not apply at step {step}: {refusal}.", icon=":material/block:")
            return
        argument = st.text_input(f"Argument ({hint})", key="fork-argument") if hint else ""
        st.code(fork_command(trajectory_id, int(step), intervention, argument.strip() or None), language="bash")


def render_forks(trajectory_id: str, *, with_labels: bool) -> None:
    """The trajectory's forks (or its parent), and a chosen pair side by side from the fork step on."""
    found = fetch(forks_sql(trajectory_id))
    if found is None or found.df.height == 0:
        return
    st.markdown("**Forks** — counterfactual re-runs branching off this trajectory, or the one it branched off")
    st.dataframe(found.df.drop("role"), hide_index=True, width="stretch")
    sql_expander(found.sql, seconds=found.seconds)
    rows = {r["trajectory_id"]: r for r in found.df.iter_rows(named=True)}
    labels = {t: (f"parent {r['parent_trajectory_id']}" if r["role"] == "parent" else
                  f"step {r['step_index']} · {r['intervention']}" + (f":{r['argument']}" if r["argument"] else ""))
              for t, r in rows.items()}
    picked = st.selectbox("Parent and fork side by side", [None, *rows], key="fork-vs",
                          format_func=lambda t: "— none —" if t is None else labels[t])
    if picked is None:
        return
    row = rows[picked]
    parent_id, child_id, step = row["parent_trajectory_id"], row["trajectory_id"], int(row["step_index"])
    parent, child = (load_trajectory(t, with_labels=with_labels) for t in (parent_id, child_id))
    left, right = st.columns(2, gap="large")
    for column, title, results in ((left, "Parent", parent), (right, "Fork", child)):
        with column:
            st.markdown(f"**{title}**")
            if results is not None:
                render_trajectory(results, compact=True, from_step=step)


__all__ = ["fork_command", "forks_sql", "render_fork_command", "render_forks", "step_refusal"]
