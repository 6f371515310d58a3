/*
 * Stepwise console: page behaviour.
 *
 * Everything shown is built with createElement and textContent: names,
 * inputs and outputs are untrusted.
 */
(function () {
  "use strict";

  var DEFAULT_MESSAGES = {
    invalidInput: "The input is not valid JSON.",
    loading: "Loading\u2026",
    noDetails: "No details for this state.",
    confirmStop: "Stop this execution?",
    confirmRedrive: "Redrive this execution?",
    requestFailed: "The request failed.",
  };
  var POLL_MS = 1000;
  // An execution's status as a status class (as the server's statusKey).
  var STATUS_KEYS = { RUNNING: "running", SUCCEEDED: "succeeded", FAILED: "failed", TIMED_OUT: "failed", ABORTED: "cancelled" };
  var messages = Object.assign({}, DEFAULT_MESSAGES, readJSON("i18n") || {});

  function t(key) {
    return typeof messages[key] === "string" ? messages[key] : DEFAULT_MESSAGES[key] || key;
  }

  function readJSON(id) {
    var node = document.getElementById(id);
    if (!node) return null;
    try {
      return JSON.parse(node.textContent);
    } catch (err) {
      if (window.console) console.warn("stepwise: #" + id + " is not JSON", err);
      return null;
    }
  }

  function h(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (attrs[k] === undefined || attrs[k] === null) return;
        if (k === "text") e.textContent = String(attrs[k]);
        else if (k === "className") e.className = attrs[k];
        else e.setAttribute(k, String(attrs[k]));
      });
    }
    (children || []).forEach(function (c) {
      if (c !== null && c !== undefined) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }

  function main() {
    return document.querySelector("main[data-page]") || document.querySelector("main");
  }

  // -------------------------------------------------------------------
  // JSON highlighting: spans made with createElement, text with textContent.

  var TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b|([{}\[\],])/g;

  function highlightInto(target, text) {
    var frag = document.createDocumentFragment();
    var last = 0;
    var m;
    TOKEN.lastIndex = 0;
    while ((m = TOKEN.exec(text)) !== null) {
      if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
      var cls;
      var tok = m[0];
      if (m[1] !== undefined) {
        cls = m[2] !== undefined ? "json-key" : "json-string";
        tok = m[1];
      } else if (m[3] !== undefined) cls = "json-number";
      else if (m[4] !== undefined) cls = "json-literal";
      else cls = "json-punct";
      var span = document.createElement("span");
      span.className = cls;
      span.textContent = tok;
      frag.appendChild(span);
      if (m[1] !== undefined && m[2] !== undefined) frag.appendChild(document.createTextNode(m[2]));
      last = m.index + m[0].length;
    }
    if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
    target.replaceChildren(frag);
  }

  // Pretty-prints JSON text; returns the text unchanged if it is not JSON.
  function pretty(text) {
    if (typeof text !== "string") text = JSON.stringify(text, null, 2);
    if (!text) return "";
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch (err) {
      return text;
    }
  }

  function jsonBlock(text) {
    var pre = h("pre", { className: "json" });
    var p = pretty(text);
    if (p !== text || looksLikeJSON(p)) highlightInto(pre, p);
    else {
      // Not JSON (a cause in words): it wraps.
      pre.classList.add("text");
      pre.textContent = p;
    }
    return pre;
  }

  function looksLikeJSON(text) {
    try {
      JSON.parse(text);
      return true;
    } catch (err) {
      return false;
    }
  }

  function highlightPre(pre) {
    if (pre.hasAttribute("data-highlighted")) return;
    pre.setAttribute("data-highlighted", "");
    var text = pre.textContent;
    if (!text || !looksLikeJSON(text)) return;
    if (text.indexOf("\n") < 0) text = pretty(text);
    highlightInto(pre, text);
  }

  // JSON blocks: highlighted at once, except those in <details> (the
  // history's), highlighted when opened.
  function initDefinition() {
    document.querySelectorAll("pre.json").forEach(function (pre) {
      if (!pre.closest("details")) highlightPre(pre);
    });
    document.addEventListener(
      "toggle",
      function (ev) {
        var d = ev.target;
        if (d && d.tagName === "DETAILS" && d.open) d.querySelectorAll("pre.json").forEach(highlightPre);
      },
      true
    );
  }

  // -------------------------------------------------------------------
  // Graph.

  function initGraph() {
    var container = document.getElementById("graph");
    var data = readJSON("graph-data");
    if (!container || !data || !window.StepwiseGraph) return;
    window.StepwiseGraph.messages = messages;
    var statuses = document.getElementById("graph-status") ? readJSON("graph-status") || {} : null;
    var retries = readJSON("graph-retries");
    try {
      window.StepwiseGraph.render(container, data, statuses, retries);
    } catch (err) {
      if (window.console) console.error("stepwise: graph", err);
      container.replaceChildren(h("p", { className: "error", text: t("requestFailed") }));
    }
  }

  // -------------------------------------------------------------------
  // Fields updated in place.

  function setField(name, value, root) {
    (root || document).querySelectorAll('[data-field="' + name + '"]').forEach(function (e) {
      var text = value === undefined || value === null ? "" : String(value);
      if (name === "status") {
        e.textContent = statusName(text);
      } else if (name === "stopDate") {
        var when = text ? timeNode(text) : null;
        if (when) e.replaceChildren(when);
        else e.textContent = text;
      } else if (name === "output" || e.classList.contains("json")) {
        var p = pretty(text);
        if (looksLikeJSON(p)) highlightInto(e, p);
        else e.textContent = p;
      } else {
        e.textContent = text;
      }
      if (name === "status") e.setAttribute("data-status", STATUS_KEYS[text] || "");
      var row = e.closest("[data-field-row]");
      if (row) row.hidden = text === "";
    });
  }

  // -------------------------------------------------------------------
  // Execution page: polling while running.

  function initPolling() {
    var m = main();
    if (!m || m.getAttribute("data-page") !== "execution") return;
    var arn = m.getAttribute("data-execution-arn");
    if (!arn || m.getAttribute("data-status") !== "RUNNING") return;
    var url = "/console/executions/status?arn=" + encodeURIComponent(arn);
    var failures = 0;
    var stopped = false;

    function schedule() {
      if (!stopped) setTimeout(poll, failures ? Math.min(POLL_MS * (1 + failures), 10000) : POLL_MS);
    }

    function poll() {
      if (document.hidden) {
        schedule();
        return;
      }
      fetch(url, { headers: { Accept: "application/json" }, cache: "no-store", credentials: "same-origin" })
        .then(function (r) {
          if (r.status === 401) signedOut();
          if (!r.ok) throw new Error("HTTP " + r.status);
          return r.json();
        })
        .then(function (s) {
          failures = 0;
          if (!s || typeof s !== "object") throw new Error("bad answer");
          if (s.states && window.StepwiseGraph) window.StepwiseGraph.setStatuses(s.states, null, s.retries || null);
          ["status", "stopDate", "output", "error", "cause"].forEach(function (f) {
            if (f in s) setField(f, s[f]);
          });
          if (s.status) m.setAttribute("data-status", s.status);
          if (s.status && s.status !== "RUNNING") {
            // The execution ended: the graph and the facts are current;
            // the actions follow its status. The history table is the
            // server's, read when the page loaded: offer to read it again.
            stopped = true;
            var stop = document.querySelector('button[data-action="StopExecution"]');
            if (stop) stop.disabled = true;
            document.querySelectorAll("#operator-controls button").forEach(function (b) {
              b.disabled = true;
            });
            var redrive = document.querySelector('button[data-action="RedriveExecution"]');
            if (redrive) redrive.disabled = s.status === "SUCCEEDED";
            var more = document.querySelector("[data-field=history-stale]");
            if (more) more.hidden = false;
            return;
          }
          schedule();
        })
        .catch(function (err) {
          failures++;
          if (window.console) console.warn("stepwise: polling", err);
          schedule();
        });
    }

    schedule();
  }

  // -------------------------------------------------------------------
  // State details panel.

  var detailsSeq = 0;

  function panel() {
    return document.getElementById("state-details");
  }

  function showDetails(children) {
    var p = panel();
    if (!p) return;
    p.replaceChildren.apply(p, children);
    p.classList.add("has-state");
  }

  function badge(status) {
    return status ? h("span", { className: "badge", "data-status": status, text: statusName(status) }) : null;
  }

  // A status in the page's language: a state's (succeeded, not-run) or
  // an execution's (SUCCEEDED).
  var STATUS_MESSAGE_KEYS = { "not-run": "notRun", "map-run": "inMapRun" };
  function statusName(status) {
    return label(STATUS_MESSAGE_KEYS[status] || status, status);
  }

  function section(title, content) {
    return h("section", { className: "detail" }, [h("h3", { text: title }), content]);
  }

  function label(key, fallback) {
    return typeof messages[key] === "string" ? messages[key] : fallback;
  }

  function safeHref(href) {
    if (typeof href !== "string") return null;
    // Only links within the console: a path, not a scheme or another host.
    if (href.charAt(0) !== "/" || href.charAt(1) === "/" || href.charAt(1) === "\\") return null;
    return href;
  }

  function runList(items, kindLabel, onPick) {
    var ol = h("ol", { className: "runs" });
    items.forEach(function (it, i) {
      if (!it || typeof it !== "object") return;
      // A branch by its number (from 1, as the graph's); an iteration by
      // its index (from 0, AWS's MapIterationStarted index).
      var name = it.name || it.label || (it.number !== undefined ? kindLabel + " " + it.number
        : kindLabel + (kindLabel === "#" ? "" : " ") + (it.index !== undefined ? it.index : i));
      var href = safeHref(it.href);
      var link = href ? h("a", { href: href, text: String(name) }) : h("span", { text: String(name) });
      if (!href && onPick) {
        link = h("button", { type: "button", className: "link", "data-index": it.index !== undefined ? it.index : i, text: String(name) });
        link.addEventListener("click", function () { onPick(it.index !== undefined ? it.index : i); });
      }
      ol.appendChild(h("li", { "data-status": it.status || null }, [link, " ", badge(it.status)]));
    });
    return ol;
  }

  // A duration, one way per language as the server writes them
  // (formatDuration in duration.go): 0.437s, 2.70s, 49.4s, 1m 49s,
  // 2h 3m 4s; 0.437秒, 2.70秒, 49.4秒, 1分49秒, 2時間3分4秒.
  function formatDuration(ms) {
    if (typeof ms !== "number" || !isFinite(ms)) return "";
    ms = Math.max(0, Math.floor(ms));
    var ja = document.documentElement.lang === "ja";
    var sec = ja ? "秒" : "s";
    if (ms < 1000) return (ms / 1000).toFixed(3) + sec;
    if (ms < 10000) return (Math.floor(ms / 10) / 100).toFixed(2) + sec;
    if (ms < 60000) return (Math.floor(ms / 100) / 10).toFixed(1) + sec;
    var s = Math.floor((ms + 500) / 1000);
    var hours = Math.floor(s / 3600), mins = Math.floor((s % 3600) / 60);
    s %= 60;
    if (ja) return (hours ? hours + "時間" : "") + mins + "分" + s + "秒";
    return (hours ? hours + "h " : "") + mins + "m " + s + "s";
  }

  // One iteration of a Map: the states that ran within it and its events.
  function renderIteration(d, name, back) {
    var title = name + " #" + d.iteration;
    var backButton = h("button", { type: "button", className: "link back", text: "← " + name });
    backButton.addEventListener("click", back);
    var children = [
      h("header", { className: "details-head", "data-iteration": d.iteration }, [
        h("h2", { text: title }), h("span", { className: "type", text: label("iteration", "Iteration") }), badge(d.status),
      ]),
      backButton,
    ];
    (Array.isArray(d.states) ? d.states : []).forEach(function (st) {
      if (!st || typeof st !== "object") return;
      var body = [h("header", { className: "details-head" }, [
        h("h3", { text: String(st.state) }), st.type ? h("span", { className: "type", text: String(st.type) }) : null, badge(st.status),
      ])];
      var facts = h("dl", { className: "facts" });
      if (st.retries) {
        facts.appendChild(h("dt", { text: label("retries", "Retries") }));
        facts.appendChild(h("dd", { text: String(st.retries) }));
      }
      if (typeof st.durationMs === "number") {
        facts.appendChild(h("dt", { text: label("duration", "Duration") }));
        facts.appendChild(h("dd", { text: formatDuration(st.durationMs) }));
      }
      if (facts.childNodes.length) body.push(facts);
      if (st.error) body.push(section(label("error", "Error"), h("pre", { className: "error", text: String(st.error) })));
      if (st.cause) body.push(section(label("cause", "Cause"), jsonBlock(String(st.cause))));
      if (st.input) body.push(section(label("input", "Input"), jsonBlock(st.input)));
      if (st.output) body.push(section(label("output", "Output"), jsonBlock(st.output)));
      children.push(h("article", { className: "iteration-state", "data-state": String(st.state), "data-status": st.status || null }, body));
    });
    if (Array.isArray(d.events) && d.events.length) {
      var rows = d.events.map(function (ev) {
        return h("tr", { "data-id": ev.id }, [
          h("td", { className: "num", text: String(ev.id) }), h("td", { text: String(ev.type) }),
          h("td", { text: String(ev.step || "") }), h("td", { className: "num", "data-ms": ev.elapsedMs, text: formatDuration(ev.elapsedMs) }),
        ]);
      });
      var table = h("table", { className: "history compact" }, [
        h("thead", {}, [h("tr", {}, [
          h("th", { className: "num", text: label("id", "ID") }), h("th", { text: label("type", "Type") }),
          h("th", { text: label("step", "Step") }), h("th", { className: "num", text: label("elapsed", "Elapsed (ms)") }),
        ])]),
        h("tbody", {}, rows),
      ]);
      var note = d.totalEvents > d.events.length ? h("p", { className: "muted", text: d.events.length + " / " + d.totalEvents }) : null;
      children.push(section(label("iterationEvents", "Events"), h("div", {}, [table, note])));
    }
    return children;
  }

  function fetchDetails(arn, name, iteration) {
    var url = "/console/executions/state?arn=" + encodeURIComponent(arn) + "&state=" + encodeURIComponent(name);
    if (iteration !== undefined) url += "&iteration=" + encodeURIComponent(String(iteration));
    return fetch(url, { headers: { Accept: "application/json" }, cache: "no-store", credentials: "same-origin" }).then(function (r) {
      if (r.status === 404) return null;
      if (r.status === 401) signedOut();
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.json();
    });
  }

  // A state's attempts, oldest first: when each started, its status, how
  // long it ran and its error; the last one (the graph's) marked.
  function attemptList(list) {
    var ol = h("ol", { className: "attempts" });
    list.forEach(function (at) {
      if (!at || typeof at !== "object") return;
      var parts = [badge(at.status), " ", timeNode(String(at.started || "")) || h("span", { text: String(at.started || "") })];
      if (typeof at.durationMs === "number") parts.push(" · " + formatDuration(at.durationMs));
      if (at.error) parts.push(" · ", h("code", { text: String(at.error) }));
      if (at.cause) {
        // A long cause is cut here (whole in its title and the history).
        var cause = String(at.cause);
        var cut = Array.from(cause);
        parts.push(" ", h("span", { className: "muted", title: cut.length > 160 ? cause : null,
          text: cut.length > 160 ? cut.slice(0, 159).join("") + "\u2026" : cause }));
      }
      if (at.current) parts.push(" ", h("span", { className: "muted", text: "(" + label("lastAttempt", "last attempt") + ")" }));
      ol.appendChild(h("li", { "data-status": at.status || null, "data-current": at.current ? "" : null }, parts));
    });
    return ol;
  }

  function renderExecutionState(d, name, onIteration) {
    var head = h("header", { className: "details-head" }, [
      h("h2", { text: d.state || name }),
      d.type ? h("span", { className: "type", text: d.type }) : null,
      badge(d.status),
    ]);
    var children = [head];
    var facts = h("dl", { className: "facts" });
    if (typeof d.retries === "number") {
      facts.appendChild(h("dt", { text: label("retries", "Retries") }));
      facts.appendChild(h("dd", { text: String(d.retries) }));
    }
    if (typeof d.durationMs === "number") {
      facts.appendChild(h("dt", { text: label("duration", "Duration") }));
      facts.appendChild(h("dd", { text: formatDuration(d.durationMs) }));
    }
    // The execution a states:startExecution task started.
    var child = d.child && typeof d.child === "object" ? d.child : null;
    if (child && safeHref(child.href)) {
      facts.appendChild(h("dt", { text: label("childExecution", "Child execution") }));
      var childName = String(child.arn || "").split(":").pop();
      facts.appendChild(h("dd", { "data-field": "child-execution" }, [h("a", { href: safeHref(child.href), title: String(child.arn || ""), text: childName })]));
    }
    // The map run a distributed Map started: its children's counts.
    var run = d.mapRun && typeof d.mapRun === "object" ? d.mapRun : null;
    if (run) {
      facts.appendChild(h("dt", { text: label("mapRun", "Map run") }));
      var href = typeof run.href === "string" && run.href.charAt(0) === "#" ? run.href : null;
      facts.appendChild(h("dd", { "data-field": "map-run" }, [
        href ? h("a", { href: href, title: String(run.arn || ""), text: String(run.summary || "") }) : h("span", { text: String(run.summary || "") }),
        " ", badge(run.status ? STATUS_KEYS[run.status] || null : null),
      ]));
    }
    if (facts.childNodes.length) children.push(facts);
    if (d.error) children.push(section(label("error", "Error"), h("pre", { className: "error", text: String(d.error) })));
    if (d.cause) children.push(section(label("cause", "Cause"), jsonBlock(String(d.cause))));
    if (d.input) children.push(section(label("input", "Input"), jsonBlock(d.input)));
    if (d.output) children.push(section(label("output", "Output"), jsonBlock(d.output)));
    if (Array.isArray(d.attempts) && d.attempts.length) {
      children.push(section(label("attempts", "Attempts"), attemptList(d.attempts)));
    }
    if (Array.isArray(d.iterations) && d.iterations.length) {
      children.push(section(label("iterations", "Iterations"), h("div", {}, [
        h("p", { className: "muted", "data-field": "iteration-index", text: label("awsIndex", "#: the iteration's index, from 0 as on AWS") }),
        runList(d.iterations, "#", onIteration)])));
    }
    if (Array.isArray(d.branches) && d.branches.length) {
      children.push(section(label("branches", "Branches"), runList(d.branches, label("branch", "Branch"))));
    }
    if (children.length === 1) children.push(h("p", { className: "muted", text: t("noDetails") }));
    return children;
  }

  // The JSON of a state in a definition, searched in nested machines too.
  function findState(def, name) {
    if (!def || typeof def !== "object") return null;
    var states = def.States;
    if (states && typeof states === "object" && Object.prototype.hasOwnProperty.call(states, name)) {
      return states[name];
    }
    if (!states || typeof states !== "object") return null;
    var keys = Object.keys(states);
    for (var i = 0; i < keys.length; i++) {
      var s = states[keys[i]];
      if (!s || typeof s !== "object") continue;
      var inner = [];
      if (Array.isArray(s.Branches)) inner = inner.concat(s.Branches);
      if (s.ItemProcessor) inner.push(s.ItemProcessor);
      if (s.Iterator) inner.push(s.Iterator);
      for (var j = 0; j < inner.length; j++) {
        var found = findState(inner[j], name);
        if (found) return found;
      }
    }
    return null;
  }

  function initDetails() {
    var container = document.getElementById("graph");
    var m = main();
    if (!container || !m) return;
    var page = m.getAttribute("data-page");
    var definition = page === "state-machine" ? readJSON("definition-data") : null;

    container.addEventListener("state-selected", function (ev) {
      var name = ev.detail && ev.detail.state;
      if (typeof name !== "string") return;
      ++detailsSeq;

      if (page !== "execution") {
        var st = findState(definition, name);
        if (!st) {
          showDetails([h("header", { className: "details-head" }, [h("h2", { text: name })]), h("p", { className: "muted", text: t("noDetails") })]);
          return;
        }
        showDetails([
          h("header", { className: "details-head" }, [h("h2", { text: name }), st.Type ? h("span", { className: "type", text: String(st.Type) }) : null]),
          jsonBlock(JSON.stringify(st, null, 2)),
        ]);
        return;
      }

      var arn = m.getAttribute("data-execution-arn") || "";
      var load = function (iteration) {
        var seq = ++detailsSeq;
        showDetails([h("header", { className: "details-head" }, [h("h2", { text: name })]), h("p", { className: "muted loading", text: t("loading") })]);
        fetchDetails(arn, name, iteration)
          .then(function (d) {
            if (seq !== detailsSeq) return;
            if (!d || typeof d !== "object") {
              showDetails([h("header", { className: "details-head" }, [h("h2", { text: name })]), h("p", { className: "muted", text: t("noDetails") })]);
              return;
            }
            if (iteration !== undefined) {
              showDetails(renderIteration(d, name, function () { load(); }));
              return;
            }
            showDetails(renderExecutionState(d, name, function (index) { load(index); }));
          })
          .catch(function (err) {
            if (seq !== detailsSeq) return;
            if (window.console) console.warn("stepwise: state details", err);
            showDetails([h("header", { className: "details-head" }, [h("h2", { text: name })]), h("p", { className: "error", text: t("requestFailed") })]);
          });
      };
      load();
    });
  }

  // -------------------------------------------------------------------
  // Actions through the Step Functions API.

  // signedOut reloads the page when the server wants a sign-in (the
  // session expired): the server sends the reload to its sign-in page.
  function signedOut() {
    location.reload();
  }

  function callAPI(op, body) {
    return callTarget("AWSStepFunctions." + op, body);
  }

  // callStepwise calls one of Stepwise's own operations (the operator
  // controls), served beside the Step Functions API.
  function callStepwise(op, body) {
    return callTarget("Stepwise." + op, body);
  }

  function callTarget(target, body) {
    return fetch("/", {
      method: "POST",
      headers: { "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": target },
      body: JSON.stringify(body),
      credentials: "same-origin",
    }).then(function (r) {
      return r.text().then(function (text) {
        var data = null;
        try {
          data = text ? JSON.parse(text) : {};
        } catch (err) {
          data = null;
        }
        if (r.ok && data) return data;
        var type = (data && (data.__type || data.code)) || "HTTP " + r.status;
        type = String(type);
        if (type.indexOf("#") >= 0) type = type.slice(type.lastIndexOf("#") + 1);
        var msg = (data && (data.message || data.Message)) || (!data && text ? text.slice(0, 300) : "");
        if (type === "MissingAuthenticationTokenException") signedOut();
        var e = new Error(msg);
        e.awsType = type;
        throw e;
      });
    });
  }

  function actionError(near, text) {
    var scope = (near && near.closest("form, section, [data-actions]")) || document;
    var target = scope.querySelector('[data-field="action-error"]') || document.querySelector('[data-field="action-error"]');
    if (!target) {
      if (text) window.alert(text);
      return;
    }
    target.textContent = text || "";
    target.hidden = !text;
  }

  function errorText(err) {
    if (err && err.awsType) return err.awsType + (err.message ? ": " + err.message : "");
    return t("requestFailed") + (err && err.message ? " (" + err.message + ")" : "");
  }

  function initActions() {
    var m = main();
    if (!m) return;
    document.querySelectorAll("button[data-action]").forEach(function (btn) {
      var op = btn.getAttribute("data-action");
      if (op !== "StopExecution" && op !== "RedriveExecution") return;
      btn.addEventListener("click", function () {
        var arn = btn.getAttribute("data-execution-arn") || m.getAttribute("data-execution-arn");
        if (!arn) return;
        if (!window.confirm(t(op === "StopExecution" ? "confirmStop" : "confirmRedrive"))) return;
        actionError(btn, "");
        btn.disabled = true;
        btn.setAttribute("aria-busy", "true");
        callAPI(op, { executionArn: arn })
          .then(function () {
            location.reload();
          })
          .catch(function (err) {
            btn.disabled = false;
            btn.removeAttribute("aria-busy");
            actionError(btn, errorText(err));
          });
      });
    });

    var form = document.getElementById("start-form");
    if (!form) return;
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var arn = form.getAttribute("data-state-machine-arn") || m.getAttribute("data-state-machine-arn");
      var nameField = form.elements.namedItem("name");
      var inputField = form.elements.namedItem("input");
      var name = nameField ? nameField.value.trim() : "";
      var input = inputField ? inputField.value.trim() : "";
      actionError(form, "");
      if (inputField) inputField.removeAttribute("aria-invalid");
      var body = { stateMachineArn: arn };
      if (name) body.name = name;
      if (input) {
        try {
          JSON.parse(input);
        } catch (err) {
          if (inputField) {
            inputField.setAttribute("aria-invalid", "true");
            inputField.focus();
          }
          actionError(form, t("invalidInput") + " (" + err.message + ")");
          return;
        }
        body.input = input;
      }
      var submit = form.querySelector('[type="submit"]');
      if (submit) submit.disabled = true;
      callAPI("StartExecution", body)
        .then(function (r) {
          if (r && r.executionArn) location.href = "/executions/" + encodeURIComponent(r.executionArn);
          else location.reload();
        })
        .catch(function (err) {
          if (submit) submit.disabled = false;
          actionError(form, errorText(err));
        });
    });
  }

  // -------------------------------------------------------------------
  // The run of a redriven execution its download records.
  (function () {
    var select = document.getElementById("download-run");
    var link = document.getElementById("download-test");
    if (!select || !link) return;
    var base = link.getAttribute("href").replace(/&run=\d+$/, "");
    function update() {
      var last = select.options[select.options.length - 1].value;
      link.setAttribute("href", select.value === last ? base : base + "&run=" + encodeURIComponent(select.value));
    }
    select.addEventListener("change", update);
    update();
  })();

  // History filter.

  function initHistoryFilter() {
    var input = document.getElementById("history-filter");
    var table = document.getElementById("history");
    if (!input || !table) return;
    var apply = function () {
      var q = input.value.trim().toLowerCase();
      var shown = 0;
      table.querySelectorAll("tr[data-type]").forEach(function (tr) {
        var hay = (tr.getAttribute("data-type") + " " + tr.textContent).toLowerCase();
        var ok = !q || hay.indexOf(q) >= 0;
        tr.hidden = !ok;
        if (ok) shown++;
      });
      table.setAttribute("data-shown", String(shown));
      setField("history-count", String(shown));
    };
    input.addEventListener("input", apply);
    if (input.value) apply();
  }

  // -------------------------------------------------------------------
  // Language switch.

  function initLanguage() {
    document.querySelectorAll("a[data-lang], button[data-lang]").forEach(function (a) {
      a.addEventListener("click", function (ev) {
        var lang = a.getAttribute("data-lang");
        if (lang !== "en" && lang !== "ja") return;
        ev.preventDefault();
        document.cookie = "stepwise-lang=" + lang + "; path=/; max-age=31536000; SameSite=Lax";
        location.reload();
      });
    });
  }

  // Times, in the browser's zone or UTC (times.js).
  function timeNode(text) {
    return window.StepwiseTimes ? window.StepwiseTimes.node(text) : null;
  }

  // -------------------------------------------------------------------
  // Operator controls: hold, release, suspend, resume, skip, kill.

  function initOperator() {
    var m = main();
    if (!m) return;
    var form = document.getElementById("operator-form");
    var arn = form ? form.getAttribute("data-arn") : m.getAttribute("data-execution-arn");
    var done = function () {
      location.reload();
    };
    document.querySelectorAll("#operator-controls button[data-op]").forEach(function (btn) {
      if (btn.type !== "button") return;
      btn.addEventListener("click", function () {
        actionError(btn, "");
        btn.disabled = true;
        callStepwise(btn.getAttribute("data-op"), { executionArn: m.getAttribute("data-execution-arn") })
          .then(done)
          .catch(function (err) {
            btn.disabled = false;
            actionError(btn, errorText(err));
          });
      });
    });
    if (!form) return;
    var graph = document.getElementById("graph");
    var select = form.elements.namedItem("state");
    if (graph && select) {
      graph.addEventListener("state-selected", function (ev) {
        var name = ev.detail && ev.detail.state;
        if (typeof name !== "string") return;
        for (var i = 0; i < select.options.length; i++) {
          if (select.options[i].value === name) select.selectedIndex = i;
        }
      });
    }
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var btn = ev.submitter;
      var op = btn && btn.getAttribute("data-op");
      if (!op) return;
      var state = select ? select.value : "";
      var body = { state: state };
      actionError(form, "");
      if (op === "HoldState" || op === "ReleaseState") {
        body.arn = arn;
      } else {
        body.executionArn = arn;
      }
      if (op === "SkipState") {
        var out = form.elements.namedItem("output");
        var text = out ? out.value.trim() : "";
        out.removeAttribute("aria-invalid");
        try {
          JSON.parse(text || "{}");
        } catch (err) {
          out.setAttribute("aria-invalid", "true");
          out.focus();
          actionError(form, t("invalidOutput") + " (" + err.message + ")");
          return;
        }
        body.output = text || "{}";
        if (!window.confirm(t("confirmSkip"))) return;
      }
      if (op === "KillState") {
        var e = form.elements.namedItem("error");
        var c = form.elements.namedItem("cause");
        if (e && e.value.trim()) body.error = e.value.trim();
        if (c && c.value) body.cause = c.value;
        if (!window.confirm(t("confirmKill"))) return;
      }
      btn.disabled = true;
      btn.setAttribute("aria-busy", "true");
      callStepwise(op, body)
        .then(done)
        .catch(function (err) {
          btn.disabled = false;
          btn.removeAttribute("aria-busy");
          actionError(form, errorText(err));
        });
    });
  }

  // -------------------------------------------------------------------
  // Rerun of an ended execution: a preview (a dry run), then the rerun.

  function initRerun() {
    var form = document.getElementById("rerun-form");
    if (!form) return;
    var arn = form.getAttribute("data-arn");
    var from = form.elements.namedItem("from");
    var state = form.elements.namedItem("state");
    var output = form.elements.namedItem("output");
    var runBtn = form.querySelector('button[data-rerun="run"]');
    var preview = document.getElementById("rerun-preview");
    var previewed = null; // the request body of the preview shown
    var graph = document.getElementById("graph");
    var reset = function () {
      previewed = null;
      runBtn.disabled = true;
      preview.hidden = true;
      preview.textContent = "";
    };
    var showFields = function () {
      form.querySelectorAll("[data-rerun-for]").forEach(function (el) {
        el.hidden = el.getAttribute("data-rerun-for") !== from.value;
      });
    };
    showFields();
    from.addEventListener("change", function () {
      showFields();
      reset();
    });
    if (state) state.addEventListener("change", reset);
    if (output) output.addEventListener("input", reset);
    if (graph && state) {
      graph.addEventListener("state-selected", function (ev) {
        var name = ev.detail && ev.detail.state;
        if (typeof name !== "string") return;
        for (var i = 0; i < state.options.length; i++) {
          if (state.options[i].value === name && state.selectedIndex !== i) {
            state.selectedIndex = i;
            reset();
          }
        }
      });
    }
    var body = function () {
      var b = { executionArn: arn, from: from.value };
      if (from.value === "STATE") b.state = state ? state.value : "";
      if (from.value === "NEXT") {
        var text = output ? output.value.trim() : "";
        output.removeAttribute("aria-invalid");
        try {
          JSON.parse(text || "{}");
        } catch (err) {
          output.setAttribute("aria-invalid", "true");
          output.focus();
          actionError(form, t("invalidOutput") + " (" + err.message + ")");
          return null;
        }
        b.output = text || "{}";
      }
      return b;
    };
    var list = function (l) {
      return l && l.length ? l.join(", ") : t("none");
    };
    var render = function (p) {
      preview.textContent = "";
      [
        ["rerunMode", p.mode],
        ["rerunStart", p.startState || t("failedStates")],
        ["rerunStates", list(p.rerunStates)],
        ["keptStates", list(p.keptStates)],
        ["addedStates", list(p.addedStates)],
        ["removedStates", list(p.removedStates)],
        ["changedStates", list(p.changedStates)],
      ].forEach(function (row) {
        preview.appendChild(h("dt", { text: t(row[0]) }));
        preview.appendChild(h("dd", { text: row[1], "data-field": row[0] }));
      });
      preview.hidden = false;
    };
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var btn = ev.submitter;
      var what = btn && btn.getAttribute("data-rerun");
      if (!what) return;
      actionError(form, "");
      var b;
      if (what === "run") {
        if (!previewed) return;
        if (!window.confirm(t("confirmRerun"))) return;
        b = previewed;
      } else {
        b = body();
        if (!b) return;
        b.dryRun = true;
      }
      var req = Object.assign({}, b);
      if (what === "run") delete req.dryRun;
      btn.disabled = true;
      btn.setAttribute("aria-busy", "true");
      callStepwise("RerunExecution", req)
        .then(function (p) {
          btn.removeAttribute("aria-busy");
          if (what === "run") {
            location.reload();
            return;
          }
          btn.disabled = false;
          render(p);
          previewed = b;
          runBtn.disabled = false;
        })
        .catch(function (err) {
          btn.disabled = false;
          btn.removeAttribute("aria-busy");
          if (what !== "run") reset();
          actionError(form, errorText(err));
        });
    });
  }

  function init() {
    if (window.StepwiseTimes) window.StepwiseTimes.init();
    initDefinition();
    initGraph();
    initDetails();
    initPolling();
    initActions();
    initOperator();
    initRerun();
    initHistoryFilter();
    initLanguage();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
