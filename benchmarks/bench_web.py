"""Web pages of a large store against a static file served by the same ``mt-eval serve``.

The store holds ``--runs`` synthetic published runs (default 10,000; made and inserted as
``bench_leaderboard`` makes them: schema-valid, resealed, through ``insert_card``) and one real run
of ``--entries`` entries (default 2,000), scored with ``mt-eval score --source-file/--reference-file``
on the NTREX-128 eng→spa lines of ``tests/data/ntrex128`` (1,997 lines: a larger ``--entries``
repeats them from the top) with degraded hypotheses, and published with ``mt-eval publish``
(verified, as a user would). A real ``mt-eval serve`` subprocess is started on a free 127.0.0.1
port; an HTTP client (httpx, one keep-alive connection) times ``--requests`` (≥ 50) GETs of

- the leaderboard page ``/`` and its API ``/api/leaderboard``,
- the run page ``/runs/{hash}`` of the large run,
- a static file ``/static/style.css`` (the floor: what the server costs with no work to do).

The first request of each is timed on its own and left out of the p95 (the leaderboard ranks its
boards with a paired bootstrap once per state of the store and remembers them; a publish changes
the state). Prints each p95 in ms and as a ratio to the static file's; exit 1 if a page's p95 is
over 100 ms. Run: ``.venv/bin/python benchmarks/bench_web.py [--runs 10000] [--entries 2000]``
(about 2 minutes at the defaults on a 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from bench_leaderboard import BATCH, insert_batch, p95, real_card, synthetic
from ntrex_common import DEFAULT_NTREX, SOURCE, read_lines, reference
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.store import open_store
from support.perturb import degrade

TARGET_MS = 100.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def large_card(tmp: Path, n: int) -> Path:
    """A real card of ``n`` NTREX eng→spa entries (lines repeated past 1,997), scored by the CLI."""
    src, ref = read_lines(DEFAULT_NTREX / SOURCE), read_lines(DEFAULT_NTREX / reference("spa"))
    pick = [i % len(src) for i in range(n)]
    files = {name: tmp / f"{name}.txt" for name in ("src", "ref", "hyp")}
    files["src"].write_text("".join(src[i] + "\n" for i in pick), encoding="utf-8")
    files["ref"].write_text("".join(ref[i] + "\n" for i in pick), encoding="utf-8")
    files["hyp"].write_text("".join(degrade(k, ref[i]) + "\n" for k, i in enumerate(pick)), encoding="utf-8")
    card = tmp / "large.json"
    result = CliRunner().invoke(app, ["score", "--source-file", str(files["src"]), "--reference-file",
                                      str(files["ref"]), "-l", "en-es", "-p", str(files["hyp"]), "--system",
                                      "degraded-ntrex", "--bootstrap", "100", "--runs-dir", str(tmp / "runs"),
                                      "-o", str(card)])  # fmt: skip
    if result.exit_code != 0:
        raise SystemExit(f"scoring the large card failed: {result.output}")
    return card


def build_store(tmp: Path, runs: int, entries: int) -> tuple[str, str]:
    """The store's URL and the large run's hash."""
    db = f"sqlite:///{tmp / 'board.db'}"
    base, blob, _ = real_card(tmp)
    rng = random.Random(7)
    store = open_store(db)
    try:
        for start in range(0, runs, BATCH):
            insert_batch(store, [synthetic(base, i, 5, rng) for i in range(start, min(runs, start + BATCH))], blob)
            print(f"\r{min(runs, start + BATCH):,}/{runs:,} runs", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    finally:
        store.close()
    card = large_card(tmp, entries)
    result = CliRunner().invoke(app, ["publish", str(card), "--db", db, "--submitter", "bench"])
    if result.exit_code != 0:
        raise SystemExit(f"publishing the large card failed: {result.output}")
    return db, str(json.loads(card.read_text(encoding="utf-8"))["run_card_hash"])


def timed(client: httpx.Client, path: str, n: int) -> tuple[float, float, int]:
    """The first request's seconds, the p95 of the next ``n``, and the body's size."""
    times, size = [], 0
    for _ in range(n + 1):
        t = time.perf_counter()
        response = client.get(path)
        times.append(time.perf_counter() - t)
        if response.status_code != 200:
            raise SystemExit(f"GET {path}: HTTP {response.status_code}")
        size = len(response.content)
    return times[0], p95(times[1:]), size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="synthetic published runs")
    parser.add_argument("--entries", type=int, default=2_000, help="entries of the real run")
    parser.add_argument("--requests", type=int, default=50, help="timed requests per path (at least 50)")
    args = parser.parse_args()
    n = max(50, args.requests)
    with tempfile.TemporaryDirectory(prefix="mt-eval-bench-web-") as tmp_name:
        db, run_hash = build_store(Path(tmp_name), args.runs, args.entries)
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "mt_eval", "serve", "--db", db, "--port", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
                deadline = time.monotonic() + 60
                while True:
                    try:
                        client.get("/static/style.css")
                        break
                    except httpx.TransportError:
                        if server.poll() is not None or time.monotonic() > deadline:
                            raise SystemExit("mt-eval serve did not start") from None
                        time.sleep(0.2)
                paths = {"static file": "/static/style.css", "leaderboard page": "/",
                         "leaderboard API": "/api/leaderboard", f"run page ({args.entries:,} entries)":
                         f"/runs/{run_hash}"}  # fmt: skip
                results = {name: timed(client, path, n) for name, path in paths.items()}
        finally:
            server.terminate()
            server.wait(timeout=10)
    floor = results["static file"][1]
    print(f"{args.runs:,} published runs + 1 run of {args.entries:,} entries; p95 of {n} requests each "
          f"(first request apart), target ≤ {TARGET_MS:.0f} ms")  # fmt: skip
    ok = True
    for name, (first, tail, size) in results.items():
        ok &= name == "static file" or tail * 1000 <= TARGET_MS
        print(f"{name:28} p95 {tail * 1000:8.2f} ms = {tail / floor:6.1f}x static; first {first * 1000:8.1f} ms; "
              f"{size / 1024:,.0f} KiB")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
