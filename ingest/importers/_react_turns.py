"""ReAct turns: one assistant turn -> the step it executed; labelled plain text -> steps and notes."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import msgspec

from trajscope.format import SEARCH_KINDS, ErrorStep, FinalStep, Passage, ReadStep, Step

from ._actions import make_step
from ._context import ImportContext
from ._episodes import after_examples
from ._fields import Where, need_object
from ._questions import title_id

# The executed action of a turn: the first `Action:` that starts a line (FireAct's own parser splits
# on "\nAction: "), else the first one anywhere. `Action 3:` numbering (original ReAct) is accepted.
_ACTION_HEAD = r"Action(?:[ \t]*\d+)?[ \t]*:[ \t]*(?P<name>[A-Za-z_][\w-]*)[ \t]*\["
_ACTION_AT_LINE = re.compile(r"^[ \t]*" + _ACTION_HEAD + r"(?P<arg>.*)\]", re.M)
_ACTION_ANYWHERE = re.compile(_ACTION_HEAD + r"(?P<arg>.*)\]")
# `Action: Finish[Paris` with no closing bracket: taken as the action only when the environment ran it.
_ACTION_UNCLOSED = re.compile(r"^[ \t]*" + _ACTION_HEAD + r"(?P<arg>[^\]\n]*)$", re.M)
_THOUGHT_PREFIX = re.compile(r"^\s*Thought(?:\s*\d+)?\s*:\s*")
_OBSERVATION_PREFIX = re.compile(r"^\s*Observation(?:\s*\d+)?\s*:\s*")
_QUESTION_PREFIX = re.compile(r"^\s*Question\s*:\s*")
_QUESTION_LINE = re.compile(r"^[ \t]*Question[ \t]*:", re.M)
_LABEL = re.compile(r"^[ \t]*(?P<label>Question|Thought|Action|Observation|Reflection)(?:[ \t]*\d+)?[ \t]*:[ \t]?",
                    re.M)
# A Retrieve / open that found no page (Wikipedia-style environments) opened nothing.
_PAGE_NOT_FOUND = re.compile(r"^\s*(?:Could not find|No Results|There is no page)", re.I)
# An environment's answer to an action it could not run (ReAct / FireAct wording).
_NOT_EXECUTED = re.compile(r"^\s*(?:Invalid action|Invalid Action|generated an exception|Unknown tool)", re.I)


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        parts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n".join(parts)
    return None


def _action_step(ctx: ImportContext, name: str, arg: str, *, raw: str, thought: str | None) -> Step:
    action = ctx.action(name)
    arg = arg.strip()
    if action in SEARCH_KINDS:
        return make_step(action, tool_name=name, args={"query": arg}, query=arg, raw=raw, thought=thought)
    if action == "read":  # Retrieve[entity] opens a page; which page is known once it is observed
        return make_step(action, tool_name=name, args={"entity": arg}, chunk_ids=[], raw=raw, thought=thought)
    if action == "final":
        return make_step(action, tool_name=name, args={"answer": arg}, answer=arg, raw=raw, thought=thought)
    return make_step(None, tool_name=name, args={"argument": arg}, raw=raw, thought=thought)


def parse_turn(ctx: ImportContext, text: str, *, executed: bool = False) -> Step:
    """One assistant turn -> the step it executed (an error step when it names no action).

    `executed`: the environment answered this turn with an observation, so an action whose closing
    bracket is missing was run as written and is accepted as that action.
    """
    match = _ACTION_AT_LINE.search(text) or _ACTION_ANYWHERE.search(text)
    if match is None and executed:
        match = _ACTION_UNCLOSED.search(text)
    if match is None:
        return ErrorStep(error_type="no_action", message="turn has no `Action: name[argument]`", raw=text,
                         thought=_THOUGHT_PREFIX.sub("", text).strip() or None)
    thought = _THOUGHT_PREFIX.sub("", text[: match.start()]).strip() or None
    return _action_step(ctx, match.group("name"), match.group("arg"), raw=text, thought=thought)


def _with_observation(step: Step, observation: str) -> Step:
    text = _OBSERVATION_PREFIX.sub("", observation, count=1)
    if isinstance(step, FinalStep) and _NOT_EXECUTED.search(text):
        # `Observation: Invalid action: Finish[...]`: the environment did not accept it, so it is no final.
        return ErrorStep(error_type="invalid_action", message=text.strip(), tool_name=step.tool_name,
                         args=step.args, observation=text, raw=step.raw, thought=step.thought)
    entity = step.args.get("entity") if isinstance(step, ReadStep) else None
    if isinstance(entity, str) and entity and not _PAGE_NOT_FOUND.search(text):
        # The page the agent opened, named by its title: `title:<title>`, the id a questions file's gold
        # titles get too, so gold reach is measurable (no corpus chunk ids in such logs).
        page = title_id(entity)
        return msgspec.structs.replace(step, observation=text, chunk_ids=[page],
                                       passages=[Passage(chunk_id=page, text=text)])
    return msgspec.structs.replace(step, observation=text)


def _answered(messages: list[Any], i: int) -> bool:
    """Whether the message after assistant turn i is an environment observation of a run action."""
    if i + 1 >= len(messages) or not isinstance(messages[i + 1], dict):
        return False
    nxt = messages[i + 1]
    text = _content_text(nxt.get("content")) or ""
    return nxt.get("role") in ("user", "tool") and not _NOT_EXECUTED.search(_OBSERVATION_PREFIX.sub("", text))


def steps_from_messages(ctx: ImportContext, messages: list[Any], where: Where) -> tuple[str | None, list[Step]]:
    """(question text from the first user turn, steps) of a chat-message ReAct transcript."""
    question: str | None = None
    steps: list[Step] = []
    for i, message in enumerate(messages):
        at = where.at(i)
        message = need_object(message, at)
        role = message.get("role")
        text = _content_text(message.get("content"))
        if not isinstance(role, str):
            raise at.error("missing or non-string role", "role")
        if text is None:
            raise at.error("expected string content (or a list of text parts)", "content")
        if role in ("system",):
            continue
        if role == "assistant":  # the step keeps its message index, where a per-step label points
            step = parse_turn(ctx, text, executed=_answered(messages, i))
            steps.append(msgspec.structs.replace(step, source_ref=f"message:{i}"))
        elif question is None and not steps:
            episode = after_examples(text, ctx.patterns)  # a few-shot prompt: the question after the examples
            if episode is not text and (m := _QUESTION_LINE.search(episode)):
                episode = episode[m.start():]
            question = _QUESTION_PREFIX.sub("", episode).strip()
        elif steps and steps[-1].observation is None:
            steps[-1] = _with_observation(steps[-1], text)
    return question, steps


@dataclass
class TextSteps:
    """The steps of a labelled transcript and the text around them that is no action."""

    question: str | None = None
    steps: list[Step] = field(default_factory=list)
    preface: str | None = None  # text before the first label (instructions, a reflection preamble)
    reflections: list[str] = field(default_factory=list)  # `Reflection:` paragraphs
    trailing_thought: str | None = None  # a last `Thought:` that no action followed (halted agents)
    offsets: list[int] = field(default_factory=list)  # where each step's `Action:` line starts in the text


def steps_from_text(ctx: ImportContext, text: str) -> TextSteps:
    """Steps of a plain-text ReAct transcript with Question/Thought/Action/Observation labels."""
    labels = list(_LABEL.finditer(text))
    out = TextSteps(preface=(text[: labels[0].start()] if labels else text).strip() or None)
    thought: str | None = None
    for k, m in enumerate(labels):
        body = text[m.end(): labels[k + 1].start() if k + 1 < len(labels) else len(text)].strip()
        label = m.group("label")
        nxt = labels[k + 1].group("label") if k + 1 < len(labels) else None
        if label == "Question" and out.question is None:
            out.question = body
        elif label == "Reflection":
            out.reflections.append(body)
        elif label == "Thought":
            thought = body if thought is None else f"{thought}\n{body}"
        elif label == "Action":
            out.offsets.append(m.start())
            out.steps.append(parse_turn(ctx, f"Action: {body}", executed=nxt == "Observation") if body else
                             ErrorStep(error_type="no_action", message="empty action", thought=thought))
            if thought is not None and out.steps[-1].thought is None:
                out.steps[-1] = msgspec.structs.replace(out.steps[-1], thought=thought)
            thought = None
        elif label == "Observation" and out.steps and out.steps[-1].observation is None:
            out.steps[-1] = _with_observation(out.steps[-1], body)
    out.trailing_thought = thought  # a closing thought with no action after it is kept, not dropped
    return out
