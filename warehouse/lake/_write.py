"""Adding a writer's rows to a lake: claim its runs, write its Parquet partitions, then commit them at once."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from .._conflict_remedy import conflicting_question, gold_conflict_remedy
from .._connection import open_warehouse
from .._loader import GoldConflict, IngestReport, ingest_paths
from .._schema import latest_schema_version
from ._layout import (
    CLAIMS,
    COMMITTED,
    LAKE_FORMAT,
    MARKER,
    SHARED,
    STAGING,
    LakeError,
    LakeTable,
    check_lake,
    install_lake_views,
    lake_tables,
)
from ._remote import FILES_KEY, RemoteLake, is_lake_url, lake_location


@dataclass
class LakeWrite:
    """What one writer added to a lake: its id, its runs and the rows per table."""

    lake: Path | str  # a folder, or an object storage URL
    writer: str
    runs: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    ingest: IngestReport | None = None

    def summary(self) -> str:
        total = sum(self.rows.values())
        return (f"{self.lake}: writer {self.writer} added {len(self.runs)} run(s), {self.rows.get('trajectories', 0)} "
                f"trajectories, {total} rows in {sum(1 for n in self.rows.values() if n)} table(s) "
                f"({self.seconds:.1f}s)")


def create_lake(lake: str | Path) -> Path | RemoteLake:
    """Make `lake` a trajscope lake (a folder, or an object storage URL, with its marker); an existing lake is left
    as it is."""
    if is_lake_url(lake):
        return RemoteLake(str(lake)).create()
    lake = Path(lake).expanduser().resolve()
    if lake.exists() and not lake.is_dir():
        raise LakeError(f"{lake}: is a file, not a lake folder")
    lake.mkdir(parents=True, exist_ok=True)
    marker = lake / MARKER
    if not marker.exists():
        if any(lake.iterdir()):
            raise LakeError(f"{lake}: the folder is not empty and is not a trajscope lake; give an empty folder")
        _write_atomically(marker, json.dumps({"format": LAKE_FORMAT}).encode())
    (lake / COMMITTED).mkdir(exist_ok=True)
    (lake / CLAIMS).mkdir(exist_ok=True)
    return check_lake(lake)


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _claim(lake: Path, run_id: str, writer: str) -> Path:
    # mkdir is atomic: of two writers adding the same run at once, exactly one gets it. No global lock.
    claim = lake / CLAIMS / hashlib.sha256(run_id.encode()).hexdigest()[:32]
    try:
        claim.mkdir()
    except FileExistsError:
        holder = claim / "writer.json"
        who = holder.read_text() if holder.exists() else "a writer that has not said who it is"
        raise LakeError(f"run {run_id!r} is already in the lake or being added by another writer ({who}); "
                        "a lake ingest adds runs and never replaces one (a writer killed before its commit "
                        f"leaves this claim: remove {claim} to add the run again)") from None
    (claim / "writer.json").write_text(json.dumps({"run_id": run_id, "writer": writer}))
    return claim


def _schema_files(lake: Path, con: duckdb.DuckDBPyConnection, tables: list[LakeTable], source: str) -> None:
    # An empty file per table and schema version gives every table's view its columns before any row exists.
    version = latest_schema_version()
    for table in tables:
        folder = lake / table.name / f"_dataset={SHARED}" / f"_run={SHARED}" / f"_writer={SHARED}"
        target = folder / f"schema-{version:04d}.parquet"
        if target.exists():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".schema-{uuid.uuid4().hex}.tmp"
        con.execute(f"COPY (SELECT * FROM {source}.{table.name} LIMIT 0) TO '{_q(tmp)}' (FORMAT parquet)")
        os.replace(tmp, target)


def _q(path: Path) -> str:
    return str(path).replace("'", "''")


def _write_rows(lake: Path, con: duckdb.DuckDBPyConnection, tables: list[LakeTable], writer: str,
                existing: str | None) -> dict[str, int]:
    rows = {}
    for table in tables:
        select = table.partitioned_select("main", writer)
        if table.shared and existing is not None:
            # A shared row the lake already holds (the same question from an earlier log) is not written twice.
            same = " AND ".join(f's."{c}" IS NOT DISTINCT FROM e."{c}"' for c in table.column_names)
            select = f"SELECT s.* FROM ({select}) s ANTI JOIN {existing}.{table.name} e ON {same}"
        n = con.execute(f"SELECT count(*) FROM ({select})").fetchall()[0][0]
        rows[table.name] = n
        if n:
            # Into the writer's staging folder: a file being written is never where a reader's glob looks.
            (lake / STAGING / writer).mkdir(parents=True, exist_ok=True)
            con.execute(f"COPY ({select}) TO '{_q(lake / STAGING / writer / table.name)}' (FORMAT parquet, "
                        "PARTITION_BY (_dataset, _run, _writer), FILENAME_PATTERN 'part_{uuid}')")
    return rows


def _publish(lake: Path, writer: str) -> None:
    # Each partition folder moves into place whole (a rename), so readers only ever meet complete files;
    # they stay invisible until the commit marker names their writer.
    staging = lake / STAGING / writer
    for folder in sorted(staging.glob("*/_dataset=*/_run=*/_writer=*")):
        target = lake / folder.relative_to(staging)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(folder, target)
    shutil.rmtree(staging, ignore_errors=True)


def _remove_writer(lake: Path, writer: str, claims: list[Path]) -> None:
    # Uncommitted rows are invisible already; removing them only keeps the folder clean.
    for folder in lake.glob(f"*/_dataset=*/_run=*/_writer={writer}"):
        shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(lake / STAGING / writer, ignore_errors=True)
    for claim in claims:
        shutil.rmtree(claim, ignore_errors=True)


def _check_against_lake(con: duckdb.DuckDBPyConnection, existing: str) -> None:
    held = con.execute(f"SELECT run_id FROM main.runs WHERE run_id IN (SELECT run_id FROM {existing}.runs) "
                       "ORDER BY run_id LIMIT 1").fetchall()
    if held:
        raise LakeError(f"run {held[0][0]!r} is already in the lake: a lake ingest adds runs and never replaces one")
    clash = con.execute(f"SELECT trajectory_id FROM main.trajectories WHERE trajectory_id IN "
                        f"(SELECT trajectory_id FROM {existing}.trajectories) LIMIT 1").fetchall()
    if clash:
        raise LakeError(f"trajectory {clash[0][0]!r} is already in the lake (in another run): "
                        "trajectory ids are unique across the lake, as in one warehouse")


_QUESTION_FACTS = ("text", "gold_answer", "aliases", "question_type", "hop_count", "gold_chunk_ids", "gold_paragraphs")


def _check_questions(con: duckdb.DuckDBPyConnection, existing: str, lake: Path | str) -> None:
    # As one warehouse refuses a log that restates a stored question with other facts, so does the lake.
    def fact(side: str, name: str) -> str:
        return f"list_sort(coalesce({side}.{name}, []))" if name in ("aliases", "gold_chunk_ids") else f"{side}.{name}"

    differs = " OR ".join(f"{fact('w', f)} IS DISTINCT FROM {fact('e', f)}" for f in _QUESTION_FACTS)
    picks = ", ".join(f"{fact('w', f)}, {fact('e', f)}" for f in _QUESTION_FACTS)
    row = con.execute(f"SELECT w.dataset, w.question_id, {picks} FROM main.questions w JOIN {existing}.questions e "
                      f"ON e.dataset = w.dataset AND e.question_id = w.question_id WHERE {differs} "
                      "ORDER BY w.dataset, w.question_id LIMIT 1").fetchone()
    if row is None:
        return
    dataset, question_id, values = row[0], row[1], row[2:]
    name, new, old = next((f, values[2 * i], values[2 * i + 1]) for i, f in enumerate(_QUESTION_FACTS)
                          if values[2 * i] != values[2 * i + 1])
    raise GoldConflict(lake, dataset, question_id, name,
                       f"{conflicting_question(question_id, dataset)}: conflicting {name}: {new!r} in this ingest "
                       f"vs {old!r} in the lake {lake}. " + gold_conflict_remedy(dataset))


def _has_rows(lake: Path) -> bool:
    return any((lake / COMMITTED).iterdir())


def _commit_record(writer: str, runs: list[str], rows: dict[str, int]) -> dict:
    return {"writer": writer, "runs": runs, "rows": rows, "host": socket.gethostname(), "pid": os.getpid(),
            "schema_version": latest_schema_version(),
            "committed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def write_warehouse(con: duckdb.DuckDBPyConnection, lake: str | Path | RemoteLake,
                    ingest: IngestReport | None = None) -> LakeWrite:
    """Add every run (and shared row) of the warehouse open on con to the lake (a folder or a URL), as one new
    writer."""
    started = time.perf_counter()
    target = lake if isinstance(lake, RemoteLake) else lake_location(lake)
    # What the writer checks against: the folder itself, or a URL's local mirror of its committed writers.
    local = target.mirror() if isinstance(target, RemoteLake) else target
    writer = uuid.uuid4().hex
    result = LakeWrite(target.url if isinstance(target, RemoteLake) else target, writer, ingest=ingest)
    tables = lake_tables(con)
    existing = None
    if _has_rows(local):
        existing = "lake_existing"
        install_lake_views(con, local, tables, existing)
        _check_against_lake(con, existing)
        _check_questions(con, existing, result.lake)
    result.runs = [r[0] for r in con.execute("SELECT run_id FROM main.runs ORDER BY run_id").fetchall()]
    if isinstance(target, RemoteLake):
        _write_remote(con, target, tables, result, existing)
    else:
        _write_folder(con, target, tables, result, existing)
    result.seconds = time.perf_counter() - started
    return result


def _write_folder(con: duckdb.DuckDBPyConnection, lake: Path, tables: list[LakeTable], result: LakeWrite,
                  existing: str | None) -> None:
    claims: list[Path] = []
    try:
        for run_id in result.runs:
            claims.append(_claim(lake, run_id, result.writer))
        _schema_files(lake, con, tables, "main")
        result.rows = _write_rows(lake, con, tables, result.writer, existing)
        _publish(lake, result.writer)
        # The commit marker is the one atomic step: before it no reader sees any of this writer's rows.
        _write_atomically(lake / COMMITTED / result.writer,
                          json.dumps(_commit_record(result.writer, result.runs, result.rows)).encode())
    except BaseException:
        _remove_writer(lake, result.writer, claims)
        raise


def _write_remote(con: duckdb.DuckDBPyConnection, lake: RemoteLake, tables: list[LakeTable], result: LakeWrite,
                  existing: str | None) -> None:
    # The files are written locally as for a folder, then uploaded under this writer's id, where no reader looks
    # until the commit marker names them.
    sent: list[str] = []
    try:
        for run_id in result.runs:
            sent.append(lake.claim(run_id, result.writer))
        with tempfile.TemporaryDirectory(prefix="trajscope-lake-upload-") as tmp:
            local = Path(tmp)
            _schema_files(local, con, tables, "main")
            result.rows = _write_rows(local, con, tables, result.writer, existing)
            files: list[str] = []
            try:
                lake.upload(local, local / STAGING / result.writer, files)
            finally:
                sent.extend(files)
            lake.commit(result.writer, {**_commit_record(result.writer, result.runs, result.rows), FILES_KEY: files})
    except BaseException:
        lake.remove(sent)
        raise


def export_lake(db_path: str | Path, lake: str | Path) -> LakeWrite:
    """Write a warehouse file into a lake (created if needed) as one writer: every run, every shared row."""
    target = create_lake(lake)
    # A write open (the COPY writes files), which also brings an older warehouse's schema up to date.
    with open_warehouse(db_path) as con:
        return write_warehouse(con, target)


def ingest_into_lake(lake: str | Path, paths: Sequence[str | Path], **ingest_options) -> LakeWrite:
    """Validate and load logs exactly as `ingest` does (into a private warehouse), then add them to the lake.

    A log that states another gold for a question the lake holds is refused (GoldConflict), as one
    warehouse would refuse it; so is a run or trajectory id the lake already holds (LakeError).
    """
    target = lake_location(lake)
    with tempfile.TemporaryDirectory(prefix="trajscope-lake-") as tmp:
        db = Path(tmp) / "writer.duckdb"
        report = ingest_paths(db, paths, **ingest_options)
        with open_warehouse(db) as con:
            return write_warehouse(con, target, ingest=report)


__all__ = ["LakeWrite", "create_lake", "export_lake", "ingest_into_lake", "write_warehouse"]
