"""`load_dataset`: resolving a path or name to a format and the files that format needs."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._canonical import is_canonical_dir, read_dataset
from ._dataset import Dataset
from ._errors import DatasetError
from ._json_source import first_record
from ._loaders import load_self_contained, load_with_corpus
from ._sources import DEMO_DIR, fetched_path, official_source

FORMATS = ("hotpotqa", "2wiki", "musique", "hipporag", "linearrag", "canonical")
FORMAT_ALIASES = {"hotpot": "hotpotqa", "2wikimultihopqa": "2wiki", "arag": "linearrag", "a-rag": "linearrag"}
DEFAULT_NAMES = {"hotpotqa": "hotpotqa", "2wiki": "2wikimultihopqa", "musique": "musique"}
_QUESTION_FILES = ("questions.json", "questions.jsonl")
_CHUNK_FILES = ("chunks.json", "chunks.jsonl")
_DATA_SUFFIXES = (".json", ".jsonl")

__all__ = ["FORMATS", "ResolvedSource", "load_dataset", "resolve_source"]


@dataclass(frozen=True)
class ResolvedSource:
    """What load_dataset will read: the format, the questions file (or directory) and an optional corpus."""

    format: str
    questions: Path
    corpus: Path | None = None


def _normalise_format(fmt: str | None) -> str | None:
    if fmt is None:
        return None
    key = FORMAT_ALIASES.get(fmt.lower(), fmt.lower())
    if key not in FORMATS:
        raise DatasetError("<format>", f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    return key


def _sniff(record: Any, path: Path, has_corpus: bool) -> str:
    if not isinstance(record, dict):
        raise DatasetError(path, f"cannot detect the format: first record is a {type(record).__name__}, "
                                 "not a question object (pass --format)", line=1)
    if "context" in record:
        return "2wiki" if "evidences" in record else "hotpotqa"
    if "evidence" in record and has_corpus:
        return "2wiki"
    if "question_decomposition" in record or ("paragraphs" in record and not has_corpus):
        return "musique"
    if has_corpus:
        return "hipporag"
    raise DatasetError(path, "cannot detect the format: records have no `context`, `paragraphs` or "
                             "`evidence`, and no corpus file was found next to them (pass --format)")


def _first_existing(directory: Path, names: tuple[str, ...]) -> Path | None:
    return next((directory / n for n in names if (directory / n).is_file()), None)


def _pair_in_directory(directory: Path) -> tuple[Path, Path] | None:
    files = sorted(p for p in directory.iterdir() if p.is_file() and p.suffix in _DATA_SUFFIXES)
    corpora = [p for p in files if p.stem.endswith("_corpus")]
    for corpus in corpora:
        paired = directory / (corpus.stem[: -len("_corpus")] + corpus.suffix)
        if paired.is_file():
            return paired, corpus
    corpora = [p for p in files if "corpus" in p.stem.lower()]
    questions = [p for p in files if "question" in p.stem.lower()]
    if len(corpora) == 1 and len(questions) == 1:
        return questions[0], corpora[0]
    return None


def resolve_source(path: Path, fmt: str | None = None, corpus: Path | None = None) -> ResolvedSource:
    """Decide format and files for a path; `fmt` and `corpus` override what detection would pick."""
    fmt = _normalise_format(fmt)
    if not path.exists():
        raise DatasetError(path, "no such file or directory")
    if path.is_dir():
        if fmt in (None, "canonical") and is_canonical_dir(path):
            return ResolvedSource("canonical", path)
        questions = _first_existing(path, _QUESTION_FILES)
        chunks = corpus or _first_existing(path, _CHUNK_FILES)
        if fmt in (None, "linearrag") and questions and chunks:
            return ResolvedSource("linearrag", questions, chunks)
        pair = _pair_in_directory(path)
        if pair is None:
            raise DatasetError(path, "found no dataset here: expected dataset.json + questions.jsonl + "
                                     "chunks.jsonl (canonical), questions.json + chunks.json (LinearRAG / A-RAG), "
                                     "or X.json + X_corpus.json (HippoRAG)")
        questions, found_corpus = pair
        corpus = corpus or found_corpus
        return ResolvedSource(fmt or _sniff(first_record(questions), questions, True), questions, corpus)
    if fmt == "canonical":
        raise DatasetError(path, "a canonical dataset is a directory, not a file")
    if corpus is None:
        sibling = path.with_name(f"{path.stem}_corpus{path.suffix}")
        corpus = sibling if sibling.is_file() else None
    if fmt in ("hipporag", "linearrag") and corpus is None:
        raise DatasetError(path, f"format {fmt} needs a corpus file: expected {path.stem}_corpus{path.suffix} "
                                 "next to it (or pass a corpus)")
    return ResolvedSource(fmt or _sniff(first_record(path), path, corpus is not None), path, corpus)


def load_demo() -> Dataset:
    """The demo dataset (name "demo") shipped in the package."""
    return read_dataset(DEMO_DIR)


def _named(name: str) -> Dataset | None:
    if name.lower() == "demo":
        return load_demo()
    source = official_source(name)
    if source is None:
        return None
    path = fetched_path(source)
    if not path.is_file():
        raise DatasetError(name, f"dataset {name!r} is not downloaded yet; run `trajscope data fetch "
                                 f"{source.name}` (expected {path})")
    return load_dataset(path)


def _default_name(resolved: ResolvedSource) -> str:
    if resolved.format in DEFAULT_NAMES:
        return DEFAULT_NAMES[resolved.format]
    if resolved.format == "linearrag":
        return resolved.questions.parent.name or "linearrag"
    return resolved.questions.stem


def load_dataset(
    path_or_name: str | Path, format: str | None = None, *, name: str | None = None, corpus: str | Path | None = None
) -> Dataset:
    """Load a dataset from a path (format auto-detected unless given) or a known name ("demo", "hotpotqa", ...)."""
    if isinstance(path_or_name, str) and not Path(path_or_name).exists() and format is None and corpus is None:
        named = _named(path_or_name)
        if named is not None:
            return named
    resolved = resolve_source(Path(path_or_name), format, Path(corpus) if corpus else None)
    if resolved.format == "canonical":
        return read_dataset(resolved.questions)
    ds_name = name or _default_name(resolved)
    if resolved.corpus is not None:
        return load_with_corpus(resolved.questions, resolved.corpus, ds_name, resolved.format)
    return load_self_contained(resolved.questions, ds_name, resolved.format)

