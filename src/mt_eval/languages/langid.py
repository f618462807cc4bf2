"""Statistical language identification with lingua (``lingua-language-detector``, optional extra ``langid``).

Today's rules tell languages apart by script (RLC, code-switching across scripts) and, for two languages
that share a script, by a source-language word list checked against the target's analyser. Those rules
cannot tell two languages of one script apart without an analyser and a word list (``code_switching_rate``
is null for English→French, German, Portuguese…), and the script share (RLC) calls Catalan, Portuguese or
English text 100 % "Spanish". Measured on NTREX (docs/language-id.md, ``tests/langid/evalset.py``), lingua
is used exactly where the rules are blind:

* ``code_switching_rate`` for a same-script pair whose cards declare no analyser or word list: the share of
  output words inside spans a two-language detector (source, target) assigns to the source, with the
  rules' exceptions for names and acronyms. On English→French/Portuguese/German it flags 2–4 % of human
  references and 96–98 % of half-English outputs, as the rules do for Spanish (0.75 %, 98.75 %); where the
  rules apply they stay (lingua forced on Spanish is no better: 0.5 %, 97.25 %);
* QA's RLC with the opt-in ``lingua`` backend (``other_language_share``): an answer of ``MIN_WORDS`` words
  or more that lingua, among the languages of its script, assigns to another language counts as 0. Catalan,
  Portuguese, Italian, French or English offered as Spanish: 94–97 % caught (script RLC: 0 %), 1.25 % of
  Spanish references wrongly caught; Galician, which lingua does not know, 40 %. Not for 1–3-word answers
  (lingua names their language right 31–87 % of the time), hence the minimum length.

The code-switching signature names the backend and lingua's version, so a card scored with lingua is
rescored with lingua and an older card with the rules (``metrics.behavioral.CodeSwitching``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from mt_eval.errors import UserError
from mt_eval.languages.scripts import language_scripts

PACKAGE = "lingua-language-detector"
INSTALL_HINT = "pip install 'mt-eval[langid]' (lingua-language-detector)"
MIN_WORDS = 8  # shorter answers: lingua names the right language of 1–3 words only 31–87 % of the time
# below MIN_WORDS words (a caller's ``min_words`` may go lower) the two-language detector must be this sure: at
# the plain majority, 4–7-word English MT outputs such as "I was in awe." were "Afrikaans" (8 of 6,877 WMT21
# TED zh→en outputs, 15 of en→de); at 0.9 one each, as with 8 words, and half the short Portuguese still caught
SURE = 0.9
SCRIPT, LINGUA = "script", "lingua"
BACKENDS = (SCRIPT, LINGUA)


def available() -> bool:
    try:
        return importlib.util.find_spec("lingua") is not None
    except ImportError:  # an import hook that refuses the package (a test's "base install") means: not here
        return False


def detector() -> str | None:
    """The language detector this install scores with, as a card records it (``language_detector``): name and
    version, or None when none is installed."""
    return f"{PACKAGE} {version()}" if available() else None


# a signature that used lingua names its version: "langid:lingua-2.1.1", "…|wrong-language-0:lingua-2.1.1:…"
_SIGNED = re.compile(r"lingua-(\d[0-9A-Za-z.+]*)")


def detector_of(signatures: Iterable[str | None]) -> str | None:
    """The detector that scored the metrics with these signatures (one version; None when none used one)."""
    versions = sorted({m.group(1).rstrip(".") for s in signatures if s for m in _SIGNED.finditer(s)})
    return f"{PACKAGE} {versions[-1]}" if versions else None


def card_detector(card: Mapping[str, Any]) -> str | None:
    """The detector a card was scored with: its ``language_detector``, or (cards written before that field)
    the one its metrics' signatures name."""
    if "language_detector" in card:
        recorded = card["language_detector"]
        return recorded if isinstance(recorded, str) else None
    metrics = card.get("metrics")
    infos = metrics.values() if isinstance(metrics, Mapping) else ()
    return detector_of(info.get("signature") for info in infos if isinstance(info, Mapping))


def missing_warning(metric_id: str, source: str, target: str) -> str:
    """What a card says when ``metric_id`` needed a detector this install lacks (its value is then null)."""
    if not available():
        return (f"{metric_id} is null: {source}→{target} needs a language detector and none is installed "
                f"({INSTALL_HINT})")
    unknown = [c for c in (source, target) if _language(c) is None]
    return f"{metric_id} is null: {PACKAGE} {version()} does not know {', '.join(unknown)}"


def version() -> str:
    return importlib.metadata.version(PACKAGE)


def signature() -> str:
    """What pins a lingua-based value: the backend and its version (its models ship in the wheel)."""
    return f"langid:lingua-{version()}"


def require() -> None:
    if not available():
        raise UserError(f"language identification with lingua needs {PACKAGE}", hint=INSTALL_HINT)


@cache
def _language(code: str) -> Any | None:
    """lingua's ``Language`` for an ISO 639-1 or 639-3 code (the base of a BCP-47 tag), None if unknown."""
    from lingua import IsoCode639_1, IsoCode639_3, Language

    base = code.split("-")[0].split("_")[0].lower()
    try:
        iso: Any = IsoCode639_1.from_str(base) if len(base) == 2 else IsoCode639_3.from_str(base)
        return Language.from_iso_code_639_1(iso) if len(base) == 2 else Language.from_iso_code_639_3(iso)
    except (ValueError, AttributeError):
        return None


def supports(*codes: str) -> bool:
    """lingua is installed and knows every one of these languages."""
    return available() and all(_language(c) is not None for c in codes)


@cache
def _detector(codes: tuple[str, ...]) -> Any:
    from lingua import LanguageDetectorBuilder

    languages = [_language(c) for c in codes]
    if any(lang is None for lang in languages):
        unknown = [c for c, lang in zip(codes, languages, strict=True) if lang is None]
        raise UserError(f"lingua does not know {', '.join(unknown)}", hint="docs/language-id.md lists its languages")
    return LanguageDetectorBuilder.from_languages(*[lang for lang in languages if lang is not None]).build()


SCRIPT_GROUPS = {"Latin": "all_with_latin_script", "Cyrillic": "all_with_cyrillic_script",
                 "Arabic": "all_with_arabic_script", "Devanagari": "all_with_devanagari_script"}


@cache
def _same_script_detector(code: str) -> Any | None:
    """A detector over every lingua language written in ``code``'s script (Latin: 49 of them), in low-accuracy
    mode; None for a script only one language uses (the script rule already decides)."""
    from lingua import Language, LanguageDetectorBuilder

    groups = [SCRIPT_GROUPS[s] for s in language_scripts(code) if s in SCRIPT_GROUPS]
    languages = {lang for group in groups for lang in getattr(Language, group)()}
    # Latin and Esperanto are what lingua names for noisy text (MT output full of names and left-over words:
    # "Reloj: Liverpool Daniel Sturridge mete empate profundo vs. Chelsea" is "Esperanto"); nobody writes them
    # by accident, so they are candidates only when they are the language asked for
    languages -= {Language.LATIN, Language.ESPERANTO} - {_language(code)}
    if len(languages) < 2:
        return None
    # trigram models only: loading all 49 Latin-script models takes 18 s in high-accuracy mode, 0.4 s here, and
    # on sentences (MIN_WORDS words or more) the cost is small (docs/language-id.md)
    return LanguageDetectorBuilder.from_languages(*languages).with_low_accuracy_mode().build()


def spans(text: str, codes: Sequence[str]) -> list[tuple[int, int, str]]:
    """(start, end, language code as given) of each stretch of ``text`` lingua assigns to one of ``codes``."""
    detector = _detector(tuple(codes))
    by_language = {_language(c): c for c in codes}
    return [(r.start_index, r.end_index, by_language[r.language])
            for r in detector.detect_multiple_languages_of(text) if r.language in by_language]


def can_check(lang: str) -> bool:
    """``other_language_share`` can name another language for ``lang``'s text: lingua is installed, knows
    ``lang``, and ``lang``'s script is shared by other languages lingua knows."""
    return supports(lang) and _same_script_detector(lang) is not None


@cache
def _pair_detector(first: Any, second: Any) -> Any:
    """A high-accuracy detector over just two languages: quick to load, and precise where the many-language
    low-accuracy one is noisy."""
    from lingua import LanguageDetectorBuilder

    return LanguageDetectorBuilder.from_languages(first, second).build()


def other_language_share(text: str, lang: str, min_words: int = MIN_WORDS) -> float:
    """1.0 when ``text`` is in another language than ``lang``, else 0.0; 0.0 for text under ``MIN_WORDS``
    words (``min_words``), a language lingua does not know or a script of its own.

    Two steps. Among the languages of ``lang``'s script (low-accuracy mode), lingua names a language for the
    whole of ``text``; if it is another one, a high-accuracy detector over just that language and ``lang``
    must agree (at ``SURE`` confidence for text under ``MIN_WORDS`` words). The first step alone called 7 of
    150 Apertium eng→spa outputs (English names and unknown words left in) Latin, Italian, Esperanto or
    Bokmål; the confirmation leaves 1 (none once Latin and Esperanto are left out), and still catches 90–97 %
    of human Catalan, Portuguese, French and Italian translations offered as Spanish (docs/language-id.md).
    Whole-text, not per span: spans over 49 languages cut a Spanish sentence into pieces of other languages
    (36.5 % of NTREX's Spanish references lost half their letters that way)."""
    if len(text.split()) < min_words or not supports(lang):
        return 0.0
    detector = _same_script_detector(lang)
    if detector is None:
        return 0.0
    expected = _language(lang)
    found = detector.detect_language_of(text)
    if found is None or found == expected:
        return 0.0
    confidence = _pair_detector(expected, found).compute_language_confidence(text, found)
    return 1.0 if confidence >= (SURE if len(text.split()) < MIN_WORDS else 0.5) else 0.0
