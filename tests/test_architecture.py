"""The one-way flow of docs/architecture.md, checked on every import (module and function level).

Each failure names the importing file and line. The rule, by top-level unit:

    trajscope.format  -> nothing of ours (stdlib and third-party only)
    ingest            -> trajscope.format
    warehouse         -> trajscope.format
    engine            -> trajscope.format, ingest, warehouse
    app               -> trajscope.format, ingest, warehouse
    trajscope.cli     -> everything (the top)

and no cycle, neither between subpackages (engine.entities <-> engine.judges) nor between modules.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP_PACKAGES = ("trajscope", "app", "engine", "warehouse", "ingest")

# unit -> the units it may import besides itself.
ALLOWED: dict[str, set[str]] = {
    "trajscope.format": set(),
    "ingest": {"trajscope.format"},
    "warehouse": {"trajscope.format"},
    "engine": {"trajscope.format", "ingest", "warehouse"},
    "app": {"trajscope.format", "ingest", "warehouse"},
    "trajscope.cli": {"trajscope.format", "ingest", "warehouse", "engine", "app", "trajscope"},
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

    def where(self) -> str:
        return f"{self.file.relative_to(ROOT)}:{self.line}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top in TOP_PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" not in path.parts:
                found[_module_name(path)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The longest prefix of a dotted name that is one of our modules."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, path: Path):
        self.module, self.path = module, path
        self.depth = 0  # function nesting
        self.found: list[Import] = []

    def _add(self, name: str, line: int) -> None:
        target = _resolve(name)
        if target is not None and target != self.module:
            self.found.append(Import(self.module, target, self.path, line, self.depth == 0))

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
            package = self.module if _is_package(self.module) else self.module.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{node.module}" if node.module else package
        else:
            base = node.module or ""
        for alias in node.names:
            # `from pkg import submodule` depends on the submodule; `from pkg import name` on pkg.
            self._add(f"{base}.{alias.name}", node.lineno)


def _imports() -> list[Import]:
    found: list[Import] = []
    for module, path in MODULES.items():
        collector = _Collector(module, path)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        found.extend(collector.found)
    return found


IMPORTS = _imports()


def unit_of(module: str) -> str:
    """The layer a module belongs to: trajscope.format, trajscope.cli, or its top-level folder."""
    parts = module.split(".")
    if parts[0] == "trajscope" and len(parts) > 1 and parts[1] in ("format", "cli"):
        return f"trajscope.{parts[1]}"
    return parts[0]


def subpackage_of(module: str) -> str:
    """The first-level subpackage a module lives in (engine.judges); a module directly in a top package
    (warehouse._connection) and a top package's __init__ (warehouse) are nodes of their own."""
    parts = module.split(".")
    if len(parts) >= 2 and ".".join(parts[:2]) in MODULES and _is_package(".".join(parts[:2])):
        return ".".join(parts[:2])
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
        if source != target and target not in ALLOWED[source]:
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
    bad = layer_violations([_fake("warehouse._loader", "engine.judges", 7)])
    assert bad == ["x.py:7: warehouse._loader imports engine.judges (warehouse may not import engine)"]
    assert layer_violations([_fake("app.ui", "engine.runs")])
    assert layer_violations([_fake("trajscope.format._codec", "ingest.datasets")])
    assert not layer_violations([_fake("engine.runs", "warehouse"), _fake("app.upload", "ingest.importers")])


def test_checker_finds_a_two_package_cycle_and_a_module_cycle():
    cycle = [_fake("engine.entities._coverage", "engine.judges", 3), _fake("engine.judges._pass", "engine.entities", 9)]
    (found,) = package_cycles(cycle)
    assert "engine.entities, engine.judges" in found and "x.py:3" in found and "x.py:9" in found
    assert module_cycles([_fake("a.b", "a.c"), _fake("a.c", "a.d"), _fake("a.d", "a.b")])
    assert not module_cycles([_fake("a.b", "a.c"), _fake("a.c", "a.d")])


def test_function_level_imports_are_seen():
    source = "def f():\n    from engine.judges import token_f1\n"
    collector = _Collector("warehouse.audit._loader", ROOT / "warehouse/audit/_loader.py")
    collector.visit(ast.parse(source))
    (imp,) = collector.found
    assert imp.target == "engine.judges" and imp.line == 2 and not imp.module_level


def test_relative_imports_resolve_to_the_module_they_name():
    source = "from .._connection import open_warehouse\nfrom . import _bootstrap\nfrom .._loader import IngestReport\n"
    collector = _Collector("warehouse.audit._loader", ROOT / "warehouse/audit/_loader.py")
    collector.visit(ast.parse(source))
    assert [i.target for i in collector.found] == ["warehouse._connection", "warehouse.audit._bootstrap",
                                                   "warehouse._loader"]
