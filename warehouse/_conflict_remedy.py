"""How a refused gold conflict names its question and what it tells the user to do, worded once for the warehouse
and the lake."""
from __future__ import annotations


def conflicting_question(question_id: str, dataset: str | None) -> str:
    """How a refused gold conflict names its question: `question '12' (dataset 'hotpot')`, or `(no dataset)`."""
    return f"question {question_id!r} ({f'dataset {dataset!r}' if dataset else 'no dataset'})"


def gold_conflict_remedy(dataset: str | None) -> str:
    """The sentence that ends a GoldConflict message; for questions that name no dataset it offers --dataset."""
    # Unnamed questions of two benchmarks that both number 0, 1, 2, ... meet here: naming the benchmark parts them.
    way_out = ("fix the gold, or pass --per-run-questions" if dataset else
               "these questions name no dataset: pass --dataset NAME to key them by their benchmark, fix the gold, "
               "or pass --per-run-questions")
    return f"An import never changes another run's question: {way_out} to keep each run's questions apart"
