/* archdiff report: the graph view. Reads the compact tables from #graph-data; draws only search
   results and the neighbourhood of the selected symbol, so it stays quick on graphs of 25k+ nodes.
   No network, no libraries: it works from file://. */
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var EDGE_COLORS = { calls: "#2563eb", imports: "#059669", inherits: "#7c3aed", contains: "#9ca3af",
    includes: "#0891b2", launches: "#db2777", binds: "#ea580c" };
  var NEIGHBOURS_PER_SIDE = 18;
  var RESULTS = 60;

  var dataEl = document.getElementById("graph-data");
  var view = document.getElementById("graph-view");
  if (!dataEl || !view) { return; }
  var data = JSON.parse(dataEl.textContent || "{\"systems\":[]}");
  var systems = data.systems || [];
  var state = { sys: 0, selected: -1 };
  var sysSelect = document.getElementById("graph-system");
  var roleSelect = document.getElementById("graph-role");
  var kindSelect = document.getElementById("graph-kind");
  var search = document.getElementById("symbol-search");
  var results = document.getElementById("search-results");
  var canvas = document.getElementById("graph-canvas");
  var info = document.getElementById("node-info");
  var status = document.getElementById("graph-status");

  function prepare(s) {
    if (s.ready) { return s; }
    var n = s.nodes.length, ids = new Array(n), i;
    function idOf(k) {
      if (ids[k] !== undefined) { return ids[k]; }
      var chain = [], c = k;
      while (c >= 0 && ids[c] === undefined) { chain.push(c); c = s.nodes[c][0]; }
      var prefix = c >= 0 ? ids[c] : "";
      for (var j = chain.length - 1; j >= 0; j--) { prefix = prefix + s.nodes[chain[j]][1]; ids[chain[j]] = prefix; }
      return ids[k];
    }
    for (i = 0; i < n; i++) { idOf(i); }
    s.ids = ids;
    s.lower = ids.map(function (x) { return x.toLowerCase(); });
    var containsKind = s.ekinds.indexOf("contains");
    var out = [], inn = [];
    for (i = 0; i < n; i++) { out.push([]); inn.push([]); }
    for (i = 0; i < n; i++) {
      var p = s.nodes[i][0];
      if (p >= 0) { out[p].push([i, containsKind]); inn[i].push([p, containsKind]); }
    }
    for (i = 0; i + 2 < s.edges.length; i += 3) {
      out[s.edges[i]].push([s.edges[i + 1], s.edges[i + 2]]);
      inn[s.edges[i + 1]].push([s.edges[i], s.edges[i + 2]]);
    }
    s.out = out; s.inn = inn; s.ready = true;
    return s;
  }

  function option(select, value, text) {
    var o = document.createElement("option"); o.value = value; o.textContent = text; select.appendChild(o);
  }

  function fillFilters() {
    var s = systems[state.sys];
    roleSelect.textContent = ""; kindSelect.textContent = "";
    option(roleSelect, "", "all layers"); option(kindSelect, "", "all kinds");
    s.roles.forEach(function (r, i) { option(roleSelect, String(i), r || "(no layer)"); });
    s.kinds.forEach(function (k, i) { option(kindSelect, String(i), k); });
  }

  function passes(s, i) {
    var row = s.nodes[i];
    if (roleSelect.value !== "" && row[6] !== Number(roleSelect.value)) { return false; }
    if (kindSelect.value !== "" && row[2] !== Number(kindSelect.value)) { return false; }
    return true;
  }

  function shortName(id) {
    if (id.indexOf("file:") === 0) { return id.slice(id.lastIndexOf("/") + 1); }  // a file: its base name
    var m = id.match(/([^.:/]+)$/); return m ? m[1] : id;
  }

  function runSearch() {
    var s = prepare(systems[state.sys]);
    var raw = search.value.trim(), q = raw.toLowerCase();
    results.textContent = "";
    var hits = [];
    if (q) {
      for (var i = 0; i < s.lower.length; i++) {
        if (s.lower[i].indexOf(q) >= 0 && passes(s, i)) {
          var name = shortName(s.lower[i]), exact = shortName(s.ids[i]) === raw;
          hits.push([exact ? 0 : (name === q ? 1 : (name.indexOf(q) === 0 ? 2 : 3)), s.ids[i].length, i]);
        }
      }
      hits.sort(function (x, y) { return x[0] - y[0] || x[1] - y[1] || (s.ids[x[2]] < s.ids[y[2]] ? -1 : 1); });
    }
    hits.slice(0, RESULTS).forEach(function (h) {
      var li = document.createElement("li");
      li.textContent = s.ids[h[2]];
      li.setAttribute("data-node", String(h[2]));
      li.addEventListener("click", function () { select(h[2]); });
      results.appendChild(li);
    });
    status.textContent = q ? (hits.length + " match" + (hits.length === 1 ? "" : "es") +
      (hits.length > RESULTS ? " (first " + RESULTS + " shown)" : "")) : (s.nodes.length + " symbols, " +
      (s.edges.length / 3) + " edges besides containment; type to search");
    return hits.length;
  }

  function svg(tag, attrs, parent) {
    var el = document.createElementNS(SVGNS, tag);
    for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) { el.setAttribute(k, attrs[k]); } }
    if (parent) { parent.appendChild(el); }
    return el;
  }

  function neighbours(s, list) {
    var seen = {}, outList = [];
    list.forEach(function (pair) {
      var key = pair[0] + ":" + pair[1];
      if (!seen[key] && passes(s, pair[0])) { seen[key] = 1; outList.push(pair); }
    });
    // Dependencies first, containment last: what a symbol uses says more than what it holds.
    var containsKind = s.ekinds.indexOf("contains");
    outList.sort(function (x, y) {
      return ((x[1] === containsKind) - (y[1] === containsKind)) || x[1] - y[1] || (s.ids[x[0]] < s.ids[y[0]] ? -1 : 1);
    });
    return outList;
  }

  function select(i) {
    var s = prepare(systems[state.sys]);
    state.selected = i;
    Array.prototype.forEach.call(results.children, function (li) {
      li.className = li.getAttribute("data-node") === String(i) ? "sel" : "";
    });
    var ins = neighbours(s, s.inn[i]), outs = neighbours(s, s.out[i]);
    draw(s, i, ins.slice(0, NEIGHBOURS_PER_SIDE), outs.slice(0, NEIGHBOURS_PER_SIDE));
    var row = s.nodes[i];
    info.textContent = "";
    var title = document.createElement("div");
    title.className = "sym"; title.textContent = s.ids[i];
    var meta = document.createElement("div");
    meta.className = "muted";
    meta.textContent = s.kinds[row[2]] + " · " + (s.langs[row[3]] || "?") + " · " +
      (s.paths[row[4]] ? s.paths[row[4]] + ":" + row[5] : "no file") + " · layer " + (s.roles[row[6]] || "none") +
      " · " + ins.length + " incoming, " + outs.length + " outgoing" +
      ((ins.length > NEIGHBOURS_PER_SIDE || outs.length > NEIGHBOURS_PER_SIDE) ? " (first " + NEIGHBOURS_PER_SIDE + " of each drawn)" : "");
    info.appendChild(title); info.appendChild(meta);
    return ins.length + outs.length;
  }

  function draw(s, center, ins, outs) {
    while (canvas.firstChild) { canvas.removeChild(canvas.firstChild); }
    var width = canvas.clientWidth || 900, height = canvas.clientHeight || 520;
    var cx = width / 2, cy = height / 2;
    function column(list, x) {
      var step = height / (list.length + 1);
      return list.map(function (pair, k) { return { node: pair[0], kind: pair[1], x: x, y: step * (k + 1) }; });
    }
    var left = column(ins, Math.min(260, width / 4)), right = column(outs, width - Math.min(260, width / 4));
    var edgesLayer = svg("g", {}, canvas), nodesLayer = svg("g", {}, canvas);
    function edge(p, incoming) {
      var color = EDGE_COLORS[s.ekinds[p.kind]] || "#6b7280";
      svg("line", { x1: incoming ? p.x + 6 : cx + 6, y1: incoming ? p.y : cy, x2: incoming ? cx - 6 : p.x - 6,
        y2: incoming ? cy : p.y, stroke: color, "stroke-width": 1.4, "marker-end": "url(#arrow)" }, edgesLayer)
        .appendChild(document.createElementNS(SVGNS, "title")).textContent = s.ekinds[p.kind];
    }
    var defs = svg("defs", {}, canvas);
    var marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6, markerHeight: 6,
      orient: "auto-start-reverse" }, defs);
    svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#6b7280" }, marker);
    left.forEach(function (p) { edge(p, true); });
    right.forEach(function (p) { edge(p, false); });
    function node(i, x, y, anchor, main) {
      var g = svg("g", { "class": "gnode", "data-node": String(i) }, nodesLayer);
      svg("circle", { cx: x, cy: y, r: main ? 9 : 6, fill: main ? "#f59e0b" : "#fff", stroke: "#374151", "stroke-width": 1.3 }, g);
      var label = svg("text", { x: anchor === "end" ? x - 10 : (anchor === "start" ? x + 10 : x), y: main ? y - 14 : y + 4,
        "text-anchor": anchor }, g);
      var text = main ? s.ids[i] : shortName(s.ids[i]), room = main ? 90 : 34;
      label.textContent = text.length > room ? text.slice(0, room - 1) + "…" : text;
      svg("title", {}, g).textContent = s.ids[i] + " (" + s.kinds[s.nodes[i][2]] + ")";
      if (!main) { g.addEventListener("click", function () { select(i); }); }
    }
    left.forEach(function (p) { node(p.node, p.x, p.y, "end", false); });
    right.forEach(function (p) { node(p.node, p.x, p.y, "start", false); });
    node(center, cx, cy, "middle", true);
    var legend = svg("g", {}, canvas), lx = 10;
    Object.keys(EDGE_COLORS).forEach(function (k) {
      svg("rect", { x: lx, y: height - 16, width: 12, height: 4, fill: EDGE_COLORS[k] }, legend);
      svg("text", { x: lx + 16, y: height - 11 }, legend).textContent = k;
      lx += 26 + k.length * 7;
    });
    svg("text", { x: 10, y: 16 }, canvas).textContent = "← depends on it (" + ins.length + " drawn)";
    svg("text", { x: width - 10, y: 16, "text-anchor": "end" }, canvas).textContent = "it depends on / contains → (" + outs.length + " drawn)";
  }

  // The highlighted path (archdiff compare --highlight FROM TO): its nodes left to right, each edge
  // and node marked with the class "hl"; nodes the embedded sample left out are skipped.
  function drawPath(s) {
    var chain = (s.highlight && s.highlight.chain) || [];
    var shown = chain.filter(function (row) { return row[0] >= 0; });
    if (!shown.length) { return 0; }
    while (canvas.firstChild) { canvas.removeChild(canvas.firstChild); }
    var width = canvas.clientWidth || 900, height = canvas.clientHeight || 520;
    var step = width / (shown.length + 1), y = height / 2;
    var edgesLayer = svg("g", {}, canvas), nodesLayer = svg("g", {}, canvas);
    shown.forEach(function (row, k) {
      var x = step * (k + 1), up = k % 2 ? -1 : 1;
      if (k > 0) {
        var line = svg("line", { x1: step * k + 8, y1: y, x2: x - 8, y2: y, stroke: EDGE_COLORS[row[2]] || "#6b7280",
          "class": "hl" }, edgesLayer);
        svg("title", {}, line).textContent = row[2] + " " + row[3] + ":" + row[4];
        svg("text", { x: step * k + step / 2, y: y - 8, "text-anchor": "middle" }, edgesLayer).textContent = row[2];
      }
      var g = svg("g", { "class": "gnode hl", "data-node": String(row[0]) }, nodesLayer);
      svg("circle", { cx: x, cy: y, r: 8, fill: "#fde68a", stroke: "#b45309" }, g);
      var text = shortName(row[1]);
      svg("text", { x: x, y: y + 24 * up + (up > 0 ? 0 : 4), "text-anchor": "middle" }, g).textContent =
        text.length > 28 ? text.slice(0, 27) + "…" : text;
      svg("title", {}, g).textContent = row[1];
      g.addEventListener("click", function () { select(row[0]); });
    });
    svg("text", { x: 10, y: 16 }, canvas).textContent = "highlighted path: " + s.highlight.from + " → " + s.highlight.to;
    return shown.length;
  }

  function switchSystem() {
    state.sys = Number(sysSelect.value || 0);
    fillFilters(); runSearch();
    drawPath(prepare(systems[state.sys]));
  }

  if (!systems.length) {
    status.textContent = "No symbol graph embedded in this report.";
    return;
  }
  systems.forEach(function (s, i) { option(sysSelect, String(i), s.label); });
  sysSelect.value = String(systems.length - 1);  // the right-hand (newer) system first
  if (!(systems[systems.length - 1].highlight || {}).chain || !systems[systems.length - 1].highlight.chain.length) {
    systems.forEach(function (s, i) {  // else the side that has the highlighted path
      if (s.highlight && s.highlight.chain.length) { sysSelect.value = String(i); }
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("#graph-highlight li.hl"), function (li) {
    li.addEventListener("click", function () {
      var k = li.getAttribute("data-system"), n = Number(li.getAttribute("data-node"));
      if (sysSelect.value !== k) { sysSelect.value = k; switchSystem(); }
      if (n >= 0) { select(n); }
    });
  });
  sysSelect.addEventListener("change", switchSystem);
  roleSelect.addEventListener("change", runSearch);
  kindSelect.addEventListener("change", runSearch);
  search.addEventListener("input", runSearch);
  switchSystem();

  // A small API for the self-test below and for anyone scripting the page.
  window.archdiffReport = {
    search: function (q) { search.value = q; return runSearch(); },
    select: select,
    firstResult: function () { var li = results.querySelector("li"); return li ? Number(li.getAttribute("data-node")) : -1; },
    idOf: function (i) { return prepare(systems[state.sys]).ids[i]; },
    drawPath: function () { return drawPath(prepare(systems[state.sys])); }
  };
})();
