"""The bundled demo dataset: fictional multi-hop questions written for trajscope (no third-party text)."""
from __future__ import annotations

from pathlib import Path

from ingest.datasets import Dataset, read_dataset

from ._questions import SNIPPET_CHARS

DEMO_DIR = Path(__file__).parent  # the canonical files sit beside the modules (package data)


def load_demo() -> Dataset:
    """The demo dataset (name "demo") shipped in the package."""
    return read_dataset(DEMO_DIR)


__all__ = ["DEMO_DIR", "SNIPPET_CHARS", "load_demo"]
