"use strict";
(function () {
  // Everything shown comes from the data block, written with textContent only: nothing
  // from a run is ever parsed as markup. No statistic is computed here: the verdicts
  // were computed when the runs were published.
  var data = JSON.parse(document.getElementById("explorer-data").textContent);
  var byFolder = {};
  data.runs.forEach(function (run) { byFolder[run.folder] = run; });

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  }
  function pct(rate) { return rate === null || rate === undefined ? "–" : (rate * 100).toFixed(1) + "%"; }
  function counts(pair) { return pair ? pct(pair[1] ? pair[0] / pair[1] : null) + " (" + pair[0] + "/" + pair[1] + ")" : "not in this run"; }
  function when(run) { return run.started_at.replace("T", " ").slice(0, 16); }
  function labelPairs(run) { return Object.keys(run.labels).sort().map(function (k) { return k + "=" + run.labels[k]; }); }
  function describe(run) { return when(run) + " · " + run.run_id + (run.agent_version ? " · " + run.agent_version : ""); }

  function fill(select, values) {
    values.forEach(function (value) {
      var option = el("option", value);
      option.value = value;
      select.appendChild(option);
    });
  }
  function distinct(pick) {
    var seen = {};
    data.runs.forEach(function (run) { pick(run).forEach(function (v) { if (v) { seen[v] = true; } }); });
    return Object.keys(seen).sort();
  }
  var version = document.getElementById("filter-version");
  var model = document.getElementById("filter-model");
  var label = document.getElementById("filter-label");
  fill(version, distinct(function (run) { return [run.agent_version]; }));
  fill(model, distinct(function (run) { return [run.agent_model]; }));
  fill(label, distinct(labelPairs));

  var runA = document.getElementById("run-a");
  var runB = document.getElementById("run-b");

  function shown(run) {
    return (!version.value || run.agent_version === version.value)
      && (!model.value || run.agent_model === model.value)
      && (!label.value || labelPairs(run).indexOf(label.value) >= 0);
  }
  // each cell names its column, for a narrow page where a row reads as a block
  // (table.stack in report.css)
  function labelCells(table) {
    var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
      return th.textContent;
    });
    Array.prototype.forEach.call(table.querySelectorAll("tbody tr"), function (row) {
      Array.prototype.forEach.call(row.children, function (cell, index) {
        if (index > 0 && heads[index]) { cell.setAttribute("data-label", heads[index]); }
      });
    });
  }

  function drawRuns() {
    var body = document.querySelector("#runs tbody");
    body.textContent = "";
    data.runs.filter(shown).forEach(function (run) {
      var row = el("tr");
      row.setAttribute("data-folder", run.folder);
      row.appendChild(el("td", when(run)));
      var name = el("td");
      var link = el("a", run.run_id);
      link.href = run.report;
      name.appendChild(link);
      row.appendChild(name);
      row.appendChild(el("td", run.agent));
      row.appendChild(el("td", run.agent_version || ""));
      row.appendChild(el("td", run.agent_model || ""));
      row.appendChild(el("td", labelPairs(run).join(", ")));
      row.appendChild(el("td", pct(run.pass_rate), "num"));
      row.appendChild(el("td", run.passed + "/" + run.trials, "num"));
      var pick = el("td");
      if (run.comparable) {
        ["A", "B"].forEach(function (side) {
          var button = el("button", side);
          button.type = "button";
          button.addEventListener("click", function () {
            (side === "A" ? runA : runB).value = run.folder;
            drawPair();
          });
          pick.appendChild(button);
        });
      }
      row.appendChild(pick);
      body.appendChild(row);
    });
    labelCells(document.getElementById("runs"));
  }

  var comparable = data.runs.filter(function (run) { return run.comparable; });
  [runA, runB].forEach(function (select) {
    comparable.forEach(function (run) {
      var option = el("option", describe(run));
      option.value = run.folder;
      select.appendChild(option);
    });
  });
  if (comparable.length > 1) { runA.value = comparable[1].folder; runB.value = comparable[0].folder; }

  function drawPair() {
    var body = document.querySelector("#side-by-side tbody");
    var overall = document.getElementById("overall");
    body.textContent = "";
    var a = byFolder[runA.value], b = byFolder[runB.value];
    document.getElementById("head-a").textContent = a ? "A: " + a.run_id : "Run A";
    document.getElementById("head-b").textContent = b ? "B: " + b.run_id : "Run B";
    if (!a || !b || a === b) {
      overall.textContent = "Pick two different runs.";
      return;
    }
    var found = data.comparisons[a.folder + " " + b.folder];
    var aIsBaseline = true;
    if (!found) { found = data.comparisons[b.folder + " " + a.folder]; aIsBaseline = false; }
    if (!found) {
      overall.textContent = "These two runs were not compared.";
      return;
    }
    var baseline = byFolder[found.baseline], candidate = byFolder[found.candidate];
    var change = found.change === null ? "" : " (" + (found.change >= 0 ? "+" : "") + (found.change * 100).toFixed(1) + " points, 95% CI "
      + (found.ci_low * 100).toFixed(1) + " to " + (found.ci_high * 100).toFixed(1) + ")";
    overall.textContent = "Baseline " + baseline.run_id + ", candidate " + candidate.run_id + ": overall " + found.verdict + change + ".";
    overall.setAttribute("data-verdict", found.verdict);
    found.cases.forEach(function (c) {
      var row = el("tr", null, c.verdict === "regression" || c.verdict === "improvement" ? c.verdict : "");
      row.setAttribute("data-case", c.case_id);
      row.setAttribute("data-verdict", c.verdict);
      row.appendChild(el("td", c.case_id));
      row.appendChild(el("td", counts(aIsBaseline ? c.baseline : c.candidate), "num"));
      row.appendChild(el("td", counts(aIsBaseline ? c.candidate : c.baseline), "num"));
      row.appendChild(el("td", c.verdict));
      row.appendChild(el("td", c.p_adjusted === null ? "–" : c.p_adjusted.toPrecision(3), "num"));
      body.appendChild(row);
    });
    labelCells(document.getElementById("side-by-side"));
  }

  [version, model, label].forEach(function (select) { select.addEventListener("change", drawRuns); });
  [runA, runB].forEach(function (select) { select.addEventListener("change", drawPair); });
  drawRuns();
  drawPair();
})();
