"""`trajscope data`: import, sample, list and fetch (offline message, resume, checksum), all on 127.0.0.1."""
from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import socket
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajscope.cli import main
from trajscope.ingest.datasets import OFFICIAL_SOURCES, FetchError, OfficialSource, fetch_source, load_dataset

FIX = Path(__file__).parent / "fixtures" / "datasets"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["data", *args])
    return result.exit_code, result.output


def test_import_writes_a_canonical_dir_and_prints_the_match_rate(tmp_path: Path) -> None:
    code, out = run("import", str(FIX / "2wiki_hipporag"), "--out", str(tmp_path / "w"))
    assert code == 0, out
    assert "2 questions, 3 chunks, gold match rate 75.0% (3/4 gold passages matched)" in out
    assert load_dataset(tmp_path / "w") == load_dataset(FIX / "2wiki_hipporag")


def test_import_says_when_no_gold_passages_are_annotated(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "chunks.json").write_text('["Dunmere lies on the river Orrin."]')
    (tmp_path / "in" / "questions.json").write_text('[{"question": "Which river?", "answer": "Orrin"}]')
    code, out = run("import", str(tmp_path / "in"), "--out", str(tmp_path / "w"))
    assert code == 0, out
    assert "1 question, 1 chunk, no gold passages annotated" in out


def test_import_error_is_one_line_naming_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"_id": "a", "question": null, "context": [["T", ["s."]]]}]')
    code, out = run("import", str(bad), "--format", "hotpotqa", "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == f"Error: {bad}:1: field question: expected str, got NoneType\n"


def test_sample_command_is_deterministic(tmp_path: Path) -> None:
    for out in ("a", "b"):
        code, text = run("sample", "--dataset", "demo", "--n", "7", "--seed", "5", "--out", str(tmp_path / out))
        assert code == 0, text
    for name in ("questions.jsonl", "chunks.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert len(load_dataset(tmp_path / "a").questions) == 7


def test_list_names_demo_and_the_official_sets(tmp_path: Path) -> None:
    code, out = run("list", "--dest", str(tmp_path))
    assert code == 0
    assert out.startswith("demo ") and "60 questions" in out
    for name in ("hotpotqa", "2wiki", "musique"):
        assert f"not downloaded (trajscope data fetch {name})" in out


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_fetch_offline_says_which_url_failed_and_where_to_put_the_file(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/hotpot_dev_distractor_v1.json"
    code, out = run("fetch", "hotpotqa", "--dest", str(tmp_path), "--url", url, "--no-progress", "--timeout", "2")
    assert code == 1
    assert out.count("\n") == 1 and url in out
    assert f"save it as {tmp_path / 'hotpotqa' / 'hotpot_dev_distractor_v1.json'}" in out


class _RangeHandler(BaseHTTPRequestHandler):
    payload = b""
    cut_after: int | None = None  # first full response is cut short to simulate a dropped connection
    requests: list[str | None] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        rng = self.headers.get("Range")
        type(self).requests.append(rng)
        body, status = self.payload, 200
        if rng:
            start = int(rng.removeprefix("bytes=").rstrip("-"))
            body, status = self.payload[start:], 206
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        if status == 206:
            self.send_header("Content-Range", f"bytes {len(self.payload) - len(body)}-{len(self.payload) - 1}/"
                                              f"{len(self.payload)}")
        self.end_headers()
        if type(self).cut_after is not None and not rng:
            self.wfile.write(body[: type(self).cut_after])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, type[_RangeHandler]]]:
    handler = type("Handler", (_RangeHandler,), {"requests": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    httpd.shutdown()
    httpd.server_close()


def _zip_with(member: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"data/{member}", data)
    return buf.getvalue()


def test_fetch_resumes_with_range_verifies_size_records_sha256_and_unzips(tmp_path: Path, server) -> None:
    base, handler = server
    data = (FIX / "musique.jsonl").read_bytes()
    handler.payload = _zip_with("dev.jsonl", data) + b"\0" * 4096
    handler.cut_after = 1000
    source = OfficialSource(name="toy", url=f"{base}/toy.zip", filename="toy.zip", data_file="dev.jsonl",
                            homepage="https://example.invalid", member="dev.jsonl")
    with pytest.raises(FetchError, match="interrupted after 1000 bytes .*rerun to resume"):
        fetch_source(source, tmp_path, progress=False, timeout=5)  # connection drops after 1000 bytes
    part = tmp_path / "toy" / "toy.zip.part"
    assert part.stat().st_size == 1000
    result = fetch_source(source, tmp_path, progress=False, timeout=5)
    assert handler.requests[-1] == "bytes=1000-"
    assert result.downloaded and result.size == len(handler.payload)
    assert result.sha256 == hashlib.sha256(handler.payload).hexdigest()
    assert result.path.read_bytes() == data
    manifest = json.loads((tmp_path / "toy" / "fetch.json").read_text())
    assert (manifest["size"], manifest["sha256"]) == (result.size, result.sha256)

    again = fetch_source(source, tmp_path, progress=False)
    assert not again.downloaded and len(handler.requests) == 2  # verified from disk, no new request
    result.archive.write_bytes(b"corrupted")
    with pytest.raises(FetchError, match="expected " + result.sha256):
        fetch_source(source, tmp_path, progress=False)


def test_fetch_command_prints_the_hash(tmp_path: Path, server, monkeypatch: pytest.MonkeyPatch) -> None:
    base, handler = server
    handler.payload = (FIX / "hotpotqa_list.json").read_bytes()
    # The fixture is not the real dev file, so it cannot carry the published checksum.
    unpinned = dataclasses.replace(OFFICIAL_SOURCES["hotpotqa"], sha256=None, size=None)
    monkeypatch.setitem(OFFICIAL_SOURCES, "hotpotqa", unpinned)
    code, out = run("fetch", "hotpotqa", "--dest", str(tmp_path), "--url", f"{base}/h.json", "--no-progress")
    assert code == 0, out
    assert hashlib.sha256(handler.payload).hexdigest() in out
    assert load_dataset(tmp_path / "hotpotqa" / "hotpot_dev_distractor_v1.json").questions[0].gold_answer == \
        "River Tamber"


def test_fetch_rejects_a_first_download_that_differs_from_the_published_hotpotqa_checksum(tmp_path: Path,
                                                                                         server) -> None:
    base, handler = server
    handler.payload = (FIX / "hotpotqa_list.json").read_bytes()
    code, out = run("fetch", "hotpotqa", "--dest", str(tmp_path), "--url", f"{base}/mirror.json", "--no-progress")
    assert code == 1
    assert f"has sha256 {hashlib.sha256(handler.payload).hexdigest()}, expected {OFFICIAL_SOURCES['hotpotqa'].sha256}" \
        in out
    assert not (tmp_path / "hotpotqa" / "fetch.json").exists()  # nothing recorded as verified
