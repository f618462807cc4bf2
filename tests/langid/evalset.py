"""The language-identification evaluation on NTREX-128 (docs/language-id.md), importable and runnable.

Outputs for an English source, built from ``tests/data/ntrex128`` (same documents, line-aligned):

* correct: the target language's human reference;
* mixed 25 % / 50 %: the reference's first words followed by the English source's last words, so that
  about a quarter / a half of the words are English (the truth is the English share of the words);
* English: the untranslated source;
* wrong language, same script: the Catalan, Portuguese, Italian, French or Galician reference offered
  as Spanish output.

``python tests/langid/evalset.py [N]`` prints every figure of docs/language-id.md for the first N lines.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from mt_eval.corpus.models import Entry
from mt_eval.languages.card import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.behavioral import CodeSwitching
from mt_eval.qa.measures import QASamples

DATA = Path(__file__).resolve().parents[1] / "data" / "ntrex128"
ISO3 = {"es": "spa", "fr": "fra", "pt": "por", "de": "deu", "ca": "cat", "it": "ita", "gl": "glg"}


def lines(code: str, n: int) -> list[str]:
    name = "newstest2019-src.eng.txt" if code == "en" else f"newstest2019-ref.{ISO3[code]}.txt"
    return (DATA / name).read_text(encoding="utf-8").splitlines()[:n]


def mixed(target: str, english: str, share: float) -> tuple[str, float]:
    words, source = target.split(), english.split()
    keep, take = max(1, int(len(words) * (1 - share))), int(len(source) * share)
    return " ".join(words[:keep] + source[len(source) - take:]), take / (keep + take)


def code_switching(code: str, outputs: Sequence[str], sources: Sequence[str], *, force_lingua: bool = False
                   ) -> np.ndarray:
    """Per-output ``code_switching_rate`` for English→``code`` (rules or lingua, as the metric chooses; or
    lingua forced, to compare it with the rules where those apply)."""
    entries = [Entry(id=i + 1, source=s, reference="-") for i, s in enumerate(sources)]
    ctx = MetricContext(entries=entries, target=language_card(code), source=language_card("en"))
    metric = CodeSwitching()
    metric.prepare(ctx)
    metric.lingua = metric.lingua or force_lingua
    stats = metric.statistics(list(outputs), ctx)
    with np.errstate(invalid="ignore", divide="ignore"):
        return stats[:, 0] / stats[:, 1]


def code_switching_table(n: int, pairs: Sequence[tuple[str, bool]]) -> dict[str, dict[str, float]]:
    """For each (target, force lingua): clean mean and share > 0.1; mixed shares flagged; English mean."""
    english = lines("en", n)
    out: dict[str, dict[str, float]] = {}
    for code, force in pairs:
        ref = lines(code, n)
        rate: Callable[[Sequence[str]], np.ndarray] = lambda o, c=code, f=force: code_switching(c, o, english,  # noqa: E731
                                                                                                force_lingua=f)
        clean, eng = rate(ref), rate(english)
        row = {"clean_mean": float(np.nanmean(clean)), "clean_flagged": float(np.mean(clean > 0.1)),
               "english_mean": float(np.nanmean(eng)), "english_flagged": float(np.mean(eng > 0.1))}
        for share in (0.25, 0.5):
            texts = [mixed(r, e, share) for r, e in zip(ref, english, strict=True)]
            values = rate([t for t, _ in texts])
            truth = np.array([x for _, x in texts])
            row[f"mixed{int(share * 100)}_flagged"] = float(np.mean(values > 0.1))
            row[f"mixed{int(share * 100)}_mae"] = float(np.nanmean(np.abs(values - truth)))
        out[f"{code}{' (lingua forced)' if force else ''}"] = row
    return out


def rlc_table(n: int) -> dict[str, dict[str, float]]:
    """Outputs in each language offered as Spanish: share judged not Spanish (RLC < 0.5), per backend."""
    out: dict[str, dict[str, float]] = {}
    for code in ("es", "ca", "pt", "it", "fr", "gl", "en"):
        texts = lines(code, n)
        row = {}
        for backend in ("script", "lingua"):
            samples = QASamples(items=(), langs=("es",), langid=backend)
            row[backend] = float(np.mean([samples.rlc(t, 0) < 0.5 for t in texts]))
        out[code] = row
    return out


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    for name, row in code_switching_table(n, [("es", False), ("es", True), ("fr", False), ("pt", False),
                                              ("de", False)]).items():
        print(name, {k: round(v, 4) for k, v in row.items()})
    for code, row in rlc_table(n).items():
        print("RLC, output in", code, {k: round(v, 4) for k, v in row.items()})
