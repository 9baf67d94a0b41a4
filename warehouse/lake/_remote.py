"""A lake on object storage (an fsspec URL: s3:// or file:// to write, any fsspec store to read): writers upload their
files under their own writer id and commit with one create-only object; readers read a local mirror of the committed
writers' files.

Object stores have no rename and no mkdir, so the folder protocol's two atomic steps become one each: a run's claim
and a writer's commit marker are created only if absent (S3's `If-None-Match: *`, fsspec's "xb" mode), and a writer's
files are invisible until its marker exists, because every reader keeps to the writers whose marker it has read.
A committed writer's files never change, so a mirror only ever adds the files of writers it has not met, and the
catalog, the sandbox and every view read that local folder exactly as they read a lake on a filesystem path.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from trajscope.runtime import cache_dir

from ._layout import CLAIMS, COMMITTED, LAKE_FORMAT, MARKER, SHARED, LakeError, check_lake

# Stores whose create-only write ("xb") is atomic, checked by the store itself: a local or mounted filesystem (O_EXCL)
# and S3 with its compatible servers (s3fs sends If-None-Match: *). fsspec leaves "xb" to each backend, checked up front
# or at commit, atomic or not; on another store two writers could both claim a run, so it is read, never written.
ATOMIC_CREATE_PROTOCOLS = frozenset({"file", "local", "s3", "s3a"})
# What a writer's commit marker lists: every file it uploaded (its partitions and the schema files of its version),
# so a mirror downloads them without listing the store.
FILES_KEY = "files"


def is_lake_url(lake: str | Path) -> bool:
    """Whether `lake` names object storage (scheme://...) rather than a folder."""
    return "://" in str(lake)


def url_filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of a URL and the path within it (no trailing slash); ImportError naming the extra."""
    try:
        import fsspec
    except ImportError:
        raise ImportError(f"{url}: storage URLs need fsspec: pip install 'trajscope[distributed]'") from None
    try:
        fs, root = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:  # a scheme whose package is not installed, or not a URL fsspec knows
        raise LakeError(f"{url}: cannot open this storage URL ({exc})") from None
    return fs, root.rstrip("/")


def _cache_root() -> Path:
    return cache_dir() / "lake-mirrors"


class RemoteLake:
    """A lake at an fsspec URL: its marker, claims, uploads and commits, and the local mirror readers open."""

    def __init__(self, url: str):
        self.url = str(url).rstrip("/")
        self.fs, self.root = url_filesystem(self.url)
        # fsspec keeps one filesystem per URL and options, with its listings cached: another writer's commit since
        # the last look must be seen.
        self.fs.invalidate_cache()

    def __str__(self) -> str:
        return self.url

    def _at(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def _create_only(self, rel: str, data: bytes) -> bool:
        """Write `data` at rel unless something is there (False then): one atomic step, as a mkdir is on a disk."""
        protocols = {self.fs.protocol} if isinstance(self.fs.protocol, str) else set(self.fs.protocol)
        if not protocols & ATOMIC_CREATE_PROTOCOLS:
            raise LakeError(f"{self.url}: writing a lake here needs a create-only write that the store makes atomic, "
                            f"which trajscope knows of only for {', '.join(sorted(ATOMIC_CREATE_PROTOCOLS))}:// (this "
                            "store can be read as a lake, not written); use one of those, or a mounted folder")
        path = self._at(rel)
        self.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)  # a local filesystem needs the folder; S3 has none
        try:
            with self.fs.open(path, "xb") as fh:
                fh.write(data)
        except FileExistsError:
            return False
        except (NotImplementedError, ValueError) as exc:  # a store without create-only writes cannot hold a lake
            raise LakeError(f"{self.url}: this storage cannot create a file only if it is absent ({exc}), which a "
                            "lake's run claims and commits need; use a folder, or a store that can (S3, a "
                            "local or mounted file:// path)") from None
        return True

    def check(self) -> RemoteLake:
        """self; LakeError when the URL holds no trajscope lake or one of another format."""
        try:
            raw = self.fs.cat_file(self._at(MARKER))
        except FileNotFoundError:
            raise LakeError(f"{self.url}: not a trajscope lake (no {MARKER}); create one with `trajscope lake export "
                            f"{self.url} --db WAREHOUSE`") from None
        try:
            fmt = json.loads(raw).get("format")
        except (ValueError, AttributeError) as exc:
            raise LakeError(f"{self.url}/{MARKER}: unreadable lake marker ({exc})") from None
        if fmt != LAKE_FORMAT:
            raise LakeError(f"{self.url}/{MARKER}: lake format {fmt!r}, this trajscope reads format {LAKE_FORMAT}")
        return self

    def create(self) -> RemoteLake:
        """Make the URL a lake (its marker); an existing lake is left as it is, other objects there are refused."""
        if not self.fs.exists(self._at(MARKER)):
            if self.fs.exists(self.root) and self.fs.ls(self.root, detail=False):
                raise LakeError(f"{self.url}: holds objects and is not a trajscope lake; give an empty location")
            self._create_only(MARKER, json.dumps({"format": LAKE_FORMAT}).encode())  # another creator's is as good
        return self.check()

    def claim(self, run_id: str, writer: str) -> str:
        """Claim a run for this writer (one claim object, created only if absent); LakeError naming the holder."""
        rel = f"{CLAIMS}/{hashlib.sha256(run_id.encode()).hexdigest()[:32]}"
        if not self._create_only(rel, json.dumps({"run_id": run_id, "writer": writer}).encode()):
            try:
                who = self.fs.cat_file(self._at(rel)).decode(errors="replace")
            except OSError:  # released since, or a folder writer's claim (a directory) on a mounted lake
                who = "a writer that has not said who it is, or has since released it"
            raise LakeError(f"run {run_id!r} is already in the lake or being added by another writer ({who}); a lake "
                            "ingest adds runs and never replaces one (a writer killed before its commit leaves this "
                            f"claim: remove {self._at(rel)} to add the run again)")
        return rel

    def upload(self, local_lake: Path, staging: Path, uploaded: list[str]) -> None:
        """Upload a writer's schema files (those the store lacks) and its partitions, adding their paths within the
        lake to `uploaded` before each is sent (so a failed writer removes what it may have left)."""
        schema_files = sorted(local_lake.glob(f"*/_dataset={SHARED}/_run={SHARED}/_writer={SHARED}/schema-*.parquet"))
        for path in schema_files:
            rel = path.relative_to(local_lake).as_posix()
            self._create_only(rel, path.read_bytes())  # written once per schema version, by whichever writer is first
            uploaded.append(rel)
        parts = sorted(p for p in staging.rglob("*.parquet") if p.is_file())
        rels = [p.relative_to(staging).as_posix() for p in parts]
        uploaded.extend(rels)
        for rel in {r.rsplit("/", 1)[0] for r in rels}:
            self.fs.makedirs(self._at(rel), exist_ok=True)
        if parts:  # one call: an async store (s3fs) sends the files in parallel
            self.fs.put([str(p) for p in parts], [self._at(r) for r in rels])

    def commit(self, writer: str, commit: dict) -> None:
        """The one step that makes a writer's rows visible: its marker, listing its files."""
        if not self._create_only(f"{COMMITTED}/{writer}", json.dumps(commit).encode()):
            raise LakeError(f"{self.url}: writer id {writer} is already committed")  # a uuid4: never in practice

    def remove(self, rels: list[str]) -> None:
        """Remove what a failed writer uploaded or claimed (its rows were never visible)."""
        paths = [self._at(r) for r in rels if f"_writer={SHARED}" not in r]  # schema files serve every writer
        if paths:
            try:
                self.fs.rm(paths)
            except FileNotFoundError:
                pass

    def committed(self) -> list[str]:
        """The writers with a commit marker, sorted."""
        self.fs.invalidate_cache(self._at(COMMITTED))
        try:
            names = self.fs.ls(self._at(COMMITTED), detail=False)
        except FileNotFoundError:
            return []
        return sorted(n.rstrip("/").rsplit("/", 1)[-1] for n in names if not n.rstrip("/").endswith(COMMITTED))

    def _writer_files(self, writer: str, marker: dict) -> list[str]:
        if isinstance(marker.get(FILES_KEY), list):
            files = [str(f) for f in marker[FILES_KEY]]
            for rel in files:  # a marker names where the mirror writes: only this writer's places in the layout
                if not _in_layout(rel, writer):
                    raise LakeError(f"{self.url}: writer {writer}'s commit names {rel!r}, which is not one of its "
                                    "files in a lake's layout; nothing of that writer was read")
            return files
        # A writer that committed through a folder (a lake on a mount, read here by file:// URL) lists no files.
        found = [*self.fs.glob(self._at(f"*/_dataset=*/_run=*/_writer={writer}/*.parquet")),
                 *self.fs.glob(self._at(f"*/_dataset={SHARED}/_run={SHARED}/_writer={SHARED}/schema-*.parquet"))]
        return sorted(p[len(self.root) + 1:] for p in found)

    def mirror(self) -> Path:
        """The local mirror of this lake, brought up to every writer committed now (only new writers' files are
        fetched); a checked lake folder, read as any other."""
        self.check()
        key = hashlib.sha256(self.url.encode()).hexdigest()[:16]
        local = _cache_root() / f"{self.root.rsplit('/', 1)[-1] or 'lake'}-{key}"
        (local / COMMITTED).mkdir(parents=True, exist_ok=True)
        if not (local / MARKER).is_file():
            _write_file(local / MARKER, self.fs.cat_file(self._at(MARKER)))
        have = {p.name for p in (local / COMMITTED).iterdir()}
        for writer in self.committed():
            if writer in have or writer.startswith("."):
                continue
            raw = self.fs.cat_file(self._at(f"{COMMITTED}/{writer}"))
            try:
                marker = json.loads(raw)
            except ValueError:
                continue  # a marker still being written (a local store writes it in steps): not committed yet
            if not isinstance(marker, dict) or marker.get("writer") != writer:
                continue
            files = self._writer_files(writer, marker)
            wanted = [r for r in files if not (local / r).is_file()]
            incoming = local / f".incoming-{uuid.uuid4().hex}"
            try:
                if wanted:
                    for rel in {r.rsplit("/", 1)[0] for r in wanted}:
                        (incoming / rel).mkdir(parents=True, exist_ok=True)
                    try:
                        self.fs.get([self._at(r) for r in wanted], [str(incoming / r) for r in wanted])
                    except FileNotFoundError as exc:
                        raise LakeError(f"{self.url}: writer {writer}'s commit names a file the store does not "
                                        f"hold ({exc})") from None
                    for rel in wanted:
                        (local / rel).parent.mkdir(parents=True, exist_ok=True)
                        os.replace(incoming / rel, local / rel)
            finally:
                shutil.rmtree(incoming, ignore_errors=True)
            _write_file(local / COMMITTED / writer, raw)  # last: the mirror's own commit of this writer
        return check_lake(local)


def _in_layout(rel: str, writer: str) -> bool:
    """Whether rel is TABLE/_dataset=D/_run=R/_writer=W/FILE.parquet for this writer (or a schema file), nothing
    that could lead out of the lake's folder."""
    parts = rel.split("/")
    if len(parts) != 5 or "\\" in rel or any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        return False
    table, dataset, run, owner, name = parts
    schema = owner == f"_writer={SHARED}" and name.startswith("schema-")
    return (table.replace("_", "").isalnum() and dataset.startswith("_dataset=") and run.startswith("_run=")
            and (owner == f"_writer={writer}" or schema) and name.endswith(".parquet"))


def _write_file(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def lake_location(lake: str | Path) -> Path | RemoteLake:
    """A checked lake: its folder, or the object storage at a URL; LakeError when it holds no trajscope lake."""
    return RemoteLake(str(lake)).check() if is_lake_url(lake) else check_lake(Path(lake))


def readable_lake(lake: str | Path) -> Path:
    """A local lake folder to read `lake` through: the folder itself, or a URL's mirror brought up to date."""
    if is_lake_url(lake):
        return RemoteLake(str(lake)).mirror()
    return check_lake(Path(lake))


__all__ = ["ATOMIC_CREATE_PROTOCOLS", "FILES_KEY", "RemoteLake", "is_lake_url", "lake_location", "readable_lake",
           "url_filesystem"]
