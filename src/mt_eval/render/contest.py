"""Text for ``mt-eval contest``: one contest's rules and entries, the list of contests.

It renders a ``contest.state.ContestView`` (what the viewer may see, decided by ``contest_view``), never the
organiser's state directly, so a table cannot show a hidden result by mistake.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table

from mt_eval.contest.state import ContestState, ContestView, contest_view

HIDDEN = "hidden until close"


def _num(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def rules_lines(view: ContestView) -> list[str]:
    """The contest's rules: what an entrant agrees to and is measured on."""
    deadline = f", deadline {view.deadline}" if view.deadline else ""
    return [
        f"contest {escape(view.id)}: {escape(view.title)} ({view.state}{deadline})",
        f"organiser {escape(view.organiser)}; dataset {escape(view.dataset)} ({escape(view.languages)}), "
        f"licence {escape(view.licence)}; visibility {view.visibility}",
        f"dev split {view.dev_size} entries (public), secret split {view.secret_size} entries (sealed); "
        f"qualify: {escape(view.primary_metric)} ≥ {view.threshold:g} on the dev split",
        "results: " + (HIDDEN if view.results_hidden else "shown")
        + ("; entrants anonymised" if view.anonymise else ""),
    ]


def entries_table(view: ContestView) -> Table:
    """One row per entry; secret-split columns say "hidden until close" while results are hidden."""
    table = Table(show_edge=False, pad_edge=False)
    for column in ("#", "entrant", "kind", "state", "dev", view.primary_metric, "95% CI", "rank"):
        table.add_column(column, overflow="fold")
    for e in view.entries:
        executed = e.state == "executed"
        value = HIDDEN if view.results_hidden and executed else _num(e.value)
        ci = "" if e.ci is None else f"{e.ci[0]:.2f}–{e.ci[1]:.2f}"
        rank = "" if e.rank is None else str(e.rank)
        table.add_row(str(e.number), escape(e.entrant), e.kind, e.state, _num(e.dev_score), value, ci, rank)
    return table


def list_table(states: Sequence[ContestState]) -> Table:
    """``contest list``: one row per contest, as the public sees it (no result)."""
    table = Table(show_edge=False, pad_edge=False)
    for column in ("id", "title", "languages", "state", "entries", "visibility", "deadline"):
        table.add_column(column, overflow="fold")
    for state in states:
        view = contest_view(state)
        table.add_row(escape(view.id), escape(view.title), escape(view.languages), view.state, str(len(view.entries)),
                      view.visibility, view.deadline or "")
    return table


def ranking_table(document: Mapping[str, Any]) -> Table:
    """``contest rank``: the organiser's table of the signed ranking (rank, cluster, value, CI)."""
    table = Table(show_edge=False, pad_edge=False)
    for column in ("rank", "cluster", "entry", escape(str(document["metric"])), "95% CI"):
        table.add_column(column)
    for d in document["entries"]:
        ci = "" if not d.get("ci") else f"{d['ci'][0]:.2f}–{d['ci'][1]:.2f}"
        table.add_row(str(d["rank"]), str(d["cluster"]), str(d["entry"]), _num(d["value"]), ci)
    return table
