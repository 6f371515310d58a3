/*
 * Stepwise console: times.
 *
 * The server writes each as <time datetime="RFC 3339, UTC"> with
 * its UTC text; here they are written in the browser's time zone, or in
 * UTC when the switch in the header says so (remembered in
 * localStorage). A time with data-zone (a schedule's) is in that zone
 * and stays in it.
 */
(function () {
  "use strict";

  var messages = {};
  try {
    var node = document.getElementById("i18n");
    messages = (node && JSON.parse(node.textContent)) || {};
  } catch (err) {
    messages = {};
  }

  function label(key, fallback) {
    return typeof messages[key] === "string" ? messages[key] : fallback;
  }

  function h(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "className") e.className = attrs[k];
      else e.setAttribute(k, String(attrs[k]));
    });
    if (text !== undefined) e.textContent = String(text);
    return e;
  }

  var TZ_KEY = "stepwise-time-zone";
  var UTC_TEXT = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,3}))? UTC$/;
  var formatters = {};

  function browserZone() {
    try {
      return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
    } catch (err) {
      return "UTC";
    }
  }

  function timeMode() {
    try {
      return localStorage.getItem(TZ_KEY) === "utc" ? "utc" : "local";
    } catch (err) {
      return "local";
    }
  }

  // The zone times are written in now.
  function shownZone() {
    return timeMode() === "utc" ? "UTC" : browserZone();
  }

  function formatter(zone) {
    if (!formatters[zone]) {
      formatters[zone] = new Intl.DateTimeFormat("en-US", {
        timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
        hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short",
      });
    }
    return formatters[zone];
  }

  // The offset of a zone from UTC at a moment, in minutes.
  function offsetMinutes(zone, date) {
    var p = {};
    formatter(zone).formatToParts(date).forEach(function (x) { p[x.type] = x.value; });
    var wall = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour % 24, +p.minute, +p.second);
    return Math.round((wall - Math.floor(date.getTime() / 1000) * 1000) / 60000);
  }

  // A zone's name for a moment, its offset from UTC: "UTC", "UTC+9",
  // "UTC+5:30", "UTC-4". The server names zones by the same rule
  // (zoneLabel in the console's Go code), so a page names each zone one
  // way.
  function zoneLabel(zone, date) {
    var off = offsetMinutes(zone, date);
    if (off === 0) return "UTC";
    var sign = off < 0 ? "-" : "+";
    off = Math.abs(off);
    var mins = off % 60;
    return "UTC" + sign + Math.floor(off / 60) + (mins ? ":" + (mins < 10 ? "0" : "") + mins : "");
  }

  // A moment as "2026-11-27 18:00:00.000 UTC+9" in a zone.
  function formatIn(date, zone) {
    var p = {};
    formatter(zone).formatToParts(date).forEach(function (x) { p[x.type] = x.value; });
    var ms = String(date.getUTCMilliseconds());
    while (ms.length < 3) ms = "0" + ms;
    return p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + ":" + p.second + "." + ms + " " + zoneLabel(zone, date);
  }

  // A wall time "2026-11-27T09:30[:00]" in a zone as a moment; null when
  // it is not one.
  function wallIn(text, zone) {
    var m = /^(\d{4})-(\d\d)-(\d\d)(?:[T ](\d\d):(\d\d)(?::(\d\d))?)?$/.exec(text);
    if (!m) return null;
    var wall = Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] || 0), +(m[5] || 0), +(m[6] || 0));
    var guess = new Date(wall - offsetMinutes(zone, new Date(wall)) * 60000);
    return new Date(wall - offsetMinutes(zone, guess) * 60000);
  }

  // A moment as a datetime-local input's value in a zone.
  function wallText(date, zone) {
    var p = {};
    formatter(zone).formatToParts(date).forEach(function (x) { p[x.type] = x.value; });
    return p.year + "-" + p.month + "-" + p.day + "T" + p.hour + ":" + p.minute + ":" + p.second;
  }

  // The executions' filter reads its times in the zone the page shows
  // times in: its hidden tz follows the switch, the times written in it
  // are moved to the new zone, and the hint beside it names the zone.
  function syncFilter() {
    var form = document.getElementById("execution-search");
    if (!form) return;
    var tz = form.querySelector('input[name="tz"]');
    if (!tz) return;
    var zone = shownZone();
    var old = tz.value || "UTC";
    if (old !== zone) {
      form.querySelectorAll('input[name="from"], input[name="to"]').forEach(function (input) {
        var when = input.value ? wallIn(input.value, old) : null;
        if (when) input.value = wallText(when, zone);
      });
      tz.value = zone;
    }
    var hint = form.querySelector('[data-field="filter-zone"]');
    if (hint) hint.textContent = zone === "UTC" ? "UTC" : zone + " (" + zoneLabel(zone, new Date()) + ")";
  }

  // The moment a <time> stands for: its datetime, else its UTC text.
  function instantOf(el) {
    var iso = el.getAttribute("datetime");
    if (iso) {
      var d = new Date(iso);
      return isNaN(d.getTime()) ? null : d;
    }
    var m = UTC_TEXT.exec(el.textContent.trim());
    if (!m) return null;
    var ms = m[7] ? Number((m[7] + "00").slice(0, 3)) : 0;
    return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], ms));
  }

  function renderTime(el) {
    var date = instantOf(el);
    if (!date) return;
    if (!el.hasAttribute("datetime")) el.setAttribute("datetime", date.toISOString());
    var utc = formatIn(date, "UTC");
    if (el.hasAttribute("data-zone")) {
      // A schedule's time: in its zone, to the second.
      var own = el.getAttribute("data-zone");
      try {
        el.textContent = formatIn(date, own).replace(/\.\d{3} /, " ");
      } catch (err) {
        /* a zone the browser does not know: the server's text stays */
      }
      el.title = own + " · " + utc;
      return;
    }
    var zone = shownZone();
    el.textContent = formatIn(date, zone);
    el.title = zone === "UTC" ? utc : zone + " · " + utc;
  }

  // A <time> for a UTC text the server sent as JSON; null when it is not one.
  function timeNode(text) {
    var el = h("time", {}, text);
    if (!instantOf(el)) return null;
    renderTime(el);
    return el;
  }

  function renderTimes() {
    document.querySelectorAll("time").forEach(renderTime);
  }

  // The header names the zone times are in, with a switch to UTC.
  function initTimeZone() {
    var box = document.querySelector('[data-field="time-zone"]');
    var local = browserZone();
    if (box) {
      // The browser's zone and UTC; only UTC when that is the browser's.
      var choices = local === "UTC" || local === "Etc/UTC" ? [["local", "UTC"]]
        : [["local", local + " (" + zoneLabel(local, new Date()) + ")"], ["utc", label("utc", "UTC")]];
      var parts = [h("span", { className: "tz-label" }, label("timeZone", "Time zone")), " "];
      choices.forEach(function (c, i) {
        if (i) parts.push(h("span", { className: "sep" }, "|"));
        var b = h("button", { type: "button", className: "link", "data-tz": c[0] }, c[1]);
        b.addEventListener("click", function () {
          try {
            if (c[0] === "utc") localStorage.setItem(TZ_KEY, "utc");
            else localStorage.removeItem(TZ_KEY);
          } catch (err) {
            /* not remembered */
          }
          mark();
          renderTimes();
        });
        parts.push(b);
      });
      box.replaceChildren.apply(box, parts);
    }
    function mark() {
      syncFilter();
      if (!box) return;
      var mode = choices.length > 1 ? timeMode() : "local";
      box.querySelectorAll("button[data-tz]").forEach(function (b) {
        var on = b.getAttribute("data-tz") === mode;
        b.setAttribute("aria-pressed", on ? "true" : "false");
        if (on) b.setAttribute("aria-current", "true");
        else b.removeAttribute("aria-current");
      });
      box.setAttribute("data-zone", shownZone());
    }
    mark();
    renderTimes();
  }

  // Tonight's page is of a zone: without ?tz= it is the browser's (or
  // UTC, when the switch says so).
  function tonightZone() {
    var m = document.querySelector('main[data-page="tonight"]');
    if (!m || /[?&]tz=/.test(location.search)) return;
    location.replace("/tonight?tz=" + encodeURIComponent(shownZone()));
  }
  tonightZone();

  window.StepwiseTimes = { init: initTimeZone, render: renderTimes, node: timeNode, zoneLabel: zoneLabel };
})();
