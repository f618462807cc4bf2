"""Japanese BLEU needs the ``ja`` extra (sacrebleu[ja]: MeCab + ipadic). Without it BLEU refuses with one line
naming the extra: it never falls back to another tokenizer, which would give a different number on this
install than on one with MeCab (issue 22: one number per install)."""

from __future__ import annotations

import pytest

import mt_eval
from mt_eval.errors import UserError
from mt_eval.languages import card as cards


@pytest.fixture
def no_mecab(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setitem(cards._TOKENIZER_MODULES, "ja-mecab", "mt_eval_tests_no_such_mecab")
    cards.clear_cache()
    yield
    cards.clear_cache()


def test_japanese_bleu_without_mecab_names_the_extra(no_mecab: None) -> None:
    card = cards.language_card("ja")
    assert card.bleu_tokenizer == "ja-mecab" and not card.warnings  # no silent fallback to "char"
    with pytest.raises(UserError) as caught:
        mt_eval.score(["猫がマットの上に座った。"], ["猫はマットの上に座っていた。"], lang="en-ja", metrics=["bleu"])
    message = str(caught.value)
    assert "pip install 'mt-eval[ja]'" in f"{message} {caught.value.hint}" and "ja-mecab" in message


def test_other_targets_do_not_need_mecab(no_mecab: None) -> None:
    result = mt_eval.score(["El gato se sentó."], ["El gato se sentó."], lang="en-es", metrics=["bleu"])
    assert result["bleu"] == pytest.approx(100.0)
