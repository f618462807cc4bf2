"""TER's bounded shift search: sacrebleu's exact numbers where the search ends within the budget (real
translations), never a better number than sacrebleu's where it does not (word salad), and an output too long
to score refused with one line before anything runs."""

from __future__ import annotations

from pathlib import Path

from sacrebleu.metrics import TER
from typer.testing import CliRunner

from data_paths import NTREX
from mt_eval.cli import app
from mt_eval.metrics.ter_bound import MAX_SHIFT_EXCESS, BoundedTER, bounded_edit_rate
from mt_eval.scoring.limits import MAX_OUTPUT_CHARS
from support.perturb import degrade, word_salad


def _refs(n: int, start: int = 400) -> list[str]:
    return (NTREX / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[start:start + n]


def _salad(lines: list[str]) -> list[str]:
    return word_salad(lines, seed=3)


def test_real_translations_get_sacrebleus_exact_statistics() -> None:
    refs = _refs(300)
    hyps = [degrade(i, r) for i, r in enumerate(refs)]
    assert BoundedTER()._extract_corpus_statistics(hyps, [refs]) == TER()._extract_corpus_statistics(hyps, [refs])


def test_the_full_budget_is_sacrebleu_even_on_word_salad() -> None:
    refs = _refs(3)
    salad = _salad(refs)
    assert BoundedTER(budget=1000)._extract_corpus_statistics(salad, [refs]) == TER()._extract_corpus_statistics(
        salad, [refs])


def test_word_salad_never_scores_better_than_unbounded_ter() -> None:
    refs = _refs(6)
    bounded = BoundedTER()._extract_corpus_statistics(_salad(refs), [refs])
    full = TER()._extract_corpus_statistics(_salad(refs), [refs])
    assert all(b[0] >= f[0] and b[1] == f[1] for b, f in zip(bounded, full, strict=True))
    assert sum(b[0] for b in bounded) > sum(f[0] for f in full)  # the bound did stop some searches


def test_a_hypothesis_far_longer_than_its_reference_is_scored_without_shifts() -> None:
    ref = ["el", "gato", "se", "sentó", "en", "la", "alfombra"]
    hyp = ref[::-1] * (MAX_SHIFT_EXCESS // len(ref) + 2)
    edits, length = bounded_edit_rate(hyp, ref)
    assert length == len(ref) and edits >= len(hyp) - len(ref)
    assert edits >= bounded_edit_rate(hyp, ref, budget=1000)[0]


def test_an_output_over_the_limit_is_refused_with_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    refs = _refs(2)
    Path("ref.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    Path("hyp.txt").write_text(refs[0] + "\n" + "palabra " * (MAX_OUTPUT_CHARS // 8 + 1) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["score", "--reference-file", "ref.txt", "-l", "en-es", "--predictions", "hyp.txt",
                                      "-o", "card.json"])
    assert result.exit_code == 2, result.output
    said = [line for line in result.output.splitlines() if "characters" in line]
    assert len(said) == 1 and "over the 100,000 one output may have" in said[0] and "'predicted'" in said[0]
    assert not Path("card.json").exists()


def test_a_card_keeps_the_search_it_was_scored_with() -> None:
    from mt_eval.metrics.base import CURRENT
    from mt_eval.metrics.ter_bound import SHIFT_BUDGET, recorded_budget

    assert recorded_budget(CURRENT) == SHIFT_BUDGET  # a fresh run: the bound
    assert recorded_budget("nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0") == 1000  # before it
    assert recorded_budget("nrefs:1|case:lc|tok:tercom|version:2.6.0|shifts:40|excess:200") == 40
    assert recorded_budget(None) == 1000
