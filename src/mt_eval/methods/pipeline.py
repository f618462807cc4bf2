"""``pipeline:validate-retry``: translate, validate, and retry with the validator's feedback.

The validator is pluggable: anything with ``validate(text, request) -> (ok, feedback)``. The
built-in ``wordlist:FILE`` accepts a translation when every word is in a word list (one word per
line); the morphological-analyser validator plugs in the same way. To add one, either register a
factory with :func:`register_validator` (``--validator NAME:ARG``) or name a class with
``--validator plugin:package.module:Factory`` (called with no arguments). A rejected translation
is sent back in the same conversation with the feedback, up to ``fst_retries`` times; every attempt
(text, accepted, feedback) is recorded per entry in ``extra["validation"]``. When no attempt is
accepted the last one is kept (it is a translation, just an unvalidated one), never an error.
"""

from __future__ import annotations

import asyncio
import importlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from mt_eval.errors import UserError
from mt_eval.methods import prompts
from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation, TranslationRequest
from mt_eval.methods.llm import LLMMethod
from mt_eval.providers.openai_compat import ProviderError

DEFAULT_FST_RETRIES = 2  # validator rejections answered with feedback before the entry is kept as is


@runtime_checkable
class Validator(Protocol):
    name: str

    def validate(self, text: str, request: TranslationRequest) -> tuple[bool, str]:
        """(accepted, feedback the model can act on when not accepted)."""
        ...


WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


class WordListValidator:
    """Accepts a translation whose every word (case-folded) is in the list."""

    def __init__(self, path: str) -> None:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise UserError(f"cannot read word list: {exc.strerror}", file=path) from None
        self.words = {w.strip().casefold() for w in lines if w.strip()}
        self.name = f"wordlist:{path}"

    def validate(self, text: str, request: TranslationRequest) -> tuple[bool, str]:
        unknown = [w for w in WORD.findall(text) if not w.isdigit() and w.casefold() not in self.words]
        if not unknown:
            return True, ""
        return False, "these words are not valid in the target language: " + ", ".join(dict.fromkeys(unknown))


VALIDATORS: dict[str, Callable[[str], Validator]] = {"wordlist": WordListValidator}


def register_validator(name: str, factory: Callable[[str], Validator]) -> None:
    VALIDATORS[name] = factory


def load_validator(spec: str) -> Validator:
    kind, _, arg = spec.partition(":")
    if kind == "plugin":
        module, _, attr = arg.rpartition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError, ValueError) as exc:
            raise UserError(f"cannot load validator '{arg}': {exc}", field="validator") from None
        validator = factory()
    elif kind in VALIDATORS and arg:
        validator = VALIDATORS[kind](arg)
    else:
        raise UserError(f"unknown validator '{spec}'", field="validator",
                        hint=f"use {', '.join(k + ':ARG' for k in VALIDATORS)} or plugin:module:Factory")
    if not isinstance(validator, Validator):
        raise UserError(f"validator '{spec}' has no validate(text, request) method", field="validator")
    return validator


class ValidateRetryMethod(MethodBase):
    """Wraps an :class:`LLMMethod` (which owns the client, cache and batching)."""

    def __init__(self, translator: LLMMethod, validator: Validator, fst_retries: int = DEFAULT_FST_RETRIES) -> None:
        if fst_retries < 0:
            raise UserError("--fst-retries must be ≥ 0")
        self.translator, self.validator, self.fst_retries = translator, validator, fst_retries
        self.batch_size, self.concurrency = translator.batch_size, translator.concurrency
        base = translator.identity
        config = {**base.config, "fst_retries": fst_retries, "max_retries": fst_retries, "validator": validator.name,
                  "tools_enabled": [validator.name]}
        self.identity = MethodIdentity(f"pipeline:validate-retry:{base.model_slug}", MethodClass.PIPELINE,
                                       base.version, base.model_slug, config, base.provider, base.system_prompt)

    @property
    def retries(self) -> int:
        return self.translator.retries

    async def open(self) -> None:
        await self.translator.open()

    async def close(self) -> None:
        await self.translator.close()

    def plan(self, requests: Sequence[TranslationRequest]) -> dict[str, Any]:
        return {**self.translator.plan(requests), "note": f"plus up to {self.fst_retries} retries per rejected entry"}

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        first = await self.translator.translate(requests)
        return list(await asyncio.gather(*(self._refine(r, t) for r, t in zip(requests, first, strict=True))))

    async def _refine(self, request: TranslationRequest, t: Translation) -> Translation:
        if t.error:
            return t
        ok, feedback = self.validator.validate(t.text, request)
        attempts: list[dict[str, Any]] = [{"text": t.text, "accepted": ok, "feedback": feedback}]
        history = [{"role": "user", "content": prompts.single_message(request)},
                   {"role": "assistant", "content": t.text}]
        while not ok and len(attempts) <= self.fst_retries:
            try:
                reply = await self.translator.call(self.translator.messages(prompts.feedback_message(feedback),
                                                                            history))
            except ProviderError as exc:
                if exc.fatal:
                    raise
                attempts.append({"text": None, "accepted": False, "feedback": f"request failed: {exc.message}"})
                break
            text = prompts.clean_single(reply.content, request.source)
            t.usage.add(reply.usage)
            t.latency_seconds += reply.latency
            ok, feedback = self.validator.validate(text, request)
            attempts.append({"text": text, "accepted": ok, "feedback": feedback})
            history += [{"role": "user", "content": prompts.feedback_message(attempts[-2]["feedback"])},
                        {"role": "assistant", "content": text}]
            t.text = text
        t.extra["validation"] = attempts
        t.extra["validation_attempts"] = len(attempts)
        t.extra["validated"] = ok
        return t
