"""Export a loaded sentence-transformers model to an OnnxEncoder folder and verify it reproduces torch."""
from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ._onnx_encoder import META_FILE, MODEL_FILE, ONNX_FORMAT_VERSION, POOLING_MODES, TOKENIZER_FILE, OnnxEncoder

MIN_COSINE = 0.9999
# Short, accented, padded-in-batch and over-length texts: the cases where a re-implemented
# tokenizer, pooling or truncation would drift from sentence-transformers.
PROBE_TEXTS = [
    "Who was born first, Ada Lovelace or Charles Babbage?",
    "café naïve Zürich 東京",
    "  leading and trailing spaces  ",
    "What is the capital of the country where the director of Inception was born? " * 40,
    "x",
]


class UnsupportedModel(ValueError):
    """The model's module layout has no faithful ONNX counterpart here; the torch encoder stays in use."""


def _layout(encoder: Any) -> tuple[str, bool]:
    """(pooling mode, normalises) for a Transformer -> Pooling [-> Normalize] model, else UnsupportedModel."""
    names = [type(module).__name__ for module in encoder]
    if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise UnsupportedModel(f"module layout {names} is not Transformer, Pooling[, Normalize]")
    pooling = getattr(encoder[1], "pooling_mode", None)
    if pooling not in POOLING_MODES:
        raise UnsupportedModel(f"pooling mode {pooling!r} is not one of {POOLING_MODES}")
    if getattr(encoder[0], "do_lower_case", False) or getattr(encoder, "default_prompt_name", None):
        raise UnsupportedModel("lower-casing or a default prompt is applied outside the tokenizer")
    if (getattr(encoder, "prompts", None) or {}).get("query"):
        # The export encodes raw text; the query prompt (and whether pooling skips it) stays with torch.
        raise UnsupportedModel("the model prepends a query prompt")
    if getattr(encoder.tokenizer, "padding_side", "right") != "right":
        raise UnsupportedModel("left-padding tokenizers are not exported")
    return pooling, len(names) == 3


def _export_graph(encoder: Any, path: Path) -> None:
    """Trace the transformer to ONNX (fp32, dynamic batch and sequence) with eager attention."""
    import torch

    model = copy.deepcopy(encoder[0].auto_model).eval().to("cpu")
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation("eager")  # the pattern onnxruntime's optimiser fuses into Attention
    input_names = [n for n in ("input_ids", "attention_mask", "token_type_ids")
                   if n in encoder.tokenizer.model_input_names]

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.model(**dict(zip(input_names, inputs, strict=False))).last_hidden_state

    sample = encoder.tokenizer(["a short probe", "a somewhat longer probe sentence"], padding=True,
                               return_tensors="pt")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about shape-dependent Python branches
        torch.onnx.export(LastHiddenState(), tuple(sample[n] for n in input_names), str(path),
                          input_names=input_names, output_names=["token_embeddings"],
                          dynamic_axes={n: {0: "batch", 1: "sequence"} for n in [*input_names, "token_embeddings"]},
                          opset_version=17, dynamo=False)


def _fuse(path: Path, config: Any) -> None:
    """Rewrite the graph with onnxruntime's transformer fusions (Attention, SkipLayerNorm, Gelu),
    when onnxruntime knows the architecture."""
    from onnxruntime.transformers import optimizer

    if config.model_type not in optimizer.MODEL_TYPES:
        return
    # opt_level 0: graph-level fusions only, so the file stays portable across CPUs.
    fused = optimizer.optimize_model(str(path), model_type=config.model_type, opt_level=0, use_gpu=False,
                                     num_heads=getattr(config, "num_attention_heads", 0),
                                     hidden_size=getattr(config, "hidden_size", 0))
    fused.save_model_to_file(str(path))


def export_onnx_encoder(encoder: Any, directory: Path, threads: int = 1) -> OnnxEncoder:
    """Write model.onnx, tokenizer.json and metadata for a SentenceTransformer into directory.

    Raises UnsupportedModel for layouts it cannot reproduce, and when the exported encoder's vectors
    differ from the torch encoder's (cosine below MIN_COSINE on the probe texts).
    """
    pooling, normalize = _layout(encoder)
    backend_tokenizer = getattr(encoder.tokenizer, "backend_tokenizer", None)
    if backend_tokenizer is None:
        raise UnsupportedModel("the model has no fast (tokenizers) tokenizer")
    _export_graph(encoder, directory / MODEL_FILE)
    fused_ok = True
    try:
        _fuse(directory / MODEL_FILE, encoder[0].auto_model.config)
    except Exception:  # fusion is an optimisation only; the plain export is still exact
        fused_ok = False
        _export_graph(encoder, directory / MODEL_FILE)
    backend_tokenizer.save(str(directory / TOKENIZER_FILE))
    meta = {"format": ONNX_FORMAT_VERSION, "pooling": pooling, "normalize": normalize,
            "max_seq_length": int(encoder.max_seq_length), "dim": _embedding_dimension(encoder),
            "pad_id": int(encoder.tokenizer.pad_token_id), "pad_token": str(encoder.tokenizer.pad_token),
            "fused": fused_ok}
    (directory / META_FILE).write_text(json.dumps(meta))
    onnx_encoder = OnnxEncoder(directory, threads)
    cosine = probe_cosine(encoder, onnx_encoder)
    if cosine < MIN_COSINE:
        raise UnsupportedModel(f"ONNX vectors differ from torch: min cosine {cosine:.6f} < {MIN_COSINE}")
    meta["min_probe_cosine"] = cosine
    (directory / META_FILE).write_text(json.dumps(meta))
    return onnx_encoder


def _embedding_dimension(encoder: Any) -> int:
    # sentence-transformers 6 renamed get_sentence_embedding_dimension to get_embedding_dimension.
    method = getattr(encoder, "get_embedding_dimension", None) or encoder.get_sentence_embedding_dimension
    return int(method())


def probe_cosine(reference: Any, candidate: Any, texts: list[str] | None = None) -> float:
    """Smallest cosine between two encoders' vectors over texts (default: the probe texts), in one batch."""
    texts = texts or PROBE_TEXTS
    kwargs = {"convert_to_numpy": True, "normalize_embeddings": True, "show_progress_bar": False}
    a = np.asarray(reference.encode(texts, **kwargs), dtype=np.float64)
    b = np.asarray(candidate.encode(texts, **kwargs), dtype=np.float64)
    cosines = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return float(cosines.min())
