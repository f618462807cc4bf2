"""A self-serve submission's request body, bounded before anything is parsed or unpacked.

The archive is checked in three places, in this order, each cheaper than the next:

1. ``Content-Length`` must be present and at most the contest's archive limit (413 otherwise), so an
   oversize upload is refused before a byte of its body is read;
2. the body is counted while it is read: more bytes than the header declared, or than the limit,
   end the request with 413 (a client may lie in its header; uvicorn would cut such a body at the
   declared length, an ASGI server need not);
3. the multipart form is parsed by Starlette with at most one file and a few small fields, the file
   spooled to disk, never held whole in memory.

Only then is the archive written to a private temporary folder and handed, unopened, to the contest's
one ``submit_entry`` (the same function ``mt-eval contest submit`` calls), which unpacks it through
``sovereign.archive`` with its own limits. Nothing here looks inside the archive.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from tempfile import TemporaryDirectory

from fastapi import HTTPException, Request
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException
from starlette.types import Message

SUFFIXES = (".tar.gz", ".tgz", ".zip")
"""The archive kinds a browser may send (``sovereign.archive`` also reads a plain ``.tar``; a web form
offers the compressed ones only)."""
MAX_FIELDS = 8  # csrf, entrant, kind and a few a browser may add
MAX_FIELD_BYTES = 4096  # a text field; the archive is the one file part
FORM_OVERHEAD = 64 << 10
"""Bytes a body may hold beyond its archive: the multipart boundaries, part headers and text fields."""


def too_large(limit: int) -> HTTPException:
    return HTTPException(status_code=413, detail=f"refused: the upload is larger than this contest's limit of "
                                                 f"{_size(limit)} (make the archive smaller)")


def _size(n: int) -> str:
    return f"{n / (1 << 20):.0f} MiB" if n >= 1 << 20 else f"{max(n >> 10, 1)} KB"


def declared_length(request: Request, limit: int) -> int:
    """The body's declared size, refused (411/400/413) when absent, malformed or over ``limit``."""
    header = request.headers.get("content-length")
    if header is None:
        raise HTTPException(status_code=411, detail="refused: an upload must declare its Content-Length")
    if not header.isdigit() or len(header) > 15:
        raise HTTPException(status_code=400, detail="refused: the Content-Length header is not a number")
    declared = int(header)
    if declared > limit:
        raise too_large(limit)
    return declared


async def bounded_form(request: Request, limit: int) -> FormData:
    """The submission form, read with the body counted against its declared length and ``limit``."""
    declared = declared_length(request, limit)
    received = 0

    async def receive() -> Message:
        nonlocal received
        message = await request.receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > declared:
                raise HTTPException(status_code=413, detail="refused: the body is larger than its Content-Length")
        return message

    counted = Request(request.scope, receive)
    try:
        return await counted.form(max_files=1, max_fields=MAX_FIELDS, max_part_size=MAX_FIELD_BYTES)
    except MultiPartException as problem:
        raise HTTPException(status_code=400, detail=f"refused: the form is malformed ({problem.message})") from None


def field(form: FormData, name: str, max_length: int = 200) -> str:
    """A text field of the form ('' when absent); a file sent under a text field's name is refused."""
    value = form.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise HTTPException(status_code=400, detail=f"refused: the field {name!r} must be text")
    if len(value) > max_length:
        raise HTTPException(status_code=400, detail=f"refused: the field {name!r} is longer than {max_length}")
    return value.strip()


def archive_suffix(upload: UploadFile) -> str:
    """The archive kind from the uploaded file's name (400 when it is none of :data:`SUFFIXES`)."""
    name = (upload.filename or "").lower()
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return suffix
    raise HTTPException(status_code=400, detail="refused: the archive must be a .tar.gz, .tgz or .zip file")


@contextmanager
def saved_archive(upload: UploadFile, limit: int) -> Iterator[Path]:
    """The uploaded archive as a file of a private temporary folder (removed afterwards), under a name of
    ours (``archive`` + its kind): the browser's file name never reaches the file system."""
    suffix = archive_suffix(upload)
    with TemporaryDirectory(prefix="mt-eval-upload-") as folder:
        path = Path(folder) / f"archive{suffix}"
        upload.file.seek(0)
        with path.open("xb") as out:
            shutil.copyfileobj(upload.file, out, 1 << 20)
        if path.stat().st_size > limit:  # the body was bounded; its one file cannot be larger
            raise too_large(limit)
        yield path
