"""Import-graph numbers (issue 23 item 4): package cycles in the source, and what one ``mt-eval run`` enters.

Static: every ``import``/``from … import`` under ``src/mt_eval`` (also inside functions, not under
``if TYPE_CHECKING:``), folded to packages (``mt_eval.scoring``; a top-level module such as ``mt_eval.errors``
is its own package); its strongly connected components of two or more packages are the package cycles, and the
imports that ``tests/test_layers.py``'s ``LAYERS`` order says run back up (into a package above the importer).

Runtime: ``python -X importtime -m mt_eval run`` on three NTREX entries (the references replayed: no Apertium start-up
in the numbers) in a subprocess; its import tree gives the modules entered and, for each nested import of an
``mt_eval`` module, the importer, so an import that runs back up during that one run is counted too.

Run: ``.venv/bin/python benchmarks/import_graph.py`` (about 10 s).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

def _layers() -> ModuleType:
    """The layering test's walk and its order, loaded from its file (the script and the test agree by construction)."""
    spec = importlib.util.spec_from_file_location("test_layers", ROOT / "tests" / "test_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_T = _layers()
LAYERS, MODULES, cycles, package_of, rank, package_graph = (_T.LAYERS, _T.MODULES, _T.cycles, _T.package_of, _T.rank,
                                                             _T.package_graph)


def static_numbers() -> dict[str, object]:
    graph = package_graph()
    upward = sorted({(m, n) for m, names in MODULES.items() for n in names if n in MODULES
                     and package_of(n) != package_of(m) and rank(package_of(n)) >= rank(package_of(m))})
    return {"packages": len(graph), "package_edges": sum(len(v) for v in graph.values()),
            "package_cycles": [sorted(c) for c in cycles({k: set(v) for k, v in graph.items()})],
            "imports_up": len(upward), "imports_up_examples": [f"{a} -> {b}" for a, b in upward[:12]]}


def run_numbers() -> dict[str, object]:
    corpus = ROOT / "examples" / "ntrex128-eng-spa.json"
    with tempfile.TemporaryDirectory() as tmp:
        entries = json.loads(corpus.read_text(encoding="utf-8"))["entries"]  # a predictions file covers the corpus
        hyp = Path(tmp) / "hyp.jsonl"
        hyp.write_text("".join(json.dumps({"entry_id": e["id"], "predicted": e["reference"]}) + "\n" for e in entries),
                       encoding="utf-8")
        cmd = [sys.executable, "-X", "importtime", "-m", "mt_eval", "run", "--corpus", str(corpus), "--ids", "1-3",
               "--method", f"predictions:{hyp}", "--runs-dir", str(Path(tmp) / "runs"), "-o", str(Path(tmp) / "c.json")]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, check=False)
    if done.returncode != 0:
        raise SystemExit(f"mt-eval run failed ({done.returncode}): {done.stderr[-2000:]}")
    stack: list[tuple[int, str]] = []
    entered: list[str] = []
    up: set[tuple[str, str]] = set()
    rows = [line for line in done.stderr.splitlines() if line.startswith("import time:") and "|" in line]
    # -X importtime prints a module after its own imports, indented by depth: read it backwards to get parents
    for line in reversed(rows[1:]):
        name_part = line.split("|")[2]
        depth = (len(name_part) - len(name_part.lstrip())) // 2
        name = name_part.strip()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1] if stack else None
        stack.append((depth, name))
        entered.append(name)
        if parent and parent.startswith("mt_eval.") and name.startswith("mt_eval.") and name in MODULES:
            a, b = package_of(parent), package_of(name)
            if a != b and rank(b) >= rank(a):
                up.add((parent, name))
    ours = [m for m in entered if m == "mt_eval" or m.startswith("mt_eval.")]
    return {"modules_entered": len(entered), "mt_eval_modules_entered": len(ours),
            "imports_up_during_run": len(up), "imports_up_during_run_examples": sorted(f"{a} -> {b}" for a, b in up)}


def main() -> None:
    numbers = {"layers": LAYERS, **static_numbers(), **run_numbers()}
    print(json.dumps(numbers, ensure_ascii=False).replace(', "', ',\n "'))


if __name__ == "__main__":
    main()
