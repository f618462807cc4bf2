"""Text for the vault and governance commands: a vault's manifest, the audit log, the policy.

Nothing here sees a secret: a vault is shown from its manifest (counts, recipients, hashes), the log
from its events (which never hold texts or keys).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table


def _segments(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "none"


def vault_lines(info: Mapping[str, Any]) -> list[str]:
    """``vault inspect``: what a vault holds, without opening it."""
    pub, sec = info["public"], info["secret"]
    lines = [
        f"vault {escape(info['path'])}: dataset {escape(str(info.get('dataset_id')))}, "
        f"corpus sha256 {info['corpus_sha256']}",
        *[f"{name}  {part['entries']} entries ({escape(_segments(part['segments']))}), {part['file']} sha256 "
          f"{part['sha256']}" for name, part in (("public", pub), ("secret", sec))],
        f"sealed {info.get('sealed_at')}" + (f", rotated {info['rotated_at']}" if info.get("rotated_at") else "")
        + (f", entries rotated {info['entries_rotated_at']} (as sealed: corpus sha256 "
           f"{info.get('sealed_corpus_sha256')}; mt-eval vault history)" if info.get("entries_rotated_at") else ""),
        *[f"recipient {r}" for r in info["recipients"]],
    ]
    lines += ([f"[red]{escape(p)}[/red]" for p in info["problems"]] if info["problems"]
              else ["files intact (sha256 as the manifest records)"])
    return lines


def _segment(ev: Mapping[str, Any]) -> str:
    """An event's segment; a rotation's is where its entries went (``rotation.py``)."""
    if ev.get("kind") == "rotate_entries":
        return f"{ev.get('from')} → {ev.get('to')} ({ev.get('count')})"
    return str(ev.get("segment") or "")


def audit_table(events: Sequence[Mapping[str, Any]]) -> Table:
    """``governance audit``: one row per event, oldest first."""
    table = Table(show_edge=False, pad_edge=False)
    for column in ("#", "when (UTC)", "kind", "who", "method", "bundle", "segment", "status / reason", "hash"):
        table.add_column(column, overflow="fold")
    for ev in events:
        bundle = str(ev.get("bundle_sha256") or ev.get("target") or "")
        # who acted: the operator's --who, else the custodian who approved or the submitter whose run it was
        custodian = f"custodian {ev['custodian']}" if ev.get("custodian") is not None else ""
        who = ev.get("who") or custodian or ev.get("submitter") or ""
        status = ev.get("status") or ev.get("reason") or ""
        table.add_row(str(ev.get("seq")), str(ev.get("when", ""))[:19].replace("T", " "), escape(str(ev.get("kind"))),
                      escape(str(who)), escape(str(ev.get("method") or "")), escape(bundle[:16]),
                      escape(_segment(ev)), escape(str(status)), str(ev.get("hash", ""))[:12])
    return table


def policy_lines(policy: Any, revoked: Mapping[str, str]) -> list[str]:
    """``governance policy``: the budget, the organisation, what is revoked."""
    lines = [f"organisation: {escape(policy.organisation or '(not set: --organisation NAME)')}",
             f"budget: {policy.submissions} gold submissions per {policy.days} days per submitter key, each run "
             f"at most {policy.runs_per_submission} times, on {escape(', '.join(policy.segments))}",
             f"egress models: {escape(', '.join(policy.models) or '(none: --model NAME)')}",
             "rotated-out gold entries public: " + ("never (--publish-after-days N)" if policy.publish_after_days
                                                    is None else f"{policy.publish_after_days} days after leaving "
                                                                 "gold_standard")]  # fmt: skip
    lines += [f"revoked: {escape(target)} ({escape(reason)})" for target, reason in revoked.items()]
    return lines


def ownership_table(trail: Sequence[Any]) -> Table:
    """``governance ownership status``: one row per step of a method's trail (``ownership.Step``), oldest first."""
    table = Table(show_edge=False, pad_edge=False)
    for column in ("when (UTC)", "state", "who", "detail", "event"):
        table.add_column(column, overflow="fold")
    for step in trail:
        table.add_row(step.when[:19].replace("T", " "), step.state, escape(step.who), escape(step.detail),
                      step.event[:12])
    return table


def history_lines(moves: Mapping[int, Sequence[Any]], manifest: Mapping[str, Any],
                  current: Mapping[int, str] | None = None) -> list[str]:
    """``vault history``: each moved entry's segments over time (``rotation.Move``s, oldest first); with
    ``current`` (every entry's segment now, from the opened vault), every entry, in the corpus's order."""
    lines = [f"vault of {escape(str(manifest.get('dataset_id')))}: sealed {manifest.get('sealed_at')}; corpus sha256 "
             f"{manifest.get('corpus_sha256')} (as sealed: {manifest.get('sealed_corpus_sha256') or 'the same'})"]
    for entry_id in current if current is not None else moves:
        trail = moves.get(entry_id)
        if not trail:
            lines.append(f"entry {entry_id}: {escape(str((current or {}).get(entry_id)))} (as sealed)")
            continue
        steps = [trail[0].source] + [f"{m.target} ({m.when[:19].replace('T', ' ')}, event {m.event[:12]})"
                                     for m in trail]
        lines.append(f"entry {entry_id}: " + escape(" → ".join(steps)))
    total = int(manifest["public"]["entries"]) + int(manifest["secret"]["entries"])
    lines.append(f"{len(moves)} of {total} entries rotated" + ("" if current is not None else
                 "; the others are in the segment they were sealed in (--identity lists them)"))
    return lines
