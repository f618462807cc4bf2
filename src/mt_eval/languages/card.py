"""Language cards: what the harness needs to know about a target (or source) language.

One JSON data file per language lives in ``languages/cards/`` and is validated on load, so a typo
in a card fails with the file and field named instead of silently changing a score. Extra or
overriding cards (say, a local GiellaLT analyser for Plains Cree) are read from the directories
in ``MT_EVAL_LANGUAGE_CARDS`` (``os.pathsep``-separated); a card there replaces the shipped one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError

CARDS_DIR = Path(__file__).with_name("cards")
ENV_DIRS = "MT_EVAL_LANGUAGE_CARDS"

_BCP47 = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$")
_SCRIPTS = {"Latn", "Cyrl", "Grek", "Arab", "Deva", "Ethi", "Thai", "Hani", "Jpan", "Kore", "Cans", "Hebr"}
_WORD_RULES = {"whitespace", "character"}
_TOKENIZERS = {"13a", "intl", "char", "zh", "ja-mecab", "ko-mecab", "flores200", "spm", "none"}
_TOKENIZER_MODULES = {"ja-mecab": "MeCab", "ko-mecab": "mecab_ko"}
UNDETERMINED = "und"  # BCP-47's code for an undetermined language: no scripts, no words, no warning
_TOKENIZER_FALLBACK = {"ko-mecab": "char"}
# tokenizers an mt-eval extra installs: missing, BLEU refuses to run rather than fall back to another
# tokenizer (a Japanese BLEU would differ between installs); ja-mecab is sacrebleu[ja] (MeCab + ipadic, ~54 MB)
_TOKENIZER_EXTRA = {"ja-mecab": "ja"}
_LEGACY_ALIASES = {"zho-cn": "zh-CN"}  # NTREX's file suffix; the region is kept, the zh card serves it
_ORTHOGRAPHY_KEYS = {"normalization", "letters", "forbidden", "required", "variants", "scripts"}


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
    quotes: tuple[str, ...] = ('"', "“", "”", "‘", "’", "'")
    word_rule: str = "whitespace"
    analyser_install: str | None = None
    bilingual_lexicons: tuple[tuple[str, str], ...] = ()
    orthography: tuple[tuple[str, Any], ...] = ()
    source_wordlist: str | None = None
    wordlist_install: str | None = None
    aliases: tuple[str, ...] = ()
    path: str | None = None
    analyser_skipped: str | None = None  # the analyser a ``--skip-analyser`` run did not use
    # critical-error checks (metrics/critical.py): number words and their values, negation cues (whole words,
    # word prefixes such as French "n'", suffixes such as English "n't"); no cues: negation is not checked
    number_words: tuple[tuple[str, int], ...] = ()
    negation_cues: tuple[str, ...] = ()
    negation_prefixes: tuple[str, ...] = ()
    negation_suffixes: tuple[str, ...] = ()

    @property
    def profile(self) -> str:
        """Profile A exactly when the card declares an analyser (docs/decisions.md §19)."""
        return "A" if self.analyser else "B"

    @property
    def rules(self) -> dict[str, Any]:
        """Orthography rules as a dict (stored as pairs so the card stays hashable)."""
        return dict(self.orthography)

    def lexicon_from(self, source_code: str) -> str | None:
        return dict(self.bilingual_lexicons).get(source_code)


def _fail(path: Path, fld: str, message: str) -> UserError:
    return UserError(message, file=str(path), field=fld)


def _str_list(path: Path, data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _fail(path, key, "must be a list of non-empty strings")
    return tuple(value)


def _optional_str(path: Path, data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise _fail(path, key, "must be a non-empty string or null")
    return value


def parse_card(path: Path) -> LanguageCard:
    """Load and validate one card file; every problem names the file and the field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"not valid JSON (line {exc.lineno})", file=str(path)) from None
    if not isinstance(data, dict):
        raise UserError("a language card is a JSON object", file=str(path))
    for key in ("code", "name"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise _fail(path, key, "is required (a non-empty string)")
    code = data["code"]
    if not _BCP47.match(code) or normalize_code(code, aliases={}) != code:
        raise _fail(path, "code", f"'{code}' is not a canonical BCP-47 code")
    scripts = _str_list(path, data, "scripts") or ("Latn",)
    unknown = [s for s in scripts if s not in _SCRIPTS]
    if unknown:
        raise _fail(path, "scripts", f"unknown ISO 15924 script(s) {unknown}; known: {sorted(_SCRIPTS)}")
    if not isinstance(data.get("caseless", False), bool):
        raise _fail(path, "caseless", "must be true or false")
    tokenizer = data.get("bleu_tokenizer", "13a")
    if tokenizer not in _TOKENIZERS:
        raise _fail(path, "bleu_tokenizer", f"'{tokenizer}' is not a sacrebleu tokenizer")
    rule = data.get("word_rule", "whitespace")
    if rule not in _WORD_RULES:
        raise _fail(path, "word_rule", f"must be one of {sorted(_WORD_RULES)}")
    analyser = _optional_str(path, data, "analyser")
    if analyser is not None and not re.match(r"^[a-z][a-z0-9_-]*:\S+$", analyser):
        raise _fail(path, "analyser", "must be 'hfst:PATH.hfstol', 'apertium:PATH.automorf.bin' or 'KIND:ARG' "
                    "for an analyser plugin")
    profile = data.get("profile", "A" if analyser else "B")
    if profile != ("A" if analyser else "B"):
        raise _fail(path, "profile", f"is {profile!r} but profile A goes exactly with a declared analyser")
    lexicons = data.get("bilingual_lexicons", {}) or {}
    if not isinstance(lexicons, dict) or not all(
        isinstance(v, str) and re.match(r"^apertium:\S+$", v) for v in lexicons.values()
    ):
        raise _fail(path, "bilingual_lexicons", "must map source codes to 'apertium:PATH.autobil.bin'")
    ortho = data.get("orthography") or {}
    if not isinstance(ortho, dict) or set(ortho) - _ORTHOGRAPHY_KEYS:
        raise _fail(path, "orthography", f"must be an object with keys from {sorted(_ORTHOGRAPHY_KEYS)}")
    if ortho.get("normalization", "NFC") not in {"NFC", "NFD", "NFKC", "NFKD"}:
        raise _fail(path, "orthography", "normalization must be NFC, NFD, NFKC or NFKD")
    frozen_ortho = tuple(
        (k, tuple(v) if isinstance(v, list) else tuple(sorted(v.items())) if isinstance(v, dict) else v)
        for k, v in sorted(ortho.items())
    )
    return LanguageCard(
        code=code,
        name=data["name"],
        scripts=scripts,
        caseless=data.get("caseless", False),
        bleu_tokenizer=tokenizer,
        analyser=analyser,
        quotes=_str_list(path, data, "quotes") or LanguageCard.quotes,
        word_rule=rule,
        analyser_install=_optional_str(path, data, "analyser_install"),
        bilingual_lexicons=tuple(sorted((normalize_code(k, aliases={}), v) for k, v in lexicons.items())),
        orthography=frozen_ortho,
        source_wordlist=_optional_str(path, data, "source_wordlist"),
        wordlist_install=_optional_str(path, data, "wordlist_install"),
        aliases=tuple(a.lower() for a in _str_list(path, data, "aliases")),
        path=str(path),
        **_critical_fields(path, data),
    )


def _critical_fields(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """``number_words`` ({word: value}) and ``negation`` ({cues, prefixes, suffixes}), validated."""
    numbers = data.get("number_words") or {}
    if not isinstance(numbers, dict) or not all(
        isinstance(k, str) and k and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in numbers.items()
    ):
        raise _fail(path, "number_words", "must map words to non-negative integers")
    negation = data.get("negation") or {}
    if not isinstance(negation, dict) or set(negation) - {"cues", "prefixes", "suffixes"}:
        raise _fail(path, "negation", "must be an object with keys from ['cues', 'prefixes', 'suffixes']")
    return {
        "number_words": tuple(sorted((k.casefold(), v) for k, v in numbers.items())),
        **{f"negation_{key}": tuple(v.casefold() for v in _str_list(path, negation, key))
           for key in ("cues", "prefixes", "suffixes")},
    }


def card_dirs() -> list[Path]:
    extra = [Path(p) for p in os.environ.get(ENV_DIRS, "").split(os.pathsep) if p]
    return [CARDS_DIR, *extra]


@lru_cache(maxsize=8)
def _load_all(dirs: tuple[Path, ...]) -> dict[str, LanguageCard]:
    cards: dict[str, LanguageCard] = {}
    for directory in dirs:
        for path in sorted(directory.glob("*.json")):
            card = parse_card(path)
            cards[card.code] = card  # later directories override shipped cards
    return cards


def all_cards() -> dict[str, LanguageCard]:
    """Every card, keyed by canonical code (shipped plus ``MT_EVAL_LANGUAGE_CARDS``)."""
    return _load_all(tuple(card_dirs()))


def _alias_table() -> dict[str, str]:
    return {alias: card.code for card in all_cards().values() for alias in card.aliases}


def normalize_code(code: str, aliases: dict[str, str] | None = None) -> str:
    """Canonical BCP-47 spelling: lower-case language, upper-case region, ISO 639-3 aliases folded."""
    raw = code.strip().replace("_", "-")
    if not _BCP47.match(raw):
        raise UserError(
            f"'{code}' is not a BCP-47 language code", hint="use e.g. 'es', 'crk', 'zh-CN' or 'spa'"
        )
    table = {**_LEGACY_ALIASES, **(_alias_table() if aliases is None else aliases)}
    if raw.lower() in table:
        return table[raw.lower()]
    parts = raw.split("-")
    out = [parts[0].lower()]
    for p in parts[1:]:
        out.append(p.upper() if len(p) == 2 else (p.title() if len(p) == 4 else p.lower()))
    return "-".join(out)


def _tokenizer_available(name: str) -> bool:
    module = _TOKENIZER_MODULES.get(name)
    return module is None or importlib.util.find_spec(module) is not None


def language_card(code: str) -> LanguageCard:
    """The card for a code; unknown languages get a generic card (13a, profile B) with a warning."""
    return _language_card(code, tuple(card_dirs()))


@lru_cache(maxsize=256)
def _language_card(code: str, dirs: tuple[Path, ...]) -> LanguageCard:
    canonical = normalize_code(code)
    if canonical == UNDETERMINED:  # BCP-47 "und": a run scored without a source (and without its language)
        return LanguageCard(code=UNDETERMINED, name="undetermined", scripts=(), generic=True)
    cards = _load_all(dirs)
    card = cards.get(canonical) or cards.get(canonical.split("-")[0])
    if card is None:
        return LanguageCard(
            code=canonical,
            name=canonical,
            generic=True,
            warnings=(
                f"no language card for '{canonical}': using a generic card "
                "(13a BLEU tokenizer, profile B)",
            ),
        )
    if not _tokenizer_available(card.bleu_tokenizer) and card.bleu_tokenizer in _TOKENIZER_FALLBACK:
        fallback = _TOKENIZER_FALLBACK[card.bleu_tokenizer]
        warning = f"BLEU tokenizer '{card.bleu_tokenizer}' is not installed; using '{fallback}'"
        return _replace(card, bleu_tokenizer=fallback, warnings=(*card.warnings, warning))
    return card


def require_bleu_tokenizer(card: LanguageCard) -> None:
    """Before BLEU tokenises: the card's tokenizer is installed, else one line naming the extra that installs it."""
    extra = _TOKENIZER_EXTRA.get(card.bleu_tokenizer)
    if extra and not _tokenizer_available(card.bleu_tokenizer):
        raise UserError(f"BLEU for {card.name} ({card.code}) tokenises with {card.bleu_tokenizer}, whose "
                        f"{_TOKENIZER_MODULES[card.bleu_tokenizer]} package is not installed here",
                        hint=f"pip install 'mt-eval[{extra}]'", field="bleu_tokenizer")


def _replace(card: LanguageCard, **changes: Any) -> LanguageCard:
    from dataclasses import replace

    return replace(card, **changes)


def without_analyser(card: LanguageCard) -> LanguageCard:
    """The card a ``--skip-analyser`` run scores with: profile B, the skipped analyser recorded."""
    if not card.analyser:
        return card
    warning = f"analyser {card.analyser} skipped (--skip-analyser): scored with profile B"
    return _replace(card, analyser=None, analyser_skipped=card.analyser, warnings=(*card.warnings, warning))


def clear_cache() -> None:
    """Forget loaded cards (tests that write cards into ``MT_EVAL_LANGUAGE_CARDS`` call this)."""
    _load_all.cache_clear()
    _language_card.cache_clear()
