// Sightline eval dashboard: live progress counts that refresh while a run is running
// (the theme switch is theme.js, shared with the web app).
// Served from /static/app.js so the page's CSP can forbid inline scripts.
(function () {
  "use strict";
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
    pollProgress();
  });
})();
