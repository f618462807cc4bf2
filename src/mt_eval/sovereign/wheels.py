"""A wheel's zip central directory, checked in the harness before the wheel is unpacked (in the sandbox).

Read without extracting anything: the member count, the total declared size and its ratio to the
wheel's size, and every member's type and name. A wheel whose directory is not that of a plain wheel is
refused with a fixed class naming the wheel ("is not a wheel", "is too large", "has a link member"…);
no tool's own message is ever shown. Python's zipfile never returns more bytes than a member declares,
so the declared sizes bound what unpacking writes.
"""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path, PurePosixPath

from mt_eval.sovereign.archive import MAX_RATIO, RATIO_FLOOR

MAX_MEMBERS = 20_000  # a large scientific wheel has a few thousand
MAX_UNPACKED = 1 << 30  # declared bytes of one wheel, unpacked


def _size(n: int) -> str:
    return f"{n >> 20} MiB"


def wheel_refusal(path: Path) -> str | None:
    """Why the wheel at ``path`` must not be unpacked (completes "the wheel …"), None when it may be."""
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return "is not a wheel (not a zip archive)"
    if len(infos) > MAX_MEMBERS:
        return f"is too large (more than {MAX_MEMBERS} members)"
    declared = sum(i.file_size for i in infos)
    allowed = min(MAX_UNPACKED, max(RATIO_FLOOR, MAX_RATIO * path.stat().st_size))
    if declared > allowed:
        return (f"is too large ({_size(declared)} unpacked; at most {MAX_RATIO} times its size, "
                f"and {_size(MAX_UNPACKED)})")
    seen: set[str] = set()
    for info in infos:
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            return f"has a member that is not a file ({info.filename!r}: a link or a device)"
        if info.flag_bits & 0x1:
            return f"has an encrypted member ({info.filename!r})"
        rel = PurePosixPath(info.filename)
        if rel.is_absolute() or ".." in rel.parts or "\\" in info.filename or "\0" in info.filename:
            return f"has a member outside its install folder ({info.filename!r})"
        if info.filename in seen:
            return f"has a member twice ({info.filename!r})"
        seen.add(info.filename)
    return None
