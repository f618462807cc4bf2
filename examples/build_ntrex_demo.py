#!/usr/bin/env python3
"""Build ``examples/ntrex128-eng-spa.json``: a 200-segment English→Spanish demo corpus.

Source: NTREX-128 (Federmann et al., 2022), the English newstest2019 source with its Spanish
human reference, CC BY-SA 4.0. This script *selects* segments and *adds* metadata; it never
edits a source or reference. Every rule below is deterministic and written into the corpus
envelope (``metadata_rules``), so a reader of the JSON can see how each label was assigned.

Selection: whole documents (a news article is the unit NTREX was translated in), taking every
fifth document first so the demo spans many outlets and topics, then filling with the rest in
order, up to 30 segments short of ``--count``; the first one to three remaining documents whose
sizes add up to exactly what is left complete it.

Run from the repository root::

    python examples/build_ntrex_demo.py            # (re)write the corpus
    python examples/build_ntrex_demo.py --check    # exit 1 if the checked-in file is stale
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from itertools import combinations
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent / "tests" / "data" / "ntrex128"  # the repository's copy: source, Spanish and doc ids whole
DEFAULT_OUT = HERE / "ntrex128-eng-spa.json"
CREATED = "2026-11-21"  # fixed, so rebuilding gives identical bytes (and the same dataset SHA-256)
STRIDE = 5
FILL_MARGIN = 30  # leave room to finish with whole documents

REPORTING = re.compile(
    r"\b(said|says|say|told|tells|added|adds|according to|explained|asked|announced|stated|claimed|wrote)\b",
    re.IGNORECASE,
)
CLAUSE_MARKERS = re.compile(
    r"[,;:]|\b(which|who|whom|whose|that|because|although|though|while|whereas|when|if|unless|after|before)\b",
    re.IGNORECASE,
)
QUOTES = '"“”'
OPENERS = " \t([{:,;—–-"
DIGIT = re.compile(r"\d")

RULES = {
    "selection": "whole NTREX documents: every 5th document first, then the rest in order, up to "
    "30 segments short of the total, which is filled exactly by the first one to three remaining "
    "documents whose sizes add up to it",
    "segment": "diagnostic if the source contains a digit (numbers, dates, amounts, scores: a targeted "
    "phenomenon for MT), otherwise development",
    "difficulty": "base tier from source length in words (1-6: 1, 7-12: 2, 13-20: 3, 21-30: 4, >30: 5), "
    "+1 (max 5) when the sentence has 3 or more clause markers (, ; : and subordinators such as "
    "which/who/that/because/although/while/when/if)",
    "register": "conversational when at least half of the characters are inside double quotes "
    "(direct speech), otherwise formal (news prose)",
    "context": "label for the first line of each document (the headline); question when the line "
    "ends with '?'; narrative when it reports speech or events (said, told, added, according to, ...); "
    "otherwise declaration",
    "provenance": "corpus (extracted from a parallel corpus, Benchmark Spec §2.5)",
}


def read_lines(path: Path) -> list[str]:
    """One segment per line; split on '\\n' only, as NTREX is line-aligned across languages."""
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def documents(doc_ids: list[str]) -> list[tuple[str, list[int]]]:
    """(document id, 0-based line numbers) in file order; NTREX documents are contiguous."""
    docs: list[tuple[str, list[int]]] = []
    for i, doc in enumerate(doc_ids):
        if not docs or docs[-1][0] != doc:
            docs.append((doc, []))
        docs[-1][1].append(i)
    return docs


def select(docs: list[tuple[str, list[int]]], count: int) -> list[tuple[str, list[int]]]:
    """Greedy in spread order up to ``count - FILL_MARGIN``, then the first one, two or three
    remaining documents (in spread order) whose sizes add up to exactly what is left."""
    order = list(range(0, len(docs), STRIDE)) + [i for i in range(len(docs)) if i % STRIDE]
    chosen, total = [], 0
    for i in order:
        size = len(docs[i][1])
        if total + size <= count - FILL_MARGIN:
            chosen.append(i)
            total += size
    rest = [i for i in order if i not in chosen]
    for k in (1, 2, 3):
        fill = next((c for c in combinations(rest, k) if sum(len(docs[i][1]) for i in c) == count - total), None)
        if fill is not None:
            return [docs[i] for i in sorted([*chosen, *fill])]
    sys.exit(f"cannot select exactly {count} segments from whole documents")


def difficulty(source: str) -> int:
    words = len(source.split())
    tier = 1 if words <= 6 else 2 if words <= 12 else 3 if words <= 20 else 4 if words <= 30 else 5
    if len(CLAUSE_MARKERS.findall(source)) >= 3:
        tier += 1
    return min(tier, 5)


def quoted_chars(source: str) -> int:
    """Characters inside double quotes (straight or curly).

    A quote at the start or after a space/opening punctuation opens; any other closes. A line
    whose first quote closes continues a quotation from the previous line (NTREX splits long
    quotes into sentences), and a quote still open at the end runs to the end of the line.
    """
    count, start, first = 0, None, True
    for i, c in enumerate(source):
        if c not in QUOTES:
            continue
        opening = i == 0 or source[i - 1] in OPENERS
        if start is None and opening:
            start = i
        elif start is not None and not opening:
            count += i - start + 1
            start = None
        elif first:  # a closing quote before any opening one: the quote began on an earlier line
            count += i + 1
        first = False
    if start is not None:
        count += len(source) - start
    return count


def register(source: str) -> str:
    return "conversational" if quoted_chars(source) * 2 >= len(source) else "formal"


def context(source: str, headline: bool) -> str:
    if headline:
        return "label"
    if source.rstrip(" \"'”’)").endswith("?"):
        return "question"
    if REPORTING.search(source):
        return "narrative"
    return "declaration"


def build(data: Path, count: int) -> dict[str, object]:
    sources = read_lines(data / "newstest2019-src.eng.txt")
    references = read_lines(data / "newstest2019-ref.spa.txt")
    doc_ids = [line.split("\t")[0].strip() for line in read_lines(data / "DOCUMENT_IDS.tsv")]
    if not len(sources) == len(references) == len(doc_ids):
        sys.exit(f"NTREX files are not line-aligned: {len(sources)}/{len(references)}/{len(doc_ids)}")
    entries: list[dict[str, object]] = []
    for doc, lines in select(documents(doc_ids), count):
        for position, line in enumerate(lines):
            source = sources[line]
            headline = position == 0
            segment = "diagnostic" if DIGIT.search(source) else "development"
            notes = f"NTREX-128 newstest2019 line {line + 1}; document {doc}"
            if headline:
                notes += "; headline"
            if segment == "diagnostic":
                notes += "; diagnostic: numerals"
            entries.append(
                {
                    "id": len(entries) + 1,
                    "source": source,
                    "reference": references[line],
                    "segment": segment,
                    "difficulty": difficulty(source),
                    "provenance": "corpus",
                    "register": register(source),
                    "context": context(source, headline),
                    "notes": notes,
                }
            )
    return {
        "dataset": {
            "id": "ntrex128-eng-spa-demo",
            "version": "1.0",
            "language_pair": "EN→ES",
            "source_language": "en",
            "target_language": "es",
            "created": CREATED,
            "license": "CC-BY-SA-4.0",
            "provenance": ["corpus"],
            "description": f"{count} English news segments with Spanish references from NTREX-128, "
            "with metadata added by examples/build_ntrex_demo.py",
            "attribution": "NTREX-128 (Federmann, Kocmi and Xin, 2022, 'NTREX-128 - News Test References "
            "for MT Evaluation of 128 Languages', Microsoft), source text from WMT newstest2019; "
            "CC BY-SA 4.0. Modified: subset selected and metadata added; text unchanged.",
            "metadata_rules": RULES,
        },
        "entries": entries,
    }


def render(corpus: dict[str, object]) -> str:
    return json.dumps(corpus, ensure_ascii=False, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="NTREX-128 folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--check", action="store_true", help="fail if --out differs from a fresh build")
    args = parser.parse_args(argv)
    if not (args.data / "newstest2019-src.eng.txt").is_file():
        parser.error(f"NTREX-128 data not found in {args.data} (pass --data)")
    text = render(build(args.data, args.count))
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        if current != text:
            print(f"{args.out} is out of date; run {Path(__file__).name}", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({args.count} entries)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
