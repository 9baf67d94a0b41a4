"""A-RAG `predictions.jsonl`: a built-in mapping over its records (trajectory of tool calls, costs)."""
from __future__ import annotations

from collections.abc import Iterator

from trajscope.format import Trajectory

from ._context import ImportContext
from ._mapped import import_mapped
from ._mapping import Mapping

ARAG_MAPPING = Mapping(
    question_id=("qid", "question_id", "id"),
    question=("question", "query"),
    gold=("gold_answer", "golden_answers.0", "gold", "ground_truth"),
    prediction=("pred_answer", "prediction", "predicted_answer", "answer"),
    steps=("trajectory",),
    step={
        "action": ("tool_name",),
        "arguments": ("arguments",),
        "observation": ("tool_result",),
        "thought": ("reasoning", "thought", "content"),
        "tokens_in": ("input_tokens", "prompt_tokens"),
        "tokens_out": ("output_tokens", "completion_tokens"),
        "cost_usd": ("cost",),
        "latency_ms": ("latency_ms",),
    },
    judgments={"em": ("em",), "f1": ("f1",), "contain": ("contain_accuracy",), "llm": ("llm_accuracy",)},
    totals={"cost_usd": ("total_cost",)},
    run={"model": ("model",)},
    metadata=("chunks_read_ids", "loops", "total_retrieved_tokens"),
    end_reason=("termination_reason",),
)


def import_arag(ctx: ImportContext) -> Iterator[Trajectory]:
    """Stream an A-RAG predictions file."""
    return import_mapped(ctx, ARAG_MAPPING)
