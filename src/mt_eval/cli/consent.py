"""``mt-eval governance consent``: the language community's consent records (add, revoke, reinstate, list).

The work is in ``sovereign/consent.py``; each change is an event of the governance audit log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import opt, out

consent_app = typer.Typer(help="Community consent records: required to seal a dataset's gold segments and to "
                               "run on them; revocable at any time.", no_args_is_help=True)

GovOpt = Annotated[Path, opt("The governance folder (audit.jsonl, policy.toml).", "--governance")]
DatasetOpt = Annotated[str, opt("The dataset id (the corpus's dataset.id).", "--dataset")]
LanguageOpt = Annotated[str, opt("The community's language code, as the corpus names it (e.g. es).", "--language")]
ReasonOpt = Annotated[str, opt("Why (recorded in the audit log; shown to whoever is refused).", "--reason")]
DateOpt = Annotated[str | None, opt("The date it took effect, YYYY-MM-DD (default today).", "--date")]
WhoOpt = Annotated[str | None, opt("Who records this (recorded in the audit log).", "--who")]


@consent_app.command("add")
def add(
    dataset: DatasetOpt,
    language: LanguageOpt,
    given_by: Annotated[str, opt("The community or organisation that gave consent.", "--given-by")],
    representative: Annotated[str, opt("Its named representative who signed.", "--representative")],
    document: Annotated[Path, opt("The signed consent document (its sha256 is recorded; a copy is kept).",
                                  "--document")],
    given_on: Annotated[str, opt("The date consent was given, YYYY-MM-DD.", "--date")],
    segments: Annotated[str, opt("The segments it covers, comma-separated.", "--segments")] = "gold_standard,held_out",
    uses: Annotated[str, opt("The uses it allows, comma-separated: evaluation, aggregate_scores, public_cards, "
                             "ranking.", "--uses")] = "evaluation",
    governance: GovOpt = Path("governance"),
    who: WhoOpt = None,
) -> None:
    """Record a language community's consent for a dataset (who, scope, date, the signed document's sha256).

    Example: mt-eval governance consent add --dataset my-set --language es --given-by "Council"
    --representative "A. B" --document consent.pdf --date 2026-11-01
    """
    from mt_eval.sovereign.consent import add_consent
    from mt_eval.sovereign.governance import Governance

    record = add_consent(Governance(governance), dataset=dataset, language=language, given_by=given_by,
                         representative=representative, document=document, given_on=given_on,
                         segments=[segments], uses=[uses], who=who)
    out.print(f"consent recorded for {escape(record.dataset)} ({escape(record.language)}) from "
              f"{escape(record.given_by)}: segments {', '.join(record.segments)}; uses {', '.join(record.uses)}; "
              f"document {record.document_sha256[:12]}… (audit event {record.event[:12]})", highlight=False)


@consent_app.command("revoke")
def revoke(
    dataset: DatasetOpt,
    language: LanguageOpt,
    reason: ReasonOpt,
    on: DateOpt = None,
    governance: GovOpt = Path("governance"),
    who: WhoOpt = None,
    undo: Annotated[bool, opt("Reinstate consent given again instead (the revocation stays in the log).",
                              "--undo")] = False,
) -> None:
    """Record the community withdrawing consent: the dataset is neither sealed nor run on from now on.

    Example: mt-eval governance consent revoke --dataset my-set --language es --reason "council decision 2026-12"
    """
    from mt_eval.sovereign.consent import reinstate_consent, revoke_consent
    from mt_eval.sovereign.governance import Governance

    change = reinstate_consent if undo else revoke_consent
    change(Governance(governance), dataset, language, reason, on, who)
    out.print(f"consent for {escape(dataset)} ({escape(language)}) {'reinstated' if undo else 'revoked'}",
              highlight=False)


@consent_app.command("list")
def list_records(governance: GovOpt = Path("governance")) -> None:
    """List the consent records as the audit log stands (revoked ones with date and reason).

    Example: mt-eval governance consent list --governance governance
    """
    from mt_eval.sovereign.consent import consents
    from mt_eval.sovereign.governance import Governance

    records = consents(Governance(governance))
    if not records:
        out.print("no consent records", highlight=False)
    for r in records:
        state = "in force" if r.in_force else f"revoked on {r.revoked_on} ({r.revoked})"
        out.print(escape(f"{r.dataset} ({r.language}): {state}; given {r.given_on} by {r.given_by} "
                         f"({r.representative}); segments {', '.join(r.segments)}; uses {', '.join(r.uses)}; "
                         f"document sha256 {r.document_sha256}"), highlight=False)
