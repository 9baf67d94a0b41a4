"""Under the JSON protocol a read may only name chunk ids the agent has been shown."""
import jsonschema

from engine.controllers._actions import ActionSpace
from engine.environment import tool_schemas


def _read_branch(schema):
    return next(b for b in schema["anyOf"] if b["properties"]["action"]["const"] == "read")


def test_read_ids_are_free_until_a_search_shows_some():
    space = ActionSpace(tool_schemas("read_gate", "tools"))
    props = _read_branch(space.json_schema())["properties"]["arguments"]["properties"]
    assert "enum" not in props["chunk_id"]


def test_read_ids_are_limited_to_known_ones():
    space = ActionSpace(tool_schemas("read_gate", "tools"))
    schema = space.json_schema(["demo:4", "demo:9"])
    assert _read_branch(schema)["properties"]["arguments"]["properties"]["chunk_id"]["enum"] == ["demo:4", "demo:9"]
    jsonschema.validate({"action": "read", "arguments": {"chunk_id": "demo:9"}}, schema)
    try:
        jsonschema.validate({"action": "read", "arguments": {"chunk_id": ";1234"}}, schema)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("an invented chunk id passed the schema")
    jsonschema.validate({"action": "search", "arguments": {"query": "x"}}, schema)
