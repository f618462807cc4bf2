"""spBLEU (metrics/spbleu.py) equals ``sacrebleu --tokenize flores200`` on the same files.

No FLORES-200 model can be downloaded here, so the test trains a tiny SentencePiece model on NTREX lines and
puts it where both look for it: sacrebleu's cache (``$SACREBLEU/models/flores200sacrebleuspm``). The
sacrebleu command line, run as a separate process with that ``$SACREBLEU``, is the independent reference.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from data_paths import NTREX
from mt_eval.corpus.models import Entry
from mt_eval.errors import UserError
from mt_eval.languages.card import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.registry import OPT_IN, metrics_for
from mt_eval.metrics.sacre import Bleu
from mt_eval.metrics.spbleu import MODEL_FILE, SpBleu, SpmConfig
from mt_eval.scoring.profiles import PROFILES

N = 120
REF = (NTREX / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[:N]
CAT = (NTREX / "newstest2019-ref.cat.txt").read_text(encoding="utf-8").splitlines()[:N]


@pytest.fixture(scope="module")
def sacre_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import sentencepiece as spm

    root = tmp_path_factory.mktemp("sacrebleu")
    corpus = root / "train.txt"
    corpus.write_text("\n".join(REF + CAT) + "\n", encoding="utf-8")
    (root / "models").mkdir()
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(root / "models" / "tiny"), vocab_size=300,
                                   character_coverage=1.0, model_type="unigram", minloglevel=2)
    (root / "models" / "tiny.model").rename(root / "models" / MODEL_FILE)
    return root


def _ctx(refs: list[str]) -> MetricContext:
    entries = [Entry(id=i + 1, source="x", reference=r) for i, r in enumerate(refs)]
    return MetricContext(entries=entries, target=language_card("es"), source=language_card("en"))


def _ours(hyps: list[str], refs: list[str], config: SpmConfig) -> float:
    metric = SpBleu(config)
    ctx = _ctx(refs)
    metric.prepare(ctx)
    return float(metric.aggregate(metric.statistics(hyps, ctx).sum(axis=0)))


def _cli(hyps: list[str], refs: list[str], sacre: Path, tmp: Path) -> float:
    (tmp / "hyp.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    (tmp / "ref.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    cli = Path(sys.executable).with_name("sacrebleu")
    done = subprocess.run([str(cli), str(tmp / "ref.txt"), "-i", str(tmp / "hyp.txt"), "-m", "bleu", "--tokenize",
                           "flores200", "-b", "-w", "6"], env={**os.environ, "SACREBLEU": str(sacre)},
                          capture_output=True, text=True, check=True, timeout=120)
    return float(done.stdout.strip())


@pytest.mark.parametrize("system", ["catalan", "truncated", "salad"])
def test_equal_to_sacrebleu_cli_with_flores200(sacre_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               system: str) -> None:
    monkeypatch.setenv("SACREBLEU", str(sacre_dir))
    monkeypatch.delenv("MT_EVAL_MODELS", raising=False)
    config = SpmConfig.parse()  # found in sacrebleu's cache, as the CLI finds it
    assert config.model == str(sacre_dir / "models" / MODEL_FILE)
    hyps = {"catalan": CAT, "truncated": [" ".join(r.split()[:-2]) for r in REF],
            "salad": [" ".join(sorted(r.split())) for r in REF]}[system]
    ours, cli = _ours(hyps, REF, config), _cli(hyps, REF, sacre_dir, tmp_path)
    assert ours == pytest.approx(cli, abs=5e-7)
    if system == "salad":  # every word kept, the order lost: far below the reference itself (100), though pieces
        # inside words still match, which keeps spBLEU's salad score above word BLEU's (measured 62.7 vs 100)
        assert ours < 70 and _ours(REF, REF, config) == pytest.approx(100.0)


def test_differs_from_word_bleu_and_says_so_in_its_signature(sacre_dir: Path) -> None:
    config = SpmConfig.parse(str(sacre_dir / "models" / MODEL_FILE))
    sp, word = _ours(CAT, REF, config), Bleu()
    ctx = _ctx(REF)
    word.prepare(ctx)
    word_bleu = float(word.aggregate(word.statistics(CAT, ctx).sum(axis=0)))
    assert sp != pytest.approx(word_bleu, abs=0.5)
    signature = SpBleu(config).signature(language_card("es")) or ""
    assert "tok:flores200" in signature and config.sha256[:16] in signature
    # bootstrap resamples go through Bleu's NumPy transcription: the same number on the full sums
    metric = SpBleu(config)
    metric.prepare(ctx)
    stats = metric.statistics(CAT, ctx)
    assert float(metric.vector(stats.sum(axis=0)[None, :])[0]) == pytest.approx(sp, abs=1e-9)


def test_opt_in_only_and_never_in_a_composite(sacre_dir: Path) -> None:
    config = SpmConfig.parse(str(sacre_dir / "models" / MODEL_FILE))
    es = language_card("es")
    assert "spbleu" in OPT_IN and "spbleu" not in {m.id for m in metrics_for(es)}
    assert "spbleu" in {m.id for m in metrics_for(es, configured={"spbleu": config})}
    assert all("spbleu" not in weights for weights in PROFILES.values())
    block = SpBleu(config).card_block()
    assert block == {"tokenizer": "flores200", "spm_sha256": config.sha256, "in_composite": False}
    assert np.isfinite(_ours(CAT, REF, config))


def test_missing_model_is_one_line_and_nothing_is_downloaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SACREBLEU", str(tmp_path / "empty"))
    monkeypatch.setenv("MT_EVAL_MODELS", str(tmp_path / "none"))
    with pytest.raises(UserError) as err:
        SpmConfig.parse()
    assert "never downloads" in err.value.message and "--spbleu" in (err.value.hint or "")
    assert not (tmp_path / "empty").exists()
    with pytest.raises(UserError, match="no such file"):
        SpmConfig.parse(str(tmp_path / "missing.model"))


def test_a_card_scored_with_spbleu_records_the_model_and_verifies(sacre_dir: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from mt_eval.api import score
    from mt_eval.runcard.verify import verify_card

    monkeypatch.setenv("SACREBLEU", str(sacre_dir))
    config = SpmConfig.parse()
    out = tmp_path / "card.json"
    result = score(CAT[:40], REF[:40], lang="en-es", opt_in=[SpBleu(config)], out=out)
    card = result.card
    assert card["spbleu"] == config.card_block()
    assert card["scores"]["spbleu"] == pytest.approx(_cli(CAT[:40], REF[:40], sacre_dir, tmp_path), abs=5e-7)
    assert card["scores"]["composite"] == score(CAT[:40], REF[:40], lang="en-es").card["scores"]["composite"]
    assert verify_card(card, out) == []
    # another SentencePiece model on this machine: the card's spBLEU cannot be recomputed, and says why
    other = tmp_path / "other" / "models"
    other.mkdir(parents=True)
    (other / MODEL_FILE).write_bytes((sacre_dir / "models" / MODEL_FILE).read_bytes() + b"\0")
    monkeypatch.setenv("SACREBLEU", str(other.parent))
    problems = verify_card(card, out)
    assert len(problems) == 1 and "cannot be rescored" in problems[0] and "sha256" in problems[0]


def test_score_spbleu_from_the_command_line(sacre_dir: Path, tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from mt_eval.cli import app

    (tmp_path / "ref.txt").write_text("\n".join(REF[:30]) + "\n", encoding="utf-8")
    (tmp_path / "hyp.txt").write_text("\n".join(CAT[:30]) + "\n", encoding="utf-8")
    base = ["score", "--reference-file", str(tmp_path / "ref.txt"), "-p", str(tmp_path / "hyp.txt"), "-l", "en-es",
            "--no-semantic", "--bootstrap", "0", "--runs-dir", str(tmp_path / "runs")]
    model = str(sacre_dir / "models" / MODEL_FILE)
    done = CliRunner().invoke(app, [*base, "--spbleu", model, "-o", str(tmp_path / "card.json")])
    assert done.exit_code == 0, done.output
    card = json.loads((tmp_path / "card.json").read_text(encoding="utf-8"))
    assert card["scores"]["spbleu"] == pytest.approx(_cli(CAT[:30], REF[:30], sacre_dir, tmp_path), abs=5e-7)
    missing = CliRunner().invoke(app, [*base, "--spbleu", str(tmp_path / "nope.model")])
    assert missing.exit_code == 2 and "no such file" in missing.output
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # refused before any work
