"""Shared set-up for the sweep tests. Sweeps run against the real local OpenAI-protocol server
(tests/support/fake_openai.py) and real Apertium, on the bundled NTREX-128 eng→spa corpus; the Ray
tests use a real local Ray cluster.

``Oracle`` is the "provider": it knows each source's reference, so every model/temperature/prompt
gets an answer of a known, different quality, and it counts every request per (model, temperature,
prompt version, source) on the server side, so a test can prove which entries were requested.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.fake_openai import FakeOpenAI

__all__ = ["CORPUS", "FAST", "FakeOpenAI", "LocalSweep", "Oracle", "cards_in", "expected", "oracle_key", "write_sweep"]

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
IDS = "1-6"
MODELS = ("test/good", "test/mid", "test/bad")
FAST = ("--bootstrap", "100")
"""Fewer resamples than the default 1000: the cards stay sealed and verifiable, the tests take half as long."""
PROMPT_V2 = "You translate English into Spanish. PROMPT-V2. Reply with the translation only."


def expected(model: str, temperature: float, v2: bool, source: str, reference: str) -> str:
    """The oracle's answer: ``good`` gives the reference, ``mid`` half of it then the source's words,
    ``bad`` the source; sampling (temperature > 0) drops the last word, the v1 prompt the first."""
    words = {"test/good": reference.split(), "test/bad": source.split()}.get(model)
    if words is None:
        ref = reference.split()
        words = ref[: len(ref) // 2] + source.split()[len(ref) // 2:]
    if temperature > 0 and len(words) > 1:
        words = words[:-1]
    if not v2 and len(words) > 1:
        words = words[1:]
    return " ".join(words)


class Oracle:
    """The server's responder: answers as :func:`expected` says and counts requests."""

    def __init__(self) -> None:
        entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
        self.references = {str(e["source"]): str(e["reference"]) for e in entries}
        self.asked: Counter[tuple[str, float, bool, str]] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        source = str(body["messages"][-1]["content"]).split("Text:\n", 1)[-1]
        v2 = "PROMPT-V2" in str(body["messages"][0]["content"])
        key = (str(body["model"]), float(body.get("temperature", 0.0)), v2, source)
        with self._lock:
            self.asked[key] += 1
        return expected(key[0], key[1], v2, source, self.references[source])


def write_sweep(tmp: Path, base_url: str, *, name: str = "demo", models: tuple[str, ...] = MODELS,
                temperatures: tuple[float, ...] = (0.0, 0.7), prompts: bool = True, apertium: bool = True,
                method: tuple[str, ...] = ()) -> Path:
    """A benchmark file: models × temperatures × (2 prompts), plus an Apertium cell."""
    (tmp / "prompt-v1.txt").write_text("You are a translator into {target_name}.", encoding="utf-8")
    (tmp / "prompt-v2.txt").write_text(PROMPT_V2, encoding="utf-8")
    lines = ["[sweep]", f'name = "{name}"', f'corpus = "{CORPUS}"', f'ids = "{IDS}"', "",
             "[method]", 'spec = "llm:{model}"', f'base_url = "{base_url}"', "max_retries = 0", *method, "",
             "[axes]", f"model = {json.dumps(list(models))}", f"temperature = {json.dumps(list(temperatures))}"]
    if prompts:
        lines.append('prompt = ["prompt-v1.txt", "prompt-v2.txt"]')
    if apertium:
        lines += ["", "[[cell]]", 'name = "apertium"', 'spec = "apertium:eng-spa"']
    path = tmp / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class LocalSweep:
    file: Path
    root: Path
    db: Path
    asked: Counter[tuple[str, float, bool, str]]
    progress: str  # what the sweep printed on stderr


def cards_in(root: Path) -> dict[str, dict[str, Any]]:
    """Each cell folder's card, by folder name."""
    return {p.parent.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(root.glob("*/run_card.json"))}


def oracle_key(folder: str, source: str) -> tuple[str, float, bool, str]:
    """The oracle's request key for an entry of the LLM cell in ``folder`` (a cell slug)."""
    m = re.fullmatch(r"model=(test_\w+),temperature=([\d.]+),prompt=prompt-(v\d)", folder)
    assert m, folder
    return m.group(1).replace("_", "/", 1), float(m.group(2)), m.group(3) == "v2", source
