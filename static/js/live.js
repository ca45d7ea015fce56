/* What the live pages share (the draft pod, docs/websockets.md; the game, docs/game-advice.md):
   building elements, client ids, the message sent but not yet answered (kept in sessionStorage so a
   reload keeps it), and one websocket that reconnects with backoff, pings every 25 s and resends the
   unanswered message after a reconnect; it carries its client id, so the server applies it at most once. */
window.Live = (function () {
  "use strict";

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => { if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v); });
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function newId() {
    return (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : Date.now() + "-" + Math.random().toString(36).slice(2);
  }

  // One unanswered message per page and tab: set() keeps it, clear() drops it; both return the new value.
  function pendingSlot(key) {
    return {
      get: () => JSON.parse(sessionStorage.getItem(key) || "null"),
      set(msg) { sessionStorage.setItem(key, JSON.stringify(msg)); return msg; },
      clear() { sessionStorage.removeItem(key); return null; },
    };
  }

  // opts: path (the socket's path), onMessage(msg), onOpen() (optional), unanswered() (the message to
  // resend on (re)connect, or null), closed ({close code: text} for closes that must not reconnect).
  function socket(opts) {
    let ws = null, retry = 0;
    function setConn(state, text) {
      const c = document.getElementById("conn");
      if (c) { c.dataset.state = state; c.textContent = text; }
    }
    function send(msg) { if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg)); }
    function connect() {
      const proto = location.protocol === "https:" ? "wss://" : "ws://";
      ws = new WebSocket(proto + location.host + opts.path);
      ws.onopen = () => {
        retry = 0; setConn("open", "live");
        if (opts.onOpen) opts.onOpen();
        const msg = opts.unanswered && opts.unanswered();
        if (msg) send(msg);
      };
      ws.onmessage = (e) => { try { opts.onMessage(JSON.parse(e.data)); } catch (err) { console.error(err); } };
      ws.onclose = (e) => {
        const final = (opts.closed || {})[e.code];
        if (final) { setConn("closed", final); return; }
        setConn("closed", "reconnecting…");
        setTimeout(connect, Math.min(5000, 250 * Math.pow(2, retry++)));
      };
    }
    setInterval(() => send({v: 1, action: "ping"}), 25000);
    connect();
    return {send};
  }

  return {el, newId, pendingSlot, socket};
})();
