"""Bounded reads of zip archive members (Inspect `.eval` logs): a running byte count per member against
its declared size and the per-member limit, and across the archive against an amplification limit."""
from __future__ import annotations

import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

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
        return max(MAX_EXPANSION * self.size, _EXPANSION_FLOOR)

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
        with archive.open(info) as member:
            while chunk := member.read(_CHUNK):
                count += len(chunk)
                if count > declared:  # zipfile stops at the declared size; this count does not trust it
                    raise RecordError(where, 1, None, f"archive member holds more than the {declared:,} bytes "
                                      "its header declares (a lying size)")
                if budget.read + count > budget.limit:
                    raise budget.error(where, count)
                parts.append(chunk)
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError, ValueError) as exc:
        if isinstance(exc, RecordError):
            raise
        # A header that under-declares the size ends here: the CRC of the declared bytes does not match.
        raise RecordError(where, 1, None, f"corrupt archive member ({exc}); its data does not match its "
                          f"header after {count:,} of the {declared:,} declared bytes") from None
    budget.read += count
    return b"".join(parts)
