"""A real, throw-away PostgreSQL server for the store tests (Debian's ``postgresql`` package).

``initdb`` + ``pg_ctl`` in a temporary folder, listening on 127.0.0.1 and a free port, trust
authentication. PostgreSQL refuses to run as root, so as root the server runs as the ``postgres``
user the Debian package creates (``runuser``). Missing binaries are an error, never a skip: the
store must work on PostgreSQL, and ``make deps`` installs it.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def bindir() -> Path:
    """The newest installed PostgreSQL's binaries (``/usr/lib/postgresql/<major>/bin``)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    if not found:
        raise RuntimeError("PostgreSQL is not installed: apt-get install postgresql (make deps does)")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(cmd: list[str], *, as_postgres: bool) -> None:
    full = ["runuser", "-u", "postgres", "--", *cmd] if as_postgres else cmd
    subprocess.run(full, check=True, capture_output=True, timeout=120)


@contextmanager
def postgres_server(base: Path) -> Iterator[str]:
    """Start a server under ``base``; yield its ``postgresql+psycopg://`` URL; stop it afterwards."""
    bins = bindir()
    as_postgres = os.geteuid() == 0
    data, sock = base / "data", base / "sock"
    sock.mkdir(parents=True)
    if as_postgres:
        shutil.chown(base, "postgres")
        shutil.chown(sock, "postgres")
    port = _free_port()
    _run([str(bins / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale"],
         as_postgres=as_postgres)  # fmt: skip
    options = f"-h 127.0.0.1 -p {port} -k {sock} -F"
    _run([str(bins / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(base / "log"), "-w", "start"],
         as_postgres=as_postgres)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while subprocess.run([str(bins / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
                             capture_output=True).returncode != 0:  # fmt: skip
            if time.monotonic() > deadline:
                raise RuntimeError("PostgreSQL did not start: " + (base / "log").read_text(errors="replace")[-2000:])
            time.sleep(0.2)
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        _run([str(bins / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], as_postgres=as_postgres)


def create_database(server_url: str) -> str:
    """A new, empty database on the server; its URL (dropped with the server at the session's end)."""
    import uuid

    from sqlalchemy import create_engine, text

    name = f"t_{uuid.uuid4().hex[:12]}"  # generated here, never from input
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.dispose()
    return server_url.rsplit("/", 1)[0] + f"/{name}"
