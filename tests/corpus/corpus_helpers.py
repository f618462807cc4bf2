"""Helpers for corpus tests: small corpus builders.

A uniquely named module (not ``conftest``) so ``import`` cannot pick up another package's
conftest in this ``__init__``-free test layout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mt_eval.corpus import load_corpus
from mt_eval.errors import CorpusError


def entry(i: int, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": i, "source": f"source {i}", "reference": f"reference {i}"}
    base.update(fields)
    return base


def envelope(entries: list[Any], **dataset: Any) -> dict[str, Any]:
    info: dict[str, Any] = {"id": "test-v1", "source_language": "en", "target_language": "es"}
    info.update(dataset)
    return {"dataset": info, "entries": entries}


def write_json(tmp_path: Path, doc: Any, name: str = "corpus.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def problems(path: Path, **kwargs: Any) -> list[str]:
    """Load a corpus that must fail and return its problem lines."""
    with pytest.raises(CorpusError) as info:
        load_corpus(path, **kwargs)
    return info.value.lines()


def one_line_with(lines: list[str], *parts: str) -> str:
    """The single problem line containing every part; fails listing all lines otherwise."""
    matches = [line for line in lines if all(p in line for p in parts)]
    assert matches, f"no line contains all of {parts}:\n" + "\n".join(lines)
    return matches[0]
