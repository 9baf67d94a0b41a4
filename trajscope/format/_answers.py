"""Answer normalisation and lexical scores (EM, token F1, Contain-Acc): one definition for engine and warehouse.

The normalisation is the official SQuAD v1.1 / HotpotQA one: lower case, strip punctuation, drop
the articles a / an / the, collapse whitespace.
"""
from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

from ._records import Judgment

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str | None) -> str:
    """The official SQuAD v1.1 normalisation; None becomes the empty string."""
    if not text:
        return ""
    lowered = text.lower()
    no_punct = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    no_articles = _ARTICLES.sub(" ", no_punct)
    return " ".join(no_articles.split())


def exact_match(prediction: str | None, gold: str | None) -> float:
    """1.0 when the normalised prediction equals the normalised gold, else 0.0."""
    if prediction is None or gold is None:
        return 0.0
    return float(normalize_answer(prediction) == normalize_answer(gold))


F1_RULES = ("squad", "hotpotqa")
# HotpotQA's official evaluation: a yes / no / noanswer answer on either side scores 0 unless both agree.
_HOTPOT_SPECIAL = frozenset({"yes", "no", "noanswer"})


def token_f1(prediction: str | None, gold: str | None, *, rule: str = "squad") -> float:
    """Token-overlap F1 between normalised prediction and gold: SQuAD's rule, or HotpotQA's official one
    (rule="hotpotqa": yes / no / noanswer must match exactly, "yes they are" vs "yes" scores 0, not 0.5)."""
    if rule not in F1_RULES:
        raise ValueError(f"unknown F1 rule {rule!r}; choose one of {', '.join(F1_RULES)}")
    if prediction is None or gold is None:
        return 0.0
    if rule == "hotpotqa":
        pred_norm, gold_norm = normalize_answer(prediction), normalize_answer(gold)
        if (pred_norm in _HOTPOT_SPECIAL or gold_norm in _HOTPOT_SPECIAL) and pred_norm != gold_norm:
            return 0.0
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        # SQuAD v2 convention: two empty answers agree, one empty answer scores zero.
        return float(pred_tokens == gold_tokens)
    common = Counter(pred_tokens) & Counter(gold_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def contain_match(prediction: str | None, gold: str | None) -> float:
    """Contain-Acc: 1.0 when the normalised gold is a substring of the normalised prediction."""
    if prediction is None or gold is None:
        return 0.0
    gold_norm = normalize_answer(gold)
    if not gold_norm:
        # An empty normalised gold would be a substring of everything.
        return 0.0
    return float(gold_norm in normalize_answer(prediction))


def _golds(gold: str | None, aliases: Iterable[str]) -> list[str]:
    return [g for g in ([gold] if gold is not None else []) + list(aliases) if g is not None]


def has_gold_answer(gold: str | None, aliases: Iterable[str | None] = ()) -> bool:
    """Whether a verdict is possible: a non-empty gold answer or alias
    (the SQL macro has_gold_answer is the same rule)."""
    return any((g or "").strip() for g in [gold, *aliases])


def score_answer(prediction: str | None, gold: str | None, aliases: list[str] | None = None, *,
                 f1_rule: str = "squad") -> list[Judgment]:
    """em, f1 and contain Judgments, each the maximum over the gold answer and its aliases; f1 under
    `f1_rule` (token_f1's rule)."""
    golds = _golds(gold, aliases or [])
    scores = {
        "em": max((exact_match(prediction, g) for g in golds), default=0.0),
        "f1": max((token_f1(prediction, g, rule=f1_rule) for g in golds), default=0.0),
        "contain": max((contain_match(prediction, g) for g in golds), default=0.0),
    }
    return [Judgment(judge=name, score=value) for name, value in scores.items()]


__all__ = [
    "F1_RULES", "contain_match", "exact_match", "has_gold_answer", "normalize_answer", "score_answer", "token_f1",
]
