"""Loading a corpus file into a validated ``Dataset``.

Formats, chosen by extension:

* ``.json``: the spec's envelope ``{"dataset": {...}, "entries": [...]}`` (Benchmark Spec
  §2.1); also a bare list of entries, or a legacy harness object ``{"entries": [...]}`` whose
  envelope fields (if any) sit at the top level. Without an envelope, languages come from the
  caller.
* ``.jsonl``: one entry object per line; blank lines are skipped. The first non-blank line may
  be ``{"dataset": {...}}`` to carry the envelope; otherwise it comes from the caller, and the
  dataset id defaults to the file stem.
* ``.tsv``: see :mod:`mt_eval.corpus.tsv`.
* a catalogue id (``ntrex128:eng-spa``, ``wmt:wmt21:en-de``…) that is not a file: the public test set,
  fetched once into the data cache and converted to the JSON envelope (:mod:`mt_eval.catalog`), so every
  command that loads a corpus accepts one.

Plain parallel text files are loaded with :func:`mt_eval.corpus.textpair.load_text_pair`.

``Dataset.sha256`` is the SHA-256 of the file's bytes exactly as stored, so a run card pins the
very file that was evaluated (a re-encoded or re-indented copy is a different dataset).

Legacy harness field names and difficulty words are accepted everywhere (see
:mod:`mt_eval.corpus.legacy`). All problems are collected and raised together as one
``CorpusError`` whose lines each name the file, entry and field.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mt_eval.catalog import corpus_file, is_catalog_id
from mt_eval.corpus.building import LanguageArgs, RawEntry, build_entries, build_info, finish
from mt_eval.corpus.models import Dataset
from mt_eval.corpus.problems import Problems, decode_utf8, describe, read_bytes, sha256_bytes, shorten
from mt_eval.corpus.tsv import parse_tsv
from mt_eval.errors import CorpusError, UserError

SUPPORTED_EXTENSIONS = (".json", ".jsonl", ".tsv")
_ENVELOPE_KEYS = ("id", "version", "language_pair", "source_language", "target_language")


def load_corpus(
    path: str | Path,
    *,
    source_lang: str | None = None,
    target_lang: str | None = None,
    dataset_id: str | None = None,
) -> Dataset:
    """Load and validate a corpus file; raise ``CorpusError`` listing every problem found."""
    if not Path(path).exists() and is_catalog_id(str(path)):
        # The environment is read here, at the one place every command loads a corpus: MT_EVAL_DATA (cache),
        # MT_EVAL_OFFLINE, MT_EVAL_DATA_MIRROR, HF_TOKEN.
        path = corpus_file(str(path), os.environ)
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        problem = UserError(
            f"unsupported corpus format '{suffix or '(no extension)'}'",
            file=str(path),
            hint=f"use one of {', '.join(SUPPORTED_EXTENSIONS)}; plain parallel text needs a source "
            "file and a reference file",
        )
        raise CorpusError([problem])
    problems = Problems(str(path))
    data = read_bytes(path, problems)
    text = decode_utf8(data, problems)
    args = LanguageArgs(source_lang, target_lang, dataset_id)
    if not text.strip():
        problems.fail("corpus is empty (the file has no content)")
    envelope: dict[str, Any] | None
    envelope_line: int | None = None
    if suffix == ".json":
        envelope, raw = _parse_json(text, problems)
    elif suffix == ".jsonl":
        envelope, raw, envelope_line = _parse_jsonl(text, problems)
    else:
        envelope, raw = None, parse_tsv(text, problems)
    info = build_info(envelope, args, path.stem, problems, envelope_line=envelope_line)
    entries = build_entries(raw, problems)
    return finish(info, entries, sha256_bytes(data), str(path), problems)


def _json_error(exc: json.JSONDecodeError) -> str:
    return f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"


def _parse_json(text: str, problems: Problems) -> tuple[dict[str, Any] | None, list[RawEntry]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.fail(_json_error(exc))
    except RecursionError:
        problems.fail("invalid JSON: nested too deeply")
    except ValueError as exc:  # e.g. an integer literal over Python's 4300-digit limit
        problems.fail(f"invalid JSON: {shorten(str(exc), 80)}")
    if isinstance(doc, list):
        return None, [RawEntry(item, n) for n, item in enumerate(doc, start=1)]
    if not isinstance(doc, dict):
        problems.fail(f'expected {{"dataset": {{...}}, "entries": [...]}} or a list of entries, got {describe(doc)}')
    entries = doc.get("entries")
    if "entries" not in doc:
        problems.add("missing required field", field="entries")
        entries = []
    elif not isinstance(entries, list):
        problems.add(f"expected a list of entries, got {describe(entries)}", field="entries")
        entries = []
    envelope: dict[str, Any] | None
    if "dataset" in doc:
        envelope = doc["dataset"]
        if not isinstance(envelope, dict):
            problems.add(f"expected an object, got {describe(envelope)}", field="dataset")
            envelope = {}
    else:
        # Legacy harness files keep envelope fields (if any) beside "entries".
        legacy = {k: doc[k] for k in _ENVELOPE_KEYS if k in doc}
        envelope = legacy or None
    return envelope, [RawEntry(item, n) for n, item in enumerate(entries, start=1)]


def _parse_jsonl(text: str, problems: Problems) -> tuple[dict[str, Any] | None, list[RawEntry], int | None]:
    envelope: dict[str, Any] | None = None
    envelope_line: int | None = None
    raw: list[RawEntry] = []
    first = True
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(f"invalid JSON on line {lineno}, column {exc.colno}: {exc.msg}", line=lineno)
            first = False
            continue
        except RecursionError:
            problems.add(f"invalid JSON on line {lineno}: nested too deeply", line=lineno)
            first = False
            continue
        except ValueError as exc:
            problems.add(f"invalid JSON on line {lineno}: {shorten(str(exc), 80)}", line=lineno)
            first = False
            continue
        if first and isinstance(item, dict) and set(item) == {"dataset"}:
            if isinstance(item["dataset"], dict):
                envelope, envelope_line = item["dataset"], lineno
            else:
                problems.add(f"expected an object, got {describe(item['dataset'])}", line=lineno, field="dataset")
        else:
            raw.append(RawEntry(item, len(raw) + 1, lineno))
        first = False
    return envelope, raw, envelope_line
