/* Manaforge's navigation on a narrow screen: a "Menu" button opens and closes the links. Without this
 * script the button stays hidden and the links wrap onto their own rows (site.css); no dependencies. */
(function () {
  "use strict";
  var header = document.querySelector(".site-header");
  var button = header && header.querySelector(".nav-toggle");
  var nav = document.getElementById("site-nav");
  if (!button || !nav) return;
  header.classList.add("nav-collapsible");
  button.hidden = false;
  function set(open) {
    header.classList.toggle("nav-open", open);
    button.setAttribute("aria-expanded", open ? "true" : "false");
  }
  button.addEventListener("click", function () { set(button.getAttribute("aria-expanded") !== "true"); });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && header.classList.contains("nav-open")) { set(false); button.focus(); }
  });
})();
