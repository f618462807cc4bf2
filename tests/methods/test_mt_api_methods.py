"""``deepl`` and ``google`` against local servers speaking their protocols (tests/support/mt_apis.py):
the request each API documents, retries on 429/5xx with Retry-After, malformed answers retried and never
shifted, a refusal every request would get (bad key, DeepL's 456 quota) stopping the run, declared cost."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.errors import MethodError
from mt_eval.languages.card import language_card
from mt_eval.methods.base import MethodClass, Translation, TranslationRequest
from mt_eval.methods.deepl import FREE_URL, PRO_URL, deepl_method
from mt_eval.methods.google import google_method
from mt_eval.methods.mt_api import MTApiMethod
from support.mt_apis import FakeMTApi, Fault, fake_translation

SOURCES = ["The cat sleeps.", "Hello world.", "How are you?", "Good night, moon.", "One two three."]
REFERENCES = ["El gato duerme.", "Hola mundo.", "¿Cómo estás?", "Buenas noches, luna.", "Uno dos tres."]


def _method(kind: str, server: FakeMTApi, monkeypatch: pytest.MonkeyPatch, **options: object) -> MTApiMethod:
    monkeypatch.setenv("DEEPL_AUTH_KEY" if kind == "deepl" else "GOOGLE_TRANSLATE_API_KEY", server.key)
    build = deepl_method if kind == "deepl" else google_method
    return build(language_card("en"), language_card("es"), {"base_url": server.base_url, "max_retries": 4,
                                                            "retry_base_delay": 0.01, **options})


def _translate(method: MTApiMethod, sources: list[str] = SOURCES) -> list[Translation]:
    async def go() -> list[Translation]:
        await method.open()
        try:
            return await method.translate([TranslationRequest(i, s, "en", "es") for i, s in enumerate(sources, 1)])
        finally:
            await method.close()

    return asyncio.run(go())


@pytest.mark.parametrize("kind", ["deepl", "google"])
def test_request_and_answer_formats(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeMTApi(kind) as server:
        out = _translate(_method(kind, server, monkeypatch))
    target = "ES" if kind == "deepl" else "es"
    assert [t.text for t in out] == [fake_translation(s, target) for s in SOURCES]
    assert len(server.requests) == 1  # one request carries the whole group
    seen = server.requests[0]
    if kind == "deepl":
        assert seen.path == "/v2/translate" and seen.headers["authorization"] == "DeepL-Auth-Key test-key"
        assert seen.body == {"text": SOURCES, "source_lang": "EN", "target_lang": "ES"}
    else:
        assert seen.path == "/language/translate/v2" and seen.query == {"key": ["test-key"]}
        assert seen.body == {"q": SOURCES, "source": "en", "target": "es", "format": "text"}
        assert "authorization" not in seen.headers
    assert all(t.extra["billed_characters"] == len(s) for t, s in zip(out, SOURCES, strict=True))


@pytest.mark.parametrize("kind", ["deepl", "google"])
def test_transient_faults_are_retried_and_never_shift_outputs(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """429 (Retry-After honoured), 500, a body that is not JSON and an answer one text short: each retried;
    the outputs still belong to their own sources."""
    with FakeMTApi(kind) as server:
        short = ({"translations": [{"text": "x"}]} if kind == "deepl"
                 else {"data": {"translations": [{"translatedText": "x"}]}})
        server.inject(Fault(429, retry_after="0.2"), Fault(500), Fault(200, raw=b"{not json"),
                      Fault(200, raw=json.dumps(short).encode()))
        method = _method(kind, server, monkeypatch)
        out = _translate(method)
    target = "ES" if kind == "deepl" else "es"
    assert [t.text for t in out] == [fake_translation(s, target) for s in SOURCES]
    assert method.retries == 4 and len(server.requests) == 5 and out[0].extra["attempts"] == 5
    assert server.requests[1].at - server.requests[0].at >= 0.2  # waited as long as Retry-After said


def test_retries_exhausted_is_each_entrys_error_not_a_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeMTApi("deepl") as server:
        server.inject(*[Fault(503)] * 3)
        out = _translate(_method("deepl", server, monkeypatch, max_retries=2))
    assert all(t.error and "giving up after 3 attempts" in t.error and t.text == "" for t in out)


@pytest.mark.parametrize(("kind", "fault", "words"), [
    ("deepl", Fault(456, raw=b'{"message": "Quota exceeded"}'), "quota"),
    ("deepl", None, "HTTP 403"),
    ("google", None, "API key not valid"),
])
def test_refusals_every_request_would_get_stop_the_run(kind: str, fault: Fault | None, words: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeMTApi(kind) as server:
        method = _method(kind, server, monkeypatch)
        if fault is not None:
            server.inject(fault)
        else:
            server.key = "another-key"  # the method sends the key it was given: refused
        with pytest.raises(MethodError, match=words):
            _translate(method)
    assert len(server.requests) == 1  # not retried


def test_deepl_host_follows_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """DeepL API Free keys end in ':fx' and are served by api-free.deepl.com; others by api.deepl.com."""
    en, es, pt = language_card("en"), language_card("es"), language_card("pt")
    monkeypatch.setenv("DEEPL_AUTH_KEY", "abc:fx")
    assert deepl_method(en, es, {}).identity.config["base_url"] == FREE_URL
    monkeypatch.setenv("DEEPL_AUTH_KEY", "abc")
    method = deepl_method(es, en, {})
    assert method.identity.config["base_url"] == PRO_URL
    assert method.identity.config["target_lang"] == "EN-US"  # a bare EN target is deprecated by DeepL
    assert deepl_method(en, pt, {}).identity.config["target_lang"] == "PT-PT"
    assert "abc" not in json.dumps(method.identity.config)  # the key never reaches the card


@pytest.mark.parametrize("kind", ["deepl", "google"])
def test_run_through_the_cli(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, ref, out = tmp_path / "src.txt", tmp_path / "ref.txt", tmp_path / "card.json"
    src.write_text("".join(s + "\n" for s in SOURCES), encoding="utf-8")
    ref.write_text("".join(r + "\n" for r in REFERENCES), encoding="utf-8")
    args = ["run", "--method", kind, "--source-file", str(src), "--reference-file", str(ref), "-l", "en-es",
            "--bootstrap", "0", "--runs-dir", str(tmp_path / "runs"), "-o", str(out)]
    variable = "DEEPL_AUTH_KEY" if kind == "deepl" else "GOOGLE_TRANSLATE_API_KEY"
    monkeypatch.delenv(variable, raising=False)
    with FakeMTApi(kind) as server:
        missing = CliRunner().invoke(app, [*args, "--base-url", server.base_url])
        assert missing.exit_code == 2 and variable in missing.output and not server.requests
        monkeypatch.setenv(variable, server.key)
        result = CliRunner().invoke(app, [*args, "--base-url", server.base_url])
    assert result.exit_code == 0, result.output
    card = json.loads(out.read_text(encoding="utf-8"))
    assert card["method"]["method_class"] == MethodClass.API.value == "api"
    assert card["method"]["config"]["price_usd_per_million_chars"] > 0
    assert server.key not in out.read_text(encoding="utf-8")
    target = "ES" if kind == "deepl" else "es"
    assert [r["predicted"] for r in card["results"]] == [fake_translation(s, target) for s in SOURCES]
    assert card["cost"]["status"] != "measured"  # a list price is declared, never a measured cost


def test_dry_run_plan_declares_the_character_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeMTApi("google") as server:
        method = _method("google", server, monkeypatch)
        plan = method.plan([TranslationRequest(i, s, "en", "es") for i, s in enumerate(SOURCES, 1)])
    chars = sum(len(s) for s in SOURCES)
    assert plan["billed_characters"] == chars and plan["est_cost_usd"] == pytest.approx(chars * 20 / 1e6)
    assert plan["requests"] == 1 and not server.requests


def test_python_api_and_a_dry_run_without_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mt_eval.evaluate(dataset, "google", llm={"base_url": ...})`` builds through the same registry; a
    ``--dry-run`` sends nothing and needs no key."""
    from mt_eval import evaluate
    from mt_eval.corpus.models import Dataset, DatasetInfo, Entry

    entries = [Entry(id=i, source=s, reference=r) for i, (s, r) in enumerate(zip(SOURCES, REFERENCES, strict=True), 1)]
    dataset = Dataset(info=DatasetInfo(id="tiny", source_language="en", target_language="es"), entries=entries,
                      sha256="2" * 64)
    with FakeMTApi("google") as server:
        monkeypatch.setenv("GOOGLE_TRANSLATE_API_KEY", server.key)
        result = evaluate(dataset, "google", llm={"base_url": server.base_url})
        monkeypatch.delenv("DEEPL_AUTH_KEY", raising=False)
        src = tmp_path / "src.txt"
        src.write_text("".join(s + "\n" for s in SOURCES), encoding="utf-8")
        ref = tmp_path / "ref.txt"
        ref.write_text("".join(r + "\n" for r in REFERENCES), encoding="utf-8")
        dry = CliRunner().invoke(app, ["run", "--method", "deepl", "--dry-run", "--source-file", str(src),
                                       "--reference-file", str(ref), "-l", "en-es", "--runs-dir", str(tmp_path / "r")])
    assert [e.hypothesis for e in result.entries] == [fake_translation(s, "es") for s in SOURCES]
    assert result.card["method"]["method_class"] == "api"
    assert dry.exit_code == 0, dry.output
    chars = sum(len(s) for s in SOURCES)
    shown = " ".join(dry.output.split())
    assert f"estimated {chars:,} billed characters; estimated cost ${chars * 25 / 1e6:.4f}" in shown
    assert len(server.requests) == 1  # the evaluate call's one request; the dry run sent none
