"""Lexical judges and the abstention detector against hand-worked SQuAD cases."""
import pytest

from trajscope.engine.judges import (
    contain_match,
    exact_match,
    is_abstention,
    normalize_answer,
    score_answer,
    token_f1,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The  Eiffel Tower!", "eiffel tower"),
        ("an apple, a pear", "apple pear"),
        ("Theatre", "theatre"),  # "the" only as a whole word
        ("U.S.A.", "usa"),
        (None, ""),
    ],
)
def test_normalize_answer_follows_squad(raw, expected):
    assert normalize_answer(raw) == expected


def test_exact_match_ignores_case_punctuation_and_articles():
    assert exact_match("the Beatles.", "Beatles") == 1.0
    assert exact_match("Beatles band", "Beatles") == 0.0
    assert exact_match(None, "Beatles") == 0.0


def test_token_f1_by_hand():
    # pred tokens: barack obama jr ; gold: barack obama -> P = 2/3, R = 1, F1 = 0.8
    assert token_f1("Barack Obama Jr.", "Barack Obama") == pytest.approx(0.8)
    # repeated tokens count by multiplicity: pred "a a b" -> tokens [b] after article removal
    assert token_f1("paris paris london", "paris") == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert token_f1("", "") == 1.0
    assert token_f1("x", "") == 0.0
    assert token_f1("rome", "paris") == 0.0


def test_contain_match_is_normalised_substring():
    assert contain_match("It was the Eiffel Tower, in Paris.", "Eiffel Tower") == 1.0
    assert contain_match("Eiffel", "Eiffel Tower") == 0.0
    assert contain_match("anything", "The") == 0.0  # gold normalises to empty


def test_score_answer_takes_max_over_gold_and_aliases():
    judgments = {j.judge: j for j in score_answer("JFK airport", "John F. Kennedy International", ["JFK"])}
    assert set(judgments) == {"em", "f1", "contain"}
    assert judgments["contain"].score == 1.0  # alias "jfk" is a substring
    assert judgments["em"].score == 0.0
    # f1 vs alias "jfk": P = 1/2, R = 1 -> 2/3, better than vs gold (0)
    assert judgments["f1"].score == pytest.approx(2 / 3)
    assert all(j.judge_model is None for j in judgments.values())


def test_score_answer_without_gold_scores_zero():
    assert [j.score for j in score_answer("x", None, [])] == [0.0, 0.0, 0.0]
    assert [j.score for j in score_answer(None, "x", [])] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "answer",
    ["Unknown", "unknown.", "", None, "I was unable to find the birthplace.", "The answer cannot be determined",
     "Insufficient information to answer", "Not found", "I don’t know", "N/A"],
)
def test_abstentions_detected(answer):
    assert is_abstention(answer)


@pytest.mark.parametrize("answer", ["Unknown Pleasures", "Paris", "None of the Above (film)", "Foundry"])
def test_real_answers_are_not_abstentions(answer):
    assert not is_abstention(answer)
