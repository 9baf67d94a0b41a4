"""Bounded reads of zip archive members (Inspect `.eval` logs): the archive's member count and declared total
checked before any member is read, a running byte count per member against its declared size and the
per-member limit, and across the archive against an amplification limit and the total limit."""
from __future__ import annotations

import struct
import sys
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import zstandard

from trajscope.format import RecordError

from ._json_stream import MAX_RECORD_BYTES

# inspect_ai writes `.eval` members with Zstandard (zip method 93) since 2025; the stdlib reads it from
# Python 3.14 on, before that zipfile_zstd (inspect_ai's own choice) adds the method to zipfile. Members are
# still read through zipfile's streaming reader below, so every limit applies to them as to DEFLATE ones.
if sys.version_info < (3, 14):
    import zipfile_zstd  # noqa: F401

# An archive may expand to at most this many times its size on disk. DEFLATE allows about 1,000x (zstd more);
# the real Inspect log in ../shared/data/external_logs/inspect_docent_ctf/ expands 10.6x (12.1x its
# most compressible member), so 50x leaves honest logs a wide margin and stops a bomb early.
MAX_EXPANSION = 50
# Archives this small may expand to the floor instead: a few tiny members compress badly, never well.
_EXPANSION_FLOOR = 64 * 2**20
_CHUNK = 1 << 16  # zipfile inflates at most about this much per read: memory stays one chunk ahead
# Whatever its size on disk, an archive may declare and yield at most this much in all, in at most this many
# members: the real Inspect log holds 20 members and 4.2 MB; 100 members of 63 MB (6.3 GB) ran out of memory.
MAX_ARCHIVE_BYTES = 1024 * 2**20
# Inspect writes one member per sample, and its users keep logs of 100,000 samples (100,103 members, 240 MB):
# zipfile holds about 0.7 kB per member of the directory (82 MB RSS at 100k), so 500,000 members cost at most
# about 350 MB before the first member is read.
MAX_MEMBERS = 500_000
_ZSTD = 93  # zip's method number for Zstandard
# A Zstandard frame may ask for a window of up to 2 GB, allocated before the first byte comes out; Inspect
# writes level-3 frames (a 2 MB window at most), so 8 MB refuses only a frame built to cost memory.
_ZSTD_MAX_WINDOW = 8 * 2**20
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # zip's local file header: name and extra lengths last


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MB"


@dataclass
class ArchiveBudget:
    """How many uncompressed bytes the whole archive may yield, and how many it has yielded."""

    path: Path
    size: int
    read: int = 0

    @classmethod
    def of(cls, path: Path) -> ArchiveBudget:
        return cls(path, path.stat().st_size)

    @property
    def limit(self) -> int:
        return min(max(MAX_EXPANSION * self.size, _EXPANSION_FLOOR), MAX_ARCHIVE_BYTES)

    def error(self, where: Path, more: int) -> RecordError:
        return RecordError(where, 1, None, f"the archive expands past the amplification limit: "
                           f"{_mb(self.read + more)} read from {_mb(self.size)} on disk, over "
                           f"{MAX_EXPANSION}x its size ({_mb(self.limit)}); a zip bomb, or a log to unpack "
                           "and ingest as .json")


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: Path, budget: ArchiveBudget) -> bytes:
    """A member's bytes, counted while inflating: past its declared size, the per-member limit or the
    archive's budget, reading stops with a RecordError naming the member and the limit."""
    declared = info.file_size
    if declared > MAX_RECORD_BYTES:
        raise RecordError(where, 1, None, f"archive member declares {_mb(declared)}, past the per-member "
                          f"limit of {MAX_RECORD_BYTES // 2**20} MB")
    if budget.read + declared > budget.limit:
        raise budget.error(where, declared)
    parts: list[bytes] = []
    count = 0
    try:
        for chunk in _member_chunks(archive, info):
            count += len(chunk)
            if count > declared:  # zipfile stops at the declared size; this count does not trust it
                raise RecordError(where, 1, None, f"archive member holds more than the {declared:,} bytes "
                                  "its header declares (a lying size)")
            if budget.read + count > budget.limit:
                raise budget.error(where, count)
            parts.append(chunk)
    except (zipfile.BadZipFile, zstandard.ZstdError, OSError, EOFError, RuntimeError, NotImplementedError,
            ValueError) as exc:
        if isinstance(exc, RecordError):
            raise
        # A header that under-declares the size ends here: the CRC of the declared bytes does not match.
        raise RecordError(where, 1, None, f"corrupt archive member ({exc}); its data does not match its "
                          f"header after {count:,} of the {declared:,} declared bytes") from None
    budget.read += count
    return b"".join(parts)


def check_archive(archive: zipfile.ZipFile, path: Path) -> None:
    """Refuse, before any member is read, an archive of more than MAX_MEMBERS members or one whose members
    declare more than MAX_ARCHIVE_BYTES in all (reading then counts each member against what it declares)."""
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise RecordError(path, 1, None, f"the archive holds {len(members):,} members, past the limit of "
                          f"{MAX_MEMBERS:,} members per archive")
    declared = sum(info.file_size for info in members)
    if declared > MAX_ARCHIVE_BYTES:
        raise RecordError(path, 1, None, f"the archive's members declare {_mb(declared)} in all, past the limit "
                          f"of {_mb(MAX_ARCHIVE_BYTES)} per archive; unpack it and ingest its samples as .json")


def _member_chunks(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """A member's bytes, at most _CHUNK at a time for every method: zipfile's Zstandard support inflates a
    whole read at once (a 526 KB member cost 2.3 GB), so Zstandard members are inflated here, in chunks."""
    if info.compress_type != _ZSTD:
        with archive.open(info) as member:
            while chunk := member.read(_CHUNK):
                yield chunk
        return
    if info.flag_bits & 0x1:
        raise NotImplementedError("an encrypted member")
    fh = archive.fp
    assert fh is not None
    fh.seek(info.header_offset)
    header = fh.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile("bad local file header")
    name_len, extra_len = _LOCAL_HEADER.unpack(header)[-2:]
    fh.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
    decompressor = zstandard.ZstdDecompressor(max_window_size=_ZSTD_MAX_WINDOW)
    crc = 0
    # zstandard reads any object with read(); its stub asks for IO[bytes].
    with decompressor.stream_reader(_Slice(fh, info.compress_size), read_size=_CHUNK) as reader:  # type: ignore[arg-type]
        while chunk := reader.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
            yield chunk
    if crc != info.CRC:
        raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.filename!r}")


class _Slice:
    """The next `size` bytes of a file, read like a file (the compressed data of one member)."""

    def __init__(self, fh: IO[bytes], size: int):
        self._fh, self._left = fh, size

    def read(self, n: int = -1) -> bytes:
        n = self._left if n < 0 else min(n, self._left)
        data = self._fh.read(n)
        self._left -= len(data)
        return data
