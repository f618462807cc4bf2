"""Real NTREX-128 lines (examples/ntrex128-eng-spa.json) and Apertium eng→spa's outputs for them.

The outputs come from the Apertium method driven by the engine directly, not through the API under
test, so a test comparing the API's numbers with sacrebleu's scores strings the API did not make.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NTREX_JSON = ROOT / "examples" / "ntrex128-eng-spa.json"
N = 40  # enough for BLEU's 4-grams and a bootstrap to mean something, small enough to stay fast


@pytest.fixture(scope="session")
def ntrex() -> tuple[list[str], list[str]]:
    """(sources, references) of the corpus's first ``N`` entries."""
    entries = json.loads(NTREX_JSON.read_text(encoding="utf-8"))["entries"][:N]
    return [e["source"] for e in entries], [e["reference"] for e in entries]


@pytest.fixture(scope="session")
def apertium_outputs() -> list[str]:
    """Apertium eng→spa's translation of each of those sources."""
    from mt_eval.corpus import load_corpus, select_entries
    from mt_eval.engine.runner import run_method
    from mt_eval.methods.registry import build_method

    dataset = select_entries(load_corpus(NTREX_JSON), ids=f"1-{N}")
    method = build_method("apertium:eng-spa", dataset=dataset)
    translations, _ = asyncio.run(run_method(method, dataset, source_language="en", target_language="es"))
    assert all(t.error is None and t.text for t in translations)
    return [t.text for t in translations]


@pytest.fixture(scope="session")
def ntrex_json() -> Path:
    return NTREX_JSON
