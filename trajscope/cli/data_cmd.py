"""`trajscope data`: fetch official dev sets, import any supported format, sample subsets, list datasets."""
from __future__ import annotations

from pathlib import Path

import click

from trajscope.ingest.datasets import (
    FORMATS,
    OFFICIAL_SOURCES,
    Dataset,
    DatasetError,
    FetchError,
    default_data_dir,
    fetch_source,
    fetched_path,
    load_dataset,
    official_source,
    resolve_source,
    sample_dataset,
    write_dataset,
)

_FORMAT_CHOICE = click.Choice([*FORMATS, "auto"], case_sensitive=False)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _summary(ds: Dataset) -> str:
    head = f"{ds.name}: {_count(len(ds.questions), 'question')}, {_count(len(ds.chunks), 'chunk')}, "
    if not ds.n_gold:
        return head + "no gold passages annotated (evidence recall cannot be measured)"
    return head + (f"gold match rate {ds.gold_match_rate:.1%} "
                   f"({ds.n_gold_matched}/{ds.n_gold} gold passages matched)")


def _load(path_or_name: str, fmt: str | None = None, name: str | None = None, corpus: str | None = None) -> Dataset:
    try:
        return load_dataset(path_or_name, None if fmt in (None, "auto") else fmt, name=name, corpus=corpus)
    except DatasetError as exc:
        raise click.ClickException(str(exc)) from None


def _input_folders(path_or_name: str, fmt: str | None = None, corpus: str | None = None) -> list[Path]:
    """The folders a dataset is read from: its directory, or the folder of each file it reads."""
    if not Path(path_or_name).exists():
        source = official_source(path_or_name)
        return [fetched_path(source).parent] if source is not None else []
    try:
        resolved = resolve_source(Path(path_or_name), None if fmt in (None, "auto") else fmt,
                                  Path(corpus) if corpus else None)
    except DatasetError:
        return []  # loading reports it
    paths = [Path(path_or_name), resolved.questions, *([resolved.corpus] if resolved.corpus else [])]
    return [p if p.is_dir() else p.parent for p in paths]


def _refuse_input_folder(out: str, folders: list[Path]) -> None:
    """An --out that is (or links to) a folder the dataset is read from would replace its files: refused
    before anything is read or written."""
    target = Path(out)
    for folder in folders:
        if target.exists() and folder.exists() and target.samefile(folder):
            raise click.ClickException(
                f"{out}: is the folder the dataset is read from ({folder}); writing there would replace its "
                "files, so write the dataset to another directory")


def _write(ds: Dataset, out: str) -> Path:
    try:
        return write_dataset(ds, out)
    except OSError as exc:
        raise click.ClickException(f"{out}: cannot write ({exc.strerror or exc})") from None


@click.group(name="data")
def command() -> None:
    """Fetch, import and sample datasets.

    A dataset is named by a path (a benchmark file, a HippoRAG / LinearRAG directory or a canonical
    dataset directory) or by a known name: `demo`, or `hotpotqa` / `2wiki` / `musique` once fetched.
    """


@command.command(name="fetch")
@click.argument("name", type=click.Choice(sorted(OFFICIAL_SOURCES), case_sensitive=False))
@click.option("--dest", type=click.Path(file_okay=False), default=None,
              help="Directory for downloads (default: $TRAJSCOPE_DATA_DIR or ~/.cache/trajscope/datasets).")
@click.option("--url", default=None, help="Download from this URL instead (a mirror).")
@click.option("--timeout", type=float, default=30.0, show_default=True, help="Network timeout in seconds.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
def fetch_cmd(name: str, dest: str | None, url: str | None, timeout: float, no_progress: bool) -> None:
    """Download the official dev file of NAME (hotpotqa, 2wiki, musique).

    Resumes a partial download (HTTP Range), checks the announced size, records size and sha256 in
    fetch.json and verifies them on later fetches. Offline: place the file by hand where the
    message says and rerun.
    """
    source = OFFICIAL_SOURCES[name.lower()]
    try:
        result = fetch_source(source, Path(dest) if dest else None, url=url, timeout=timeout,
                              progress=not no_progress)
    except FetchError as exc:
        raise click.ClickException(str(exc)) from None
    verb = "downloaded" if result.downloaded else "verified"
    click.echo(f"{verb} {result.archive} ({result.size} bytes, sha256 {result.sha256})")
    click.echo(f"data file: {result.path}")
    click.echo(f"next: trajscope data import {result.path} --format {name.lower()} --out DIR")


@command.command(name="import")
@click.argument("path", type=click.Path(exists=True))
@click.option("--format", "fmt", type=_FORMAT_CHOICE, default="auto", show_default=True,
              help="Source format; auto detects it from the files.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Canonical dataset directory to write.")
@click.option("--name", default=None, help="Dataset name (prefix of chunk ids); default from the format or file.")
@click.option("--corpus", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Corpus file, when it is not next to the questions under the usual name.")
def import_cmd(path: str, fmt: str, out: str, name: str | None, corpus: str | None) -> None:
    """Convert PATH to a canonical dataset directory and print the gold match rate."""
    _refuse_input_folder(out, _input_folders(path, fmt, corpus))
    ds = _load(path, fmt, name, corpus)
    written = _write(ds, out)
    click.echo(f"{_summary(ds)} [format {ds.source_format}]")
    click.echo(f"wrote {written}")


@command.command(name="sample")
@click.option("--dataset", "dataset", required=True, help="Path or known name of the dataset to sample.")
@click.option("--n", "n", type=click.IntRange(min=1), required=True, help="Number of questions.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed; same seed, same subset.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Canonical dataset directory to write.")
def sample_cmd(dataset: str, n: int, seed: int, out: str) -> None:
    """Write a deterministic n-question subset with its own corpus (gold + distractor passages)."""
    _refuse_input_folder(out, _input_folders(dataset))
    ds = sample_dataset(_load(dataset), n, seed)
    written = _write(ds, out)
    click.echo(_summary(ds))
    click.echo(f"wrote {written}")


@command.command(name="list")
@click.option("--dest", type=click.Path(file_okay=False), default=None, help="Download directory to inspect.")
def list_cmd(dest: str | None) -> None:
    """List the known dataset names and whether the official ones are downloaded."""
    data_dir = Path(dest) if dest else default_data_dir()
    demo = _load("demo")
    click.echo(f"demo       bundled: {_summary(demo)}")
    for key in sorted(OFFICIAL_SOURCES):
        source = official_source(key)
        assert source is not None
        path = fetched_path(source, data_dir)
        state = f"downloaded: {path}" if path.is_file() else f"not downloaded (trajscope data fetch {key})"
        click.echo(f"{key:<10} {state}")
    click.echo("any path:  a benchmark file or directory (formats: " + ", ".join(FORMATS) + ")")
