"""Helpers for the comparison tests: real NTREX-128 text, deterministic degradations, real cards.

Cards are made the way a user makes them (``mt_eval.api.evaluate_card`` with the ``predictions``
method, or the real Apertium engine), so a comparison test exercises the card → rescore → stats
path end to end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from data_paths import NTREX as NTREX  # re-exported for conftest
from mt_eval.api import evaluate_card
from mt_eval.corpus import load_text_pair
from mt_eval.corpus.models import Dataset
from mt_eval.methods.registry import build_method

N_LINES = 300


def read_lines(path: Path, n: int | None = None) -> list[str]:
    """Lines split at ``\\n`` only, as the text-pair loader does (NTREX has U+2028 inside lines)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines[:n] if n else lines


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def drop_every_third(line: str, offset: int = 2) -> str:
    """A heavy, deterministic degradation: every third word removed."""
    return " ".join(w for i, w in enumerate(line.split()) if i % 3 != offset)


def swap_first_words(index: int, line: str) -> str:
    """A mild degradation: the first two words swapped in every tenth sentence."""
    words = line.split()
    if index % 10 == 0 and len(words) > 1:
        words[0], words[1] = words[1], words[0]
    return " ".join(words)


def systems_from(refs: list[str]) -> dict[str, list[str]]:
    """``a`` heavy degradation, ``b`` mild, ``near_a`` differs from ``a`` in every tenth line only
    (a close pair whose p-values are far from the floor, so agreement tests mean something)."""
    return {
        "a": [drop_every_third(s) for s in refs],
        "b": [swap_first_words(i, s) for i, s in enumerate(refs)],
        "near_a": [drop_every_third(s, 1 if i % 10 == 0 else 2) for i, s in enumerate(refs)],
    }


def make_card(dataset: Dataset, predictions: Path, out: Path, *, condition: str = "default") -> dict[str, Any]:
    """Score a plain-text predictions file into a sealed card on disk (and return it)."""
    method = build_method(f"predictions:{predictions}", dataset=dataset)
    card, _ = evaluate_card(dataset, method, condition=condition, runs_dir=out.parent / "runs", out=out)
    return card


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def text_pair(tmp: Path, src: list[str], ref: list[str], tag: str = "") -> tuple[Path, Path, Dataset]:
    src_path = write_lines(tmp / f"src{tag}.en", src)
    ref_path = write_lines(tmp / f"ref{tag}.es", ref)
    return src_path, ref_path, load_text_pair(src_path, ref_path, "en", "es")
