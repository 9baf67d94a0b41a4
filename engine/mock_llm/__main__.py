"""`python -m trajscope.engine.mock_llm --latency 0.2 --steps 3`: a mock endpoint in its own process (benchmarks).

Each conversation gets `search` tool calls until it has steps-1 assistant turns, then `final`.
Prints `READY <base_url>` once serving.
"""
from __future__ import annotations

import argparse
import signal
import threading

from ._replies import reply_tool_call
from ._server import MockLLMServer, RecordedRequest


def scripted_agent(steps: int):
    """A responder that plays a fixed-length search...final episode for every conversation."""

    def respond(request: RecordedRequest):
        turns = sum(1 for m in request.messages if m.get("role") == "assistant")
        if turns + 1 >= steps:
            return reply_tool_call("final", {"answer": "mock answer"}, tokens_in=200, tokens_out=10)
        return reply_tool_call("search", {"query": f"query {turns}"}, tokens_in=200, tokens_out=10)

    return respond


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds added to every answer")
    parser.add_argument("--steps", type=int, default=3, help="model calls per episode")
    args = parser.parse_args()
    server = MockLLMServer(scripted_agent(args.steps), latency_s=args.latency).start()
    print(f"READY {server.base_url}", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    server.stop()


if __name__ == "__main__":
    main()
