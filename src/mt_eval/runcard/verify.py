"""Verify a run card: recompute everything derivable and the seal, and name what differs.

A tampered number is caught where it can be recomputed (per-entry values, FST facts and scores from
``results[]``, fingerprint from its components, components from the card's own fields) so the
message names the field; anything else that was edited breaks ``run_card_hash``. Bounds come first
(the typed model refuses e.g. ``n_resamples`` above 100,000) so a hostile card fails fast.

What a passing verify proves: the card is internally consistent — every score follows from its own
``results[]`` with this harness's code, and nothing was changed after sealing. What it cannot prove:
that the predictions came from the method the card names. Anyone can write predictions by hand and
seal a card around them; reproducing the run from its ``method_config`` (and signatures of known
submitters) is what establishes that.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from mt_eval.errors import UserError
from mt_eval.languages import langid
from mt_eval.languages.langid import card_detector
from mt_eval.metrics.comet import CometConfig
from mt_eval.metrics.judges.cards import is_judge_id
from mt_eval.metrics.opt_in import OptInMetric
from mt_eval.metrics.structural import fst_details_many
from mt_eval.metrics.variant_class import entry_verdicts
from mt_eval.runcard import statistics
from mt_eval.runcard.builder import entry_composites, entry_ids_sha256, fingerprint_components
from mt_eval.runcard.judges import card_judges
from mt_eval.runcard.model import RunCard
from mt_eval.runcard.rescore import dataset_from_card, table_from_card, target_card
from mt_eval.runcard.seal import card_hash, fingerprint_hash
from mt_eval.runcard.verify_economics import economics_problems
from mt_eval.scoring.calibrated import card_weights
from mt_eval.scoring.composite import composite_rule
from mt_eval.scoring.pipeline import quality_scores
from mt_eval.scoring.scores import BREAKDOWNS, MetricTable
from mt_eval.stats.config import BootstrapConfig


def _same(a: Any, b: Any) -> bool:
    """Numbers compare within float round-off, dicts recursively, everything else exactly."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return type(a) is type(b) and a == b


def _diff(path: str, stored: Any, fresh: Any) -> Iterator[str]:
    if isinstance(stored, dict) and isinstance(fresh, dict):
        for key in fresh:
            yield from _diff(f"{path}.{key}", stored.get(key), fresh[key])
    elif not _same(stored, fresh):
        yield f"{path}: card says {stored!r}, recomputed {fresh!r}"


def adopt_recorded(card: dict[str, Any], table: MetricTable) -> list[str]:
    """For each metric whose recomputation is not bit-exact across machines (``recompute_tolerance`` > 0),
    take the card's recorded per-entry values when each is within the tolerance of this machine's, so that
    everything derived from them (composites, CIs, breakdowns, the sidecar) is then checked exactly; a value
    beyond it is a problem, and the card's own values are not adopted."""
    problems: list[str] = []
    for metric_id, metric in table.metrics.items():
        fresh = table.entry_values(metric_id)
        if metric.recompute_tolerance <= 0 or fresh is None:
            continue
        recorded = np.array([_recorded(r, metric_id) for r in card["results"]], dtype=np.float64)
        off = [i for i, (a, b) in enumerate(zip(recorded, fresh, strict=True))
               if np.isnan(a) != np.isnan(b) or abs(a - b) > metric.recompute_tolerance]
        problems += [f"results[{i}].metrics.{metric_id} (entry {card['results'][i]['entry_id']}): card says "
                     f"{_recorded(card['results'][i], metric_id)!r}, recomputed {float(fresh[i])!r} (more than "
                     f"the ±{metric.recompute_tolerance:g} a recomputation on another machine may drift)" for i in off]
        if not off:
            table.stats[metric_id] = metric.with_entry_values(table.stats[metric_id], recorded)
    return problems


def _recorded(result: dict[str, Any], metric_id: str) -> float:
    value = (result.get("metrics") or {}).get(metric_id)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan


def _rescore(card: dict[str, Any], judges: Sequence[OptInMetric] = (),
             comet: CometConfig | None = None) -> dict[str, Any]:
    table = table_from_card(card, judges=judges, comet=comet)
    drift = adopt_recorded(card, table)
    profile = card_weights(card)  # a calibrated profile's block is checked against its hash here
    header = card["scores"].get("confidence_intervals") or {}
    config = BootstrapConfig(header.get("n_resamples", 0), header.get("alpha", 0.05), header.get("seed", 12345))
    # a breakdown the card carries is rebuilt even with one group (cards written before those were left out)
    fresh = quality_scores(table, profile, config, composite_rule(card), keep=BREAKDOWNS.keys() & card["scores"].keys())
    em, chrf = table.entry_values("exact_match_rate"), table.entry_values("chrf_plus_plus")
    hyps = ["" if r.get("error") else r["predicted"] for r in card["results"]]
    fst = fst_details_many(hyps, target_card(card), table.cache)  # the builder's own per-entry FST facts
    rows = [
        {"exact_match": bool(em[i]) if em is not None else r["exact_match"],
         "entry_chrf": float(chrf[i]) if chrf is not None else r["entry_chrf"],
         "fst_accepted": fst[i][0], "fst_analysis": fst[i][1]}
        for i, r in enumerate(card["results"])
    ]
    if any("match_verdict" in r for r in card["results"]):  # cards before verdicts lack the key
        verdicts = entry_verdicts(hyps, dataset_from_card(card).entries, target_card(card))
        for row, verdict in zip(rows, verdicts, strict=True):
            row["match_verdict"] = verdict
    for judge_id in card_judges(card):  # a judge's per-entry values: what calibration and the web lens read
        values = table.entry_values(judge_id)
        for row, value in zip(rows, values if values is not None else [None] * len(rows), strict=True):
            row[f"metrics.{judge_id}"] = None if value is None or math.isnan(value) else float(value)
    if any("composite" in (r.get("metrics") or {}) for r in card["results"]):  # cards before it lack the key
        for row, value in zip(rows, entry_composites(table, profile, composite_rule(card)), strict=True):
            row["metrics.composite"] = value
    return {"scores": fresh, "rows": rows, "table": table, "drift": drift}


def _statistics(card: dict[str, Any], path: str | Path | None, fresh: MetricTable) -> list[str]:
    """The stored statistics (docs/decisions.md §23): the reference is well formed, and, where the
    sidecar is beside the card, its hash and its arrays equal the ones recomputed from ``results[]``.

    A card copied without its sidecar still verifies (``compare`` rebuilds and says so); a sidecar
    that is there but does not match is a failure.
    """
    ref = card.get("statistics")
    if ref is None:
        return []
    if ref.get("format") != statistics.FORMAT:
        return [f"statistics.format: card says {ref.get('format')!r}, this harness writes {statistics.FORMAT!r}"]
    if ref.get("metrics") != list(fresh.stats):
        return [f"statistics.metrics: card says {ref.get('metrics')!r}, recomputed {list(fresh.stats)!r}"]
    try:
        where = statistics.sidecar_path(ref, path or ".")
    except statistics.SidecarError as exc:
        return [str(exc)]
    if path is None or not where.is_file():
        return []
    data = where.read_bytes()
    digest = statistics.sha256_bytes(data)
    if digest != ref.get("sha256"):
        return [f"statistics.sha256: card says {ref.get('sha256')!r}, the sidecar {where.name} hashes to {digest!r}"]
    try:
        stored = statistics.decode(data, ref)
    except statistics.SidecarError as exc:
        return [f"statistics: {exc}"]
    return statistics.differences(stored, fresh, [r["entry_id"] for r in card["results"]])


def detector_problem(card: Mapping[str, Any]) -> str | None:
    """A card scored with a language detector is verified only where that detector (and version) is installed:
    elsewhere its code_switching_rate would be rescored another way. One line naming both, else None."""
    recorded = card_detector(card)
    if recorded is None or recorded == (here := langid.detector()):
        return None
    return (f"language_detector: the card was scored with {recorded}, this install has {here or 'none'}, so its "
            f"code_switching_rate cannot be recomputed here (install {recorded.replace(' ', '==')})")


def require_same_detector(card: Mapping[str, Any]) -> None:
    """``mt-eval verify``'s refusal (one line, exit 2), as for judges and COMET checkpoints it lacks."""
    if (mixed := detector_problem(card)) is not None:
        raise UserError(mixed, hint="verify it where that detector is installed")


def verify_card(card: dict[str, Any], path: str | Path | None = None, judges: Sequence[OptInMetric] = (),
                comet: CometConfig | None = None) -> list[str]:
    """Problems found, most specific first; an empty list means the card verifies.

    ``path`` is where the card was read from: with it, the statistics sidecar beside the card is
    checked too. ``judges``: the generated judges (``--judge``) that recompute the ones the card records; a
    card with judges and without them does not verify ("cannot be rescored", naming the judge); likewise
    ``comet``, the local COMET checkpoint of a card that scored ``comet_score`` (``rescore.require_comet``).
    """
    try:
        RunCard.model_validate(card)
    except ValidationError as exc:
        err = exc.errors()[0]
        return [f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"]
    if (mixed := detector_problem(card)) is not None:
        return [mixed]  # nothing rescored under another detector is evidence either way
    problems: list[str] = []
    fp = card["fingerprint"]
    fresh_components = fingerprint_components(card)
    problems += _diff("fingerprint.components", fp["components"], fresh_components)
    if fingerprint_hash(fp["components"]) != fp["hash"]:
        problems.append("fingerprint.hash: does not match fingerprint.components")
    ids = [r["entry_id"] for r in card["results"]]
    if entry_ids_sha256(ids) != card["dataset"]["entry_ids_sha256"]:
        problems.append("dataset.entry_ids_sha256: does not match the entry ids in results[]")
    if len(ids) != card["dataset"]["entry_count"]:
        problems.append(f"dataset.entry_count: card says {card['dataset']['entry_count']}, results has {len(ids)}")
    try:
        fresh = _rescore(card, judges, comet)
    except (ValidationError, UserError, ValueError, KeyError, TypeError) as exc:
        return [*problems, f"results: cannot be rescored ({str(exc).splitlines()[0]})"]
    problems += fresh["drift"]
    for i, (r, row) in enumerate(zip(card["results"], fresh["rows"], strict=True)):
        for key, value in row.items():
            metric = key.removeprefix("metrics.")  # per-entry metric values live under results[].metrics
            stored_value = (r.get("metrics") or {}).get(metric) if metric != key else r.get(key)
            if not _same(stored_value, value):
                where = f"results[{i}].{key} (entry {r['entry_id']})"
                problems.append(f"{where}: card says {stored_value!r}, recomputed {value!r}")
    stored = {k: card["scores"].get(k) for k in fresh["scores"]}
    problems += _diff("scores", stored, fresh["scores"])
    # a judge's number outside the judges block would be shown but never recomputed: not a verified card
    stray = sorted({k for k in card["scores"] if is_judge_id(k) and k not in fresh["scores"]}
                   | {k for r in card["results"] for k in (r.get("metrics") or {}) if is_judge_id(k)
                      and k not in fresh["scores"]})
    problems += [f"scores.{k}: a generated judge's value without its judges block (cannot be recomputed)"
                 for k in stray]
    problems += economics_problems(card)  # cost, speed, tokens: recomputed, impossible figures refused
    problems += _statistics(card, path, fresh["table"])
    if card_hash(card) != card.get("run_card_hash"):
        problems.append("run_card_hash: does not match the card's contents (changed after sealing)")
    return problems
