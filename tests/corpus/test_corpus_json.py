"""JSON corpora: the spec envelope, bare lists, legacy harness files, and every malformed case."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from corpus_helpers import entry, envelope, one_line_with, problems, write_json

from mt_eval.corpus import Dataset, Provenance, Segment, load_corpus
from mt_eval.errors import CorpusError, UserError


def test_spec_envelope_loads_with_all_fields(tmp_path: Path) -> None:
    full = entry(
        42,
        source="I see the dog",
        reference="niwâpamâw atim",
        segment="gold_standard",
        difficulty=2,
        provenance="gold_standard",
        register="conversational",
        context="declaration",
        morphological_analysis="ni-wâpam-âw atim",
        notes="direct form",
        variant_class="simple-ta-direct",
        variants=["niwâpamâw atim ôma"],
    )
    path = write_json(tmp_path, envelope([full, entry(43)], language_pair="EN→CRK", version="1.2"))
    ds = load_corpus(path)
    assert isinstance(ds, Dataset)
    assert ds.info.id == "test-v1" and ds.info.version == "1.2" and ds.info.language_pair == "EN→CRK"
    first = ds.entries[0]
    assert first.id == 42 and first.reference == "niwâpamâw atim"
    assert first.segment is Segment.GOLD_STANDARD and first.provenance is Provenance.GOLD_STANDARD
    assert first.variants == ["niwâpamâw atim ôma"]
    assert ds.entries[1].segment is Segment.DEVELOPMENT  # default
    assert ds.path == str(path)


def test_sha256_is_of_the_file_bytes(tmp_path: Path) -> None:
    path = write_json(tmp_path, envelope([entry(1)]))
    assert load_corpus(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_language_pair_derived_when_absent(tmp_path: Path) -> None:
    ds = load_corpus(write_json(tmp_path, envelope([entry(1)])))
    assert ds.info.language_pair == "EN→ES"


def test_bare_list_takes_languages_from_arguments(tmp_path: Path) -> None:
    path = write_json(tmp_path, [entry(1), entry(2)], name="bare.json")
    ds = load_corpus(path, source_lang="en", target_lang="fr")
    assert ds.info.source_language == "en" and ds.info.target_language == "fr"
    assert ds.info.id == "bare"
    assert load_corpus(path, source_lang="en", target_lang="fr", dataset_id="x").info.id == "x"


def test_bare_list_without_languages_names_both_options(tmp_path: Path) -> None:
    lines = problems(write_json(tmp_path, [entry(1)], name="bare.json"))
    one_line_with(lines, "bare.json", "dataset.source_language", "--source-lang")
    one_line_with(lines, "bare.json", "dataset.target_language", "--target-lang")


def test_envelope_missing_language(tmp_path: Path) -> None:
    doc = envelope([entry(1)])
    del doc["dataset"]["target_language"]
    path = write_json(tmp_path, doc)
    one_line_with(problems(path), "corpus.json", "dataset.target_language", "missing")
    assert load_corpus(path, target_lang="es").info.target_language == "es"


def test_argument_contradicting_envelope_is_an_error(tmp_path: Path) -> None:
    lines = problems(write_json(tmp_path, envelope([entry(1)])), target_lang="fr")
    one_line_with(lines, "dataset.target_language", "'es'", "--target-lang 'fr'")


def test_legacy_harness_file(tmp_path: Path) -> None:
    legacy = {
        "source_language": "en",
        "target_language": "crk",
        "entries": [
            {"index": 0, "source_text": "hello", "target_expected": "tânisi", "difficulty": "easy"},
            {"index": 1, "source_text": "b", "target_expected": "c", "difficulty": "Medium"},
            {"index": 2, "source_text": "d", "target_expected": "e", "difficulty": "hard"},
        ],
    }
    ds = load_corpus(write_json(tmp_path, legacy, name="legacy.json"))
    assert [e.id for e in ds.entries] == [0, 1, 2]
    assert ds.entries[0].source == "hello" and ds.entries[0].reference == "tânisi"
    assert [e.difficulty for e in ds.entries] == [1, 3, 4]
    assert [e.difficulty_label for e in ds.entries] == ["easy", "Medium", "hard"]
    assert ds.info.target_language == "crk" and ds.info.id == "legacy"


def test_legacy_and_spec_name_conflict(tmp_path: Path) -> None:
    bad = {"index": 1, "id": 2, "source": "a", "reference": "b"}
    lines = problems(write_json(tmp_path, envelope([bad])))
    one_line_with(lines, "corpus.json", "field 'index'", "conflicts with 'id'")


def test_unknown_difficulty_word(tmp_path: Path) -> None:
    lines = problems(write_json(tmp_path, envelope([entry(1, difficulty="trivial")])))
    one_line_with(lines, "entry 1", "field 'difficulty'", "easy/medium/hard", "trivial")


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"dataset": {"id": "x"},\n  "entries": [1 2]}', encoding="utf-8")
    line = one_line_with(problems(path), "broken.json", "invalid JSON", "line 2", "column")
    assert "column 17" in line


def test_missing_required_field(tmp_path: Path) -> None:
    bad = {"id": 7, "source": "a"}
    one_line_with(
        problems(write_json(tmp_path, envelope([bad]))), "corpus.json", "entry 7", "field 'reference'", "missing"
    )


def test_wrong_types_are_located_by_position_when_id_is_unusable(tmp_path: Path) -> None:
    lines = problems(write_json(tmp_path, envelope([entry(1), {"id": "abc", "source": 5, "reference": "r"}])))
    one_line_with(lines, "corpus.json", "entry at position 2", "field 'id'", "integer", '"abc"')
    one_line_with(lines, "corpus.json", "entry at position 2", "field 'source'", "string", "number 5")


@pytest.mark.parametrize("value", ["5", 5.0, True, None])
def test_id_is_strictly_an_integer(tmp_path: Path, value: object) -> None:
    lines = problems(write_json(tmp_path, envelope([{"id": value, "source": "a", "reference": "b"}])))
    one_line_with(lines, "field 'id'", "expected an integer")


@pytest.mark.parametrize("value", [-3, 2**63, 10**100])
def test_id_out_of_range(tmp_path: Path, value: int) -> None:
    lines = problems(write_json(tmp_path, envelope([entry(value)])))
    one_line_with(lines, "entry at position 1", "field 'id'", "from 0 to 2^63-1")


def test_lone_surrogate_escape_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    text = json.dumps(envelope([entry(1, notes="x")])).replace('"x"', '"a\\udc80b"')
    path.write_text(text, encoding="utf-8")
    line = one_line_with(problems(path), "s.json", "entry 1", "field 'notes'", "surrogate")
    line.encode("utf-8")


def test_huge_integer_literal(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('[{"id": ' + "9" * 5000 + ', "source": "a", "reference": "b"}]', encoding="utf-8")
    one_line_with(problems(path, source_lang="en", target_lang="es"), "big.json", "invalid JSON")


def test_duplicate_id_names_both_positions(tmp_path: Path) -> None:
    lines = problems(write_json(tmp_path, envelope([entry(4), entry(5), entry(4)])))
    one_line_with(lines, "corpus.json", "entry 4", "field 'id'", "duplicate id 4", "position 3", "position 1")


@pytest.mark.parametrize("value", [0, 6, 7, -1])
def test_difficulty_out_of_range(tmp_path: Path, value: int) -> None:
    lines = problems(write_json(tmp_path, envelope([entry(9, difficulty=value)])))
    one_line_with(lines, "corpus.json", "entry 9", "field 'difficulty'", f"difficulty {value} out of range 1-5")


@pytest.mark.parametrize(
    ("field", "allowed"),
    [
        ("segment", "gold_standard, held_out, development, diagnostic"),
        ("provenance", "gold_standard, textbook, elicited, corpus"),
        ("register", "conversational, formal, technical, ceremonial, educational"),
        ("context", "greeting, declaration, question, instruction, narrative, label, error"),
    ],
)
def test_unknown_enum_value_lists_allowed(tmp_path: Path, field: str, allowed: str) -> None:
    lines = problems(write_json(tmp_path, envelope([entry(3, **{field: "bogus"})])))
    one_line_with(lines, "corpus.json", "entry 3", f"field '{field}'", f'unknown {field} "bogus"', allowed)


def test_all_problems_are_collected(tmp_path: Path) -> None:
    doc = envelope([entry(1, difficulty=7), entry(1), {"id": 2}, entry(3, segment="x"), 5])
    lines = problems(write_json(tmp_path, doc))
    assert len(lines) >= 6
    one_line_with(lines, "entry at position 5", "expected an entry object")


def test_empty_source_or_reference(tmp_path: Path) -> None:
    lines = problems(write_json(tmp_path, envelope([entry(1, source="  "), entry(2, reference="")])))
    one_line_with(lines, "entry 1", "field 'source'", "empty")
    one_line_with(lines, "entry 2", "field 'reference'", "empty")


def test_variant_item_type(tmp_path: Path) -> None:
    lines = problems(write_json(tmp_path, envelope([entry(1, variants=["a", 3])])))
    one_line_with(lines, "entry 1", "field 'variants[1]'", "expected a string")


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (envelope([]), "empty"),
        ({"dataset": {"id": "x", "source_language": "en", "target_language": "es"}}, "field 'entries'"),
        ({"dataset": 3, "entries": [entry(1)]}, "field 'dataset'"),
        ({"dataset": {"source_language": "en", "target_language": "es"}, "entries": {}}, "list of entries"),
        ("just a string", "list of entries"),
        ([], "empty"),
    ],
)
def test_structural_problems(tmp_path: Path, doc: object, expected: str) -> None:
    one_line_with(problems(write_json(tmp_path, doc), source_lang="en", target_lang="es"), "corpus.json", expected)


def test_envelope_field_types(tmp_path: Path) -> None:
    lines = problems(write_json(tmp_path, envelope([entry(1)], version=2, provenance="textbook")))
    one_line_with(lines, "field 'dataset.version'", "expected a string")
    one_line_with(lines, "field 'dataset.provenance'", "expected a list")


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_bytes(b"  \n")
    one_line_with(problems(path), "empty.json", "empty")


def test_non_utf8_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    text = '{"dataset": {"id": "x", "source_language": "en", "target_language": "es"},\n"entries": [\n'
    path.write_bytes(text.encode() + '{"id": 1, "source": "café", "reference": "c"}]}'.encode("latin-1"))
    one_line_with(problems(path), "latin1.json", "not valid UTF-8", "line 3")


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = write_json(tmp_path, envelope([entry(1)]))
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert load_corpus(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_file_not_found(tmp_path: Path) -> None:
    one_line_with(problems(tmp_path / "nope.json"), "nope.json", "file not found")


def test_directory_is_not_a_corpus(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    one_line_with(problems(tmp_path / "dir.json"), "dir.json", "directory")


def test_unsupported_extension(tmp_path: Path) -> None:
    path = tmp_path / "corpus.xml"
    path.write_text("<x/>", encoding="utf-8")
    with pytest.raises(UserError) as info:
        load_corpus(path)
    assert "corpus.xml" in str(info.value) and ".jsonl" in str(info.value)
    assert isinstance(info.value, CorpusError)


def test_problem_count_is_capped(tmp_path: Path) -> None:
    lines = problems(write_json(tmp_path, envelope([{"id": i} for i in range(400)])))
    assert len(lines) == 501 and "more problems not shown" in lines[-1]
