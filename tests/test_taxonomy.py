"""Both failure taxonomies on hand-built trajectories: one per branch and sub-type, then priority order."""
from __future__ import annotations

import pytest
from fixtures.forensics.builders import final, inject, llm, read, register_event, register_step, search, trajectory

from trajscope.engine.judge_pass import judge_run
from trajscope.format import ForcedAnswerStep, Run
from trajscope.warehouse import ingest_trajectories, open_warehouse

SD_Q = "Where was Scott Derrickson born?"
G1 = ("hp-g1", "Scott Derrickson (born July 16, 1966) is an American director. He was born in Denver, Colorado.")
N1 = ("hp-n1", "Scott Derrickson directed the horror film Sinister, released in 2012.")
G1_SNIPPET = "Scott Derrickson (born July 16, 1966) is an American director."
N1_SNIPPET = "Scott Derrickson directed the horror film Sinister"


def _read_gate_branches(run: Run) -> list:
    ed_wood = "Are Ed Wood and Scott Derrickson of the same nationality?"
    return [
        trajectory(run, "rg_no_read", SD_Q, "Denver", [search((G1[0], G1_SNIPPET)), final("Boulder")],
                   gold_chunks=(G1[0],)),
        trajectory(run, "rg_snippet_only", SD_Q, "Denver",
                   [search(("hp-n2", "Scott Derrickson grew up in Boulder")), read(N1), final("Boulder")],
                   gold_chunks=(G1[0],)),
        trajectory(run, "rg_low_evidence", ed_wood, "yes",
                   [search(("hp-n3", "Ed Wood was a filmmaker")), read(("hp-n3", "Ed Wood was an American filmmaker.")),
                    final("They differ")], gold_chunks=("hp-g3",), question_type="comparison"),
        trajectory(run, "rg_post", SD_Q, "Denver", [search((G1[0], G1_SNIPPET)), read(G1), final("Colorado Springs")],
                   gold_chunks=(G1[0],)),
        trajectory(run, "rg_retrieval", SD_Q, "Denver", [search((N1[0], N1_SNIPPET)), read(N1), final("Los Angeles")],
                   gold_chunks=(G1[0],)),
        trajectory(run, "rg_ambiguity", SD_Q, "Denver",
                   [search((G1[0], G1_SNIPPET), (N1[0], N1_SNIPPET)), read(N1), final("Los Angeles")],
                   gold_chunks=(G1[0],)),
        trajectory(run, "rg_no_gold", SD_Q, "Denver", [search((N1[0], N1_SNIPPET)), read(N1), final("Los Angeles")]),
        # regex finds "Inception" (absent from the read passage); spaCy finds no entity at all.
        trajectory(run, "rg_extractors_differ", "Who directed the film Inception?", "Christopher Nolan",
                   [search(("hp-n4", "The film was released in 2010")),
                    read(("hp-n4", "The film was released in 2010 by Warner Bros.")), final("Steven Spielberg")],
                   gold_chunks=("hp-g4",)),
        trajectory(run, "rg_correct", SD_Q, "Denver", [search((G1[0], G1_SNIPPET)), read(G1), final("Denver")],
                   gold_chunks=(G1[0],)),
    ]


M1 = ("mq-g1", "Scott Derrickson was born in Denver.")
M2 = ("mq-g2", "Denver is the capital of Colorado.")
MUSIQUE_Q = "What state is the birthplace of Scott Derrickson the capital of?"


def _erag_branches(run: Run) -> list:
    golds = (M1[0], M2[0])
    both = [search((M1[0], "Scott Derrickson was born")), read(M2)]
    half = [search((M1[0], "Scott Derrickson was born")), read(M1)]
    resolved_all = (register_event("R1", "resolved", 2, chunks=(M1[0],)), register_event("R2", "active", 0),
                    register_event("R2", "resolved", 2))
    resolved_one = (register_event("R1", "resolved", 2, chunks=(M1[0],)), register_event("R2", "active", 0))
    return [
        trajectory(run, "e_judge_error", MUSIQUE_Q, "Colorado", [*half, final("Colorado Springs")],
                   gold_chunks=golds, judgments=(llm(0.0),)),
        trajectory(run, "e_gave_up", MUSIQUE_Q, "Colorado", [*half, final("The state cannot be determined.")],
                   gold_chunks=golds, judgments=(llm(0.0),)),
        trajectory(run, "e_budget", MUSIQUE_Q, "Colorado", [*half, ForcedAnswerStep(answer="Kansas")],
                   gold_chunks=golds, end_reason="budget", judgments=(llm(0.0),)),
        trajectory(run, "e_reasoning", MUSIQUE_Q, "Colorado", [*both, final("Utah")], gold_chunks=golds,
                   judgments=(llm(0.0),)),
        trajectory(run, "e_false_resolution", MUSIQUE_Q, "Colorado", [*half, register_step(), final("Utah")],
                   gold_chunks=golds, register=resolved_all, judgments=(llm(0.0),)),
        trajectory(run, "e_missing", MUSIQUE_Q, "Colorado", [*half, register_step(), final("Utah")],
                   gold_chunks=golds, register=resolved_one, judgments=(llm(0.0),)),
        trajectory(run, "e_no_gold", MUSIQUE_Q, "Colorado", [*half, final("Utah")], judgments=(llm(0.0),)),
        trajectory(run, "e_correct", MUSIQUE_Q, "Colorado", [*both, final("Colorado")], gold_chunks=golds,
                   judgments=(llm(1.0),)),
    ]


def _priority_cases(run: Run) -> list:
    golds = (M1[0], M2[0])
    both = [search((M1[0], "Scott Derrickson was born"), (M2[0], "Denver is the capital")), read(M1)]
    complete = (register_event("R1", "resolved", 2), register_event("R2", "resolved", 2))
    two = "Are Ed Wood and Scott Derrickson of the same nationality?"
    return [
        # Read-Gate: no-read beats snippet-only; snippet-only and low-evidence beat post-gold-read;
        # post-gold-read beats retrieval.
        trajectory(run, "p_no_read_and_snippet", SD_Q, "Denver",
                   [search(("hp-n2", "Scott Derrickson grew up in Boulder")), final("Boulder")],
                   gold_chunks=(G1[0],), judgments=(llm(0.0),)),
        trajectory(run, "p_snippet_and_post", SD_Q, "Denver",
                   [search((G1[0], G1_SNIPPET), ("hp-n2", "Scott Derrickson grew up in Boulder")), read(G1),
                    final("Boulder")], gold_chunks=(G1[0],), judgments=(llm(0.0),)),
        trajectory(run, "p_low_evidence_and_post", two, "yes",
                   [search((G1[0], G1_SNIPPET)), read(G1), final("They differ")],
                   gold_chunks=(G1[0], "hp-g5"), judgments=(llm(0.0),)),
        trajectory(run, "p_post_and_retrieval", SD_Q, "Denver",
                   [search((G1[0], G1_SNIPPET)), read(G1), final("Aurora")],
                   gold_chunks=(G1[0], "hp-never"), judgments=(llm(0.0),)),
        # ExecutionRAG: judge error beats gave up; gave up beats reasoning error; all-gold beats
        # false resolution as the recorded reasoning sub-type.
        trajectory(run, "p_judge_error_and_abstained", SD_Q, "Denver", [*both, final("Denver? Not found.")],
                   gold_chunks=golds, judgments=(llm(0.0),)),
        trajectory(run, "p_gave_up_and_all_gold", SD_Q, "Denver", [*both, final("I was unable to find it")],
                   gold_chunks=golds, judgments=(llm(0.0),)),
        trajectory(run, "p_all_gold_and_false_resolution", SD_Q, "Denver",
                   [*both, register_step(), final("Aurora")], gold_chunks=golds, register=complete,
                   judgments=(llm(0.0),)),
        # Contain-Acc says right, no LLM verdict: correct, so in neither taxonomy.
        trajectory(run, "p_contain_only_correct", SD_Q, "Denver", [*both, final("Denver, Colorado")],
                   gold_chunks=golds),
    ]


def _no_read_action_cases(run: Run) -> list:
    # Vanilla RAG: one retrieval, the passages placed in the prompt in full, one answer; no read tool.
    return [
        trajectory(run, "v_gold_in_prompt", SD_Q, "Denver", [search((G1[0], G1_SNIPPET)), inject(G1), final("Boulder")],
                   gold_chunks=(G1[0],)),
        trajectory(run, "v_gold_missing", SD_Q, "Denver", [search((N1[0], N1_SNIPPET)), inject(N1), final("Sinister")],
                   gold_chunks=(G1[0],)),
        trajectory(run, "v_correct", SD_Q, "Denver", [search((G1[0], G1_SNIPPET)), inject(G1), final("Denver")],
                   gold_chunks=(G1[0],)),
    ]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("forensics") / "wh.duckdb"
    runs = {
        "rg": Run(run_id="rg", dataset="hotpotqa", condition="baseline"),
        "erag": Run(run_id="erag", dataset="musique", condition="register"),
        "prio": Run(run_id="prio", dataset="2wikimultihopqa", condition="mixed"),
        "vrag": Run(run_id="vrag", dataset="hotpotqa", controller="vanilla_rag", condition="k5",
                    config={"read_action": False}),
    }
    records = (_read_gate_branches(runs["rg"]) + _erag_branches(runs["erag"]) + _priority_cases(runs["prio"])
               + _no_read_action_cases(runs["vrag"]))
    ingest_trajectories(path, records)
    for run_id in runs:
        report = judge_run(path, run_id)
        assert report.coverage_rows == 2 * report.n_trajectories
    return path


def _labels(db, view: str, run_id: str, columns: str, where: str = "true") -> dict:
    with open_warehouse(db) as con:
        rows = con.execute(
            f"SELECT question_id, {columns} FROM {view} WHERE run_id = ? AND {where} ORDER BY ALL", [run_id]
        ).fetchall()
    return {r[0]: tuple(r[1:]) if len(r) > 2 else r[1] for r in rows}


def test_read_gate_branches_and_subtypes_regex(db):
    labels = _labels(db, "failure_rg", "rg", "label, discipline_subtype", "extractor = 'regex'")
    assert labels == {
        "rg_no_read": ("discipline", "no_read_final"),
        "rg_snippet_only": ("discipline", "snippet_only_final"),
        "rg_low_evidence": ("discipline", "low_evidence_final"),
        "rg_post": ("post_gold_read", None),
        "rg_retrieval": ("retrieval", None),
        "rg_ambiguity": ("ambiguity", None),
        "rg_no_gold": (None, None),  # no gold passages: post-gold-read / retrieval / ambiguity do not apply
        "rg_extractors_differ": ("discipline", "low_evidence_final"),
    }


def test_read_gate_spacy_labels_differ_only_where_entities_do(db):
    with open_warehouse(db) as con:
        rows = dict(con.execute(
            "SELECT question_id, label FROM failure_rg WHERE run_id = 'rg' AND extractor = 'spacy'"
        ).fetchall())
        coverage = con.execute(
            "SELECT extractor, n_entities, coverage FROM entity_coverage "
            "WHERE trajectory_id = 'rg::rg_extractors_differ' ORDER BY extractor"
        ).fetchall()
    assert rows["rg_extractors_differ"] == "retrieval"
    assert rows["rg_low_evidence"] == "discipline"
    assert coverage == [("regex", 1, 0.0), ("spacy", 0, None)]


def test_execution_rag_branches(db):
    labels = _labels(db, "failure_erag", "erag", "label, reasoning_subtype")
    assert labels == {
        "e_judge_error": ("judge_error", None),
        "e_gave_up": ("gave_up", None),
        "e_budget": ("gave_up", None),
        "e_reasoning": ("reasoning_error", "all_gold_retrieved"),
        "e_false_resolution": ("reasoning_error", "false_resolution"),
        "e_missing": ("missing_evidence", None),
        "e_no_gold": ("no_gold_evidence", None),
    }


def test_read_gate_priority_order(db):
    with open_warehouse(db) as con:
        rows = con.execute(
            "SELECT question_id, label, discipline_subtype, is_discipline, is_post_gold_read, no_read, "
            "snippet_only, low_evidence FROM failure_rg WHERE run_id = 'prio' AND extractor = 'regex' "
            "AND question_id IN ('p_no_read_and_snippet', 'p_snippet_and_post', 'p_low_evidence_and_post', "
            "'p_post_and_retrieval') ORDER BY question_id"
        ).fetchall()
    assert rows == [
        ("p_low_evidence_and_post", "discipline", "low_evidence_final", True, True, False, False, True),
        ("p_no_read_and_snippet", "discipline", "no_read_final", True, False, True, True, True),
        ("p_post_and_retrieval", "post_gold_read", None, False, True, False, False, False),
        ("p_snippet_and_post", "discipline", "snippet_only_final", True, True, False, True, False),
    ]


def test_execution_rag_priority_order(db):
    labels = _labels(db, "failure_erag", "prio", "label, reasoning_subtype")
    assert labels["p_judge_error_and_abstained"] == ("judge_error", None)
    assert labels["p_gave_up_and_all_gold"] == ("gave_up", None)
    assert labels["p_all_gold_and_false_resolution"] == ("reasoning_error", "all_gold_retrieved")
    assert "p_contain_only_correct" not in labels


def test_every_wrong_trajectory_gets_exactly_one_label_per_taxonomy(db):
    with open_warehouse(db) as con:
        wrong = con.execute("SELECT count(*) FROM trajectory_correctness WHERE correct = false").fetchone()[0]
        rg = con.execute(
            "SELECT extractor, count(*), count(DISTINCT trajectory_id) FROM failure_rg GROUP BY extractor ORDER BY 1"
        ).fetchall()
        erag = con.execute("SELECT count(*), count(DISTINCT trajectory_id) FROM failure_erag").fetchone()
    assert rg == [("regex", wrong, wrong), ("spacy", wrong, wrong)]
    assert erag == (wrong, wrong)


def test_cooccurrence_table(db):
    with open_warehouse(db) as con:
        row = con.execute(
            "SELECT n_wrong, discipline_only, post_only, discipline_and_post, neither FROM failure_rg_cooccurrence "
            "WHERE run_id = 'rg' AND extractor = 'regex'"
        ).fetchone()
    # discipline only: no_read, snippet_only, low_evidence, extractors_differ; post only: rg_post;
    # neither: retrieval, ambiguity; no_gold is in no cell (its post-gold test does not apply).
    assert row == (8, 4, 1, 0, 2)


def test_failure_plane_shares_of_all_trajectories(db):
    with open_warehouse(db) as con:
        rows = con.execute(
            "SELECT extractor, n_trajectories, p_disc, p_post FROM failure_plane WHERE run_id = 'rg' ORDER BY 1"
        ).fetchall()
    assert rows == [("regex", 9, 4 / 9, 1 / 9), ("spacy", 9, 3 / 9, 1 / 9)]


def test_hop_breakdown_evidence_recall(db):
    with open_warehouse(db) as con:
        row = con.execute(
            "SELECT n, n_failures, gave_up, reasoning_error, missing_evidence, no_gold_evidence, judge_error, "
            "hop_evidence_recall FROM hop_breakdown WHERE run_id = 'erag'"
        ).fetchone()
    # recall: 5 half-retrieved trajectories (0.5) and 2 fully retrieved (1.0); no_gold has none.
    assert row[:7] == (8, 7, 2, 2, 1, 1, 1)
    assert row[7] == pytest.approx((5 * 0.5 + 2 * 1.0) / 7)


def test_extractor_kappa_equals_sklearn_on_the_stored_labels(db):
    from sklearn.metrics import cohen_kappa_score

    from trajscope.analysis.queries import extractor_agreement

    with open_warehouse(db) as con:
        result = extractor_agreement(con)
        pairs = con.execute(
            "SELECT x.is_discipline, y.is_discipline FROM failure_rg x JOIN failure_rg y USING (trajectory_id) "
            "WHERE x.extractor = 'regex' AND y.extractor = 'spacy' AND x.run_id <> 'vrag'"
        ).fetchall()
    # The vanilla-RAG run has no discipline branch, so its trajectories would only inflate agreement.
    # erag's e_budget answer was forced at the budget: RG §3 still tests it for discipline.
    assert result.agreement.n == len(pairs) == 8 + 6 + 7 + 1
    expected = cohen_kappa_score([p[0] for p in pairs], [p[1] for p in pairs])
    assert result.agreement.kappa == pytest.approx(expected, abs=1e-9)
    assert result.agreement.kappa < 1.0  # rg_extractors_differ disagrees


def test_runs_without_a_read_action_have_no_discipline_branch(db):
    # No-read would label every wrong vanilla-RAG answer a discipline failure; there was no read
    # action to skip, and the gold placed in the prompt in full counts as gold seen.
    for extractor in ("regex", "spacy"):
        labels = _labels(db, "failure_rg", "vrag", "label, discipline_subtype, no_read, low_evidence, read_action",
                         f"extractor = '{extractor}'")
        assert labels == {
            "v_gold_in_prompt": ("post_gold_read", None, None, None, False),
            "v_gold_missing": ("retrieval", None, None, None, False),
        }
    with open_warehouse(db) as con:
        plane = con.execute(
            "SELECT extractor, n_trajectories, n_disc, p_disc, p_disc_any, p_post, read_action FROM failure_plane "
            "WHERE run_id = 'vrag' ORDER BY 1"
        ).fetchall()
        protocol = dict(con.execute("SELECT run_id, read_action FROM run_protocol").fetchall())
    assert plane == [("regex", 3, None, None, None, 1 / 3, False), ("spacy", 3, None, None, None, 1 / 3, False)]
    assert protocol == {"rg": True, "erag": True, "prio": True, "vrag": False}  # absent key: a read action
