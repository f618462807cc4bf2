"""What the three views of a card (terminal tables, the HTML page, ``show --json``) agree on.

* **Text from data is neutralised** before it reaches a terminal: a source, a prediction or a
  method name may hold ANSI/OSC escape sequences (``ESC]8;;http://…BEL`` makes a hidden link,
  ``ESC[2J`` clears the screen) or bidi overrides; ``neutral`` writes each such character as a
  visible ``\\x1b``-style escape, so a card cannot drive the terminal of whoever reads it.
* **Usage blocks are shown only when they mean something.** A predictions file replays outputs
  made elsewhere: its cost and speed are unknown (older cards wrote zeros, and entries-per-minute timed the
  replay), none of which describes the system. ``usage_blocks``
  keeps a block only when the method reported it, and says why the others are left out.
* **The FST column reads as a share of words**, "accepted 71 %", not a bare 0.71.
* **The summary a script reads** (``summary``) is the same selection of fields as the tables.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from mt_eval.errors import UserError
from mt_eval.runcard.io import as_dict
from mt_eval.scoring.composite import effective_tier, tier_label
from mt_eval.scoring.economics import (
    DECLARED,
    LATENCY_KEYS,
    MEASURED,
    UNKNOWN,
    card_cost_status,
    card_speed_status,
)

# C0 controls but tab and newline, DEL, C1 controls (8-bit CSI/OSC), and the bidi embeddings,
# overrides and isolates (text that reads differently from how it is stored).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
ALIASES = {"chrf++": "chrf_plus_plus", "chrfpp": "chrf_plus_plus", "chrf2++": "chrf_plus_plus", "chrf2": "chrf",
           "exact_match": "exact_match_rate", "em": "exact_match_rate"}


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def neutral(value: Any) -> str:
    """``value`` as text with every terminal control character written out (``\\x1b``), never sent."""
    text = "" if value is None else str(value)
    return _CONTROL.sub(_escape_char, text)


def is_replay(card: Mapping[str, Any]) -> bool:
    """Outputs read from a file (``score`` / ``predictions:PATH``), whatever ``--system`` named them."""
    method = as_dict(card.get("method"))
    return "predictions_file" in as_dict(method.get("config")) or method.get("name") == "predictions"


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def usage_blocks(card: Mapping[str, Any]) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """The (title, fields) blocks worth showing, and one note per block left out or labelled, saying why.

    Each block says how its figures are known (``scoring.economics``: measured, declared, unknown; older
    cards read by their own rules). Tokens: only when some were counted. Cost: when measured and non-zero or
    tokens were counted, or declared (labelled); unknown is said, never shown as 0. Speed: measured as the
    run timed it; a replayed file's declared latencies only (labelled); unknown said."""
    cost, speed, tokens = as_dict(card.get("cost")), as_dict(card.get("speed")), as_dict(card.get("tokens"))
    cost_known, speed_known = card_cost_status(card), card_speed_status(card)
    counted = any(_positive(v) for k, v in tokens.items() if k != "tokens_per_entry")
    shown: list[tuple[str, dict[str, Any]]] = []
    notes: list[str] = []
    if cost_known == DECLARED or (cost_known == MEASURED and (counted or _positive(cost.get("total_cost_usd")))):
        shown.append(("Cost", cost))
    if cost_known == DECLARED:
        notes.append("cost: declared by the submitter, not measured (never in cost-adjusted ranking)")
    elif cost_known == UNKNOWN:
        notes.append("cost: unknown (outputs replayed from a file, or calls that could not be priced)"
                     if not counted else "cost: unknown (the model is not in the pricing table)")
    elif not counted and not _positive(cost.get("total_cost_usd")):
        notes.append("cost and tokens: none (the method made no paid requests)")
    if speed_known == UNKNOWN:
        notes.append("speed: not measured (outputs replayed from a predictions file)" if is_replay(card)
                     else "speed: unknown")
    elif is_replay(card):
        shown.append(("Speed", {k: speed.get(k) for k in (*LATENCY_KEYS, "status")}))
    elif speed:
        shown.append(("Speed", speed))
    if speed_known == DECLARED:
        notes.append("latencies: declared by the submitter, not measured (never in latency ranking)")
    if counted:
        shown.append(("Tokens", tokens))
    return shown, notes


def fst_label(rate: Any) -> str:
    """A per-entry FST acceptance rate as people read it: "accepted 71 %" (of the words)."""
    if not isinstance(rate, int | float) or isinstance(rate, bool):
        return "—"
    return f"accepted {rate * 100:.0f} %"


def entry_fst_rate(result: Mapping[str, Any]) -> float | None:
    rate = as_dict(result.get("metrics")).get("fst_acceptance_rate")
    if isinstance(rate, int | float) and not isinstance(rate, bool):
        return float(rate)
    accepted = result.get("fst_accepted")
    return None if accepted is None else float(bool(accepted))


def select_metrics(card: Mapping[str, Any], requested: Sequence[str] | None) -> list[str] | None:
    """The metric ids ``-m`` asked for (comma-separated or repeated, compare's aliases accepted),
    checked against the card; ``None`` for all of them."""
    if not requested:
        return None
    known = list(as_dict(card.get("metrics")))
    out: list[str] = []
    for name in (n.strip() for item in requested for n in item.split(",")):
        if not name:
            continue
        key = ALIASES.get(name.lower(), name.lower())
        if key not in known and key != "composite":
            raise UserError(f"unknown metric '{name}' (on this card: {', '.join(known)}, composite)",
                            field="metrics")
        if key not in out:
            out.append(key)
    return out or None


def summary(card: Mapping[str, Any], problems: Sequence[str] = (),
            metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """The card at a glance for a script (``mt-eval show --json``): identity, verification, every
    metric with its interval, composite and tier, and the usage blocks that mean something."""
    s, ds, method = as_dict(card.get("scores")), as_dict(card.get("dataset")), as_dict(card.get("method"))
    cis = as_dict(s.get("confidence_intervals"))
    ids = [m for m in as_dict(card.get("metrics")) if metrics is None or m in metrics]
    blocks, notes = usage_blocks(card)
    shown = dict(blocks)
    tier = str(s.get("quality_tier"))
    return {
        "run_id": card.get("run_id"),
        "run_card_hash": card.get("run_card_hash"),
        "fingerprint": as_dict(card.get("fingerprint")).get("hash"),
        "verified": not problems,
        "problems": list(problems),
        "method": {k: method.get(k) for k in ("name", "method_class", "version")},
        "model_slug": card.get("model_slug"),
        "condition": card.get("condition"),
        "profile": card.get("profile"),
        "dataset": {k: ds.get(k) for k in ("id", "version", "language_pair", "source_language", "target_language",
                                           "entry_count", "sha256")},
        "scores": {m: s.get(m) for m in ids},
        "confidence_intervals": {m: {"lower": cis[m].get("ci_lower"), "upper": cis[m].get("ci_upper")}
                                 for m in [*ids, "composite"] if isinstance(cis.get(m), dict)},
        "composite": s.get("composite"),
        "quality_tier": tier,
        "tier_shown": effective_tier(tier),
        "tier_label": tier_label(tier),
        "entries": {"total": s.get("total"), "evaluated": s.get("evaluated"), "errors": s.get("errors")},
        "cost": shown.get("Cost"),
        "speed": shown.get("Speed"),
        "tokens": shown.get("Tokens"),
        "notes": notes,
        "warnings": list(card.get("warnings") or []),
    }
