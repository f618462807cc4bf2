"""Hostile bundles refused at ``submission check`` (and again at staging), before anything runs:
hardlinks, FIFOs, sockets and devices (without blocking on them), too many files or bytes, archive bombs
(refused at the header that declares too much), and wheels whose zip directory is not a plain wheel.

References: the file types and link counts are made here with os (mkfifo, mknod, link, a bound Unix
socket); the bombs are built here byte by byte (a gzip of 1 GiB of zeros is 1,024 copies of one gzip
member of 1 MiB of zeros), and how much of a bomb was read is counted on the file object itself.
"""

from __future__ import annotations

import gzip
import io
import os
import socket
import stat
import tarfile
import zipfile
from pathlib import Path
from typing import BinaryIO

import pytest

from mt_eval.errors import UserError
from mt_eval.sovereign import archive, bundle
from mt_eval.sovereign.bundle import check_bundle, load_bundle
from mt_eval.sovereign.sandbox import stage

MANIFEST = ('name = "m"\nversion = "1"\nmethod_class = "custom-plugin"\nterms_version = "sovereign-terms-1"\n'
            '[entry]\ncommand = ["python3", "t.py"]\n')


def _bundle(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "method.toml").write_text(MANIFEST)
    (root / "README.md").write_text("# m\n")
    (root / "t.py").write_text("print()\n")
    return root


def _lines(path: Path) -> list[str]:
    return [p.one_line() for p in check_bundle(path)[1]]


def test_a_hardlink_is_refused(tmp_path: Path) -> None:
    """A hardlink to a file outside (the custodian's identity, say) would be copied into the sandbox."""
    identity = tmp_path / "identity.key"
    identity.write_text("AGE-SECRET-KEY-1…")
    root = _bundle(tmp_path / "b")
    os.link(identity, root / "notes.txt")
    assert _lines(root) == ["notes.txt: hard links are not allowed in a bundle (this file has 2 names)"]


@pytest.mark.timeout(20)
def test_fifos_sockets_and_devices_are_refused_without_blocking(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    os.mkfifo(root / "pipe")  # opening it to read would wait for a writer for ever
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sock"))
    expected = ["pipe: FIFOs are not allowed in a bundle (only files and folders)",
                "sock: sockets are not allowed in a bundle (only files and folders)"]
    if os.geteuid() == 0:
        os.mknod(root / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        expected.insert(0, "null: devices are not allowed in a bundle (only files and folders)")
    try:
        assert _lines(root) == expected
    finally:
        server.close()


@pytest.mark.timeout(20)
def test_staging_refuses_a_fifo_added_after_the_check_without_blocking(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    loaded = load_bundle(root)
    os.mkfifo(root / "pipe")
    with pytest.raises(UserError, match="changed after it was checked"):
        stage(loaded, tmp_path / "stage")


def test_too_many_files_or_bytes_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _bundle(tmp_path / "b")
    monkeypatch.setattr(bundle, "MAX_FILES", 3)
    assert _lines(root) == []  # exactly the limit
    (root / "more.txt").write_text("x")
    assert _lines(root) == [f"{root}: more than 3 files (a bundle holds at most 3 files and "
                            f"{bundle.MAX_BYTES >> 20} MiB)"]
    monkeypatch.setattr(bundle, "MAX_FILES", 100)
    monkeypatch.setattr(bundle, "MAX_BYTES", 1000)
    (root / "more.txt").write_bytes(b"x" * 1000)
    assert _lines(root) == [f"{root}: more than 1000 bytes (a bundle holds at most 100 files and 0 MiB)"]


GIB = 1 << 30


def _gzip_of_zeros(size: int) -> bytes:
    """``size`` zero bytes, gzipped: one member of 1 MiB of zeros repeated (gzip readers concatenate)."""
    member = gzip.compress(bytes(1 << 20), compresslevel=9)
    return member * (size >> 20)


def _tar_bomb(path: Path) -> int:
    """A bundle whose second member declares (and holds) 1 GiB of zeros; returns the file's size."""
    head = io.BytesIO()
    with tarfile.open(fileobj=head, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, data in (("b/method.toml", MANIFEST.encode()), ("b/README.md", b"# m\n"), ("b/t.py", b"print()\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        end = tf.offset  # the end-of-archive blocks and padding after it are left off: the bomb follows
    header = tarfile.TarInfo("b/zeros.bin")
    header.size = GIB
    block = head.getvalue()[:end]
    data = gzip.compress(block + header.tobuf(tarfile.GNU_FORMAT)) + _gzip_of_zeros(GIB) + gzip.compress(bytes(1024))
    path.write_bytes(data)
    return len(data)


class _Counted(io.RawIOBase):
    """A file read through, counting the bytes handed out."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner, self.read_bytes = inner, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.inner.read(len(buffer))
        buffer[:len(data)] = data
        self.read_bytes += len(data)
        return len(data)


def test_a_tar_gz_bomb_is_refused_at_the_header_that_declares_it(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.tar.gz"
    size = _tar_bomb(bomb)
    assert size < (2 << 20)  # about 1 MB holding 1 GiB
    lines = _lines(bomb)
    assert len(lines) == 1 and "bomb.tar.gz: archive member 'b/zeros.bin' takes the unpacked size past" in lines[0]
    with bomb.open("rb") as raw:
        counted = _Counted(raw)
        with pytest.raises(UserError, match="unpacked size past"):
            archive.unpack(counted, size, tmp_path / "out", bomb.name, max_bytes=bundle.MAX_BYTES,
                           max_files=bundle.MAX_FILES)
    assert counted.read_bytes < size // 10  # refused without decompressing the gigabyte
    assert not (tmp_path / "out" / "b" / "zeros.bin").exists()


def test_an_archive_of_highly_compressed_data_is_refused_by_its_ratio(tmp_path: Path) -> None:
    zipped = tmp_path / "ratio.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("b/method.toml", MANIFEST)
        zf.writestr("b/zeros.bin", bytes(16 << 20))  # 16 MiB in about 16 KB
    line = _lines(zipped)[0]
    assert "ratio.zip: archive declares 16 MiB from" in line and "at most 100 times its size" in line


def test_an_archive_with_too_many_members_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bundle, "MAX_FILES", 2)
    made = tmp_path / "many.tar"
    with tarfile.open(made, "w") as tf:
        for i in range(4):
            info = tarfile.TarInfo(f"b/{i}.txt")
            tf.addfile(info, io.BytesIO(b""))
    assert _lines(made) == [f"{made}: archive member 'b/2.txt' is past the limit of 2 files"]


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.FIFOTYPE, tarfile.CHRTYPE])
def test_tar_members_other_than_files_and_folders_are_refused(tmp_path: Path, kind: bytes) -> None:
    made = tmp_path / "typed.tar.gz"
    with tarfile.open(made, "w:gz") as tf:
        info = tarfile.TarInfo("b/method.toml")
        info.size = len(MANIFEST)
        tf.addfile(info, io.BytesIO(MANIFEST.encode()))
        odd = tarfile.TarInfo("b/odd")
        odd.type, odd.linkname = kind, "b/method.toml"
        tf.addfile(odd)
    assert _lines(made) == [f"{made}: archive member 'b/odd' is not a file or a folder (only those are accepted)"]


def test_zip_members_that_are_links_or_outside_are_refused(tmp_path: Path) -> None:
    made = tmp_path / "link.zip"
    with zipfile.ZipFile(made, "w") as zf:
        link = zipfile.ZipInfo("b/link")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/root/identity.key")
    assert _lines(made) == [f"{made}: archive member 'b/link' is not a file or a folder (only those are accepted)"]
    outside = tmp_path / "outside.tar"
    with tarfile.open(outside, "w") as tf:
        tf.addfile(tarfile.TarInfo("../escape.py"), io.BytesIO(b""))
    assert _lines(outside) == [f"{outside}: archive member '../escape.py' points outside the bundle"]
