"""A tiny COMET checkpoint built offline, for tests: no weights can be downloaded here.

The encoder is an XLM-RoBERTa of hidden size 32 with 2 layers and random weights (seeded), its
tokenizer a sentencepiece unigram model trained on a few hundred NTREX-128 lines, converted to the
fast XLM-R tokenizer COMET loads. It is wrapped as COMET's ``RegressionMetric`` whose
``pretrained_model`` is that local directory, and saved the way ``comet.load_from_checkpoint``
expects a downloaded model: ``<dir>/checkpoints/model.ckpt`` beside ``<dir>/hparams.yaml``. Its scores
mean nothing about translation quality; the tests use it to check that ``CometScore`` runs COMET's own
code path and reports what COMET reports.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from data_paths import NTREX

HIDDEN = 32
LAYERS = 2
VOCAB = 400


def training_lines(n: int = 300) -> list[str]:
    """English sources and Spanish references: the languages the tests score."""
    eng = (NTREX / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:n]
    spa = (NTREX / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[:n]
    return eng + spa


def build_encoder_dir(path: Path) -> Path:
    """config.json + tokenizer.json of a tiny XLM-R, in ``path``: a unigram tokenizer (XLM-R's kind) trained with
    ``tokenizers`` (sentencepiece's converter needs protobuf>=5, which unbabel-comet's pin excludes)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import XLMRobertaConfig, XLMRobertaTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(training_lines(), trainers.UnigramTrainer(
        vocab_size=VOCAB, special_tokens=specials, unk_token="<unk>", show_progress=False))
    tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                      ("<s>", tok.token_to_id("<s>")))
    fast = XLMRobertaTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                   cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>")
    fast.save_pretrained(str(path))
    config = XLMRobertaConfig(vocab_size=len(fast), hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                              num_attention_heads=2, intermediate_size=64, max_position_embeddings=130,
                              pad_token_id=fast.pad_token_id, bos_token_id=fast.bos_token_id,
                              eos_token_id=fast.eos_token_id)
    config.save_pretrained(str(path))
    return path


def build_checkpoint(root: Path, encoder_dir: Path, seed: int, reference_free: bool = False) -> Path:
    """``root/checkpoints/model.ckpt`` (+ ``root/hparams.yaml``) of a RegressionMetric with random weights (a
    ReferencelessRegression, COMET's quality-estimation model, with ``reference_free``)."""
    import pytorch_lightning
    import torch
    import yaml

    with warnings.catch_warnings():  # torchmetrics 0.10 (COMET's pin) warns that pkg_resources is deprecated
        warnings.simplefilter("ignore")
        from comet.models import ReferencelessRegression, RegressionMetric

    torch.manual_seed(seed)
    kind = ReferencelessRegression if reference_free else RegressionMetric
    model = kind(pretrained_model=str(encoder_dir), load_pretrained_weights=False, hidden_sizes=[16],
                 layer="mix", pool="avg", dropout=0.1, local_files_only=True)
    hparams = dict(model.hparams)
    (root / "checkpoints").mkdir(parents=True, exist_ok=True)
    (root / "hparams.yaml").write_text(yaml.safe_dump(hparams), encoding="utf-8")
    ckpt = root / "checkpoints" / "model.ckpt"
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": hparams,
                "pytorch-lightning_version": pytorch_lightning.__version__}, ckpt)
    return ckpt
