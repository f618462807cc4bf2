"""``mt-eval governance ownership``: §8.3 ownership transfer of a method that reached Deployable on gold with
human validation (status, offer, accept, decline, transfer, list).

The work is in ``sovereign/ownership.py``; each step is an event of the governance audit log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import opt, out

ownership_app = typer.Typer(help="Ownership transfer (§8.3) of methods that reached Deployable on gold and passed "
                                 "human validation: offer, the developer's signed decision, possession.",
                            no_args_is_help=True)

GovOpt = Annotated[Path, opt("The governance folder (audit.jsonl, stored full cards).", "--governance")]
WhoOpt = Annotated[str | None, opt("Who does this (recorded in the audit log).", "--who")]
BundleArg = Annotated[str, typer.Argument(help="The method's bundle sha256 (12+ leading digits).")]
KeyOpt = Annotated[Path | None, opt("The developer's submitter key (the one that signed the submission), "
                                    "when it is at hand here.", "--key", "-k")]
SignatureOpt = Annotated[Path | None, opt("The developer's decision file (ownership sign), instead of --key.",
                                          "--signature")]


@ownership_app.command("offer")
def offer(
    run: Annotated[str, typer.Argument(help="The gold run: its RESULT.json, audit line hash or full card's "
                                            "run_card_hash (8+ digits).")],
    terms: Annotated[Path, opt("The terms of the transfer (their sha256 is recorded; a copy is kept).", "--terms")],
    review_db: Annotated[str, opt("The store where governance reviewed the full card (§7.2 gate): a SQLite file "
                                  "or a database URL.", "--review-db", metavar="<path|url>")],
    identity: Annotated[Path | None, opt("A vault custodian's identity (opens the stored full card).",
                                         "--identity", "-i")] = None,
    share: Annotated[list[Path] | None, opt("For a vault held by quorum: a custodian's share file, once per "
                                            "custodian (instead of --identity).", "--share")] = None,
    who: WhoOpt = None,
    governance: GovOpt = Path("governance"),
) -> None:
    """Offer ownership transfer of the method of a gold run: refused unless its composite is at or above
    the Deployable threshold and human validation accepted its full card.

    Example: mt-eval governance ownership offer RESULT-1.json --terms terms.txt --review-db private.db -i custodian.key
    """
    from mt_eval.review.gate import review_verdict
    from mt_eval.sovereign.custody import opening_key
    from mt_eval.sovereign.governance import Governance
    from mt_eval.sovereign.ownership import offer as make_offer
    from mt_eval.sovereign.public_card import full_card_hash, load_full_card
    from mt_eval.store import open_store

    digest = full_card_hash(governance, run)
    card = load_full_card(governance, digest, opening_key(identity, share or []))
    with open_store(review_db, must_exist=True) as store:
        verdict = review_verdict(store, digest)
    state = make_offer(Governance(governance), card, verdict, terms, who)
    out.print(f"offered ownership transfer of {escape(state.method)} (bundle {state.bundle_sha256}) to "
              f"{escape(state.submitter)}: terms sha256 {state.terms_sha256}, offer {state.offer_event}",
              highlight=False)


@ownership_app.command("sign")
def sign(
    bundle: Annotated[str, typer.Argument(help="The bundle sha256 (all 64 digits, as the offer names it).")],
    decision: Annotated[str, opt("accept or decline.", "--decision")],
    terms: Annotated[Path, opt("The terms document as governance sent it.", "--terms")],
    offer_event: Annotated[str, opt("The offer's audit line hash (64 digits, as ownership offer printed it).",
                                    "--offer")],
    key: Annotated[Path, opt("Your submitter key (the one that signed the submission).", "--key", "-k")],
    out_file: Annotated[Path, opt("The decision file to write (send it to governance).", "--out", "-o")],
) -> None:
    """Sign your decision on an ownership offer, as the developer, where your key is: no governance folder.

    Example: mt-eval governance ownership sign BUNDLE_SHA256 --decision accept --terms terms.txt
    --offer OFFER_HASH --key alice.key -o decision.json
    """
    from mt_eval.sovereign.ownership import write_decision

    path = write_decision(out_file, decision, bundle.strip(), terms, offer_event.strip(), key)
    out.print(f"wrote {escape(str(path))}: {decision} of bundle {bundle.strip()[:12]}…; governance records it with "
              f"mt-eval governance ownership {decision} BUNDLE --signature {escape(str(path))}", highlight=False)


def _decide(bundle: str, decision: str, key: Path | None, signature: Path | None, governance: Path,
            reason: str = "") -> None:
    from mt_eval.errors import UserError
    from mt_eval.sovereign.governance import Governance
    from mt_eval.sovereign.ownership import decide, read_decision, sign_decision

    if (key is None) == (signature is None):
        raise UserError("give the developer's --key or their decision file --signature (one of them)")
    gov = Governance(governance)
    signed = read_decision(signature, decision) if signature is not None else None
    state = decide(gov, bundle, decision, signed or sign_decision(gov, bundle, decision, key or Path()), reason)
    out.print(f"{escape(state.method)} (bundle {state.bundle_sha256[:12]}…): {state.state}, signed by "
              f"{escape(state.submitter)}", highlight=False)


@ownership_app.command("accept")
def accept(bundle: BundleArg, key: KeyOpt = None, signature: SignatureOpt = None,
           governance: GovOpt = Path("governance")) -> None:
    """Record the developer's acceptance of the offered terms: signed with the submitter key that submitted
    the bundle (--key here, or the decision file they made with ownership sign).

    Example: mt-eval governance ownership accept 3f2a9c1b0e7d --signature decision.json
    """
    _decide(bundle, "accept", key, signature, governance)


@ownership_app.command("decline")
def decline(
    bundle: BundleArg,
    key: KeyOpt = None,
    signature: SignatureOpt = None,
    reason: Annotated[str, opt("Why (recorded in the audit log).", "--reason")] = "",
    governance: GovOpt = Path("governance"),
) -> None:
    """Record the developer declining the offered terms (signed like accept); governance may offer new terms.

    Example: mt-eval governance ownership decline 3f2a9c1b0e7d --key alice.key --reason "terms too broad"
    """
    _decide(bundle, "decline", key, signature, governance, reason)


@ownership_app.command("transfer")
def transfer(
    bundle: Annotated[Path, typer.Argument(help="The method's bundle as governance holds it (folder or archive).")],
    who: WhoOpt = None,
    governance: GovOpt = Path("governance"),
) -> None:
    """Record possession of an accepted method: the bundle's files must hash to the sha256 that was run.

    Example: mt-eval governance ownership transfer bundles/acme --who board
    """
    from mt_eval.sovereign.bundle import load_bundle
    from mt_eval.sovereign.governance import Governance
    from mt_eval.sovereign.ownership import transfer as record_transfer

    state = record_transfer(Governance(governance), load_bundle(bundle), who)
    out.print(f"{escape(state.method)} (bundle {state.bundle_sha256}): transferred", highlight=False)


@ownership_app.command("status")
def status(bundle: BundleArg, governance: GovOpt = Path("governance")) -> None:
    """Show a method's ownership state and its trail (each step's audit event, who and when).

    Example: mt-eval governance ownership status 3f2a9c1b0e7d
    """
    from mt_eval.errors import UserError
    from mt_eval.render.governance import ownership_table
    from mt_eval.sovereign.governance import Governance
    from mt_eval.sovereign.ownership import ownership_of

    state = ownership_of(Governance(governance), bundle)
    if state is None:
        raise UserError(f"bundle {bundle[:12]}… has no ownership record",
                        hint="mt-eval governance ownership list shows the methods that have one")
    out.print(f"{escape(state.method)} (bundle {state.bundle_sha256}, submitter {escape(state.submitter)}): "
              f"{state.state}" + (f"; terms sha256 {state.terms_sha256}, offer {state.offer_event}"
                                  if state.offer_event else ""), highlight=False)
    out.print(ownership_table(state.trail))


@ownership_app.command("list")
def list_methods(governance: GovOpt = Path("governance")) -> None:
    """List every method with an ownership record and its state.

    Example: mt-eval governance ownership list
    """
    from mt_eval.sovereign.governance import Governance
    from mt_eval.sovereign.ownership import ownerships

    found = ownerships(Governance(governance))
    if not found:
        out.print("no ownership records (mt-eval governance ownership offer RUN --terms TERMS)", highlight=False)
    for o in found.values():
        out.print(f"{o.bundle_sha256[:16]}  {escape(o.method)}  {escape(o.submitter)}  {o.state}  "
                  f"(gold run {o.run_card_hash[:12]})", highlight=False)
