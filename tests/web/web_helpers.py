"""Helpers of the web tests: a small corpus with secret segments, cards on it.

The secret corpus is the first 12 NTREX eng→spa entries: 6 ``development``, 3 ``gold_standard``,
3 ``held_out``. Every text gets a marker word (``pubmark<id>`` or ``secretmark<id>``), so a test can
grep any response for each secret text without caring how it was escaped.
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

import store_fixtures
from mt_eval.cli import app

HERE = Path(__file__).resolve().parent
CORPUS = store_fixtures.CORPUS
SECRET = ("gold_standard", "held_out")
XSS = "<script>alert(1)</script>"
runner = CliRunner()


def cli(*args: str) -> Any:
    result = runner.invoke(app, list(args))
    return result


def secret_corpus(folder: Path) -> tuple[Path, list[dict[str, Any]]]:
    """The 12-entry corpus with marker words and secret segments."""
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    entries = []
    for i, entry in enumerate(data["entries"][:12]):
        segment = "development" if i < 6 else SECRET[i // 9]
        mark = f"{'secretmark' if segment in SECRET else 'pubmark'}{entry['id']}"
        entries.append({"id": entry["id"], "source": f"{entry['source']} {mark}src",
                        "reference": f"{entry['reference']} {mark}ref", "segment": segment,
                        "difficulty": entry["difficulty"], "provenance": entry["provenance"]})  # fmt: skip
    path = folder / "secret-corpus.json"
    path.write_text(json.dumps({"dataset": {**data["dataset"], "id": "secret-demo"}, "entries": entries},
                               ensure_ascii=False), encoding="utf-8")  # fmt: skip
    return path, entries


def score_secret(folder: Path, corpus: Path, entries: list[dict[str, Any]], name: str, *,
                 hostile: bool = False, drop: int = 0) -> Path:
    """A card on the secret corpus: outputs are the references less their last word (``hostile``: the
    first output carries a script tag; ``drop``: that many entries have no output, recorded as errors)."""
    rows = []
    for i, entry in enumerate(entries[drop:]):
        text = entry["reference"].rsplit(" ", 2)[0] + " " + entry["reference"].rsplit(" ", 1)[1]
        rows.append({"entry_id": entry["id"], "predicted": f"{XSS} {text}" if hostile and i == 0 else text})
    hyp = folder / f"{name}.jsonl"
    hyp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    card = folder / f"{name}.json"
    extra = ["--allow-missing"] if drop else []
    result = cli("score", "-c", str(corpus), "-p", str(hyp), "--bootstrap", "100", "--system",
                 XSS if hostile else name, "--runs-dir", str(folder / "runs"), "-o", str(card), *extra)
    assert result.exit_code == 0, result.output
    return card




def put_cards(db: str, *paths: Path, submitter: str = "tester") -> None:
    """Cards into the store ``db`` as a store of today holds them: those on the bundled NTREX corpus published
    with ``mt-eval publish`` (the corpus registered first: publish rescores against it), those on the secret
    corpus inserted as they are (``insert_card``), as a store kept them from before registered datasets (publish
    now refuses a self-run card over gold_standard or held_out entries): the pages must still never show those
    entries' texts."""
    import store_fixtures
    from mt_eval.store import open_store
    from mt_eval.store.publish import insert_card

    cards = {p: json.loads(p.read_text(encoding="utf-8")) for p in paths}
    ntrex = [p for p, c in cards.items() if c["dataset"]["id"] != "secret-demo"]
    legacy = [p for p, c in cards.items() if c["dataset"]["id"] == "secret-demo"]
    if ntrex:
        store_fixtures.register_corpus(db)  # the same content again changes nothing
        result = cli("publish", *(str(p) for p in ntrex), "--db", db, "--submitter", submitter)
        assert result.exit_code == 0, result.output
    if legacy:
        with open_store(db) as store, store.session() as session:
            for p in legacy:
                insert_card(session, cards[p], p.with_name(cards[p]["statistics"]["file"]).read_bytes(),
                            submitter=submitter)


def board_json(db: str, *extra: str) -> list[dict[str, Any]]:
    """The independent reference: what ``mt-eval leaderboard --json`` prints for the store."""
    result = cli("leaderboard", "--db", db, "--json", *extra)
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.output)
    return rows


CHROMIUM = "/usr/bin/chromium"  # Debian's package: browsers cannot be downloaded here


@contextmanager
def running_server(db: str, *extra: str) -> Iterator[str]:
    """``mt-eval serve`` (with the ``extra`` options) on a free port of 127.0.0.1 until the block ends; its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    proc = subprocess.Popen([sys.executable, "-m", "mt_eval", "serve", "--db", db, "--port", str(port), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/facets", timeout=2) as response:
                    assert response.status == 200
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    out = proc.stdout.read().decode() if proc.stdout else ""
                    raise AssertionError(f"mt-eval serve did not start: {out[-2000:]}") from None
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def raw_get(base: str, path: str) -> tuple[int, str]:
    """GET ``path`` sent byte for byte (a browser or client library would normalise ``..`` first): status, body."""
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.putrequest("GET", path, skip_accept_encoding=True)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        connection.close()
