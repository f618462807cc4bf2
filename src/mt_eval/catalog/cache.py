"""The data cache (``MT_EVAL_DATA``, default ``~/.cache/mt-eval/data``): upstream files as fetched, the
converted corpora, accepted licences and the sha256 recorded for every fetched URL.

Layout: ``raw/<host>/<path>`` (upstream bytes), ``corpora/<id>.json`` (our schema), ``licences.json``
(family → licence accepted, when) and ``manifest.json`` (url → sha256 at first fetch: a later fetch that
differs is refused, since a test set that changed under a leaderboard is a different test set).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError


def data_dir(env: Mapping[str, str]) -> Path:
    """The cache root: ``MT_EVAL_DATA`` or ``~/.cache/mt-eval/data``."""
    configured = env.get("MT_EVAL_DATA")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "mt-eval" / "data"


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"unreadable cache file: {exc}", file=str(path), hint="delete it and fetch again") from None
    if not isinstance(data, dict):
        raise UserError("cache file is not a JSON object", file=str(path), hint="delete it and fetch again")
    return data


def _write(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class Cache:
    """One cache root; every method reads the files afresh (several commands may share the cache)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def raw_path(self, url: str) -> Path:
        """Where an upstream URL's bytes are kept: its host and path, nothing else (no query string)."""
        rest = url.partition("://")[2].partition("?")[0]
        parts = [p for p in rest.split("/") if p not in ("", ".", "..")]
        return self.root.joinpath("raw", *parts)

    def corpus_path(self, dataset_id: str) -> Path:
        return self.root / "corpora" / (re.sub(r"[^A-Za-z0-9_.-]+", "_", dataset_id) + ".json")

    # licences -------------------------------------------------------------------------------------------
    def accepted(self, family: str, licence: str) -> bool:
        record = _read(self.root / "licences.json").get(family)
        return isinstance(record, dict) and record.get("licence") == licence

    def accept(self, family: str, licence: str) -> None:
        path = self.root / "licences.json"
        data = _read(path)
        data[family] = {"licence": licence, "accepted_at": datetime.now(UTC).isoformat(timespec="seconds")}
        _write(path, data)

    # sha256 recorded at first fetch ---------------------------------------------------------------------
    def recorded_sha256(self, url: str) -> str | None:
        value = _read(self.root / "manifest.json").get(url)
        return value if isinstance(value, str) else None

    def record_sha256(self, url: str, sha256: str) -> None:
        path = self.root / "manifest.json"
        data = _read(path)
        data[url] = sha256
        _write(path, data)
