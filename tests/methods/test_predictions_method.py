"""PredictionsMethod: JSONL and plain-text predictions files, and every way they can be wrong."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mt_eval.corpus.models import Dataset
from mt_eval.errors import MethodError, UserError
from mt_eval.methods.base import Method, MethodClass, TranslationRequest
from mt_eval.methods.predictions import PredictionsMethod

MakeDataset = Callable[[list[int]], Dataset]


def requests(*ids: int) -> list[TranslationRequest]:
    return [
        TranslationRequest(entry_id=i, source=f"source {i}", source_language="en", target_language="es") for i in ids
    ]


def run(method: Method, *ids: int) -> dict[int, Any]:
    return {t.entry_id: t for t in asyncio.run(method.translate(requests(*ids)))}


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def test_jsonl_by_entry_id_with_aliases_and_identity(tmp_path: Path, make_dataset: MakeDataset) -> None:
    path = write(
        tmp_path,
        "sys-a.jsonl",
        '{"entry_id": 30, "predicted": "tres"}\n\n{"id": 10, "prediction": "uno"}\n'
        '{"entry_id": 20, "predicted": "", "error": "timeout", "latency_seconds": 1.5}\n',
    )
    method = PredictionsMethod(path, make_dataset([10, 20, 30]))
    assert isinstance(method, Method)
    got = asyncio.run(method.translate(requests(30, 10, 20)))
    assert [(t.entry_id, t.text, t.error) for t in got] == [(30, "tres", None), (10, "uno", None), (20, "", "timeout")]
    assert got[2].latency_seconds == 1.5
    ident = method.identity
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert ident.name == "predictions"
    assert ident.method_class is MethodClass.CUSTOM_PLUGIN
    assert ident.model_slug == "sys-a"
    assert ident.version == f"sha256:{digest[:12]}"
    assert ident.config == {"predictions_file": str(path), "predictions_sha256": digest, "predictions_format": "jsonl"}


def test_method_class_is_configurable(tmp_path: Path, make_dataset: MakeDataset) -> None:
    path = write(tmp_path, "human.txt", "uno\n")
    method = PredictionsMethod(path, make_dataset([1]), method_class=MethodClass.HUMAN)
    assert method.identity.method_class is MethodClass.HUMAN


def test_plain_text_maps_lines_to_entries_in_corpus_order(tmp_path: Path, make_dataset: MakeDataset) -> None:
    # CRLF line ends, an empty output, and U+2028 (a break for str.splitlines, not for us).
    path = write(tmp_path, "out.txt", "uno\r\n\r\ntres\u2028bis\r\n")
    method = PredictionsMethod(path, make_dataset([7, 3, 9]))
    got = run(method, 9, 7, 3)
    assert (got[7].text, got[3].text, got[9].text) == ("uno", "", "tres\u2028bis")
    assert all(t.error is None for t in got.values())
    assert method.identity.config["predictions_format"] == "text"


def test_plain_text_without_final_newline(tmp_path: Path, make_dataset: MakeDataset) -> None:
    path = write(tmp_path, "out.txt", "uno\ndos")
    assert run(PredictionsMethod(path, make_dataset([1, 2])), 1, 2)[2].text == "dos"


@pytest.mark.parametrize(("text", "lines"), [("uno\ndos\n", 2), ("uno\ndos\ntres\ncuatro\n", 4), ("", 0)])
def test_plain_text_line_count_must_match_corpus(
    tmp_path: Path, make_dataset: MakeDataset, text: str, lines: int
) -> None:
    path = write(tmp_path, "out.txt", text)
    with pytest.raises(MethodError) as info:
        PredictionsMethod(path, make_dataset([1, 2, 3]))
    message = str(info.value)
    assert str(path) in message
    assert f"{lines} lines" in message
    assert "3 entries" in message


def test_missing_prediction_stops_before_the_run_naming_the_first(tmp_path: Path, make_dataset: MakeDataset) -> None:
    path = write(tmp_path, "p.jsonl", '{"entry_id": 1, "predicted": "uno"}\n{"entry_id": 4, "predicted": "x"}\n')
    with pytest.raises(MethodError) as info:
        PredictionsMethod(path, make_dataset([1, 2, 3, 4]))
    assert str(path) in str(info.value) and "no prediction for entry 2 (2 of 4 entries have none)" in str(info.value)
    assert "--allow-missing" in str(info.value) and info.value.exit_code == 2


def test_allow_missing_scores_what_exists_and_lists_every_missing_entry(
    tmp_path: Path, make_dataset: MakeDataset
) -> None:
    path = write(tmp_path, "p.jsonl", '{"entry_id": 1, "predicted": "uno"}\n{"entry_id": 5, "predicted": "x"}\n')
    method = PredictionsMethod(path, make_dataset([1, 2, 3, 4, 5, 7]), allow_missing=True)
    got = run(method, 1, 2, 3, 4, 5, 7)
    assert got[1].text == "uno" and got[5].text == "x" and got[1].error is None
    assert [i for i, t in got.items() if t.error] == [2, 3, 4, 7]
    assert got[2].error == f"no prediction for entry 2 in {path} (--allow-missing)"
    assert method.warnings == [f"4 entries have no prediction in {path} and are scored as errors "
                               "(--allow-missing): entries 2-4, 7"]


def test_missing_is_judged_on_the_selected_entries_only(tmp_path: Path, make_dataset: MakeDataset) -> None:
    path = write(tmp_path, "p.jsonl", '{"entry_id": 2, "predicted": "dos"}\n')
    method = PredictionsMethod(path, make_dataset([1, 2, 3]), entries=[2])
    assert method.warnings == [] and run(method, 2)[2].text == "dos"


@pytest.mark.parametrize(("text", "needle", "where"), [
    ('{"entry_id": 1, "predicted": "a"}\n{"entry_id": 99, "predicted": "x"}\n', "entry id 99 is not in the corpus",
     ":2"),
    ('{"entry_id": 0, "predicted": "a"}\n{"entry_id": 1, "predicted": "b"}\n', "the ids look 0-based", ":1"),
])
def test_ids_outside_the_corpus_stop_the_run_naming_the_line(
    tmp_path: Path, make_dataset: MakeDataset, text: str, needle: str, where: str
) -> None:
    path = write(tmp_path, "p.jsonl", text)
    with pytest.raises(MethodError) as info:
        PredictionsMethod(path, make_dataset([1, 2]), allow_missing=True)  # allowing gaps allows no strangers
    assert f"{path}{where}:" in str(info.value) and needle in str(info.value)


def test_more_lines_than_entries_names_the_first_extra_line(tmp_path: Path, make_dataset: MakeDataset) -> None:
    path = write(tmp_path, "out.txt", "uno\ndos\ntres\n")
    with pytest.raises(MethodError, match="line 3 is past the last entry"):
        PredictionsMethod(path, make_dataset([1, 2]))
    short = write(tmp_path, "short.txt", "uno\n")
    with pytest.raises(MethodError, match="entry 8 has no line"):
        PredictionsMethod(short, make_dataset([4, 8]))


@pytest.mark.parametrize("tail", ["\n", "\n\n", "\r\n\r\n"])
def test_trailing_blank_lines_are_never_entries(tmp_path: Path, make_dataset: MakeDataset, tail: str) -> None:
    path = write(tmp_path, "out.txt", "uno\ndos" + tail + ("\n" if tail == "\n" else ""))
    got = run(PredictionsMethod(path, make_dataset([1, 2])), 1, 2)
    assert (got[1].text, got[2].text) == ("uno", "dos")
    last_empty = write(tmp_path, "empty-last.txt", "uno\n\n")  # two entries, the second output empty
    assert run(PredictionsMethod(last_empty, make_dataset([1, 2])), 1, 2)[2].text == ""


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('{"entry_id": 2, "predicted": "dos"', "invalid JSON"),
        ('["a list"]', "expected a JSON object"),
        ('{"predicted": "dos"}', "missing entry id"),
        ('{"entry_id": 2}', "missing prediction text"),
        ('{"entry_id": "2", "predicted": "dos"}', "must be an integer"),
        ('{"entry_id": true, "predicted": "dos"}', "must be an integer"),
        ('{"entry_id": 2, "predicted": 5}', "must be a string"),
        ('{"entry_id": 2, "id": 3, "predicted": "dos"}', "both 'entry_id' and 'id'"),
        ('{"entry_id": 2, "predicted": "dos", "latency_seconds": -1}', "non-negative"),
        ('{"entry_id": 1, "predicted": "otra vez"}', "duplicate prediction for entry 1 (first on line 1)"),
    ],
)
def test_bad_jsonl_line_names_file_and_line(tmp_path: Path, make_dataset: MakeDataset, line: str, needle: str) -> None:
    path = write(tmp_path, "p.jsonl", '{"entry_id": 1, "predicted": "uno"}\n' + line + "\n")
    with pytest.raises(MethodError) as info:
        PredictionsMethod(path, make_dataset([1, 2]))
    assert f"{path}:2" in str(info.value)
    assert needle in str(info.value)
    assert isinstance(info.value, UserError) and info.value.exit_code == 2
    assert "\n" not in str(info.value)


def test_invalid_utf8_names_the_line(tmp_path: Path, make_dataset: MakeDataset) -> None:
    path = write(tmp_path, "out.txt", b"uno\ndos \xff\n")
    with pytest.raises(MethodError, match=r"out\.txt:2: not valid UTF-8"):
        PredictionsMethod(path, make_dataset([1, 2]))


def test_missing_file(tmp_path: Path, make_dataset: MakeDataset) -> None:
    with pytest.raises(MethodError, match="predictions file not found"):
        PredictionsMethod(tmp_path / "nope.jsonl", make_dataset([1]))


def test_format_detection_for_unknown_suffix(tmp_path: Path, make_dataset: MakeDataset) -> None:
    jsonl = write(tmp_path, "preds", '{"entry_id": 1, "predicted": "uno"}\n')
    text = write(tmp_path, "hyp", "{not json}\n")
    assert PredictionsMethod(jsonl, make_dataset([1])).format == "jsonl"
    assert PredictionsMethod(text, make_dataset([1])).format == "text"
    forced = PredictionsMethod(jsonl, make_dataset([1]), fmt="text")
    assert run(forced, 1)[1].text == '{"entry_id": 1, "predicted": "uno"}'


def test_only_entry_ids_are_read_from_the_dataset(tmp_path: Path) -> None:
    """Entries without a ``reference`` attribute at all: any access would raise."""
    dataset: Any = SimpleNamespace(entries=[SimpleNamespace(id=5), SimpleNamespace(id=6)])
    path = write(tmp_path, "out.txt", "cinco\nseis\n")
    got = run(PredictionsMethod(path, dataset), 5, 6)
    assert (got[5].text, got[6].text) == ("cinco", "seis")
