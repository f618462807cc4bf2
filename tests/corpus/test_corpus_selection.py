"""Selection syntax (--ids, --difficulty, --segment) and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_helpers import entry, envelope, write_json

from mt_eval.corpus import Dataset, load_corpus, parse_id_ranges, parse_int_range, select_entries
from mt_eval.errors import UserError


@pytest.fixture
def dataset(tmp_path: Path) -> Dataset:
    entries = [
        entry(i, segment="diagnostic" if i % 10 == 0 else "development", difficulty=1 + i % 5) for i in range(1, 101)
    ]
    return load_corpus(write_json(tmp_path, envelope(entries)))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1-50,77", set(range(1, 51)) | {77}),
        ("3", {3}),
        (" 1 - 3 , 5 ", {1, 2, 3, 5}),
        ("4-4", {4}),
        ("0,2", {0, 2}),
        ("1-3,2-5", {1, 2, 3, 4, 5}),
    ],
)
def test_parse_id_ranges(text: str, expected: set[int]) -> None:
    assert parse_id_ranges(text) == expected


@pytest.mark.parametrize("text", ["", "a", "1,,2", "1-", "-3", "5-3", "1-2-3", "1;2", "1.5", "1-99999999999"])
def test_parse_id_ranges_errors_name_the_option(text: str) -> None:
    with pytest.raises(UserError) as info:
        parse_id_ranges(text)
    assert str(info.value).startswith("--ids: ")


def test_reversed_range_suggests_fix() -> None:
    with pytest.raises(UserError, match="reversed") as info:
        parse_id_ranges("9-2")
    assert "2-9" in str(info.value)


def test_parse_int_range() -> None:
    assert parse_int_range("2-4") == {2, 3, 4}
    assert parse_int_range("5") == {5}
    with pytest.raises(UserError, match=r"^--difficulty: "):
        parse_int_range("2,4")
    with pytest.raises(UserError, match=r"^--level: "):
        parse_int_range("x", option="--level")


def test_select_by_ids_keeps_order_and_sha(dataset: Dataset) -> None:
    chosen = select_entries(dataset, ids="77,1-3,1000")
    assert [e.id for e in chosen.entries] == [1, 2, 3, 77]
    assert chosen.sha256 == dataset.sha256 and chosen.info == dataset.info
    assert len(dataset.entries) == 100  # original untouched


def test_select_combines_filters(dataset: Dataset) -> None:
    chosen = select_entries(dataset, segment="diagnostic", difficulty="1", ids="1-60")
    assert [e.id for e in chosen.entries] == [10, 20, 30, 40, 50, 60]
    both = select_entries(dataset, segment="diagnostic,development", difficulty="2-3,5")
    assert {e.difficulty for e in both.entries} == {2, 3, 5}


def test_select_errors(dataset: Dataset) -> None:
    with pytest.raises(UserError, match=r"^--segment: unknown segment 'dev'.*development"):
        select_entries(dataset, segment="dev")
    with pytest.raises(UserError, match="--difficulty: 6 is out of range"):
        select_entries(dataset, difficulty="2-7")
    with pytest.raises(UserError, match="no entries match --segment gold_standard") as info:
        select_entries(dataset, segment="gold_standard")
    assert "100 entries" in str(info.value)
    with pytest.raises(UserError, match="no entries match --ids 500-600"):
        select_entries(dataset, ids="500-600")


def test_no_filters_is_identity(dataset: Dataset) -> None:
    assert select_entries(dataset).entries == dataset.entries
