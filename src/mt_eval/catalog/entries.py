"""The catalogue: public test-set families, what is known about them, and how an id names one pair.

An id is ``FAMILY:...`` (``ntrex128:eng-spa``, ``flores-plus:devtest:eng_Latn-spa_Latn``, ``wmt:wmt21:en-de``,
``americasnlp2021:test:es-quy``, ``tatoeba:eng-spa``). Each family records its source, licence (terms shown
and accepted once), citation, version and its **exposure**: when the test set became public and what is
known about its inclusion in training data, with sources, so a card can say how likely contamination is and
the leaderboard can keep methods whose declared training cut-off predates the release
(docs/decisions.md §55).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Exposure:
    """What is known about a test set's public exposure. ``released`` is the month (``YYYY-MM``) from which
    its references were public; ``inclusion`` lists known or likely inclusions in training data, each with
    its source; an empty list means none is documented here, not that none happened."""

    released: str
    inclusion: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"released": self.released, "inclusion": list(self.inclusion), "sources": list(self.sources),
                "note": self.note}


@dataclass(frozen=True)
class Family:
    """One catalogue family: every id ``NAME:...`` resolves through its adapter (``adapters.py``)."""

    name: str
    title: str
    usage: str
    homepage: str
    licence: str
    terms: str
    citation: str
    version: str
    exposure: Exposure
    languages: tuple[str, ...] = ()
    """Codes known to be covered (what ``datasets list --lang`` matches): a sample, never a guess."""
    examples: tuple[str, ...] = ()
    gated: bool = False
    pinned: dict[str, str] = field(default_factory=dict)
    """sha256 of upstream files known byte for byte (url → sha256); others are recorded at first fetch and
    checked on every later one (``cache.Manifest``)."""


NTREX_RAW = "https://raw.githubusercontent.com/MicrosoftTranslator/NTREX/main/NTREX-128"
# The files tests/data/ntrex128 holds whole are upstream's bytes at 8561f6a: their sha256 are pinned.
_NTREX_PINNED = {
    f"{NTREX_RAW}/newstest2019-src.eng.txt": "389e8f5796c66db4f646dfad33e1ec622d74767af5ef112b42a1f2cd814df3cc",
    f"{NTREX_RAW}/newstest2019-ref.spa.txt": "0ad8129e5ce0bea86ba7e0ea0db0504d6626b8a4d2a7cf4c44b7791c70e99b84",
    f"{NTREX_RAW}/newstest2019-ref.deu.txt": "259d7406a07b63e6b5b9c4a22fb76b85e2578a3fa0a4e541a50f4f7348e5c1b2",
    f"{NTREX_RAW}/newstest2019-ref.fra.txt": "1dd80d337f6a75c6ed579a95f09ca9b85d87d6e488d0a428c5f89cca99553136",
    f"{NTREX_RAW}/newstest2019-ref.por.txt": "ad2b8c2d91be6a17f9c0df0dd25e358b8de6168212b4bbc9718ea41c4df9ecd8",
    f"{NTREX_RAW}/newstest2019-ref.ita.txt": "e568982e6249a11a7ada13d5b00fe65ca722479e0399a7a761a905f340dd04d2",
}
_NTREX_LANGS = ("amh", "arb", "cat", "deu", "eus", "fin", "fra", "glg", "hau", "hin", "isl", "ita", "jpn", "kor",
                "mkd", "mri", "nno", "nob", "por", "smo", "spa", "swa", "tha", "xho", "yor", "zho-CN", "zul")

FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family(
        name="ntrex128", title="NTREX-128: newstest2019 English with references in 128 languages",
        usage="ntrex128:eng-TGT (TGT: NTREX's file code, e.g. spa, deu, zho-CN)",
        homepage="https://github.com/MicrosoftTranslator/NTREX", licence="CC-BY-SA-4.0",
        terms="NTREX-128 is licensed CC BY-SA 4.0: attribute Federmann, Kocmi and Xin (Microsoft) and share "
              "derived data under the same licence. The English source is WMT19's newstest2019.",
        citation="Federmann, Kocmi and Xin (2022). NTREX-128 - News Test References for MT Evaluation of 128 "
                 "Languages. SUMEval 2022.",
        version="8561f6a", languages=("eng", *_NTREX_LANGS), examples=("ntrex128:eng-spa", "ntrex128:eng-yor"),
        pinned=_NTREX_PINNED,
        exposure=Exposure(
            released="2022-10",
            inclusion=("the English source is WMT19 newstest2019, public since 2019-08 and distributed with "
                       "sacrebleu; WMT permits earlier test sets as training/development data",),
            sources=("https://github.com/MicrosoftTranslator/NTREX", "https://www.statmt.org/wmt19/"),
            note="references public on GitHub since the repository's release")),
    Family(
        name="flores-plus", title="FLORES+ (OLDI): FLORES-200 continued, dev and devtest in 200+ languages",
        usage="flores-plus:SPLIT:SRC-TGT (SPLIT: dev|devtest; SRC/TGT: ISO 639-3 + script, e.g. eng_Latn)",
        homepage="https://huggingface.co/datasets/openlanguagedata/flores_plus", licence="CC-BY-SA-4.0",
        terms="FLORES+ is licensed CC BY-SA 4.0 and gated on Hugging Face: accept its terms there (which ask "
              "you not to re-host it in plain text, to keep it out of training crawls) and set HF_TOKEN.",
        citation="NLLB Team et al. (2024). Scaling neural machine translation to 200 languages. Nature 630; "
                 "Open Language Data Initiative, FLORES+.",
        version="main", gated=True, examples=("flores-plus:devtest:eng_Latn-spa_Latn",),
        languages=("eng_Latn", "spa_Latn", "yor_Latn", "hau_Latn", "quy_Latn", "fra_Latn", "deu_Latn"),
        exposure=Exposure(
            released="2022-07",
            inclusion=("devtest is withheld from crawls by gating, yet FLORES-200 circulated as a plain tarball "
                       "from 2022-07, so web-scale training data may contain it",),
            sources=("https://github.com/facebookresearch/flores/tree/main/flores200",
                     "https://huggingface.co/datasets/openlanguagedata/flores_plus"),
            note="FLORES-101 devtest (same English) public since 2021-06")),
    Family(
        name="wmt", title="WMT news/general test sets, through sacrebleu's own dataset registry",
        usage="wmt:TESTSET:SRC-TGT (as sacrebleu -t TESTSET -l SRC-TGT; WMT21 and later XML releases)",
        homepage="https://www.statmt.org/", licence="WMT-research",
        terms="WMT test sets are released for research on machine translation; redistribution terms are set by "
              "each year's task page (statmt.org).",
        citation="Akhbardeh et al. (2021). Findings of the 2021 Conference on Machine Translation (WMT21).",
        version="sacrebleu registry", examples=("wmt:wmt21:en-de", "wmt:wmt22:en-de"),
        languages=("en", "de", "cs", "ru", "zh", "ja", "ha", "is", "fr", "bn", "hi", "xh", "zu"),
        exposure=Exposure(
            released="per test set",
            inclusion=("later WMT tasks allow earlier test sets as development or training data",),
            sources=("https://www.statmt.org/wmt22/translation-task.html",),
            note="each test set's month is its WMT conference's (wmt21: 2021-11)")),
    Family(
        name="americasnlp2021", title="AmericasNLP 2021 shared task: Spanish to 10 Indigenous languages",
        usage="americasnlp2021:SPLIT:es-TGT (SPLIT: dev|test; TGT: aym bzd cni gn hch nah oto quy shp tar)",
        homepage="https://github.com/AmericasNLP/americasnlp2021", licence="per-language (see upstream)",
        terms="Each language's data carries its own licence, stated in the upstream repository's data folders; "
              "some are for research use only. Check before redistributing anything derived.",
        citation="Mager et al. (2021). Findings of the AmericasNLP 2021 Shared Task on Open Machine Translation "
                 "for Indigenous Languages of the Americas.",
        version="main", examples=("americasnlp2021:test:es-quy", "americasnlp2021:dev:es-gn"),
        languages=("es", "aym", "bzd", "cni", "gn", "hch", "nah", "oto", "quy", "shp", "tar"),
        exposure=Exposure(
            released="2021-06",
            sources=("https://github.com/AmericasNLP/americasnlp2021",),
            note="dev sets public from 2021-03; test references after the shared task")),
    Family(
        name="tatoeba", title="Tatoeba Translation Challenge test sets (sentences from tatoeba.org)",
        usage="tatoeba:SRC-TGT (ISO 639-3, e.g. eng-spa; either direction)",
        homepage="https://github.com/Helsinki-NLP/Tatoeba-Challenge", licence="CC-BY-2.0-FR",
        terms="Tatoeba sentences are licensed CC BY 2.0 FR: attribute tatoeba.org and its contributors.",
        citation="Tiedemann (2020). The Tatoeba Translation Challenge - Realistic Data Sets for Low Resource and "
                 "Multilingual MT. WMT 2020.",
        version="master", examples=("tatoeba:eng-spa",),
        languages=("eng", "spa", "fra", "deu", "afr"),
        exposure=Exposure(
            released="2020-07",
            inclusion=("the sentences are public on tatoeba.org and in OPUS's Tatoeba corpus; the challenge "
                       "removes them from its own training data, other OPUS-trained systems may not",),
            sources=("https://github.com/Helsinki-NLP/Tatoeba-Challenge", "https://opus.nlpl.eu/Tatoeba.php"))),
)}
