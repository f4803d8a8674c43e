// Sightline eval dashboard: theme toggle (follows the system until chosen, then
// persists), and live progress counts that refresh while a run is running.
// Served from /static/app.js so the page's CSP can forbid inline scripts.
(function () {
  "use strict";
  var KEY = "sightline-theme";
  var root = document.documentElement;
  try {
    var saved = localStorage.getItem(KEY);
    if (saved === "dark" || saved === "light") root.setAttribute("data-theme", saved);
  } catch (e) { /* storage unavailable: follow the system */ }

  function currentTheme() {
    var set = root.getAttribute("data-theme");
    if (set) return set;
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }

  function bindToggle() {
    var button = document.getElementById("theme-toggle");
    if (!button) return;
    var label = function () { button.textContent = currentTheme() === "dark" ? "Light theme" : "Dark theme"; };
    label();
    button.addEventListener("click", function () {
      var next = currentTheme() === "dark" ? "light" : "dark";
      root.setAttribute("data-theme", next);
      try { localStorage.setItem(KEY, next); } catch (e) { /* not persisted */ }
      label();
    });
  }

  function pollProgress() {
    var section = document.getElementById("progress");
    if (!section) return;
    var url = section.getAttribute("data-status-url");
    var running = parseInt(section.getAttribute("data-running") || "0", 10);
    if (!url || running <= 0) return;
    var timer = setInterval(function () {
      fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (body) {
          if (!body || !body.state) return;
          ["completed", "running", "failed", "skipped"].forEach(function (k) {
            var el = section.querySelector('[data-count="' + k + '"]');
            if (el) el.textContent = String(body.state[k]);
          });
          section.setAttribute("data-running", String(body.state.running));
          if (body.state.running <= 0) {
            clearInterval(timer);
            var note = document.getElementById("live-note");
            if (note) note.textContent = "run finished; reload for final results";
          }
        })
        .catch(function () { /* try again next tick */ });
    }, 3000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    bindToggle();
    pollProgress();
  });
})();
