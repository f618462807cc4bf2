"""The offline batch in a real headless Chromium, opened from ``file://``: no network request at all,
keyboard rating, no reference ever (the file carries none), right-to-left Arabic, the saved result
imported by ``mt-eval review import``. One browser for the module."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from review_helpers import cli, publish

from data_paths import NTREX
from mt_eval.render.html.review_offline import batch_page
from mt_eval.review.offline import Batch, BatchGroup, BatchItem

# the slow stage (make test-slow; CI's second stage runs it on every submission): headless Chromium
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        yield b
        b.close()


def _open(browser: Browser, path: Path) -> tuple[Page, list[str]]:
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    assert not errors
    return page, requests


def test_batch_offline_keyboard_no_reference_save_and_import(browser: Browser, verified: dict, sqlite_db: str,
                                                          tmp_path: Path) -> None:
    hashes = publish(sqlite_db, verified)
    made = cli("review", "create", "--db", sqlite_db, "--card", hashes["near"], "--card", hashes["half"],
               "--size", 12, "--seed", 2, "--name", "es-browser", "--controls", 0.2)
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    html = tmp_path / "ana.html"
    exported = cli("review", "export", "es-browser", "--reviewer", "ana", "-o", html, "--db", sqlite_db)
    assert exported.exit_code == 0, exported.output  # type: ignore[attr-defined]
    page, requests = _open(browser, html)
    total = int(page.inner_text("#total"))
    # 6 controls take the place of outputs: 3 more entries keep 12 × 2 real outputs, two items each
    assert total == 15 * 2 and page.inner_text("#where") == "Entry 1 of 15"
    rated = 0
    for group in range(15):
        n = page.locator(".item").count()
        assert n == 2
        for i in range(n):
            page.keyboard.press(str((group + i) % 4))
            rated += 1
            pressed = page.locator(".item").nth(i).locator('button[aria-pressed="true"]')
            assert pressed.get_attribute("data-value") == str((group + i) % 4)
            assert page.locator(".reference").count() == 0  # never: the file holds no reference
        if group == 0:  # a comment on the first output, typed after "c"
            page.locator(".item").first.click()
            page.keyboard.press("c")
            page.keyboard.type("falta un verbo")
            page.keyboard.press("Escape")
        page.keyboard.press("n")
    assert int(page.inner_text("#done")) == rated == total
    with page.expect_download() as download:
        page.keyboard.press("s")
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert requests == [html.as_uri()]  # the page itself, nothing else: no fetch, font, script or beacon
    result = json.loads(saved.read_text(encoding="utf-8"))
    assert len(result["ratings"]) == total and all(r["seconds"] >= 0 for r in result["ratings"])
    assert any(r["comment"] == "falta un verbo" for r in result["ratings"])
    imported = cli("review", "import", saved, "--db", sqlite_db)
    assert imported.exit_code == 0 and f"{total} of {total} items rated by ana" in imported.output  # type: ignore[attr-defined]
    tampered = dict(result, token="forged")
    (tmp_path / "t.json").write_text(json.dumps(tampered), encoding="utf-8")
    refused = cli("review", "import", tmp_path / "t.json", "--db", sqlite_db)
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1  # type: ignore[attr-defined]


def test_arabic_renders_right_to_left_and_hostile_text_stays_text(browser: Browser, tmp_path: Path) -> None:
    english = (NTREX / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:2]
    arabic = (NTREX / "newstest2019-ref.arb.txt").read_text(encoding="utf-8").splitlines()[:2]
    hostile = "</script><script>document.title='pwned'</script><img src=x onerror=alert(1)>"
    groups = [BatchGroup(i + 1, english[i], arabic[i], [BatchItem(f"{i}a" * 32, arabic[i]),
                                                         BatchItem(f"{i}b" * 32, hostile)]) for i in range(2)]
    batch = Batch("ar-demo", "u1", "ali", "tok", "after", "en", "ar", groups)
    path = tmp_path / "ar.html"
    path.write_text(batch_page(batch), encoding="utf-8")
    page, requests = _open(browser, path)
    text = page.locator(".item .text").first
    assert text.get_attribute("dir") == "rtl" and text.get_attribute("lang") == "ar"
    assert page.evaluate("el => getComputedStyle(el).direction", text.element_handle()) == "rtl"
    assert page.locator(".source").get_attribute("dir") == "ltr"
    assert page.title().startswith("Review ar-demo") and page.locator("img").count() == 0
    shown = {page.locator(".item .text").nth(i).inner_text() for i in range(2)}
    assert hostile in shown  # the hostile output is shown as text, never run
    assert requests == [path.as_uri()]
