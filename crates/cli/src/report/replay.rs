//! The replay's data, read from the results tables one row at a time.
//!
//! No table is held whole: [`Rows`] lends one row at a time, a first pass ([`survey`]) counts
//! each run's recorded frames, particles, rigid bodies and contact points, and a second pass
//! ([`collect`]) keeps only the frames the page has room for: every `step`-th recorded frame of
//! each run and its last. Memory grows with the scene (a frame's positions, the sticks, the
//! shapes and colliders) and with the kept frames, which the page's size budget bounds, not with
//! frames × particles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::progress::Progress;
use crate::results::Meta;
use crate::tables::TableName;

/// Rows between two looks at the interrupt flag.
const CHECK_EVERY: u64 = 65_536;

/// A CSV table read one row at a time into one reused record: a streaming iterator whose
/// [`Rows::next`] lends the current row, so that no table is ever held whole.
pub struct Rows<'p> {
    path: PathBuf,
    reader: csv::Reader<std::fs::File>,
    record: csv::StringRecord,
    columns: Vec<String>,
    read: u64,
    /// Megabytes reported to `progress` so far.
    reported: u64,
    progress: &'p Progress,
}

impl<'p> Rows<'p> {
    /// Opens `path`; `None` when it does not exist.
    pub fn open(path: &Path, progress: &'p Progress) -> Result<Option<Rows<'p>>, String> {
        if !path.exists() {
            return Ok(None);
        }
        let bad = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let mut reader = csv::Reader::from_path(path).map_err(|e| bad(&e))?;
        let columns = reader.headers().map_err(|e| bad(&e))?.iter().map(String::from).collect();
        Ok(Some(Rows {
            path: path.to_path_buf(),
            reader,
            record: csv::StringRecord::new(),
            columns,
            read: 0,
            reported: 0,
            progress,
        }))
    }

    /// The positions of columns `names`; a missing `run` column (a `simulate` folder's tables
    /// hold one run, run 0) is `usize::MAX`, which [`run_of`] reads as run 0.
    pub fn columns(&self, names: &[&str]) -> Result<Vec<usize>, String> {
        let name = self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        names
            .iter()
            .map(|&n| match self.columns.iter().position(|c| c == n) {
                Some(k) => Ok(k),
                None if n == "run" => Ok(usize::MAX),
                None => Err(format!("{name}: no column `{n}`")),
            })
            .collect()
    }

    /// The position of column `name`, if the table has it.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// The next row, or `None` at the end. Stops with an error on Ctrl-C.
    #[allow(clippy::should_implement_trait)] // a lending iterator: the row borrows the reader
    pub fn next(&mut self) -> Result<Option<&csv::StringRecord>, String> {
        self.read += 1;
        if self.read.is_multiple_of(CHECK_EVERY) {
            if crate::interrupt::interrupted() {
                return Err(format!("{}: interrupted while reading", self.path.display()));
            }
            let mb = self.reader.position().byte() / 1_000_000;
            while self.reported < mb {
                self.reported += 1;
                self.progress.inc();
            }
        }
        match self.reader.read_record(&mut self.record) {
            Ok(true) => Ok(Some(&self.record)),
            Ok(false) => Ok(None),
            Err(e) => Err(format!("{}: {e}", self.path.display())),
        }
    }
}

/// The run of a row: its `run` column, or run 0 for the tables of a `simulate` folder.
fn run_of(row: &csv::StringRecord, k: usize) -> usize {
    match k {
        usize::MAX => 0,
        k => row.get(k).and_then(|v| v.parse().ok()).unwrap_or(usize::MAX),
    }
}

fn int(row: &csv::StringRecord, k: usize) -> u64 {
    row.get(k).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn num(row: &csv::StringRecord, k: usize) -> f64 {
    row.get(k).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

/// What one run recorded, counted without keeping it.
#[derive(Default, Clone)]
pub struct RunSurvey {
    /// Recorded frames (of positions.csv, or of bodies.csv for a scene of rigid bodies only).
    pub frames: u64,
    /// Particles per frame.
    pub particles: usize,
    /// Rigid bodies per frame.
    pub bodies: usize,
    /// Contact points over all frames.
    pub contacts: u64,
    /// Whether the frames are counted from bodies.csv (no particle positions).
    from_bodies: bool,
    /// `(a, b, rest, sense)` per stick: sense 0 for an equality stick, 1 for `at_least`, 2 for
    /// `at_most`.
    sticks: Vec<(u32, u32, f64, u32)>,
    shapes: Vec<serde_json::Value>,
    /// The first body index that is a rigid body (particle bodies come first in bodies.csv).
    first_rigid: Option<usize>,
    /// The world colliders, `{kind, a, b}` as in colliders.csv.
    colliders: Vec<serde_json::Value>,
}

/// Every run's [`RunSurvey`], in run order.
pub struct Survey {
    /// By run index.
    pub runs: BTreeMap<usize, RunSurvey>,
}

/// Counts a frame change in a table sorted by frame within each run: `(frames seen, last frame)`.
fn count_frame(state: &mut (u64, Option<u64>), frame: u64) -> bool {
    if state.1 == Some(frame) {
        return false;
    }
    state.0 += 1;
    state.1 = Some(frame);
    true
}

/// The first pass: each run's frame, particle, body and contact counts, and its scene tables
/// (sticks, shapes, colliders: the size of the scene). `None` when no positions or rigid bodies
/// were recorded.
pub fn survey(dir: &Path, progress: &Progress) -> Result<Option<Survey>, String> {
    let mut runs: BTreeMap<usize, RunSurvey> = BTreeMap::new();
    let mut seen: BTreeMap<usize, (u64, Option<u64>)> = BTreeMap::new();
    if let Some(mut t) = Rows::open(&dir.join(TableName::Positions.file()), progress)? {
        let c = t.columns(&["run", "frame", "particle"])?;
        while let Some(row) = t.next()? {
            let run = run_of(row, c[0]);
            let r = runs.entry(run).or_default();
            if count_frame(seen.entry(run).or_default(), int(row, c[1])) {
                r.frames += 1;
            }
            r.particles = r.particles.max(int(row, c[2]) as usize + 1);
        }
    }
    if let Some(mut t) = Rows::open(&dir.join(TableName::Shapes.file()), progress)? {
        let c = t.columns(&["run", "body", "shape", "hx", "hy", "hz", "radius", "half_height"])?;
        while let Some(row) = t.next()? {
            let r = runs.entry(run_of(row, c[0])).or_default();
            r.first_rigid.get_or_insert(int(row, c[1]) as usize);
            let v = |k: usize| num(row, c[k]);
            r.shapes.push(match row.get(c[2]).unwrap_or_default() {
                "box" => json!({"kind": "box", "half": [v(3), v(4), v(5)]}),
                "sphere" => json!({"kind": "sphere", "radius": v(6)}),
                _ => json!({"kind": "capsule", "radius": v(6), "half_height": v(7)}),
            });
        }
    }
    // Rigid bodies: the rows of bodies.csv from the first rigid body on (particle bodies are
    // drawn by their particles and sticks already).
    let mut body_frames: BTreeMap<usize, (u64, Option<u64>)> = BTreeMap::new();
    let mut any_body = false;
    if let Some(mut t) = Rows::open(&dir.join(TableName::Bodies.file()), progress)? {
        let c = t.columns(&["run", "frame", "body"])?;
        while let Some(row) = t.next()? {
            any_body = true;
            let Some(r) = runs.get_mut(&run_of(row, c[0])) else { continue };
            let Some(first) = r.first_rigid.filter(|&f| int(row, c[2]) as usize >= f) else { continue };
            let state = body_frames.entry(run_of(row, c[0])).or_default();
            if count_frame(state, int(row, c[1])) && r.frames == 0 {
                r.from_bodies = true;
            }
            if state.0 == 1 {
                r.bodies = r.bodies.max(int(row, c[2]) as usize + 1 - first);
            }
        }
    }
    for (run, r) in runs.iter_mut().filter(|(_, r)| r.from_bodies) {
        r.frames = body_frames.get(run).map_or(0, |s| s.0);
    }
    if runs.values().all(|r| r.frames == 0) && !any_body {
        return Ok(None);
    }
    if let Some(mut t) = Rows::open(&dir.join(TableName::Contacts.file()), progress)? {
        let c = t.columns(&["run"])?;
        while let Some(row) = t.next()? {
            if let Some(r) = runs.get_mut(&run_of(row, c[0])) {
                r.contacts += 1;
            }
        }
    }
    if let Some(mut t) = Rows::open(&dir.join(TableName::Sticks.file()), progress)? {
        let c = t.columns(&["run", "a", "b", "rest"])?;
        // Folders written before the `sense` column have equality sticks only.
        let sense = t.column("sense");
        while let Some(row) = t.next()? {
            if let Some(r) = runs.get_mut(&run_of(row, c[0])) {
                let kind = match sense.and_then(|k| row.get(k)) {
                    Some("at_least") => 1,
                    Some("at_most") => 2,
                    _ => 0,
                };
                r.sticks.push((int(row, c[1]) as u32, int(row, c[2]) as u32, num(row, c[3]), kind));
            }
        }
    }
    if let Some(mut t) = Rows::open(&dir.join(TableName::Colliders.file()), progress)? {
        let c = t.columns(&["run", "kind", "ax", "ay", "az", "bx", "by", "bz"])?;
        while let Some(row) = t.next()? {
            if let Some(r) = runs.get_mut(&run_of(row, c[0])) {
                let v = |k: usize| num(row, c[k]);
                let kind = row.get(c[1]).unwrap_or_default().to_string();
                r.colliders.push(json!({"kind": kind, "a": [v(2), v(3), v(4)], "b": [v(5), v(6), v(7)]}));
            }
        }
    }
    Ok(Some(Survey { runs }))
}

impl Survey {
    /// The most frames any run recorded.
    pub fn most_frames(&self) -> u64 {
        self.runs.values().map(|r| r.frames).max().unwrap_or(0)
    }

    /// Bytes of the replay data for every recorded frame, roughly: positions, bodies and
    /// contacts as base64 of `f32`, and each frame's numbers.
    pub fn full_bytes(&self) -> f64 {
        self.runs
            .values()
            .map(|r| {
                let values = (r.particles * 3 + r.bodies * 7) as f64 * r.frames as f64 + r.contacts as f64 * 6.0;
                values * 16.0 / 3.0 + r.frames as f64 * 60.0
            })
            .sum()
    }
}

/// Whether the `k`-th (0-based) of `n` recorded frames is kept at decimation `step`: every
/// `step`-th from the first, and the last.
fn is_kept(k: u64, n: u64, step: u64) -> bool {
    k.is_multiple_of(step) || k + 1 == n
}

/// One run's kept frames and their data.
#[derive(Default)]
struct Kept {
    /// Kept frames, ascending.
    frames: Vec<u64>,
    set: BTreeSet<u64>,
    /// Per kept frame: 3 coordinates per particle (NaN where a particle has no row).
    x: BTreeMap<u64, Vec<f32>>,
    /// Per kept frame: `(cx, cy, cz, qw, qx, qy, qz)` per rigid body.
    bodies: BTreeMap<u64, Vec<f32>>,
    /// Per kept frame: `(x, y, z, nx, ny, nz)` per contact point.
    contacts: BTreeMap<u64, Vec<f32>>,
    /// Per kept frame: violation (m), energy (J), iterations of the latest steps.csv row at or
    /// before it.
    stats: Vec<Option<[f32; 3]>>,
}

impl Kept {
    fn keep(&mut self, frame: u64, particles: usize) {
        self.frames.push(frame);
        self.set.insert(frame);
        self.x.insert(frame, vec![f32::NAN; 3 * particles]);
    }
}

fn base64_f32(values: &[f32]) -> String {
    super::base64(&values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>())
}

/// The second pass: the replay's data with every `step`-th recorded frame of each run (and its
/// last), as the viewer reads it.
pub fn collect(
    dir: &Path,
    survey: &Survey,
    step: u64,
    meta: &Meta,
    budget_mb: f64,
    progress: &Progress,
) -> Result<serde_json::Value, String> {
    let step = step.max(1);
    let mut kept: BTreeMap<usize, Kept> = survey.runs.keys().map(|&r| (r, Kept::default())).collect();
    let mut ordinal: BTreeMap<usize, (u64, Option<u64>)> = BTreeMap::new();
    if let Some(mut t) = Rows::open(&dir.join(TableName::Positions.file()), progress)? {
        let c = t.columns(&["run", "frame", "particle", "x", "y", "z"])?;
        while let Some(row) = t.next()? {
            let run = run_of(row, c[0]);
            let (Some(s), Some(k)) = (survey.runs.get(&run), kept.get_mut(&run)) else { continue };
            let frame = int(row, c[1]);
            let state = ordinal.entry(run).or_default();
            if count_frame(state, frame) && is_kept(state.0 - 1, s.frames, step) {
                k.keep(frame, s.particles);
            }
            if let Some(x) = k.x.get_mut(&frame) {
                let p = int(row, c[2]) as usize;
                if 3 * p + 2 < x.len() {
                    x[3 * p..3 * p + 3]
                        .copy_from_slice(&[num(row, c[3]), num(row, c[4]), num(row, c[5])].map(|v| v as f32));
                }
            }
        }
    }
    if let Some(mut t) = Rows::open(&dir.join(TableName::Bodies.file()), progress)? {
        let c = t.columns(&["run", "frame", "body", "cx", "cy", "cz", "qw", "qx", "qy", "qz"])?;
        let mut body_ordinal: BTreeMap<usize, (u64, Option<u64>)> = BTreeMap::new();
        while let Some(row) = t.next()? {
            let run = run_of(row, c[0]);
            let (Some(s), Some(k)) = (survey.runs.get(&run), kept.get_mut(&run)) else { continue };
            if s.first_rigid.is_none_or(|f| (int(row, c[2]) as usize) < f) {
                continue;
            }
            let frame = int(row, c[1]);
            let state = body_ordinal.entry(run).or_default();
            if count_frame(state, frame) && s.from_bodies && is_kept(state.0 - 1, s.frames, step) {
                k.keep(frame, s.particles);
            }
            if k.set.contains(&frame) {
                let v: [f32; 7] = std::array::from_fn(|i| num(row, c[3 + i]) as f32);
                k.bodies.entry(frame).or_default().extend(v);
            }
        }
    }
    if let Some(mut t) = Rows::open(&dir.join(TableName::Contacts.file()), progress)? {
        let c = t.columns(&["run", "frame", "x", "y", "z", "nx", "ny", "nz"])?;
        while let Some(row) = t.next()? {
            let Some(k) = kept.get_mut(&run_of(row, c[0])) else { continue };
            let frame = int(row, c[1]);
            if k.set.contains(&frame) {
                let v: [f32; 6] = std::array::from_fn(|i| num(row, c[2 + i]) as f32);
                k.contacts.entry(frame).or_default().extend(v);
            }
        }
    }
    // Each kept frame's numbers: the latest steps.csv row at or before it.
    for k in kept.values_mut() {
        k.stats = vec![None; k.frames.len()];
    }
    let mut next: BTreeMap<usize, (usize, Option<[f32; 3]>)> = BTreeMap::new();
    if let Some(mut t) = Rows::open(&dir.join(TableName::Steps.file()), progress)? {
        let c = t.columns(&["run", "frame", "violation", "kinetic_energy", "potential_energy", "iterations"])?;
        while let Some(row) = t.next()? {
            let run = run_of(row, c[0]);
            let Some(k) = kept.get_mut(&run) else { continue };
            let (at, last) = next.entry(run).or_default();
            let frame = int(row, c[1]);
            while *at < k.frames.len() && k.frames[*at] < frame {
                k.stats[*at] = *last;
                *at += 1;
            }
            let v = |i: usize| num(row, c[i]);
            *last = Some([v(2) as f32, (v(3) + v(4)) as f32, v(5) as f32]);
        }
    }
    for (run, k) in kept.iter_mut() {
        let (at, last) = next.get(run).copied().unwrap_or_default();
        for s in k.stats.iter_mut().skip(at) {
            *s = last;
        }
    }

    let entry = |run: usize| meta.runs.iter().find(|e| e["run"].as_u64() == Some(run as u64));
    let mut timeline = BTreeSet::new();
    let mut panels = Vec::new();
    for (&run, k) in &kept {
        let s = &survey.runs[&run];
        timeline.extend(k.frames.iter().copied());
        let e = entry(run);
        let text = |key: &str| e.and_then(|e| e[key].as_str()).unwrap_or_default().to_string();
        let x: Vec<f32> = k.frames.iter().flat_map(|f| k.x[f].iter().copied()).collect();
        let bodies: Vec<f32> = k.frames.iter().flat_map(|f| k.bodies.get(f).into_iter().flatten().copied()).collect();
        let contacts: Option<Vec<String>> = (s.contacts > 0)
            .then(|| k.frames.iter().map(|f| base64_f32(k.contacts.get(f).map_or(&[][..], Vec::as_slice))).collect());
        let sticks: Vec<u32> = s.sticks.iter().flat_map(|t| [t.0, t.1]).collect();
        let rest: Vec<f32> = s.sticks.iter().map(|t| t.2 as f32).collect();
        let sense: Vec<u32> = s.sticks.iter().map(|t| t.3).collect();
        let stat = |i: usize| -> Vec<serde_json::Value> {
            k.stats.iter().map(|v| v.map_or(serde_json::Value::Null, |v| json!(v[i]))).collect()
        };
        let stats = json!({ "violation": stat(0), "energy": stat(1), "iterations": stat(2) });
        let whole = bodies.len() == k.frames.len() * s.shapes.len() * 7;
        let (shapes, bodies) = if whole { (s.shapes.clone(), bodies) } else { (Vec::new(), Vec::new()) };
        panels.push(json!({
            "run": run,
            "title": format!("{} · {}", text("label"), text("scene")),
            "label": text("label"),
            // Runs of one scene (its label and its scene.* sweep values) can be overlaid.
            "group": super::scene_group(e),
            "dt": e.and_then(|e| e["dt"].as_f64()).unwrap_or(0.0),
            "particles": s.particles,
            "sticks": super::base64(&sticks.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()),
            "rest": base64_f32(&rest),
            "sense": super::base64(&sense.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()),
            "colliders": s.colliders,
            "stats": stats,
            "shapes": shapes,
            "frames": k.frames,
            "x": base64_f32(&x),
            "bodies": base64_f32(&bodies),
            "contacts": contacts,
        }));
    }
    let recorded = survey.most_frames();
    let note = if step > 1 {
        format!(
            "Frames decimated to every {step}th recorded frame (and the last) to keep the page under its {budget_mb} MB \
             budget (--max-mb); {recorded} frames were recorded per run."
        )
    } else {
        format!("Every recorded frame is shown ({recorded} per run).")
    };
    Ok(json!({ "saturation": 0.05, "frames": timeline, "note": note, "panels": panels }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_every_step_th_frame_and_the_last() {
        let keep = |n: u64, step: u64| (0..n).filter(|&k| is_kept(k, n, step)).collect::<Vec<_>>();
        assert_eq!(keep(10, 1), (0..10).collect::<Vec<_>>());
        assert_eq!(keep(10, 4), vec![0, 4, 8, 9]);
        assert_eq!(keep(10, 100), vec![0, 9]);
        assert_eq!(keep(1, 5), vec![0]);
    }
}
