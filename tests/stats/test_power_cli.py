"""``mt-eval power`` end to end on the bundled NTREX eng-spa corpus, from cards scored through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.api import score
from mt_eval.cli import app

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"


def _card(tmp: Path, name: str, changed_every: int) -> Path:
    """A card for the references with every third word removed, every fourth instead in every
    ``changed_every``-th entry: two such systems fail on the same entries, as real pairs mostly do."""
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
    texts = []
    for n, e in enumerate(entries):
        drop = 4 if n % changed_every == 0 else 3
        text = " ".join(w for i, w in enumerate(str(e["reference"]).split()) if i % drop != drop - 1)
        texts.append(text)
    card = tmp / f"{name}.json"
    score(texts, [str(e["reference"]) for e in entries], lang="en-es", write=True, out=card,
          runs_dir=tmp / "runs")  # the Python API: no embedding model, the card the CLI would seal
    return card


@pytest.fixture(scope="module")
def cards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("power")
    return _card(tmp, "third", 10**6), _card(tmp, "tenth_changed", 10)


def _power(*args: str) -> dict[str, float]:
    result = CliRunner().invoke(app, ["power", *args, "--json"])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def test_power_reports_the_mdd_for_the_corpus_and_shrinks_with_a_measured_correlation(cards: tuple[Path, Path]) -> None:
    base, other = cards
    assumed = _power("--corpus", str(CORPUS), "--card", str(base))
    assert assumed["n_entries"] == 200 and not assumed["correlation_measured"]
    assert 0.2 < assumed["mdd"] < 5
    measured = _power("--corpus", str(CORPUS), "--card", str(base), "--versus", str(other))
    assert measured["correlation_measured"] and measured["correlation"] > 0.5
    assert measured["mdd"] < assumed["mdd"]  # the same damage on both: a paired test resolves finer
    strict = _power("--card", str(base), "--alpha", "0.01", "--power", "0.9")
    assert strict["mdd"] > assumed["mdd"]


def test_power_refuses_what_it_cannot_answer(cards: tuple[Path, Path]) -> None:
    runner = CliRunner()
    no_card = runner.invoke(app, ["power", "--corpus", str(CORPUS)])
    assert no_card.exit_code == 2 and "--card" in no_card.output
    unknown = runner.invoke(app, ["power", "--card", str(cards[0]), "--metric", "nonsense"])
    assert unknown.exit_code == 2 and "nonsense" in unknown.output
    bad = runner.invoke(app, ["power", "--card", str(cards[0]), "--power", "1.5"])
    assert bad.exit_code == 2 and "power" in bad.output


def test_the_dataset_page_shows_the_mdd_power_reports_for_its_first_card(cards: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    """The web dataset page's power line is ``mt-eval power`` on the version's first card with stored statistics
    (same statistics, resamples and seed: the same number)."""
    from fastapi.testclient import TestClient

    from mt_eval.store import open_store
    from mt_eval.store.insert import insert_card
    from mt_eval.web.app import create_app

    db = str(tmp_path / "board.db")
    with open_store(db) as store, store.session() as session:
        for path in cards:
            card = json.loads(path.read_text(encoding="utf-8"))
            insert_card(session, card, path.with_name(card["statistics"]["file"]).read_bytes(), submitter="t")
    dataset_id = json.loads(cards[0].read_text(encoding="utf-8"))["dataset"]["id"]
    want = _power("--card", str(cards[0]))
    with TestClient(create_app(db)) as client:
        [version] = client.get(f"/api/datasets/{dataset_id}").json()
        page = client.get(f"/datasets/{dataset_id}").text
    assert version["power"]["mdd"] == pytest.approx(want["mdd"], rel=1e-12)
    assert version["power"]["entries"] == 200 and version["power"]["metric"] == "chrf_plus_plus"
    assert f"a chrF++ difference under {want['mdd']:.2f} is often missed" in page
