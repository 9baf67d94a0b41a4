"""Inspect `.eval` archives that amplify: a member lying about its size, a member declaring more than
the per-member limit, and many members that together expand past the amplification limit.

Each is refused in one line naming the member and the limit, through `python -m trajscope ingest`
and the Upload page, with the warehouse unchanged; the lying member is read within a memory bound
(the issue's case took ingest to 2.1 GB before its CRC refused it).
"""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from security_limits import fingerprint

from trajscope.ingest.importers._archive import MAX_EXPANSION
from trajscope.ingest.importers._json_stream import MAX_RECORD_BYTES

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "importers"
MB = 2**20
LIE_REAL = 512 * MB  # what the lying member inflates to
LIE_DECLARED = 1000  # what its header says
MEMORY_BOUND = 64 * MB  # peak resident growth over importing a small honest archive


def _header_and_samples() -> tuple[dict, list[dict]]:
    data = json.loads((FIXTURES / "inspect_log.json").read_text())
    return data, data.pop("samples")


def _write_deflated(path: Path, name: str, chunks, declared: int, extra: dict[str, bytes]) -> None:
    """A zip whose first member `name` is `chunks` deflated, its header declaring `declared` bytes."""
    compressor, crc, real = zlib.compressobj(9, zlib.DEFLATED, -15), 0, 0
    body = bytearray()
    for chunk in chunks:
        crc, real = zlib.crc32(chunk, crc), real + len(chunk)
        body += compressor.compress(chunk)
    body += compressor.flush()
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, b"x")  # a placeholder: its header is rewritten below
        for other, data in extra.items():
            archive.writestr(other, data)
    raw = tmp.read_bytes()
    tmp.unlink()
    name_b = name.encode()
    # Local header: signature, version, flags, method, time, date, crc, csize, usize, name len, extra len.
    sig, ver, flags, _, mtime, mdate, _, old_c, _, nlen, elen = struct.unpack("<IHHHHHIIIHH", raw[:30])
    old_end = 30 + nlen + elen + old_c
    local = struct.pack("<IHHHHHIIIHH", sig, ver, flags, 8, mtime, mdate, crc, len(body), declared, nlen, 0)
    rest = raw[old_end:]
    shift = 30 + nlen + len(body) - old_end
    cd_start = rest.index(b"PK\x01\x02")
    central = bytearray(rest[cd_start:])
    # First central entry: method (10), crc (16), csize (20), usize (24); extra length (30) kept.
    struct.pack_into("<H", central, 10, 8)
    struct.pack_into("<III", central, 16, crc, len(body), declared)
    # Later entries' local-header offsets (42) and the end record's directory offset move by `shift`.
    pos = 0
    first = True
    while central[pos:pos + 4] == b"PK\x01\x02":
        n, e, c = struct.unpack("<HHH", central[pos + 28:pos + 34])
        if not first:
            (offset,) = struct.unpack("<I", central[pos + 42:pos + 46])
            struct.pack_into("<I", central, pos + 42, offset + shift)
        first = False
        pos += 46 + n + e + c
    eocd = central[pos:]
    (cd_offset,) = struct.unpack("<I", eocd[16:20])
    struct.pack_into("<I", eocd, 16, cd_offset + shift)
    central[pos:] = eocd
    path.write_bytes(local + name_b + bytes(body) + rest[:cd_start] + bytes(central))


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bombs")
    header, samples = _header_and_samples()
    out = {}
    honest = folder / "honest.eval"
    with zipfile.ZipFile(honest, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        archive.writestr("samples/1_epoch_1.json", json.dumps(samples[0]))
    out["honest"] = honest
    lying = folder / "lying.eval"
    _write_deflated(lying, "samples/1_epoch_1.json", (b" " * MB for _ in range(LIE_REAL // MB)), LIE_DECLARED,
                    {"header.json": json.dumps(header).encode()})
    out["lying"] = lying
    declared = folder / "declared.eval"
    _write_deflated(declared, "samples/1_epoch_1.json", [json.dumps(samples[0]).encode()],
                    MAX_RECORD_BYTES + 1, {"header.json": json.dumps(header).encode()})
    out["declared"] = declared
    # 100 honest-looking samples of 2 MB each, every one far below the per-member limit: 200 MB from
    # an archive of a few hundred kB, past the amplification limit.
    many = folder / "many.eval"
    with zipfile.ZipFile(many, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        for i in range(100):
            sample = dict(samples[0], id=f"s{i}", padding="a" * (2 * MB))
            archive.writestr(f"samples/{i:03d}_epoch_1.json", json.dumps(sample))
    out["many"] = many
    return out


def test_the_bombs_are_what_they_claim(bombs):
    with zipfile.ZipFile(bombs["lying"]) as archive:
        info = archive.getinfo("samples/1_epoch_1.json")
        assert info.file_size == LIE_DECLARED and info.compress_size < 2 * MB
    with open(bombs["lying"], "rb") as fh:  # its data does inflate to LIE_REAL bytes
        fh.seek(info.header_offset + 30 + len(info.filename))
        inflater, data, inflated = zlib.decompressobj(-15), fh.read(info.compress_size), 0
        while data:
            inflated += len(inflater.decompress(data, MB))
            data = inflater.unconsumed_tail
    assert inflated == LIE_REAL
    size = bombs["many"].stat().st_size
    with zipfile.ZipFile(bombs["many"]) as archive:
        total = sum(i.file_size for i in archive.infolist())
    assert total > MAX_EXPANSION * size and max(i.file_size for i in archive.infolist()) < MAX_RECORD_BYTES


EXPECTED = {
    "lying": ("samples/1_epoch_1.json", "its data does not match its header"),
    "declared": ("samples/1_epoch_1.json", f"past the per-member limit of {MAX_RECORD_BYTES // MB} MB"),
    "many": ("samples/", f"over {MAX_EXPANSION}x its size"),
}


@pytest.fixture(scope="module")
def target_db(warehouse_db, tmp_path_factory) -> tuple[Path, tuple]:
    db = tmp_path_factory.mktemp("bomb-wh") / "wh.duckdb"
    shutil.copyfile(warehouse_db, db)
    return db, fingerprint(db)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cli_ingest_refuses_the_bomb_in_one_line(name, bombs, target_db):
    db, before = target_db
    result = subprocess.run([sys.executable, "-m", "trajscope", "ingest", str(bombs[name]), "--format", "inspect",
                             "--db", str(db), "--no-progress"], capture_output=True, text=True, cwd=ROOT,
                            timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in output, output[-2000:]
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    member, limit = EXPECTED[name]
    assert len(errors) == 1 and f"{bombs[name]}!{member}" in errors[0] and limit in errors[0], output[-2000:]
    assert fingerprint(db) == before


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_upload_refuses_the_bomb_and_leaves_no_folder(name, bombs):
    from trajscope.app.upload import prepare_upload

    prepared = prepare_upload(bombs[name].name, bombs[name].read_bytes(), format="inspect")
    member, limit = EXPECTED[name]
    assert not prepared.ok and len(prepared.errors) == 1, prepared
    assert f"{bombs[name].name}!{member}" in prepared.errors[0].path and limit in prepared.errors[0].message
    assert not prepared.folder.exists()


_PEAK = """
import sys
from bench.process_memory import peak_rss_mb
from pathlib import Path
from trajscope.ingest.importers import ImportOptions, RecordError, convert_file
try:
    convert_file(Path(sys.argv[1]), Path(sys.argv[2]), ImportOptions(format="inspect"))
except RecordError as exc:
    print("refused:", exc)
print(int(peak_rss_mb() * 1024 * 1024))
"""


def _peak(archive: Path, out: Path) -> tuple[int, str]:
    result = subprocess.run([sys.executable, "-c", _PEAK, str(archive), str(out)], capture_output=True, text=True,
                            cwd=ROOT, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0, result.stderr[-2000:]
    *lines, peak = result.stdout.strip().splitlines()
    return int(peak), "\n".join(lines)


def test_a_lying_member_is_read_within_the_memory_bound(bombs, tmp_path):
    base, said = _peak(bombs["honest"], tmp_path / "honest.jsonl")
    assert "refused" not in said
    peak, said = _peak(bombs["lying"], tmp_path / "lying.jsonl")
    assert "refused:" in said and EXPECTED["lying"][1] in said, said
    assert peak - base < MEMORY_BOUND, f"peak {peak / MB:.0f} MB against {base / MB:.0f} MB for an honest archive"
