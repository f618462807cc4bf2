"""Does the composite order translations as people do? Item-grouped Kendall τ against human MQM.

Data: WMT21 TED talks with MQM judgments (tests/data/mqm-ted, Apache-2.0), en→de and zh→en, 529
segments × the MT systems (human references ``ref-*`` left out, ``ref-A`` is the reference itself).
Every system's outputs are scored with the pipeline a run uses (``scoring.pipeline.score_outputs``,
the target language's card); the per-segment composite is the composite of that segment's per-entry
metric values, under the spec's plain rule (``spec-4.1``) and under the adequacy-anchored rule the
cards now use (``anchored-1``). For each segment the systems are ranked by the score and by MQM
(higher = fewer errors) and Kendall's τ_b is averaged over segments (``stats.agreement``).

The peer is sentence-level chrF++ alone (the data's README: τ ≈ 0.15 en-de, ≈ 0.08 zh-en, measured the
same way here). Prints τ per language pair and scoring, and exits 1 if the anchored composite agrees
less with people than the spec's composite did (the issue's requirement: it must not get worse).
Run: ``.venv/bin/python benchmarks/bench_mqm.py [--data DIR]``.
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
from mt_eval.scoring.composite import ANCHORED_RULE, SPEC_RULE, composite
from mt_eval.scoring.pipeline import score_outputs
from mt_eval.stats.agreement import item_grouped_tau

DEFAULT = Path(__file__).resolve().parents[1] / "tests" / "data" / "mqm-ted"
PAIRS = {"ende": ("en", "de"), "zhen": ("zh", "en")}


def read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def segment_scores(rows: list[dict[str, str]], src: str, tgt: str) -> dict[str, np.ndarray]:
    """Per row: sentence chrF++ and the per-segment composite under each rule."""
    systems = sorted({r["system"] for r in rows})
    out = {"chrF++": np.zeros(len(rows)), SPEC_RULE: np.zeros(len(rows)), ANCHORED_RULE: np.zeros(len(rows))}
    target, source = language_card(tgt), language_card(src)
    for system in systems:
        idx = [k for k, r in enumerate(rows) if r["system"] == system]
        entries = [Entry(id=i + 1, source=rows[k]["source"], reference=rows[k]["reference_refA"])
                   for i, k in enumerate(idx)]
        dataset = Dataset(info=DatasetInfo(id=f"mqm-{system}", source_language=src, target_language=tgt),
                          entries=entries, sha256="0" * 64)
        translations = [Translation(entry_id=i + 1, text=rows[k]["hypothesis"]) for i, k in enumerate(idx)]
        table, _ = score_outputs(dataset, translations, target, source)
        per_entry = {m: table.entry_values(m) for m in table.metrics}
        values = {m: v for m, v in per_entry.items() if v is not None}
        for i, k in enumerate(idx):
            row = {m: float(v[i]) for m, v in values.items() if not np.isnan(v[i])}  # null per entry: unavailable
            for rule in (SPEC_RULE, ANCHORED_RULE):
                result = composite(row, target.profile, rule)
                out[rule][k] = np.nan if result is None else float(result)
        out["chrF++"][idx] = values["chrf_plus_plus"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT, metavar="DIR", help=f"MQM TED folder (default {DEFAULT})")
    args = parser.parse_args(argv)
    worse = []
    print(f"{'pair':6} {'scoring':12} {'item-grouped τ':>15} {'segments':>9}")
    for lp, (src, tgt) in PAIRS.items():
        path = args.data / f"ted_{lp}.src_ref_hyp_mqm.tsv"
        if not path.is_file():
            parser.error(f"MQM data not found: {path}")
        rows = [r for r in read(path) if not r["system"].startswith("ref")]
        items = [r["seg_id"] for r in rows]
        human = [float(r["mqm_avg_score"]) for r in rows]
        scores = segment_scores(rows, src, tgt)
        taus = {}
        for name, values in scores.items():
            taus[name], n = item_grouped_tau(items, values.tolist(), human)
            print(f"{lp:6} {name:12} {taus[name]:15.4f} {n:9d}")
        if taus[ANCHORED_RULE] < taus[SPEC_RULE] - 1e-9:
            worse.append(lp)
    verdict = "not worse on any pair" if not worse else "WORSE on " + ", ".join(worse)
    print(f"anchored composite vs spec composite: {verdict}")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
