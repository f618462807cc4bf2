"""Control items: outputs whose quality is known, hidden among the real ones (about 10 % of a batch).

Two kinds, both built from the campaign's own entries so they look like any other output:

* **degraded** (``control_bad``): the entry's human reference with a phrase replaced by a phrase of the
  same length from another entry's reference. Fluent and in the right language, so only a reader who
  checks the meaning against the source catches it; an attentive reviewer rates it reject or gist.
  The unit of the phrase follows the target language card's word rule: whitespace words for most
  languages, characters for languages written without spaces (``word_rule: character``: Chinese,
  Japanese, Thai), where a "word" swap would replace the whole sentence.
* **known-good** (``control_good``): the human reference itself, which should be rated high.

The degraded controls are what ``quality.py`` tests reviewers with; the known-good ones keep the
controls from being "the odd ones out" and anchor the top of the scale.
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
    """One control item: shown for ``entry_id`` with ``text``; ``detail`` says what was done (kept in the
    store only, never exported)."""

    entry_id: int
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


def build_controls(references: dict[int, str], card: LanguageCard, *, count: int, seed: int) -> list[Control]:
    """``count`` controls over distinct entries of ``references`` (entry id → reference): two thirds
    degraded (rounded up), the rest known-good. Deterministic for a seed."""
    rng = Random(seed)
    ids = sorted(references)
    hosts = [i for i in ids if len(units(references[i], card)) >= MIN_UNITS[card.word_rule]]
    rng.shuffle(hosts)
    bad_wanted = count - count // 3
    out: list[Control] = []
    used: set[int] = set()
    for host in hosts:
        if sum(c.kind == "control_bad" for c in out) >= bad_wanted:
            break
        for donor in rng.sample(ids, min(len(ids), 8)):
            made = swap_phrase(references[host], references[donor], card, rng) if donor != host else None
            if made:
                out.append(Control(host, "control_bad", made[0], {**made[1], "donor_entry": donor}))
                used.add(host)
                break
    good = [i for i in hosts if i not in used][: count - len(out)]
    out += [Control(i, "control_good", references[i], {}) for i in good]
    return out


def control_count(real_items: int, share: float = CONTROL_SHARE) -> int:
    """How many controls a campaign of ``real_items`` outputs gets: ``share`` of them, at least
    ``quality.MIN_CONTROLS`` degraded ones so every reviewer can be checked."""
    from mt_eval.review.quality import MIN_CONTROLS

    wanted = round(real_items * share)
    return max(wanted, MIN_CONTROLS + MIN_CONTROLS // 2) if share > 0 else 0
