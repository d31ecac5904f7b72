//! The experiment specification: the file's format ([`ExperimentFile`], with its
//! `[[figure]]`s), its expansion into fully resolved runs ([`Experiment::load`]) and the split of
//! those runs into shards ([`shard_runs`]).
//!
//! Nothing here runs a simulation or touches a results folder; `solverlab plot` reads only the
//! file ([`ExperimentFile::read`]) and the CSVs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use solverlab_core::Scene;
use solverlab_solvers::{Registry, SolverConfig};

use crate::CliError;

mod figure;
mod shard;
pub use figure::*;
pub use shard::{parse_shard, shard_runs};

fn yes() -> bool {
    true
}

/// The experiment file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    /// Name; results go to `results/NAME/`.
    pub name: String,
    /// Frames per run.
    pub frames: u64,
    /// Frame step (s); default each scene's own.
    pub dt: Option<f64>,
    /// Substeps per frame; default each solver's own (1, or 4 for soft-step).
    pub substeps: Option<u32>,
    /// Write every inner iteration to trace.csv (default true).
    #[serde(default = "yes")]
    pub trace: bool,
    /// Write every Nth frame's row to steps.csv (and the last); runs.csv statistics still use
    /// every frame (default 1).
    pub record_every: Option<u64>,
    /// Keep only the first N iterations of each (outer) solve in trace.csv (default: all).
    pub trace_iterations: Option<usize>,
    /// Record positions (positions.csv, with bodies.csv and contacts.csv) every Nth frame, for
    /// replays in `solverlab report` (default: only the frames the snapshot figures draw).
    pub positions_every: Option<u64>,
    /// Write contacts.csv (every rigid contact point with its forces) at the position frames
    /// (default true; false keeps a replay of a contact-rich scene small).
    #[serde(default = "yes")]
    pub contacts: bool,
    /// Write every Nth frame's constraint forces to forces.csv (default: none).
    pub forces_every: Option<u64>,
    /// Frames at the start of each run left out of the timing statistics (default 0).
    #[serde(default)]
    pub warmup: u64,
    /// Runs at a time (default: one per core). Timing experiments set 1, so that runs do not
    /// slow each other; `--jobs` overrides it.
    pub jobs: Option<usize>,
    /// Frozen-state convergence study.
    pub convergence: Option<ConvergenceSpec>,
    /// Scenes.
    #[serde(rename = "scene")]
    pub scenes: Vec<SceneSpec>,
    /// Solvers.
    #[serde(rename = "solver")]
    pub solvers: Vec<SolverSpec>,
    /// Cartesian sweeps: `solver.KEY`, `scene.KEY`, `substeps`, `dt`, `frames`.
    #[serde(default)]
    pub sweep: BTreeMap<String, Vec<toml::Value>>,
    /// Figures.
    #[serde(default, rename = "figure")]
    pub figures: Vec<FigureSpec>,
}

/// One `[[scene]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneSpec {
    /// Builtin name or scene file.
    pub name: String,
    /// Parameters (`--set`).
    #[serde(default)]
    pub set: toml::Table,
    /// Label in CSVs and legends (default: the name).
    pub label: Option<String>,
}

impl SceneSpec {
    /// The `set` overrides as `--set` gives them, `key=value`, in key order.
    pub fn sets(&self) -> Vec<String> {
        self.set.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    /// The scene as a run without a `scene.KEY` sweep resolves it (`dt` from `set` included).
    pub fn resolve(&self) -> Result<Scene, solverlab_scenes::SceneError> {
        solverlab_scenes::resolve(&self.name, &self.sets())
    }
}

/// One `[[solver]]`: a preset, or a full table, plus overrides.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverSpec {
    /// Label in CSVs and legends.
    pub label: String,
    /// A preset name.
    pub preset: Option<String>,
    /// A full solver table (`kind = …`).
    pub config: Option<toml::Table>,
    /// Overrides merged into the preset or table.
    #[serde(default)]
    pub set: toml::Table,
    /// Sweeps of this solver only, with the same keys as the global `[sweep]`; they multiply
    /// with it. Two solvers with their own sweeps compare, for example, iterations against
    /// substeps at equal counts.
    #[serde(default)]
    pub sweep: BTreeMap<String, Vec<toml::Value>>,
}

/// `[convergence]`: every solver starts from the identical frozen state of a reference run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConvergenceSpec {
    /// The frame F whose step is studied: the reference solver runs frames 1..F−1, every solver
    /// primes its warm start on frame F−1's step from that trajectory, then solves frame F from
    /// the identical state.
    pub frame: u64,
    /// The preset giving the trajectory and the exact answer `x_ref` (default `direct`).
    #[serde(default = "direct")]
    pub reference: String,
    /// Iteration caps at which the error `‖x − x_ref‖` is measured (default 1, 2, 4, …, 256).
    pub caps: Option<Vec<u64>>,
    /// The reference preset's configuration, resolved by [`Experiment::load`].
    #[serde(skip)]
    pub resolved: Option<SolverConfig>,
}

fn direct() -> String {
    "direct".into()
}

/// A scene file a run read (a `[[scene]]` or `--scene` given as a path), with its content hash
/// when the run was set up: each run's record keeps it, and `merge` and `--resume` refuse runs
/// whose scene file changed between shards or before the resume.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct SceneSource {
    /// The path as given.
    pub file: String,
    /// FNV-1a (64 bit) of its bytes ([`crate::output::digest`]).
    pub hash: String,
}

impl SceneSource {
    /// The scene file named by `name` with its hash, or `None` for a builtin (a name that is
    /// neither an existing path nor ends in `.toml`, as `solverlab_scenes::resolve` tells them
    /// apart) or a file that cannot be read (resolving it says why).
    pub fn of(name: &str) -> Option<SceneSource> {
        let is_file = Path::new(name).exists() || name.ends_with(".toml");
        let bytes = std::fs::read(name).ok().filter(|_| is_file)?;
        Some(SceneSource { file: name.to_string(), hash: crate::output::digest(&bytes) })
    }
}

/// One fully resolved run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Position in run order.
    pub index: usize,
    /// Scene label.
    pub scene_label: String,
    /// Solver label.
    pub label: String,
    /// The scene.
    pub scene: Scene,
    /// The solver.
    pub solver: SolverConfig,
    /// Frames.
    pub frames: u64,
    /// Substeps.
    pub substeps: u32,
    /// Sweep values, by sweep key, as written in the CSVs.
    pub params: Vec<(String, String)>,
    /// The scene file the run read, if its scene was given as one.
    pub scene_source: Option<SceneSource>,
}

/// A parsed and fully validated experiment.
pub struct Experiment {
    /// The file as written.
    pub file: ExperimentFile,
    /// The text of the file (copied into the results).
    pub text: String,
    /// Every run, in order.
    pub runs: Vec<RunConfig>,
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn solver_table(spec: &SolverSpec, registry: &Registry) -> Result<toml::Table, String> {
    let mut table = match (&spec.preset, &spec.config) {
        (Some(p), None) => {
            let preset = registry.preset(p).ok_or_else(|| {
                let names: Vec<&str> = registry.presets().iter().map(|p| p.name).collect();
                let hint = solverlab_core::names::did_you_mean(p, names.iter().copied());
                format!("preset: unknown solver `{p}`{hint} (presets: {})", names.join(", "))
            })?;
            preset.config.to_table()
        }
        (None, Some(t)) => t.clone(),
        _ => return Err("give exactly one of preset or config".into()),
    };
    for (k, v) in &spec.set {
        table.insert(k.clone(), v.clone());
    }
    Ok(table)
}

impl ExperimentFile {
    /// Reads and checks `path` without resolving a scene or a solver: the file's own fields, its
    /// sweeps' keys, its convergence study and its figures (all that `solverlab plot` needs).
    /// Returns the file with its text; every error names the file and the field.
    pub fn read(path: &Path) -> Result<(ExperimentFile, String), CliError> {
        let (file, text) = Self::parse(path)?;
        file.check_figures(path)?;
        Ok((file, text))
    }

    fn check_figures(&self, path: &Path) -> Result<(), CliError> {
        for (k, f) in self.figures.iter().enumerate() {
            f.validate(self)
                .map_err(|p| CliError::Input(format!("{}: figure[{k}] ({}): {p}", path.display(), f.name)))?;
        }
        Ok(())
    }

    /// [`ExperimentFile::read`] without the figures.
    fn parse(path: &Path) -> Result<(ExperimentFile, String), CliError> {
        let source = path.display().to_string();
        let bad = |field: &str, problem: String| CliError::Input(format!("{source}: {field}: {problem}"));
        let text = std::fs::read_to_string(path).map_err(|e| CliError::Input(format!("{source}: cannot read: {e}")))?;
        let file: ExperimentFile = toml::from_str(&text).map_err(|e: toml::de::Error| {
            CliError::Input(format!("{source}: {}", solverlab_core::names::with_hint(&e.to_string(), e.message())))
        })?;
        plain_name(&file.name).map_err(|p| bad("name", format!("{p}: results go to results/NAME")))?;
        if file.frames == 0 {
            return Err(bad("frames", "must be at least 1".into()));
        }
        if let Some(dt) = file.dt.filter(|dt| !(*dt > 0.0 && dt.is_finite())) {
            return Err(bad("dt", format!("{dt} must be a positive number of seconds")));
        }
        if file.substeps == Some(0) {
            return Err(bad("substeps", "must be at least 1".into()));
        }
        let sweeps = || {
            std::iter::once(("sweep".to_string(), &file.sweep))
                .chain(file.solvers.iter().enumerate().map(|(i, s)| (format!("solver[{i}].sweep"), &s.sweep)))
        };
        for (place, sweep) in sweeps() {
            for (key, values) in sweep {
                let at = format!("{place}.\"{key}\"");
                if values.is_empty() {
                    return Err(bad(&at, "an empty sweep runs nothing".into()));
                }
                let known = key.starts_with("solver.")
                    || key.starts_with("scene.")
                    || ["substeps", "dt", "frames"].contains(&key.as_str());
                if !known {
                    let keys = ["substeps", "dt", "frames"];
                    return Err(bad(
                        &at,
                        format!(
                            "sweep keys are solver.KEY, scene.KEY, substeps, dt or frames{}",
                            solverlab_core::names::did_you_mean(key, keys.iter().copied())
                        ),
                    ));
                }
                for value in values {
                    sweep_value(key, value).map_err(|problem| bad(&at, problem))?;
                }
            }
        }
        let fewest_frames = sweeps()
            .filter_map(|(_, sweep)| sweep.get("frames"))
            .flatten()
            .filter_map(|v| v.as_integer())
            .filter_map(|f| u64::try_from(f).ok())
            .fold(file.frames, u64::min);
        if file.warmup >= fewest_frames {
            return Err(bad(
                "warmup",
                format!(
                    "{} must be below the frames a run has ({fewest_frames}): it leaves that many out of the timing",
                    file.warmup
                ),
            ));
        }
        for (i, a) in file.solvers.iter().enumerate() {
            if a.label.trim().is_empty() {
                return Err(bad(&format!("solver[{i}].label"), "must not be empty: it names the series".into()));
            }
            if let Some(j) = file.solvers[..i].iter().position(|b| b.label == a.label) {
                return Err(bad(
                    &format!("solver[{i}]"),
                    format!("the label `{}` is solver[{j}]'s too: labels name the series and must differ", a.label),
                ));
            }
        }
        for (i, a) in file.scenes.iter().enumerate() {
            let label = |s: &SceneSpec| s.label.clone().unwrap_or_else(|| s.name.clone());
            if a.label.as_ref().is_some_and(|l| l.trim().is_empty()) {
                return Err(bad(&format!("scene[{i}].label"), "must not be empty: it names the scene".into()));
            }
            if let Some(j) = file.scenes[..i].iter().position(|b| label(b) == label(a)) {
                return Err(bad(
                    &format!("scene[{i}]"),
                    format!(
                        "the label `{}` is scene[{j}]'s too: give each scene its own label (label = \"…\"), or its \
                         runs cannot be told apart",
                        label(a)
                    ),
                ));
            }
        }
        for (i, a) in file.figures.iter().enumerate() {
            plain_name(&a.name).map_err(|p| bad(&format!("figure[{i}].name"), p))?;
            if let Some(j) = file.figures[..i].iter().position(|b| b.name == a.name) {
                return Err(bad(
                    &format!("figure[{i}]"),
                    format!("the name `{}` is figure[{j}]'s too: the second would overwrite the first's files", a.name),
                ));
            }
        }
        if file.record_every == Some(0) {
            return Err(bad("record_every", "must be at least 1".into()));
        }
        if file.positions_every == Some(0) {
            return Err(bad(
                "positions_every",
                "must be at least 1 (leave it out to record only the snapshot frames)".into(),
            ));
        }
        if file.forces_every == Some(0) {
            return Err(bad("forces_every", "must be at least 1 (leave it out for no forces.csv)".into()));
        }
        if file.jobs == Some(0) {
            return Err(bad("jobs", "must be at least 1 (leave it out for one run per core)".into()));
        }
        if file.scenes.is_empty() {
            return Err(bad("scene", "at least one [[scene]] is needed".into()));
        }
        if file.solvers.is_empty() {
            return Err(bad("solver", "at least one [[solver]] is needed".into()));
        }
        if let Some(c) = &file.convergence {
            if c.frame < 2 || c.frame > file.frames {
                return Err(bad("convergence.frame", format!("{} must be in 2..={}", c.frame, file.frames)));
            }
            if c.caps.as_ref().is_some_and(|caps| caps.is_empty() || caps.contains(&0)) {
                return Err(bad("convergence.caps", "needs iteration caps of at least 1".into()));
            }
            if let Some(cap) = c.caps.iter().flatten().find(|&&cap| cap > u64::from(u32::MAX)) {
                return Err(bad(
                    "convergence.caps",
                    format!("{cap} is more iterations than a solver counts (at most {})", u32::MAX),
                ));
            }
        }
        Ok((file, text))
    }
}

/// Checks that `name` can name a file or folder in a results folder and nothing else: ASCII
/// letters, digits, `_`, `-` and `.`, not empty and not starting with `.` (so not `..`, not
/// absolute, no path separator).
pub fn plain_name(name: &str) -> Result<(), String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    match !name.is_empty() && !name.starts_with('.') && name.chars().all(plain) {
        true => Ok(()),
        false => Err(format!("`{name}` must be a plain name (letters, digits, `_`, `-`, `.`, not starting with `.`)")),
    }
}

/// Checks a value of the sweep of `frames`, `substeps` or `dt` by the rules of the field it
/// sets: whole frames of at least 1, whole substeps from 1 to `u32::MAX`, a positive and finite
/// number of seconds. (`solver.KEY` and `scene.KEY` values are checked by the solver's and the
/// scene's own rules when the runs are expanded.)
fn sweep_value(key: &str, value: &toml::Value) -> Result<(), String> {
    let whole = value.as_integer();
    match key {
        "frames" => match whole {
            Some(n) if n >= 1 => Ok(()),
            _ => Err(format!("{value} is not a number of frames: frames are whole numbers, at least 1")),
        },
        "substeps" => match whole {
            Some(n) if n >= 1 && n <= i64::from(u32::MAX) => Ok(()),
            Some(n) if n >= 1 => Err(format!("{n} is more substeps than a frame can take (at most {})", u32::MAX)),
            _ => Err(format!("{value} is not a number of substeps: substeps are whole numbers, at least 1")),
        },
        "dt" => match value.as_float().or(whole.map(|n| n as f64)) {
            Some(dt) if dt > 0.0 && dt.is_finite() => Ok(()),
            _ => Err(format!("{value} is not a frame step: dt is a positive number of seconds")),
        },
        _ => Ok(()),
    }
}

impl Experiment {
    /// Reads, expands and validates `path` with the solver families of `registry`; every error
    /// names the file and the field.
    pub fn load(path: &Path, registry: &Registry) -> Result<Experiment, CliError> {
        let source = path.display().to_string();
        let bad = |field: &str, problem: String| CliError::Input(format!("{source}: {field}: {problem}"));
        let (mut file, text) = ExperimentFile::parse(path)?;
        if let Some(c) = &mut file.convergence {
            let preset = registry.preset(&c.reference).ok_or_else(|| {
                let presets = registry.presets();
                let hint = solverlab_core::names::did_you_mean(&c.reference, presets.iter().map(|p| p.name));
                bad("convergence.reference", format!("unknown preset `{}`{hint}", c.reference))
            })?;
            c.resolved = Some(preset.config);
        }
        let sweep_keys = sweep_columns(&file);
        let mut runs = Vec::new();
        for (si, scene) in file.scenes.iter().enumerate() {
            let scene_source = SceneSource::of(&scene.name);
            for (vi, solver) in file.solvers.iter().enumerate() {
                let base =
                    solver_table(solver, registry).map_err(|p| bad(&format!("solver[{vi}] ({})", solver.label), p))?;
                let mut merged = file.sweep.clone();
                merged.extend(solver.sweep.iter().map(|(k, v)| (k.clone(), v.clone())));
                for combo in &product(&merged) {
                    let mut table = base.clone();
                    let mut sets = scene.sets();
                    let (mut frames, mut dt, mut substeps) = (file.frames, file.dt, file.substeps);
                    for (key, value) in combo {
                        if let Some(k) = key.strip_prefix("solver.") {
                            table.insert(k.to_string(), value.clone());
                        } else if let Some(k) = key.strip_prefix("scene.") {
                            sets.retain(|s| !s.starts_with(&format!("{k}=")));
                            sets.push(format!("{k}={value}"));
                        } else {
                            // Checked by ExperimentFile::parse: whole frames and substeps in
                            // range, a positive finite dt; nothing is truncated or saturated.
                            let (whole, x) = (value.as_integer(), value.as_float());
                            match (key.as_str(), whole) {
                                ("frames", Some(n)) => frames = n as u64,
                                ("substeps", Some(n)) => substeps = Some(n as u32),
                                _ => dt = x.or(whole.map(|n| n as f64)),
                            }
                        }
                    }
                    let field = format!("solver[{vi}] ({}) with {}", solver.label, describe(combo));
                    let config = registry.parse(&table).map_err(|p| bad(&field, p.to_string()))?;
                    let mut resolved = solverlab_scenes::resolve(&scene.name, &sets)
                        .map_err(|e| bad(&format!("scene[{si}] with {}", describe(combo)), e.to_string()))?;
                    if let Some(dt) = dt {
                        resolved.dt = dt;
                    }
                    let substeps = substeps.unwrap_or(config.default_substeps());
                    if substeps == 0 || frames == 0 {
                        return Err(bad(&field, "substeps and frames must be at least 1".into()));
                    }
                    runs.push(RunConfig {
                        index: runs.len(),
                        scene_label: scene.label.clone().unwrap_or_else(|| scene.name.clone()),
                        label: solver.label.clone(),
                        scene: resolved,
                        solver: config,
                        frames,
                        substeps,
                        params: sweep_keys
                            .iter()
                            .map(|k| {
                                let v = combo
                                    .iter()
                                    .find(|(ck, _)| ck == k)
                                    .map(|(_, v)| value_text(v))
                                    .unwrap_or_default();
                                (k.clone(), v)
                            })
                            .collect(),
                        scene_source: scene_source.clone(),
                    });
                }
            }
        }
        file.check_figures(path)?;
        Ok(Experiment { file, text, runs })
    }
}

/// The Cartesian product of the sweeps, in key order.
fn product(sweep: &BTreeMap<String, Vec<toml::Value>>) -> Vec<Vec<(String, toml::Value)>> {
    let mut combos: Vec<Vec<(String, toml::Value)>> = vec![Vec::new()];
    for (key, values) in sweep {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((key.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    combos
}

/// Every sweep key of the experiment, global and per solver, in order: one CSV column each.
pub fn sweep_columns(file: &ExperimentFile) -> Vec<String> {
    let mut keys: std::collections::BTreeSet<String> = file.sweep.keys().cloned().collect();
    for s in &file.solvers {
        keys.extend(s.sweep.keys().cloned());
    }
    keys.into_iter().collect()
}

fn describe(combo: &[(String, toml::Value)]) -> String {
    if combo.is_empty() {
        "no sweep".into()
    } else {
        combo.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
    }
}

/// The results directory of an experiment.
pub fn default_out(name: &str) -> PathBuf {
    PathBuf::from("results").join(name)
}

#[cfg(test)]
mod tests;
