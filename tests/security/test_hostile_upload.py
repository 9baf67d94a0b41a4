"""The upload root is never followed through a symbolic link, and its sweep deletes only folders this user
made inside a real root: with `$TRAJSCOPE_UPLOAD_TMP/trajscope-uploads` a link, the sweep at page load used to
delete a folder outside it. The page says so in one line and saves nothing."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from trajscope.app.upload import UploadRootRefused, prepare_upload, sweep_stale_uploads, upload_root

ROOT = Path(__file__).parents[2]
DEAD_PID = 2**22 + 1  # above Linux's largest pid (4,194,304): never a live process
LOG = ROOT / "tests" / "fixtures" / "importers" / "autoact.jsonl"


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder outside the upload root holding what a sweep would take for uploads: a dead server's
    folder and an abandoned (old) one."""
    folder = tmp_path / "outside"
    for name in (f"upload-{DEAD_PID}-abc", "upload-old"):
        (folder / name).mkdir(parents=True)
        (folder / name / "precious.txt").write_text("keep me")
    old = time.time() - 10 * 3600
    os.utime(folder / "upload-old", (old, old))
    return folder


@pytest.fixture
def linked_root(tmp_path, outside, monkeypatch) -> Path:
    base = tmp_path / "base"
    base.mkdir()
    (base / "trajscope-uploads").symlink_to(outside)
    monkeypatch.setenv("TRAJSCOPE_UPLOAD_TMP", str(base))
    return base / "trajscope-uploads"


def test_the_sweep_never_follows_a_linked_upload_root(linked_root, outside):
    before = _tree(outside)
    assert sweep_stale_uploads() == []
    assert _tree(outside) == before


def test_an_upload_into_a_linked_root_is_refused_in_one_line(linked_root, outside):
    before = _tree(outside)
    with pytest.raises(UploadRootRefused, match="is a symbolic link") as caught:
        prepare_upload("run.jsonl", LOG.read_bytes())
    assert str(linked_root) in str(caught.value) and "\n" not in str(caught.value)
    assert _tree(outside) == before


def test_inside_a_real_root_a_link_is_not_followed_and_only_own_folders_go(tmp_path, outside, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_UPLOAD_TMP", str(tmp_path / "base"))
    root = upload_root()
    assert oct(root.stat().st_mode & 0o777) == "0o700"
    (root / f"upload-{DEAD_PID}-link").symlink_to(outside / f"upload-{DEAD_PID}-abc")
    (root / "upload-old-link").symlink_to(outside / "upload-old")
    (root / f"upload-{DEAD_PID}-mine").mkdir()  # a dead server's own folder: swept
    before = _tree(outside)
    removed = sweep_stale_uploads()
    assert removed == [root / f"upload-{DEAD_PID}-mine"]
    assert _tree(outside) == before
    assert sorted(p.name for p in root.iterdir()) == [f"upload-{DEAD_PID}-link", "upload-old-link"]


def test_the_upload_page_says_uploads_are_off_in_one_line(linked_root, outside, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJSCOPE_DB", str(tmp_path / "w.duckdb"))
    before = _tree(outside)
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / "upload.py"), default_timeout=60).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "Uploads are off" in errors[0] and "symbolic link" in errors[0], errors
    assert _tree(outside) == before
