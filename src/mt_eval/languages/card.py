"""Language cards: what the harness needs to know about a target (or source) language.

Issue 5 turns these into one validated data file per language with analysers and orthography
rules; this module holds the card type, code normalisation and the built-in defaults that the
surface metrics need (above all, which sacrebleu tokenizer BLEU must use).
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from functools import lru_cache

from mt_eval.errors import UserError

_BCP47 = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$")

# ISO 639-3 / common aliases -> the BCP-47 primary subtag we key cards on.
_ALIASES = {
    "eng": "en", "spa": "es", "cat": "ca", "glg": "gl", "eus": "eu", "nob": "nb", "nno": "nn",
    "fra": "fr", "deu": "de", "fin": "fi", "isl": "is", "mkd": "mk", "por": "pt", "ita": "it",
    "mri": "mi", "smo": "sm", "hau": "ha", "yor": "yo", "zul": "zu", "xho": "xh", "amh": "am",
    "tha": "th", "zho": "zh", "jpn": "ja", "arb": "ar", "ara": "ar", "hin": "hi", "kor": "ko",
    "swa": "sw", "swh": "sw", "sme": "se", "iku": "iu", "zho-cn": "zh-CN",
}

# name, scripts, caseless, BLEU tokenizer
_BUILTIN: dict[str, tuple[str, tuple[str, ...], bool, str]] = {
    "en": ("English", ("Latn",), False, "13a"),
    "es": ("Spanish", ("Latn",), False, "13a"),
    "ca": ("Catalan", ("Latn",), False, "13a"),
    "gl": ("Galician", ("Latn",), False, "13a"),
    "eu": ("Basque", ("Latn",), False, "13a"),
    "nb": ("Norwegian Bokmål", ("Latn",), False, "13a"),
    "nn": ("Norwegian Nynorsk", ("Latn",), False, "13a"),
    "fr": ("French", ("Latn",), False, "13a"),
    "de": ("German", ("Latn",), False, "13a"),
    "fi": ("Finnish", ("Latn",), False, "13a"),
    "is": ("Icelandic", ("Latn",), False, "13a"),
    "mk": ("Macedonian", ("Cyrl",), False, "13a"),
    "pt": ("Portuguese", ("Latn",), False, "13a"),
    "it": ("Italian", ("Latn",), False, "13a"),
    "mi": ("Māori", ("Latn",), False, "13a"),
    "sm": ("Samoan", ("Latn",), False, "13a"),
    "ha": ("Hausa", ("Latn",), False, "13a"),
    "yo": ("Yoruba", ("Latn",), False, "13a"),
    "zu": ("Zulu", ("Latn",), False, "13a"),
    "xh": ("Xhosa", ("Latn",), False, "13a"),
    "am": ("Amharic", ("Ethi",), True, "13a"),
    "th": ("Thai", ("Thai",), True, "char"),
    "zh": ("Chinese", ("Hani",), True, "zh"),
    "ja": ("Japanese", ("Jpan",), True, "ja-mecab"),
    "ar": ("Arabic", ("Arab",), True, "13a"),
    "hi": ("Hindi", ("Deva",), True, "13a"),
    "ko": ("Korean", ("Kore",), True, "ko-mecab"),
    "sw": ("Swahili", ("Latn",), False, "13a"),
}

_TOKENIZER_MODULES = {"ja-mecab": "MeCab", "ko-mecab": "mecab_ko"}
_TOKENIZER_FALLBACK = {"ja-mecab": "char", "ko-mecab": "char"}


@dataclass(frozen=True)
class LanguageCard:
    code: str
    name: str
    scripts: tuple[str, ...] = ("Latn",)
    caseless: bool = False
    bleu_tokenizer: str = "13a"
    analyser: str | None = None
    generic: bool = False
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def profile(self) -> str:
        """Profile A exactly when the card declares an analyser (DESIGN decision 8)."""
        return "A" if self.analyser else "B"


def normalize_code(code: str) -> str:
    """Canonical BCP-47 spelling: lower-case language, upper-case region, ISO 639-3 aliases folded."""
    raw = code.strip().replace("_", "-")
    if not _BCP47.match(raw):
        raise UserError(
            f"'{code}' is not a BCP-47 language code", hint="use e.g. 'es', 'crk', 'zh-CN' or 'spa'"
        )
    alias = _ALIASES.get(raw.lower())
    if alias:
        return alias
    parts = raw.split("-")
    out = [parts[0].lower()]
    for p in parts[1:]:
        out.append(p.upper() if len(p) == 2 else (p.title() if len(p) == 4 else p.lower()))
    return "-".join(out)


def _tokenizer_available(name: str) -> bool:
    module = _TOKENIZER_MODULES.get(name)
    return module is None or importlib.util.find_spec(module) is not None


@lru_cache(maxsize=256)
def language_card(code: str) -> LanguageCard:
    """The card for a code; unknown languages get a generic card (13a, profile B) with a warning."""
    canonical = normalize_code(code)
    primary = canonical.split("-")[0]
    spec = _BUILTIN.get(canonical) or _BUILTIN.get(primary)
    if spec is None:
        return LanguageCard(
            code=canonical,
            name=canonical,
            generic=True,
            warnings=(
                f"no language card for '{canonical}': using a generic card "
                "(13a BLEU tokenizer, profile B)",
            ),
        )
    name, scripts, caseless, tokenizer = spec
    warnings: tuple[str, ...] = ()
    if not _tokenizer_available(tokenizer):
        fallback = _TOKENIZER_FALLBACK[tokenizer]
        warnings = (f"BLEU tokenizer '{tokenizer}' is not installed; using '{fallback}'",)
        tokenizer = fallback
    return LanguageCard(canonical, name, scripts, caseless, tokenizer, warnings=warnings)
