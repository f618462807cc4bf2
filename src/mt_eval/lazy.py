"""Public names of a package imported on first use (PEP 562), for the packages that re-export heavy modules.

A command that needs little (``mt-eval compare`` reading stored statistics) should not pay for
importing the whole harness because a package ``__init__`` re-exports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, public: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` giving each name in ``public`` (name → defining module) on first access,
    then caching it in the package's ``namespace`` so later lookups never come back here."""

    def __getattr__(name: str) -> Any:
        if name in public:
            value = getattr(import_module(public[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
