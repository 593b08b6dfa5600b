// agentready scan page: streams a scan (Server-Sent Events over fetch, so a
// 402/429 answer can be read and explained) and draws the same markup the
// edge renders for a finished report. Without this script every URL still
// renders a complete report on the server.
(function () {
  "use strict";
  var WORDS = {pass: "Pass", partial: "Partial", fail: "Fail", na: "Not applicable", pending: "Waiting"};
  var MARKS = {pass: "✓", partial: "◐", fail: "✗", na: "–", pending: "…"};

  function el(tag, attrs) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c != null) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return e;
  }

  // Recommendations mark code with backticks; render them as code, as the server does.
  function inline(text) {
    var f = document.createDocumentFragment();
    var parts = String(text || "").split("`");
    parts.forEach(function (p, i) {
      if (i % 2 === 1 && i < parts.length - 1) f.appendChild(el("code", {text: p}));
      else f.appendChild(document.createTextNode((i % 2 === 1 ? "`" : "") + p));
    });
    return f;
  }

  function pretty(s) {
    try { return JSON.stringify(JSON.parse(s), null, 2); } catch (e) { return s; }
  }

  function host(u) { return String(u).replace(/^https?:\/\//, "").replace(/\/$/, ""); }

  function copyButton() { return el("button", {type: "button", "class": "copy", text: "Copy"}); }

  function checkItem(c) {
    var st = WORDS[c.status] ? c.status : "na";
    var li = el("li", {"class": "check " + st, id: "check-" + c.id, "data-status": st});
    var sum = el("summary", null,
      el("span", {"class": "st", "aria-hidden": "true", text: MARKS[st]}), " ",
      el("span", {"class": "sw", text: WORDS[st]}), " ",
      el("span", {"class": "cid", text: c.id}), " ",
      el("span", {"class": "cn", text: c.name}));
    var d = el("details", null, sum);
    if (st !== "pending") {
      sum.appendChild(document.createTextNode(" "));
      sum.appendChild(el("span", {"class": "msg"}, inline(c.message)));
      var more = el("div", {"class": "more"});
      if (c.recommendation) more.appendChild(el("p", {"class": "rec"}, el("strong", {text: "Recommendation:"}), " ", inline(c.recommendation)));
      if (c.foundAt) more.appendChild(el("p", {"class": "found"}, "Found at ", el("code", {text: c.foundAt})));
      if (c.details) more.appendChild(el("div", {"class": "snippet"}, el("pre", null, el("code", {text: pretty(c.details)})), copyButton()));
      d.appendChild(more);
    }
    li.appendChild(d);
    return li;
  }

  var SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }

  // The score as the edge draws it: a ring three quarters round, the
  // number and grade as text in it, coloured by the level as the badge is.
  function gauge(s, level) {
    var ring = svg("svg", {viewBox: "0 0 120 120", "aria-hidden": "true", focusable: "false"});
    ring.appendChild(svg("circle", {"class": "track", cx: "60", cy: "60", r: "50", pathLength: "100"}));
    ring.appendChild(svg("circle", {"class": "arc", cx: "60", cy: "60", r: "50", pathLength: "100", "stroke-dasharray": (Math.max(0, Math.min(100, s.value)) * 0.75).toFixed(2) + " 100"}));
    return el("div", {"class": "gauge lv" + Math.max(0, Math.min(3, level)), id: "gauge"}, ring,
      el("p", null, el("span", {"class": "big", id: "score-value", text: String(s.value)}), " ",
        el("span", {"class": "of", text: "out of 100"}), el("span", {"class": "vh", text: ","}), " ",
        el("span", {"class": "gr"}, "grade ", el("strong", {id: "score-grade", text: s.grade}))));
  }

  function ladder(rep) {
    var ol = el("ol", {"class": "ladder", id: "ladder"});
    rep.levels.forEach(function (l) {
      var n = l.level.number, applicable = l.total - l.na;
      var mark = "○", state = "not reached", cls = "no";
      if (applicable <= 0) { mark = "–"; state = ""; cls = "na"; }
      else if (n > 3) { mark = "◇"; state = ""; cls = "apart"; }
      else if (n <= rep.currentLevel) { mark = "✓"; state = "reached"; cls = "yes"; }
      var li = el("li", {"class": cls + " lv" + Math.max(0, Math.min(3, n))},
        el("span", {"class": "ln"}, el("span", {"class": "mk", "aria-hidden": "true", text: mark}), " ", el("span", {"class": "lw", text: "Level "}), n + " · " + l.level.name), " ");
      if (applicable <= 0) li.appendChild(el("span", {"class": "lc", text: "not applicable to this site"}));
      else {
        li.appendChild(el("span", {"class": "lc"}, l.passed + " of " + applicable, el("span", {"class": "lw", text: " passed"}), state ? el("span", {"class": "ls", text: ", " + state}) : ""));
        // A rectangle's width is an attribute, not a style: the policy allows no inline style.
        var bar = svg("svg", {"class": "bar", "aria-hidden": "true", focusable: "false"});
        bar.appendChild(svg("rect", {width: Math.min(100, Math.floor(100 * l.passed / applicable)) + "%", height: "100%", rx: "4"}));
        li.appendChild(bar);
      }
      ol.appendChild(li);
    });
    return ol;
  }

  function summary(rep) {
    var lvl = rep.currentLevel > 0
      ? el("p", {"class": "lvl yes", id: "level-reached"}, el("span", {"class": "mk", "aria-hidden": "true", text: "✓"}), " Level ", el("strong", {id: "score-level", text: rep.currentLevel + " · " + rep.score.levelName}), " reached")
      : el("p", {"class": "lvl", id: "level-reached"}, el("span", {"class": "mk", "aria-hidden": "true", text: "○"}), " ", el("strong", {id: "score-level", text: "No level"}), " reached yet");
    return el("div", {"class": "first"}, el("section", {"class": "card summary", "aria-labelledby": "summary-h"},
      el("h2", {id: "summary-h", "class": "vh", text: "Score"}),
      el("div", {"class": "sumrow"}, gauge(rep.score, rep.currentLevel),
        el("div", {"class": "reach"}, lvl, el("p", null, el("button", {type: "button", id: "rescan", "class": "quiet", "data-url": rep.url, text: "Scan again"}))),
        el("h3", {"class": "vh", text: "Level ladder"}), ladder(rep))));
  }

  function badges(site) {
    var base = location.origin;
    var img = base + "/api/badge?url=" + encodeURIComponent(site);
    var link = base + "/report?url=" + encodeURIComponent(site);
    var snips = [
      ["Markdown", "[![agent readiness](" + img + ")](" + link + ")"],
      ["HTML", '<a href="' + link + '"><img src="' + img + '" alt="agent readiness"></a>'],
      ["Shields endpoint", "https://img.shields.io/endpoint?url=" + encodeURIComponent(img + "&format=shields")]
    ];
    var sec = el("section", {"class": "badges", "aria-labelledby": "badges-h"},
      el("h2", {id: "badges-h", text: "Badge"}),
      el("p", null, el("img", {id: "badge-preview", src: img, alt: "agent readiness badge of " + host(site), height: "20"})));
    snips.forEach(function (s, i) {
      sec.appendChild(el("div", {"class": "snippet"},
        el("label", {"for": "badge-" + i, text: s[0]}),
        el("textarea", {id: "badge-" + i, readonly: "", rows: "2"}, s[1]), copyButton()));
    });
    return sec;
  }

  function when(seconds) {
    var s = Number(seconds) || 0;
    if (s < 60) return Math.max(s, 1) + " s";
    var m = Math.ceil(s / 60);
    return m < 60 ? m + " min" : Math.floor(m / 60) + " h " + (m % 60) + " min";
  }

  // An exhausted allowance is explained, not just refused.
  function refusal(resp, env) {
    var box = el("div", {"class": "note error", role: "alert", id: "refusal"});
    if (resp.status === 402 || resp.status === 429) {
      var limit = resp.headers.get("RateLimit-Limit"), left = resp.headers.get("RateLimit-Remaining") || "0";
      var reset = resp.headers.get("RateLimit-Reset");
      box.appendChild(el("h2", {text: "The free scans for today are used up"}));
      box.appendChild(el("p", {text: left + " of " + (limit || "your") + " free scans remain" + (reset ? "; they reset in " + when(reset) + "." : ".")}));
      box.appendChild(el("p", null, "A free anonymous token raises the allowance: ",
        el("code", {text: "POST " + location.origin + "/api/agent/token"}), " (see ", el("a", {href: "/docs", text: "the documentation"}), ")."));
      if (resp.status === 402) box.appendChild(el("p", {text: "A paid deep scan is available per request over x402 at /api/v1/scan-gateway (0.10 USDC by default), with extra live probes."}));
      if (env && env.message) box.appendChild(el("p", {"class": "found", text: env.message}));
    } else {
      box.appendChild(el("p", {text: (env && env.message) || "The scan could not start (HTTP " + resp.status + "); retry in a minute."}));
    }
    return box;
  }

  // The server's rendering of the finished report adds what the stream does
  // not carry (starter snippets filled in for the site); it replaces the
  // script's only when it is this very scan (same score, same time).
  function adoptServerReport(result, rep) {
    fetch("/report?url=" + encodeURIComponent(rep.url), {headers: {Accept: "text/html", "Cache-Control": "no-cache"}, cache: "no-store"}).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (text) {
      if (!text) return;
      var doc = new DOMParser().parseFromString(text, "text/html");
      var fresh = doc.getElementById("result"), sv = doc.getElementById("score-value"), when = doc.querySelector("#result time");
      if (!fresh || !sv || !when || sv.textContent !== String(rep.score.value)) return;
      if (Math.floor(Date.parse(rep.timestamp) / 1000) !== Date.parse(when.getAttribute("datetime")) / 1000) return;
      var open = Array.prototype.map.call(result.querySelectorAll("details[open]"), function (d) { return d.parentNode.id; });
      result.replaceChildren.apply(result, Array.prototype.slice.call(fresh.childNodes).map(function (n) { return document.adoptNode(n); }));
      open.forEach(function (id) { var li = document.getElementById(id); if (li) li.querySelector("details").open = true; });
      result.setAttribute("data-server", "1");
      showShot();
      badgeStyle();
    }).catch(function () {});
  }

  // The screenshot exists only once the origin has captured one (not every
  // server has Chromium): the thumbnail is shown when the image loads, never
  // broken, and links to the full-size image.
  function showShot() {
    var fig = document.getElementById("shot"), a = fig && fig.querySelector("a");
    if (!a || a.querySelector("img")) return;
    var img = new Image();
    img.alt = "Screenshot of the scanned homepage (opens full size)";
    img.width = 640;
    img.height = 400;
    img.onload = function () { a.appendChild(img); fig.hidden = false; };
    img.src = fig.getAttribute("data-src");
  }

  // The filter of the checks, in place: the same rows the edge hides for
  // ?filter= (which works without this script), and the address follows.
  function applyFilter(link) {
    var show = link.getAttribute("data-status"), n = 0, total = 0;
    document.querySelectorAll(".filters a").forEach(function (a) {
      if (a === link) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    });
    document.querySelectorAll("#checks section.level").forEach(function (sec) {
      var seen = 0;
      sec.querySelectorAll("li.check").forEach(function (li) {
        var on = !show || li.getAttribute("data-status") === show;
        li.hidden = !on;
        total++;
        if (on) { seen++; n++; }
      });
      sec.hidden = seen === 0;
    });
    var word = link.getAttribute("data-word"), shown = document.getElementById("shown");
    if (shown) shown.textContent = !show ? "Showing all " + total + " checks, failed and partial first in each level."
      : n === 0 ? "No check is " + word + "." : "Showing the " + n + " " + word + " of " + total + " checks.";
    var u = new URL(location.href), key = link.getAttribute("data-filter");
    if (key === "all") u.searchParams.delete("filter"); else u.searchParams.set("filter", key);
    u.hash = "checks";
    history.replaceState(null, "", u.href);
  }

  // The badge style changes the preview and every snippet at once.
  function badgeStyle() {
    var sel = document.getElementById("badge-style"), prev = document.getElementById("badge-preview");
    if (!sel || !prev || sel.getAttribute("data-live")) return;
    sel.setAttribute("data-live", "1");
    sel.parentNode.hidden = false;
    sel.addEventListener("change", function () {
      var style = sel.value ? "&style=" + sel.value : "";
      var strip = function (u) { return u.replace(/&style=[a-z-]+/, ""); };
      var old = prev.getAttribute("src"), next = strip(old) + style;
      prev.setAttribute("src", next);
      [0, 1, 2].forEach(function (i) {
        var ta = document.getElementById("badge-" + i);
        if (!ta) return;
        var oldEnc = encodeURIComponent(old), nextEnc = encodeURIComponent(next);
        ta.value = ta.value.split(old).join(next).split(oldEnc).join(nextEnc);
      });
    });
  }

  var running = null;

  function scan(site, fresh) {
    var result = document.getElementById("result");
    if (!result || !site) return;
    if (running) running.abort();
    var ctl = running = new AbortController();
    var button = document.querySelector("#scan button[type=submit]");
    if (button) button.disabled = true;
    result.textContent = "";
    result.removeAttribute("data-server");
    var progress = el("p", {id: "progress", "class": "progress", role: "status", "aria-live": "polite", text: "Starting the scan of " + host(site) + "…"});
    var bar = el("progress", {max: "48", value: "0", "aria-hidden": "true"});
    var checksSec = el("section", {"class": "checks", id: "checks", "aria-labelledby": "checks-h"}, el("h2", {id: "checks-h", text: "Checks"}), " ", progress, bar);
    result.appendChild(checksSec);
    var total = 48, done = 0;
    function finish() { if (button) button.disabled = false; }
    function fail(msg) {
      progress.textContent = msg;
      progress.className = "progress note error";
      finish();
    }
    var url = "/api/scan?url=" + encodeURIComponent(site) + (fresh ? "&fresh=1" : "");
    fetch(url, {headers: {Accept: "text/event-stream"}, signal: ctl.signal}).then(function (resp) {
      if (!resp.ok) {
        return resp.json().catch(function () { return null; }).then(function (env) {
          result.textContent = "";
          result.appendChild(refusal(resp, env));
          finish();
        });
      }
      var reader = resp.body.getReader(), dec = new TextDecoder(), buf = "";
      function handle(name, data) {
        var d;
        try { d = JSON.parse(data); } catch (e) { return; }
        if (name === "scan.started") {
          total = d.checks.length;
          bar.max = total;
          d.levels.forEach(function (l) {
            var list = el("ul", {"class": "list"});
            d.checks.forEach(function (c) {
              if (c.level === l.number) list.appendChild(checkItem({id: c.id, name: c.name, status: "pending"}));
            });
            checksSec.appendChild(el("section", {"class": "level", id: "level-" + l.number},
              el("h3", {text: "Level " + l.number + " · " + l.name}), el("p", {"class": "levdesc", text: l.description}), list));
          });
          progress.textContent = "0 of " + total + " checks done.";
        } else if (name === "check") {
          var old = document.getElementById("check-" + d.id);
          if (old) old.replaceWith(checkItem(d));
          done++;
          bar.value = done;
          // The live region speaks in steps of eight (the bar moves with every
          // check): a screen reader cannot keep up with 48 announcements.
          if (done === total || done % 8 === 0) progress.textContent = done + " of " + total + " checks done.";
        } else if (name === "signal") {
          // Identity and commerce signals: listed apart, never in the score.
          var sl = document.getElementById("signal-list");
          if (!sl) {
            sl = el("ul", {"class": "list", id: "signal-list"});
            result.appendChild(el("section", {"class": "signals", id: "signals", "aria-labelledby": "signals-h"},
              el("h2", {id: "signals-h", text: "Identity and commerce (not scored)"}), sl));
          }
          sl.appendChild(checkItem(d));
        } else if (name === "scan.completed") {
          progress.textContent = d.checks.length + " of " + d.checks.length + " checks done. Score " + d.score.value + " out of 100, grade " + d.score.grade + ".";
          bar.remove();
          result.insertBefore(summary(d), checksSec);
          result.appendChild(badges(d.url));
          adoptServerReport(result, d);
          var share = "/?url=" + encodeURIComponent(d.url);
          if (location.pathname + location.search !== share) history.pushState(null, "", share);
          finish();
        } else if (name === "error") {
          fail((d && d.message) || "The scan failed; retry in a minute.");
        }
      }
      function pump() {
        return reader.read().then(function (r) {
          if (r.done) { finish(); return; }
          buf += dec.decode(r.value, {stream: true}).replace(/\r\n?/g, "\n");
          var i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            var block = buf.slice(0, i), name = "message", data = [];
            buf = buf.slice(i + 2);
            block.split("\n").forEach(function (line) {
              if (line.indexOf("event:") === 0) name = line.slice(6).trim();
              else if (line.indexOf("data:") === 0) data.push(line.slice(5).replace(/^ /, ""));
            });
            if (data.length) handle(name, data.join("\n"));
          }
          return pump();
        });
      }
      return pump();
    }).catch(function (e) {
      if (e && e.name === "AbortError") return;
      fail("The connection to the scanner was lost; press Scan to retry.");
    });
  }

  function copy(btn) {
    var box = btn.parentNode.querySelector("textarea, pre");
    var text = box.value !== undefined ? box.value : box.textContent;
    var done = function () { btn.textContent = "Copied"; setTimeout(function () { btn.textContent = "Copy"; }, 2000); };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, function () { select(box); });
    else select(box);
    function select(b) { if (b.select) b.select(); }
  }

  // The homepage's scan form is a WebMCP tool: an agent in the browser calls
  // it with a url and reads the JSON report. Registered here, not inline, so
  // that the pages run under a policy that allows no inline script.
  var mc = document.modelContext;
  if (mc && mc.registerTool && document.querySelector("form[toolname]")) {
    mc.registerTool({
      name: "scan_site",
      description: "Scan a website for AI-agent readiness; returns its score, level and the checks to fix.",
      inputSchema: {type: "object", properties: {url: {type: "string", description: "The site to scan, such as example.com"}}, required: ["url"]},
      execute: function (args) {
        return fetch("/api/scan?format=json&url=" + encodeURIComponent(args.url)).then(function (r) { return r.text(); })
          .then(function (text) { return {content: [{type: "text", text: text}]}; });
      }
    });
  }

  document.documentElement.className += " js";
  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("scan");
    if (form) form.addEventListener("submit", function (ev) {
      var v = form.querySelector("input[name=url]").value.trim();
      if (!v) return;
      ev.preventDefault();
      scan(v, false);
    });
    var now = document.getElementById("scan-now");
    if (now) now.addEventListener("submit", function (ev) {
      ev.preventDefault();
      scan(new URL(now.action).searchParams.get("url"), false);
    });
    showShot();
    badgeStyle();
    document.addEventListener("click", function (ev) {
      var t = ev.target;
      var f = t.closest && t.closest(".filters a");
      if (f && !ev.ctrlKey && !ev.metaKey && !ev.shiftKey) { ev.preventDefault(); applyFilter(f); }
      else if (t.classList.contains("copy")) copy(t);
      else if (t.id === "rescan") { ev.preventDefault(); scan(t.getAttribute("data-url"), true); }
    });
  });
})();
