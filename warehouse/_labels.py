"""Loading human label files into human_step_labels: each label resolved to a stored trajectory and step."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from trajscope.format import LabelledTrajectory, RecordError

_COLUMNS = ("trajectory_id", "ordinal", "source_ref", "step_index", "label", "category", "category_raw", "impact",
            "agent", "annotator", "source", "reason", "evidence", "origin", "label_file")


@dataclass
class LabelLoad:
    """What a label file added: labels and trajectories, and the keys that named no stored trajectory."""

    label_file: str
    labels: int = 0
    trajectories: int = 0
    unmatched: list[str] = field(default_factory=list)
    method: str | None = None

    def summary(self) -> str:
        what = f"predictions of method {self.method}" if self.method else "labels"
        text = f"{what} from {self.label_file}: {self.labels} label(s) on {self.trajectories} trajectory(ies)"
        if self.unmatched:
            shown = ", ".join(self.unmatched[:5]) + (" ..." if len(self.unmatched) > 5 else "")
            text += f"; {len(self.unmatched)} name no stored trajectory, skipped ({shown})"
        return text


def _matches(con: duckdb.DuckDBPyConnection, keys: list[str], run_id: str | None) -> dict[str, list[tuple[str, str]]]:
    """key -> [(trajectory_id, run_id)] of the stored trajectories the key names (id, question id or trace id)."""
    con.register("label_keys", pa.table({"key": keys}))
    try:
        rows = con.execute(
            "SELECT k.key, t.trajectory_id, t.run_id FROM label_keys k JOIN trajectories t "
            "ON t.trajectory_id = k.key OR t.question_id = k.key "
            "OR json_extract_string(t.metadata, '$.trace_id') = k.key "
            # A key `metadata:F=V,G=W` names the trajectory whose log record carried those fields (a dataset position).
            "OR (starts_with(k.key, 'metadata:') AND list_bool_and([json_extract_string(t.metadata, '$.' || "
            "split_part(kv, '=', 1)) IS NOT DISTINCT FROM split_part(kv, '=', 2) "
            "FOR kv IN string_split(k.key[10:], ',')])) "
            "WHERE $run_id IS NULL OR t.run_id = $run_id", {"run_id": run_id}).fetchall()
    finally:
        con.unregister("label_keys")
    out: dict[str, list[tuple[str, str]]] = {}
    for key, tid, run in rows:
        if (tid, run) not in out.setdefault(key, []):
            out[key].append((tid, run))
    return out


@dataclass
class _KnownSteps:
    """One stored trajectory's steps: how many, and each step's source ref by ref and by index."""

    n: int = 0
    refs: dict[str, int] = field(default_factory=dict)
    index_refs: dict[int, str | None] = field(default_factory=dict)


def _steps(con: duckdb.DuckDBPyConnection, tids: list[str]) -> dict[str, _KnownSteps]:
    con.register("label_tids", pa.table({"trajectory_id": tids}))
    try:
        rows = con.execute("SELECT trajectory_id, step_index, source_ref FROM steps "
                           "WHERE trajectory_id IN (SELECT trajectory_id FROM label_tids)").fetchall()
    finally:
        con.unregister("label_tids")
    out = {t: _KnownSteps() for t in tids}
    for tid, index, ref in rows:
        entry = out[tid]
        entry.n = max(entry.n, index + 1)
        entry.index_refs[index] = ref
        if ref is not None:
            entry.refs.setdefault(ref, index)
    return out


def load_label_records(con: duckdb.DuckDBPyConnection, labelled: Sequence[LabelledTrajectory], label_file: str,
                       run_id: str | None = None, method: str | None = None) -> LabelLoad:
    """Resolve and store the labels of one label file (call inside the ingest's transaction); with `method`,
    as that method's predictions (method_step_labels), never as people's.

    A key that names no stored trajectory is skipped and reported; one that names trajectories in several
    runs, or a label whose step the trajectory lacks, is a RecordError (file, line, field): nothing is kept.
    The file's earlier labels on the same trajectories are replaced, so loading it twice adds nothing.
    """
    report = LabelLoad(label_file, method=method)
    matches = _matches(con, sorted({t.key for t in labelled}), run_id)
    resolved: list[tuple[str, LabelledTrajectory]] = []
    for t in labelled:
        found = matches.get(t.key, [])
        if t.run_id is not None:
            found = [m for m in found if m[1] == t.run_id]
        if not found:
            if t.key not in report.unmatched:
                report.unmatched.append(t.key)
            continue
        if len(found) > 1:
            runs = ", ".join(sorted({r for _, r in found}))
            raise _error(t, "trajectory", f"{t.key!r} names trajectories in several runs ({runs}); give run_id in "
                         "the file or pass --labels-run")
        resolved.append((found[0][0], t))
    steps = _steps(con, sorted({tid for tid, _ in resolved}))
    rows: dict[str, list] = {c: [] for c in _COLUMNS}
    ordinals: dict[str, int] = {}
    for tid, t in resolved:
        known = steps[tid]
        for k, label in enumerate(t.labels):
            ref, index = label.source_ref, label.step_index
            if ref is not None:
                at = known.refs.get(ref)
                if at is None:
                    raise _error(t, f"labels[{k}].source_ref", f"trajectory {tid!r} has no step at {ref} "
                                 "(steps keep the position the importer gave them; see steps.source_ref)")
                if index is not None and index != at:
                    raise _error(t, f"labels[{k}].step_index", f"step_index {index} but {ref} is step {at}")
                index = at
            elif index is None or not 0 <= index < known.n:
                raise _error(t, f"labels[{k}].step_index", f"trajectory {tid!r} has no step {index} "
                             f"(it has {known.n})")
            else:
                ref = known.index_refs.get(index)
            ordinal = ordinals.get(tid, 0)
            ordinals[tid] = ordinal + 1
            values = dict(trajectory_id=tid, ordinal=ordinal, source_ref=ref, step_index=index, label=label.label,
                          category=label.category, category_raw=label.category_raw, impact=label.impact,
                          agent=label.agent, annotator=label.annotator, source=label.source, reason=label.reason,
                          evidence=label.evidence, origin="file", label_file=label_file)
            for column in _COLUMNS:
                rows[column].append(values[column])
    tids = sorted(ordinals)
    table = pa.table({c: pa.array(rows[c], pa.int32() if c in ("ordinal", "step_index") else pa.string())
                      for c in _COLUMNS})
    con.register("labelled_tids", pa.table({"trajectory_id": pa.array(tids, pa.string())}))
    con.register("incoming_labels", table)
    try:
        if method is None:
            con.execute("DELETE FROM human_step_labels WHERE origin = 'file' AND label_file = $f AND trajectory_id "
                        "IN (SELECT trajectory_id FROM labelled_tids)", {"f": label_file})
            con.execute("INSERT INTO human_step_labels BY NAME SELECT * FROM incoming_labels")
        else:
            con.execute("DELETE FROM method_step_labels WHERE method = $m AND trajectory_id IN "
                        "(SELECT trajectory_id FROM labelled_tids)", {"m": method})
            con.execute("INSERT INTO method_step_labels BY NAME SELECT $m AS method, trajectory_id, ordinal, "
                        "source_ref, step_index, label, category, agent, reason, label_file FROM incoming_labels",
                        {"m": method})
    finally:
        con.unregister("labelled_tids")
        con.unregister("incoming_labels")
    report.labels, report.trajectories = table.num_rows, len(tids)
    return report


def _error(t: LabelledTrajectory, field_name: str, message: str) -> RecordError:
    path, _, line = (t.origin or "<labels>:0").rpartition(":")
    return RecordError(path or t.origin or "<labels>", int(line) if line.isdigit() else 0, field_name, message)
