/* Manaforge deck pages: apply "did you mean" suggestions on the import form, and fill the
 * legality panel over the deck websocket (protocol v1: see decks/consumers.py). No dependencies. */
(function () {
  "use strict";

  var PROTOCOL = 1;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function title(s) {
    return String(s).replace(/(^|[\s_-])(\w)/g, function (_m, sep, c) { return (sep === "_" ? " " : sep) + c.toUpperCase(); });
  }

  /* --- import form: suggestions replace the card name on their line --------------------- */
  function initSuggestions() {
    var form = document.getElementById("import-form") || document.getElementById("complete-form");
    if (!form) return;
    var textarea = form.querySelector("textarea");
    var errors = document.getElementById("line-errors");
    if (errors) errors.focus({ preventScroll: false });
    form.addEventListener("click", function (event) {
      var button = event.target.closest("button.suggestion");
      if (!button || !textarea) return;
      var lineNo = parseInt(button.getAttribute("data-line"), 10);
      var name = button.getAttribute("data-suggestion");
      var lines = textarea.value.split("\n");
      if (!(lineNo >= 1 && lineNo <= lines.length)) return;
      var m = /^(\s*(?:SB:\s*)?(?:[0-9]+\s*[xX×]?\s+)?)/.exec(lines[lineNo - 1]);
      lines[lineNo - 1] = (m ? m[1] : "") + name;
      textarea.value = lines.join("\n");
      var item = button.closest(".line-error");
      if (item) {
        item.querySelectorAll("button.suggestion").forEach(function (b) { b.classList.remove("applied"); });
        item.classList.add("fixed");
      }
      button.classList.add("applied");
      button.setAttribute("aria-pressed", "true");
    });
  }

  /* --- deck page: legality over the websocket ------------------------------------------ */
  function renderLegality(panel, analysis) {
    var fmt = panel.getAttribute("data-format") || "";
    var formats = analysis.formats || {};
    var legalIn = analysis.legal_in || [];
    panel.textContent = "";

    var p = el("p", { "class": "legal-in" });
    p.appendChild(el("strong", {}, "Legal in:"));
    p.appendChild(document.createTextNode(" "));
    if (legalIn.length) {
      legalIn.forEach(function (f) { p.appendChild(el("span", { "class": "badge status-legal" }, title(f))); });
    } else {
      p.appendChild(el("span", { "class": "muted" }, "no constructed format yet"));
    }
    panel.appendChild(p);

    function problemList(problems) {
      var ul = el("ul", { "class": "problems" });
      problems.forEach(function (prob) { ul.appendChild(el("li", {}, prob.message)); });
      return ul;
    }

    if (fmt) {
      var mine = formats[fmt] || [];
      var verdict = el("p", { "class": "verdict " + (mine.length ? "bad" : "good") });
      verdict.appendChild(el("strong", {}, title(fmt) + ":"));
      verdict.appendChild(document.createTextNode(mine.length
        ? " " + mine.length + " problem" + (mine.length === 1 ? "" : "s") : " legal ✓"));
      panel.appendChild(verdict);
      if (mine.length) panel.appendChild(problemList(mine));
    }
    var others = Object.keys(formats).filter(function (f) { return f !== fmt && formats[f].length; });
    if (others.length) {
      var details = el("details", { "class": "other-formats" });
      details.appendChild(el("summary", {}, "Problems in other formats"));
      others.forEach(function (f) {
        details.appendChild(el("h4", {}, title(f)));
        details.appendChild(problemList(formats[f]));
      });
      panel.appendChild(details);
    }
    panel.setAttribute("data-state", "ready");
  }

  function showError(panel, message) {
    var old = panel.querySelector(".ws-error");
    if (old) old.remove();
    panel.appendChild(el("p", { "class": "ws-error", role: "alert" }, message));
    if (panel.getAttribute("data-state") !== "ready") {
      var pending = panel.querySelector(".pending");
      if (pending) pending.remove();
      panel.setAttribute("data-state", "error");
    }
  }

  function initLegality() {
    var panel = document.getElementById("legality");
    if (!panel || !("WebSocket" in window)) return;
    var deckId = panel.getAttribute("data-deck-id");
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var url = scheme + window.location.host + "/ws/decks/" + deckId + "/";
    var socket;
    var gotAnswer = false;
    try {
      socket = new WebSocket(url);
    } catch (err) {
      showError(panel, "Live updates are unavailable: " + err.message);
      return;
    }
    panel.setAttribute("data-ws", "connecting");
    socket.addEventListener("open", function () {
      panel.setAttribute("data-ws", "open");
      if (panel.getAttribute("data-state") !== "ready") {
        socket.send(JSON.stringify({ v: PROTOCOL, action: "analyze" }));
      }
    });
    socket.addEventListener("message", function (event) {
      var msg;
      try { msg = JSON.parse(event.data); } catch (err) { return; }
      if (!msg || msg.v !== PROTOCOL) return;
      if (msg.type === "analysis" && msg.analysis) {
        gotAnswer = true;
        renderLegality(panel, msg.analysis);
        panel.setAttribute("data-ws", "received");
      } else if (msg.type === "queued") {
        panel.setAttribute("data-ws", "queued");
      } else if (msg.type === "error") {
        gotAnswer = true;
        showError(panel, msg.message || "The analysis failed.");
        panel.setAttribute("data-ws", "error");
      }
    });
    socket.addEventListener("close", function (event) {
      if (!gotAnswer && panel.getAttribute("data-state") !== "ready") {
        showError(panel, event.code === 4404 ? "This deck no longer exists."
          : "Lost the connection before the analysis arrived; reload the page to try again.");
      }
      if (panel.getAttribute("data-ws") !== "received") panel.setAttribute("data-ws", "closed");
    });
  }

  /* --- completion form: the sampler applies to Manamorphosis only ----------------------- */
  function initModelChoice() {
    var model = document.getElementById("id_model");
    var sampler = document.getElementById("sampler-field");
    if (!model || !sampler) return;
    function sync() { sampler.hidden = model.value !== "manamorphosis"; }
    model.addEventListener("change", sync);
    sync();
  }

  function init() {
    initSuggestions();
    initLegality();
    initModelChoice();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
