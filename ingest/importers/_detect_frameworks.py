"""Sniff the agent-framework and tracing-product families from a file's first bytes (decoded text)."""
from __future__ import annotations

import re

_CASSETTE = re.compile(r"\s*-\s+request:")
_SMOLAGENTS_ROLES = re.compile(r'"role"\s*:\s*"tool-(?:call|response)"')


def detect_framework(text: str) -> str | None:
    """The importer name of a framework / tracing family the head of a file shows, or None."""
    # smolagents benchmark rows: the agent memory as messages with its own tool-call / tool-response roles.
    if '"intermediate_steps"' in text and (_SMOLAGENTS_ROLES.search(text) or '"agent_action_type"' in text):
        return "smolagents"
    # Langfuse observations name their parent by `parentObservationId` (app export, public API, flat lists).
    if "parentObservationId" in text and ('"observations"' in text or '"traceId"' in text):
        return "langfuse"
    # Claude Code transcripts: records chained by `parentUuid` within a `sessionId`.
    if '"parentUuid"' in text and '"sessionId"' in text:
        return "claude_code"
    # LangSmith runs: a `run_type` beside the run-tree fields.
    if '"run_type"' in text and any(k in text for k in ('"dotted_order"', '"child_runs"', '"parent_run_id"',
                                                         '"trace_id"')):
        return "langsmith"
    # W&B Weave responses: agent spans, classic calls (`op_name`), or a trace's chat view.
    if '"project_id"' in text and '"trace_id"' in text and ('"operation_name"' in text or '"op_name"' in text):
        return "weave"
    if '"trace_id"' in text and '"user_message"' in text and '"assistant_message"' in text:
        return "weave"
    # A saved DSPy program: predictors' `demos`, the bootstrapped ones marked `augmented` with their run id.
    if '"demos"' in text and ('"augmented"' in text or '"dspy_uuid"' in text):
        return "dspy"
    return None


def detect_cassette(text: str) -> str | None:
    """The importer of a recorded HTTP cassette (YAML request / response pairs) of a tracing service, or None."""
    if _CASSETTE.match(text) and any(k in text for k in ("trace.wandb.ai", "/agents/spans/", "/calls/stream_query")):
        return "weave"
    return None
