// citeaudit review: keyboard shortcuts (labels, undo, skip, next, the list of keys), a passage filter, quoting a selected passage, the claim
// scrolled into view in its answer, and drafts kept across an expired session. Written for this app; no libraries.
(function () {
  "use strict";

  var DRAFT_FIELDS = ["passage", "passage-offsets", "period", "reasoning", "severity", "queue"];
  var SUBMITTED = "citeaudit-submitted";

  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || Boolean(target && target.isContentEditable);
  }

  // The list of keys (a dialog on every page): "?" shows and hides it; while it is open no other key acts.
  function toggleHelp(help) {
    if (help.open) {
      help.close();
    } else {
      help.showModal();
    }
  }

  // u, s and n act through the page's own elements: a key whose element this page lacks does nothing.
  function follow(link) {
    if (!link) {
      return false;
    }
    link.click();
    return true;
  }

  function skip() {
    var form = document.getElementById("skip-form");
    if (!form) {
      return false;
    }
    form.requestSubmit();
    return true;
  }

  var ACTIONS = {
    u: function () {
      return follow(document.getElementById("undo-link") || document.querySelector("a.undo-link"));
    },
    s: skip,
    n: function () {
      return follow(document.getElementById("next-link"));
    },
  };

  function draftKey(form) {
    return form && form.dataset.draft ? "citeaudit-draft:" + form.dataset.draft : null;
  }

  function storage(kind) {
    try {
      return kind === "local" ? window.localStorage : window.sessionStorage;
    } catch (error) {
      return null;
    }
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    if (event.key === "Escape" && typing(event.target)) {
      event.target.blur();
      return;
    }
    // Enter in a text field of the label form never submits a label: only the label buttons and 1-5 do (the
    // form's first submit button is a disabled one for the same reason, should this script not run).
    if (event.key === "Enter" && event.target.tagName === "INPUT" && event.target.closest("#label-form")) {
      event.preventDefault();
      return;
    }
    var help = document.getElementById("key-help");
    if (help && help.open) {
      if (event.key === "?") {
        event.preventDefault();
        help.close();
      }
      return;
    }
    if (typing(event.target)) {
      return;
    }
    if (event.key === "?" && help) {
      event.preventDefault();
      toggleHelp(help);
      return;
    }
    if (Object.prototype.hasOwnProperty.call(ACTIONS, event.key)) {
      if (!event.repeat && ACTIONS[event.key]()) {
        event.preventDefault();
      }
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

  function setUpSearch() {
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
  }

  // The claim sits somewhere in a long answer: scroll the answer box (not the page) to it.
  function showClaim() {
    var answer = document.getElementById("answer");
    var mark = document.getElementById("claim-in-answer");
    if (answer && mark) {
      answer.scrollTop = Math.max(0, mark.offsetTop - answer.clientHeight / 3);
    }
  }

  function passageOf(node) {
    while (node && !(node.nodeType === 1 && node.classList.contains("passage-text"))) {
      node = node.parentNode;
    }
    return node;
  }

  // Selecting text inside one passage quotes it: the exact text, and where it is (passage and characters).
  function quoteSelection() {
    var selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) {
      return;
    }
    var range = selection.getRangeAt(0);
    var passage = passageOf(range.startContainer);
    if (!passage || passage !== passageOf(range.endContainer)) {
      return;
    }
    var field = document.getElementById("passage");
    var offsets = document.getElementById("passage-offsets");
    if (!field) {
      return;
    }
    var before = document.createRange();
    before.setStart(passage, 0);
    before.setEnd(range.startContainer, range.startOffset);
    var text = range.toString();
    var start = before.toString().length + parseInt(passage.dataset.offset || "0", 10);
    field.value = text;
    if (offsets) {
      offsets.value = "passage " + passage.dataset.passage + ", characters " + start + "-" + (start + text.length);
    }
    saveDraft();
  }

  function fields(form) {
    var found = [];
    for (var i = 0; i < DRAFT_FIELDS.length; i++) {
      var field = form.querySelector("#" + DRAFT_FIELDS[i]);
      if (field) {
        found.push(field);
      }
    }
    return found;
  }

  function saveDraft() {
    var form = document.getElementById("label-form");
    var key = draftKey(form);
    var local = storage("local");
    if (!key || !local) {
      return;
    }
    var values = {};
    var any = false;
    fields(form).forEach(function (field) {
      values[field.id] = field.value;
      any = any || (field.id !== "queue" && field.value !== "");
    });
    if (any) {
      local.setItem(key, JSON.stringify(values));
    } else {
      local.removeItem(key);
    }
  }

  // A draft lives until a page other than the login or error page follows its submission; after logging in
  // again (the page is opened with ?draft=1) the typed text comes back.
  function setUpDrafts() {
    var local = storage("local");
    var session = storage("session");
    if (!local || !session) {
      return;
    }
    var kind = document.body.dataset.page || "";
    var submitted = session.getItem(SUBMITTED);
    if (submitted && kind !== "login" && kind !== "error") {
      session.removeItem(SUBMITTED);
      if (window.location.search.indexOf("draft=1") < 0) {
        local.removeItem(submitted);
      }
    }
    var form = document.getElementById("label-form");
    var key = draftKey(form);
    if (!key) {
      return;
    }
    var stored = local.getItem(key);
    if (stored) {
      var values = JSON.parse(stored);
      fields(form).forEach(function (field) {
        if (values[field.id] && !field.value) {
          field.value = values[field.id];
        }
      });
    }
    form.addEventListener("input", saveDraft);
    form.addEventListener("change", saveDraft);
    form.addEventListener("submit", function () {
      saveDraft();
      session.setItem(SUBMITTED, key);
    });
  }

  // Drafts are kept per account (the form's data-draft names it) and all are dropped when someone logs out, so
  // the next person at this browser never finds another's reasoning in their form.
  function clearDraftsAtLogout() {
    var local = storage("local");
    var logout = document.querySelector('form[action="/logout"]');
    if (!local || !logout) {
      return;
    }
    logout.addEventListener("submit", function () {
      for (var i = local.length - 1; i >= 0; i--) {
        var key = local.key(i);
        if (key && key.indexOf("citeaudit-draft:") === 0) {
          local.removeItem(key);
        }
      }
    });
  }

  function setUpHelp() {
    var help = document.getElementById("key-help");
    var close = document.getElementById("key-help-close");
    if (help && close) {
      close.addEventListener("click", function () {
        help.close();
      });
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    setUpHelp();
    setUpSearch();
    showClaim();
    setUpDrafts();
    clearDraftsAtLogout();
    document.addEventListener("mouseup", quoteSelection);
  });
})();

// Lease renewal: while an edge page is open, its lease is renewed every minute so the queue keeps handing the
// edge to nobody else. Kept apart from the key bindings above.
(function () {
  "use strict";
  var lease = document.getElementById("lease");
  if (!lease || !window.fetch) {
    return;
  }
  window.setInterval(function () {
    var body = new URLSearchParams();
    body.set("csrf", lease.dataset.csrf);
    window.fetch(lease.dataset.renew, { method: "POST", body: body, credentials: "same-origin" }).catch(function () {
      return null;
    });
  }, 60000);
})();
