"""Where the official dev sets live online and where `trajscope data fetch` puts them."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class OfficialSource:
    """One downloadable official dev file; `member` names the file inside a zip archive."""

    name: str
    url: str
    filename: str
    data_file: str
    homepage: str
    member: str | None = None
    sha256: str | None = None
    size: int | None = None


# Checksums are not stated here because they could not be verified from this (offline) machine:
# the downloader records size and sha256 at first download and verifies them on every later fetch.
OFFICIAL_SOURCES: dict[str, OfficialSource] = {
    "hotpotqa": OfficialSource(
        name="hotpotqa",
        url="http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json",
        filename="hotpot_dev_distractor_v1.json",
        data_file="hotpot_dev_distractor_v1.json",
        homepage="https://hotpotqa.github.io/",
    ),
    "2wiki": OfficialSource(
        name="2wiki",
        url="https://www.dropbox.com/s/ms2m13252h6xubs/data_ids_april7.zip?dl=1",
        filename="data_ids_april7.zip",
        data_file="dev.json",
        member="dev.json",
        homepage="https://github.com/Alab-NII/2wikimultihop",
    ),
    "musique": OfficialSource(
        name="musique",
        url="https://drive.usercontent.google.com/download?id=1tGdADlNjWFaHLeZZGShh2IRcpO6Lv24h"
            "&export=download&confirm=t",
        filename="musique_v1.0.zip",
        data_file="musique_ans_v1.0_dev.jsonl",
        member="musique_ans_v1.0_dev.jsonl",
        homepage="https://github.com/StonyBrookNLP/musique",
    ),
}

SOURCE_ALIASES = {"hotpot": "hotpotqa", "2wikimultihopqa": "2wiki", "2wikimqa": "2wiki"}


def default_data_dir() -> Path:
    """`$TRAJSCOPE_DATA_DIR`, else ~/.cache/trajscope/datasets."""
    env = os.environ.get("TRAJSCOPE_DATA_DIR")
    return Path(env) if env else Path.home() / ".cache" / "trajscope" / "datasets"


def official_source(name: str) -> OfficialSource | None:
    """The official source for a dataset name or alias."""
    return OFFICIAL_SOURCES.get(SOURCE_ALIASES.get(name.lower(), name.lower()))


def fetched_path(source: OfficialSource, data_dir: Path | None = None) -> Path:
    """Where a fetched dev file lives."""
    return (data_dir or default_data_dir()) / source.name / source.data_file
