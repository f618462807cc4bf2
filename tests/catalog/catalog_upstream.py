"""A local stand-in for every upstream the catalogue fetches from: stdlib ``http.server`` in a thread,
serving the slices in ``tests/data`` in each upstream's own format under ``/<host>/<path>`` (what
``MT_EVAL_DATA_MIRROR`` rewrites URLs to), with injected faults.

Formats, built from NTREX-128 lines (the only parallel text we may ship): NTREX's own files byte for
byte; FLORES+ parquet files (columns as on Hugging Face, gated: 401 without a bearer token); the WMT21
``test.tgz`` holding ``test/newstest2021.en-de.xml`` (two translators, A and B, as WMT21 ships them);
AmericasNLP plain-text lines; a Tatoeba-Challenge ``test.txt`` (4 tab-separated columns, a source
repeated on consecutive rows for each accepted translation).
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyarrow as pa
import pyarrow.parquet as pq

from data_paths import NTREX

N = 40  # segments in the FLORES+/WMT/Tatoeba/AmericasNLP slices
NTREX_PATH = "/raw.githubusercontent.com/MicrosoftTranslator/NTREX/main/NTREX-128/"
FLORES_PATH = "/huggingface.co/datasets/openlanguagedata/flores_plus/resolve/main/"
WMT_PATH = "/data.statmt.org/wmt21/translation-task/test.tgz"
WMT24_PATH = "/github.com/wmt-conference/wmt24-news-systems/releases/download/v1.1/data_onlyxml.tar.gz"
ANLP_PATH = "/raw.githubusercontent.com/AmericasNLP/americasnlp2021/main/test_data/"
TATOEBA_PATH = "/raw.githubusercontent.com/Helsinki-NLP/Tatoeba-Challenge/master/data/test/eng-spa/test.txt"
TOKEN = "hf_test_token"


def ntrex_lines(code: str, n: int | None = None) -> list[str]:
    """NTREX lines as the README says to split them (on "\\n", CR dropped: lines hold U+2028)."""
    name = "newstest2019-src.eng.txt" if code == "eng" else f"newstest2019-ref.{code}.txt"
    text = (NTREX / name).read_text(encoding="utf-8")
    lines = [line.removesuffix("\r") for line in text.removesuffix("\n").split("\n")]
    return lines[:n] if n else lines


def flores_parquet(code: str, lines: list[str]) -> bytes:
    iso, script = code.split("_")
    table = pa.table({
        "id": pa.array(range(len(lines)), pa.int64()), "iso_639_3": [iso] * len(lines),
        "iso_15924": [script] * len(lines), "glottocode": ["test1234"] * len(lines), "text": lines,
        "url": ["https://example.org/doc"] * len(lines), "domain": ["wikinews"] * len(lines),
        "topic": ["news"] * len(lines), "has_image": ["no"] * len(lines), "has_hyperlink": ["no"] * len(lines),
        "last_updated": ["1.0"] * len(lines)})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def wmt21_xml(src: list[str], ref_a: list[str], ref_b: list[str]) -> bytes:
    dataset = ET.Element("dataset", id="newstest2021")
    collection = ET.SubElement(dataset, "collection", id="general")
    per_doc = 10
    for start in range(0, len(src), per_doc):
        doc = ET.SubElement(collection, "doc", id=f"doc{start // per_doc}", origlang="en")
        for tag, lines, extra in (("src", src, {"lang": "en"}), ("ref", ref_a, {"lang": "de", "translator": "A"}),
                                  ("ref", ref_b, {"lang": "de", "translator": "B"})):
            p = ET.SubElement(ET.SubElement(doc, tag, extra), "p")
            for i, line in enumerate(lines[start:start + per_doc], start=1):
                ET.SubElement(p, "seg", id=str(i)).text = line
    return ET.tostring(dataset, encoding="utf-8", xml_declaration=True)


def wmt24_xml(src: list[str], ref: list[str], hyp: list[str]) -> bytes:
    """WMT24's ``.all.xml``: documents with a domain, reference ``refA``, a system's ``hyp`` beside it, and a
    test-suite document that sacrebleu's reader skips."""
    dataset = ET.Element("dataset", id="wmttest2024")
    collection = ET.SubElement(dataset, "collection", id="general")
    per_doc = 10
    for start in range(0, len(src), per_doc):
        doc = ET.SubElement(collection, "doc", id=f"news_{start // per_doc}", origlang="en", domain="news")
        for tag, lines, extra in (("src", src, {"lang": "en"}), ("ref", ref, {"lang": "es", "translator": "refA"}),
                                  ("hyp", hyp, {"lang": "es", "system": "ONLINE-A"})):
            p = ET.SubElement(ET.SubElement(doc, tag, extra), "p")
            for i, line in enumerate(lines[start:start + per_doc], start=1):
                ET.SubElement(p, "seg", id=str(i)).text = line
    suite = ET.SubElement(collection, "doc", id="suite_1", origlang="en", domain="news", testsuite="challenge")
    p = ET.SubElement(ET.SubElement(suite, "src", {"lang": "en"}), "p")
    ET.SubElement(p, "seg", id="1").text = "A test-suite sentence that is not part of the test set."
    return ET.tostring(dataset, encoding="utf-8", xml_declaration=True)


def wmt21_tarball(xml: bytes, member: str = "test/newstest2021.en-de.xml") -> bytes:
    sink = io.BytesIO()
    with tarfile.open(fileobj=sink, mode="w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(xml)
        tar.addfile(info, io.BytesIO(xml))
    return sink.getvalue()


def tatoeba_text(src: list[str], ref: list[str]) -> bytes:
    rows = []
    for i, (s, r) in enumerate(zip(src, ref, strict=True)):
        rows.append(f"eng\tspa\t{s}\t{r}")
        if i % 10 == 0:  # a second accepted translation, on the next row as upstream lists them
            rows.append(f"eng\tspa\t{s}\t{r} (2)")
    return ("\n".join(rows) + "\n").encode("utf-8")


def md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


@dataclass
class Upstream:
    """The files served (path → bytes), the faults to inject (path → 404|truncate|corrupt|slow|500) and
    every path requested, in order."""

    files: dict[str, bytes] = field(default_factory=dict)
    faults: dict[str, str] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    base: str = ""
    redirects: dict[str, str] = field(default_factory=dict)
    """path → path answered with a 302, as Hugging Face sends a file to its CDN."""
    authorization: dict[str, str | None] = field(default_factory=dict)
    """path → the Authorization header each request carried (None: none)."""

    def url(self, path: str) -> str:
        return self.base + path


def default_files() -> dict[str, bytes]:
    files = {NTREX_PATH + p.name: p.read_bytes() for p in NTREX.glob("newstest2019-*.txt")}
    eng, spa, deu = ntrex_lines("eng", N), ntrex_lines("spa", N), ntrex_lines("deu", N)
    files[FLORES_PATH + "devtest/eng_Latn.parquet"] = flores_parquet("eng_Latn", eng)
    files[FLORES_PATH + "devtest/spa_Latn.parquet"] = flores_parquet("spa_Latn", spa)
    files[WMT_PATH] = wmt21_tarball(wmt21_xml(eng, deu, ntrex_lines("fra", N)))
    files[WMT24_PATH] = wmt21_tarball(wmt24_xml(eng, spa, ntrex_lines("por", N)), "xml/wmttest2024.en-es.all.xml")
    files[ANLP_PATH + "test.es"] = ("\n".join(spa) + "\n").encode("utf-8")
    files[ANLP_PATH + "test.quy"] = ("\n".join(ntrex_lines("yor", N)) + "\n").encode("utf-8")
    files[TATOEBA_PATH] = tatoeba_text(eng, spa)
    return files


def _handler(state: Upstream) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep the test output quiet
            pass

        def do_GET(self) -> None:
            path = self.path.partition("?")[0]
            state.requests.append(path)
            state.authorization[path] = self.headers.get("Authorization")
            if path in state.redirects:
                self.send_response(302)
                self.send_header("Location", state.base + state.redirects[path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            fault = state.faults.get(path)
            body = state.files.get(path)
            if path.startswith("/huggingface.co/") and self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self.send_error(401, "Unauthorized")  # a gated repository without a token
                return
            if body is None or fault == "404":
                self.send_error(404, "Not Found")
                return
            if fault == "500":
                self.send_error(500, "Internal Server Error")
                return
            if fault == "slow":
                time.sleep(1.5)
            if fault == "corrupt":
                body = body[:-8] + b"XXXXXXXX"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body[: len(body) // 2] if fault == "truncate" else body)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):  # the client stopped reading (a size limit)
                pass

    return Handler


@contextmanager
def serve(state: Upstream) -> Iterator[Upstream]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
