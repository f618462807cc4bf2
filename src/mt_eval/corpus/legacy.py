"""The legacy harness vocabulary (Benchmark Spec §2.2, implementation note).

Existing corpora use ``index``/``source_text``/``target_expected`` and three string difficulty
tiers. We read them as-is rather than asking communities to rewrite curated files: names are
mapped to the spec's, and a string tier becomes an integer with the original word kept in
``difficulty_label`` so nothing the author wrote is lost.

Tier mapping: the spec maps easy to 1–2, medium to 3 and hard to 4–5; a single number is needed,
so we take the lower bound of each band (easy→1, medium→3, hard→4). Lower bounds never overstate
how hard a legacy entry is.
"""

from __future__ import annotations

from typing import Any

LEGACY_FIELDS: dict[str, str] = {
    "index": "id",
    "source_text": "source",
    "target_expected": "reference",
}

DIFFICULTY_LABELS: dict[str, int] = {"easy": 1, "medium": 3, "hard": 4}


def map_legacy_fields(data: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Rename legacy keys and map string difficulty tiers.

    Returns the mapped entry and ``(field, message)`` problems. A key given under both its
    legacy and its spec name with different values is a problem: silently preferring one would
    evaluate against a reference the author may not have meant.
    """
    problems: list[tuple[str, str]] = []
    out: dict[str, Any] = {}
    for key, value in data.items():
        target = LEGACY_FIELDS.get(key, key)
        if target != key and target in data:
            if data[target] != value:
                problems.append((key, f"legacy field '{key}' conflicts with '{target}'; give only one"))
            continue
        out[target] = value
    difficulty = out.get("difficulty")
    if isinstance(difficulty, str):
        level = DIFFICULTY_LABELS.get(difficulty.strip().lower())
        if level is None:
            problems.append(
                (
                    "difficulty",
                    f"expected an integer 1-5 or easy/medium/hard, got string {difficulty!r}",
                )
            )
            out.pop("difficulty")
        else:
            out["difficulty"] = level
            out.setdefault("difficulty_label", difficulty)
    return out, problems
