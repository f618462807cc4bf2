"""What every router shares: the store of the app, the templates, the hash parameter, number formats.

Templates are Jinja2 with autoescape on for every file: a method name, a model or a prediction is
text from an untrusted card and is always escaped. The only markup inserted unescaped comes from
the report's own builders (``render.html``: the CI bar, the character diff), which escape every
piece of text they are given.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path as FilePath
from threading import Lock
from typing import Annotated, Any, TypeVar

from fastapi import HTTPException, Path, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from mt_eval.render.html.diff import char_diff
from mt_eval.render.html.parts import LABELS, bar, digits_for, fmt
from mt_eval.scoring.composite import effective_tier, tier_label
from mt_eval.store.db import Store

T = TypeVar("T")
HERE = FilePath(__file__).resolve().parent
HASH_PATTERN = "^[0-9a-f]{64}$"
NAMES = {**LABELS, "fst_acceptance_rate": "FST acceptance", "exact_match_rate": "exact match",
         "semantic_score": "semantic score", "composite": "composite"}
"""Column names as Benchmark Spec §9.7 writes them; any other metric id is shown with spaces."""
RunHash = Annotated[str, Path(pattern=HASH_PATTERN, description="The card's run_card_hash (64 hex digits).")]


def _bar(label: str, value: Any, ci: Any, scale: Any = 1.0) -> Markup:
    """The CI bar of ``render.html.parts`` (it escapes its own text) on the metric's scale."""
    domain = float(scale) if isinstance(scale, int | float) and scale > 0 else 1.0
    return Markup(bar(str(label), value, ci, domain, digits=digits_for(domain)))


def _num(value: Any, scale: Any = 1.0) -> str:
    return fmt(value, digits_for(float(scale)) if isinstance(scale, int | float) else 4)


def _diff(reference: Any, predicted: Any) -> Markup:
    return Markup(_char_diff(str(reference or ""), str(predicted or "")))


@functools.lru_cache(maxsize=8192)
def _char_diff(reference: str, predicted: str) -> str:
    """``char_diff``, remembered: difflib's character matching costs about 1-3 ms an entry, so a run page
    of 100 entries spent 150-350 ms on it (bench_web); an output and its reference never change."""
    return char_diff(reference, predicted)


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True, trim_blocks=True,
                      lstrip_blocks=True)  # fmt: skip
    env.filters.update(bar=_bar, num=_num, diff=_diff, tier_label=tier_label, effective_tier=effective_tier,
                       label=lambda m: NAMES.get(str(m), str(m).replace("_", " ")))  # fmt: skip
    return env


TEMPLATES = Jinja2Templates(env=_environment())


class Memo:
    """The last ``size`` results by key, for work whose inputs the key pins down: a board by its query
    and the store's stamp, a card or a comparison by run_card_hash (a card never changes under its hash).
    Shared by the server's worker threads, hence the lock; two threads may compute the same key once
    each, which is harmless."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = Lock()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                found: T = self._items[key]
                return found
        value = compute()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value


def memo(request: Request, area: str) -> Memo:
    """The app's memo for ``area`` (``boards``, ``cards``, ``comparisons``)."""
    found: Memo = request.app.state.memos[area]
    return found


def store_of(request: Request) -> Store:
    """The app's open store (``create_app`` opens it once)."""
    store: Store = request.app.state.store
    return store


def resamples_of(request: Request) -> int:
    """Bootstrap resamples for ranking and comparing (1,000, as the command line uses)."""
    return int(request.app.state.n_resamples)


def page(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """Render template ``name`` with ``context``."""
    return TEMPLATES.TemplateResponse(request, name, context, status_code=status_code)


def not_found(what: str) -> HTTPException:
    return HTTPException(status_code=404, detail=f"{what} is not in this store")


def blank(value: str | None) -> str | None:
    """An empty form field means "any" (an HTML menu sends ``?tier=`` for its first option)."""
    return value or None
