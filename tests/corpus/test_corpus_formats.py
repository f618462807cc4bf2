"""JSONL, TSV and plain text-pair corpora, on real NTREX-128 data where it matters."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from corpus_helpers import one_line_with, problems

from mt_eval.corpus import Segment, load_corpus, load_text_pair, text_pair_sha256
from mt_eval.errors import CorpusError


def _ntrex_lines(ntrex: Path, name: str) -> list[str]:
    # NTREX files end lines with CRLF; read bytes so Python's newline translation cannot hide it.
    return (ntrex / name).read_bytes().decode("utf-8").split("\r\n")[:-1]


# --- JSONL -------------------------------------------------------------------------------------


def _write_jsonl(path: Path, rows: Sequence[object]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_jsonl_from_real_data(tmp_path: Path, ntrex: Path) -> None:
    src = _ntrex_lines(ntrex, "newstest2019-src.eng.txt")[:200]
    ref = _ntrex_lines(ntrex, "newstest2019-ref.spa.txt")[:200]
    rows = [{"id": i, "source": s, "reference": r} for i, (s, r) in enumerate(zip(src, ref, strict=True), 1)]
    path = _write_jsonl(tmp_path / "ntrex-eng-spa.jsonl", rows)
    ds = load_corpus(path, source_lang="en", target_lang="es")
    assert len(ds.entries) == 200 and ds.info.id == "ntrex-eng-spa"
    assert ds.entries[0].source == src[0] and ds.entries[199].reference == ref[199]
    assert ds.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_jsonl_envelope_line_and_legacy_rows(tmp_path: Path) -> None:
    rows: list[object] = [
        {"dataset": {"id": "j", "source_language": "en", "target_language": "crk"}},
        {"index": 1, "source_text": "dog", "target_expected": "atim", "difficulty": "easy"},
    ]
    ds = load_corpus(_write_jsonl(tmp_path / "c.jsonl", rows))
    assert ds.info.id == "j" and ds.entries[0].reference == "atim" and ds.entries[0].difficulty == 1


def test_jsonl_invalid_line_names_line_number(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": 1, "source": "a", "reference": "b"}\n\n{"id": 2, "source": "a" "x"}\n', "utf-8")
    one_line_with(problems(path, source_lang="en", target_lang="es"), "c.jsonl:3", "invalid JSON on line 3")


def test_jsonl_entry_problems_carry_line_and_id(tmp_path: Path) -> None:
    rows: list[object] = [
        {"id": 1, "source": "a", "reference": "b"},
        {"id": 2, "source": 5, "reference": "b"},
        {"id": 1, "source": "a", "reference": "b"},
        [1, 2],
    ]
    lines = problems(_write_jsonl(tmp_path / "c.jsonl", rows), source_lang="en", target_lang="es")
    one_line_with(lines, "c.jsonl:2", "entry 2", "field 'source'", "expected a string")
    one_line_with(lines, "c.jsonl:3", "entry 1", "duplicate id 1", "line 1")
    one_line_with(lines, "c.jsonl:4", "expected an entry object")


def test_jsonl_without_languages(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "c.jsonl", [{"id": 1, "source": "a", "reference": "b"}])
    one_line_with(problems(path), "c.jsonl", "dataset.source_language", "--source-lang")


# --- TSV ---------------------------------------------------------------------------------------


def test_tsv_with_all_columns(tmp_path: Path) -> None:
    path = tmp_path / "c.tsv"
    path.write_text(
        "id\tsource\treference\tsegment\tdifficulty\tprovenance\tregister\tcontext\tvariants\tsubject\n"
        "1\tHello\tHola\tdiagnostic\t2\ttextbook\tformal\tgreeting\tBuenas ||| Saludos\tgreet\n"
        "2\tBye\tAdiós\t\t\t\t\t\t\t\n",
        encoding="utf-8",
    )
    ds = load_corpus(path, source_lang="en", target_lang="es")
    first, second = ds.entries
    assert first.segment is Segment.DIAGNOSTIC and first.difficulty == 2
    assert first.variants == ["Buenas", "Saludos"]
    assert first.model_extra == {"subject": "greet"}
    assert second.segment is Segment.DEVELOPMENT and second.register is None  # empty cell = default
    assert ds.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_tsv_legacy_columns_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "legacy.tsv"
    path.write_bytes(b"index\tsource_text\ttarget_expected\tdifficulty\r\n0\tdog\tatim\thard\r\n")
    ds = load_corpus(path, source_lang="en", target_lang="crk")
    assert ds.entries[0].id == 0 and ds.entries[0].reference == "atim"
    assert ds.entries[0].difficulty == 4 and ds.entries[0].difficulty_label == "hard"


def test_tsv_real_data_keeps_quotes(tmp_path: Path, ntrex: Path) -> None:
    src = _ntrex_lines(ntrex, "newstest2019-src.eng.txt")
    ref = _ntrex_lines(ntrex, "newstest2019-ref.spa.txt")
    path = tmp_path / "ntrex.tsv"
    body = "".join(f"{i}\t{s}\t{r}\n" for i, (s, r) in enumerate(zip(src, ref, strict=True), 1))
    path.write_text("id\tsource\treference\n" + body, encoding="utf-8")
    ds = load_corpus(path, source_lang="en", target_lang="es")
    assert len(ds.entries) == len(src) == 1997
    quoted = next(e for e in ds.entries if '"' in e.source)
    assert quoted.source == src[quoted.id - 1]


def test_tsv_problems(tmp_path: Path) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(
        "id\tsource\treference\tdifficulty\n1\ta\tb\t7\nx\ta\tb\t2\n3\ta\tb\n4\ta\tb\tsometimes\n",
        encoding="utf-8",
    )
    lines = problems(path, source_lang="en", target_lang="es")
    one_line_with(lines, "bad.tsv:2", "entry 1", "field 'difficulty'", "out of range")
    one_line_with(lines, "bad.tsv:3", "field 'id'", '"x"')
    one_line_with(lines, "bad.tsv:4", "expected 4 tab-separated columns, got 3")
    one_line_with(lines, "bad.tsv:5", "entry 4", "field 'difficulty'", "sometimes")


def test_tsv_header_problems(tmp_path: Path) -> None:
    path = tmp_path / "h.tsv"
    path.write_text("id\tsource\tsource\n1\ta\tb\n", encoding="utf-8")
    lines = problems(path, source_lang="en", target_lang="es")
    one_line_with(lines, "h.tsv:1", "duplicate column 'source'")
    one_line_with(lines, "h.tsv:1", "missing required column 'reference'", "target_expected")


def test_tsv_header_only_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "e.tsv"
    path.write_text("id\tsource\treference\n", encoding="utf-8")
    one_line_with(problems(path, source_lang="en", target_lang="es"), "e.tsv", "empty")


# --- text pairs --------------------------------------------------------------------------------


def test_text_pair_real_ntrex(ntrex: Path) -> None:
    src_file, ref_file = ntrex / "newstest2019-src.eng.txt", ntrex / "newstest2019-ref.spa.txt"
    ds = load_text_pair(src_file, ref_file, "en", "es")
    src, ref = _ntrex_lines(ntrex, src_file.name), _ntrex_lines(ntrex, ref_file.name)
    assert len(ds.entries) == 1997
    assert [e.id for e in ds.entries] == list(range(1, 1998))
    assert ds.entries[0].source == src[0] and ds.entries[-1].reference == ref[-1]
    assert not ds.entries[0].source.endswith("\r")
    assert ds.info.source_language == "en" and ds.info.language_pair == "EN→ES"
    assert ds.info.id == "newstest2019-src.eng+newstest2019-ref.spa"
    inner = hashlib.sha256(src_file.read_bytes()).hexdigest() + hashlib.sha256(ref_file.read_bytes()).hexdigest()
    assert ds.sha256 == hashlib.sha256(inner.encode("ascii")).hexdigest()
    assert ds.sha256 == text_pair_sha256(src_file.read_bytes(), ref_file.read_bytes())
    assert load_text_pair(src_file, ref_file, "en", "es", dataset_id="ntrex").info.id == "ntrex"


def test_text_pair_hash_depends_on_order() -> None:
    assert text_pair_sha256(b"a", b"b") != text_pair_sha256(b"b", b"a")


def test_text_pair_line_count_mismatch_names_both_files(tmp_path: Path, ntrex: Path) -> None:
    short = tmp_path / "short.spa.txt"
    short.write_text("\n".join(_ntrex_lines(ntrex, "newstest2019-ref.spa.txt")[:1990]) + "\n", "utf-8")
    with pytest.raises(CorpusError) as info:
        load_text_pair(ntrex / "newstest2019-src.eng.txt", short, "en", "es")
    line = info.value.lines()[0]
    assert "newstest2019-src.eng.txt has 1997 lines" in line and "short.spa.txt has 1990 lines" in line


def test_text_pair_empty_lines_and_missing_file(tmp_path: Path) -> None:
    src, ref = tmp_path / "s.txt", tmp_path / "r.txt"
    src.write_text("a\n\nc\n", "utf-8")
    ref.write_text("x\ny\n \n", "utf-8")
    with pytest.raises(CorpusError) as info:
        load_text_pair(src, ref, "en", "es")
    one_line_with(info.value.lines(), "s.txt:2", "entry 2", "field 'source'", "empty")
    one_line_with(info.value.lines(), "r.txt:3", "entry 3", "field 'reference'", "empty")
    with pytest.raises(CorpusError) as info:
        load_text_pair(tmp_path / "none.txt", tmp_path / "gone.txt", "en", "es")
    assert len(info.value.lines()) == 2
    one_line_with(info.value.lines(), "none.txt", "file not found")
    one_line_with(info.value.lines(), "gone.txt", "file not found")


def test_text_pair_requires_languages(tmp_path: Path) -> None:
    src, ref = tmp_path / "s.txt", tmp_path / "r.txt"
    src.write_text("a\n", "utf-8")
    ref.write_text("b\n", "utf-8")
    with pytest.raises(CorpusError) as info:
        load_text_pair(src, ref, "", "es")
    one_line_with(info.value.lines(), "dataset.source_language")
