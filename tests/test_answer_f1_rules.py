"""Token F1 under SQuAD's rule and under HotpotQA's official yes / no / noanswer rule (an option)."""
from __future__ import annotations

import pytest

from trajscope.format import F1_RULES, score_answer, token_f1


def _hotpot_official_f1(prediction: str, gold: str) -> float:
    # The branch of hotpot_evaluate_v1.py's f1_score that differs from SQuAD, written out independently.
    from trajscope.format import normalize_answer

    p, g = normalize_answer(prediction), normalize_answer(gold)
    if p in ("yes", "no", "noanswer") and p != g:
        return 0.0
    if g in ("yes", "no", "noanswer") and p != g:
        return 0.0
    return token_f1(prediction, gold)


@pytest.mark.parametrize("prediction, gold", [
    ("yes they are", "yes"), ("Yes.", "yes"), ("no", "yes"), ("no answer", "noanswer"), ("noanswer", "noanswer"),
    ("The Eiffel Tower", "Eiffel Tower in Paris"), ("yes", "yes, both are"), ("Denver", "Denver"),
])
def test_hotpotqa_rule_matches_the_official_branch(prediction, gold):
    assert token_f1(prediction, gold, rule="hotpotqa") == pytest.approx(_hotpot_official_f1(prediction, gold))


def test_the_rules_differ_only_on_yes_no_noanswer():
    assert token_f1("yes they are", "yes") == pytest.approx(0.5)
    assert token_f1("yes they are", "yes", rule="hotpotqa") == 0.0
    assert token_f1("Eiffel Tower", "The Eiffel Tower in Paris", rule="hotpotqa") == token_f1(
        "Eiffel Tower", "The Eiffel Tower in Paris"
    )
    f1 = {j.judge: j.score for j in score_answer("yes they are", "yes", f1_rule="hotpotqa")}
    assert f1["f1"] == 0.0 and f1["contain"] == 1.0
    assert F1_RULES == ("squad", "hotpotqa")
    with pytest.raises(ValueError, match="unknown F1 rule"):
        token_f1("a", "b", rule="official")
