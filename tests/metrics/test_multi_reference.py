"""Several references per entry score exactly as sacrebleu's multiple reference streams (decisions §26),
and ``score`` works from references and outputs alone, as sacrebleu is used (null where the source is
needed, the composite re-normalised).

Real text: NTREX en→es. Reference 1 is NTREX's Spanish; reference 2 the same lines with light
deterministic edits (synonyms, no commas), so the two disagree where a second translator would;
the hypotheses are reference 1 degraded (every fourth word dropped, every third line a synonym
swapped), so the best reference differs from line to line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu
from typer.testing import CliRunner

from data_paths import NTREX
from mt_eval.cli import app
from mt_eval.runcard.verify import verify_card
from mt_eval.scoring.composite import composite
from mt_eval.scoring.profiles import PROFILES

N = 150
SYNONYMS = {"dijo": "afirmó", "también": "asimismo", "pero": "sin embargo", "muy": "sumamente", "país": "nación",
            "gente": "personas", "años": "ejercicios", "gobierno": "Ejecutivo"}


def _edit(line: str) -> str:
    return " ".join(SYNONYMS.get(w, w) for w in line.replace(",", "").split()) or line


def _degrade(i: int, line: str) -> str:
    words = [w for k, w in enumerate(line.split()) if k % 4 != 3]
    return _edit(" ".join(words)) if i % 3 == 0 else " ".join(words)


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    d = tmp_path_factory.mktemp("multiref")
    src = (NTREX / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:N]
    ref1 = (NTREX / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[:N]
    ref2 = [_edit(r) for r in ref1]
    hyp = [_degrade(i, r) for i, r in enumerate(ref1)]
    assert sum(a != b for a, b in zip(ref1, ref2, strict=True)) > N // 2
    for name, lines in (("src", src), ("ref1", ref1), ("ref2", ref2), ("hyp", hyp)):
        (d / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"dir": d, "src": src, "ref1": ref1, "ref2": ref2, "hyp": hyp}


def _score(d: Path, *args: str, out: str) -> dict:
    result = CliRunner().invoke(app, ["score", "-p", str(d / "hyp.txt"), "--runs-dir", str(d / "runs"),
                                      "-b", "0", "-o", str(d / out), *args])
    assert result.exit_code == 0, result.output
    return json.loads((d / out).read_text(encoding="utf-8"))


def test_two_references_equal_sacrebleu_corpus_and_sentence_scores(texts: dict) -> None:
    d, hyp, refs = texts["dir"], texts["hyp"], [texts["ref1"], texts["ref2"]]
    card = _score(d, "--source-file", str(d / "src.txt"), "--reference-file", str(d / "ref1.txt"),
                  "--reference-file", str(d / "ref2.txt"), "-l", "en-es", out="two.json")
    s = card["scores"]
    bleu = sacrebleu.metrics.BLEU(tokenize="13a")
    assert s["bleu"] == bleu.corpus_score(hyp, refs).score
    assert s["chrf"] == sacrebleu.corpus_chrf(hyp, refs).score
    assert s["chrf_plus_plus"] == sacrebleu.corpus_chrf(hyp, refs, word_order=2).score
    assert s["ter"] == sacrebleu.corpus_ter(hyp, refs).score
    for key in ("bleu", "chrf", "chrf_plus_plus", "ter"):
        assert "nrefs:2|" in card["metrics"][key]["signature"], key
    # never "the last one wins" nor "the first": both single-reference scores differ
    for single in refs:
        assert s["chrf_plus_plus"] != sacrebleu.corpus_chrf(hyp, [single], word_order=2).score
        assert s["bleu"] != bleu.corpus_score(hyp, [single]).score
    for i, row in enumerate(card["results"]):
        assert row["references"] == [refs[0][i], refs[1][i]]
        want = sacrebleu.sentence_chrf(hyp[i], [refs[0][i], refs[1][i]], word_order=2).score
        assert row["entry_chrf"] == pytest.approx(want, abs=1e-9), i
    # verify (and compare) rebuild from results[], second references included
    assert verify_card(card) == []
    edited = json.loads(json.dumps(card))
    edited["results"][0]["references"][1] = "Una frase completamente distinta."
    assert any(p.startswith("scores.") for p in verify_card(edited))


def test_entries_with_different_numbers_of_references(texts: dict) -> None:
    """A JSONL corpus where only some entries have a second reference: sacrebleu's variable streams
    (``nrefs:var``, None where an entry has fewer)."""
    d, hyp, ref1, ref2 = texts["dir"], texts["hyp"], texts["ref1"], texts["ref2"]
    rows = [{"id": i + 1, "source": s, **({"references": [ref1[i], ref2[i]]} if i % 2 else {"reference": ref1[i]})}
            for i, s in enumerate(texts["src"])]
    (d / "ragged.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    card = _score(d, "-c", str(d / "ragged.jsonl"), "-l", "en-es", out="ragged.json")
    second = [ref2[i] if i % 2 else None for i in range(N)]
    chrf = sacrebleu.metrics.CHRF(word_order=2)
    assert card["scores"]["chrf_plus_plus"] == chrf.corpus_score(hyp, [ref1, second]).score
    assert "nrefs:var|" in card["metrics"]["chrf_plus_plus"]["signature"]
    assert card["scores"]["ter"] == sacrebleu.metrics.TER().corpus_score(hyp, [ref1, second]).score
    assert verify_card(card) == []


@pytest.mark.parametrize("langs", [["-l", "en-es"], ["--target-lang", "es"]], ids=["pair", "target-only"])
def test_score_without_a_source_file(texts: dict, langs: list[str]) -> None:
    d, hyp, ref1 = texts["dir"], texts["hyp"], texts["ref1"]
    card = _score(d, "--reference-file", str(d / "ref1.txt"), *langs, out=f"nosrc-{langs[0]}.json")
    s = card["scores"]
    assert s["chrf_plus_plus"] == sacrebleu.corpus_chrf(hyp, [ref1], word_order=2).score
    assert s["bleu"] == sacrebleu.metrics.BLEU(tokenize="13a").corpus_score(hyp, [ref1]).score
    for key in ("hallucination_rate", "terminology_adherence", "compliance_index", "compliance_index_repaired"):
        assert s[key] is None, key
    (warning,) = [w for w in card["warnings"] if w.startswith("no source text")]
    assert "hallucination_rate" in warning and "compliance_index" in warning
    if langs[0] == "--target-lang":  # the source language is unknown too: code-switching cannot be judged
        assert card["dataset"]["source_language"] == "und" and s["code_switching_rate"] is None
        assert "code_switching_rate" in warning
    else:
        assert s["code_switching_rate"] is not None  # it needs the source language, not its text
    # the composite re-normalises over what is available, under the card's (anchored) rule
    assert s["composite"] == pytest.approx(composite(s, PROFILES[card["profile"]], card["composite_rule"]), abs=1e-12)
    assert card["metrics"]["hallucination_rate"]["weight"] is None
    assert verify_card(card) == []


def test_run_still_needs_a_source(texts: dict) -> None:
    d = texts["dir"]
    result = CliRunner().invoke(app, ["run", "--method", "apertium:eng-spa", "--reference-file", str(d / "ref1.txt"),
                                      "-l", "en-es", "--runs-dir", str(d / "runs")])
    assert result.exit_code == 2 and "--source-file" in result.output


def test_forked_extraction_gives_the_same_statistics_and_signatures(texts: dict) -> None:
    """Large runs extract on two cores; the reference count must reach the parent's scorer all the same."""
    import numpy as np

    from mt_eval.corpus.models import Entry
    from mt_eval.languages.card import language_card
    from mt_eval.metrics.base import MetricContext
    from mt_eval.metrics.registry import metrics_for
    from mt_eval.scoring.extraction import extract_statistics

    entries = [Entry(id=i + 1, source=s, reference=a, references=[a, b])
               for i, (s, a, b) in enumerate(zip(texts["src"], texts["ref1"], texts["ref2"], strict=True))]
    ctx = MetricContext(entries, language_card("es"), language_card("en"))
    ids = ["chrf_plus_plus", "chrf", "bleu", "ter"]
    results = []
    for parallel in (False, True):
        metrics = metrics_for(ctx.target, ids)
        stats = extract_statistics(metrics, texts["hyp"], ctx, parallel=parallel)
        assert all("nrefs:2|" in str(m.signature(ctx.target)) for m in metrics)
        results.append(stats)
    for key in ids:
        assert np.array_equal(results[0][key], results[1][key]), key
