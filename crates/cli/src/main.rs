//! The `solverlab` command.
//!
//! Exit status: 0 on success, 2 on bad input (nothing is written), 1 when a run diverges (the
//! rows computed so far are kept) or a file cannot be written.

mod experiment;
mod export;
mod figures;
mod output;
mod results;
mod simulate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use solverlab_scenes::file::SceneFile;
use solverlab_solvers::SolverConfig;

/// Compare physics constraint solvers on identical scenes.
#[derive(Parser)]
#[command(name = "solverlab", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
        #[arg(long, conflicts_with = "experiment")]
        all: bool,
    },
    /// Redraw every figure of an experiment from its CSVs, without simulating again.
    Plot {
        /// The results directory (holding experiment.toml and the CSVs).
        dir: PathBuf,
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
enum SceneCommand {
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
enum SolverCommand {
    /// List the presets and their settings.
    List,
}

/// How a command failed.
#[derive(Debug)]
pub enum CliError {
    /// Bad input: exit 2, nothing written.
    Input(String),
    /// The run diverged: exit 1, rows so far kept.
    Diverged(String),
    /// A file could not be written: exit 1.
    Io(String),
    /// Ctrl-C: exit 130, nothing written.
    Interrupted(String),
}

/// A progress bar on stderr, drawn only on a terminal.
pub fn progress_bar(len: u64, message: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} frames, {elapsed} elapsed, eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(message.to_string());
    bar
}

/// Parses `--solver`: an inline table, a file, or a preset name.
fn parse_solver(arg: &str) -> Result<(String, SolverConfig), CliError> {
    #[derive(serde::Deserialize)]
    struct Wrapper {
        solver: toml::Table,
    }
    let bad =
        |source: &str, e: &dyn std::fmt::Display| CliError::Input(format!("{source}: {}", e.to_string().trim_end()));
    let (label, config) = if arg.trim_start().starts_with('{') {
        let w: Wrapper = toml::from_str(&format!("solver = {arg}")).map_err(|e| bad("--solver", &e))?;
        let config = experiment::solver_from_table(w.solver).map_err(|e| bad("--solver", &e))?;
        (config.kind().to_string(), config)
    } else if arg.ends_with(".toml") {
        let text = std::fs::read_to_string(arg).map_err(|e| bad(arg, &e))?;
        let table: toml::Table = toml::from_str(&text).map_err(|e| bad(arg, &e))?;
        let config = experiment::solver_from_table(table).map_err(|e| bad(arg, &e))?;
        let stem = std::path::Path::new(arg).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        (stem, config)
    } else {
        let p = solverlab_solvers::preset(arg).ok_or_else(|| {
            let names: Vec<&str> = solverlab_solvers::presets().iter().map(|p| p.name).collect();
            CliError::Input(format!(
                "--solver: unknown preset `{arg}` (presets: {}; or an inline table {{ kind = \"relax\", … }})",
                names.join(", ")
            ))
        })?;
        (p.name.to_string(), p.config)
    };
    config.validate().map_err(|e| bad(&format!("--solver {label}"), &e))?;
    Ok((label, config))
}

/// Prints to stdout; a closed pipe (`| head`) is not an error.
fn print_out(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Resolves and validates the scene and solver arguments shared by `simulate` and
/// `export-system`.
#[allow(clippy::too_many_arguments)]
fn run_spec(
    scene: String,
    sets: Vec<String>,
    solver: &str,
    frames: u64,
    dt: Option<f64>,
    substeps: Option<u32>,
    positions_every: u64,
    violation: bool,
    out: PathBuf,
) -> Result<simulate::RunSpec, CliError> {
    let (label, config) = parse_solver(solver)?;
    let mut resolved = solverlab_scenes::resolve(&scene, &sets).map_err(|e| CliError::Input(e.to_string()))?;
    if let Some(dt) = dt {
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(CliError::Input(format!("--dt: {dt} must be a positive number of seconds")));
        }
        resolved.dt = dt;
    }
    let substeps = substeps.unwrap_or(config.default_substeps());
    if substeps == 0 {
        return Err(CliError::Input("--substeps: must be at least 1".into()));
    }
    Ok(simulate::RunSpec {
        scene_arg: scene,
        sets,
        scene: resolved,
        label,
        solver: config,
        frames,
        substeps,
        positions_every,
        violation,
        out,
    })
}

fn run(cli: Cli) -> Result<(), CliError> {
    // Ctrl-C or SIGTERM: every command stops at its next frame and drops its temporary files.
    let _ = ctrlc::set_handler(|| experiment::INTERRUPTED.store(true, std::sync::atomic::Ordering::Relaxed));
    match cli.command {
        Command::Simulate { scene, sets, solver, frames, dt, substeps, out, positions_every, violation } => {
            output_dir(&out)?;
            let spec = run_spec(scene, sets, &solver, frames, dt, substeps, positions_every, violation, out)?;
            let hash = simulate::run(&spec)?;
            eprintln!("wrote {} (final state hash {hash})", spec.out.display());
            Ok(())
        }
        Command::ExportSystem { scene, sets, solver, frame, dt, substeps, outer, out } => {
            output_dir(&out)?;
            let spec = run_spec(scene, sets, &solver, frame, dt, substeps, 0, false, out)?;
            export::run(&spec, frame, outer)?;
            eprintln!("wrote the system of frame {frame} to {}", spec.out.display());
            Ok(())
        }
        Command::Run { experiment: Some(experiment), out, all: false } => run_experiment(&experiment, out),
        Command::Run { experiment: None, all: false, .. } => {
            Err(CliError::Input("run: give an experiment file, or --all for every experiments/*.toml".into()))
        }
        Command::Run { all: true, .. } => {
            let mut files: Vec<PathBuf> = std::fs::read_dir("experiments")
                .map_err(|e| CliError::Input(format!("experiments: cannot read the folder: {e}")))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("toml"))
                .collect();
            files.sort();
            for (k, file) in files.iter().enumerate() {
                eprintln!("[{}/{}] {}", k + 1, files.len(), file.display());
                run_experiment(file, None)?;
            }
            Ok(())
        }
        Command::Plot { dir } => {
            let file = dir.join("experiment.toml");
            let exp = experiment::Experiment::load(&file)?;
            let written = figures::draw_all(&exp.file, &dir).map_err(|e| {
                match experiment::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
                    true => CliError::Interrupted(e),
                    false => CliError::Io(e),
                }
            })?;
            eprintln!("redrew {} figure files in {}", written.len(), dir.display());
            Ok(())
        }
        Command::Scene { command: SceneCommand::List } => {
            let mut text = String::new();
            for b in solverlab_scenes::builtins() {
                text += &format!("{:<18} {}\n{:<18} source: {}\n", b.name, b.summary, "", b.source);
                for p in (b.params)() {
                    text += &format!("{:<18}   {:<12} = {:<14} {}\n", "", p.name, p.default.to_string(), p.doc);
                }
            }
            text += "\nevery scene also takes --set dt=SECONDS, damping=[0,1), gravity=[x, y, z] (m/s²)\n";
            print_out(&text);
            Ok(())
        }
        Command::Scene { command: SceneCommand::Export { name, sets } } => {
            let scene = solverlab_scenes::resolve(&name, &sets).map_err(|e| CliError::Input(e.to_string()))?;
            let header = if sets.is_empty() {
                format!("# {name}, exported by solverlab")
            } else {
                format!("# {name} with {}, exported by solverlab", sets.join(" "))
            };
            print_out(&format!("{header}\n{}", SceneFile::from_scene(&scene).to_toml()));
            Ok(())
        }
        Command::Solver { command: SolverCommand::List } => {
            let mut text = String::new();
            for p in solverlab_solvers::presets() {
                let table = toml::to_string(&p.config).expect("configs serialise");
                let inline: Vec<String> = table.lines().map(str::to_string).collect();
                text += &format!("{:<10} {}\n{:<10} {{ {} }}\n", p.name, p.summary, "", inline.join(", "));
            }
            print_out(&text);
            Ok(())
        }
    }
}

/// `solverlab run EXPERIMENT [--out DIR]`.
fn run_experiment(experiment: &std::path::Path, out: Option<PathBuf>) -> Result<(), CliError> {
    let exp = experiment::Experiment::load(experiment)?;
    let out = out.unwrap_or_else(|| experiment::default_out(&exp.file.name));
    output_dir(&out)?;
    let frames = figures::position_frames(&exp.file);
    let outputs = experiment::run_all(&exp, &frames);
    if experiment::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(CliError::Interrupted(format!("{}: interrupted; nothing was written", experiment.display())));
    }
    results::write(&exp, &outputs, &out)?;
    let written = figures::draw_all(&exp.file, &out).map_err(CliError::Io)?;
    let failed: Vec<String> = outputs
        .iter()
        .zip(&exp.runs)
        .filter(|(o, _)| o.status != "ok")
        .map(|(o, r)| format!("run {} ({} on {}): {} {}", r.index, r.label, r.scene_label, o.status, o.error))
        .collect();
    eprintln!("wrote {} runs and {} figure files to {}", exp.runs.len(), written.len(), out.display());
    for f in &failed {
        eprintln!("note: {f}");
    }
    Ok(())
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

fn substeps(s: &str) -> Result<u32, String> {
    let v = count(s, 1)?;
    u32::try_from(v).map_err(|_| format!("{v} is more substeps than a frame can take (at most {})", u32::MAX))
}

/// `--out` must be a directory or not exist yet.
fn output_dir(out: &std::path::Path) -> Result<(), CliError> {
    match out.exists() && !out.is_dir() {
        true => Err(CliError::Input(format!(
            "--out: {} exists and is not a directory; give a directory (it is created if missing)",
            out.display()
        ))),
        false => Ok(()),
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Input(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(CliError::Diverged(m)) | Err(CliError::Io(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
        Err(CliError::Interrupted(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(130)
        }
    }
}
