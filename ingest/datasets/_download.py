"""Downloading official dev files: resumable (HTTP Range), progress bar, size and sha256 checks."""
from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
from tqdm import tqdm

from ._sources import OfficialSource, default_data_dir

MANIFEST = "fetch.json"


class FetchError(RuntimeError):
    """A download that could not complete; the message says what to do instead."""


@dataclass(frozen=True)
class FetchResult:
    """The data file a fetch produced, with the checksum of what was downloaded."""

    path: Path
    archive: Path
    size: int
    sha256: str
    downloaded: bool


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _by_hand(source: OfficialSource, url: str, archive: Path) -> str:
    return (f"download {url} by hand (see {source.homepage}), save it as {archive}, "
            f"then rerun `trajscope data fetch {source.name}`")


def _total_size(response: httpx.Response, offset: int) -> int | None:
    content_range = response.headers.get("content-range", "")
    if "/" in content_range and not content_range.endswith("/*"):
        return int(content_range.rsplit("/", 1)[1])
    length = response.headers.get("content-length")
    return int(length) + offset if length is not None else None


def _download(url: str, part: Path, *, timeout: float, progress: bool) -> int | None:
    """Fetch url into part, resuming from its current size; returns the size the server announced."""
    offset = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={offset}-"} if offset else {}
    with httpx.stream("GET", url, headers=headers, follow_redirects=True, timeout=timeout) as response:
        if response.status_code == 416 and offset:
            return offset  # the partial file is already complete
        if response.status_code not in (200, 206):
            raise FetchError(f"{url} answered HTTP {response.status_code}")
        if response.status_code == 200:
            offset = 0  # server ignored Range: start over
        total = _total_size(response, offset)
        mode = "ab" if offset else "wb"
        with open(part, mode) as fh, tqdm(total=total, initial=offset, unit="B", unit_scale=True,
                                          desc=part.name.removesuffix(".part"), disable=not progress) as bar:
            for block in response.iter_bytes():  # as received, so a dropped link keeps what arrived
                fh.write(block)
                bar.update(len(block))
    return total


def _extract(archive: Path, member: str, target: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        names = [n for n in zf.namelist() if n == member or n.endswith("/" + member)]
        if not names:
            raise FetchError(f"{archive} has no member {member!r}")
        with zf.open(sorted(names, key=len)[0]) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)


def _recorded(directory: Path) -> dict:
    path = directory / MANIFEST
    return json.loads(path.read_text()) if path.is_file() else {}


def fetch_source(
    source: OfficialSource, dest: Path | None = None, *, url: str | None = None, timeout: float = 30.0,
    progress: bool = True,
) -> FetchResult:
    """Download (or resume, or verify) one official dev file under dest/<name>/ and unpack it if zipped."""
    url = url or source.url
    directory = (dest or default_data_dir()) / source.name
    directory.mkdir(parents=True, exist_ok=True)
    archive = directory / source.filename
    part = archive.with_name(archive.name + ".part")
    target = directory / source.data_file
    record = _recorded(directory)
    downloaded = False
    if not archive.exists():
        try:
            announced = _download(url, part, timeout=timeout, progress=progress)
        except (httpx.TransportError, OSError) as exc:
            reason = type(exc).__name__ if not str(exc) else str(exc).splitlines()[0]
            got = part.stat().st_size if part.exists() else 0
            if got:
                raise FetchError(f"download of {url} interrupted after {got} bytes ({reason}); rerun to resume, "
                                 f"or {_by_hand(source, url, archive)}") from None
            raise FetchError(f"cannot download {url} ({reason}); offline? {_by_hand(source, url, archive)}") from None
        size = part.stat().st_size
        if announced is not None and size != announced:
            raise FetchError(f"{part} has {size} bytes but the server announced {announced}; "
                             f"rerun to resume the download")
        part.replace(archive)
        downloaded = True
    size, digest = archive.stat().st_size, sha256_of(archive)
    expected = source.sha256 or record.get("sha256")
    if expected and digest != expected:
        raise FetchError(f"{archive} has sha256 {digest}, expected {expected}; delete it and fetch again")
    if source.size is not None and size != source.size:
        raise FetchError(f"{archive} has {size} bytes, expected {source.size}; delete it and fetch again")
    if source.member is not None and (downloaded or not target.exists()):
        _extract(archive, source.member, target)
    (directory / MANIFEST).write_text(json.dumps({
        "name": source.name, "url": url, "file": archive.name, "size": size, "sha256": digest,
        "recorded_at": record.get("recorded_at") or datetime.now(UTC).isoformat(timespec="seconds"),
    }, indent=2) + "\n")
    return FetchResult(path=target, archive=archive, size=size, sha256=digest, downloaded=downloaded)
