"""Closing a contest, exporting its results, publishing its executed entries to a leaderboard store.

``close_contest`` freezes the contest: it needs every approved entry executed or failed and, when anything
was executed, the signed ranking of exactly the executed entries (``ranking.py``); it records ``contest.close``
with the ranking's sha256. From then on every change is refused in one line (``state.require_open``: submit,
qualify, approve, execute, rank) and the results are public (``state.contest_view``).

``export_contest`` writes the results as JSON or CSV: rank, cluster, the primary metric with its CI, composite,
the artefact's sha256, the entrant (or pseudonym), the ranking's sha256 and organiser signature, the log head.
Refused while results are hidden (an open contest with hidden results) unless ``organiser`` is set.

``publish_contest`` publishes each executed entry's public card (no entry results, no statistics:
``sovereign.public_card``), signed by the organiser's key, to a store via ``store.sovereign.publish_sovereign``
(the store must know the key: ``mt-eval keys register ORG.pub --submitter ORGANISER``); only after close.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from mt_eval.contest.manifest import GOVERNANCE, governance, require_use
from mt_eval.contest.ranking import RANKING, read_contest_ranking
from mt_eval.contest.state import APPROVED, EXECUTED, ContestState, contest_state, contest_view, require_open
from mt_eval.errors import UserError
from mt_eval.runcard.signing import Signature, public_of, write_atomic
from mt_eval.sovereign.governance import private_key
from mt_eval.sovereign.public_card import CustodianIdentity, load_full_card

FORMATS = ("json", "csv")
PUBLIC_DIR = "public"
COLUMNS = ("entry", "entrant", "kind", "state", "rank", "cluster", "metric", "value", "ci_lower", "ci_upper",
           "composite", "dev_score", "artefact_sha256", "full_run_card_hash")


def _signed_ranking(state: ContestState) -> tuple[dict[str, Any], Signature] | None:
    """The ranking file the log's last contest.rank names, its seal and signature checked (None: never ranked)."""
    if state.ranking is None:
        return None
    document, signature = read_contest_ranking(state.root / RANKING)
    if document["ranking_sha256"] != state.ranking.sha256:
        raise UserError("ranking.json is not the ranking the log's last contest.rank recorded; refused",
                        file=str(state.root / RANKING), hint="mt-eval contest rank again")
    return document, signature


def close_contest(root: Path, key: Path | Ed25519PrivateKey, *, who: str | None = None) -> ContestState:
    """Close the contest at ``root`` (see the module docstring); ``key`` is the organiser's signing key, the one
    the ranking was signed with."""
    state = contest_state(root)
    require_open(state, "close")
    pending = [e.number for e in state.entries if e.state == APPROVED]
    if pending:
        raise UserError(f"entries {', '.join(map(str, pending))} are approved but neither executed nor failed; "
                        "close refused", hint="mt-eval contest execute each first")
    executed = {e.number for e in state.entries if e.state == EXECUTED}
    signed = _signed_ranking(state)
    if executed and signed is None:
        raise UserError("entries were executed but the contest was never ranked; close refused",
                        hint="mt-eval contest rank first")
    if signed is not None:
        document, signature = signed
        if {d["entry"] for d in document["entries"]} != executed:
            raise UserError("the ranking does not cover exactly the executed entries (one was executed after it); "
                            "close refused", hint="mt-eval contest rank again")
        if signature.key_id != public_of(private_key(key)).key_id:
            raise UserError(f"the ranking was signed by key {signature.key_id}, not this key; close refused",
                            field="--key")
    governance(root).record({"kind": "contest.close", "contest": state.manifest.id,
                             "ranking_sha256": signed[0]["ranking_sha256"] if signed else None,
                             "key_id": public_of(private_key(key)).key_id, "who": who or state.manifest.organiser})
    return contest_state(root)


def export_rows(state: ContestState, organiser: bool = False) -> list[dict[str, Any]]:
    """One row per entry, best rank first (unranked entries after, by number), as the viewer may see them."""
    view = contest_view(state, organiser=organiser)
    if view.results_hidden:
        raise UserError(f"contest {state.manifest.id!r} is open and its results are hidden until close; export "
                        "refused", file=str(state.root), hint="the organiser may export with --organiser")
    full = {e.number: e for e in state.entries}
    rows = [{"entry": e.number, "entrant": e.entrant, "kind": e.kind, "state": e.state, "rank": e.rank,
             "cluster": e.cluster, "metric": state.manifest.primary_metric, "value": e.value,
             "ci_lower": e.ci[0] if e.ci else None, "ci_upper": e.ci[1] if e.ci else None, "composite": e.composite,
             "dev_score": e.dev_score, "artefact_sha256": full[e.number].sha256,
             "full_run_card_hash": full[e.number].full_run_card_hash} for e in view.entries]  # fmt: skip
    return sorted(rows, key=lambda r: (r["rank"] is None, r["rank"] or 0, r["entry"]))


def export_document(state: ContestState, organiser: bool = False) -> dict[str, Any]:
    """The JSON export: the contest's rules, its state, the signed ranking's hash and signature, the rows."""
    rows = export_rows(state, organiser)
    signed = _signed_ranking(state)
    m = state.manifest
    ranking = None
    if signed is not None:
        document, signature = signed
        ranking = {"ranking_sha256": document["ranking_sha256"], "metric": document["metric"],
                   "numbering": document["numbering"], "test": document["test"], "key_id": signature.key_id,
                   "public_key": signature.public_key, "signature": signature.signature}  # fmt: skip
    return {"kind": "mt-eval contest export", "version": 1, "contest": m.id, "title": m.title,
            "organiser": m.organiser, "dataset": m.dataset, "languages": m.languages, "licence": m.licence,
            "primary_metric": m.primary_metric, "state": state.state, "closed_at": state.closed_at,
            "results_complete": state.closed, "ranking": ranking, "log_head": state.head, "entries": rows}


def export_text(state: ContestState, fmt: str = "json", organiser: bool = False) -> str:
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt!r}: one of {', '.join(FORMATS)}", field="--format")
    document = export_document(state, organiser)
    if fmt == "json":
        return json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    buffer = io.StringIO()
    ranking = document["ranking"] or {}
    extra = ("ranking_sha256", "key_id", "signature")
    writer = csv.DictWriter(buffer, fieldnames=[*COLUMNS, *extra], lineterminator="\n")
    writer.writeheader()
    for row in document["entries"]:  # the signature on every row: a row cut out of the file still names it
        writer.writerow({**row, **{k: ranking.get(k) for k in extra}})
    return buffer.getvalue()


def export_contest(root: Path, out: Path, fmt: str = "json", *, organiser: bool = False) -> Path:
    """Write the export of the contest at ``root`` to ``out`` (see ``export_document``)."""
    text = export_text(contest_state(root), fmt, organiser)
    if not Path(out).parent.is_dir():
        raise UserError("output folder does not exist", file=str(out))
    write_atomic(Path(out), text.encode("utf-8"))
    return Path(out)


def publish_contest(root: Path, store_url: str, key: Path, identity: CustodianIdentity) -> list[Any]:
    """Publish the closed contest's executed entries' public cards (signed by ``key``) to ``store_url``; the
    store's results (``store.publish.PublishResult``), and ``contest.publish`` recorded."""
    from mt_eval.review.gate import accepted_in
    from mt_eval.sovereign.public_card import public_card, write_public_card
    from mt_eval.store import open_store
    from mt_eval.store.sovereign import publish_sovereign

    state = contest_state(root)
    if not state.closed:
        raise UserError(f"contest {state.manifest.id!r} is open; its cards are published after close",
                        hint="mt-eval contest close first")
    require_use(state.root, state.manifest, "public_cards", "publish the cards of")
    folder = state.root / PUBLIC_DIR
    folder.mkdir(exist_ok=True)
    paths: list[Path] = []
    for e in state.entries:
        if e.state != EXECUTED or not e.full_run_card_hash:
            continue
        full = load_full_card(state.root / GOVERNANCE, e.full_run_card_hash, identity)
        config = (full.get("method_config") or full.get("config") or {})
        block = {"bundle_sha256": e.sha256, "sandbox": config.get("sandbox") or {"policy": "weights-only in-process"},
                 "egress": config.get("egress") or "none", "terms_version": config.get("terms_version") or "contest",
                 "organisation": state.manifest.organiser, "contest": state.manifest.id, "entry": e.number}
        path, _ = write_public_card(public_card(full, block, key), folder / f"entry-{e.number}.json", key)
        paths.append(path)
    if not paths:
        raise UserError(f"contest {state.manifest.id!r} has no executed entry to publish")
    with open_store(store_url) as store:
        results = publish_sovereign(store, paths, gate=accepted_in)
    governance(root).record({"kind": "contest.publish", "contest": state.manifest.id, "store": _redacted(store_url),
                             "cards": [r.run_card_hash for r in results]})
    return results


def _redacted(url: str) -> str:
    """The store's address without a password (the log is kept and shown)."""
    if "://" in url and "@" in url.split("://", 1)[1]:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url
