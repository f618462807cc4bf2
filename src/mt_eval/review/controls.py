"""Control items: outputs whose quality is known, hidden among the real ones (about 10 % of a batch), made
indistinguishable from system outputs by construction (issue 21: a script found them and passed QC).

A control takes the place of one card's output at one entry (a *slot*): the entry still shows exactly one
text per card, so counting an entry's items, or their places, says nothing. Two kinds:

* **degraded** (``control_bad``): that card's own output for the entry with a run of its units replaced
  by an equally long run from the same card's output at another entry. It keeps the system's style,
  vocabulary, length (same number of units, every space where it was) and errors; only its meaning no
  longer follows the source, so only a reader who checks it against the source catches it. The unit
  follows the target language card's word rule: whitespace words, or characters for languages written
  without spaces (``word_rule: character``: Chinese, Japanese, Thai), where a "word" swap would replace
  the whole sentence.
* **known-good** (``control_good``): the entry's human reference in the slot, which should be rated high.

References are never sent to a reviewer before the entry is rated (``offline``, ``online``), so a
control cannot be found by comparing texts with the reference either. Slots are drawn at random over
entries and cards, items keep random hashes and are shown in each reviewer's blind order. What remains
is the meaning: a degraded output reads fluently but says something the source does not (decisions §50).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from random import Random

from mt_eval.languages import LanguageCard

CONTROL_SHARE = 0.10
SWAP_FRACTION = 0.4  # share of the units replaced: enough to change the meaning, not the look
MIN_UNITS = {"whitespace": 4, "character": 6}  # a host shorter than this makes no convincing control


@dataclass(frozen=True)
class Control:
    """One control item: shown for ``entry_id`` in the place of card ``slot``'s output, with ``text``;
    ``detail`` says what was done (kept in the store only, never exported)."""

    entry_id: int
    slot: int  # which card's output it replaces (index into the campaign's cards)
    kind: str  # "control_bad" or "control_good"
    text: str
    detail: dict[str, object]


def _spans(text: str, card: LanguageCard) -> list[tuple[int, int]]:
    """Where each swap unit of ``text`` lies: characters (spaces skipped) or whitespace-separated words."""
    pattern = r"\S" if card.word_rule == "character" else r"\S+"
    return [m.span() for m in re.finditer(pattern, text)]


def units(text: str, card: LanguageCard) -> list[str]:
    """The swap units of ``text`` (see ``_spans``)."""
    return [text[a:b] for a, b in _spans(text, card)]


def _join(parts: Sequence[str], card: LanguageCard) -> str:
    return "".join(parts) if card.word_rule == "character" else " ".join(parts)


def swap_phrase(text: str, donor: str, card: LanguageCard, rng: Random) -> tuple[str, dict[str, object]] | None:
    """``text`` with a run of its units replaced by an equally long run from ``donor``; None when either
    is too short or the swap would change nothing. Every space of ``text`` (a no-break space too) stays
    where it was, so only the words differ from the reference."""
    spans, give = _spans(text, card), units(donor, card)
    k = max(2, round(len(spans) * SWAP_FRACTION))
    if len(spans) < MIN_UNITS[card.word_rule] or len(give) < k:
        return None
    at, take = rng.randrange(len(spans) - k + 1), rng.randrange(len(give) - k + 1)
    host = [text[a:b] for a, b in spans]
    if host[at:at + k] == give[take:take + k]:
        return None
    out = [text[:spans[at][0]]]
    for j in range(k):
        out.append(give[take + j])
        end = spans[at + j][1]
        out.append(text[end:spans[at + j + 1][0]] if j < k - 1 else text[end:])
    return "".join(out), {"unit": card.word_rule, "replaced": _join(host[at:at + k], card),
                          "inserted": _join(give[take:take + k], card), "position": at}


def control_slots(entries: Sequence[int], cards: int, count: int, seed: int) -> list[tuple[int, int]]:
    """Up to ``count`` (entry, card slot) pairs in random order, spread over entries first (a second slot
    of an entry only once every entry has one), each entry's card drawn at random."""
    rng = Random(seed)
    order = list(entries)
    rng.shuffle(order)
    lanes = {e: rng.sample(range(cards), cards) for e in order}
    return [(e, lanes[e][r]) for r in range(cards) for e in order][:count]


def build_controls(outputs: dict[tuple[int, int], str], references: dict[int, str], card: LanguageCard, *,
                   count: int, seed: int, cards: int = 1) -> list[Control]:
    """``count`` controls over the ``(entry, slot) → output`` texts: two thirds degraded (rounded up) built
    from the slot's own output and a donor output of the same slot, the rest known-good (the entry's
    reference in the slot). Deterministic for a seed."""
    rng = Random(seed)
    entries = sorted({e for e, _ in outputs})
    bad_wanted = count - count // 3
    out: list[Control] = []
    taken: set[tuple[int, int]] = set()
    for entry, slot in control_slots(entries, cards, len(entries) * cards, seed):
        if sum(c.kind == "control_bad" for c in out) >= bad_wanted:
            break
        host = outputs.get((entry, slot), "")
        if len(units(host, card)) < MIN_UNITS[card.word_rule]:
            continue
        for donor in rng.sample(entries, min(len(entries), 8)):
            made = swap_phrase(host, outputs.get((donor, slot), ""), card, rng) if donor != entry else None
            if made:
                out.append(Control(entry, slot, "control_bad", made[0], {**made[1], "donor_entry": donor}))
                taken.add((entry, slot))
                break
    used = {e for e, _ in taken}
    for entry, slot in control_slots(entries, cards, len(entries) * cards, seed + 1):
        if len(out) >= count:
            break
        if entry not in used and entry in references:
            out.append(Control(entry, slot, "control_good", references[entry], {}))
            used.add(entry)
    return out


def control_count(real_items: int, share: float = CONTROL_SHARE) -> int:
    """How many controls a campaign of ``real_items`` outputs gets: ``share`` of them, at least
    ``quality.MIN_CONTROLS`` degraded ones so every reviewer can be checked."""
    from mt_eval.review.quality import MIN_CONTROLS

    wanted = round(real_items * share)
    return max(wanted, MIN_CONTROLS + MIN_CONTROLS // 2) if share > 0 else 0
