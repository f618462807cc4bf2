"""DeepL API v2 (``--method deepl``): ``POST /v2/translate``, key in ``DEEPL_AUTH_KEY``.

The request is DeepL's JSON form: ``{"text": [...], "source_lang": "EN", "target_lang": "ES"}`` with the
header ``Authorization: DeepL-Auth-Key KEY``; the answer is ``{"translations": [{"detected_source_language",
"text"}, ...]}`` in request order. A key ending in ``:fx`` belongs to DeepL API Free, served from
``api-free.deepl.com``; any other key from ``api.deepl.com`` (Pro), as DeepL's documentation prescribes.
``--base-url`` replaces the host (a proxy, or the tests' local server). DeepL accepts up to 50 texts per
request. Target English and Portuguese need a variant (``EN-US``, ``PT-PT``): a bare ``en``/``pt`` card
takes the variant below, and the code sent is recorded on the card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mt_eval.languages.card import LanguageCard
from mt_eval.methods.mt_api import ApiCall, ApiSettings, MTApiMethod, read_key

KEY_ENV = "DEEPL_AUTH_KEY"
FREE_URL, PRO_URL = "https://api-free.deepl.com", "https://api.deepl.com"
# DeepL API Pro's list price per character (deepl.com/pro-api, 2025: $25 per million characters), declared
PRICE_USD_PER_MILLION = 25.0
PRICE_SOURCE = "declared: DeepL API Pro list price, $25 per million characters (deepl.com/pro-api, 2025)"
TARGET_VARIANTS = {"en": "EN-US", "pt": "PT-PT", "zh": "ZH-HANS"}


def deepl_code(card: LanguageCard, *, target: bool) -> str:
    """DeepL's code for a card: upper-case language (and region: ``pt-BR`` -> ``PT-BR``)."""
    if target and card.code in TARGET_VARIANTS:
        return TARGET_VARIANTS[card.code]
    return card.code.upper() if target else card.code.split("-")[0].upper()


@dataclass(frozen=True)
class DeepLApi:
    key: str = field(repr=False)
    base_url: str
    source_lang: str
    target_lang: str
    name: str = "deepl"
    max_texts: int = 50
    price_usd_per_million_chars: float = PRICE_USD_PER_MILLION
    price_source: str = PRICE_SOURCE

    def call(self, texts: Sequence[str]) -> ApiCall:
        return ApiCall(f"{self.base_url}/v2/translate", {"Authorization": f"DeepL-Auth-Key {self.key}"}, {},
                       {"text": list(texts), "source_lang": self.source_lang, "target_lang": self.target_lang})

    def texts(self, data: Any) -> list[str]:
        items = data.get("translations") if isinstance(data, dict) else None
        if not isinstance(items, list) or not all(isinstance(i, dict) and isinstance(i.get("text"), str)
                                                  for i in items):
            raise ValueError("no 'translations' list of {'text': ...}")
        return [str(i["text"]) for i in items]


def deepl_method(source: LanguageCard, target: LanguageCard, options: Mapping[str, Any]) -> MTApiMethod:
    variable = str(options.get("api_key_env") or KEY_ENV)
    key = read_key(variable, require=bool(options.get("require_key", True)))
    base = str(options.get("base_url") or (FREE_URL if key.endswith(":fx") else PRO_URL)).rstrip("/")
    api = DeepLApi(key, base, deepl_code(source, target=False), deepl_code(target, target=True))
    settings = ApiSettings(**{k: options[k] for k in ("concurrency", "max_retries", "timeout_s", "retry_base_delay")
                                if options.get(k) is not None})
    return MTApiMethod(api, settings, {"api": "deepl-v2", "base_url": base, "source_lang": api.source_lang,
                                       "target_lang": api.target_lang, "api_key_env": variable})
