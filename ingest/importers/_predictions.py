"""Predicted step labels of an attribution method (`trajscope ingest --labels FILE --method NAME`).

Records that name their trajectory by its position in a dataset (AgentProcessBench's released judge
annotations: `query_index` + `sample_index`, else `index_in_dataset`) with a `step_labels` map keyed by the
index of an assistant message in the log's `messages` become labels at `message:N` of the trajectory whose
log record carried the same position fields; any other file is read as a human label file is.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajscope.format import HumanLabel, LabelledTrajectory, RecordError

from ._detect import directory_inputs
from ._fields import Where, need_object
from ._json_stream import iter_whole_documents
from ._labels import read_label_file

# Position fields, most specific first; a record is keyed by the first group it carries in full.
_POSITION_KEYS = (("query_index", "sample_index"), ("index_in_dataset",), ("total_index",))
_RATINGS = {1: "correct", 0: "neutral", -1: "error"}


def _position(record: dict[str, Any]) -> str | None:
    """`metadata:F=V,...` for the first position group the record carries in full, else None."""
    for group in _POSITION_KEYS:
        values = [record.get(k) for k in group]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return "metadata:" + ",".join(f"{k}={v}" for k, v in zip(group, values, strict=True))
    return None


def _rating(value: Any, where: Where) -> str:
    text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else None
    if text is None or text.lstrip("+-") not in ("0", "1"):
        raise where.error(f"expected a judgment +1, 0 or -1, got {value!r}")
    return _RATINGS[int(text)]


def _positioned(record: dict[str, Any], key: str, where: Where, source: str, missing: list[str]) -> LabelledTrajectory:
    labels_at = where.at("step_labels")
    raw = record.get("step_labels") or {}
    if not isinstance(raw, dict):
        raise labels_at.error("expected an object of assistant-message index -> +1 / 0 / -1")
    explained = (record.get("explanations") or {}).get("steps") if isinstance(record.get("explanations"), dict) \
        else None
    labels, nulls = [], []
    for ref, rating in raw.items():
        if not str(ref).strip().isdigit():
            raise labels_at.error(f"expected the index of a message, got {ref!r}", str(ref))
        if rating is None:  # a failed annotation of the step: no prediction, so it scores as a miss
            nulls.append(str(ref))
            continue
        reason = explained.get(str(ref)) if isinstance(explained, dict) else None
        labels.append(HumanLabel(label=_rating(rating, labels_at.at(str(ref))),  # type: ignore[arg-type]
                                 source_ref=f"message:{int(str(ref).strip())}",
                                 reason=reason if isinstance(reason, str) else None, source=source))
    if nulls:
        missing.append(f"{where.path.name}:{where.line}: step_labels null at message(s) {', '.join(nulls)}: "
                       "no prediction there (scored as a miss)")
    return LabelledTrajectory(key=key, labels=labels, origin=f"{where.path}:{where.line}")


def _file_records(path: Path) -> Iterator[tuple[Where, dict[str, Any]]]:
    for line, value in iter_whole_documents(path):
        where = Where(path, line)
        for i, record in enumerate(value if isinstance(value, list) else [value]):
            at = where.at(i) if isinstance(value, list) else where
            yield at, need_object(record, at)


def read_prediction_file(path: Path, notes: list[str] | None = None) -> list[LabelledTrajectory]:
    """Every trajectory's predicted labels in a file (or each file of a directory); a file whose records do not
    all carry a dataset position is read as a label file (read_label_file). Bad input raises RecordError."""
    path = Path(path)
    notes = notes if notes is not None else []
    if path.is_dir():
        files = directory_inputs(path, "prediction", notes)
    elif path.is_file():
        files = [path]
    else:
        raise RecordError(path, 0, None, "no such file")
    out: list[LabelledTrajectory] = []
    for f in files:
        records = list(_file_records(f))
        keys = [_position(r) for _, r in records]
        if records and all(k is not None and "step_labels" in r for k, (_, r) in zip(keys, records, strict=True)):
            out.extend(_positioned(r, k, w, f.name, notes)  # type: ignore[arg-type]
                       for k, (w, r) in zip(keys, records, strict=True))
        else:
            out.extend(read_label_file(f, notes))
    return out
