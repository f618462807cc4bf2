"""Per-sample QA metrics exactly as the QA evaluation spec defines them: EM, F1, RLC, RLC_OK, CNBE.

Every function here scores *one* sample and is pure, so the harness can keep per-sample values
and run the same bootstrap / paired tests over them as over every other metric. Aggregation
(mean ± std) lives in :func:`mean_std` so the ddof choice is made in exactly one place.

Where the spec's prose and its algorithm disagree we follow the algorithm and say so here and in
``docs/qa.md``: RLC of "答案是 4429 meters" for zh is 3/9 = 0.333 (the prose says ≈ 0.6).
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np

from mt_eval.languages.scripts import is_kept, is_neutral, language_scripts, primary_subtag, script_of

#: Spec §4: an answer is language-consistent when RLC ≥ 0.6.
DEFAULT_RLC_THRESHOLD = 0.6

#: Population standard deviation (numpy's default). The spec's metrics.json example pins it:
#: rlc_ok = 0.8 over n = 10 binary samples is reported with std 0.4 = sqrt(0.8 · 0.2).
DDOF = 0

#: Languages whose F1 is computed over characters (spec §2: zh, ja and their regional tags).
CHARACTER_TOKENISED = frozenset({"zh", "ja"})


def is_character_tokenised(lang: str) -> bool:
    """Whether F1 splits this language into characters instead of whitespace tokens."""
    return primary_subtag(lang) in CHARACTER_TOKENISED


def normalize_text(text: str) -> str:
    """Spec normalisation: lower-case, keep digits and letters of the 22 scripts, drop the rest,
    collapse whitespace.

    NFKC runs first so that full-width digits and Latin letters (routine in zh/ja answers) and
    half-width katakana compare equal to their ordinary forms. Dropped characters are deleted,
    not replaced by a space, as in SQuAD's evaluation script ("4,429" → "4429", "U.S." → "us").
    """
    text = unicodedata.normalize("NFKC", text).lower()
    kept = "".join(ch if (ch.isspace() or is_kept(ch)) else "" for ch in text)
    return " ".join(kept.split())


def tokenize(normalized: str, lang: str) -> list[str]:
    """Spec §2 tokens: characters for zh/ja (spaces removed), whitespace tokens otherwise."""
    if is_character_tokenised(lang):
        return list(normalized.replace(" ", ""))
    return normalized.split()


def exact_match(pred: str, gold: str) -> float:
    """1.0 when the normalised strings are identical (spec §1)."""
    return 1.0 if normalize_text(pred) == normalize_text(gold) else 0.0


def f1_score_lang(pred: str, gold: str, lang: str) -> float:
    """Token F1 after normalisation (spec §2); overlap counts multiset intersections.

    Edge cases the spec's sketch leaves undefined (it would divide by zero): both sides empty
    after normalisation → 1.0 (they are equal, and EM says so too); exactly one empty → 0.0.
    """
    p_tokens = tokenize(normalize_text(pred), lang)
    g_tokens = tokenize(normalize_text(gold), lang)
    if not p_tokens or not g_tokens:
        return 1.0 if p_tokens == g_tokens else 0.0
    overlap = sum((Counter(p_tokens) & Counter(g_tokens)).values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(p_tokens)
    recall = overlap / len(g_tokens)
    return 2 * precision * recall / (precision + recall)


def best_exact_match(pred: str, golds: Sequence[str]) -> float:
    """EM against the best of several gold answers (SQuAD convention)."""
    return max((exact_match(pred, g) for g in golds), default=0.0)


def best_f1(pred: str, golds: Sequence[str], lang: str) -> float:
    """F1 against the best of several gold answers (SQuAD convention)."""
    return max((f1_score_lang(pred, g, lang) for g in golds), default=0.0)


def compute_rlc(text: str, lang: str) -> float:
    """Share of target-language characters among the characters that say anything about language.

    Spec §3's algorithm: skip whitespace, digits and punctuation; of the rest count those in the
    target language's script(s). "Punctuation" is taken as Unicode punctuation *and symbols*
    (the spec's sketch tests a ``punctuation`` set; ASCII-only would count "，。" against zh).
    Departure: for Latin-script languages the sketch uses ``ch.isalpha()``, which would count
    Chinese characters as English; we use the Latin script instead, as for every other language.
    Empty (or all-neutral) text scores 1.0, as the spec says.
    """
    scripts = language_scripts(lang)
    text = unicodedata.normalize("NFKC", text)
    total = 0
    hits = 0
    for ch in text:
        if is_neutral(ch):
            continue
        total += 1
        if script_of(ch) in scripts:
            hits += 1
    return hits / total if total > 0 else 1.0


def rlc_binary(text: str, lang: str, threshold: float = DEFAULT_RLC_THRESHOLD) -> float:
    """RLC_OK (spec §4): 1.0 when RLC ≥ threshold."""
    return 1.0 if compute_rlc(text, lang) >= threshold else 0.0


def cnbe_values(f1_system: np.ndarray, f1_baseline: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Per-sample CNBE (spec §6): (F1 − F1 of the baseline on the same sample) / cost, 0 at cost 0.

    Arrays must already be aligned by sample id; pairing is the caller's job (see evaluate.py).
    """
    f1_system = np.asarray(f1_system, dtype=np.float64)
    f1_baseline = np.asarray(f1_baseline, dtype=np.float64)
    cost = np.asarray(cost, dtype=np.float64)
    if not (f1_system.shape == f1_baseline.shape == cost.shape):
        raise ValueError("cnbe_values: arrays must have the same shape (pair by id first)")
    out = np.zeros_like(cost)
    nz = cost > 0
    out[nz] = (f1_system[nz] - f1_baseline[nz]) / cost[nz]
    return out


def mean_std(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Mean and population std (ddof = DDOF); (0.0, 0.0) for no samples rather than NaN."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return 0.0, 0.0
    mean = float(arr.mean())
    std = float(arr.std(ddof=DDOF))
    return mean, (0.0 if math.isnan(std) else std)
