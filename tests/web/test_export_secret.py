"""``export --entries`` (which a store may sign and hand out) never carries a secret segment's output: a strong
system's outputs on gold_standard/held_out entries are close to their references, so they would leak the gold set."""

from __future__ import annotations

import json
from typing import Any

from web_helpers import cli


def test_export_entries_leave_out_secret_segments(board_db: str, secret_cards: dict[str, Any]) -> None:
    result = cli("export", "--db", board_db, "--entries", "--format", "jsonl")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines() if line.strip()]
    secret_ids = {e["id"] for e in secret_cards["entries"] if e.get("segment") in ("gold_standard", "held_out")}
    public_ids = {e["id"] for e in secret_cards["entries"]} - secret_ids
    plain = json.loads(secret_cards["cards"]["plain"].read_text(encoding="utf-8"))["run_card_hash"]
    exported = {r["entry_id"] for r in rows if r["run_card_hash"] == plain}
    assert secret_ids and exported == public_ids  # the public entries are all there; no secret one is
    assert "secretmark" not in result.output
