"""``mt-eval score`` as a process: alignment problems stop it naming the entry or line, --allow-missing scores
what exists and lists the rest on the card, and ``-o`` leaves no ``runs/<uuid>/`` behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MT_EVAL = [sys.executable, "-c", "from mt_eval.cli import main; main()"]
SOURCES = ["The cat sleeps.", "A dog barks loudly.", "Birds sing at dawn.", "Rain falls today.", "We eat bread."]
REFS = ["El gato duerme.", "Un perro ladra fuerte.", "Los pájaros cantan al alba.", "Hoy llueve.", "Comemos pan."]


def _score(tmp: Path, predictions: str, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp / "src.txt").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (tmp / "ref.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    (tmp / name).write_text(predictions, encoding="utf-8")
    done = subprocess.run([*MT_EVAL, "score", "--source-file", "src.txt", "--reference-file", "ref.txt",
                           "--source-lang", "en", "--target-lang", "es", "-p", name, "--bootstrap", "0", *extra],
                          cwd=tmp, capture_output=True, text=True, timeout=120)
    done.stderr = " ".join(done.stderr.split())  # one line, however the console wrapped it
    return done


def _jsonl(ids: list[int]) -> str:
    return "".join(json.dumps({"entry_id": i, "predicted": REFS[i - 1]}) + "\n" for i in ids)


def test_score_with_out_leaves_no_run_directory(tmp_path: Path) -> None:
    done = _score(tmp_path, "\n".join(REFS) + "\n\n", "hyp.txt", "-o", "card.json")  # a trailing blank line too
    assert done.returncode == 0, done.stderr
    card = json.loads((tmp_path / "card.json").read_text(encoding="utf-8"))
    assert card["dataset"]["entry_count"] == 5 and not any(r["error"] for r in card["results"])
    assert not (tmp_path / "runs").exists()


def test_missing_entries_stop_score_and_allow_missing_records_each(tmp_path: Path) -> None:
    stopped = _score(tmp_path, _jsonl([1, 2, 4]), "hyp.jsonl", "-o", "card.json")
    assert stopped.returncode == 2 and "no prediction for entry 3 (2 of 5 entries have none)" in stopped.stderr
    assert not (tmp_path / "card.json").exists()
    allowed = _score(tmp_path, _jsonl([1, 2, 4]), "hyp.jsonl", "-o", "card.json", "--allow-missing")
    assert allowed.returncode == 0, allowed.stderr
    card = json.loads((tmp_path / "card.json").read_text(encoding="utf-8"))
    assert [r["entry_id"] for r in card["results"] if r["error"]] == [3, 5]
    assert any("2 entries have no prediction" in w and w.endswith("entries 3, 5") for w in card["warnings"])
    assert "2 of 5 entries failed: no prediction ×2" in allowed.stderr


def test_unknown_and_zero_based_ids_name_the_line(tmp_path: Path) -> None:
    zero = _score(tmp_path, "".join(json.dumps({"id": i, "prediction": r}) + "\n" for i, r in enumerate(REFS)),
                  "hyp.jsonl", "-o", "card.json")
    assert zero.returncode == 2 and "hyp.jsonl:1" in zero.stderr and "0-based" in zero.stderr
    extra = _score(tmp_path, _jsonl([1, 2, 3, 4, 5]) + json.dumps({"entry_id": 6, "predicted": "x"}) + "\n",
                   "hyp.jsonl", "-o", "card.json")
    assert extra.returncode == 2 and "hyp.jsonl:6" in extra.stderr and "entry id 6 is not in the corpus" in extra.stderr
    assert not (tmp_path / "card.json").exists() and not (tmp_path / "runs").exists()
