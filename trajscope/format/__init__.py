"""The canonical formats (trajectory v1, audit record v1): typed records, their codec and JSON Schema,
and the shared answer-scoring vocabulary (normalisation, EM, token F1, Contain-Acc).

The bottom layer: it imports nothing of trajscope's other packages (docs/architecture.md).
"""
from ._answers import (
    CONTROLLER_MESSAGE_KINDS,
    ECHO_MIN_SHARE,
    F1_RULES,
    answer_invalidity,
    comparison_options,
    contain_match,
    controller_messages,
    echoes_controller,
    exact_match,
    has_gold_answer,
    names_every_option,
    normalize_answer,
    score_answer,
    token_f1,
)
from ._audit_codec import (
    DEFAULT_SENTINEL,
    DecodedAuditLine,
    decode_audit_record,
    encode_audit_record,
    iter_audit_records,
    read_audit_records,
    write_audit_record,
)
from ._audit_records import (
    AUDIT_SCHEMA_VERSION,
    INTERVENTION_NAMES,
    RAW_BASELINE,
    SENTINEL_INTERVENTIONS,
    AuditRecord,
    Intervention,
    ModelCall,
    ReaderOutput,
    make_record_id,
)
from ._codec import (
    DecodedLine,
    RecordError,
    decode_strict,
    decode_trajectory,
    encode,
    field_of,
    iter_trajectories,
    json_schema,
    json_schema_text,
    looks_canonical,
    to_builtins,
    write_jsonl,
)
from ._definitions import (
    AGENT_ACTION_KINDS,
    COMPARE_METRICS,
    CORRECT_AT,
    DEFAULT_COMPARE_METRIC,
    ENTITY_EXTRACTORS,
    FORCED_END_REASONS,
    GATE_EXTRACTOR,
    GAVE_UP_END_REASONS,
    LOW_EVIDENCE_THRESHOLD,
    READ_KIND,
)
from ._export import EXPORT_KEY, EXPORT_VERSION, Exported, decode_exported, encode_exported
from ._fork_interventions import FORK_INTERVENTIONS, ForkInterventionKind
from ._lines import MAX_LINE_BYTES, bounded_lines, line_too_long
from ._log import AppendOnlyLog, LogFileCorrupt, RecoveredLog, recover_log_file
from ._nesting import NESTING_LIMIT, check_nesting, exceeds_nesting_limit, loads_bounded, nesting_of, too_deep
from ._records import (
    CAPABILITY_NAMES,
    SCHEMA_VERSION,
    Capabilities,
    Chunk,
    GoldHop,
    HumanLabel,
    Judgment,
    LabelledTrajectory,
    ModelSettings,
    Question,
    Record,
    RegisterEvent,
    RetrieverSettings,
    Run,
)
from ._redaction import (
    KEY_MARKERS,
    MIN_FRAGMENT,
    REDACTED,
    configured_secrets,
    redact,
    redact_bytes,
    redact_json_line,
    redact_value,
    redaction_prefilter,
    register_secret,
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
from ._terminal import FORMULA_STARTS, csv_cell_text, terminal_text
from ._trajectory import ForkOrigin, Trajectory, make_trajectory_id

__all__ = [
    "FORCED_END_REASONS", "GAVE_UP_END_REASONS",
    "CONTROLLER_MESSAGE_KINDS", "ECHO_MIN_SHARE", "answer_invalidity", "comparison_options", "controller_messages",
    "echoes_controller", "names_every_option",
    "EXPORT_KEY", "EXPORT_VERSION", "Exported", "decode_exported", "encode_exported",
    "MAX_LINE_BYTES", "bounded_lines", "line_too_long", "FORMULA_STARTS", "csv_cell_text", "terminal_text",
    "AppendOnlyLog", "LogFileCorrupt", "RecoveredLog", "has_gold_answer", "recover_log_file",
    "AGENT_ACTION_KINDS", "F1_RULES", "COMPARE_METRICS", "CORRECT_AT", "DEFAULT_COMPARE_METRIC", "ENTITY_EXTRACTORS",
    "GATE_EXTRACTOR", "LOW_EVIDENCE_THRESHOLD", "READ_KIND",
    "KEY_MARKERS", "MIN_FRAGMENT", "REDACTED", "configured_secrets", "redact", "redact_bytes", "redact_json_line",
    "redact_value",
    "redaction_prefilter", "register_secret",
    "AUDIT_SCHEMA_VERSION", "CAPABILITY_NAMES", "DEFAULT_SENTINEL", "INTERVENTION_NAMES", "RAW_BASELINE",
    "SCHEMA_VERSION", "SEARCH_KINDS", "SENTINEL_INTERVENTIONS", "STEP_KINDS", "STEP_TYPES", "AuditRecord",
    "BudgetNudgeStep", "Candidate", "Capabilities", "Chunk", "contain_match", "ContextInjectionStep",
    "decode_audit_record", "decode_strict", "decode_trajectory", "DecodedAuditLine", "DecodedLine", "encode",
    "encode_audit_record", "ErrorStep", "exact_match", "field_of", "FinalStep", "ForcedAnswerStep",
    "GateRejectionStep", "HumanLabel", "Intervention", "LabelledTrajectory", "iter_audit_records",
    "iter_trajectories", "json_schema",
    "json_schema_text", "Judgment", "KeywordSearchStep", "looks_canonical", "make_record_id",
    "NESTING_LIMIT", "check_nesting", "exceeds_nesting_limit", "loads_bounded", "nesting_of", "too_deep",
    "FORK_INTERVENTIONS", "ForkInterventionKind",
    "ForkOrigin", "make_trajectory_id", "ModelCall", "ModelSettings", "normalize_answer",
    "Passage", "GoldHop", "Question",
    "read_audit_records", "ReaderOutput", "ReadStep", "Record", "RecordError", "RegisterEvent",
    "RegisterUpdateStep", "RetrieverSettings", "Run", "score_answer", "SearchStep", "SemanticSearchStep",
    "Step", "step_kind", "StepBase", "to_builtins", "token_f1", "ToolStep", "Trajectory",
    "write_audit_record", "write_jsonl",
]
