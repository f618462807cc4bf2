"""Calibrated profiles (``mt-eval calibrate``): weights learned from human judgments, as a file.

A profile file is JSON (``FORMAT``): a name, non-negative ``weights`` over metrics of
``profiles.CALIBRATION_NORMALISATION`` (or generated judges, ``judge_…``) summing to 1, the embedding backend
its ``semantic_score`` needs (or null), ``judges`` ``{id: judge card sha256}`` for each judge it weights
(absent when none: a profile of built-in metrics keeps its hash) and what it was trained on. Its identity is
the SHA-256 of its canonical JSON; the profile key is ``cal-<first 12 hex>``, so two different weightings can
never share a key.

A card scored with one keeps ``profile`` (the language's A/B, as the Run Card Spec types it) and adds
``calibrated_profile`` (the whole definition with its sha256): ``verify`` and ``compare`` recompute the
composite from that block, checked against its hash, never from a file on the verifier's machine.
Every composite path (``scoring.composite``, the comparison's resamples) takes the weights themselves
(``card_weights``): nothing is added to ``profiles.PROFILES``, so a server reading many calibrated cards
keeps no state per card (docs/decisions.md §65).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.hashing import canonical_json, sha256_text
from mt_eval.metrics.judges.cards import is_judge_id
from mt_eval.scoring.profiles import CALIBRATION_NORMALISATION, Weights, weights_of

FORMAT = "mt-eval-profile/1"
RULE = "spec-4.1"  # the learned composite is a plain weighted mean: the anchored rule would change it
MAX_BYTES = 1 << 20
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class CalibratedProfile:
    definition: dict[str, Any]  # the file's JSON object, exactly

    @property
    def sha256(self) -> str:
        return sha256_text(canonical_json(self.definition))

    @property
    def id(self) -> str:
        return f"cal-{self.sha256[:12]}"

    @property
    def name(self) -> str:
        return str(self.definition["name"])

    @property
    def weights(self) -> dict[str, float]:
        # in metric-id order: the composite sums in this order, and a card's block comes back key-sorted
        # (canonical JSON), so the file's order would give the rebuilt card a composite one ulp away
        return {str(k): float(v) for k, v in sorted(self.definition["weights"].items())}

    @property
    def semantic(self) -> dict[str, Any] | None:
        block = self.definition.get("semantic")
        return dict(block) if isinstance(block, dict) else None

    @property
    def judges(self) -> dict[str, dict[str, str]]:
        """The generated judges it weights, ``{id: {"sha256": …}}`` (empty for a profile of built-in metrics)."""
        block = self.definition.get("judges") or {}
        return {str(k): {"sha256": str(v)} for k, v in block.items()}

    @property
    def card_block(self) -> dict[str, Any]:
        return {"id": self.id, "sha256": self.sha256, "definition": self.definition}


def make_profile(name: str, weights: Mapping[str, float], *, semantic: Mapping[str, Any] | None = None,
                 trained_on: Mapping[str, Any] | None = None,
                 judges: Mapping[str, str] | None = None) -> CalibratedProfile:
    """A checked profile; ``judges`` (``{id: judge card sha256}``: the judge cards offered to the fit) names
    each generated judge the weights use (a weighted judge that is not named is refused by ``check``)."""
    rounded = {m: round(float(w), 6) for m, w in weights.items() if w > 0}
    total = sum(rounded.values())
    rounded = {m: round(w / total, 6) for m, w in sorted(rounded.items(), key=lambda kv: -kv[1])}
    known = judges or {}
    needed = {m: known[m] for m in rounded if m in known}
    definition = {"format": FORMAT, "name": name, "rule": RULE, "weights": rounded,
                  "semantic": dict(semantic) if semantic else None,
                  **({"judges": needed} if needed else {}),  # absent without judges: older profiles keep their hash
                  "trained_on": dict(trained_on or {})}
    return check(definition, "<profile>")


def check(definition: Any, where: str) -> CalibratedProfile:
    """A profile definition, refused with one located line when it is not a valid profile."""
    if not isinstance(definition, dict) or definition.get("format") != FORMAT:
        raise UserError(f"not a calibrated profile (format must be {FORMAT!r})", file=where, field="format")
    if not isinstance(definition.get("name"), str) or not definition["name"].strip():
        raise UserError("a profile needs a name", file=where, field="name")
    if definition.get("rule") != RULE:
        raise UserError(f"rule must be {RULE!r}", file=where, field="rule")
    weights = definition.get("weights")
    if not isinstance(weights, dict) or not weights:
        raise UserError("weights must be a non-empty object", file=where, field="weights")
    judges = definition.get("judges", {})
    if not isinstance(judges, dict) or not all(
            isinstance(k, str) and is_judge_id(k) and isinstance(v, str) and _SHA256.fullmatch(v)
            for k, v in judges.items()):
        raise UserError("judges must be an object {judge id: judge card sha256 (64 hex digits)}", file=where,
                        field="judges")
    builtin = [m for m in CALIBRATION_NORMALISATION if not is_judge_id(m)]
    for metric, w in weights.items():
        if is_judge_id(metric) and metric not in judges:
            raise UserError(f"weights the generated judge {metric!r} but names no judge card for it (judges)",
                            file=where, field="judges")
        if not is_judge_id(metric) and metric not in builtin:
            raise UserError(f"metric {metric!r} cannot be weighted (known: {', '.join(builtin)}, or a generated "
                            "judge named in judges)", file=where, field="weights")
        if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) or w < 0:
            raise UserError(f"weight of {metric} must be a number ≥ 0", file=where, field="weights")
    if not math.isclose(sum(weights.values()), 1.0, abs_tol=1e-4):
        raise UserError(f"weights sum to {sum(weights.values()):.6f}, not 1", file=where, field="weights")
    semantic = definition.get("semantic")
    if semantic is not None and not (isinstance(semantic, dict) and isinstance(semantic.get("backend"), str)):
        raise UserError("semantic must be null or {backend, model}", file=where, field="semantic")
    if "semantic_score" in weights and semantic is None:
        raise UserError("weights semantic_score but names no embedding backend", file=where, field="semantic")
    return CalibratedProfile(definition)


def load_profile(path: str | Path) -> CalibratedProfile:
    p = Path(path)
    if not p.is_file():
        raise UserError("profile file not found", file=str(p))
    if p.stat().st_size > MAX_BYTES:
        raise UserError("profile file larger than 1 MiB", file=str(p))
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"not JSON ({exc})", file=str(p)) from None
    return check(data, str(p))


def write_profile(profile: CalibratedProfile, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(profile.definition, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return p


def from_card(card: Mapping[str, Any]) -> CalibratedProfile | None:
    """The card's calibrated profile, its hash and key checked (a forged block is refused)."""
    block = card.get("calibrated_profile")
    if block is None:
        return None
    if not isinstance(block, dict):
        raise UserError("calibrated_profile must be an object", field="calibrated_profile")
    profile = check(block.get("definition"), "calibrated_profile")
    if block.get("sha256") != profile.sha256 or block.get("id") != profile.id:
        raise UserError(f"calibrated_profile: sha256/id do not match its definition (it hashes to {profile.sha256})",
                        field="calibrated_profile")
    return profile


def card_profile(card: Mapping[str, Any]) -> str:
    """The key of the profile a card's composite is computed under: its calibrated one's, else ``profile``."""
    profile = from_card(card)
    return profile.id if profile is not None else str(card["profile"])


def card_weights(card: Mapping[str, Any]) -> Weights:
    """The weights a card's composite is computed under: its calibrated profile's, else its A/B's."""
    profile = from_card(card)
    return profile.weights if profile is not None else weights_of(str(card["profile"]))
