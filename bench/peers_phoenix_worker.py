"""bench/peers.py's Phoenix side, run in .venv-peers (arize-phoenix pins OpenTelemetry below the main venv's).

  generate OTLP N   N questions of a scripted search/read agent on the openai SDK against the loopback mock server,
                    traced by the real openinference-instrumentation-openai (LLM spans) and OpenInference's OITracer
                    (AGENT, TOOL, RETRIEVER spans); the OTLP export requests are kept, length-prefixed, in OTLP
  load OTLP URL M   send them to the Phoenix server at URL as OTLP/HTTP, wait until it stores all M spans, read
                    them back with phoenix.client's get_spans_dataframe; prints times and counts as JSON
  export URL JSONL  Phoenix's own export of the stored spans (TraceDataset.to_spans, span JSON encoder), one a line
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

TOOLS = [
    {"type": "function", "function": {
        "name": "search", "description": "Search the document collection; returns the 3 best chunk ids with scores.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "search query"}},
                       "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "read", "description": "Read the full text of one chunk by id.",
        "parameters": {"type": "object", "properties": {"chunk_id": {"type": "string", "description": "chunk id"}},
                       "required": ["chunk_id"]}}},
]
SYSTEM = ("You are a careful research assistant. Answer the user's question using only the document collection. "
          "Use `search` to find candidate chunks and `read` to read a chunk's full text before answering.")
COUNT_SPANS = "query { projects { edges { node { name recordCount } } } }"
DEADLINE_S = 3600


def _chunks(q: int) -> list[dict[str, Any]]:
    """Question q's three chunks: the bridge entity, the answer's page, a distractor."""
    return [
        {"chunk_id": f"c{q}-1", "title": f"Bridge {q}",
         "text": f"Bridge {q} spans the river in the city of Mirelow {q}. It was designed by the engineer Person {q}."},
        {"chunk_id": f"c{q}-2", "title": f"Person {q}",
         "text": f"Person {q} was a civil engineer born in the coastal town of Town {q}, and studied at Aldgrave."},
        {"chunk_id": f"c{q}-3", "title": f"Mirelow {q}", "text": f"Mirelow {q} is a river city with many bridges."},
    ]


def _gold(q: int) -> str:
    return f"Town {q}"


def _answer(q: int) -> str:
    return _gold(q) if q % 5 != 4 else f"Mirelow {q}"  # four in five right


def _script(request: Any) -> Any:
    """The model's next turn, from the tool results the request already holds: search, read, read, answer."""
    from trajscope.engine.mock_llm import reply_text, reply_tool_call

    q = int(request.body["metadata"]["q"])
    done = sum(1 for m in request.messages if m.get("role") == "tool")
    tokens_in = 60 + 40 * done
    if done == 0:
        return reply_tool_call("search", {"query": f"Bridge {q} designer engineer"}, tokens_in=tokens_in)
    if done in (1, 2):
        return reply_tool_call("read", {"chunk_id": f"c{q}-{done}"}, tokens_in=tokens_in)
    return reply_text(_answer(q), tokens_in=tokens_in)


def generate(otlp_path: Path, n: int) -> None:
    from openai import OpenAI
    from openinference.instrumentation import OITracer, TraceConfig, using_session
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    from trajscope.engine.mock_llm import MockLLMServer

    class OtlpFileExporter(SpanExporter):
        """The OTLP exporter's request bodies, written to a file instead of a socket."""

        def __init__(self, path: Path) -> None:
            self.file, self.spans = path.open("wb"), 0

        def export(self, spans: Any) -> SpanExportResult:
            body = encode_spans(spans).SerializeToString()
            self.file.write(len(body).to_bytes(4, "big") + body)
            self.spans += len(spans)
            return SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            self.file.close()

    exporter = OtlpFileExporter(otlp_path)
    provider = TracerProvider()
    # A queue as large as the run: the default 2,048 drops spans whenever the agent outpaces the exporter.
    provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=16 * n + 1024, max_export_batch_size=512))
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tracer = OITracer(provider.get_tracer("peers-agent"), config=TraceConfig())
    start = time.perf_counter()
    with MockLLMServer(_script) as server:
        client = OpenAI(base_url=server.base_url, api_key="loopback", max_retries=0)
        for q in range(n):
            _one_question(client, tracer, using_session, q)
    provider.shutdown()
    print(json.dumps({"traces": n, "spans": exporter.spans, "seconds": round(time.perf_counter() - start, 2)}))


def _one_question(client: Any, tracer: Any, using_session: Any, q: int) -> None:
    question = f"Question {q}: in which town was the engineer who designed Bridge {q} born?"
    chunks = {c["chunk_id"]: c for c in _chunks(q)}
    with (using_session(f"session-q{q}"),
          tracer.start_as_current_span("rag_agent", openinference_span_kind="agent") as agent):
        agent.set_input(question)
        agent.set_attributes({"agent.name": "rag_agent",
                              "metadata": json.dumps({"question_id": f"q{q}", "gold_answer": _gold(q)})})
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
        while True:
            reply = client.chat.completions.create(model="mock-gpt-4o-mini", messages=messages, tools=TOOLS,
                                                   temperature=0.0, metadata={"q": str(q)})
            message = reply.choices[0].message
            if not message.tool_calls:
                agent.set_output(message.content)
                return
            call = message.tool_calls[0]
            messages.append({"role": "assistant", "content": message.content, "tool_calls": [call.model_dump()]})
            arguments = json.loads(call.function.arguments)
            with tracer.start_as_current_span(call.function.name, openinference_span_kind="tool") as tool:
                spec = next(t["function"] for t in TOOLS if t["function"]["name"] == call.function.name)
                tool.set_tool(name=spec["name"], description=spec["description"], parameters=spec["parameters"])
                tool.set_input(call.function.arguments, mime_type="application/json")
                if call.function.name == "search":
                    result = _search(tracer, arguments["query"], list(chunks.values()))
                else:
                    result = json.dumps(chunks[arguments["chunk_id"]])
                tool.set_output(result, mime_type="application/json")
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def _search(tracer: Any, query: str, chunks: list[dict[str, Any]]) -> str:
    scores = [2.4779, 0.4479, 0.2213]
    with tracer.start_as_current_span("retrieve", openinference_span_kind="retriever") as retriever:
        retriever.set_input(query)
        for i, (chunk, score) in enumerate(zip(chunks, scores, strict=True)):
            prefix = f"retrieval.documents.{i}.document"
            retriever.set_attributes({f"{prefix}.id": chunk["chunk_id"], f"{prefix}.content": chunk["text"],
                                      f"{prefix}.score": score,
                                      f"{prefix}.metadata": json.dumps({"title": chunk["title"]})})
    return json.dumps({"results": [{"chunk_id": c["chunk_id"], "title": c["title"], "score": s}
                                   for c, s in zip(chunks, scores, strict=True)]})


def _stored_spans(http: Any) -> int:
    projects = http.post("/graphql", json={"query": COUNT_SPANS}).json()["data"]["projects"]["edges"]
    return sum(p["node"]["recordCount"] for p in projects)


def load(otlp_path: Path, url: str, n_spans: int) -> None:
    import httpx
    from phoenix.client import Client

    start = time.perf_counter()
    with httpx.Client(base_url=url, timeout=600) as http:
        with otlp_path.open("rb") as f:
            while header := f.read(4):
                body = f.read(int.from_bytes(header, "big"))
                # 503: Phoenix's insert queue is full; the OTLP exporter backs off and sends again, so do we.
                while (sent := http.post("/v1/traces", content=body,
                                         headers={"content-type": "application/x-protobuf"})).status_code == 503:
                    time.sleep(0.05)
                sent.raise_for_status()
        # Phoenix accepts a request once queued and inserts it in the background: loaded once it counts them all.
        while (stored := _stored_spans(http)) < n_spans:
            if time.perf_counter() - start > DEADLINE_S:
                sys.exit(f"Phoenix stored {stored:,} of {n_spans:,} spans after {DEADLINE_S} s")
            time.sleep(0.25)
    loaded = time.perf_counter()
    df = Client(base_url=url).spans.get_spans_dataframe(project_identifier="default", limit=n_spans + 1,
                                                       timeout=DEADLINE_S)
    read = time.perf_counter()
    print(json.dumps({"load_s": round(loaded - start, 3), "read_s": round(read - loaded, 3), **_counts(df)}))


def _counts(df: Any) -> dict[str, Any]:
    """What the span dataframe says: traces, spans, tool calls by name, tokens, and the root answers' accuracy."""
    tools = df.loc[df["span_kind"] == "TOOL", "attributes.tool.name"].value_counts()
    roots = df[df["parent_id"].isna()]
    gold = roots["attributes.metadata"].map(lambda m: (json.loads(m) if isinstance(m, str) else m)["gold_answer"])
    return {"traces": int(df["context.trace_id"].nunique()), "spans": len(df),
            "search": int(tools.get("search", 0)), "read": int(tools.get("read", 0)),
            "tokens_in": int(df["attributes.llm.token_count.prompt"].fillna(0).sum()),
            "tokens_out": int(df["attributes.llm.token_count.completion"].fillna(0).sum()),
            "em": round(float((roots["attributes.output.value"] == gold).mean()), 6)}


def export(url: str, jsonl_path: Path) -> None:
    from phoenix.client import Client
    from phoenix.trace import TraceDataset
    from phoenix.trace.span_json_encoder import span_to_json

    df = Client(base_url=url).spans.get_spans_dataframe(project_identifier="default", limit=10**9, timeout=DEADLINE_S)
    with jsonl_path.open("w") as out:
        for span in TraceDataset(df).to_spans():
            out.write(span_to_json(span) + "\n")


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    if command == "generate":
        generate(Path(rest[0]), int(rest[1]))
    elif command == "load":
        load(Path(rest[0]), rest[1], int(rest[2]))
    elif command == "export":
        export(rest[0], Path(rest[1]))
    else:
        sys.exit(f"unknown command {command!r}: generate, load or export")
