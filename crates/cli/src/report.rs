//! `solverlab report DIR`: one self-contained HTML page per experiment.
//!
//! The page holds the experiment's description, its provenance (meta.json and the experiment
//! file), every figure inline (the SVGs), runs.csv as a sortable table, and a 3-D replay of the
//! recorded positions, bodies and contacts, one panel per run on a shared timeline. Data, style
//! and script are inline (`report/viewer.js`, `report/viewer.css`); the page loads nothing, so it
//! works offline, attached to a paper or from a USB stick.
//!
//! The report reads only the results folder: meta.json, experiment.toml (for the figure specs and
//! the description), the CSVs and the SVGs. A `simulate` folder (no experiment.toml) gets the
//! same page with its overview figure and a one-row runs table built from meta.json. Frames are decimated, evenly and keeping the last, so
//! that the page stays under a size budget (20 MB by default); the page says so when it happens.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use crate::results::Meta;
use crate::spec::ExperimentFile;
use crate::CliError;

/// The default size budget of the replay data, in bytes.
pub const BUDGET_MB: f64 = 20.0;

const VIEWER_JS: &str = include_str!("report/viewer.js");
const VIEWER_CSS: &str = include_str!("report/viewer.css");

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The unit of a runs.csv column, for the table's header.
fn unit(column: &str) -> Option<&'static str> {
    Some(match column {
        "final_violation" | "peak_violation" | "max_penetration" | "max_body_drift" | "max_top_drift" => "m",
        "final_support_force" => "N",
        "jitter" => "m/s",
        "energy_gain" => "J",
        c if c.starts_with("step_ms") || c.starts_with("solve_ms") => "ms",
        _ => return None,
    })
}

/// A number at four significant digits: plain between 1e-3 and 1e5, otherwise in e-notation.
fn short(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        x.to_string()
    } else if a != 0.0 && !(1e-3..1e5).contains(&a) {
        format!("{x:.3e}")
    } else {
        let digits = if a == 0.0 { 0 } else { (3 - a.log10().floor() as i32).max(0) as usize };
        let t = format!("{x:.digits$}");
        if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            t
        }
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn f32s(values: &[f64]) -> String {
    base64(&values.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect::<Vec<u8>>())
}

fn u32s(values: &[u32]) -> String {
    base64(&values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>())
}

/// A CSV file as a header and rows of text.
struct Csv {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Csv {
    fn read(path: &Path) -> Result<Csv, String> {
        let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let columns = r.headers().map_err(|e| format!("{}: {e}", path.display()))?.iter().map(String::from).collect();
        let rows = r
            .records()
            .map(|x| x.map(|x| x.iter().map(String::from).collect()))
            .collect::<Result<Vec<Vec<String>>, _>>()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Csv { columns, rows })
    }

    fn col(&self, name: &str) -> Result<usize, String> {
        self.columns.iter().position(|c| c == name).ok_or_else(|| format!("no column `{name}`"))
    }
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or(f64::NAN)
}

/// One run's recorded replay.
#[derive(Default)]
struct Recorded {
    /// frame → particle positions.
    x: BTreeMap<u64, Vec<[f64; 3]>>,
    /// frame → rigid bodies `(cx, cy, cz, qw, qx, qy, qz)`, in body order.
    bodies: BTreeMap<u64, Vec<[f64; 7]>>,
    /// frame → contact points `(x, y, z, nx, ny, nz)`.
    contacts: BTreeMap<u64, Vec<[f64; 6]>>,
    /// `(a, b, rest, sense)`: sense 0 for an equality stick, 1 for `at_least`, 2 for `at_most`.
    sticks: Vec<(u32, u32, f64, u32)>,
    shapes: Vec<serde_json::Value>,
    /// The world colliders, `{kind, a, b}` as in colliders.csv.
    colliders: Vec<serde_json::Value>,
    /// frame → `(violation m, kinetic + potential energy J, iterations)` from steps.csv.
    stats: BTreeMap<u64, [f64; 3]>,
}

/// Reads the replay tables of `dir`; `None` when no positions or bodies were recorded.
fn recorded(dir: &Path) -> Result<Option<BTreeMap<usize, Recorded>>, String> {
    let pos = Csv::read(&dir.join("positions.csv"))?;
    let with_bodies = Csv::read(&dir.join("bodies.csv")).is_ok_and(|b| !b.rows.is_empty());
    if pos.rows.is_empty() && !with_bodies {
        return Ok(None);
    }
    let mut runs: BTreeMap<usize, Recorded> = BTreeMap::new();
    // A `simulate` folder's tables have no `run` column: its one run is run 0. Column `usize::MAX`
    // stands for the missing `run` column and reads as 0.
    let at = |t: &Csv, names: &[&str]| -> Result<Vec<usize>, String> {
        names.iter().map(|&n| if n == "run" && t.col(n).is_err() { Ok(usize::MAX) } else { t.col(n) }).collect()
    };
    let run_of = |row: &[String], k: usize| -> usize {
        if k == usize::MAX {
            0
        } else {
            row[k].parse().unwrap_or(usize::MAX)
        }
    };
    let c = at(&pos, &["run", "frame", "particle", "x", "y", "z"]).map_err(|e| format!("positions.csv: {e}"))?;
    for row in &pos.rows {
        let (run, frame, p) = (run_of(row, c[0]), row[c[1]].parse().unwrap_or(0), row[c[2]].parse().unwrap_or(0));
        let x = runs.entry(run).or_default().x.entry(frame).or_default();
        if x.len() <= p {
            x.resize(p + 1, [f64::NAN; 3]);
        }
        x[p] = [num(&row[c[3]]), num(&row[c[4]]), num(&row[c[5]])];
    }
    if let Ok(t) = Csv::read(&dir.join("sticks.csv")) {
        let c = at(&t, &["run", "a", "b", "rest"]).map_err(|e| format!("sticks.csv: {e}"))?;
        // Folders written before the `sense` column have equality sticks only.
        let sense = t.col("sense").ok();
        for row in &t.rows {
            if let Some(r) = runs.get_mut(&run_of(row, c[0])) {
                let kind = match sense.map(|k| row[k].as_str()) {
                    Some("at_least") => 1,
                    Some("at_most") => 2,
                    _ => 0,
                };
                r.sticks.push((row[c[1]].parse().unwrap_or(0), row[c[2]].parse().unwrap_or(0), num(&row[c[3]]), kind));
            }
        }
    }
    // Rigid bodies: the rows of bodies.csv with a velocity (particle bodies have none, and are
    // drawn by their particles and sticks already), in the order of shapes.csv.
    let mut first_rigid: BTreeMap<usize, usize> = BTreeMap::new();
    if let Ok(t) = Csv::read(&dir.join("shapes.csv")) {
        let c = at(&t, &["run", "body", "shape", "hx", "hy", "hz", "radius", "half_height"])
            .map_err(|e| format!("shapes.csv: {e}"))?;
        for row in &t.rows {
            let run = run_of(row, c[0]);
            let r = runs.entry(run).or_default();
            first_rigid.entry(run).or_insert(row[c[1]].parse().unwrap_or(0));
            let shape = match row[c[2]].as_str() {
                "box" => json!({"kind": "box", "half": [num(&row[c[3]]), num(&row[c[4]]), num(&row[c[5]])]}),
                "sphere" => json!({"kind": "sphere", "radius": num(&row[c[6]])}),
                _ => json!({"kind": "capsule", "radius": num(&row[c[6]]), "half_height": num(&row[c[7]])}),
            };
            r.shapes.push(shape);
        }
    }
    if let Ok(t) = Csv::read(&dir.join("bodies.csv")) {
        let c = at(&t, &["run", "frame", "body", "cx", "cy", "cz", "qw", "qx", "qy", "qz"])
            .map_err(|e| format!("bodies.csv: {e}"))?;
        for row in &t.rows {
            let run = run_of(row, c[0]);
            let (Some(&first), Some(r)) = (first_rigid.get(&run), runs.get_mut(&run)) else { continue };
            if row[c[2]].parse().unwrap_or(0usize) < first {
                continue;
            }
            let v: [f64; 7] = std::array::from_fn(|k| num(&row[c[3 + k]]));
            let frame = row[c[1]].parse().unwrap_or(0);
            r.bodies.entry(frame).or_default().push(v);
            r.x.entry(frame).or_default();
        }
    }
    if let Ok(t) = Csv::read(&dir.join("contacts.csv")) {
        let c = at(&t, &["run", "frame", "x", "y", "z", "nx", "ny", "nz"]).map_err(|e| format!("contacts.csv: {e}"))?;
        for row in &t.rows {
            if let Some(r) = runs.get_mut(&run_of(row, c[0])) {
                let v: [f64; 6] = std::array::from_fn(|k| num(&row[c[2 + k]]));
                r.contacts.entry(row[c[1]].parse().unwrap_or(0)).or_default().push(v);
            }
        }
    }
    // After every table that can start a run (a scene of rigid bodies only has no positions).
    if let Ok(t) = Csv::read(&dir.join("colliders.csv")) {
        let c =
            at(&t, &["run", "kind", "ax", "ay", "az", "bx", "by", "bz"]).map_err(|e| format!("colliders.csv: {e}"))?;
        for row in &t.rows {
            if let Some(r) = runs.get_mut(&run_of(row, c[0])) {
                let v = |k: usize| num(&row[c[k]]);
                r.colliders.push(json!({"kind": row[c[1]], "a": [v(2), v(3), v(4)], "b": [v(5), v(6), v(7)]}));
            }
        }
    }
    if let Ok(t) = Csv::read(&dir.join("steps.csv")) {
        let c = at(&t, &["run", "frame", "violation", "kinetic_energy", "potential_energy", "iterations"])
            .map_err(|e| format!("steps.csv: {e}"))?;
        for row in &t.rows {
            if let Some(r) = runs.get_mut(&run_of(row, c[0])) {
                let v = |k: usize| num(&row[c[k]]);
                r.stats.insert(row[c[1]].parse().unwrap_or(0), [v(2), v(3) + v(4), v(5)]);
            }
        }
    }
    Ok(Some(runs))
}

/// The scene a run simulated, as its label plus its `scene.*` sweep values: runs with the same
/// group are the same scene under different solvers.
fn scene_group(entry: Option<&serde_json::Value>) -> String {
    let Some(e) = entry else { return String::new() };
    let mut group = e["scene"].as_str().unwrap_or_default().to_string();
    for kv in e["sweep"].as_array().into_iter().flatten() {
        let (k, v) = (kv[0].as_str().unwrap_or_default(), &kv[1]);
        if let Some(key) = k.strip_prefix("scene.") {
            let v = v.as_str().map_or_else(|| v.to_string(), String::from);
            group += &format!(" · {key}={v}");
        }
    }
    group
}

/// The replay's data: every `step`-th recorded frame of each run (and its last).
fn replay(runs: &BTreeMap<usize, Recorded>, meta: &Meta, budget: f64) -> serde_json::Value {
    let frame_bytes = |r: &Recorded| -> f64 {
        let p = r.x.values().map(Vec::len).max().unwrap_or(0);
        let b = r.bodies.values().next().map_or(0, Vec::len);
        let c = r.contacts.values().map(Vec::len).sum::<usize>() as f64 / r.x.len().max(1) as f64;
        (p * 3 + b * 7) as f64 * 4.0 * 4.0 / 3.0 + c * 6.0 * 4.0 * 4.0 / 3.0 + 16.0
    };
    let full: f64 = runs.values().map(|r| frame_bytes(r) * r.x.len() as f64).sum();
    let step = (full / budget).ceil().max(1.0) as usize;
    let keep = |frames: &BTreeSet<u64>| -> Vec<u64> {
        let all: Vec<u64> = frames.iter().copied().collect();
        let mut kept: Vec<u64> = all.iter().copied().step_by(step).collect();
        if let Some(&last) = all.last() {
            if kept.last() != Some(&last) {
                kept.push(last);
            }
        }
        kept
    };
    let entry = |run: usize| meta.runs.iter().find(|e| e["run"].as_u64() == Some(run as u64));
    let mut timeline = BTreeSet::new();
    let mut panels = Vec::new();
    for (&run, r) in runs {
        let frames = keep(&r.x.keys().copied().collect());
        timeline.extend(frames.iter().copied());
        let e = entry(run);
        let text = |k: &str| e.and_then(|e| e[k].as_str()).unwrap_or_default().to_string();
        let p = r.x.values().map(Vec::len).max().unwrap_or(0);
        let mut x = Vec::with_capacity(frames.len() * p * 3);
        let mut bodies = Vec::new();
        for f in &frames {
            let pts = &r.x[f];
            x.extend((0..p).flat_map(|i| pts.get(i).copied().unwrap_or([f64::NAN; 3])));
            if let Some(b) = r.bodies.get(f) {
                bodies.extend(b.iter().take(r.shapes.len()).flatten());
            }
        }
        let contacts: Option<Vec<String>> = (!r.contacts.is_empty())
            .then(|| frames.iter().map(|f| f32s(&r.contacts.get(f).map(|c| c.concat()).unwrap_or_default())).collect());
        let sticks: Vec<u32> = r.sticks.iter().flat_map(|s| [s.0, s.1]).collect();
        let rest: Vec<f64> = r.sticks.iter().map(|s| s.2).collect();
        let sense: Vec<u32> = r.sticks.iter().map(|s| s.3).collect();
        // Each shown frame's numbers: the latest steps.csv row at or before it.
        let stat = |f: &u64, k: usize| -> serde_json::Value {
            r.stats.range(..=*f).next_back().map_or(serde_json::Value::Null, |(_, s)| json!(s[k] as f32))
        };
        let stats = json!({
            "violation": frames.iter().map(|f| stat(f, 0)).collect::<Vec<_>>(),
            "energy": frames.iter().map(|f| stat(f, 1)).collect::<Vec<_>>(),
            "iterations": frames.iter().map(|f| stat(f, 2)).collect::<Vec<_>>(),
        });
        let shapes = if bodies.len() == frames.len() * r.shapes.len() * 7 { r.shapes.clone() } else { Vec::new() };
        let bodies = if shapes.is_empty() { Vec::new() } else { bodies };
        panels.push(json!({
            "run": run,
            "title": format!("{} · {}", text("label"), text("scene")),
            "label": text("label"),
            // Runs of one scene (its label and its scene.* sweep values) can be overlaid.
            "group": scene_group(e),
            "dt": e.and_then(|e| e["dt"].as_f64()).unwrap_or(0.0),
            "particles": p,
            "sticks": u32s(&sticks),
            "rest": f32s(&rest),
            "sense": u32s(&sense),
            "colliders": r.colliders,
            "stats": stats,
            "shapes": shapes,
            "frames": frames,
            "x": f32s(&x),
            "bodies": f32s(&bodies),
            "contacts": contacts,
        }));
    }
    let recorded: usize = runs.values().map(|r| r.x.len()).max().unwrap_or(0);
    let note = if step > 1 {
        format!(
            "Frames decimated to every {step}th recorded frame (and the last) to keep the replay under the {:.0} MB \
             budget; {recorded} frames were recorded per run.",
            budget / 1e6
        )
    } else {
        format!("Every recorded frame is shown ({recorded} per run).")
    };
    json!({ "saturation": 0.05, "frames": timeline, "note": note, "panels": panels })
}

/// The leading comment block of the experiment file, as paragraphs.
fn description(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| {
            let l = l.strip_prefix('#').unwrap_or(l);
            l.strip_prefix(' ').unwrap_or(l).trim_end()
        })
        .collect();
    lines.join("\n").trim().to_string()
}

/// Writes `out/report.html` for the results folder `dir`; returns its size in bytes.
pub fn write(dir: &Path, out: &Path, budget_mb: f64) -> Result<usize, CliError> {
    let here = dir.display();
    let bad = |m: String| CliError::Input(format!("report: {m}"));
    let single = crate::single::is_single(dir);
    if !single
        && (!dir.join("meta.json").exists() || !dir.join("experiment.toml").exists() || !dir.join("runs.csv").exists())
    {
        return Err(bad(format!(
            "{here} is not a results folder (it needs meta.json, experiment.toml and runs.csv, as `solverlab run` \
             writes them, or meta.json and steps.csv, as `solverlab simulate` writes them)"
        )));
    }
    if !dir.join("positions.csv").exists() {
        return Err(bad(format!("{here} has no positions.csv; re-run with positions recorded")));
    }
    let meta = Meta::read(dir).map_err(bad)?;
    let replay = match recorded(dir).map_err(bad)? {
        Some(r) => replay(&r, &meta, budget_mb * 1e6),
        None => serde_json::Value::Null,
    };

    let mut figures = Vec::new();
    let mut figure_html = String::new();
    let mut add_svg = |name: &str, svg_name: &str, caption: String| {
        let Ok(svg) = std::fs::read_to_string(dir.join(svg_name)) else { return };
        let svg = svg.find("<svg").map_or("", |k| &svg[k..]);
        let _ = writeln!(
            figure_html,
            "<figure class=\"figure\" data-figure=\"{}\"><figcaption>{}</figcaption><div class=\"svg\">{svg}</div></figure>",
            esc(name),
            esc(&caption)
        );
    };
    let (text, runs) = if single {
        let o = crate::single::overview(dir).map_err(bad)?;
        let svg_name = format!("{}.svg", crate::single::OVERVIEW);
        add_svg(crate::single::OVERVIEW, &svg_name, format!("{} ({svg_name})", o.title));
        let run = meta.runs.first().cloned().unwrap_or_default();
        let settings = serde_json::to_string_pretty(&json!({ "solver": run["solver"], "scene": run["scene_file"] }))
            .expect("serialises");
        let text = format!(
            "# One `solverlab simulate` run: {}, {} frames of {:.4} s, {} per frame.\n\n{settings}\n",
            o.title,
            o.frames,
            run["dt"].as_f64().unwrap_or(0.0),
            match run["substeps"].as_u64().unwrap_or(1) {
                1 => "one step".to_string(),
                n => format!("{n} substeps"),
            }
        );
        let hash = run["final_state_hash"].as_str().unwrap_or_default().to_string();
        let runs = Csv {
            columns: ["run", "scene · solver", "frames", "unconverged", "peak violation (m)", "status", "state hash"]
                .map(String::from)
                .to_vec(),
            rows: vec![vec![
                "0".into(),
                o.title.clone(),
                o.frames.to_string(),
                o.unconverged.to_string(),
                format!("{:.3e}", o.peak_violation),
                o.status.clone(),
                hash,
            ]],
        };
        (text, runs)
    } else {
        let (file, text) = ExperimentFile::read(&dir.join("experiment.toml"))?;
        for spec in &file.figures {
            let series = crate::figures::series_runs(spec, dir).unwrap_or_default();
            figures.push(json!({
                "id": spec.name,
                "series": series.iter().map(|s| json!({
                    "name": s.name,
                    "colour": format!("#{:02x}{:02x}{:02x}", s.colour.0, s.colour.1, s.colour.2),
                    "runs": s.runs,
                })).collect::<Vec<_>>(),
            }));
            for svg_name in crate::figures::svg_files(spec) {
                let caption =
                    if spec.title.is_empty() { svg_name.clone() } else { format!("{} ({svg_name})", spec.title) };
                add_svg(&spec.name, &svg_name, caption);
            }
        }
        (text, Csv::read(&dir.join("runs.csv")).map_err(bad)?)
    };
    let run_list: Vec<serde_json::Value> =
        meta.runs.iter().map(|e| json!({"run": e["run"], "label": e["label"], "scene": e["scene"]})).collect();
    let has_replay = !replay.is_null();
    let data = json!({ "figures": figures, "runs": run_list, "replay": replay });
    // Inline in a <script>: `<`, `>` and `&` only occur inside JSON strings, where their \u
    // escapes read the same, so no label can close the script or open a comment.
    let data = serde_json::to_string(&data)
        .expect("serialises")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");

    let mut table = String::from("<table id=\"runs-table\"><thead><tr>");
    for c in &runs.columns {
        let _ = match unit(c) {
            Some(u) => write!(table, "<th>{} ({u})</th>", esc(c)),
            None => write!(table, "<th>{}</th>", esc(c)),
        };
    }
    table += "</tr></thead><tbody>\n";
    for row in &runs.rows {
        let _ = write!(table, "<tr data-run=\"{}\">", esc(&row[0]));
        for v in row {
            // Numbers at four significant digits, the full value kept for sorting and as a tooltip.
            let _ = match v.parse::<f64>() {
                Ok(x) if v.contains(['.', 'e', 'E']) => {
                    write!(table, "<td data-value=\"{}\" title=\"{}\">{}</td>", esc(v), esc(v), short(x))
                }
                _ => write!(table, "<td>{}</td>", esc(v)),
            };
        }
        table += "</tr>\n";
    }
    table += "</tbody></table>";

    let mut provenance = String::from("<table class=\"meta\">");
    for (k, v) in [
        ("experiment", meta.experiment.as_str()),
        ("solverlab", meta.solverlab_version.as_str()),
        ("commit", meta.commit.as_str()),
        ("rustc", meta.rustc.as_str()),
        ("cpu", meta.cpu.as_str()),
        ("date", meta.date.as_str()),
    ] {
        let _ = write!(provenance, "<tr><th>{k}</th><td>{}</td></tr>", esc(v));
    }
    let _ = write!(provenance, "<tr><th>runs</th><td>{}</td></tr></table>", meta.runs.len());
    let meta_text = std::fs::read_to_string(dir.join("meta.json")).unwrap_or_default();
    let replay_html = if has_replay {
        ""
    } else {
        "<p class=\"note\">No positions were recorded, so there is no replay. Add <code>positions_every = N</code> \
         (or a snapshot figure) to the experiment file and run it again.</p>"
    };
    let desc = description(&text);
    let desc_html: String = desc.split("\n\n").map(|p| format!("<p class=\"description\">{}</p>", esc(p))).collect();
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>solverlab report · {name}</title>\n<style>\n{VIEWER_CSS}\n</style></head>\n<body>\n\
         <header><h1>{name}</h1>{desc_html}</header>\n\
         <section id=\"provenance\"><h2>Provenance</h2>\n{provenance}\n\
         <details><summary>Resolved settings ({settings_file})</summary><pre>{exp}</pre></details>\n\
         <details><summary>meta.json</summary><pre>{meta}</pre></details>\n</section>\n\
         <section id=\"replay\"><h2>Replay</h2>\n{replay_html}</section>\n\
         <section id=\"figures\"><h2>Figures</h2>\n{figure_html}</section>\n\
         <section id=\"runs\"><h2>Runs</h2>\n{table}\n</section>\n\
         <script type=\"application/json\" id=\"solverlab-data\">{data}</script>\n\
         <script>\n{VIEWER_JS}\n</script>\n</body></html>\n",
        name = esc(&meta.experiment),
        exp = esc(&text),
        settings_file = if single { "meta.json" } else { "experiment.toml" },
        meta = esc(&meta_text),
    );
    std::fs::create_dir_all(out).map_err(|e| CliError::Io(format!("{}: {e}", out.display())))?;
    crate::output::write_atomic(&out.join("report.html"), &html)
        .map_err(|e| CliError::Io(format!("{}: {e}", out.display())))?;
    Ok(html.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoder agrees with the standard's test vectors (RFC 4648, section 10).
    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected);
        }
    }

    #[test]
    fn table_numbers_have_four_significant_digits() {
        assert_eq!(short(0.016666666666666666), "0.01667");
        assert_eq!(short(1234.5678), "1235");
        assert_eq!(short(2.5), "2.5");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(6.518063152619047e-6), "6.518e-6");
        assert_eq!(short(-3.25e7), "-3.250e7");
    }

    #[test]
    fn the_description_is_the_leading_comment_block() {
        assert_eq!(description("# A title\n#\n# More text.\nname = \"x\"\n# not this"), "A title\n\nMore text.");
    }
}
