// The report's behaviour: matrix filters, and the case page (a hash route #case/<agent>/<case>)
// whose data loads on demand from cases/<agent>/<case>.js, a script that calls
// window.__evalCase(key, data): fetch() is blocked from file://, a <script> tag is not.
// The hash is anyone's to write (a link can carry it), so a case opens only when its key is a
// cell of this page's matrix, from the file that cell names: no path is ever made from the hash.
(function () {
  "use strict";

  var loaded = Object.create(null);
  var waiting = Object.create(null);
  var caseFiles = Object.create(null);
  Array.prototype.forEach.call(document.querySelectorAll("a.cell[data-case][data-file]"), function (a) {
    caseFiles[a.getAttribute("data-case")] = a.getAttribute("data-file");
  });

  window.__evalCase = function (key, data) {
    if (typeof caseFiles[key] !== "string") return;
    loaded[key] = data;
    (waiting[key] || []).forEach(function (done) { done(null, data); });
    delete waiting[key];
  };

  function loadCase(key, done) {
    if (loaded[key]) { done(null, loaded[key]); return; }
    var file = caseFiles[key];
    if (typeof file !== "string") { done("No case " + key + " in this report."); return; }
    if (waiting[key]) { waiting[key].push(done); return; }
    waiting[key] = [done];
    var script = document.createElement("script");
    script.src = file.split("/").map(encodeURIComponent).join("/");
    script.onerror = function () {
      var callbacks = waiting[key] || [];
      delete waiting[key];
      script.remove();
      callbacks.forEach(function (cb) {
        cb("Could not load " + script.getAttribute("src") + ": keep the cases/ folder next to report.html.");
      });
    };
    document.head.appendChild(script);
  }

  // ---- small DOM helpers (text always goes in as text, never as HTML) ----
  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (name) {
        var value = attrs[name];
        if (value === null || value === undefined || value === false) return;
        if (name === "text") node.textContent = value;
        else if (name === "cls") node.className = value;
        else node.setAttribute(name, value);
      });
    }
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node) {
    for (var i = 1; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); continue; }
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
  }
  function badge(verdict) {
    var label = verdict === null || verdict === undefined ? "not run" : String(verdict);
    var cls = { pass: "v-pass", fail: "v-fail", error: "v-error", PASS: "v-pass", FAIL: "v-fail" }[label] || "";
    return el("span", { cls: "badge " + cls, text: label });
  }
  function num(value, digits) {
    return value === null || value === undefined ? "–" : Number(value).toFixed(digits === undefined ? 2 : digits);
  }
  function secs(ms) { return ms === null || ms === undefined ? "–" : (ms / 1000).toFixed(1) + " s"; }
  function fact(label, value) { return el("span", null, label + " ", el("b", { text: value })); }
  function trimmedNote(item, where) {
    if (!item || !item.cut) return null;
    return el("div", { cls: "trimmed", text: "… " + (item.approximate ? "about " : "") + item.cut.toLocaleString() + " more characters not shown" + (where ? "; full text in " + where : "") });
  }
  function textBlock(item, cls, where) {
    if (!item || !item.text) return null;
    return [el("pre", { cls: cls || null, text: item.text }), trimmedNote(item, where)];
  }

  // ---- matrix filters ----
  var matrix = document.getElementById("matrix");
  var filter = "all";
  var search = document.getElementById("case-search");
  function applyFilters() {
    if (!matrix) return;
    var needle = search ? search.value.trim().toLowerCase() : "";
    var shown = 0;
    Array.prototype.forEach.call(matrix.tBodies[0].rows, function (row) {
      var flags = (row.getAttribute("data-flags") || "").split(" ");
      var visible = (filter === "all" || flags.indexOf(filter) >= 0) &&
        (!needle || row.getAttribute("data-test").indexOf(needle) >= 0);
      row.hidden = !visible;
      if (visible) shown++;
    });
    var none = document.getElementById("no-match");
    if (none) none.hidden = shown > 0;
  }
  Array.prototype.forEach.call(document.querySelectorAll("[data-filter]"), function (button) {
    button.addEventListener("click", function () {
      filter = button.getAttribute("data-filter");
      Array.prototype.forEach.call(document.querySelectorAll("[data-filter]"), function (b) {
        b.classList.toggle("active", b === button);
        b.setAttribute("aria-pressed", b === button ? "true" : "false");
      });
      applyFilters();
    });
  });
  if (search) search.addEventListener("input", applyFilters);

  // ---- the case page ----
  function caseOrder(key) {
    // Previous/next walk the same agent's cells over the rows the filter shows.
    var agent = key.split("/")[0];
    var keys = [];
    if (!matrix) return keys;
    Array.prototype.forEach.call(matrix.tBodies[0].rows, function (row) {
      if (row.hidden) return;
      Array.prototype.forEach.call(row.querySelectorAll("a.cell"), function (a) {
        var k = a.getAttribute("data-case");
        if (k.split("/")[0] === agent) keys.push(k);
      });
    });
    return keys;
  }
  function setStep(id, key) {
    var link = document.getElementById(id);
    if (key) { link.href = "#case/" + key; link.removeAttribute("aria-disabled"); }
    else { link.href = "#"; link.setAttribute("aria-disabled", "true"); }
  }

  function renderGrader(g) {
    var node = el("div", { cls: "grader" },
      el("header", null,
        el("span", { cls: "name", text: g.name }),
        el("small", { text: g.type }),
        badge(g.verdict),
        el("span", { text: "score " + num(g.score) }),
        g.weight !== 1 ? el("small", { text: "weight " + g.weight }) : null,
        g.gate !== null && g.gate !== undefined ? el("small", { text: "required ≥ " + num(g.gate) }) : null));
    if (g.reasoning) append(node, el("div", { cls: "reasoning grader-reasoning", text: g.reasoning.text }), trimmedNote(g.reasoning));
    var checks = el("ul", { cls: "checks" });
    g.misses.concat(g.hits).forEach(function (a) {
      var hit = g.hits.indexOf(a) >= 0;
      append(checks, el("li", { cls: hit ? "hit" : "miss" }, a.text,
        a.evidence && a.evidence.text ? el("pre", { cls: "evidence", text: a.evidence.text }) : null));
    });
    if (checks.children.length) append(node, checks);
    if (g.details) append(node, el("details", null, el("summary", { text: "details" }), textBlock(g.details)));
    if (g.error) append(node, el("div", { cls: "callout", text: "Grader error: " + g.error }));
    (g.warnings || []).forEach(function (w) { append(node, el("div", { cls: "callout warn", text: "⚠ " + w })); });
    if (g.stderr) append(node, el("h4", { text: "stderr" }), textBlock(g.stderr, "stderr"));
    if (g.members && g.members.length) append(node, el("div", { cls: "members" }, g.members.map(renderGrader)));
    return node;
  }

  function renderVote(v) {
    return el("div", { cls: "vote" },
      el("div", null, badge(v.verdict), " ",
        el("span", { cls: "who", text: v.judge + (v.model && v.model !== v.judge ? " · " + v.model : "") +
          " · confidence " + num(v.confidence) + (v.valid === false ? " · abstains (grounding failed)" : "") })),
      v.critique ? el("div", { cls: "critique", text: v.critique }) : null,
      v.evidence.map(function (e) {
        return el("blockquote", { cls: "quote " + (e.grounded ? "grounded" : "ungrounded") },
          e.quote,
          el("span", { cls: "mark", text: e.grounded ? "✓ grounded (" + e.match + ")" : "✗ not grounded" + (e.reason ? " (" + e.reason + ")" : e.match ? " (" + e.match + ")" : "") }),
          e.claim || e.source ? el("span", { cls: "claim", text: [e.source, e.claim].filter(Boolean).join(" — ") }) : null);
      }));
  }

  function renderFailure(f) {
    return [el("h4", { text: "Failure category" }),
      el("div", { cls: "callout failure" },
        el("strong", { text: f.primary.replace(/_/g, " ") }), " ",
        el("small", { text: "(" + f.tier + ", rule " + f.rule_id + ") " }),
        f.confirmed === true ? el("span", { cls: "chip v-pass", text: "panel confirmed" }) :
          f.confirmed === false ? el("span", { cls: "chip v-fail", text: "panel disputed" }) : null,
        f.secondary.length ? el("div", { cls: "muted", text: "also: " + f.secondary.join(", ") }) : null,
        f.evidence.length ? el("ul", null, f.evidence.map(function (e) { return el("li", null, el("code", { text: e })); })) : null,
        f.votes.length ? el("details", { cls: "check" }, el("summary", { text: "the panel's check (" + f.votes.length + " votes)" }), f.votes.map(renderVote)) : null)];
  }

  function renderJudges(j) {
    // Dimensions that failed are open; the ones that passed fold away (one click to read).
    var out = [el("h4", { text: "Judges" })];
    if (!j.judged) out.push(el("p", { cls: "empty", text: "Not judged: the agent run errored." }));
    out.push(el("div", { cls: "dimensions" }, j.dimensions.map(function (d) {
      return el("details", { cls: "dimension", open: d.passed === true ? null : "" },
        el("summary", null, el("span", { cls: "name", text: d.dimension }), " ",
          d.passed === null ? badge("undecided") : badge(d.passed ? "PASS" : "FAIL"), " ",
          el("small", { text: "panel " + (d.panel_verdict || "–") + (d.no_majority ? " (no majority)" : "") +
            " · blended " + num(d.blended_score) + " · heuristic " + num(d.heuristic_score) })),
        d.heuristic_reason ? el("div", { cls: "muted", text: "heuristic: " + d.heuristic_reason }) : null,
        d.errors.map(function (e) { return el("div", { cls: "callout warn", text: e }); }),
        el("div", { cls: "votes" }, d.votes.map(renderVote)));
    })));
    return out;
  }

  function renderDiff(item) {
    var pre = el("pre", { cls: "diff" });
    item.text.split("\n").forEach(function (line) {
      var cls = /^(\+\+\+|---|diff |index )/.test(line) ? "file" : line[0] === "+" ? "add" : line[0] === "-" ? "del" : line.indexOf("@@") === 0 ? "hunk" : null;
      append(pre, el("span", { cls: cls, text: line || " " }));
    });
    return [pre, trimmedNote(item)];
  }

  function renderMessage(m, where) {
    return el("div", { cls: "msg " + m.role },
      el("div", { cls: "role" }, m.role, m.name ? el("small", { text: m.name }) : null,
        m.duration_ms ? el("small", { text: secs(m.duration_ms) }) : null),
      m.content.text ? el("div", { cls: "body", text: m.content.text }) : null,
      trimmedNote(m.content, where),
      m.tool_calls.map(function (c) {
        return el("details", { cls: "tool-call" },
          el("summary", null, "⚙ " + c.tool, " ",
            el("small", { cls: c.status === "error" ? "status-error" : "", text: [c.status, c.duration_ms ? secs(c.duration_ms) : null].filter(Boolean).join(" · ") })),
          el("div", { cls: "io" },
            el("h5", { text: "input" }), textBlock(c.input, null, where) || el("div", { cls: "muted", text: "(none)" }),
            el("h5", { text: "output" }), textBlock(c.output, null, where) || el("div", { cls: "muted", text: "(none)" })));
      }));
  }

  function renderSession(s) {
    var out = [];
    if (s.error) out.push(el("div", { cls: "callout", text: "Agent error (" + s.status + "): " + s.error }));
    if (s.milestones.length) {
      out.push(el("h4", { text: "Milestones" }), el("ul", { cls: "milestones" }, s.milestones.map(function (m) {
        return el("li", null, el("span", { text: m.name.replace(/_/g, " ") }), el("span", { cls: "t", text: secs(m.elapsed_ms) }),
          el("span", { cls: "what", title: m.what, text: m.what }));
      })));
    }
    out.push(el("h4", { text: "File changes" }));
    out.push(s.diff ? el("div", { cls: "diff-wrap" }, renderDiff(s.diff)) : el("p", { cls: "empty", text: "No file changed." }));
    var t = s.transcript;
    var where = t.path;
    var box = el("div", { cls: "transcript" });
    if (t.error) append(box, el("div", { cls: "callout warn", text: t.error }));
    t.messages.forEach(function (m, i) {
      if (t.omitted && i === t.omitted_after) {
        append(box, el("div", { cls: "omitted", text: t.omitted.toLocaleString() + " messages left out here to keep the page small; the full transcript is " + where }));
      }
      append(box, renderMessage(m, where));
    });
    if (!t.messages.length && !t.error) append(box, el("p", { cls: "empty", text: "No messages." }));
    out.push(el("h4", null, "Transcript ", el("small", { text: t.messages.length + (t.omitted ? " of " + (t.messages.length + t.omitted) : "") + " messages" + (where ? " · " + where : "") })), box);
    if (s.stderr) out.push(el("h4", { text: "Agent stderr" }), textBlock(s.stderr));
    return out;
  }

  function renderCase(key, d) {
    var body = document.getElementById("case-body");
    body.textContent = "";
    var c = d.case;
    append(body,
      el("div", { cls: "case-head" }, el("h2", { text: d.test_id }), el("span", { cls: "chip", text: d.agent }), badge(d.verdict)),
      el("div", { cls: "facts" },
        fact("score", num(d.score)), fact("threshold", num(d.threshold)),
        fact("status", d.execution_status || "not run"),
        d.failure_stage ? fact("failed at", d.failure_stage) : null,
        fact("trials", String(d.trials.length)),
        d.reused ? fact("reused", "from run " + String(d.reused.run_id || "?").slice(0, 8) +
          ", stored " + new Date(d.reused.stored_ms).toISOString().replace("T", " ").slice(0, 16) + " UTC") : null),
      d.reason ? el("div", { cls: "callout reason", text: d.reason }) : null,
      d.error && d.error !== d.reason ? el("div", { cls: "callout", text: d.error }) : null,
      d.warnings && d.warnings.length ? el("div", { cls: "callout warn case-warnings" },
        el("b", { text: "⚠ Warnings" }), el("ul", null, d.warnings.map(function (w) { return el("li", { text: w }); }))) : null);
    if (c) {
      append(body, el("h3", { text: "Task" }),
        c.input.map(function (m) { return [el("h4", { text: "input · " + m.role }), textBlock(m.text, "input")]; }),
        c.criteria ? [el("h4", { text: "criteria" }), el("div", { cls: "criteria reasoning", text: c.criteria })] : null,
        c.expected_output.length ? [el("h4", { text: "expected output" }), c.expected_output.map(function (m) { return textBlock(m.text); })] : null,
        c.assertions.length ? [el("h4", { text: "graders" }), el("div", null, c.assertions.map(function (a) {
          return [el("span", { cls: "chip", text: a.name + (a.name !== a.type ? " · " + a.type : "") + (a.required ? " · required" : "") }), " "];
        }))] : null);
    }
    d.trials.forEach(function (t) {
      var section = el("section", { cls: "trial", id: "trial-" + t.trial },
        el("div", { cls: "case-head" }, el("h3", { text: "Trial " + t.trial }), badge(t.verdict)),
        el("div", { cls: "facts" }, fact("score", num(t.score)), fact("cost", t.cost_usd === null ? "–" : "$" + num(t.cost_usd, 4)),
          fact("tokens", t.tokens === null ? "–" : t.tokens.toLocaleString()), fact("duration", secs(t.duration_ms))),
        t.error ? el("div", { cls: "callout", text: t.error }) : null);
      if (t.graders.length) append(section, el("h4", { text: "Graders" }), t.graders.map(renderGrader));
      if (t.judgment && t.judgment.failure) append(section, renderFailure(t.judgment.failure));
      if (t.judgment) append(section, renderJudges(t.judgment));
      if (t.session) append(section, renderSession(t.session));
      append(body, section);
    });
    if (!d.trials.length) append(body, el("p", { cls: "empty", text: "This case did not run for this agent." }));
  }

  function showCase(key) {
    document.getElementById("overview").hidden = true;
    var view = document.getElementById("case-view");
    view.hidden = false;
    var order = caseOrder(key);
    var at = order.indexOf(key);
    setStep("case-prev", at > 0 ? order[at - 1] : null);
    setStep("case-next", at >= 0 && at < order.length - 1 ? order[at + 1] : null);
    var body = document.getElementById("case-body");
    body.textContent = "";
    append(body, el("p", { cls: "loading", text: "Loading " + key + "…" }));
    loadCase(key, function (error, data) {
      if (currentHash() !== "case/" + key) return;  // the reader moved on
      if (error) { body.textContent = ""; append(body, el("div", { cls: "callout", text: error })); return; }
      renderCase(key, data);
      document.title = data.test_id + " · " + data.agent + " · " + document.body.getAttribute("data-title");
    });
    window.scrollTo(0, 0);
  }

  function showOverview() {
    document.getElementById("case-view").hidden = true;
    document.getElementById("overview").hidden = false;
    document.title = document.body.getAttribute("data-title");
  }

  function currentHash() {
    try { return decodeURIComponent(location.hash.slice(1)); }
    catch (e) { return location.hash.slice(1); }  // a malformed escape: taken as written
  }

  function route() {
    var hash = currentHash();
    if (hash.indexOf("case/") === 0) { showCase(hash.slice(5)); return; }
    showOverview();
    if (hash) {
      var target = document.getElementById(hash);
      if (target) target.scrollIntoView();
    }
  }
  document.body.setAttribute("data-title", document.title);
  window.addEventListener("hashchange", route);
  applyFilters();
  route();
})();
