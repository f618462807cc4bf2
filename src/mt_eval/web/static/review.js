// mt-eval review pages: keys 0-3 rate the item and send the form; "n" goes to the next item once rated.
// The seconds from showing the item to sending its rating go into the form's hidden "seconds" field.
// Without this file the form works the same by clicking (no timing is recorded then).
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("rating-form");
  if (!form) return;
  const shown = performance.now();
  const seconds = document.getElementById("seconds");
  form.addEventListener("submit", () => {
    seconds.value = ((performance.now() - shown) / 1000).toFixed(2);
  });
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (target instanceof HTMLTextAreaElement || (target instanceof HTMLInputElement && target.type !== "radio")) return;
    if (/^[0-3]$/.test(event.key)) {
      const radio = form.querySelector(`input[name=value][value="${event.key}"]`);
      if (radio) {
        radio.checked = true;
        event.preventDefault();
        form.requestSubmit();
      }
    } else if (event.key === "n") {
      const next = document.getElementById("next");
      if (next) next.click();
    }
  });
});
