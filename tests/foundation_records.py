"""Hand-built canonical trajectories whose view values are worked out by hand in the tests."""
from __future__ import annotations

from trajscope.format import (
    Candidate,
    ContextInjectionStep,
    FinalStep,
    ForcedAnswerStep,
    Judgment,
    ModelSettings,
    Passage,
    Question,
    ReadStep,
    RegisterEvent,
    RegisterUpdateStep,
    RetrieverSettings,
    Run,
    SearchStep,
    Trajectory,
    make_trajectory_id,
)

ACC = dict(tokens_in=100, tokens_out=10, cost_usd=0.001, latency_ms=50.0)


def _cand(cid: str, rank: int) -> Candidate:
    return Candidate(chunk_id=cid, rank=rank, score=1.0 / rank, retriever="rrf", snippet=f"snippet of {cid}")


def run_a() -> Run:
    return Run(run_id="run_a", dataset="fx", controller="read_gate", condition="baseline", model="m",
               model_settings=ModelSettings(temperature=0.0, max_tokens=256, protocol="json"),
               retriever=RetrieverSettings(kind="hybrid", top_k=5, rrf_k=60), seed=1,
               config={"turn_cap": 10})


def run_b() -> Run:
    return Run(run_id="run_b", dataset="fx", controller="read_gate", condition="context_injection", model="m")


def questions() -> dict[str, Question]:
    return {
        "q1": Question(question_id="q1", text="Where was Ann born?", dataset="fx", gold_answer="Paris",
                       aliases=["City of Light"], question_type="bridge", hop_count=2, gold_chunk_ids=["g1", "g2"]),
        "q2": Question(question_id="q2", text="Where did Bo work?", dataset="fx", gold_answer="Lyon",
                       question_type="bridge", hop_count=1, gold_chunk_ids=["g3"]),
        "q3": Question(question_id="q3", text="Which river?", dataset="fx", gold_answer="Rhone",
                       question_type="comparison", hop_count=1, gold_chunk_ids=["g4"]),
    }


def judgments(em: float, f1: float, contain: float, llm: float | None = None) -> list[Judgment]:
    out = [Judgment(judge="em", score=em), Judgment(judge="f1", score=f1), Judgment(judge="contain", score=contain)]
    if llm is not None:
        out.append(Judgment(judge="llm", score=llm, judge_model="judge-m"))
    return out


def fixture_trajectories() -> list[Trajectory]:
    """Run A: q1 reads one of two golds and is right; q2 answers from snippets; q3 runs out of budget
    (its responses served from the cache)."""
    qs, a, b = questions(), run_a(), run_b()
    t1 = Trajectory(
        trajectory_id=make_trajectory_id("run_a", "q1"), run=a, question=qs["q1"],
        steps=[
            SearchStep(query="Ann born", candidates=[_cand("g1", 1), _cand("x1", 2)], **ACC),
            ReadStep(chunk_ids=["g1"], passages=[Passage(chunk_id="g1", text="Ann was born in Paris.")],
                     tool_name="read", args={"chunk_id": "g1"}, **ACC),
            SearchStep(query="Paris", candidates=[_cand("g2", 1)], **ACC),
            FinalStep(answer="Paris", **ACC),
        ],
        register_events=[RegisterEvent(item_id="r1", step_index=1, sub_question="Ann's birthplace?",
                                       from_status="open", to_status="resolved", supporting_chunk_ids=["g1"])],
        final_answer="Paris", end_reason="final", judgments=judgments(1, 1, 1, 1),
        started_at="2026-11-29T10:00:00Z", finished_at="2026-11-29T10:00:03Z", metadata={"note": "ok"},
    )
    t2 = Trajectory(
        trajectory_id=make_trajectory_id("run_a", "q2"), run=a, question=qs["q2"],
        steps=[SearchStep(query="Bo work", candidates=[_cand("x2", 1), _cand("g3", 2)], cached=False, **ACC),
               FinalStep(answer="Lyon city", cached=False, **ACC)],
        final_answer="Lyon city", end_reason="final", judgments=judgments(0, 0.5, 1),
    )
    t3 = Trajectory(
        trajectory_id=make_trajectory_id("run_a", "q3"), run=a, question=qs["q3"],
        steps=[
            # A re-run: every model response came from the response cache.
            SearchStep(query="river", candidates=[_cand("x3", 1)], cached=True, **ACC),
            ReadStep(chunk_ids=["x3"], passages=[Passage(chunk_id="x3", text="Not it.")], cached=True, **ACC),
            ReadStep(chunk_ids=["x3"], passages=[Passage(chunk_id="x3", text="Not it.", is_new=False)], cached=True,
                     **ACC),
            ForcedAnswerStep(answer="Seine", cached=True, **ACC),
        ],
        final_answer="Seine", end_reason="budget", judgments=judgments(0, 0, 0, 0),
    )
    t4 = Trajectory(
        trajectory_id=make_trajectory_id("run_b", "q1"), run=b, question=qs["q1"],
        steps=[SearchStep(query="Ann", candidates=[_cand("g1", 1)], **ACC),
               ContextInjectionStep(passages=[Passage(chunk_id="g1", text="Ann was born in Paris.")]),
               RegisterUpdateStep(phase="init"),
               FinalStep(answer="Paris", **ACC)],
        final_answer="Paris", end_reason="final", judgments=judgments(1, 1, 1),
    )
    return [t1, t2, t3, t4]
