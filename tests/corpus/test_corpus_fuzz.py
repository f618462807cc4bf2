"""Property: whatever a corrupted corpus file contains, loading returns a Dataset or raises
UserError, never a pydantic/json/Key/Type error or any other traceback-worthy exception."""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus_helpers import entry, envelope
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mt_eval.corpus import Dataset, load_corpus
from mt_eval.errors import CorpusError, UserError

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

BASE_DOC = envelope(
    [
        entry(1, segment="gold_standard", difficulty=2, provenance="textbook", register="formal"),
        entry(2, context="question", variants=["v1", "v2"], notes="n"),
        {"index": 3, "source_text": "s", "target_expected": "t", "difficulty": "medium"},
    ],
    language_pair="EN→ES",
    provenance=["textbook"],
)
BASE_TEXT = json.dumps(BASE_DOC, ensure_ascii=False, indent=1)
FIELDS = [
    "id",
    "index",
    "source",
    "reference",
    "segment",
    "difficulty",
    "provenance",
    "register",
    "context",
    "variants",
    "source_text",
    "target_expected",
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
    | st.sampled_from(["easy", "hard", "gold_standard", "formal", "question", "", " "]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=6,
)


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    # Module-scoped (hypothesis forbids function-scoped fixtures such as tmp_path in @given tests).
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


def _load_never_crashes(path: Path, **kwargs: Any) -> None:
    try:
        result = load_corpus(path, **kwargs)
    except CorpusError as exc:
        assert exc.lines()
        for line in exc.lines():
            assert line and "\n" not in line
            line.encode("utf-8")  # printable: no lone surrogates leak into messages
        return
    except UserError as exc:
        str(exc).encode("utf-8")
        return
    assert isinstance(result, Dataset) and result.entries
    # A loaded dataset must be serialisable, as the run card writer will do.
    result.model_dump_json().encode("utf-8")


@st.composite
def text_edits(draw: st.DrawFn) -> str:
    text = BASE_TEXT
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["delete", "replace", "insert"]))
        specials = st.sampled_from(["\\ud800", "9" * 5000, "[" * 3000, "NaN", "1e999", "\\u0000", "-0"])
        chunk = (
            draw(specials)
            if draw(st.integers(0, 9)) == 0
            else draw(
                st.text(
                    alphabet=st.sampled_from(list('{}[]",:0123456789-. \nabcé\\\x00')) | st.characters(), max_size=4
                )
            )
        )
        if op == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 20)) :]
        elif op == "replace":
            text = text[:pos] + chunk + text[pos + len(chunk) :]
        else:
            text = text[:pos] + chunk + text[pos:]
    return text


@st.composite
def structural_edits(draw: st.DrawFn) -> Any:
    doc: Any = copy.deepcopy(BASE_DOC)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(
            st.sampled_from(
                ["drop_key", "set_value", "duplicate", "difficulty", "drop_dataset_key", "set_dataset", "top"]
            )
        )
        entries = doc.get("entries") if isinstance(doc, dict) else None
        if op in ("drop_key", "set_value", "duplicate", "difficulty") and isinstance(entries, list) and entries:
            i = draw(st.integers(0, len(entries) - 1))
            target = entries[i]
            if op == "duplicate":
                entries.insert(draw(st.integers(0, len(entries))), copy.deepcopy(target))
            elif not isinstance(target, dict):
                entries[i] = draw(json_values)
            elif op == "drop_key" and target:
                target.pop(draw(st.sampled_from(sorted(target))))
            elif op == "difficulty":
                target["difficulty"] = draw(st.integers(-10, 10))
            else:
                target[draw(st.sampled_from(FIELDS))] = draw(json_values)
        elif (
            op in ("drop_dataset_key", "set_dataset") and isinstance(doc, dict) and isinstance(doc.get("dataset"), dict)
        ):
            info = doc["dataset"]
            if op == "drop_dataset_key" and info:
                info.pop(draw(st.sampled_from(sorted(info))))
            else:
                key = draw(st.sampled_from(["id", "version", "source_language", "target_language", "provenance"]))
                info[key] = draw(json_values)
        elif op == "top" and isinstance(doc, dict):
            key = draw(st.sampled_from(["dataset", "entries"]))
            if draw(st.booleans()):
                doc.pop(key, None)
            else:
                doc[key] = draw(json_values)
    return doc


@FUZZ
@given(text=text_edits())
def test_corrupted_json_text(workdir: Path, text: str) -> None:
    path = workdir / "corpus.json"
    path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    _load_never_crashes(path)


@FUZZ
@given(doc=structural_edits(), langs=st.booleans())
def test_corrupted_json_structure(workdir: Path, doc: Any, langs: bool) -> None:
    path = workdir / "corpus.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    _load_never_crashes(path, **({"source_lang": "en", "target_lang": "es"} if langs else {}))


@FUZZ
@given(raw=st.binary(max_size=40), pos=st.integers(0, len(BASE_TEXT)))
def test_corrupted_bytes(workdir: Path, raw: bytes, pos: int) -> None:
    data = BASE_TEXT.encode("utf-8")
    path = workdir / "corpus.json"
    path.write_bytes(data[:pos] + raw + data[pos:])
    _load_never_crashes(path)


@FUZZ
@given(
    rows=st.lists(
        st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=6), max_size=5), max_size=5
    ),
    header=st.lists(st.sampled_from([*FIELDS, "notes", "x", ""]), min_size=0, max_size=6),
)
def test_random_tsv_and_jsonl(workdir: Path, rows: list[list[str]], header: list[str]) -> None:
    tsv = workdir / "corpus.tsv"
    tsv.write_text("\n".join("\t".join(r) for r in [header, *rows]), encoding="utf-8")
    _load_never_crashes(tsv, source_lang="en", target_lang="es")
    jsonl = workdir / "corpus.jsonl"
    jsonl.write_text("\n".join(" ".join(r) for r in rows), encoding="utf-8")
    _load_never_crashes(jsonl, source_lang="en", target_lang="es")
