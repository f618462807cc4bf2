"""A text never depends on --batch-size: single and batched answers are cleaned by one rule, which keeps the
quotes of a quoted source (NTREX entry 150 lost them at batch size 1 and kept them at 10)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mt_eval.corpus import load_corpus, select_entries
from mt_eval.methods.prompts import clean_answer, clean_single
from support.llm_fake import FakeOpenAI
from support.llm_helpers import method, run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"


def wrapping_model(body: dict[str, Any]) -> str:
    """Answers with the source itself (a stand-in translation). Alone, it wraps an unquoted answer in
    quotes, as chat models do; batched, it answers in JSON strings, quotes only where the text has them."""
    user = str(body["messages"][-1]["content"])
    if '{"entries": ' in user:
        entries = json.loads(user[user.index('{"entries": '):])["entries"]
        return json.dumps({"translations": [{"id": e["id"], "start": " ".join(e["source"].split()[:3]),
                                             "translation": e["source"]} for e in entries]}, ensure_ascii=False)
    source = user.split("Text:\n", 1)[-1]
    return source if source.startswith('"') else f'"{source}"'


def test_batch_size_1_and_10_give_identical_texts_on_ntrex() -> None:
    ds = select_entries(load_corpus(EXAMPLE), ids="141-160")
    quoted = next(e for e in ds.entries if e.id == 150)
    assert quoted.source.startswith('"') and quoted.source.endswith('"')
    texts = {}
    for k in (1, 10):
        with FakeOpenAI(responder=wrapping_model) as server:
            out, _, _ = run(method(server, batch_size=k, concurrency=4), ds)
        assert all(t.error is None for t in out)
        texts[k] = {t.entry_id: t.text for t in out}
    assert texts[1] == texts[10] == {e.id: e.source for e in ds.entries}
    assert texts[1][150] == quoted.source  # its quotes are the translation's own


@pytest.mark.parametrize(("answer", "source", "kept"), [
    ('"Hola"', "Hello", "Hola"),  # quotes the model added: stripped
    ('"Hola"', '"Hello"', '"Hola"'),  # a quoted source has a quoted translation
    ("“Hola”", "Hello", "Hola"),  # typographic pairs too
    ("«Hola»", "“Hello”", "«Hola»"),
    ('"A" y "B"', "A and B", '"A" y "B"'),  # two quoted spans, not one wrapped text
    ('"Dijo: "no""', "He said: no", '"Dijo: "no""'),
    ('"Dijo "sí" hoy."', 'He said "yes" today.', 'Dijo "sí" hoy.'),  # added around a text with its own quotes
])
def test_clean_answer(answer: str, source: str, kept: str) -> None:
    assert clean_answer(answer, source) == kept
    assert clean_single("```\n" + answer + "\n```", source) == kept
