"""Real cards for the show/report tests: prediction files scored through the CLI on the bundled
NTREX-128 eng→spa corpus (``examples/``), so every card is sealed, verifies and has its statistics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from xdist_shared import built_once

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
ESCAPES = "\x1b]8;;http://evil\x07click\x1b]8;;\x07 \x1b[2J\x1b[31mred"
HTML_EVIL = "<script>alert(1)</script> & <b>bold</b>"


def _predictions(kind: str) -> list[dict[str, object]]:
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
    out: list[dict[str, object]] = []
    for i, entry in enumerate(entries):
        words = str(entry["reference"]).split()
        if kind == "truncated":  # drops 0-2 final words: a mediocre system
            text = " ".join(words[: max(1, len(words) - i % 3)])
        elif kind == "near":  # the reference, but every fifth entry loses a word: the better system
            text = " ".join(words[:-1]) if i % 5 == 0 and len(words) > 1 else str(entry["reference"])
        else:  # "evil": like "near", with terminal escapes and HTML in two outputs
            text = " ".join(words[:-1]) if i % 5 == 0 and len(words) > 1 else str(entry["reference"])
            if i == 1:
                text = f"{ESCAPES} {text}"
            elif i == 2:
                text = f"{HTML_EVIL} {text}"
        out.append({"entry_id": entry["id"], "predicted": text})
    return out


@pytest.fixture(scope="session")
def corpus_cards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``truncated``, ``near`` (scored with ``--system near-ref``) and ``evil`` cards, and ``dir``."""

    def build(tmp: Path) -> dict[str, Path]:
        runner = CliRunner()
        paths: dict[str, Path] = {"dir": tmp}
        for kind in ("truncated", "near", "evil"):
            hyp = tmp / f"{kind}.jsonl"
            hyp.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in _predictions(kind)),
                           encoding="utf-8")
            card = tmp / f"{kind}.json"
            extra = ["--system", "near-ref"] if kind == "near" else []
            result = runner.invoke(app, ["score", "-c", str(CORPUS), "-p", str(hyp), "--bootstrap", "100",
                                         "--runs-dir", str(tmp / "runs"), "-o", str(card), *extra])
            assert result.exit_code == 0, result.output
            paths[kind] = card
        return paths

    return built_once(tmp_path_factory, "cli-cards", build)  # once per run, not per xdist worker

