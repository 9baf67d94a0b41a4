"""What a refused gold conflict tells the user to do, worded once for the warehouse and the lake."""
from __future__ import annotations


def gold_conflict_remedy(dataset: str | None) -> str:
    """The sentence that ends a GoldConflict message; for questions that name no dataset it offers --dataset."""
    # Unnamed questions of two benchmarks that both number 0, 1, 2, ... meet here: naming the benchmark parts them.
    way_out = ("fix the gold, or pass --per-run-questions" if dataset else
               "these questions name no dataset: pass --dataset NAME to key them by their benchmark, fix the gold, "
               "or pass --per-run-questions")
    return f"An import never changes another run's question: {way_out} to keep each run's questions apart"
