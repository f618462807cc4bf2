"""A "plain ``pip install .``" inside a development environment: only the base dependencies' import closure.

``block()`` installs a meta-path finder that refuses every top-level module whose distributions are all in
the [dev] extra's dependency closure and not in the base dependencies' (both read from pyproject.toml and the
installed distributions' metadata, never a hard-coded list), so code run after it sees what a user who
installed the package without extras would see: ``import lingua`` fails as if it were not installed.
Run as a script (``python base_install.py SCRIPT ARGS``) it blocks, then runs SCRIPT as ``__main__``.
"""

from __future__ import annotations

import importlib.abc
import importlib.metadata as md
import re
import runpy
import sys
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType

from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _name(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def closure(requirements: Iterable[str]) -> set[str]:
    """Normalised names of the installed distributions these requirements pull in (extras followed)."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        key = (_name(req.name), *sorted(req.extras))
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in ("", *req.extras)):
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            continue
        marker = "|".join(key)
        if marker in seen:
            continue
        seen.add(marker)
        for line in dist.requires or []:
            sub = Requirement(line)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in ("", *req.extras)):
                todo.append(Requirement(str(sub).split(";")[0]))
    return {m.split("|")[0] for m in seen}


def blocked_modules() -> set[str]:
    """Top-level modules that only [dev]-only distributions provide."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    base = closure(project["dependencies"])
    # the dev extra names the project's own extras (mt-eval[store,…]): the project itself is never refused
    dev_only = closure(project["optional-dependencies"]["dev"]) - base - {_name(project["name"])}
    return {module for module, dists in md.packages_distributions().items()
            if dists and all(_name(d) in dev_only for d in dists) and not module.startswith("_")}


class _Refuse(importlib.abc.MetaPathFinder):
    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> None:
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} (not in a base install)", name=fullname)


def block() -> set[str]:
    names = blocked_modules()
    for module in [m for m in sys.modules if m.partition(".")[0] in names]:
        del sys.modules[module]  # what reading the metadata needed (packaging): gone, as in a base install
    sys.meta_path.insert(0, _Refuse(names))
    return names


if __name__ == "__main__":
    block()
    script, *sys.argv = sys.argv[1:]
    sys.argv.insert(0, script)
    runpy.run_path(script, run_name="__main__")
