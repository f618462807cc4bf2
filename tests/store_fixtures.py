"""Real cards and real databases for every test that needs a store (imported by ``tests/conftest.py``,
so the whole suite shares one PostgreSQL server and one set of cards).

Cards are scored through the CLI (``mt-eval score``) on the bundled NTREX-128 eng→spa corpus from
different prediction files, so each is sealed, verifies and has its statistics sidecar. Every store
test runs twice, on a SQLite file and on a real PostgreSQL server (``pgserver.py``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from pgserver import create_database, postgres_server
from xdist_shared import built_once

CORPUS = Path(__file__).resolve().parents[1] / "examples" / "ntrex128-eng-spa.json"


def predictions(kind: str) -> list[dict[str, object]]:
    """System outputs of known quality: ``near`` ≈ ``near2`` > ``truncated`` > ``half``."""
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
    out: list[dict[str, object]] = []
    for i, entry in enumerate(entries):
        words = str(entry["reference"]).split()
        drop = {"near": i % 5 == 0, "near2": i % 5 == 1}.get(kind)
        if drop is not None:
            text = " ".join(words[:-1]) if drop and len(words) > 1 else str(entry["reference"])
        elif kind == "truncated":
            text = " ".join(words[: max(1, len(words) - i % 3)])
        else:  # half
            text = " ".join(words[: max(1, len(words) // 2)])
        out.append({"entry_id": entry["id"], "predicted": text})
    return out


def score(tmp: Path, kind: str, *extra: str, name: str | None = None) -> Path:
    """A card for ``kind``'s outputs, written by ``mt-eval score`` (``--bootstrap 100``)."""
    name = name or kind
    hyp = tmp / f"{name}.jsonl"
    hyp.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in predictions(kind)), encoding="utf-8")
    card = tmp / f"{name}.json"
    result = CliRunner().invoke(app, ["score", "-c", str(CORPUS), "-p", str(hyp), "--bootstrap", "100",
                                      "--system", name, "--runs-dir", str(tmp / "runs"), "-o", str(card), *extra])
    assert result.exit_code == 0, result.output
    return card


@pytest.fixture(scope="session")
def cards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """near, near2 (not separable from near), truncated, half, and ``profile_b`` (near scored
    with ``--skip-analyser``: profile B, so never ranked with the others)."""

    def build(tmp: Path) -> dict[str, Path]:
        made = {kind: score(tmp, kind) for kind in ("near", "near2", "truncated", "half")}
        made["profile_b"] = score(tmp, "near", "--skip-analyser", name="profile_b")
        return made

    return built_once(tmp_path_factory, "store-cards", build)  # once per run, not per xdist worker


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """One PostgreSQL server for the session (its folder under /tmp: the server's user must reach it)."""
    base = Path(tempfile.mkdtemp(prefix="mt-eval-pg-"))
    try:
        with postgres_server(base) as url:
            yield url
    finally:
        shutil.rmtree(base, ignore_errors=True)


def register_corpus(db: str, corpus: Path | Any = CORPUS) -> str:
    """``db`` with ``corpus`` (a corpus file, or a loaded ``corpus.models.Dataset``: a text pair's) registered
    (``mt-eval dataset register``): publish rescores every card against its registered dataset and refuses a
    card whose dataset is not registered."""
    from mt_eval.corpus import load_corpus
    from mt_eval.store import open_store
    from mt_eval.store.datasets import register_dataset

    with open_store(db) as store:
        register_dataset(store, load_corpus(corpus) if isinstance(corpus, Path) else corpus)
    return db


def governance_store(db: str) -> str:
    """``db`` declared a governance store (``review_secret_segments`` = ``allow``): the organisation's private
    store, the only one that keeps secret segments' texts and takes cards over them (register after this)."""
    from mt_eval.store import open_store
    from mt_eval.store.models import StoreSetting
    from mt_eval.store.review_pages import SECRET_REVIEW_SETTING

    with open_store(db) as store, store.session() as session:
        session.merge(StoreSetting(name=SECRET_REVIEW_SETTING, value="allow"))
    return db


# Every store test runs on both backends, PostgreSQL in the slow stage (CI's second stage runs it on every
# submission): the same statements on a second server cost make test about 80 s of its 6-minute budget, while
# the tests that use ``postgres_url`` themselves (byte-equal round trips, migrations, the web API, accounts)
# keep a real PostgreSQL server in the fast stage.
@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store holding no card, with the bundled NTREX corpus registered (the cards' dataset): a SQLite file,
    or a fresh database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        yield register_corpus(str(tmp_path / "board.db"))
        return
    yield register_corpus(create_database(request.getfixturevalue("postgres_url")))
