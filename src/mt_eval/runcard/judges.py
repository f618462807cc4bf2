"""Generated LLM judges on a run card: what the card records, and which judge cards may recompute it.

A card scored with ``--judge`` carries ``judges: {<id>: {sha256, kind, model, base_url}}`` (the judge card's
canonical sha256, ``metrics.judges.cards.card_sha256``; never an API key), each judge's per-entry values
in ``results[].metrics`` and its corpus value in ``scores`` like any metric, and ``{id: sha256}`` in the
fingerprint. The card does not carry the judge card itself, and nothing here builds a judge from the
card: recomputing a judge sends every output to its endpoint, so only the person verifying may choose to
do that, by giving the judge card (``--judge``); a card someone hands you never makes your machine talk to
an endpoint it names (docs/decisions.md §41).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mt_eval.errors import UserError
from mt_eval.metrics.opt_in import JUDGES, M, of_section


def card_judges(card: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The judges a card was scored with (empty for a card without any)."""
    block = card.get("judges")
    return {str(k): dict(v) for k, v in block.items() if isinstance(v, Mapping)} if isinstance(block, Mapping) else {}


def fingerprint_judges(card: Mapping[str, Any]) -> dict[str, str]:
    """``{id: sha256}``: the judges' identities as the fingerprint carries them."""
    return {k: str(v.get("sha256")) for k, v in card_judges(card).items()}


def require_judges(recorded: Mapping[str, Mapping[str, Any]], given: Sequence[M],
                   what: str = "the card was scored with") -> list[M]:
    """The given judges that recompute the ``recorded`` ones (``{id: {sha256, …}}``), in recorded order.

    One line, naming the judge, for a recorded judge that was not given or whose judge card differs
    (another sha256): without it the judge's numbers cannot be recomputed, and passing silently would
    vouch for numbers nobody checked. Judges given but not recorded are not used; ``given`` may hold other
    opt-in metrics (``metrics.opt_in``): only its judges count."""
    by_id = {str(j.id): j for j in of_section(given, JUDGES)}
    out = []
    for judge_id, block in recorded.items():
        want = str(block.get("sha256"))
        judge = by_id.get(judge_id)
        if judge is None:
            raise UserError(f"{what} the generated judge {judge_id} (judge card sha256 {want[:12]}…): "
                            "give that judge card with --judge FILE (its answers come from the response cache, "
                            "--judge-cache, when they are there)")
        have = str(judge.card_block()["sha256"])
        if have != want:
            raise UserError(f"judge {judge_id}: the judge card given hashes to {have[:12]}…, but {what} the one "
                            f"hashing to {want[:12]}…: give that judge card")
        out.append(judge)
    return out

