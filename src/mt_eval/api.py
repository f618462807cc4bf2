"""The public Python API: evaluate a method on a dataset, or score an existing output file."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mt_eval.corpus.models import Dataset
from mt_eval.engine.runner import Progress, run_method
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Method
from mt_eval.runcard.builder import RunInfo, build_card
from mt_eval.scoring.intervals import BootstrapConfig


def write_card(card: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(card, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)  # atomic: a reader never sees half a card
    return path


def evaluate(
    dataset: Dataset,
    method: Method,
    *,
    condition: str = "default",
    runs_dir: str | Path = "runs",
    out: str | Path | None = None,
    selection: dict[str, Any] | None = None,
    progress: Progress | None = None,
    bootstrap: BootstrapConfig | None = None,
) -> tuple[dict[str, Any], Path]:
    """Translate every entry with ``method``, score it and write a sealed run card."""
    target = language_card(dataset.info.target_language)
    source = language_card(dataset.info.source_language)
    run_id = str(uuid.uuid4())
    run_dir = Path(runs_dir) / run_id
    timestamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    translations, elapsed = asyncio.run(
        run_method(
            method,
            dataset,
            source_language=source.code,
            target_language=target.code,
            journal=run_dir / "journal.jsonl",
            progress=progress,
        )
    )
    info = RunInfo(run_id, timestamp, elapsed, condition, selection=selection or {},
                   bootstrap=bootstrap or BootstrapConfig())
    card = build_card(dataset, method.identity, translations, info, target, source)
    path = Path(out) if out else run_dir / "run_card.json"
    return card, write_card(card, path)


def score_predictions(dataset: Dataset, predictions: str | Path, **kwargs: Any) -> tuple[dict[str, Any], Path]:
    """Score an existing output file (JSONL keyed by entry id, or one line per entry) as a run."""
    from mt_eval.methods.predictions import PredictionsMethod

    return evaluate(dataset, PredictionsMethod(predictions, dataset), **kwargs)


def load_card(path: str | Path) -> dict[str, Any]:
    from mt_eval.errors import UserError

    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError("run card not found", file=str(p)) from None
    except json.JSONDecodeError as exc:
        raise UserError(f"not valid JSON (line {exc.lineno}, column {exc.colno})", file=str(p)) from None
    if not isinstance(data, dict):
        raise UserError("a run card is a JSON object", file=str(p))
    return data
