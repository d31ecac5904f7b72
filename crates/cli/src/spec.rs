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

use crate::tables::columns_of;
use crate::CliError;

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
        let plain = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
        if file.name.is_empty() || file.name.starts_with('.') || !file.name.chars().all(plain) {
            return Err(bad(
                "name",
                format!(
                    "`{}` must be a plain name (letters, digits, `_`, `-`, `.`, not starting with `.`): results go to \
                     results/NAME",
                    file.name
                ),
            ));
        }
        if file.frames == 0 {
            return Err(bad("frames", "must be at least 1".into()));
        }
        let fewest_frames = file
            .sweep
            .get("frames")
            .into_iter()
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
            if let Some(j) = file.solvers[..i].iter().position(|b| b.label == a.label) {
                return Err(bad(
                    &format!("solver[{i}]"),
                    format!("the label `{}` is solver[{j}]'s too: labels name the series and must differ", a.label),
                ));
            }
        }
        for (i, a) in file.figures.iter().enumerate() {
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
        let sweeps = std::iter::once(("sweep".to_string(), &file.sweep))
            .chain(file.solvers.iter().enumerate().map(|(i, s)| (format!("solver[{i}].sweep"), &s.sweep)));
        for (place, sweep) in sweeps {
            for (key, values) in sweep {
                if values.is_empty() {
                    return Err(bad(&format!("{place}.\"{key}\""), "an empty sweep runs nothing".into()));
                }
                let known = key.starts_with("solver.")
                    || key.starts_with("scene.")
                    || ["substeps", "dt", "frames"].contains(&key.as_str());
                if !known {
                    return Err(bad(
                        &format!("{place}.\"{key}\""),
                        "sweep keys are solver.KEY, scene.KEY, substeps, dt or frames".into(),
                    ));
                }
            }
        }
        if let Some(c) = &file.convergence {
            if c.frame < 2 || c.frame > file.frames {
                return Err(bad("convergence.frame", format!("{} must be in 2..={}", c.frame, file.frames)));
            }
            if c.caps.as_ref().is_some_and(|caps| caps.is_empty() || caps.contains(&0)) {
                return Err(bad("convergence.caps", "needs iteration caps of at least 1".into()));
            }
        }
        Ok((file, text))
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
            for (vi, solver) in file.solvers.iter().enumerate() {
                let base =
                    solver_table(solver, registry).map_err(|p| bad(&format!("solver[{vi}] ({})", solver.label), p))?;
                let mut merged = file.sweep.clone();
                merged.extend(solver.sweep.iter().map(|(k, v)| (k.clone(), v.clone())));
                for combo in &product(&merged) {
                    let mut table = base.clone();
                    let mut sets: Vec<String> = scene.set.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    let (mut frames, mut dt, mut substeps) = (file.frames, file.dt, file.substeps);
                    for (key, value) in combo {
                        if let Some(k) = key.strip_prefix("solver.") {
                            table.insert(k.to_string(), value.clone());
                        } else if let Some(k) = key.strip_prefix("scene.") {
                            sets.retain(|s| !s.starts_with(&format!("{k}=")));
                            sets.push(format!("{k}={value}"));
                        } else {
                            let x = value.as_float().or(value.as_integer().map(|i| i as f64));
                            let x =
                                x.ok_or_else(|| bad(&format!("sweep.\"{key}\""), format!("{value} is not a number")))?;
                            match key.as_str() {
                                "frames" => frames = x as u64,
                                "dt" => dt = Some(x),
                                _ => substeps = Some(x as u32),
                            }
                        }
                    }
                    let field = format!("solver[{vi}] ({}) with {}", solver.label, describe(combo));
                    let config = registry.parse(&table).map_err(|p| bad(&field, p.to_string()))?;
                    let mut resolved = solverlab_scenes::resolve(&scene.name, &sets)
                        .map_err(|e| bad(&format!("scene[{si}] with {}", describe(combo)), e.to_string()))?;
                    if let Some(dt) = dt {
                        if !(dt > 0.0 && dt.is_finite()) {
                            return Err(bad("dt", format!("{dt} must be a positive number of seconds")));
                        }
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
                    });
                }
            }
        }
        file.check_figures(path)?;
        Ok(Experiment { file, text, runs })
    }
}

/// Parses `--shard I/N`: the I-th (1-based) of N shards.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let form = || format!("{s}: give I/N, the I-th of N shards, with 1 ≤ I ≤ N (for example 2/8)");
    let (i, n) = s.split_once('/').ok_or_else(form)?;
    let (i, n): (usize, usize) = (i.trim().parse().map_err(|_| form())?, n.trim().parse().map_err(|_| form())?);
    if n == 0 || i == 0 || i > n {
        return Err(form());
    }
    Ok((i, n))
}

/// A run's estimated cost, for balancing shards: frames × substeps × (particles, plus
/// constraints, plus 6 per rigid body, plus 1). Iteration counts and contact counts are left out, so it balances
/// sweeps over size, frames and substeps well and sweeps over iterations only roughly.
fn cost(run: &RunConfig) -> u128 {
    let size = run.scene.particles.len() + run.scene.constraints.len() + 6 * run.scene.rigid.len() + 1;
    u128::from(run.frames) * u128::from(run.substeps) * size as u128
}

/// The runs of shard `i` of `n` (1-based), ascending. Shards are disjoint and cover every run;
/// they are balanced by estimated cost ([`cost`]): runs are dealt, most expensive first, to the
/// shard with the least cost so far (ties to the lower index), so every process computes the
/// same split.
pub fn shard_runs(exp: &Experiment, i: usize, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..exp.runs.len()).collect();
    order.sort_by_key(|&k| (std::cmp::Reverse(cost(&exp.runs[k])), k));
    let mut load = vec![0u128; n];
    let mut mine = Vec::new();
    for k in order {
        let s = (0..n).min_by_key(|&s| (load[s], s)).expect("n ≥ 1");
        load[s] += cost(&exp.runs[k]);
        if s + 1 == i {
            mine.push(k);
        }
    }
    mine.sort_unstable();
    mine
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

/// Kinds of figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FigureKind {
    /// Line charts.
    #[default]
    Lines,
    /// Scene drawings.
    Snapshots,
    /// Performance profile.
    Profile,
    /// A dot plot: one row per series, the `x` column along the axis, a dot per table row,
    /// coloured by the `group` column; runs that did not end `ok` are open rings.
    Dots,
}

/// Where a figure's legend goes (`legend = "…"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LegendPlace {
    /// Once under the panels if they all show the same series, else in the emptiest corner.
    Auto,
    /// Inside each panel, upper left.
    UpperLeft,
    /// Inside each panel, upper right.
    UpperRight,
    /// Inside each panel, lower left.
    LowerLeft,
    /// Inside each panel, lower right.
    LowerRight,
    /// Outside each panel, to its right.
    Right,
    /// Once, under all panels.
    Below,
    /// No legend.
    None,
}

/// How a series or reference line is drawn (`line = "…"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LineKind {
    /// A solid line.
    Solid,
    /// A dashed line.
    Dashed,
    /// A dotted line.
    Dotted,
    /// Dots, no line.
    Points,
    /// A solid line with dots.
    LineAndPoints,
    /// Open rings, no line.
    Hollow,
}

/// The look of the series a `[figure.style]` key names.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesStyle {
    /// `"#rrggbb"` or a palette name (see [`colour`]).
    #[serde(alias = "color")]
    pub colour: Option<String>,
    /// Line style.
    pub line: Option<LineKind>,
}

/// A number, or a closed form in `x` (the grammar is in `expr.rs`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Level {
    /// A constant.
    Number(f64),
    /// An expression.
    Expr(String),
}

/// One `[[figure.reference]]`: a horizontal line (`y = number`), a closed-form curve
/// (`y = "expression in x"`) or a vertical line (`x = number`), dashed grey unless styled.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// A vertical line at this x.
    pub x: Option<f64>,
    /// A horizontal line at this y, or a curve y(x).
    pub y: Option<Level>,
    /// Legend text (none when empty).
    #[serde(default)]
    pub label: String,
    /// Colour (default grey).
    #[serde(alias = "color")]
    pub colour: Option<String>,
    /// Line style (default dashed).
    pub line: Option<LineKind>,
}

/// The colours a figure file may name, besides `"#rrggbb"`: the palette's eight and grey.
pub const COLOUR_NAMES: [(&str, (u8, u8, u8)); 9] = [
    ("blue", solverlab_plot::PALETTE[0]),
    ("vermillion", solverlab_plot::PALETTE[1]),
    ("green", solverlab_plot::PALETTE[2]),
    ("purple", solverlab_plot::PALETTE[3]),
    ("orange", solverlab_plot::PALETTE[4]),
    ("sky", solverlab_plot::PALETTE[5]),
    ("black", solverlab_plot::PALETTE[6]),
    ("yellow", solverlab_plot::PALETTE[7]),
    ("grey", (120, 120, 120)),
];

/// Parses `"#rrggbb"` or one of [`COLOUR_NAMES`].
pub fn colour(text: &str) -> Result<(u8, u8, u8), String> {
    if let Some(&(_, c)) = COLOUR_NAMES.iter().find(|(n, _)| *n == text || (text == "gray" && *n == "grey")) {
        return Ok(c);
    }
    let hex = text.strip_prefix('#').filter(|h| h.len() == 6 && h.chars().all(|c| c.is_ascii_hexdigit()));
    match hex {
        Some(h) => {
            let byte = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).unwrap_or(0);
            Ok((byte(0), byte(2), byte(4)))
        }
        None => {
            let hint = solverlab_core::names::did_you_mean(text, COLOUR_NAMES.iter().map(|(n, _)| *n));
            let names = COLOUR_NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
            Err(format!("`{text}`{hint} is not a colour: give \"#rrggbb\" or one of {names}"))
        }
    }
}

/// How rows sharing a series and an `x` are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reduce {
    /// The row with the largest frame (or the last row).
    Last,
    /// Mean.
    Mean,
    /// Median.
    Median,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
}

/// A string or a list of strings.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Many.
    Many(Vec<String>),
}

impl OneOrMany {
    pub(crate) fn list(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// One `[[figure]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// File stem.
    pub name: String,
    /// Title.
    #[serde(default)]
    pub title: String,
    /// Kind (default `lines`).
    #[serde(default)]
    pub kind: FigureKind,
    /// Table: steps, runs, trace, convergence, frozen_trace (default steps).
    #[serde(default = "steps")]
    pub table: String,
    /// x column.
    #[serde(default)]
    pub x: String,
    /// y columns, one panel each.
    pub y: Option<OneOrMany>,
    /// Series columns (default `label`).
    pub series: Option<OneOrMany>,
    /// A column whose values split panels.
    pub panels: Option<String>,
    /// Logarithmic x.
    #[serde(default)]
    pub logx: bool,
    /// Logarithmic y.
    #[serde(default)]
    pub logy: bool,
    /// Aggregation.
    pub reduce: Option<Reduce>,
    /// Log-log slope in the legend.
    #[serde(default)]
    pub fit: bool,
    /// Equality filters.
    #[serde(default)]
    pub filter: BTreeMap<String, toml::Value>,
    /// Frame window `[first, last]`.
    pub frames: Option<[u64; 2]>,
    /// Snapshot frames.
    #[serde(default)]
    pub at: Vec<u64>,
    /// Snapshot animation.
    #[serde(default)]
    pub animate: bool,
    /// Profile metric column (lower is better).
    pub metric: Option<String>,
    /// Profile problem columns (default `scene` and every sweep column not starting `solver.`).
    pub problem: Option<Vec<String>>,
    /// Panels per row (default 2).
    pub columns: Option<usize>,
    /// PNG pixels per SVG pixel, 1 to 4 (default 1; the SVG is the print version).
    pub png_scale: Option<u32>,
    /// Adds an analytic series: `incline` draws Coulomb's `a = g·max(0, sin θ − μ cos θ)` against
    /// x = `scene.angle` (degrees), with μ from the first scene's `friction` (default 0.5);
    /// `spring` draws the undamped oscillator of the `spring` scene,
    /// `x(t) = rest + (start − rest)·cos(t/√(m·α))`, from the first scene's parameters.
    pub analytic: Option<String>,
    /// x axis title (default: the column's name and unit).
    pub xlabel: Option<String>,
    /// y axis title of every panel (default: each column's name and unit).
    pub ylabel: Option<String>,
    /// x range `[low, high]` (default: fitted to the data).
    pub xlim: Option<[f64; 2]>,
    /// y range `[low, high]`.
    pub ylim: Option<[f64; 2]>,
    /// Legend placement (default `auto`).
    pub legend: Option<LegendPlace>,
    /// Keeps only these series, in this order (which sets their colours); `*` matches any text.
    pub select: Option<Vec<String>>,
    /// Per-series colour and line, keyed by series name (`*` matches any text).
    #[serde(default)]
    pub style: BTreeMap<String, SeriesStyle>,
    /// Reference lines and closed-form curves.
    #[serde(default)]
    pub reference: Vec<Reference>,
    /// `dots`: the column whose values colour the dots (e.g. `substeps`).
    pub group: Option<String>,
}

fn steps() -> String {
    "steps".into()
}

impl FigureSpec {
    /// Checks names, tables and columns against the experiment.
    pub fn validate(&self, file: &ExperimentFile) -> Result<(), String> {
        if self.name.is_empty() || self.name.contains('/') {
            return Err("name: must be a plain file stem".into());
        }
        if let Some(k) = self.png_scale.filter(|k| !(1..=4).contains(k)) {
            return Err(format!("png_scale: {k} must be 1, 2, 3 or 4"));
        }
        for (key, lim, log) in [("xlim", self.xlim, self.logx), ("ylim", self.ylim, self.logy)] {
            if let Some([lo, hi]) = lim {
                if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                    return Err(format!("{key}: [{lo}, {hi}] must be finite and increasing"));
                }
                if log && lo <= 0.0 {
                    return Err(format!("{key}: [{lo}, {hi}] must be positive on a log axis"));
                }
            }
        }
        for (name, look) in &self.style {
            if let Some(c) = &look.colour {
                colour(c).map_err(|e| format!("style.\"{name}\".colour: {e}"))?;
            }
        }
        for (k, r) in self.reference.iter().enumerate() {
            let at = format!("reference[{k}]");
            match (&r.x, &r.y) {
                (Some(x), None) if x.is_finite() => {}
                (None, Some(Level::Number(y))) if y.is_finite() => {}
                (None, Some(Level::Expr(e))) => {
                    crate::expr::Expr::parse(e).map_err(|m| format!("{at}.y: {m}"))?;
                }
                (Some(_), Some(_)) | (None, None) => {
                    return Err(format!(
                        "{at}: give either x = number (a vertical line) or y = number or \"expression in x\""
                    ));
                }
                _ => return Err(format!("{at}: the position must be a finite number")),
            }
            if let Some(c) = &r.colour {
                colour(c).map_err(|e| format!("{at}.colour: {e}"))?;
            }
        }
        if self.select.as_ref().is_some_and(Vec::is_empty) {
            return Err("select: name at least one series (or leave select out)".into());
        }
        if self.group.is_some() && self.kind != FigureKind::Dots {
            return Err("group: only a `dots` figure colours by a group column".into());
        }
        match self.kind {
            FigureKind::Snapshots => {
                if self.at.is_empty() {
                    return Err("at: a snapshot figure needs frames, e.g. at = [0, 60]".into());
                }
                if let Some(f) = self.at.iter().find(|&&f| f > file.frames) {
                    return Err(format!("at: frame {f} is past the last frame {}", file.frames));
                }
                return Ok(());
            }
            FigureKind::Profile => {
                let metric = self.metric.as_deref().ok_or("metric: a profile needs a metric column")?;
                if !crate::tables::FIGURE_TABLES.contains(&self.table.as_str())
                    || !columns_of(&self.table, &sweep_columns(file)).iter().any(|c| c == metric)
                {
                    let cols = columns_of(&self.table, &sweep_columns(file));
                    let hint = solverlab_core::names::did_you_mean(metric, cols.iter().map(String::as_str));
                    return Err(format!("metric: no column `{metric}` in table `{}`{hint}", self.table));
                }
                return Ok(());
            }
            FigureKind::Lines | FigureKind::Dots => {}
        }
        if !crate::tables::FIGURE_TABLES.contains(&self.table.as_str()) {
            let hint = solverlab_core::names::did_you_mean(&self.table, crate::tables::FIGURE_TABLES.iter().copied());
            return Err(format!(
                "table: `{}`{hint} is not one of {}",
                self.table,
                crate::tables::FIGURE_TABLES.join(", ")
            ));
        }
        let cols = columns_of(&self.table, &sweep_columns(file));
        let has = |c: &str| cols.iter().any(|x| x == c);
        let hint = |c: &str| solverlab_core::names::did_you_mean(c, cols.iter().map(String::as_str));
        if !has(&self.x) {
            return Err(format!(
                "x: no column `{}`{} in table `{}` (columns: {})",
                self.x,
                hint(&self.x),
                self.table,
                cols.join(", ")
            ));
        }
        let ys = self.y.as_ref().map(OneOrMany::list).unwrap_or_default();
        if self.kind == FigureKind::Dots && !ys.is_empty() {
            return Err(
                "y: a `dots` figure draws its x column along the axis and one row per series; leave y out".into()
            );
        }
        if ys.is_empty() && self.kind != FigureKind::Dots {
            return Err("y: at least one column is needed".into());
        }
        if let Some(a) = &self.analytic {
            let known = (a == "spring" && self.x == "time") || (a == "incline" && self.x == "scene.angle");
            if !known {
                return Err(
                    "analytic: \"spring\" against x = \"time\" and \"incline\" against x = \"scene.angle\" are known"
                        .into(),
                );
            }
        }
        for c in ys
            .iter()
            .chain(self.series.as_ref().map(OneOrMany::list).unwrap_or_default().iter())
            .chain(self.filter.keys())
            .chain(self.group.iter())
            .chain(self.panels.iter())
        {
            if !has(c) {
                return Err(format!(
                    "no column `{c}`{} in table `{}` (columns: {})",
                    hint(c),
                    self.table,
                    cols.join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// The results directory of an experiment.
pub fn default_out(name: &str) -> PathBuf {
    PathBuf::from("results").join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A committed experiment that draws a timing column (`seconds`, `step_ms_*`) or a
    /// performance profile runs one run at a time (`jobs = 1`), so that its runs do not slow each
    /// other.
    #[test]
    fn timing_experiments_run_one_run_at_a_time() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let timed = |c: &str| c == "seconds" || c.starts_with("step_ms");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        let mut timing = 0;
        for file in files.iter().filter(|p| p.extension().is_some_and(|e| e == "toml")) {
            let exp = Experiment::load(file, &Registry::builtin()).unwrap();
            let draws_time = exp.file.figures.iter().any(|f| {
                f.kind == FigureKind::Profile
                    || timed(&f.x)
                    || f.y.as_ref().is_some_and(|y| y.list().iter().any(|c| timed(c)))
            });
            if draws_time {
                timing += 1;
                assert_eq!(exp.file.jobs, Some(1), "{}: a timing experiment sets jobs = 1", file.display());
            }
        }
        assert!(timing >= 6, "found {timing} timing experiments");
    }

    /// The experiment format's half of the fuzz test (the scene format's is
    /// `crates/solvers/tests/fuzz.rs`): every committed experiment file, mutated 100 times
    /// (seeded; deleted, duplicated and retyped keys, NaN, infinities, huge and negative
    /// numbers), loads as a valid experiment or is refused with an error naming the file, and
    /// never panics.
    #[test]
    fn mutated_experiment_files_load_or_are_refused_and_never_panic() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let dir = std::env::temp_dir().join(format!("solverlab-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rng = solverlab_core::rng::Rng::new(20261123);
        let (mut loaded, mut refused) = (0, 0);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files.iter().filter(|p| p.extension().is_some_and(|e| e == "toml")) {
            let text = std::fs::read_to_string(file).unwrap();
            for m in 0..100 {
                let mutant = solverlab_scenes::mutate::mutate(&text, &mut rng);
                let path = dir.join("mutant.toml");
                std::fs::write(&path, &mutant).unwrap();
                match std::panic::catch_unwind(|| Experiment::load(&path, &Registry::builtin())) {
                    Ok(Ok(_)) => loaded += 1,
                    Ok(Err(CliError::Input(e))) => {
                        assert!(e.contains("mutant.toml"), "{}: the error names the file: {e}", file.display());
                        refused += 1;
                    }
                    Ok(Err(e)) => panic!("{}, mutant {m}: not an input error: {e:?}", file.display()),
                    Err(_) => panic!("{}, mutant {m}: loading panicked on\n{mutant}", file.display()),
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(loaded > 0 && refused > 0, "{loaded} loaded, {refused} refused");
    }
}
