// mt-eval leaderboard: small enhancements only; every page works without this file.
// 1. Sort a table by a column (th[data-sort] = "num" or "text"; a cell's data-value wins over its text).
// 2. Submit a filter form as soon as a menu or box changes (form[data-autosubmit]).
// 3. Narrow the entry table as one types in its search box (the server filters on submit).
"use strict";

function cellValue(row, index, kind) {
  const cell = row.cells[index];
  if (!cell) return kind === "num" ? Infinity : "";
  const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
  if (kind !== "num") return raw.toLowerCase();
  const number = parseFloat(raw);
  return Number.isNaN(number) ? Infinity : number;
}

function sortBy(table, th) {
  const index = Array.prototype.indexOf.call(th.parentNode.children, th);
  const kind = th.dataset.sort;
  const ascending = th.getAttribute("aria-sort") !== "ascending";
  table.querySelectorAll("th[aria-sort]").forEach((other) => other.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = cellValue(a, index, kind), y = cellValue(b, index, kind);
    const order = x < y ? -1 : x > y ? 1 : 0;
    return ascending ? order : -order;
  });
  rows.forEach((row) => body.appendChild(row));
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable").forEach((table) => {
    table.querySelectorAll("th[data-sort]").forEach((th) => {
      th.tabIndex = 0;
      th.addEventListener("click", () => sortBy(table, th));
      th.addEventListener("keydown", (event) => { if (event.key === "Enter") sortBy(table, th); });
    });
  });
  document.querySelectorAll("form[data-autosubmit]").forEach((form) => {
    form.querySelectorAll("select, input[type=checkbox]").forEach((input) => {
      input.addEventListener("change", () => form.submit());
    });
  });
  const search = document.getElementById("entry-search");
  const table = document.getElementById("entries-table");
  if (search && table) {
    search.addEventListener("input", () => {
      const needle = search.value.trim().toLowerCase();
      Array.from(table.tBodies[0].rows).forEach((row) => {
        row.classList.toggle("hidden", needle !== "" && !row.textContent.toLowerCase().includes(needle));
      });
    });
  }
});
