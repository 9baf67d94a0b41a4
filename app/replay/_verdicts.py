"""A model verdict on the replayed trajectory: pick one (or arrive with ?verdict=ID) and its cited steps are marked."""
from __future__ import annotations

import streamlit as st

from trajscope.app.queries import trajectory_verdicts_sql
from trajscope.app.ui import fetch, set_url


def _link(step: int) -> str:
    # The step containers carry these anchors (_render._render_step).
    return f"[{int(step)}](#step-{int(step)})"


def pick_verdict(trajectory_id: str, wanted: str | None) -> dict[int, str]:
    """Offer the trajectory's model verdicts; {cited step index: why it is marked} for the one picked."""
    found = fetch(trajectory_verdicts_sql(trajectory_id))
    if found is None or not found.df.height:
        if wanted:
            st.caption(f"Verdict `{wanted}` is not a verdict on this version of the trajectory.")
        return {}
    rows = {r["verdict_id"]: r for r in found.df.iter_rows(named=True)}
    ids = list(rows)
    if wanted and wanted not in rows:
        st.caption(f"Verdict `{wanted}` is not a verdict on this version of the trajectory.")
    picked = st.selectbox(
        "Mark the steps a model verdict cites", [None, *ids], key="replay-verdict",
        index=ids.index(wanted) + 1 if wanted in rows else 0,
        format_func=lambda v: "— none —" if v is None else
        f"{rows[v]['verdict']} · {rows[v]['subject'][:80]} · {rows[v]['model']}")
    set_url("verdict", picked)
    if picked is None:
        return {}
    row = rows[picked]
    cited = [int(s) for s in (row["cited_steps"] or [])]
    who = f", agent {row['agent']}" if row["agent"] else ""
    steps = ", ".join(_link(s) for s in cited) or "none"
    st.markdown(f"**{row['verdict']}** ({row['subject']}; {row['model']}{who}): {row['explanation'] or '—'}  \n"
                f"Cited steps: {steps}")
    what = "the decisive error named by" if row["scanner"] == "attribution" else "cited by"
    return {s: f"{what} the model ({row['model']})" for s in cited}


__all__ = ["pick_verdict"]
