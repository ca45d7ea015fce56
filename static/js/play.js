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
      if (msg.context === "concede") { showError(msg.message); return; }
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
  // A card: its name and, where its controller has more than one of that name, the tag the actions name it by
  // ("Hired Claw #2"); power/toughness, damage, counters in words. data-id: the actions naming it light it up.
  function cardNode(card) {
    const classes = ["game-card"];
    if (card.tapped) classes.push("tapped");
    const name = card.name + (card.tag ? " #" + card.tag : "");
    const node = el("div", {"class": classes.join(" "), "data-card": card.name, "data-id": card.id,
      title: name + (card.tapped ? " (tapped)" : "")});
    node.append(el("span", {"class": "card-name"}, card.name));
    if (card.tag) node.append(el("span", {"class": "card-tag"}, "#" + card.tag));
    if (card.power !== undefined && card.power !== null) {
      node.append(el("span", {"class": "pt"}, card.power + "/" + card.toughness + (card.damage ? " · " + card.damage + " damage" : "")));
    }
    if (card.counters_text) node.append(el("span", {"class": "counters"}, card.counters_text));
    if (card.tapped) node.append(el("span", {"class": "tapped-note"}, "tapped"));
    return node;
  }
  // Light up the cards an action (or an advice row) names while the pointer is on it.
  function lightUp(ids, on) {
    (ids || []).forEach((id) => document.querySelectorAll('.game-card[data-id="' + id + '"]').forEach((c) => c.classList.toggle("lit", on)));
  }
  function hoverLights(node, ids) {
    if (!ids || !ids.length) return;
    node.addEventListener("mouseenter", () => lightUp(ids, true));
    node.addEventListener("mouseleave", () => lightUp(ids, false));
    node.addEventListener("focus", () => lightUp(ids, true));
    node.addEventListener("blur", () => lightUp(ids, false));
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
    renderResult();
    renderActions();
    renderLog();
    renderAdvice();
  }

  function promptText() {
    const type = (view.board.prompt || {}).type || "";
    const words = {Priority: "You have priority", MulliganDecision: "Keep or mulligan", DeclareAttackers: "Declare attackers",
      DeclareBlockers: "Declare blockers", TargetSelection: "Choose a target", TriggerTargetSelection: "Choose a target",
      ChooseOneOfBranch: "Choose a mode", OrderTriggers: "Order your triggers", ScryChoice: "Scry",
      OptionalEffectChoice: "Use an optional effect?", UnlessPayment: "Pay, or let it happen?",
      DiscardToHandSize: "Discard down to your hand size", GameOver: "The game is over"};
    return words[type] || type.replace(/([a-z])([A-Z])/g, "$1 $2");
  }

  // The end: the result, the final board (the view's board: as it stood when the game ended) and the review
  // link, shown as soon as the finished view arrives over the socket.
  function renderResult() {
    const over = view.status === "finished";
    const r = view.result || {};
    $("result-panel").hidden = !over;
    $("review-link").hidden = !over;
    $("concede-box").hidden = over;
    if (!over) return;
    $("result-text").textContent = r.conceded ? "You conceded: the AI won." : r.you_won ? "You won!" :
      r.draw ? "The game is a draw." : "The AI won.";
    const me = view.board.players.find((p) => p.seat === view.you);
    const opp = view.board.players.find((p) => p.seat !== view.you);
    $("result-detail").textContent = "Turn " + (view.board.turn || view.turn || 0) + " · your life " + me.life +
      ", the AI's " + opp.life + ". The board below is as it stood when the game ended.";
  }

  function renderActions() {
    if (!view) return;
    const box = $("actions");
    const over = view.status === "finished";
    $("game-over").hidden = !over;
    if (over) $("game-over").textContent = $("result-text").textContent;
    $("decision-prompt").textContent = over ? "" : view.your_decision ? promptText() :
      view.provisional ? "The AI is thinking…" : "Waiting for the AI…";
    const rec = liveAdvice();
    const best = rec ? rec.action.key : null;
    // Interchangeable copies (three Mountains in hand: "Play Mountain (copy 1)" ...) are one button with their
    // shared label ("group"); it plays the recommended copy if any. Every other action has a button of its own,
    // its label unique in the decision; the cards it names light up while the pointer is on it.
    const groups = [];
    const byGroup = {};
    view.actions.forEach((a) => {
      if (a.group && byGroup[a.group]) { byGroup[a.group].keys.push(a.key); return; }
      const g = {label: a.group || a.label, type: a.type, keys: [a.key], objects: a.objects || []};
      if (a.group) byGroup[a.group] = g;
      groups.push(g);
    });
    box.replaceChildren(...groups.map((g) => {
      const b = el("button", {type: "button", "class": "button action" + (g.keys.includes(best) ? " recommended" : ""),
        "data-key": g.keys[0], "data-type": g.type, "data-objects": g.objects.join(" ")}, g.label);
      b.dataset.keys = JSON.stringify(g.keys);
      if (pending) b.disabled = true;
      if (pending && g.keys.includes(pending.key)) b.classList.add("chosen");
      b.addEventListener("click", () => act(g.keys.includes(best) ? best : g.keys[0]));
      hoverLights(b, g.objects);
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

  // The advice for the decision on screen, or null: an advice message is tied to the revision it was asked for,
  // and one for an older revision (the game moved on) is never shown as live.
  function liveAdvice() {
    const rec = advice && advice.recommendation;
    return rec && view && advice.revision === view.revision ? rec : null;
  }
  function offered(key) { return !!view && view.actions.some((a) => a.key === key); }
  // An advice row or the recommendation by the words of its button: interchangeable copies by their shared text.
  function said(key, label) {
    const a = view && view.actions.find((x) => x.key === key);
    return a && a.group ? a.group : label;
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

  // What the win estimate line shows: {value (the meter), text, source, uncertain}.
  function winEstimate(advice, rec) {
    const pct = (p) => Math.round(p * 100) + "%";
    const learned = advice.position_estimate !== null && advice.position_estimate !== undefined;
    if (learned) {
      const p = advice.position_estimate, low = advice.position_low, high = advice.position_high;
      const by = advice.position_source || "value model, calibrated";
      const span = low !== null && low !== undefined && high !== null && high !== undefined && advice.position_copies > 1 ?
        pct(low) + "–" + pct(high) + " over " + advice.position_copies + " copies" : "";
      if (advice.position_uncertain) {
        return {value: 0.5, text: "uncertain", uncertain: true,
          source: "the copies disagree (" + span + "); " + by};
      }
      return {value: p, text: pct(p), uncertain: false,
        source: (span ? span + " · " : "") + by};
    }
    const win = rec.win_estimate === null || rec.win_estimate === undefined ? null : rec.win_estimate;
    return {value: win === null ? 0.5 : win, text: win === null ? "–" : pct(win), uncertain: false,
      source: win === null ? "" : "search"};
  }

  function renderAdvice() {
    const body = $("advice-body");
    if (advice && view && advice.revision !== view.revision) advice = null;  // asked for a decision since gone
    const rec = liveAdvice();
    if (!rec) { body.hidden = true; $("advice-play").hidden = true; if (!advice) $("advice-status").textContent = view && view.your_decision ? ($("advice-status").textContent || "No advice yet.") : "Waiting for your next decision."; return; }
    body.hidden = false;
    $("advice-status").textContent = advice.done ? "Done" + (rec.forced ? " (the only legal action)" : "") : (rec.vote ? "Thinking… (updates as the copies vote)" : "Thinking… (updates as the search deepens)");
    $("advice-status").dataset.done = advice.done ? "yes" : "no";
    $("advice-action").textContent = said(rec.action.key, rec.action.label);
    const play = $("advice-play");
    // "Play it" only for this decision's advice, an action still offered, nothing else on its way
    play.hidden = !rec.playable || !!pending || !view.your_decision || !offered(rec.action.key);
    play.onclick = () => { if (liveAdvice() === rec && offered(rec.action.key)) act(rec.action.key); };
    // the calibrated value model's estimate of the position when the server has one (docs/game-advice.md), with
    // its spread over the honest copies; "uncertain" instead of a number when the copies disagree; else the
    // search's value of the recommended action
    const shown = winEstimate(advice, rec);
    $("advice-win").value = shown.value;
    $("advice-win-text").textContent = shown.text;
    $("advice-win-source").textContent = shown.source;
    $("advice-win-text").dataset.uncertain = shown.uncertain ? "yes" : "no";
    $("advice-line").replaceChildren(...rec.line.map((s) => el("li", {}, s)));
    const named = {};
    view.actions.forEach((a) => { named[a.key] = a.objects || []; });
    $("advice-alternatives").replaceChildren(...rec.alternatives.map((a) => {
      const tr = el("tr", {"class": a.key === rec.action.key ? "best" : ""});
      hoverLights(tr, named[a.key]);
      const share = a.share === null || a.share === undefined ? "–" : Math.round(a.share * 100) + "% (" + a.votes + ")";
      tr.append(el("td", {}, said(a.key, a.label)), el("td", {"class": "vote-share"}, share),
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

  // Concede: one click asks, a second confirms; the finished view comes back over the socket.
  $("concede").addEventListener("click", () => { $("concede-confirm").hidden = false; $("concede").hidden = true; });
  $("concede-no").addEventListener("click", () => { $("concede-confirm").hidden = true; $("concede").hidden = false; });
  $("concede-yes").addEventListener("click", () => {
    $("concede-confirm").hidden = true; $("concede").hidden = false;
    if (view && view.status === "playing") send({v: 1, action: "concede"});
  });

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
  cfg.receive = handle;  // what the socket calls with each message (tests feed it one as the server would)
  live = Live.socket({path: cfg.ws, onMessage: handle, onOpen: () => { askedFor = null; }, unanswered: () => pending,
                      closed: {4404: "no such game", 4403: "not your game"}});
})();
