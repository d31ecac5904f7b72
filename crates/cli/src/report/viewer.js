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

// Options from the address: #selftest&frame=K&only=replay&select=RUN
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
  const value = (row, col) => row.cells[col] ? row.cells[col].textContent : "";
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

function setUpReplay() {
  const section = document.getElementById("replay");
  const replay = DATA.replay;
  if (!section || !replay || !replay.panels || replay.panels.length === 0) return null;
  const timeline = replay.frames;
  const panels = replay.panels.map((p) => {
    const x = decode(p.x, Float32Array);
    const bodies = decode(p.bodies, Float32Array);
    const sticks = decode(p.sticks, Uint32Array);
    const rest = decode(p.rest, Float32Array);
    const contacts = p.contacts ? p.contacts.map((c) => decode(c, Float32Array)) : null;
    return { ...p, x, bodies, sticks, rest, contacts, outlines: p.shapes.map(outline) };
  });

  // Framing: the bounding box of every finite position and body centre, all panels and frames.
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  const grow = (v, k) => {
    if (isFinite(v)) {
      lo[k] = Math.min(lo[k], v);
      hi[k] = Math.max(hi[k], v);
    }
  };
  for (const p of panels) {
    for (let i = 0; i < p.x.length; i++) grow(p.x[i], i % 3);
    for (let i = 0; i < p.bodies.length; i++) if (i % 7 < 3) grow(p.bodies[i], i % 7);
  }
  for (let k = 0; k < 3; k++) if (!(lo[k] <= hi[k])) { lo[k] = -1; hi[k] = 1; }
  const centre = lo.map((v, k) => (v + hi[k]) / 2);
  const size = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 0.5);
  const home = { yaw: 0.5, pitch: 0.35, distance: 1.6 * size };
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
  const time = document.createElement("span");
  time.className = "time";
  controls.append(play, slider, speed, time);
  const grid = document.createElement("div");
  grid.className = "replay-grid";
  const legend = document.createElement("div");
  legend.className = "legend";
  const bar = document.createElement("canvas");
  bar.width = 240;
  bar.height = 14;
  const s = replay.saturation;
  legend.append(`stick length/rest ${(1 - s).toFixed(2)}`, bar, `${(1 + s).toFixed(2)}`, " · drag to orbit, wheel to zoom, double-click to reset, ←/→ step, space plays");
  section.append(note, controls, grid, legend);
  const bctx = bar.getContext("2d");
  for (let i = 0; i < bar.width; i++) {
    bctx.fillStyle = strainColour(1 - s + (2 * s * i) / (bar.width - 1), s);
    bctx.fillRect(i, 0, 1, bar.height);
  }

  for (const p of panels) {
    const div = document.createElement("div");
    div.className = "panel";
    const title = document.createElement("div");
    title.className = "title";
    title.textContent = p.title;
    title.title = `run ${p.run}: ${p.title} (click to select)`;
    title.addEventListener("click", () => selectRun(p.run));
    const ended = document.createElement("div");
    ended.className = "ended";
    ended.textContent = "\u00a0";
    const canvas = document.createElement("canvas");
    canvas.width = 480;
    canvas.height = 480;
    div.append(title, canvas, ended);
    grid.appendChild(div);
    Object.assign(p, { div, canvas, ended, ctx: canvas.getContext("2d") });
  }
  selection.listeners.push((run) => {
    for (const p of panels) p.div.classList.toggle("selected", run !== null && p.run === run);
  });

  // Projection: orbit camera about the centre, perspective.
  function projector(width, height) {
    const cy = Math.cos(camera.yaw), sy = Math.sin(camera.yaw), cp = Math.cos(camera.pitch), sp = Math.sin(camera.pitch);
    const f = (0.9 * Math.min(width, height)) / (2 * Math.tan(Math.PI / 8));
    return (v) => {
      const x = v[0] - centre[0], y = v[1] - centre[1], z = v[2] - centre[2];
      const right = x * cy - z * sy, toward = x * sy + z * cy;
      const up = y * cp - toward * sp, depth = camera.distance - (y * sp + toward * cp);
      if (!(depth > 1e-6) || !isFinite(right + up)) return null;
      return [width / 2 + (f * right) / depth, height / 2 - (f * up) / depth];
    };
  }

  let index = 0;
  function frameOf(p) {
    // This panel's latest recorded frame at or before the timeline's frame.
    const target = timeline[index];
    let k = -1;
    for (let i = 0; i < p.frames.length && p.frames[i] <= target; i++) k = i;
    return k;
  }

  function drawPanel(p) {
    const ctx = p.ctx, W = p.canvas.width, H = p.canvas.height;
    ctx.clearRect(0, 0, W, H);
    const proj = projector(W, H);
    // Ground grid in the plane of the lowest point.
    ctx.strokeStyle = "rgba(0,0,0,0.08)";
    ctx.lineWidth = 1;
    const step = Math.pow(10, Math.floor(Math.log10(size))) / 2;
    const half = Math.ceil((0.8 * size) / step) * step;
    for (let u = -half; u <= half + 1e-9; u += step) {
      for (const [a, b] of [
        [[centre[0] + u, lo[1], centre[2] - half], [centre[0] + u, lo[1], centre[2] + half]],
        [[centre[0] - half, lo[1], centre[2] + u], [centre[0] + half, lo[1], centre[2] + u]],
      ]) {
        const pa = proj(a), pb = proj(b);
        if (pa && pb) {
          ctx.beginPath();
          ctx.moveTo(pa[0], pa[1]);
          ctx.lineTo(pb[0], pb[1]);
          ctx.stroke();
        }
      }
    }
    const k = frameOf(p);
    p.ended.textContent = k >= 0 && k === p.frames.length - 1 && p.frames[k] < timeline[index] ? `(ended at frame ${p.frames[k]})` : "\u00a0";
    if (k < 0) return;
    const P = p.particles, x = p.x, base = k * P * 3;
    const point = (i) => [x[base + 3 * i], x[base + 3 * i + 1], x[base + 3 * i + 2]];
    // Sticks, coloured by strain.
    ctx.lineWidth = 1.6;
    for (let j = 0; j < p.rest.length; j++) {
      const a = p.sticks[2 * j], b = p.sticks[2 * j + 1];
      if (a >= P || b >= P) continue;
      const va = point(a), vb = point(b);
      const pa = proj(va), pb = proj(vb);
      if (!pa || !pb) continue;
      const len = Math.hypot(vb[0] - va[0], vb[1] - va[1], vb[2] - va[2]);
      ctx.strokeStyle = strainColour(len / p.rest[j], s);
      ctx.beginPath();
      ctx.moveTo(pa[0], pa[1]);
      ctx.lineTo(pb[0], pb[1]);
      ctx.stroke();
    }
    // Particles.
    ctx.fillStyle = "rgb(40,40,40)";
    const dot = P > 2000 ? 1 : 2;
    for (let i = 0; i < P; i++) {
      const q = proj(point(i));
      if (q) ctx.fillRect(q[0] - dot, q[1] - dot, 2 * dot, 2 * dot);
    }
    // Rigid bodies.
    const B = p.shapes.length;
    ctx.strokeStyle = "rgb(60,60,70)";
    ctx.lineWidth = 1.2;
    for (let bi = 0; bi < B; bi++) {
      const o = (k * B + bi) * 7;
      const c = [p.bodies[o], p.bodies[o + 1], p.bodies[o + 2]];
      const q = [p.bodies[o + 3], p.bodies[o + 4], p.bodies[o + 5], p.bodies[o + 6]];
      if (!c.concat(q).every(isFinite)) continue;
      ctx.beginPath();
      for (const [u, v] of p.outlines[bi]) {
        const ru = rotate(q, u), rv = rotate(q, v);
        const pa = proj([c[0] + ru[0], c[1] + ru[1], c[2] + ru[2]]);
        const pb = proj([c[0] + rv[0], c[1] + rv[1], c[2] + rv[2]]);
        if (pa && pb) {
          ctx.moveTo(pa[0], pa[1]);
          ctx.lineTo(pb[0], pb[1]);
        }
      }
      ctx.stroke();
    }
    // Contacts: a point and a short normal.
    if (p.contacts && p.contacts[k]) {
      const cs = p.contacts[k];
      ctx.strokeStyle = ctx.fillStyle = "rgb(200,30,30)";
      ctx.lineWidth = 1;
      for (let i = 0; i + 5 < cs.length; i += 6) {
        const at = [cs[i], cs[i + 1], cs[i + 2]];
        const tip = [at[0] + 0.08 * size * cs[i + 3], at[1] + 0.08 * size * cs[i + 4], at[2] + 0.08 * size * cs[i + 5]];
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

  function render() {
    const frame = timeline[index];
    const dt = panels[0].dt || 0;
    time.textContent = `frame ${frame} · t = ${(frame * dt).toFixed(3)} s`;
    slider.value = String(index);
    for (const p of panels) drawPanel(p);
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
    const dt = panels[0].dt || 1 / 60;
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

  // One orbit camera for every panel.
  let drag = null;
  for (const p of panels) {
    p.canvas.addEventListener("mousedown", (e) => {
      drag = { x: e.clientX, y: e.clientY, yaw: camera.yaw, pitch: camera.pitch };
    });
    p.canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      camera.distance *= Math.exp(0.001 * e.deltaY);
      render();
    }, { passive: false });
    p.canvas.addEventListener("dblclick", () => {
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

  show(HASH.has("frame") ? Number(HASH.get("frame")) || 0 : 0);
  return {
    index: () => index,
    play: () => play.click(),
    pause: () => setPlaying(false),
    firstCanvas: () => panels[0].canvas,
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
