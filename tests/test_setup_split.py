"""`make demo` serves the dashboard after a light set-up (Makefile APP_DEPS) while torch and the llama.cpp build
install: everything the dashboard and the demo's first steps import must come from APP_DEPS, never from the
heavy dependencies."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("app", "warehouse", "ingest", "trajscope")


def _app_deps() -> list[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    block = re.search(r"^APP_DEPS := (.*?)(?<!\\)\n", text, re.S | re.M)[1]
    return block.replace("\\\n", " ").split()


def _name(spec: str) -> str:
    return re.split(r"[<>=!~\[ ;]", spec)[0]


def test_app_deps_are_project_dependencies():
    deps = {_name(d) for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    assert set(_app_deps()) <= deps, set(_app_deps()) - deps


_PROBE = r"""
import importlib, importlib.abc, json, re, sys
from pathlib import Path
ALLOWED = set(sys.argv[1].split(","))
class Hide(importlib.abc.MetaPathFinder):
    # as in a venv holding APP_DEPS only: every finder says it cannot find anything else (engine included)
    def __init__(self, inner):
        self.inner = inner
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top not in ALLOWED and top not in sys.stdlib_module_names and not top.startswith("_"):
            return None
        find = getattr(self.inner, "find_spec", None)
        return find(name, path, target) if find else None
    def __getattr__(self, attr):
        return getattr(self.inner, attr)
sys.meta_path[:] = [Hide(f) for f in sys.meta_path]
for name in ["trajscope.cli.app_cmd", "trajscope.cli.demo_cmd", "app.access", "app.ui", "app.progress"]:
    importlib.import_module(name)
for script in sorted(Path("app/page_scripts").glob("*.py")):
    for a, b in re.findall(r"^from (\S+) import|^import (\S+)", script.read_text(), re.M):
        importlib.import_module(a or b)
from trajscope.cli.demo_cmd import _load_corpus
_load_corpus(Path(sys.argv[2]))
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def _closure(names: list[str]) -> set[str]:
    from importlib.metadata import PackageNotFoundError, distribution

    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = distribution(name).requires or []
        except PackageNotFoundError:
            continue
        # only unconditional requirements (no extras, no markers that exclude this platform)
        todo += [_name(r) for r in requires if "extra ==" not in r]
    return seen


def _allowed_modules() -> set[str]:
    """Top-level modules of the distributions APP_DEPS installs (with their requirements), and ours."""
    from importlib.metadata import packages_distributions

    closure = _closure(_app_deps())
    return {module for module, dists in packages_distributions().items()
            if any(d.lower().replace("_", "-") in closure for d in dists)} | set(OURS)


def test_the_dashboard_and_the_demo_start_with_app_deps_alone(tmp_path):
    allowed = _allowed_modules()
    assert not allowed & {"torch", "llama_cpp", "sentence_transformers", "spacy", "engine"}
    done = subprocess.run([sys.executable, "-c", _PROBE, ",".join(sorted(allowed)), str(tmp_path / "demo.duckdb")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert {"streamlit", "duckdb", "app", "warehouse"} <= loaded  # the probe did import the dashboard
    assert (tmp_path / "demo.duckdb").exists()


def _project_deps(*args: str) -> list[str]:
    """What the Makefile's PROJECT_DEPS prints for args, run by make itself on this interpreter."""
    probe = "include Makefile\nprobe:\n\t@echo \"$$($(PROJECT_DEPS) $(ARGS))\"\n"
    done = subprocess.run(["make", "-s", "-f", "-", "probe", f"BIN={Path(sys.executable).parent}",
                           f"ARGS={' '.join(args)}"], input=probe, cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=True)
    return done.stdout.split()


def test_the_staged_set_up_installs_every_requirement_once():
    # The llama.cpp wheel builds beside the rest: the two lists split pyproject.toml's, nothing lost or doubled.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    every = project["dependencies"] + project["optional-dependencies"]["test"]
    llama, rest = _project_deps("llama-cpp-python"), _project_deps("--except", "llama-cpp-python")
    assert [_name(d) for d in llama] == ["llama-cpp-python"]
    assert sorted(llama + rest) == sorted(every)
    assert _project_deps(*_app_deps()) == [d for d in project["dependencies"] if _name(d) in _app_deps()]


def test_the_demo_builds_its_retrieval_index_once_the_deps_are_in_and_before_the_model_runtime(tmp_path):
    import threading
    import time

    from app.progress import BuildProgress, now, read_progress
    from trajscope.cli.demo_cmd import _wait_for_setup

    db, stamp = tmp_path / "demo.duckdb", tmp_path / ".setup-stamp"
    progress = BuildProgress(stage="preparing", message="", started_at=now(), updated_at=now(), url=None, pid=0)
    seen: list[str] = []

    def warm() -> None:
        seen.append(read_progress(db).message)
        assert not stamp.exists()

    def set_up() -> None:
        time.sleep(1.5)
        (tmp_path / ".deps-stamp").touch()  # torch and the rest: the index may be built
        while not seen:
            time.sleep(0.1)
        stamp.touch()  # then the llama.cpp wheel

    worker = threading.Thread(target=set_up)
    worker.start()
    _wait_for_setup(db, progress, stamp, None, time.perf_counter(), warm=warm)
    worker.join()
    assert seen == ["building the retrieval index while the model runtime (llama.cpp) builds"]


def test_a_failed_early_index_build_is_said_and_the_set_up_wait_goes_on(tmp_path, capsys):
    import threading
    import time

    from app.progress import BuildProgress, now
    from trajscope.cli.demo_cmd import _wait_for_setup

    db, stamp = tmp_path / "demo.duckdb", tmp_path / ".setup-stamp"
    (tmp_path / ".deps-stamp").touch()
    progress = BuildProgress(stage="preparing", message="", started_at=now(), updated_at=now(), url=None, pid=0)

    def warm() -> None:
        raise ImportError("no module named sentence_transformers")

    threading.Timer(2.0, stamp.touch).start()
    _wait_for_setup(db, progress, stamp, None, time.perf_counter(), warm=warm)
    out = capsys.readouterr().out
    assert "the retrieval index waits for the set-up (ImportError: no module named sentence_transformers)" in out
    assert "set-up finished at" in out
