"""Fetch adapters against the local upstream server: the converted corpora equal the files they came from,
every fault is refused in one line and leaves nothing behind, licences are accepted once, offline works."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from catalog_upstream import ANLP_PATH, FLORES_PATH, NTREX_PATH, TATOEBA_PATH, WMT_PATH, N, Upstream, md5, ntrex_lines
from sacrebleu.dataset import DATASETS

from mt_eval.catalog import Cache, FetchOptions, fetch_corpus, is_catalog_id, plan
from mt_eval.corpus import load_corpus
from mt_eval.errors import UserError


def _entries(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["entries"]


def test_ntrex_equals_upstream_files_and_pins_their_sha256(upstream: Upstream, cache: Cache,
                                                           options: FetchOptions) -> None:
    fetched = fetch_corpus("ntrex128:eng-spa", cache=cache, options=options, accept_licence=True)
    eng, spa = ntrex_lines("eng"), ntrex_lines("spa")
    assert len(eng) == len(spa) == 1997 == fetched.entry_count
    entries = _entries(fetched.path)
    assert [e["source"] for e in entries] == [s.strip() for s in eng]
    assert [e["reference"] for e in entries] == [r.strip() for r in spa]
    assert [e["id"] for e in entries] == list(range(1, 1998))  # upstream line numbers
    dataset = load_corpus(fetched.path)
    assert (dataset.info.id, dataset.info.source_language, dataset.info.target_language) == \
        ("ntrex128:eng-spa", "en", "es")
    extra = dataset.info.model_extra or {}
    assert extra["attribution"].startswith("Federmann, Kocmi and Xin (2022)") and dataset.info.license == "CC-BY-SA-4.0"
    files = extra["upstream"]["files"]
    assert files[1]["sha256"] == "0ad8129e5ce0bea86ba7e0ea0db0504d6626b8a4d2a7cf4c44b7791c70e99b84"
    assert dataset.info.exposure is not None and dataset.info.exposure["released"] == "2022-10"
    assert fetched.downloaded == 2
    again = fetch_corpus("ntrex128:eng-spa", cache=cache, options=FetchOptions(offline=True))
    assert again.downloaded == 0 and again.path.read_bytes() == fetched.path.read_bytes()


def test_conversion_is_deterministic_across_caches(upstream: Upstream, tmp_path: Path, options: FetchOptions) -> None:
    """The same upstream bytes give the same corpus sha256 anywhere (no fetch time inside)."""
    one = fetch_corpus("ntrex128:eng-deu", cache=Cache(tmp_path / "a"), options=options, accept_licence=True)
    two = fetch_corpus("ntrex128:eng-deu", cache=Cache(tmp_path / "b"), options=options, accept_licence=True)
    assert load_corpus(one.path).sha256 == load_corpus(two.path).sha256


def test_licence_is_shown_and_accepted_once(upstream: Upstream, cache: Cache, options: FetchOptions) -> None:
    with pytest.raises(UserError, match=r"CC-BY-SA-4.0 licence of ntrex128 is not accepted.*--accept-licence"):
        fetch_corpus("ntrex128:eng-spa", cache=cache, options=options)
    assert upstream.requests == []  # nothing fetched before acceptance
    fetch_corpus("ntrex128:eng-spa", cache=cache, options=options, accept_licence=True)
    fetch_corpus("ntrex128:eng-fra", cache=cache, options=options)  # remembered for the family
    with pytest.raises(UserError, match="tatoeba is not accepted"):
        fetch_corpus("tatoeba:eng-spa", cache=cache, options=options)


@pytest.mark.parametrize(("fault", "message"), [
    ("404", r"HTTP 404 .*newstest2019-ref\.spa\.txt"),
    ("500", r"HTTP 500"),
    ("truncate", r"download truncated: \d+ of \d+ bytes"),
    ("corrupt", r"sha256 mismatch .*the catalogue pins 0ad8129e5ce0bea8"),
])
def test_faults_are_refused_and_nothing_is_kept(upstream: Upstream, cache: Cache, options: FetchOptions,
                                               fault: str, message: str) -> None:
    upstream.faults[NTREX_PATH + "newstest2019-ref.spa.txt"] = fault
    with pytest.raises(UserError, match=message) as info:
        fetch_corpus("ntrex128:eng-spa", cache=cache, options=options, accept_licence=True)
    assert "\n" not in str(info.value)
    assert not cache.raw_path("https:/" + NTREX_PATH + "newstest2019-ref.spa.txt").exists()
    assert not list((cache.root / "raw").rglob("*.part")) and not cache.corpus_path("ntrex128:eng-spa").exists()
    upstream.faults.clear()  # the next try succeeds
    assert fetch_corpus("ntrex128:eng-spa", cache=cache, options=options).entry_count == 1997


def test_a_slow_upstream_times_out(upstream: Upstream, cache: Cache, options: FetchOptions) -> None:
    upstream.faults[NTREX_PATH + "newstest2019-src.eng.txt"] = "slow"
    quick = FetchOptions(mirror=options.mirror, timeout_s=0.3)
    with pytest.raises(UserError, match=r"download failed: .*timed out"):
        fetch_corpus("ntrex128:eng-spa", cache=cache, options=quick, accept_licence=True)


def test_unpinned_file_changing_after_first_fetch_is_refused(upstream: Upstream, cache: Cache,
                                                             options: FetchOptions) -> None:
    """AmericasNLP pins no sha256: each file's is recorded at first fetch and checked on every later one."""
    first = fetch_corpus("americasnlp2021:test:es-quy", cache=cache, options=options, accept_licence=True)
    url = "https://raw.githubusercontent.com/AmericasNLP/americasnlp2021/main/test_data/test.quy"
    recorded = json.loads(first.path.read_text())["dataset"]["upstream"]["files"][1]["sha256"]
    assert cache.recorded_sha256(url) == recorded
    cache.raw_path(url).unlink()
    upstream.files[ANLP_PATH + "test.quy"] = upstream.files[ANLP_PATH + "test.quy"].replace(b"a", b"o", 1)
    with pytest.raises(UserError, match="sha256 mismatch"):  # upstream changed under the leaderboard
        fetch_corpus("americasnlp2021:test:es-quy", cache=cache, options=options, refresh=True)
    raw = cache.raw_path("https:/" + ANLP_PATH + "test.es")
    raw.write_bytes(raw.read_bytes().replace(b"a", b"o", 1))  # a cached file edited in place
    with pytest.raises(UserError, match="cached file changed"):
        fetch_corpus("americasnlp2021:test:es-quy", cache=cache, options=options, refresh=True)


def test_offline_refuses_to_download(upstream: Upstream, cache: Cache, options: FetchOptions) -> None:
    offline = FetchOptions(offline=True, mirror=options.mirror)
    with pytest.raises(UserError, match="--offline refuses to download"):
        fetch_corpus("ntrex128:eng-spa", cache=cache, options=offline, accept_licence=True)
    assert upstream.requests == []


def test_flores_plus_parquet_needs_the_token_and_equals_the_rows(upstream: Upstream, cache: Cache,
                                                               options: FetchOptions) -> None:
    no_token = FetchOptions(mirror=options.mirror)
    with pytest.raises(UserError, match=r"HTTP 401.*gated dataset.*HF_TOKEN"):
        fetch_corpus("flores-plus:devtest:eng_Latn-spa_Latn", cache=cache, options=no_token, accept_licence=True)
    fetched = fetch_corpus("flores-plus:devtest:eng_Latn-spa_Latn", cache=cache, options=options)
    entries = _entries(fetched.path)
    assert [e["source"] for e in entries] == [s.strip() for s in ntrex_lines("eng", N)]
    assert [e["reference"] for e in entries] == [s.strip() for s in ntrex_lines("spa", N)]
    assert [e["id"] for e in entries] == list(range(N))  # FLORES+'s own sentence ids
    eng, spa = FLORES_PATH + "devtest/eng_Latn.parquet", FLORES_PATH + "devtest/spa_Latn.parquet"
    assert upstream.requests == [eng, eng, spa]  # the refused try stopped at the first file


def test_wmt21_through_sacrebleus_registry(upstream: Upstream, cache: Cache, options: FetchOptions,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The URL, md5, member and reference choice are sacrebleu's: without a matching md5 pin the served
    tarball is refused; pinned, sacrebleu's XML reader yields translator A's references (its ``refs``)."""
    dataset = DATASETS["wmt21"]
    assert dataset.data == ["https://data.statmt.org/wmt21/translation-task/test.tgz"]
    with pytest.raises(UserError, match=r"md5 mismatch .*sacrebleu's registry pins 32e7ab995bc318414375d60f0269af92"):
        fetch_corpus("wmt:wmt21:en-de", cache=cache, options=options, accept_licence=True)
    monkeypatch.setattr(dataset, "md5", [md5(upstream.files[WMT_PATH])])
    fetched = fetch_corpus("wmt:wmt21:en-de", cache=cache, options=options)
    entries = _entries(fetched.path)

    def clean(line: str) -> str:
        return re.sub(r"\s+", " ", line.strip())
    assert [e["source"] for e in entries] == [clean(s) for s in ntrex_lines("eng", N)]
    assert [e["reference"] for e in entries] == [clean(r) for r in ntrex_lines("deu", N)]  # translator A
    assert not any("references" in e for e in entries)
    info = load_corpus(fetched.path).info
    assert info.language_pair == "en-de" and info.exposure is not None and info.exposure["released"] == "2021-11"


def test_americasnlp_and_tatoeba_formats(upstream: Upstream, cache: Cache, options: FetchOptions) -> None:
    anlp = _entries(fetch_corpus("americasnlp2021:test:es-quy", cache=cache, options=options,
                                 accept_licence=True).path)
    assert [e["source"] for e in anlp] == [s.strip() for s in ntrex_lines("spa", N)]
    assert [e["reference"] for e in anlp] == [s.strip() for s in ntrex_lines("yor", N)]
    assert upstream.requests[-2:] == [ANLP_PATH + "test.es", ANLP_PATH + "test.quy"]
    tatoeba = fetch_corpus("tatoeba:eng-spa", cache=cache, options=options, accept_licence=True)
    rows = [line.split("\t") for line in upstream.files[TATOEBA_PATH].decode().splitlines()]
    entries = _entries(tatoeba.path)
    assert len(entries) == N
    flat = [(e["source"], r) for e in entries for r in (e.get("references") or [e["reference"]])]
    assert flat == [(s, r) for _, _, s, r in rows]  # every row, in order, grouped by source
    assert sum(1 for e in entries if len(e.get("references", [])) == 2) == 4
    reverse = _entries(fetch_corpus("tatoeba:spa-eng", cache=cache, options=options).path)
    assert reverse[2]["source"] == rows[2][3] and reverse[2]["reference"] == rows[2][2]
    assert load_corpus(tatoeba.path).entries[0].all_references == [rows[0][3], rows[1][3]]


@pytest.mark.parametrize(("text", "message"), [
    ("ntrex128:spa-eng", "translates from English"),
    ("flores-plus:test:eng_Latn-spa_Latn", "usage: flores-plus:SPLIT"),
    ("wmt:wmt99:en-de", "sacrebleu has no test set 'wmt99'"),
    ("wmt:wmt21:en-xx", "has no pair 'en-xx'"),
    ("wmt:wmt19:en-de", "not a WMT XML release"),
    ("americasnlp2021:test:es-xyz", "translates Spanish into"),
    ("nosuch:eng-spa", "unknown catalogue id"),
])
def test_bad_ids_are_one_line(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        plan(text)


def test_catalog_ids_versus_files() -> None:
    assert is_catalog_id("ntrex128:eng-spa") and is_catalog_id("wmt:wmt21:en-de")
    assert not is_catalog_id("corpus.json") and not is_catalog_id("data/ntrex128:x.json")
    assert not is_catalog_id("C:eng")  # a drive-letter-like prefix that is no family


def test_a_redirect_never_carries_the_token_to_another_host(upstream: Upstream, cache: Cache,
                                                            options: FetchOptions) -> None:
    """Hugging Face answers a file with a redirect to its CDN: the bearer token goes to huggingface.co only."""
    eng = FLORES_PATH + "devtest/eng_Latn.parquet"
    cdn = "/cdn-lfs.hf.co/repos/flores/eng_Latn.parquet"
    upstream.files[cdn] = upstream.files[eng]
    upstream.redirects[eng] = cdn
    fetch_corpus("flores-plus:devtest:eng_Latn-spa_Latn", cache=cache, options=options, accept_licence=True)
    assert upstream.authorization[eng] == "Bearer hf_test_token"
    assert upstream.authorization[cdn] is None


def test_an_endless_body_is_cut_at_the_size_limit(upstream: Upstream, cache: Cache, options: FetchOptions) -> None:
    small = FetchOptions(mirror=options.mirror, max_bytes=1000)
    with pytest.raises(UserError, match=r"larger than the 1000-byte limit"):
        fetch_corpus("ntrex128:eng-spa", cache=cache, options=small, accept_licence=True)
    assert not list((cache.root / "raw").rglob("*.part"))


def test_flores_file_repeating_ids_is_refused(upstream: Upstream, cache: Cache, options: FetchOptions) -> None:
    """Two variants of a language in one file would pair each source with whichever row came last."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.table({"id": [0, 1, 1], "text": ["a", "b", "b2"]}), sink)
    upstream.files[FLORES_PATH + "devtest/spa_Latn.parquet"] = sink.getvalue()
    with pytest.raises(UserError, match="repeats sentence ids"):
        fetch_corpus("flores-plus:devtest:eng_Latn-spa_Latn", cache=cache, options=options, accept_licence=True)
