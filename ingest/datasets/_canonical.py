"""The canonical dataset directory: questions.jsonl, chunks.jsonl, contexts.jsonl and dataset.json."""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from trajscope.format import Chunk, Question, field_of

from ._dataset import Dataset
from ._errors import DatasetError

QUESTIONS_FILE = "questions.jsonl"
CHUNKS_FILE = "chunks.jsonl"
CONTEXTS_FILE = "contexts.jsonl"
META_FILE = "dataset.json"
CANONICAL_VERSION = 1

_encoder = msgspec.json.Encoder()


class _Context(msgspec.Struct, forbid_unknown_fields=True):
    """Per-question extras that the canonical Question record does not carry."""

    question_id: str
    chunk_ids: list[str] = []
    n_gold: int = 0
    n_gold_matched: int = 0


class _Meta(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    source: str
    gold_match_rate: float
    n_gold: int
    n_gold_matched: int
    n_questions: int
    n_chunks: int
    source_format: str | None = None
    canonical_version: int = CANONICAL_VERSION


def is_canonical_dir(path: Path) -> bool:
    """Whether a directory holds a canonical dataset."""
    return path.is_dir() and all((path / f).is_file() for f in (META_FILE, QUESTIONS_FILE, CHUNKS_FILE))


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a dataset is ordinary shared data
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _jsonl(records: Sequence[msgspec.Struct]) -> bytes:
    return b"".join(_encoder.encode(r) + b"\n" for r in records)


def write_dataset(ds: Dataset, directory: str | Path) -> Path:
    """Write a dataset as a canonical directory (each file replaced atomically); returns the directory."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    contexts = [
        _Context(question_id=q.question_id, chunk_ids=ds.contexts.get(q.question_id, []),
                 n_gold=ds.gold_counts.get(q.question_id, (0, 0))[0],
                 n_gold_matched=ds.gold_counts.get(q.question_id, (0, 0))[1])
        for q in ds.questions
    ]
    meta = _Meta(name=ds.name, source=ds.source, gold_match_rate=ds.gold_match_rate, n_gold=ds.n_gold,
                 n_gold_matched=ds.n_gold_matched, n_questions=len(ds.questions), n_chunks=len(ds.chunks),
                 source_format=ds.source_format)
    _write_atomic(out / QUESTIONS_FILE, _jsonl(ds.questions))
    _write_atomic(out / CHUNKS_FILE, _jsonl(ds.chunks))
    _write_atomic(out / CONTEXTS_FILE, _jsonl(contexts))
    meta_json = json.dumps(msgspec.to_builtins(meta), indent=2, ensure_ascii=False) + "\n"
    _write_atomic(out / META_FILE, meta_json.encode())
    return out


def _decode_lines(path: Path, kind: type) -> list[tuple[int, Any]]:
    decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(kind)
    out: list[tuple[int, Any]] = []
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise DatasetError(path, exc.strerror or str(exc)) from None
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            out.append((lineno, decoder.decode(raw)))
        except msgspec.ValidationError as exc:
            field, message = field_of(exc)
            raise DatasetError(path, message, line=lineno, field=field) from None
        except msgspec.DecodeError as exc:
            raise DatasetError(path, f"not valid JSON ({exc})", line=lineno) from None
    return out


def read_dataset(directory: str | Path) -> Dataset:
    """Read a canonical dataset directory, validating every record against the canonical format."""
    root = Path(directory)
    meta_path = root / META_FILE
    try:
        meta = msgspec.json.decode(meta_path.read_bytes(), type=_Meta)
    except FileNotFoundError:
        raise DatasetError(meta_path, "file not found (not a canonical dataset directory)") from None
    except msgspec.ValidationError as exc:
        field, message = field_of(exc)
        raise DatasetError(meta_path, message, field=field) from None
    except msgspec.DecodeError as exc:
        raise DatasetError(meta_path, f"not valid JSON ({exc})") from None
    question_lines = _decode_lines(root / QUESTIONS_FILE, Question)
    chunk_lines = _decode_lines(root / CHUNKS_FILE, Chunk)
    contexts_path = root / CONTEXTS_FILE
    contexts = [c for _, c in _decode_lines(contexts_path, _Context)] if contexts_path.exists() else []
    _check_references(root, question_lines, chunk_lines)
    return Dataset(
        name=meta.name, questions=[q for _, q in question_lines], chunks=[c for _, c in chunk_lines],
        gold_match_rate=meta.gold_match_rate, n_gold=meta.n_gold, n_gold_matched=meta.n_gold_matched,
        source=meta.source, source_format=meta.source_format,
        contexts={c.question_id: c.chunk_ids for c in contexts if c.chunk_ids},
        gold_counts={c.question_id: (c.n_gold, c.n_gold_matched) for c in contexts},
    )


def _check_references(
    root: Path, questions: list[tuple[int, Question]], chunks: list[tuple[int, Chunk]]
) -> None:
    ids: set[str] = set()
    for lineno, chunk in chunks:
        if chunk.chunk_id in ids:
            raise DatasetError(root / CHUNKS_FILE, f"duplicate chunk_id {chunk.chunk_id!r}",
                               line=lineno, field="chunk_id")
        ids.add(chunk.chunk_id)
    seen: set[str] = set()
    for lineno, question in questions:
        if question.question_id in seen:
            raise DatasetError(root / QUESTIONS_FILE, f"duplicate question_id {question.question_id!r}",
                               line=lineno, field="question_id")
        seen.add(question.question_id)
        missing = [c for c in question.gold_chunk_ids if c not in ids]
        if missing:
            raise DatasetError(root / QUESTIONS_FILE, f"gold chunk {missing[0]!r} is not in {CHUNKS_FILE}",
                               line=lineno, field="gold_chunk_ids")
