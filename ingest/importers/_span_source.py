"""Reading spans: OTLP JSON (resourceSpans) and flat OpenInference span records, grouped into traces."""
from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from trajscope.format import loads_bounded

from ._context import ImportContext
from ._fields import Where, need_list, need_object, opt_list, opt_object
from ._json_stream import iter_records

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class RawSpan:
    """One span with its attributes flattened to dotted keys."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int | None
    end_ns: int | None
    attributes: dict[str, Any]
    error: str | None
    where: Where
    kind: str | None = None  # a span kind given outside the attributes (Phoenix `span_kind`)


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested attribute objects/lists -> dotted keys (`retrieval.documents.0.document.id`)."""
    out = {} if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value
    return out


def any_value(value: Any, where: Where) -> Any:
    """Decode an OTLP JSON AnyValue (int64 arrives as a string)."""
    value = need_object(value, where)
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            raise where.error("intValue is not an integer", "intValue") from None
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        items = opt_list(opt_object(value, "arrayValue", where), "values", where.at("arrayValue"))
        return [any_value(v, where.at("arrayValue").at(i)) for i, v in enumerate(items)]
    if "kvlistValue" in value:
        pairs = opt_list(opt_object(value, "kvlistValue", where), "values", where.at("kvlistValue"))
        return {p["key"]: any_value(p.get("value", {}), where) for p in pairs if isinstance(p, dict)}
    if "bytesValue" in value:
        return base64.b64decode(value["bytesValue"]).hex()
    return None


def _ns(value: Any, where: Where, field: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, (int, str)) and str(value).isdigit():
        return int(value)
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise where.error("expected nanoseconds or an ISO-8601 time", field) from None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=UTC)
        return (stamp - _EPOCH) // timedelta(microseconds=1) * 1000
    raise where.error("expected nanoseconds or an ISO-8601 time", field)


def _need_id(span: dict[str, Any], key: str, where: Where) -> str:
    value = span.get(key)
    if not isinstance(value, str) or not value:
        raise where.error("missing span/trace id" if value is None else "expected a non-empty string id", key)
    return value


def _otlp_spans(request: Any, where: Where) -> Iterator[RawSpan]:
    request = need_object(request, where)
    for r, resource_spans in enumerate(need_list(request.get("resourceSpans"), where.at("resourceSpans"))):
        yield from _resource_spans(resource_spans, where.at("resourceSpans").at(r))


def _resource_spans(resource_spans: Any, rat: Where) -> Iterator[RawSpan]:
    """The spans of one resourceSpans item; `rat` is its location (a streamed item keeps its own index)."""
    for s, scope in enumerate(opt_list(need_object(resource_spans, rat), "scopeSpans", rat)):
        sat = rat.at("scopeSpans").at(s)
        for k, span in enumerate(opt_list(need_object(scope, sat), "spans", sat)):
            at = sat.at("spans").at(k)
            yield _otlp_span(need_object(span, at), at)


def _otlp_span(span: dict[str, Any], at: Where) -> RawSpan:
    attrs: dict[str, Any] = {}
    for i, kv in enumerate(opt_list(span, "attributes", at)):
        kat = at.at("attributes").at(i)
        kv = need_object(kv, kat)
        if not isinstance(kv.get("key"), str):
            raise kat.error("missing attribute key", "key")
        attrs[kv["key"]] = any_value(kv.get("value", {}), kat.at("value"))
    status = opt_object(span, "status", at)
    failed = status.get("code") in (2, "STATUS_CODE_ERROR")
    return RawSpan(trace_id=_need_id(span, "traceId", at), span_id=_need_id(span, "spanId", at),
                   parent_id=span.get("parentSpanId") or None, name=str(span.get("name") or ""),
                   start_ns=_ns(span.get("startTimeUnixNano"), at, "startTimeUnixNano"),
                   end_ns=_ns(span.get("endTimeUnixNano"), at, "endTimeUnixNano"), attributes=attrs,
                   error=(status.get("message") or "error") if failed else None, where=at)


def _flat_span(span: Any, at: Where) -> RawSpan:
    """Phoenix / OpenInference span JSON: {name, context{trace_id, span_id}, parent_id, span_kind, attributes}."""
    span = need_object(span, at)
    context = opt_object(span, "context", at)
    raw_attrs = span.get("attributes") or {}
    if isinstance(raw_attrs, str):
        try:
            raw_attrs = loads_bounded(raw_attrs, path=at.path, line=at.line, field=at.at("attributes").prefix)
        except json.JSONDecodeError:
            raise at.error("attributes is a string that is not JSON", "attributes") from None
    attrs = flatten(need_object(raw_attrs, at.at("attributes")))
    failed = str(span.get("status_code") or "").upper() == "ERROR"
    return RawSpan(trace_id=_need_id(context, "trace_id", at.at("context")),
                   span_id=_need_id(context, "span_id", at.at("context")),
                   parent_id=span.get("parent_id") or None, name=str(span.get("name") or ""),
                   start_ns=_ns(span.get("start_time"), at, "start_time"),
                   end_ns=_ns(span.get("end_time"), at, "end_time"), attributes=attrs,
                   error=(span.get("status_message") or "error") if failed else None, where=at,
                   kind=span.get("span_kind") if isinstance(span.get("span_kind"), str) else None)


def iter_spans(ctx: ImportContext) -> Iterator[RawSpan]:
    """Every span of the file: OTLP export requests (JSONL or one document) or flat span records."""
    for line, key, value in iter_records(ctx.path, frozenset({"resourceSpans"})):
        at = ctx.where(line, key or "")
        if key is not None and key.startswith("resourceSpans["):
            yield from _resource_spans(value, at)
        elif isinstance(value, dict) and "resourceSpans" in value:
            yield from _otlp_spans(value, at)
        elif isinstance(value, dict) and isinstance(value.get("data"), list):  # {"data": [span, ...]}
            for i, span in enumerate(value["data"]):
                yield _flat_span(span, at.at("data").at(i))
        else:
            yield _flat_span(value, at)


def iter_traces(spans: Iterator[RawSpan]) -> Iterator[list[RawSpan]]:
    """Group spans into traces with bounded memory.

    A trace is complete once its root span has been read and a span of another trace follows (or the
    file ends). Exporters write a span when it ends, so roots come last; root-first files must keep
    each trace contiguous. A span of an already completed trace is an error.
    """
    pending: dict[str, list[RawSpan]] = {}
    rooted: set[str] = set()
    closed: set[str] = set()
    for span in spans:
        if span.trace_id in closed:
            raise span.where.error(f"span of trace {span.trace_id} comes after that trace was completed; "
                                   "keep the spans of a trace together (sort by trace)", "traceId")
        for done in [t for t in rooted if t != span.trace_id]:
            rooted.discard(done)
            closed.add(done)
            yield pending.pop(done)
        pending.setdefault(span.trace_id, []).append(span)
        if span.parent_id is None:
            rooted.add(span.trace_id)
    for trace_id in list(pending):
        yield pending.pop(trace_id)
