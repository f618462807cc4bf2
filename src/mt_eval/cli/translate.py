"""``mt-eval translate`` and ``mt-eval serve-method``: the measured method deployed, nothing scored.

Both build the method as ``run`` does (``methods.registry.build_method``, or ``runcard.reproduce.method_from_card``
for ``--card``) and hand the work to ``api.translate`` / ``web.method_server``; this module only parses and
writes what they return.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from mt_eval.cli.common import DEFAULT_CACHE_PATH, LLM, IdsOpt, LangPairOpt, err, language_pair, opt, path_str
from mt_eval.errors import UserError
from mt_eval.methods.base import Method
from mt_eval.methods.pipeline import DEFAULT_FST_RETRIES

CORPUS_SUFFIXES = (".json", ".jsonl", ".tsv")  # anything else that exists is plain text, one segment a line

MethodOpt = Annotated[str | None, opt("The method spec, as for run (apertium:PAIR, llm, coached, "
                                      "pipeline:validate-retry, plugin:...); with --card it must be the card's.",
                                      "--method")]
CardOpt = Annotated[Path | None, opt("A sealed run card: rebuild its method (or check --method against it); "
                                     "refused when the method hash differs from the card's.", "--card")]
ModelOpt = Annotated[str | None, opt("LLM model slug, e.g. openai/gpt-4o-mini.")]
BaseUrlOpt = Annotated[str | None, opt("Any OpenAI-compatible server (vLLM, Ollama, llama.cpp).")]
KeyEnvOpt = Annotated[str | None, opt("Environment variable holding the API key.")]
PromptOpt = Annotated[Path | None, opt("System prompt FILE (default: built-in template).")]
CoachingOpt = Annotated[Path | None, opt("Coaching data FILE (method 'coached').")]
BatchOpt = Annotated[int, opt("Entries per request.")]
ConcurrencyOpt = Annotated[int, opt("Requests in flight at once.")]
NoCacheOpt = Annotated[bool, opt("Neither read nor write the response cache.", "--no-cache")]
TemperatureOpt = Annotated[float, opt("Sampling temperature.")]
MaxTokensOpt = Annotated[int | None, opt("Completion token limit per request.")]
LlmSeedOpt = Annotated[int | None, opt("Sampling seed sent to the provider.", "--llm-seed")]
ValidatorOpt = Annotated[str | None, opt("pipeline validator: wordlist:FILE or plugin:module:Factory.")]
FstRetriesOpt = Annotated[int, opt("pipeline: retries after a validator rejection.")]


def _llm_options(model: str | None, base_url: str | None, api_key_env: str | None, system_prompt: Path | None,
                 coaching: Path | None, batch_size: int, concurrency: int, no_cache: bool,
                 sampling: tuple[float, int | None, int | None], validator: str | None,
                 fst_retries: int) -> dict[str, Any]:
    """The options ``run`` gives ``build_method``, so the same flags build the same method (and method hash)."""
    temperature, max_tokens, seed = sampling
    return {"model": model, "provider": LLM.provider, "base_url": base_url, "api_key_env": api_key_env,
            "temperature": temperature, "max_tokens": max_tokens, "seed": seed,
            "system_prompt_file": path_str(system_prompt), "coaching_file": path_str(coaching),
            "batch_size": batch_size, "concurrency": concurrency, "max_retries": LLM.max_retries,
            "timeout_s": LLM.timeout_s, "cache_path": None if no_cache else str(DEFAULT_CACHE_PATH),
            "validator": validator, "fst_retries": fst_retries}


def _load_input(file: str, source_lang: str | None, target_lang: str | None, ids: str | None) -> tuple[Any, bool]:
    """(dataset, plain text?): a corpus file or catalogue id gives its entries' sources, a text file its lines."""
    from mt_eval.api.translate import dataset_from_segments
    from mt_eval.corpus import load_corpus, select_entries

    path = Path(file)
    if path.is_file() and path.suffix.lower() not in CORPUS_SUFFIXES:
        if not source_lang or not target_lang:
            raise UserError("a plain-text FILE needs the language pair: give -l SRC-TGT (or --card)", file=file)
        lines = path.read_text(encoding="utf-8").splitlines()
        return dataset_from_segments(lines, source_lang, target_lang, dataset_id=path.stem), True
    full = load_corpus(file, source_lang=source_lang, target_lang=target_lang)
    return (select_entries(full, ids=ids) if ids else full), False


def _method(spec: str | None, card_path: Path | None, dataset: Any, llm: dict[str, Any]) -> tuple[Method, str | None]:
    """(the method, the card's run_card_hash when --card was given and its method hash matched)."""
    from mt_eval.api.translate import check_card_method
    from mt_eval.methods.registry import build_method

    if card_path is None:
        if spec is None:
            raise UserError("give --method SPEC, or --card CARD to rebuild the card's method")
        return build_method(spec, dataset=dataset, llm_options=llm), None
    from mt_eval.runcard.io import load_card
    from mt_eval.runcard.reproduce import method_from_card

    card = load_card(card_path)
    method = (build_method(spec, dataset=dataset, llm_options=llm) if spec is not None
              else method_from_card(card, dataset, base_url=llm.get("base_url"), api_key_env=llm.get("api_key_env")))
    check_card_method(method, card, file=str(card_path))
    return method, str(card["run_card_hash"])


def _card_languages(card_path: Path | None, src: str | None, tgt: str | None) -> tuple[str | None, str | None]:
    if card_path is None or (src and tgt):
        return src, tgt
    from mt_eval.runcard.io import load_card

    ds = load_card(card_path)["dataset"]
    return src or ds["source_language"], tgt or ds["target_language"]


def translate(
    file: Annotated[str, typer.Argument(help="Plain text (one segment a line), or a corpus file or id "
                                              "(its sources are translated).")],
    method: MethodOpt = None, card: CardOpt = None,
    out_path: Annotated[Path | None, opt("Write the translations here (the provenance beside it, "
                                         "OUT.provenance.json); default: stdout, provenance on stderr.",
                                         "--out", "-o")] = None,
    lang_pair: LangPairOpt = None, ids: IdsOpt = None,
    model: ModelOpt = None, base_url: BaseUrlOpt = LLM.base_url, api_key_env: KeyEnvOpt = LLM.api_key_env,
    system_prompt: PromptOpt = None, coaching: CoachingOpt = None, batch_size: BatchOpt = LLM.batch_size,
    concurrency: ConcurrencyOpt = LLM.concurrency, no_cache: NoCacheOpt = False,
    temperature: TemperatureOpt = LLM.temperature, max_tokens: MaxTokensOpt = LLM.max_tokens,
    llm_seed: LlmSeedOpt = LLM.seed, validator: ValidatorOpt = None, fst_retries: FstRetriesOpt = DEFAULT_FST_RETRIES,
) -> None:
    """Translate FILE with a method exactly as run would, scoring nothing: one line per input line (JSONL with
    ids for a corpus), and a provenance record naming the method hash, harness version and input sha256.

    Example:

      mt-eval translate --method apertium:eng-spa -l en-es news.txt -o news.es.txt

      mt-eval translate --card runs/card.json examples/ntrex128-eng-spa.json -o out.jsonl
    """
    from mt_eval.api.translate import file_sha256, translate_dataset

    src, tgt = _card_languages(card, *language_pair(lang_pair, None, None))
    dataset, plain = _load_input(file, src, tgt, ids)
    llm = _llm_options(model, base_url, api_key_env, system_prompt, coaching, batch_size, concurrency, no_cache,
                       (temperature, max_tokens, llm_seed), validator, fst_retries)
    built, card_hash = _method(method, card, dataset, llm)
    sha = file_sha256(Path(file)) if Path(file).is_file() else dataset.sha256
    done = translate_dataset(built, dataset, input_sha256=sha, card_hash=card_hash)
    lines = [t.text.replace("\n", " ") if plain else
             json.dumps({"id": t.entry_id, "translation": t.text, **({"error": t.error} if t.error else {})},
                        ensure_ascii=False) for t in done.translations]
    text = "".join(line + "\n" for line in lines)
    provenance = json.dumps({**done.provenance, "input": file}, ensure_ascii=False, indent=2)
    if out_path is None:
        sys.stdout.write(text)
        err.print(provenance, highlight=False, soft_wrap=True, markup=False)
    else:
        from mt_eval.runcard.io import write_atomic

        write_atomic(out_path, text.encode("utf-8"), what="the translations")
        write_atomic(out_path.with_name(out_path.name + ".provenance.json"), (provenance + "\n").encode("utf-8"),
                     what="the provenance record")
    if done.failed:
        err.print(f"{len(done.failed)} of {len(done.translations)} segments failed (first: entry "
                  f"{done.failed[0].entry_id}: {done.failed[0].error})", highlight=False, soft_wrap=True, markup=False)
        raise typer.Exit(3)


def serve_method(
    method: MethodOpt = None, card: CardOpt = None, lang_pair: LangPairOpt = None,
    host: Annotated[str, opt("Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, opt("Port to listen on.")] = 8100,
    token_env: Annotated[str | None, opt("Environment variable holding the bearer token every request must "
                                         "carry (required on an address other than loopback).")] = None,
    max_segments: Annotated[int, opt("Segments per request at most (413 above).")] = 256,
    max_body_bytes: Annotated[int, opt("Request body bytes at most (413 above).")] = 1_000_000,
    model: ModelOpt = None, base_url: BaseUrlOpt = LLM.base_url, api_key_env: KeyEnvOpt = LLM.api_key_env,
    system_prompt: PromptOpt = None, coaching: CoachingOpt = None, batch_size: BatchOpt = LLM.batch_size,
    concurrency: ConcurrencyOpt = LLM.concurrency, no_cache: NoCacheOpt = False,
    temperature: TemperatureOpt = LLM.temperature, max_tokens: MaxTokensOpt = LLM.max_tokens,
    llm_seed: LlmSeedOpt = LLM.seed, validator: ValidatorOpt = None, fst_retries: FstRetriesOpt = DEFAULT_FST_RETRIES,
) -> None:
    """Serve a method over HTTP: POST /translate {"segments": [...]} and GET /method, every response naming the
    method card hash.

    Example:

      mt-eval serve-method --method apertium:eng-spa -l en-es --port 8100

      export MT_EVAL_METHOD_TOKEN=$(openssl rand -hex 16)

      mt-eval serve-method --card run_card.json --host 0.0.0.0 --token-env MT_EVAL_METHOD_TOKEN
    """
    from mt_eval.api.translate import dataset_from_segments
    from mt_eval.web.method_server import Limits, create_method_app
    from mt_eval.web.method_server import serve_method as run_server

    token = _serving_token(host, token_env)
    src, tgt = _card_languages(card, *language_pair(lang_pair, None, None))
    if not src or not tgt:
        raise UserError("give the language pair: -l SRC-TGT (or --card)")
    llm = _llm_options(model, base_url, api_key_env, system_prompt, coaching, batch_size, concurrency, no_cache,
                       (temperature, max_tokens, llm_seed), validator, fst_retries)
    built, card_hash = _method(method, card, dataset_from_segments([], src, tgt), llm)
    app = create_method_app(built, source_lang=src, target_lang=tgt, card_hash=card_hash, token=token,
                            limits=Limits(max_body_bytes=max_body_bytes, max_segments=max_segments))
    err.print(f"serving {built.identity.name} on http://{host}:{port} (POST /translate, GET /method)",
              highlight=False, markup=False)
    run_server(app, host=host, port=port)


MIN_TOKEN_CHARS = 16


def _serving_token(host: str, token_env: str | None) -> str | None:
    """The bearer token from ``token_env``; a non-loopback address without one is refused (anyone reaching it
    could spend the method's provider budget)."""
    import os

    from mt_eval.metrics.embeddings.backends import is_loopback

    if token_env is None:
        if not is_loopback(host):
            raise UserError(f"serving on {host} without a token lets anyone who reaches it run this method (and spend "
                            "its budget)", field="--host",
                            hint="export MT_EVAL_METHOD_TOKEN=$(openssl rand -hex 16) and add --token-env "
                                 "MT_EVAL_METHOD_TOKEN, or serve on 127.0.0.1")
        return None
    token = os.environ.get(token_env, "").strip()
    if len(token) < MIN_TOKEN_CHARS:
        state = "is not set" if not token else f"holds {len(token)} characters"
        raise UserError(f"{token_env} {state}: the token must have at least {MIN_TOKEN_CHARS} characters",
                        field="--token-env", hint=f"export {token_env}=$(openssl rand -hex 16)")
    return token
