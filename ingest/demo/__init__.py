"""The bundled demo dataset: fictional multi-hop questions written for trajscope (no third-party text).

The canonical files sit beside these modules (package data); `ingest.datasets` reads them
(`load_demo`, re-exported here), and `build_demo` regenerates them.
"""
from trajscope.ingest.datasets import DEMO_DIR, load_demo

from ._questions import SNIPPET_CHARS

__all__ = ["DEMO_DIR", "SNIPPET_CHARS", "load_demo"]
