"""Inspect `.eval` archives bounded before conversion: 100 members just under the per-member limit, padded
on disk so they pass the 50x amplification budget, are refused by their declared total; a Zstandard member
that declares 1,000 bytes and inflates to 2 GB stops after one 64 kB chunk. Each through `trajscope ingest`:
one line, a bounded peak memory (VmHWM), no temp files left, the warehouse unchanged."""
from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
import zstandard

from trajscope.ingest.importers._archive import MAX_ARCHIVE_BYTES, MAX_MEMBERS
from trajscope.ingest.importers._json_stream import MAX_RECORD_BYTES

_RUNNER = """
import atexit, sys
atexit.register(lambda: print("VmHWM_kB", open("/proc/self/status").read().split("VmHWM:")[1].split()[0],
                              file=sys.stderr))
sys.argv = ["trajscope", *sys.argv[1:]]
from trajscope.cli import main
main()
"""


class _Member:
    """A zip member written by hand: its data may be precompressed, or a hole of zeros (stored, sparse)."""

    def __init__(self, name: str, method: int, declared: int, crc: int, data: bytes = b"", hole: int = 0):
        self.name, self.method, self.declared, self.crc = name.encode(), method, declared, crc
        self.data, self.hole = data, hole

    @property
    def compressed(self) -> int:
        return len(self.data) + self.hole


def _write_zip(path: Path, members: list[_Member]) -> None:
    central = b""
    with open(path, "wb") as fh:
        for m in members:
            offset = fh.tell()
            fh.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 63, 0, m.method, 0, 0, m.crc, m.compressed,
                                 m.declared, len(m.name), 0) + m.name)
            fh.write(m.data)
            if m.hole:
                fh.seek(m.hole, os.SEEK_CUR)
            central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 63, 63, 0, m.method, 0, 0, m.crc, m.compressed,
                                   m.declared, len(m.name), 0, 0, 0, 0, 0, offset) + m.name
        start = fh.tell()
        fh.write(central)
        fh.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), start, 0))


def _zero_crc(n: int) -> int:
    crc, block = 0, bytes(1 << 20)
    for _ in range(n >> 20):
        crc = zlib.crc32(block, crc)
    return zlib.crc32(bytes(n & ((1 << 20) - 1)), crc)


def _ingest(eval_file: Path, tmp_path: Path) -> tuple[int, list[str], int]:
    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    db = str(tmp_path / "w.duckdb")
    child = subprocess.run([sys.executable, "-c", _RUNNER, "ingest", str(eval_file), "--db", db],
                           capture_output=True, text=True, timeout=600, env={**os.environ, "TMPDIR": str(temp)})
    lines = (child.stdout + child.stderr).splitlines()
    peak = [int(line.split()[1]) // 1024 for line in lines if line.startswith("VmHWM_kB")][0]
    assert list(temp.iterdir()) == []  # no converted log or batch left behind
    return child.returncode, [line for line in lines if not line.startswith("VmHWM_kB")], peak


def _one_error(lines: list[str]) -> str:
    assert not any("Traceback" in line for line in lines), "\n".join(lines)
    errors = [line for line in lines if line.startswith("Error:")]
    assert len(errors) == 1, "\n".join(lines)
    return errors[0]


def test_a_hundred_members_under_the_member_limit_are_refused_by_their_total(tmp_path):
    size = MAX_RECORD_BYTES - 2**20  # 63 MB of zeros each: 6.3 GB in all
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = b"".join(packer.compress(bytes(1 << 20)) for _ in range(size >> 20)) + packer.flush()
    crc = _zero_crc(size)
    members = [_Member(f"samples/{i}_epoch_1.json", 8, size, crc, deflated) for i in range(100)]
    padding = 160 * 2**20  # stored zeros, a hole on disk: the archive is 166 MB, so 50x its size passes 6.3 GB
    members.append(_Member("padding.bin", 0, padding, _zero_crc(padding), hole=padding))
    bomb = tmp_path / "bomb.eval"
    _write_zip(bomb, members)
    assert 50 * bomb.stat().st_size > 100 * size  # the amplification budget alone would let it through
    digest = hashlib.sha256(bomb.read_bytes()).hexdigest()
    rc, lines, peak_mb = _ingest(bomb, tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "bomb.eval" in error, error
    assert f"past the limit of {MAX_ARCHIVE_BYTES / 2**20:,.1f} MB per archive" in error, error
    assert peak_mb < 400  # before: MemoryError at 6.1 GB, 11.6 GB of temp files
    assert not (tmp_path / "w.duckdb").exists()
    assert hashlib.sha256(bomb.read_bytes()).hexdigest() == digest


def test_too_many_members_are_refused_before_any_is_read(tmp_path):
    many = tmp_path / "many.eval"
    # zipfile writes the ZIP64 end record a directory of more than 65,535 members needs.
    with zipfile.ZipFile(many, "w") as archive:
        for i in range(MAX_MEMBERS + 1):
            archive.writestr(f"samples/{i}.json", b"")
    rc, lines, _ = _ingest(many, tmp_path)
    assert rc != 0 and f"past the limit of {MAX_MEMBERS:,} members per archive" in _one_error(lines)


def test_a_zstd_member_lying_about_its_size_stops_after_one_chunk(tmp_path):
    inflated = 2 * 2**30  # 2 GB of zeros behind a header that declares 1,000 bytes
    packer = zstandard.ZstdCompressor(level=1, write_content_size=False).compressobj()
    frame = b"".join(packer.compress(bytes(1 << 20)) for _ in range(inflated >> 20)) + packer.flush()
    liar = tmp_path / "liar.eval"
    _write_zip(liar, [_Member("header.json", 0, 2, zlib.crc32(b"{}"), b"{}"),
                      _Member("samples/1_epoch_1.json", 93, 1000, 0, frame)])
    rc, lines, peak_mb = _ingest(liar, tmp_path)
    error = _one_error(lines)
    assert rc != 0 and "liar.eval!samples/1_epoch_1.json" in error, error
    assert "holds more than the 1,000 bytes its header declares" in error, error
    assert peak_mb < 400  # before: 2.3 GB (the whole frame inflated in one read)


@pytest.mark.parametrize("method", [8, 93])
def test_an_honest_member_of_either_method_reads_back(method, tmp_path):
    import zipfile

    from trajscope.ingest.importers._archive import ArchiveBudget, read_member

    body = b'{"id": 1, "text": "' + b"abc" * 100_000 + b'"}'
    data = zstandard.ZstdCompressor().compress(body) if method == 93 else zlib.compress(body, 9)[2:-4]
    path = tmp_path / "fine.eval"
    _write_zip(path, [_Member("samples/1.json", method, len(body), zlib.crc32(body), data)])
    with zipfile.ZipFile(path) as archive:
        assert read_member(archive, archive.infolist()[0], path, ArchiveBudget.of(path)) == body
