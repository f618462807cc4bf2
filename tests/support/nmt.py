"""A tiny NLLB-style checkpoint (M2M100 architecture, NLLB tokenizer with its language codes) built in
seconds: random weights, a byte-pair tokenizer trained on a few sentences. It translates nonsense, but
deterministically, through exactly the code path a real NLLB-200 checkpoint takes (``src_lang`` prefix,
forced target-language token, beam search)."""

from __future__ import annotations

from pathlib import Path

CORPUS = ["The cat sleeps on the mat.", "El gato duerme en la alfombra.", "Hello world, how are you?",
          "Hola mundo, ¿cómo estás?", "Le chat dort sur le tapis.", "Bonjour le monde."]


def build_tiny_nllb(directory: Path, *, seed: int = 0, max_length: int = 12, num_beams: int = 2) -> Path:
    """Save a tiny NLLB-style checkpoint to ``directory`` (``save_pretrained``: safetensors + tokenizer)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import M2M100Config, M2M100ForConditionalGeneration, NllbTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.Metaspace()
    bpe.decoder = decoders.Metaspace()
    bpe.train_from_iterator(CORPUS * 4, trainers.BpeTrainer(vocab_size=150,
                                                            special_tokens=["<s>", "<pad>", "</s>", "<unk>"]))
    tokenizer = NllbTokenizerFast(tokenizer_object=bpe, src_lang="eng_Latn", tgt_lang="spa_Latn")
    tokenizer.save_pretrained(directory)
    torch.manual_seed(seed)
    config = M2M100Config(vocab_size=len(tokenizer), d_model=16, encoder_layers=1, decoder_layers=1,
                          encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                          decoder_ffn_dim=32, max_position_embeddings=128, pad_token_id=tokenizer.pad_token_id,
                          bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                          decoder_start_token_id=tokenizer.eos_token_id,
                          init_std=0.5)  # the default 0.02 gives one output whatever the input
    model = M2M100ForConditionalGeneration(config)
    generation = model.generation_config
    assert generation is not None
    generation.max_length, generation.num_beams = max_length, num_beams
    model.save_pretrained(directory)
    return directory


def build_tiny_marian(directory: Path, *, max_length: int = 12, num_beams: int = 2) -> Path:
    """Save a tiny OPUS-MT-style checkpoint (Marian: one language pair, SentencePiece source/target models)."""
    import io
    import json

    import sentencepiece as spm
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    directory.mkdir(parents=True, exist_ok=True)
    model_file = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(CORPUS * 8), model_writer=model_file, vocab_size=64,
                                   model_type="unigram", character_coverage=1.0, pad_id=-1, bos_id=-1, eos_id=-1,
                                   unk_id=0, unk_piece="<unk>", hard_vocab_limit=False)
    for name in ("source.spm", "target.spm"):
        (directory / name).write_bytes(model_file.getvalue())
    pieces = spm.SentencePieceProcessor(model_proto=model_file.getvalue())
    vocab = {"</s>": 0, "<unk>": 1, "<pad>": 2}
    for i in range(pieces.get_piece_size()):
        vocab.setdefault(pieces.id_to_piece(i), len(vocab))
    (directory / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    MarianTokenizer(str(directory / "source.spm"), str(directory / "target.spm"),
                    str(directory / "vocab.json")).save_pretrained(directory)
    torch.manual_seed(0)
    config = MarianConfig(vocab_size=len(vocab), d_model=16, encoder_layers=1, decoder_layers=1,
                          encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                          max_position_embeddings=64, pad_token_id=2, eos_token_id=0, decoder_start_token_id=2,
                          init_std=0.5)
    model = MarianMTModel(config)
    generation = model.generation_config
    assert generation is not None
    generation.max_length, generation.num_beams = max_length, num_beams
    model.save_pretrained(directory)
    return directory
