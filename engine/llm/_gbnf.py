"""JSON Schema to a llama.cpp GBNF grammar, for the embedded runtime's constrained replies.

Covers what trajscope's controllers, judges and scanners ask for (objects, anyOf/oneOf, const, enum,
strings, numbers, booleans, arrays); anything else becomes "any JSON value" rather than an error.
As in llama.cpp's own converter, an object admits only its listed properties (required ones first),
and maxLength and maxItems bound strings and arrays.
Whitespace is at most one space between tokens: a small model under a grammar that admits newlines
can spend its whole token budget on them.
"""
from __future__ import annotations

import json
from typing import Any

# Any JSON value (what `response_format: json_object` without a schema asks for).
_VALUE_RULES = {
    "space": '" "?',
    "string": r'"\"" char* "\"" space',
    "char": r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])',
    "integer": '"-"? ("0" | [1-9] ' + "".join("([0-9] " for _ in range(15)) + ")?" * 15 + ") space",
    "number": '"-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)? space',
    "boolean": '("true" | "false") space',
    "null": '"null" space',
    "value": "object | array | string | number | boolean | null",
    "object": '"{" space (string ":" space value ("," space string ":" space value)*)? "}" space',
    "array": '"[" space (value ("," space value)*)? "]" space',
}
_PRIMITIVES = {"string", "integer", "number", "boolean", "null", "object", "array"}


def literal(value: Any) -> str:
    """A GBNF literal matching the JSON text of value exactly."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


class _Converter:
    def __init__(self) -> None:
        self.rules: dict[str, str] = {}
        self.count = 0

    def add(self, body: str) -> str:
        self.count += 1
        name = f"r{self.count}"
        self.rules[name] = body
        return name

    def visit(self, schema: Any) -> str:
        """The name of a rule matching schema (a generic rule where the schema says nothing usable)."""
        if not isinstance(schema, dict) or not schema:
            return "value"
        if "const" in schema:
            return self.add(f"{literal(schema['const'])} space")
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self.add("(" + " | ".join(literal(v) for v in schema["enum"]) + ") space")
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return self.add(" | ".join(self.visit(s) for s in schema[key]))
        kind = schema.get("type")
        if isinstance(kind, list):
            return self.add(" | ".join(self.visit({**schema, "type": k}) for k in kind)) if kind else "value"
        if kind == "object" or (kind is None and "properties" in schema):
            return self.visit_object(schema)
        if kind == "array":
            return self.visit_array(schema)
        if kind == "string" and isinstance(schema.get("maxLength"), int):
            return self.add(f'"\\"" {self.chars(schema["maxLength"])} "\\"" space')
        return kind if kind in _PRIMITIVES else "value"

    def chars(self, n: int) -> str:
        """A rule for at most n string characters (a chain shared by every maxLength)."""
        if n <= 0:
            return '""'
        for k in range(1, n + 1):
            self.rules.setdefault(f"chars{k}", "char?" if k == 1 else f"(char chars{k - 1})?")
        return f"chars{n}"

    def visit_object(self, schema: dict[str, Any]) -> str:
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            extra = schema.get("additionalProperties")
            if extra is False:
                return self.add('"{" space "}" space')
            return "object" if not isinstance(extra, dict) else self.add(
                f'"{{" space (string ":" space {self.visit(extra)} ("," space string ":" space '
                f'{self.visit(extra)})*)? "}}" space')
        required = [k for k in properties if k in set(schema.get("required") or ())]
        optional = [k for k in properties if k not in required]
        pair = {k: f'{literal(k)} space ":" space {self.visit(properties[k])}' for k in properties}
        if required:
            body = ' "," space '.join(pair[k] for k in required)
            body += "".join(f' ("," space {pair[k]})?' for k in optional)
        else:
            # Any in-order subset of the optional properties, the empty one included.
            starts = [pair[k] + "".join(f' ("," space {pair[m]})?' for m in optional[i + 1:])
                      for i, k in enumerate(optional)]
            body = "(" + " | ".join(f"({s})" for s in starts) + ")?"
        return self.add(f'"{{" space {body} "}}" space')

    def visit_array(self, schema: dict[str, Any]) -> str:
        item = self.visit(schema.get("items"))
        most = schema.get("maxItems")
        if isinstance(most, int) and 0 < most <= 64:
            tail = ""
            for _ in range(most - 1):
                tail = f'("," space {item} {tail})?'
            first = f"{item} {tail}"
            return self.add(f'"[" space {first if int(schema.get("minItems") or 0) >= 1 else f"({first})?"} "]" space')
        if int(schema.get("minItems") or 0) >= 1:
            return self.add(f'"[" space {item} ("," space {item})* "]" space')
        return self.add(f'"[" space ({item} ("," space {item})*)? "]" space')


def schema_to_gbnf(schema: dict[str, Any] | None) -> str:
    """The grammar text (root rule first) for replies matching schema; None: any JSON object."""
    converter = _Converter()
    root = converter.visit(schema) if schema else "object"
    rules = {"root": root, **converter.rules, **_VALUE_RULES}
    return "\n".join(f"{name} ::= {body}" for name, body in rules.items()) + "\n"
