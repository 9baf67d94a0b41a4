"""Re-ingest of lines the warehouse already holds: counted unchanged without decoding, never wrong."""
import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from foundation_records import fixture_trajectories

from trajscope.format import KEY_MARKERS, RecordError, encode, redact_bytes, redaction_prefilter
from trajscope.warehouse import _loader, ingest_paths, open_readonly


def write_lines(path, trajectories):
    path.write_bytes(b"".join(encode(t) + b"\n" for t in trajectories))
    return path


def stored_hash(db, tid):
    with open_readonly(db) as con:
        return con.execute("SELECT record_hash FROM trajectories WHERE trajectory_id = ?", [tid]).fetchone()[0]


def changed(trajectory):
    return msgspec.structs.replace(trajectory, final_answer=(trajectory.final_answer or "") + " (edited)")


@pytest.fixture
def decodes(monkeypatch):
    calls = []
    real = _loader.decode_trajectory

    def counting(raw, **kw):
        calls.append(kw.get("line"))
        return real(raw, **kw)

    monkeypatch.setattr(_loader, "decode_trajectory", counting)
    return calls


def test_an_unchanged_file_is_counted_without_decoding_a_line(tmp_path, decodes):
    db, trajs = tmp_path / "w.duckdb", fixture_trajectories()
    log = write_lines(tmp_path / "a.jsonl", trajs)
    ingest_paths(db, [log])
    assert len(decodes) == len(trajs)
    decodes.clear()
    report = ingest_paths(db, [log])
    assert decodes == []
    assert (report.records, report.new, report.replaced, report.unchanged) == (len(trajs), 0, 0, len(trajs))


def test_only_the_changed_line_of_a_file_is_decoded(tmp_path, decodes):
    db, trajs = tmp_path / "w.duckdb", fixture_trajectories()
    ingest_paths(db, [write_lines(tmp_path / "a.jsonl", trajs)])
    decodes.clear()
    edited = [trajs[0], changed(trajs[1]), *trajs[2:]]
    report = ingest_paths(db, [write_lines(tmp_path / "b.jsonl", edited)])
    assert decodes == [2]
    assert (report.new, report.replaced, report.unchanged) == (0, 1, len(trajs) - 1)
    assert stored_hash(db, trajs[1].trajectory_id) == _loader._line_hash(encode(edited[1]))


def test_a_later_file_restores_a_stored_line_an_earlier_file_changed(tmp_path):
    # The stored copy of trajs[0] is skipped only while no batch of this ingest has replaced it.
    db, trajs = tmp_path / "w.duckdb", fixture_trajectories()
    ingest_paths(db, [write_lines(tmp_path / "a.jsonl", trajs)])
    first = write_lines(tmp_path / "b.jsonl", [changed(trajs[0])])
    second = write_lines(tmp_path / "c.jsonl", [trajs[0]])
    ingest_paths(db, [first, second])
    assert stored_hash(db, trajs[0].trajectory_id) == _loader._line_hash(encode(trajs[0]))


def test_a_stored_line_repeated_with_other_content_is_still_refused(tmp_path):
    db, trajs = tmp_path / "w.duckdb", fixture_trajectories()
    ingest_paths(db, [write_lines(tmp_path / "a.jsonl", trajs)])
    log = write_lines(tmp_path / "b.jsonl", [trajs[0], changed(trajs[0])])
    with pytest.raises(RecordError, match="lines 1 and 2"):
        ingest_paths(db, [log])
    ingest_paths(db, [log], on_duplicate="last")
    assert stored_hash(db, trajs[0].trajectory_id) == _loader._line_hash(encode(changed(trajs[0])))


def test_a_key_configured_after_the_first_load_is_redacted_on_reingest(tmp_path, monkeypatch):
    key = "zq9Xw7Lp3Vt8Rm2K"  # no well-known key shape: only the configured key can find it
    db, trajs = tmp_path / "w.duckdb", fixture_trajectories()
    leaky = msgspec.structs.replace(trajs[0], final_answer=f"echoed {key[4:]}")
    log = write_lines(tmp_path / "a.jsonl", [leaky, *trajs[1:]])
    ingest_paths(db, [log])
    monkeypatch.setenv("TRAJSCOPE_TEST_API_KEY", key)
    report = ingest_paths(db, [log])
    assert report.replaced == 1
    with open_readonly(db) as con:
        notes = con.execute("SELECT final_answer FROM trajectories WHERE trajectory_id = ?",
                            [leaky.trajectory_id]).fetchone()[0]
    assert key[4:12] not in notes and "[REDACTED]" in notes


@pytest.mark.parametrize("secrets", [frozenset(), frozenset({"zq9Xw7Lp 3V-t8+Rm2K"})])
def test_the_prefilter_flags_every_line_redaction_changes(secrets, monkeypatch):
    for name in list(__import__("os").environ):
        if "KEY" in name or "TOKEN" in name or "SECRET" in name:
            monkeypatch.delenv(name)
    pattern = redaction_prefilter(secrets)
    probes = [f"x {m} y".encode() for m in KEY_MARKERS]
    probes += [b"Authorization: Bearer abcdefghijkl12", b"key sk-" + b"a" * 20, b"AKIA" + b"B" * 16,
               b"ghp_" + b"c" * 32, b"xoxb-" + b"d" * 12, b"AIza" + b"e" * 35, b"hf_" + b"f" * 32]
    probes += [f"tail {s[i:i + 8]}!".encode() for s in secrets for i in range(len(s) - 7)]
    probes += [b"nothing secret here", b'{"notes": "plain text"}']
    flagged = pc.match_substring_regex(pa.array(probes, pa.binary()), pattern).to_pylist()
    for name in secrets:
        monkeypatch.setenv("TRAJSCOPE_TEST_API_KEY", name)
    changed_by_redaction = [probe for probe in probes if redact_bytes(probe) != probe]
    assert len(changed_by_redaction) >= 7 + sum(len(s) - 7 for s in secrets)
    for probe, hit in zip(probes, flagged, strict=True):
        if probe in changed_by_redaction:
            assert hit, probe
    assert flagged[-2:] == [False, False]


def test_a_non_ascii_key_has_no_prefilter():
    assert redaction_prefilter(frozenset({"clé-secrète-123"})) is None


def test_a_batch_mixing_stored_and_new_lines_stages_only_the_new_ones(tmp_path):
    # A live log's slice is read without the stored-line skip, so its batch holds both kinds.
    from trajscope.warehouse import ingest_log_slice

    db, trajs = tmp_path / "w.duckdb", fixture_trajectories()
    ingest_paths(db, [write_lines(tmp_path / "a.jsonl", trajs[:2])])
    with open_readonly(db) as con:
        before = con.execute("SELECT count(*) FROM steps").fetchone()[0]
    loaded = ingest_log_slice(db, write_lines(tmp_path / "live.jsonl", trajs[:3]))
    assert (loaded.report.new, loaded.report.unchanged) == (1, 2)
    with open_readonly(db) as con:
        steps = con.execute("SELECT count(*) FROM steps").fetchone()[0]
        per_id = con.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM trajectories "
                             "GROUP BY trajectory_id)").fetchone()[0]
    assert steps == before + len(trajs[2].steps) and per_id == 1
