"""Can the composite be gamed? Outputs that should score badly, against the real Apertium system.

For each language pair (English→Spanish, English→Catalan: both cards have an analyser, so profile
A), the first N NTREX-128 segments are scored through the command line a user runs
(``mt-eval run --method apertium:PAIR`` and ``mt-eval score``) for:

* the references themselves (must stay top), and the real Apertium system (the peer);
* shuffled references (fluent, right language, wrong sentences), one constant sentence, the source
  copied, empty output, another language's reference (Portuguese for Spanish, Spanish for Catalan),
  each reference truncated to its first half, every second word dropped, and a hallucinated fluent
  paragraph (three other references joined).

Prints chrF++, length ratio, composite and tier per row, then checks: every adversarial row below
Apertium and in "emerging" or "baseline", the references top. Exit status 1 if a check fails.
Run: ``.venv/bin/python benchmarks/adversarial.py [--data DIR] [-n 300]``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ntrex_common import SOURCE, data_dir, read_lines, reference

MT_EVAL = [sys.executable, "-m", "mt_eval"]
PAIRS = [("eng-spa", "es", "spa", "por"), ("eng-cat", "ca", "cat", "spa")]
LOW_TIERS = ("emerging", "baseline")
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


ADVERSARIAL: dict[str, Make] = {
    "shuffled references": _shuffled,
    "one constant sentence": lambda s, r, o: [r[0]] * len(r),
    "source copied": lambda s, r, o: list(s),
    "empty output": lambda s, r, o: [""] * len(r),
    "another language's reference": lambda s, r, o: list(o),
    "truncated to half": lambda s, r, o: [_half(t) for t in r],
    "every second word dropped": lambda s, r, o: [" ".join(t.split()[::2]) for t in r],
    "hallucinated fluent paragraph": lambda s, r, o: [_paragraph(i, r) for i in range(len(r))],
}


def _card(args: list[str]) -> dict:
    done = subprocess.run([*MT_EVAL, *args], capture_output=True, text=True, check=False)
    if done.returncode not in (0, 3):
        raise SystemExit(f"mt-eval {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-1500:]}")
    out = Path(args[args.index("-o") + 1])
    return json.loads(out.read_text(encoding="utf-8"))


def _row(name: str, card: dict) -> dict:
    s = card["scores"]
    return {"name": name, "chrf": s["chrf_plus_plus"], "length_ratio": s["length_ratio"],
            "composite": s["composite"], "tier": s["quality_tier"]}


def evaluate_pair(ntrex: Path, pair: str, lang: str, iso3: str, other_iso3: str, n: int, tmp: Path) -> list[dict]:
    src = read_lines(ntrex / SOURCE)[:n]
    refs = read_lines(ntrex / reference(iso3))[:n]
    other = read_lines(ntrex / reference(other_iso3))[:n]
    (tmp / "src.txt").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp / "ref.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    corpus = ["--source-file", str(tmp / "src.txt"), "--reference-file", str(tmp / "ref.txt"),
              "--source-lang", "en", "--target-lang", lang, "--bootstrap", "0", "--runs-dir", str(tmp / "runs")]
    rows = []
    outputs = {"references": refs, **{name: make(src, refs, other) for name, make in ADVERSARIAL.items()}}
    for name, texts in outputs.items():
        pred = tmp / f"{lang}-{len(rows)}.jsonl"
        pred.write_text("".join(json.dumps({"entry_id": i + 1, "predicted": t}, ensure_ascii=False) + "\n"
                                for i, t in enumerate(texts)), encoding="utf-8")
        rows.append(_row(name, _card(["score", *corpus, "-p", str(pred), "-o", str(tmp / "card.json")])))
    apertium = _row(f"Apertium {pair}", _card(["run", *corpus, "--method", f"apertium:{pair}",
                                               "-o", str(tmp / "card.json")]))
    return [rows[0], apertium, *rows[1:]]


def report(pair: str, rows: list[dict]) -> list[str]:
    print(f"\n{pair}: {'output':32} {'chrF++':>7} {'len':>5} {'composite':>9}  tier")
    for r in rows:
        print(f"  {r['name']:38} {r['chrf']:7.1f} {r['length_ratio']:5.2f} {r['composite']:9.3f}  {r['tier']}")
    refs, apertium, adversarial = rows[0], rows[1], rows[2:]
    failures = [f"{pair}: {r['name']} ({r['composite']:.3f}) not below Apertium ({apertium['composite']:.3f})"
                for r in adversarial if r["composite"] >= apertium["composite"]]
    failures += [f"{pair}: {r['name']} is {r['tier']}, not emerging/baseline" for r in adversarial
                 if r["tier"] not in LOW_TIERS]
    if any(r["composite"] >= refs["composite"] for r in rows[1:]):
        failures.append(f"{pair}: the references are not top")
    return failures


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    n = 300
    if "-n" in args:
        i = args.index("-n")
        n = int(args[i + 1])
        del args[i : i + 2]
    needs = [SOURCE, *(reference(iso3) for _, _, a, b in PAIRS for iso3 in (a, b))]
    ntrex = data_dir(__doc__, needs, args)
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for pair, lang, iso3, other in PAIRS:
            failures += report(pair, evaluate_pair(ntrex, pair, lang, iso3, other, n, Path(tmp)))
    print()
    for line in failures:
        print(f"FAIL {line}")
    print(f"adversarial: {'all checks pass' if not failures else f'{len(failures)} checks fail'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
