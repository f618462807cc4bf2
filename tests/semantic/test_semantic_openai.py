"""semantic_score through the OpenAI-compatible backend, against a real local /v1/embeddings server
(``fake_embeddings.py``): the cosine equals NumPy's on the server's vectors, requests are batched, the
SQLite cache answers a second run (and a new process) without a request, bad answers are refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fake_embeddings import FakeEmbeddings, vector_for

from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.errors import UserError
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Translation
from mt_eval.metrics.embeddings import Embedder, SemanticConfig
from mt_eval.metrics.semantic import SemanticScore
from mt_eval.scoring.pipeline import score_outputs

REFS = ["El gato duerme.", "Hace sol hoy.", "Me gusta leer.", "La casa es grande."]
HYPS = ["El gato está dormido.", "Hoy hace sol.", "", "Una casa grande."]


def _cos(a: str, b: str) -> float:
    va, vb = vector_for(a), vector_for(b)
    return float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))


def _dataset(refs: list[str], extra: dict[int, list[str]] | None = None) -> Dataset:
    entries = [Entry(id=i + 1, source=f"src {i}", reference=r, references=[r, *(extra or {}).get(i, [])])
               for i, r in enumerate(refs)]
    return Dataset(info=DatasetInfo(id="t", source_language="en", target_language="es"), entries=entries,
                   sha256="0" * 64)


def _config(server: FakeEmbeddings, cache: Path | None, batch: int = 64) -> SemanticConfig:
    return SemanticConfig.parse("openai", server.model, server.base_url,
                                str(cache) if cache else None, batch_size=batch)


def test_entry_and_corpus_values_equal_numpy_cosines(tmp_path: Path) -> None:
    with FakeEmbeddings() as server:
        table, _ = score_outputs(_dataset(REFS, {3: ["La casa es enorme."]}),
                                 [Translation(i + 1, h) for i, h in enumerate(HYPS)],
                                 language_card("es"), language_card("en"),
                                 opt_in=[SemanticScore(_config(server, tmp_path / "c.db"))])
    got = table.entry_values("semantic_score")
    # no measured baseline for this model: b = 0, the cosine clipped to [0, 1]; entry 4: best of two references
    want = [_cos(HYPS[0], REFS[0]), _cos(HYPS[1], REFS[1]), 0.0,
            max(_cos(HYPS[3], REFS[3]), _cos(HYPS[3], "La casa es enorme."))]
    assert got is not None and np.allclose(got, want, atol=1e-6)
    assert table.values()["semantic_score"] == pytest.approx(np.mean(want), abs=1e-6)
    signature = table.metrics["semantic_score"].signature(language_card("es"))
    assert signature is not None and signature.startswith("backend:openai|model:fake-embed-1")


def test_batches_of_unique_texts_and_the_cache_answers_the_second_run(tmp_path: Path) -> None:
    texts = ["a", "b", "c", "a", "d", "e", "f", "g", "b"]  # 7 unique
    with FakeEmbeddings() as server:
        first = Embedder(_config(server, tmp_path / "c.db", batch=3)).embed(texts)
        assert [len(b) for b in server.batches] == [3, 3, 1]
        assert sorted(t for b in server.batches for t in b) == sorted(set(texts))
        again = Embedder(_config(server, tmp_path / "c.db", batch=3))
        second = again.embed(texts)
        assert len(server.batches) == 3 and again.computed == 0  # no request at all
    assert np.array_equal(first, second)
    assert np.allclose(first[0], vector_for("a") / np.linalg.norm(vector_for("a")), atol=1e-6)


def test_the_cache_survives_a_restart_without_the_server(tmp_path: Path) -> None:
    cache = tmp_path / "c.db"
    with FakeEmbeddings() as server:
        url = server.base_url
        Embedder(_config(server, cache)).embed(["uno", "dos"])
    # the server is gone; a new process reads the vectors from the SQLite file
    code = ("import sys, json; from mt_eval.metrics.embeddings import Embedder, SemanticConfig; "
            f"e = Embedder(SemanticConfig.parse('openai', 'fake-embed-1', {url!r}, {str(cache)!r})); "
            "v = e.embed(['uno', 'dos']); print(json.dumps([e.computed, v.tolist()]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    computed, vectors = json.loads(out)
    assert computed == 0
    assert np.allclose(vectors[1], vector_for("dos") / np.linalg.norm(vector_for("dos")), atol=1e-6)


@pytest.mark.parametrize(("answer", "status", "message"), [
    ({"data": []}, None, "answered 0 vectors for 2 texts"),
    ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}, None, "repeated index"),
    ({"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}]}, None, "equal-length"),
    ({"data": [{"index": 0, "embedding": ["x"]}, {"index": 1, "embedding": [1.0]}]}, None, "equal-length"),
    (None, 401, "HTTP 401"),
])
def test_malformed_or_refused_answers_are_errors_never_scores(answer, status, message) -> None:
    with FakeEmbeddings(answer=answer, status=status) as server:
        with pytest.raises(UserError, match=message):
            Embedder(_config(server, None)).embed(["uno", "dos"])
        if status == 401:
            assert len(server.batches) == 1  # a refusal is not retried


def test_a_wrong_model_name_is_one_clear_error() -> None:
    with FakeEmbeddings() as server:
        config = SemanticConfig.parse("openai", "other-model", server.base_url, None)
        with pytest.raises(UserError, match="does it serve model 'other-model'"):
            Embedder(config).embed(["x"])


def test_the_api_key_comes_from_the_environment_and_never_reaches_the_card(monkeypatch) -> None:
    monkeypatch.setenv("MT_EVAL_SEMANTIC_API_KEY", "sk-test-123")
    with FakeEmbeddings() as server:
        config = SemanticConfig.parse("openai", server.model, server.base_url, None)
        Embedder(config).embed(["x"])
        assert server.headers[-1].get("Authorization") == "Bearer sk-test-123"
    assert "sk-test" not in json.dumps(config.card_block) and "127.0.0.1" not in json.dumps(config.card_block)


@pytest.mark.parametrize(("url", "egress"), [("http://127.0.0.1:9/v1", "local"), ("http://localhost:9/v1", "local"),
                                              ("http://[::1]:9/v1", "local"), ("https://api.openai.com/v1", "remote"),
                                              ("http://192.0.2.1/v1", "remote")])
def test_egress_is_remote_unless_the_endpoint_is_this_machine(url: str, egress: str) -> None:
    assert SemanticConfig.parse("openai", "m", url).egress == egress


def test_the_metric_is_never_created_without_a_configuration() -> None:
    from mt_eval.metrics.registry import metrics_for

    assert "semantic_score" not in [m.id for m in metrics_for(language_card("es"))]
    config = SemanticConfig.parse("openai", "m", "http://127.0.0.1:9/v1")
    made = metrics_for(language_card("es"), configured={"semantic_score": config})
    assert isinstance(made[-1], SemanticScore)
    assert [m.id for m in metrics_for(language_card("es"), ["chrf"], {"semantic_score": config})] == ["chrf"]
