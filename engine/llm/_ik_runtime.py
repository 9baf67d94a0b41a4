"""The embedded model on ik_llama.cpp's prebuilt wheel: prompt in, grammar-constrained text out.

ik-llama-cpp-python ships a manylinux wheel, so set-up compiles nothing (llama-cpp-python builds from
source here: BENCHMARKS.md). Its own generate() loop lacks grammars, stops, seeds and prompt reuse,
so this module drives the library's C API directly: greedy or seeded sampling in numpy, llama.cpp's
GBNF grammar sampler, and the KV cache kept across calls for the prompt prefix they share.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_TOKEN_DATA = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])


class IkRuntimeError(RuntimeError):
    """The ik_llama.cpp library is missing, or a model call failed."""


def _api():
    try:
        from ik_llama_cpp import _ctypes_api as api
        from ik_llama_cpp._internals import IkModel, make_batch_range
    except ImportError as exc:
        raise IkRuntimeError(f"the embedded runtime needs ik-llama-cpp-python: {exc}") from None
    lib = api._lib
    for name, args, res in (
        ("llama_sampler_init_grammar", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p], ctypes.c_void_p),
        ("llama_sample_grammar", [ctypes.c_void_p, ctypes.POINTER(api.llama_token_data_array), ctypes.c_void_p],
         None),
        ("llama_grammar_accept_token", [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32], None),
        ("llama_grammar_free", [ctypes.c_void_p], None),
        ("llama_kv_cache_seq_rm", [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32], ctypes.c_bool),
        ("llama_model_meta_val_str", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t],
         ctypes.c_int32),
        ("llama_token_bos", [ctypes.c_void_p], ctypes.c_int32),
        ("llama_token_eos", [ctypes.c_void_p], ctypes.c_int32),
    ):
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res
    return api, lib, IkModel, make_batch_range


@dataclass(frozen=True)
class Generation:
    """What one call produced: the text, token counts and why it ended ("stop" or "length")."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str


# Prompt chunks of 32 tokens or more take a GEMM path that computes wrong logits on this project's
# CPUs (0.64 correlation with llama-cpp-python's on a 42-token prompt; 0.9993 at 24 and below, as
# token by token): so prompts are evaluated 16 tokens at a time, measured still 1.5x faster.
UBATCH = 16


class _Context:
    """A llama_context with trajscope's batch sizes (the library's wrapper fixes n_ubatch at 512)."""

    def __init__(self, api, model: int, *, n_ctx: int, n_threads: int):
        params = api.llama_context_default_params()
        params.n_ctx, params.n_batch, params.n_ubatch = n_ctx, n_ctx, UBATCH
        params.n_threads = params.n_threads_batch = n_threads
        params.flash_attn = False
        self.api = api
        self.ctx = api.llama_init_from_model(model, params)
        if not self.ctx:
            raise IkRuntimeError("llama_init_from_model failed (out of memory, or a bad context size)")

    def decode(self, batch) -> int:
        return self.api.llama_decode(self.ctx, batch)

    def get_logits(self, index: int):
        return self.api.llama_get_logits_ith(self.ctx, index)

    def close(self) -> None:
        if self.ctx:
            self.api.llama_free(self.ctx)
            self.ctx = None


class IkRuntime:
    """One loaded GGUF model and context; calls are serial (the server holds a lock around them)."""

    def __init__(self, model_path: str | Path, *, n_ctx: int = 4096, n_threads: int = 1):
        self.api, self.lib, model_cls, self._batch = _api()
        self.model = model_cls(str(model_path))
        self.context = _Context(self.api, self.model.model, n_ctx=n_ctx, n_threads=n_threads)
        self.n_ctx, self.n_vocab = n_ctx, self.model.n_vocab
        # The grammar sampler's candidate array: ids fixed, logits refilled each token.
        self._candidates = np.zeros(self.n_vocab, dtype=_TOKEN_DATA)
        self._candidates["id"] = np.arange(self.n_vocab, dtype=np.int32)
        self._cached: list[int] = []  # the tokens whose keys and values the context holds

    def metadata(self, key: str) -> str | None:
        """A GGUF metadata value as text (None when the file lacks the key)."""
        size = 1 << 16
        buf = ctypes.create_string_buffer(size)
        n = self.lib.llama_model_meta_val_str(self.model.model, key.encode(), buf, size)
        return None if n < 0 else buf.raw[:min(n, size - 1)].decode("utf-8", errors="replace")

    def special_text(self, token: int) -> str:
        """The text of a special token (BOS, EOS) as a chat template writes it."""
        return self.model.detokenize([token], special=True) if token >= 0 else ""

    @property
    def bos_token(self) -> str:
        return self.special_text(self.lib.llama_token_bos(self.model.model))

    @property
    def eos_token(self) -> str:
        return self.special_text(self.lib.llama_token_eos(self.model.model))

    def tokenize(self, text: str, *, add_bos: bool = False) -> list[int]:
        """The prompt's tokens, special tokens parsed; BOS only when asked (a GGUF template writes its own)."""
        return self.model.tokenize(text, add_bos=add_bos, special=True)

    def _evaluate(self, tokens: list[int]) -> None:
        # Keep the longest prefix already in the context; at least one token is evaluated for logits.
        keep = 0
        for old, new in zip(self._cached, tokens[:-1], strict=False):
            if old != new:
                break
            keep += 1
        self.lib.llama_kv_cache_seq_rm(self.context.ctx, 0, keep, -1)
        self._cached = tokens[:keep]
        for start in range(keep, len(tokens), UBATCH):
            self._decode(tokens[start:start + UBATCH], start)

    def _decode(self, chunk: list[int], position: int) -> None:
        batch = self._batch(chunk, pos_start=position, logits_last=True)
        try:
            code = self.context.decode(batch)
        finally:
            self.api.llama_batch_free(batch)
        if code != 0:
            self._cached = []
            raise IkRuntimeError(f"llama_decode failed at position {position} ({len(chunk)} tokens): {code}")
        self._cached.extend(chunk)

    def _next_token(self, grammar: int | None, temperature: float, rng: np.random.Generator) -> int:
        logits = np.ctypeslib.as_array(self.context.get_logits(-1), shape=(self.n_vocab,))
        if grammar is not None:
            candidates = self._candidates
            candidates["logit"], candidates["p"] = logits, 0.0
            array = self.api.llama_token_data_array(
                candidates.ctypes.data_as(ctypes.POINTER(self.api.llama_token_data)), self.n_vocab, -1, False)
            self.lib.llama_sample_grammar(self.context.ctx, ctypes.byref(array), grammar)
            logits = candidates["logit"]
        if temperature <= 0:
            return int(np.argmax(logits))
        return _sample(logits, temperature, rng)

    def generate(self, prompt: str, *, max_tokens: int = 256, grammar: str | None = None,
                 temperature: float = 0.0, seed: int | None = None, stop: list[str] | None = None,
                 add_bos: bool = False) -> Generation:
        """Complete prompt (already rendered by the chat template) under an optional GBNF grammar."""
        tokens = self.tokenize(prompt, add_bos=add_bos)
        room = self.n_ctx - len(tokens)
        if room < 1:
            raise IkRuntimeError(f"the prompt has {len(tokens)} tokens; the context holds {self.n_ctx}")
        handle = None
        if grammar is not None:
            handle = self.lib.llama_sampler_init_grammar(self.api.llama_model_get_vocab(self.model.model),
                                                         grammar.encode(), b"root")
            if not handle:
                raise IkRuntimeError("the grammar did not parse (llama.cpp's log names the rule)")
        rng = np.random.default_rng(seed)
        out, finish = bytearray(), "length"
        generated: list[int] = []
        try:
            self._evaluate(tokens)
            for _ in range(min(max_tokens, room)):
                token = self._next_token(handle, temperature, rng)
                if self.api.llama_token_is_eog(self.model.model, token):
                    finish = "stop"
                    break
                if handle is not None:
                    self.lib.llama_grammar_accept_token(handle, self.context.ctx, token)
                generated.append(token)
                out += _piece(self.api, self.model.model, token)
                text = out.decode("utf-8", errors="ignore")
                if stop and any(s in text for s in stop):
                    finish = "stop"
                    break
                self._decode([token], len(self._cached))
        finally:
            if handle is not None:
                self.lib.llama_grammar_free(handle)
        text = out.decode("utf-8", errors="replace")
        for s in stop or ():
            text = text.split(s, 1)[0]
        return Generation(text, len(tokens), len(generated), finish)

    def close(self) -> None:
        """Free the context and the model."""
        self.context.close()
        self.model.close()


def _piece(api, model: int, token: int) -> bytes:
    buf = ctypes.create_string_buffer(256)
    n = api.llama_token_to_piece(model, token, buf, 256, 0, False)
    return buf.raw[:n] if n > 0 else b""


def _sample(logits: np.ndarray, temperature: float, rng: np.random.Generator, top_k: int = 40,
            top_p: float = 0.95) -> int:
    """llama.cpp's default chain (top-k 40, top-p 0.95, temperature) with a seeded generator."""
    order = np.argsort(logits)[::-1][:top_k]
    scaled = logits[order].astype(np.float64) / temperature
    probs = np.exp(scaled - scaled.max())
    probs /= probs.sum()
    keep = int(np.searchsorted(np.cumsum(probs), top_p) + 1)
    probs = probs[:keep] / probs[:keep].sum()
    return int(order[rng.choice(keep, p=probs)])
