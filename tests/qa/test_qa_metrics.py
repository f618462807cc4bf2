"""The spec's metric definitions and its own worked examples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mt_eval.qa.metrics import (
    DDOF,
    best_exact_match,
    best_f1,
    cnbe_values,
    compute_rlc,
    exact_match,
    f1_score_lang,
    mean_std,
    normalize_text,
    rlc_binary,
)

# --- the spec's worked examples ------------------------------------------------------------------


def test_spec_example_4429_meters_em_and_f1_for_zh() -> None:
    """Spec §2: Gold "4429米", Pred "4429m" → EM 0, F1 ≈ 0.8 (characters 4,4,2,9 shared of 5)."""
    assert exact_match("4429m", "4429米") == 0.0
    assert f1_score_lang("4429m", "4429米", "zh") == pytest.approx(0.8)


def test_spec_example_rlc_ok_two_of_three() -> None:
    """Spec §4: RLC 0.95, 0.65, 0.55 → RLC_OK 1, 1, 0 → 0.667."""
    flags = [1.0 if r >= 0.6 else 0.0 for r in (0.95, 0.65, 0.55)]
    assert flags == [1.0, 1.0, 0.0]
    assert round(mean_std(flags)[0], 3) == 0.667


def test_spec_example_rlc_mixed_answer_follows_the_algorithm() -> None:
    """Spec §3: "答案是 4429 meters". The algorithm skips the space and digits and counts 答案是
    (3 hits) against m,e,t,e,r,s (6 misses): 3/9 = 0.333. The spec's prose says "≈ 0.6"; we follow
    the algorithm (documented in docs/qa.md)."""
    assert compute_rlc("答案是 4429 meters", "zh") == pytest.approx(3 / 9)
    assert rlc_binary("答案是 4429 meters", "zh") == 0.0


def test_rlc_ok_builds_on_rlc_with_configurable_threshold() -> None:
    text = "答案是 4429 meters"  # RLC 1/3
    assert rlc_binary(text, "zh", threshold=0.3) == 1.0
    assert rlc_binary(text, "zh", threshold=0.34) == 0.0
    assert rlc_binary("北京", "zh") == 1.0


# --- normalisation and EM ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  The  Denver\tBroncos! ", "the denver broncos"),
        ("U.S.", "us"),
        ("4,429", "4429"),
        ("«Ein neues Lied»", "ein neues lied"),
        ("「東京」タワー。", "東京タワー"),
        ("４４２９ｍ", "4429m"),  # full-width forms (NFKC)
        ("ﾃｽﾄ", "テスト"),  # half-width katakana
        ("서울특별시, 대한민국", "서울특별시 대한민국"),
        ("القاهرة، مصر؟", "القاهرة مصر"),
        ("Москва — столица", "москва столица"),
        ("ירושלים.", "ירושלים"),
        ("กรุงเทพฯ.", "กรุงเทพฯ"),  # ฯ is a Thai letter (Lo), the full stop is not
        ("नई दिल्ली।", "नई दिल्ली"),
        ("तीन सौ (300)", "तीन सौ 300"),
        ("Ελλάδα;", "ελλάδα"),
        ("$5.00 & 10%", "500 10"),
        ("😀 ★ ©", ""),
    ],
)
def test_normalize_text(raw: str, expected: str) -> None:
    assert normalize_text(raw) == expected


def test_exact_match_ignores_case_space_and_punctuation() -> None:
    assert exact_match("denver broncos.", "Denver  Broncos") == 1.0
    assert exact_match("Denver", "Denver Broncos") == 0.0
    assert best_exact_match("Broncos", ["Denver Broncos", "Broncos"]) == 1.0
    assert best_exact_match("x", []) == 0.0


# --- F1 --------------------------------------------------------------------------------------------


def test_f1_whitespace_tokens_for_space_delimited_languages() -> None:
    # pred tokens {denver, broncos, team}, gold {denver, broncos}: P 2/3, R 1 → 0.8
    assert f1_score_lang("Denver Broncos team", "Denver Broncos", "en") == pytest.approx(0.8)
    # whitespace tokens: the digits and the unit do not share a token in English
    assert f1_score_lang("4429m", "4429 m", "en") == 0.0


@pytest.mark.parametrize("lang", ["zh", "ja", "zh_cn", "zh_tw", "zh-Hant", "ja-JP"])
def test_f1_characters_for_chinese_and_japanese(lang: str) -> None:
    # spaces are removed before splitting into characters
    assert f1_score_lang("东京 塔", "东京塔", lang) == 1.0
    # 2 of 3 pred characters match, 2 of 2 gold → P 2/3, R 1 → 0.8
    assert f1_score_lang("东京都", "东京", lang) == pytest.approx(0.8)


def test_f1_counts_repeated_tokens_as_a_multiset() -> None:
    # pred: the the the; gold: the cat → overlap 1 (not 3): P 1/3, R 1/2 → 0.4
    assert f1_score_lang("the the the", "the cat", "en") == pytest.approx(0.4)


def test_f1_empty_cases() -> None:
    assert f1_score_lang("", "", "en") == 1.0
    assert f1_score_lang("!!!", "...", "en") == 1.0  # both empty after normalisation
    assert f1_score_lang("", "Paris", "en") == 0.0
    assert f1_score_lang("Paris", "", "en") == 0.0
    assert f1_score_lang("London", "Paris", "en") == 0.0


def test_f1_takes_the_best_gold_answer() -> None:
    assert best_f1("Santa Clara", ["Levi's Stadium", "Santa Clara, California"], "en") == pytest.approx(0.8)


# --- RLC -----------------------------------------------------------------------------------------


def test_rlc_is_one_for_empty_and_for_language_neutral_text() -> None:
    assert compute_rlc("", "th") == 1.0
    assert compute_rlc("  308 ", "th") == 1.0
    assert compute_rlc("1,234.5%!", "zh") == 1.0


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("Denver Broncos", "th", 0.0),
        ("เดนเวอร์ บรองโกส์", "th", 1.0),
        ("丹佛野马队", "zh", 1.0),
        ("丹佛野马队。", "zh", 1.0),  # CJK punctuation is not a character of any language
        ("東京タワーです", "ja", 1.0),  # kanji + katakana + hiragana all count for ja
        ("タワー", "zh", 0.0),  # kana is not Chinese
        ("서울", "ko", 1.0),
        ("서울 Seoul", "ko", 2 / 7),
        ("القاهرة", "ar", 1.0),
        ("تهران", "fa", 1.0),
        ("ירושלים", "he", 1.0),
        ("नई दिल्ली", "hi", 1.0),  # vowel signs (combining marks) belong to Devanagari
        ("Москва", "ru", 1.0),
        ("Αθήνα", "el", 1.0),
        ("Hà Nội", "vi", 1.0),
        ("Köln", "de", 1.0),
        ("Cafe\u0301", "fr", 1.0),  # decomposed accent: NFKC composes it
        ("北京", "en", 0.0),  # departure from the sketch's isalpha(): Chinese is not English
        ("Berlin", "ru", 0.0),
    ],
)
def test_rlc_by_script(text: str, lang: str, expected: float) -> None:
    assert compute_rlc(text, lang) == pytest.approx(expected)


# --- CNBE and aggregation ------------------------------------------------------------------------


def test_cnbe_per_sample_and_zero_cost() -> None:
    f1 = np.array([1.0, 1.0, 0.0, 0.5])
    base = np.array([0.5, 0.0, 0.5, 0.5])
    cost = np.array([100.0, 0.0, 50.0, 10.0])
    assert cnbe_values(f1, base, cost).tolist() == [0.005, 0.0, -0.01, 0.0]
    with pytest.raises(ValueError, match="same shape"):
        cnbe_values(f1, base[:3], cost)


def test_std_is_population_std() -> None:
    """ddof = 0: the spec's metrics.json reports rlc_ok 0.8 with std 0.4 over n = 10."""
    assert DDOF == 0
    mean, std = mean_std([1.0] * 8 + [0.0] * 2)
    assert (mean, std) == (pytest.approx(0.8), pytest.approx(0.4))
    assert mean_std([]) == (0.0, 0.0)
    assert mean_std([0.7]) == (0.7, 0.0)


@given(st.text(max_size=40), st.sampled_from(["en", "zh", "ja", "th", "ar", "hi", "ru", "ko"]))
def test_properties(text: str, lang: str) -> None:
    norm = normalize_text(text)
    assert normalize_text(norm) == norm  # idempotent
    assert norm == norm.strip() and "  " not in norm
    assert exact_match(text, text) == 1.0
    assert f1_score_lang(text, text, lang) == 1.0
    rlc = compute_rlc(text, lang)
    assert 0.0 <= rlc <= 1.0 and not math.isnan(rlc)
