"""The four audit edits, checked character by character on contexts whose answers we placed by hand."""
from __future__ import annotations

import re

import pytest

from trajscope.engine.audit import (
    MASK,
    PLACEBO_SEED,
    SENTINEL_PANEL,
    answer_spans,
    gold_is_auditable,
    has_answer,
    insert_mid,
    insert_prepend,
    midpoint_boundary,
    placebo,
    placebo_candidates,
    placebo_span,
    remove_answer,
    sentence_boundaries,
    sentinel_label,
)

CONTEXT = (
    "Oskar Bay is a port. The founder was born in oskar bay, not in Vellmar. "
    "Maps call it OSKAR BAY or Oskar bay.\nLater records say Oskar Bays grew."
)
GOLD = "Oskar Bay"


def test_remove_hits_every_case_variant_and_nothing_else():
    edit = remove_answer(CONTEXT, GOLD)
    assert edit.text == (
        "[MASK] is a port. The founder was born in [MASK], not in Vellmar. "
        "Maps call it [MASK] or [MASK].\nLater records say [MASK]s grew."
    )
    assert edit.spans == ((0, 9), (45, 54), (85, 94), (98, 107), (127, 136))
    for start, end in edit.spans:
        assert CONTEXT[start:end].lower() == "oskar bay"
    assert not has_answer(edit.text, GOLD)
    assert edit.changed


def test_remove_with_each_panel_sentinel_writes_that_sentinel_exactly():
    assert list(SENTINEL_PANEL.values()) == ["[MASK]", "[REMOVED]", "the answer was removed", "thing", "###"]
    for label, sentinel in SENTINEL_PANEL.items():
        edit = remove_answer("Paris or PARIS.", "paris", sentinel)
        assert edit.text == f"{sentinel} or {sentinel}."
        assert sentinel_label(sentinel) == label


def test_remove_treats_regex_characters_in_the_gold_literally():
    context = "Washington D.C. is not WashingtonXDXCX; washington d.c. again."
    edit = remove_answer(context, "Washington D.C.")
    assert edit.text == "[MASK] is not WashingtonXDXCX; [MASK] again."


def test_remove_on_a_context_without_the_gold_is_the_identity():
    edit = remove_answer("Nothing here.", GOLD)
    assert edit.text == "Nothing here." and edit.spans == () and not edit.changed


def test_placebo_replaces_one_span_of_the_gold_word_count_that_never_overlaps_an_answer():
    edit = placebo(CONTEXT, GOLD)
    assert edit is not None
    (start, end), = edit.spans
    replaced = CONTEXT[start:end]
    assert len(replaced.split()) == len(GOLD.split()) == 2
    assert edit.text == CONTEXT[:start] + MASK + CONTEXT[end:]
    for a, b in answer_spans(CONTEXT, GOLD):
        assert end <= a or start >= b, f"placebo {replaced!r} overlaps answer at {a}:{b}"
    # the gold survives the placebo untouched: every occurrence is still there
    assert len(answer_spans(edit.text, GOLD)) == len(answer_spans(CONTEXT, GOLD))


def test_placebo_candidates_exclude_every_window_touching_an_answer():
    context = "alpha Paris beta gamma Paris, delta"
    spans = placebo_candidates(context, "Paris")
    assert [context[s:e] for s, e in spans] == ["alpha", "beta", "gamma", "delta"]
    context = "one two big ROME three four five"
    two = placebo_candidates(context, "Big Rome")
    assert [context[s:e] for s, e in two] == ["one two", "three four", "four five"]


def test_placebo_is_the_same_for_the_same_seed_and_varies_with_the_seed():
    first = placebo_span(CONTEXT, GOLD)
    assert first == placebo_span(CONTEXT, GOLD) == placebo_span(CONTEXT, GOLD, PLACEBO_SEED)
    assert PLACEBO_SEED == 1729
    spans = {placebo_span(CONTEXT, GOLD, seed) for seed in range(40)}
    assert len(spans) > 5  # the seed, not a fixed rule, picks the span


def test_placebo_returns_none_when_every_window_touches_the_answer():
    assert placebo("Paris Paris", "Paris") is None
    assert placebo("", "Paris") is None


def test_insert_prepend_puts_the_note_first():
    edit = insert_prepend("The fair is in spring.", "Dunmere")
    assert edit.text == "Note: Dunmere. The fair is in spring."
    assert edit.spans == ((0, 0),) and edit.inserted == "Note: Dunmere."
    assert insert_prepend("", "Dunmere").text == "Note: Dunmere."


def test_insert_mid_goes_to_the_sentence_boundary_nearest_the_middle():
    context = "Aa bb. Cc dd ee. Ff gg hh ii. Jj."
    # sentences start at 7, 17 and 30; the middle is 16.5, so the boundary is 17
    assert sentence_boundaries(context) == [7, 17, 30]
    assert midpoint_boundary(context) == 17
    edit = insert_mid(context, "Mirek Sol")
    assert edit.text == "Aa bb. Cc dd ee. Mirek Sol. Ff gg hh ii. Jj."
    assert edit.spans == ((17, 17),)
    assert edit.text[17:28] == "Mirek Sol. "


def test_insert_mid_handles_line_breaks_question_marks_and_closing_quotes():
    context = 'He asked "why?" She left.\nThen rain fell! Done.'
    assert sentence_boundaries(context) == [16, 26, 42]
    assert midpoint_boundary(context) == 26
    assert insert_mid(context, "X1").text == 'He asked "why?" She left.\nX1. Then rain fell! Done.'


def test_insert_mid_on_one_sentence_appends_at_the_end():
    edit = insert_mid("Just one sentence without a stop", "Ada Brenn")
    assert edit.text == "Just one sentence without a stop Ada Brenn."
    assert edit.spans == ((32, 32),)


def test_insert_mid_prefers_the_earlier_boundary_on_a_tie():
    context = "Ab. Cd. Ef"  # boundaries 4 and 8, middle 5.0 -> 4 (distance 1) beats 8 (distance 3)
    assert midpoint_boundary(context) == 4
    tie = "Ab. Cd. Efgh"  # boundaries 4 and 8, middle 6.0: both 2 away
    assert sentence_boundaries(tie) == [4, 8]
    assert midpoint_boundary(tie) == 4


@pytest.mark.parametrize(("gold", "auditable"), [("B", False), (" B ", False), ("", False), (None, False),
                                                  ("Bo", True), ("42", True)])
def test_golds_shorter_than_two_characters_are_not_auditable(gold, auditable):
    assert gold_is_auditable(gold) is auditable


def test_answer_presence_matches_python_regex_case_folding():
    assert has_answer("the OSKAR bay port", GOLD)
    assert not has_answer("Oskar  Bay", GOLD)  # two spaces: not the literal gold
    assert answer_spans("aaa", "aa") == [m.span() for m in re.finditer("aa", "aaa")]
