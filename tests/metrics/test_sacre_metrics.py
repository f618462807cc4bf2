"""chrF++, chrF, BLEU and TER through the metric protocol equal sacrebleu's own scores."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

from mt_eval.corpus.models import Entry
from mt_eval.languages import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.sacre import Bleu, ChrF, ChrFPlusPlus, Ter

N = 150


def degrade(line: str, k: int) -> str:
    """A deterministic imperfect 'system': drop every k-th word and keep the rest."""
    words = line.split()
    kept = [w for i, w in enumerate(words) if i % k != k - 1]
    return " ".join(kept) if kept else line[: len(line) // 2]


def _ctx(refs: list[str], code: str) -> MetricContext:
    entries = [Entry(id=i + 1, source="-", reference=r) for i, r in enumerate(refs)]
    return MetricContext(entries, language_card(code), language_card("en"))


@pytest.mark.parametrize(
    ("lang", "code", "tokenizer"),
    [("spa", "es", "13a"), ("deu", "de", "13a"), ("zho-CN", "zh", "zh"), ("jpn", "ja", "ja-mecab"),
     ("tha", "th", "char"), ("xho", "xh", "13a")],
)
def test_corpus_scores_equal_sacrebleu(ntrex_dir, lang, code, tokenizer):
    refs = (ntrex_dir / f"newstest2019-ref.{lang}.txt").read_text(encoding="utf-8").splitlines()[:N]
    # CJK/Thai have few spaces: degrade by characters so the system is imperfect there too.
    hyps = [degrade(r, 3) if " " in r.strip() else r[: max(1, len(r) * 3 // 4)] for r in refs]
    ctx = _ctx(refs, code)
    assert language_card(code).bleu_tokenizer == tokenizer
    expected = {
        ChrFPlusPlus: sacrebleu.corpus_chrf(hyps, [refs], word_order=2),
        ChrF: sacrebleu.corpus_chrf(hyps, [refs]),
        Bleu: sacrebleu.corpus_bleu(hyps, [refs], tokenize=tokenizer),
        Ter: sacrebleu.corpus_ter(hyps, [refs]),
    }
    for cls, want in expected.items():
        metric = cls()
        stats = metric.statistics(hyps, ctx)
        got = float(metric.aggregate(stats.sum(axis=0)))
        assert got == want.score, (cls.__name__, got, want.score)
        # the vectorised path used for bootstrap resamples agrees to float round-off
        batch = metric.aggregate(np.stack([stats.sum(axis=0), stats[: N // 2].sum(axis=0)]))
        assert batch[0] == pytest.approx(want.score, rel=1e-12, abs=1e-12)
    assert f"tok:{tokenizer}" in Bleu().signature(language_card(code))


def test_per_entry_chrf_equals_sentence_chrf(ntrex_dir):
    refs = (ntrex_dir / "newstest2019-ref.fra.txt").read_text(encoding="utf-8").splitlines()[:60]
    hyps = [degrade(r, 4) for r in refs]
    hyps[0] = ""  # an empty output (an error entry) scores 0
    metric = ChrFPlusPlus()
    values = metric.entry_values(metric.statistics(hyps, _ctx(refs, "fr")))
    assert values is not None
    for h, r, v in zip(hyps, refs, values, strict=True):
        assert v == sacrebleu.sentence_chrf(h, [r], word_order=2).score
    assert values[0] == 0.0


def test_vectorised_aggregates_match_sacrebleu_on_random_subsets(ntrex_dir):
    """Bootstrap resamples go through the NumPy path: it must match sacrebleu on every subset."""
    refs = (ntrex_dir / "newstest2019-ref.por.txt").read_text(encoding="utf-8").splitlines()[:80]
    hyps = [degrade(r, 2 + i % 3) for i, r in enumerate(refs)]
    hyps[5] = "completely unrelated words here"
    ctx = _ctx(refs, "pt")
    rng = np.random.default_rng(7)
    for cls in (ChrFPlusPlus, ChrF, Bleu, Ter):
        metric = cls()
        stats = metric.statistics(hyps, ctx)
        counts = rng.multinomial(len(refs), np.full(len(refs), 1 / len(refs)), size=50).astype(np.float64)
        sums = counts @ stats
        fast = metric.aggregate(sums)
        slow = np.array([metric.exact(row) for row in sums])
        np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-9)


def test_bleu_signature_names_the_language_tokenizer():
    assert "tok:zh" in Bleu().signature(language_card("zh-CN"))
    assert "tok:char" in Bleu().signature(language_card("th"))
    assert "tok:13a" in Bleu().signature(language_card("xh"))


def test_chrf_derived_from_chrf_plus_plus_equals_its_own_statistics(ntrex_dir):
    """The table reuses chrF++'s character block for chrF; it must equal chrF's own extraction."""
    from mt_eval.metrics.registry import metrics_for
    from mt_eval.scoring.scores import MetricTable

    refs = (ntrex_dir / "newstest2019-ref.fin.txt").read_text(encoding="utf-8").splitlines()[:80]
    hyps = [degrade(r, 3) for r in refs]
    ctx = _ctx(refs, "fi")
    table = MetricTable.compute(metrics_for(ctx.target), hyps, ctx, np.zeros(len(refs), dtype=bool))
    np.testing.assert_array_equal(table.stats["chrf"], ChrF().statistics(hyps, ctx))
    assert table.values()["chrf"] == sacrebleu.corpus_chrf(hyps, [refs]).score


@pytest.mark.parametrize(("lang", "code"), [("spa", "es"), ("zho-CN", "zh"), ("jpn", "ja"), ("arb", "ar"),
                                            ("hin", "hi"), ("tha", "th"), ("kor", "ko")])
def test_chrf_statistics_equal_sacrebleus_own_extraction(ntrex_dir, lang, code):
    """ChrFBase.statistics transcribes sacrebleu's chrF counting; it must give sacrebleu's integers."""
    refs = (ntrex_dir / f"newstest2019-ref.{lang}.txt").read_text(encoding="utf-8").splitlines()[:400]
    hyps = [degrade(r, 3) if i % 3 else r[: len(r) // 2] for i, r in enumerate(refs)]
    hyps[0], hyps[1] = "", "   "  # empty outputs: no hypothesis n-grams at all
    ctx = _ctx(refs, code)
    for metric in (ChrFPlusPlus(), ChrF()):
        ours = metric.statistics(hyps, ctx)
        sacre = metric.scorer(ctx.target)._extract_corpus_statistics(hyps, [refs])
        np.testing.assert_array_equal(ours, np.asarray(sacre, dtype=np.float64))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="ab c.,!(-)'é漢 \t", max_size=25),
                          st.text(alphabet="ab c.,!(-)'é漢 \t", max_size=25)), min_size=1, max_size=5))
def test_chrf_statistics_equal_sacrebleu_on_random_text(pairs: list[tuple[str, str]]) -> None:
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    ctx = _ctx(refs, "es")
    metric = ChrFPlusPlus()
    sacre = metric.scorer(ctx.target)._extract_corpus_statistics(hyps, [refs])
    np.testing.assert_array_equal(metric.statistics(hyps, ctx), np.asarray(sacre, dtype=np.float64))
