// Sightline's theme switch, on every page of the web app and the eval dashboard:
// System (the default), Light or Dark, remembered in this browser. It runs before the
// page is drawn so a chosen theme never flashes the other; without JavaScript the
// pages follow the system's setting and the switch stays hidden.
(function () {
  "use strict";
  var KEY = "sightline-theme";
  var root = document.documentElement;

  function saved() {
    try {
      var value = localStorage.getItem(KEY);
      return value === "light" || value === "dark" ? value : "system";
    } catch (e) {
      return "system";
    }
  }

  function apply(choice) {
    if (choice === "light" || choice === "dark") root.setAttribute("data-theme", choice);
    else root.removeAttribute("data-theme");
  }

  apply(saved());

  document.addEventListener("DOMContentLoaded", function () {
    var select = document.getElementById("theme-choice");
    if (!select) return;
    select.value = saved();
    select.hidden = false;
    select.addEventListener("change", function () {
      try {
        if (select.value === "system") localStorage.removeItem(KEY);
        else localStorage.setItem(KEY, select.value);
      } catch (e) { /* not remembered: this page still switches */ }
      apply(select.value);
    });
  });
})();
