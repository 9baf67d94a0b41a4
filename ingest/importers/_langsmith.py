"""LangSmith runs: run trees (`child_runs`), flat run lists (read API, JSONL) and the SDK's ingest payloads
(`{"post": [...], "patch": [...]}`, a patch merged into its run). One trace (`trace_id`) is one trajectory.

Tool runs are the calls and retriever runs searches (their documents the candidates); the answer is the root run's
output, else the text of the last LLM run that requests no tool.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from trajscope.format import Step, Trajectory

from ._actions import make_step, parse_arguments
from ._chat import chat_action
from ._context import ImportContext, assemble
from ._fields import Where, as_text, need_list, need_object
from ._json_stream import iter_records
from ._llm_payloads import deep_decode, output_text, tool_requests, user_text
from ._traced_tools import traced_tool_step

LANGSMITH_NOTES = {"gold_answers": "a LangSmith run holds a gold answer only as metadata `gold_answer`",
                   "gold_passages": "LangSmith runs carry no gold passages"}
# The run types LangSmith documents; only llm, tool and retriever runs make steps, any other is structure.
_RUN_TYPES = frozenset({"llm", "chain", "tool", "retriever", "prompt", "parser", "embedding"})
_OUTPUT_KEYS = ("output", "answer", "result", "response", "text")


@dataclass
class _Run:
    """One run, its fields merged from its post and patches."""

    fields: dict[str, Any]
    where: Where
    parent: str | None = None

    def get(self, key: str) -> Any:
        return deep_decode(self.fields.get(key), self.where.at(key))

    @property
    def order(self) -> str:
        return str(self.fields.get("dotted_order") or self.fields.get("start_time") or "")


def _flatten(run: Any, where: Where, parent: str | None, out: dict[str, _Run]) -> None:
    run = need_object(run, where)
    run_id = run.get("id")
    if not isinstance(run_id, str) or not run_id:
        raise where.error("missing run id", "id")
    run_type = run.get("run_type")
    if run_type is not None and not isinstance(run_type, str):
        raise where.error(f"expected a run type ({', '.join(sorted(_RUN_TYPES))}), got {run_type!r}", "run_type")
    parent = run.get("parent_run_id") or parent
    if run_id in out:  # a patch: later values fill or replace the post's
        out[run_id].fields.update({k: v for k, v in run.items() if v not in (None, {}, [])})
        out[run_id].parent = out[run_id].parent or (parent if isinstance(parent, str) else None)
    else:
        out[run_id] = _Run(dict(run), where, parent if isinstance(parent, str) else None)
    for i, child in enumerate(run.get("child_runs") or []):
        _flatten(child, where.at("child_runs").at(i), run_id, out)


def _trace_of(run: _Run, runs: dict[str, _Run]) -> str:
    trace = run.fields.get("trace_id")
    if isinstance(trace, str) and trace:
        return trace
    seen: set[str] = set()
    while run.parent is not None and run.parent in runs and run.parent not in seen:
        seen.add(run.parent)
        run = runs[run.parent]
    return str(run.fields.get("trace_id") or run.fields["id"])


def _documents(value: Any) -> Any:
    """LangChain `Document`s with their id and title lifted out of `metadata`."""
    docs = value.get("documents") if isinstance(value, dict) else value
    if not isinstance(docs, list):
        return value
    out = []
    for doc in docs:
        if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict):
            meta = doc["metadata"]
            doc = {**{k: meta[k] for k in ("id", "doc_id", "chunk_id", "title", "source") if k in meta}, **doc}
            if "id" not in doc and isinstance(meta.get("source"), str):
                doc["id"] = meta["source"]
        out.append(doc)
    return out


def _result(run: _Run) -> Any:
    outputs = run.get("outputs")
    if isinstance(outputs, dict) and len(outputs) == 1 and next(iter(outputs)) in _OUTPUT_KEYS:
        return deep_decode(next(iter(outputs.values())), run.where.at("outputs"))
    return outputs


def _tool_step(ctx: ImportContext, run: _Run, thought: str | None) -> Step:
    name = run.fields.get("name") if isinstance(run.fields.get("name"), str) else None
    inputs = run.get("inputs")
    args = inputs if isinstance(inputs, dict) else parse_arguments(inputs, run.where.at("inputs"))
    result = _result(run)
    observation = result.get("content") if isinstance(result, dict) and isinstance(result.get("content"), str) \
        else as_text(result)
    extra: dict[str, Any] = {}
    if run.fields.get("run_type") == "retriever":
        query = inputs.get("query") if isinstance(inputs, dict) else None
        extra["query"] = query if isinstance(query, str) else None
    return traced_tool_step(ctx, name=name, args=args, observation=observation,
                            result=_documents(deep_decode(result, run.where.at("outputs"))),
                            retriever=run.fields.get("run_type") == "retriever",
                            error=str(run.fields["error"]) if run.fields.get("error") else None, thought=thought,
                            source_ref=f"run:{run.fields['id']}", **extra)


def _usage(run: _Run) -> tuple[int, int]:
    outputs = run.get("outputs") if isinstance(run.get("outputs"), dict) else {}
    usage = outputs.get("usage_metadata") or outputs.get("usage") or {}
    if not isinstance(usage, dict):
        usage = {}
    tokens_in = usage.get("input_tokens", usage.get("prompt_tokens", run.fields.get("prompt_tokens")))
    tokens_out = usage.get("output_tokens", usage.get("completion_tokens", run.fields.get("completion_tokens")))
    return (tokens_in if isinstance(tokens_in, int) else 0), (tokens_out if isinstance(tokens_out, int) else 0)


def _answer(run: _Run) -> str | None:
    result = _result(run)
    text = output_text(result)
    return text if text and text.strip() else None


def _trajectory(ctx: ImportContext, trace_id: str, runs: list[_Run]) -> Trajectory:
    runs.sort(key=lambda r: r.order)
    ids = {r.fields["id"] for r in runs}
    root = next((r for r in runs if r.parent is None or r.parent not in ids), runs[0])
    llms = [r for r in runs if r.fields.get("run_type") == "llm"]
    requested = {r.fields["id"]: tool_requests(r.get("outputs")) for r in llms}
    executions = [r for r in runs if r.fields.get("run_type") in ("tool", "retriever")]
    steps: list[Step] = []
    thought: str | None = None
    for run in runs:
        run_type = run.fields.get("run_type")
        if run_type == "llm" and requested[run.fields["id"]]:
            thought = (_answer(run) or "").strip() or None
            if not executions:  # only the LLM calls were traced: each requested call is a step
                for k, (_, name, args) in enumerate(requested[run.fields["id"]]):
                    steps.append(make_step(chat_action(ctx, name), tool_name=name,
                                           args=parse_arguments(args, run.where.at("outputs")),
                                           thought=thought if k == 0 else None, source_ref=f"run:{run.fields['id']}"))
                thought = None
        elif run_type in ("tool", "retriever"):
            steps.append(_tool_step(ctx, run, thought))
            thought = None
    closing = [r for r in llms if not requested[r.fields["id"]] and _answer(r)]
    answer_run = root if _answer(root) and not (root in llms and requested[root.fields["id"]]) else (
        closing[-1] if closing else None)
    if answer_run is not None:
        steps.append(make_step("final", tool_name=None, args={}, answer=_answer(answer_run),
                               source_ref=f"run:{answer_run.fields['id']}"))
    extra = found if isinstance(found := root.get("extra"), dict) else {}
    meta = found if isinstance(found := extra.get("metadata"), dict) else {}
    text = user_text(root.get("inputs")) or next((t for r in llms if (t := user_text(r.get("inputs")))), None)
    sid = meta.get("question_id")
    question = ctx.question(root.where, source_id=str(sid) if sid is not None else trace_id,
                            text=text or f"(question text not captured: trace {trace_id})",
                            gold=meta.get("gold_answer") if isinstance(meta.get("gold_answer"), str) else None)
    model = next((m for r in llms for m in (((r.get("extra") or {}).get("metadata") or {}).get("ls_model_name"),
                                            ((r.get("extra") or {}).get("invocation_params") or {}).get("model"))
                  if isinstance(m, str)), None)
    tokens = [_usage(r) for r in llms]
    error = root.fields.get("error")
    return assemble(ctx, run=ctx.run(model=model), question=question, steps=steps,
                    started_at=root.fields.get("start_time"), finished_at=root.fields.get("end_time"),
                    total_tokens_in=sum(t[0] for t in tokens) if tokens else None,
                    total_tokens_out=sum(t[1] for t in tokens) if tokens else None,
                    end_reason="error" if error else None, error=str(error) if error else None,
                    metadata={"trace_id": trace_id, "runs": dict(Counter(str(r.fields.get("run_type")) for r in runs)),
                              **({"root_name": root.fields["name"]} if isinstance(root.fields.get("name"), str)
                                 else {})})


def import_langsmith(ctx: ImportContext) -> Iterator[Trajectory]:
    """One trajectory per trace, in order of first appearance (runs are gathered from the whole file)."""
    runs: dict[str, _Run] = {}
    for line, key, value in iter_records(ctx.path, frozenset({"post", "patch", "runs", "batch"})):
        where = ctx.where(line, key or "")
        if isinstance(value, dict) and key is None and any(k in value for k in ("post", "patch", "runs")):
            for name in ("post", "runs", "patch"):  # a one-line payload: its lists in this order
                for i, run in enumerate(need_list(value.get(name) or [], where.at(name))):
                    _flatten(run, where.at(name).at(i), None, runs)
        else:
            _flatten(value, where, None, runs)
    traces: dict[str, list[_Run]] = {}
    for run in runs.values():
        traces.setdefault(_trace_of(run, runs), []).append(run)
    for trace_id, members in traces.items():
        yield _trajectory(ctx, trace_id, members)
