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
No cycle, neither between subpackages (engine.entities <-> engine.judges) nor between modules; `from pkg import
sub` needs pkg as well as pkg.sub.
A dynamic import counts as an import: `importlib.import_module`, `__import__`, `pkgutil.resolve_name`,
`importlib.util.find_spec` and `runpy.run_module`, under any alias, through `getattr`/`vars` or a name assigned one.
A child process that runs our code (`-m module`, a `-c` script's imports) is an edge too: each is declared in
PROCESS_EDGES with the layer it enters. Every folder of the checkout (hidden and git-ignored ones included) but
those EXEMPT names is searched for Python code, and code that is neither a layer nor OUTSIDE fails the suite,
so a new package cannot sit beside the layers unchecked.
"""
from __future__ import annotations

import ast
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP_PACKAGES = ("trajscope", "app", "engine", "warehouse", "ingest")
# Top-level folders that install inside the namespace as trajscope.<folder> (setup.py).
STAGES = frozenset({"app", "engine", "warehouse", "ingest"})
# Layers inside the trajscope/ folder; those with subpackages of their own are cycle-checked per subpackage.
INNER_LAYERS = ("format", "runtime", "analysis", "api", "cli")
NESTED = STAGES | {"analysis"}
# Python outside the layers: it may use every layer, and no layer may import it.
OUTSIDE = {"tests": "the test suite", "bench": "benchmark scripts, run as programs",
           "setup.py": "the build's map of the stage folders into the namespace"}
# The only folders not searched for Python code, each with why; every other folder, hidden or git-ignored, is.
EXEMPT = {".git": "git's own store", ".venv": "the virtual environment: third-party packages",
          ".venv-peers": "bench/peers.py's environment for Phoenix: third-party packages",
          "build": "build outputs: setuptools' copies of the layers and `make typecheck`'s links to them",
          "dist": "built wheels and source archives"}

# unit -> the units it may import besides itself.
ALLOWED: dict[str, set[str]] = {
    "trajscope.format": set(),
    # Process housekeeping (cache folder, dead processes' folders, disk room, prefetch): stdlib only.
    "trajscope.runtime": set(),
    "trajscope.ingest": {"trajscope.format"},
    "trajscope.warehouse": {"trajscope.format", "trajscope.runtime"},
    # Statistics, typed queries, the audit's estimates and the paper reports: above storage.
    "trajscope.analysis": {"trajscope.format", "trajscope.runtime", "trajscope.warehouse"},
    "trajscope.engine": {"trajscope.format", "trajscope.runtime", "trajscope.ingest", "trajscope.warehouse",
                         "trajscope.analysis"},
    "trajscope.app": {"trajscope.format", "trajscope.runtime", "trajscope.ingest", "trajscope.warehouse",
                      "trajscope.analysis"},
    # The notebook API: the functions the CLI commands and the notebook share (app: its SQL and charts only).
    "trajscope.api": {"trajscope.format", "trajscope.runtime", "trajscope.ingest", "trajscope.warehouse",
                      "trajscope.analysis", "trajscope.app"},
    "trajscope.cli": {"trajscope.format", "trajscope.runtime", "trajscope.ingest", "trajscope.warehouse",
                      "trajscope.analysis", "trajscope.engine", "trajscope.app", "trajscope.api", "trajscope"},
    # trajscope/__init__.py (the API, loaded lazily; the ingest stage, callable) and __main__.py
    "trajscope": {"trajscope.cli", "trajscope.format", "trajscope.api", "trajscope.ingest"},
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


def _is_python(path: Path) -> bool:
    """A .py file, or an extensionless script whose #! line runs Python."""
    if path.suffix == ".py":
        return True
    if path.suffix or not path.is_file() or path.is_symlink():
        return False
    with path.open("rb") as file:
        first = file.readline(200)
    return first.startswith(b"#!") and b"python" in first


def _first_python_file(entry: Path) -> Path | None:
    if entry.is_file():
        return entry if _is_python(entry) else None
    for folder, subfolders, files in os.walk(entry):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            if _is_python(Path(folder, name)):
                return Path(folder, name)
    return None


def unknown_packages(root: Path) -> list[str]:
    """Top-level entries holding Python code (hidden and git-ignored ones too) that are neither a layer, OUTSIDE
    nor EXEMPT, each with its first Python file."""
    found = []
    for entry in sorted(root.iterdir()):
        if entry.name in TOP_PACKAGES or entry.name in OUTSIDE or entry.name in EXEMPT:
            continue
        first = _first_python_file(entry)
        if first is not None:
            found.append(f"{entry.name}{'/' if entry.is_dir() else ''} ({first.relative_to(root)}): Python code in "
                         "no layer of the one-way flow (add it to ALLOWED in tests/test_architecture.py, or move it "
                         "into a layer)")
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


# Calls that import (or find, to load) the module their first argument names, by qualified name. An alias
# (`import importlib as il`, `from importlib import import_module as im`), `getattr(importlib, "import_module")`,
# `vars(importlib)["import_module"]` and a name assigned any of these resolve to the same qualified name;
# a bare `import_module` bound by no import of the file counts too.
LOADERS = frozenset({"importlib.import_module", "builtins.__import__", "importlib.__import__", "import_module",
                     "pkgutil.resolve_name", "importlib.util.find_spec", "runpy.run_module"})
# Loaders whose second argument (or package=) anchors a relative name.
_ANCHORED = frozenset({"importlib.import_module", "import_module", "importlib.util.find_spec"})


def _text(node: ast.AST, strings: dict[str, list[str] | None]) -> str | None:
    """A string constant, or a name bound only to one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    bound = strings.get(node.id) if isinstance(node, ast.Name) else None
    return bound[0] if bound and len(set(bound)) == 1 else None


def _qualified(node: ast.AST, bound: dict[str, str], strings: dict[str, list[str] | None]) -> str | None:
    """The dotted name an expression refers to through the file's imports (None: not one we can name)."""
    if isinstance(node, ast.Name):
        return bound.get(node.id) or {"__import__": "builtins.__import__",
                                      "import_module": "import_module"}.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _qualified(node.value, bound, strings)
        return f"{base}.{node.attr}" if base else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and len(node.args) >= 2):
        base, attr = _qualified(node.args[0], bound, strings), _text(node.args[1], strings)
        return f"{base}.{attr}" if base and attr else None
    if isinstance(node, ast.Subscript):  # vars(m)["f"], m.__dict__["f"]
        holder = node.value
        owner = (holder.value if isinstance(holder, ast.Attribute) and holder.attr == "__dict__"
                 else holder.args[0] if isinstance(holder, ast.Call) and isinstance(holder.func, ast.Name)
                 and holder.func.id == "vars" and holder.args else None)
        base, attr = (_qualified(owner, bound, strings) if owner else None), _text(node.slice, strings)
        return f"{base}.{attr}" if base and attr else None
    return None


def _bindings(tree: ast.AST, strings: dict[str, list[str] | None]) -> dict[str, str]:
    """local name -> the dotted name an import (or an assignment of an imported name) binds it to, file-wide."""
    bound: dict[str, str] = {}
    for node in sorted((n for n in ast.walk(tree) if hasattr(n, "lineno")), key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.split(".")[0]
                bound[alias.asname or head] = alias.name if alias.asname else head
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = _qualified(node.value, bound, strings)
            if target:
                bound[node.targets[0].id] = target
    return bound


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
        self.launches: list[Import] = []  # our modules a child process of this one runs
        self.tree: ast.AST | None = None
        self.strings: dict[str, list[str] | None] = {}
        self.bound: dict[str, str] = {}
        self.launch_line: int | None = None  # a `-c` script's imports are reported at the launch

    def visit(self, node: ast.AST):
        if self.tree is None:
            self.tree = node
            self.strings = _assigned_strings(node)
            self.bound = _bindings(node, self.strings)
        return super().visit(node)

    def _add(self, name: str, line: int, into: list[Import] | None = None) -> None:
        line = line if self.launch_line is None else self.launch_line
        if name.split(".")[0] in STAGES:
            self.stale.append(f"{self.path.relative_to(self.root)}:{line}: {name} is not installed; "
                              f"import trajscope.{name}")
            return
        target = _resolve(name, self.known, self.outside)
        if target is not None and target != self.module:
            (self.found if into is None else into).append(
                Import(self.module, target, self.path, line, self.depth == 0, self.root))

    def _file_literals(self, line: int, into: list[Import] | None = None) -> None:
        """A computed module name: every literal of the file that names one of our modules is a possible target.

        A computed import skips the bare root `trajscope`, also the distribution's name (versions, cache folders);
        a launch counts it (`python -m trajscope <command>`)."""
        for text, lines in _literal_strings(self.tree).items() if self.tree is not None else ():
            if (text in self.known or text in self.outside) and (into is not None or text != "trajscope"):
                self._add(text, lines[0] if into is None else line, into)

    def _package(self) -> str:
        return self.module if _is_package(self.module, self.known) else self.module.rpartition(".")[0]

    def visit_Call(self, node: ast.Call) -> None:
        loader = _qualified(node.func, self.bound, self.strings)
        if loader in LOADERS and node.args:
            self._dynamic(node, loader)
        self.generic_visit(node)

    def _names(self, arg: ast.AST) -> list[str] | None:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return [arg.value]
        return self.strings.get(arg.id) if isinstance(arg, ast.Name) else None

    def _dynamic(self, node: ast.Call, loader: str) -> None:
        names = self._names(node.args[0])
        if names is None:  # the CLI's table of command modules
            self._file_literals(node.lineno)
            return
        anchor = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords
                                                               if k.arg == "package"), None)
        for name in (n.partition(":")[0] for n in names):  # pkgutil.resolve_name("pkg.mod:attr")
            if loader not in _ANCHORED and name.startswith("."):
                continue
            if name.startswith("."):  # import_module(".x", package=...): relative to that package
                level = len(name) - len(name.lstrip("."))
                package = (anchor.value if isinstance(anchor, ast.Constant) and isinstance(anchor.value, str)
                           else self._package())
                for _ in range(level - 1):
                    package = package.rpartition(".")[0]
                name = f"{package}.{name.lstrip('.')}" if name.lstrip(".") else package
            self._add(name, node.lineno)

    def visit_List(self, node: ast.List | ast.Tuple) -> None:
        """An argument vector `[..., "-m", module, ...]` or `[..., "-c", script, ...]` launches our code."""
        for flag, arg in zip(node.elts, node.elts[1:], strict=False):
            if not (isinstance(flag, ast.Constant) and flag.value in ("-m", "-c")):
                continue
            names = self._names(arg)
            if flag.value == "-c":
                for script in names or ():
                    self._script(script, node.lineno)
            elif names is None:  # a computed module (`"-m", *command(...)`)
                self._file_literals(node.lineno, self.launches)
            else:
                for name in names:
                    self._add(name, node.lineno, self.launches)
        self.generic_visit(node)

    visit_Tuple = visit_List

    def _script(self, script: str, line: int) -> None:
        try:
            tree = ast.parse(script)
        except SyntaxError:
            return
        inner = _Collector(self.module, self.path, self.known, self.root, self.outside)
        inner.launch_line = line
        inner.visit(tree)
        for imp in inner.found:
            self.launches.append(Import(self.module, imp.target, self.path, line, True, self.root))
        self.stale.extend(inner.stale)

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
        names = [f"{base}.{alias.name}" for alias in node.names]
        # `from pkg import submodule` depends on the submodule, and on pkg too: it reads the submodule off pkg's
        # module object; `from pkg import name` depends on pkg.
        if base.split(".")[0] not in STAGES and _resolve(base, self.known, self.outside) not in {
                _resolve(name, self.known, self.outside) for name in names}:
            self._add(base, node.lineno)
        for name in names:
            self._add(name, node.lineno)


def _collected(root: Path, modules: dict[str, Path], outside: dict[str, Path] | None,
               scanned: dict[str, Path]) -> list[_Collector]:
    """The collector of each scanned module, having visited its file."""
    collectors = []
    for module, path in scanned.items():
        collector = _Collector(module, path, modules, root, outside)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        collectors.append(collector)
    return collectors


def imports_of(root: Path, modules: dict[str, Path], outside: dict[str, Path] | None = None) -> list[Import]:
    """Every internal import (static or dynamic) of the modules of a tree."""
    return [imp for c in _collected(root, modules, outside, modules) for imp in c.found]


def stale_imports(root: Path, modules: dict[str, Path], outside: dict[str, Path]) -> list[str]:
    """Imports of a bare stage name (`from engine import x`) anywhere in the tree, tests and bench included."""
    return [line for c in _collected(root, modules, outside, {**modules, **outside}) for line in c.stale]


def launches_of(root: Path, modules: dict[str, Path], outside: dict[str, Path] | None = None) -> list[Import]:
    """Every module of ours a layer's code runs in a child process (`-m module`, a `-c` script's imports)."""
    return [imp for c in _collected(root, modules, outside, modules) for imp in c.launches]


IMPORTS = imports_of(ROOT, MODULES)
LAUNCHES = launches_of(ROOT, MODULES)

# Every launch of our code in a child process, by launching file and the module the child runs, with the layer
# the child enters and, for a launch against the one-way flow, why. A launch is an edge of the flow like an
# import, checked against ALLOWED; a child shares no module object with its parent, so a launch closes no import
# cycle: what the parent depends on is the child's command line.
PROCESS_EDGES: dict[tuple[str, str], tuple[str, str]] = {
    ("app/jobs/_scan.py", "trajscope"): (
        "trajscope.cli", "the Scan page starts `trajscope scan`, the command a user would type, detached so the "
        "scan outlives the tab; the page knows its argument list and the progress file's format, nothing more"),
    ("trajscope/cli/demo_cmd.py", "trajscope"): ("trajscope.cli", ""),
    ("engine/llm/_local_server.py", "trajscope.engine.llm._ik_server"): ("trajscope.engine", ""),
    ("engine/llm/_local_server.py", "trajscope.engine.llm._llama_server"): ("trajscope.engine", ""),
    ("warehouse/read/_query.py", "trajscope.warehouse.read._worker"): ("trajscope.warehouse", ""),
}


def entered_layer(module: str) -> str:
    """The layer a child process running the module enters (`python -m trajscope` runs the CLI)."""
    return "trajscope.cli" if module in ("trajscope", "trajscope.__main__") else unit_of(module)


def launch_problems(launches: list[Import], declared: dict[tuple[str, str], tuple[str, str]]) -> list[str]:
    """Launches missing from the declared table, declared wrongly, or against the flow with no reason; and rows
    that name a launch the code no longer makes."""
    problems: dict[str, None] = {}
    seen = set()
    for launch in launches:
        key = (str(launch.file.relative_to(launch.root)), launch.target)
        seen.add(key)
        source, entered = unit_of(launch.source), entered_layer(launch.target)
        if key not in declared:
            problems[f"{launch.where()}: {launch.source} launches {launch.target} in a child process "
                     f"(entering {entered}), not declared in PROCESS_EDGES"] = None
            continue
        layer, why = declared[key]
        if layer != entered:
            problems[f"{launch.where()}: PROCESS_EDGES says {launch.target} enters {layer}; it enters {entered}"] = None
        if entered != source and entered not in ALLOWED.get(source, set()) and not why:
            problems[f"{launch.where()}: {launch.source} launches {launch.target} against the one-way flow "
                     f"({source} may not import {entered}) and PROCESS_EDGES gives no reason"] = None
    problems.update({f"PROCESS_EDGES: {file} no longer launches {module}": None
                     for file, module in declared if (file, module) not in seen})
    return list(problems)


def unit_of(module: str) -> str:
    """The layer a module belongs to: trajscope.<layer>, or its top-level folder (tests, bench)."""
    parts = module.split(".")
    if parts[0] == "trajscope" and len(parts) > 1 and parts[1] in (*INNER_LAYERS, *STAGES):
        return f"trajscope.{parts[1]}"
    return parts[0]


def subpackage_of(module: str) -> str:
    """The first-level subpackage a module lives in (trajscope.engine.judges); a module directly in a layer
    (trajscope.warehouse._connection) and a layer's __init__ (trajscope.warehouse) are nodes of their own."""
    parts = module.split(".")
    depth = 3 if parts[0] == "trajscope" and len(parts) > 1 and parts[1] in NESTED else 2
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


def test_every_process_launch_is_declared_and_follows_the_flow():
    found = launch_problems(LAUNCHES, PROCESS_EDGES)
    assert not found, "\n".join(found)


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
    source = "from .._connection import open_warehouse\nfrom . import _errors\nfrom .._loader import IngestReport\n"
    collector = _Collector("trajscope.warehouse.read._open", ROOT / "warehouse/read/_open.py")
    collector.visit(ast.parse(source))
    assert [i.target for i in collector.found] == [
        "trajscope.warehouse._connection", "trajscope.warehouse.read", "trajscope.warehouse.read._errors",
        "trajscope.warehouse._loader"]


# The checker on a small fake tree: a dynamic import against the flow and an unknown package are caught.

def _tree(root: Path, files: dict[str, str]) -> list[str]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    modules = _modules(root, [t for t in TOP_PACKAGES if (root / t).is_dir()])
    outside = _modules(root, [t for t in OUTSIDE if (root / t).is_dir()])
    return (layer_violations(imports_of(root, modules, outside)) + unknown_packages(root)
            + stale_imports(root, modules, outside) + launch_problems(launches_of(root, modules, outside), {}))


_CLEAN = {
    "trajscope/__init__.py": "", "trajscope/format/__init__.py": "", "ingest/__init__.py": "",
    "warehouse/__init__.py": "", "warehouse/_loader.py": "import importlib\n",
    "engine/__init__.py": "", "engine/judges.py": "", "app/__init__.py": "",
    "tests/test_x.py": "import trajscope.engine.judges\n", "bench/b.py": "import trajscope.warehouse\n",
    "build/lib/engine/x.py": "", "docs/notes.md": "", ".git/hooks/x.py": "", ".venv/lib/x.py": "",
}


def test_fake_tree_without_violations_passes(tmp_path):
    assert _tree(tmp_path, _CLEAN) == []


def test_checker_flags_import_module_of_a_higher_layer(tmp_path):
    found = _tree(tmp_path, {**_CLEAN, "warehouse/_loader.py":
                             "import importlib\n\ndef f():\n"
                             "    return importlib.import_module('trajscope.engine.judges')\n"})
    assert found == ["warehouse/_loader.py:4: trajscope.warehouse._loader imports trajscope.engine.judges "
                     "(trajscope.warehouse may not import trajscope.engine)"]


def test_checker_keeps_storage_below_analysis_and_runtime_at_the_bottom(tmp_path):
    found = _tree(tmp_path, {**_CLEAN,
                             "trajscope/analysis/__init__.py": "", "trajscope/runtime/__init__.py": "",
                             "warehouse/_loader.py": "from trajscope.analysis import stats\n",
                             "trajscope/runtime/_cache.py": "import trajscope.warehouse\n",
                             "trajscope/analysis/report.py": "from trajscope.runtime import cache_dir\n"
                                                             "import trajscope.warehouse\n"})
    assert sorted(found) == [
        "trajscope/runtime/_cache.py:1: trajscope.runtime._cache imports trajscope.warehouse "
        "(trajscope.runtime may not import trajscope.warehouse)",
        "warehouse/_loader.py:1: trajscope.warehouse._loader imports trajscope.analysis "
        "(trajscope.warehouse may not import trajscope.analysis)"]


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
        "plugins/ (plugins/__init__.py): Python code in no layer of the one-way flow (add it to ALLOWED in "
        "tests/test_architecture.py, or move it into a layer)",
        "tool.py (tool.py): Python code in no layer of the one-way flow (add it to ALLOWED in "
        "tests/test_architecture.py, or move it into a layer)",
    ]


def test_checker_flags_python_in_hidden_and_ignored_folders_and_scripts_without_py(tmp_path):
    found = _tree(tmp_path, {**_CLEAN, ".plugins/x.py": "import trajscope.engine\n",
                             "runs/deep/hook.py": "", "artifacts/tool": "#!/usr/bin/env python3\nprint(1)\n",
                             "screenshots/run": "#!/bin/sh\necho\n"})
    assert [line.split(":")[0] for line in found] == [
        ".plugins/ (.plugins/x.py)", "artifacts/ (artifacts/tool)", "runs/ (runs/deep/hook.py)"]


# Each way around a plain import statement, injected into a fake tree: the checker names its file and line.
_AGAINST = "(trajscope.warehouse may not import trajscope.engine)"


def _bypass(tmp_path: Path, source: str) -> list[str]:
    return _tree(tmp_path, {**_CLEAN, "warehouse/_loader.py": source})


def test_checker_flags_an_aliased_importlib(tmp_path):
    found = _bypass(tmp_path, "import importlib as il\n\nx = il.import_module('trajscope.engine.judges')\n")
    assert found == [f"warehouse/_loader.py:3: trajscope.warehouse._loader imports trajscope.engine.judges {_AGAINST}"]


def test_checker_flags_an_aliased_import_module(tmp_path):
    found = _bypass(tmp_path, "from importlib import import_module as im\n\n\ndef f():\n"
                              "    return im('trajscope.engine')\n")
    assert found == [f"warehouse/_loader.py:5: trajscope.warehouse._loader imports trajscope.engine {_AGAINST}"]


def test_checker_flags_getattr_vars_and_a_reassigned_loader(tmp_path):
    found = _bypass(tmp_path, "import importlib\nNAME = 'import_module'\n"
                              "a = getattr(importlib, 'import_module')('trajscope.engine.judges')\n"
                              "b = getattr(importlib, NAME)('trajscope.engine')\n"
                              "c = vars(importlib)['import_module']('trajscope.engine')\n"
                              "load = importlib.import_module\nd = load('trajscope.engine.judges')\n")
    assert found == [f"warehouse/_loader.py:{line}: trajscope.warehouse._loader imports {target} {_AGAINST}"
                     for line, target in ((3, "trajscope.engine.judges"), (4, "trajscope.engine"),
                                          (5, "trajscope.engine"), (7, "trajscope.engine.judges"))]


def test_checker_flags_pkgutil_resolve_name(tmp_path):
    found = _bypass(tmp_path, "import pkgutil\nf = pkgutil.resolve_name('trajscope.engine.judges:token_f1')\n")
    assert found == [f"warehouse/_loader.py:2: trajscope.warehouse._loader imports trajscope.engine.judges {_AGAINST}"]


def test_checker_flags_a_load_through_find_spec(tmp_path):
    found = _bypass(tmp_path, "import importlib.util\n\n\ndef load():\n"
                              "    spec = importlib.util.find_spec('trajscope.engine.judges')\n"
                              "    module = importlib.util.module_from_spec(spec)\n"
                              "    spec.loader.exec_module(module)\n    return module\n")
    assert found == [f"warehouse/_loader.py:5: trajscope.warehouse._loader imports trajscope.engine.judges {_AGAINST}"]


def test_checker_flags_undeclared_launches_of_our_code(tmp_path):
    found = _bypass(tmp_path, "import subprocess\nimport sys\nSCRIPT = 'from trajscope.engine import judges'\n"
                              "subprocess.run([sys.executable, '-m', 'trajscope.engine.judges'])\n"
                              "subprocess.run([sys.executable, '-c', SCRIPT])\n"
                              "subprocess.run([sys.executable, '-m', 'json.tool'])\n")
    assert found == [f"warehouse/_loader.py:{line}: trajscope.warehouse._loader launches {target} in a child "
                     "process (entering trajscope.engine), not declared in PROCESS_EDGES"
                     for line, target in ((4, "trajscope.engine.judges"), (5, "trajscope.engine"),
                                          (5, "trajscope.engine.judges"))]


def test_checker_flags_a_computed_launch_against_the_flow_without_a_reason(tmp_path):
    _tree(tmp_path, {**_CLEAN, "trajscope/__main__.py": "", "app/jobs.py":
                     "import sys\n\n\ndef command(x):\n    return ['trajscope', 'scan', x]\n\n\n"
                     "ARGV = [sys.executable, '-m', *command('r')]\n"})
    launches = launches_of(tmp_path, _modules(tmp_path, [t for t in TOP_PACKAGES if (tmp_path / t).is_dir()]))
    against = "trajscope.app.jobs launches trajscope against the one-way flow (trajscope.app may not import " \
              "trajscope.cli) and PROCESS_EDGES gives no reason"
    assert launch_problems(launches, {("app/jobs.py", "trajscope"): ("trajscope.cli", "")}) == [
        f"app/jobs.py:8: {against}"]
    assert launch_problems(launches, {("app/jobs.py", "trajscope"): ("trajscope.cli", "a detached job")}) == []
    assert launch_problems([], {("app/jobs.py", "trajscope"): ("trajscope.cli", "a detached job")}) == [
        "PROCESS_EDGES: app/jobs.py no longer launches trajscope"]


def test_checker_flags_a_bare_stage_import_in_code_and_tests(tmp_path):
    found = _tree(tmp_path, {**_CLEAN, "engine/judges.py": "from warehouse import x\n",
                             "tests/test_y.py": "import app.ui as ui\n"})
    assert sorted(found) == ["engine/judges.py:1: warehouse.x is not installed; import trajscope.warehouse.x",
                             "tests/test_y.py:1: app.ui is not installed; import trajscope.app.ui"]
