"""The package layout holds: the domain never imports the interfaces, and no import cycles.

Imports are read from the source (every ``import``/``from … import``, also inside functions,
but not under ``if TYPE_CHECKING:``), so a lazy import that hides a cycle or a layer breach at
import time is still caught.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "mt_eval"
INTERFACES = ("mt_eval.cli", "mt_eval.render")  # the only places typer (cli) and rich (both) belong


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, modules: set[str]) -> list[str]:
    """Every imported module: ``from a import b`` is ``a.b`` when that is a module, else ``a``."""
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.append(sub if sub in modules else node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


_FILES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
MODULES = {m: _imports(ast.parse(p.read_text(encoding="utf-8")), set(_FILES)) for m, p in _FILES.items()}
ENTRY_POINTS = {"mt_eval.__main__"}  # ``python -m mt_eval`` runs the CLI


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_walk_sees_the_packages() -> None:
    """Guard against a vacuous pass: the walk found the CLI, the renderers and the domain."""
    assert "mt_eval.cli" in MODULES and "mt_eval.render.card" in MODULES and "mt_eval.scoring.pipeline" in MODULES
    assert any(_in(name, "typer") for name in MODULES["mt_eval.cli"])


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not any(_in(m, i) for i in INTERFACES)))
def test_domain_modules_import_neither_typer_nor_rich(module: str) -> None:
    bad = [name for name in MODULES[module] if _in(name, "typer") or _in(name, "rich") or _in(name, "click")]
    assert not bad, f"{module} imports {bad}: rendering goes in mt_eval.render, commands in mt_eval.cli"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _in(m, "mt_eval.render")))
def test_renderers_do_not_import_typer(module: str) -> None:
    assert not [n for n in MODULES[module] if _in(n, "typer") or _in(n, "mt_eval.cli")]


def test_only_the_cli_imports_the_cli() -> None:
    outside = {m: [n for n in names if _in(n, "mt_eval.cli")] for m, names in MODULES.items()
               if not _in(m, "mt_eval.cli") and m not in ENTRY_POINTS}
    assert not {m: n for m, n in outside.items() if n}


def _graph() -> dict[str, set[str]]:
    return {m: {n for n in names if n in MODULES and n != m} for m, names in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative enough here)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            strong(v)
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


WEB_FRAMEWORKS = ("fastapi", "starlette", "uvicorn")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not _in(m, "mt_eval.web") and m != "mt_eval.cli.web"))
def test_only_the_web_package_imports_the_web_framework(module: str) -> None:
    """Web routes live in ``mt_eval.web``; ``cli/web.py`` only starts the server."""
    bad = [n for n in MODULES[module] if any(_in(n, w) for w in WEB_FRAMEWORKS)]
    assert not bad, f"{module} imports {bad}: web routes belong in mt_eval.web"
