/* Online draft pod: one websocket per seat (protocol: docs/websockets.md). The server holds the
   truth; this page only shows what its seat is sent and resends an unanswered pick with the same
   client_pick_id after a reconnect, so a pick is never lost or made twice. */
(function () {
  "use strict";
  const cfg = window.POD;
  const initial = JSON.parse(document.getElementById("pod-initial").textContent);
  const $ = (id) => document.getElementById(id);
  const COLORS = {W: "White", U: "Blue", B: "Black", R: "Red", G: "Green", M: "Multicolour", C: "Colourless"};
  const {el, newId} = Live;
  const slot = Live.pendingSlot("pod-pending-" + cfg.draft);
  let status = initial.status, view = initial.view, live = null, skew = 0;
  let pending = slot.get();

  function showError(text) { const box = $("pod-error"); box.textContent = text || ""; box.hidden = !text; }

  // --- socket ---------------------------------------------------------------------------------
  function send(msg) { if (live) live.send(msg); }

  function handle(msg) {
    if (msg.type === "status") { status = msg; renderStatus(); }
    else if (msg.type === "seat") {
      if (msg.seat !== cfg.seat) return;
      view = msg;
      if (pending && (pending.pack_number !== msg.pack_number || pending.pick_number !== msg.pick_number || msg.complete)) clearPending();
      renderView();
    } else if (msg.type === "picked") {
      if (pending && pending.client_pick_id === msg.client_pick_id) clearPending();
    } else if (msg.type === "error") {
      if (pending && msg.client_pick_id === pending.client_pick_id) clearPending();
      showError(msg.message);
    } else if (msg.type === "pong") {
      skew = msg.t - Date.now() / 1000;
    }
  }
  function clearPending() { pending = slot.clear(); }

  // --- lobby and status -------------------------------------------------------------------------
  function renderStatus() {
    const list = $("seat-list");
    list.replaceChildren(...status.seats.map((s) => {
      const li = el("li", {"class": "seat seat-" + s.kind, "data-seat": s.seat});
      const name = s.kind === "open" ? "open seat" : s.name;
      li.append(el("span", {"class": "seat-name"}, name + (s.seat === cfg.seat ? " (you)" : "") + (s.seat === status.host_seat ? " · host" : "")));
      if (s.kind === "human") li.append(el("span", {"class": "dot " + (s.connected ? "on" : "off"), title: s.connected ? "connected" : "away"}));
      if (status.status !== "open") {
        const picking = s.packs_waiting > 0;
        li.append(el("span", {"class": "seat-state " + (picking ? "picking" : "waiting")},
          s.picks + (s.picks === 1 ? " pick · " : " picks · ") + (status.complete ? "done" : picking ? "picking" + (s.packs_waiting > 1 ? " (" + s.packs_waiting + " packs waiting)" : "") : "waiting")));
      }
      return li;
    }));
    const start = $("start-button");
    if (start) start.parentElement.hidden = status.status !== "open";
    if (status.status !== "open") {
      const join = $("join-form"); if (join) join.hidden = true;
      const wait = $("wait-host"); if (wait) wait.hidden = true;
    }
    if (status.status === "drafting" && cfg.seat !== null && (!view || view.lobby)) send({v: 1, action: "sync"});
    if (!view || view.lobby) return;
    const behind = status.seats.filter((s) => s.packs_waiting > 0 && s.seat !== cfg.seat).map((s) => s.name);
    if ($("waiting-on")) $("waiting-on").textContent = behind.length ? "Still picking: " + behind.join(", ") : "";
  }

  // --- the seat -------------------------------------------------------------------------------------
  function cardNode(card, rank) {
    const li = el("li", {"class": "card-tile", "data-card": card.name});
    const button = el("button", {type: "button", "class": "card-button c-" + (card.colors.length > 1 ? "M" : card.colors || "C"),
      "aria-label": "Pick " + card.name});
    if (navigator.onLine) {
      const img = el("img", {alt: "", loading: "lazy", src: "https://api.scryfall.com/cards/named?format=image&version=small&exact=" + encodeURIComponent(card.name)});
      img.onerror = () => { img.remove(); button.classList.remove("has-image"); };
      img.onload = () => button.classList.add("has-image");
      button.append(img);
    }
    const text = el("span", {"class": "card-text"});
    text.append(el("span", {"class": "card-name"}, card.name), el("span", {"class": "card-cost"}, card.cost || ""),
      el("span", {"class": "card-type"}, card.type + (card.rarity ? " · " + card.rarity : "")));
    button.append(text);
    if (rank) button.append(el("span", {"class": "rank", title: "the bot's rank"}, "#" + rank));
    const sim = rank && view.sim && view.sim[card.name];
    if (sim) button.append(el("span", {"class": "sim-rating", title: "win rate when drawn in simulated bot pods"}, sim.label));
    button.addEventListener("click", () => pick(card.name));
    li.append(button);
    return li;
  }

  function renderView() {
    if (!view || view.lobby) return;
    $("drafting").hidden = !!view.complete;
    $("done").hidden = !view.complete;
    $("lobby").classList.toggle("compact", true);
    if (view.complete) {
      const plot = $("history-plot");
      if (plot.hidden) { plot.src = plot.dataset.src; plot.hidden = false; }
    }
    $("pack-no").textContent = view.pack_number + 1;
    $("pick-no").textContent = view.pick_number + 1;
    $("pass-direction").textContent = view.pass_direction === "left" ? "← passing left" : "passing right →";
    const ranks = {};
    (view.suggestions || []).forEach(([name], i) => { if (!(name in ranks)) ranks[name] = i + 1; });
    const show = $("show-suggestions").checked;
    const pack = $("pack");
    if (view.pack) {
      pack.replaceChildren(...view.pack.map((c) => cardNode(c, show ? ranks[c.name] : null)));
      if (pending) markPending();
    } else pack.replaceChildren();
    $("waiting").hidden = !!view.pack || !!view.complete;
    const sug = $("suggestions");
    sug.hidden = !show || !view.suggestions;
    sug.replaceChildren(...(view.suggestions || []).slice(0, 3).map(([name, score]) =>
      el("li", {}, name + " (" + score.toFixed(2) + ")" + (view.sim && view.sim[name] ? " · " + view.sim[name].label : ""))));
    renderPool();
    renderStatus();
  }

  function renderPool() {
    const groups = {};
    const curve = [0, 0, 0, 0, 0, 0, 0];
    view.pool.forEach((c) => {
      const key = c.colors.length > 1 ? "M" : (c.colors || "C");
      (groups[key] = groups[key] || []).push(c);
      if (!/Land/.test(c.type)) curve[Math.min(6, Math.max(0, Math.round(c.mv)))] += 1;
    });
    $("pool-count").textContent = "(" + view.pool.length + ")";
    $("pool").replaceChildren(...["W", "U", "B", "R", "G", "M", "C"].filter((k) => groups[k]).map((k) => {
      const box = el("div", {"class": "pool-group", "data-color": k});
      box.append(el("h3", {}, COLORS[k] + " (" + groups[k].length + ")"));
      const ul = el("ul", {});
      groups[k].sort((a, b) => a.mv - b.mv || a.name.localeCompare(b.name))
        .forEach((c) => ul.append(el("li", {}, c.name + (c.cost ? " " + c.cost : ""))));
      box.append(ul);
      return box;
    }));
    const most = Math.max(1, ...curve);
    $("curve").replaceChildren(...curve.map((n, mv) => {
      const bar = el("div", {"class": "bar", title: n + " card(s) of mana value " + (mv === 6 ? "6+" : mv)});
      bar.append(el("span", {"class": "fill", style: "height:" + Math.round(100 * n / most) + "%"}),
        el("span", {"class": "n"}, String(n)), el("span", {"class": "mv"}, mv === 6 ? "6+" : String(mv)));
      return bar;
    }));
  }

  function pick(name) {
    if (pending || !view || !view.pack) return;  // one click = one pick
    pending = slot.set({v: 1, action: "pick", card: name, pack_number: view.pack_number, pick_number: view.pick_number,
                        client_pick_id: newId()});
    markPending();
    showError("");
    send(pending);
  }
  function markPending() {
    document.querySelectorAll("#pack .card-tile").forEach((li) => {
      li.classList.toggle("chosen", li.dataset.card === pending.card);
      li.querySelector("button").disabled = true;
    });
  }

  // --- timer ------------------------------------------------------------------------------------------
  setInterval(() => {
    const t = $("timer");
    if (!t) return;
    if (!view || !view.deadline || !view.pack || view.complete) { t.hidden = true; return; }
    const left = Math.max(0, Math.round(view.deadline - (Date.now() / 1000 + skew)));
    t.hidden = false;
    t.textContent = left + " s";
    t.classList.toggle("urgent", left <= 10);
  }, 250);

  const start = $("start-button");
  if (start) start.addEventListener("click", () => { start.disabled = true; send({v: 1, action: "start"}); setTimeout(() => { start.disabled = false; }, 3000); });
  const toggle = $("show-suggestions");
  if (toggle) {
    toggle.checked = localStorage.getItem("pod-suggestions") !== "off";
    toggle.addEventListener("change", () => { localStorage.setItem("pod-suggestions", toggle.checked ? "on" : "off"); renderView(); });
  }
  renderStatus();
  renderView();
  // A ping on connect measures the clock skew for the timer; an unanswered pick is resent with its
  // client_pick_id (applied at most once).
  live = Live.socket({path: cfg.ws, onMessage: handle, onOpen: () => send({v: 1, action: "ping"}), unanswered: () => pending,
                      closed: {4404: "this pod does not exist"}});
})();
