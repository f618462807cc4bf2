"""``mt-eval datasets list|show|fetch``: public test sets by name, fetched into the data cache.

Not ``mt-eval dataset`` (singular), which manages the datasets registered in a leaderboard store. A fetched
id is accepted by every ``--corpus`` option (run, score, validate…) as if it were the converted file.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from mt_eval.cli.common import opt, out

catalog_app = typer.Typer(
    help="Public test sets (NTREX-128, FLORES+, WMT via sacrebleu, AmericasNLP, Tatoeba) fetched by id into the "
         "data cache (MT_EVAL_DATA) and usable as --corpus ID. Not `mt-eval dataset`, which manages the datasets "
         "registered in a leaderboard store.",
    no_args_is_help=True)

IdArg = Annotated[str, typer.Argument(help="A catalogue id, e.g. ntrex128:eng-spa or wmt:wmt21:en-de.")]


@catalog_app.command("list")
def list_command(
    lang: Annotated[str | None, opt("Only families covering this language (e.g. crk, yor, spa_Latn).")] = None,
    search: Annotated[str | None, opt("Only families whose name, title or id pattern contains WORD.")] = None,
) -> None:
    """List the catalogue: id patterns, licences and what is known about each test set's exposure.

    Example: mt-eval datasets list --lang yor
    """
    from mt_eval.catalog import list_families
    from mt_eval.render.catalog import catalog_table

    found = list_families(lang=lang, search=search)
    if not found:
        out.print("no catalogue family matches")
        return
    out.print(catalog_table(found))


@catalog_app.command("show")
def show_command(dataset_id: IdArg) -> None:
    """Show a family's source, licence terms, citation, version and exposure facts.

    Example: mt-eval datasets show flores-plus:devtest:eng_Latn-spa_Latn
    """
    from mt_eval.catalog import FAMILIES, Cache, data_dir, plan
    from mt_eval.render.catalog import family_lines

    family = FAMILIES.get(dataset_id) or plan(dataset_id).family
    accepted = Cache(data_dir(os.environ)).accepted(family.name, family.licence)
    for line in family_lines(family, None if dataset_id == family.name else dataset_id, accepted):
        out.print(line)


@catalog_app.command("fetch")
def fetch_command(
    dataset_id: IdArg,
    accept_licence: Annotated[bool, opt("Accept the family's licence terms (shown by `datasets show`); asked once.",
                                        "--accept-licence")] = False,
    offline: Annotated[bool, opt("Use the cache only; refuse to download (also MT_EVAL_OFFLINE=1).",
                                 "--offline")] = False,
    refresh: Annotated[bool, opt("Convert again from the upstream files (re-checked against their sha256).",
                                 "--refresh")] = False,
) -> None:
    """Fetch a test set, check every file's sha256 and convert it to a corpus file in the cache.

    Example: mt-eval datasets fetch ntrex128:eng-spa --accept-licence
    """
    from mt_eval.catalog import Cache, FetchOptions, data_dir, fetch_corpus
    from mt_eval.render.catalog import fetched_line

    fetched = fetch_corpus(dataset_id, cache=Cache(data_dir(os.environ)),
                           options=FetchOptions.from_env(os.environ, offline=offline),
                           accept_licence=accept_licence, refresh=refresh)
    out.print(fetched_line(fetched))
