"""The report footnote's warehouse sha256 is cached per file version on disk: reused while the file is unchanged,
recomputed after a write (size, mtime or ctime moves), never kept for a file changed within the racy window, and
forgotten on request."""
from __future__ import annotations

import hashlib
import os

import pytest

from trajscope.analysis.report import _context, file_digest, forget_digests


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(_context, "RACY_WINDOW_NS", -10**18)  # files written by the test count as settled
    _context._DIGESTS.clear()
    yield tmp_path
    _context._DIGESTS.clear()


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_digest_is_the_files_sha256_and_a_new_process_reuses_it(cache, monkeypatch):
    path = cache / "w.duckdb"
    path.write_bytes(b"warehouse bytes" * 1000)
    assert file_digest(path) == _sha(path)
    _context._DIGESTS.clear()  # as a new process: only the disk cache remains

    def refuse(*_args, **_kwargs):
        raise AssertionError("the file was hashed again")
    monkeypatch.setattr(_context, "Sha256Child", refuse)  # the hash's child process
    assert file_digest(path) == _sha(path)


def test_the_hash_starts_with_the_report_and_one_never_read_is_stopped(cache, monkeypatch):
    path = cache / "w.duckdb"
    path.write_bytes(b"warehouse bytes" * 100_000)
    started = []
    real = _context.Sha256Child
    monkeypatch.setattr(_context, "Sha256Child", lambda p: started.append(real(p)) or started[-1])
    pending = _context.PendingDigest(path)
    assert len(started) == 1  # begun when the report's context is made, before any table is built
    assert str(pending) == _sha(path) == str(pending) and len(started) == 1
    _context._DIGESTS.clear()
    forget_digests(path)
    unread = _context.PendingDigest(path)
    child = started[-1]._child
    del unread  # a report that failed before its footnotes: the child is stopped and reaped, not left behind
    assert len(started) == 2 and child.returncode is not None


def test_a_write_makes_the_cached_digest_stale(cache):
    path = cache / "w.duckdb"
    path.write_bytes(b"a" * 100)
    first = file_digest(path)
    _context._DIGESTS.clear()
    path.write_bytes(b"a" * 101)  # another size
    assert file_digest(path) == _sha(path) != first
    _context._DIGESTS.clear()
    second = file_digest(path)
    with open(path, "r+b") as handle:  # the same size, another mtime
        handle.write(b"b")
    os.utime(path, ns=(0, 10**9))
    _context._DIGESTS.clear()
    assert file_digest(path) == _sha(path) != second


def test_a_corrupt_or_foreign_cache_entry_is_not_trusted(cache):
    path = cache / "w.duckdb"
    path.write_bytes(b"x" * 10)
    file_digest(path)
    entry = _context._digest_cache(path)
    entry.write_text('{"version": ["elsewhere"], "digest": "0000"}')
    _context._DIGESTS.clear()
    assert file_digest(path) == _sha(path)
    entry.write_text("not json")
    _context._DIGESTS.clear()
    assert file_digest(path) == _sha(path)


def test_a_file_changed_within_the_racy_window_is_not_kept_on_disk(cache, monkeypatch):
    monkeypatch.setattr(_context, "RACY_WINDOW_NS", 10**18)
    path = cache / "w.duckdb"
    path.write_bytes(b"z" * 10)
    assert file_digest(path) == _sha(path)
    assert not _context._digest_cache(path).exists()


def test_forget_digests_removes_the_disk_entry(cache):
    path = cache / "w.duckdb"
    path.write_bytes(b"y" * 10)
    file_digest(path)
    assert _context._digest_cache(path).exists()
    _context._DIGESTS.clear()
    forget_digests(path)
    assert not _context._digest_cache(path).exists()
