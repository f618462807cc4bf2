"""What publish refuses and what every command rejects: tampered cards (exit 1), files that are not
cards, unknown schema versions and unreachable databases (exit 2), with nothing written; and filter
or sort values crafted as SQL, which must stay plain values."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.store import open_store
from mt_eval.store.db import table_names
from mt_eval.store.models import Card, CardStatistics, EntryResult

runner = CliRunner()
CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


def _copy(card: Path, dest: Path, edit: Any = None) -> Path:
    """``card`` and its sidecar in ``dest``, with ``edit(card_dict)`` applied (no reseal)."""
    data = json.loads(card.read_text(encoding="utf-8"))
    sidecar = card.with_name(data["statistics"]["file"])
    shutil.copy(sidecar, dest / sidecar.name)
    if edit is not None:
        edit(data)
    out = dest / card.name
    out.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return out


def _set(path: str, value: Any) -> Any:
    def edit(card: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = card
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value

    return edit


def _count(db: str) -> int:
    store = open_store(db)
    with store.session() as session:
        n = session.scalar(select(func.count()).select_from(Card)) or 0
        n += session.scalar(select(func.count()).select_from(EntryResult)) or 0
        n += session.scalar(select(func.count()).select_from(CardStatistics)) or 0
    store.close()
    return n


TAMPERS = [
    ("scores.composite", 0.99, "scores.composite"),
    ("scores.chrf_plus_plus", 12.5, "scores.chrf_plus_plus"),
    ("results.3.predicted", "something else entirely", "results[3]"),
    ("results.0.entry_chrf", 1.0, "results[0].entry_chrf"),
    ("method.name", "famous-system", "fingerprint.components.method_name"),
    ("submitter_note", "added after sealing", "run_card_hash"),
    ("dataset.entry_count", 199, "dataset.entry_count"),
    ("model_slug", "gpt-9", "fingerprint.components"),
]


@pytest.mark.parametrize(("path", "value", "named"), TAMPERS)
def test_any_changed_field_is_refused(cards: dict[str, Path], tmp_path: Path, path: str, value: Any,
                                      named: str) -> None:
    card = _copy(cards["truncated"], tmp_path, _set(path, value))
    db = tmp_path / "board.db"
    result = cli("publish", str(card), "--db", str(db))
    assert result.exit_code == 1, result.output
    assert "refused" in result.output and named in result.output
    assert not db.exists()


def test_changed_sidecar_is_refused(cards: dict[str, Path], tmp_path: Path) -> None:
    card = _copy(cards["truncated"], tmp_path)
    sidecar = tmp_path / json.loads(card.read_text(encoding="utf-8"))["statistics"]["file"]
    data = bytearray(sidecar.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte inside the compressed statistics
    sidecar.write_bytes(bytes(data))
    result = cli("publish", str(card), "--db", str(tmp_path / "b.db"))
    assert result.exit_code == 1 and "statistics.sha256" in result.output


def test_one_bad_card_writes_nothing(cards: dict[str, Path], tmp_path: Path, db_url: str) -> None:
    bad = _copy(cards["half"], tmp_path, _set("scores.composite", 0.9))
    assert cli("publish", str(cards["near"]), "--db", db_url).exit_code == 0
    before = _count(db_url)
    result = cli("publish", str(cards["truncated"]), str(bad), "--db", db_url)
    assert result.exit_code == 1 and "scores.composite" in result.output
    assert _count(db_url) == before


def test_not_a_card(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    for path in (CORPUS, tmp_path):
        result = cli("publish", str(path), "--db", str(db))
        assert result.exit_code == 2, result.output
        assert len(result.output.strip().splitlines()) == 1
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2]", encoding="utf-8")
    assert cli("publish", str(junk), "--db", str(db)).exit_code == 2
    assert not db.exists()


def test_unknown_schema_version(cards: dict[str, Path], tmp_path: Path) -> None:
    card = _copy(cards["near"], tmp_path, _set("schema_version", "9.9"))
    db = tmp_path / "b.db"
    result = cli("publish", str(card), "--db", str(db))
    assert result.exit_code == 2 and "schema_version" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not db.exists()


@pytest.mark.parametrize("url", ["postgresql+psycopg://nobody:secret@127.0.0.1:1/nothing", "nosuchdialect://x/y",
                                 "/no/such/folder/board.db"])
@pytest.mark.parametrize("command", ["publish", "leaderboard", "export"])
def test_unreachable_database(cards: dict[str, Path], url: str, command: str) -> None:
    args = [command, *([str(cards["near"])] if command == "publish" else []), "--db", url]
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "secret" not in result.output


def test_database_file_of_another_kind(cards: dict[str, Path], tmp_path: Path) -> None:
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a database\n" * 100, encoding="utf-8")
    for args in (["publish", str(cards["near"])], ["leaderboard"], ["export"]):
        result = cli(*args, "--db", str(foreign))
        assert result.exit_code == 2 and "not a database" in result.output
    assert foreign.read_text(encoding="utf-8") == "not a database\n" * 100


def test_default_database_from_environment(cards: dict[str, Path], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MT_EVAL_DB", str(tmp_path / "env.db"))
    assert cli("dataset", "register", str(CORPUS)).exit_code == 0  # the dataset first, in the same default store
    assert cli("publish", str(cards["near"])).exit_code == 0
    assert (tmp_path / "env.db").exists()
    monkeypatch.delenv("MT_EVAL_DB")
    monkeypatch.chdir(tmp_path)
    assert cli("dataset", "register", str(CORPUS)).exit_code == 0
    assert cli("publish", str(cards["near"])).exit_code == 0
    assert (tmp_path / "mt-eval.db").exists()


INJECTIONS = ["' OR '1'='1", "x'; DROP TABLE run_cards; --", "%", "________", "\" OR 1=1 --", "1 OR 1=1"]


FILTERS = {"--dataset": "dataset", "--method-class": "method_class", "--tier": "tier", "--verification": "verification"}


def test_filters_and_sort_are_not_sql(cards: dict[str, Path], db_url: str) -> None:
    """Every crafted value through every filter and the sort key stays a plain value. The commands are run with
    one value per option (each opens and migrates the store: 54 commands cost ~19 s of CPU); every value then
    goes through the same functions the commands call (``leaderboard``, ``export_text``) on one open store."""
    from mt_eval.errors import UserError
    from mt_eval.review.gate import accepted_in
    from mt_eval.store.board import board_rows, export_text, leaderboard
    from mt_eval.store.query import Filters

    assert cli("publish", str(cards["near"]), str(cards["half"]), "--db", db_url).exit_code == 0
    for option in FILTERS:
        result = cli("leaderboard", "--db", db_url, "--json", option, INJECTIONS[1])
        assert result.exit_code == 0 and json.loads(result.output) == [], (option, result.output)
        exported = cli("export", "--db", db_url, "--format", "jsonl", option, INJECTIONS[1])
        assert exported.exit_code == 0 and exported.output == ""
    sorted_by = cli("leaderboard", "--db", db_url, "--sort", INJECTIONS[1])
    assert sorted_by.exit_code == 2 and "cannot sort by" in sorted_by.output
    with open_store(db_url) as store:
        for value in INJECTIONS:
            for field in FILTERS.values():
                filters = Filters(**{field: value})
                assert leaderboard(store, filters, gate=accepted_in) == [], (field, value)
                assert export_text(store, filters, fmt="jsonl", gate=accepted_in) == "", (field, value)
            with pytest.raises(UserError, match="cannot sort by"):
                leaderboard(store, sort=value, gate=accepted_in)
        assert {"run_cards", "card_metrics", "datasets"} <= table_names(store.engine)
        assert len(board_rows(leaderboard(store, gate=accepted_in))) == 2  # the two cards, as before


def test_bad_options(db_url: str) -> None:
    assert cli("export", "--db", db_url, "--format", "xml").exit_code == 2
    assert cli("leaderboard", "--db", db_url, "--limit", "0").exit_code == 2
    assert cli("export", "--db", db_url, "-o", "/no/such/dir/out.csv").exit_code == 2


def test_reading_a_missing_store_does_not_create_one(tmp_path: Path) -> None:
    """A mistyped --db for a reading command is an error, not an empty leaderboard (and no file appears)."""
    from mt_eval.store.db import StoreError

    missing = tmp_path / "typo.db"
    with pytest.raises(StoreError, match="no store at"):
        open_store(str(missing), must_exist=True)
    assert not missing.exists()


def test_a_postgresql_url_without_its_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """psycopg is the ``postgres`` extra, not a base dependency (the demo never opens PostgreSQL): without it, a
    PostgreSQL URL is refused in one line naming the extra; a SQLite store still opens."""
    import sys

    from mt_eval.store.db import StoreError, make_engine

    for name in [m for m in sys.modules if m == "psycopg" or m.startswith("psycopg.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # what an install without the extra sees: ImportError
    with pytest.raises(StoreError) as refused:
        make_engine("postgresql+psycopg://reader:s3cret@localhost:1/board")
    line = str(refused.value)
    assert "mt-eval[postgres]" in line and "psycopg" in line and "s3cret" not in line and "\n" not in line
    with open_store(str(tmp_path / "ok.db")) as store:
        assert "card_metrics" in table_names(store.engine)
