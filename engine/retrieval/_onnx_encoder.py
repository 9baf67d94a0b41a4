"""OnnxEncoder: a sentence-transformers encoder exported to ONNX, run by onnxruntime without torch."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

MODEL_FILE, TOKENIZER_FILE, META_FILE = "model.onnx", "tokenizer.json", "trajscope_onnx.json"
ONNX_FORMAT_VERSION = 1
POOLING_MODES = ("mean", "cls")


class OnnxEncoder:
    """Transformer + pooling (+ normalisation) of a sentence-transformers model, in fp32 onnxruntime."""

    def __init__(self, directory: str | Path, threads: int = 1):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        directory = Path(directory)
        self.meta: dict[str, Any] = json.loads((directory / META_FILE).read_text())
        if self.meta.get("format") != ONNX_FORMAT_VERSION or self.meta.get("pooling") not in POOLING_MODES:
            raise ValueError(f"{directory}: not a trajscope ONNX encoder of format {ONNX_FORMAT_VERSION}")
        self.tokenizer = Tokenizer.from_file(str(directory / TOKENIZER_FILE))
        self.tokenizer.enable_truncation(max_length=int(self.meta["max_seq_length"]))
        self.tokenizer.enable_padding(pad_id=int(self.meta["pad_id"]), pad_token=self.meta["pad_token"])
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        # Spinning workers make the query's many small parallel sections ~1.2 ms faster (2.7 vs 3.9 ms);
        # stopping the spin at the end of each run keeps the idle CPU cost near that of no spinning.
        options.add_session_config_entry("session.intra_op.allow_spinning", "1")
        options.add_session_config_entry("session.force_spinning_stop", "1")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(directory / MODEL_FILE), options, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.directory, self.threads = directory, threads

    def encode(self, texts: list[str], batch_size: int = 64, convert_to_numpy: bool = True,
               normalize_embeddings: bool = True, show_progress_bar: bool = False) -> np.ndarray:
        """One embedding row per text; the keywords mirror SentenceTransformer.encode's."""
        dim = int(self.meta["dim"])
        out = np.zeros((len(texts), dim), dtype=np.float32)
        # Length-sorted batches pad less; padding is masked out, so the vectors do not depend on it.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            out[rows] = self._embed_batch([texts[i] for i in rows])
        if normalize_embeddings or self.meta.get("normalize"):
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.where(norms == 0, 1, norms)
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64), "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        tokens = self.session.run(None, feeds)[0]
        if self.meta["pooling"] == "cls":
            return tokens[:, 0]
        weights = mask[..., None].astype(np.float32)
        return (tokens * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
