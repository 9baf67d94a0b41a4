"""The A-RAG-style agent: keyword_search / semantic_search / read_chunk for at most 15 loops."""
from __future__ import annotations

from typing import Any

from trajscope.engine.prompts import render_prompt
from trajscope.format import Question

from ._actions import ActionSpace
from ._base import (
    ControllerBase,
    EpisodeResult,
    decoding_overrides,
    history_limit,
    open_environment,
    output_limit,
    resolve_protocol,
)
from ._context import EpisodeContext
from ._recorder import TrajectoryRecorder
from ._tool_loop import LoopSettings, ToolLoop


class ARAGController(ControllerBase):
    """ExecutionRAG's matched baseline: the same tools and budget, no requirement register."""

    name = "arag"
    description = ("A-RAG baseline of the ExecutionRAG paper: keyword_search/semantic_search/read_chunk, "
                   "15 loops, a forced answer at the budget")
    default_condition = "baseline"
    conditions = {"baseline": {}}
    defaults = {
        "max_loops": 15,
        "context_token_budget": 128_000,
        # The paper's agent loop uses the model's default sampling; None leaves the run's setting.
        "temperature": None,
        # ExecutionRAG App. B: at most 16,384 output tokens per call, as for ExecutionRAG (matched).
        "max_output_tokens": 16_384,
        "top_k": 5,
        "max_invalid_actions": 3,
        "max_history_tokens": None,
        "protocol": None,
    }

    async def episode(self, question: Question, ctx: EpisodeContext, recorder: TrajectoryRecorder,
                      params: dict[str, Any]) -> EpisodeResult:
        # The context budget is the loop's (summed prompt tokens, as ExecutionRAG's), not the environment's.
        env = open_environment(ctx, toolset="arag", max_turns=params["max_loops"], top_k=params["top_k"],
                               context_token_budget=None)
        # A-RAG ends when the model replies without a tool call: that reply is its answer.
        protocol = resolve_protocol(ctx, params, text_is_final=True)
        space = ActionSpace(env.tool_schemas("tools"))
        system = render_prompt("arag_system", tools=space.describe(), max_turns=params["max_loops"])
        if protocol.system_suffix():
            system += "\n" + protocol.system_suffix()
        recorder.metadata["protocol"] = protocol.name
        loop = ToolLoop(
            model=ctx.model, environment=env, protocol=protocol, space=space, recorder=recorder,
            question=question.text, corpus=ctx.corpus,
            settings=LoopSettings(
                max_turns=params["max_loops"], max_invalid_actions=params["max_invalid_actions"],
                forced_answer_prompt="force_final_answer", context_token_budget=params["context_token_budget"],
                decoding={**decoding_overrides(params), **output_limit(ctx, params)},
                max_history_tokens=history_limit(ctx, params),
            ),
        )
        return await loop.run([
            {"role": "system", "content": system},
            {"role": "user", "content": render_prompt("question", question=question.text)},
        ])
