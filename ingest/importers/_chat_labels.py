"""Human labels a chat record carries beside its `messages`, read at import (no `--labels` needed).

Per-step maps (`step_labels` / `step_ratings` / `ratings`: +1 / 0 / -1 keyed by the index of the assistant
message in `messages`, as a number, a digit string or `message:N`; a list is in step order), a Who&When
decisive error (`mistake_step` into `messages`, `mistake_agent`, `mistake_reason`), and the person's verdict
on the answer (`final_label` / `answer_label`: +1 right, -1 wrong) as `metadata.human_answer_correct`.
"""
from __future__ import annotations

from typing import Any

from trajscope.format import HumanLabel, Step

from ._fields import Where, opt_str
from ._labels import _rating

STEP_MAP_KEYS = ("step_labels", "step_ratings", "ratings")
MISTAKE_KEYS = ("mistake_step", "mistake_agent", "mistake_reason")
ANSWER_LABEL_KEYS = ("final_label", "answer_label")
_MESSAGE_PREFIX = "message:"


def _message_index(key: Any, where: Where) -> int:
    text = str(key).strip()
    if text.startswith(_MESSAGE_PREFIX):
        text = text[len(_MESSAGE_PREFIX):]
    if isinstance(key, bool) or not text.isdigit():
        raise where.error(f"expected the index of a message (N or message:N), got {key!r}")
    return int(text)


def _resolved(ref: str, steps: list[Step]) -> int | None:
    return next((i for i, s in enumerate(steps) if s.source_ref == ref), None)


def _step_map(record: dict[str, Any], key: str, steps: list[Step], where: Where) -> list[HumanLabel]:
    value, at = record[key], where.at(key)
    annotator = opt_str(record, "annotator", where)
    labels = []
    if isinstance(value, list):
        for i, rating in enumerate(value):
            if rating is None:
                continue
            ref = steps[i].source_ref if i < len(steps) else None
            labels.append(HumanLabel(label=_rating(rating, at.at(i)), source_ref=ref,  # type: ignore[arg-type]
                                     step_index=i, annotator=annotator, source=key))
        return labels
    if not isinstance(value, dict):
        raise at.error("expected an object of message index -> +1 / 0 / -1, or a list in step order")
    for raw_key, rating in value.items():
        if rating is None:  # a step the annotator left unrated: no label there
            continue
        ref = f"{_MESSAGE_PREFIX}{_message_index(raw_key, at.at(str(raw_key)))}"
        labels.append(HumanLabel(label=_rating(rating, at.at(str(raw_key))), source_ref=ref,  # type: ignore[arg-type]
                                 step_index=_resolved(ref, steps), annotator=annotator, source=key))
    return labels


def _mistake(record: dict[str, Any], steps: list[Step], where: Where) -> HumanLabel:
    ref = f"{_MESSAGE_PREFIX}{_message_index(record.get('mistake_step'), where.at('mistake_step'))}"
    return HumanLabel(label="error", source_ref=ref, step_index=_resolved(ref, steps),
                      agent=opt_str(record, "mistake_agent", where), reason=opt_str(record, "mistake_reason", where),
                      source="mistake_step")


def embedded_labels(record: dict[str, Any], steps: list[Step], where: Where) -> tuple[list[HumanLabel], set[str]]:
    """The step labels the record carries and the fields they came from; each names its step by source_ref.

    A label on a message that is no step (a user turn) keeps its source_ref with step_index None.
    """
    labels: list[HumanLabel] = []
    used: set[str] = set()
    key = next((k for k in STEP_MAP_KEYS if record.get(k) is not None), None)
    if key is not None:
        labels.extend(_step_map(record, key, steps, where))
        used.add(key)
    if record.get("mistake_step") is not None:
        labels.append(_mistake(record, steps, where))
        used.update(k for k in MISTAKE_KEYS if k in record)
    return labels, used


def human_answer_verdict(record: dict[str, Any], where: Where) -> tuple[bool | None, str | None]:
    """(the person's verdict on the answer, its field): +1 / true right, -1 / 0 / false wrong; (None, None)
    when the record has none."""
    key = next((k for k in ANSWER_LABEL_KEYS if record.get(k) is not None), None)
    if key is None:
        return None, None
    value = record[key]
    if isinstance(value, bool):
        return value, key
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        value = int(value.strip())
    if isinstance(value, (int, float)) and value in (1, -1, 0):
        return value == 1, key
    raise where.error(f"expected +1 (right) or -1 (wrong), got {value!r}", key)
