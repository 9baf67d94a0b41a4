"""A hand-built 2-hop question (2Wiki-style, known hop order) with one wrong trajectory per decisive-error rule.

Each trajectory's expected (rule, step_index, hop) is written beside it, worked out by hand from the
rules in docs/definitions.md, so the test does not re-run the view's SQL to get its numbers.
"""
from __future__ import annotations

from trajscope.analysis.queries import FUNNEL_STAGES
from trajscope.format import (
    Candidate,
    Capabilities,
    Chunk,
    ErrorStep,
    FinalStep,
    ForcedAnswerStep,
    GoldHop,
    Judgment,
    Passage,
    Question,
    ReadStep,
    RegisterEvent,
    RetrieverSettings,
    Run,
    SearchStep,
    Trajectory,
)

DATASET = "wiki"
H1, H2, DECOY, OTHER, FILLER = "wiki:1", "wiki:2", "wiki:3", "wiki:4", "wiki:5"

CHUNKS = [
    Chunk(chunk_id=H1, dataset=DATASET, title="Lothair II",
          text="Lothair II was a king of Lotharingia. His mother was Ermengarde of Tours."),
    Chunk(chunk_id=H2, dataset=DATASET, title="Ermengarde of Tours",
          text="Ermengarde of Tours was queen of the Franks. She died on 20 March 851."),
    # A near-namesake of hop 1 (one letter away), with an answer of its own.
    Chunk(chunk_id=DECOY, dataset=DATASET, title="Lothair III",
          text="Lothair III was Holy Roman Emperor. His mother was Hedwig of Formbach, who died in 1100."),
    Chunk(chunk_id=OTHER, dataset=DATASET, title="Xanten", text="Xanten is a town on the Rhine."),
    Chunk(chunk_id=FILLER, dataset=DATASET, title="Prüm Abbey", text="Prüm Abbey is a former abbey."),
]


def question() -> Question:
    """Hop 1 = Lothair II (yields Ermengarde of Tours), hop 2 = Ermengarde of Tours (yields the date)."""
    return Question(
        question_id="q-lothair", text="When did Lothair II's mother die?", dataset=DATASET,
        gold_answer="20 March 851", question_type="compositional", hop_count=2,
        gold_chunk_ids=[H1, H2], gold_match="title", gold_order="evidence",
        gold_hops=[GoldHop(chunk_id=H1, entity="Lothair II", answers=["Ermengarde of Tours"]),
                   GoldHop(chunk_id=H2, entity="Ermengarde of Tours", answers=["20 March 851"])])


def _run(run_id: str, read_action: bool = True) -> Run:
    return Run(run_id=run_id, dataset=DATASET, controller="react", model="m",
               retriever=RetrieverSettings(kind="bm25", top_k=3),
               capabilities=Capabilities(search_candidates=True, snippets=True, read_action=read_action,
                                         gold_answers=True, gold_passages=True, judgments=True))


def _search(query: str, *chunk_ids: str) -> SearchStep:
    return SearchStep(query=query, candidates=[
        Candidate(chunk_id=c, rank=i, score=1.0 / i, snippet=f"snippet {c}") for i, c in enumerate(chunk_ids, 1)])


def _read(chunk_id: str) -> ReadStep:
    return ReadStep(chunk_ids=[chunk_id], passages=[Passage(chunk_id=chunk_id, text=f"text of {chunk_id}")])


def _traj(name: str, steps: list, final: str | None, *, run: Run | None = None, end: str = "final",
          q: Question | None = None, contain: float = 0.0, register: list | None = None) -> Trajectory:
    run = run or _run("funnel")
    q = q or question()
    return Trajectory(trajectory_id=f"{run.run_id}::{name}", run=run, question=q, steps=steps,
                      final_answer=final, end_reason=end, judgments=[Judgment(judge="contain", score=contain)],
                      register_events=register or [])


WRONG = "1 January 900"

# name -> (trajectory, expected rule, expected step_index, expected hop)
def cases() -> dict[str, tuple[Trajectory, str | None, int | None, int | None]]:
    """Each wrong trajectory with the (rule, step, hop) the documented rules give it."""
    read_both = [_search("Lothair II", H1), _read(H1), _search("Ermengarde of Tours", H2), _read(H2)]
    no_read_run = _run("funnel_noread", read_action=False)
    no_gold = Question(question_id="q-nogold", text="Who?", dataset=DATASET, gold_answer="Ann")
    return {
        # Hop 1 read, hop 2 never asked for: decided at the final (step 2).
        "never_queried": (_traj("never_queried", [_search("Lothair II", H1), _read(H1), FinalStep(answer=WRONG)],
                                WRONG), "never_queried", 2, 2),
        # Hop 2 asked for by its entity at step 2; the search missed it.
        "never_retrieved": (_traj("never_retrieved", [_search("Lothair II", H1), _read(H1),
                                                      _search("Ermengarde of Tours death", OTHER),
                                                      FinalStep(answer=WRONG)], WRONG), "never_retrieved", 2, 2),
        # Hop 1 listed at rank 4 (top_k 3) at step 0: retrieved but never shown.
        "ranked_out": (_traj("ranked_out", [_search("king Lothair II mother", DECOY, OTHER, FILLER, H1),
                                            FinalStep(answer=WRONG)], WRONG), "ranked_out", 0, 1),
        # Hop 2 shown at step 2 (rank 1), never opened.
        "not_read": (_traj("not_read", [_search("Lothair II", H1), _read(H1), _search("Ermengarde of Tours", H2),
                                        FinalStep(answer=WRONG)], WRONG), "not_read", 2, 2),
        # Both hops read; the final names hop 1's answer (the bridge): decided at the final (step 4).
        "bridge": (_traj("bridge", [*read_both, FinalStep(answer="Ermengarde of Tours")], "Ermengarde of Tours"),
                   "other_passage_entity", 4, 1),
        # Both hops read, and the near-namesake of hop 1; the final is the decoy's date.
        "decoy": (_traj("decoy", [*read_both, _search("Lothair III", DECOY), _read(DECOY),
                                  FinalStep(answer="Hedwig of Formbach")], "Hedwig of Formbach"),
                  "other_passage_entity", 6, 1),
        # Both hops read, hop 1 resolved in a register at step 1, and still a wrong date.
        "reasoning": (_traj("reasoning", [*read_both, FinalStep(answer=WRONG)], WRONG,
                            register=[RegisterEvent(item_id="r1", step_index=1, sub_question="mother?",
                                                    from_status="open", to_status="resolved",
                                                    supporting_chunk_ids=[H1])]), "reasoning", 4, None),
        # Both hops read; the budget ran out and a forced answer followed (step 4).
        "gave_up": (_traj("gave_up", [*read_both, ForcedAnswerStep(answer="unknown")], "unknown",
                          end="forced_answer"), "gave_up", 4, None),
        # The run crashed at step 1.
        "run_error": (_traj("run_error", [_search("Lothair II", H1), ErrorStep(error_type="timeout")], None,
                            end="error"), "run_error", 1, None),
        # No read action in this log: hop 1 shown, and whether it was read cannot be told.
        "missing_read": (_traj("missing_read", [_search("Lothair II", H1, H2), FinalStep(answer=WRONG)], WRONG,
                               run=no_read_run), None, None, 1),
        # No gold passages: no rule applies.
        "no_gold": (_traj("no_gold", [_search("Ann", OTHER), FinalStep(answer="Bo")], "Bo", q=no_gold),
                    None, None, None),
    }


def correct_trajectory() -> Trajectory:
    """Right answer: not a row of first_decisive_error."""
    steps = [_search("Lothair II", H1), _read(H1), _search("Ermengarde of Tours", H2), _read(H2),
             FinalStep(answer="20 March 851")]
    return _traj("correct", steps, "20 March 851", contain=1.0)


def reason_mismatches(con) -> list[tuple]:
    """evidence_funnel's (trajectory, passage, stage) where the stage's own reason is NULL though the stage is NULL,
    or set though the stage applies: each must be non-NULL exactly when its stage is NULL."""
    return con.execute(" UNION ALL ".join(
        f"SELECT trajectory_id, chunk_id, '{s}' FROM evidence_funnel WHERE ({s} IS NULL) <> ({s}_reason IS NOT NULL)"
        for s in FUNNEL_STAGES)).fetchall()
