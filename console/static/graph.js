/*
 * Stepwise console: draws a state machine as an SVG, laid out by dagre.
 *
 * Data (rendered by console/graph.go):
 *   {nodes: [{id, name, type, parent}], groups: [{id, label, parent, kind}],
 *    edges: [{from, to, kind, label}], start}
 * Optional group fields, used when present: "state" (the Parallel or Map
 * state that owns the group) and "start" (the node the group starts at).
 * Without them both are inferred.
 *
 * window.StepwiseGraph = {
 *   layout(graph, options) -> positions (pure: no DOM, runs in Node),
 *   render(container, graph, statuses, retries),
 *   setStatuses(map, container, retries),
 *   select(name), fit(container), zoom(container, scale)
 * }
 *
 * Every element is made with createElementNS and every text set with
 * textContent: state names are untrusted.
 */
(function (root) {
  "use strict";

  var SVG_NS = "http://www.w3.org/2000/svg";
  var PSEUDO_TYPES = { Start: true, End: true };
  var STATUS_ICONS = {
    succeeded: "\u2713", // ✓
    failed: "\u2715", // ✕
    caught: "!",
    warning: "\u26A0", // ⚠
    running: "\u25CF", // ●
    cancelled: "\u25A0", // ■
    held: "\u2016", // ‖
    "not-run": "",
  };

  // Sizes (SVG user units, which are CSS pixels at zoom 1).
  var NODE_MIN_W = 120;
  var NODE_MAX_W = 240;
  var NODE_H = 48;
  var NODE_PAD_X = 14;
  var PSEUDO_W = 64;
  var PSEUDO_H = 28;
  var NAME_FONT = 13;
  var TYPE_FONT = 11;
  var LABEL_FONT = 11;
  var LABEL_MAX_W = 220;
  var GROUP_LABEL_FONT = 11;
  var GROUP_LABEL_H = 18; // room made above a group's content for its label

  // ---------------------------------------------------------------------
  // Text measurement without a DOM: an estimate good enough for sizing
  // boxes (render() swaps in a canvas-based measure in the browser).

  function isWide(cp) {
    return (
      (cp >= 0x1100 && cp <= 0x115f) ||
      (cp >= 0x2e80 && cp <= 0xa4cf) ||
      (cp >= 0xac00 && cp <= 0xd7a3) ||
      (cp >= 0xf900 && cp <= 0xfaff) ||
      (cp >= 0xfe30 && cp <= 0xfe4f) ||
      (cp >= 0xff00 && cp <= 0xff60) ||
      (cp >= 0xffe0 && cp <= 0xffe6) ||
      (cp >= 0x1f300 && cp <= 0x1faff) ||
      (cp >= 0x20000 && cp <= 0x3fffd)
    );
  }

  function estimateWidth(text, fontSize, bold) {
    var w = 0;
    for (var ch of String(text)) {
      var cp = ch.codePointAt(0);
      if (isWide(cp)) w += 1.0;
      else if (ch >= "A" && ch <= "Z") w += 0.68;
      else if ("ilIj.,:;'|!".indexOf(ch) >= 0) w += 0.3;
      else if ("mwMW".indexOf(ch) >= 0) w += 0.85;
      else w += 0.56;
    }
    return w * fontSize * (bold ? 1.06 : 1);
  }

  // Cuts text so that it measures at most maxWidth, ending it with "…".
  function fitText(text, fontSize, maxWidth, measure, bold) {
    text = String(text);
    if (measure(text, fontSize, bold) <= maxWidth) return text;
    var chars = Array.from(text);
    var lo = 0;
    var hi = chars.length;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (measure(chars.slice(0, mid).join("") + "\u2026", fontSize, bold) <= maxWidth) lo = mid;
      else hi = mid - 1;
    }
    return chars.slice(0, lo).join("") + "\u2026";
  }

  function str(v) {
    return v === undefined || v === null ? "" : String(v);
  }

  function getDagre(options) {
    var d = (options && options.dagre) || root.dagre;
    if (!d || !d.graphlib) throw new Error("StepwiseGraph: dagre is not loaded");
    return d;
  }
  // ---------------------------------------------------------------------
  // Layout: pure, no DOM.
  //
  // Dagre's compound mode is slow on large graphs (nesting doubles the
  // ranks) and cannot route edges to a group, so the layout is done one
  // level at a time instead: each group's content is laid out on its own
  // and becomes one box in the level above. A Parallel or Map state and its
  // groups form a "frame": the state on top, its groups side by side below
  // it, tied by "branch" edges; the edges into the state end at the state,
  // those out of it leave from the bottom of the frame (after the groups).

  var LEVEL = { nodesep: 28, ranksep: 36, edgesep: 14 };
  var FRAME = { nodesep: 18, ranksep: 26, edgesep: 10 };
  var GROUP_PAD = 12;
  var FRAME_PAD = 10;
  var TOP_MARGIN = 16;
  // Above this many nodes + edges in one level, dagre's crossing reduction
  // (the costliest part of the layout) is replaced by dfsOrder.
  var ORDER_LIMIT = 120;

  // Orders each rank of dagre's internal graph as dagre's own initial order
  // does (depth first from the top ranks), without the crossing-reduction
  // sweeps that follow it: those cost more than the rest of the layout on a
  // large graph, and rarely change a state machine's drawing.
  function dfsOrder(g) {
    var vs = g.nodes().filter(function (v) {
      var c = g.children(v);
      return (!c || !c.length) && typeof g.node(v).rank === "number";
    });
    vs.sort(function (a, b) {
      return g.node(a).rank - g.node(b).rank;
    });
    var seen = new Set();
    var next = new Map();
    vs.forEach(function (start) {
      var stack = [start];
      while (stack.length) {
        var v = stack.pop();
        if (seen.has(v)) continue;
        seen.add(v);
        var r = g.node(v).rank;
        var k = next.get(r) || 0;
        g.node(v).order = k;
        next.set(r, k + 1);
        var succ = g.successors(v) || [];
        for (var i = succ.length - 1; i >= 0; i--) if (!seen.has(succ[i])) stack.push(succ[i]);
      }
    });
  }

  /**
   * Lays a graph out. Returns
   *   {width, height,
   *    nodes: [{id, name, type, parent, pseudo, x, y, width, height, display}],
   *    groups: [{id, label, kind, parent, depth, x, y, width, height,
   *              display, labelX, labelY}],
   *    frames: [{state, x, y, width, height}],
   *    edges: [{from, to, kind, label, display, points: [{x, y}],
   *             labelX, labelY, labelWidth, labelHeight}]}
   * x and y are centres (a group's label: its left end and middle). Edges of
   * kind "branch" are added: from a Parallel or Map state to each of its
   * groups. Edges that cannot be drawn have no points.
   */
  function layout(graph, options) {
    options = options || {};
    var dagre = getDagre(options);
    var measure = options.measure || estimateWidth;
    graph = graph || {};
    var inNodes = Array.isArray(graph.nodes) ? graph.nodes : [];
    var inGroups = Array.isArray(graph.groups) ? graph.groups : [];
    var inEdges = Array.isArray(graph.edges) ? graph.edges : [];

    var groups = [];
    var groupById = new Map();
    inGroups.forEach(function (gr) {
      var id = str(gr && gr.id);
      if (!id || groupById.has(id)) return;
      var label = str(gr.label);
      var o = {
        id: id,
        label: label,
        kind: str(gr.kind),
        parent: str(gr.parent),
        state: str(gr.state),
        depth: 0,
        display: fitText(label, GROUP_LABEL_FONT, NODE_MAX_W, measure, false),
      };
      groupById.set(id, o);
      groups.push(o);
    });

    var nodes = [];
    var nodeById = new Map();
    inNodes.forEach(function (n) {
      var id = str(n && n.id);
      if (!id || nodeById.has(id)) return;
      var type = str(n.type);
      var pseudo = !!PSEUDO_TYPES[type];
      // Start and End in the page's language.
      var name = pseudo ? label(type === "Start" ? "graphStart" : "graphEnd", str(n.name) || id) : str(n.name) || id;
      var o = { id: id, name: name, type: type, parent: str(n.parent), pseudo: pseudo };
      if (pseudo) {
        o.width = PSEUDO_W;
        o.height = PSEUDO_H;
        o.display = fitText(name, TYPE_FONT, PSEUDO_W - 10, measure, true);
      } else {
        o.display = fitText(name, NAME_FONT, NODE_MAX_W - 2 * NODE_PAD_X, measure, true);
        var w = Math.max(measure(o.display, NAME_FONT, true), measure(type, TYPE_FONT, false) + 28);
        o.width = Math.round(Math.min(NODE_MAX_W, Math.max(NODE_MIN_W, w + 2 * NODE_PAD_X)));
        o.height = NODE_H;
      }
      nodeById.set(id, o);
      nodes.push(o);
    });

    // A group's parent is a group, without cycles; a node's parent a group.
    groups.forEach(function (gr) {
      if (gr.parent && !groupById.has(gr.parent)) gr.parent = "";
    });
    groups.forEach(function (gr) {
      var seen = new Set();
      var depth = 0;
      var p = gr;
      while (p.parent) {
        if (seen.has(p.id)) {
          gr.parent = "";
          depth = 0;
          break;
        }
        seen.add(p.id);
        p = groupById.get(p.parent);
        depth++;
      }
      gr.depth = depth;
    });
    nodes.forEach(function (n) {
      if (n.parent && !groupById.has(n.parent)) n.parent = "";
    });

    // The state of each group: "state" if given, else the Parallel or Map
    // state beside it whose id starts the group's ("Name/branch-1").
    var groupsOfOwner = new Map();
    var ownerOfGroup = new Map();
    groups.forEach(function (gr) {
      var owner = nodeById.get(gr.state);
      if (!owner || owner.pseudo || owner.parent !== gr.parent) {
        owner = null;
        nodes.forEach(function (n) {
          if (n.parent !== gr.parent || (n.type !== "Parallel" && n.type !== "Map")) return;
          if (gr.id.indexOf(n.id + "/") === 0 && (!owner || n.id.length > owner.id.length)) owner = n;
        });
      }
      if (!owner) return;
      ownerOfGroup.set(gr.id, owner);
      if (!groupsOfOwner.has(owner.id)) groupsOfOwner.set(owner.id, []);
      groupsOfOwner.get(owner.id).push(gr);
    });

    // What stands for a node at each level, outermost first:
    // [{scope, item}], where scope is a group id ("" the top) or "frame:<id>".
    function itemOfNode(n) {
      return (groupsOfOwner.has(n.id) ? "f:" : "n:") + n.id;
    }
    function itemOfGroup(gr) {
      var owner = ownerOfGroup.get(gr.id);
      return owner ? "f:" + owner.id : "g:" + gr.id;
    }
    function chain(n) {
      var out = [{ scope: n.parent, item: itemOfNode(n) }];
      var s = n.parent;
      var guard = 0;
      while (s && guard++ < 1000) {
        var gr = groupById.get(s);
        out.push({ scope: gr.parent, item: itemOfGroup(gr) });
        s = gr.parent;
      }
      return out.reverse();
    }

    var edges = [];
    var edgesByScope = new Map();
    var chains = new Map();
    inEdges.forEach(function (e) {
      if (!e) return;
      var from = str(e.from);
      var to = str(e.to);
      var label = str(e.label);
      var o = {
        from: from,
        to: to,
        kind: str(e.kind) || "next",
        label: label,
        display: label ? fitText(label, LABEL_FONT, LABEL_MAX_W, measure, false) : "",
        points: null,
      };
      edges.push(o);
      var a = nodeById.get(from);
      var b = nodeById.get(to);
      if (!a || !b) return;
      if (!chains.has(from)) chains.set(from, chain(a));
      if (!chains.has(to)) chains.set(to, chain(b));
      var ca = chains.get(from);
      var cb = chains.get(to);
      for (var i = 0; i < ca.length && i < cb.length && ca[i].scope === cb[i].scope; i++) {
        if (ca[i].item !== cb[i].item || (i === ca.length - 1 && i === cb.length - 1)) {
          var key = ca[i].scope;
          if (!edgesByScope.has(key)) edgesByScope.set(key, []);
          edgesByScope.get(key).push({ edge: o, v: ca[i].item, w: cb[i].item });
          return;
        }
      }
      // Between two groups of one state, or from a state into its own
      // group: not drawn.
    });

    var outGroups = [];
    var frames = [];

    function runDagre(spec, items, links, margin) {
      var g = new dagre.graphlib.Graph({ multigraph: true });
      g.setGraph({
        rankdir: "TB",
        nodesep: spec.nodesep,
        ranksep: spec.ranksep,
        edgesep: spec.edgesep,
        marginx: margin,
        marginy: margin,
      });
      g.setDefaultEdgeLabel(function () {
        return {};
      });
      items.forEach(function (it) {
        g.setNode(it.key, { width: it.width, height: it.height });
      });
      links.forEach(function (l, i) {
        var attrs = { minlen: 1, weight: l.edge.kind === "next" || l.edge.kind === "branch" ? 2 : 1 };
        if (l.edge.display) {
          l.edge.labelWidth = Math.ceil(measure(l.edge.display, LABEL_FONT, false)) + 10;
          l.edge.labelHeight = LABEL_FONT + 7;
          attrs.width = l.edge.labelWidth;
          attrs.height = l.edge.labelHeight;
          attrs.labelpos = "c";
        }
        l.name = "e" + i;
        g.setEdge(l.v, l.w, attrs, l.name);
      });
      var big = g.nodeCount() + g.edgeCount() > ORDER_LIMIT;
      dagre.layout(g, big ? { customOrder: dfsOrder } : {});
      return g;
    }

    // Places the laid-out links' points, offset by (dx, dy).
    function placeLinks(g, links, dx, dy) {
      links.forEach(function (l) {
        var d = g.edge({ v: l.v, w: l.w, name: l.name });
        if (!d || !d.points) return;
        var pts = d.points.map(function (p) {
          return { x: p.x + dx, y: p.y + dy };
        });
        // Into a frame: end at its state rather than at the frame.
        if (l.w.indexOf("f:") === 0 && l.v !== l.w && pts.length > 1) {
          var t = nodeById.get(l.w.slice(2));
          var last = pts[pts.length - 1];
          var top = t.y - t.height / 2;
          if (last.y <= top) {
            last.x = Math.max(t.x - t.width / 2 + 8, Math.min(t.x + t.width / 2 - 8, last.x));
            last.y = top;
          }
        }
        l.edge.points = pts;
        if (l.edge.display && isFinite(d.x)) {
          l.edge.labelX = d.x + dx;
          l.edge.labelY = d.y + dy;
        }
      });
    }

    // Lays out what stands at one level; returns {width, height, place}.
    function layoutLevel(scope, margin) {
      var items = [];
      nodes.forEach(function (n) {
        if (n.parent !== scope) return;
        if (groupsOfOwner.has(n.id)) {
          var f = layoutFrame(n);
          items.push({ key: "f:" + n.id, width: f.width, height: f.height, box: f });
        } else {
          items.push({ key: "n:" + n.id, width: n.width, height: n.height, node: n });
        }
      });
      groups.forEach(function (gr) {
        if (gr.parent !== scope || ownerOfGroup.has(gr.id)) return;
        var b = layoutGroup(gr);
        items.push({ key: "g:" + gr.id, width: b.width, height: b.height, box: b });
      });
      if (!items.length) {
        return { width: 0, height: 0, place: function () {} };
      }
      var links = (edgesByScope.get(scope) || []).slice();
      var g = runDagre(LEVEL, items, links, margin);
      var size = g.graph();
      return {
        width: size.width,
        height: size.height,
        place: function (dx, dy) {
          items.forEach(function (it) {
            var d = g.node(it.key);
            if (it.node) {
              it.node.x = d.x + dx;
              it.node.y = d.y + dy;
            } else {
              it.box.place(d.x + dx - it.width / 2, d.y + dy - it.height / 2);
            }
          });
          placeLinks(g, links, dx, dy);
        },
      };
    }

    // A group: its label on top, its content below.
    function layoutGroup(gr) {
      var inner = layoutLevel(gr.id, 0);
      var labelW = measure(gr.display, GROUP_LABEL_FONT, false);
      var width = Math.max(inner.width, labelW, 60) + 2 * GROUP_PAD;
      var height = inner.height + 2 * GROUP_PAD + GROUP_LABEL_H;
      return {
        width: width,
        height: height,
        place: function (x0, y0) {
          gr.x = x0 + width / 2;
          gr.y = y0 + height / 2;
          gr.width = width;
          gr.height = height;
          gr.labelX = x0 + GROUP_PAD;
          gr.labelY = y0 + GROUP_PAD / 2 + GROUP_LABEL_H / 2;
          outGroups.push(gr);
          inner.place(x0 + (width - inner.width) / 2, y0 + GROUP_PAD + GROUP_LABEL_H);
        },
      };
    }

    // A Parallel or Map state with its groups below it.
    function layoutFrame(owner) {
      var items = [{ key: "n:" + owner.id, width: owner.width, height: owner.height, node: owner }];
      var links = [];
      groupsOfOwner.get(owner.id).forEach(function (gr) {
        var b = layoutGroup(gr);
        items.push({ key: "g:" + gr.id, width: b.width, height: b.height, box: b });
        var e = { from: owner.id, to: gr.id, kind: "branch", label: "", display: "", points: null };
        edges.push(e);
        links.push({ edge: e, v: "n:" + owner.id, w: "g:" + gr.id });
      });
      var g = runDagre(FRAME, items, links, FRAME_PAD);
      var size = g.graph();
      return {
        width: size.width,
        height: size.height,
        place: function (x0, y0) {
          frames.push({ state: owner.id, x: x0 + size.width / 2, y: y0 + size.height / 2, width: size.width, height: size.height });
          items.forEach(function (it) {
            var d = g.node(it.key);
            if (it.node) {
              it.node.x = d.x + x0;
              it.node.y = d.y + y0;
            } else {
              it.box.place(d.x + x0 - it.width / 2, d.y + y0 - it.height / 2);
            }
          });
          placeLinks(g, links, x0, y0);
        },
      };
    }

    var top = layoutLevel("", TOP_MARGIN);
    top.place(0, 0);
    return {
      width: Math.ceil(top.width),
      height: Math.ceil(top.height),
      nodes: nodes,
      groups: outGroups,
      frames: frames,
      edges: edges,
    };
  }

  // ---------------------------------------------------------------------
  // Rendering (browser only).

  var rendered = []; // {container, svg, nodesByName, width, height, scale, fitMode}
  var markerSeq = 0;

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG_NS, name);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        e.setAttribute(k, String(attrs[k]));
      });
    }
    if (parent) parent.appendChild(e);
    return e;
  }

  function canvasMeasure() {
    var ctx = null;
    try {
      ctx = document.createElement("canvas").getContext("2d");
    } catch (err) {
      ctx = null;
    }
    if (!ctx) return estimateWidth;
    var family = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'Noto Sans CJK JP', sans-serif";
    try {
      var f = getComputedStyle(document.body).fontFamily;
      if (f) family = f;
    } catch (err) {
      /* keep the default */
    }
    var cache = Object.create(null);
    return function (text, size, bold) {
      var key = size + (bold ? "b" : "") + "\u0000" + text;
      if (key in cache) return cache[key];
      ctx.font = (bold ? "600 " : "") + size + "px " + family;
      return (cache[key] = ctx.measureText(String(text)).width);
    };
  }

  function pathOf(points) {
    if (!points.length) return "";
    var f = function (n) {
      return Math.round(n * 10) / 10;
    };
    var d = "M" + f(points[0].x) + "," + f(points[0].y);
    if (points.length === 2) return d + "L" + f(points[1].x) + "," + f(points[1].y);
    // Smooth through the points: quadratic curves between midpoints.
    for (var i = 1; i < points.length - 1; i++) {
      var p = points[i];
      var q = points[i + 1];
      var mx = i === points.length - 2 ? q.x : (p.x + q.x) / 2;
      var my = i === points.length - 2 ? q.y : (p.y + q.y) / 2;
      d += "Q" + f(p.x) + "," + f(p.y) + " " + f(mx) + "," + f(my);
    }
    return d;
  }

  // A state's status: "not-run" when missing. Start and End have one only
  // when given (by their ids, "__start__" and "__end__").
  function statusOf(node, statuses) {
    if (!statuses) return null;
    var s = node.pseudo ? statuses[node.id] : statuses[node.name];
    if (typeof s === "string" && s) return s;
    return node.pseudo ? null : "not-run";
  }

  // States that can retry carry their retries (data-retries).
  var RETRYING_TYPES = { Task: true, Parallel: true, Map: true };

  function applyStatus(entry, g, statuses) {
    var node = g.__stepwiseNode;
    var status = statusOf(node, statuses);
    if (status === null) g.removeAttribute("data-status");
    else g.setAttribute("data-status", status);
    var retries = 0;
    if (RETRYING_TYPES[node.type] && entry.retries) {
      var r = entry.retries[node.name];
      if (typeof r === "number" && r > 0) retries = r;
    }
    if (RETRYING_TYPES[node.type]) g.setAttribute("data-retries", String(retries));
    var badge = g.querySelector(".node-retries");
    if (badge) badge.textContent = retries ? "\u21BB" + retries : "";
    var icon = g.querySelector(".node-status");
    if (icon) icon.textContent = status && STATUS_ICONS[status] ? STATUS_ICONS[status] : "";
    var title = g.querySelector("title");
    var text = node.pseudo ? node.name : node.name + " (" + node.type + ")";
    if (status) text += " \u2014 " + label(status === "not-run" ? "notRun" : status === "map-run" ? "inMapRun" : status, status);
    if (retries) text += " \u2014 " + label("retries", "Retries") + " " + retries;
    if (title) title.textContent = text;
    if (!node.pseudo) g.setAttribute("aria-label", text);
  }

  function select(entry, g, dispatch) {
    entry.svg.querySelectorAll("g.node.selected").forEach(function (s) {
      s.classList.remove("selected");
      s.removeAttribute("aria-pressed");
    });
    if (!g) return;
    g.classList.add("selected");
    g.setAttribute("aria-pressed", "true");
    if (dispatch) {
      entry.container.dispatchEvent(
        new CustomEvent("state-selected", { detail: { state: g.__stepwiseNode.name }, bubbles: true })
      );
    }
  }

  function setScale(entry, scale) {
    scale = Math.max(0.1, Math.min(3, scale));
    entry.scale = scale;
    entry.svg.setAttribute("width", String(Math.ceil(entry.width * scale)));
    entry.svg.setAttribute("height", String(Math.ceil(entry.height * scale)));
    entry.container.setAttribute("data-zoom", String(Math.round(scale * 100)));
  }

  function availableSize(container) {
    var cs = getComputedStyle(container);
    var w = container.clientWidth - (parseFloat(cs.paddingLeft) || 0) - (parseFloat(cs.paddingRight) || 0);
    var maxH = parseFloat(cs.maxHeight);
    var h = isFinite(maxH) && maxH > 0 ? maxH : window.innerHeight * 0.75;
    var bar = container.querySelector(".graph-toolbar");
    var svgTop = parseFloat(getComputedStyle(container.querySelector("svg") || container).marginTop) || 0;
    h -= (bar ? bar.offsetHeight : 0) + svgTop + (parseFloat(cs.paddingTop) || 0) + (parseFloat(cs.paddingBottom) || 0);
    return { width: Math.max(50, w - 2), height: Math.max(50, h - 2) };
  }

  // Fit: the whole graph when it stays readable (at least 60%), else the
  // graph's width but not under 75%, scrolled to the start; never larger
  // than natural size.
  var READABLE_WHOLE = 0.6;
  var READABLE_MIN = 0.75;
  function fit(entry) {
    var a = availableSize(entry.container);
    var byWidth = a.width / entry.width;
    var whole = Math.min(byWidth, a.height / entry.height);
    var s = whole >= READABLE_WHOLE ? whole : Math.max(byWidth, READABLE_MIN);
    setScale(entry, Math.min(1, s));
    entry.fitMode = true;
    if (entry.startX !== undefined && entry.width * entry.scale > a.width) {
      entry.container.scrollLeft = Math.max(0, entry.startX * entry.scale - a.width / 2);
      entry.container.scrollTop = 0;
    }
  }

  function findEntry(container) {
    for (var i = 0; i < rendered.length; i++) if (rendered[i].container === container) return rendered[i];
    return rendered.length ? rendered[rendered.length - 1] : null;
  }

  function label(key, fallback) {
    var m = root.StepwiseGraph && root.StepwiseGraph.messages;
    return (m && typeof m[key] === "string" && m[key]) || fallback;
  }

  function toolbar(entry) {
    var bar = document.createElement("div");
    bar.className = "graph-toolbar";
    var buttons = [
      ["fit", label("fit", "Fit"), function () {
        fit(entry);
      }],
      ["actual", label("actualSize", "100%"), function () {
        entry.fitMode = false;
        setScale(entry, 1);
      }],
      ["zoom-out", "\u2212", function () {
        entry.fitMode = false;
        setScale(entry, entry.scale / 1.25);
      }],
      ["zoom-in", "+", function () {
        entry.fitMode = false;
        setScale(entry, entry.scale * 1.25);
      }],
    ];
    buttons.forEach(function (b) {
      var btn = document.createElement("button");
      btn.type = "button";
      btn.className = "graph-" + b[0];
      btn.textContent = b[1];
      if (b[0] === "zoom-in") btn.setAttribute("aria-label", label("zoomIn", "Zoom in"));
      if (b[0] === "zoom-out") btn.setAttribute("aria-label", label("zoomOut", "Zoom out"));
      btn.addEventListener("click", b[2]);
      bar.appendChild(btn);
    });
    return bar;
  }

  function render(container, graph, statuses, retries) {
    if (!container) return null;
    var lay = layout(graph, { measure: canvasMeasure() });
    var width = Math.max(lay.width, 1);
    var height = Math.max(lay.height, 1);

    // Forget an earlier drawing in this container.
    rendered = rendered.filter(function (r) {
      if (r.container !== container) return true;
      if (r.cleanup) r.cleanup();
      return false;
    });

    var seq = ++markerSeq;
    var svg = el("svg", {
      class: "graph-svg",
      viewBox: "0 0 " + width + " " + height,
      width: width,
      height: height,
      role: "group",
    });
    svg.setAttribute("aria-label", label("graph", "State machine graph"));
    var defs = el("defs", null, svg);
    var kinds = ["next", "default", "choice", "catch", "branch"];
    var markerIds = Object.create(null);
    kinds.forEach(function (k) {
      var id = "sw-arrow-" + seq + "-" + k;
      markerIds[k] = id;
      var m = el(
        "marker",
        { id: id, class: "arrow " + k, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, orient: "auto-start-reverse", markerUnits: "userSpaceOnUse" },
        defs
      );
      el("path", { d: "M0,0 L10,5 L0,10 z" }, m);
    });

    // Frames of Parallel and Map states, then groups, outermost first.
    var gGroups = el("g", { class: "groups" }, svg);
    lay.frames.forEach(function (f) {
      var gf = el("g", { class: "frame", "data-frame": f.state }, gGroups);
      el("rect", { x: f.x - f.width / 2, y: f.y - f.height / 2, width: f.width, height: f.height, rx: 12, ry: 12 }, gf);
    });
    lay.groups
      .slice()
      .sort(function (a, b) {
        return a.depth - b.depth;
      })
      .forEach(function (gr) {
        if (!isFinite(gr.x) || !isFinite(gr.width)) return;
        var gg = el("g", { class: "group " + (gr.kind || ""), "data-group": gr.id }, gGroups);
        el("title", null, gg).textContent = gr.label;
        el(
          "rect",
          { x: gr.x - gr.width / 2, y: gr.y - gr.height / 2, width: gr.width, height: gr.height, rx: 10, ry: 10 },
          gg
        );
        var t = el("text", { class: "group-label", x: gr.labelX, y: gr.labelY, "dominant-baseline": "central" }, gg);
        t.textContent = gr.display;
      });

    // Edges.
    var gEdges = el("g", { class: "edges" }, svg);
    var gLabels = el("g", { class: "edge-labels" }, svg);
    lay.edges.forEach(function (e) {
      if (!e.points || e.points.length < 2) return;
      var kind = kinds.indexOf(e.kind) >= 0 ? e.kind : "next";
      var ge = el("g", { class: "edge " + kind, "data-from": e.from, "data-to": e.to }, gEdges);
      el("path", { d: pathOf(e.points), "marker-end": "url(#" + markerIds[kind] + ")" }, ge);
      if (e.label) el("title", null, ge).textContent = e.label;
      if (e.display && isFinite(e.labelX)) {
        var gl = el("g", { class: "edge-label " + kind, "data-from": e.from, "data-to": e.to }, gLabels);
        el("title", null, gl).textContent = e.label;
        el(
          "rect",
          { x: e.labelX - e.labelWidth / 2, y: e.labelY - e.labelHeight / 2, width: e.labelWidth, height: e.labelHeight, rx: 3, ry: 3 },
          gl
        );
        var lt = el("text", { x: e.labelX, y: e.labelY, "text-anchor": "middle", "dominant-baseline": "central" }, gl);
        lt.textContent = e.display;
      }
    });

    // Nodes.
    var gNodes = el("g", { class: "nodes" }, svg);
    var nodesByName = Object.create(null);
    lay.nodes.forEach(function (n) {
      if (!isFinite(n.x) || !isFinite(n.y)) return;
      var gn = el("g", {
        class: "node" + (n.pseudo ? " pseudo" : ""),
        "data-state": n.pseudo ? n.id : n.name,
        "data-type": n.type,
        transform: "translate(" + (n.x - n.width / 2) + "," + (n.y - n.height / 2) + ")",
      });
      gn.__stepwiseNode = n;
      el("title", null, gn);
      if (n.pseudo) {
        el("rect", { width: n.width, height: n.height, rx: n.height / 2, ry: n.height / 2 }, gn);
        var pt = el("text", { class: "node-name", x: n.width / 2, y: n.height / 2, "text-anchor": "middle", "dominant-baseline": "central" }, gn);
        pt.textContent = n.display;
      } else {
        gn.setAttribute("tabindex", "0");
        gn.setAttribute("role", "button");
        el("rect", { width: n.width, height: n.height, rx: 6, ry: 6 }, gn);
        var nt = el("text", { class: "node-name", x: n.width / 2, y: 21, "text-anchor": "middle" }, gn);
        nt.textContent = n.display;
        var tt = el("text", { class: "node-type", x: n.width / 2, y: 37, "text-anchor": "middle" }, gn);
        tt.textContent = n.type;
        el("text", { class: "node-status", x: n.width - 8, y: 14, "text-anchor": "end" }, gn);
        el("text", { class: "node-retries", x: 8, y: 14, "text-anchor": "start" }, gn);
        nodesByName[n.name] = gn;
      }
      gNodes.appendChild(gn);
    });

    var entry = {
      container: container,
      svg: svg,
      nodesByName: nodesByName,
      width: width,
      height: height,
      scale: 1,
      fitMode: true,
      startX: startX(lay, graph),
      statuses: statuses || null,
      retries: retries || null,
    };
    svg.querySelectorAll("g.node").forEach(function (gn) {
      applyStatus(entry, gn, entry.statuses);
    });

    // Selection by click and keyboard.
    svg.addEventListener("click", function (ev) {
      var gn = ev.target.closest && ev.target.closest("g.node[tabindex]");
      if (gn && !entry.dragged) select(entry, gn, true);
    });
    svg.addEventListener("keydown", function (ev) {
      if (ev.key !== "Enter" && ev.key !== " ") return;
      var gn = ev.target.closest && ev.target.closest("g.node[tabindex]");
      if (!gn) return;
      ev.preventDefault();
      select(entry, gn, true);
    });

    // Pan by dragging the background; zoom with Ctrl/⌘ + wheel.
    var drag = null;
    svg.addEventListener("pointerdown", function (ev) {
      entry.dragged = false;
      if (ev.button !== 0 || (ev.target.closest && ev.target.closest("g.node[tabindex]"))) return;
      drag = { x: ev.clientX, y: ev.clientY, left: container.scrollLeft, top: container.scrollTop, id: ev.pointerId };
    });
    svg.addEventListener("pointermove", function (ev) {
      if (!drag || ev.pointerId !== drag.id) return;
      var dx = ev.clientX - drag.x;
      var dy = ev.clientY - drag.y;
      if (!entry.dragged && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!entry.dragged) {
        entry.dragged = true;
        container.classList.add("panning");
        try {
          svg.setPointerCapture(ev.pointerId);
        } catch (err) {
          /* ignore */
        }
      }
      container.scrollLeft = drag.left - dx;
      container.scrollTop = drag.top - dy;
    });
    var endDrag = function () {
      drag = null;
      container.classList.remove("panning");
    };
    svg.addEventListener("pointerup", endDrag);
    svg.addEventListener("pointercancel", endDrag);
    var onWheel = function (ev) {
      if (!ev.ctrlKey && !ev.metaKey) return;
      ev.preventDefault();
      var rect = container.getBoundingClientRect();
      var ox = ev.clientX - rect.left;
      var oy = ev.clientY - rect.top;
      var cx = (container.scrollLeft + ox) / entry.scale;
      var cy = (container.scrollTop + oy) / entry.scale;
      entry.fitMode = false;
      setScale(entry, entry.scale * (ev.deltaY < 0 ? 1.1 : 1 / 1.1));
      container.scrollLeft = cx * entry.scale - ox;
      container.scrollTop = cy * entry.scale - oy;
    };
    container.addEventListener("wheel", onWheel, { passive: false });
    var resizeTimer = 0;
    var onResize = function () {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(function () {
        if (entry.fitMode) fit(entry);
      }, 100);
    };
    window.addEventListener("resize", onResize);
    entry.cleanup = function () {
      container.removeEventListener("wheel", onWheel);
      window.removeEventListener("resize", onResize);
    };

    container.replaceChildren(toolbar(entry), svg);
    container.classList.add("graph-ready");
    rendered.push(entry);
    fit(entry);
    return entry;
  }

  // Where the drawing starts: the Start node, else the first state.
  function startX(lay, graph) {
    var first = null;
    for (var i = 0; i < lay.nodes.length; i++) {
      var n = lay.nodes[i];
      if (!isFinite(n.x)) continue;
      if (n.type === "Start") return n.x;
      if (!first && graph && n.id === graph.start) first = n;
    }
    return first ? first.x : undefined;
  }

  function setStatuses(map, container, retries) {
    var targets = container
      ? rendered.filter(function (r) {
          return r.container === container;
        })
      : rendered;
    targets.forEach(function (entry) {
      entry.statuses = map || null;
      if (retries) entry.retries = retries;
      entry.svg.querySelectorAll("g.node").forEach(function (gn) {
        applyStatus(entry, gn, entry.statuses);
      });
    });
  }

  root.StepwiseGraph = {
    layout: layout,
    render: render,
    setStatuses: setStatuses,
    select: function (name, container) {
      var entry = findEntry(container);
      if (!entry) return;
      var gn = name ? entry.nodesByName[name] : null;
      select(entry, gn || null, false);
      if (gn && gn.scrollIntoView) gn.scrollIntoView({ block: "nearest", inline: "nearest" });
    },
    fit: function (container) {
      var entry = findEntry(container);
      if (entry) fit(entry);
    },
    zoom: function (container, scale) {
      var entry = findEntry(container);
      if (!entry) return;
      entry.fitMode = false;
      setScale(entry, scale);
    },
    messages: null, // console.js sets the page's i18n messages here
    _estimateWidth: estimateWidth,
  };
  if (typeof module === "object" && module.exports) module.exports = root.StepwiseGraph;
})(typeof window !== "undefined" ? window : globalThis);
