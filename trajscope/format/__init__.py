"""The canonical trajectory format v1: typed records, their codec and JSON Schema."""
from ._codec import (
    DecodedLine,
    RecordError,
    decode_trajectory,
    encode,
    iter_trajectories,
    json_schema,
    json_schema_text,
    looks_canonical,
    to_builtins,
    write_jsonl,
)
from ._records import (
    CAPABILITY_NAMES,
    SCHEMA_VERSION,
    Capabilities,
    Chunk,
    Judgment,
    ModelSettings,
    Question,
    RegisterEvent,
    RetrieverSettings,
    Run,
)
from ._steps import (
    SEARCH_KINDS,
    STEP_KINDS,
    STEP_TYPES,
    BudgetNudgeStep,
    Candidate,
    ContextInjectionStep,
    ErrorStep,
    FinalStep,
    ForcedAnswerStep,
    GateRejectionStep,
    KeywordSearchStep,
    Passage,
    ReadStep,
    RegisterUpdateStep,
    SearchStep,
    SemanticSearchStep,
    Step,
    StepBase,
    ToolStep,
    step_kind,
)
from ._trajectory import Trajectory, make_trajectory_id

__all__ = [
    "CAPABILITY_NAMES", "Capabilities", "SCHEMA_VERSION", "STEP_KINDS", "STEP_TYPES", "SEARCH_KINDS",
    "BudgetNudgeStep", "Candidate", "Chunk", "ContextInjectionStep", "DecodedLine", "ErrorStep",
    "FinalStep", "ForcedAnswerStep", "GateRejectionStep", "Judgment", "KeywordSearchStep",
    "ModelSettings", "Passage", "Question", "ReadStep", "RecordError", "RegisterEvent",
    "RegisterUpdateStep", "RetrieverSettings", "Run", "SearchStep", "SemanticSearchStep", "Step",
    "StepBase", "ToolStep", "Trajectory", "decode_trajectory", "encode", "iter_trajectories", "json_schema",
    "json_schema_text", "looks_canonical", "make_trajectory_id", "step_kind", "to_builtins", "write_jsonl",
]
