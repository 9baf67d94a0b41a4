"""The one-way flow of docs/architecture.md, checked on every import (module and function level).

Each failure names the importing file and line. The rule, by top-level unit:

    trajscope.format     -> nothing of ours (stdlib and third-party only)
    trajscope.ingest     -> trajscope.format
    trajscope.warehouse  -> trajscope.format
    trajscope.engine     -> trajscope.format, ingest, warehouse
    trajscope.app        -> trajscope.format, ingest, warehouse
    trajscope.cli        -> everything (the top)

The stage folders sit at the repository's top level and import as `trajscope.<stage>` (setup.py maps them);
an import of a bare stage name (`import engine`) fails here, since nothing installs it.
No cycle, neither between subpackages (engine.entities <-> engine.judges) nor between modules.
A dynamic import (`importlib.import_module("trajscope.warehouse.x")`, `__import__(...)`) counts as an import; a
top-level folder (or root module) with Python code that is neither a layer nor OUTSIDE fails the suite,
so a new package cannot sit beside the layers unchecked.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP_PACKAGES = ("trajscope", "app", "engine", "warehouse", "ingest")
# Top-level folders that install inside the namespace as trajscope.<folder> (setup.py).
STAGES = frozenset({"app", "engine", "warehouse", "ingest"})
# Python outside the layers: it may use every layer, and no layer may import it.
OUTSIDE = {"tests": "the test suite", "bench": "benchmark scripts, run as programs",
           "setup.py": "the build's map of the stage folders into the namespace"}
# Folders that hold build or run outputs (.gitignore), never code of ours.
NOT_CODE = frozenset({"build", "dist", "runs", "artifacts", "screenshots", "node_modules"})

# unit -> the units it may import besides itself.
ALLOWED: dict[str, set[str]] = {
    "trajscope.format": set(),
    "trajscope.ingest": {"trajscope.format"},
    "trajscope.warehouse": {"trajscope.format"},
    "trajscope.engine": {"trajscope.format", "trajscope.ingest", "trajscope.warehouse"},
    "trajscope.app": {"trajscope.format", "trajscope.ingest", "trajscope.warehouse"},
    "trajscope.cli": {"trajscope.format", "trajscope.ingest", "trajscope.warehouse", "trajscope.engine",
                      "trajscope.app", "trajscope"},
    "trajscope": {"trajscope.cli", "trajscope.format"},  # trajscope/__init__.py and __main__.py
}


@dataclass(frozen=True)
class Import:
    """One import statement's resolved internal target."""

    source: str  # importing module
    target: str  # imported module (the longest existing module the statement names)
    file: Path
    line: int
    module_level: bool  # executed at import time (not inside a function body)
    root: Path = ROOT

    def where(self) -> str:
        return f"{self.file.relative_to(self.root)}:{self.line}"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts and parts[0] in STAGES:
        parts.insert(0, "trajscope")
    return ".".join(parts)


def _python_files(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.rglob("*.py")) if "__pycache__" not in p.parts]


def _modules(root: Path, tops: tuple[str, ...] | list[str]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top in tops:
        for path in _python_files(root / top):
            found[_module_name(path, root)] = path
    return found


def unknown_packages(root: Path) -> list[str]:
    """Top-level folders with Python code, and root modules, that are neither a layer nor OUTSIDE."""
    found = []
    for entry in sorted(root.iterdir()):
        if entry.name.startswith(".") or entry.name in NOT_CODE or entry.name.endswith(".egg-info"):
            continue
        if entry.name in TOP_PACKAGES or entry.name in OUTSIDE:
            continue
        if (entry.is_dir() and _python_files(entry)) or (entry.is_file() and entry.suffix == ".py"):
            found.append(f"{entry.name}{'/' if entry.is_dir() else ''}: Python code in no layer of the "
                         "one-way flow (add it to ALLOWED in tests/test_architecture.py, or move it into a layer)")
    return found


MODULES = _modules(ROOT, TOP_PACKAGES)
OUTSIDE_MODULES = _modules(ROOT, [t for t in OUTSIDE if (ROOT / t).is_dir()])


def _resolve(name: str, known: dict[str, Path] | None = None, outside: dict[str, Path] | None = None) -> str | None:
    """The longest prefix of a dotted name that is one of our modules."""
    known = MODULES if known is None else known
    outside = OUTSIDE_MODULES if outside is None else outside
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known or candidate in outside:
            return candidate
        parts.pop()
    return None


def _is_package(module: str, known: dict[str, Path] | None = None) -> bool:
    return (MODULES if known is None else known)[module].name == "__init__.py"


# Calls that import a module named by their first argument.
_DYNAMIC = {("importlib", "import_module"), (None, "__import__"), ("importlib", "__import__"),
            (None, "import_module")}


def _literal_strings(tree: ast.AST) -> dict[str, list[int]]:
    """Every string constant of a file with its lines."""
    found: dict[str, list[int]] = defaultdict(list)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found[node.value].append(node.lineno)
    return found


def _assigned_strings(tree: ast.AST) -> dict[str, list[str] | None]:
    """name -> the string constants assigned to it in the file (None: some assignment is not a constant)."""
    found: dict[str, list[str] | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    value = node.value
                    strings = found.get(target.id, [])
                    if strings is not None and isinstance(value, ast.Constant) and isinstance(value.value, str):
                        found[target.id] = [*strings, value.value]
                    else:
                        found[target.id] = None
    return found


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, path: Path, known: dict[str, Path] | None = None, root: Path = ROOT,
                 outside: dict[str, Path] | None = None):
        self.module, self.path, self.root = module, path, root
        self.known = MODULES if known is None else known
        self.outside = OUTSIDE_MODULES if outside is None else outside
        self.depth = 0  # function nesting
        self.found: list[Import] = []
        self.stale: list[str] = []  # imports of a bare stage name
        self.tree: ast.AST | None = None

    def visit(self, node: ast.AST):
        if self.tree is None:
            self.tree = node
        return super().visit(node)

    def _add(self, name: str, line: int) -> None:
        if name.split(".")[0] in STAGES:
            self.stale.append(f"{self.path.relative_to(self.root)}:{line}: {name} is not installed; "
                              f"import trajscope.{name}")
            return
        target = _resolve(name, self.known, self.outside)
        if target is not None and target != self.module:
            self.found.append(Import(self.module, target, self.path, line, self.depth == 0, self.root))

    def _package(self) -> str:
        return self.module if _is_package(self.module, self.known) else self.module.rpartition(".")[0]

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        key = ((func.value.id if isinstance(func.value, ast.Name) else "?", func.attr)
               if isinstance(func, ast.Attribute) else (None, func.id) if isinstance(func, ast.Name) else None)
        if key in _DYNAMIC and node.args:
            self._dynamic(node)
        self.generic_visit(node)

    def _dynamic(self, node: ast.Call) -> None:
        arg = node.args[0]
        names: list[str] | None = None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            names = [arg.value]
        elif isinstance(arg, ast.Name) and self.tree is not None:
            names = _assigned_strings(self.tree).get(arg.id)
        if names is None:
            # A computed name: every literal in the file that names one of our modules is a possible target
            # (the CLI's table of command modules).
            for text, lines in _literal_strings(self.tree).items() if self.tree is not None else ():
                if text in self.known or text in self.outside:
                    self._add(text, lines[0])
            return
        anchor = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords
                                                               if k.arg == "package"), None)
        for name in names:
            if name.startswith("."):  # import_module(".x", package=...): relative to that package
                level = len(name) - len(name.lstrip("."))
                package = (anchor.value if isinstance(anchor, ast.Constant) and isinstance(anchor.value, str)
                           else self._package())
                for _ in range(level - 1):
                    package = package.rpartition(".")[0]
                name = f"{package}.{name.lstrip('.')}" if name.lstrip(".") else package
            self._add(name, node.lineno)

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            package = self._package()
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{node.module}" if node.module else package
        else:
            base = node.module or ""
        for alias in node.names:
            # `from pkg import submodule` depends on the submodule; `from pkg import name` on pkg.
            self._add(f"{base}.{alias.name}", node.lineno)


def imports_of(root: Path, modules: dict[str, Path], outside: dict[str, Path] | None = None) -> list[Import]:
    """Every internal import (static or dynamic) of the modules of a tree."""
    found: list[Import] = []
    for module, path in modules.items():
        collector = _Collector(module, path, modules, root, outside)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        found.extend(collector.found)
    return found


def stale_imports(root: Path, modules: dict[str, Path], outside: dict[str, Path]) -> list[str]:
    """Imports of a bare stage name (`from engine import x`) anywhere in the tree, tests and bench included."""
    found: list[str] = []
    for module, path in {**modules, **outside}.items():
        collector = _Collector(module, path, modules, root, outside)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        found.extend(collector.stale)
    return found


IMPORTS = imports_of(ROOT, MODULES)


def unit_of(module: str) -> str:
    """The layer a module belongs to: trajscope.<layer>, or its top-level folder (tests, bench)."""
    parts = module.split(".")
    if parts[0] == "trajscope" and len(parts) > 1 and parts[1] in ("format", "cli", *STAGES):
        return f"trajscope.{parts[1]}"
    return parts[0]


def subpackage_of(module: str) -> str:
    """The first-level subpackage a module lives in (trajscope.engine.judges); a module directly in a layer
    (trajscope.warehouse._connection) and a layer's __init__ (trajscope.warehouse) are nodes of their own."""
    parts = module.split(".")
    depth = 3 if parts[0] == "trajscope" and len(parts) > 1 and parts[1] in STAGES else 2
    if len(parts) >= depth and ".".join(parts[:depth]) in MODULES and _is_package(".".join(parts[:depth])):
        return ".".join(parts[:depth])
    return module


def _cycles(edges: dict[str, dict[str, Import]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return components


def _describe(component: list[str], edges: dict[str, dict[str, Import]]) -> str:
    members = set(component)
    links = [
        f"    {a} -> {b} ({imp.where()})"
        for a in component for b, imp in sorted(edges.get(a, {}).items()) if b in members
    ]
    return "cycle among " + ", ".join(component) + ":\n" + "\n".join(links)


def layer_violations(imports: list[Import]) -> list[str]:
    """Every import from one layer into a layer it may not use, as 'file:line: a -> b'."""
    bad: dict[str, None] = {}  # ordered, one line per statement and target
    for imp in imports:
        source, target = unit_of(imp.source), unit_of(imp.target)
        if source != target and target not in ALLOWED.get(source, set()):
            bad[f"{imp.where()}: {imp.source} imports {imp.target} ({source} may not import {target})"] = None
    return list(bad)


def package_cycles(imports: list[Import]) -> list[str]:
    """Cycles between subpackages, counting imports at any level (a lazy import still couples them)."""
    edges: dict[str, dict[str, Import]] = defaultdict(dict)
    for imp in imports:
        a, b = subpackage_of(imp.source), subpackage_of(imp.target)
        if a != b:
            edges[a].setdefault(b, imp)
    return [_describe(c, edges) for c in _cycles(edges)]


def module_cycles(imports: list[Import]) -> list[str]:
    """Cycles between modules through imports at any level; a parent package's __init__ counts too."""
    edges: dict[str, dict[str, Import]] = defaultdict(dict)
    for imp in imports:
        edges[imp.source].setdefault(imp.target, imp)
    return [_describe(c, edges) for c in _cycles(edges)]


def test_every_top_folder_is_scanned():
    units = {unit_of(m) for m in MODULES}
    assert units == set(ALLOWED), units
    assert len(IMPORTS) > 200  # the parser resolves our imports at all


def test_no_python_outside_the_layer_map():
    found = unknown_packages(ROOT)
    assert not found, "\n".join(found)


def test_dynamic_imports_of_the_real_tree_are_seen():
    # The CLI loads each command's module by name from its table: those are imports of the CLI.
    dynamic = {i.target for i in IMPORTS if i.source == "trajscope.cli"}
    assert {"trajscope.cli.audit_report_cmd", "trajscope.cli.ingest_cmd"} <= dynamic


def test_no_import_of_a_bare_stage_name():
    found = stale_imports(ROOT, MODULES, OUTSIDE_MODULES)
    assert not found, "\n".join(found)


def test_no_import_against_the_flow():
    bad = layer_violations(IMPORTS)
    assert not bad, "imports against the one-way flow (docs/architecture.md):\n" + "\n".join(bad)


def test_format_imports_only_stdlib_and_third_party():
    bad = [imp.where() + f": {imp.target}" for imp in IMPORTS
           if unit_of(imp.source) == "trajscope.format" and unit_of(imp.target) != "trajscope.format"]
    assert not bad, "trajscope/format must be the bottom layer:\n" + "\n".join(bad)


def test_no_cycle_between_subpackages():
    found = package_cycles(IMPORTS)
    assert not found, "\n".join(found)


def test_no_cycle_between_modules():
    found = module_cycles(IMPORTS)
    assert not found, "\n".join(found)


# The checker itself, on synthetic imports: it must catch what it claims to.

def _fake(source: str, target: str, line: int = 1) -> Import:
    return Import(source, target, ROOT / "x.py", line, True)


def test_checker_flags_a_warehouse_import_of_engine_with_its_line():
    bad = layer_violations([_fake("trajscope.warehouse._loader", "trajscope.engine.judges", 7)])
    assert bad == ["x.py:7: trajscope.warehouse._loader imports trajscope.engine.judges "
                   "(trajscope.warehouse may not import trajscope.engine)"]
    assert layer_violations([_fake("trajscope.app.ui", "trajscope.engine.runs")])
    assert layer_violations([_fake("trajscope.format._codec", "trajscope.ingest.datasets")])
    assert not layer_violations([_fake("trajscope.engine.runs", "trajscope.warehouse"),
                                 _fake("trajscope.app.upload", "trajscope.ingest.importers")])


def test_checker_finds_a_two_package_cycle_and_a_module_cycle():
    cycle = [_fake("trajscope.engine.entities._coverage", "trajscope.engine.judges", 3),
             _fake("trajscope.engine.judges._pass", "trajscope.engine.entities", 9)]
    (found,) = package_cycles(cycle)
    assert "trajscope.engine.entities, trajscope.engine.judges" in found and "x.py:3" in found and "x.py:9" in found
    assert module_cycles([_fake("a.b", "a.c"), _fake("a.c", "a.d"), _fake("a.d", "a.b")])
    assert not module_cycles([_fake("a.b", "a.c"), _fake("a.c", "a.d")])


def test_function_level_imports_are_seen():
    source = "def f():\n    from trajscope.engine.judges import token_f1\n"
    collector = _Collector("trajscope.warehouse.audit._loader", ROOT / "warehouse/audit/_loader.py")
    collector.visit(ast.parse(source))
    (imp,) = collector.found
    assert imp.target == "trajscope.engine.judges" and imp.line == 2 and not imp.module_level


def test_relative_imports_resolve_to_the_module_they_name():
    source = "from .._connection import open_warehouse\nfrom . import _bootstrap\nfrom .._loader import IngestReport\n"
    collector = _Collector("trajscope.warehouse.audit._loader", ROOT / "warehouse/audit/_loader.py")
    collector.visit(ast.parse(source))
    assert [i.target for i in collector.found] == [
        "trajscope.warehouse._connection", "trajscope.warehouse.audit._bootstrap", "trajscope.warehouse._loader"]


# The checker on a small fake tree: a dynamic import against the flow and an unknown package are caught.

def _tree(root: Path, files: dict[str, str]) -> list[str]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    modules = _modules(root, [t for t in TOP_PACKAGES if (root / t).is_dir()])
    outside = _modules(root, [t for t in OUTSIDE if (root / t).is_dir()])
    return (layer_violations(imports_of(root, modules, outside)) + unknown_packages(root)
            + stale_imports(root, modules, outside))


_CLEAN = {
    "trajscope/__init__.py": "", "trajscope/format/__init__.py": "", "ingest/__init__.py": "",
    "warehouse/__init__.py": "", "warehouse/_loader.py": "import importlib\n",
    "engine/__init__.py": "", "engine/judges.py": "", "app/__init__.py": "",
    "tests/test_x.py": "import trajscope.engine.judges\n", "bench/b.py": "import trajscope.warehouse\n",
    "build/lib/engine/x.py": "", "docs/notes.md": "",
}


def test_fake_tree_without_violations_passes(tmp_path):
    assert _tree(tmp_path, _CLEAN) == []


def test_checker_flags_import_module_of_a_higher_layer(tmp_path):
    found = _tree(tmp_path, {**_CLEAN, "warehouse/_loader.py":
                             "import importlib\n\ndef f():\n"
                             "    return importlib.import_module('trajscope.engine.judges')\n"})
    assert found == ["warehouse/_loader.py:4: trajscope.warehouse._loader imports trajscope.engine.judges "
                     "(trajscope.warehouse may not import trajscope.engine)"]


def test_checker_flags_dunder_import_a_from_import_and_a_literal_bound_name(tmp_path):
    found = _tree(tmp_path, {**_CLEAN,
                             "ingest/a.py": "m = __import__('trajscope.warehouse._loader')\n",
                             "ingest/b.py": "from importlib import import_module\nNAME = 'trajscope.engine'\n"
                                            "x = import_module(NAME)\n",
                             "warehouse/c.py": "import importlib\n"
                                               "x = importlib.import_module('.judges', 'trajscope.engine')\n"
                                               "y = importlib.import_module('._loader', __package__)\n"})
    assert sorted(found) == [
        "ingest/a.py:1: trajscope.ingest.a imports trajscope.warehouse._loader "
        "(trajscope.ingest may not import trajscope.warehouse)",
        "ingest/b.py:3: trajscope.ingest.b imports trajscope.engine (trajscope.ingest may not import trajscope.engine)",
        # relative to the package argument; `__package__` is the importing package (allowed)
        "warehouse/c.py:2: trajscope.warehouse.c imports trajscope.engine.judges "
        "(trajscope.warehouse may not import trajscope.engine)"]


def test_checker_flags_a_computed_name_when_the_file_names_a_higher_module(tmp_path):
    found = _tree(tmp_path, {**_CLEAN, "ingest/plugins.py":
                             "import importlib\nTABLE = {'j': ('trajscope.engine.judges', 1)}\n"
                             "def load(k):\n    return importlib.import_module(TABLE[k][0])\n"})
    assert found == ["ingest/plugins.py:2: trajscope.ingest.plugins imports trajscope.engine.judges "
                     "(trajscope.ingest may not import trajscope.engine)"]


def test_checker_flags_a_layer_importing_tests_or_bench(tmp_path):
    found = _tree(tmp_path, {**_CLEAN, "engine/judges.py": "import importlib\nimportlib.import_module('bench.b')\n"})
    assert found == ["engine/judges.py:2: trajscope.engine.judges imports bench.b "
                     "(trajscope.engine may not import bench)"]


def test_checker_flags_an_unknown_top_level_package(tmp_path):
    found = _tree(tmp_path, {**_CLEAN, "plugins/__init__.py": "", "plugins/x.py": "import trajscope.engine\n",
                             "tool.py": "", "data/readme.txt": ""})
    assert found == [
        "plugins/: Python code in no layer of the one-way flow (add it to ALLOWED in tests/test_architecture.py, "
        "or move it into a layer)",
        "tool.py: Python code in no layer of the one-way flow (add it to ALLOWED in tests/test_architecture.py, "
        "or move it into a layer)",
    ]


def test_checker_flags_a_bare_stage_import_in_code_and_tests(tmp_path):
    found = _tree(tmp_path, {**_CLEAN, "engine/judges.py": "from warehouse import x\n",
                             "tests/test_y.py": "import app.ui as ui\n"})
    assert sorted(found) == ["engine/judges.py:1: warehouse.x is not installed; import trajscope.warehouse.x",
                             "tests/test_y.py:1: app.ui is not installed; import trajscope.app.ui"]
