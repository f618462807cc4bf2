"""Helpers of the signature tests: the CLI in-process, card copies, and an independent Ed25519 check.

``independent_valid`` verifies with ``cryptography`` directly, from the message the issue fixes
(``b"mt-eval run card signature v1\\n" + run_card_hash``), so a test does not trust ``signing.py``
to check its own signatures.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from typer.testing import CliRunner

from mt_eval.cli import app

SAVED = Path(__file__).resolve().parents[1] / "runcard" / "saved"
CARD_CONTEXT = b"mt-eval run card signature v1\n"
FILE_CONTEXT = b"mt-eval file signature v1\n"
runner = CliRunner()


def cli(*args: str | Path) -> Any:
    """``mt-eval ARGS`` in-process; the result has ``exit_code``, ``stdout``, ``stderr``, ``output``."""
    return runner.invoke(app, [str(a) for a in args])


def copy_card(card: Path, dest: Path, name: str | None = None) -> Path:
    """``card`` and its statistics sidecar (when it references one) copied into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / (name or card.name)
    shutil.copy(card, target)
    ref = json.loads(card.read_text(encoding="utf-8")).get("statistics")
    if isinstance(ref, dict) and (card.parent / ref["file"]).is_file():
        shutil.copy(card.parent / ref["file"], dest / ref["file"])
    return target


def spec_hash(card: Path) -> str:
    """run_card_hash exactly as the Run Card Spec computes it (not through mt_eval)."""
    data = json.loads(card.read_text(encoding="utf-8"))
    data["run_card_hash"] = ""
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def independent_valid(public_b64: str, signature_b64: str, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(base64.b64decode(public_b64)).verify(base64.b64decode(signature_b64),
                                                                               message)
    except InvalidSignature:
        return False
    return True


def sig_file(card: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(card.with_name(card.name + ".sig").read_text(encoding="utf-8"))
    return data


def write_sig_file(card: Path, data: dict[str, Any]) -> None:
    card.with_name(card.name + ".sig").write_text(json.dumps(data), encoding="utf-8")


def one_line_error(result: Any, code: int = 2) -> str:
    """The single ``error:`` line of a refused command (exit ``code``, no traceback)."""
    assert result.exit_code == code, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return str(lines[0])
