// The live control (skbview/app/live.py): a range input whose every movement applies the precomputed patch
// of its value to the page's charts and metric row, and which sends the value to Python once it settles
// (release of a drag, a pause after key presses).  An st.components.v2 element: this module runs in the page
// itself (no frame of its own); its default export is called with each render's data, and a control's state
// lives in a closure kept per mounted element.  To Python it sends two events: "commit" (the value) and
// "want" (the payload of a scenario it has none for).
const KEY_COMMIT_MS = 400;  // key presses in a row make one change at the server, this long after the last
const FULL_UPDATE_MS = 90;  // the whole figure follows once the thumb has rested this long
let plotlyLoad = null;      // the package copy of plotly.js, loaded only when the page has none
let plotlyReady = false;
// read by tests/browser_util.py and benchmarks/bench_scrub.py, by the control's Streamlit key ("live_slub"):
// whether it holds the payload of its scenario, and the payload itself (its size)
window.__liveState = window.__liveState || {};
window.__livePayload = window.__livePayload || {};

// The Plotly that drew the page's charts: Streamlit's bundle sets window.Plotly on the page.  Should a
// Streamlit release stop doing so, the copy inside the installed plotly package (same release line) is
// loaded from the folder Python serves it from; it then measures text with a "tester" element that only
// a first plot of its own creates.
function loadPlotly(src) {
  if (!plotlyLoad) {
    plotlyLoad = new Promise(function (resolve, reject) {
      const s = document.createElement("script");
      s.src = src;
      s.onload = function () {
        const probe = document.createElement("div");
        probe.style.cssText = "position:absolute;left:-9999px;width:10px;height:10px;";
        document.body.appendChild(probe);
        window.Plotly.newPlot(probe, [], {}).then(resolve, resolve);
      };
      s.onerror = reject;
      document.head.appendChild(s);
    });
  }
  return plotlyLoad;
}

function makeControl(root) {
  const range = root.querySelector("input");
  const out = root.querySelector(".out");
  const doc = document;
  let component = null;   // the last render's handle (data, setTriggerValue)
  let fullTimer = null;
  let committing = null;  // the value sent at the last release, until Python's render carries it
  let args = null;        // the last render's data
  let data = null;        // {sid, body}: the payload of the scenario it was built for
  let asked = null;       // the scenario id last asked for
  let serial = 0;         // numbers the values sent to Python
  let dragging = false;   // a pointer holds the thumb: renders do not move it
  let keyTimer = null;    // a key commit waiting

  function plotly() {
    if (window.Plotly) return window.Plotly;
    if (doc.querySelector(".js-plotly-plot") && args && args.plotly) {
      loadPlotly(args.plotly).then(function () { plotlyReady = true; });
    }
    return plotlyReady ? window.Plotly : null;
  }

  // ---------------------------------------------------------------- the payload's columns
  // the value as the slider shows it, as Python's skbmodel.params.fmt_value writes it: 16, 0.35, 1
  function valueText(v) {
    const step = Number(args.step);
    const digits = step % 1 === 0 ? 0 : Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    return digits ? Number(v).toFixed(digits).replace(/\.?0+$/, "") : String(Math.round(v));
  }

  // A column of the payload (skbview/app/live.py, Columns): one entry per value of the control.  Runs of
  // equal entries ([x, k] among numbers, "x*k" in a slot) are expanded once, when the payload arrives.
  function expand(items) {
    const all = [];
    items.forEach(function (x) {
      if (Array.isArray(x)) { for (let k = 0; k < x[1]; k++) all.push(x[0]); } else { all.push(x); }
    });
    return all;
  }
  function slotEntries(slot) {
    if (slot === 1) return null;  // the value as the slider shows it
    if (Array.isArray(slot)) return slot;
    return expand(slot.split("|").map(function (x) {
      const at = x.lastIndexOf("*");
      return at < 0 ? x : [x.slice(0, at), Number(x.slice(at + 1))];
    }));
  }
  function prepare(body) {
    body.columns.forEach(function (col) {
      if (col.f) col.all = expand(col.f);
      if (col.s) col.parts = col.s.map(slotEntries);
    });
    return body;
  }
  function entry(ref, i) {
    if (ref === undefined || ref === null) return undefined;
    if (Array.isArray(ref)) return ref.map(function (r) { return entry(r, i); });
    const col = data.body.columns[ref];
    if ("c" in col) return col.c;
    if (col.all) return col.all[i];
    if (col.x && col.x[i] !== undefined) return col.x[i];
    const v = Number((Number(range.min) + i * Number(range.step)).toFixed(10));
    if (col.v === 1) return v;
    if (col.v === "log10") return Math.log10(v);
    let text = col.t[0];
    for (let j = 0; j < col.parts.length; j++) {
      text += (col.parts[j] === null ? valueText(v) : col.parts[j][i]) + col.t[j + 1];
    }
    return text;
  }

  // ---------------------------------------------------------------- applying one value
  function firstText(el) {
    if (!el) return null;
    const walk = el.ownerDocument.createTreeWalker(el, NodeFilter.SHOW_TEXT, {
      acceptNode: function (n) { return n.nodeValue.trim() ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP; }
    });
    return walk.nextNode();
  }
  function setText(el, text) {
    const node = firstText(el);
    // the node React wrote: React's next render replaces its value again
    if (node && text !== undefined && node.nodeValue !== text) node.nodeValue = text;
  }

  function applyMetrics(body, i) {
    const box = doc.querySelector(".st-key-" + body.metrics_key);
    if (!box) return;
    const cards = box.querySelectorAll('[data-testid="stMetric"]');
    body.metrics.forEach(function (m, j) {
      const card = cards[j];
      if (!card) return;
      setText(card.querySelector('[data-testid="stMetricLabel"]'), entry(m.label, i));
      setText(card.querySelector('[data-testid="stMetricValue"]'), entry(m.value, i));
      setText(card.querySelector('[data-testid="stMetricDelta"]'), entry(m.delta, i));
    });
  }

  // The marker of the current setting, moved in the drawn SVG at once: a Plotly.update redraws the whole
  // figure (every band, the legend; 60+ ms for /slub's), too slow for every step of a drag.
  function moveMarkers(body, i) {
    Object.keys(body.charts).forEach(function (key) {
      const gd = doc.querySelector(".st-key-" + key + " .js-plotly-plot");
      if (!gd || !gd._fullLayout || !gd._fullData) return;
      body.charts[key].traces.forEach(function (t) {
        const trace = gd._fullData[t.i];
        if (!trace || t.x === undefined || t.y === undefined) return;
        const xa = gd._fullLayout["xaxis" + trace.xaxis.slice(1)], ya = gd._fullLayout["yaxis" + trace.yaxis.slice(1)];
        const group = Array.from(gd.querySelectorAll(".scatterlayer .trace")).find(function (g) {
          return g.__data__ && g.__data__[0] && g.__data__[0].trace && g.__data__[0].trace.index === t.i;
        });
        if (!group || !xa || !ya) return;
        const xs = entry(t.x, i), ys = entry(t.y, i);
        group.querySelectorAll("path.point").forEach(function (pt, j) {
          const x = Array.isArray(xs) ? xs[j] : xs, y = Array.isArray(ys) ? ys[j] : ys;
          if (x === undefined || y === undefined) return;
          pt.setAttribute("transform", "translate(" + xa.c2p(x) + "," + ya.c2p(y) + ")");
        });
      });
    });
  }

  function applyCharts(body, i) {
    const Plotly = plotly();
    if (!Plotly) return;
    Object.keys(body.charts).forEach(function (key) {
      const gd = doc.querySelector(".st-key-" + key + " .js-plotly-plot");
      if (!gd || !gd.layout || !gd.data) return;
      const patch = body.charts[key];
      const traces = [];
      const update = {};
      patch.traces.forEach(function (t, j) {
        traces.push(t.i);
        Object.keys(t).forEach(function (attr) {
          if (attr === "i") return;
          if (!update[attr]) update[attr] = new Array(patch.traces.length);
          update[attr][j] = entry(t[attr], i);
        });
      });
      const relayout = {};
      const notes = gd.layout.annotations || [];
      patch.annotations.forEach(function (a) {
        const k = notes.findIndex(function (n) { return n.name === a.name; });
        if (k < 0) return;
        Object.keys(a).forEach(function (attr) {
          if (attr !== "name") relayout["annotations[" + k + "]." + attr] = entry(a[attr], i);
        });
      });
      Object.keys(patch.layout || {}).forEach(function (attr) { relayout[attr] = entry(patch.layout[attr], i); });
      Plotly.update(gd, update, relayout, traces);
    });
  }

  function show(v) {
    out.textContent = valueText(v);
    const lo = Number(range.min), hi = Number(range.max);
    range.style.setProperty("--fill", (hi > lo ? (100 * (v - lo)) / (hi - lo) : 0) + "%");
    range.setAttribute("aria-valuetext", valueText(v) + (args && args.unit ? " " + args.unit : ""));
  }

  function apply(v) {
    show(v);
    if (!data || !args || data.sid !== args.sid) return;
    const i = Math.round((v - Number(range.min)) / Number(range.step));
    applyMetrics(data.body, i);
    moveMarkers(data.body, i);
    // the rest of the patch (notes, caption, legend, the figure's data) once the thumb rests a moment
    if (fullTimer) clearTimeout(fullTimer);
    fullTimer = setTimeout(function () {
      fullTimer = null;
      applyCharts(data.body, i);
    }, FULL_UPDATE_MS);
  }

  function commit() {
    if (keyTimer) { clearTimeout(keyTimer); keyTimer = null; }
    committing = Number(range.value);  // until a render carries it back
    serial += 1;
    component.setTriggerValue("commit", { value: Number(range.value), n: serial });
  }

  // ---------------------------------------------------------------- events
  const onUp = function () { dragging = false; };
  range.addEventListener("input", function () { apply(Number(range.value)); });
  range.addEventListener("change", function () { if (!keyTimer) commit(); });
  range.addEventListener("pointerdown", function () { dragging = true; });
  window.addEventListener("pointerup", onUp);
  range.addEventListener("keydown", function (ev) {
    const lo = Number(range.min), hi = Number(range.max), step = Number(range.step);
    const big = Math.max(step, Math.round((hi - lo) / 10 / step) * step);
    const now = Number(range.value);
    const moves = { ArrowRight: now + step, ArrowUp: now + step, ArrowLeft: now - step, ArrowDown: now - step,
                    PageUp: now + big, PageDown: now - big, Home: lo, End: hi };
    if (!(ev.key in moves)) return;
    ev.preventDefault();
    const v = Math.min(hi, Math.max(lo, moves[ev.key]));
    if (v === now) return;
    range.value = String(v);
    apply(Number(range.value));
    if (keyTimer) clearTimeout(keyTimer);
    keyTimer = setTimeout(commit, KEY_COMMIT_MS);
  });
  range.addEventListener("blur", function () { if (keyTimer) commit(); });

  function render(handle) {
    component = handle;
    args = handle.data;
    root.querySelector(".label").textContent = args.label;
    range.setAttribute("aria-label", args.label);
    range.min = String(args.min);
    range.max = String(args.max);
    range.step = String(args.step);
    root.querySelector(".lo").textContent = valueText(args.min);
    root.querySelector(".hi").textContent = valueText(args.max);
    if (args.payload) {
      if (!data || data.sid !== args.sid || data.raw !== args.payload) {
        data = { sid: args.sid, raw: args.payload, body: prepare(JSON.parse(args.payload)) };
      }
      window.__livePayload[args.control] = args.payload;
    } else if ((!data || data.sid !== args.sid) && asked !== args.sid) {
      asked = args.sid;  // a control mounted afresh on its page has no payload: ask once
      handle.setTriggerValue("want", args.sid);
    }
    if (!dragging && !keyTimer && committing === null) {
      range.value = String(args.value);
      show(Number(range.value));
    } else if (Number(range.value) !== Number(args.value)) {
      // a run that started before the thumb moved on has just redrawn the charts at its value
      setTimeout(function () { apply(Number(range.value)); }, 50);
    }
    if (committing !== null && Number(args.value) === committing) committing = null;
    window.__liveState[args.control] = { sid: args.sid, has: !!(data && data.sid === args.sid), asked: asked,
                                         value: args.value };
  }

  function destroy() {
    window.removeEventListener("pointerup", onUp);
    if (fullTimer) clearTimeout(fullTimer);
    if (keyTimer) clearTimeout(keyTimer);
  }

  return { render: render, destroy: destroy };
}

const controls = new WeakMap();  // mounted element -> its control

export default function (component) {
  const root = component.parentElement;
  let control = controls.get(root);
  if (!control) {
    control = makeControl(root);
    controls.set(root, control);
  }
  try {
    control.render(component);
  } catch (e) {
    window.__liveError = String(e) + " " + e.stack;
    throw e;
  }
  return function () {
    // called when the element is removed, and for a render overtaken by the next one: keep a live control
    const host = root.host || root;
    if (controls.get(root) === control && !host.isConnected) {
      controls.delete(root);
      control.destroy();
    }
  };
}
