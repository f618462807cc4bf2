"""Unpacking a bundle archive (``.tar``, ``.tar.gz``/``.tgz``, ``.zip``) with limits checked first.

An archive is refused, before a byte of the offending member is written, when it declares more than
``max_bytes`` in all, more than :data:`MAX_RATIO` times its own size (past :data:`RATIO_FLOOR`: a small
bundle may hold a few very compressible files), more than ``max_files`` files or twice that many
members, a member that is not a regular file or a folder (links, devices, FIFOs, sparse files), a name
outside the destination, or one name twice. A tar is read as a stream, header by header, so a
member declaring a gigabyte is refused at its header without decompressing it; a zip's limits are read
from its central directory, and Python's zipfile never returns more than a member declares.
"""

from __future__ import annotations

import os
import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

from mt_eval.errors import UserError

MAX_RATIO = 100  # declared bytes per archive byte (source and JSONL compress ~3-10x; a bomb ~1000x)
RATIO_FLOOR = 8 << 20  # below this many declared bytes the ratio is not checked
_CHUNK = 1 << 16


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{max(n >> 10, 1)} KB"


class _Budget:
    """The running totals of one archive against its limits."""

    def __init__(self, label: str, archive_size: int, max_bytes: int, max_files: int) -> None:
        self.label, self.max_files, self.archive_size = label, max_files, archive_size
        self.allowed = min(max_bytes, max(RATIO_FLOOR, MAX_RATIO * archive_size))
        self.limits = f"at most {MAX_RATIO} times its size, and {max_bytes >> 20} MiB"
        self.bytes = self.files = self.members = 0
        self.names: set[str] = set()

    def refuse(self, message: str) -> UserError:
        return UserError(message, file=self.label)

    def admit(self, name: str, regular: bool, directory: bool, size: int) -> PurePosixPath:
        """The member's relative path, once its header is within every limit (``.`` for the top folder,
        which ``tar -C dir .`` writes as ``./``)."""
        self.members += 1
        if self.members > 2 * self.max_files:
            raise self.refuse(f"archive member {name!r} is past the limit of {2 * self.max_files} members")
        if not (regular or directory):
            raise self.refuse(f"archive member {name!r} is not a file or a folder (only those are accepted)")
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or "\\" in name or "\0" in name or not (rel.parts or directory):
            raise self.refuse(f"archive member {name!r} points outside the bundle")
        key = rel.as_posix()
        if key in self.names:
            raise self.refuse(f"archive member {name!r} appears twice")
        self.names.add(key)
        if regular:
            self.files += 1
            if self.files > self.max_files:
                raise self.refuse(f"archive member {name!r} is past the limit of {self.max_files} files")
            self.bytes += size
            if self.bytes > self.allowed:
                raise self.refuse(f"archive member {name!r} takes the unpacked size past {_size(self.allowed)} "
                                  f"({self.limits})")
        return rel


def _write(source: IO[bytes], target: Path, size: int) -> None:
    """Copy exactly ``size`` bytes into a new file (never through a link, never over a file)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as out:
        left = size
        while left > 0:
            chunk = source.read(min(_CHUNK, left))
            if not chunk:
                raise OSError("member shorter than its header says")
            out.write(chunk)
            left -= len(chunk)


def _unpack_tar(stream: BinaryIO, dest: Path, budget: _Budget) -> None:
    with tarfile.open(fileobj=stream, mode="r|*") as tf:
        for member in tf:  # stream mode: each header is read after the previous member's data
            rel = budget.admit(member.name, member.isreg() and not member.issparse(), member.isdir(), member.size)
            if member.isdir():
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            data = tf.extractfile(member)
            assert data is not None  # a regular member
            _write(data, dest / rel, member.size)


def _unpack_zip(stream: BinaryIO, dest: Path, budget: _Budget) -> None:
    with zipfile.ZipFile(stream) as zf:
        infos = zf.infolist()
        declared = sum(i.file_size for i in infos)
        if declared > budget.allowed:
            raise budget.refuse(f"archive declares {_size(declared)} from {_size(budget.archive_size)} "
                                f"({budget.limits})")
        admitted = []
        for info in infos:
            kind = stat.S_IFMT(info.external_attr >> 16)
            directory = info.is_dir() and kind in (0, stat.S_IFDIR)
            regular = not info.is_dir() and kind in (0, stat.S_IFREG) and not info.flag_bits & 0x1  # not encrypted
            admitted.append((info, budget.admit(info.filename, regular, directory, info.file_size)))
        for info, rel in admitted:
            if info.is_dir():
                (dest / rel).mkdir(parents=True, exist_ok=True)
            else:
                with zf.open(info) as data:
                    _write(data, dest / rel, info.file_size)


def unpack(stream: BinaryIO, archive_size: int, dest: Path, label: str, *, max_bytes: int, max_files: int) -> None:
    """Unpack the archive read from ``stream`` (``archive_size`` bytes; a zip needs a seekable stream)
    into the existing directory ``dest``; ``label`` names it in errors and says its kind by its suffix."""
    budget = _Budget(label, archive_size, max_bytes, max_files)
    try:
        if label.endswith(".zip"):
            _unpack_zip(stream, dest, budget)
        else:
            _unpack_tar(stream, dest, budget)
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise UserError(f"not a readable bundle archive ({type(exc).__name__})", file=label) from None
