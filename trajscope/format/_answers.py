"""Answer normalisation and lexical scores (EM, token F1, Contain-Acc): one definition for engine and warehouse.

The normalisation is the official SQuAD v1.1 / HotpotQA one: lower case, strip punctuation, drop
the articles a / an / the, collapse whitespace.
"""
from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

from ._records import JudgeName, Judgment
from ._steps import StepBase, step_kind

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


def mentions_answer(text: str | None, gold: str | None, aliases: Iterable[str | None] = ()) -> bool:
    """The normalised gold or one of its normalised aliases occurs in the normalised text (AP §11's
    answer-in-rewrite indicator; Contain-Acc's test, applied to a context instead of an answer)."""
    return any(contain_match(text, g) for g in _golds(gold, [a for a in aliases if a]))


def has_gold_answer(gold: str | None, aliases: Iterable[str | None] = ()) -> bool:
    """Whether a verdict is possible: a non-empty gold answer or alias
    (the SQL macro has_gold_answer is the same rule)."""
    return any((g or "").strip() for g in [gold, *aliases])


# An answer echoes a controller message when at least this share of its normalised tokens lies in
# word trigrams of one message the environment showed the agent (a gate rejection, a budget nudge,
# the force-answer prompt, an error notice). A trigram, not a word: a gold entity named by the gate
# ("missing: Stenwick") is not an echo, the gate's sentence is.
ECHO_MIN_SHARE = 0.5
_ECHO_N = 3
# Step kinds whose observation / message is the environment's (controller's) text, not evidence.
CONTROLLER_MESSAGE_KINDS = ("gate_rejection", "budget_nudge", "forced_answer", "error")
# A comparison question's options: the clause after its last colon (or first comma after its last colon),
# "A or B?" / "A, B or C?". Parsed by hand in one pass: a regular expression for it backtracked
# quadratically or worse on long text (2,000 characters of answer took 27 s).
_OR_BEFORE = re.compile(r"\s(?=or\s)", re.IGNORECASE)
_MAX_OPTION_WORDS = 8


def controller_messages(steps: Iterable[StepBase]) -> list[str]:
    """The texts the environment showed the agent in its own steps (CONTROLLER_MESSAGE_KINDS): the
    observation, and a budget nudge's or error's message."""
    out = []
    for step in steps:
        if step_kind(step) in CONTROLLER_MESSAGE_KINDS:
            out += [t for t in (step.observation, getattr(step, "message", None)) if t]
    return out


def _trigrams(tokens: list[str]) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + _ECHO_N]) for i in range(len(tokens) - _ECHO_N + 1)}


def echoes_controller(answer: str | None, messages: Iterable[str | None]) -> bool:
    """True when >= ECHO_MIN_SHARE of the answer's normalised tokens lie in word trigrams of one
    controller message (the answer repeats the gate's or budget's own text)."""
    tokens = normalize_answer(answer).split()
    if len(tokens) < _ECHO_N:
        return False
    for message in messages:
        grams = _trigrams(normalize_answer(message).split())
        if not grams:
            continue
        covered = [False] * len(tokens)
        for i in range(len(tokens) - _ECHO_N + 1):
            if tuple(tokens[i:i + _ECHO_N]) in grams:
                covered[i:i + _ECHO_N] = [True] * _ECHO_N
        if sum(covered) >= ECHO_MIN_SHARE * len(tokens):
            return True
    return False


def _option_clause(question: str) -> str | None:
    """The text a comparison's options are read from: after the last colon, or after the first comma
    following the last colon or question mark, up to the final question mark; None without one."""
    body = question.rstrip()
    if not body.endswith("?"):
        return None
    body = body[:-1]
    cut = max(body.rfind(":"), body.rfind("?"))
    start = cut if cut >= 0 and body[cut] == ":" else body.find(",", cut + 1)
    return None if start < 0 else body[start + 1:]


def _split_options(clause: str) -> list[str] | None:
    """"A, B or C" -> [A, B, C] (unnormalised); None when the last comma part has no " or " with text
    on both sides. An empty part (",,") ends the list before it, as the options start after it."""
    parts = clause.split(",")
    empties = [i for i, part in enumerate(parts[:-1]) if not part]
    parts = parts[empties[-1] + 1:] if empties else parts
    last = parts[-1]
    # the rightmost " or " with at least one character before it and one after its trailing space
    cuts = [m.start() for m in _OR_BEFORE.finditer(last) if m.start() >= 1 and len(last) > m.start() + 4]
    if not cuts:
        return None
    head, tail = last[:cuts[-1]], last[cuts[-1] + 4:]
    return [part.strip() for part in [*parts[:-1], head, tail]]


def comparison_options(question: str | None) -> list[str]:
    """The options a comparison question names ("Which is older, A or B?" -> [A, B]); [] when it names
    none in that form. Linear in the question's length."""
    clause = _option_clause(question or "")
    raw = _split_options(clause) if clause is not None else None
    if raw is None:
        return []
    options = [o for o in (normalize_answer(r) for r in raw) if o]
    if len(options) < 2 or any(len(o.split()) > _MAX_OPTION_WORDS for o in options):
        return []
    return options


def names_every_option(answer: str | None, question: str | None) -> bool:
    """True when the question is a comparison naming options and the answer names every one (a hedge:
    Contain-Acc finds the gold in "Stenwick or Kessbridge" whichever is right)."""
    options = comparison_options(question)
    if not options:
        return False
    padded = f" {normalize_answer(answer)} "
    return all(f" {o} " in padded for o in options)


def answer_invalidity(answer: str | None, question: str | None = None,
                      messages: Iterable[str | None] = ()) -> str | None:
    """'echo' (the answer repeats a controller message), 'hedge' (it names every option of a comparison
    question) or None. Either way no judge counts the answer as correct (score_answer, judgment_scores)."""
    if echoes_controller(answer, messages):
        return "echo"
    if names_every_option(answer, question):
        return "hedge"
    return None


_TEXT_JUDGES: tuple[JudgeName, ...] = ("em", "f1", "contain")  # the judges score_answer computes


def score_answer(prediction: str | None, gold: str | None, aliases: list[str] | None = None, *,
                 f1_rule: str = "squad", question: str | None = None,
                 messages: Iterable[str | None] = ()) -> list[Judgment]:
    """em, f1 and contain Judgments, each the maximum over the gold answer and its aliases; f1 under
    `f1_rule` (token_f1's rule). All 0 when answer_invalidity(prediction, question, messages) names one."""
    if answer_invalidity(prediction, question, messages) is not None:
        return [Judgment(judge=name, score=0.0) for name in _TEXT_JUDGES]
    golds = _golds(gold, aliases or [])
    scores: dict[JudgeName, float] = {
        "em": max((exact_match(prediction, g) for g in golds), default=0.0),
        "f1": max((token_f1(prediction, g, rule=f1_rule) for g in golds), default=0.0),
        "contain": max((contain_match(prediction, g) for g in golds), default=0.0),
    }
    return [Judgment(judge=name, score=value) for name, value in scores.items()]


__all__ = [
    "CONTROLLER_MESSAGE_KINDS", "ECHO_MIN_SHARE", "F1_RULES", "answer_invalidity", "comparison_options",
    "contain_match", "controller_messages", "echoes_controller", "exact_match", "has_gold_answer",
    "mentions_answer", "names_every_option", "normalize_answer", "score_answer", "token_f1",
]
