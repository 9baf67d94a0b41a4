"""Synthetic canonical trajectory logs for benchmarks: paired runs, ~10 steps per trajectory."""
from __future__ import annotations

import random
from pathlib import Path

import msgspec

CONDITIONS = ("baseline", "read_gate", "context_injection", "register")
_WORDS = ("river", "mill", "founded", "mayor", "bridge", "company", "born", "museum", "harbour",
          "railway", "novel", "author", "capital", "treaty", "island", "festival")


def _snippet(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(24))


def synthetic_question(qid: int, n_chunks: int, seed: int = 0) -> dict:
    """Question qid, the same in every run of one seed (the warehouse refuses conflicting golds)."""
    rng = random.Random(f"{seed}:{qid}")
    golds = [f"c{rng.randrange(n_chunks)}" for _ in range(rng.choice((2, 2, 3, 4)))]
    return {
        "question_id": f"q{qid:06d}", "text": f"Which {rng.choice(_WORDS)} is linked to q{qid}?",
        "dataset": "synthetic", "gold_answer": f"answer {qid}", "aliases": [f"ans {qid}"],
        "question_type": rng.choice(("bridge", "comparison")), "hop_count": len(golds),
        "gold_chunk_ids": golds, "gold_match": "given",
    }


def synthetic_trajectory(rng: random.Random, run: dict, qid: int, n_chunks: int, seed: int = 0) -> dict:
    """One plausible trajectory as a plain dict in the canonical format."""
    question = synthetic_question(qid, n_chunks, seed)
    golds = question["gold_chunk_ids"]
    steps = []
    n_actions = rng.randint(4, 14)
    for i in range(n_actions - 1):
        common = {"tokens_in": rng.randint(300, 3000), "tokens_out": rng.randint(10, 80),
                  "latency_ms": rng.uniform(100, 900), "cost_usd": rng.uniform(1e-5, 1e-3)}
        if i % 3 != 2:
            pool = golds + [f"c{rng.randrange(n_chunks)}" for _ in range(6)]
            rng.shuffle(pool)
            steps.append({"kind": "search", "query": f"{rng.choice(_WORDS)} {qid}", **common,
                          "candidates": [{"chunk_id": cid, "rank": r + 1, "score": 10.0 - r,
                                          "retriever": "rrf", "snippet": _snippet(rng)}
                                         for r, cid in enumerate(pool[:5])]})
        else:
            cid = rng.choice(golds) if rng.random() < 0.6 else f"c{rng.randrange(n_chunks)}"
            steps.append({"kind": "read", "chunk_ids": [cid], **common,
                          "passages": [{"chunk_id": cid, "text": _snippet(rng) * 3, "is_new": True}]})
    correct = rng.random() < (0.35 + 0.1 * CONDITIONS.index(run["condition"]))
    answer = question["gold_answer"] if correct else f"wrong {rng.randrange(100)}"
    steps.append({"kind": "final", "answer": answer, "tokens_in": 500, "tokens_out": 12})
    return {
        "schema_version": "1", "trajectory_id": f"{run['run_id']}::{question['question_id']}",
        "run": run, "question": question, "steps": steps, "final_answer": answer,
        "end_reason": "final", "judgments": [
            {"judge": "em", "score": float(correct)}, {"judge": "f1", "score": 1.0 if correct else rng.random() / 2},
            {"judge": "contain", "score": float(correct)}],
        "started_at": "2026-11-29T00:00:00Z", "finished_at": "2026-11-29T00:00:05Z",
    }


def write_synthetic_log(path: str | Path, n_trajectories: int, seed: int = 0,
                        n_conditions: int = len(CONDITIONS), run_prefix: str = "synthetic") -> int:
    """Write n_trajectories split over paired runs `<run_prefix>-<condition>` (same question ids per condition);
    returns steps."""
    rng = random.Random(seed)
    encoder = msgspec.json.Encoder()
    per_run = n_trajectories // n_conditions
    n_steps = 0
    with open(path, "wb") as out:
        for condition in CONDITIONS[:n_conditions]:
            run = {"run_id": f"{run_prefix}-{condition}", "source": "engine", "dataset": "synthetic",
                   "controller": "read_gate" if condition != "register" else "register",
                   "condition": condition, "model": "synthetic-model", "seed": seed}
            for qid in range(per_run):
                record = synthetic_trajectory(rng, run, qid, n_chunks=50_000, seed=seed)
                n_steps += len(record["steps"])
                out.write(encoder.encode(record) + b"\n")
    return n_steps
