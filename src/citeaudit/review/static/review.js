// citeaudit review: keyboard shortcuts for labelling and a passage filter. Written for this app; no libraries.
(function () {
  "use strict";

  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    if (event.key === "Escape" && typing(event.target)) {
      event.target.blur();
      return;
    }
    if (typing(event.target)) {
      return;
    }
    if (event.key === "/") {
      var search = document.getElementById("passage-search");
      if (search) {
        event.preventDefault();
        search.focus();
      }
      return;
    }
    var button = document.querySelector('#label-form button[data-key="' + event.key + '"]');
    if (button) {
      event.preventDefault();
      var form = document.getElementById("label-form");
      if (form.reportValidity()) {
        form.requestSubmit(button);
      }
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    var search = document.getElementById("passage-search");
    var list = document.getElementById("passages");
    if (!search || !list) {
      return;
    }
    search.addEventListener("input", function () {
      var needle = search.value.trim().toLowerCase();
      var items = list.querySelectorAll("li");
      for (var i = 0; i < items.length; i++) {
        var hit = !needle || items[i].textContent.toLowerCase().indexOf(needle) >= 0;
        items[i].hidden = !hit;
      }
    });
  });
})();
