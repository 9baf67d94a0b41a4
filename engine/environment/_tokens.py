"""The environment's token estimate: cheap, deterministic, tokenizer-free."""
from __future__ import annotations

import math

TOKENS_PER_WORD = 1.3


def estimate_tokens(text: str | None) -> int:
    """ceil(whitespace-separated words x 1.3): close to BPE counts for English prose, same on every machine."""
    if not text:
        return 0
    return math.ceil(len(text.split()) * TOKENS_PER_WORD)
