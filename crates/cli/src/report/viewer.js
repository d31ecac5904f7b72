// solverlab report: the runs table, figure highlighting and the 3-D replay.
// Plain script, no libraries, nothing loaded from the network.
"use strict";

// Every error the page meets, for the self-test (installed before anything else runs).
const pageErrors = [];
window.addEventListener("error", (e) => pageErrors.push(String(e.message || e)));
window.addEventListener("unhandledrejection", (e) => pageErrors.push("unhandled rejection: " + String(e.reason)));
(function () {
  const original = console.error.bind(console);
  console.error = (...args) => {
    pageErrors.push(args.map(String).join(" "));
    original(...args);
  };
})();

const DATA = JSON.parse(document.getElementById("solverlab-data").textContent);

// Options from the address: #selftest&frame=K&only=replay&select=RUN&overlay=1
const HASH = new Map(
  location.hash
    .replace(/^#/, "")
    .split("&")
    .filter((s) => s.length > 0)
    .map((s) => {
      const k = s.indexOf("=");
      return k < 0 ? [s, ""] : [s.slice(0, k), decodeURIComponent(s.slice(k + 1))];
    })
);

// ---------------------------------------------------------------- selection

const selection = { run: null, listeners: [] };

function selectRun(run) {
  selection.run = selection.run === run ? null : run;
  for (const f of selection.listeners) f(selection.run);
}

// ---------------------------------------------------------------- runs table

function setUpTable() {
  const table = document.getElementById("runs-table");
  if (!table) return;
  const body = table.tBodies[0];
  const headers = Array.from(table.tHead.rows[0].cells);
  let sorted = { col: -1, dir: 1 };
  // A cell's full value (data-value for numbers shown rounded), for sorting.
  const value = (row, col) => {
    const cell = row.cells[col];
    return cell ? (cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent) : "";
  };
  headers.forEach((th, col) => {
    th.addEventListener("click", () => {
      const dir = sorted.col === col ? -sorted.dir : 1;
      sorted = { col, dir };
      const rows = Array.from(body.rows);
      const numeric = rows.every((r) => value(r, col) === "" || !isNaN(Number(value(r, col))));
      rows.sort((a, b) => {
        const va = value(a, col), vb = value(b, col);
        if (va === "" && vb === "") return 0;
        if (va === "") return 1; // empty cells last, either way
        if (vb === "") return -1;
        const c = numeric ? Number(va) - Number(vb) : va.localeCompare(vb);
        return c * dir;
      });
      for (const r of rows) body.appendChild(r);
      headers.forEach((h) => h.classList.remove("sorted-asc", "sorted-desc"));
      th.classList.add(dir > 0 ? "sorted-asc" : "sorted-desc");
    });
  });
  for (const row of body.rows) {
    row.addEventListener("click", () => selectRun(Number(row.dataset.run)));
  }
  selection.listeners.push((run) => {
    for (const row of body.rows) row.classList.toggle("selected", run !== null && Number(row.dataset.run) === run);
  });
}

// ---------------------------------------------------------------- figures

// "#0072B2", "rgb(0,114,178)" or "RGB(0 114 178)" as "#0072b2"; anything else as null.
function normalColour(c) {
  if (!c) return null;
  c = c.trim().toLowerCase();
  if (/^#[0-9a-f]{6}$/.test(c)) return c;
  const m = c.match(/^rgba?\(\s*(\d+)[\s,]+(\d+)[\s,]+(\d+)/);
  if (!m) return null;
  return "#" + [m[1], m[2], m[3]].map((v) => Number(v).toString(16).padStart(2, "0")).join("");
}

function setUpFigures() {
  const byId = new Map((DATA.figures || []).map((f) => [f.id, f]));
  const shapes = "line, polyline, path, rect, circle";
  const figures = Array.from(document.querySelectorAll("figure.figure")).map((fig) => {
    const spec = byId.get(fig.dataset.figure) || { series: [] };
    const colours = new Set(spec.series.map((s) => normalColour(s.colour)));
    const elements = Array.from(fig.querySelectorAll(shapes)).map((el) => {
      const stroke = normalColour(el.getAttribute("stroke"));
      const fill = normalColour(el.getAttribute("fill"));
      return { el, colour: colours.has(stroke) ? stroke : colours.has(fill) ? fill : null, width: el.getAttribute("stroke-width") };
    });
    return { spec, elements: elements.filter((e) => e.colour !== null) };
  });
  selection.listeners.push((run) => {
    for (const f of figures) {
      for (const e of f.elements) {
        e.el.style.opacity = "";
        e.el.style.strokeWidth = "";
      }
      if (run === null) continue;
      const mine = f.spec.series.filter((s) => s.runs.includes(run));
      if (mine.length !== 1) continue;
      const colour = normalColour(mine[0].colour);
      const shared = f.spec.series.filter((s) => normalColour(s.colour) === colour).length > 1;
      if (shared) continue; // the palette has cycled: the colour does not name one series
      for (const e of f.elements) {
        if (e.colour === colour) {
          const w = Number(e.width || 1);
          e.el.style.strokeWidth = String(2 * (isNaN(w) ? 1 : w));
        } else {
          e.el.style.opacity = "0.15";
        }
      }
    }
  });
}

// ---------------------------------------------------------------- replay

function decode(b64, Type) {
  if (!b64) return new Type(0);
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Type(bytes.buffer);
}

// The stick colour scale of the snapshot figures: grey at rest, blue compressed, vermillion
// stretched, saturating at |length/rest − 1| = saturation.
const NEUTRAL = [150, 150, 150], COMPRESSED = [0, 114, 178], STRETCHED = [213, 94, 0];
function strainColour(ratio, saturation) {
  if (!isFinite(ratio) || !(saturation > 0)) return "rgb(0,0,0)";
  let t = (ratio - 1) / saturation;
  const end = t < 0 ? COMPRESSED : STRETCHED;
  t = Math.min(Math.abs(t), 1);
  const mix = (k) => Math.round(NEUTRAL[k] + (end[k] - NEUTRAL[k]) * t);
  return `rgb(${mix(0)},${mix(1)},${mix(2)})`;
}

// Rotates body-frame vector v by the unit quaternion (w, x, y, z).
function rotate(q, v) {
  const [w, x, y, z] = q;
  const tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]), tz = 2 * (x * v[1] - y * v[0]);
  return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
}

// Line segments (pairs of body-frame points) outlining a shape.
function outline(shape) {
  const segs = [];
  const circle = (r, c, axis, n = 24) => {
    for (let i = 0; i < n; i++) {
      const p = (k) => {
        const a = (2 * Math.PI * k) / n, u = r * Math.cos(a), v = r * Math.sin(a);
        return axis === 0 ? [c[0], c[1] + u, c[2] + v] : axis === 1 ? [c[0] + u, c[1], c[2] + v] : [c[0] + u, c[1] + v, c[2]];
      };
      segs.push([p(i), p(i + 1)]);
    }
  };
  if (shape.kind === "box") {
    const [hx, hy, hz] = shape.half;
    const corner = (i) => [i & 1 ? hx : -hx, i & 2 ? hy : -hy, i & 4 ? hz : -hz];
    for (let i = 0; i < 8; i++) for (const bit of [1, 2, 4]) if (!(i & bit)) segs.push([corner(i), corner(i | bit)]);
  } else if (shape.kind === "sphere") {
    for (const axis of [0, 1, 2]) circle(shape.radius, [0, 0, 0], axis);
  } else if (shape.kind === "capsule") {
    const r = shape.radius, h = shape.half_height;
    circle(r, [0, h, 0], 1);
    circle(r, [0, -h, 0], 1);
    for (const [x, z] of [[r, 0], [-r, 0], [0, r], [0, -r]]) segs.push([[x, h, z], [x, -h, z]]);
    for (const axis of [0, 2]) {
      // Half circles closing the ends, in the two vertical planes.
      for (const end of [h, -h]) {
        const n = 12;
        for (let i = 0; i < n; i++) {
          const p = (k) => {
            const a = (Math.PI * k) / n, u = r * Math.cos(a), v = Math.sign(end) * r * Math.sin(a);
            return axis === 0 ? [u, end + v, 0] : [0, end + v, u];
          };
          segs.push([p(i), p(i + 1)]);
        }
      }
    }
  }
  return segs;
}

// The series colours of the figures (the Okabe–Ito palette, as solverlab-plot draws them).
const PALETTE = [[0, 114, 178], [213, 94, 0], [0, 158, 115], [204, 121, 167], [230, 159, 0], [86, 180, 233], [0, 0, 0], [240, 228, 66]];
const rgb = (c, a = 1) => `rgba(${c[0]},${c[1]},${c[2]},${a})`;

// "1.23e-4", "0.0123", "12.3", "1234": four significant digits, for the live numbers.
function short(v) {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

// Two unit vectors orthogonal to the unit vector n (and to each other).
function tangents(n) {
  const t = Math.abs(n[1]) < 0.9 ? [0, 1, 0] : [1, 0, 0];
  const c = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const norm = (v) => {
    const l = Math.hypot(v[0], v[1], v[2]) || 1;
    return [v[0] / l, v[1] / l, v[2] / l];
  };
  const u = norm(c(n, t));
  return [u, norm(c(n, u))];
}

function setUpReplay() {
  const section = document.getElementById("replay");
  const replay = DATA.replay;
  if (!section || !replay || !replay.panels || replay.panels.length === 0) return null;
  const timeline = replay.frames;
  // Each solver label keeps one colour in every overlay, in order of first appearance.
  const labelColour = new Map();
  const runs = replay.panels.map((p) => {
    const x = decode(p.x, Float32Array);
    const bodies = decode(p.bodies, Float32Array);
    const sticks = decode(p.sticks, Uint32Array);
    const rest = decode(p.rest, Float32Array);
    const sense = p.sense ? decode(p.sense, Uint32Array) : new Uint32Array(rest.length);
    const contacts = p.contacts ? p.contacts.map((c) => decode(c, Float32Array)) : null;
    const label = p.label || p.title;
    if (!labelColour.has(label)) labelColour.set(label, PALETTE[labelColour.size % PALETTE.length]);
    return {
      ...p, x, bodies, sticks, rest, sense, contacts, label,
      group: p.group || p.title,
      colliders: p.colliders || [],
      stats: p.stats || null,
      colour: labelColour.get(label),
      outlines: p.shapes.map(outline),
    };
  });

  // Framing of a set of runs: the box of their first recorded frame (positions, body centres and
  // the bounded colliders), grown by later frames within ten times its size, so that a run that
  // flew apart does not shrink the others to a speck.
  function framing(members) {
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    const grow = (v, k) => {
      if (isFinite(v)) {
        lo[k] = Math.min(lo[k], v);
        hi[k] = Math.max(hi[k], v);
      }
    };
    for (const r of members) {
      const P = r.particles, B = r.shapes.length;
      for (let i = 0; i < Math.min(r.x.length, 3 * P); i++) grow(r.x[i], i % 3);
      for (let i = 0; i < Math.min(r.bodies.length, 7 * B); i++) if (i % 7 < 3) grow(r.bodies[i], i % 7);
      for (const c of r.colliders) {
        if (c.kind === "block" || c.kind === "box") for (let k = 0; k < 3; k++) { grow(c.a[k], k); grow(c.b[k], k); }
        if (c.kind === "sphere") for (let k = 0; k < 3; k++) { grow(c.a[k] - c.b[0], k); grow(c.a[k] + c.b[0], k); }
      }
    }
    for (let k = 0; k < 3; k++) if (!(lo[k] <= hi[k])) { lo[k] = -1; hi[k] = 1; }
    const first = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 0.5);
    const mid = lo.map((v, k) => (v + hi[k]) / 2);
    const near = (v, k) => Math.abs(v - mid[k]) < 10 * first;
    for (const r of members) {
      for (let i = 0; i < r.x.length; i++) if (near(r.x[i], i % 3)) grow(r.x[i], i % 3);
      for (let i = 0; i < r.bodies.length; i++) if (i % 7 < 3 && near(r.bodies[i], i % 7)) grow(r.bodies[i], i % 7);
    }
    const centre = lo.map((v, k) => (v + hi[k]) / 2);
    const size = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 0.5);
    return { lo, hi, centre, size };
  }

  const home = { yaw: 0.5, pitch: 0.35, zoom: 1 };
  const camera = { ...home };

  // Controls.
  const note = document.createElement("p");
  note.className = "note";
  note.textContent = replay.note || "";
  const controls = document.createElement("div");
  controls.className = "replay-controls";
  const play = document.createElement("button");
  play.id = "replay-play";
  play.textContent = "▶ play";
  const slider = document.createElement("input");
  slider.type = "range";
  slider.id = "replay-slider";
  slider.min = "0";
  slider.max = String(Math.max(0, timeline.length - 1));
  slider.value = "0";
  const speed = document.createElement("select");
  for (const [label, v] of [["0.25×", 0.25], ["1×", 1], ["4×", 4]]) {
    const o = document.createElement("option");
    o.textContent = label;
    o.value = String(v);
    if (v === 1) o.selected = true;
    speed.appendChild(o);
  }
  const groups = new Map();
  for (const r of runs) {
    if (!groups.has(r.group)) groups.set(r.group, []);
    groups.get(r.group).push(r);
  }
  const overlayBox = document.createElement("label");
  overlayBox.className = "overlay-toggle";
  const overlay = document.createElement("input");
  overlay.type = "checkbox";
  overlay.id = "replay-overlay";
  overlay.checked = HASH.get("overlay") === "1";
  overlayBox.append(overlay, " overlay the solvers of each scene");
  overlayBox.title = "one view per scene, each run drawn in its solver's colour";
  if (groups.size === runs.length) overlayBox.style.display = "none"; // nothing to overlay
  const time = document.createElement("span");
  time.className = "time";
  controls.append(play, slider, speed, overlayBox, time);
  const grid = document.createElement("div");
  grid.className = "replay-grid";
  const legend = document.createElement("div");
  legend.className = "legend";
  const bar = document.createElement("canvas");
  bar.width = 240;
  bar.height = 14;
  const s = replay.saturation;
  legend.append(
    `stick length/rest ${(1 - s).toFixed(2)}`, bar, `${(1 + s).toFixed(2)}`,
    " · limits dashed (red when violated) · colliders brown · drag to orbit, wheel to zoom, double-click to reset, ←/→ step, space plays"
  );
  section.append(note, controls, grid, legend);
  const bctx = bar.getContext("2d");
  for (let i = 0; i < bar.width; i++) {
    bctx.fillStyle = strainColour(1 - s + (2 * s * i) / (bar.width - 1), s);
    bctx.fillRect(i, 0, 1, bar.height);
  }

  // Views: one per run, or in overlay mode one per scene with its runs in their colours.
  let views = [];
  function buildViews() {
    grid.replaceChildren();
    const sets = overlay.checked ? Array.from(groups.entries()).map(([g, m]) => ({ title: g, members: m, overlaid: true }))
      : runs.map((r) => ({ title: r.title, members: [r], overlaid: false }));
    views = sets.map((v) => {
      const div = document.createElement("div");
      div.className = "panel";
      const title = document.createElement("div");
      title.className = "title";
      if (v.overlaid) {
        title.append(v.title + ": ");
        for (const r of v.members) {
          const sw = document.createElement("span");
          sw.className = "swatch";
          sw.style.color = rgb(r.colour);
          sw.textContent = "■ " + r.label + " ";
          sw.title = `run ${r.run} (click to select)`;
          sw.addEventListener("click", () => selectRun(r.run));
          title.append(sw);
        }
      } else {
        title.textContent = v.title;
        title.title = `run ${v.members[0].run}: ${v.title} (click to select)`;
        title.addEventListener("click", () => selectRun(v.members[0].run));
      }
      const canvas = document.createElement("canvas");
      canvas.width = 480;
      canvas.height = 480;
      const info = document.createElement("div");
      info.className = "info";
      div.append(title, canvas, info);
      grid.appendChild(div);
      attachCamera(canvas);
      return { ...v, ...framing(v.members), div, canvas, info, ctx: canvas.getContext("2d") };
    });
    highlight(selection.run);
  }
  function highlight(run) {
    for (const v of views) v.div.classList.toggle("selected", run !== null && v.members.some((r) => r.run === run));
  }
  selection.listeners.push(highlight);

  // Projection: orbit camera about the view's centre, perspective.
  function projector(v, width, height) {
    const cy = Math.cos(camera.yaw), sy = Math.sin(camera.yaw), cp = Math.cos(camera.pitch), sp = Math.sin(camera.pitch);
    const f = (0.9 * Math.min(width, height)) / (2 * Math.tan(Math.PI / 8));
    const distance = 2 * v.size * camera.zoom, c = v.centre;
    return (p) => {
      const x = p[0] - c[0], y = p[1] - c[1], z = p[2] - c[2];
      const right = x * cy - z * sy, toward = x * sy + z * cy;
      const up = y * cp - toward * sp, depth = distance - (y * sp + toward * cp);
      if (!(depth > 1e-6) || !isFinite(right + up)) return null;
      return [width / 2 + (f * right) / depth, height / 2 - (f * up) / depth];
    };
  }

  let index = 0;
  function frameOf(r) {
    // This run's latest recorded frame at or before the timeline's frame.
    const target = timeline[index];
    let k = -1;
    for (let i = 0; i < r.frames.length && r.frames[i] <= target; i++) k = i;
    return k;
  }

  function segment(ctx, proj, a, b) {
    const pa = proj(a), pb = proj(b);
    if (!pa || !pb) return;
    ctx.moveTo(pa[0], pa[1]);
    ctx.lineTo(pb[0], pb[1]);
  }

  // The world colliders of a view's first run: planes as a grid patch in their plane, blocks and
  // the box as wireframes, spheres as three great circles. Returns how many were drawn.
  function drawColliders(v, proj) {
    const ctx = v.ctx, cs = v.members[0].colliders;
    const half = 0.8 * v.size;
    ctx.lineWidth = 1;
    let drawn = 0;
    for (const c of cs) {
      ctx.beginPath();
      if (c.kind === "plane") {
        const n = c.b, [u, w] = tangents(n);
        // The view's centre projected onto the plane.
        const d = (v.centre[0] - c.a[0]) * n[0] + (v.centre[1] - c.a[1]) * n[1] + (v.centre[2] - c.a[2]) * n[2];
        const o = [0, 1, 2].map((k) => v.centre[k] - d * n[k]);
        const step = Math.pow(10, Math.floor(Math.log10(v.size))) / 2;
        const m = Math.ceil(half / step) * step;
        const at = (a, b) => [0, 1, 2].map((k) => o[k] + a * u[k] + b * w[k]);
        for (let t = -m; t <= m + 1e-9; t += step) {
          segment(ctx, proj, at(t, -m), at(t, m));
          segment(ctx, proj, at(-m, t), at(m, t));
        }
        ctx.strokeStyle = "rgba(140,100,60,0.22)";
      } else if (c.kind === "block" || c.kind === "box") {
        const corner = (i) => [i & 1 ? c.b[0] : c.a[0], i & 2 ? c.b[1] : c.a[1], i & 4 ? c.b[2] : c.a[2]];
        for (let i = 0; i < 8; i++) for (const bit of [1, 2, 4]) if (!(i & bit)) segment(ctx, proj, corner(i), corner(i | bit));
        ctx.strokeStyle = c.kind === "block" ? "rgba(140,100,60,0.85)" : "rgba(140,100,60,0.45)";
      } else if (c.kind === "sphere") {
        for (const [a, b] of outline({ kind: "sphere", radius: c.b[0] })) {
          segment(ctx, proj, [0, 1, 2].map((k) => c.a[k] + a[k]), [0, 1, 2].map((k) => c.a[k] + b[k]));
        }
        ctx.strokeStyle = "rgba(140,100,60,0.7)";
      } else {
        continue;
      }
      ctx.stroke();
      drawn += 1;
    }
    if (!cs.some((c) => c.kind === "plane")) {
      // No floor: a faint grid at the lowest point, for orientation.
      const step = Math.pow(10, Math.floor(Math.log10(v.size))) / 2;
      const m = Math.ceil(half / step) * step;
      ctx.beginPath();
      for (let t = -m; t <= m + 1e-9; t += step) {
        segment(ctx, proj, [v.centre[0] + t, v.lo[1], v.centre[2] - m], [v.centre[0] + t, v.lo[1], v.centre[2] + m]);
        segment(ctx, proj, [v.centre[0] - m, v.lo[1], v.centre[2] + t], [v.centre[0] + m, v.lo[1], v.centre[2] + t]);
      }
      ctx.strokeStyle = "rgba(0,0,0,0.08)";
      ctx.stroke();
    }
    return drawn;
  }

  // One run at its frame `k`: sticks (strain-coloured, or in the run's colour in an overlay),
  // limits dashed, particles, rigid bodies and contacts.
  function drawRun(v, r, k, proj) {
    const ctx = v.ctx, own = v.overlaid ? rgb(r.colour, 0.9) : null;
    const P = r.particles, x = r.x, base = k * P * 3;
    const point = (i) => [x[base + 3 * i], x[base + 3 * i + 1], x[base + 3 * i + 2]];
    for (let j = 0; j < r.rest.length; j++) {
      const a = r.sticks[2 * j], b = r.sticks[2 * j + 1];
      if (a >= P || b >= P) continue;
      const va = point(a), vb = point(b);
      const pa = proj(va), pb = proj(vb);
      if (!pa || !pb) continue;
      const ratio = Math.hypot(vb[0] - va[0], vb[1] - va[1], vb[2] - va[2]) / r.rest[j];
      const limit = r.sense[j];
      if (limit) {
        // A limit holds a bound, not a length: dashed, red only when violated.
        const violated = limit === 1 ? ratio < 1 - 1e-3 : ratio > 1 + 1e-3;
        ctx.setLineDash([3, 3]);
        ctx.lineWidth = 1;
        ctx.strokeStyle = violated ? "rgba(200,30,30,0.9)" : own ? rgb(r.colour, 0.3) : "rgba(120,120,120,0.35)";
      } else {
        ctx.setLineDash([]);
        ctx.lineWidth = 1.6;
        ctx.strokeStyle = own || strainColour(ratio, s);
      }
      ctx.beginPath();
      ctx.moveTo(pa[0], pa[1]);
      ctx.lineTo(pb[0], pb[1]);
      ctx.stroke();
    }
    ctx.setLineDash([]);
    ctx.fillStyle = own || "rgb(40,40,40)";
    const dot = P > 2000 ? 1 : 2;
    for (let i = 0; i < P; i++) {
      const q = proj(point(i));
      if (q) ctx.fillRect(q[0] - dot, q[1] - dot, 2 * dot, 2 * dot);
    }
    const B = r.shapes.length;
    ctx.strokeStyle = own || "rgb(60,60,70)";
    ctx.lineWidth = 1.2;
    for (let bi = 0; bi < B; bi++) {
      const o = (k * B + bi) * 7;
      const c = [r.bodies[o], r.bodies[o + 1], r.bodies[o + 2]];
      const q = [r.bodies[o + 3], r.bodies[o + 4], r.bodies[o + 5], r.bodies[o + 6]];
      if (!c.concat(q).every(isFinite)) continue;
      ctx.beginPath();
      for (const [u, w] of r.outlines[bi]) {
        const ru = rotate(q, u), rw = rotate(q, w);
        segment(ctx, proj, [c[0] + ru[0], c[1] + ru[1], c[2] + ru[2]], [c[0] + rw[0], c[1] + rw[1], c[2] + rw[2]]);
      }
      ctx.stroke();
    }
    if (!v.overlaid && r.contacts && r.contacts[k]) {
      const cs = r.contacts[k];
      ctx.strokeStyle = ctx.fillStyle = "rgb(200,30,30)";
      ctx.lineWidth = 1;
      for (let i = 0; i + 5 < cs.length; i += 6) {
        const at = [cs[i], cs[i + 1], cs[i + 2]];
        const tip = [at[0] + 0.08 * v.size * cs[i + 3], at[1] + 0.08 * v.size * cs[i + 4], at[2] + 0.08 * v.size * cs[i + 5]];
        const pa = proj(at), pb = proj(tip);
        if (!pa) continue;
        ctx.fillRect(pa[0] - 2, pa[1] - 2, 4, 4);
        if (pb) {
          ctx.beginPath();
          ctx.moveTo(pa[0], pa[1]);
          ctx.lineTo(pb[0], pb[1]);
          ctx.stroke();
        }
      }
    }
  }

  // The numbers under a view: per run, its frame, violation, energy and iterations.
  function numbers(r, k) {
    if (k < 0) return "not started";
    const ended = k === r.frames.length - 1 && r.frames[k] < timeline[index] ? " (ended)" : "";
    const st = r.stats;
    if (!st) return `frame ${r.frames[k]}${ended}`;
    return `frame ${r.frames[k]}${ended} · violation ${short(st.violation[k])} m · energy ${short(st.energy[k])} J · ${short(st.iterations[k])} it.`;
  }

  let collidersDrawn = 0;
  function drawView(v) {
    const ctx = v.ctx, W = v.canvas.width, H = v.canvas.height;
    ctx.clearRect(0, 0, W, H);
    const proj = projector(v, W, H);
    const drawn = drawColliders(v, proj);
    if (v === views[0]) collidersDrawn = drawn;
    v.info.replaceChildren();
    for (const r of v.members) {
      const k = frameOf(r);
      if (k >= 0) drawRun(v, r, k, proj);
      const line = document.createElement("div");
      if (v.overlaid) line.style.color = rgb(r.colour);
      line.textContent = (v.overlaid ? r.label + ": " : "") + numbers(r, k);
      v.info.appendChild(line);
    }
  }

  function render() {
    const frame = timeline[index];
    const dt = runs[0].dt || 0;
    time.textContent = `frame ${frame} · t = ${(frame * dt).toFixed(3)} s`;
    slider.value = String(index);
    for (const v of views) drawView(v);
  }

  function show(i) {
    index = Math.max(0, Math.min(timeline.length - 1, i));
    render();
  }

  // Playback with timers (so that it also advances under a virtual time budget).
  let timer = null;
  function tick() {
    show(index + 1 < timeline.length ? index + 1 : 0);
  }
  function interval() {
    // Real time between recorded frames, scaled by the speed, at least 15 ms.
    const dt = runs[0].dt || 1 / 60;
    const gap = timeline.length > 1 ? (timeline[timeline.length - 1] - timeline[0]) / (timeline.length - 1) : 1;
    return Math.max(15, (1000 * dt * gap) / Number(speed.value));
  }
  function setPlaying(on) {
    if (on && timer === null) {
      timer = setInterval(tick, interval());
      play.textContent = "❚❚ pause";
    } else if (!on && timer !== null) {
      clearInterval(timer);
      timer = null;
      play.textContent = "▶ play";
    }
  }
  play.addEventListener("click", () => setPlaying(timer === null));
  speed.addEventListener("change", () => {
    if (timer !== null) {
      setPlaying(false);
      setPlaying(true);
    }
  });
  slider.addEventListener("input", () => show(Number(slider.value)));
  document.addEventListener("keydown", (e) => {
    const tag = (e.target && e.target.tagName) || "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    if (e.key === "ArrowRight") show(index + 1);
    else if (e.key === "ArrowLeft") show(index - 1);
    else if (e.key === "Home") show(0);
    else if (e.key === "End") show(timeline.length - 1);
    else if (e.key === " ") setPlaying(timer === null);
    else return;
    e.preventDefault();
  });

  // One orbit camera for every view: drag turns, the wheel zooms, a double-click resets.
  let drag = null;
  function attachCamera(canvas) {
    canvas.addEventListener("mousedown", (e) => {
      drag = { x: e.clientX, y: e.clientY, yaw: camera.yaw, pitch: camera.pitch };
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      camera.zoom *= Math.exp(0.001 * e.deltaY);
      render();
    }, { passive: false });
    canvas.addEventListener("dblclick", () => {
      Object.assign(camera, home);
      render();
    });
  }
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    camera.yaw = drag.yaw + 0.01 * (e.clientX - drag.x);
    camera.pitch = Math.max(-1.5, Math.min(1.5, drag.pitch + 0.01 * (e.clientY - drag.y)));
    render();
  });
  window.addEventListener("mouseup", () => (drag = null));
  overlay.addEventListener("change", () => {
    buildViews();
    render();
  });

  buildViews();
  show(HASH.has("frame") ? Number(HASH.get("frame")) || 0 : 0);
  return {
    index: () => index,
    play: () => play.click(),
    pause: () => setPlaying(false),
    firstCanvas: () => views[0].canvas,
    views: () => views.length,
    colliders: () => collidersDrawn,
  };
}

// ---------------------------------------------------------------- self-test

function nonBlank(canvas) {
  const d = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true; // any painted pixel
  return false;
}

function selfTest(viewer) {
  const report = (result) => {
    result.ok = result.errors.length === 0 && (viewer === null || (result.advanced && result.nonblank));
    const pre = document.createElement("pre");
    pre.id = "selftest-result";
    pre.textContent = JSON.stringify(result);
    document.body.appendChild(pre);
    document.title = "selftest:" + (result.ok ? "pass" : "fail");
  };
  if (viewer === null) {
    setTimeout(() => report({ errors: pageErrors.slice(), frame_before: null, frame_after: null, advanced: null, nonblank: null }), 100);
    return;
  }
  const before = viewer.index();
  viewer.play();
  setTimeout(() => {
    viewer.pause();
    const after = viewer.index();
    report({
      errors: pageErrors.slice(),
      frame_before: before,
      frame_after: after,
      advanced: after !== before,
      nonblank: nonBlank(viewer.firstCanvas()),
      views: viewer.views(),
      colliders: viewer.colliders(),
    });
  }, 1500);
}

// ---------------------------------------------------------------- start

setUpTable();
setUpFigures();
const viewer = setUpReplay();
if (HASH.get("only") === "replay") document.body.classList.add("only-replay");
if (HASH.has("select")) selectRun(Number(HASH.get("select")));
if (HASH.has("selftest")) selfTest(viewer);
