"""Rescore stored cards: rebuild each from its own ``results[]`` with this harness's metrics.

A new metric version or a fixed metric bug changes what a stored card's outputs are worth, not the
outputs themselves, so nothing is re-run: every input the card builder needs is on the card
(entries, outputs, per-entry usage and latency, the method's identity, the run's facts), and
``rebuild_card`` hands them to ``runcard.builder.build_card`` again. The result is an ordinary sealed
card with its statistics sidecar, which ``verify`` accepts; the old card stays in the store, and a
``card_links`` row (reason ``rescore``) points from it to the new one with a change log: every metric
whose value or signature changed (old, new, both signatures), the composite, tier and rule when
they changed, and both harness versions. A card whose scores and signatures come out the same gets
no new row ("unchanged"): a rescore is a fact about scores, not about the machine that ran it.

Every metric is recomputed with its current implementation, whatever ``--metric`` says: a card
mixing one metric's new statistics with another's old ones would not verify (``verify`` recomputes
all of them with this code), and a leaderboard of cards that do not verify is worth nothing.
``--metric M`` chooses *which cards* are rescored (those where M changed) and the change log
still lists every change on them, so nothing moves unseen.

Opt-in metrics are carried over as ``verify`` recomputes them: ``semantic_score`` with the embedding backend
the card names (``runcard.rescore.semantic_config``; its model must be available here, or every vector cached),
generated judges and ``comet_score`` only with the judge cards and checkpoint the caller gives (``judges``,
``comet``; sha256-checked). A card needing one that was not given refuses the whole rescore in one line, before
anything is computed: dropping the metric would change the card silently, keeping the old number would
vouch for a value nobody recomputed. A card whose embedding model cannot run here (not installed, no URL, its
vectors not cached) is skipped with the reason, like a plugin's metric not installed here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from mt_eval.errors import UserError
from mt_eval.methods.base import MethodClass, MethodIdentity, Translation, Usage
from mt_eval.metrics.judges.cards import is_judge_id
from mt_eval.runcard.builder import RunInfo, build_card
from mt_eval.runcard.reproduce import bootstrap_of
from mt_eval.runcard.statistics import SUFFIX
from mt_eval.runcard.verify_economics import require_sound_figures
from mt_eval.scoring.composite import length_warnings
from mt_eval.scoring.economics import card_cost_facts, card_speed_status
from mt_eval.store.db import Store, StoreError
from mt_eval.store.insert import insert_card
from mt_eval.store.models import Card, CardLink, Dataset
from mt_eval.store.query import Filters, card_conditions, superseded_by

if TYPE_CHECKING:
    from mt_eval.metrics.comet import CometConfig
    from mt_eval.metrics.judges.metric import JudgeMetric

RESCORE = "rescore"
SEMANTIC_UNAVAILABLE = "scored semantic_score with an embedding model that cannot be recomputed here"
LLM_KEYS = ("batched", "attempts", "cached", "validation_attempts", "validated", "batch_rejected")
SUMMARY_KEYS = ("composite", "quality_tier")
CARD_KEYS = ("composite_rule", "profile")


@dataclass
class RescoreOutcome:
    """What ``rescore`` found for one stored card: ``rescored`` (``would rescore`` in a dry run),
    ``unchanged``, ``not selected`` (``--metric`` names nothing that changed on it) or ``skipped``
    (``change_log["reason"]`` says why)."""

    old_hash: str
    method: str
    status: str
    new_hash: str | None = None
    change_log: dict[str, Any] = field(default_factory=dict)
    card: dict[str, Any] | None = None
    statistics: bytes | None = None


def _translations(card: Mapping[str, Any]) -> list[Translation]:
    """The method's outputs as the builder received them. Cost and cached tokens are on the card only
    as totals (the builder only ever sums them), so the first entry carries them; model ids that no
    entry names (a rule-based engine's) are given to entries without one, so the set is the card's."""
    rows = card["results"]
    out = [Translation(r["entry_id"], r.get("predicted", ""), r.get("error"), float(r.get("latency_seconds") or 0.0),
                       Usage(**{k: int((r.get("usage") or {}).get(k) or 0)
                                for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens")}),
                       r.get("model_id"), {k: r[k] for k in LLM_KEYS if k in r})
           for r in rows]  # fmt: skip
    if out:
        out[0].usage.cost_usd = float((card.get("cost") or {}).get("total_cost_usd") or 0.0)
        out[0].usage.cached_tokens = int((card.get("tokens") or {}).get("cached_tokens") or 0)
    named = {t.model_id for t in out if t.model_id}
    recorded = [] if card["model_id"] == card["model_slug"] else str(card["model_id"]).split(", ")
    spare = (t for t in out if not t.model_id)
    for model_id, t in zip([m for m in recorded if m not in named], spare, strict=False):
        t.model_id = model_id
    return out


def _run_info(card: Mapping[str, Any]) -> RunInfo:
    """The run's own facts; warnings without the old length warnings (the builder says them anew)."""
    scores = card["scores"]
    ratios = np.asarray([np.nan if (v := (r.get("metrics") or {}).get("length_ratio")) is None else v
                         for r in card["results"]], dtype=np.float64)  # fmt: skip
    stale = set(length_warnings(scores, ratios))
    cost = card.get("cost") or {}
    status, source = card_cost_facts(card)  # how cost and speed are known carry over, prices included
    return RunInfo(
        run_id=str(card["run_id"]), timestamp=str(card["timestamp"]), elapsed_seconds=float(card["elapsed_seconds"]),
        condition=str(card["condition"]), selection=dict(card["dataset"].get("selection") or {}),
        warnings=[w for w in card.get("warnings") or [] if w not in stale],
        cost_known=cost.get("total_cost_usd") is not None, cost_source=source,
        bootstrap=bootstrap_of(card), cost_status=status, speed_status=card_speed_status(card),
        pricing=dict(cost["pricing"]) if isinstance(cost.get("pricing"), Mapping) else None,
    )  # fmt: skip


def rebuild_card(card: Mapping[str, Any], judges: Sequence[JudgeMetric] = (),
                 comet: CometConfig | None = None) -> tuple[dict[str, Any], bytes]:
    """``card`` rebuilt from its own results with this harness's metrics, sealed, with its sidecar's
    bytes. For a card this harness wrote, only ``environment`` (and so the hash) can differ. Its opt-in
    metrics come along: the card's own semantic backend, and the judges and checkpoint it records, taken
    from ``judges`` and ``comet`` (``UserError``, one line, when one is not given)."""
    from mt_eval.languages.card import language_card
    from mt_eval.runcard.rescore import dataset_from_card, opt_in_from_card, target_card
    from mt_eval.scoring.calibrated import from_card

    opt_in = opt_in_from_card(card, judges, comet)
    calibrated = from_card(card)  # the card's own calibrated profile (checked against its hash) composes it again
    # its usage, costs and latencies are carried into the new card: only when they hold (runcard/verify_economics)
    require_sound_figures(card, per_char=False)

    dataset = dataset_from_card(card)
    dataset.info.language_pair = str(card["dataset"].get("language_pair") or "")
    method = card["method"]
    identity = MethodIdentity(
        name=method["name"], method_class=MethodClass(method["method_class"]), version=method["version"],
        model_slug=card["model_slug"], config=method["config"], provider=card["config"]["api_provider"],
        system_prompt=card["system_prompt_used"])  # fmt: skip
    terms = {k: tuple(v) for k, v in card["terminology"].items()} if card.get("terminology") else None
    ref = card.get("statistics") or {}
    name = ref.get("file") if isinstance(ref.get("file"), str) else "run_card" + SUFFIX
    new, sidecar = build_card(dataset, identity, _translations(card), _run_info(card), target_card(card),
                              language_card(card["dataset"]["source_language"]), terms, statistics_file=name,
                              opt_in=opt_in, calibrated=calibrated)
    assert sidecar is not None  # a statistics file name was given
    return new, sidecar


def _differs(a: Any, b: Any) -> bool:
    """Values differ beyond float round-off (None only equals None)."""
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool | str):
        return not math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return bool(a != b)


def change_log(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """What rescoring changed: each metric whose value or signature changed, the composite and tier,
    the composite rule and profile, with both harness versions. No ``metrics``/``scores`` keys: unchanged."""
    metrics: dict[str, Any] = {}
    old_info, new_info = old.get("metrics") or {}, new.get("metrics") or {}
    for m in sorted(set(old_info) | set(new_info)):
        before, after = old["scores"].get(m), new["scores"].get(m)
        sig_before, sig_after = (old_info.get(m) or {}).get("signature"), (new_info.get(m) or {}).get("signature")
        if _differs(before, after) or sig_before != sig_after or (m in old_info) != (m in new_info):
            metrics[m] = {"old": before, "new": after, "old_signature": sig_before, "new_signature": sig_after}
    scores = {k: {"old": old["scores"].get(k), "new": new["scores"].get(k)}
              for k in SUMMARY_KEYS if _differs(old["scores"].get(k), new["scores"].get(k))}  # fmt: skip
    scores |= {k: {"old": old.get(k), "new": new.get(k)} for k in CARD_KEYS if old.get(k) != new.get(k)}
    log: dict[str, Any] = {"harness_version": {"old": old.get("harness_version"), "new": new.get("harness_version")},
                           "old_run_card_hash": old.get("run_card_hash"), "new_run_card_hash": new.get("run_card_hash")}
    if metrics:
        log["metrics"] = metrics
    if scores:
        log["scores"] = scores
    return log


def rescore_card(card: Mapping[str, Any], metrics: Sequence[str] = (), *, judges: Sequence[JudgeMetric] = (),
                 comet: CometConfig | None = None) -> RescoreOutcome:
    """One card's outcome (nothing written): ``rescored`` with the new card when something changed
    (with ``metrics``: when one of them changed), else ``unchanged`` or ``not selected``; ``skipped``
    when a metric on the card is not installed here (a plugin's): rebuilt, it would silently vanish, or
    when its embedding model cannot be run here (not installed, no URL, vectors not cached), like
    ``verify``'s "cannot be rescored". Opt-in metrics (semantic, judges, COMET) are rebuilt as
    ``rebuild_card`` says; a judge or checkpoint not given is a ``UserError``, never a skip."""
    from mt_eval.metrics.registry import OPT_IN, available_metrics
    from mt_eval.runcard.judges import card_judges

    name, old_hash = str(card["method"]["name"]), str(card["run_card_hash"])
    known = set(available_metrics()) | set(OPT_IN)  # opt-in and judges: built from the card's own blocks
    if missing := sorted(m for m in card.get("metrics") or {} if m not in known and not is_judge_id(m)):
        return RescoreOutcome(old_hash, name, "skipped",
                              change_log={"reason": f"metrics not installed here: {', '.join(missing)}"})
    try:
        new, sidecar = rebuild_card(card, judges, comet)  # checks the judges and checkpoint it needs were given
    except UserError as exc:
        if not card.get("semantic") or card_judges(card) or card.get("comet"):  # not (only) the embedding model's
            raise
        reason = f"{SEMANTIC_UNAVAILABLE} ({exc.message})"
        return RescoreOutcome(old_hash, name, "skipped", change_log={"reason": reason})
    log = change_log(card, new)
    changed = "metrics" in log or "scores" in log
    if metrics and not set(metrics) & set(log.get("metrics", {})):
        return RescoreOutcome(old_hash, name, "not selected" if changed else "unchanged", change_log=log)
    if not changed:
        return RescoreOutcome(old_hash, name, "unchanged", change_log=log)
    return RescoreOutcome(old_hash, name, "rescored", str(new["run_card_hash"]), log, new, sidecar)


def _selected(store: Store, dataset: str | None, prefixes: Sequence[str]) -> list[tuple[int, dict[str, Any]]]:
    """(id, card) of the current (not superseded) cards chosen by ``dataset`` and hash prefixes."""
    for prefix in prefixes:
        if len(prefix) < 6 or any(c not in "0123456789abcdef" for c in prefix.lower()):
            raise UserError(f"--card {prefix!r}: give a run_card_hash or its first 6 or more hex digits")
    with store.session() as session:
        stmt = (select(Card.id, Card.run_card_hash, Card.card).join(Dataset, Card.dataset_pk == Dataset.id)
                .where(*card_conditions(Filters(dataset=dataset))))  # fmt: skip
        rows = session.execute(stmt.order_by(Card.run_card_hash)).all()
    chosen = [(i, dict(c)) for i, h, c in rows if not prefixes or any(h.startswith(p.lower()) for p in prefixes)]
    for prefix in prefixes:
        if not any(h.startswith(prefix.lower()) for _, h, _ in rows):
            raise UserError(f"--card {prefix}: no current card in the store starts with it (a card already "
                            "rescored is superseded: give its newest rescore)")
    return chosen


def _require_inputs(chosen: Sequence[tuple[int, Mapping[str, Any]]], judges: Sequence[JudgeMetric],
                    comet: CometConfig | None) -> None:
    """Every chosen card's judges and COMET checkpoint are among those given, else one line naming the card
    and what it needs: checked for all of them before any card is rescored (nothing half done)."""
    from mt_eval.runcard.judges import card_judges, require_judges
    from mt_eval.runcard.rescore import require_comet

    for _, card in chosen:
        try:
            require_judges(card_judges(card), judges)
            require_comet(card, comet)
        except UserError as exc:
            raise _named(card, exc) from None


def _named(card: Mapping[str, Any], exc: UserError) -> UserError:
    """``exc`` as one line naming the stored card it is about (a store has no file to point at)."""
    return UserError(f"card {str(card['run_card_hash'])[:12]} ({card['method']['name']}): {exc.one_line()}")


def _rescore_one(card: Mapping[str, Any], metrics: Sequence[str], judges: Sequence[JudgeMetric],
                 comet: CometConfig | None) -> RescoreOutcome:
    try:  # e.g. the card's embedding model is not available here: said for this card, nothing written
        return rescore_card(card, metrics, judges=judges, comet=comet)
    except UserError as exc:
        raise _named(card, exc) from None


def rescore_store(store: Store, *, dataset: str | None = None, cards: Sequence[str] = (),
                  metrics: Sequence[str] = (), dry_run: bool = False, judges: Sequence[JudgeMetric] = (),
                  comet: CometConfig | None = None) -> list[RescoreOutcome]:
    """Rescore the store's current cards (``dataset``, ``cards`` prefixes narrow them); unless
    ``dry_run``, insert every new card and its link in one transaction (all or nothing). ``judges`` and
    ``comet`` recompute the generated judges and ``comet_score`` the cards record (a card needing one not
    given: ``UserError`` before any work)."""
    from mt_eval.metrics.registry import OPT_IN, available_metrics

    known = set(available_metrics()) | set(OPT_IN)
    if unknown := sorted(m for m in metrics if m not in known and not is_judge_id(m)):
        raise UserError(f"--metric {', '.join(unknown)}: no such metric here "
                        f"(known: {', '.join(sorted(known))})")
    chosen = _selected(store, dataset, cards)
    _require_inputs(chosen, judges, comet)
    outcomes = [(card_id, _rescore_one(card, metrics, judges, comet)) for card_id, card in chosen]
    changed = [(i, o) for i, o in outcomes if o.status == "rescored"]
    if dry_run:
        for _, o in changed:
            o.status = "would rescore"
    elif changed:
        try:
            _write(store, changed)
        except IntegrityError:  # a concurrent rescore or publish inserted one of these cards first
            raise StoreError("the store changed while rescoring (a concurrent rescore or publish); "
                             "nothing written, run again") from None
    return [o for _, o in outcomes]


def _write(store: Store, changed: Sequence[tuple[int, RescoreOutcome]]) -> None:
    now = datetime.now(UTC)
    with store.session() as session:
        for old_id, outcome in changed:
            assert outcome.card is not None and outcome.statistics is not None
            if superseded_by(session, old_id) is not None:  # rolled back: nothing of this batch is written
                raise StoreError(f"card {outcome.old_hash[:12]} was rescored concurrently; nothing written, run again")
            old = session.get(Card, old_id)
            assert old is not None
            new_id = session.scalar(select(Card.id).where(Card.run_card_hash == outcome.new_hash))
            if new_id is None:  # the rebuilt card may already be there (someone published the same file)
                # the same submission, rescored: its submitter, tier and publication time; the link says when
                new_id = insert_card(session, outcome.card, outcome.statistics, submitter=old.submitter,
                                     published_at=old.published_at, verification_tier=old.verification_tier).id
            session.add(CardLink(old_card_id=old_id, new_card_id=new_id, reason=RESCORE,
                                 change_log=outcome.change_log, created_at=now))
