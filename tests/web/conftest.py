"""A real store for the web tests: the store tests' real cards, plus cards on a small corpus with secret
segments, a hostile card and a card with failed entries, all made with ``mt-eval score`` and published
with ``mt-eval publish`` (verified, as a user would)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, sync_playwright
from web_helpers import CHROMIUM, put_cards, score_secret, secret_corpus


@pytest.fixture(scope="session")
def secret_cards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Cards on the secret corpus: ``plain``, ``hostile`` (script in the method name and an output),
    ``partial`` (two entries without output); and the corpus entries."""
    folder = tmp_path_factory.mktemp("web-secret")
    corpus, entries = secret_corpus(folder)
    made = {name: score_secret(folder, corpus, entries, name, hostile=name == "hostile", drop=2 * (name == "partial"))
            for name in ("plain", "hostile", "partial")}  # fmt: skip
    return {"cards": made, "entries": entries, "corpus": corpus}


@pytest.fixture(scope="session")
def board_db(cards: dict[str, Path], secret_cards: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite store holding every card above: the NTREX ones published through the CLI, the secret corpus's
    inserted as a store kept them from before registered datasets (``web_helpers.put_cards``)."""
    db = str(tmp_path_factory.mktemp("web-store") / "board.db")
    put_cards(db, *cards.values(), *secret_cards["cards"].values())
    return db


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """A real headless Chromium (Debian's), one per test module."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()
