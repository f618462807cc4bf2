"""`mt-eval report`: a real card scored through the CLI, rendered to HTML, parsed back and checked."""

from __future__ import annotations

import copy
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.render.html import render_html
from mt_eval.scoring.composite import effective_tier, tier_label

runner = CliRunner()
N = 30
EVIL = "<script>alert(1)</script> & Tom & Jerry"
EVIL_ERROR = "<b>timeout</b> & boom"
VOID = {"meta", "br", "input", "img", "link", "hr", "wbr", "col", "source"}


class Page(HTMLParser):
    """Collects what the assertions need: tag balance, element text by id, table rows, scripts, attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict[str, str | None]]] = []
        self.problems: list[str] = []
        self.text_by_id: dict[str, list[str]] = {}
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: dict[str, list[list[str]]] = {}  # table id -> rows of cell texts (tbody only)
        self.row_classes: dict[str, list[str]] = {}
        self._cell: list[str] | None = None
        self._table: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        self.attrs += [(tag, k, v) for k, v in attrs]
        if tag in VOID:
            return
        self.stack.append((tag, a))
        if tag == "table":
            self._table.append(a.get("id"))
        tid = self._table[-1] if self._table else None
        if tag == "tr" and tid and any(t == "tbody" for t, _ in self.stack):
            self.rows.setdefault(tid, []).append([])
            self.row_classes.setdefault(tid, []).append(a.get("class") or "")
        if tag in ("td", "th") and tid and any(t == "tbody" for t, _ in self.stack):
            self._cell = []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self.attrs += [(tag, k, v) for k, v in attrs]

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1][0] if self.stack else 'nothing'}")
            return
        self.stack.pop()
        if tag == "table":
            self._table.pop()
        if tag in ("td", "th") and self._cell is not None and self._table:
            tid = self._table[-1]
            if tid in self.rows:
                self.rows[tid][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1][0] == "script":
            self.scripts.append(data)
        if self.stack and self.stack[-1][0] == "style":
            self.styles.append(data)
        for _, a in self.stack:
            if a.get("id"):
                self.text_by_id.setdefault(str(a["id"]), []).append(data)
        if self._cell is not None:
            self._cell.append(data)

    def text(self, element_id: str) -> str:
        return "".join(self.text_by_id.get(element_id, [])).strip()


def parse(page: str) -> Page:
    p = Page()
    p.feed(page)
    p.close()
    assert not p.problems, p.problems[:5]
    assert not p.stack, f"unclosed: {[t for t, _ in p.stack]}"
    return p


@pytest.fixture(scope="module")
def scored(ntrex_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("html")
    src = (ntrex_dir / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:N]
    ref = (ntrex_dir / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[:N]
    (tmp / "src.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp / "ref.es").write_text("\n".join(ref) + "\n", encoding="utf-8")
    preds = []
    for i, r in enumerate(ref, start=1):
        if i == 2:
            preds.append({"entry_id": i, "predicted": EVIL})
        elif i == 3:
            preds.append({"entry_id": i, "predicted": "", "error": EVIL_ERROR})
        elif i == 4:
            continue  # no output at all: the card records an error for it
        else:
            preds.append({"entry_id": i, "predicted": " ".join(r.split()[: max(1, len(r.split()) - i % 4)])})
    (tmp / "hyp.jsonl").write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in preds),
                                   encoding="utf-8")
    card_path = tmp / "run" / "card.json"
    card_path.parent.mkdir()
    result = runner.invoke(app, [
        "score", "--source-file", str(tmp / "src.en"), "--reference-file", str(tmp / "ref.es"),
        "--source-lang", "en", "--target-lang", "es", "--predictions", str(tmp / "hyp.jsonl"),
        "--runs-dir", str(tmp / "runs"), "--out", str(card_path), "--bootstrap", "200", "--allow-missing"])
    assert result.exit_code == 0, result.output
    card = json.loads(card_path.read_text(encoding="utf-8"))
    report = runner.invoke(app, ["report", str(card_path)])
    assert report.exit_code == 0, report.output
    html_path = card_path.parent / "report.html"
    return {"card": card, "card_path": card_path, "html_path": html_path, "output": report.output,
            "page": html_path.read_text(encoding="utf-8"), "tmp": tmp}


def _metric_text(value: float, scale: Any) -> str:
    return f"{value:.2f}" if isinstance(scale, int | float) and scale > 1 else f"{value:.4f}"


def test_writes_beside_card_and_prints_path(scored):
    assert scored["output"].strip() == str(scored["html_path"])
    assert scored["page"].startswith("<!DOCTYPE html>")


def test_out_option(scored):
    target = scored["tmp"] / "elsewhere.html"
    result = runner.invoke(app, ["report", str(scored["card_path"]), "--out", str(target)])
    assert result.exit_code == 0 and result.output.strip() == str(target)
    assert target.read_text(encoding="utf-8") == scored["page"]


def test_composite_tier_and_ci_as_on_card(scored):
    card, p = scored["card"], parse(scored["page"])
    s = card["scores"]
    assert p.text("composite-value") == f"{s['composite']:.4f}"
    hero_badges = [a for t, a in p.tags if t == "span" and "badge" in (a.get("class") or "")]
    assert hero_badges and f"tier-{effective_tier(s['quality_tier'])}" in (hero_badges[0].get("class") or "")
    ci = s["confidence_intervals"]["composite"]
    assert p.text("composite-ci") == f"95% CI [{ci['ci_lower']:.4f}, {ci['ci_upper']:.4f}]"


def test_every_metric_value_and_ci(scored):
    card, p = scored["card"], parse(scored["page"])
    s, cis = card["scores"], card["scores"]["confidence_intervals"]
    checked = 0
    for mid, info in card["metrics"].items():
        text = p.text(f"metric-{mid}")
        assert mid in text
        value = s.get(mid)
        if value is None:
            assert "n/a" in text
            continue
        expected = _metric_text(value, info.get("scale"))
        assert expected in text, (mid, expected, text)
        ci = cis.get(mid)
        if ci:
            assert _metric_text(ci["ci_lower"], info.get("scale")) in text
            assert _metric_text(ci["ci_upper"], info.get("scale")) in text
        checked += 1
    assert checked >= 5  # chrF++, chrF, BLEU, TER, exact match at least


def test_header_identity(scored):
    card, page = scored["card"], scored["page"]
    p = parse(page)
    titles = {a.get("title") for _, a in p.tags if a.get("title")}
    assert card["fingerprint"]["hash"] in titles and card["run_card_hash"] in titles
    for needle in (card["run_id"], card["method"]["name"], card["dataset"]["id"], card["timestamp"]):
        assert needle in page
    for mid, info in card["metrics"].items():
        if info.get("signature"):
            # as the page shows it: escaped (the critical checks' signature holds "typo:dl1>=4")
            assert html.escape(info["signature"], quote=False) in page, mid


def test_entries_table_worst_first_with_errors(scored):
    card, p = scored["card"], parse(scored["page"])
    rows = p.rows["entries-table"]
    assert len(rows) == card["dataset"]["entry_count"] == len(card["results"]) == N
    classes = p.row_classes["entries-table"]
    n_err = sum(1 for r in card["results"] if r.get("error"))
    assert n_err == 2 and classes[:n_err] == ["row-err"] * n_err and "row-err" not in classes[n_err:]
    chrfs = [float(r[2]) for r in rows[n_err:]]
    assert chrfs == sorted(chrfs)
    error_texts = " ".join(r[5] for r in rows[:n_err])
    assert f"error: {EVIL_ERROR}" in error_texts and "no prediction for entry 4" in error_texts
    ids = sorted(int(r[0]) for r in rows)
    assert ids == sorted(r["entry_id"] for r in card["results"])


def test_user_text_is_escaped(scored):
    page = scored["page"]
    p = parse(page)
    assert len(p.scripts) == 1 and "alert(1)" not in p.scripts[0]  # only the page's own script runs
    assert sum(1 for t, _ in p.tags if t == "script") == 1
    assert not any(t == "b" for t, _ in p.tags)  # the error's <b> stayed text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; Tom &amp; Jerry" in page
    assert any(EVIL in " ".join(r) for r in p.rows["entries-table"])  # and reads back as the original text


def test_self_contained(scored):
    page = scored["page"]
    p = parse(page)
    assert not any(t in ("link", "img", "iframe", "object", "embed") for t, _ in p.tags)
    for tag, name, value in p.attrs:
        assert name != "src", tag
        if name == "href":
            assert (value or "").startswith("#"), value
    for block in p.styles + p.scripts:
        assert "http://" not in block and "https://" not in block and "url(" not in block and "@import" not in block
    assert "http://" not in page and "https://" not in page
    for tag in ("html", "head", "body", "main", "header", "table", "thead", "tbody"):
        assert len(re.findall(rf"<{tag}[\s>]", page)) == page.count(f"</{tag}>") >= 1, tag


def test_breakdowns_and_blocks(scored):
    card, p = scored["card"], parse(scored["page"])
    for name in ("by_difficulty", "by_provenance", "by_register", "by_segment"):
        groups = card["scores"].get(name)
        if groups:
            assert len(p.rows[name]) == len(groups)
            for row, (key, g) in zip(p.rows[name], groups.items(), strict=True):
                assert row[0] == str(key) and row[1] == str(g["total"]) and row[2] == str(g["errors"])
                assert f"{g['composite']:.4f}" in row[6] and row[7] == tier_label(g["quality_tier"])
    # a predictions file made no requests: no zero cost/tokens, no replay-timed speed, a note instead
    for absent in ("Cost (USD)", "elapsed_seconds", "entries_per_minute", "total_tokens"):
        assert absent not in scored["page"], absent
    assert "cost: unknown" in scored["page"] and "not measured" in scored["page"]
    paid = copy.deepcopy(card)
    paid["method"].update(name="llm", config={"model": "m"})
    paid["tokens"].update(prompt_tokens=900, completion_tokens=100, total_tokens=1000)
    paid["cost"].update(total_cost_usd=0.25, status="measured", source="provider")
    paid["speed"].update(status="measured", elapsed_seconds=12.0)
    page = render_html(paid)
    assert "Cost (USD)" in page and "elapsed_seconds" in page and "total_tokens" in page


def test_clamps_drawing_not_number_and_fst_column(scored):
    card = copy.deepcopy(scored["card"])
    card["scores"]["ter"] = 131.5
    card["scores"]["confidence_intervals"]["ter"] = {"ci_lower": 120.0, "ci_upper": 140.0}
    for i, r in enumerate(card["results"]):
        r["fst_accepted"] = i % 2 == 0
        r["fst_analysis"] = ["casa/casa<n>", "*zzword"]
    card["warnings"] = ["a <warning> & more"]
    page = render_html(card)
    p = parse(page)
    assert "131.50" in p.text("metric-ter") and "140.00" in p.text("metric-ter")
    for tag, a in p.tags:
        if tag == "circle":
            assert 0 <= float(a["cx"] or 0) <= 160 * 1.5
    head = page[page.index('id="entries-table"'):]
    assert ">FST</th>" in head and "unknown: zzword" in page
    rates = [r["metrics"].get("fst_acceptance_rate") for r in card["results"]]
    shares = {f"accepted {rate * 100:.0f} %" for rate in rates if rate is not None}
    assert shares and all(share in page for share in shares)  # a share of the words, not a bare rate
    assert "a &lt;warning&gt; &amp; more" in page


@pytest.mark.parametrize("content", ['{"hello": "world"}', "[1, 2]", "not json at all"])
def test_not_a_card_is_one_line_exit_2(tmp_path, content):
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    result = runner.invoke(app, ["report", str(bad)])
    assert result.exit_code == 2
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "bad.json" in lines[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "report.html").exists()


def test_missing_card_and_unwritable_out(tmp_path, scored):
    missing = runner.invoke(app, ["report", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "run card not found" in missing.output
    unwritable = runner.invoke(app, ["report", str(scored["card_path"]), "--out",
                                     str(tmp_path / "no" / "such" / "dir.html")])
    assert unwritable.exit_code == 2 and len(unwritable.output.strip().splitlines()) == 1
    assert "Traceback" not in unwritable.output
