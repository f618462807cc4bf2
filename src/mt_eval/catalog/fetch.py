"""Downloading one upstream file: mirrors, offline refusal, size and sha256 checks.

Every failure is one ``UserError`` line naming the URL and what to do; nothing half-written is kept (the
bytes go to a temporary file renamed into place only after every check passed).
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mt_eval.errors import UserError

TIMEOUT_S = 30.0
"""Seconds without a byte before a download is abandoned (a stalled mirror fails instead of hanging a run)."""
MAX_BYTES = 2 << 30
"""No test set file is near 2 GiB (WMT24's XML tarball is the largest, tens of MB): a body past it is a wrong
or hostile server, cut before it fills the disk."""
_CHUNK = 1 << 16


@dataclass(frozen=True)
class FetchOptions:
    """How files are fetched. ``mirror``: a base URL every upstream URL is rewritten under
    (``https://host/path`` → ``MIRROR/host/path``), for institutional mirrors and for the tests' local
    server; ``offline``: refuse any download; ``headers`` per upstream host (e.g. a Hugging Face token for a
    gated dataset), sent to that host's URL — through the mirror when one is set, which stands in for the host
    — and never on a redirect."""

    offline: bool = False
    mirror: str | None = None
    timeout_s: float = TIMEOUT_S
    headers: Mapping[str, Mapping[str, str]] | None = None
    max_bytes: int = MAX_BYTES

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, offline: bool = False) -> FetchOptions:
        """Options from the environment, read once at the command's edge: ``MT_EVAL_OFFLINE=1``,
        ``MT_EVAL_DATA_MIRROR=URL``, ``HF_TOKEN`` (sent to huggingface.co only)."""
        token = env.get("HF_TOKEN") or env.get("HUGGING_FACE_HUB_TOKEN")
        headers = {"huggingface.co": {"Authorization": f"Bearer {token}"}} if token else None
        return cls(offline=offline or env.get("MT_EVAL_OFFLINE", "") not in ("", "0"),
                   mirror=env.get("MT_EVAL_DATA_MIRROR") or None, headers=headers)

    def resolve(self, url: str) -> str:
        if not self.mirror:
            return url
        _, _, rest = url.partition("://")
        return f"{self.mirror.rstrip('/')}/{rest}"


class _TooLarge(Exception):
    """A body past ``FetchOptions.max_bytes`` (internal: becomes a UserError)."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def download(url: str, dest: Path, *, options: FetchOptions, expected_sha256: str | None) -> str:
    """Fetch ``url`` to ``dest``; return the file's sha256. Refused: offline, HTTP errors, a body shorter
    than its Content-Length (a cut connection), a sha256 other than the pinned one."""
    if options.offline:
        raise UserError(f"{url} is not in the cache and --offline refuses to download it", file=str(dest),
                        hint="fetch it once online (mt-eval datasets fetch ID), or drop --offline/MT_EVAL_OFFLINE")
    real = options.resolve(url)
    host = url.partition("://")[2].partition("/")[0]
    request = urllib.request.Request(real, headers={"User-Agent": "mt-eval"})
    for name, value in (options.headers or {}).get(host, {}).items():
        # never forwarded on a redirect: Hugging Face sends files to a CDN host that must not get the token
        request.add_unredirected_header(name, value)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f"{dest.name}.{os.getpid()}.part")  # two commands fetching at once never mix
    digest = hashlib.sha256()
    received = 0
    try:
        with urllib.request.urlopen(request, timeout=options.timeout_s) as response, partial.open("wb") as fh:
            length = response.headers.get("Content-Length")
            for block in iter(lambda: response.read(_CHUNK), b""):
                received += len(block)
                if received > options.max_bytes:
                    raise _TooLarge
                fh.write(block)
                digest.update(block)
    except _TooLarge:
        partial.unlink(missing_ok=True)
        raise UserError(f"download refused: {real} is larger than the {options.max_bytes}-byte limit",
                        hint="a wrong URL or mirror; nothing was kept") from None
    except urllib.error.HTTPError as exc:
        partial.unlink(missing_ok=True)
        hint = "a gated dataset: accept its terms upstream and set HF_TOKEN" if exc.code in (401, 403) else \
            "check the dataset id and language codes (mt-eval datasets list)"
        raise UserError(f"download failed: HTTP {exc.code} {exc.reason} for {real}", hint=hint) from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        partial.unlink(missing_ok=True)
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise UserError(f"download failed: {reason} for {real}", hint="check the network or the mirror, then "
                        "fetch again; nothing was kept") from None
    if length is not None and length.isdigit() and int(length) != received:
        partial.unlink(missing_ok=True)
        raise UserError(f"download truncated: {received} of {length} bytes from {real}",
                        hint="the connection was cut; fetch again; nothing was kept")
    got = digest.hexdigest()
    if expected_sha256 is not None and got != expected_sha256:
        partial.unlink(missing_ok=True)
        raise UserError(f"sha256 mismatch for {real}: got {got[:16]}…, the catalogue pins {expected_sha256[:16]}…",
                        hint="the upstream file changed or the mirror serves another file; nothing was kept")
    os.replace(partial, dest)
    return got
