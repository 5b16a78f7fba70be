// storyflow story explorer (src/storyflow/explorer/page.py; docs/explorer.md). No library: the
// index block holds the story table, the details block one JSON line per story, parsed when the
// story is selected. Numbers in the details are integers in thousandths (index.milli).
"use strict";
(function () {
  const errors = [];
  window.addEventListener("error", function (event) {
    errors.push(String(event.message));
    document.documentElement.dataset.errors = JSON.stringify(errors);
  });

  const SEQ_SCALE = 3; // nats/token at which the shading is full (clamped beyond)
  // The shades at +-SEQ_SCALE: the palest colours of their hue that keep the text (#222) at a
  // contrast of at least 4.5:1 (WCAG AA), so every shaded sentence stays readable.
  const POSITIVE = [67, 147, 195]; // context made the sentence less surprising
  const NEGATIVE = [218, 112, 95]; // context made it more surprising
  const PER_PAGE = [25, 50, 100, 250];
  const CHART_WIDTH = 560; // the charts' drawing width (px); they shrink with the pane

  const index = JSON.parse(document.getElementById("explorer-index").textContent);
  const M = index.milli;
  const stories = index.stories;
  const rows = index.rows;
  const nRows = rows.story.length;
  const nStories = stories.id.length;
  const storyOf = new Map(stories.id.map(function (id, i) { return [id, i]; }));
  // the story table's row of each story under each model (-1: none)
  const rowOf = index.models.map(function () { return new Array(nStories).fill(-1); });
  for (let r = 0; r < nRows; r++) rowOf[rows.model[r]][rows.story[r]] = r;
  const failedCells = new Set(index.failed.map(function (f) { return f[0] + ":" + f[1]; }));
  const failedWhy = new Map(index.verdicts.map(function (v) { return [v.measure + "\t" + v.model, v.failed]; }));
  let detailLines = null;
  const detailCache = new Map();

  const state = {
    model: defaultModel(), group: "", search: "", sort: "", desc: false, page: 0, perPage: 50,
    story: -1, seqModel: "", formulation: "", history: "",
  };

  // The model the table opens with: the one with the most values (the first by name on a tie).
  function defaultModel() {
    let best = 0, most = -1;
    index.models.forEach(function (model, i) {
      let count = 0;
      for (let r = 0; r < nRows; r++) {
        if (rows.model[r] !== i) continue;
        for (const values of rows.values) count += values[r] === null ? 0 : 1;
      }
      if (count > most) { best = i; most = count; }
    });
    return best;
  }

  // ---- helpers
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const key of Object.keys(attrs)) {
        const value = attrs[key];
        if (value === null || value === undefined || value === false) continue;
        if (key === "text") node.textContent = value;
        else if (key === "class") node.className = value;
        else if (key === "style") node.setAttribute("style", value);
        else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value === true ? "" : String(value));
      }
    }
    for (const child of children || []) {
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, children) {
    const node = document.createElementNS(SVG, tag);
    for (const key of Object.keys(attrs || {})) node.setAttribute(key, String(attrs[key]));
    for (const child of children || []) node.appendChild(child);
    return node;
  }
  function fmt(value, digits) {
    if (value === null || value === undefined || !isFinite(value)) return "\u2013";
    return Number(value).toFixed(digits);
  }
  function sig(value) {
    if (value === null || value === undefined || !isFinite(value)) return "\u2013";
    return String(Number(Number(value).toPrecision(3)));
  }
  function ordinal(n) {
    const tens = n % 100, ones = n % 10;
    if (tens >= 11 && tens <= 13) return n + "th";
    return n + (ones === 1 ? "st" : ones === 2 ? "nd" : ones === 3 ? "rd" : "th");
  }
  // Percentile rank of value among values (its own included): the share below it plus half the
  // share equal to it, in percent (scipy.stats.percentileofscore's kind "mean").
  function percentileOf(values, value) {
    let below = 0, equal = 0;
    for (const v of values) {
      if (v < value) below += 1;
      else if (v === value) equal += 1;
    }
    return 100 * (below + equal / 2) / values.length;
  }
  function badge(verdict, why) {
    if (verdict === "failed") {
      return el("span", { class: "badge failed", title: "failed its validity check: " + why, text: "failed validity check" });
    }
    if (verdict === "valid") return el("span", { class: "badge valid", text: "valid" });
    return el("span", { class: "badge unchecked", text: verdict || "not checked" });
  }
  function mix(color, t) {
    return "rgb(" + color.map(function (c) { return Math.round(255 + (c - 255) * t); }).join(", ") + ")";
  }
  function seqColor(seq) {
    const t = Math.max(-1, Math.min(1, seq / SEQ_SCALE));
    return t >= 0 ? mix(POSITIVE, t) : mix(NEGATIVE, -t);
  }
  function details(story) {
    if (!detailCache.has(story)) {
      if (detailLines === null) {
        detailLines = document.getElementById("explorer-details").textContent.split("\n");
      }
      detailCache.set(story, JSON.parse(detailLines[story]));
    }
    return detailCache.get(story);
  }

  // ---- the table: one row per story, the values of the model chosen above it
  function valueOf(m, story, model) {
    const r = rowOf[model][story];
    return r < 0 ? null : rows.values[m][r];
  }
  const measureColumns = index.measures.map(function (measure, m) {
    const dot = measure.name.indexOf(".");
    return {
      id: measure.name, label: measure.name.slice(dot + 1), family: measure.name.slice(0, dot),
      title: measure.name + " (" + measure.unit + ")", measure: m,
      key: function (s) { return valueOf(m, s, state.model); },
    };
  });
  const labelColumns = [
    { id: "story", label: "story", key: function (s) { return stories.id[s]; }, text: true },
    { id: "group", label: "group", key: function (s) { return stories.group[s]; }, text: true },
    { id: "sentences", label: "sentences", key: function (s) { return stories.n_sentences[s]; } },
    { id: "words", label: "words", key: function (s) { return stories.n_words[s]; } },
  ];
  // the measure columns with a value for the chosen model (the others are left out)
  function columns() {
    return labelColumns.concat(measureColumns.filter(function (column) {
      for (let s = 0; s < nStories; s++) if (column.key(s) !== null) return true;
      return false;
    }));
  }

  function filtered(shown) {
    const search = state.search.toLowerCase();
    const out = [];
    for (let s = 0; s < nStories; s++) {
      if (state.group && stories.group[s] !== state.group) continue;
      if (search && stories.id[s].toLowerCase().indexOf(search) < 0) continue;
      out.push(s);
    }
    const sorted = shown.find(function (column) { return column.id === state.sort; });
    if (sorted) {
      const key = sorted.key;
      const sign = state.desc ? -1 : 1;
      out.sort(function (a, b) {
        const x = key(a), y = key(b);
        if (x === null || x === undefined) return (y === null || y === undefined) ? a - b : 1;
        if (y === null || y === undefined) return -1;
        if (x < y) return -sign;
        if (x > y) return sign;
        return a - b;
      });
    }
    return out;
  }

  function cell(column, s) {
    const value = column.key(s);
    if (column.text) return el("td", { class: "text " + column.id, title: value, text: value });
    if (column.measure === undefined) return el("td", { text: String(value) });
    if (value === null) return el("td", { class: "missing", text: "\u2013" });
    const r = rowOf[state.model][s];
    if (failedCells.has(r + ":" + column.measure)) {
      const why = failedWhy.get(column.id + "\t" + index.models[state.model]) || "";
      return el("td", { class: "failed", title: "rests on a model that failed its validity check: " + why, text: "\u26A0 " + sig(value) });
    }
    return el("td", { text: sig(value) });
  }

  function renderTable() {
    const shown = columns();
    const chosen = filtered(shown);
    const pages = Math.max(1, Math.ceil(chosen.length / state.perPage));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * state.perPage;
    const head = el("tr", null, shown.map(function (column) {
      const sorted = state.sort === column.id ? (state.desc ? "sorted-desc" : "sorted-asc") : "";
      return el("th", {
        class: [column.text ? "text" : "", column.id === "story" ? "pinned" : "", sorted].join(" ").trim(),
        title: column.title || column.label, "data-column": column.id,
        onclick: function () {
          state.desc = state.sort === column.id ? !state.desc : false;
          state.sort = column.id;
          renderTable();
        },
      }, [column.family ? el("small", { text: column.family }) : null, column.label]);
    }));
    const body = el("tbody", null, chosen.slice(start, start + state.perPage).map(function (s) {
      return el("tr", {
        "data-story": stories.id[s], class: s === state.story ? "selected" : "",
        onclick: function () { select(s); },
      }, shown.map(function (column) { return cell(column, s); }));
    }));
    const table = el("table", { id: "stories", "data-model": index.models[state.model] }, [el("thead", null, [head]), body]);
    document.getElementById("table-wrap").replaceChildren(table);
    const left = measureColumns.length - (shown.length - labelColumns.length);
    document.getElementById("columns-note").textContent = left
      ? left + " measure column" + (left > 1 ? "s" : "") + " with no value for this model left out (choose another model to see " + (left > 1 ? "them" : "it") + ")."
      : "";
    document.getElementById("pager-text").textContent = chosen.length
      ? "stories " + (start + 1) + "\u2013" + Math.min(start + state.perPage, chosen.length) + " of " + chosen.length
      : "no story matches";
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page >= pages - 1;
  }

  function options(values, chosen, labels) {
    return values.map(function (v, i) {
      return el("option", { value: v, selected: v === chosen, text: labels ? labels[i] : v });
    });
  }

  function modelControl() {
    if (index.models.length === 1) {
      return el("span", { id: "table-model", text: index.models[0] ? "model " + index.models[0] : "no measure depends on a model" });
    }
    return el("label", null, ["model ", el("select", {
      id: "filter-model",
      onchange: function (e) { chooseModel(Number(e.target.value)); },
    }, index.models.map(function (m, i) {
      return el("option", { value: String(i), selected: i === state.model, text: m });
    }))]);
  }

  function chooseModel(model) {
    state.model = model;
    const select = document.getElementById("filter-model");
    if (select) select.value = String(model);
    const seq = index.sequentiality;
    if (seq && seq.models.indexOf(index.models[model]) >= 0) state.seqModel = index.models[model];
    updateHash();
    renderTable();
    renderStory();
  }

  function controls() {
    const groups = Array.from(new Set(stories.group)).sort();
    return el("div", { class: "controls" }, [
      modelControl(),
      el("label", null, ["group ", el("select", {
        id: "filter-group", onchange: function (e) { state.group = e.target.value; state.page = 0; renderTable(); },
      }, options(["", ...groups], state.group, ["all", ...groups]))]),
      el("label", null, ["story ", el("input", {
        id: "filter-search", type: "search", placeholder: "id contains",
        oninput: function (e) { state.search = e.target.value; state.page = 0; renderTable(); },
      })]),
      el("label", null, ["rows ", el("select", {
        onchange: function (e) { state.perPage = Number(e.target.value); state.page = 0; renderTable(); },
      }, options(PER_PAGE.map(String), String(state.perPage)))]),
    ]);
  }

  // ---- the selected story
  function select(s) {
    state.story = s;
    const seq = index.sequentiality;
    const model = index.models[state.model];
    if (!state.seqModel && seq && seq.models.indexOf(model) >= 0) state.seqModel = model;
    updateHash();
    renderTable();
    renderStory();
  }

  function updateHash() {
    if (state.story < 0) return;
    const parts = ["story=" + encodeURIComponent(stories.id[state.story]),
      "model=" + encodeURIComponent(index.models[state.model])];
    if (state.seqModel) parts.push("seq_model=" + encodeURIComponent(state.seqModel));
    if (state.formulation) parts.push("formulation=" + encodeURIComponent(state.formulation));
    if (state.history) parts.push("h=" + encodeURIComponent(state.history));
    const hash = "#" + parts.join("&");
    if (location.hash === hash) return;
    try {
      history.replaceState(null, "", hash);
    } catch (e) {
      // a page shown from a data: URL (the Snakemake report's frame) has no history to write
    }
  }

  function measuresSection(s) {
    const section = el("section", { id: "story-measures" }, [el("h3", { text: "Measures of this story" })]);
    const group = stories.group[s];
    const peers = [];
    for (let p = 0; p < nStories; p++) if (stories.group[p] === group) peers.push(p);
    const lines = [];
    index.measures.forEach(function (measure, m) {
      index.models.forEach(function (model, i) {
        if (measure.free && i > 0) return; // a score of no model: the same on every model's row
        const r = rowOf[i][s];
        const value = r < 0 ? null : rows.values[m][r];
        if (value === null) return;
        const values = [];
        for (const p of peers) {
          const v = valueOf(m, p, i);
          if (v !== null) values.push(v);
        }
        const pct = percentileOf(values, value);
        const where = values.length > 1
          ? ordinal(Math.round(pct)) + " percentile of " + group + " (" + values.length + " stories)"
          : "the only story of " + group + " with a value";
        const failed = failedCells.has(r + ":" + m);
        const why = failed ? failedWhy.get(measure.name + "\t" + model) || "" : "";
        lines.push(el("tr", {
          class: failed ? "failed-text" : "", "data-measure": measure.name, "data-model": measure.free ? "" : model,
          "data-value": String(value), "data-percentile": values.length > 1 ? pct.toFixed(3) : "",
          title: failed ? "rests on a model that failed its validity check: " + why : null,
        }, [
          el("td", { class: "text", text: measure.name }),
          el("td", { class: "text", text: measure.free ? "\u2013" : model }),
          el("td", { class: "text", text: (failed ? "\u26A0 " : "") + sig(value) + " " + measure.unit }),
          el("td", { class: "text where", text: where }),
        ]));
      });
    });
    if (!lines.length) {
      section.appendChild(el("p", { class: "empty", text: "No story measure was computed on this story." }));
      return section;
    }
    const head = el("tr", null, ["measure", "model", "value", "in its group"].map(function (h) {
      return el("th", { class: "text", text: h });
    }));
    section.appendChild(el("div", { class: "table-wrap" }, [el("table", { class: "story-measures" }, [el("thead", null, [head]), el("tbody", null, lines)])]));
    return section;
  }

  function sequentialitySection(d) {
    const seq = index.sequentiality;
    const section = el("section", { id: "sequentiality" }, [el("h3", { text: "Text and sentence sequentiality" })]);
    const have = seq && d.sequentiality ? seq.models.filter(function (m) { return d.sequentiality[m]; }) : [];
    if (!have.length) {
      section.appendChild(el("p", { class: "empty", text: seq ? "No sentence scores for this story." : "Sequentiality was not computed on this corpus." }));
      section.appendChild(el("p", { class: "story-text" }, d.sentences.map(function (s) { return s + " "; })));
      return section;
    }
    if (have.indexOf(state.seqModel) < 0) state.seqModel = have[0];
    const byForm = d.sequentiality[state.seqModel];
    const forms = seq.formulations.filter(function (f) { return byForm[f]; });
    if (forms.indexOf(state.formulation) < 0) state.formulation = forms[0];
    const entry = byForm[state.formulation];
    const histories = seq.histories.filter(function (h) { return entry.ctx[h]; });
    if (histories.indexOf(state.history) < 0) {
      state.history = histories.indexOf(seq.story_history) >= 0 ? seq.story_history : histories[histories.length - 1];
    }
    const rerender = function () { updateHash(); renderStory(); };
    section.appendChild(el("div", { class: "controls" }, [
      el("label", null, ["model ", el("select", { id: "seq-model", onchange: function (e) { state.seqModel = e.target.value; rerender(); } }, options(have, state.seqModel))]),
      el("label", null, ["formulation ", el("select", { id: "seq-formulation", onchange: function (e) { state.formulation = e.target.value; rerender(); } }, options(forms, state.formulation))]),
      el("label", null, ["history h ", el("select", { id: "seq-history", onchange: function (e) { state.history = e.target.value; rerender(); } }, options(histories, state.history))]),
    ]));
    const ctx = entry.ctx[state.history];
    const values = [];
    const spans = d.sentences.map(function (text, i) {
      const base = entry.base[i], context = ctx[i];
      if (base === null || base === undefined || context === null || context === undefined) {
        return el("span", { class: "sent noscore", "data-idx": i, title: "no score" }, [text]);
      }
      const s = (base - context) / M;
      values.push(s);
      const tip = "sentence " + (i + 1) + ": sequentiality " + fmt(s, 2) + " nats/token = NLL without context " +
        fmt(base / M, 2) + " \u2212 NLL with h = " + state.history + " " + fmt(context / M, 2);
      return el("span", {
        class: "sent", "data-idx": i, "data-seq": s.toFixed(3), "data-base": (base / M).toFixed(3),
        "data-ctx": (context / M).toFixed(3), style: "background-color: " + seqColor(s), title: tip,
      }, [text]);
    });
    section.appendChild(el("p", { class: "story-text" }, spans.flatMap(function (s) { return [s, " "]; })));
    section.appendChild(el("div", { class: "legend" }, [
      "context made it more surprising \u2212" + SEQ_SCALE,
      el("span", { class: "bar", style: "background: linear-gradient(to right, " + seqColor(-SEQ_SCALE) + ", #fff, " + seqColor(SEQ_SCALE) + ")" }),
      "+" + SEQ_SCALE + " less surprising (nats/token; hover a sentence for its NLLs)",
    ]));
    const mean = values.length ? values.reduce(function (a, b) { return a + b; }, 0) / values.length : NaN;
    const measure = index.measures.findIndex(function (m) { return m.name === "sequentiality." + state.formulation; });
    let inTable = null;
    for (let r = 0; r < nRows && measure >= 0; r++) {
      if (rows.story[r] === state.story && index.models[rows.model[r]] === state.seqModel) inTable = rows.values[measure][r];
    }
    section.appendChild(el("p", { class: "note", id: "seq-mean", "data-mean": isFinite(mean) ? mean.toFixed(3) : "" }, [
      "Mean over the sentences: " + fmt(mean, 3) + " nats/token" +
      (state.history === seq.story_history && inTable !== null ? " (the story table's sequentiality." + state.formulation + ": " + sig(inTable) + ")" : ""),
    ]));
    section.appendChild(nllCurves(entry.base, ctx));
    return section;
  }

  function axes(width, height, pad, xTicks, yTicks, xLabel, yLabel) {
    const g = svg("g");
    g.appendChild(svg("line", { x1: pad, y1: height - pad, x2: width - 8, y2: height - pad, stroke: "#9ca3af" }));
    g.appendChild(svg("line", { x1: pad, y1: 18, x2: pad, y2: height - pad, stroke: "#9ca3af" }));
    for (const t of xTicks) {
      const text = svg("text", { x: t[0], y: height - pad + 14, "text-anchor": "middle" });
      text.textContent = t[1];
      g.appendChild(text);
    }
    for (const t of yTicks) {
      const text = svg("text", { x: pad - 4, y: t[0] + 4, "text-anchor": "end" });
      text.textContent = t[1];
      g.appendChild(text);
    }
    const xl = svg("text", { x: (width + pad) / 2, y: height - 4, "text-anchor": "middle" });
    xl.textContent = xLabel;
    const yl = svg("text", { x: 4, y: 10 });
    yl.textContent = yLabel;
    g.appendChild(xl);
    g.appendChild(yl);
    return g;
  }

  function polyline(points, color, label) {
    const g = svg("g");
    const kept = points.filter(function (p) { return p[1] !== null; });
    g.appendChild(svg("polyline", { points: kept.map(function (p) { return p[0] + "," + p[1]; }).join(" "), fill: "none", stroke: color, "stroke-width": 1.5 }));
    for (const p of kept) {
      const dot = svg("circle", { cx: p[0], cy: p[1], r: 2.5, fill: color });
      const title = svg("title");
      title.textContent = label + ": " + p[2];
      dot.appendChild(title);
      g.appendChild(dot);
    }
    return g;
  }

  function nllCurves(base, ctx) {
    const width = CHART_WIDTH, height = 170, pad = 36;
    const n = base.length;
    const all = base.concat(ctx).filter(function (v) { return v !== null && v !== undefined; });
    const top = Math.max(1, Math.ceil(Math.max.apply(null, all.concat([0])) / M));
    const x = function (i) { return pad + (n > 1 ? i / (n - 1) : 0.5) * (width - pad - 12); };
    const y = function (v) { return height - pad - (v / M / top) * (height - pad - 22); };
    const pts = function (values) {
      return values.map(function (v, i) { return [x(i), v === null || v === undefined ? null : y(v), "sentence " + (i + 1) + " " + fmt(v / M, 2)]; });
    };
    const picture = svg("svg", { viewBox: "0 0 " + width + " " + height, class: "chart", id: "nll-curves", role: "img" });
    picture.appendChild(axes(width, height, pad, [[x(0), "1"], [x(n - 1), String(n)]], [[y(0), "0"], [y(top * M), String(top)]], "sentence", "NLL (nats/token)"));
    picture.appendChild(polyline(pts(base), "#6b7280", "without context"));
    picture.appendChild(polyline(pts(ctx), "#2166ac", "with h = " + state.history));
    return el("div", null, [
      el("div", { class: "legend" }, [el("span", { style: "color:#6b7280", text: "\u25CF without context" }), el("span", { style: "color:#2166ac", text: "\u25CF with context, h = " + state.history })]),
      picture,
    ]);
  }

  function tensionSection(d) {
    const section = el("section", { id: "tension" }, [el("h3", { text: "Tension: no-rate of the forecast endings" })]);
    if (!index.tension.length) {
      section.appendChild(el("p", { class: "empty", text: "Tension was not measured on this corpus." }));
      return section;
    }
    if (!d.tension || !d.tension.length) {
      section.appendChild(el("p", { class: "empty", text: "No tension curve for this story (left out: see the tension stage's excluded table)." }));
      return section;
    }
    for (const entry of d.tension) {
      const curve = index.tension[entry.curve];
      const width = CHART_WIDTH, height = 150, pad = 36;
      const x = function (p) { return pad + (p / M) * (width - pad - 12); };
      const y = function (r) { return height - pad - (r / M) * (height - pad - 22); };
      const picture = svg("svg", { viewBox: "0 0 " + width + " " + height, class: "chart tension-curve", role: "img" });
      picture.appendChild(axes(width, height, pad, [[x(0), "0"], [x(M), "1"]], [[y(0), "0"], [y(M), "1"]], "share of the story read", "no-rate"));
      picture.appendChild(polyline(entry.cuts.map(function (c) {
        return [x(c[1]), y(c[2]), "after sentence " + (c[0] + 1) + ", no-rate " + fmt(c[2] / M, 2)];
      }), curve.verdict === "failed" ? "#9ca3af" : "#b2182b", "cut"));
      section.appendChild(el("div", { class: "curve" }, [
        el("div", null, ["forecaster " + curve.model + ", judge " + curve.judge, badge(curve.verdict, curve.failed)]),
        picture,
      ]));
    }
    return section;
  }

  function fabulaSection(d) {
    const section = el("section", { id: "fabula-entropy" }, [el("h3", { text: "Fabula entropy: the readers' answers" })]);
    const fei = d.fabula_entropy;
    if (!fei) {
      section.appendChild(el("p", { class: "empty", text: index.readers.length ? "No passages of this story were read." : "Fabula entropy was not measured on this corpus." }));
      return section;
    }
    fei.versions.forEach(function (version, v) {
      const questions = fei.questions.filter(function (q) { return q.version === version.version && q.passage === version.passage; });
      const head = el("tr", null, [el("th", { class: "text", text: "question" }), el("th", { text: "kind" }), el("th", { text: "truth" }),
        ...index.readers.map(function (r) {
          return el("th", { class: r.verdict === "failed" ? "failed-text" : "", title: r.verdict === "failed" ? "failed its validity check: " + r.failed : r.verdict }, [
            "P(yes) " + r.reader, r.verdict === "failed" ? " \u26A0" : "",
          ]);
        })]);
      const body = questions.map(function (q) {
        return el("tr", null, [el("td", { class: "text", text: q.text }), el("td", { text: q.kind }), el("td", { text: q.truth === null ? "" : (q.truth ? "yes" : "no") }),
          ...q.p_yes.map(function (p, i) { return el("td", { class: index.readers[i].verdict === "failed" ? "failed" : "", text: p === null ? "\u2013" : fmt(p / M, 2) }); })]);
      });
      section.appendChild(el("details", { open: v === 0 }, [
        el("summary", { text: version.version + " (" + version.passage + ", " + version.condition + (version.k ? ", k = " + version.k : "") + "): " + questions.length + " questions" }),
        el("ol", { class: "lines", start: 1 }, version.lines.map(function (l) { return el("li", { text: fei.lines[l] }); })),
        el("div", { class: "table-wrap" }, [el("table", { class: "questions" }, [el("thead", null, [head]), el("tbody", null, body)])]),
      ]));
    });
    return section;
  }

  function plotHoleSection(d) {
    const section = el("section", { id: "plot-holes" }, [el("h3", { text: "Plot holes: edited versions and the detectors' answers" })]);
    const holes = d.plot_holes;
    if (!holes || !holes.length) {
      section.appendChild(el("p", { class: "empty", text: index.detectors.length ? "No version of this story was made (see the plot-hole stage's skipped table)." : "Plot holes were not measured on this corpus." }));
      return section;
    }
    holes.forEach(function (item, v) {
      const errorLines = new Set(item.error_lines), contrLines = new Set(item.contr_lines), changed = new Set(item.changed);
      const lines = item.sentences.map(function (s, i) {
        const text = typeof s === "number" ? d.sentences[s] : s;
        const classes = [changed.has(i) ? "changed" : "", errorLines.has(i + 1) ? "error" : "", contrLines.has(i + 1) ? "contr" : ""].join(" ").trim();
        const tags = [changed.has(i) ? "changed" : "", errorLines.has(i + 1) ? "the error" : "", contrLines.has(i + 1) ? "what it contradicts" : ""].filter(Boolean);
        return el("li", { class: classes, title: tags.join(", ") || null, text: text });
      });
      const head = el("tr", null, ["detector", "verdict", "P(error)", "says error", "answer", "predicted lines", "CEEval"].map(function (h, i) { return el("th", { class: i < 2 ? "text" : "", text: h }); }));
      const body = item.answers.map(function (a) {
        const det = index.detectors[a.detector];
        return el("tr", { class: det.verdict === "failed" ? "failed-text" : "" }, [
          el("td", { class: "text", text: det.detector }), el("td", { class: "text" }, [badge(det.verdict, det.failed)]),
          el("td", { text: a.p_error === null ? "\u2013" : fmt(a.p_error / M, 2) }), el("td", { text: a.says_error ? "yes" : "no" }),
          el("td", { text: a.status }), el("td", { text: a.pred_error.concat(a.pred_contr.length ? ["vs"].concat(a.pred_contr) : []).join(" ") || "\u2013" }),
          el("td", { text: String(a.ceeval) }),
        ]);
      });
      section.appendChild(el("details", { open: v < 2 }, [
        el("summary", { text: item.maker + " maker, version " + item.version + (item.has_error ? " (flawed)" : " (no error)") + (item.attribute_class ? ": " + item.attribute_class : "") }),
        item.proposition ? el("p", { class: "note", text: item.proposition }) : null,
        el("ol", { class: "lines" }, lines),
        el("p", { class: "note", text: "Marked: changed lines (yellow), the error (red bar), the line it contradicts (blue bar); answers' lines are 1-based." }),
        item.answers.length ? el("div", { class: "table-wrap" }, [el("table", null, [el("thead", null, [head]), el("tbody", null, body)])]) : el("p", { class: "empty", text: "No detector's answer." }),
      ]));
    });
    return section;
  }

  function renderStory() {
    const pane = document.getElementById("story-pane");
    if (state.story < 0) {
      pane.replaceChildren(el("p", { class: "empty", text: "Select a story in the table." }));
      return;
    }
    const d = details(state.story);
    const s = state.story;
    // replaceChildren writes a null as the text "null": a story without a topic passes none
    pane.replaceChildren(...[
      el("h2", { id: "story-title", "data-story": stories.id[s], text: stories.id[s] }),
      el("p", { id: "story-facts" }, ["group " + stories.group[s] + ", " + stories.n_sentences[s] + " sentences, " + stories.n_words[s] + " words"]),
      d.topic ? el("p", { class: "note", text: "Topic: " + d.topic }) : null,
      measuresSection(s), sequentialitySection(d), tensionSection(d), fabulaSection(d), plotHoleSection(d),
    ].filter(Boolean));
  }

  // The story (and the table's model, the sequentiality view) the URL's hash names; false when
  // it names no story of this page.
  function fromHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const id = params.get("story");
    if (id === null || !storyOf.has(id)) return false;
    const model = index.models.indexOf(params.get("model"));
    if (model >= 0 && model !== state.model) {
      state.model = model;
      const select = document.getElementById("filter-model");
      if (select) select.value = String(model);
    }
    state.seqModel = params.get("seq_model") || "";
    state.formulation = params.get("formulation") || "";
    state.history = params.get("h") || "";
    select(storyOf.get(id));
    return true;
  }

  function start() {
    const failedPairs = index.verdicts.length;
    const empty = index.empty_measures;
    document.getElementById("app").replaceChildren(
      el("header", null, [
        el("h1", { text: "Story explorer: " + index.corpus }),
        el("p", { text: nStories + " stories, " + index.measures.length + " story measures, " + index.models.filter(Boolean).length + " models. Click a row to read its story and see where its measures fall in its group; click a column to sort." }),
        el("p", { class: "note", text: failedPairs
          ? "\u26A0 grey italic values rest on a model that failed its validity check (" + failedPairs + " measure \u00D7 model pairs; hover for the checks): they describe the model more than the stories."
          : "No value here rests on a model that failed its validity check." }),
        empty.length ? el("p", { class: "note", id: "empty-measures", text: "No story has a value of " + empty.join(", ") + ": left out." }) : null,
      ]),
      el("main", null, [
        el("div", { id: "table-pane" }, [
          controls(),
          el("div", { class: "table-wrap", id: "table-wrap" }),
          el("p", { class: "note", id: "columns-note" }),
          el("div", { class: "pager" }, [
            el("button", { id: "prev", onclick: function () { state.page -= 1; renderTable(); }, text: "\u2190 previous" }),
            el("span", { id: "pager-text" }),
            el("button", { id: "next", onclick: function () { state.page += 1; renderTable(); }, text: "next \u2192" }),
          ]),
        ]),
        el("div", { id: "story-pane" }),
      ]),
    );
    renderTable();
    if (!fromHash() && nStories) select(0);
    // a hash changed on the open page (a link, the address bar) opens its story
    window.addEventListener("hashchange", fromHash);
    document.documentElement.dataset.ready = "1";
    document.documentElement.dataset.readyMs = String(Math.round(performance.now()));
  }

  start();
})();
