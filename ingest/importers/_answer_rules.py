"""The answer inside an agent's closing message, by the conventions agents write it in.

Rules, tried in order (the first that finds an answer wins; its name is stored per trajectory as
`metadata.answer_rule`): `answer_tag` (the last `<answer>...</answer>`), `boxed` (the last `\\boxed{...}`),
`final_answer_line` (the text after the last `Final Answer:`), else `message` (the whole text after
any `</think>`). A final-answer tool call is the rule `final_answer_tool` (set by the importer).
Every scan is linear in the text: no nested quantifiers (model output can be long and repetitive).
"""
from __future__ import annotations

import re

ANSWER_TAG = "answer_tag"
BOXED = "boxed"
FINAL_ANSWER_LINE = "final_answer_line"
FINAL_ANSWER_TOOL = "final_answer_tool"
MESSAGE = "message"

_ANSWER_OPEN = "<answer>"
_ANSWER_CLOSE = "</answer>"
_BOXED = "\\boxed{"
_FINAL_LINE = re.compile(r"final answer\s*[:：]", re.I)
_THINK_CLOSE = "</think>"


def _last_tag(text: str) -> str | None:
    """The content of the last closed `<answer>...</answer>` (case-insensitive)."""
    lower = text.lower()
    close = lower.rfind(_ANSWER_CLOSE)
    if close < 0:
        return None
    start = lower.rfind(_ANSWER_OPEN, 0, close)
    if start < 0:
        return None
    return text[start + len(_ANSWER_OPEN):close]


def _last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}`, braces balanced."""
    start = text.rfind(_BOXED)
    if start < 0:
        return None
    depth, i = 1, start + len(_BOXED)
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i:j]
    return None


def _final_line(text: str) -> str | None:
    last = None
    for match in _FINAL_LINE.finditer(text):
        last = match
    return text[last.end():].strip().split("\n", 1)[0] if last is not None else None


def _after_thinking(text: str) -> str:
    """The text after the last `</think>` (reasoning models put the answer after their thinking)."""
    close = text.lower().rfind(_THINK_CLOSE)
    return text[close + len(_THINK_CLOSE):] if close >= 0 else text


def _clean(answer: str | None) -> str | None:
    if answer is None:
        return None
    answer = answer.strip()
    return answer or None


def extract_answer(text: str) -> tuple[str | None, str]:
    """(the answer, the rule that found it) in a closing message; the answer is None for an empty message."""
    for rule, find in ((ANSWER_TAG, _last_tag), (BOXED, _last_boxed), (FINAL_ANSWER_LINE, _final_line)):
        found = _clean(find(text))
        if found is not None:
            return found, rule
    return _clean(_after_thinking(text)), MESSAGE
