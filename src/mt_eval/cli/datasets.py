"""Registered datasets: ``dataset register|list|show|primary-metric``.

The work is in ``store/datasets.py``; ``publish`` rescores every card against the dataset registered here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import SrcLangOpt, TgtLangOpt, opt, out
from mt_eval.cli.store import DbOpt

if TYPE_CHECKING:
    from mt_eval.store.datasets import DatasetSummary

dataset_app = typer.Typer(help="Datasets registered in a store: the texts every published card is rescored against.",
                          no_args_is_help=True)

RefArg = Annotated[str, typer.Argument(help="The dataset: its id, ID@VERSION, or its sha256 (or 8+ hex digits).")]
MetricOpt = Annotated[str, opt("The leaderboard's ranking key for this dataset: chrf_plus_plus, composite, "
                               "profile:<calibrated profile id> or any metric id.", "--primary-metric")]


def _line(d: DatasetSummary) -> str:
    secret = f", {d.secret_count} secret (texts not stored)" if d.secret_count else ""
    return (f"{d.dataset_id}@{d.version} {d.language_pair} sha256 {d.sha256[:12]}: {d.entry_count} entries{secret}, "
            f"ranked by {d.primary_metric}, {d.cards} cards")


def _as_dict(d: DatasetSummary) -> dict[str, object]:
    return {"id": d.dataset_id, "version": d.version, "sha256": d.sha256, "language_pair": d.language_pair,
            "source_language": d.source_language, "target_language": d.target_language, "licence": d.licence,
            "attribution": d.attribution, "entry_count": d.entry_count, "secret_count": d.secret_count,
            "primary_metric": d.primary_metric, "registered_at": d.registered_at.isoformat(),
            "registered_by": d.registered_by, "cards": d.cards}  # fmt: skip


@dataset_app.command("register")
def register(
    corpus: Annotated[Path, typer.Argument(help="Corpus file (.json, .jsonl, .tsv), as the cards were scored on.")],
    db: DbOpt = None,
    primary_metric: MetricOpt = "chrf_plus_plus",
    source_lang: SrcLangOpt = None, target_lang: TgtLangOpt = None,
    by: Annotated[str | None, opt("Who registers it (recorded).", "--by")] = None,
) -> None:
    """Register a corpus in a store: its entries, licence, attribution and sha256 (the dataset.sha256 cards
    record). publish then rescores every card on it against these references; a card on a dataset not
    registered is refused. The same file again changes nothing; the same id and version with other content
    is refused. Entries of a secret segment (gold_standard, held_out) are stored without their texts.

    Example: mt-eval dataset register examples/ntrex128-eng-spa.json --db board.db
    """
    from mt_eval.corpus import load_corpus
    from mt_eval.store import open_store
    from mt_eval.store.datasets import check_primary_metric, register_dataset

    metric = check_primary_metric(primary_metric)  # a typo fails before the corpus is read
    dataset = load_corpus(corpus, source_lang=source_lang, target_lang=target_lang)
    with open_store(db) as store:
        done = register_dataset(store, dataset, primary_metric=metric, registered_by=by)
    out.print(f"{escape(str(corpus))}: {done.status} ({escape(_line(done.dataset))})", highlight=False)


@dataset_app.command("list")
def list_command(
    db: DbOpt = None,
    as_json: Annotated[bool, opt("Print them as JSON.", "--json")] = False,
) -> None:
    """Every registered dataset with its version, sha256, ranking key and number of published cards.

    Example: mt-eval dataset list --db board.db
    """
    from mt_eval.store import open_store
    from mt_eval.store.datasets import list_datasets

    with open_store(db, must_exist=True) as store:
        found = list_datasets(store)
    if as_json:
        typer.echo(json.dumps([_as_dict(d) for d in found], ensure_ascii=False, indent=2))
        return
    if not found:
        out.print("no registered datasets (mt-eval dataset register CORPUS --db …)", highlight=False)
    for d in found:
        out.print(escape(_line(d)), highlight=False)


@dataset_app.command("show")
def show(ref: RefArg, db: DbOpt = None) -> None:
    """One registered dataset, every recorded field, as JSON (licence, attribution, sha256, ranking key…).

    Example: mt-eval dataset show ntrex128-eng-spa-demo --db board.db
    """
    from mt_eval.store import open_store
    from mt_eval.store.datasets import show_dataset

    with open_store(db, must_exist=True) as store:
        found = show_dataset(store, ref)
    typer.echo(json.dumps(_as_dict(found), ensure_ascii=False, indent=2))


@dataset_app.command("primary-metric")
def primary_metric_command(
    ref: RefArg,
    metric: Annotated[str, typer.Argument(help="chrf_plus_plus, composite, profile:<id> or any metric id.")],
    db: DbOpt = None,
) -> None:
    """Change the dataset's ranking key: the leaderboard re-ranks its cards by it, nothing is re-published
    (composite and tier stay on every card and page).

    Example: mt-eval dataset primary-metric ntrex128-eng-spa-demo composite --db board.db
    """
    from mt_eval.store import open_store
    from mt_eval.store.datasets import set_primary_metric

    with open_store(db, must_exist=True) as store:
        done = set_primary_metric(store, ref, metric)
    out.print(f"{escape(done.dataset_id)}@{escape(done.version)}: ranked by {escape(done.primary_metric)}",
              highlight=False)
