"""Engine concurrency through the real CLI: 1,000 entries, 100 ms per request, --concurrency 16.

Ideal = 1000 / 16 × 0.100 s = 6.25 s (a perfect pipe: 16 requests always in flight, zero
overhead). Measured: ``mt-eval run --method llm --concurrency 16 --no-cache`` as a subprocess
against the fake OpenAI server in a third process, timed from the server's side (first request
received to last answer sent: the translation phase, without interpreter start, corpus loading or
scoring), with the mean number of requests the server really had in flight over that phase and
the card's ``elapsed_seconds``. The same run through the Python API (``run_method`` in-process)
is printed beside it, so a gap between the two points at what the CLI adds (progress bar, journal,
card), and so is a third run storing every answer in a fresh response cache, as a run does without
``--no-cache``. Prints ``ratio = measured / ideal`` (goal ≤ 1.15). Exits 1 only if a translation is wrong
or a run fails.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from llm_common import REPO, dataset, external_server, llm, run, server_spans, server_window, translate_text

N, C, LATENCY = 1000, 16, 0.100
KEY_ENV = "BENCH_FAKE_KEY"


def _drain(fd: int, sink: bytearray) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed its end
            return
        if not chunk:
            return
        sink.extend(chunk)


def cli_run(url: str, tmp: Path, tty: bool = True, cache: bool = False) -> tuple[dict, str]:  # type: ignore[type-arg]
    """One ``mt-eval run`` process over the bench corpus; (run card, what it wrote to the terminal).

    With ``tty`` the process's stdout and stderr are a pseudo-terminal, so the live progress bar
    renders and refreshes exactly as it does for someone at a terminal (piped, rich draws nothing).
    With ``cache`` it runs as by default, storing every answer in a fresh response cache.
    """
    ds = dataset(N)
    src, ref, runs = tmp / "src.txt", tmp / "ref.txt", tmp / f"runs-{cache}"
    src.write_text("".join(e.source + "\n" for e in ds.entries), encoding="utf-8")
    ref.write_text("".join(e.reference + "\n" for e in ds.entries), encoding="utf-8")
    mt_eval = str(Path(sys.executable).parent / "mt-eval")
    cmd = [mt_eval, "run", "--source-file", str(src), "--reference-file", str(ref), "--source-lang", "en",
           "--target-lang", "es", "--method", "llm", "--model", "bench/model", "--base-url", url,
           "--api-key-env", KEY_ENV, "--concurrency", str(C), "--bootstrap", "0", "--runs-dir", str(runs),
           *(["--cache", str(tmp / "cache.sqlite")] if cache else ["--no-cache"])]
    env = {**os.environ, KEY_ENV: "sk-bench", "COLUMNS": "120", "TERM": "xterm-256color"}
    screen = bytearray()
    if tty:
        master, slave = pty.openpty()
        reader = threading.Thread(target=_drain, args=(master, screen), daemon=True)
        reader.start()
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, cwd=REPO)
        os.close(slave)
        rc = proc.wait(timeout=300)
        reader.join(timeout=5)
        os.close(master)
    else:
        done = subprocess.run(cmd, env=env, capture_output=True, cwd=REPO, timeout=300)
        rc, screen = done.returncode, bytearray(done.stdout + done.stderr)
    text = screen.decode("utf-8", "replace")
    if rc != 0:
        raise SystemExit(f"mt-eval run failed ({rc}):\n{text[-2000:]}")
    return json.loads(next(runs.glob("*/run_card.json")).read_text(encoding="utf-8")), text


def main() -> int:
    ds = dataset(N)
    ideal = N / C * LATENCY
    with external_server(LATENCY) as url, tempfile.TemporaryDirectory() as tmp:
        run(llm(url, concurrency=C), dataset(C))  # warm-up of the server process
        skip = len(server_spans(url))
        out, api_wall = run(llm(url, concurrency=C), ds)
        api = server_window(url, skip)
        skip += api.requests
        card, _ = cli_run(url, Path(tmp))
        cli = server_window(url, skip)
        skip += cli.requests
        cached_card, _ = cli_run(url, Path(tmp), cache=True)
        cached = server_window(url, skip)
    wrong = sum(t.text != translate_text(e.source) for t, e in zip(out, ds.entries, strict=True))
    for c in (card, cached_card):
        wrong += sum(r["predicted"] != translate_text(e.source) for r, e in zip(c["results"], ds.entries, strict=True))
    print(f"concurrency: {N} entries, {LATENCY * 1000:.0f} ms latency, --concurrency {C}, ideal N/C·latency "
          f"{ideal:.2f} s")
    print(f"  API run_method : server phase {api.seconds:.2f} s, mean in flight {api.mean_in_flight:.1f}, "
          f"engine wall {api_wall:.2f} s, ratio {api.seconds / ideal:.3f}")
    print(f"  CLI mt-eval run: server phase {cli.seconds:.2f} s, mean in flight {cli.mean_in_flight:.1f}, "
          f"card elapsed_seconds {card['elapsed_seconds']:.2f} s ({cli.requests} requests)")
    print(f"  CLI with a fresh response cache (the default): server phase {cached.seconds:.2f} s, mean in flight "
          f"{cached.mean_in_flight:.1f}, ratio {cached.seconds / ideal:.3f}")
    print(f"  ratio = measured / ideal = {cli.seconds:.2f} / {ideal:.2f} = {cli.seconds / ideal:.3f} (goal ≤ 1.15)")
    print(f"  wrong translations: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
