"""The canonical format: round trips, strict validation, and the committed JSON Schema."""
import json
from pathlib import Path

import jsonschema
import msgspec
import pytest
from foundation_records import fixture_trajectories

from trajscope.format import (
    STEP_KINDS,
    RecordError,
    Trajectory,
    decode_trajectory,
    encode,
    iter_trajectories,
    json_schema,
    json_schema_text,
    to_builtins,
)

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "trajscope" / "format" / "trajectory.v1.schema.json"


def test_round_trip_model_json_model():
    for t in fixture_trajectories():
        data = encode(t)
        assert decode_trajectory(data) == t
        assert json.loads(data) == to_builtins(t)


def test_committed_schema_is_generated_from_the_models():
    regenerate = "run `trajscope schema > trajscope/format/trajectory.v1.schema.json`"
    assert SCHEMA_FILE.read_text() == json_schema_text(), regenerate


def test_every_example_validates_against_committed_schema():
    schema = json.loads(SCHEMA_FILE.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for t in fixture_trajectories():
        validator.validate(json.loads(encode(t)))


def test_schema_rejects_what_decoder_rejects():
    validator = jsonschema.Draft202012Validator(json_schema())
    bad = json.loads(encode(fixture_trajectories()[0]))
    bad["steps"][0]["kind"] = "teleport"
    assert not validator.is_valid(bad)
    with pytest.raises(RecordError):
        decode_trajectory(json.dumps(bad))


def test_schema_carries_every_step_kind_and_version():
    text = json_schema_text()
    for kind in STEP_KINDS:
        assert f'"{kind}"' in text
    schema = json_schema()
    assert schema["$ref"] == "#/$defs/Trajectory"
    assert schema["$defs"]["Trajectory"]["properties"]["schema_version"]["enum"] == ["1"]


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["steps"][0]["candidates"][0].update(rank="first"), "steps[0].candidates[0].rank"),
        (lambda d: d["question"].pop("text"), "question"),
        (lambda d: d.update(end_reason="exploded"), "end_reason"),
        (lambda d: d["steps"][1].update(surprise=1), "steps[1]"),
        (lambda d: d.update(trajectory_id=7), "trajectory_id"),
    ],
)
def test_errors_name_file_line_and_field(tmp_path, mutate, field):
    good = [json.loads(encode(t)) for t in fixture_trajectories()]
    mutate(good[1] if field != "trajectory_id" else good[1])
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in good) + "\n")
    with pytest.raises(RecordError) as info:
        list(iter_trajectories(path))
    err = info.value
    assert (err.path, err.line) == (str(path), 2)
    assert err.field is not None and err.field.startswith(field)
    assert f"{path}:2: field {err.field}" in str(err)


def test_truncated_line_is_a_json_error(tmp_path):
    path = tmp_path / "cut.jsonl"
    line = encode(fixture_trajectories()[0])
    path.write_bytes(line + b"\n" + line[: len(line) // 2])
    with pytest.raises(RecordError) as info:
        list(iter_trajectories(path))
    assert info.value.line == 2 and "JSON" in str(info.value)


def test_unknown_field_is_rejected_not_dropped():
    data = json.loads(encode(fixture_trajectories()[0]))
    data["run"]["temprature"] = 0.7
    with pytest.raises(RecordError) as info:
        decode_trajectory(json.dumps(data))
    assert info.value.field == "run.temprature" and "unknown field" in str(info.value)


def test_msgspec_convert_matches_decoder():
    d = to_builtins(fixture_trajectories()[2])
    assert msgspec.convert(d, Trajectory) == fixture_trajectories()[2]


def test_readme_example_line_is_a_valid_trajectory():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("a no-read discipline failure.\n\n```json\n", 1)[1].split("```", 1)[0]
    trajectory = decode_trajectory(json.dumps(json.loads(block)))
    assert [type(s).__name__ for s in trajectory.steps] == ["SearchStep", "FinalStep"]
