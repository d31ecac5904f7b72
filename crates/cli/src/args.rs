//! The command line's arguments: the commands and their flags (clap), and the checks of the
//! values clap cannot express.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::{report, spec, Style};

/// Compare physics constraint solvers on identical scenes.
#[derive(Parser)]
#[command(name = "solverlab", version, about)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Simulate one scene with one solver and write steps.csv, trace.csv, positions.csv, meta.json.
    Simulate {
        /// A builtin scene name or a scene file (.toml).
        #[arg(long)]
        scene: String,
        /// Override a scene parameter: key=value (repeatable). `solverlab scene list` shows them.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// A preset name (`solverlab solver list`), a solver file (.toml), or an inline TOML
        /// table such as '{ kind = "relax", mode = "jacobi", iterations = 20, omega = 1.5 }'.
        #[arg(long, default_value = "gs")]
        solver: String,
        /// Frames to simulate, at least 1.
        #[arg(long, default_value_t = 120, allow_negative_numbers = true, value_parser = at_least_one)]
        frames: u64,
        /// Frame step in seconds (default: the scene's dt).
        #[arg(long, allow_negative_numbers = true)]
        dt: Option<f64>,
        /// Substeps per frame: each frame is this many steps of dt/substeps (default: 1, or the
        /// preset's own, e.g. 4 for soft-step).
        #[arg(long, allow_negative_numbers = true, value_parser = substeps)]
        substeps: Option<u32>,
        /// Output directory.
        #[arg(long, default_value = "results/simulate")]
        out: PathBuf,
        /// Write positions every N frames; 0 writes none.
        #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = at_least_zero)]
        positions_every: u64,
        /// Also compute the common position violation after every iteration (trace.csv).
        #[arg(long)]
        violation: bool,
        /// Do not draw overview.svg/.png (violation, energy, iterations; drift, penetration and
        /// support force when the scene has them).
        #[arg(long)]
        no_figures: bool,
    },
    /// Write the linearised system a cg or direct solver solves in one frame, as Matrix Market
    /// files plus system.json, for other tools (SciPy, MATLAB, Julia).
    ExportSystem {
        /// A builtin scene name or a scene file (.toml).
        #[arg(long)]
        scene: String,
        /// Override a scene parameter: key=value (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// A solver with an explicit system: cg, cg-cold, direct, or an inline table.
        #[arg(long, default_value = "cg")]
        solver: String,
        /// The frame (1-based) whose system to write.
        #[arg(long, allow_negative_numbers = true, value_parser = at_least_one)]
        frame: u64,
        /// Frame step in seconds (default: the scene's dt).
        #[arg(long, allow_negative_numbers = true)]
        dt: Option<f64>,
        /// Substeps per frame (the last substep's system is written).
        #[arg(long, allow_negative_numbers = true, value_parser = substeps)]
        substeps: Option<u32>,
        /// The outer (Newton) iteration whose system to write, counting from 1.
        #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = at_least_one_usize)]
        outer: usize,
        /// Output directory.
        #[arg(long, default_value = "results/system")]
        out: PathBuf,
    },
    /// Run an experiment file: every scene × solver × sweep value, tidy CSVs, figures.
    Run {
        /// The experiment file (see experiments/).
        #[arg(required_unless_present = "all")]
        experiment: Option<PathBuf>,
        /// Output directory (default: results/NAME).
        #[arg(long, conflicts_with = "all")]
        out: Option<PathBuf>,
        /// Run every experiments/*.toml in name order, each into results/NAME: regenerates every
        /// committed result.
        #[arg(long, conflicts_with_all = ["experiment", "shard", "resume", "list_runs"])]
        all: bool,
        /// Print one line per run (index, scene, solver label, sweep values) and run nothing.
        /// With --shard, only that shard's runs.
        #[arg(long)]
        list_runs: bool,
        /// Run only the I-th of N disjoint shards of the runs (1-based), balanced by estimated
        /// cost, for a cluster; `solverlab merge` combines the shard folders.
        #[arg(long, value_name = "I/N", value_parser = spec::parse_shard)]
        shard: Option<(usize, usize)>,
        /// Keep the finished runs of an interrupted run in --out and do the rest.
        #[arg(long)]
        resume: bool,
        /// Runs at a time (default: the experiment's `jobs`, else one per core).
        #[arg(long, allow_negative_numbers = true, value_parser = at_least_one_usize)]
        jobs: Option<usize>,
        /// Also write report.html (see `solverlab report`) into the output folder.
        #[arg(long)]
        report: bool,
    },
    /// Write a self-contained HTML page of an experiment's results: description, provenance,
    /// figures, the runs table and a 3-D replay of every run side by side. It loads nothing
    /// from the network.
    Report {
        /// The results directory (as `solverlab run` writes it).
        dir: PathBuf,
        /// Where to write report.html (default: DIR).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Size budget of the page in MB: the replay's frames are decimated evenly to fit, and left out
        /// if they cannot; a page over it says by how much (default 20).
        #[arg(long, default_value_t = report::BUDGET_MB, value_parser = positive_mb)]
        max_mb: f64,
    },
    /// Combine shard folders (`run --shard I/N`) into the folder an unsharded run writes, and
    /// draw its figures.
    Merge {
        /// The shard folders, all N of them.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output directory (default: results/NAME).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Redraw every figure of an experiment from its CSVs, without simulating again.
    Plot {
        /// The results directory (holding experiment.toml and the CSVs).
        dir: PathBuf,
        /// `screen`: NAME.svg and NAME.png beside the CSVs, as `run` draws them. `paper`: vector
        /// figures in DIR/paper/, NAME-single.svg (3.5 in) and NAME-double.svg (7 in), serif text
        /// at 7-8 pt, no title, with 3× PNG previews.
        #[arg(long, value_enum, default_value = "screen")]
        style: Style,
    },
    /// Builtin scenes.
    Scene {
        #[command(subcommand)]
        command: SceneCommand,
    },
    /// Solver presets.
    Solver {
        #[command(subcommand)]
        command: SolverCommand,
    },
}

#[derive(Subcommand)]
pub enum SceneCommand {
    /// List the builtin scenes with their parameters and defaults.
    List,
    /// Print a builtin (or a scene file, re-normalised) as a scene file.
    Export {
        /// A builtin name or a scene file.
        name: String,
        /// Override a parameter: key=value (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
}

#[derive(Subcommand)]
pub enum SolverCommand {
    /// List the presets and their settings.
    List,
}

/// A count of at least `min`, or a message saying what the value must be.
fn count(s: &str, min: i64) -> Result<i64, String> {
    let v: i64 = s.trim().parse().map_err(|_| format!("{s} is not a whole number"))?;
    match v >= min {
        true => Ok(v),
        false => Err(format!("{v} must be at least {min}")),
    }
}

fn at_least_one(s: &str) -> Result<u64, String> {
    count(s, 1).map(|v| v as u64)
}

fn at_least_one_usize(s: &str) -> Result<usize, String> {
    count(s, 1).map(|v| v as usize)
}

fn at_least_zero(s: &str) -> Result<u64, String> {
    count(s, 0).map(|v| v as u64)
}

fn positive_mb(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("{s} is not a number"))?;
    match v > 0.0 && v.is_finite() {
        true => Ok(v),
        false => Err(format!("{v} must be a positive number of megabytes")),
    }
}

fn substeps(s: &str) -> Result<u32, String> {
    let v = count(s, 1)?;
    u32::try_from(v).map_err(|_| format!("{v} is more substeps than a frame can take (at most {})", u32::MAX))
}

/// `--set key value` (two arguments) instead of `--set key=value`: clap would report the value
/// as an unexpected argument, so the form is explained before parsing.
pub fn set_form_error(args: &[std::ffi::OsString]) -> Option<String> {
    let args: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    for (i, a) in args.iter().enumerate() {
        let value = match a.strip_prefix("--set=") {
            Some(v) => Some(v.to_string()),
            None if a == "--set" => args.get(i + 1).cloned(),
            None => None,
        };
        if let Some(v) = value.filter(|v| !v.contains('=')) {
            let example = match args.get(i + 2).filter(|n| a == "--set" && !n.starts_with('-')) {
                Some(next) => format!("--set {v}={next}"),
                None => format!("--set {v}=VALUE"),
            };
            return Some(format!(
                "--set `{v}`: a parameter is set as one argument key=value, as in `{example}` \
                 (values are TOML: 12, 1.5, true, \"top\", [0, -9.81, 0])"
            ));
        }
    }
    None
}
