"""Sandbox overhead per entry: the same method through ``mt-eval sovereign preflight`` (bubblewrap,
JSON lines over a pipe, rlimits, seccomp) and through ``mt-eval run`` unsandboxed, both via the CLI
on the same development entries of ``examples/ntrex128-eng-spa.json``.

Both commands score the same way, so the difference in wall time is the sandbox: its start, the
staging copy of the bundle and the protocol round trip per entry. Printed per method: both times,
their ratio, and the overhead per entry in milliseconds.

* ``glossary-python`` (examples/bundles): the same ``MethodBase`` class in both (``plugin:glossary:GlossaryMethod``).
* ``apertium-command``: the bundle runs ``apertium -u eng-spa`` once per segment; ``mt-eval run`` uses
  the harness's ``apertium:eng-spa`` (one process for all segments, byte-identical output), so this
  ratio also holds the bundle's own per-segment process starts — the figure a submitter would see.
  A third line runs the bundle's own command unsandboxed on the same requests (JSON lines on a pipe,
  no CLI, no scoring) beside the sandboxed translation time from the preflight's report, to show
  what the sandbox itself costs for that command.

Run: ``.venv/bin/python benchmarks/bench_sandbox.py [--entries N]`` (default: every development entry, 160).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = str(Path(sys.executable).with_name("mt-eval"))


def _corpus(folder: Path, n: int) -> Path:
    data = json.loads((REPO / "examples/ntrex128-eng-spa.json").read_text(encoding="utf-8"))
    data["entries"] = [e for e in data["entries"] if e.get("segment", "development") == "development"][:n]
    path = folder / f"corpus-{n}.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _timed(args: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, env=env, cwd=REPO)
    return time.perf_counter() - start


def _signed(name: str, folder: Path) -> Path:
    """The bundle signed by a submitter key registered in the benchmark's governance folder (preflight
    accepts nothing else), outside the timed command; the signature's path."""
    if not (folder / "submitter.key").exists():
        for args in (["keys", "new", "-o", str(folder / "submitter.key")],
                     ["governance", "submitter", "add", "bench", "--public-key", str(folder / "submitter.pub"),
                      "--governance", str(folder / "gov")]):
            subprocess.run([CLI, *args], check=True, capture_output=True)
    signature = folder / f"{name}.sig"
    subprocess.run([CLI, "submission", "sign", str(REPO / "examples/bundles" / name), "--key",
                    str(folder / "submitter.key"), "--out", str(signature)], check=True, capture_output=True)
    return signature


def bench(name: str, method: str, n: int, folder: Path) -> None:
    corpus = _corpus(folder, n)
    signature = _signed(name, folder)
    env = {**os.environ, "PYTHONPATH": str(REPO / "examples/bundles/glossary-python")}
    plain = _timed([CLI, "run", "-c", str(corpus), "--method", method, "-o", str(folder / f"{name}.json"),
                    "--runs-dir", str(folder / "runs")], env)
    sandboxed = _timed([CLI, "sovereign", "preflight", str(REPO / "examples/bundles" / name), "--corpus",
                        str(corpus), "--governance", str(folder / "gov"), "--out", str(folder / f"{name}-P.json"),
                        "--logs", str(folder / f"{name}-logs"), "--signature", str(signature)])
    entries = len(json.loads(corpus.read_text())["entries"])
    print(f"{name:17} {entries:4d} entries: unsandboxed {plain:6.2f} s, sandboxed {sandboxed:6.2f} s, "
          f"ratio {sandboxed / plain:.2f}x, overhead {1000 * (sandboxed - plain) / entries:+.1f} ms/entry")
    if name == "apertium-command":
        inside = json.loads((folder / f"{name}-logs" / "sandbox_report.json").read_text())["elapsed_seconds"]
        direct = _direct(REPO / "examples/bundles" / name, corpus)
        print(f"{'  its command':17} {entries:4d} entries: unsandboxed {direct:6.2f} s, sandboxed {inside:6.2f} s, "
              f"ratio {inside / direct:.2f}x, overhead {1000 * (inside - direct) / entries:+.1f} ms/entry")


def _direct(bundle: Path, corpus: Path) -> float:
    """The bundle's command on the protocol's request lines, outside any sandbox."""
    from mt_eval.corpus.loaders import load_corpus
    from mt_eval.sovereign.protocol import request_line

    dataset = load_corpus(corpus)
    lines = b"".join(request_line(e, "en", "es") for e in dataset.entries)
    start = time.perf_counter()
    subprocess.run(["python3", "translate.py"], input=lines, check=True, capture_output=True, cwd=bundle,
                   env={"PATH": "/usr/bin:/bin"})
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench("glossary-python", "plugin:glossary:GlossaryMethod", args.entries or 160, Path(tmp))
        bench("apertium-command", "apertium:eng-spa", args.entries or 160, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
