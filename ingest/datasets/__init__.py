"""Benchmark dataset loaders: canonical questions and corpus chunks with gold passages matched to chunks."""
from ._canonical import is_canonical_dir, read_dataset, write_dataset
from ._dataset import Dataset
from ._detect import FORMATS, ResolvedSource, load_dataset, load_demo, resolve_source
from ._download import FetchError, FetchResult, fetch_source, sha256_of
from ._errors import DatasetError
from ._loaders import load_corpus
from ._matching import FINGERPRINT_CHARS, GoldMatcher, GoldRef, fingerprint, normalise_text
from ._sample import sample_dataset
from ._sources import DEMO_DIR, OFFICIAL_SOURCES, OfficialSource, default_data_dir, fetched_path, official_source

__all__ = [
    "DEMO_DIR", "Dataset", "DatasetError", "FetchError", "FetchResult", "FINGERPRINT_CHARS", "FORMATS", "GoldMatcher",
    "GoldRef", "OFFICIAL_SOURCES", "OfficialSource", "ResolvedSource", "default_data_dir", "fetch_source",
    "fetched_path", "fingerprint", "is_canonical_dir", "load_corpus", "load_dataset", "load_demo", "normalise_text",
    "official_source", "read_dataset", "resolve_source", "sample_dataset", "sha256_of", "write_dataset",
]
