"""lt-proc stream parsing: the plain-split fast path splits exactly where the escaped-slash regex does."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mt_eval.analyzers.lttoolbox import escape, parse_units


def _reference(line: str) -> list[tuple[str, tuple[str, ...]]]:
    """The regex-only parse (the definition the fast path must match)."""
    units = []
    for body in re.findall(r"\^((?:[^$\\]|\\.)*)\$", line):
        parts = re.split(r"(?<!\\)/", body)
        units.append((parts[0], tuple(p for p in parts[1:] if p and not p.startswith(("*", "@", "#")))))
    return units


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab/\\<>*@#^$ ", max_size=30))
def test_fast_split_equals_regex_split(line: str) -> None:
    assert parse_units(line) == _reference(line)


def test_known_lines() -> None:
    assert parse_units("^casa/casa<n><f><sg>/casar<vblex>$") == [("casa", ("casa<n><f><sg>", "casar<vblex>"))]
    assert parse_units(r"^a\/b/a\/b<n>$ ^x/*x$") == [(r"a\/b", (r"a\/b<n>",)), ("x", ())]


def _reference_escape(word: str) -> str:
    """The substitution ``escape`` replaced (the definition its table must match)."""
    return re.sub(r"([\^$/<>@\[\]{}\\*])", r"\\\1", word)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab^$/<>@[]{}\\*#+ é", max_size=30))
def test_escape_table_equals_the_substitution(word: str) -> None:
    assert escape(word) == _reference_escape(word)


def test_escape_known_words() -> None:
    assert escape("casa") == "casa" and escape("") == ""
    assert escape("a/b<n>") == r"a\/b\<n\>" and escape("\\*^$") == r"\\\*\^\$"
