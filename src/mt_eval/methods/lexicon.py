"""A word-by-word floor (``lexicon:FILE``): each source word replaced by its dictionary translation.

What every system in a low-resource study should beat: no reordering, no morphology, no context. The
dictionary is a TSV file (``source<TAB>target`` per line, ``#`` comments, the first entry of a repeated
source word wins) or an Apertium bilingual dictionary (``.dix``: each ``<e>``'s ``<p><l>…</l><r>…</r></p>``
(or ``<i>…</i>``, the same both sides) with the tags removed and ``<b/>`` read as a blank; entries
restricted to right-to-left (``r="RL"``) skipped).
Matching is on the word as written, then lower-cased (a capitalised first word keeps its capital);
multi-word entries match the longest run of words first. Unknown words and punctuation are copied,
so a sentence the dictionary does not know comes back unchanged (what the copy baseline scores).
The card records the dictionary's sha256, so another dictionary cannot claim the same card.
"""

from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from mt_eval.errors import MethodError
from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation, TranslationRequest

METHOD_VERSION = "1"
_TOKEN = re.compile(r"\w+(?:['’-]\w+)*|\s+|[^\w\s]", re.UNICODE)


def read_tsv(text: str, path: str) -> dict[str, str]:
    table: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        source, sep, target = line.partition("\t")
        if not sep or not source.strip():
            raise MethodError(f"line {number} is not 'source<TAB>target'", file=path,
                              hint="one entry per line: the source word, a tab, its translation")
        table.setdefault(source.strip(), target.strip())
    return table


def _side(element: ET.Element | None) -> str:
    """The text of an ``<l>``/``<r>``: words and ``<b/>`` blanks, tags (``<s n="…"/>``) dropped."""
    if element is None:
        return ""
    parts = [element.text or ""]
    for child in element:
        parts.append(" " if child.tag == "b" else "")
        parts.append(child.tail or "")
    return " ".join("".join(parts).split())


def read_dix(text: str, path: str) -> dict[str, str]:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise MethodError(f"not an Apertium dictionary: {exc}", file=path) from None
    table: dict[str, str] = {}
    for entry in root.iter("e"):
        if entry.get("r") == "RL":  # only used translating the other way
            continue
        pair, same = entry.find("p"), entry.find("i")
        if pair is not None:
            source, target = _side(pair.find("l")), _side(pair.find("r"))
        elif same is not None:  # <i>: the same word on both sides
            source = target = _side(same)
        else:
            continue
        if source and target:
            table.setdefault(source, target)
    return table


def load_lexicon(path: str) -> tuple[dict[str, str], str]:
    """The dictionary at ``path`` and its sha256; an empty or unreadable one is a user error."""
    file = Path(path).expanduser()
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise MethodError(f"cannot read the dictionary: {exc.strerror or exc}", file=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MethodError("the dictionary is not UTF-8 text", file=path) from None
    table = read_dix(text, path) if file.suffix == ".dix" else read_tsv(text, path)
    if not table:
        raise MethodError("the dictionary has no entries", file=path, hint="source<TAB>target per line, or a .dix")
    return table, hashlib.sha256(data).hexdigest()


class LexiconMethod(MethodBase):
    """Word-by-word translation (method class ``rbmt``: a dictionary and one rule, copy the unknown)."""

    resumable = False  # instant and free: a rerun costs nothing, so no journal

    def __init__(self, path: str) -> None:
        self.table, digest = load_lexicon(path)
        self.lowered = {k.lower(): v for k, v in reversed(list(self.table.items()))}
        self.longest = max(len(k.split()) for k in self.table)
        self.identity = MethodIdentity(
            name=f"lexicon:{Path(path).name}", method_class=MethodClass.RBMT, version=METHOD_VERSION,
            model_slug=f"lexicon/{Path(path).stem}",
            config={"dictionary_sha256": digest, "entries": len(self.table), "format": Path(path).suffix or "tsv",
                    "unknown_words": "copied", "longest_entry_words": self.longest})

    def lookup(self, words: Sequence[str]) -> str | None:
        phrase = " ".join(words)
        if phrase in self.table:
            return self.table[phrase]
        found = self.lowered.get(phrase.lower())
        if found is not None and phrase[:1].isupper() and not phrase.isupper():
            return found[:1].upper() + found[1:]
        return found

    def word_by_word(self, text: str) -> str:
        tokens = _TOKEN.findall(text)
        out: list[str] = []
        i = 0
        while i < len(tokens):
            if not tokens[i][:1].isalnum() and tokens[i][:1] != "_":
                out.append(tokens[i])
                i += 1
                continue
            for n in range(self.longest, 0, -1):  # longest multi-word entry first
                span = tokens[i:i + 2 * n - 1]
                words = span[::2]
                if len(words) < n or any(not s.isspace() for s in span[1::2]):
                    continue
                if (found := self.lookup(words)) is not None:
                    out.append(found)
                    i += 2 * n - 1
                    break
            else:
                out.append(tokens[i])
                i += 1
        return "".join(out)

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        return [Translation(r.entry_id, self.word_by_word(r.source), model_id=self.identity.model_slug)
                for r in requests]
