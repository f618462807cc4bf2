"""Several references per entry in corpora and text pairs, and text pairs without a source (decisions §26)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.corpus import load_corpus, load_text_pair, text_pair_sha256
from mt_eval.corpus.problems import sha256_bytes
from mt_eval.errors import CorpusError


def _jsonl(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_references_alone_or_with_a_matching_reference(tmp_path: Path) -> None:
    ds = load_corpus(_jsonl(tmp_path, [{"id": 1, "source": "Hi", "references": ["Hola", "Buenas"]},
                                       {"id": 2, "source": "Yes", "reference": "Sí", "references": ["Sí", "Claro"]},
                                       {"id": 3, "source": "No", "reference": "No"}]),
                     source_lang="en", target_lang="es")
    assert [e.all_references for e in ds.entries] == [["Hola", "Buenas"], ["Sí", "Claro"], ["No"]]
    assert ds.entries[0].reference == "Hola" and ds.entries[0].variants == []


@pytest.mark.parametrize(("row", "message"), [
    ({"id": 1, "source": "Hi", "reference": "Hola", "references": ["Buenas", "Hola"]}, "references[0] must be"),
    ({"id": 1, "source": "Hi", "references": ["Hola", " "]}, "must not contain an empty reference"),
])
def test_inconsistent_references_are_located_errors(tmp_path: Path, row: dict, message: str) -> None:
    with pytest.raises(CorpusError) as caught:
        load_corpus(_jsonl(tmp_path, [row]), source_lang="en", target_lang="es")
    assert any(message in line and "entry 1" in line for line in caught.value.lines())


def test_text_pair_with_two_reference_files_and_without_a_source(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("One\nTwo\n", encoding="utf-8")
    (tmp_path / "r1.txt").write_text("Uno\nDos\n", encoding="utf-8")
    (tmp_path / "r2.txt").write_text("Un\nDeux\n", encoding="utf-8")
    src, r1, r2 = (tmp_path / n for n in ("s.txt", "r1.txt", "r2.txt"))
    two = load_text_pair(src, [r1, r2], "en", "es")
    assert [e.all_references for e in two.entries] == [["Uno", "Un"], ["Dos", "Deux"]]
    one = load_text_pair(src, r1, "en", "es")
    assert one.entries[0].references == [] and one.sha256 == text_pair_sha256(src.read_bytes(), r1.read_bytes())
    digests = [sha256_bytes(p.read_bytes()) for p in (src, r1, r2)]
    assert two.sha256 == sha256_bytes("".join(digests).encode("ascii"))
    assert load_text_pair(src, [r2, r1], "en", "es").sha256 != two.sha256  # order matters
    bare = load_text_pair(None, [r1], "und", "es")
    assert [e.source for e in bare.entries] == ["", ""]
    assert bare.sha256 != one.sha256 and bare.sha256 != text_pair_sha256(r1.read_bytes())
    (tmp_path / "short.txt").write_text("Uno\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="line counts differ"):
        load_text_pair(src, [r1, tmp_path / "short.txt"], "en", "es")
