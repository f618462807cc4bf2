"""The report page's robustness section (``mt-eval robustness CARD --html``): sensitivity and stability per
metric and the composite, from a ``RobustnessReport.to_dict()`` record (rendering only: nothing is scored)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mt_eval.render.html.parts import e, fmt

NA = '<span class="na">—</span>'


def _cell(cell: Any) -> str:
    if not isinstance(cell, Mapping) or cell.get("value") is None:
        return f'<td class="num">{NA}</td>'
    return f'<td class="num" title="{e(cell.get("n"))} entries">{fmt(cell["value"], 3)}</td>'


def robustness_section(record: Mapping[str, Any]) -> str:
    """One table: a row per metric (and the composite), sensitivity per degradation, stability per edit, and
    both pooled over every perturbed entry."""
    degradations, edits = list(record.get("degradations") or []), list(record.get("edits") or [])
    sens, stab, overall = record.get("sensitivity") or {}, record.get("stability") or {}, record.get("overall") or {}
    head = ('<tr><th scope="col" rowspan="2">metric</th>'
            f'<th scope="colgroup" colspan="{len(degradations) + 1}">sensitivity (share of entries that drop) ↑</th>'
            f'<th scope="colgroup" colspan="{len(edits) + 1}">stability (1 − mean |Δ|) ↑</th></tr><tr>'
            + "".join(f'<th scope="col" class="num">{e(d.replace("_", " "))}</th>' for d in degradations)
            + '<th scope="col" class="num">all</th>'
            + "".join(f'<th scope="col" class="num">{e(x.replace("_", " "))}</th>' for x in edits)
            + '<th scope="col" class="num">all</th></tr>')
    rows = []
    for metric in record.get("metrics") or []:
        pooled = overall.get(metric) or {}
        rows.append(f'<tr><th scope="row"><code>{e(metric)}</code></th>'
                    + "".join(_cell((sens.get(metric) or {}).get(d)) for d in degradations)
                    + f'<td class="num"><strong>{fmt(pooled.get("sensitivity"), 3)}</strong></td>'
                    + "".join(_cell((stab.get(metric) or {}).get(x)) for x in edits)
                    + f'<td class="num"><strong>{fmt(pooled.get("stability"), 3)}</strong></td></tr>')
    skipped = record.get("skipped") or {}
    note = ("<p>Not run: " + "; ".join(f"{e(k)} ({e(v)})" for k, v in skipped.items()) + ".</p>") if skipped else ""
    return (f'<section id="robustness"><h2>Robustness</h2><p>Perturbations of the card\'s '
            f'{e(record.get("system"))} on {e(record.get("entries"))} entries, scored with the same pipeline '
            "(AutoMetrics §3.2). A useful metric drops under every degradation and stays put under every edit.</p>"
            f'{note}<div class="scroll"><table class="metrics"><caption>Sensitivity and stability of normalised '
            f"per-entry scores</caption><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></div></section>")
