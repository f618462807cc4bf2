"""Fetching a test set by id against assembling it by hand: ``ntrex128:eng-spa`` (1,997 segments).

* ours   ``fetch_corpus`` from the local upstream server (``tests/catalog/catalog_upstream.py``: NTREX's own
         files over HTTP), sha256 checks, conversion to the JSON envelope with provenance, then
         ``load_corpus`` of the result — a fresh cache each repeat, so every byte is downloaded;
* peer   ``load_text_pair`` of the same two files already on disk (what a user does after downloading and
         converting by hand).

Median of ``--repeats`` each, alternating which goes first; prints both and ``ratio = ours/peer``, and checks
that both give the same sources and references (exit status 1 if not).

Run: ``.venv/bin/python benchmarks/bench_catalog.py [--repeats N]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "catalog"), str(ROOT / "tests")]

from catalog_upstream import Upstream, default_files, serve  # noqa: E402

from data_paths import NTREX  # noqa: E402
from mt_eval.catalog import Cache, FetchOptions, fetch_corpus  # noqa: E402
from mt_eval.corpus import Dataset, load_corpus, load_text_pair  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    ours: list[float] = []
    peer: list[float] = []
    with serve(Upstream(files=default_files())) as upstream:
        options = FetchOptions(mirror=upstream.base)
        got: Dataset | None = None
        hand: Dataset | None = None
        for i in range(args.repeats):
            for side in ("ours", "peer") if i % 2 == 0 else ("peer", "ours"):
                start = time.perf_counter()
                if side == "ours":
                    with tempfile.TemporaryDirectory() as tmp:
                        fetched = fetch_corpus("ntrex128:eng-spa", cache=Cache(Path(tmp)), options=options,
                                               accept_licence=True)
                        got = load_corpus(fetched.path)
                    ours.append(time.perf_counter() - start)
                else:
                    hand = load_text_pair(NTREX / "newstest2019-src.eng.txt", [NTREX / "newstest2019-ref.spa.txt"],
                                          source_lang="en", target_lang="es")
                    peer.append(time.perf_counter() - start)
    assert got is not None and hand is not None
    same = [(e.source, e.reference) for e in got.entries] == [(e.source.strip(), e.reference.strip())
                                                              for e in hand.entries]
    o, p = statistics.median(ours), statistics.median(peer)
    print(f"ours (fetch + check + convert + load): {o * 1000:.0f} ms; peer (load_text_pair on disk): {p * 1000:.0f} ms")
    print(f"ratio = ours/peer = {o / p:.2f}; same entries: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
