//! Writing results: each run's tables as it runs ([`RunWriter`], the runner's [`Sink`]), its
//! summary row and `meta.json` entry, and the metadata of a results folder ([`Meta`]).
//!
//! `solverlab simulate` writes one run's tables straight into its folder, without the run
//! columns. `solverlab run` writes each run into a part folder of its own (`DIR/.partial/run-N/`,
//! with `run.json` written last, so a part is finished only once every file of it is complete);
//! [`crate::assemble`] then concatenates the parts, in run order, into the experiment's tables.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use solverlab_core::rigid::{ContactForce, RigidState};
use solverlab_core::sim::FrameReport;
use solverlab_core::solver::IterationReport;
use solverlab_core::{Scene, Vec3};

use crate::output::{num, write_atomic, CsvOut};
use crate::runner::{RunSummary, Sink};
use crate::spec::{Experiment, RunConfig};
use crate::tables::*;

/// Why frames ended above the solver's tolerance, as the solver explained it, and how many.
#[derive(Clone, Debug, Serialize)]
pub struct Note {
    /// The solver's explanation.
    pub note: &'static str,
    /// Frames that ended unconverged for this reason.
    pub frames: u64,
}

/// The unconverged frames of a run, and the solver's notes on them.
pub fn convergence_notes<'r>(reports: impl IntoIterator<Item = &'r FrameReport>) -> (u64, Vec<Note>) {
    let mut unconverged = 0;
    let mut notes: Vec<Note> = Vec::new();
    for r in reports.into_iter().filter(|r| !r.converged) {
        unconverged += 1;
        if let Some(text) = r.note {
            match notes.iter_mut().find(|n| n.note == text) {
                Some(n) => n.frames += 1,
                None => notes.push(Note { note: text, frames: 1 }),
            }
        }
    }
    (unconverged, notes)
}

/// The values of the run columns of run `r`: index, scene, label, family, sweep values.
pub fn run_fields(r: &RunConfig) -> Vec<String> {
    let mut v = vec![r.index.to_string(), r.scene_label.clone(), r.label.clone(), r.solver.kind().to_string()];
    v.extend(r.params.iter().map(|(_, value)| value.clone()));
    v
}

/// The header of an experiment table: the run columns, the sweep columns, then `rest`.
pub fn header(exp: &Experiment, rest: &[&str]) -> Vec<String> {
    let mut h: Vec<String> = RUN_COLUMNS.iter().map(|s| s.to_string()).collect();
    h.extend(crate::spec::sweep_columns(&exp.file));
    h.extend(rest.iter().map(|s| s.to_string()));
    h
}

/// Writes one run's tables into one folder as the run goes; every file is temporary until
/// [`RunWriter::finish`] (dropping the writer leaves nothing behind).
pub struct RunWriter<'a> {
    dir: PathBuf,
    scene: &'a Scene,
    /// Run columns: names and this run's values (empty for `simulate`).
    prefix: (Vec<String>, Vec<String>),
    steps: CsvOut,
    trace: CsvOut,
    positions: CsvOut,
    forces: Option<CsvOut>,
    bodies: Option<CsvOut>,
    contacts: Option<CsvOut>,
}

impl<'a> RunWriter<'a> {
    /// Starts the tables of a run of `scene` in `dir` (created if missing). `prefix` gives the
    /// run columns' names and values; `forces` creates forces.csv even if no frame is recorded.
    pub fn create(
        dir: &Path,
        scene: &'a Scene,
        prefix: (Vec<String>, Vec<String>),
        forces: bool,
    ) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let table = |name: TableName| {
            let cols: Vec<&str> = prefix.0.iter().map(String::as_str).chain(name.columns().iter().copied()).collect();
            CsvOut::create(&dir.join(name.file()), &cols)
        };
        Ok(Self {
            steps: table(TableName::Steps)?,
            trace: table(TableName::Trace)?,
            positions: table(TableName::Positions)?,
            forces: if forces { Some(table(TableName::Forces)?) } else { None },
            bodies: None,
            contacts: None,
            dir: dir.to_path_buf(),
            scene,
            prefix,
        })
    }

    /// Starts table `name` in the run's folder: the run columns, then the table's own.
    fn table(&self, name: TableName) -> std::io::Result<CsvOut> {
        let cols: Vec<&str> = self.prefix.0.iter().map(String::as_str).chain(name.columns().iter().copied()).collect();
        CsvOut::create(&self.dir.join(name.file()), &cols)
    }

    fn row(prefix: &[String], rest: impl IntoIterator<Item = String>) -> Vec<String> {
        prefix.iter().cloned().chain(rest).collect()
    }

    /// Commits the streamed tables (steps, trace, positions, forces, bodies, contacts), with
    /// shapes.csv when bodies were recorded.
    fn commit_streams(self) -> std::io::Result<()> {
        if self.bodies.is_some() && self.scene.has_rigid() {
            let mut shapes = self.table(TableName::Shapes)?;
            for row in shape_rows(self.scene) {
                shapes.row(Self::row(&self.prefix.1, row))?;
            }
            shapes.commit()?;
        }
        for t in [self.steps, self.trace, self.positions]
            .into_iter()
            .chain(self.forces)
            .chain(self.bodies)
            .chain(self.contacts)
        {
            t.commit()?;
        }
        Ok(())
    }

    /// Finishes an experiment run's part: its runs.csv row, convergence.csv, frozen_trace.csv
    /// and sticks.csv, every table committed, then `run.json` (its meta.json entry) last.
    pub fn finish_part(self, run: &RunConfig, warmup: u64, s: &RunSummary) -> std::io::Result<()> {
        let p = self.prefix.1.clone();
        let mut runs = self.table(TableName::Runs)?;
        runs.row(Self::row(&p, runs_fields(run, warmup, s)))?;
        let mut conv = self.table(TableName::Convergence)?;
        for c in &s.convergence {
            let f = [c.cap.to_string(), c.iterations.to_string(), num(c.error_rms), num(c.error_max)];
            conv.row(Self::row(&p, f.into_iter().chain([num(c.violation), num(c.seconds)])))?;
        }
        let mut frozen = self.table(TableName::FrozenTrace)?;
        let opt = |x: Option<f64>| x.map(num).unwrap_or_default();
        for r in &s.frozen_trace {
            let f =
                [r.outer.to_string(), r.iteration.to_string(), num(r.residual), opt(r.residual_rms), opt(r.violation)];
            frozen.row(Self::row(&p, f))?;
        }
        let mut sticks = CsvOut::create(&self.dir.join(TableName::Sticks.file()), &STICK_COLUMNS)?;
        let mut colliders = CsvOut::create(&self.dir.join(TableName::Colliders.file()), &COLLIDER_COLUMNS)?;
        if self.positions_recorded() {
            let index = run.index.to_string();
            for row in stick_rows(&run.scene) {
                sticks.row(std::iter::once(index.clone()).chain(row))?;
            }
            for row in collider_rows(&run.scene) {
                colliders.row(std::iter::once(index.clone()).chain(row))?;
            }
        }
        let dir = self.dir.clone();
        self.commit_streams()?;
        for t in [runs, conv, frozen, sticks, colliders] {
            t.commit()?;
        }
        // Each table's row count and content hash, which merge and --resume check.
        let mut entry = run_meta(run, s, None);
        entry["tables"] = crate::assemble::table_records(&dir).map_err(std::io::Error::other)?;
        let meta = serde_json::to_string_pretty(&entry).expect("serialises");
        write_atomic(&dir.join("run.json"), &(meta + "\n"))
    }

    /// Finishes a `simulate` run: commits its tables (with sticks.csv and colliders.csv, without
    /// their `run` column, when positions were recorded) and writes `meta.json`.
    pub fn finish_single(self, run: &RunConfig, s: &RunSummary, scene_meta: SceneMeta) -> std::io::Result<()> {
        let dir = self.dir.clone();
        let mut replay = Vec::new();
        if self.positions_recorded() {
            let mut sticks = CsvOut::create(&dir.join(TableName::Sticks.file()), &STICK_COLUMNS[1..])?;
            for row in stick_rows(&run.scene) {
                sticks.row(row)?;
            }
            let mut colliders = CsvOut::create(&dir.join(TableName::Colliders.file()), &COLLIDER_COLUMNS[1..])?;
            for row in collider_rows(&run.scene) {
                colliders.row(row)?;
            }
            replay = vec![sticks, colliders];
        }
        self.commit_streams()?;
        for t in replay {
            t.commit()?;
        }
        let meta = Meta::new(&run.scene.name, None, 1, vec![run_meta(run, s, Some(scene_meta))]);
        meta.write(&dir)
    }

    /// Whether any frame's state was recorded: particle positions, or bodies (a scene of rigid
    /// bodies only has no particles).
    fn positions_recorded(&self) -> bool {
        self.positions.rows() > 0 || self.bodies.as_ref().is_some_and(|b| b.rows() > 0)
    }
}

impl Sink for RunWriter<'_> {
    fn trace(&mut self, frame: u64, substep: u32, r: &IterationReport) -> std::io::Result<()> {
        self.trace.row(Self::row(&self.prefix.1, trace_fields(frame, substep, r)))
    }
    fn step(&mut self, r: &FrameReport) -> std::io::Result<()> {
        self.steps.row(Self::row(&self.prefix.1, step_fields(r)))
    }
    fn positions(&mut self, frame: u64, x: &[Vec3], rigid: &[RigidState]) -> std::io::Result<()> {
        for (i, v) in x.iter().enumerate() {
            let f = [frame.to_string(), i.to_string(), num(v.x), num(v.y), num(v.z)];
            self.positions.row(Self::row(&self.prefix.1, f))?;
        }
        if !self.scene.bodies.is_empty() || self.scene.has_rigid() {
            if self.bodies.is_none() {
                self.bodies = Some(self.table(TableName::Bodies)?);
            }
            let table = self.bodies.as_mut().expect("created");
            for r in body_rows(self.scene, frame, x, rigid) {
                table.row(Self::row(&self.prefix.1, r))?;
            }
        }
        Ok(())
    }
    fn contacts(&mut self, frame: u64, contacts: &[ContactForce]) -> std::io::Result<()> {
        if self.contacts.is_none() {
            self.contacts = Some(self.table(TableName::Contacts)?);
        }
        let table = self.contacts.as_mut().expect("created");
        for r in contact_rows(self.scene, frame, contacts) {
            table.row(Self::row(&self.prefix.1, r))?;
        }
        Ok(())
    }
    fn forces(
        &mut self,
        frame: u64,
        multipliers: &[(u64, f64)],
        joints: &[solverlab_core::rigid::JointForce],
        h: f64,
    ) -> std::io::Result<()> {
        if self.forces.is_none() {
            self.forces = Some(self.table(TableName::Forces)?);
        }
        let table = self.forces.as_mut().expect("created");
        for f in force_rows(self.scene, frame, multipliers, joints, h) {
            table.row(Self::row(&self.prefix.1, f))?;
        }
        Ok(())
    }
}

/// The runs.csv columns after the run columns, from a run's summary (timing statistics skip
/// frame 0 and the `warmup` frames after it).
/// Whether every body stayed in its place in every frame (`StepMetrics::in_place`): runs.csv's
/// `stood` and meta.json's; `None` for a scene without bodies or rigid bodies.
fn stood(run: &RunConfig, o: &RunSummary) -> Option<bool> {
    (!run.scene.bodies.is_empty() || run.scene.has_rigid()).then(|| o.steps.iter().all(|r| r.metrics.in_place))
}

fn runs_fields(run: &RunConfig, warmup: u64, o: &RunSummary) -> Vec<String> {
    let warm = warmup as usize;
    let mut ms: Vec<f64> =
        o.steps.iter().skip(1 + warm).map(|r| (r.solve_seconds + r.integrate_seconds) * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    let mut solve_ms: Vec<f64> = o.steps.iter().skip(1 + warm).map(|r| r.solve_seconds * 1e3).collect();
    solve_ms.sort_by(f64::total_cmp);
    let done = o.steps.len().saturating_sub(1);
    let mean = |f: &dyn Fn(&FrameReport) -> f64| o.steps.iter().skip(1).map(f).sum::<f64>() / done.max(1) as f64;
    let (unconverged, _) = convergence_notes(o.steps.iter().skip(1));
    let last = o.steps.last().map(|r| r.metrics).unwrap_or_default();
    let max_of = |f: &dyn Fn(&FrameReport) -> f64| o.steps.iter().map(f).fold(0.0, f64::max);
    let stood = stood(run, o).map_or(String::new(), |s| (s as u8).to_string());
    vec![
        o.status.as_str().to_string(),
        run.scene.particles.len().to_string(),
        run.scene.constraints.len().to_string(),
        done.to_string(),
        unconverged.to_string(),
        num(mean(&|r| r.iterations as f64)),
        num(mean(&|r| r.outer_iterations as f64)),
        num(quantile(&ms, 0.5)),
        num(quantile(&ms, 0.25)),
        num(quantile(&ms, 0.75)),
        num(last.violation),
        num(max_of(&|r| r.metrics.violation)),
        num(last.max_stretch),
        num(max_of(&|r| r.metrics.max_penetration)),
        num(o.steps.last().map_or(0.0, |r| r.support_force)),
        num(jitter(&o.steps)),
        num(max_of(&|r| r.metrics.body_drift)),
        num(max_of(&|r| r.metrics.top_drift)),
        stood,
        o.hash.clone(),
        num(quantile(&solve_ms, 0.5)),
        num(ms.iter().sum::<f64>() / ms.len().max(1) as f64),
        num(max_of(&|r| r.metrics.tear)),
        num(o.steps.first().map_or(0.0, |first| {
            let energy = |r: &FrameReport| r.metrics.kinetic_energy + r.metrics.potential_energy;
            o.steps.iter().map(|r| energy(r) - energy(first)).fold(0.0, f64::max)
        })),
    ]
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn machine() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
fn today() -> String {
    let days =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() / 86_400) as i64;
    crate::output::date(days)
}

/// The scene of a `simulate` run as given, and where its resolved form is: `scene.toml` in the
/// folder (meta.json keeps its content hash and sizes, so that it stays small whatever the
/// scene; an experiment's scenes are in its copy of the experiment file).
#[derive(Serialize)]
pub struct SceneMeta {
    /// The scene argument (builtin name or file).
    pub argument: String,
    /// The `--set` overrides.
    pub sets: Vec<String>,
    /// The file holding the resolved scene, in the scene-file format: `scene.toml`.
    pub file: String,
    /// Its content hash (FNV-1a, 64 bit).
    pub hash: String,
    /// Particles, constraints and rigid bodies of the resolved scene.
    pub particles: usize,
    /// Constraints.
    pub constraints: usize,
    /// Rigid bodies.
    pub rigid_bodies: usize,
}

/// One run's entry in meta.json.
#[derive(Serialize)]
struct RunMeta {
    run: usize,
    scene: String,
    label: String,
    sweep: Vec<(String, String)>,
    substeps: u32,
    dt: f64,
    /// The (sub)step `dt / substeps` (s).
    h: f64,
    frames: u64,
    frames_completed: u64,
    status: crate::tables::RunStatus,
    error: String,
    unconverged_frames: u64,
    notes: Vec<Note>,
    final_state_hash: String,
    /// Whether every body stayed in its place in every frame (runs.csv's `stood`); absent for
    /// a scene without bodies. A pile that falls is a result, not a failed run: its status
    /// stays `ok`, and this says it fell.
    #[serde(skip_serializing_if = "Option::is_none")]
    stood: Option<bool>,
    solver: serde_json::Value,
    /// How the frozen-state study's reference solved its step (with a study only).
    #[serde(skip_serializing_if = "Option::is_none")]
    frozen_reference: Option<crate::runner::ReferenceCheck>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scene_file: Option<SceneMeta>,
    /// The scene file the run read and its content hash, when its scene was given as a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    scene_source: Option<crate::spec::SceneSource>,
}

fn run_meta(r: &RunConfig, o: &RunSummary, scene_file: Option<SceneMeta>) -> serde_json::Value {
    let (unconverged_frames, notes) = convergence_notes(o.steps.iter().skip(1));
    let meta = RunMeta {
        run: r.index,
        scene: r.scene_label.clone(),
        label: r.label.clone(),
        sweep: r.params.clone(),
        substeps: r.substeps,
        dt: r.scene.dt,
        h: r.scene.dt / f64::from(r.substeps),
        frames: r.frames,
        frames_completed: o.steps.last().map_or(0, |s| s.frame),
        status: o.status,
        error: o.error.clone(),
        unconverged_frames,
        notes,
        final_state_hash: o.hash.clone(),
        stood: stood(r, o),
        solver: serde_json::to_value(&r.solver).expect("serialises"),
        frozen_reference: o.reference.clone(),
        scene_file,
        scene_source: r.scene_source.clone(),
    };
    serde_json::to_value(meta).expect("serialises")
}

/// Which shard of an experiment a folder holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardMeta {
    /// 1-based.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
    /// The runs of this shard, ascending.
    pub runs: Vec<usize>,
}

/// A results folder's `meta.json`: provenance, then one entry per run in run order.
#[derive(Debug, Serialize, Deserialize)]
pub struct Meta {
    /// The experiment's name (a `simulate` run: the scene's).
    pub experiment: String,
    /// solverlab's version.
    pub solverlab_version: String,
    /// The git commit the binary was built from.
    pub commit: String,
    /// The compiler.
    pub rustc: String,
    /// The CPU the runs ran on.
    pub cpu: String,
    /// The date the folder was written (UTC).
    pub date: String,
    /// Present in a shard's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardMeta>,
    /// Runs in the whole experiment.
    #[serde(default)]
    pub runs_total: usize,
    /// Each run's settings, status and final state hash.
    pub runs: Vec<serde_json::Value>,
}

impl Meta {
    /// Metadata of this build and machine, today.
    pub fn new(experiment: &str, shard: Option<ShardMeta>, runs_total: usize, runs: Vec<serde_json::Value>) -> Meta {
        Meta {
            experiment: experiment.to_string(),
            solverlab_version: env!("CARGO_PKG_VERSION").into(),
            commit: env!("SOLVERLAB_COMMIT").into(),
            rustc: env!("SOLVERLAB_RUSTC").into(),
            cpu: machine(),
            date: today(),
            shard,
            runs_total,
            runs,
        }
    }

    /// Reads `dir/meta.json`.
    pub fn read(dir: &Path) -> Result<Meta, String> {
        let path = dir.join("meta.json");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Writes `dir/meta.json` atomically.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        write_atomic(&dir.join("meta.json"), &(serde_json::to_string_pretty(self).expect("serialises") + "\n"))
    }
}

/// The commit this binary was built from.
pub fn this_commit() -> &'static str {
    env!("SOLVERLAB_COMMIT")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Committed results never go stale in their columns: for every experiment file whose
    /// results are committed, the header of `steps.csv` and of `runs.csv` is exactly what the code
    /// writes now. A column added to the code without re-running the experiments fails here; the
    /// fix is `solverlab run experiments/NAME.toml`.
    #[test]
    fn committed_results_have_the_current_columns() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut checked = 0;
        for entry in std::fs::read_dir(root.join("experiments")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                continue;
            }
            let exp = Experiment::load(&path, &solverlab_solvers::Registry::builtin()).unwrap();
            let dir = root.join("results").join(&exp.file.name);
            for name in [TableName::Steps, TableName::Runs] {
                let (name, rest) = (name.file(), name.columns());
                let Ok(text) = std::fs::read_to_string(dir.join(name)) else { continue };
                let committed = text.lines().next().unwrap_or_default();
                assert_eq!(committed, header(&exp, rest).join(","), "{}: {name} is stale", exp.file.name);
                checked += 1;
            }
            // The replay's tables have their own header (a `run` column, no sweep columns).
            for name in [TableName::Sticks, TableName::Colliders] {
                let (name, cols) = (name.file(), name.columns());
                if dir.join(TableName::Runs.file()).exists() {
                    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
                    assert_eq!(
                        text.lines().next(),
                        Some(cols.join(",").as_str()),
                        "{}: {name} is stale",
                        exp.file.name
                    );
                }
            }
        }
        assert!(checked >= 20, "only {checked} committed tables were found");
    }
}
