"""Shipped language cards: load and validate, profiles from the card, the missing-analyser error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.analyzers.registry import require_analyser
from mt_eval.errors import UserError
from mt_eval.languages.card import CARDS_DIR, all_cards, clear_cache, language_card, parse_card

NTREX_CODES = ["amh", "arb", "cat", "deu", "eus", "fin", "fra", "glg", "hau", "hin", "isl", "ita", "jpn", "kor",
               "mkd", "mri", "nno", "nob", "por", "smo", "spa", "swa", "tha", "xho", "yor", "zho-CN", "zul", "eng"]


def test_every_ntrex_language_and_the_extra_ones_have_a_card(ntrex_dir: Path) -> None:
    for path in ntrex_dir.glob("newstest2019-*.txt"):
        code = path.stem.split(".")[-1]
        assert not language_card(code).generic, code
    for code in ("crk", "se", "iu", "fi", "en"):
        assert not language_card(code).generic


def test_profile_comes_from_the_card() -> None:
    assert language_card("es").profile == "A" and language_card("spa").code == "es"
    assert language_card("de").profile == "B" and language_card("crk").profile == "B"
    assert language_card("zho-CN").bleu_tokenizer == "zh"


def test_invalid_card_names_file_and_field(tmp_path: Path) -> None:
    bad = json.loads((CARDS_DIR / "es.json").read_text(encoding="utf-8"))
    bad["profile"] = "B"
    (tmp_path / "es.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(UserError, match=r"es\.json: field 'profile'"):
        parse_card(tmp_path / "es.json")


def test_missing_analyser_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    card = json.loads((CARDS_DIR / "es.json").read_text(encoding="utf-8"))
    card["analyser"] = "apertium:/nonexistent/spa.automorf.bin"
    (tmp_path / "es.json").write_text(json.dumps(card), encoding="utf-8")
    monkeypatch.setenv("MT_EVAL_LANGUAGE_CARDS", str(tmp_path))
    clear_cache()
    try:
        with pytest.raises(UserError, match=r"apt-get install apertium-eng-spa.*--skip-analyser"):
            require_analyser(language_card("es"))
    finally:
        monkeypatch.delenv("MT_EVAL_LANGUAGE_CARDS")
        clear_cache()


def test_all_shipped_cards_parse() -> None:
    assert len(all_cards()) >= 31
