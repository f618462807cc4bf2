"""A contest's state, read from its audit log: the one read function every page and command uses
(``contest_state``), and what the public may see of it (``contest_view``).

Contest states: ``open`` → ``closed`` (after ``contest.close`` every change is refused: ``require_open``).
Entry states: ``submitted`` → ``qualified`` | ``not-qualified`` → ``approved`` (the manifest's quorum of
custodian approvals) → ``executed`` | ``failed``. Events (``Governance.record``, kind ``contest.<verb>``), with
the fields this reader takes (every other field stays in the log for the audit):

* ``contest.create``: ``manifest_sha256`` (``manifest.py``)
* ``contest.submit``: ``entry`` (1, 2, …), ``entrant``, ``entry_kind`` (``bundle``/``model``), ``sha256``
* ``contest.qualify``: ``entry``, ``passed`` (bool), ``score`` (the primary metric on the dev split), ``reason``
* ``contest.approve``: ``entry``, ``custodian`` (a custodian's name or share id)
* ``contest.execute``: ``entry``, ``value`` (the primary metric on the secret split), ``ci`` ([low, high]),
  ``composite``, ``full_run_card_hash`` (the encrypted full card with the per-segment statistics)
* ``contest.fail``: ``entry``, ``reason``
* ``contest.rank``: ``ranking_sha256``, ``metric``, ``ranks`` ([{``entry``, ``rank``, ``cluster``}]); the last counts
* ``contest.close``: ``ranking_sha256``; ``contest.publish``: ``store``, ``cards`` (after close: not a change)

A log failing verification is refused with one line (``Governance.events``), so a page never shows a state
someone edited in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mt_eval.contest.manifest import ContestManifest, governance, load_contest
from mt_eval.errors import UserError

SUBMITTED, QUALIFIED, NOT_QUALIFIED, APPROVED, EXECUTED, FAILED = (
    "submitted", "qualified", "not-qualified", "approved", "executed", "failed")
ENTRY_STATES = (SUBMITTED, QUALIFIED, NOT_QUALIFIED, APPROVED, EXECUTED, FAILED)
OPEN, CLOSED = "open", "closed"


@dataclass(frozen=True)
class EntryState:
    """One entry as the log stands (the organiser's view: everything)."""

    number: int
    entrant: str
    kind: str
    sha256: str
    submitted_at: str
    state: str = SUBMITTED
    dev_score: float | None = None
    qualify_reason: str | None = None
    approvals: tuple[str, ...] = ()
    value: float | None = None
    ci: tuple[float, float] | None = None
    composite: float | None = None
    full_run_card_hash: str | None = None
    failure: str | None = None
    rank: int | None = None
    cluster: int | None = None


@dataclass(frozen=True)
class Ranking:
    """The latest ``contest.rank`` event: each entry's competition rank and cluster."""

    sha256: str
    metric: str
    ranks: Mapping[int, tuple[int, int]]  # entry number -> (rank, cluster)
    event: str


@dataclass(frozen=True)
class ContestState:
    """Everything the log says about one contest (organiser-only: use ``contest_view`` for anyone else)."""

    root: Path
    manifest: ContestManifest
    entries: tuple[EntryState, ...]
    closed: bool = False
    closed_at: str | None = None
    ranking: Ranking | None = None
    head: str = ""  # the last event's line hash: what a published export pins
    problems: tuple[str, ...] = ()  # events that did not count (illegal transitions, changes after close)

    @property
    def state(self) -> str:
        return CLOSED if self.closed else OPEN

    def entry(self, number: int) -> EntryState:
        for e in self.entries:
            if e.number == number:
                return e
        raise UserError(f"contest {self.manifest.id!r} has no entry {number}", entry=number,
                        hint=f"it has entries 1-{len(self.entries)}" if self.entries else "nothing was submitted")

    def pseudonyms(self) -> dict[str, str]:
        """Entrant name -> "Entrant k", k the order of the entrant's first submission."""
        names: dict[str, str] = {}
        for e in self.entries:
            names.setdefault(e.entrant, f"Entrant {len(names) + 1}")
        return names


def read_events(root: Path) -> list[dict[str, Any]]:
    """The contest log's events (``UserError``, one line, when it fails verification)."""
    return governance(root).events()


def _number(ev: Mapping[str, Any]) -> int | None:
    n = ev.get("entry")
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _ci(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list | tuple) and len(value) == 2 and all(_float(v) is not None for v in value):
        return float(value[0]), float(value[1])
    return None


LEGAL = {"contest.qualify": (SUBMITTED,), "contest.approve": (QUALIFIED,), "contest.execute": (APPROVED,),
         "contest.fail": (APPROVED,)}
"""The state an entry must be in for each event to count: the writers check it, and the reader checks again, so an
event logged around them (an execute no custodian approved) changes nothing and is listed in ``problems``."""


def _apply(entry: EntryState, ev: Mapping[str, Any], quorum: int) -> EntryState:
    kind = ev["kind"]
    if kind == "contest.qualify":
        return replace(entry, state=QUALIFIED if ev.get("passed") is True else NOT_QUALIFIED,
                       dev_score=_float(ev.get("score")), qualify_reason=ev.get("reason"))
    if kind == "contest.approve":
        approvals = tuple(dict.fromkeys((*entry.approvals, str(ev.get("custodian")))))
        return replace(entry, approvals=approvals, state=APPROVED if len(approvals) >= quorum else entry.state)
    if kind == "contest.execute":
        return replace(entry, state=EXECUTED, value=_float(ev.get("value")), ci=_ci(ev.get("ci")),
                       composite=_float(ev.get("composite")), full_run_card_hash=ev.get("full_run_card_hash"))
    if kind == "contest.fail":
        return replace(entry, state=FAILED, failure=str(ev.get("reason") or "failed"))
    return entry


def _ranking(ev: Mapping[str, Any]) -> Ranking:
    ranks = {int(r["entry"]): (int(r["rank"]), int(r["cluster"])) for r in ev.get("ranks") or []}
    return Ranking(str(ev.get("ranking_sha256")), str(ev.get("metric")), ranks, str(ev["hash"]))


def contest_state(root: Path) -> ContestState:
    """The contest at ``root`` as its verified log stands (the manifest checked against contest.create)."""
    root = Path(root)
    events = read_events(root)  # read and verified once, for the manifest check and the replay
    manifest = load_contest(root, events)
    entries: dict[int, EntryState] = {}
    closed_at: str | None = None
    ranking: Ranking | None = None
    problems: list[str] = []
    for ev in events:
        kind, n = ev.get("kind"), _number(ev)
        if not str(kind).startswith("contest.") or kind in ("contest.create", "contest.publish"):
            continue
        where = f"event {ev.get('seq')} ({kind}" + (f", entry {n})" if n is not None else ")")
        if ev.get("contest", manifest.id) != manifest.id:  # an event copied from another contest's log
            problems.append(f"{where}: names contest {str(ev.get('contest'))[:64]!r}, not this one; ignored")
        elif closed_at is not None:
            problems.append(f"{where}: after close; ignored (a closed contest is frozen)")
        elif kind == "contest.submit" and n is not None and n not in entries:
            entries[n] = EntryState(n, str(ev.get("entrant")), str(ev.get("entry_kind")), str(ev.get("sha256")),
                                    str(ev.get("when")))
        elif kind in LEGAL and n in entries:
            if entries[n].state in LEGAL[str(kind)]:
                entries[n] = _apply(entries[n], ev, manifest.quorum)
            else:
                problems.append(f"entry {n}: {kind} while {entries[n].state} (event {ev.get('seq')}); ignored")
        elif kind == "contest.rank":
            try:
                ranking = _ranking(ev)
            except (KeyError, TypeError, ValueError):  # a forged or damaged event: listed, never a crash
                problems.append(f"{where}: its ranks are not entry, rank and cluster numbers; ignored")
        elif kind == "contest.close":
            closed_at = str(ev.get("when"))
        else:
            problems.append(f"{where}: names no entry it could change; ignored")
    if ranking is not None:
        for n, (rank, cluster) in ranking.ranks.items():
            if n in entries:
                entries[n] = replace(entries[n], rank=rank, cluster=cluster)
    return ContestState(root, manifest, tuple(entries[n] for n in sorted(entries)), closed_at is not None, closed_at,
                        ranking, str(events[-1]["hash"]) if events else "", tuple(problems))


def require_open(state: ContestState, doing: str) -> None:
    """``UserError`` (one line) when the contest is closed: a closed contest is frozen."""
    if state.closed:
        raise UserError(f"contest {state.manifest.id!r} was closed on {state.closed_at}; {doing} refused (a closed "
                        "contest is frozen)", file=str(state.root))


# ---------------------------------------------------------------- what the public sees


@dataclass(frozen=True)
class EntryView:
    """One entry as a viewer may see it: no secret-split value while results are hidden."""

    number: int
    entrant: str  # the name, or "Entrant k" when anonymised
    kind: str
    state: str
    dev_score: float | None = None
    qualify_reason: str | None = None
    value: float | None = None
    ci: tuple[float, float] | None = None
    composite: float | None = None
    rank: int | None = None
    cluster: int | None = None


@dataclass(frozen=True)
class ContestView:
    """The contest as ``contest_view`` shows it: ``results_hidden`` true means no secret-split score, rank or
    per-entry value is anywhere in it (an executed or failed entry says only "executed")."""

    id: str
    title: str
    organiser: str
    dataset: str
    languages: str
    licence: str
    primary_metric: str
    threshold: float
    dev_size: int
    secret_size: int
    visibility: str
    anonymise: bool
    deadline: str | None
    state: str
    results_hidden: bool
    entries: tuple[EntryView, ...] = field(default=())
    ranking_sha256: str | None = None

    def as_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def results_hidden(state: ContestState, organiser: bool = False) -> bool:
    """Whether the secret-split results are hidden from this viewer now."""
    return not organiser and state.manifest.results_hidden_until_close and not state.closed


def contest_view(state: ContestState, *, organiser: bool = False) -> ContestView:
    """What a viewer sees: the organiser everything; anyone else no entrant name when anonymised and, while
    results are hidden, no secret-split value, CI, composite, rank or failure reason."""
    m, hidden = state.manifest, results_hidden(state, organiser)
    names = state.pseudonyms() if m.anonymise and not organiser else {}
    views = []
    for e in state.entries:
        # failed vs executed is a bit the entry's own code chose on the secret split: hidden, both read "executed"
        entry_state = EXECUTED if hidden and e.state == FAILED else e.state
        shown = EntryView(e.number, names.get(e.entrant, e.entrant), e.kind, entry_state, e.dev_score,
                          e.qualify_reason)
        if not hidden:
            shown = replace(shown, value=e.value, ci=e.ci, composite=e.composite, rank=e.rank, cluster=e.cluster)
        views.append(shown)
    return ContestView(m.id, m.title, m.organiser, m.dataset, m.languages, m.licence, m.primary_metric, m.threshold,
                       m.dev_size, m.secret_size, m.visibility, m.anonymise, m.deadline, state.state, hidden,
                       tuple(views), None if hidden or state.ranking is None else state.ranking.sha256)


def list_contests(folder: Path) -> tuple[list[ContestState], list[str]]:
    """Every contest root directly under ``folder`` (a folder holding contest.json), by id, and one line per
    contest refused (a log failing verification, an edited manifest): listed as refused, never silently dropped."""
    found, refused = [], []
    for child in sorted(Path(folder).iterdir()) if Path(folder).is_dir() else []:
        if (child / "contest.json").is_file():
            try:
                found.append(contest_state(child))
            except UserError as exc:
                refused.append(f"{child.name}: {exc.one_line()}")
    return sorted(found, key=lambda s: s.manifest.id), refused
