"""semantic_score with a local sentence-transformers directory, on a tiny model the test builds offline (no
weights can be downloaded here): a BERT of hidden size 32, 2 layers, random weights (seeded), a WordPiece
vocabulary trained on the test's own NTREX lines, mean pooling, saved with ``SentenceTransformer.save``.

What is checked is the backend's code path, against an independent computation (transformers' forward pass,
mean pooling over the attention mask and the cosine by hand); the embedding cache; that two models saved
under one path are two models; and, as a sanity check that the pipeline compares the right pairs, that a
shuffled reference scores below the true one (with random weights, a reference sharing most of its words
with the output is still the closer text)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from data_paths import NTREX
from mt_eval.corpus.models import Entry
from mt_eval.errors import UserError
from mt_eval.languages.card import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.embeddings import MODEL_DIR_ENV, SemanticConfig, build_backend
from mt_eval.metrics.semantic import SemanticScore, baseline_for

# the slow stage (CI's second stage runs it on every submission): it imports torch (6-8 s per process)
pytestmark = pytest.mark.slow

N = 12
REFS = (NTREX / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[200:200 + N]
# outputs: each reference without its last word (close to its own reference, far from the others)
OUTPUTS = [" ".join(r.split()[:-1]) for r in REFS]


def _build(root: Path, seed: int) -> Path:
    """A sentence-transformers directory at ``root/tiny-st`` (the transformer's files in ``root/bert``)."""
    import torch
    from sentence_transformers import SentenceTransformer
    try:
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # sentence-transformers < 5.7
        from sentence_transformers.models import Pooling, Transformer
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    bert = root / "bert"
    bert.mkdir(parents=True)
    lines = (NTREX / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[:300]
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    wordpiece.train_from_iterator(lines, vocab_size=600, show_progress=False)
    wordpiece.save_model(str(bert))  # vocab.txt
    tokenizer = BertTokenizerFast(vocab_file=str(bert / "vocab.txt"), do_lower_case=True)
    tokenizer.save_pretrained(str(bert))
    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)).save_pretrained(str(bert))
    transformer = Transformer(str(bert), max_seq_length=128)
    pooling = Pooling(32, pooling_mode="mean")
    out = root / "tiny-st"
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(out))
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed (mt-eval[st])")
    root = tmp_path_factory.mktemp("st")
    return {"a": _build(root / "a", seed=1), "b": _build(root / "b", seed=2), "cache": root / "emb.sqlite"}


def _metric(model_dir: Path, cache: Path) -> SemanticScore:
    return SemanticScore(SemanticConfig.parse("sentence-transformers", str(model_dir), cache_path=str(cache)))


def _values(metric: SemanticScore, outputs: list[str], refs: list[str]) -> np.ndarray:
    entries = [Entry(id=i + 1, source="x", reference=r) for i, r in enumerate(refs)]
    ctx = MetricContext(entries=entries, target=language_card("es"), source=language_card("en"))
    values = metric.entry_values(metric.statistics(outputs, ctx))
    assert values is not None
    return values


def _by_hand(bert_dir: Path, outputs: list[str], refs: list[str]) -> np.ndarray:
    """transformers forward, mean over the attention mask, cosine: no sentence-transformers code."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(bert_dir), local_files_only=True)
    model = AutoModel.from_pretrained(str(bert_dir), local_files_only=True).eval()

    def embed(texts: list[str]) -> np.ndarray:
        batch = tokenizer(texts, padding=True, truncation=True, max_length=128, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        return ((hidden * mask).sum(1) / mask.sum(1)).numpy().astype(np.float64)

    a, b = embed(outputs), embed(refs)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_scores_equal_an_independent_mean_pooled_cosine(tiny: dict[str, Path], tmp_path: Path) -> None:
    metric = _metric(tiny["a"], tmp_path / "cache.sqlite")
    assert baseline_for(metric.config, language_card("es")) == 0.0  # unmeasured backend: raw cosine
    got = _values(metric, OUTPUTS, REFS)
    want = np.clip(_by_hand(tiny["a"].parent / "bert", OUTPUTS, REFS), 0, 1)
    assert np.allclose(got, want, rtol=0, atol=1e-5)
    assert got.min() > 0 and got.max() < 1  # neither clipped nor trivially equal


def test_shuffled_reference_scores_below_the_true_one(tiny: dict[str, Path], tmp_path: Path) -> None:
    metric = _metric(tiny["a"], tmp_path / "cache.sqlite")
    true = _values(metric, OUTPUTS, REFS)
    shuffled = _values(metric, OUTPUTS, REFS[1:] + REFS[:1])
    assert (true > shuffled).mean() >= 0.9, (true, shuffled)
    assert true.mean() > shuffled.mean()  # (random weights: all cosines are high, 0.97–1.0; the order is what counts)
    assert _values(metric, [""] * N, REFS).tolist() == [0.0] * N  # empty output: 0, not embedded


def test_rerun_reads_the_cache_and_the_model_id_hashes_the_directory(tiny: dict[str, Path], tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache.sqlite"
    first = _metric(tiny["a"], cache)
    values = _values(first, OUTPUTS, REFS)
    assert first.embedder.computed == 2 * N
    again = _metric(tiny["a"], cache)  # a new run: empty memory, same cache file
    assert np.array_equal(_values(again, OUTPUTS, REFS), values) and again.embedder.computed == 0
    model_id = again.config.model
    assert model_id.startswith("tiny-st@sha256:") and again.config.card_block["model"] == model_id
    assert model_id in (again.signature(language_card("es")) or "")
    # another model saved under the same path is another model: new id, nothing read from the cache
    swapped = tmp_path / "swap" / "tiny-st"
    shutil.copytree(tiny["b"], swapped)
    other = _metric(swapped, cache)
    assert other.config.model != model_id and other.config.model == _metric(tiny["b"], cache).config.model
    other_values = _values(other, OUTPUTS, REFS)
    assert other.embedder.computed == 2 * N and not np.allclose(other_values, values, atol=1e-4)
    # verify with $MT_EVAL_SEMANTIC_MODEL_DIR pointing at a different model of the same name: refused
    monkeypatch.setenv(MODEL_DIR_ENV, str(swapped))
    recorded = SemanticConfig.from_card({"backend": "sentence-transformers", "model": model_id}, cache_path=None)
    with pytest.raises(UserError, match="not reproducible"):
        build_backend(recorded)


def test_a_model_that_is_not_a_directory_is_refused_in_one_line(tmp_path: Path) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"x")
    for bad in (str(weights), str(tmp_path / "missing"), "sentence-transformers/LaBSE"):
        with pytest.raises(UserError, match="not a directory") as info:
            SemanticConfig.parse("sentence-transformers", bad)
        assert "\n" not in str(info.value) and info.value.field == "semantic-model"
