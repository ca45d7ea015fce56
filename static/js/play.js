/* A game against the AI with a live advisor: one websocket (protocol: docs/game-advice.md).
   The server holds the truth and sends this page only what your seat may see; this page shows it,
   sends one action per click (with the revision it saw and an id, so a resend after a reconnect is
   never applied twice) and asks the advisor about every decision that has a choice. */
(function () {
  "use strict";
  const cfg = window.GAME;
  const $ = (id) => document.getElementById(id);
  const {el, newId} = Live;
  const slot = Live.pendingSlot("game-pending-" + cfg.id);
  let view = JSON.parse(document.getElementById("game-initial").textContent);
  let live = null, advice = null, askedFor = null;
  let pending = slot.get();

  function showError(text) { const box = $("game-error"); box.textContent = text || ""; box.hidden = !text; }

  // --- socket -------------------------------------------------------------------------------------
  function send(msg) { if (live) live.send(msg); }

  function handle(msg) {
    if (msg.type === "game") {
      if (view && msg.revision < view.revision) return;
      const changed = !view || msg.revision !== view.revision;
      view = msg;
      if (pending && pending.revision !== view.revision) clearPending();
      if (changed) { advice = view.advice || null; }
      render();
      maybeAdvise();
    } else if (msg.type === "acted") {
      if (pending && pending.client_action_id === msg.client_action_id) clearPending();
    } else if (msg.type === "advice") {
      if (!view || msg.revision !== view.revision) return;
      advice = msg;
      renderAdvice();
    } else if (msg.type === "error") {
      if (msg.context === "advice") {
        if (!view || msg.revision === undefined || msg.revision === view.revision) {
          $("advice-status").textContent = "Advisor: " + msg.message;
        }
        return;
      }
      if (pending && (!msg.client_action_id || msg.client_action_id === pending.client_action_id)) clearPending();
      showError(msg.message);
      renderActions();
    }
  }
  function clearPending() { pending = slot.clear(); }

  // --- the board ------------------------------------------------------------------------------------
  function cardNode(card) {
    const classes = ["game-card"];
    if (card.tapped) classes.push("tapped");
    const node = el("div", {"class": classes.join(" "), "data-card": card.name, title: card.name + (card.tapped ? " (tapped)" : "")});
    node.append(el("span", {"class": "card-name"}, card.name));
    if (card.power !== undefined && card.power !== null) {
      node.append(el("span", {"class": "pt"}, card.power + "/" + card.toughness + (card.damage ? " · " + card.damage + " dmg" : "")));
    }
    if (card.counters && Object.keys(card.counters).length) {
      node.append(el("span", {"class": "counters"}, Object.entries(card.counters).map(([k, v]) => v + " " + k).join(", ")));
    }
    return node;
  }
  function fillZone(node, cards, empty) {
    node.replaceChildren(...(cards.length ? cards.map(cardNode) : [el("span", {"class": "empty"}, empty)]));
  }
  function fillNames(node, cards) { node.replaceChildren(...cards.map((c) => el("li", {}, c.name))); }

  function render() {
    if (!view) return;
    const board = view.board;
    const me = board.players.find((p) => p.seat === view.you);
    const opp = board.players.find((p) => p.seat !== view.you);
    $("my-life").textContent = me.life;
    $("opp-life").textContent = opp.life;
    $("my-counts").textContent = "library " + me.library + " · hand " + me.hand_count + (me.poison ? " · poison " + me.poison : "");
    $("opp-counts").textContent = "library " + opp.library + " · hand " + opp.hand_count + (opp.poison ? " · poison " + opp.poison : "");
    fillZone($("my-battlefield"), me.battlefield, "no permanents");
    fillZone($("opp-battlefield"), opp.battlefield, "no permanents");
    fillZone($("my-hand"), me.hand || [], "no cards in hand");
    fillNames($("my-graveyard"), me.graveyard); $("my-grave-count").textContent = me.graveyard.length;
    fillNames($("opp-graveyard"), opp.graveyard); $("opp-grave-count").textContent = opp.graveyard.length;
    const yourTurn = board.active_player === view.you;
    $("turn-info").textContent = "Turn " + (board.turn || 0) + (yourTurn ? " · your turn" : " · the AI's turn");
    $("phase-info").textContent = board.phase || "";
    const stack = $("stack");
    stack.replaceChildren(...board.stack.slice().reverse().map((s) =>
      el("li", {}, s.name + (s.controller === view.you ? " (yours)" : " (the AI's)"))));
    $("stack-panel").classList.toggle("has-stack", board.stack.length > 0);
    renderActions();
    renderLog();
    renderAdvice();
  }

  function promptText() {
    const type = (view.board.prompt || {}).type || "";
    const words = {Priority: "You have priority", MulliganDecision: "Keep or mulligan", DeclareAttackers: "Declare attackers",
      DeclareBlockers: "Declare blockers", TargetSelection: "Choose a target", GameOver: "The game is over"};
    return words[type] || type.replace(/([a-z])([A-Z])/g, "$1 $2");
  }

  function renderActions() {
    if (!view) return;
    const box = $("actions");
    const over = view.status === "finished";
    $("game-over").hidden = !over;
    if (over) {
      const r = view.result || {};
      $("game-over").textContent = r.you_won ? "You won!" : r.draw ? "The game is a draw." : "The AI won.";
    }
    $("decision-prompt").textContent = over ? "" : view.your_decision ? promptText() :
      view.provisional ? "The AI is thinking…" : "Waiting for the AI…";
    const best = advice && advice.recommendation ? advice.recommendation.action.key : null;
    // Identical land drops (three "Play Mountain") are one button; it plays the recommended copy if any.
    const groups = [];
    const byLabel = {};
    view.actions.forEach((a) => {
      if (a.type === "PlayLand" && byLabel[a.label]) { byLabel[a.label].keys.push(a.key); return; }
      const g = {label: a.label, type: a.type, keys: [a.key]};
      if (a.type === "PlayLand") byLabel[a.label] = g;
      groups.push(g);
    });
    box.replaceChildren(...groups.map((g) => {
      const b = el("button", {type: "button", "class": "button action" + (g.keys.includes(best) ? " recommended" : ""),
        "data-key": g.keys[0], "data-type": g.type}, g.label);
      b.dataset.keys = JSON.stringify(g.keys);
      if (pending) b.disabled = true;
      if (pending && g.keys.includes(pending.key)) b.classList.add("chosen");
      b.addEventListener("click", () => act(g.keys.includes(best) ? best : g.keys[0]));
      return b;
    }));
    // "Pass to end of turn" / "Pass until my turn": a pass the server repeats for you (docs/game-advice.md)
    const pass = view.actions.find((a) => a.type === "PassPriority");
    const until = $("pass-until");
    until.hidden = over || !pass;
    until.querySelectorAll("button").forEach((b) => {
      b.disabled = !!pending;
      b.onclick = pass ? () => act(pass.key, b.dataset.until) : null;
    });
  }

  function renderLog() {
    const list = $("log");
    list.replaceChildren(...view.log.slice().reverse().map((e) =>
      el("li", {"class": "log-" + e.who}, (e.who === "you" ? "You: " : e.who === "ai" ? "AI: " : "") + e.text)));
  }

  function act(key, passUntil) {
    if (pending || !view || view.status !== "playing") return;  // one click = one action
    const msg = {v: 1, action: "act", key: key, revision: view.revision, client_action_id: newId()};
    if (passUntil) msg.pass_until = passUntil;
    pending = slot.set(msg);
    showError("");
    renderActions();
    send(pending);
  }

  // --- the advisor --------------------------------------------------------------------------------------
  function maybeAdvise() {
    if (!view || !view.your_decision || view.status !== "playing" || !$("advice-auto").checked) return;
    if (view.actions.length < 2) return;  // a forced decision needs no advice
    if (askedFor === view.revision || (advice && advice.done)) return;
    ask();
  }
  function ask() {
    if (!view) return;
    askedFor = view.revision;
    advice = null;
    $("advice-status").textContent = "Thinking…";
    $("advice-body").hidden = true;
    send({v: 1, action: "advise", revision: view.revision, level: $("advice-level").value || undefined,
      algorithm: $("advice-algorithm").value || undefined});
  }

  function renderAdvice() {
    const body = $("advice-body");
    const rec = advice && advice.recommendation;
    if (!rec) { body.hidden = true; if (!advice) $("advice-status").textContent = view && view.your_decision ? ($("advice-status").textContent || "No advice yet.") : "Waiting for your next decision."; return; }
    body.hidden = false;
    $("advice-status").textContent = advice.done ? "Done" + (rec.forced ? " (the only legal action)" : "") : (rec.vote ? "Thinking… (updates as the copies vote)" : "Thinking… (updates as the search deepens)");
    $("advice-status").dataset.done = advice.done ? "yes" : "no";
    $("advice-action").textContent = rec.action.label;
    const play = $("advice-play");
    play.hidden = !rec.playable || !!pending;
    play.onclick = () => act(rec.action.key);
    // the learned value model's estimate of the position when the server has one (better calibrated:
    // docs/game-advice.md), else the search's value of the recommended action
    const learned = advice.position_estimate !== null && advice.position_estimate !== undefined;
    const win = learned ? advice.position_estimate :
      (rec.win_estimate === null || rec.win_estimate === undefined ? null : rec.win_estimate);
    $("advice-win").value = win === null ? 0.5 : win;
    $("advice-win-text").textContent = win === null ? "–" : Math.round(win * 100) + "%";
    $("advice-win-source").textContent = win === null ? "" : (learned ? "value model" : "search");
    $("advice-line").replaceChildren(...rec.line.map((s) => el("li", {}, s)));
    $("advice-alternatives").replaceChildren(...rec.alternatives.map((a) => {
      const tr = el("tr", {"class": a.key === rec.action.key ? "best" : ""});
      const share = a.share === null || a.share === undefined ? "–" : Math.round(a.share * 100) + "% (" + a.votes + ")";
      tr.append(el("td", {}, a.label), el("td", {"class": "vote-share"}, share),
        el("td", {}, a.visits === null || a.visits === undefined ? "–" : String(a.visits)),
        el("td", {}, a.value === null || a.value === undefined ? "–" : a.value.toFixed(3)));
      return tr;
    }));
    // a vote level: how many copies voted, whether the search ran, and the fallback, never silent
    const vote = rec.vote, voteLine = $("advice-vote");
    voteLine.hidden = !vote;
    if (vote) {
      voteLine.textContent = vote.fallback ? vote.fallback + " (the engine's " + vote.engine_level + " AI, counted)" :
        vote.engine_level + " on " + vote.copies + " of up to " + vote.max_copies + " honest copies · " +
        (vote.split ? "split" : "unanimous") +
        (vote.searched ? " · searched where split (" + vote.search_level + ")" :
          (vote.split && vote.search_level && advice.done ? " · not searched" : "")) +
        (vote.tie_break ? " · tie broken by the engine's evaluation" : "") +
        (vote.out_of_time && advice.done ? " · stopped at its time budget" : "") +
        (vote.cut_off ? " · " + vote.cut_off + " call(s) at the engine's 1.5 s cap" : "") +
        (vote.refused ? " · " + vote.refused + " copy(ies) refused" : "");
      voteLine.dataset.fallback = vote.fallback ? "yes" : "no";
    }
    $("advice-stats").textContent = rec.algorithm + (rec.simulations ? " · " + rec.simulations + " simulations" : "") +
      (rec.workers > 1 ? " on " + rec.workers + " workers" : "") + " · " + rec.elapsed.toFixed(2) + " s";
    document.querySelectorAll("#actions .action").forEach((b) =>
      b.classList.toggle("recommended", JSON.parse(b.dataset.keys || "[]").includes(rec.action.key)));
  }

  $("advice-ask").addEventListener("click", () => ask());
  $("advice-stop").addEventListener("click", () => { send({v: 1, action: "stop"}); $("advice-status").textContent = "Stopped."; });
  const auto = $("advice-auto");
  auto.checked = localStorage.getItem("game-advice-auto") !== "off";
  auto.addEventListener("change", () => { localStorage.setItem("game-advice-auto", auto.checked ? "on" : "off"); maybeAdvise(); });
  ["advice-level", "advice-algorithm"].forEach((id) => {
    const sel = $(id);
    const saved = localStorage.getItem("game-" + id);
    if (saved && [...sel.options].some((o) => o.value === saved)) sel.value = saved;
    sel.addEventListener("change", () => { localStorage.setItem("game-" + id, sel.value); if (view && view.your_decision) ask(); });
  });

  if (view) { advice = view.advice || null; render(); }
  // The server sends the view on connect, which asks the advisor; an unanswered action is resent with
  // its id (applied at most once).
  live = Live.socket({path: cfg.ws, onMessage: handle, onOpen: () => { askedFor = null; }, unanswered: () => pending,
                      closed: {4404: "no such game", 4403: "not your game"}});
})();
