"""One trajectory as a readable story: question and verdicts, labels, then every step in order."""
from __future__ import annotations

import json

import pandas as pd
import polars as pl
import streamlit as st

from trajscope.app.access import QueryResult
from trajscope.app.queries import (
    replay_candidates_sql,
    replay_decisive_sql,
    replay_evidence_sql,
    replay_funnel_sql,
    replay_header_sql,
    replay_human_labels_sql,
    replay_judgments_sql,
    replay_labels_sql,
    replay_reads_sql,
    replay_register_sql,
    replay_step_methods_sql,
    replay_steps_sql,
)
from trajscope.app.ui import fetch_many, sql_expander

_GOLD_STYLE = "background-color: rgba(255, 196, 0, 0.28)"
_KIND_ICON = {
    "search": ":material/search:", "keyword_search": ":material/text_fields:",
    "semantic_search": ":material/explore:", "read": ":material/menu_book:", "final": ":material/flag:",
    "gate_rejection": ":material/block:", "context_injection": ":material/input:",
    "register_update": ":material/checklist:", "budget_nudge": ":material/timer:",
    "forced_answer": ":material/stop_circle:", "error": ":material/error:",
}


def replay_queries(trajectory_id: str, *, with_labels: bool, with_funnel: bool = False,
                   with_human: bool = False) -> dict[str, str]:
    """The named SQL a replay of trajectory_id runs (the funnel and human labels where the warehouse has them)."""
    named = {
        "header": replay_header_sql(trajectory_id),
        "steps": replay_steps_sql(trajectory_id),
        "candidates": replay_candidates_sql(trajectory_id),
        "reads": replay_reads_sql(trajectory_id),
        "register": replay_register_sql(trajectory_id),
        "judgments": replay_judgments_sql(trajectory_id),
        "evidence": replay_evidence_sql(trajectory_id),
    }
    if with_labels:
        named["labels"] = replay_labels_sql(trajectory_id)
    if with_funnel:
        named["funnel"] = replay_funnel_sql(trajectory_id)
        named["decisive"] = replay_decisive_sql(trajectory_id)
    if with_human:
        named["human"] = replay_human_labels_sql(trajectory_id)
        named["step_methods"] = replay_step_methods_sql(trajectory_id)
    return named


def load_trajectory(trajectory_id: str, *, with_labels: bool, with_funnel: bool = False,
                    with_human: bool = False) -> dict[str, QueryResult] | None:
    """Every replay query's result for one trajectory (one short connection)."""
    return fetch_many(replay_queries(trajectory_id, with_labels=with_labels, with_funnel=with_funnel,
                                     with_human=with_human))


def _step_link(step: int | None) -> str:
    # Anchors are the step containers' ids (_render_step), so a link jumps to the step on this page.
    return "—" if step is None else f"[{int(step)}](#step-{int(step)})"


def _render_funnel(funnel: QueryResult, decisive: QueryResult | None, human: QueryResult | None) -> None:
    st.markdown("**Evidence funnel** — for each gold passage in hop order, the step where it was first queried "
                "for, retrieved, shown, read and used (links jump to the step)")
    lines = ["| hop | passage | queried | retrieved (rank) | shown | read | used |", "|---|---|---|---|---|---|---|"]
    for r in funnel.df.iter_rows(named=True):
        rank = f" (rank {r['best_rank']})" if r["best_rank"] is not None else ""
        title = (r["title"] or r["chunk_id"]).replace("|", "/")
        used = _step_link(r["used_step"]) + (f" ({r['used_via']})" if r["used_via"] else "")
        lines.append(f"| {r['hop']} | {title} | {_step_link(r['queried_step'])} | "
                     f"{_step_link(r['retrieved_step'])}{rank} | {_step_link(r['snippet_shown_step'])} | "
                     f"{_step_link(r['read_step'])} | {used} |")
    st.markdown("\n".join(lines))
    reasons = {r for r in funnel.df["stage_reason"].to_list() if r}
    for reason in sorted(reasons):
        st.caption(reason)
    sql_expander(funnel.sql, seconds=funnel.seconds)
    ours, theirs = st.columns(2)
    if decisive is not None and decisive.df.height:
        d = decisive.df.row(0, named=True)
        with ours:
            if d["rule"]:
                where = f" at step {_step_link(d['step_index'])}" + (f", hop {d['hop']}" if d["hop"] else "")
                extra = f" ({d['confusion']}: {d['answered_entity']})" if d["confusion"] else ""
                st.markdown(f"**First decisive error (trajscope):** `{d['rule']}`{where}{extra}")
            else:
                st.markdown(f"**First decisive error (trajscope):** none — {d['reason']}")
    if human is not None and human.df.height:
        with theirs:
            for h in human.df.iter_rows(named=True):
                who = f" by {h['agent']}" if h["agent"] else ""
                cat = f" ({h['category']})" if h["category"] else ""
                st.markdown(f"**Human label:** {h['label']}{cat} at step {_step_link(h['step_index'])}{who}"
                            + (f" — {h['reason']}" if h["reason"] else ""))


def _gold_highlight(df: pl.DataFrame) -> pd.io.formats.style.Styler:
    frame = df.to_pandas()
    return frame.style.apply(
        lambda row: [_GOLD_STYLE if row.get("is_gold") else "" for _ in row], axis=1
    )


def _verdict(value: float | None) -> str:
    if value is None or value != value:
        return "—"
    return f"{value:.2f}"


def _count(value: float | None) -> str:
    return "—" if value is None else f"{int(value):,}"


def _render_header(row: dict, labels: QueryResult | None) -> None:
    st.markdown(f"#### {row['question'] or '(question text not recorded)'}")
    meta = (f"`{row['trajectory_id']}` · run `{row['run_id']}` · {row['dataset']} · "
            f"{row['controller'] or '—'} / **{row['condition'] or '—'}** · model {row['model'] or '—'}")
    st.caption(meta)
    gold = row["gold_answer"] or "—"
    aliases = ", ".join(row["aliases"] or [])
    correct = row["correct"]  # the warehouse's rule (macro answer_correct), not a copy of it
    left, right = st.columns(2)
    left.markdown(f"**Gold answer:** {gold}" + (f"  \n*aliases:* {aliases}" if aliases else ""))
    answer = row["final_answer"] if row["final_answer"] is not None else "(no answer)"
    if correct is None:
        right.markdown(f"**Final answer:** {answer}")
    elif correct:
        right.success(f"**Final answer:** {answer}", icon=":material/check_circle:")
    else:
        right.error(f"**Final answer:** {answer}", icon=":material/cancel:")
    if row.get("answer_check"):
        right.warning(f"**Not an answer** ({row['answer_check']})", icon=":material/block:")
    metrics = st.columns(8)
    for column, (label, value) in zip(metrics, [
        ("EM", _verdict(row["em"])), ("F1", _verdict(row["f1"])), ("Contain", _verdict(row["contain"])),
        ("LLM judge", _verdict(row["llm"])), ("Searches", row["search_count"]),
        ("Reads", row["read_count"]), ("Turns", row["turns"]), ("End", row["end_reason"] or "—"),
    ], strict=False):
        column.metric(label, value if value is not None else "—")
    st.caption(
        f"type {row['question_type'] or '—'} · {row['hop_count'] or '—'} hops · gold passages "
        f"{', '.join(row['gold_chunk_ids'] or []) or '—'} · gate rejections {row['gate_rejections']} · "
        f"injections {row['injections']} · tokens {_count(row['tokens_in'])} in / "
        f"{_count(row['tokens_out'])} out · "
        f"cost ${row['cost_usd'] or 0:.5f}"
    )
    if labels is not None and labels.df.height:
        st.markdown("**Failure taxonomy**")
        st.dataframe(labels.df, hide_index=True, width="stretch")
        sql_expander(labels.sql, seconds=labels.seconds)


def _step_title(step: dict) -> str:
    kind = step["kind"]
    detail = ""
    if step["query"]:
        detail = f' — "{step["query"]}"'
    elif step["chunk_ids"]:
        detail = f" — {', '.join(step['chunk_ids'])}"
    elif step["answer"] is not None:
        detail = f' — "{step["answer"]}"'
    elif step["gate"]:
        detail = f" — {step['gate']}"
    elif step["error_type"]:
        detail = f" — {step['error_type']}"
    return f"{_KIND_ICON.get(kind, '•')} **{step['step_index']}. {kind}**{detail}"


def _render_step(step: dict, candidates: pl.DataFrame, reads: pl.DataFrame, register: pl.DataFrame,
                 *, compact: bool, cited: str | None = None) -> None:
    kind, index = step["kind"], step["step_index"]
    # A cited step's container gets a key (its CSS class st-key-replay-cited-N) besides the visible mark.
    with st.container(border=True, key=f"replay-cited-{int(index)}" if cited else None):
        # The anchor the funnel's step links jump to; the id is an integer, never text from the log.
        st.markdown(f'<span id="step-{int(index)}"></span>' + _step_title(step), unsafe_allow_html=True)
        if cited:
            st.markdown(f":orange-background[:material/format_quote: **Cited step**: {cited}]")
        if step["thought"]:
            st.caption(f"Thought: {step['thought']}")
        if kind == "gate_rejection":
            st.warning(f"Rejected answer **{step['rejected_answer'] or '—'}** by `{step['gate']}`: "
                       f"{step['reason'] or ''}")
        elif kind == "budget_nudge":
            st.info(step["message"] or "budget nudge")
        elif kind == "error":
            st.error(f"{step['error_type']}: {step['message'] or ''}")
        elif kind in ("final", "forced_answer"):
            st.markdown(f"Answer: **{step['answer'] or '—'}**")
        mine = candidates.filter(pl.col("step_index") == index).drop("step_index")
        if mine.height:
            st.dataframe(_gold_highlight(mine), hide_index=True, width="stretch",
                         column_config={"snippet": st.column_config.TextColumn(width="large"),
                                        "is_gold": st.column_config.CheckboxColumn("gold")})
        passages = reads.filter(pl.col("step_index") == index)
        for passage in passages.iter_rows(named=True):
            badge = " :orange-badge[gold]" if passage["is_gold"] else ""
            again = "" if passage["is_new"] else " (re-read)"
            via = "injected" if passage["via"] == "context_injection" else "read"
            text = passage["text"] or ""
            st.markdown(f"{via} `{passage['chunk_id']}`{again}{badge}")
            st.text(text if not compact or len(text) < 400 else text[:400] + " …")
        events = register.filter(pl.col("step_index") == index)
        if events.height:
            st.markdown("Register changes:")
            st.dataframe(events.drop("step_index", "event_index"), hide_index=True, width="stretch")
        if not compact and step["args"] and step["args"] not in ("{}", "null"):
            with st.expander("Arguments and observation"):
                st.json(json.loads(step["args"]))
                if step["observation"]:
                    st.text(step["observation"])
        effort = [f"{k.replace('_', ' ')} {step[k]}" for k in ("tokens_in", "tokens_out") if step[k] is not None]
        if step["latency_ms"] is not None:
            effort.append(f"{step['latency_ms']:.0f} ms")
        if step.get("cached"):
            effort.append("response from the cache (tokens, latency and cost of the original call)")
        if effort:
            st.caption(" · ".join(effort))


def render_trajectory(results: dict[str, QueryResult], *, compact: bool = False, from_step: int | None = None,
                      cited: dict[int, str] | None = None) -> bool:
    """Draw a loaded trajectory (from_step: only the steps from there on; cited: steps to mark, with why);
    False when the id matched nothing."""
    header = results["header"].df
    if header.height == 0:
        return False
    _render_header(header.row(0, named=True), results.get("labels"))
    evidence = results["evidence"]
    if evidence.df.height and not compact:
        st.markdown("**Gold evidence** — was each gold passage retrieved, read, injected, or only "
                    "seen as a snippet?")
        st.dataframe(evidence.df, hide_index=True, width="stretch")
        sql_expander(evidence.sql, seconds=evidence.seconds)
    funnel = results.get("funnel")
    if funnel is not None and funnel.df.height and not compact:
        _render_funnel(funnel, results.get("decisive"), results.get("human"))
    methods = results.get("step_methods")
    if methods is not None and not compact and (methods.df["people"].drop_nulls().len()
                                                  or methods.df["first_error_named_by"].drop_nulls().len()):
        st.markdown("**Side by side** — at each step, people's labels and the methods that name it as the first "
                    "error (the rules with the rule that fired; `agreement --human` scores them)")
        st.dataframe(methods.df, hide_index=True, width="stretch")
        sql_expander(methods.sql, seconds=methods.seconds)
    st.markdown("**Steps**")
    candidates, reads = results["candidates"].df, results["reads"].df
    register = results["register"].df
    if from_step:
        st.caption(f"Steps 0–{from_step - 1} are the same in parent and fork (replayed from the cache); "
                   f"shown from step {from_step}.")
    for step in results["steps"].df.iter_rows(named=True):
        if from_step is None or step["step_index"] >= from_step:
            _render_step(step, candidates, reads, register, compact=compact,
                         cited=(cited or {}).get(step["step_index"]))
    with st.expander("Show SQL of the steps, candidates, passages and register"):
        for name in ("steps", "candidates", "reads", "register"):
            st.code(results[name].sql, language="sql")
    if not compact:
        if register.height:
            st.markdown("**Requirement register, as it changed**")
            st.dataframe(register, hide_index=True, width="stretch")
        judgments = results["judgments"]
        st.markdown("**Judge verdicts**")
        st.dataframe(judgments.df, hide_index=True, width="stretch")
        sql_expander(judgments.sql, seconds=judgments.seconds)
    return True
