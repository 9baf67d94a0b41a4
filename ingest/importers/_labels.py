"""Human label files (`trajscope ingest --labels FILE|DIR`): each record names a trajectory and the steps
a person judged. Four families, told apart per record (docs/importers.md, "Human labels"):

- TRAIL annotations: `{trace_id?, errors: [{location: span id, category, impact, description, evidence}]}`
  (the trace id defaults to the file name); categories normalised to TRAIL's 21 labels;
- Who&When records: `{question_ID, mistake_step, mistake_agent, mistake_reason}` (history index);
- per-step maps (process-reward style): `{id, step_labels: {"message:5": -1, ...} | [1, 0, -1]}`, +1 / 0 / -1
  per step; the first -1 is the first error;
- one label per record: `{trajectory_id | question_id | trace_id | id, source_ref | step_index, label?, category?,
  impact?, agent?, annotator?, reason?}`.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajscope.format import HumanLabel, LabelledTrajectory, RecordError

from ._detect import directory_inputs
from ._fields import Where, need_list, need_object, opt_str
from ._json_stream import iter_whole_documents

# TRAIL's taxonomy (arXiv 2505.08638): its 21 leaf labels, as the annotation files mostly spell them.
TRAIL_CATEGORIES = (
    "Language-only", "Tool-related", "Poor Information Retrieval", "Tool Output Misinterpretation",
    "Incorrect Problem Identification", "Tool Selection Errors", "Formatting Errors", "Instruction Non-compliance",
    "Tool Definition Issues", "Environment Setup Errors", "Rate Limiting", "Authentication Errors", "Service Errors",
    "Resource Not Found", "Resource Exhaustion", "Timeout Issues", "Context Handling Failures", "Resource Abuse",
    "Incorrect Memory Usage", "Goal Deviation", "Task Orchestration",
)
_KEY_FIELDS = ("trajectory_id", "trace_id", "question_id", "question_ID", "id")
_MAP_FIELDS = ("step_labels", "step_ratings", "ratings")
_RATINGS = {1: "correct", 0: "neutral", -1: "error"}
_LABELS = ("error", "correct", "neutral")
# Source positions importers give steps: history / message / trajectory index, span id, notebook cell.
_REF = re.compile(r"^(history|message|span|trajectory|cell):.+$")
_REF_FORMS = "message:N, history:N, span:ID, trajectory:N, cell:I/output:J/line:K"


def _category_key(text: str) -> str:
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    key = re.sub(r"(errors|error)$", "", key)
    return key[:-1] if key.endswith("s") else key


_CATEGORY_KEYS = {_category_key(c): c for c in TRAIL_CATEGORIES}


def normalise_trail_category(raw: str) -> str | None:
    """TRAIL's label for a category as an annotator spelt it (case, hyphens, plural, a typo); None if unknown."""
    key = _category_key(raw)
    if key in _CATEGORY_KEYS:
        return _CATEGORY_KEYS[key]
    close = difflib.get_close_matches(key, list(_CATEGORY_KEYS), n=1, cutoff=0.85)
    return _CATEGORY_KEYS[close[0]] if close else None


def _key(record: dict[str, Any], where: Where, default: str | None) -> str:
    for name in _KEY_FIELDS:
        value = record.get(name)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    if default is not None:
        return default
    raise where.error(f"no trajectory named (looked for {', '.join(_KEY_FIELDS)})", _KEY_FIELDS[0])


def _ref(value: Any, where: Where, field: str) -> tuple[str | None, int | None]:
    """(source_ref, step_index) of a map key or field: `message:5` / `span:ab` / `history:2`, or a step index."""
    if isinstance(value, int) and not isinstance(value, bool):
        return None, value
    if isinstance(value, str) and value.strip().isdigit():
        return None, int(value)
    if isinstance(value, str) and _REF.match(value.strip()):
        return value.strip(), None
    raise where.error(f"expected a step index or a source reference ({_REF_FORMS}), got {value!r}",
                      field)


def _trail(record: dict[str, Any], where: Where, default_key: str, notes: list[str]) -> LabelledTrajectory:
    labels = []
    for i, error in enumerate(need_list(record.get("errors"), where.at("errors"))):
        at = where.at("errors").at(i)
        error = need_object(error, at)
        location = opt_str(error, "location", at)
        if not location:
            raise at.error("missing span id", "location")
        raw = opt_str(error, "category", at)
        category = normalise_trail_category(raw) if raw else None
        if raw and category is None:
            notes.append(f"{where.path.name}: category {raw!r} is none of TRAIL's 21 labels; kept as given only")
        labels.append(HumanLabel(label="error", source_ref=f"span:{location}", category=category, category_raw=raw,
                                 impact=opt_str(error, "impact", at), reason=opt_str(error, "description", at),
                                 evidence=opt_str(error, "evidence", at), source="trail"))
    return LabelledTrajectory(key=_key(record, where, default_key), labels=labels,
                              origin=f"{where.path}:{where.line}")


def _who_and_when(record: dict[str, Any], where: Where) -> LabelledTrajectory:
    step = record.get("mistake_step")
    if isinstance(step, bool) or not str(step).strip().isdigit():
        raise where.error(f"expected a history index, got {step!r}", "mistake_step")
    label = HumanLabel(label="error", source_ref=f"history:{int(str(step).strip())}",
                       agent=opt_str(record, "mistake_agent", where), reason=opt_str(record, "mistake_reason", where),
                       source="who_and_when")
    return LabelledTrajectory(key=_key(record, where, None), labels=[label], origin=f"{where.path}:{where.line}")


def _rating(value: Any, where: Where) -> str:
    number = value
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        number = int(value.strip())
    if isinstance(number, float) and number.is_integer():
        number = int(number)
    if isinstance(number, bool) or number not in _RATINGS:
        raise where.error(f"expected a judgment +1, 0 or -1, got {value!r}")
    return _RATINGS[number]


def _step_map(record: dict[str, Any], field: str, where: Where, source: str) -> LabelledTrajectory:
    value = record[field]
    at = where.at(field)
    if isinstance(value, list):
        items = [(i, v) for i, v in enumerate(value)]
    elif isinstance(value, dict):
        items = list(value.items())
    else:
        raise at.error("expected an object of step -> judgment, or a list of judgments in step order")
    labels = []
    for ref, rating in items:
        source_ref, index = _ref(ref, at, str(ref))
        labels.append(HumanLabel(label=_rating(rating, at.at(str(ref))), source_ref=source_ref,  # type: ignore[arg-type]
                                 step_index=index, annotator=opt_str(record, "annotator", where), source=source))
    return LabelledTrajectory(key=_key(record, where, None), run_id=opt_str(record, "run_id", where), labels=labels,
                              origin=f"{where.path}:{where.line}")


def _single(record: dict[str, Any], where: Where, source: str) -> LabelledTrajectory:
    if record.get("source_ref") is None and record.get("step_index") is None:
        raise where.error(f"a label names its step: source_ref ({_REF_FORMS}) or step_index",
                          "source_ref")
    source_ref, index = (None, None)
    if record.get("source_ref") is not None:
        source_ref, _ = _ref(record["source_ref"], where, "source_ref")
        if source_ref is None:
            raise where.error(f"expected {_REF_FORMS} (a step index goes in step_index)",
                              "source_ref")
    if record.get("step_index") is not None:
        _, index = _ref(record["step_index"], where, "step_index")
        if index is None:
            raise where.error("expected an integer step index", "step_index")
    label = opt_str(record, "label", where) or "error"
    if label not in _LABELS:
        raise where.error(f"expected one of {', '.join(_LABELS)}, got {label!r}", "label")
    raw = opt_str(record, "category", where)
    return LabelledTrajectory(
        key=_key(record, where, None), run_id=opt_str(record, "run_id", where), origin=f"{where.path}:{where.line}",
        labels=[HumanLabel(label=label, source_ref=source_ref, step_index=index,  # type: ignore[arg-type]
                           category=raw, category_raw=raw, impact=opt_str(record, "impact", where),
                           agent=opt_str(record, "agent", where), annotator=opt_str(record, "annotator", where),
                           source=opt_str(record, "source", where) or source, reason=opt_str(record, "reason", where),
                           evidence=opt_str(record, "evidence", where))])


def _labelled(record: dict[str, Any], at: Where, path: Path, notes: list[str]) -> LabelledTrajectory:
    if isinstance(record.get("errors"), list):
        return _trail(record, at, path.stem, notes)
    if "mistake_step" in record:
        return _who_and_when(record, at)
    if any(f in record for f in _MAP_FIELDS):
        field = next(f for f in _MAP_FIELDS if f in record)
        return _step_map(record, field, at, path.name)
    return _single(record, at, path.name)


def _records(path: Path, notes: list[str], skipped: list[str]) -> Iterator[LabelledTrajectory]:
    """The file's labelled trajectories; a malformed record is left out with one line in `skipped`
    (a file that stops being JSON leaves out the rest of it)."""
    documents = iter_whole_documents(path)
    while True:
        try:
            line, value = next(documents)
        except StopIteration:
            return
        except RecordError as exc:
            skipped.append(str(exc))
            return
        where = Where(path, line)
        items = value if isinstance(value, list) else [value]
        for i, record in enumerate(items):
            at = where.at(i) if isinstance(value, list) else where
            try:
                labelled = _labelled(need_object(record, at), at, path, notes)
            except RecordError as exc:
                skipped.append(str(exc))
                continue
            yield labelled


def read_label_file(path: Path, notes: list[str] | None = None) -> list[LabelledTrajectory]:
    """Every labelled trajectory of a label file, or of each file of a directory (natural order).

    A malformed record is skipped: `notes` gets one line naming file, line and field, and a count; a missing
    file or an empty directory raises RecordError. `notes` also collects what was kept as given.
    """
    path = Path(path)
    notes = notes if notes is not None else []
    if path.is_dir():
        files = directory_inputs(path, "label", notes)
    elif path.is_file():
        files = [path]
    else:
        raise RecordError(path, 0, None, "no such file")
    skipped: list[str] = []
    out = [t for f in files for t in _records(f, notes, skipped)]
    notes.extend(f"skipped: {line}" for line in skipped)
    if skipped:
        notes.append(f"{len(skipped)} malformed label record(s) skipped")
    return out
