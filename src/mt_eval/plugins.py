"""Entry-point discovery, scanned once per process and per group.

Reading entry points walks every installed distribution's metadata (tens of milliseconds), and
metric, hook and analyser lookups happen many times per run, so each group is scanned once and
the loaded objects cached. ``clear_cache()`` forgets the scans, for tests that install a plugin
by putting a ``.dist-info`` on ``sys.path`` (and for long-lived processes after ``pip install``).
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points
from typing import Any

METRICS = "mt_eval.metrics"
HOOKS = "mt_eval.hooks"
ANALYZERS = "mt_eval.analyzers"


@cache
def _scan(group: str) -> tuple[tuple[str, Any], ...]:
    return tuple((ep.name, ep.load()) for ep in entry_points(group=group))


def plugins(group: str) -> dict[str, Any]:
    """``{entry-point name: loaded object}`` for one group, in entry-point order (a fresh dict)."""
    return dict(_scan(group))


def clear_cache() -> None:
    """Forget every scan: the next lookup reads the installed distributions again."""
    _scan.cache_clear()
