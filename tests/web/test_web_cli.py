"""``mt-eval serve`` refuses what a user can fix in one line (exit 2), before any server starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from web_helpers import cli


@pytest.mark.parametrize("args,message", [
    (("--db", "/no/such/folder/board.db"), "database folder does not exist"),
    (("--db", "postgresql+psycopg://me:hunter2@127.0.0.1:1/board"), "cannot open database"),
    (("--port", "70000"), "--port must be between 1 and 65535"),
])  # fmt: skip
def test_serve_refuses_in_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    extra = () if "--db" in args else ("--db", str(tmp_path / "board.db"))
    result = cli("serve", *args, *extra)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "hunter2" not in result.output
