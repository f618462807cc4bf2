"""Google Cloud Translation v2 (``--method google``): ``POST /language/translate/v2``, key in
``GOOGLE_TRANSLATE_API_KEY``.

The request is the Basic (v2) REST form: ``?key=KEY`` and ``{"q": [...], "source": "en", "target": "es",
"format": "text"}`` (``format`` text: HTML would unescape nothing and escape ``&`` in the answer); the answer
is ``{"data": {"translations": [{"translatedText": ...}, ...]}}`` in request order, errors
``{"error": {"code", "message"}}``. Up to 128 texts per request. ``--base-url`` replaces the host.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mt_eval.languages.card import LanguageCard
from mt_eval.methods.mt_api import ApiCall, ApiSettings, MTApiMethod, read_key

KEY_ENV = "GOOGLE_TRANSLATE_API_KEY"
BASE_URL = "https://translation.googleapis.com"
# Cloud Translation's list price (cloud.google.com/translate/pricing, 2025: $20 per million characters), declared
PRICE_USD_PER_MILLION = 20.0
PRICE_SOURCE = ("declared: Cloud Translation list price, $20 per million characters "
                "(cloud.google.com/translate/pricing, 2025)")
CODES = {"zh": "zh-CN", "he": "iw", "jv": "jw"}  # Google's spellings where the card's code differs


@dataclass(frozen=True)
class GoogleApi:
    key: str = field(repr=False)
    base_url: str
    source_lang: str
    target_lang: str
    name: str = "google"
    max_texts: int = 128
    price_usd_per_million_chars: float = PRICE_USD_PER_MILLION
    price_source: str = PRICE_SOURCE

    def call(self, texts: Sequence[str]) -> ApiCall:
        return ApiCall(f"{self.base_url}/language/translate/v2", {}, {"key": self.key},
                       {"q": list(texts), "source": self.source_lang, "target": self.target_lang, "format": "text"})

    def texts(self, data: Any) -> list[str]:
        body = data.get("data") if isinstance(data, dict) else None
        items = body.get("translations") if isinstance(body, dict) else None
        if not isinstance(items, list) or not all(isinstance(i, dict) and isinstance(i.get("translatedText"), str)
                                                  for i in items):
            raise ValueError("no 'data.translations' list of {'translatedText': ...}")
        return [str(i["translatedText"]) for i in items]


def google_method(source: LanguageCard, target: LanguageCard, options: Mapping[str, Any]) -> MTApiMethod:
    variable = str(options.get("api_key_env") or KEY_ENV)
    key = read_key(variable, require=bool(options.get("require_key", True)))
    base = str(options.get("base_url") or BASE_URL).rstrip("/")
    api = GoogleApi(key, base, CODES.get(source.code, source.code), CODES.get(target.code, target.code))
    settings = ApiSettings(**{k: options[k] for k in ("concurrency", "max_retries", "timeout_s", "retry_base_delay")
                                if options.get(k) is not None})
    return MTApiMethod(api, settings, {"api": "google-translate-v2", "base_url": base, "source_lang": api.source_lang,
                                       "target_lang": api.target_lang, "api_key_env": variable})
