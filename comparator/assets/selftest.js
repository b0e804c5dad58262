/* Self-test, run only when the page is opened with #selftest=QUERY (the browser test does): checks
   that the layer table and the graph view exist, searches QUERY, selects the first hit, and writes
   the outcome and every error seen since the page started into a pre element, id selftest-result. */
(function () {
  "use strict";
  var m = /^#selftest=(.*)$/.exec(window.location.hash || "");
  if (!m) { return; }
  var out = { query: decodeURIComponent(m[1]), layerTable: !!document.getElementById("layer-table"),
    graphView: !!document.getElementById("graph-view"), matches: -1, selected: "", neighbours: -1, drawn: 0 };
  try {
    var api = window.archdiffReport;
    // a report made with --highlight draws the path at load: count what is marked before searching
    out.highlighted = { nodes: document.querySelectorAll("#graph-canvas .gnode.hl").length,
      edges: document.querySelectorAll("#graph-canvas line.hl").length };
    out.matches = api.search(out.query);
    var first = api.firstResult();
    if (first >= 0) {
      out.neighbours = api.select(first);
      out.selected = api.idOf(first);
      out.drawn = document.querySelectorAll("#graph-canvas .gnode").length;
    }
  } catch (err) {
    (window.__archdiffErrors = window.__archdiffErrors || []).push("selftest: " + String(err && err.message || err));
  }
  out.errors = window.__archdiffErrors || [];
  var pre = document.createElement("pre");
  pre.id = "selftest-result";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
  // Headless screenshots capture the top of the page: show the searched graph view first.
  var target = document.getElementById("graph-explorer"), main = document.querySelector("main");
  if (target && main) { main.insertBefore(target, main.firstChild); }
})();
