// The completion page's archetype tabs: one completion per archetype group of the nearest decks. Without
// JavaScript every panel shows, one after another; with it, one tab at a time (arrow keys move between tabs).
(function () {
  const list = document.querySelector("#archetype-tabs [role=tablist]");
  if (!list) return;
  const tabs = Array.from(list.querySelectorAll("[role=tab]"));
  function show(tab, focus) {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute("aria-selected", on ? "true" : "false");
      t.tabIndex = on ? 0 : -1;
      document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
    }
    if (focus) tab.focus();
  }
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => show(tab, false));
    tab.addEventListener("keydown", (e) => {
      if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
        const next = tabs[(i + (e.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
        show(next, true);
        e.preventDefault();
      }
    });
  });
  show(tabs[0], false);
})();
