"""``mt-eval datasets list|show|fetch`` and ``--corpus ID`` end to end (run, score, validate) against the
local upstream server: the issue's must-show for NTREX-128, FLORES+ and a WMT pair through Apertium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sacrebleu
from catalog_upstream import WMT24_PATH, WMT_PATH, Upstream, md5, ntrex_lines
from sacrebleu.dataset import DATASETS
from typer.testing import CliRunner

from mt_eval.cli import app

runner = CliRunner()


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_list_filters_by_language_and_word() -> None:
    code, text = _invoke("datasets", "list", "--lang", "quy")
    assert code == 0 and "americasnlp2021" in text and "ntrex128" not in text
    code, text = _invoke("datasets", "list", "--search", "sacrebleu")
    assert code == 0 and "wmt" in text and "tatoeba" not in text
    code, text = _invoke("datasets", "list", "--lang", "afr")
    assert code == 0 and "tatoeba" in text and "flores-plus" not in text
    code, text = _invoke("datasets", "list", "--lang", "crk")  # no catalogued test set covers Plains Cree yet
    assert code == 0 and "no catalogue family matches" in text


def test_help_says_how_it_differs_from_dataset() -> None:
    code, text = _invoke("datasets", "--help")
    words = " ".join(text.replace("│", " ").split())
    assert code == 0 and "Not `mt-eval dataset`, which manages the datasets registered in a leaderboard store" in words


def test_fetch_shows_terms_then_accepts_once(env: Path, upstream: Upstream) -> None:
    code, text = _invoke("datasets", "fetch", "ntrex128:eng-spa")
    assert code == 2 and "CC BY-SA 4.0" in text and "--accept-licence" in text and len(text.strip().splitlines()) == 1
    code, text = _invoke("datasets", "fetch", "ntrex128:eng-spa", "--accept-licence")
    assert code == 0 and "1997 entries" in text and "2 file(s) downloaded" in text
    code, text = _invoke("datasets", "fetch", "ntrex128:eng-spa", "--offline")
    assert code == 0 and "from the cache" in text
    code, text = _invoke("datasets", "show", "ntrex128:eng-spa")
    assert code == 0 and "accepted" in text and "not accepted" not in text and "released: 2022-10" in text
    code, text = _invoke("datasets", "fetch", "ntrex128:eng-fra", "--offline")
    assert code == 2 and "--offline refuses to download" in text


def _card(out: Path) -> dict[str, Any]:
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("dataset_id", "ids", "reference"), [
    ("ntrex128:eng-spa", "1-12", "spa"),
    pytest.param("flores-plus:devtest:eng_Latn-spa_Latn", "0-11", "spa", marks=pytest.mark.slow),
])
def test_run_with_a_catalogue_id_end_to_end(env: Path, upstream: Upstream, tmp_path: Path, dataset_id: str,
                                           ids: str, reference: str) -> None:
    """``run --corpus ID --method apertium:eng-spa`` fetches, converts, translates and seals a card whose
    dataset is the catalogue id, with the test set's exposure recorded; chrF++ equals sacrebleu's on the
    same outputs and the upstream references."""
    family = dataset_id.split(":")[0]
    assert _invoke("datasets", "fetch", dataset_id, "--accept-licence")[0] == 0
    out = tmp_path / "card.json"
    code, text = _invoke("run", "--corpus", dataset_id, "--method", "apertium:eng-spa", "--ids", ids,
                         "--out", str(out), "--bootstrap", "0", "--runs-dir", str(tmp_path / "runs"))
    assert code == 0, text
    card = _card(out)
    dataset = card["dataset"]
    assert isinstance(dataset, dict) and dataset["id"] == dataset_id and dataset["entry_count"] == 12
    assert dataset["exposure"]["released"] == {"ntrex128": "2022-10", "flores-plus": "2022-07"}[family]
    results = card["results"]
    assert isinstance(results, list)
    refs = [r.strip() for r in ntrex_lines(reference, 12)]
    assert [r["reference"] for r in results] == refs
    hyps = [r["predicted"] for r in results]
    expected = sacrebleu.corpus_chrf(hyps, [refs], word_order=2).score
    assert card["scores"]["chrf_plus_plus"] == pytest.approx(expected, abs=1e-6)
    code, text = _invoke("verify", str(out))
    assert code == 0, text


@pytest.mark.slow
def test_run_on_a_wmt_pair_through_sacrebleu(env: Path, upstream: Upstream, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``run --corpus wmt:wmt24:en-es --method apertium:eng-spa``: sacrebleu's URL (rewritten to the local
    server), tarball member and reference choice (``refA``, not the system's ``hyp``; the test-suite document
    skipped); its md5 pin set to the served tarball."""
    monkeypatch.setattr(DATASETS["wmt24"], "md5", [md5(upstream.files[WMT24_PATH])])
    assert _invoke("datasets", "fetch", "wmt:wmt24:en-es", "--accept-licence")[0] == 0
    out = tmp_path / "card.json"
    code, text = _invoke("run", "--corpus", "wmt:wmt24:en-es", "--method", "apertium:eng-spa", "--ids", "1-12",
                         "--out", str(out), "--bootstrap", "0", "--runs-dir", str(tmp_path / "runs"))
    assert code == 0, text
    card = _card(out)
    assert card["dataset"]["id"] == "wmt:wmt24:en-es" and card["dataset"]["exposure"]["released"] == "2024-11"
    refs = [" ".join(r.split()) for r in ntrex_lines("spa", 12)]
    assert [r["reference"] for r in card["results"]] == refs  # refA, cleaned as sacrebleu cleans
    hyps = [r["predicted"] for r in card["results"]]
    assert card["scores"]["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-6)
    code, text = _invoke("validate", "wmt:wmt24:en-es")
    assert code == 0 and "40" in text  # every news segment, not the test-suite one


def test_score_on_wmt21_from_a_predictions_file(env: Path, upstream: Upstream, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """WMT21 en-de scored from a predictions file: the references are sacrebleu's translator A."""
    monkeypatch.setattr(DATASETS["wmt21"], "md5", [md5(upstream.files[WMT_PATH])])
    assert _invoke("datasets", "fetch", "wmt:wmt21:en-de", "--accept-licence")[0] == 0
    refs = [" ".join(r.split()) for r in ntrex_lines("deu", 40)]
    hyps = [" ".join(r.split()[:-1]) for r in refs]  # each output misses its last word
    predictions = tmp_path / "hyp.txt"
    predictions.write_text("\n".join(hyps) + "\n", encoding="utf-8")
    out = tmp_path / "card.json"
    code, text = _invoke("score", "--corpus", "wmt:wmt21:en-de", "--predictions", str(predictions), "--out", str(out),
                         "--bootstrap", "0")
    assert code == 0, text
    card = _card(out)
    assert card["dataset"]["id"] == "wmt:wmt21:en-de" and card["dataset"]["exposure"]["released"] == "2021-11"
    assert card["scores"]["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-6)


def test_run_without_accepting_the_licence_is_one_line(env: Path, upstream: Upstream, tmp_path: Path) -> None:
    code, text = _invoke("run", "--corpus", "tatoeba:eng-spa", "--method", "apertium:eng-spa",
                         "--runs-dir", str(tmp_path / "runs"))
    assert code == 2 and "licence of tatoeba is not accepted" in text and upstream.requests == []
