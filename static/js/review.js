// The review page while the review runs: poll its API and reload once it is done or failed.
(function () {
  "use strict";
  const box = document.getElementById("review");
  if (!box) return;
  const bar = document.getElementById("review-progress");
  const label = document.getElementById("review-status");
  async function poll() {
    try {
      const r = await fetch(box.dataset.api, {headers: {Accept: "application/json"}, credentials: "same-origin"});
      if (r.ok) {
        const data = await r.json();
        if (bar) bar.value = data.progress || 0;
        if (label) label.textContent = data.status;
        if (data.status === "done" || data.status === "failed") { window.location.reload(); return; }
      }
    } catch (e) { /* the server is away for a moment: try again */ }
    setTimeout(poll, 1500);
  }
  setTimeout(poll, 1000);
})();
