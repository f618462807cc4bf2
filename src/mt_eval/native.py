"""C sources compiled once per machine and loaded through ctypes.

Two hot loops have a C twin: the embedding engine's VNNI matmul (``metrics/embeddings/engine.py``) and TER's
edit distance (``metrics/ter_native.py``). Each is compiled on first use with the machine's C compiler into
``~/.cache/mt-eval/native/<name>-<hash>.so`` (the hash covers every source byte and flag, so a changed source
never loads a stale library) and read from there afterwards. Where no compiler is installed or a build fails,
``compiled`` returns None and the caller keeps its Python path: the same numbers, only slower (tests compare
the two on every input they try).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

CACHE_ENV = "XDG_CACHE_HOME"
BUILD_TIMEOUT = 300  # seconds per compiler step


def cache_dir() -> Path:
    base = os.environ.get(CACHE_ENV) or str(Path.home() / ".cache")
    return Path(base) / "mt-eval" / "native"


def compiler() -> str | None:
    return shutil.which("cc") or shutil.which("gcc")


def compiled(name: str, files: Mapping[str, str | bytes], main: str, cflags: Sequence[str],
             ldflags: Sequence[str], libraries: Sequence[str] = ()) -> Path | None:
    """The shared library built from ``files`` (written side by side; ``main`` is the one compiled), or None.

    Compiled and linked in two steps: ``cflags`` never reach the link (gcc < 13 links crtfastmath.o into a
    ``-ffast-math`` shared library, which sets flush-to-zero for the whole process when it loads)."""
    cc = compiler()
    if cc is None:
        return None
    blobs = {path: text.encode() if isinstance(text, str) else text for path, text in sorted(files.items())}
    digest = hashlib.sha256()
    for part in (*(p.encode() + b"\0" + blob for p, blob in blobs.items()), *map(str.encode, cflags),
                 *map(str.encode, ldflags), *map(str.encode, libraries)):
        digest.update(part + b"\0")
    target = cache_dir() / f"{name}-{digest.hexdigest()[:16]}.so"
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            for path, blob in blobs.items():
                (Path(tmp) / path).write_bytes(blob)
            objects, built = Path(tmp) / f"{name}.o", Path(tmp) / f"{name}.so"
            steps = ([cc, *cflags, "-c", str(Path(tmp) / main), "-o", str(objects)],
                     [cc, *ldflags, str(objects), "-o", str(built), *libraries])
            for step in steps:
                done = subprocess.run(step, capture_output=True, timeout=BUILD_TIMEOUT, check=False)
                if done.returncode != 0:
                    return None
            if not built.is_file():
                return None
            os.replace(built, target)  # atomic: a concurrent build of the same key writes the same bytes
    except (OSError, subprocess.TimeoutExpired):
        return None
    return target


@cache
def c_function(package: str, source: str, symbol: str, restype: Any, argtypes: tuple[Any, ...],
               cflags: tuple[str, ...] = ("-O2", "-fPIC"), ldflags: tuple[str, ...] = ("-shared",)) -> Any | None:
    """``symbol`` of the C file ``source`` shipped in ``package``, compiled once per machine, typed; or None (no
    compiler, no source file in this install, a failed build): the caller's Python path then."""
    try:
        text = resources.files(package).joinpath(source).read_text(encoding="utf-8")
    except OSError:
        return None
    path = compiled(Path(source).stem, {source: text}, source, cflags, ldflags, ("-lm",))
    if path is None:
        return None
    try:
        function = ctypes.CDLL(str(path))[symbol]
    except (OSError, AttributeError):
        return None
    function.restype, function.argtypes = restype, list(argtypes)
    return function
