(function () {
  "use strict";
  var list = document.getElementById("cases");
  var controls = document.getElementById("controls");
  if (!list || !controls) { return; }
  var cases = Array.prototype.slice.call(list.querySelectorAll(":scope > details.case"));
  var buttons = Array.prototype.slice.call(controls.querySelectorAll("button[data-filter]"));
  var sort = document.getElementById("sort");
  var shown = document.getElementById("shown");
  var filter = "all";

  function visible(item) {
    var state = item.getAttribute("data-state");
    if (filter === "all") { return true; }
    if (filter === "not-passing") { return state === "failing" || state === "flaky"; }
    return state === filter;
  }

  function rate(item) { return parseFloat(item.getAttribute("data-rate")) || 0; }
  function order(item) { return parseInt(item.getAttribute("data-order"), 10) || 0; }
  function id(item) { return item.getAttribute("data-id") || ""; }

  var comparers = {
    "order": function (a, b) { return order(a) - order(b); },
    "rate-asc": function (a, b) { return rate(a) - rate(b) || order(a) - order(b); },
    "rate-desc": function (a, b) { return rate(b) - rate(a) || order(a) - order(b); },
    "id": function (a, b) { return id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0; }
  };

  function apply() {
    var sorted = cases.slice().sort(comparers[sort.value] || comparers.order);
    var fragment = document.createDocumentFragment();
    var count = 0;
    sorted.forEach(function (item) {
      var show = visible(item);
      item.hidden = !show;
      if (show) { count += 1; }
      fragment.appendChild(item);
    });
    list.appendChild(fragment);
    buttons.forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.getAttribute("data-filter") === filter));
    });
    shown.textContent = "showing " + count + " of " + cases.length;
  }

  buttons.forEach(function (button) {
    button.addEventListener("click", function () {
      filter = button.getAttribute("data-filter");
      apply();
    });
  });
  sort.addEventListener("change", apply);
  document.getElementById("expand").addEventListener("click", function () {
    cases.forEach(function (item) { if (!item.hidden) { item.open = true; } });
  });
  document.getElementById("collapse").addEventListener("click", function () {
    list.querySelectorAll("details[open]").forEach(function (item) { item.open = false; });
  });
  function openFromHash() {
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (!target || !target.classList.contains("case")) { return; }
    target.hidden = false;
    target.open = true;
    target.querySelectorAll("details.trial:not(.t-passed)").forEach(function (trial) {
      trial.open = true;
    });
    target.scrollIntoView();
  }

  controls.hidden = false;
  apply();
  openFromHash();
  window.addEventListener("hashchange", openFromHash);
})();
