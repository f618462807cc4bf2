"""What the weights-only model check costs (contest/model_bundle.py), against its named peer: one sha256 pass
over the same bytes (``hashlib``), which any submission pays anyway to be pinned by hash.

A synthetic checkpoint of SIZE MiB (one float16 safetensors file with 1,000 tensors, the header written as the
format specifies, plus a config.json) is checked with ``check_model_bundle``; the peer hashes the same file.
The ratio is printed; the checker reads each file once (hashing it) and the safetensors header once more.

Run: ``.venv/bin/python benchmarks/bench_model_bundle.py [SIZE_MIB]`` (default 512; about 2 s per GiB here).
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
import tempfile
import time
from pathlib import Path

from mt_eval.contest.model_bundle import check_model_bundle


def build(root: Path, mib: int, tensors: int = 1000) -> Path:
    root.mkdir()
    (root / "config.json").write_text(json.dumps({"model_type": "m2m_100"}))
    per = (mib << 20) // tensors // 2 * 2  # float16: 2 bytes per value
    header = {f"layer.{i}.weight": {"dtype": "F16", "shape": [per // 2], "data_offsets": [i * per, (i + 1) * per]}
              for i in range(tensors)}
    blob = json.dumps(header).encode()
    chunk = bytes(per)
    with (root / "model.safetensors").open("wb") as fh:
        fh.write(struct.pack("<Q", len(blob)) + blob)
        for _ in range(tensors):
            fh.write(chunk)
    return root


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def main() -> None:
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 512
    with tempfile.TemporaryDirectory() as tmp:
        root = build(Path(tmp) / "model", mib)
        sha256_file(root / "model.safetensors")  # warm the page cache for both
        t0 = time.perf_counter()
        sha256_file(root / "model.safetensors")
        peer = time.perf_counter() - t0
        t0 = time.perf_counter()
        bundle, problems = check_model_bundle(root)
        ours = time.perf_counter() - t0
        assert not problems and bundle is not None
        print(f"{mib} MiB checkpoint: check_model_bundle {ours:.2f} s, sha256 of the weights {peer:.2f} s, "
              f"ratio {ours / peer:.2f}")


if __name__ == "__main__":
    main()
