"""Qualifying and executing contest entries: the harness runs every entry itself (an entrant's own numbers
are never read), on the public dev split to qualify and on the sealed secret split once approved.

* a **bundle** goes through the sovereign runner: ``runner.preflight`` on ``dev.json`` (in the sandbox,
  strict: every entry answered) and ``runner.run`` on the vault's secret segment (its signature, passed
  preflight, budget, custodian approvals, consent and leak check; the full card stored encrypted);
* a **model** is re-checked (``model_bundle.check_folder``), loaded weights-only in a child process under the
  sandbox policy's per-run wall clock (``model_run.py``) and scored by
  ``runner.score_translations``: the same metrics (semantic_score included), the same sealed statistics
  reference and condition (``sovereign:gold_standard``) as a bundle's card, so ``sovereign.ranking`` ranks
  both alike. On the secret split the vault is opened in memory (``custody.gold_run_key``: an identity file,
  or the quorum's shares after their approvals) and the full card is kept encrypted (``store_full_card``).

Qualifying compares the card's primary metric (the manifest's, chrF++ by default) with the threshold;
``qualify.json`` (and the dev card: public data) are written for the entrant. Executing records
``contest.execute`` with aggregate scores only (the primary metric, its CI, the composite) and the full
card's hash; the per-segment statistics the ranking needs stay in the encrypted full card.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mt_eval.contest.entries import SIGNATURE, checked_entry, entry_dir
from mt_eval.contest.manifest import DEV, GOVERNANCE, SECRET_SEGMENT, VAULT, governance
from mt_eval.contest.state import APPROVED, SUBMITTED, ContestState, EntryState, contest_state, require_open
from mt_eval.corpus.loaders import load_corpus
from mt_eval.corpus.models import Dataset
from mt_eval.errors import UserError
from mt_eval.runcard.signing import write_atomic
from mt_eval.sovereign.custody import Share
from mt_eval.sovereign.sandbox import SandboxPolicy, load_policy

QUALIFY, QUALIFY_CARD, RESULT = "qualify.json", "qualify.card.json", "result.json"


def _write_json(path: Path, value: Any) -> None:
    write_atomic(path, (json.dumps(value, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))


def _metric(card: dict[str, Any] | None, metric: str) -> tuple[float | None, list[float] | None]:
    """The card's value of ``metric`` and its bootstrap interval, when scored."""
    scores = (card or {}).get("scores") or {}
    value = scores.get(metric)
    ci = ((scores.get("confidence_intervals") or {}).get(metric)) or {}
    bounds = [b for b in (ci.get("ci_lower"), ci.get("ci_upper")) if isinstance(b, int | float)]
    return (float(value) if isinstance(value, int | float) else None), ([float(b) for b in bounds]
                                                                         if len(bounds) == 2 else None)


def model_card(folder: Path, dataset: Dataset, max_bytes: int, condition: str,
               seconds: float) -> tuple[dict[str, Any] | None, str]:
    """A weights-only model's translations of ``dataset`` (no submitted code; in a child process killed after
    ``seconds``: ``model_run.py``), scored as a sovereign full card, and the run's status in the sandbox's
    classes: ``ok`` (every entry translated), ``crashed`` (some entry failed), ``timeout``, ``load_failed`` (the
    checkpoint did not load, e.g. no token for the contest's languages: the entry's failure, not the harness's).
    No card when nothing was translated."""
    import time

    from mt_eval.contest.model_run import translate_model
    from mt_eval.sovereign.runner import score_translations

    began = time.monotonic()
    status, identity, translations = translate_model(folder, dataset, max_bytes, seconds)
    if identity is None or all(t.error is not None for t in translations):
        return None, status
    return score_translations(dataset, identity, translations, time.monotonic() - began, condition), status


def _state_for(root: Path, number: int, wanted: str, doing: str) -> tuple[ContestState, EntryState]:
    state = contest_state(root)
    require_open(state, doing)
    entry = state.entry(number)
    if entry.state != wanted:
        raise UserError(f"entry {number} is {entry.state}; {doing} needs a {wanted} entry", entry=number)
    return state, entry


def qualify_entry(root: Path, number: int, *, policy: SandboxPolicy | None = None) -> dict[str, Any]:
    """Re-run entry ``number`` on dev.json, compare the primary metric with the threshold and record
    ``contest.qualify``; returns what ``qualify.json`` holds."""
    from mt_eval.sovereign.runner import preflight

    root = Path(root)
    state, entry = _state_for(root, number, SUBMITTED, "qualifying")
    m = state.manifest
    folder = checked_entry(root, entry)
    dev = load_corpus(root / DEV)  # Dataset.sha256: the file's bytes as stored, the ones parsed
    if dev.sha256 != m.dev_sha256:  # the split entrants downloaded
        raise UserError("dev.json is not the dev split the contest was created with (edited after creation); "
                        "qualifying refused", file=str(root / DEV))
    status = "ok"
    if entry.kind == "bundle":
        from mt_eval.sovereign.bundle import load_bundle

        evaluation = preflight(load_bundle(folder), dev, root / GOVERNANCE, policy or load_policy(root / GOVERNANCE),
                               signature=entry_dir(root, number) / SIGNATURE)
        card, status = evaluation.card, str(evaluation.result["status"])
    else:
        from mt_eval.sovereign.consent import check_not_withdrawn

        check_not_withdrawn(governance(root), dev.info)  # as preflight does for a bundle
        seconds = (policy or load_policy(root / GOVERNANCE)).wall_seconds_per_run
        card, status = model_card(folder, dev, m.max_artefact_mb << 20, "contest:development", seconds)
    score, _ = _metric(card, m.primary_metric)
    if status != "ok" or score is None:  # contained: a failed entry is never scored, whatever it answered
        passed, reason, score = False, f"the run on the dev split failed ({status}); not scored", None
    else:
        passed = score >= m.threshold
        reason = f"{m.primary_metric} {score:.2f} {'≥' if passed else '<'} threshold {m.threshold:g}"
    result = {"entry": number, "passed": passed, "score": score, "metric": m.primary_metric,
              "threshold": m.threshold, "status": status, "reason": reason,
              "run_card_hash": (card or {}).get("run_card_hash")}
    if card is not None:  # the dev split is public: the entrant may see every output and score
        _write_json(entry_dir(root, number) / QUALIFY_CARD, card)
    _write_json(entry_dir(root, number) / QUALIFY, result)
    governance(root).record({"kind": "contest.qualify", "contest": m.id, **result, "who": "harness"})
    return result


def execute_entry(root: Path, number: int, identity: Path | Sequence[Share], *,
                  policy: SandboxPolicy | None = None) -> dict[str, Any]:
    """Run approved entry ``number`` on the secret split (the vault opened in memory with ``identity``: a
    custodian's identity file, or the quorum's shares) and record ``contest.execute`` with aggregate scores, or
    ``contest.fail`` when nothing could be scored; returns what ``result.json`` holds (no per-entry value)."""
    from mt_eval.sovereign.consent import require_consent
    from mt_eval.sovereign.custody import gold_run_key
    from mt_eval.sovereign.public_card import store_full_card
    from mt_eval.sovereign.vault import open_segment

    root = Path(root)
    state, entry = _state_for(root, number, APPROVED, "execution")
    m, gov = state.manifest, governance(root)
    folder = checked_entry(root, entry)
    status, custody = "ok", dict[str, Any]()  # a bundle's custody is on the runner's own run event
    if entry.kind == "bundle":
        from mt_eval.sovereign.bundle import load_bundle
        from mt_eval.sovereign.runner import run

        evaluation = run(load_bundle(folder), root / VAULT, identity, SECRET_SEGMENT, root / GOVERNANCE,
                         policy or load_policy(root / GOVERNANCE), signature=entry_dir(root, number) / SIGNATURE)
        card, status = evaluation.card, str(evaluation.result["status"])  # the runner stored the full card
    else:
        gov.check_not_revoked(entry.sha256, f"entry-{number}")
        # which custodians' approvals opened the vault goes on the contest's own event (no runner event here)
        key, custody = gold_run_key(root / VAULT, identity, gov, entry.sha256, SECRET_SEGMENT)
        secret = open_segment(root / VAULT, key, SECRET_SEGMENT)
        require_consent(gov, secret.info, [SECRET_SEGMENT], doing="run on")  # before the model sees one entry
        seconds = (policy or load_policy(root / GOVERNANCE)).wall_seconds_per_run
        card, status = model_card(folder, secret, m.max_artefact_mb << 20, f"sovereign:{SECRET_SEGMENT}", seconds)
        if card is not None:
            store_full_card(card, root / VAULT, root / GOVERNANCE)
    value, ci = _metric(card, m.primary_metric)
    composite = ((card or {}).get("scores") or {}).get("composite")
    if card is None or value is None:
        reason = f"no entry of the secret split was translated ({status})"
        _write_json(entry_dir(root, number) / RESULT, {"entry": number, "status": status, "reason": reason})
        gov.record({"kind": "contest.fail", "contest": m.id, "entry": number, "reason": reason, "who": "harness",
                    **custody})
        return {"entry": number, "status": status, "reason": reason}
    result = {"entry": number, "status": status, "metric": m.primary_metric, "value": value, "ci": ci,
              "composite": composite, "full_run_card_hash": card["run_card_hash"],
              "entries": (card.get("scores") or {}).get("total")}
    _write_json(entry_dir(root, number) / RESULT, result)
    gov.record({"kind": "contest.execute", "contest": m.id, **result, "who": "harness", **custody})
    return result
