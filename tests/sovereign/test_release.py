"""What leaves: the JSON-lines protocol (requests carry no reference; replies are checked strictly),
RESULT.json's fixed format, and the leak check on secret n-grams.

References: real NTREX-128 entries and a real card scored by the normal pipeline (``mt-eval``'s
``build_card`` via the runner's ``score``) for the released values.
"""

from __future__ import annotations

import json

import pytest

from mt_eval.errors import UserError
from mt_eval.methods.base import Translation
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.protocol import REQUEST_FIELDS, ProtocolError, parse_reply, request_line
from mt_eval.sovereign.release import SecretIndex, leak_check, released_text, result_document
from mt_eval.sovereign.runner import SandboxReport, score
from support.sovereign import TINY, small_dataset


def test_a_request_holds_the_contract_fields_and_never_a_reference() -> None:
    entry = small_dataset(1).entries[0]
    request = json.loads(request_line(entry, "en", "es"))
    assert tuple(request) == REQUEST_FIELDS
    assert request["source"] == entry.source and request["register"] == "formal" and request["context"] == "label"
    assert entry.reference not in request_line(entry, "en", "es").decode()


@pytest.mark.parametrize("line", [b"{not json", b"[]", b'{"entry_id": 1}', b'{"entry_id": 2, "predicted": "x"}',
                                  b'{"entry_id": "1", "predicted": "x"}', b'{"entry_id": 1, "predicted": 5}',
                                  b'{"entry_id": 1, "predicted": "x", "source": "s"}', b"\xff\xfe"])
def test_malformed_replies_are_protocol_errors_that_do_not_quote_the_line(line: bytes) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_reply(line, 1)
    assert line.decode("utf-8", "replace") not in str(caught.value) or len(line) < 4


def test_a_good_reply() -> None:
    assert parse_reply(b'{"entry_id": 1, "predicted": "hola"}', 1) == "hola"


SECRET = "The quick brown fox jumps over the lazy dog near the riverbank"


@pytest.mark.parametrize(("text", "leaks"), [
    ("quick brown fox", True),                       # 3 tokens
    ("QUICK   Brown\nfox", True),                    # case and spacing folded
    ("x the riverbank y", True),                     # 12 characters ("the riverban")
    ("quick brown", False), ("fox jump", False),     # 2 tokens, under 12 characters
    ("composite 0.52 chrf_plus_plus 41.20", False),
])
def test_leak_check_on_three_tokens_or_twelve_characters(text: str, leaks: bool) -> None:
    index = SecretIndex([SECRET])
    assert index.leaks(text) is leaks
    if leaks:
        with pytest.raises(UserError, match="release refused") as caught:
            leak_check(text, index)
        assert text not in caught.value.one_line()  # the refusal never names the text


def test_result_document_releases_the_headline_floored_and_a_failed_bucket(tmp_path) -> None:
    dataset = small_dataset(30)
    translations = [Translation(e.id, e.reference if e.id % 2 else e.source) for e in dataset.entries]
    bundle = load_bundle("examples/bundles/glossary-python")
    report = SandboxReport(outcomes={e.id: "ok" for e in dataset.entries})
    card = score(dataset, bundle, translations, report, TINY, "test")
    doc = result_document("ok", card, {"timeout": 2, "crashed": 1}, 30, {"bundle_sha256": bundle.sha256})
    assert set(doc) == {"status", "scores", "failed", "breakdowns", "sovereign"}
    assert doc["failed"] == "few" and doc["breakdowns"] == {}  # 3 of 30; no breakdown is public by default
    composite, chrf = card["scores"]["composite"], card["scores"]["chrf_plus_plus"]
    assert doc["scores"] == {"composite": int(composite * 100 + 1e-9) / 100, "chrf_plus_plus": float(int(chrf))}
    assert doc["scores"]["composite"] <= composite < doc["scores"]["composite"] + 0.01
    assert result_document("ok", card, {"crashed": 4}, 30, {})["failed"] == "many"
    assert result_document("crashed", None, {"crashed": 30}, 30, {})["scores"] == {}
    text = released_text(doc)
    assert json.loads(text) == doc
    leak_check(text, SecretIndex([t for e in dataset.entries for t in (e.source, e.reference)]))
    with pytest.raises(ValueError):
        result_document("something_else", card, {}, 30, {})
