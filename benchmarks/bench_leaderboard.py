"""Leaderboard store vs the naive baseline (every card file read, filtered and sorted), same run.

One real card is scored with ``mt-eval score`` on the bundled NTREX-128 eng→spa corpus; N synthetic
cards are made from it by changing ids, names and scores and resealing with ``runcard.seal`` (they
are schema-valid but do not verify, so they go in through the store's ``insert_card``, not
``publish``). To keep ``--cards 100000`` within a disk and memory, each keeps the first ``--entries``
results (default 5) and ``--wide`` of them (default 1 %) carry ``--wide-entries`` (default 1,000)
per-entry rows, the real results repeated under new entry ids (the dataset block says so, so every
card is self-consistent). Cards are made, written and inserted in batches and never held all at once.
Measured:

- **top-50 query p95** (``query_rows``: one dataset, best composite first, with each row's metrics)
  on SQLite, and on PostgreSQL when reachable (``--pg URL``, else a throw-away local server when
  Debian's ``postgresql`` is installed) vs reading every card file, keeping the dataset's and
  sorting (the same 50 cards, checked);
- **publish throughput** (cards/s, one transaction per 500 cards) vs writing each card as a file,
  the naive way to "publish"; and, for context, ``verify_card`` on the real card (what ``publish``
  adds per card).

Run: ``.venv/bin/python benchmarks/bench_leaderboard.py [--cards 100000] [--entries 5] [--pg URL]``
(about 15 minutes and 10 GB of temporary disk at 100,000 cards on a 2-core machine; ``--cards 2000``
takes half a minute).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.runcard.seal import entry_ids_sha256, seal
from mt_eval.store import open_store
from mt_eval.store.db import Store
from mt_eval.store.publish import insert_card
from mt_eval.store.query import Filters, query_rows

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "examples" / "ntrex128-eng-spa.json"
TOP = 50
QUERIES = 40
BATCH = 500


def real_card(tmp: Path) -> tuple[dict[str, Any], bytes, Path]:
    """A card scored by the CLI from a deterministic degradation of the references."""
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
    hyp = tmp / "hyp.jsonl"
    with hyp.open("w", encoding="utf-8") as f:
        for i, e in enumerate(entries):
            words = str(e["reference"]).split()
            f.write(json.dumps({"entry_id": e["id"], "predicted": " ".join(words[: max(1, len(words) - i % 3)])},
                               ensure_ascii=False) + "\n")  # fmt: skip
    card = tmp / "real.json"
    result = CliRunner().invoke(app, ["score", "-c", str(CORPUS), "-p", str(hyp), "--bootstrap", "100",
                                      "--runs-dir", str(tmp / "runs"), "-o", str(card)])  # fmt: skip
    if result.exit_code != 0:
        raise SystemExit(f"scoring the real card failed: {result.output}")
    data = json.loads(card.read_text(encoding="utf-8"))
    return data, card.with_name(data["statistics"]["file"]).read_bytes(), card


def widened(results: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """``n`` results: the real ones repeated, each repeat under new entry ids (one dataset of ``n``)."""
    step = max(r["entry_id"] for r in results)
    return [results[k % len(results)] | {"entry_id": results[k % len(results)]["entry_id"] + step * (k // len(results))}
            for k in range(n)]  # fmt: skip


def synthetic(base: dict[str, Any], i: int, n_entries: int, rng: random.Random) -> dict[str, Any]:
    """Card ``i``: new run id, method, condition and scores; two datasets (even/odd); resealed."""
    card = copy.copy(base)  # shallow: only the blocks changed below are copied
    card["dataset"], card["method"] = dict(base["dataset"]), dict(base["method"])
    card["cost"] = dict(base["cost"])
    card["scores"] = dict(base["scores"])
    card["scores"]["confidence_intervals"] = dict(base["scores"]["confidence_intervals"])
    results = base["results"]
    card["results"] = results[:n_entries] if n_entries <= len(results) else widened(results, n_entries)
    ids = [r["entry_id"] for r in card["results"]]
    card["dataset"] |= {"entry_count": len(ids), "entry_ids_sha256": entry_ids_sha256(ids)}
    if i % 2 or n_entries > len(results):  # a wide card is a dataset of its own
        card["dataset"] |= {"id": "synthetic-other", "sha256": f"{i % 7:064x}"}
    card["run_id"] = f"bench-{i:07d}"
    card["method"]["name"] = f"system-{i % 997}"
    card["condition"] = f"c{i}"
    scores = card["scores"]
    value = round(rng.uniform(0.2, 0.95), 6)
    scores["composite"] = value
    scores["confidence_intervals"]["composite"] = {"ci_lower": value - 0.01, "ci_upper": value + 0.01}
    for metric in ("chrf_plus_plus", "bleu", "ter"):
        if scores.get(metric) is not None:
            scores[metric] = round(rng.uniform(10, 90), 4)
    card["cost"]["cost_per_entry_usd"] = round(rng.uniform(0, 0.01), 6)
    scores["avg_latency_seconds"] = round(rng.uniform(0.05, 3.0), 4)
    return seal(card)


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1] if len(samples) > 1 else samples[0]


def naive_top(folder: Path, sha: str) -> tuple[float, list[str]]:
    """Read every card file, keep the dataset's, sort by composite: the files-only leaderboard."""
    t = time.perf_counter()
    cards = [json.loads(p.read_bytes()) for p in folder.glob("*.json")]
    mine = [c for c in cards if c["dataset"]["sha256"] == sha and c["scores"].get("composite") is not None]
    mine.sort(key=lambda c: (-c["scores"]["composite"], c["run_card_hash"]))
    return time.perf_counter() - t, [c["run_card_hash"] for c in mine[:TOP]]


def insert_batch(store: Store, cards: list[dict[str, Any]], blob: bytes) -> float:
    """Insert one batch in one transaction; the seconds it took."""
    t = time.perf_counter()
    with store.session() as session:
        for card in cards:
            insert_card(session, card, blob, submitter="bench")
    return time.perf_counter() - t


def write_batch(folder: Path, cards: list[dict[str, Any]]) -> float:
    """Write one batch as card files (the naive "publish"); the seconds it took."""
    t = time.perf_counter()
    for card in cards:
        (folder / f"{card['run_card_hash']}.json").write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    return time.perf_counter() - t


def store_top(store: Store, sha: str) -> tuple[float, list[str]]:
    times, hashes = [], []
    for _ in range(QUERIES):
        t = time.perf_counter()
        with store.session() as session:
            rows = query_rows(session, Filters(dataset=sha), limit=TOP)
        times.append(time.perf_counter() - t)
        hashes = [r.run_card_hash for r in rows]
    return p95(times), hashes


@contextlib.contextmanager
def postgres(url: str | None) -> Iterator[str | None]:
    """``--pg``'s URL, else a throw-away local server (tests/pgserver.py), else None."""
    if url:
        yield url
        return
    sys.path.insert(0, str(REPO / "tests"))
    try:
        from pgserver import bindir, create_database, postgres_server

        bindir()
    except (ImportError, RuntimeError):
        yield None
        return
    base = Path(tempfile.mkdtemp(prefix="mt-eval-bench-pg-"))
    try:
        with postgres_server(base) as server:
            yield create_database(server)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--entries", type=int, default=5, help="per-entry rows of most cards")
    parser.add_argument("--wide", type=float, default=0.01, help="share of cards with --wide-entries rows")
    parser.add_argument("--wide-entries", type=int, default=1000)
    parser.add_argument("--naive-reads", type=int, default=3, help="full reads of the card files (worst counts)")
    parser.add_argument("--pg", default=None, help="PostgreSQL URL (default: a local throw-away server if installed)")
    args = parser.parse_args()
    # kill (SIGTERM) unwinds like Ctrl-C: the throw-away server is stopped and the temporary files go
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rng = random.Random(7)
    every = max(1, round(1 / args.wide)) if args.wide > 0 else 0
    with tempfile.TemporaryDirectory(prefix="mt-eval-bench-") as tmp_name, postgres(args.pg) as pg_url:
        tmp = Path(tmp_name)
        base, blob, real_path = real_card(tmp)
        from mt_eval.runcard.verify import verify_card

        t = time.perf_counter()
        assert verify_card(base, real_path) == []
        verify_s = time.perf_counter() - t
        sha = base["dataset"]["sha256"]
        folder = tmp / "files"
        folder.mkdir()
        targets = [("sqlite", str(tmp / "board.db"))] + ([("postgresql", pg_url)] if pg_url else [])
        stores = {name: open_store(db) for name, db in targets}
        spent = dict.fromkeys(["files", *stores], 0.0)
        wide = 0
        for start in range(0, args.cards, BATCH):
            batch = []
            for i in range(start, min(args.cards, start + BATCH)):
                is_wide = bool(every) and i % every == every - 1
                wide += is_wide
                batch.append(synthetic(base, i, args.wide_entries if is_wide else args.entries, rng))
            spent["files"] += write_batch(folder, batch)
            for name, store in stores.items():
                spent[name] += insert_batch(store, batch, blob)
            print(f"\r{min(args.cards, start + BATCH):,}/{args.cards:,} cards", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        files_rate = args.cards / spent["files"]
        naive = [naive_top(folder, sha) for _ in range(args.naive_reads)]
        naive_p95, expected = max(s for s, _ in naive), naive[0][1]
        print(f"{args.cards:,} cards ({wide:,} with {args.wide_entries:,} entry rows, the rest {args.entries}); "
              f"naive: top-{TOP} {naive_p95 * 1000:,.1f} ms (worst of {args.naive_reads} full reads), "
              f"publish-as-files {files_rate:,.0f} cards/s; verify_card on the real card {verify_s:.2f} s")  # fmt: skip
        ok = True
        for name, store in stores.items():
            rate = args.cards / spent[name]
            top_p95, got = store_top(store, sha)
            store.close()
            same = got == expected
            ok &= same and top_p95 <= 0.020
            print(f"{name}: top-{TOP} p95 {top_p95 * 1000:,.2f} ms (target ≤ 20 ms) = {naive_p95 / top_p95:,.0f}x "
                  f"faster than naive; publish {rate:,.0f} cards/s = {rate / files_rate:.2f}x the file writes; "
                  f"same top-{TOP} as naive: {same}")  # fmt: skip
        if not pg_url:
            print("postgresql: not measured (no --pg URL and no local PostgreSQL installed)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
