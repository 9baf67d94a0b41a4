"""Shared fixtures: a scripted loopback OpenAI-compatible server."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from trajscope.engine.mock_llm import MockLLMServer


@pytest.fixture
def mock_llm() -> Iterator[MockLLMServer]:
    """A started MockLLMServer; script it with `.enqueue(...)` or `.responder = fn`."""
    with MockLLMServer() as server:
        yield server
