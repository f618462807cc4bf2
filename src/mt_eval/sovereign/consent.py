"""Community consent records (Benchmark Spec §11.1.7: "documented agreement from the language community";
§8.2.6: governance "can refuse or revoke evaluation at any time"). A dataset's secret segments are sealed,
and a gold run opens them, only under a consent record in force for that dataset and language.

A record names who gave consent (the community or organisation, and its named representative), its scope
(the segments it covers and the uses it allows: ``evaluation``, ``aggregate_scores``…), the date it was
given and the SHA-256 of the signed consent document. The document itself is copied into the governance
folder (``consent/<sha256>``) so the file the hash names stays with the records.

The records are events of the hash-chained audit log (``governance.py``): ``consent`` (given),
``consent_revoke`` and ``consent_reinstate`` (each with a date and a reason), so the consent history is as
tamper-evident as the runs it allows. The latest event for a (dataset, language) decides its state.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from mt_eval.corpus.loaders import load_corpus
from mt_eval.corpus.models import DatasetInfo
from mt_eval.errors import UserError
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.vault import SealedVault, seal

USES = ("evaluation", "aggregate_scores", "public_cards", "ranking")  # what a community may allow
EVALUATION = "evaluation"  # the use a seal and a gold run need
DOCUMENTS = "consent"  # the folder under the governance directory holding the consent documents
DEFAULT_SEGMENTS = ("gold_standard", "held_out")


@dataclass(frozen=True)
class ConsentRecord:
    """One consent record as the audit log stands (``revoked``: the reason of a revocation in force)."""

    dataset: str
    language: str
    given_by: str
    representative: str
    segments: tuple[str, ...]
    uses: tuple[str, ...]
    given_on: str
    document_sha256: str
    event: str  # the audit line hash of the ``consent`` event
    revoked: str | None = None
    revoked_on: str | None = None

    @property
    def in_force(self) -> bool:
        return self.revoked is None


def _iso_date(text: str, field: str) -> str:
    try:
        return date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise UserError(f"{field}: {text!r} is not a date (YYYY-MM-DD)", field=field) from None


def _names(values: Iterable[str], field: str, allowed: tuple[str, ...] | None = None) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(v.strip() for value in values for v in value.split(",") if v.strip()))
    if not names:
        raise UserError(f"{field}: give at least one", field=field)
    unknown = [n for n in names if allowed is not None and n not in allowed]
    if unknown:
        raise UserError(f"{field}: unknown {', '.join(unknown)} (known: {', '.join(allowed or ())})", field=field)
    return names


def add_consent(gov: Governance, *, dataset: str, language: str, given_by: str, representative: str,
                document: Path, given_on: str, segments: Iterable[str] = DEFAULT_SEGMENTS,
                uses: Iterable[str] = (EVALUATION,), who: str | None = None) -> ConsentRecord:
    """Record consent for ``dataset`` in ``language``: the document's sha256 is computed here (never taken
    from the caller) and the document is kept in the governance folder. A record in force for the same
    dataset and language is refused (revoke it first: the history stays one line per decision)."""
    fields = {"--dataset": dataset, "--language": language, "--given-by": given_by,
              "--representative": representative}
    for name, value in fields.items():
        if not value.strip():
            raise UserError(f"{name}: required (who gave consent, for which dataset and language)", field=name)
    try:
        data = Path(document).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read the consent document: {exc.strerror or exc}", file=str(document),
                        hint="give the signed consent document's file with --document") from None
    if not data:
        raise UserError("the consent document is empty", file=str(document))
    digest = hashlib.sha256(data).hexdigest()
    current = consent_for(gov, dataset.strip(), language.strip())
    if current is not None and current.in_force:
        raise UserError(f"dataset {dataset!r} ({language}) already has consent in force (event "
                        f"{current.event[:12]}…)", hint="mt-eval governance consent revoke first to replace it")
    event = {"kind": "consent", "dataset": dataset.strip(), "language": language.strip(),
             "given_by": given_by.strip(), "representative": representative.strip(),
             "segments": list(_names(segments, "--segments")), "uses": list(_names(uses, "--uses", USES)),
             "given_on": _iso_date(given_on, "--date"), "document_sha256": digest, "who": who}
    kept = gov.dir / DOCUMENTS / digest
    kept.parent.mkdir(parents=True, exist_ok=True)
    if not kept.exists():
        shutil.copyfile(document, kept)
    gov.record(event)
    record = consent_for(gov, dataset.strip(), language.strip())
    assert record is not None  # just logged
    return record


def _change(gov: Governance, kind: str, dataset: str, language: str, reason: str, on: str | None,
            who: str | None) -> ConsentRecord:
    current = consent_for(gov, dataset, language)
    if current is None:
        raise UserError(f"no consent record for dataset {dataset!r} ({language})",
                        hint="mt-eval governance consent list shows the records")
    if (kind == "consent_revoke") != current.in_force:
        state = "in force" if current.in_force else "revoked"
        raise UserError(f"consent for dataset {dataset!r} ({language}) is already {state}")
    if not reason.strip():
        raise UserError("--reason: say why (recorded in the audit log)", field="--reason")
    when = _iso_date(on, "--date") if on else date.today().isoformat()
    gov.record({"kind": kind, "dataset": dataset, "language": language, "reason": reason.strip(),
                "on": when, "consent_event": current.event, "who": who})
    changed = consent_for(gov, dataset, language)
    assert changed is not None
    return changed


def revoke_consent(gov: Governance, dataset: str, language: str, reason: str, on: str | None = None,
                   who: str | None = None) -> ConsentRecord:
    """The community withdraws consent: no seal, no gold run of the dataset from now on."""
    return _change(gov, "consent_revoke", dataset, language, reason, on, who)


def reinstate_consent(gov: Governance, dataset: str, language: str, reason: str, on: str | None = None,
                      who: str | None = None) -> ConsentRecord:
    """Consent given again (the revocation stays in the log)."""
    return _change(gov, "consent_reinstate", dataset, language, reason, on, who)


def consents(gov: Governance) -> list[ConsentRecord]:
    """Every (dataset, language)'s latest record, as the verified log stands, in the order first given."""
    state: dict[tuple[str, str], ConsentRecord] = {}
    for ev in gov.events():
        key = (str(ev.get("dataset")), str(ev.get("language")))
        if ev.get("kind") == "consent":
            state[key] = _record(ev)
        elif ev.get("kind") == "consent_revoke" and key in state:
            state[key] = replace(state[key], revoked=str(ev.get("reason")), revoked_on=str(ev.get("on")))
        elif ev.get("kind") == "consent_reinstate" and key in state:
            state[key] = replace(state[key], revoked=None, revoked_on=None)
    return list(state.values())


def _record(ev: dict[str, Any]) -> ConsentRecord:
    return ConsentRecord(str(ev["dataset"]), str(ev["language"]), str(ev["given_by"]), str(ev["representative"]),
                         tuple(ev["segments"]), tuple(ev["uses"]), str(ev["given_on"]), str(ev["document_sha256"]),
                         str(ev["hash"]))


def consent_for(gov: Governance, dataset: str, language: str) -> ConsentRecord | None:
    return next((r for r in consents(gov) if (r.dataset, r.language) == (dataset, language)), None)


def require_consent(gov: Governance, info: DatasetInfo, segments: Iterable[str], use: str = EVALUATION,
                    doing: str = "seal") -> ConsentRecord:
    """The record in force for ``info``'s dataset in its target or source language covering every one
    of ``segments`` and ``use``; otherwise ``UserError``, one line naming what to record and how."""
    wanted = list(segments)
    records = [r for r in consents(gov) if r.dataset == info.id
               and r.language in (info.target_language, info.source_language)]
    # --governance always: a contest keeps its own folder, and the command's default would record it elsewhere
    add = (f"mt-eval governance consent add --dataset {info.id} --language {info.target_language} "
           "--given-by COMMUNITY --representative NAME --document SIGNED.pdf --date YYYY-MM-DD "
           f"--governance {shlex.quote(str(gov.dir))}")
    if not records:
        raise UserError(f"cannot {doing} dataset {info.id!r}: no community consent record for it "
                        f"({info.target_language} or {info.source_language}) in {gov.dir}", hint=add)
    live = [r for r in records if r.in_force]
    if not live:
        r = records[-1]
        raise UserError(f"cannot {doing} dataset {info.id!r}: consent ({r.language}) was revoked on {r.revoked_on} "
                        f"({r.revoked})", hint="only the community can give it again: mt-eval governance consent "
                                               "reinstate")
    for r in live:
        if set(wanted) <= set(r.segments) and use in r.uses:
            return r
    r = live[-1]
    raise UserError(f"cannot {doing} dataset {info.id!r}: its consent record covers segments "
                    f"{', '.join(r.segments)} and uses {', '.join(r.uses)}, not {', '.join(wanted)} for {use}",
                    hint="record consent with that scope: " + add + f" --segments {','.join(wanted)}")


def check_not_withdrawn(gov: Governance, info: DatasetInfo) -> None:
    """Preflight runs on public entries; still, a dataset whose every consent record was revoked is not
    evaluated at all (dynamic consent withdraws evaluation, not only the secret half)."""
    records = [r for r in consents(gov) if r.dataset == info.id]
    if records and not any(r.in_force for r in records):
        r = records[-1]
        raise UserError(f"dataset {info.id!r}: consent ({r.language}) was revoked on {r.revoked_on} ({r.revoked}); "
                        "no preflight, no run", hint="mt-eval governance consent reinstate, by the community")


def seal_with_consent(gov: Governance, corpus: Path, segments: Iterable[str], recipients: Iterable[str], out: Path,
                      custody: dict[str, Any] | None = None) -> SealedVault:
    """``vault.seal``, after ``require_consent`` for the corpus's dataset and the segments to seal: the
    command's way in, so nothing is encrypted or written before consent is found."""
    chosen = [s.strip() for s in segments if s.strip()]
    require_consent(gov, load_corpus(corpus).info, chosen)
    return seal(corpus, chosen, list(recipients), out, custody)
