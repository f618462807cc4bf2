"""The package layout holds: the domain never imports the interfaces, packages import downwards, no cycles.

Imports are read from the source: every ``import``/``from … import`` (also inside functions, and relative ones
resolved against the importing module), and every ``importlib.import_module("…")``/``__import__("…")`` with a
literal name, but not under ``if TYPE_CHECKING:``. So a lazy import that hides a cycle or a layer breach at
import time is still caught. Each rule is also run on probe sources that break it (``test_each_rule_fails``),
so a rule that stopped seeing its breach fails here instead of passing vacuously.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "mt_eval"
INTERFACES = ("mt_eval.cli", "mt_eval.render", "mt_eval.web")  # typer (cli), rich (cli, render), fastapi (web)
ENTRY_POINTS = {"mt_eval.__main__"}  # ``python -m mt_eval`` runs the CLI

# Packages from the bottom up: a package imports only packages of lower layers (and its own modules). Packages
# of one layer do not import each other. ``mt_eval`` itself (its lazy public face) is at the top.
LAYERS: list[list[str]] = [
    ["errors", "version", "lazy", "plugins", "stats", "hashing", "native"],
    ["languages", "providers", "extras"],
    ["catalog", "analyzers"],
    ["corpus"],
    ["methods"],
    ["engine"],
    ["metrics"],
    ["scoring"],
    ["runcard"],
    ["comparison", "qa", "robustness"],
    ["api"],
    ["store"],
    ["review"],
    ["accounts"],
    ["judgments"],
    ["calibration"],
    ["sovereign", "sweep"],
    ["contest"],
    ["render"],
    ["web"],
    ["cli"],
    ["__main__", "mt_eval"],
]

# Imports that still run up a layer, each a package cycle not yet broken (issue 23 item 4). Empty since the last
# one (store -> review: the store is handed the review gate, ``store.query.ReviewGate``) was broken; never grow
# it: a new entry is a new cycle.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _dynamic(node: ast.Call) -> str | None:
    """The literal module name of ``importlib.import_module("x")``, ``import_module("x")`` or ``__import__("x")``."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
        value = node.args[0].value
        return value if isinstance(value, str) else None
    return None


def _base(module: str, is_package: bool, level: int) -> str:
    """The package a relative import of ``level`` dots starts from, inside ``module``."""
    parts = module.split(".")
    keep = len(parts) - level + (1 if is_package else 0)
    return ".".join(parts[:max(keep, 0)])


def imports_of(source: str, module: str, modules: set[str], is_package: bool = False) -> list[str]:
    """Every module ``source`` (the text of ``module``) imports: ``from a import b`` is ``a.b`` when that is a
    module, else ``a``; relative imports are resolved; dynamic imports with a literal name count."""
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for stmt in node.orelse:
                visit(stmt)
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                start = _base(module, is_package, node.level)
                base = f"{start}.{base}" if base and start else base or start
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append(sub if sub in modules else base)
        elif isinstance(node, ast.Call) and (name := _dynamic(node)):
            found.append(name)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


_FILES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
MODULES = {m: imports_of(p.read_text(encoding="utf-8"), m, set(_FILES), p.name == "__init__.py")
           for m, p in _FILES.items()}


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def package_of(module: str) -> str:
    """``mt_eval.scoring.pipeline`` → ``scoring``; a top-level module is its own package; the root is ``mt_eval``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


RANK = {package: i for i, layer in enumerate(LAYERS) for package in layer}


def rank(package: str) -> int:
    return RANK[package]


def is_domain(module: str) -> bool:
    return not any(_in(module, i) for i in INTERFACES) and module not in ENTRY_POINTS and module != "mt_eval"


def violations(module: str, names: list[str]) -> list[str]:
    """What ``module`` importing ``names`` breaks, one line each (empty: nothing)."""
    out = []
    for name in names:
        if is_domain(module) and any(_in(name, lib) for lib in ("typer", "rich", "click")):
            out.append(f"{module} imports {name}: rendering goes in mt_eval.render, commands in mt_eval.cli")
        if is_domain(module) and any(_in(name, i) for i in INTERFACES):
            out.append(f"{module} imports {name}: the domain never imports cli, render or web")
        if not _in(module, "mt_eval.web") and module != "mt_eval.cli.web" and any(
                _in(name, w) for w in ("fastapi", "starlette", "uvicorn")):
            out.append(f"{module} imports {name}: web routes belong in mt_eval.web")
        if _in(module, "mt_eval.render") and _in(name, "typer"):
            out.append(f"{module} imports {name}: renderers never import typer")
        if name.startswith("mt_eval.") and module.startswith("mt_eval."):
            a, b = package_of(module), package_of(name)
            if a != b and rank(b) >= rank(a) and (a, b) not in KNOWN_UPWARD:
                out.append(f"{module} imports {name}: {b} is not below {a} (tests/test_layers.py LAYERS)")
    return out


def test_the_walk_sees_the_packages() -> None:
    """Guard against a vacuous pass: the walk found the CLI, the renderers and the domain."""
    assert "mt_eval.cli" in MODULES and "mt_eval.render.card" in MODULES and "mt_eval.scoring.pipeline" in MODULES
    assert any(_in(name, "typer") for name in MODULES["mt_eval.cli"])


def test_every_package_has_a_layer() -> None:
    assert {package_of(m) for m in MODULES} <= set(RANK)


PROBES = {  # module, source, what must be said
    "render": ("mt_eval.scoring.probe", "import mt_eval.render.card\n", "never imports cli, render or web"),
    "web": ("mt_eval.scoring.probe", "from mt_eval.web import app\n", "never imports cli, render or web"),
    "relative cli": ("mt_eval.scoring.probe", "def f():\n    from ..cli import common\n", "never imports cli"),
    "relative upward": ("mt_eval.scoring.probe", "from ..runcard import builder\n", "runcard is not below scoring"),
    "dynamic typer": ("mt_eval.scoring.probe", "import importlib\nimportlib.import_module('typer')\n", "typer"),
    "dynamic rich": ("mt_eval.metrics.probe", "__import__('rich.table')\n", "rich"),
    "upward lazy": ("mt_eval.engine.probe", "def f():\n    from mt_eval.api.runs import evaluate_card\n",
                    "api is not below engine"),
    "same layer": ("mt_eval.qa.probe", "from mt_eval.comparison import engine\n", "comparison is not below qa"),
    "fastapi": ("mt_eval.store.probe", "import fastapi\n", "web routes belong in mt_eval.web"),
    # the store -> review cycle's old shape (a lazy import of the gate): the store is handed the gate now
    "store reads review": ("mt_eval.store.probe", "def f():\n    from mt_eval.review.gate import accepted_in\n",
                           "review is not below store"),
}


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_each_rule_fails_on_a_probe_that_breaks_it(probe: str) -> None:
    module, source, said = PROBES[probe]
    found = violations(module, imports_of(source, module, set(MODULES) | {module}))
    assert any(said in line for line in found), (probe, found)


def test_a_probe_inside_the_interfaces_or_downwards_passes() -> None:
    for module, source in (("mt_eval.cli.probe", "import typer\nfrom ..render import card\n"),
                           ("mt_eval.runcard.probe", "from ..scoring import pipeline\nimport mt_eval.errors\n")):
        assert violations(module, imports_of(source, module, set(MODULES) | {module})) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_imports_follow_the_layers(module: str) -> None:
    assert violations(module, MODULES[module]) == []


def test_only_the_cli_imports_the_cli() -> None:
    outside = {m: [n for n in names if _in(n, "mt_eval.cli")] for m, names in MODULES.items()
               if not _in(m, "mt_eval.cli") and m not in ENTRY_POINTS}
    assert not {m: n for m, n in outside.items() if n}


def _graph() -> dict[str, set[str]]:
    return {m: {n for n in names if n in MODULES and n != m} for m, names in MODULES.items()}


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {package_of(m): set() for m in MODULES}
    for module, names in MODULES.items():
        graph[package_of(module)] |= {package_of(n) for n in names if n in MODULES} - {package_of(module)}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
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
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_import_cycles() -> None:
    assert cycles(_graph()) == []


def test_package_cycles_are_only_the_known_ones() -> None:
    """Every package cycle lies within the packages of ``KNOWN_UPWARD`` (those not yet broken)."""
    allowed = {p for pair in KNOWN_UPWARD for p in pair}
    assert [c for c in cycles(package_graph()) if not set(c) <= allowed] == []
