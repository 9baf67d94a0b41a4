"""Under the JSON protocol a read may only name chunk ids the agent has been shown."""
import jsonschema

from trajscope.engine.controllers._actions import ActionSpace
from trajscope.engine.environment import tool_schemas


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


class _Reply:
    def __init__(self, text: str, tool_calls=()):
        self.text, self.tool_calls = text, list(tool_calls)


class _Call:
    def __init__(self, name: str, arguments: dict):
        self.name, self.arguments, self.arguments_error = name, arguments, None


def test_a_json_action_is_not_recorded_as_the_models_thought():
    # The JSON reply is the action itself (kept as the step's raw text); only a "thought" field is reasoning.
    from trajscope.engine.controllers import JsonActionProtocol

    space = ActionSpace(tool_schemas("read_gate", "tools"))
    plain = JsonActionProtocol().parse(_Reply('{"action": "search", "arguments": {"query": "x"}}'), space, 1)
    assert plain.thought is None and plain.actions[0].name == "search"
    reasoned = JsonActionProtocol().parse(
        _Reply('{"thought": " need the founder ", "action": "search", "arguments": {"query": "x"}}'), space, 1)
    assert reasoned.thought == "need the founder"


def test_text_beside_native_tool_calls_is_the_thought():
    from trajscope.engine.controllers import ToolCallProtocol

    space = ActionSpace(tool_schemas("read_gate", "tools"))
    parsed = ToolCallProtocol().parse(_Reply("Look up the founder first.", [_Call("search", {"query": "x"})]), space, 1)
    assert parsed.thought == "Look up the founder first." and parsed.actions[0].name == "search"
    assert ToolCallProtocol().parse(_Reply("", [_Call("search", {"query": "x"})]), space, 1).thought is None
