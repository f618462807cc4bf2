"""Method specs (``SCHEME:ARGUMENT``) to Method objects.

A spec is split at its first colon, so an argument may itself contain colons
(``plugin:package.module:Class``). Each scheme is one small factory
function in ``SCHEMES``; a later scheme is one more function and one more entry (or a call to
:func:`register_scheme`), and the error for an unknown scheme lists whatever is registered, so it
never goes stale. Whatever a factory returns goes through :func:`~mt_eval.methods.base.as_method`,
so the engine, ``mt-eval run`` and the API get the whole declared protocol.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from mt_eval.corpus.models import Dataset
from mt_eval.errors import MethodError
from mt_eval.methods.base import Method, as_method

Factory = Callable[[str, Dataset], Method]
# LLM schemes also take the CLI's model/provider/engine options (``llm_options``)
OptionsFactory = Callable[[str, Dataset, Mapping[str, Any]], Method]


@dataclass(frozen=True)
class Scheme:
    """A method family: how to build it and how its spec is written (for error messages)."""

    factory: Factory | OptionsFactory
    usage: str
    needs_argument: bool = True
    takes_options: bool = False


def _predictions(argument: str, dataset: Dataset) -> Method:
    from mt_eval.methods.predictions import PredictionsMethod

    return PredictionsMethod(argument, dataset)


def _apertium(argument: str, dataset: Dataset) -> Method:
    from mt_eval.methods.apertium import ApertiumMethod

    return ApertiumMethod(argument)


def _llm_method(argument: str, dataset: Dataset, options: Mapping[str, Any], *, coached: bool) -> Any:
    from mt_eval.languages.card import language_card
    from mt_eval.methods.llm import LLMMethod, LLMSettings

    opts = dict(options)
    if argument and not opts.get("model"):
        opts["model"] = argument  # llm:MODEL is shorthand for --method llm --model MODEL
    if not opts.get("model"):
        raise MethodError("LLM method needs an argument or --model",
                          hint="usage: --method llm --model MODEL (or llm:MODEL), e.g. --model openai/gpt-4o-mini")
    known = set(LLMSettings.__dataclass_fields__)
    settings = LLMSettings(**{k: v for k, v in opts.items() if k in known})
    src, tgt = language_card(dataset.info.source_language), language_card(dataset.info.target_language)
    return LLMMethod(settings, source_language=src.code, target_language=tgt.code, source_name=src.name,
                     target_name=tgt.name, coached=coached)


def _llm(argument: str, dataset: Dataset, options: Mapping[str, Any]) -> Method:
    return cast(Method, _llm_method(argument, dataset, options, coached=False))


def _coached(argument: str, dataset: Dataset, options: Mapping[str, Any]) -> Method:
    return cast(Method, _llm_method(argument, dataset, options, coached=True))


def _plugin(argument: str, dataset: Dataset) -> Method:
    """``plugin:package.module:Class``: a method outside mt-eval, built with no arguments.

    The class may inherit :class:`~mt_eval.methods.base.MethodBase` or only provide ``identity``
    and an async ``translate``; :func:`build_method` gives it the protocol's defaults.
    """
    module, _, attr = argument.rpartition(":")
    if not module or not attr:
        raise MethodError(f"method plugin '{argument}' is not module:Class", hint="e.g. plugin:my_pkg.methods:MyMethod")
    try:
        factory = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise MethodError(f"cannot load method plugin '{argument}': {exc}") from None
    if not callable(factory):
        raise MethodError(f"method plugin '{argument}' is not a class or factory")
    try:
        return cast(Method, factory())
    except Exception as exc:  # the plugin's own code: whatever it raises is a one-line error naming it
        raise MethodError(f"method plugin '{argument}' failed to build: {type(exc).__name__}: {exc}") from None


def _pipeline(argument: str, dataset: Dataset, options: Mapping[str, Any]) -> Method:
    from mt_eval.methods.pipeline import ValidateRetryMethod, load_validator

    if argument != "validate-retry":
        raise MethodError(f"unknown pipeline '{argument}'", hint="supported: pipeline:validate-retry")
    if not options.get("validator"):
        raise MethodError("pipeline:validate-retry needs --validator", hint="e.g. --validator wordlist:FILE")
    translator = _llm_method("", dataset, options, coached=bool(options.get("coaching_file")))
    return cast(Method, ValidateRetryMethod(translator, load_validator(str(options["validator"])),
                                            int(options.get("fst_retries", 2))))


def _cards(dataset: Dataset) -> tuple[Any, Any]:
    from mt_eval.languages.card import language_card

    return language_card(dataset.info.source_language), language_card(dataset.info.target_language)


def _nmt(argument: str, dataset: Dataset) -> Method:
    from mt_eval.methods.nmt import NMTMethod

    return NMTMethod(argument, *_cards(dataset))


def _lexicon(argument: str, dataset: Dataset) -> Method:
    from mt_eval.methods.lexicon import LexiconMethod

    return LexiconMethod(argument)


def _deepl(argument: str, dataset: Dataset, options: Mapping[str, Any]) -> Method:
    from mt_eval.methods.deepl import deepl_method

    return deepl_method(*_cards(dataset), options)


def _google(argument: str, dataset: Dataset, options: Mapping[str, Any]) -> Method:
    from mt_eval.methods.google import google_method

    return google_method(*_cards(dataset), options)


SCHEMES: dict[str, Scheme] = {
    "predictions": Scheme(_predictions, "predictions:PATH (JSONL or one line per entry)"),
    "apertium": Scheme(_apertium, "apertium:PAIR (e.g. apertium:eng-spa)"),
    "llm": Scheme(_llm, "llm (with --model; raw LLM over an OpenAI-compatible API)", False, True),
    "coached": Scheme(_coached, "coached (with --model and --coaching FILE)", False, True),
    "pipeline": Scheme(_pipeline, "pipeline:validate-retry (with --model and --validator)", True, True),
    "plugin": Scheme(_plugin, "plugin:MODULE:CLASS (a method class of your own)"),
    "nmt": Scheme(_nmt, "nmt:DIR (a local NLLB/M2M100/OPUS-MT checkpoint folder)"),
    "lexicon": Scheme(_lexicon, "lexicon:FILE (word by word from a source<TAB>target TSV or an Apertium .dix)"),
    "deepl": Scheme(_deepl, "deepl (DeepL API v2; key in DEEPL_AUTH_KEY)", False, True),
    "google": Scheme(_google, "google (Cloud Translation v2; key in GOOGLE_TRANSLATE_API_KEY)", False, True),
}


def register_scheme(name: str, factory: Factory, usage: str, *, needs_argument: bool = True) -> None:
    """Add a scheme (used by later built-ins and by tests); a name may be registered once."""
    if name in SCHEMES:
        raise ValueError(f"method scheme '{name}' is already registered")
    SCHEMES[name] = Scheme(factory, usage, needs_argument)


def supported() -> str:
    return ", ".join(SCHEMES[name].usage for name in sorted(SCHEMES))


def build_method(spec: str, *, dataset: Dataset, llm_options: Mapping[str, Any] | None = None) -> Method:
    """Build the method a ``--method`` spec names; any problem is a one-line MethodError."""
    scheme_name, _, argument = spec.strip().partition(":")
    scheme = SCHEMES.get(scheme_name.strip().lower())
    if scheme is None:
        raise MethodError(f"unknown method '{spec}'", hint=f"supported: {supported()}")
    if scheme.needs_argument and not argument.strip():
        raise MethodError(f"method '{spec}' needs an argument", hint=f"usage: {scheme.usage}")
    if scheme.takes_options:
        return as_method(cast(OptionsFactory, scheme.factory)(argument.strip(), dataset, llm_options or {}))
    return as_method(cast(Factory, scheme.factory)(argument.strip(), dataset))
