"""Leaderboard store vs the naive baseline (every card file read, filtered and sorted), same run.

Every card is on a registered dataset (``mt-eval dataset register``): the bundled NTREX-128 eng→spa corpus,
registered from its file, and six synthetic datasets registered as rows (no entries: only their ranking key
is read), each ranked by its primary metric, chrF++ (docs/decisions.md §51). One real card is scored with
``mt-eval score`` on the corpus; N synthetic cards are made from it by changing ids, names and scores and
resealing with ``runcard.seal`` (their scores are made up, so ``publish``, which rescores every card against
the registered references, would keep its own card instead: they go in through ``insert_card``). To keep
``--cards 100000`` within a disk and memory, each keeps the first ``--entries`` results (default 5) and
``--wide`` of them (default 1 %) carry ``--wide-entries`` (default 1,000) per-entry rows, the real results
repeated under new entry ids (a dataset of their own). Cards are made, written and inserted in batches and
never held all at once. Measured:

- **top-50 query p95** (``query.top_rows``: one dataset's top 50 by its ranking key, chrF++, with each row's
  metrics) on SQLite, and on PostgreSQL when reachable (``--pg URL``, else a throw-away local server when
  Debian's ``postgresql`` is installed) vs reading every card file, keeping the dataset's and sorting by
  chrF++ (the same 50 cards, checked); then the same with the dataset's key switched to the composite
  (``dataset primary-metric``: nothing re-published) against the naive sort by composite;
- **publish throughput**: ``--publish`` (default 200) real cards, each a distinct system's outputs on
  ``--entries`` entries of the corpus, through ``store.publish.publish`` (every card rescored against the
  registered references, then inserted), and ``--publish-full`` (default 10) whole 200-entry cards the same
  way, in cards/s; vs writing each card as a file, the naive way to "publish"; and the bulk insert of the
  synthetic cards (``insert_card``, one transaction per 500 cards), what the store itself costs per card.

Run: ``.venv/bin/python benchmarks/bench_leaderboard.py [--cards 100000] [--entries 5] [--pg URL]``
(about 15 minutes and 10 GB of temporary disk at 100,000 cards on a 2-core machine; ``--cards 2000``
takes a minute).
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
from mt_eval.review.gate import accepted_in
from mt_eval.runcard.seal import entry_ids_sha256, seal
from mt_eval.store import open_store
from mt_eval.store.db import Store
from mt_eval.store.publish import insert_card
from mt_eval.store.query import Filters, top_rows

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


def naive_top(folder: Path, sha: str, key: str) -> tuple[float, list[str]]:
    """Read every card file, keep the dataset's, sort by ``key`` (a score on the card, higher is better):
    the files-only leaderboard."""
    t = time.perf_counter()
    cards = [json.loads(p.read_bytes()) for p in folder.glob("*.json")]
    mine = [c for c in cards if c["dataset"]["sha256"] == sha and c["scores"].get(key) is not None]
    mine.sort(key=lambda c: (-c["scores"][key], c["run_card_hash"]))
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
    """p95 of the dataset's top-50 by its ranking key (the key looked up in each query, as the board does)."""
    times, hashes = [], []
    for _ in range(QUERIES):
        t = time.perf_counter()
        with store.session() as session:
            rows, _ = top_rows(session, Filters(dataset=sha), limit=TOP, gate=accepted_in)  # as the board applies it
        times.append(time.perf_counter() - t)
        hashes = [r.run_card_hash for r in rows]
    return p95(times), hashes


def register(store: Store, others: list[str]) -> None:
    """The corpus registered from its file (``mt-eval dataset register``); the synthetic datasets as rows."""
    from datetime import UTC, datetime

    from mt_eval.corpus import load_corpus
    from mt_eval.store.dataset_models import RegisteredDataset
    from mt_eval.store.datasets import register_dataset

    register_dataset(store, load_corpus(CORPUS))
    with store.session() as session:
        for n, sha in enumerate(others):
            session.add(RegisteredDataset(dataset_id="synthetic-other", version=str(n), sha256=sha,
                                          entry_ids_sha256="0" * 64, language_pair="EN→ES", source_language="en",
                                          target_language="es", entry_count=0, secret_count=0, info={},
                                          registered_at=datetime.now(UTC)))  # fmt: skip


def real_variants(base: dict[str, Any], n: int, entries: int, offset: int) -> list[dict[str, Any]]:
    """``n`` genuine cards: system ``k``'s outputs are the real card's on ``entries`` entries (a window that
    moves with ``k``) with word ``k % 7`` of one output dropped, rebuilt and sealed by the store's own
    scoring (``store.rescore.rebuild_card``), as ``mt-eval score`` would have made them."""
    from mt_eval.store.rescore import rebuild_card

    out = []
    results = base["results"]
    for k in range(n):
        start = (k * 3) % max(1, len(results) - entries + 1) if entries < len(results) else 0
        chosen = [dict(r) for r in results[start : start + entries]]
        words = str(chosen[k % len(chosen)]["predicted"]).split()
        chosen[k % len(chosen)]["predicted"] = " ".join(w for i, w in enumerate(words) if i != k % 7) or "x"
        ids = [r["entry_id"] for r in chosen]
        card = {**base, "results": chosen, "run_id": f"real-{offset + k:05d}", "condition": f"real{offset + k}",
                "method": {**base["method"], "name": f"real-system-{offset + k}"},
                "dataset": {**base["dataset"], "entry_count": len(ids), "entry_ids_sha256": entry_ids_sha256(ids)}}
        out.append(rebuild_card(card)[0])
    return out


def publish_rate(store: Store, cards: list[dict[str, Any]]) -> float:
    """Cards per second through ``publish`` (rescored against the registered dataset, then inserted)."""
    from mt_eval.store.publish import PendingCard, publish

    t = time.perf_counter()
    results = publish(store, [PendingCard(f"real-{i}", c) for i, c in enumerate(cards)], submitter="bench")
    spent = time.perf_counter() - t
    kept = [r for r in results if r.status == "inserted" and not r.recomputed]
    if len(kept) != len(cards):
        raise SystemExit(f"publish changed or skipped {len(cards) - len(kept)} genuine cards: {results[0]}")
    return len(cards) / spent


def switch_key(store: Store, metric: str) -> None:
    from mt_eval.store.datasets import set_primary_metric

    set_primary_metric(store, "ntrex128-eng-spa-demo", metric)


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
    parser.add_argument("--publish", type=int, default=200, help="real cards of --entries entries published")
    parser.add_argument("--publish-full", type=int, default=10, help="real 200-entry cards published")
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
        others = sorted({f"{i % 7:064x}" for i in range(7)})
        folder = tmp / "files"
        folder.mkdir()
        targets = [("sqlite", str(tmp / "board.db"))] + ([("postgresql", pg_url)] if pg_url else [])
        stores = {name: open_store(db) for name, db in targets}
        for store in stores.values():
            register(store, others)
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
        naive: dict[str, tuple[float, list[str]]] = {}
        for key in ("chrf_plus_plus", "composite"):
            reads = [naive_top(folder, sha, key) for _ in range(args.naive_reads)]
            naive[key] = (max(s for s, _ in reads), reads[0][1])
        print(f"{args.cards:,} cards on 8 registered datasets ({wide:,} with {args.wide_entries:,} entry rows, the "
              f"rest {args.entries}); naive: top-{TOP} by chrF++ {naive['chrf_plus_plus'][0] * 1000:,.1f} ms, by "
              f"composite {naive['composite'][0] * 1000:,.1f} ms (worst of {args.naive_reads} full reads), "
              f"publish-as-files {files_rate:,.0f} cards/s; verify_card on the real card {verify_s:.2f} s")  # fmt: skip
        t = time.perf_counter()
        small = real_variants(base, args.publish, args.entries, 0)
        full = real_variants(base, args.publish_full, len(base["results"]), args.publish)
        print(f"made {len(small)} real {args.entries}-entry cards and {len(full)} real {len(base['results'])}-entry "
              f"cards (the store's own scoring) in {time.perf_counter() - t:.1f} s")
        ok = True
        for name, store in stores.items():
            rate = args.cards / spent[name]
            line = [f"{name}:"]
            for key in ("chrf_plus_plus", "composite"):  # the dataset's key, then switched: nothing re-published
                switch_key(store, key)
                top_p95, got = store_top(store, sha)
                naive_p95, expected = naive[key]
                same = got == expected
                ok &= same and top_p95 <= 0.020
                line.append(f"top-{TOP} by {key} p95 {top_p95 * 1000:,.2f} ms (target ≤ 20 ms) = "
                            f"{naive_p95 / top_p95:,.0f}x faster than naive, same top-{TOP}: {same};")
            switch_key(store, "chrf_plus_plus")
            small_rate, full_rate = publish_rate(store, small), publish_rate(store, full)
            store.close()
            line.append(f"publish with rescoring {small_rate:,.1f} cards/s ({args.entries}-entry cards) = "
                        f"{small_rate / files_rate:.4f}x the file writes, {full_rate:,.2f} cards/s "
                        f"({len(base['results'])}-entry); bulk insert {rate:,.0f} cards/s = "
                        f"{rate / files_rate:.2f}x the file writes")
            print(" ".join(line))
        if not pg_url:
            print("postgresql: not measured (no --pg URL and no local PostgreSQL installed)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
