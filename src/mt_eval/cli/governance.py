"""``mt-eval governance``: the audit log, revocation, submitter keys, the submission budget, publishing
sovereign cards.

The work is in ``sovereign/governance.py`` and ``store/sovereign.py``; the words in ``render/governance.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import err, opt, out
from mt_eval.cli.consent import consent_app
from mt_eval.cli.ownership import ownership_app
from mt_eval.cli.store import DbOpt

governance_app = typer.Typer(help="Governance of sovereign evaluations: audit log, consent, budget, publishing.",
                             no_args_is_help=True)

GovernanceOpt = Annotated[Path, opt("The governance folder (audit.jsonl, policy.toml).", "--governance")]
WhoOpt = Annotated[str | None, opt("Who does this (recorded in the audit log).", "--who")]


@governance_app.command("audit")
def audit(
    governance: GovernanceOpt = Path("governance"),
    last: Annotated[int | None, opt("Show only the last N events.", "--last")] = None,
    as_json: Annotated[bool, opt("Print the events as JSON lines.", "--json")] = False,
) -> None:
    """Show the audit log and verify its hash chain; exit 1 when a line was edited, removed or moved.

    Example: mt-eval governance audit --governance governance --last 20
    """
    from mt_eval.render.governance import audit_table
    from mt_eval.sovereign.governance import Governance

    gov = Governance(governance)
    problems = gov.verify_log()
    if problems:
        for problem in problems:
            err.print(f"[red]audit log broken[/red]: {escape(problem)}", highlight=False)
        raise typer.Exit(1)
    events = gov.events()
    shown = events[-last:] if last else events
    if as_json:
        for ev in shown:
            typer.echo(json.dumps(ev, ensure_ascii=False, sort_keys=True))
        return
    if shown:
        out.print(audit_table(shown))
    head = events[-1]["hash"] if events else "(empty)"
    out.print(f"chain intact: {len(events)} events, head {head}", highlight=False)


@governance_app.command("revoke")
def revoke(
    target: Annotated[str, typer.Argument(help="A bundle's sha256 or a method name.")],
    reason: Annotated[str, opt("Why (recorded; shown to whoever is refused).", "--reason")],
    undo: Annotated[bool, opt("Lift an earlier revocation instead (consent given again).", "--undo")] = False,
    who: WhoOpt = None,
    governance: GovernanceOpt = Path("governance"),
) -> None:
    """Revoke (or refuse in advance) a submission: no further run and no publishing for it.

    Dynamic consent (Benchmark Spec §8.2.6): a developer or a community may withdraw. The revocation
    is an event of the audit log; --undo records its lifting, and both stay in the log.

    Example: mt-eval governance revoke acme-mt --reason "consent withdrawn by the developer"
    """
    from mt_eval.sovereign.governance import Governance

    gov = Governance(governance)
    digest = gov.reinstate(target, reason, who) if undo else gov.revoke(target, reason, who)
    out.print(f"{'reinstated' if undo else 'revoked'} {escape(target)} (audit event {digest[:12]})", highlight=False)


@governance_app.command("policy")
def policy(
    submissions: Annotated[int | None, opt("Gold submissions (distinct bundles) allowed per method in the window.",
                                           "--submissions")] = None,
    runs_per_submission: Annotated[int | None, opt("Executions allowed per submission (2: the §9.2 pair).",
                                                   "--runs-per-submission")] = None,
    days: Annotated[int | None, opt("The window, in days.", "--days")] = None,
    organisation: Annotated[str | None, opt("The governance organisation named on public cards.",
                                            "--organisation")] = None,
    model: Annotated[list[str] | None, opt("An LLM model the broker may forward to (repeat; replaces the list). "
                                           "A gateway bundle declaring another is refused.", "--model")] = None,
    publish_after_days: Annotated[int | None, opt("Days after leaving gold_standard before a rotated entry may "
                                                  "enter a public segment (vault rotate-entries; unset: never).",
                                                  "--publish-after-days")] = None,
    who: WhoOpt = None,
    governance: GovernanceOpt = Path("governance"),
) -> None:
    """Show the governance policy, or change it (the change is logged): budget, organisation, models.

    Repeated queries overfit a holdout, so each registered submitter key gets a budget of gold
    submissions (distinct bundles, whatever they are named; default 3 per 30 days), each executed at
    most twice (the §9.2 agreement pair); failed runs count too, since an error class is an answer as well.

    Example: mt-eval governance policy --submissions 3 --days 30 --organisation "Example Language Council"
    """
    from mt_eval.render.governance import policy_lines
    from mt_eval.sovereign.governance import Governance

    gov = Governance(governance)
    if any(v is not None for v in (submissions, runs_per_submission, days, organisation, model, publish_after_days)):
        gov.set_policy(submissions=submissions, runs_per_submission=runs_per_submission, days=days,
                       organisation=organisation, models=tuple(model) if model is not None else None, who=who,
                       publish_after_days=publish_after_days)
    for line in policy_lines(gov.policy(), gov.revoked()):
        out.print(line, highlight=False)


@governance_app.command("approve")
def approve(
    bundle: Annotated[str, opt("The bundle's sha256 (submission check and preflight print it).", "--bundle")],
    share: Annotated[Path, opt("Your custodian share file (vault keygen --shares): proves which custodian "
                               "approves; only its id is logged.", "--share")],
    vault: Annotated[Path, opt("The vault (held by quorum) the run opens.", "--vault")],
    segment: Annotated[str, opt("The secret segment the run may open.", "--segment")] = "gold_standard",
    who: WhoOpt = None,
    governance: GovernanceOpt = Path("governance"),
) -> None:
    """Approve one gold run of a bundle on a vault held by quorum, as one of its custodians.

    The share must be one the vault's custody record committed to; the audit log records the bundle,
    the segment and the custodian's id (never the share). sovereign run needs as many distinct
    custodians' approvals as the vault's threshold since that bundle's last run on the segment, and
    each run consumes them. Approving twice with one share is still one custodian.

    Example: mt-eval governance approve --vault vault --bundle 3f2a… --segment gold_standard --share custodian-2.share
    """
    from mt_eval.sovereign.custody import approve as record_approval

    custodian, digest = record_approval(governance, vault, share, bundle.strip(), segment, who)
    out.print(f"custodian {custodian} approved one {escape(segment)} run of bundle {escape(bundle.strip()[:12])}… "
              f"(audit event {digest[:12]})", highlight=False)


submitter_app = typer.Typer(help="Registered submitter keys: who may submit, and whose budget a run counts "
                                 "against.", no_args_is_help=True)
governance_app.add_typer(submitter_app, name="submitter")
governance_app.add_typer(consent_app, name="consent")  # cli/consent.py: community consent records
governance_app.add_typer(ownership_app, name="ownership")  # cli/ownership.py: §8.3 ownership transfer


@submitter_app.command("add")
def submitter_add(
    name: Annotated[str, typer.Argument(help="The submitter's name (letters, digits, . @ + - _).")],
    public_key: Annotated[str, opt("The submitter's public key: a .pub file (mt-eval keys new) or its line.",
                                   "--public-key")],
    who: WhoOpt = None,
    governance: GovernanceOpt = Path("governance"),
) -> None:
    """Register a submitter key (logged): bundles it signs may be preflighted and run, within its budget.

    The budget counts submissions per key, so each key registered is one more budget: register one
    key per submitter whose identity you checked.

    Example: mt-eval governance submitter add alice --public-key alice.pub --who board
    """
    from mt_eval.sovereign.governance import Governance
    from mt_eval.sovereign.submitters import add_submitter, public_key_from

    added = add_submitter(Governance(governance), name, public_key_from(public_key), who)
    out.print(f"registered submitter {escape(added.name)} (key {added.key})", highlight=False)


@submitter_app.command("revoke")
def submitter_revoke(
    name: Annotated[str, typer.Argument(help="The submitter's name, or 12+ digits of its key.")],
    reason: Annotated[str, opt("Why (recorded; shown to whoever is refused).", "--reason")],
    who: WhoOpt = None,
    governance: GovernanceOpt = Path("governance"),
) -> None:
    """Revoke a submitter key (logged): nothing it signed is preflighted or run from now on.

    Example: mt-eval governance submitter revoke alice --reason "key lost"
    """
    from mt_eval.sovereign.governance import Governance
    from mt_eval.sovereign.submitters import revoke_submitter

    revoked = revoke_submitter(Governance(governance), name, reason, who)
    out.print(f"revoked submitter {escape(revoked.name)} (key {revoked.key})", highlight=False)


@submitter_app.command("list")
def submitter_list(governance: GovernanceOpt = Path("governance")) -> None:
    """List registered submitter keys (revoked ones with their reason), as the audit log stands.

    Example: mt-eval governance submitter list
    """
    from mt_eval.sovereign.governance import Governance
    from mt_eval.sovereign.submitters import submitters

    found = submitters(Governance(governance))
    for s in found.values():
        state = f"revoked ({escape(s.revoked)})" if s.revoked is not None else "active"
        out.print(f"{escape(s.name)}  {s.key}  {state}", highlight=False)
    if not found:
        out.print("no submitter keys registered (mt-eval governance submitter add NAME --public-key KEY.pub)")


@governance_app.command("card")
def card(
    first: Annotated[str, typer.Argument(help="The run to publish: the RESULT.json it released, its audit line "
                                              "hash or its full card's run_card_hash (8+ digits).")],
    second: Annotated[str, typer.Argument(help="The second run of the same bundle (§9.2 agreement).")],
    key: Annotated[Path, opt("The governance signing key (mt-eval keys new).", "--key", "-k")],
    identity: Annotated[Path | None, opt("A vault custodian's identity (opens the stored full cards).",
                                         "--identity", "-i")] = None,
    share: Annotated[list[Path] | None, opt("For a vault held by quorum: a custodian's share file, once per "
                                            "custodian (instead of --identity).", "--share")] = None,
    out_file: Annotated[Path, opt("The public card to write (its signature goes beside it: .sig).",
                                  "--out", "-o")] = Path("public_card.json"),
    governance: GovernanceOpt = Path("governance"),
) -> None:
    """Make the public card of a gold run: no texts, RESULT.json's quantised scores, sealed and signed.

    Refused unless a second run of the same bundle agrees within ±2 % on the composite and every
    weighted metric (Benchmark Spec §9.2), and neither the bundle nor the method is revoked. The
    full cards (texts and all) stay encrypted in the governance folder.

    Example: mt-eval governance card RESULT-1.json RESULT-2.json --identity custodian.key --key gov.key
    """
    from mt_eval.runcard.signing import read_private_key
    from mt_eval.sovereign.custody import opening_key
    from mt_eval.sovereign.public_card import agreed_public_card, write_public_card

    private = read_private_key(key)
    public = agreed_public_card(governance, opening_key(identity, share or []), first, second, private)
    path, sig = write_public_card(public, out_file, key)
    out.print(f"wrote {escape(str(path))} ({public['run_card_hash'][:12]}, composite "
              f"{public['scores'].get('composite')}) and its governance signature {escape(str(sig))}", highlight=False)


@governance_app.command("publish")
def publish(
    cards: Annotated[list[Path], typer.Argument(help="Public sovereign cards (each with its governance .sig).")],
    db: DbOpt = None,
    who: WhoOpt = None,
    governance: GovernanceOpt = Path("governance"),
) -> None:
    """Publish public sovereign cards: accepted on the governance signature, stored without entries.

    A sovereign card cannot be re-scored from texts, so the store checks its seal and a valid
    signature by a registered key of the organisation the card names (mt-eval keys register GOV.pub
    --submitter ORG). It is listed with counts only (no drill-down), as "sovereign — awaiting review"
    until the review gate accepts it; a revoked bundle or method is refused.

    Example: mt-eval governance publish public_card.json --db board.db
    """
    from mt_eval.review.gate import accepted_in
    from mt_eval.sovereign.governance import Governance
    from mt_eval.store import open_store
    from mt_eval.store.sovereign import publish_sovereign, read_sovereign

    gov = Governance(governance)
    pending = [read_sovereign(card) for card in cards]
    for item in pending:
        gov.check_not_revoked(str(item.block.get("bundle_sha256")), str(item.card["method"].get("name")))
    with open_store(db) as store:
        results = publish_sovereign(store, pending, gate=accepted_in)
    for r, item in zip(results, pending, strict=True):
        if r.status == "inserted":
            gov.record({"kind": "publish", "who": who, "run_card_hash": r.run_card_hash,
                        "bundle_sha256": item.block.get("bundle_sha256"), "method": item.card["method"].get("name"),
                        "status": "published"})  # fmt: skip
        out.print(f"{escape(r.path)}: {r.status} ({r.run_card_hash[:12]}, signed by {escape(', '.join(r.signed_by))})",
                  highlight=False)


@governance_app.command("verify")
def verify(card: Annotated[Path, typer.Argument(help="A public sovereign card (with its .sig beside it).")]) -> None:
    """Check a public sovereign card: its seal, no entry results, its governance signature(s).

    Its scores cannot be rebuilt (the texts are withheld, which is why mt-eval verify fails on it);
    what can be checked is that it is sealed and signed. Exit 1 when it is not.

    Example: mt-eval governance verify public_card.json
    """
    from mt_eval.store.sovereign import read_sovereign

    item = read_sovereign(card)
    block = item.block
    signed = ", ".join(f"{c.signature.key_id} ({c.signature.signer or 'unnamed'})" for c in item.signatures)
    out.print(f"{escape(str(card))}: seal holds ({item.card['run_card_hash'][:12]}), results withheld, signed by "
              f"{escape(signed)}; organisation {escape(str(block.get('organisation')))}, bundle "
              f"{str(block.get('bundle_sha256'))[:12]}", highlight=False)


@governance_app.command("promote")
def promote(
    db: DbOpt = None,
    review_db: Annotated[str | None, opt("The governance organisation's private store where the full cards "
                                         "(with texts) were reviewed; default: --db.", "--review-db")] = None,
) -> None:
    """Mark the sovereign cards whose full card community review accepted (§7.2) community-validated.

    Example: mt-eval governance promote --db board.db --review-db private.db
    """
    from contextlib import nullcontext

    from mt_eval.review.gate import accepted_in
    from mt_eval.store import open_store
    from mt_eval.store.sovereign import promote_reviewed

    with open_store(db) as store, (open_store(review_db, must_exist=True) if review_db else nullcontext()) as private:
        promoted = promote_reviewed(store, private, gate=accepted_in)
    out.print(f"{len(promoted)} sovereign card(s) now community-validated"
              + "".join(f"\n  {h}" for h in promoted), highlight=False)


@governance_app.command("rank")
def rank_gold_runs(
    cards: Annotated[list[Path], typer.Argument(help="The public sovereign cards to rank (governance card wrote "
                                                     "them; each names its full card).")],
    vault: Annotated[Path, opt("The vault the gold runs opened.", "--vault")],
    key: Annotated[Path, opt("The governance signing key (mt-eval keys new).", "--key", "-k")],
    identity: Annotated[Path | None, opt("A vault custodian's identity (opens the stored full cards).",
                                         "--identity", "-i")] = None,
    share: Annotated[list[Path] | None, opt("For a vault held by quorum: a custodian's share file, once per "
                                            "custodian (instead of --identity).", "--share")] = None,
    segment: Annotated[str, opt("The secret segment the runs scored.", "--segment")] = "gold_standard",
    out_file: Annotated[Path, opt("The ranking to write (its signature goes beside it: .sig).",
                                  "--out", "-o")] = Path("clusters.json"),
    resamples: Annotated[int, opt("Paired bootstrap resamples (the leaderboard's: 1000).", "--resamples")] = 1000,
    governance: GovernanceOpt = Path("governance"),
) -> None:
    """Rank public sovereign cards of one vault into significance clusters, sealed and signed.

    Opens each card's full card (stored encrypted here), takes its per-entry statistics only when the
    rebuild from its results is the statistics the run sealed, and runs the leaderboard's tests on them
    (paired bootstrap on the composite between neighbours, Holm). The document names each card's
    cluster and rank range only: no p-value, difference or per-entry value (at most log2(k) bits per
    card among k). Publish it with: mt-eval governance publish-ranking clusters.json --db DB

    Example: mt-eval governance rank a.json b.json c.json --vault vault --identity custodian.key --key gov.key
    """
    from mt_eval.errors import UserError
    from mt_eval.runcard.signing import key_signer
    from mt_eval.sovereign.custody import opening_key
    from mt_eval.sovereign.governance import Governance
    from mt_eval.sovereign.ranking import gold_runs, ranking_document, write_ranking

    organisation = Governance(governance).policy().organisation
    if not organisation:
        raise UserError("the governance policy names no organisation",
                        hint='mt-eval governance policy --organisation "NAME"')
    runs = gold_runs(cards, governance, vault, opening_key(identity, share or []), segment)
    document = ranking_document(runs, organisation, key, n_resamples=resamples)
    path, sig = write_ranking(document, out_file, key, key_signer(key))
    for line in document["cards"]:
        out.print(f"  {line['rank']:>7}  cluster {line['cluster']}  {line['run_card_hash'][:12]}", highlight=False)
    out.print(f"wrote {escape(str(path))} ({document['ranking_sha256'][:12]}: {document['systems']} cards of "
              f"{escape(organisation)}) and its governance signature {escape(str(sig))}", highlight=False)


@governance_app.command("publish-ranking")
def publish_ranking(
    ranking: Annotated[Path, typer.Argument(help="A ranking written by governance rank (with its .sig).")],
    db: DbOpt = None,
) -> None:
    """Publish a signed sovereign ranking: the leaderboard then ranks those sovereign cards by its clusters.

    Refused (exit 1, nothing written) unless its seal holds, it is signed by the governance key it
    names, that key is registered here to the organisation it names, and every card it names is a
    published sovereign card of that organisation on its dataset. The cards appear as their own
    ranked board ("sovereign") after their dataset's board: compared among themselves only.

    Example: mt-eval governance publish-ranking clusters.json --db board.db
    """
    from mt_eval.sovereign.ranking import read_ranking
    from mt_eval.store import open_store
    from mt_eval.store.sovereign import publish_ranking as publish

    signed = read_ranking(ranking)
    with open_store(db) as store:
        result = publish(store, signed)
    out.print(f"{escape(result.path)}: {result.status} ({result.ranking_sha256[:12]}, {result.cards} sovereign "
              f"cards ranked, signed by {escape(result.organisation)})", highlight=False)
