"""Simple baselines: a direct answer without retrieval, and vanilla top-k RAG."""
from __future__ import annotations

from typing import Any

from trajscope.engine.prompts import render_prompt
from trajscope.format import Candidate, ContextInjectionStep, FinalStep, Passage, Question, SearchStep

from ._base import ControllerBase, EpisodeResult, decoding_overrides, resolve_protocol
from ._context import EpisodeContext
from ._recorder import TrajectoryRecorder


async def _answer(ctx: EpisodeContext, params: dict[str, Any], recorder: TrajectoryRecorder,
                  prompt: str) -> EpisodeResult:
    protocol = resolve_protocol(ctx, params)
    suffix, request = protocol.answer_request()
    prompt = f"{prompt}\n{suffix}" if suffix else prompt
    completion = await ctx.model.complete([{"role": "user", "content": prompt}], **request,
                                          **decoding_overrides(params))
    answer, problem = protocol.parse_answer(completion)
    recorder.add_answer(FinalStep(tool_name="final", args={"answer": answer}, answer=answer), completion, problem)
    recorder.metadata["protocol"] = protocol.name
    return answer, "final", None


class DirectAnswerController(ControllerBase):
    """The model answers from its parameters alone: one call, no retrieval."""

    name = "direct"
    description = "direct inference: one model call, no retrieval"
    default_condition = "baseline"
    conditions = {"baseline": {}}
    defaults = {"temperature": 0.0, "protocol": None}
    read_action = False
    searches = False

    async def episode(self, question: Question, ctx: EpisodeContext, recorder: TrajectoryRecorder,
                      params: dict[str, Any]) -> EpisodeResult:
        return await _answer(ctx, params, recorder, render_prompt("direct_answer", question=question.text))


class VanillaRAGController(ControllerBase):
    """One retrieval of the top k passages placed in the prompt, then one answer."""

    name = "vanilla_rag"
    description = "vanilla top-k RAG: retrieve k passages once, answer from them (k = 3, 5, 10)"
    default_condition = "k5"
    conditions = {"k3": {"k": 3}, "k5": {"k": 5}, "k10": {"k": 10}}
    defaults = {"k": 5, "temperature": 0.0, "protocol": None, "max_passage_chars": None}
    read_action = False

    async def episode(self, question: Question, ctx: EpisodeContext, recorder: TrajectoryRecorder,
                      params: dict[str, Any]) -> EpisodeResult:
        k = int(params["k"])
        hits = ctx.retriever.search(question.text, k)
        candidates = [Candidate(chunk_id=h.chunk_id, rank=h.rank, score=h.score, retriever=h.retriever,
                                snippet=h.snippet) for h in hits]
        recorder.add(SearchStep(tool_name="retrieve", args={"query": question.text, "k": k},
                                query=question.text, candidates=candidates))
        limit = params["max_passage_chars"]
        passages, lines = [], []
        for hit in hits:
            chunk = ctx.corpus.get(hit.chunk_id)
            if chunk is None:
                continue
            text = chunk.text if limit is None or len(chunk.text) <= limit else chunk.text[:limit] + "…"
            passages.append(Passage(chunk_id=chunk.chunk_id, text=chunk.text))
            lines.append(f"[{chunk.chunk_id}]" + (f" {chunk.title}:" if chunk.title else "") + f" {text}")
        # The passages enter the prompt without a read action: a context injection, not a read.
        recorder.add(ContextInjectionStep(passages=passages, observation="\n".join(lines)))
        prompt = render_prompt("vanilla_rag", question=question.text, passages="\n".join(lines) or "(none)")
        return await _answer(ctx, params, recorder, prompt)
