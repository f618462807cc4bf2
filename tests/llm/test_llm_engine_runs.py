"""LLM methods through the engine against a real local OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path

from mt_eval.methods.pipeline import ValidateRetryMethod, WordListValidator
from mt_eval.providers.cache import ResponseCache
from support.llm_fake import Fault, Translator, translate_text
from support.llm_helpers import make_dataset, method, run, serve


def test_concurrency_is_real_and_capped() -> None:
    ds = make_dataset(48)
    with serve(Translator(), ds, base_delay=0.05) as server:
        out, _, stats = run(method(server, concurrency=8), ds)
    # truly 8 at once, never more: counted by the server (no wall-clock bound here; timings are benchmarks/')
    assert server.max_in_flight == 8
    assert [t.text for t in out] == [translate_text(e.source) for e in ds.entries]
    assert stats.done == 48 and stats.errors == 0


def test_batches_are_concurrent_and_misnumbered_entries_go_alone(tmp_path: Path) -> None:
    ds = make_dataset(200)
    translator = Translator(misnumber_rate=0.05)
    with serve(translator, ds, base_delay=0.02) as server:
        out, _, _ = run(method(server, batch_size=10, concurrency=4), ds)
    assert translator.misnumbered, "the fault should have fired"
    assert [t.text for t in out] == [translate_text(e.source) for e in ds.entries]  # zero misaligned
    assert server.max_in_flight == 4
    # every entry whose answer was rejected was asked again alone; no other entry was
    rejected = {t.entry_id for t in out if "batch_rejected" in t.extra}
    assert set(translator.single_ids) == rejected and translator.misnumbered <= rejected
    assert all(t.extra["batched"] for t in out if t.entry_id not in rejected)
    assert sum(t.usage.prompt_tokens for t in out) == sum(r.body and _tokens(r.body) for r in server.requests)


def _tokens(body: dict) -> int:  # type: ignore[type-arg]
    return sum(len(str(m["content"]).split()) for m in body["messages"])


def test_coaching_prompt_is_paid_once_per_batch(tmp_path: Path) -> None:
    ds = make_dataset(50)
    coaching = tmp_path / "coaching.txt"
    coaching.write_text(" ".join(f"rule{i}" for i in range(2000)), encoding="utf-8")
    totals = {}
    for k in (1, 25):
        with serve(Translator(), ds) as server:
            out, _, _ = run(method(server, batch_size=k, concurrency=8, coaching_file=str(coaching)), ds)
        totals[k] = sum(t.usage.prompt_tokens for t in out)
    assert totals[25] * 15 <= totals[1]


def test_faults_are_retried_and_never_cached(tmp_path: Path) -> None:
    ds = make_dataset(60)

    def plan(n: int) -> Fault | None:
        kinds = [Fault(status=429, retry_after="0.01"), Fault(status=500), Fault(delay=0.6)]
        return kinds[(n // 5) % 3] if n % 5 == 0 else None  # 20% of requests fail

    with serve(Translator(), ds, fault_for=plan) as server:
        m = method(server, tmp_path, concurrency=6, timeout_s=0.3, max_retries=8)
        out, _, stats = run(m, ds)
    assert all(t.error is None for t in out)
    assert [t.text for t in out] == [translate_text(e.source) for e in ds.entries]
    assert stats.retries >= 10 and m.stats.retries == stats.retries
    cache = ResponseCache(tmp_path / "cache.sqlite")
    assert len(cache) == 60 and all("injected" not in c and c.strip() for c in cache.contents())


def test_an_entry_that_keeps_failing_is_an_error_with_the_last_message(tmp_path: Path) -> None:
    ds = make_dataset(3)
    with serve(Translator(), ds, fault_for=lambda n: Fault(status=503)) as server:
        out, _, stats = run(method(server, tmp_path, max_retries=2), ds)
    assert all(t.error and "giving up after 3 attempts: HTTP 503" in t.error for t in out)
    assert stats.errors == 3 and len(ResponseCache(tmp_path / "cache.sqlite")) == 0


def test_second_run_at_temperature_zero_makes_no_request(tmp_path: Path) -> None:
    ds = make_dataset(30)
    with serve(Translator(misnumber_rate=0.1), ds) as server:
        first, _, _ = run(method(server, tmp_path, batch_size=5), ds)
        sent = len(server.requests)
        second, _, _ = run(method(server, tmp_path, batch_size=5), ds)
        assert len(server.requests) == sent
        run(method(server, tmp_path, batch_size=5, temperature=0.7), ds)  # sampled: not cached
        assert len(server.requests) > sent
    assert [t.text for t in first] == [t.text for t in second]
    assert all(t.extra["cached"] and t.usage.cost_usd == 0 for t in second)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    assert cache._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL: a put is no fsync on the loop


def test_cost_from_provider_or_pricing_table(tmp_path: Path) -> None:
    ds = make_dataset(4)
    table = tmp_path / "prices.json"
    table.write_text('{"models": {"test/model": {"prompt": 1000000, "completion": 0}}}', encoding="utf-8")
    with serve(Translator(), ds) as server:
        out, _, _ = run(method(server, pricing_file=str(table)), ds)
    assert {t.extra["cost_source"] for t in out} == {"provider"}
    with serve(Translator(), ds, report_cost=False) as server:
        out, _, _ = run(method(server, pricing_file=str(table)), ds)
        unknown, _, _ = run(method(server, model="other/model"), ds)
    assert {t.extra["cost_source"] for t in out} == {"pricing-table"}
    assert [t.usage.cost_usd for t in out] == [float(t.usage.prompt_tokens) for t in out]
    assert {t.extra["cost_source"] for t in unknown} == {None}


def test_validate_retry_pipeline_records_attempts(tmp_path: Path) -> None:
    ds = make_dataset(6, words=2)
    words = tmp_path / "words.txt"
    vocabulary = [w for e in ds.entries for w in translate_text(e.source).rstrip(".").split()]
    words.write_text("\n".join([*vocabulary, "fixed"]), encoding="utf-8")
    ds.entries[1] = ds.entries[1].model_copy(update={"source": ds.entries[1].source + " zzz"})
    ds.entries[2] = ds.entries[2].model_copy(update={"source": ds.entries[2].source + " qqq"})
    with serve(Translator(), ds) as server:
        pipe = ValidateRetryMethod(method(server), WordListValidator(str(words)), fst_retries=2)
        out, _, _ = run(pipe, ds)
    assert [t.extra["validation_attempts"] for t in out] == [1, 2, 3, 1, 1, 1]
    assert out[1].extra["validated"] and out[1].text.endswith("fixed")
    assert not out[2].extra["validated"] and "qqq" in out[2].extra["validation"][0]["feedback"]
    assert pipe.identity.config["fst_retries"] == 2 and pipe.identity.method_class.value == "pipeline"
