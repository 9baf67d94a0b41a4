"""A wheel built from the repository installs into a fresh virtual environment outside the checkout and works there:
the command, the notebook API, the warehouse's SQL, the prompts, the demo data and the dashboard's pages."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import duckdb
import pytest
from fixtures.forensics.builders import final, read, search, trajectory

from trajscope.format import Judgment, Run, encode

ROOT = Path(__file__).resolve().parents[1]
# Where each folder of the checkout lands once installed (setup.py maps the stage folders into the namespace).
INSTALLED_AS = {"trajscope": "trajscope", "app": "trajscope/app", "engine": "trajscope/engine",
                "ingest": "trajscope/ingest", "warehouse": "trajscope/warehouse"}
N_RIGHT, N_WRONG = 3, 2


def _checkout_files() -> list[str]:
    """The files of the working tree git would commit (tracked, or new and not ignored) under the package folders."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", *INSTALLED_AS],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    return [f for f in listed if f and (ROOT / f).is_file() and "__pycache__" not in f]


def _build_wheel(tmp: Path) -> Path:
    # Built from a copy, so the checkout's own build/ and egg-info (other work in progress) stay untouched.
    source = tmp / "source"
    for name in [*_checkout_files(), "setup.py", "pyproject.toml", "README.md"]:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    wheels = tmp / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(wheels)], check=True, capture_output=True, timeout=600)
    (wheel,) = wheels.glob("trajscope-*.whl")
    return wheel


def _fresh_venv(tmp: Path, wheel: Path) -> Path:
    """A new environment with the wheel installed, reusing the project environment's third-party packages
    through a .pth line (its site-packages only: not the checkout, and not the editable install's finder,
    whose own .pth is not read from a folder a .pth line adds)."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True, check=True).stdout.strip())
    # The folder that holds the project's third-party packages (found through one of them, so it is right
    # whether this interpreter's own site-packages holds them or a .pth line points there).
    project_site = str(Path(duckdb.__file__).resolve().parents[1])
    assert not Path(project_site).is_relative_to(ROOT / "trajscope")
    (site / "project_packages.pth").write_text(project_site + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps",
                    "--no-index", "-q", str(wheel)], check=True, capture_output=True, timeout=600)
    return venv


def _write_log(path: Path) -> None:
    run = Run(run_id="installed", dataset="hotpotqa", condition="baseline")
    with path.open("wb") as log:
        for i in range(N_RIGHT + N_WRONG):
            gold = (f"c{i}", f"Person {i} was born in City{i}.")
            right = i < N_RIGHT
            verdict = Judgment(judge="contain", score=float(right))
            log.write(encode(trajectory(run, f"q{i}", f"Where was Person {i} born?", f"City{i}",
                                        [search(gold), read(gold), final(f"City{i}" if right else "Nowhere")],
                                        gold_chunks=(gold[0],), judgments=(verdict,))) + b"\n")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(tmp)
    return wheel, _fresh_venv(tmp, wheel), tmp


def _run(venv: Path, cwd: Path, *args: str, **env_set: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRAJSCOPE_DB", "PYTHONHOME")} | env_set
    done = subprocess.run([str(venv / "bin" / args[0]), *args[1:]], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_every_file_of_the_packages_is_in_the_wheel(installed):
    wheel, _, _ = installed
    inside = set(zipfile.ZipFile(wheel).namelist())
    expected = set()
    for name in _checkout_files():
        top, _, rest = name.partition("/")
        expected.add(f"{INSTALLED_AS[top]}/{rest}")
    assert sorted(expected - inside) == []
    # The warehouse's SQL, the prompts and the demo data, named, so a rule that drops them all fails here too.
    for folder, suffix in (("warehouse/views", ".sql"), ("warehouse/migrations", ".sql"), ("warehouse/load", ".sql"),
                           ("engine/prompts", ".txt"), ("ingest/demo", ".jsonl"), ("app/page_scripts", ".py")):
        files = sorted((ROOT / folder).glob(f"*{suffix}"))
        assert files and all(f"trajscope/{folder}/{f.name}" in inside for f in files), folder
    units = sorted((ROOT / "warehouse" / "facts").glob("*/fill.sql"))  # a folder per derived fact table
    assert units and all(f"trajscope/warehouse/facts/{f.parent.name}/fill.sql" in inside for f in units)


def test_the_installed_command_and_api_work_outside_the_checkout(installed):
    _, venv, tmp = installed
    work = tmp / "work"
    work.mkdir()
    where = _run(venv, work, "python", "-c", "import trajscope, trajscope.warehouse as w; "
                 "print(trajscope.__file__); print(w.__file__)").split()
    assert all(Path(p).is_relative_to(venv) for p in where), where
    assert "Commands:" in _run(venv, work, "trajscope", "--help")
    _write_log(work / "installed.jsonl")
    _run(venv, work, "trajscope", "ingest", "installed.jsonl", "--db", "wh.duckdb")
    listed = {line.split()[0] for line in _run(venv, work, "trajscope", "views", "--db", "wh.duckdb").splitlines()}
    defined = {m.group(1) for f in (ROOT / "warehouse" / "views").glob("*.sql")
               for m in re.finditer(r"CREATE OR REPLACE VIEW (\w+)", f.read_text())}
    assert defined and defined <= listed
    summary = _run(venv, work, "python", "-c", "import trajscope; row = trajscope.open('wh.duckdb')"
                   ".view('run_summary', run_id='installed').row(0, named=True); "
                   "print(row['n_trajectories'], row['contain_acc'])").split()
    assert (int(summary[0]), float(summary[1])) == (N_RIGHT + N_WRONG, pytest.approx(N_RIGHT / (N_RIGHT + N_WRONG)))


def test_the_installed_demo_data_prompts_and_dashboard_pages_load(installed):
    _, venv, tmp = installed
    questions = sum(1 for line in (ROOT / "ingest" / "demo" / "questions.jsonl").open() if line.strip())
    prompts = len(list((ROOT / "engine" / "prompts").glob("*.txt")))
    pages = sorted(p.name for p in (ROOT / "app" / "page_scripts").glob("*.py"))
    out = _run(venv, tmp, "python", "-c", "import importlib.resources as r; "
               "demo = r.files('trajscope.ingest.demo') / 'questions.jsonl'; "
               "print(sum(1 for l in demo.read_text().splitlines() if l.strip())); "
               "print(sum(1 for p in r.files('trajscope.engine.prompts').iterdir() if p.name.endswith('.txt'))); "
               "print(','.join(sorted(p.name for p in (r.files('trajscope.app') / 'page_scripts').iterdir() "
               "if p.name.endswith('.py'))))").split()
    assert (int(out[0]), int(out[1]), out[2].split(",")) == (questions, prompts, pages)


DASHBOARD = """
from pathlib import Path

import trajscope.app
from streamlit.testing.v1 import AppTest

main = Path(trajscope.app.__file__).parent / "main.py"
at = AppTest.from_file(str(main), default_timeout=120).run()
assert not at.exception, [e.message for e in at.exception]
at.switch_page("page_scripts/runs.py").run()
assert not at.exception, [e.message for e in at.exception]
print(main)
print(at.title[0].value)
print(",".join(at.dataframe[0].value["run_id"]))
"""


def test_the_installed_dashboard_opens_its_pages_on_a_warehouse(installed):
    _, venv, tmp = installed
    work = tmp / "dashboard"
    work.mkdir()
    _write_log(work / "installed.jsonl")
    _run(venv, work, "trajscope", "ingest", "installed.jsonl", "--db", "wh.duckdb")
    main, title, runs = _run(venv, work, "python", "-c", DASHBOARD, TRAJSCOPE_DB=str(work / "wh.duckdb")).split()
    assert Path(main).is_relative_to(venv) and (title, runs) == ("Runs", "installed")
