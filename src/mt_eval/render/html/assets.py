"""The report's inline stylesheet and its optional sorting/filtering script (no external assets)."""

from __future__ import annotations

# Tier badge colours: each passes WCAG AA (≥ 4.5:1) against white text.
TIER_COLOURS: dict[str, str] = {
    "fluent": "#1a5e2e",
    "deployable": "#2e7d32",
    "functional": "#7a5c00",
    "emerging": "#a84300",
    "baseline": "#b71c1c",
    "unscored": "#5f6368",
}

CSS = """
:root { --fg:#1f2328; --muted:#57606a; --line:#d0d7de; --bg:#fff; --soft:#f6f8fa; --err:#b3261e;
  --ci:#9ec5fe; --pt:#0b3d91; }
* { box-sizing: border-box; }
html { font-size: 15px; }
body { margin: 0 auto; max-width: 1200px; padding: 1.25rem; color: var(--fg); background: var(--bg);
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial, sans-serif;
  line-height: 1.45; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .6rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  font-size: .88em; }
.muted { color: var(--muted); }
.sub { color: var(--muted); margin: 0 0 1rem; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0; }
dl.meta dt { font-weight: 600; }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 1rem 2rem; }
.hero { display: flex; flex-wrap: wrap; align-items: center; gap: .75rem 1.5rem; padding: 1rem 1.25rem;
  background: var(--soft); border: 1px solid var(--line); border-radius: 8px; margin: 1rem 0; }
.hero .big { font-size: 2.6rem; font-weight: 700; font-variant-numeric: tabular-nums; line-height: 1; }
.badge { display: inline-block; padding: .15rem .6rem; border-radius: 999px; color: #fff; font-weight: 600;
  font-size: .9rem; border: 1px solid rgba(0,0,0,.2); -webkit-print-color-adjust: exact; print-color-adjust: exact; }
.hero .badge { font-size: 1.1rem; padding: .3rem .9rem; }
table { border-collapse: collapse; width: 100%; margin: .25rem 0 1rem; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: .2rem 0; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
thead th { background: var(--soft); border-bottom: 2px solid var(--line); white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
tr.null td, tr.null th { color: var(--muted); }
.ci { color: var(--muted); font-size: .85em; white-space: nowrap; }
.scroll { overflow-x: auto; }
.err { color: var(--err); font-weight: 600; }
tr.row-err { background: #fdecea; }
td.text { min-width: 14rem; max-width: 28rem; overflow-wrap: anywhere; }
.fst-no { color: var(--err); }
.fst-yes { color: #1a5e2e; }
.unk { display: block; color: var(--muted); font-size: .8em; }
ul.warn li { color: #7a4b00; }
svg.bar { vertical-align: middle; }
.legend { font-size: .85em; color: var(--muted); }
.tools { margin: .4rem 0; display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
.tools input { font: inherit; padding: .25rem .5rem; border: 1px solid var(--line); border-radius: 6px;
  min-width: 16rem; }
th button.sort { font: inherit; font-weight: 600; background: none; border: 0; padding: 0; cursor: pointer;
  color: inherit; }
th button.sort::after { content: " \\2195"; color: var(--muted); }
th[aria-sort="ascending"] button.sort::after { content: " \\2191"; }
th[aria-sort="descending"] button.sort::after { content: " \\2193"; }
.tamper { border: 2px solid var(--err); background: #fdecea; color: #5f1410; border-radius: 8px;
  padding: .75rem 1rem; margin: 1rem 0; }
.tamper strong { color: var(--err); }
del { background: #ffd7d5; color: #82071e; text-decoration: line-through; }
ins { background: #d2f4d3; color: #0f5323; text-decoration: underline; }
.verdict { display: inline-block; padding: 0 .35rem; border-radius: 4px; font-size: .85em; font-weight: 600; }
.sig-better { background: #d2f4d3; color: #0f5323; }
.sig-worse { background: #ffd7d5; color: #82071e; }
.sig-none { background: var(--soft); color: var(--muted); font-weight: 400; }
.delta { display: block; font-size: .85em; color: var(--muted); white-space: nowrap; }
figure.dist { margin: .5rem 0 1.25rem; }
figure.dist figcaption { font-weight: 600; margin-bottom: .2rem; }
svg.dist { max-width: 100%; height: auto; }
.swatch { display: inline-block; width: .8em; height: .8em; border-radius: 2px; vertical-align: baseline;
  margin-right: .3em; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
td.nowrap { white-space: nowrap; }
td.sys .chrf { display: block; color: var(--muted); font-size: .8em; }
a { color: #0a58ca; }
:focus-visible { outline: 3px solid #0a58ca; outline-offset: 2px; }
footer { margin-top: 2rem; font-size: .85em; color: var(--muted); }
@media (max-width: 640px) {
  body { padding: .6rem; }
  .hero .big { font-size: 2rem; }
  td.text { min-width: 10rem; }
}
@media print {
  html { font-size: 11pt; }
  body { max-width: none; padding: 0; }
  .tools, nav { display: none; }
  .scroll { overflow: visible; }
  h2 { break-after: avoid; }
  tr { break-inside: avoid; }
  .hero { border: 1px solid #999; }
  a { color: inherit; text-decoration: none; }
}
"""

# Progressive enhancement only: the table is complete and sorted worst-first without it.
JS = """
(function () {
  var table = document.getElementById('entries-table');
  if (!table) { return; }
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  function key(cell, numeric) {
    var v = cell.getAttribute('data-v');
    if (numeric) { var n = parseFloat(v); return isNaN(n) ? -Infinity : n; }
    return (v === null ? cell.textContent : v).toLowerCase();
  }
  Array.prototype.forEach.call(heads, function (th, col) {
    var kind = th.getAttribute('data-sort');
    if (!kind) { return; }
    var btn = document.createElement('button');
    btn.type = 'button'; btn.className = 'sort'; btn.textContent = th.textContent;
    th.textContent = ''; th.appendChild(btn);
    btn.addEventListener('click', function () {
      var asc = th.getAttribute('aria-sort') !== 'ascending';
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a.cells[col], kind === 'num'), y = key(b.cells[col], kind === 'num');
        return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  var tools = document.getElementById('entry-tools');
  var input = document.createElement('input');
  input.type = 'search'; input.placeholder = 'Filter entries (any text)';
  input.setAttribute('aria-label', 'Filter entries');
  var count = document.createElement('span'); count.className = 'muted'; count.setAttribute('aria-live', 'polite');
  tools.appendChild(input); tools.appendChild(count);
  input.addEventListener('input', function () {
    var q = input.value.toLowerCase(), shown = 0;
    Array.prototype.forEach.call(body.rows, function (r) {
      var ok = !q || r.textContent.toLowerCase().indexOf(q) !== -1;
      r.hidden = !ok; if (ok) { shown++; }
    });
    count.textContent = q ? shown + ' of ' + body.rows.length + ' entries' : '';
  });
})();
"""
