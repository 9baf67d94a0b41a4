"""ChatModel: one async client for every OpenAI-compatible endpoint, with retries and a cache."""
from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any

import openai

try:  # the HTTP library this openai release is built on (httpx2 in openai 3.x, httpx before)
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older openai
    import httpx  # type: ignore[no-redef]

from trajscope.format import redact, redact_value, register_secret

from ._cache import ResponseCache, request_key
from ._completion import Completion, parse_json_object, parse_tool_call
from ._config import ModelConfig
from ._errors import ModelError, ModelErrorKind
from ._schema_bounds import bound_strings


class ReplyTooLarge(Exception):
    """The reply's bytes passed the configured cap while they were being read."""


class _CappedStream(httpx.AsyncByteStream):
    # Counts the body as it arrives, so an endless or huge reply stops at the cap, never held whole.
    def __init__(self, inner: httpx.AsyncByteStream, cap: int, cap_mb: float):
        self._inner, self._cap, self._cap_mb = inner, cap, cap_mb

    async def __aiter__(self):
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._cap:
                raise ReplyTooLarge(f"the reply passed the cap of {self._cap_mb:g} MB (max_reply_mb) while being read")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedTransport(httpx.AsyncBaseTransport):
    """The HTTP transport with every response body counted against max_reply_mb."""

    def __init__(self, cap_mb: float):
        self._inner = httpx.AsyncHTTPTransport()
        self._cap_mb, self._cap = cap_mb, int(cap_mb * 2**20)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > self._cap:
            await response.aclose()
            raise ReplyTooLarge(f"the reply declares {int(declared):,} bytes, over the cap of {self._cap_mb:g} MB "
                                "(max_reply_mb)")
        response.stream = _CappedStream(response.stream, self._cap, self._cap_mb)  # type: ignore[arg-type]
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def _cause(exc: BaseException | None, kind: type[BaseException]) -> BaseException | None:
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, kind):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


@dataclass
class ModelUsage:
    """Running totals over one ChatModel's lifetime."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    errors: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


class ChatModel:
    """Async chat completions over the openai SDK: retries with backoff, token cost, response cache."""

    def __init__(self, config: ModelConfig, *, cache: ResponseCache | None = None):
        if not config.base_url and config.local:
            raise ValueError("the embedded model has no base_url yet: start LocalModelServer first")
        self.config = config
        self.cache = cache
        register_secret(config.resolved_api_key())  # never written anywhere from now on
        self.usage = ModelUsage()
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=config.resolved_api_key(),
            timeout=config.timeout_s,
            max_retries=0,  # retries are ours: typed errors and a count we control
            http_client=openai.DefaultAsyncHttpxClient(transport=_CappedTransport(config.max_reply_mb),
                                                       timeout=config.timeout_s),
        )

    async def __aenter__(self) -> ChatModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.close()

    def build_request(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_schema: dict[str, Any] | None = None,
        **overrides: Any,
    ) -> dict[str, Any]:
        """The request body as sent (without the key): model, messages, tools, schema, decoding."""
        cfg = self.config
        request: dict[str, Any] = {"model": cfg.name, "messages": messages}
        decoding = {
            "temperature": cfg.temperature,
            "max_tokens": cfg.max_tokens,
            "reasoning_effort": cfg.reasoning_effort,
            "seed": cfg.seed,
        }
        decoding.update(overrides)
        request.update({k: v for k, v in decoding.items() if v is not None})
        if tools:
            request["tools"] = tools
        if response_schema is not None:
            if cfg.schema_format == "json_object":
                # llama-cpp-python's server compiles this schema into a grammar; bounded strings let every
                # reply close within max_tokens (a small model repeating itself inside one never did).
                if isinstance(request.get("max_tokens"), int):
                    response_schema = bound_strings(response_schema, request["max_tokens"])
                request["response_format"] = {"type": "json_object", "schema": response_schema}
            else:
                request["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "action", "schema": response_schema},
                }
        return request

    def cache_key(self, request: dict[str, Any]) -> str:
        """Hash of the request plus the endpoint identity (never the key)."""
        namespace = self.config.cache_namespace or self.config.base_url or "openai"
        return request_key({"namespace": namespace, "request": request})

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_schema: dict[str, Any] | None = None,
        **overrides: Any,
    ) -> Completion:
        """One chat completion; raises ModelError after the configured retries."""
        request = self.build_request(messages, tools=tools, response_schema=response_schema, **overrides)
        key = self.cache_key(request) if self.cache is not None else None
        if key is not None:
            stored = self.cache.get(key)  # type: ignore[union-attr]
            if stored is not None:
                self.usage.cache_hits += 1
                return self._completion(stored, cached=True, structured=response_schema is not None)
        body = await self._call_with_retries(request)
        completion = self._completion(body, cached=False, structured=response_schema is not None)
        self.usage.requests += 1
        self.usage.tokens_in += completion.tokens_in or 0
        self.usage.tokens_out += completion.tokens_out or 0
        self.usage.cost_usd += completion.cost_usd or 0.0
        if key is not None:
            self.cache.put(key, body)  # type: ignore[union-attr]
        return completion

    async def _call_with_retries(self, request: dict[str, Any]) -> dict[str, Any]:
        attempts = self.config.max_retries + 1
        # One deadline for the request, its retries and their back-off included: a per-attempt deadline let
        # an endpoint dripping bytes hold a question for every attempt in turn (4 x 180 s).
        deadline = time.monotonic() + self.config.deadline_s
        for attempt in range(1, attempts + 1):
            started = time.perf_counter()
            try:
                # The SDK's documented raw-request path: same auth, timeouts and typed HTTP errors, but
                # no per-call TypedDict transform of the messages (3 ms of CPU per call, measured).
                # The deadline is wall-clock: the read timeout restarts with every byte, so an endpoint
                # dripping headers or body would otherwise hold the run forever.
                response = await asyncio.wait_for(
                    self._client.post("/chat/completions", cast_to=dict, body=request),
                    max(0.0, deadline - time.monotonic()))
                if not isinstance(response, dict):
                    raise ValueError(f"response is not a JSON object: {str(response)[:200]}")
            except Exception as exc:  # noqa: BLE001 - classified and re-raised as ModelError
                error = self._classify(exc, attempt)
                pause = self._backoff(attempt, exc)
                if not error.retryable or attempt == attempts or time.monotonic() + pause >= deadline:
                    self.usage.errors += 1
                    raise error from None
                self.usage.retries += 1
                await asyncio.sleep(pause)
                continue
            latency_ms = (time.perf_counter() - started) * 1000
            # Redacted before anything keeps it: the cache, the Completion, hence the log and warehouse.
            return redact_value(_stored_body(response, latency_ms))
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int, exc: Exception) -> float:
        cfg = self.config
        delay = min(cfg.backoff_max_s, cfg.backoff_base_s * 2 ** (attempt - 1))
        retry_after = getattr(getattr(exc, "response", None), "headers", {}).get("retry-after")
        try:
            if retry_after is not None:
                delay = max(delay, min(cfg.backoff_max_s, float(retry_after)))
        except ValueError:
            pass
        return delay * (1 + random.random() * 0.25)

    def _classify(self, exc: Exception, attempt: int) -> ModelError:
        kind: ModelErrorKind
        status = None
        too_large = _cause(exc, ReplyTooLarge)
        if too_large is not None:
            return ModelError("too_large", self._redact(str(too_large)), attempts=attempt)
        if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
            return ModelError("timeout", f"the request did not complete within its deadline of "
                              f"{self.config.deadline_s:g} s (deadline_s), retries included", attempts=attempt)
        if isinstance(exc, openai.APITimeoutError):
            kind = "timeout"
        elif isinstance(exc, openai.APIConnectionError):
            # What happened to the connection (refused, reset, closed mid-reply), not the SDK's class name.
            reason = _cause(exc, OSError) or exc.__cause__ or exc
            return ModelError("connection", self._redact(f"the connection to {self.config.base_url} failed: "
                                                         f"{reason}"), attempts=attempt)
        elif isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status == 429:
                kind = "rate_limit"
            elif status >= 500:
                kind = "server_error"
            elif status in (401, 403):
                kind = "auth"
            else:
                kind = "bad_request"
        else:
            kind = "other"
        return ModelError(kind, self._redact(f"{type(exc).__name__}: {exc}"), status=status, attempts=attempt)

    def _redact(self, text: str) -> str:
        return redact(text)

    def _completion(self, body: dict[str, Any], *, cached: bool, structured: bool) -> Completion:
        tool_calls = [parse_tool_call(c["name"], c.get("arguments"), c.get("id")) for c in body["tool_calls"]]
        parsed, parse_error = parse_json_object(body["text"]) if structured else (None, None)
        return Completion(
            text=body["text"],
            tool_calls=tool_calls,
            tokens_in=body.get("tokens_in"),
            tokens_out=body.get("tokens_out"),
            latency_ms=body.get("latency_ms"),
            cost_usd=self.config.cost_usd(body.get("tokens_in"), body.get("tokens_out")),
            cached=cached,
            raw=body.get("raw", {}),
            parsed=parsed,
            parse_error=parse_error,
            finish_reason=body.get("finish_reason"),
        )


def _stored_body(response: dict[str, Any], latency_ms: float) -> dict[str, Any]:
    """The JSON-safe essence of an SDK response, as cached and as turned into a Completion."""
    raw = response
    choices = raw.get("choices") or [{}]
    message = choices[0].get("message") or {}
    calls = [
        {"name": (c.get("function") or {}).get("name", ""), "arguments": (c.get("function") or {}).get("arguments"),
         "id": c.get("id")}
        for c in message.get("tool_calls") or []
    ]
    usage = raw.get("usage") or {}
    return {
        "text": message.get("content") or "",
        "tool_calls": calls,
        "tokens_in": usage.get("prompt_tokens"),
        "tokens_out": usage.get("completion_tokens"),
        "latency_ms": latency_ms,
        "finish_reason": choices[0].get("finish_reason"),
        "raw": raw,
    }
