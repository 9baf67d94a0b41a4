"""Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`): the main session and each
sub-agent side chain (`isSidechain`, by `agentId`) are one trajectory each.

Each `tool_use` block is a step, matched to its `tool_result` by id; `thinking` and text blocks before it are its
thought; the last non-empty assistant text is the answer. Claude Code writes one line per content block of an
API message, so usage is counted once per message id.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from trajscope.format import ErrorStep, Step, Trajectory

from ._actions import DEFAULT_TOOL_MAP, make_step
from ._context import ImportContext, assemble
from ._fields import Where, need_object, opt_str
from ._json_stream import iter_jsonl

# Claude Code's own tools: web and file searches are searches, a fetched page or a read file is a read.
CLAUDE_CODE_TOOL_MAP = {**DEFAULT_TOOL_MAP, "websearch": "search", "webfetch": "read", "read": "read",
                        "grep": "keyword_search", "glob": "keyword_search", "notebookread": "read"}
CLAUDE_CODE_NOTES = {"gold_answers": "a Claude Code session has no gold answer",
                     "gold_passages": "a Claude Code session has no gold passages",
                     "search_candidates": "WebSearch, Grep and Glob return text, never chunk ids"}


@dataclass
class _Chain:
    """The records of one trajectory: the main session or one side chain, in file order."""

    session: str
    agent: str | None
    records: list[tuple[Where, dict[str, Any]]] = field(default_factory=list)


def _blocks(message: dict[str, Any], where: Where) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if content is None:
        return []
    if not isinstance(content, list):
        raise where.error("expected a string or a list of content blocks", "message.content")
    return [b for b in content if isinstance(b, dict)]


def _result_text(block: dict[str, Any]) -> str | None:
    content = block.get("content")
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return str(content)


def _trajectory(ctx: ImportContext, chain: _Chain) -> Trajectory:
    results: dict[str, dict[str, Any]] = {}
    for where, record in chain.records:
        if record.get("type") == "user":
            for block in _blocks(record.get("message") or {}, where):
                if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                    results[block["tool_use_id"]] = block
    question: str | None = None
    steps: list[Step] = []
    seen_calls: set[str] = set()
    usage: dict[str, tuple[int, int]] = {}
    thought: list[str] = []
    answer: tuple[str, str] | None = None
    model: str | None = None
    stamps: list[str] = []
    human_turns = 0
    for where, record in chain.records:
        message = need_object(record.get("message"), where.at("message"))
        if isinstance(stamp := record.get("timestamp"), str):
            stamps.append(stamp)
        blocks = _blocks(message, where)
        if record["type"] == "user":
            texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
            typed = not record.get("isMeta") and not record.get("isCompactSummary")  # not a context summary
            if texts and typed and not any(b.get("type") == "tool_result" for b in blocks):
                human_turns += 1
                question = question or "\n".join(texts)
            continue
        model = model or opt_str(message, "model", where.at("message"))
        if isinstance(message.get("id"), str) and isinstance(message.get("usage"), dict):
            u = message["usage"]
            tokens_in = sum(u.get(k) or 0 for k in ("input_tokens", "cache_creation_input_tokens",
                                                     "cache_read_input_tokens") if isinstance(u.get(k), int))
            usage[message["id"]] = (tokens_in, u.get("output_tokens") or 0)
        for i, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"].strip():
                thought.append(block["thinking"].strip())
            elif kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                thought.append(block["text"].strip())
                answer = (block["text"], str(record.get("uuid")))
            elif kind == "tool_use":
                at = where.at("message.content").at(i)
                call_id, name = block.get("id"), block.get("name")
                if not isinstance(name, str) or not name:
                    raise at.error("tool_use block without a name", "name")
                if not isinstance(call_id, str) or not call_id:
                    raise at.error("tool_use block without an id", "id")
                if call_id in seen_calls:
                    continue
                seen_calls.add(call_id)
                args = block.get("input") if isinstance(block.get("input"), dict) else {}
                result = results.get(call_id)
                common: dict[str, Any] = dict(tool_name=name, args=args, thought="\n".join(thought) or None,
                                              observation=_result_text(result) if result else None,
                                              source_ref=f"tool_use:{call_id}")
                if chain.agent is not None:
                    common["agent"] = chain.agent
                thought = []
                if result is not None and result.get("is_error"):
                    steps.append(ErrorStep(error_type="tool_error", message=common["observation"] or "error",
                                           **common))
                else:
                    steps.append(make_step(ctx.action(name), **common))
    if answer is not None:
        agent_field: dict[str, Any] = {"agent": chain.agent} if chain.agent is not None else {}
        steps.append(make_step("final", tool_name=None, args={}, answer=answer[0], source_ref=f"record:{answer[1]}",
                               **agent_field))
    first = chain.records[0][0]
    qid = chain.session if chain.agent is None else f"{chain.session}:{chain.agent}"
    question_obj = ctx.question(first, source_id=qid,
                                text=question or f"(no user prompt in this transcript: session {qid})")
    return assemble(ctx, run=ctx.run(model=model), question=question_obj, steps=steps,
                    started_at=stamps[0] if stamps else None, finished_at=stamps[-1] if stamps else None,
                    total_tokens_in=sum(u[0] for u in usage.values()) if usage else None,
                    total_tokens_out=sum(u[1] for u in usage.values()) if usage else None,
                    metadata={"session_id": chain.session, "side_chain": chain.agent is not None,
                              "user_turns": human_turns, **({"agent_id": chain.agent} if chain.agent else {})})


def import_claude_code(ctx: ImportContext) -> Iterator[Trajectory]:
    """One trajectory per session and per side chain, in order of first appearance."""
    chains: dict[tuple[str, str | None], _Chain] = {}
    for line, record in iter_jsonl(ctx.path):
        where = ctx.where(line)
        record = need_object(record, where)
        kind = record.get("type")
        if not isinstance(kind, str):
            raise where.error("missing record type", "type")
        if kind not in ("user", "assistant"):  # progress, hooks, snapshots, summaries: not the conversation
            continue
        session = record.get("sessionId")
        if not isinstance(session, str) or not session:
            raise where.error("missing session id", "sessionId")
        agent = None
        if record.get("isSidechain"):
            agent = record.get("agentId") if isinstance(record.get("agentId"), str) else "sidechain"
        chains.setdefault((session, agent), _Chain(session, agent)).records.append((where, record))
    for chain in chains.values():
        yield _trajectory(ctx, chain)
