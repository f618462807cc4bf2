"""What ``mt-eval calibrate`` reads: the judgments (a file or ``review:CAMPAIGN``) and the cards (given, or
built from the judgments), joined into the per-segment matrix."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mt_eval.calibration.build import cards_from_judgments
from mt_eval.calibration.matrix import MIN_SEGMENTS, Matrix, build_matrix
from mt_eval.errors import UserError
from mt_eval.judgments import JudgmentTable, load_judgments, review_judgments
from mt_eval.metrics.embeddings import SemanticConfig

REVIEW_PREFIX = "review:"


def read_judgments(spec: str, fmt: str = "auto", db: str | None = None) -> JudgmentTable:
    """A judgments file, or ``review:CAMPAIGN`` for a review campaign's 0–3 ratings in the store ``db``."""
    if spec.startswith(REVIEW_PREFIX):
        return review_judgments(db, spec[len(REVIEW_PREFIX):])
    return load_judgments(spec, fmt)


def pick_dataset(table: JudgmentTable, dataset: str | None) -> str:
    names = table.datasets()
    if dataset is None:
        if len(names) > 1:
            raise UserError(f"the judgments cover {len(names)} datasets ({', '.join(names)}); choose one",
                            field="dataset")
        return names[0]
    if dataset not in names:
        raise UserError(f"no judgments for dataset {dataset!r} (there are: {', '.join(names)})", field="dataset")
    return dataset


def card_files(paths: Sequence[Path]) -> list[Path]:
    """Each path a card, or a folder of ``*.json`` cards (statistics sidecars are not cards)."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files += sorted(f for f in p.glob("*.json"))
        elif p.is_file():
            files.append(p)
        else:
            raise UserError("card not found", file=str(p))
    return files


def load_matrix(table: JudgmentTable, dataset: str, *, cards: Sequence[Path] = (), from_judgments: bool = False,
                semantic: SemanticConfig | None = None, cards_out: Path | None = None, file: str | None = None,
                progress: Callable[[str], None] | None = None, minimum: int = MIN_SEGMENTS) -> Matrix:
    from mt_eval.runcard.io import load_card

    if from_judgments == bool(cards):
        raise UserError("give either --cards CARD… or --from-judgments")
    # count first: a too-small judgments file is refused before any card is scored
    judged = len(table.subset(dataset).segments())
    if judged < minimum:
        raise UserError(f"only {judged} judged segments in {dataset}; calibration needs at least {minimum} "
                        "(AutoMetrics §4.6: below about 80 labels the fit is mostly noise)", file=file)
    keys: dict[int, str] | None = None
    loaded: list[tuple[str, dict[str, Any]]]
    if from_judgments:
        loaded, keys = cards_from_judgments(table, dataset, semantic=semantic, out_dir=cards_out, file=file,
                                            progress=progress)
    else:
        loaded = [(str(p), load_card(p)) for p in card_files(cards)]
    return build_matrix(table, loaded, dataset, keys, minimum=minimum)
