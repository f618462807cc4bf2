"""Issue 21's attacks on publish, each failing on the code before registered datasets:

* forged references: weak outputs scored against a copy of NTREX whose references *are* those outputs,
  ``dataset.sha256`` patched to the real one, fingerprint and seal recomputed with the project's own
  functions. ``verify`` passes it; it was published at rank 1 (chrF++ 100), also signed by a registered
  submitter on a store that requires signatures. Now the store rescores its outputs against the registered
  references: it gets exactly the score of those outputs on the real corpus (sacrebleu's, independently).
* a self-run card over gold_standard/held_out entries (Benchmark Spec §6.4/§9.5): was published as
  self-benchmarked and ranked first; now refused, also when the card relabels those entries.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import sacrebleu
from sqlalchemy import func, select
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.corpus import load_corpus
from mt_eval.runcard.builder import fingerprint_components
from mt_eval.runcard.seal import fingerprint_hash, seal
from mt_eval.runcard.verify import verify_card
from mt_eval.store import open_store
from mt_eval.store.dataset_models import CardSubmission
from mt_eval.store.models import Card
from store_fixtures import CORPUS, predictions, register_corpus

SOVEREIGN = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa-sovereign.json"
runner = CliRunner()


def cli(*args: Any) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def _score(tmp: Path, corpus: Path, outputs: list[dict[str, Any]], name: str) -> Path:
    hyp = tmp / f"{name}.jsonl"
    hyp.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in outputs), encoding="utf-8")
    card = tmp / f"{name}.json"
    done = cli("score", "-c", corpus, "-p", hyp, "--bootstrap", 100, "--system", name, "--runs-dir", tmp / "runs",
               "-o", card)
    assert done.exit_code == 0, done.output
    return card


def _reseal(path: Path, edit: Any) -> Path:
    """The attacker's edit, then fingerprint and seal recomputed with the project's own functions."""
    card = json.loads(path.read_text(encoding="utf-8"))
    edit(card)
    components = fingerprint_components(card)
    card["fingerprint"] = {"hash": fingerprint_hash(components), "components": components}
    path.write_text(json.dumps(seal(card), ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def forged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``half`` outputs (every sentence cut in half) scored against references that are those outputs."""
    tmp = tmp_path_factory.mktemp("forged")
    outputs = predictions("half")
    corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
    by_id = {o["entry_id"]: o["predicted"] for o in outputs}
    for entry in corpus["entries"]:
        entry["reference"] = by_id[entry["id"]]
    fake = tmp / "ntrex-copy.json"
    fake.write_text(json.dumps(corpus, ensure_ascii=False), encoding="utf-8")
    card = _score(tmp, fake, outputs, "forged")
    sha = load_corpus(CORPUS).sha256  # the real corpus's: what the registered dataset is found by
    return _reseal(card, lambda c: c["dataset"].update(sha256=sha))


def _board(db: str) -> list[dict[str, Any]]:
    done = cli("leaderboard", "--db", db, "--json")
    assert done.exit_code == 0, done.output
    return [r for r in json.loads(done.output) if r["rank"] is not None]


def test_forged_references_verify_but_are_rescored_against_the_registered_ones(
        forged: Path, cards: dict[str, Path], db_url: str) -> None:
    card = json.loads(forged.read_text(encoding="utf-8"))
    assert card["scores"]["chrf_plus_plus"] == pytest.approx(100.0)
    assert verify_card(card, forged) == []  # the forgery is internally consistent: verify cannot see it
    done = cli("publish", forged, cards["near"], "--db", db_url)
    assert done.exit_code == 0, done.output
    assert "the store's rescoring of" in done.output and "chrf_plus_plus: card says 100" in done.output
    assert "200 of 200 entries' references differ" in done.output
    rows = _board(db_url)
    assert rows[0]["method"] == "near"  # the genuine card ranks first
    stored = next(r for r in rows if r["method"] == "forged")
    # the store's number is the outputs' chrF++ against the real references: sacrebleu's, computed apart
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
    hyps = [str(o["predicted"]) for o in predictions("half")]
    expected = sacrebleu.corpus_chrf(hyps, [[str(e["reference"]) for e in entries]], word_order=2).score
    assert stored["scores"]["chrf_plus_plus"]["value"] == pytest.approx(expected, abs=1e-9)
    honest = json.loads(cards["half"].read_text(encoding="utf-8"))["scores"]  # the same outputs, scored honestly
    assert stored["composite"]["value"] == pytest.approx(honest["composite"], abs=1e-12)
    with open_store(db_url) as store, store.session() as session:
        wanted = CardSubmission.submitted_hash == card["run_card_hash"]
        sub = session.scalars(select(CardSubmission).where(wanted)).one()
        kept = session.get(Card, sub.card_id)
        assert sub.recomputed and kept is not None and kept.run_card_hash != card["run_card_hash"]
        assert kept.card["results"][0]["reference"] == entries[0]["reference"]  # the store's card, real texts
        assert any(line.startswith("chrf_plus_plus: card says 100") for line in sub.differences)
    again = cli("publish", forged, "--db", db_url)  # a replay changes nothing
    assert again.exit_code == 0 and "already published" in again.output, again.output


def test_a_registered_submitters_signature_does_not_make_forged_references_count(
        forged: Path, cards: dict[str, Path], db_url: str, tmp_path: Path) -> None:
    signed = tmp_path / "forged.json"
    shutil.copy(forged, signed)
    shutil.copy(forged.with_suffix(".stats.npz"), tmp_path)  # as submitted, with its sidecar
    key = tmp_path / "mallory.key"
    for args in (("keys", "new", "-o", key, "--signer", "mallory"),
                 ("keys", "register", key.with_suffix(".pub"), "--submitter", "mallory", "--db", db_url),
                 ("keys", "require", "on", "--db", db_url), ("sign", signed, "--key", key)):
        assert cli(*args).exit_code == 0, args
    done = cli("publish", signed, "--db", db_url, "--submitter", "mallory")
    assert done.exit_code == 0 and "signed by mallory" in done.output, done.output
    assert "chrf_plus_plus: card says 100" in done.output
    (row,) = _board(db_url)
    assert row["scores"]["chrf_plus_plus"]["value"] < 60  # half of each sentence: nowhere near 100


def test_a_card_on_a_dataset_not_registered_is_refused(cards: dict[str, Path], tmp_path: Path) -> None:
    db = str(tmp_path / "empty.db")
    done = cli("publish", cards["near"], "--db", db)
    assert done.exit_code == 1 and "is not registered in this store" in done.output, done.output
    assert "mt-eval dataset register" in done.output
    with open_store(db) as store, store.session() as session:
        assert session.scalar(select(func.count()).select_from(Card)) == 0


@pytest.fixture(scope="module")
def gold_card(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A self-run card over the sovereign corpus's every entry (its 50 gold and 20 held-out included), perfect."""
    tmp = tmp_path_factory.mktemp("gold")
    entries = json.loads(SOVEREIGN.read_text(encoding="utf-8"))["entries"]
    return _score(tmp, SOVEREIGN, [{"entry_id": e["id"], "predicted": e["reference"]} for e in entries], "gold-run")


def _cards(db: str) -> int:
    with open_store(db) as store, store.session() as session:
        return int(session.scalar(select(func.count()).select_from(Card)) or 0)


def test_a_self_run_card_over_gold_entries_is_refused(gold_card: Path, db_url: str) -> None:
    register_corpus(db_url, SOVEREIGN)
    done = cli("publish", gold_card, "--db", db_url)
    assert done.exit_code == 1, done.output
    assert "70 of its entries" in done.output and "gold_standard, held_out segment" in done.output
    assert "governance" in done.output and _cards(db_url) == 0


def test_relabelling_gold_entries_does_not_get_them_past(tmp_path: Path) -> None:
    """The gold entries relabelled ``development`` in a copy of the corpus, scored on it, ``dataset.sha256``
    patched to the real corpus's and resealed: ``verify`` passes it; the registered segments refuse it."""
    corpus = json.loads(SOVEREIGN.read_text(encoding="utf-8"))
    for entry in corpus["entries"]:
        entry["segment"] = "development"
    copy = tmp_path / "relabelled-corpus.json"
    copy.write_text(json.dumps(corpus, ensure_ascii=False), encoding="utf-8")
    card = _score(tmp_path, copy, [{"entry_id": e["id"], "predicted": e["reference"]} for e in corpus["entries"]],
                  "relabelled")
    _reseal(card, lambda c: c["dataset"].update(sha256=load_corpus(SOVEREIGN).sha256))
    assert verify_card(json.loads(card.read_text(encoding="utf-8")), card) == []
    db = register_corpus(str(tmp_path / "b.db"), SOVEREIGN)
    done = cli("publish", card, "--db", db)
    assert done.exit_code == 1 and "gold_standard, held_out segment" in done.output, done.output
    assert _cards(db) == 0


def test_a_governance_store_keeps_gold_texts_and_takes_the_full_card(gold_card: Path, tmp_path: Path) -> None:
    """The organisation's private store (``review_secret_segments`` = ``allow``): secret texts registered, the
    full card published (and so reviewable there); the public store above never holds them."""
    from mt_eval.store.dataset_models import RegisteredEntry
    from mt_eval.store.models import StoreSetting
    from mt_eval.store.review_pages import SECRET_REVIEW_SETTING

    db = str(tmp_path / "private.db")
    with open_store(db) as store, store.session() as session:
        session.add(StoreSetting(name=SECRET_REVIEW_SETTING, value="allow"))
    register_corpus(db, SOVEREIGN)
    done = cli("publish", gold_card, "--db", db)
    assert done.exit_code == 0 and "inserted" in done.output and "rescoring of" not in done.output, done.output
    with open_store(db) as store, store.session() as session:
        gold = session.scalars(select(RegisteredEntry).where(RegisteredEntry.segment == "gold_standard")).all()
        assert len(gold) == 50 and all(e.reference for e in gold)


def test_a_glossary_the_submitter_brings_does_not_score_on_the_board(tmp_path: Path, db_url: str) -> None:
    """terminology_adherence weighs 0.05 in the composite, and the glossary it reads travels on the card. A
    submitter scoring with a glossary written from their own outputs (each entry's first source word → the
    first word of its output) collects it; the registered dataset carries no glossary, so the store rescores
    without one: the metric is null on the board and the difference is reported."""
    outputs = predictions("half")
    entries = {e["id"]: e for e in json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]}
    glossary = {entries[o["entry_id"]]["source"].split()[0]: [str(o["predicted"]).split()[0]]
                for o in outputs if str(o["predicted"]).split()}
    (tmp_path / "terms.json").write_text(json.dumps(glossary, ensure_ascii=False), encoding="utf-8")
    hyp = tmp_path / "own.jsonl"
    hyp.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in outputs), encoding="utf-8")
    card = tmp_path / "own.json"
    done = cli("score", "-c", CORPUS, "-p", hyp, "--bootstrap", 100, "--system", "own-glossary", "--runs-dir",
               tmp_path / "runs", "--terminology", tmp_path / "terms.json", "-o", card)
    assert done.exit_code == 0, done.output
    assert json.loads(card.read_text(encoding="utf-8"))["scores"]["terminology_adherence"] > 0.25
    done = cli("publish", card, "--db", db_url)
    assert done.exit_code == 0, done.output
    assert "terminology_adherence: card says" in done.output and "recomputed None" in done.output
    stored = next(r for r in _board(db_url) if r["method"] == "own-glossary")
    assert (stored["scores"].get("terminology_adherence") or {}).get("value") is None  # null: not on the board
