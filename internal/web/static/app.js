// driftd's pages have one script, served as a file: the Content-Security-
// Policy forbids inline script (docs/security.md). A button with
// data-post POSTs to its URL with the X-Driftd-Request header, which every
// state-changing endpoint requires, and shows the answer next to itself.
"use strict";
document.addEventListener("click", async (ev) => {
  const button = ev.target.closest("button[data-post]");
  if (!button) return;
  const out = button.parentElement.querySelector(".act-result");
  button.disabled = true;
  try {
    const resp = await fetch(button.dataset.post, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-Driftd-Request": "1" },
    });
    const body = await resp.text();
    let msg = body.trim();
    try {
      // The API's envelope: {status, data: {message}} or {status, error}.
      const j = JSON.parse(body);
      msg = (j.data && j.data.message) || j.error || msg;
    } catch (_) {
      // a text/plain answer (/-/reload) is shown as it is
    }
    if (out) out.textContent = resp.ok ? msg : "HTTP " + resp.status + ": " + msg;
  } catch (err) {
    if (out) out.textContent = String(err);
  } finally {
    button.disabled = false;
  }
});

// The index's filter form applies itself when a choice changes; its
// Apply button does the same without script.
document.addEventListener("change", (ev) => {
  const form = ev.target.closest("form[data-autosubmit]");
  if (form) form.requestSubmit();
});
