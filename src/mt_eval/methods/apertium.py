"""Apertium rule-based MT (``apertium:<pair>``) run through the real ``apertium`` command.

Why it is built this way:

* **Many segments per process.** Starting ``apertium`` loads a dozen transducers (~0.2 s), so one
  process per segment would dominate the run. A chunk of segments goes through one process in
  Apertium's *null-flush* mode (``-z``): every program in the pipe translates up to a NUL byte,
  flushes, and writes a NUL, so each segment is translated on its own and comes back
  NUL-terminated (for the one program that still carries state across a NUL, see below). NUL
  cannot occur in the text stream (destxt drops it, and so do we), so the separator can never be
  confused with text.
* **Our own deformatter.** ``apertium-destxt`` silently drops NUL bytes, so the stock ``txt``
  format cannot carry the separator. We run the pipe with ``-f none`` and do what
  ``apertium-destxt``/``apertium-retxt`` do in :func:`deformat`/:func:`reformat` (escape
  ``[ ] \\ / @ < > ^ $ { }``, wrap blanks other than one space in superblanks, the end-of-text
  ``.[]``). The tests check both against the real programs and check that batch output is
  byte-identical to translating each segment alone with plain ``apertium <pair>``.
* **Alignment is verified, never assumed.** Each segment is prefixed with a superblank marker
  ``[mteval:<i>]``; Apertium copies superblanks verbatim. Output *i* must start with marker *i*
  and there must be exactly one output per segment (plus empty end-of-stream flushes). Any
  mismatch fails the chunk, whose segments are then retried one per process; a segment that still
  fails becomes an error Translation. A shifted output is never scored.
* **Each segment is tagged by a fresh tagger.** ``apertium-tagger`` (Apertium 3.8) keeps state
  across null flushes: the first word with an ambiguity class unseen in training overwrites the
  tagger's open class (``find_similar_ambiguity_class`` assigns through a reference to it), which
  changes how every later unknown word in the same process is tagged. Batched output then depends
  on which segments came earlier (measured: 43 of 2,304 NTREX/fuzz segments differed from
  one-process-per-segment output). We put a small shim named ``apertium-tagger`` first on
  ``APERTIUM_PATH`` (the ``apertium`` script prepends it to ``PATH``); it runs the real tagger once
  per NUL-terminated segment (~6 ms each). Everything else runs batched, as installed. The result
  is byte-identical to running ``apertium -u <pair>`` separately on each segment, and independent
  of chunk size, order and concurrency, so a resumed or re-chunked run translates the same.
* **No unknown-word marks by default** (``-u``): without it Apertium prefixes unknown source
  words with ``*``, untranslatable ones with ``@`` and ungeneratable ones with ``#``. These are
  diagnostics, not translation, and would be scored as character noise against the reference.
  ``mark_unknown=True`` keeps them (and is recorded in the method config).
* **Latency** per entry is the chunk's wall-clock time divided by its number of segments:
  Apertium streams a chunk, so per-segment time is not observable; the average includes the
  process start-up, shared by the chunk.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mt_eval.errors import MethodError
from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation, TranslationRequest

# apertium-destxt's escape-chars (apertium/txt-format.xml) and its blank characters: the space
# chars of txt-format.xml plus '~', which Apertium 3.8 also treats as format.
_ESCAPED = frozenset("[]\\/@<>^${}")
_TOKENS = re.compile(r"[ \n\t\r~]+|[^ \n\t\r~]+")
_END_OF_SENTENCE = re.compile(r"\n\n|\r\n\r\n")  # txt-format.xml's eos rule: a blank line
_MARKER = "[mteval:{}]"
_BARE_TAGGER = re.compile(r"(^|[|\s])apertium-tagger\s")  # invoked by name, so found through PATH
_PAIR = re.compile(r"^[A-Za-z0-9_]+(-[A-Za-z0-9_]+)+$")
INSTALL_HINT = "apt-get install apertium apertium-{pair}"

# The apertium-tagger shim: one real tagger process per NUL-terminated segment (see module doc).
_TAGGER_SHIM = """\
import os, subprocess, sys
REAL = {real!r}
def tag(block):
    if not block:
        return b""
    done = subprocess.run([REAL, *sys.argv[1:]], input=block + b"\\0", stdout=subprocess.PIPE)
    if done.returncode:
        sys.exit(done.returncode)
    return done.stdout.split(b"\\0", 1)[0]
out, pending = sys.stdout.buffer, b""
while data := os.read(0, 1 << 16):
    *blocks, pending = (pending + data).split(b"\\0")
    for block in blocks:
        out.write(tag(block) + b"\\0")
        out.flush()
if pending:
    out.write(tag(pending))
out.flush()
"""


def _superblank(blank: str, dot: bool) -> str:
    """A pending blank as destxt prints it: optional '.[]' first, one space stays bare."""
    out = ".[]" if dot else ""
    if blank == " ":
        return out + " "
    return out + (f"[{blank}]" if blank else "")


def deformat(text: str) -> str:
    """Plain text -> Apertium stream, as ``apertium-destxt`` (Apertium 3.8) writes it.

    Escapes the stream's special characters, wraps every blank other than a single space in a
    superblank, puts ``.[]`` before a blank line and at the end (so the tagger sees a sentence
    end there; ``reformat`` removes it). NUL is dropped, as destxt does. destxt moves blanks
    longer than 8192 characters to a temporary file; we keep them inline, which reformats to
    the same text.
    """
    out: list[str] = []
    blank = ""
    for token in _TOKENS.findall(text.replace("\0", "")):
        if token[0] in " \n\t\r~":
            blank = token
            continue
        if blank:
            out.append(_superblank(blank, bool(_END_OF_SENTENCE.search(blank))))
            blank = ""
        out.append("".join("\\" + c if c in _ESCAPED else c for c in token))
    out.append(_superblank(blank, True))
    return "".join(out)


def reformat(stream: str) -> str:
    """Apertium stream -> plain text, as ``apertium-retxt`` does.

    Removes the ``.[]`` inserted by the deformatter and unescaped superblank brackets, and
    unescapes ``\\X`` for the escaped characters (other backslashes stay). retxt would read a
    ``[@file]`` large block from disk; we never write one, so one in the output is an error.
    """
    out: list[str] = []
    i, n = 0, len(stream)
    while i < n:
        c = stream[i]
        if c == "\\" and i + 1 < n and stream[i + 1] in _ESCAPED:
            out.append(stream[i + 1])
            i += 2
        elif stream.startswith(".[]", i):
            i += 3
        elif c == "[" and stream.startswith("[@", i):
            raise ValueError("apertium output contains a large-block reference '[@'")
        elif c in "[]":
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class _ChunkError(Exception):
    """A chunk whose process failed or whose outputs could not be aligned to its segments."""


@dataclass(frozen=True)
class _Item:
    index: int  # position in the caller's request list
    entry_id: int
    source: str


def installed_pairs(binary: str) -> list[str]:
    """The directions ``apertium -l`` lists (what the command itself would accept)."""
    try:
        done = subprocess.run([binary, "-l"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MethodError(f"cannot run '{binary} -l': {exc}") from exc
    return sorted(line.strip() for line in done.stdout.splitlines() if line.strip())


def _run_quietly(command: list[str]) -> str | None:
    """A command's stripped stdout, or None when it is missing, fails or prints nothing."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def _dpkg(*args: str) -> str | None:
    """One dpkg-query answer, or None off Debian or for files no package owns."""
    return _run_quietly(["dpkg-query", *args]) if shutil.which("dpkg-query") else None


def _mode_file(binary: str, pair: str) -> Path | None:
    """Where the pair's mode file lives: $APERTIUM_DATADIR, else <prefix>/share/apertium."""
    roots = [os.environ.get("APERTIUM_DATADIR", ""), str(Path(binary).resolve().parent.parent / "share/apertium")]
    for root in filter(None, roots):
        path = Path(root) / "modes" / f"{pair}.mode"
        if path.is_file():
            return path
    return None


def pair_version(binary: str, pair: str) -> tuple[str, str | None]:
    """(version, Debian package) of the linguistic data: what changes translations.

    The Debian package owning the mode file gives a real version (for ``spa-eng`` that is
    ``apertium-eng-spa``). Data installed from source has none, so we hash the mode file and its
    mtime: a rebuild then changes the version and thus the fingerprint.
    """
    mode = _mode_file(binary, pair)
    if mode is None:
        return "unknown", None
    owner = _dpkg("-S", str(mode))
    package = owner.split(":", 1)[0].strip() if owner else None
    version = _dpkg("-W", "-f=${Version}", package) if package else None
    if package and version:
        return version, package
    digest = hashlib.sha256(mode.read_bytes() + str(mode.stat().st_mtime_ns).encode()).hexdigest()
    return f"mode-{digest[:12]}", None


class ApertiumMethod(MethodBase):
    """``apertium:<pair>``: translate with an installed Apertium pair, many segments per process."""

    resumable = False  # local, deterministic and free: a rerun is the resume, no journal is kept

    def __init__(
        self,
        pair: str,
        *,
        mark_unknown: bool = False,
        chunk_size: int = 50,
        max_processes: int = 2,
        timeout_s: float = 600.0,
    ) -> None:
        binary = shutil.which("apertium")
        if binary is None:
            raise MethodError(
                "the 'apertium' command is not installed",
                hint=INSTALL_HINT.format(pair=pair or "<pair>") + ", or `make apt`",
            )
        if not _PAIR.match(pair):
            raise MethodError(f"'{pair}' is not an Apertium direction such as eng-spa")
        pairs = installed_pairs(binary)
        if pair not in pairs:
            raise MethodError(
                f"Apertium pair '{pair}' is not installed; installed: {', '.join(pairs) or 'none'}",
                hint=INSTALL_HINT.format(pair=pair),
            )
        if chunk_size < 1 or max_processes < 1:
            raise MethodError("apertium chunk_size and max_processes must be at least 1")
        self.pair = pair
        self.binary = binary
        self.mark_unknown = mark_unknown
        self.chunk_size = chunk_size
        self.max_processes = max_processes
        self.timeout_s = timeout_s
        version, package = pair_version(binary, pair)
        mode = _mode_file(binary, pair)
        uses_tagger = bool(mode and _BARE_TAGGER.search(mode.read_text(encoding="utf-8", errors="replace")))
        self._real_tagger = shutil.which("apertium-tagger") if uses_tagger else None
        self._shim_dir: str | None = None
        engine = _dpkg("-W", "-f=${Version}", "apertium") or _run_quietly([binary, "-V"]) or "unknown"
        self.identity = MethodIdentity(
            name=f"apertium:{pair}",
            method_class=MethodClass.RBMT,
            version=version,
            model_slug=f"apertium/{pair}",
            config={
                "pair": pair,
                "package": package,
                "engine_version": engine,
                "mark_unknown": mark_unknown,
                "format": "txt",
                "tagger_per_segment": self._real_tagger is not None,
            },
        )
        self._model_id = f"apertium/{pair}@{version}"

    def environment(self) -> dict[str, str]:
        """The process environment: the tagger shim first on APERTIUM_PATH, when the pair tags."""
        env = dict(os.environ)
        if self._real_tagger is None:
            return env
        if self._shim_dir is None:
            self._shim_dir = tempfile.mkdtemp(prefix="mt-eval-apertium-")
            weakref.finalize(self, shutil.rmtree, self._shim_dir, True)
            script = Path(self._shim_dir) / "tagger_shim.py"
            script.write_text(_TAGGER_SHIM.format(real=self._real_tagger), encoding="utf-8")
            shim = Path(self._shim_dir) / "apertium-tagger"
            python = shlex.quote(sys.executable)
            shim.write_text(f'#!/bin/sh\nexec {python} -I -S {shlex.quote(str(script))} "$@"\n', encoding="utf-8")
            shim.chmod(0o755)
        previous = env.get("APERTIUM_PATH")
        env["APERTIUM_PATH"] = f"{self._shim_dir}:{previous}" if previous else self._shim_dir
        return env

    def command(self) -> list[str]:
        """The exact command line each chunk runs (also used by tests and docs)."""
        return [self.binary, "-f", "none", "-z", *([] if self.mark_unknown else ["-u"]), self.pair]

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        """One Translation per request, in request order; chunks run ``max_processes`` at a time."""
        results: list[Translation | None] = [None] * len(requests)
        items: list[_Item] = []
        for i, req in enumerate(requests):
            try:
                req.source.encode("utf-8")
            except UnicodeEncodeError as exc:
                results[i] = Translation(req.entry_id, error=f"source is not valid Unicode text: {exc}")
                continue
            items.append(_Item(i, req.entry_id, req.source))
        gate = asyncio.Semaphore(self.max_processes)

        async def run(chunk: list[_Item]) -> None:
            async with gate:
                for item, translation in zip(chunk, await self._translate_chunk(chunk), strict=True):
                    results[item.index] = translation

        chunks = [items[i : i + self.chunk_size] for i in range(0, len(items), self.chunk_size)]
        await asyncio.gather(*(run(c) for c in chunks))
        return [
            t if t is not None else Translation(r.entry_id, error="not translated")
            for t, r in zip(results, requests, strict=True)
        ]

    async def _translate_chunk(self, chunk: list[_Item]) -> list[Translation]:
        """Translate a chunk in one process; on failure retry its segments one per process."""
        start = time.perf_counter()
        try:
            texts = await self._run([item.source for item in chunk])
        except _ChunkError as exc:
            if len(chunk) == 1:
                return [Translation(chunk[0].entry_id, error=str(exc), model_id=self._model_id)]
            return [t for item in chunk for t in await self._translate_chunk([item])]
        seconds = time.perf_counter() - start
        extra = {"chunk_size": len(chunk), "chunk_seconds": round(seconds, 6)}
        out = []
        for item, text in zip(chunk, texts, strict=True):
            try:
                out.append(
                    Translation(
                        item.entry_id,
                        text=reformat(text),
                        latency_seconds=seconds / len(chunk),
                        model_id=self._model_id,
                        extra=dict(extra),
                    )
                )
            except ValueError as exc:
                out.append(Translation(item.entry_id, error=str(exc), model_id=self._model_id))
        return out

    async def _run(self, sources: list[str]) -> list[str]:
        """Run one apertium process over ``sources``; returns each segment's stream output."""
        payload = "".join(_MARKER.format(i) + deformat(s) + "\0" for i, s in enumerate(sources))
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.command(),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.environment(),
                start_new_session=True,  # its own process group, so a timeout can stop the whole pipe
            )
        except OSError as exc:
            raise _ChunkError(f"cannot start apertium: {exc}") from exc
        try:
            out, err = await asyncio.wait_for(proc.communicate(payload.encode("utf-8")), self.timeout_s)
        except (TimeoutError, asyncio.CancelledError) as exc:
            # Stop the whole pipe (its own process group), also when the run is cancelled.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await asyncio.shield(proc.wait())
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise _ChunkError(f"apertium {self.pair} timed out after {self.timeout_s:g} s") from None
        if proc.returncode != 0:
            last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
            raise _ChunkError(f"apertium {self.pair} exited with status {proc.returncode}: {last[0]}")
        try:
            parts = out.decode("utf-8").split("\0")
        except UnicodeDecodeError as exc:
            raise _ChunkError(f"apertium {self.pair} wrote invalid UTF-8: {exc}") from exc
        return _align(parts, len(sources))


def _align(parts: list[str], expected: int) -> list[str]:
    """Output i must start with marker i; anything after the last one must be empty flushes."""
    if len(parts) <= expected:
        raise _ChunkError(f"apertium returned {len(parts) - 1} NUL-terminated outputs for {expected} segments")
    if any(parts[expected:]):
        raise _ChunkError(f"apertium returned unexpected text after output {expected}")
    texts = []
    for i, part in enumerate(parts[:expected]):
        marker = _MARKER.format(i)
        if not part.startswith(marker):
            raise _ChunkError(f"apertium output {i} is not aligned with its segment")
        texts.append(part[len(marker) :])
    return texts
