/* Draft deck building: move cards between deck and sideboard (click or drag), set basic lands,
   auto-build again, export as Arena/MTGO text and save as a deck. The server checks every save and
   export against the pool. */
(function () {
  "use strict";
  const cfg = window.BUILDER;
  const initial = JSON.parse(document.getElementById("builder-state").textContent);
  const $ = (id) => document.getElementById(id);
  const cards = initial.cards;
  const auto = initial.auto;
  let state = {main: expand(initial.current.main), side: expand(initial.current.side), lands: Object.assign({}, initial.current.lands)};

  function expand(pairs) { const out = []; pairs.forEach(([n, c]) => { for (let i = 0; i < c; i++) out.push(n); }); return out; }
  function pairs(list) { const m = new Map(); list.forEach((n) => m.set(n, (m.get(n) || 0) + 1)); return [...m.entries()]; }
  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, v));
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function say(text, bad) { const m = $("builder-message"); m.textContent = text; m.className = bad ? "error-text" : "muted"; }

  function move(name, from) {
    const to = from === "main" ? "side" : "main";
    const i = state[from].indexOf(name);
    if (i < 0) return;
    state[from].splice(i, 1);
    state[to].push(name);
    render();
  }

  function board(id) {
    const ul = $(id + "-board");
    const sorted = pairs(state[id]).sort((a, b) => (cards[a[0]].mv - cards[b[0]].mv) || a[0].localeCompare(b[0]));
    ul.replaceChildren(...sorted.map(([name, n]) => {
      const c = cards[name];
      const li = el("li", {"class": "board-card c-" + (c.colors.length > 1 ? "M" : c.colors || "C"), draggable: "true", "data-card": name});
      const b = el("button", {type: "button", title: id === "main" ? "Move to the sideboard" : "Move to the deck"});
      b.append(el("span", {"class": "n"}, n + "×"), el("span", {"class": "card-name"}, name), el("span", {"class": "card-cost"}, c.cost || ""));
      b.addEventListener("click", () => move(name, id));
      li.addEventListener("dragstart", (e) => { e.dataTransfer.setData("text/plain", JSON.stringify({name, from: id})); });
      li.append(b);
      return li;
    }));
  }

  // Cards the rules engine cannot play (a game of "Play your pod" needs a deck without them): named, with a swap
  // for the best playable cards of the pool (its auto-build without them).
  const unplayable = new Set(initial.unplayable || []);
  function engineNotice() {
    const box = $("engine-notice");
    if (!box) return;
    const bad = [...new Set(state.main.filter((n) => unplayable.has(n)))];
    box.hidden = !bad.length;
    $("engine-cards").textContent = bad.join(", ");
  }
  function swapUnplayable() {
    const wanted = (initial.playable || []).filter((n) => !unplayable.has(n));
    const swapped = [];
    state.main.filter((n) => unplayable.has(n)).forEach((name) => {
      move(name, "main");
      const inn = wanted.find((n) => state.side.includes(n) && !state.main.includes(n)) ||
        wanted.find((n) => state.side.includes(n));
      if (inn) { move(inn, "side"); swapped.push(name + " → " + inn); } else swapped.push(name + " → (none left)");
    });
    render();
    say("Swapped: " + swapped.join("; "), false);
  }
  if ($("engine-swap")) $("engine-swap").addEventListener("click", swapUnplayable);

  function render() {
    engineNotice();
    board("main"); board("side");
    const lands = Object.values(state.lands).reduce((a, b) => a + b, 0);
    $("main-count").textContent = state.main.length + lands;
    $("side-count").textContent = state.side.length;
    $("land-count").textContent = lands;
    const curve = [0, 0, 0, 0, 0, 0, 0];
    state.main.forEach((n) => { if (!/Land/.test(cards[n].type)) curve[Math.min(6, Math.round(cards[n].mv))] += 1; });
    const most = Math.max(1, ...curve);
    $("curve").replaceChildren(...curve.map((n, mv) => {
      const bar = el("div", {"class": "bar", title: n + " at mana value " + (mv === 6 ? "6+" : mv)});
      bar.append(el("span", {"class": "fill", style: "height:" + Math.round(100 * n / most) + "%"}), el("span", {"class": "n"}, String(n)),
        el("span", {"class": "mv"}, mv === 6 ? "6+" : String(mv)));
      return bar;
    }));
    $("lands").replaceChildren(...Object.keys(state.lands).map((name) => {
      const label = el("label", {"class": "land"}, name + " ");
      const input = el("input", {type: "number", min: "0", max: "30", value: String(state.lands[name]), "data-land": name, "aria-label": name});
      input.addEventListener("change", () => { state.lands[name] = Math.max(0, Math.min(30, parseInt(input.value, 10) || 0)); render(); });
      label.append(input);
      return label;
    }));
  }

  ["main-zone", "side-zone"].forEach((zone) => {
    const z = $(zone);
    z.addEventListener("dragover", (e) => { e.preventDefault(); z.classList.add("over"); });
    z.addEventListener("dragleave", () => z.classList.remove("over"));
    z.addEventListener("drop", (e) => {
      e.preventDefault(); z.classList.remove("over");
      try { const d = JSON.parse(e.dataTransfer.getData("text/plain")); if (d.from !== z.dataset.board) move(d.name, d.from); } catch (err) { /* not a card */ }
    });
  });

  function body(format) {
    return JSON.stringify({main: pairs(state.main), side: pairs(state.side), lands: state.lands, format: format || ""});
  }
  async function post(format) {
    const r = await fetch(cfg.save, {method: "POST", headers: {"Content-Type": "application/json", "X-CSRFToken": cfg.csrf}, body: body(format)});
    const data = await r.json().catch(() => ({error: "the server answered " + r.status}));
    if (!r.ok) throw new Error(data.error || ("error " + r.status));
    return data;
  }
  async function exportAs(format) {
    try {
      const data = await post(format);
      $("export-panel").hidden = false;
      $("export-title").textContent = format === "arena" ? "MTG Arena" : "MTGO (.txt)";
      $("export-text").value = data.text;
      say((data.warnings || []).join("; "), false);
    } catch (err) { say(err.message, true); }
  }
  $("export-arena").addEventListener("click", () => exportAs("arena"));
  $("export-mtgo").addEventListener("click", () => exportAs("mtgo"));
  $("copy-export").addEventListener("click", () => { $("export-text").select(); navigator.clipboard && navigator.clipboard.writeText($("export-text").value); });
  $("save-deck").addEventListener("click", async () => {
    try {
      const data = await post("");
      const msg = $("builder-message");
      msg.className = "muted";
      msg.replaceChildren(document.createTextNode("Saved. "), el("a", {href: data.deck_url, id: "saved-deck-link"}, "Open the deck"),
        document.createTextNode((data.warnings || []).length ? " (" + data.warnings.join("; ") + ")" : ""));
    } catch (err) { say(err.message, true); }
  });
  $("auto-build").addEventListener("click", () => {
    state = {main: expand(auto.main), side: expand(auto.side), lands: Object.assign({}, auto.lands)};
    render();
    say("Auto-built: the best two colours, about 23 spells and 17 lands.", false);
  });
  render();
})();
