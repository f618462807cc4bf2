"""A community's consent names the uses it allows (``sovereign.consent.USES``): a contest whose council allowed
evaluation alone is run, but not ranked, and its cards are not published (issue 25 item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mt_eval.contest.lifecycle import close_contest, publish_contest
from mt_eval.contest.ranking import rank_contest
from mt_eval.contest.state import contest_state
from mt_eval.errors import UserError
from mt_eval.runcard.signing import new_key
from support.contest import make_contest, record_consent


def _contest(tmp_path: Path, uses: tuple[str, ...]) -> tuple[Path, Path, Path]:
    keys = tmp_path / "uses-keys"
    keys.mkdir()
    record_consent(tmp_path / "contest", keys, uses=uses)
    made = make_contest(tmp_path, consent=False)
    organiser, _, _ = new_key(tmp_path / "organiser.key", signer="organiser")
    return made.root, made.key, organiser


def test_rank_needs_the_ranking_use(tmp_path: Path) -> None:
    root, identity, organiser = _contest(tmp_path, ("evaluation",))
    with pytest.raises(UserError) as refused:
        rank_contest(root, identity, organiser)
    assert "cannot rank dataset" in str(refused.value) and "for ranking" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert contest_state(root).ranking is None and not (root / "ranking.json").exists()


def test_publish_needs_the_public_cards_use(tmp_path: Path) -> None:
    root, identity, organiser = _contest(tmp_path, ("evaluation", "ranking"))
    close_contest(root, organiser)  # nothing executed: closing needs no ranking
    with pytest.raises(UserError) as refused:
        publish_contest(root, str(tmp_path / "board.db"), organiser, identity)
    assert "for public_cards" in str(refused.value)
    assert not (tmp_path / "board.db").exists() and not (root / "public").exists()


def test_with_the_ranking_use_rank_goes_past_consent(tmp_path: Path) -> None:
    """The control: the same contest with the ranking use is refused only for what it lacks (nothing executed)."""
    root, identity, organiser = _contest(tmp_path, ("evaluation", "ranking", "public_cards"))
    with pytest.raises(UserError) as refused:
        rank_contest(root, identity, organiser)
    assert "no executed entry" in str(refused.value) and "consent" not in str(refused.value)
