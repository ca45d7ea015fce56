/* Completion job page: follow the job over its websocket (ws/jobs/<id>/, protocol v1), fall back to
 * polling GET /api/decks/complete/<id>, and reload when the job is finished. No dependencies. */
(function () {
  "use strict";
  var root = document.getElementById("job");
  if (!root) return;
  var id = root.getAttribute("data-job-id");
  var bar = document.getElementById("job-progress");
  var text = document.getElementById("job-message");
  var finished = false;

  function show(job) {
    if (finished) return;
    if (bar && typeof job.progress === "number") bar.value = job.progress;
    if (text && job.message) text.textContent = job.message;
    if (job.status === "done" || job.status === "failed") {
      finished = true;
      window.location.reload();
    }
  }

  function poll() {
    if (finished) return;
    fetch("/api/decks/complete/" + id, { headers: { "Accept": "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (job) { if (job) show(job); })
      .catch(function () {})
      .then(function () { if (!finished) setTimeout(poll, 1500); });
  }

  try {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var ws = new WebSocket(scheme + window.location.host + "/ws/jobs/" + id + "/");
    ws.onmessage = function (event) {
      var msg = JSON.parse(event.data);
      if (msg.v === 1 && msg.type === "job") show(msg.job);
    };
    ws.onerror = function () { poll(); };
    ws.onclose = function () { if (!finished) setTimeout(poll, 500); };
  } catch (e) {
    poll();
  }
  setTimeout(poll, 4000); // a safety net if the socket stays silent
})();
