"""Reciprocal Rank Fusion arithmetic on hand-computed ranks."""
from __future__ import annotations

import pytest

from trajscope.engine.retrieval import reciprocal_rank_fusion


def test_rrf_scores_match_hand_computation() -> None:
    lexical = ["a", "b", "c"]
    semantic = ["c", "a", "d"]
    fused = dict(reciprocal_rank_fusion([lexical, semantic], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["d"] == pytest.approx(1 / 63)
    assert [c for c, _ in reciprocal_rank_fusion([lexical, semantic], k=60)] == ["a", "c", "b", "d"]


def test_rrf_k_changes_the_order() -> None:
    # x: ranks 1 and 10; y: ranks 4 and 4. With k=0, x wins (1 + 0.1 > 0.5); with k=60, y wins.
    first = ["x", "p1", "p2", "y", "p3", "p4", "p5", "p6", "p7", "p8"]
    second = ["q1", "q2", "q3", "y", "q4", "q5", "q6", "q7", "q8", "x"]
    assert reciprocal_rank_fusion([first, second], k=0)[0][0] == "x"
    top60 = reciprocal_rank_fusion([first, second], k=60)[0]
    assert top60[0] == "y" and top60[1] == pytest.approx(2 / 64)


def test_rrf_ties_break_by_best_rank_then_id() -> None:
    # b and a tie on score (ranks 1+2 each); both had best rank 1, so the id decides.
    fused = reciprocal_rank_fusion([["b", "a"], ["a", "b"]], k=60)
    assert [c for c, _ in fused] == ["a", "b"]
    assert fused[0][1] == fused[1][1]


def test_rrf_of_single_list_keeps_its_order() -> None:
    assert [c for c, _ in reciprocal_rank_fusion([["z", "y", "x"]])] == ["z", "y", "x"]
    assert reciprocal_rank_fusion([]) == []
