"""The offline review batch: one self-contained HTML file a reviewer opens from disk and fills in.

Everything is inside the file (texts, token, style, script) and a Content-Security-Policy forbids any
fetch, so it works from ``file://`` on a machine with no network and cannot leak what it holds. The
reviewer rates each output 0–3 (keys 0–3 rate the highlighted output and move on; n / p or the arrows
change entry; c writes a comment; s saves) and saves a JSON result (``offline.RESULT_FORMAT``) by a
download: no server needed. Progress survives closing the tab (``localStorage``, when the browser
allows it for files). Outputs are shown with ``dir`` and ``lang`` of the target language, so Arabic or
Hebrew read right to left. The file carries no reference (``review.offline.payload``): a reference read
before rating is a scoring key for a script, and the file is in the reviewer's hands before they rate.
"""

from __future__ import annotations

import json
from html import escape

from mt_eval.review.offline import RESULT_FORMAT, Batch, payload

CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"

_CSS = """
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 980px; padding: 1rem; font: 16px/1.5 system-ui, "Noto Sans", "Segoe UI",
  Arial, sans-serif; color: #1f2328; }
header { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: baseline; border-bottom: 1px solid #d0d7de; }
h1 { font-size: 1.25rem; margin: .2rem 0; }
progress { width: 14rem; }
.source, .reference { background: #f6f8fa; border-left: 4px solid #57606a; padding: .5rem .8rem; margin: .6rem 0; }
.reference { border-color: #1a7f37; }
.label { font-size: .8rem; color: #57606a; text-transform: uppercase; letter-spacing: .04em; }
.item { border: 1px solid #d0d7de; border-radius: 6px; padding: .6rem .8rem; margin: .6rem 0; }
.item.active { border-color: #0969da; box-shadow: 0 0 0 2px #0969da55; }
.item .text.empty { color: #57606a; font-style: italic; }
.item .text { font-size: 1.1rem; margin: .2rem 0 .5rem; white-space: pre-wrap; }
.scale button { margin: 0 .3rem .3rem 0; padding: .3rem .7rem; border: 1px solid #8c959f; border-radius: 4px;
  background: #fff; cursor: pointer; font: inherit; }
.scale button[aria-pressed="true"] { background: #0969da; color: #fff; border-color: #0969da; }
textarea { width: 100%; min-height: 2.2rem; font: inherit; }
nav { display: flex; gap: .6rem; margin: 1rem 0; align-items: center; }
kbd { border: 1px solid #8c959f; border-radius: 3px; padding: 0 .3rem; font-size: .85em; }
.help { color: #57606a; font-size: .9rem; }
"""

_JS = r"""
(() => {
const B = JSON.parse(document.getElementById('batch').textContent);
const KEY = 'mt-eval-review:' + B.uid + ':' + B.reviewer;
let state = {ratings: {}, at: 0};
try { const s = JSON.parse(localStorage.getItem(KEY) || 'null'); if (s && s.ratings) state = s; } catch (e) {}
const total = B.groups.reduce((n, g) => n + g.items.length, 0);
let active = 0, mark = performance.now();
const $ = (id) => document.getElementById(id);
const el = (tag, attrs, text) => { const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text; return e; };
function persist() { try { localStorage.setItem(KEY, JSON.stringify(state)); } catch (e) {} }
function group() { return B.groups[state.at]; }
function progress() {
  const done = Object.keys(state.ratings).length;
  $('done').textContent = done; $('bar').value = done;
  $('where').textContent = 'Entry ' + (state.at + 1) + ' of ' + B.groups.length;
}
function rate(index, value) {
  const g = group(), it = g.items[index], now = performance.now();
  const old = state.ratings[it.hash] || {seconds: 0, comment: null};
  state.ratings[it.hash] = {value: value, comment: old.comment, rated_at: new Date().toISOString(),
    seconds: Math.round((old.seconds + (now - mark) / 1000) * 1000) / 1000};
  mark = now;
  const next = g.items.findIndex((x) => state.ratings[x.hash] === undefined);
  active = next >= 0 ? next : index;
  persist(); show();
}
function comment(index, text) {
  const it = group().items[index];
  if (state.ratings[it.hash]) { state.ratings[it.hash].comment = text || null; persist(); }
}
function show() {
  const g = group(), view = $('view');
  view.replaceChildren();
  const src = el('div', {class: 'source', dir: B.source_dir, lang: B.source_lang});
  src.append(el('div', {class: 'label'}, 'Source'), el('div', {}, g.source));
  view.append(src);
  g.items.forEach((it, i) => {
    const box = el('section', {class: 'item' + (i === active ? ' active' : ''), 'data-item': it.hash});
    box.append(el('div', {class: 'label'}, 'Translation ' + String.fromCharCode(65 + i)));
    box.append(it.text ? el('div', {class: 'text', dir: B.target_dir, lang: B.target_lang}, it.text)
                       : el('div', {class: 'text empty'}, '(empty output)'));
    const scale = el('div', {class: 'scale'}), r = state.ratings[it.hash];
    B.scale.forEach((name, v) => {
      const b = el('button', {type: 'button', 'data-value': v, 'aria-pressed': String(!!r && r.value === v)},
                   v + ' ' + name);
      b.addEventListener('click', () => { active = i; rate(i, v); });
      scale.append(b);
    });
    const t = el('textarea', {placeholder: 'Comment (optional)', 'aria-label': 'comment', dir: 'auto'});
    t.value = (r && r.comment) || '';
    t.disabled = !r;
    t.addEventListener('input', () => comment(i, t.value));
    t.addEventListener('focus', () => { active = i; });
    box.append(scale, t);
    box.addEventListener('click', () => { if (active !== i) { active = i; highlight(); } });
    view.append(box);
  });
  progress();
}
function highlight() {
  document.querySelectorAll('.item').forEach((b, i) => b.classList.toggle('active', i === active));
}
function go(step) {
  const at = state.at + step;
  if (at < 0 || at >= B.groups.length) return;
  state.at = at; active = 0; mark = performance.now(); persist(); show(); window.scrollTo(0, 0);
}
function save() {
  const ratings = Object.entries(state.ratings).map(([item, r]) => ({item: item, value: r.value,
    comment: r.comment, seconds: r.seconds, rated_at: r.rated_at}));
  const result = {format: '__FORMAT__', campaign: B.uid, campaign_name: B.campaign, reviewer: B.reviewer,
    token: B.token, saved_at: new Date().toISOString(), rated: ratings.length, total: total, ratings: ratings};
  const blob = new Blob([JSON.stringify(result, null, 1)], {type: 'application/json'});
  const a = el('a', {href: URL.createObjectURL(blob),
    download: ('review-' + B.campaign + '-' + B.reviewer).replace(/[^\w.-]+/g, '_') + '.json'});
  document.body.append(a); a.click(); a.remove();
  $('saved').textContent = 'Saved ' + ratings.length + ' rating(s).';
}
document.addEventListener('keydown', (ev) => {
  if (ev.target.tagName === 'TEXTAREA') { if (ev.key === 'Escape') ev.target.blur(); return; }
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (/^[0-3]$/.test(ev.key)) { rate(active, Number(ev.key)); ev.preventDefault(); }
  else if (ev.key === 'n' || ev.key === 'ArrowRight' || ev.key === 'Enter') go(1);
  else if (ev.key === 'p' || ev.key === 'ArrowLeft') go(-1);
  else if (ev.key === 'ArrowDown' || ev.key === 'j') {
    active = Math.min(active + 1, group().items.length - 1); highlight();
  }
  else if (ev.key === 'ArrowUp' || ev.key === 'k') { active = Math.max(active - 1, 0); highlight(); }
  else if (ev.key === 'c') {
    const t = document.querySelectorAll('textarea')[active];
    if (t && !t.disabled) { t.focus(); ev.preventDefault(); }
  }
  else if (ev.key === 's') save();
});
$('next').addEventListener('click', () => go(1));
$('prev').addEventListener('click', () => go(-1));
$('save').addEventListener('click', save);
$('bar').max = total; $('total').textContent = total;
show();
})();
"""


def _json_for_script(data: object) -> str:
    """JSON that cannot end the ``<script>`` element it sits in, whatever the texts contain."""
    text = json.dumps(data, ensure_ascii=False)
    for raw, safe in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                      ("\u2029", "\\u2029")):
        text = text.replace(raw, safe)
    return text


def batch_page(batch: Batch) -> str:
    """The batch as one HTML document (UTF-8), with no external resource of any kind."""
    title = f"Review {batch.campaign} — {batch.reviewer}"
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{escape(title)}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1>{escape(title)}</h1>
<div><progress id="bar" value="0" max="1"></progress> <span id="done">0</span> / <span id="total">0</span> rated</div>
<div id="where"></div>
</header>
<p class="help">Rate each translation of the source: <b>0 reject</b> (wrong or unusable), <b>1 gist</b> (meaning is
clear but phrasing is wrong), <b>2 acceptable</b> (correct with minor issues), <b>3 excellent</b>
(indistinguishable from a human translation). Keys: <kbd>0</kbd>–<kbd>3</kbd> rate the highlighted translation,
<kbd>↑</kbd>/<kbd>↓</kbd> move between translations, <kbd>c</kbd> comment, <kbd>n</kbd>/<kbd>p</kbd> next/previous
entry, <kbd>s</kbd> save. Save whenever you stop and send the saved file back.</p>
<main id="view"></main>
<nav><button id="prev" type="button">← previous</button><button id="next" type="button">next →</button>
<button id="save" type="button">Save result file</button><span id="saved" role="status"></span></nav>
<script type="application/json" id="batch">{_json_for_script(payload(batch))}</script>
<script>{_JS.replace("__FORMAT__", RESULT_FORMAT)}</script>
</body>
</html>
"""
