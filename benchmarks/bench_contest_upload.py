"""A large self-serve contest upload through a real ``mt-eval serve --contests``: time and the server's memory.

A contest is made as the tests make one (``tests/support/contest.py``: NTREX-128 eng→spa, consent recorded),
an account signs in, and ``--mib`` MiB of random bytes (default 200) are POSTed as ``archive.tar.gz`` through the
submission form, in 1 MiB writes on one connection. The server bounds the body, parses the form (the file
spooled to disk), copies it to a private folder and hands it to ``submit_entry``, which refuses it in one line
(not a gzip archive): the whole web path a real upload takes, less the unpacking. Printed: the upload's wall
time and, as the peer measured in the same run, the time to write the same bytes once to a file in the same
temporary folder (the floor of any upload), their ratio, and the server's peak RSS (VmHWM) before and after
(the upload must not be held in memory). Then ``--mib`` past the contest's limit: the 413 must come from the
header alone. Run: ``.venv/bin/python benchmarks/bench_contest_upload.py [--mib 200]`` (about 10 s).
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from mt_eval.accounts.sessions import csrf_token  # noqa: E402
from mt_eval.accounts.users import add_account  # noqa: E402
from mt_eval.store import open_store  # noqa: E402
from support.contest import make_contest  # noqa: E402

PASSWORD = "correct horse battery staple"
CHUNK = 1 << 20


def peak_rss_mib(pid: int) -> int:
    found = re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
    return int(found.group(1)) >> 10 if found else -1


def request(port: int, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
            ) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request(method, path, body=body or None, headers=headers or {})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def signed_in(port: int) -> str:
    """The session cookie of ``alice`` after the login form (its CSRF token computed from the form's session)."""
    for _ in range(300):
        try:
            cookie = str(request(port, "GET", "/login").getheader("set-cookie")).split(";")[0]
            break
        except OSError:
            time.sleep(0.1)
    form = f"csrf={csrf_token(cookie.split('=', 1)[1])}&name=alice&password={PASSWORD.replace(' ', '+')}"
    answer = request(port, "POST", "/login", form.encode(), {"Cookie": cookie,
                                                             "Content-Type": "application/x-www-form-urlencoded"})
    return str(answer.getheader("set-cookie")).split(";")[0]


def upload(port: int, session: str, mib: int) -> tuple[int, float, str]:
    """POST ``mib`` MiB as the archive; (status, seconds, the form's one-line error if any)."""
    token = csrf_token(session.split("=", 1)[1])
    head = (f'--b\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{token}\r\n--b\r\nContent-Disposition: '
            f'form-data; name="kind"\r\n\r\nbundle\r\n--b\r\nContent-Disposition: form-data; name="archive"; '
            f'filename="archive.tar.gz"\r\nContent-Type: application/gzip\r\n\r\n').encode()
    tail = b"\r\n--b--\r\n"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    connection.putrequest("POST", "/contests/demo/submit")
    for name, value in (("Cookie", session), ("Content-Type", "multipart/form-data; boundary=b"),
                        ("Content-Length", str(len(head) + mib * CHUNK + len(tail)))):
        connection.putheader(name, value)
    connection.endheaders()
    chunk = os.urandom(CHUNK)
    start = time.perf_counter()
    try:
        connection.send(head)
        for _ in range(mib):
            connection.send(chunk)
        connection.send(tail)
    except OSError:
        pass  # the server answered (413) and closed before the body was sent: read its answer
    response = connection.getresponse()
    text = response.read().decode(errors="replace")
    seconds = time.perf_counter() - start
    connection.close()
    error = re.search(r'id="submit-error">([^<]*)', text) or re.search(r'role="alert">([^<]*)', text)
    return response.status, seconds, error.group(1) if error else ""


def disk_floor(folder: Path, mib: int) -> float:
    chunk = os.urandom(CHUNK)
    start = time.perf_counter()
    with (folder / "floor.bin").open("wb") as out:
        for _ in range(mib):
            out.write(chunk)
        out.flush()
    seconds = time.perf_counter() - start
    (folder / "floor.bin").unlink()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=200, help="upload size in MiB (under the 256 MiB limit)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-contest-upload-"))
    db = str(folder / "store.db")
    with open_store(db) as store:
        add_account(store, "alice", "reviewer", PASSWORD)
    (folder / "contests").mkdir()
    limit_mib = make_contest(folder / "contests", name="demo").manifest.max_artefact_mb
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = subprocess.Popen([sys.executable, "-m", "mt_eval", "serve", "--db", db, "--port", str(port), "--contests",
                               str(folder / "contests")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        session = signed_in(port)
        before = peak_rss_mib(server.pid)
        status, seconds, error = upload(port, session, args.mib)
        after = peak_rss_mib(server.pid)
        floor = disk_floor(folder, args.mib)
        print(f"upload {args.mib} MiB through the form: {seconds:.2f} s, status {status} ({error})")
        print(f"peer, the same bytes written once to {folder}: {floor:.2f} s; ratio {seconds / floor:.1f}x")
        print(f"server peak RSS: {before} MiB before, {after} MiB after")
        over, seconds, error = upload(port, session, limit_mib + 1)
        print(f"upload {limit_mib + 1} MiB (past the contest's {limit_mib} MiB): status {over} after "
              f"{seconds:.2f} s ({error})")
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    # what the docstring promises, checked: the upload is streamed, not held (64 MiB of slack for the
    # interpreter's own growth), and the oversize one is refused
    held = after - before > 64
    if held or over != 413:
        print(f"FAILED: {'the server held the upload in memory' if held else f'the oversize upload got {over}'}")
        sys.exit(1)


if __name__ == "__main__":
    main()
