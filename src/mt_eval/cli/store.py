"""Leaderboard store commands: ``publish`` verified cards, show the ``leaderboard``, ``export`` rows.

The store is a SQLite file by default (``--db`` or ``$MT_EVAL_DB``, else ``./mt-eval.db``) or a
PostgreSQL URL; the work is in ``mt_eval.store``, the table in ``render/leaderboard.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import DEFAULT_CACHE_PATH, CometModelOpt, JudgeCacheOpt, JudgeOpt, err, opt, opt_in_inputs, out
from mt_eval.errors import UserError

if TYPE_CHECKING:
    from mt_eval.store.query import Filters

DbOpt = Annotated[str | None, opt("Store: a SQLite file or a database URL (postgresql+psycopg://…); "
                                  "default $MT_EVAL_DB, else ./mt-eval.db.", "--db", metavar="<path|url>")]
DatasetOpt = Annotated[str | None, opt("Only this dataset: its id, sha256 or a sha256 prefix (8+).", "--dataset")]
ClassOpt = Annotated[str | None, opt("Only this method class (llm, rbmt, nmt…).", "--method-class")]
TierOpt = Annotated[str | None, opt("Only this quality tier.", "--tier")]
VerificationOpt = Annotated[str | None, opt("Only this verification tier (self-benchmarked, gds-verified…).",
                                            "--verification")]
SupersededOpt = Annotated[bool, opt("Also the cards a rescore replaced (listed beside their successors).",
                                    "--include-superseded")]


def _filters(dataset: str | None, method_class: str | None, tier: str | None, verification: str | None,
             include_superseded: bool = False, clean_only: bool = False) -> Filters:
    from mt_eval.store.query import Filters

    return Filters(dataset=dataset, method_class=method_class, tier=tier, verification=verification,
                   include_superseded=include_superseded, clean_only=clean_only)


def publish(
    cards: Annotated[list[Path], typer.Argument(help="Run cards to publish (on registered datasets).")],
    db: DbOpt = None,
    submitter: Annotated[str | None, opt("Who publishes the cards (recorded with them).", "--submitter")] = None,
    judge: JudgeOpt = None, judge_cache: JudgeCacheOpt = DEFAULT_CACHE_PATH, comet_model: CometModelOpt = None,
) -> None:
    """Rescore each card's outputs against its registered dataset and add them all in one transaction.

    The card's dataset must be registered first (mt-eval dataset register CORPUS): its references, scores
    and dataset block are never trusted. The store keeps the card when its own rescoring gives exactly it,
    else the store's card, printing each difference (one line per metric that changed). A card with
    gold_standard or held_out entries is refused (those are scored through governance), as is a card
    edited after sealing (naming the first changed field, exit 1); nothing of the batch is written. A
    card already published is left as it is. Signatures beside a card (<card>.sig, mt-eval sign) are
    checked and kept: an invalid one is refused; a store that requires signatures (mt-eval keys require
    on) refuses a card not signed by a registered, unrevoked key of the --submitter.

    A card scored with generated judges or comet_score is rescored as verify does it, with the same
    judge cards (--judge, answers from --judge-cache) or checkpoint (--comet-model); without them it is
    refused, naming the judge or checkpoint.

    Example: mt-eval publish runs/demo/run_card.json --submitter me
    """
    from mt_eval.store import open_store
    from mt_eval.store.publish import publish as publish_cards
    from mt_eval.store.publish import read_for_publish

    judges, comet = opt_in_inputs(judge, judge_cache, comet_model)
    pending = [read_for_publish(card, judges, comet) for card in cards]  # all checked before the store is opened
    with open_store(db) as store:
        results = publish_cards(store, pending, submitter=submitter)
    for r in results:
        signed = f", signed by {escape(', '.join(r.signed_by))}" if r.signed_by else ""
        kept = f", the store's rescoring of {r.submitted_hash[:12]}" if r.recomputed else ""
        out.print(f"{escape(r.path)}: {r.status} ({r.run_card_hash[:12]}{kept}{signed})", highlight=False)
        for line in r.differences:
            out.print(f"  {escape(line)}", highlight=False)


def leaderboard(
    db: DbOpt = None, dataset: DatasetOpt = None,
    sort: Annotated[str, opt("Order shown: rank (the ranking's), composite, cost_adjusted, cost_per_entry, "
                             "latency or a metric id.", "--sort")] = "rank",
    method_class: ClassOpt = None, tier: TierOpt = None, verification: VerificationOpt = None,
    limit: Annotated[int, opt("Rank the top N cards of each dataset by its ranking key.", "--limit")] = 50,
    as_json: Annotated[bool, opt("Print the rows as JSON, best first.", "--json")] = False,
    include_superseded: SupersededOpt = False,
    clean_only: Annotated[bool, opt("Only methods whose declared training cut-off predates their test set's "
                                    "public release (catalogue test sets; unknown is never clean).",
                                    "--clean-only")] = False,
) -> None:
    """Published cards ranked as significance clusters ("1–3") by each dataset's ranking key.

    A registered dataset ranks by its primary metric (chrF++ unless set otherwise: mt-eval dataset
    set-primary); a dataset nobody registered by the composite, among cards with the same available
    metrics, profile and composite rule. Cards that cannot be ranked are listed apart with the reason;
    the composite and tier are shown on every row.

    Example: mt-eval leaderboard --dataset ntrex128-eng-spa-demo
    """
    from mt_eval.render.leaderboard import render
    from mt_eval.review.gate import accepted_in
    from mt_eval.store import open_store
    from mt_eval.store.board import as_json as boards_json
    from mt_eval.store.board import leaderboard as board

    with open_store(db, must_exist=True) as store:
        boards = board(store, _filters(dataset, method_class, tier, verification, include_superseded, clean_only),
                       sort=sort, limit=limit, gate=accepted_in)
    if as_json:
        typer.echo(boards_json(boards))
    else:
        render(boards, out)


def export(
    db: DbOpt = None, dataset: DatasetOpt = None,
    fmt: Annotated[str, opt("csv or jsonl.", "--format")] = "csv",
    output: Annotated[Path | None, opt("Write here instead of standard output.", "-o", "--output")] = None,
    entries: Annotated[bool, opt("Per-entry rows (entry id, output, per-entry metric values).", "--entries")] = False,
    method_class: ClassOpt = None, tier: TierOpt = None, verification: VerificationOpt = None,
    sign_key: Annotated[Path | None, opt("Sign the export with this private key (the store's): writes "
                                         "<output>.sig; needs -o.", "--sign-key")] = None,
    include_superseded: SupersededOpt = False,
) -> None:
    """Every leaderboard row (or, with --entries, every per-entry row) as CSV or JSON lines.

    With --sign-key, a detached signature of the exported bytes goes beside the file (FILE.sig);
    anyone can check it with: mt-eval keys check FILE --key store.pub.

    Example: mt-eval export --format jsonl -o board.jsonl --sign-key store.key
    """
    from mt_eval.review.gate import accepted_in
    from mt_eval.runcard.signing import key_signer, read_private_key
    from mt_eval.store import open_store
    from mt_eval.store.board import export_text, write_export

    if output is not None and not output.parent.is_dir():
        raise UserError("output folder does not exist", file=str(output))
    if sign_key is not None and output is None:
        raise UserError("--sign-key needs -o FILE: the signature is written beside the file")
    key = read_private_key(sign_key) if sign_key is not None else None  # a bad key fails before the query
    with open_store(db, must_exist=True) as store:
        text = export_text(store, _filters(dataset, method_class, tier, verification, include_superseded), fmt=fmt,
                           entries=entries, gate=accepted_in)
    if output is None:
        typer.echo(text, nl=False)
        return
    written = write_export(text, output, key, key_signer(sign_key) if sign_key is not None else None)
    err.print(f"wrote {escape(', '.join(str(p) for p in written))}", highlight=False)
