"""Human review campaigns (Benchmark Spec §7.3): ``create`` one from published cards, ``export`` a
reviewer's batch as an offline HTML file, ``import`` the result it saves, follow its ``status`` and read
its ``report`` (quality control, agreement, adjudication, the §7.2 gate). The work is in
``mt_eval.review``, the tables in ``render/review.py``, the page in ``render/html/review_offline.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import err, opt, out
from mt_eval.cli.store import DbOpt
from mt_eval.errors import UserError

review_app = typer.Typer(help="Human review campaigns: blind, stratified, offline-capable.", no_args_is_help=True)
CampaignArg = Annotated[str, typer.Argument(help="The campaign's name (or uid).")]


@review_app.command("create")
def create(
    card: Annotated[list[str], opt("A published card's run_card_hash (or 6+ leading digits); repeat for "
                                   "several methods on the same dataset.", "--card")],
    db: DbOpt = None,
    size: Annotated[int, opt("Entries to sample (stratified by difficulty and register).", "--size")] = 100,
    seed: Annotated[int, opt("Seed of the sample and of the blind order.", "--seed")] = 0,
    name: Annotated[str | None, opt("Campaign name (default: review-<card>-<random>).", "--name")] = None,
    controls: Annotated[float, opt("Share of control items to add (0 adds none: then no reviewer can pass "
                                   "quality control and the gate accepts nothing).", "--controls")] = 0.10,
    reference: Annotated[str, opt("When reviewers see an entry's reference: after (every translation of the "
                                  "entry rated, on the web; an offline file never holds it) or never.",
                                  "--reference")] = "after",
) -> None:
    """Create a review campaign over published cards: a stratified sample with control items.

    Runs with gold_standard or held_out entries are refused (unless the store is a governance store).

    Example: mt-eval review create --card 3f2a9c1b --card 77d0e4aa --size 100 --seed 1 --name es-oct
    """
    from mt_eval.render.review import render_created
    from mt_eval.review.campaign import create_campaign
    from mt_eval.store import open_store

    with open_store(db) as store:
        summary = create_campaign(store, card, size=size, seed=seed, name=name, control_share=controls,
                                  reference_policy=reference)
    render_created(summary, out)


@review_app.command("export")
def export(
    campaign: CampaignArg,
    reviewer: Annotated[str, opt("Who will review this batch.", "--reviewer")],
    output: Annotated[Path, opt("The HTML file to write.", "-o", "--output")],
    db: DbOpt = None,
) -> None:
    """Write a reviewer's batch as one self-contained HTML file (works offline, saves a JSON result).

    The file holds the reviewer's token: send it to that reviewer only. Exporting again for the same
    reviewer issues a new token: their older file is then refused.

    Example: mt-eval review export es-oct --reviewer ana -o ana.html
    """
    from mt_eval.render.html.review_offline import batch_page
    from mt_eval.review.campaign import assign
    from mt_eval.runcard.io import write_atomic
    from mt_eval.store import open_store

    if not output.parent.is_dir():
        raise UserError("output folder does not exist", file=str(output))
    with open_store(db) as store:
        batch = assign(store, campaign, reviewer)
    write_atomic(output, batch_page(batch).encode("utf-8"), what="the batch")
    err.print(f"wrote {escape(str(output))}: {len(batch.groups)} entries, {batch.item_count} items for "
              f"{escape(batch.reviewer)}", highlight=False)


@review_app.command("import")
def import_(
    result: Annotated[Path, typer.Argument(help="The JSON result a reviewer saved from their batch.")],
    db: DbOpt = None,
) -> None:
    """Store a reviewer's ratings: the token and every item hash are checked first (all or nothing).

    Example: mt-eval review import review-es-oct-ana.json
    """
    from mt_eval.render.review import render_imported
    from mt_eval.review.campaign import import_ratings
    from mt_eval.review.offline import read_result
    from mt_eval.store import open_store

    parsed = read_result(result)
    with open_store(db) as store:
        summary = import_ratings(store, parsed, file=str(result))
    render_imported(summary, out)


@review_app.command("status")
def status(campaign: CampaignArg, db: DbOpt = None) -> None:
    """Show a campaign's progress: per reviewer, items rated and time per item.

    Example: mt-eval review status es-oct
    """
    from mt_eval.render.review import render_status
    from mt_eval.review.report import campaign_status
    from mt_eval.store import open_store

    with open_store(db) as store:
        render_status(campaign_status(store, campaign), out)


@review_app.command("report")
def report(
    campaign: CampaignArg,
    db: DbOpt = None,
    as_json: Annotated[bool, opt("Print the report as JSON.", "--json")] = False,
) -> None:
    """Quality control per reviewer, agreement (ordinal α with CI, AC2), the gate verdict per method and
    the outputs to adjudicate.

    Example: mt-eval review report es-oct
    """
    from mt_eval.render.review import render_report
    from mt_eval.review.report import campaign_report, report_json
    from mt_eval.store import open_store

    with open_store(db) as store:
        made = campaign_report(store, campaign)
    if as_json:
        typer.echo(json.dumps(report_json(made), ensure_ascii=False, indent=1))
    else:
        render_report(made, out)
