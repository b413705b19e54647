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

  // --- filtering and sorting the cases ----------------------------------------------

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
    var count = 0;
    sorted.forEach(function (item) {
      var show = visible(item);
      if (item.hidden === show) { item.hidden = !show; }
      if (show) { count += 1; }
    });
    // move the cases only when their order changes: moving thousands costs a layout
    var current = list.children;
    var moved = sorted.some(function (item, index) { return current[index] !== item; });
    if (moved) {
      var fragment = document.createDocumentFragment();
      sorted.forEach(function (item) { fragment.appendChild(item); });
      list.appendChild(fragment);
    }
    buttons.forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.getAttribute("data-filter") === filter));
    });
    shown.textContent = "showing " + count + " of " + cases.length;
  }

  // --- case details, drawn from each case's packed block when the case opens --------
  // The block is base64 of zlib-compressed JSON (agentflow_eval/report/case_details.py
  // documents its shape). Everything a run recorded goes into text nodes: agent text is
  // data, never markup.

  var rowLabels = {
    "match": "match", "args": "arguments differ", "missing": "not called",
    "extra": "unexpected call", "unknown": ""
  };
  var numbers = new Intl.NumberFormat("en-US");
  var drawing = new WeakMap();  // case element -> promise of its trials drawn
  var undrawn = new WeakMap();  // trial element -> its data, until first opened

  function add(node, children) {
    if (children === undefined || children === null || children === false) { return node; }
    if (!Array.isArray(children)) { children = [children]; }
    children.forEach(function (child) {
      if (child === undefined || child === null || child === false) { return; }
      if (Array.isArray(child)) { add(node, child); return; }
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function el(tag, className, children) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    return add(node, children);
  }

  function label(table, key) {
    return Object.prototype.hasOwnProperty.call(table, key) ? table[key] : "";
  }

  // a text of the block: "text", or ["clipped text", characters left out]
  function clipped(value) {
    if (Array.isArray(value)) {
      return [
        document.createTextNode(String(value[0])),
        el("span", "clip", "\u2026 " + numbers.format(value[1]) + " more characters")
      ];
    }
    return document.createTextNode(String(value));
  }

  function pill(status) {
    return el("span", "pill p-" + status, String(status).replace(/_/g, " "));
  }

  function call(c, actual) {
    var parts = [el("span", "fn", c.name), "("];
    (c.args || []).forEach(function (arg, index) {
      if (index) { parts.push(", "); }
      parts.push(el("span", arg[2] ? "arg diff" : "arg",
        [el("span", "k", arg[0]), "=", el("span", "v", clipped(arg[1]))]));
    });
    parts.push(")");
    var nodes = [el("div", "call", parts)];
    if (actual) {
      if (c.error) {
        nodes.push(el("div", "ret err", "error: " + c.error));
      } else if (c.result !== undefined) {
        nodes.push(el("div", "ret", ["\u2192 ", clipped(c.result)]));
      }
      if (c.ms) { nodes.push(el("div", "ms", c.ms)); }
    }
    return nodes;
  }

  function callTable(rows) {
    return el("table", "calls", [
      el("thead", null, el("tr", null, [
        el("th", null, "Expected call"), el("th", null, "Actual call"), el("th", "st")
      ])),
      el("tbody", null, rows.map(function (row) {
        var expected = row.expected ? call(row.expected, false)
          : row.status === "unknown" ? el("span", "muted", "\u2014") : el("span", "none", "none");
        var actual = row.actual ? call(row.actual, true) : el("span", "none", "not called");
        return el("tr", "r-" + row.status, [
          el("td", null, expected), el("td", null, actual),
          el("td", "st", label(rowLabels, row.status))
        ]);
      }))
    ]);
  }

  function timeline(events) {
    var steps = events.filter(function (e) { return e[1] === "step" || e[1] === "handoff"; });
    var summary = "Timeline: " + events.length + " event" + (events.length === 1 ? "" : "s") +
      (steps.length ? ", " + steps.length + " step" + (steps.length === 1 ? "" : "s") : "");
    return el("details", "timeline", [
      el("summary", null, summary),
      el("ol", null, events.map(function (e) {
        return el("li", "ev ev-" + e[1], [
          el("span", "at", e[0]), el("span", "kind", e[1]),
          e[2] ? el("span", "who", e[2]) : null, clipped(e[3])
        ]);
      }))
    ]);
  }

  function turn(t) {
    var head = [el("span", "turn-no", "Turn " + t.number)];
    if (t.id) { head.push(" ", el("code", "muted", t.id)); }
    if (t.trajectory) { head.push(" ", el("span", "tag", "trajectory " + t.trajectory)); }
    if (t.stats) { head.push(" ", el("span", "muted", t.stats)); }
    var body = [el("div", "turn-head", head)];
    if (t.user !== undefined) {
      body.push(el("div", "user", [el("span", "who", "User"), " ", clipped(t.user)]));
    }
    if (t.unreached) { body.push(el("p", "warn-line", "The trial ended before this turn.")); }
    if (t.note) { body.push(el("p", "warn-line", t.note)); }
    var rows = t.rows || [];
    if (rows.length) {
      body.push(callTable(rows));
    } else if (!t.unknown && !t.unreached) {
      body.push(el("p", "muted small", "No tool calls expected, none made."));
    }
    if (t.unknown) { body.push(el("p", "muted small", t.unknown)); }
    if (t.intermediate) {
      body.push(el("div", "inter", t.intermediate.map(function (text) {
        return el("div", null, [el("span", "who", "Agent (intermediate)"), " ", clipped(text)]);
      })));
    }
    if (t.timeline) { body.push(timeline(t.timeline)); }
    body.push(el("div", "answers", [
      el("div", "answer", [el("div", "cap", "Final answer"), t.answer !== undefined
        ? el("pre", null, clipped(t.answer)) : el("p", "none", "no final answer")]),
      el("div", "answer ref", [el("div", "cap", "Reference"), t.reference !== undefined
        ? el("pre", null, clipped(t.reference)) : el("p", "muted", "none given")])
    ]));
    return el("div", "turn", body);
  }

  function verdicts(list) {
    return el("table", "grid verdicts", [
      el("thead", null, el("tr", null, [
        el("th", null, "Criterion"), el("th", null, "Verdict"), el("th", "num", "Score"),
        el("th", null, "Reason and details")
      ])),
      el("tbody", null, list.map(function (v) {
        var notes = [];
        if (v.reason !== undefined) { notes.push(el("div", "reason", clipped(v.reason))); }
        if (v.details) {
          notes.push(el("dl", "kv", v.details.map(function (detail) {
            return [el("dt", null, detail[0]), el("dd", null, clipped(detail[1]))];
          })));
        }
        if (v.cost) { notes.push(el("div", "muted small", v.cost)); }
        return el("tr", "v-" + v.status, [
          el("td", "cname", v.label),
          el("td", null, pill(v.status)),
          el("td", "num", [v.score, v.threshold ? el("span", "muted", " / " + v.threshold) : null]),
          el("td", null, notes)
        ]);
      }))
    ]);
  }

  function trialBody(tr) {
    var body = [];
    var error = tr.error;
    if (error) {
      body.push(el("div", "error", [
        el("strong", null, error.kind),
        error.type ? [" ", el("code", null, error.type)] : null,
        ": ", clipped(error.message),
        error.traceback !== undefined ? el("details", "tb",
          [el("summary", null, "traceback"), el("pre", null, clipped(error.traceback))]) : null
      ]));
    }
    (tr.turns || []).forEach(function (t) { body.push(turn(t)); });
    if (tr.verdicts_note) { body.push(el("p", "verdicts-note", tr.verdicts_note)); }
    if (tr.verdicts) {
      var table = verdicts(tr.verdicts);
      if (tr.verdicts_note) { table.classList.add("unfinished"); }
      body.push(table);
    }
    if (tr.judge_cost) {
      body.push(el("p", "muted small", "Judge cost for this trial: " + tr.judge_cost));
    }
    (tr.printed || []).forEach(function (p) {
      body.push(el("details", "printed",
        [el("summary", null, "the agent's " + p[0]), el("pre", null, clipped(p[1]))]));
    });
    return el("div", "trial-body", body);
  }

  function trialItem(tr) {
    var item = el("details", "trial t-" + tr.status, el("summary", null, [
      pill(tr.status), " ", el("span", "tno", "Trial " + tr.number), " ",
      el("span", "why", tr.why || ""), " ", el("span", "meta", tr.meta)
    ]));
    undrawn.set(item, tr);
    return item;
  }

  function drawTrial(item) {
    var tr = undrawn.get(item);
    if (!tr) { return; }
    undrawn.delete(item);
    item.appendChild(trialBody(tr));
  }

  // Writing the bytes into the stream and reading it back directly is many times faster
  // than going through a Blob; one block at a time, as thousands at once (Expand shown)
  // thrash.
  function inflate(bytes) {
    var stream = new DecompressionStream("deflate");
    var writer = stream.writable.getWriter();
    var ignore = function () { return undefined; };  // the reader reports a bad block
    writer.write(bytes).catch(ignore);
    writer.close().catch(ignore);
    var reader = stream.readable.getReader();
    var decoder = new TextDecoder();
    var text = "";
    function pump() {
      return reader.read().then(function (step) {
        if (step.done) { return text + decoder.decode(); }
        text += decoder.decode(step.value, {stream: true});
        return pump();
      });
    }
    return pump();
  }

  var decoding = Promise.resolve();

  function unpack(block) {
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser cannot decompress them " +
        "(no DecompressionStream); they are in results.json"));
    }
    var next = decoding.then(function () {
      var binary = atob(block);
      var bytes = new Uint8Array(binary.length);
      for (var i = 0; i < binary.length; i += 1) { bytes[i] = binary.charCodeAt(i); }
      return inflate(bytes);
    }).then(JSON.parse);
    decoding = next.catch(function () { return undefined; });
    return next;
  }

  function caseDetails(data) {
    var trials = data.trials || [];
    var nodes = [el("p", "facts-line", (data.facts || []).map(function (fact) {
      return el("span", null, fact);
    }))];
    if (!trials.length) {
      nodes.push(el("p", "muted", "No trials recorded for this case."));
    }
    trials.forEach(function (tr) { nodes.push(trialItem(tr)); });
    return nodes;
  }

  function drawCase(item) {
    var promise = drawing.get(item);
    if (promise) { return promise; }
    var holder = item.querySelector(".case-body[data-details]");
    if (!holder) {
      promise = Promise.resolve();
    } else {
      promise = unpack(holder.getAttribute("data-details")).then(function (data) {
        holder.replaceChildren(add(document.createDocumentFragment(), caseDetails(data)));
        holder.setAttribute("data-drawn", "yes");
      }, function (error) {
        holder.replaceChildren(el("p", "warn-line",
          "The details of this case could not be read: " + error.message));
        holder.setAttribute("data-drawn", "failed");
      });
    }
    drawing.set(item, promise);
    return promise;
  }

  function openTrial(item) {
    drawTrial(item);
    item.open = true;
  }

  list.addEventListener("toggle", function (event) {
    var item = event.target;
    if (!item.open || !item.classList) { return; }
    if (item.classList.contains("case")) { drawCase(item); }
    if (item.classList.contains("trial")) { drawTrial(item); }
  }, true);

  // --- controls ---------------------------------------------------------------------

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
    drawCase(target).then(function () {
      target.querySelectorAll("details.trial:not(.t-passed)").forEach(openTrial);
      target.scrollIntoView();
    });
  }

  controls.hidden = false;
  apply();
  cases.forEach(function (item) { if (item.open) { drawCase(item); } });
  openFromHash();
  window.addEventListener("hashchange", openFromHash);
})();
