"""Where the official dev sets live online and where `trajscope data fetch` puts them."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# The bundled demo set is package data of `ingest.demo`, which builds it with this package's
# writer; it is read from that directory here, so the loader never imports the builder.
DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"


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


# HotpotQA's size and sha256 are the ones the Hugging Face `datasets` loader publishes for this URL
# (datasets/hotpot_qa/dataset_infos.json), so a first download is verified too. No published
# checksum was found for the 2Wiki and MuSiQue archives: for those the downloader records size and
# sha256 at first download and verifies them on every later fetch.
OFFICIAL_SOURCES: dict[str, OfficialSource] = {
    "hotpotqa": OfficialSource(
        name="hotpotqa",
        url="http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json",
        filename="hotpot_dev_distractor_v1.json",
        data_file="hotpot_dev_distractor_v1.json",
        homepage="https://hotpotqa.github.io/",
        sha256="4e9ecb5c8d3b719f624d66b60f8d56bf227f03914f5f0753d6fa1b359d7104ea",
        size=46320117,
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
